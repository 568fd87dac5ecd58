//! The region timeline ([`region_timeline`]): the measured region entries
//! of one kernel execution, time on x, region nesting depth on y, each
//! bar labelled by its region as far as it fits, with a legend of the
//! regions' colours.

use super::axes::{domain_top, nice_ticks, unit_fraction};
use super::format::{format_si, tick_label};
use super::legend::{LEGEND_ROW_HEIGHT, flow_legend, legend_entry};
use super::markup::{
    axis_line, close_svg, distinct_labels, escape, grid_line, label_width, mark_attributes,
    open_svg, px, text_element, truncate_label,
};
use super::style::{CHART_WIDTH, MARGIN, OTHER_COLOUR, PALETTE, TITLE_HEIGHT, text_colour_on};

const ROW_HEIGHT: f64 = 22.0;
const BAR_HEIGHT: f64 = 18.0;
const COMPACT_ROW_HEIGHT: f64 = 8.0;
const COMPACT_BAR_HEIGHT: f64 = 7.0;
const DEPTH_LABEL_WIDTH: f64 = 34.0;
/// Padding between a bar's edges and its label.
const LABEL_PAD: f64 = 3.0;
/// Longest legend name; the whole label is the entry's tooltip.
const MAX_LEGEND_LABEL_CHARS: usize = 44;

/// One region entry of [`region_timeline`].
#[derive(Debug, Clone, PartialEq)]
pub struct RegionBar {
    /// The region's label, `R<id> <name> <scope>`: in the legend, and in
    /// the bar as far as it fits (whole, else elided in the middle with its
    /// first word, the region id, kept, else the id alone), whole in the
    /// tooltip.
    pub label: String,
    /// Start, from the kernel execution's start, in the chart's unit.
    pub start: f64,
    /// Measured duration, in the chart's unit: the bar's `data-value`.
    pub duration: f64,
    /// Nesting depth of the region (0 outermost): the bar's row.
    pub depth: u32,
    /// The colour index of the region (the same region keeps its colour
    /// across executions): a palette colour below the palette's size (8),
    /// else the grey that the regions past it share.
    pub colour: usize,
    /// Extra tooltip lines (static occupancy, source line).
    pub tooltip: String,
}

/// Renders the region entries of one execution spanning `[0, span]` (in
/// `unit`): a row per nesting depth, a bar per entry from its start for
/// its duration, labelled inside the bar as far as the label fits
/// ([`RegionBar::label`]; the label's `class="bar-label"`), and below the
/// axis a legend of the regions' colours, one entry per palette colour in
/// colour order and one for the grey regions past the palette, each
/// naming its regions whole on hover. `compact` draws a small multiple:
/// thin rows, no labels, no legend, the same marks. Every bar carries
/// `data-value` (its duration), `data-start` and `data-depth`.
/// Non-finite starts and durations are drawn at 0 with zero width.
/// Returns an empty string when `bars` is empty.
pub fn region_timeline(
    title: &str,
    unit: &str,
    span: f64,
    bars: &[RegionBar],
    compact: bool,
) -> String {
    if bars.is_empty() {
        return String::new();
    }
    let (row_height, bar_height) = if compact {
        (COMPACT_ROW_HEIGHT, COMPACT_BAR_HEIGHT)
    } else {
        (ROW_HEIGHT, BAR_HEIGHT)
    };
    let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    let end = bars
        .iter()
        .map(|b| finite(b.start) + finite(b.duration))
        .fold(finite(span), f64::max);
    let ticks = nice_ticks(end);
    let domain_max = domain_top(&ticks);
    let rows = bars.iter().map(|b| b.depth).max().unwrap_or(0) as usize + 1;
    let plot_left = MARGIN + DEPTH_LABEL_WIDTH;
    let plot_right = CHART_WIDTH - MARGIN;
    let plot_width = plot_right - plot_left;
    let plot_top = TITLE_HEIGHT;
    let plot_bottom = plot_top + row_height * rows as f64;
    let legend = if compact { Vec::new() } else { legend_of(bars) };
    let legend_names: Vec<String> = distinct_labels(
        &legend
            .iter()
            .map(|(name, _, _)| name.clone())
            .collect::<Vec<_>>(),
        MAX_LEGEND_LABEL_CHARS,
    );
    let legend_top = plot_bottom + 30.0;
    let (legend_positions, legend_rows) =
        flow_legend(&legend_names, plot_left, plot_right, legend_top);
    let height = if legend.is_empty() {
        plot_bottom + 22.0
    } else {
        legend_top + LEGEND_ROW_HEIGHT * legend_rows as f64 + 4.0
    };
    let x_px = |value: f64| plot_left + unit_fraction(finite(value), domain_max) * plot_width;

    let mut svg = open_svg(CHART_WIDTH, height, title);
    for &tick in &ticks {
        let tick_x = x_px(tick);
        svg.push_str(&grid_line(tick_x, plot_top, tick_x, plot_bottom));
        let label = tick_label(tick, unit);
        // The last tick's label ends at the chart's edge, not past it.
        let anchor = if tick_x + label_width(&label) / 2.0 > CHART_WIDTH - 2.0 {
            "end"
        } else {
            "middle"
        };
        svg.push_str(&text_element(tick_x, plot_bottom + 16.0, anchor, &label));
    }
    if !compact {
        for depth in 0..rows {
            svg.push_str(&text_element(
                plot_left - 6.0,
                plot_top + row_height * depth as f64 + row_height / 2.0 + 4.0,
                "end",
                &format!("d{depth}"),
            ));
        }
    }
    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    svg.push_str(&axis_line(plot_left, plot_top, plot_left, plot_bottom));
    for bar in bars {
        let left = x_px(bar.start);
        let right = x_px(finite(bar.start) + finite(bar.duration));
        let top = plot_top + row_height * bar.depth as f64 + (row_height - bar_height) / 2.0;
        let tooltip = format!(
            "{}: {} from {}{}",
            bar.label,
            format_si(bar.duration, unit),
            format_si(bar.start, unit),
            if bar.tooltip.is_empty() {
                String::new()
            } else {
                format!("\n{}", bar.tooltip)
            }
        );
        svg.push_str(&format!(
            "<g><rect class=\"region\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.5\"{} data-start=\"{}\" data-depth=\"{}\"><title>{}</title></rect>",
            px(left),
            px(top),
            px(right - left),
            px(bar_height),
            colour_of(bar.colour),
            mark_attributes(&bar.label, bar.duration),
            bar.start,
            bar.depth,
            escape(&tooltip),
        ));
        let shown = if compact {
            None
        } else {
            fitted_label(&bar.label, right - left - 2.0 * LABEL_PAD)
        };
        if let Some(shown) = shown {
            svg.push_str(&format!(
                "<text class=\"bar-label\" x=\"{}\" y=\"{}\" fill=\"{}\" pointer-events=\"none\">{}</text>",
                px(left + LABEL_PAD),
                px(top + bar_height / 2.0 + 4.0),
                text_colour_on(colour_of(bar.colour)),
                escape(&shown)
            ));
        }
        svg.push_str("</g>\n");
    }
    for (((_, colour, full), name), (x, y)) in
        legend.iter().zip(&legend_names).zip(&legend_positions)
    {
        svg.push_str(&legend_entry(*x, *y, colour_of(*colour), name, full));
    }
    close_svg(svg)
}

/// The fill of colour index `colour` ([`RegionBar::colour`]).
fn colour_of(colour: usize) -> &'static str {
    PALETTE.get(colour).copied().unwrap_or(OTHER_COLOUR)
}

/// The legend of `bars`: (name, colour index, tooltip) per palette colour
/// drawn, in colour order, named by the first bar of that colour; then
/// one entry for the regions past the palette (`3 other regions`), all
/// of them named in its tooltip.
fn legend_of(bars: &[RegionBar]) -> Vec<(String, usize, String)> {
    let mut entries: Vec<(String, usize, String)> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    let mut colours: Vec<usize> = bars.iter().map(|b| b.colour).collect();
    colours.sort_unstable();
    colours.dedup();
    for colour in colours {
        let mut labels: Vec<&str> = Vec::new();
        for bar in bars.iter().filter(|b| b.colour == colour) {
            if !labels.contains(&bar.label.as_str()) {
                labels.push(&bar.label);
            }
        }
        if colour < PALETTE.len() {
            entries.push((labels[0].to_string(), colour, labels.join("\n")));
        } else {
            for label in labels {
                if !others.contains(&label) {
                    others.push(label);
                }
            }
        }
    }
    match others.len() {
        0 => {}
        1 => entries.push((others[0].to_string(), PALETTE.len(), others[0].to_string())),
        n => entries.push((
            format!("{n} other regions"),
            PALETTE.len(),
            others.join("\n"),
        )),
    }
    entries
}

/// What of `label` is drawn in a bar `room` px wide: the whole label
/// where it fits; else the label elided in the middle to the most
/// characters that fit, keeping its first word (the region id) whole;
/// else that first word alone; else nothing. Widths are
/// [`label_width`]'s estimate.
fn fitted_label(label: &str, room: f64) -> Option<String> {
    if label_width(label) <= room {
        return Some(label.to_string());
    }
    let first = label.split(' ').next().unwrap_or(label);
    let first_chars = first.chars().count();
    for chars in (1..label.chars().count()).rev() {
        // truncate_label keeps the first `chars - 1 - (chars - 1) / 2`.
        let head = chars - 1 - (chars - 1) / 2;
        if head < first_chars {
            break;
        }
        let shown = truncate_label(label, chars);
        if label_width(&shown) <= room {
            return Some(shown);
        }
    }
    (label_width(first) <= room).then(|| first.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::testing::{attribute_values, count, data_values};

    fn bar(label: &str, start: f64, duration: f64, depth: u32) -> RegionBar {
        RegionBar {
            label: label.into(),
            start,
            duration,
            depth,
            colour: depth as usize,
            tooltip: "MXU 87.8%".into(),
        }
    }

    #[test]
    fn every_entry_is_a_bar_at_its_start_and_depth() {
        let bars = [
            bar("R0 top", 0.0, 100.0, 0),
            bar("R28 init <a>", 10.0, 40.0, 2),
            bar("R32 acc", 50.0, 50.0, 2),
        ];
        let svg = region_timeline("pallas_matmul.1", "ps", 100.0, &bars, false);
        assert_eq!(data_values(&svg), vec![100.0, 40.0, 50.0]);
        assert_eq!(attribute_values(&svg, "data-start"), ["0", "10", "50"]);
        assert_eq!(attribute_values(&svg, "data-depth"), ["0", "2", "2"]);
        assert!(svg.contains("R28 init &lt;a&gt;"));
        assert!(svg.contains("MXU 87.8%"));
        // Widths in proportion to durations on one scale.
        let widths: Vec<f64> = attribute_values(&svg, "width")
            .iter()
            .skip(1)
            .map(|w| w.parse().unwrap())
            .collect();
        assert!((widths[0] / widths[1] - 2.5).abs() < 0.01, "{widths:?}");
        assert!((widths[2] / widths[1] - 1.25).abs() < 0.01, "{widths:?}");
        // Three depth rows labelled.
        assert_eq!(count(&svg, ">d2<"), 1);
    }

    #[test]
    fn labels_fit_their_bars_and_keep_the_region_id_and_the_end() {
        let label = "R32 predicated_region ep_run_kernel/acc";
        assert_eq!(fitted_label(label, 1000.0).as_deref(), Some(label));
        let cut = fitted_label(label, 120.0).unwrap();
        assert!(label_width(&cut) <= 120.0, "{cut}");
        assert!(cut.starts_with("R32 ") && cut.ends_with("acc"), "{cut}");
        assert_eq!(cut.chars().filter(|c| *c == '…').count(), 1, "{cut}");
        // Too narrow for any of the name: the id alone, then nothing.
        assert_eq!(fitted_label(label, 30.0).as_deref(), Some("R32"));
        assert_eq!(fitted_label(label, 10.0), None);
        // Drawn: every label inside its bar, by the estimate.
        let bars = [
            bar("R69 body", 0.0, 60.0, 0),
            bar(label, 60.0, 8.0, 1),
            bar("R5 header_branch", 68.0, 2.0, 1),
        ];
        let svg = region_timeline("k", "ps", 100.0, &bars, false);
        let shown: Vec<String> = svg
            .split("class=\"bar-label\"")
            .skip(1)
            .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
            .collect();
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert_eq!(shown[0], "R69 body");
        assert!(
            shown[1].starts_with("R32") && !shown[1].ends_with('…'),
            "{shown:?}"
        );
    }

    #[test]
    fn the_legend_names_each_colour_and_groups_the_regions_past_the_palette() {
        let mut bars: Vec<RegionBar> = (0..11)
            .map(|i| RegionBar {
                colour: i,
                ..bar(&format!("R{i} region_{i}"), i as f64 * 10.0, 10.0, 0)
            })
            .collect();
        // The same region again: one entry.
        bars.push(RegionBar {
            colour: 1,
            ..bar("R1 region_1", 110.0, 5.0, 0)
        });
        let svg = region_timeline("k", "ps", 120.0, &bars, false);
        assert_eq!(count(&svg, "class=\"legend-entry\""), PALETTE.len() + 1);
        assert!(svg.contains(">3 other regions</text>"));
        assert!(svg.contains("<title>R8 region_8\nR9 region_9\nR10 region_10</title>"));
        for (colour, fill) in PALETTE.iter().enumerate() {
            assert!(
                svg.contains(&format!("fill=\"{fill}\"/><text x=\"")),
                "legend swatch {colour}"
            );
        }
        assert_eq!(count(&svg, &format!("fill=\"{OTHER_COLOUR}\"")), 3 + 1);
        // Labels read on their fill: dark on the yellow, white on indigo.
        assert!(svg.contains("fill=\"#1a1a1a\" pointer-events=\"none\">R5"));
        assert!(svg.contains("fill=\"#ffffff\" pointer-events=\"none\">R2"));
        // Small multiples have no legend.
        let compact = region_timeline("k", "ps", 120.0, &bars, true);
        assert_eq!(count(&compact, "legend-entry"), 0);
    }

    #[test]
    fn compact_multiples_keep_the_marks_and_drop_the_labels() {
        let bars = [bar("R0 top", 0.0, 100.0, 0), bar("R32 acc", 50.0, 50.0, 1)];
        let svg = region_timeline("execution 2", "ps", 100.0, &bars, true);
        assert_eq!(data_values(&svg), vec![100.0, 50.0]);
        assert_eq!(count(&svg, "pointer-events"), 0);
        assert_eq!(region_timeline("x", "ps", 1.0, &[], false), "");
        let odd = [bar("nan", f64::NAN, f64::INFINITY, 0)];
        assert!(region_timeline("x", "ps", 0.0, &odd, false).ends_with("</svg>\n"));
    }
}
