//! The horizontal bar chart ([`hbar_chart`]): one labelled bar per row,
//! for example the time of each of the top ops.

use super::axes::{domain_top, max_positive, nice_ticks, unit_fraction};
use super::format::{format_si, tick_label};
use super::markup::{
    axis_line, close_svg, distinct_labels, escape, grid_line, mark_attributes, max_chars, open_svg,
    px, text_element, text_width, with_extra,
};
use super::style::{CHART_WIDTH, MARGIN, MIN_PLOT_WIDTH, PALETTE, TITLE_HEIGHT};

/// Longest label shown in full; longer ones end in an ellipsis.
const MAX_LABEL_CHARS: usize = 48;
const HBAR_ROW_HEIGHT: f64 = 20.0;
const HBAR_BAR_HEIGHT: f64 = 14.0;

/// One horizontal bar of [`hbar_chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Label on the left of the bar (truncated on screen, whole in the
    /// tooltip).
    pub label: String,
    /// Bar length, in the chart's unit.
    pub value: f64,
    /// Extra tooltip text shown under the label and value; may be empty.
    pub tooltip: String,
}

/// Renders a horizontal bar chart: one row per bar, in the given order,
/// labels on the left (cut to 48 characters by an ellipsis in the middle;
/// the full label is in the tooltip), the value formatted with [`format_si`] at the bar's
/// end, and an x axis from 0 with 4–6 ticks at multiples of 1, 2 or 5 × 10^k.
///
/// Negative, NaN and infinite values are shown as text; their bars are
/// clamped to the axis (zero length, or full length for +∞). Returns an
/// empty string when `bars` is empty.
pub fn hbar_chart(title: &str, unit: &str, bars: &[Bar]) -> String {
    if bars.is_empty() {
        return String::new();
    }
    let full: Vec<String> = bars.iter().map(|bar| bar.label.clone()).collect();
    let labels = distinct_labels(&full, MAX_LABEL_CHARS);
    let value_texts: Vec<String> = bars.iter().map(|bar| format_si(bar.value, unit)).collect();
    let max_value = max_positive(bars.iter().map(|bar| bar.value));
    let ticks = nice_ticks(max_value);
    let domain_max = domain_top(&ticks);

    let label_width = text_width(max_chars(&labels)).max(40.0);
    let value_width = text_width(max_chars(&value_texts)) + 12.0;
    let plot_left = MARGIN + label_width + 8.0;
    let plot_width = (CHART_WIDTH - plot_left - value_width - MARGIN).max(MIN_PLOT_WIDTH);
    let plot_right = plot_left + plot_width;
    let width = plot_right + value_width + MARGIN;
    let plot_top = TITLE_HEIGHT;
    let plot_bottom = plot_top + HBAR_ROW_HEIGHT * bars.len() as f64;
    let height = plot_bottom + 30.0;
    let x_px = |value: f64| plot_left + unit_fraction(value, domain_max) * plot_width;

    let mut svg = open_svg(width, height, title);
    for &tick in &ticks {
        let tick_x = x_px(tick);
        svg.push_str(&grid_line(tick_x, plot_top, tick_x, plot_bottom));
        svg.push_str(&text_element(
            tick_x,
            plot_bottom + 16.0,
            "middle",
            &tick_label(tick, unit),
        ));
    }
    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    svg.push_str(&axis_line(plot_left, plot_top, plot_left, plot_bottom));

    let fill = PALETTE[0];
    for (row, ((bar, label), value_text)) in bars.iter().zip(&labels).zip(&value_texts).enumerate()
    {
        let row_top = plot_top + HBAR_ROW_HEIGHT * row as f64;
        let bar_top = row_top + (HBAR_ROW_HEIGHT - HBAR_BAR_HEIGHT) / 2.0;
        let text_y = row_top + HBAR_ROW_HEIGHT / 2.0 + 4.0;
        let bar_end = x_px(bar.value);
        let tooltip = with_extra(&format!("{}: {value_text}", bar.label), &bar.tooltip);
        svg.push_str(&format!(
            "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"{}><title>{}</title></rect>\n",
            px(plot_left),
            px(bar_top),
            px(bar_end - plot_left),
            px(HBAR_BAR_HEIGHT),
            mark_attributes(&bar.label, bar.value),
            escape(&tooltip),
        ));
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>\n",
            px(plot_left - 6.0),
            px(text_y),
            escape(&bar.label),
            escape(label),
        ));
        svg.push_str(&text_element(bar_end + 4.0, text_y, "start", value_text));
    }
    close_svg(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::testing::{attribute_values, count, data_values};

    fn bar(label: &str, value: f64) -> Bar {
        Bar {
            label: label.to_string(),
            value,
            tooltip: String::new(),
        }
    }

    #[test]
    fn hbar_chart_marks_every_bar_with_its_value_and_escaped_label() {
        let long_label = "x".repeat(60);
        let bars = vec![
            bar("<gpu&0>", 3.0),
            Bar {
                label: long_label.clone(),
                value: 1.5,
                tooltip: "42 calls".to_string(),
            },
            bar("idle", 0.25),
        ];
        let svg = hbar_chart("Time by \"op\"", "s", &bars);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "));
        assert!(svg.contains("role=\"img\" aria-label=\"Time by &quot;op&quot;\""));
        assert!(svg.contains("<title>Time by &quot;op&quot;</title>"));
        assert_eq!(data_values(&svg), vec![3.0, 1.5, 0.25]);
        assert_eq!(count(&svg, "<rect class=\"bar\""), 3);
        assert!(svg.contains("data-label=\"&lt;gpu&amp;0&gt;\""));
        assert!(!svg.contains("<gpu&0>"));
        // Truncated in the middle on screen, whole in the tooltip.
        let half = (MAX_LABEL_CHARS - 1) / 2;
        let shown = format!(
            "{}…{}",
            "x".repeat(MAX_LABEL_CHARS - 1 - half),
            "x".repeat(half)
        );
        assert!(svg.contains(&format!(">{shown}</text>")));
        assert!(svg.contains(&format!("<title>{long_label}: 1.50 s\n42 calls</title>")));
        // Value text at the bar end and the 0..3 axis.
        assert!(svg.contains(">3.00 s</text>"));
        assert!(svg.contains(">250 ms</text>"));
        for tick in ["0 s", "1 s", "2 s", "3 s"] {
            assert!(svg.contains(&format!(">{tick}</text>")), "tick {tick}");
        }
        // Longest bar spans the plot; half the value gives half the width.
        let widths: Vec<f64> = attribute_values(&svg, "width")
            .iter()
            .skip(1)
            .map(|text| text.parse().expect("width"))
            .collect();
        assert!((widths[0] - 2.0 * widths[1]).abs() < 0.2, "{widths:?}");
    }

    #[test]
    fn hbar_chart_survives_odd_values() {
        let bars = vec![
            bar("nan", f64::NAN),
            bar("negative", -4.0),
            bar("infinite", f64::INFINITY),
            bar("", 0.0),
        ];
        let svg = hbar_chart("", "", &bars);
        assert_eq!(
            attribute_values(&svg, "data-value"),
            vec!["NaN", "-4", "inf", "0"]
        );
        assert!(svg.contains(">–</text>"));
        assert!(svg.contains(">-4.00</text>"));
    }

    #[test]
    fn empty_inputs_give_empty_strings() {
        assert_eq!(hbar_chart("t", "s", &[]), "");
    }

    #[test]
    fn output_is_deterministic_and_well_formed_for_extreme_inputs() {
        let bars: Vec<Bar> = (0..300)
            .map(|index| bar(&format!("op{index}"), f64::from(index)))
            .collect();
        assert_eq!(hbar_chart("t", "", &bars), hbar_chart("t", "", &bars));
    }
}
