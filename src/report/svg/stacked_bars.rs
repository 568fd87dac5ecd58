//! The stacked bar chart ([`stacked_bars`]): one bar per category (a
//! step), its series stacked bottom-up, with a legend and dashed reference
//! lines (p50, p90).

use super::axes::{domain_top, is_positive_finite, max_positive, nice_ticks, unit_fraction};
use super::format::{format_si, tick_label};
use super::legend::{LEGEND_ROW_HEIGHT, flow_legend, legend_entry};
use super::markup::{
    axis_line, close_svg, distinct_labels, escape, grid_line, label_width, mark_attributes,
    max_chars, open_svg, px, text_element, text_width, truncate_label,
};
use super::style::{
    CHART_WIDTH, MARGIN, MIN_PLOT_WIDTH, REFERENCE_COLOUR, TITLE_HEIGHT, palette_colour,
};

const STACK_PLOT_HEIGHT: f64 = 240.0;
const MAX_CATEGORY_LABEL_CHARS: usize = 16;
const MAX_LEGEND_LABEL_CHARS: usize = 32;
const MAX_REFERENCE_LABEL_CHARS: usize = 24;
/// Most x tick labels a stacked bar chart shows.
const MAX_CATEGORY_LABELS: usize = 60;
/// The second line of a two-line x label is this far below the first.
const X_LABEL_LINE_HEIGHT: f64 = 13.0;
/// Slanted x labels are turned this far (degrees) counter-clockwise.
const SLANT_DEGREES: f64 = 35.0;

/// One stacked series of [`stacked_bars`]: `values[i]` belongs to category
/// `i`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Series name, shown in the legend and tooltips.
    pub name: String,
    /// One value per category; missing trailing values count as absent.
    pub values: Vec<f64>,
}

/// Renders vertical stacked bars, one bar per category (for example one per
/// step), stacking the series bottom-up in the given order, one palette
/// colour per series, with a legend above the plot.
///
/// `reference_lines` are `(name, value)` pairs (for example p50 and p90 of the
/// step time) drawn as dashed horizontal lines labelled on the right; lines
/// with negative or non-finite values are skipped. Only positive, finite
/// values are stacked; others draw no segment. An x label that does not fit
/// its bar's slot is set on two lines (split at the space nearest its
/// middle: `rank 0` over `stream 7`), or slanted where two lines do not
/// fit either; only where even slanted labels would overlap (about 45
/// categories and more) is every n-th label shown. Each label's tooltip is
/// its whole category. Each bar
/// is a `<g class="stack">` with `data-category` and `data-total` (the sum of
/// its segments); each segment has `data-label` (the series), `data-category`
/// and `data-value`. Returns an empty string when there are no categories or
/// no series.
pub fn stacked_bars(
    title: &str,
    unit: &str,
    categories: &[String],
    series: &[Series],
    reference_lines: &[(String, f64)],
) -> String {
    if categories.is_empty() || series.is_empty() {
        return String::new();
    }
    let totals: Vec<f64> = (0..categories.len())
        .map(|index| stack_values(series, index).map(|(_, value)| value).sum())
        .collect();
    let references: Vec<&(String, f64)> = reference_lines
        .iter()
        .filter(|(_, value)| value.is_finite() && *value >= 0.0)
        .collect();
    let max_value = max_positive(
        totals
            .iter()
            .copied()
            .chain(references.iter().map(|(_, value)| *value)),
    );
    let ticks = nice_ticks(max_value);
    let domain_max = domain_top(&ticks);
    let tick_labels: Vec<String> = ticks.iter().map(|&tick| tick_label(tick, unit)).collect();
    let reference_texts: Vec<String> = references
        .iter()
        .map(|(name, value)| {
            let text = format!("{name} {}", tick_label(*value, unit));
            truncate_label(&text, MAX_REFERENCE_LABEL_CHARS)
        })
        .collect();

    let plot_left = MARGIN + text_width(max_chars(&tick_labels)) + 8.0;
    let right_space = if reference_texts.is_empty() {
        MARGIN
    } else {
        text_width(max_chars(&reference_texts)) + 8.0
    };
    let plot_width = (CHART_WIDTH - plot_left - right_space - MARGIN).max(MIN_PLOT_WIDTH);
    let plot_right = plot_left + plot_width;
    let width = plot_right + right_space + MARGIN;

    let full_names: Vec<String> = series.iter().map(|one| one.name.clone()).collect();
    let legend_names = distinct_labels(&full_names, MAX_LEGEND_LABEL_CHARS);
    let (legend_positions, legend_rows) =
        flow_legend(&legend_names, MARGIN, width - MARGIN, TITLE_HEIGHT);
    let plot_top = TITLE_HEIGHT + LEGEND_ROW_HEIGHT * legend_rows as f64 + 10.0;
    let plot_bottom = plot_top + STACK_PLOT_HEIGHT;
    let x_labels = x_labels(categories, plot_width);
    let height = plot_bottom + 24.0 + x_labels.extra_height() + MARGIN;
    let y_px = |value: f64| plot_bottom - unit_fraction(value, domain_max) * STACK_PLOT_HEIGHT;

    let mut svg = open_svg(width, height, title);
    for (index, ((name, full_series), (legend_x, legend_y))) in legend_names
        .iter()
        .zip(series)
        .zip(&legend_positions)
        .enumerate()
    {
        svg.push_str(&legend_entry(
            *legend_x,
            *legend_y,
            palette_colour(index),
            name,
            &full_series.name,
        ));
    }
    for (&tick, label) in ticks.iter().zip(&tick_labels) {
        let tick_y = y_px(tick);
        svg.push_str(&grid_line(plot_left, tick_y, plot_right, tick_y));
        svg.push_str(&text_element(plot_left - 6.0, tick_y + 4.0, "end", label));
    }
    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    svg.push_str(&axis_line(plot_left, plot_top, plot_left, plot_bottom));

    let slot_width = plot_width / categories.len() as f64;
    let bar_width = slot_width * 0.8;
    for (index, (category, total)) in categories.iter().zip(&totals).enumerate() {
        let bar_left = plot_left + slot_width * index as f64 + (slot_width - bar_width) / 2.0;
        svg.push_str(&format!(
            "<g class=\"stack\" data-category=\"{}\" data-total=\"{total}\">\n",
            escape(category)
        ));
        let mut stacked = 0.0;
        for (series_index, value) in stack_values(series, index) {
            let bottom = y_px(stacked);
            stacked += value;
            let top = y_px(stacked);
            let series_name = series.get(series_index).map_or("", |one| one.name.as_str());
            let tooltip = format!(
                "{category} · {series_name}: {} (total {})",
                format_si(value, unit),
                format_si(*total, unit)
            );
            svg.push_str(&format!(
                "<rect class=\"segment\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" data-category=\"{}\"{}><title>{}</title></rect>\n",
                px(bar_left),
                px(top),
                px(bar_width),
                px(bottom - top),
                palette_colour(series_index),
                escape(category),
                mark_attributes(series_name, value),
                escape(&tooltip),
            ));
        }
        svg.push_str("</g>\n");
    }

    for (index, (category, lines)) in categories
        .iter()
        .zip(&x_labels.lines)
        .enumerate()
        .step_by(x_labels.step)
    {
        let center_x = plot_left + slot_width * (index as f64 + 0.5);
        svg.push_str(&axis_line(
            center_x,
            plot_bottom,
            center_x,
            plot_bottom + 4.0,
        ));
        let spans: String = lines
            .iter()
            .enumerate()
            .map(|(line, text)| {
                format!(
                    "<tspan x=\"{}\" dy=\"{}\">{}</tspan>",
                    px(center_x),
                    if line == 0 { 0.0 } else { X_LABEL_LINE_HEIGHT },
                    escape(text)
                )
            })
            .collect();
        let label_y = plot_bottom + 16.0;
        let placement = if x_labels.slanted {
            format!(
                "text-anchor=\"end\" transform=\"rotate(-{SLANT_DEGREES} {} {})\"",
                px(center_x),
                px(label_y)
            )
        } else {
            "text-anchor=\"middle\"".to_string()
        };
        svg.push_str(&format!(
            "<text class=\"x-label\" x=\"{}\" y=\"{}\" {placement}><title>{}</title>{spans}</text>\n",
            px(center_x),
            px(label_y),
            escape(category),
        ));
    }

    for ((name, value), text) in references.iter().zip(&reference_texts) {
        let line_y = y_px(*value);
        svg.push_str(&format!(
            "<line class=\"reference\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{REFERENCE_COLOUR}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\" data-ref-label=\"{}\" data-ref-value=\"{value}\"><title>{}</title></line>\n",
            px(plot_left),
            px(plot_right),
            escape(name),
            escape(&format!("{name}: {}", format_si(*value, unit))),
            y = px(line_y),
        ));
        svg.push_str(&text_element(plot_right + 4.0, line_y + 4.0, "start", text));
    }
    close_svg(svg)
}

/// The positive, finite values of category `index`, with their series index.
fn stack_values(series: &[Series], index: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
    series
        .iter()
        .enumerate()
        .filter_map(move |(series_index, one)| {
            one.values
                .get(index)
                .copied()
                .filter(|value| is_positive_finite(*value))
                .map(|value| (series_index, value))
        })
}

/// The x labels of a chart: each category's lines, n where every n-th
/// label is shown, and whether they are slanted.
struct XLabels {
    lines: Vec<Vec<String>>,
    step: usize,
    slanted: bool,
}

impl XLabels {
    /// Height below the first line's baseline the labels take beyond it.
    fn extra_height(&self) -> f64 {
        let lines = self.lines.iter().map(Vec::len).max().unwrap_or(1);
        if self.slanted {
            let widest = self.lines.iter().flatten().map(|l| label_width(l));
            widest.fold(0.0, f64::max) * SLANT_DEGREES.to_radians().sin()
        } else {
            X_LABEL_LINE_HEIGHT * (lines - 1) as f64
        }
    }
}

/// One line per label when every label fits its slot; else two lines per
/// label when every one then fits; else slanted labels when that shows
/// more of them; else every n-th label on the fewest lines.
fn x_labels(categories: &[String], plot_width: f64) -> XLabels {
    let one: Vec<Vec<String>> = categories
        .iter()
        .map(|category| vec![truncate_label(category, MAX_CATEGORY_LABEL_CHARS)])
        .collect();
    let step = label_step(&one, plot_width);
    if step == 1 {
        return XLabels {
            lines: one,
            step,
            slanted: false,
        };
    }
    let two: Vec<Vec<String>> = categories.iter().map(|c| in_two_lines(c)).collect();
    let two_step = label_step(&two, plot_width);
    if two_step == 1 {
        return XLabels {
            lines: two,
            step: two_step,
            slanted: false,
        };
    }
    // Slanted, labels need only a line's height (over the slant's sine)
    // of the axis each.
    let slanted_space = X_LABEL_LINE_HEIGHT / SLANT_DEGREES.to_radians().sin();
    let fitting = ((plot_width / slanted_space).floor() as usize).clamp(1, MAX_CATEGORY_LABELS);
    let slanted_step = categories.len().div_ceil(fitting).max(1);
    if slanted_step < step.min(two_step) {
        XLabels {
            lines: one,
            step: slanted_step,
            slanted: true,
        }
    } else if two_step < step {
        XLabels {
            lines: two,
            step: two_step,
            slanted: false,
        }
    } else {
        XLabels {
            lines: one,
            step,
            slanted: false,
        }
    }
}

/// `category` split at the space nearest its middle, each line cut to
/// [`MAX_CATEGORY_LABEL_CHARS`]; one line when it has no space.
fn in_two_lines(category: &str) -> Vec<String> {
    let middle = category.len() / 2;
    let split = category
        .char_indices()
        .filter(|(_, c)| *c == ' ')
        .map(|(at, _)| at)
        .min_by_key(|at| at.abs_diff(middle));
    match split {
        Some(at) => vec![
            truncate_label(&category[..at], MAX_CATEGORY_LABEL_CHARS),
            truncate_label(&category[at + 1..], MAX_CATEGORY_LABEL_CHARS),
        ],
        None => vec![truncate_label(category, MAX_CATEGORY_LABEL_CHARS)],
    }
}

/// Shows every n-th of `labels` (each its lines) so that at most
/// [`MAX_CATEGORY_LABELS`] appear and they do not overlap; returns n (at
/// least 1).
fn label_step(labels: &[Vec<String>], plot_width: f64) -> usize {
    let widest = labels
        .iter()
        .flatten()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(1);
    let label_space = text_width(widest) + 8.0;
    let fitting = (plot_width / label_space).floor();
    let fitting = if fitting >= 1.0 { fitting as usize } else { 1 };
    let max_labels = fitting.min(MAX_CATEGORY_LABELS);
    labels.len().div_ceil(max_labels).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::style::PALETTE;
    use crate::report::svg::testing::{attribute_values, count, data_values};

    #[test]
    fn stacked_bars_stack_series_with_legend_and_references() {
        let categories: Vec<String> = vec!["step 1".into(), "step 2".into(), "step <3>".into()];
        let series = vec![
            Series {
                name: "compute".into(),
                values: vec![2.0, 3.0, 1.0],
            },
            Series {
                name: "all-reduce & wait".into(),
                values: vec![1.0, 0.0, f64::NAN],
            },
            Series {
                name: "idle".into(),
                values: vec![0.5],
            },
        ];
        let references = vec![("p50".to_string(), 3.0), ("bad".to_string(), f64::NAN)];
        let svg = stacked_bars("Step time", "ms", &categories, &series, &references);
        // Only positive, finite values make segments.
        assert_eq!(data_values(&svg), vec![2.0, 1.0, 0.5, 3.0, 1.0]);
        assert_eq!(
            attribute_values(&svg, "data-label"),
            vec![
                "compute",
                "all-reduce &amp; wait",
                "idle",
                "compute",
                "compute"
            ]
        );
        let totals: Vec<f64> = attribute_values(&svg, "data-total")
            .iter()
            .map(|text| text.parse().expect("total"))
            .collect();
        assert_eq!(totals, vec![3.5, 3.0, 1.0]);
        assert!(svg.contains("data-category=\"step &lt;3&gt;\""));
        // One legend entry per series, in palette order.
        assert_eq!(count(&svg, "class=\"legend-entry\""), 3);
        for (index, name) in ["compute", "all-reduce &amp; wait", "idle"]
            .iter()
            .enumerate()
        {
            assert!(svg.contains(&format!("fill=\"{}\"/><text", PALETTE[index])));
            assert!(
                svg.contains(&format!(">{name}</text></g>")),
                "legend {name}"
            );
        }
        // The NaN reference line is skipped.
        assert_eq!(attribute_values(&svg, "data-ref-label"), vec!["p50"]);
        assert!(svg.contains(">p50 3 ms</text>"));
        assert_eq!(count(&svg, "class=\"x-label\""), 3);
    }

    #[test]
    fn stacked_bars_thin_crowded_labels() {
        let categories: Vec<String> = (0..500).map(|step| format!("{step}")).collect();
        let series = vec![Series {
            name: "step".into(),
            values: vec![1.0; 500],
        }];
        let svg = stacked_bars("Steps", "s", &categories, &series, &[]);
        let labels = count(&svg, "class=\"x-label\"");
        assert!(
            (2..=MAX_CATEGORY_LABELS).contains(&labels),
            "{labels} labels"
        );
        assert_eq!(data_values(&svg).len(), 500);
        assert!(svg.contains(">0</tspan></text>"));
    }

    /// HTA's idle time per stream: labels too wide for their slots on
    /// one line are set on two, or slanted where more bars leave less room,
    /// and every bar keeps its label.
    #[test]
    fn labels_too_wide_for_one_line_take_two_or_slant_and_all_show() {
        let streams = |n: usize| -> Vec<String> {
            (0..n)
                .map(|i| format!("rank {} stream {}", i / 5, [7, 20, 25, 84, 91][i % 5]))
                .collect()
        };
        let series = vec![Series {
            name: "idle".into(),
            values: vec![1.0; 30],
        }];
        let svg = stacked_bars("Idle", "s", &streams(8), &series, &[]);
        assert_eq!(count(&svg, "class=\"x-label\""), 8);
        assert_eq!(count(&svg, "<tspan "), 16);
        assert!(svg.contains(">rank 1</tspan><tspan x="));
        assert!(svg.contains("<title>rank 1 stream 7</title>"));
        assert!(!svg.contains("rotate("));
        let svg = stacked_bars("Idle", "s", &streams(30), &series, &[]);
        assert_eq!(count(&svg, "class=\"x-label\""), 30);
        assert_eq!(count(&svg, "rotate(-35 "), 30);
        // Short labels stay on one line, upright.
        let short: Vec<String> = (0..3).map(|i| format!("rank {i}")).collect();
        let svg = stacked_bars("Idle", "s", &short, &series, &[]);
        assert_eq!(count(&svg, "<tspan "), 3);
        assert!(!svg.contains("rotate("));
    }

    #[test]
    fn empty_inputs_give_empty_strings() {
        let series = vec![Series {
            name: "a".into(),
            values: vec![1.0],
        }];
        assert_eq!(stacked_bars("t", "s", &[], &series, &[]), "");
        assert_eq!(stacked_bars("t", "s", &["1".to_string()], &[], &[]), "");
    }

    #[test]
    fn output_is_deterministic_and_well_formed_for_extreme_inputs() {
        let huge = vec![Series {
            name: "x".into(),
            values: vec![f64::MAX, f64::MAX],
        }];
        let svg = stacked_bars(
            "t",
            "",
            &["a".to_string()],
            &huge,
            &[("r".to_string(), f64::MAX)],
        );
        assert_eq!(count(&svg, "<rect class=\"segment\""), 1);
        assert_eq!(count(&svg, "<svg "), 1);
        assert!(svg.ends_with("</svg>\n"));
    }
}
