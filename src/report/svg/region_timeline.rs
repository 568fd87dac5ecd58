//! The region timeline ([`region_timeline`]): the measured region entries
//! of one kernel execution, time on x, region nesting depth on y, each
//! bar labelled by its region.

use super::axes::{domain_top, nice_ticks, unit_fraction};
use super::format::{format_si, tick_label};
use super::markup::{
    axis_line, close_svg, escape, grid_line, mark_attributes, open_svg, px, text_element,
    text_width,
};
use super::style::{CHART_WIDTH, MARGIN, PALETTE, TITLE_HEIGHT};

const ROW_HEIGHT: f64 = 22.0;
const BAR_HEIGHT: f64 = 18.0;
const COMPACT_ROW_HEIGHT: f64 = 8.0;
const COMPACT_BAR_HEIGHT: f64 = 7.0;
const DEPTH_LABEL_WIDTH: f64 = 34.0;

/// One region entry of [`region_timeline`].
#[derive(Debug, Clone, PartialEq)]
pub struct RegionBar {
    /// The label drawn in the bar where it fits (`R32 acc`), whole in the
    /// tooltip.
    pub label: String,
    /// Start, from the kernel execution's start, in the chart's unit.
    pub start: f64,
    /// Measured duration, in the chart's unit: the bar's `data-value`.
    pub duration: f64,
    /// Nesting depth of the region (0 outermost): the bar's row.
    pub depth: u32,
    /// The colour index of the region (the same region keeps its colour
    /// across executions).
    pub colour: usize,
    /// Extra tooltip lines (static occupancy, source line).
    pub tooltip: String,
}

/// Renders the region entries of one execution spanning `[0, span]` (in
/// `unit`): a row per nesting depth, a bar per entry from its start for
/// its duration, labelled inside the bar where the label fits. `compact`
/// draws a small multiple: thin rows, no labels, the same marks. Every
/// bar carries `data-value` (its duration), `data-start` and
/// `data-depth`. Non-finite starts and durations are drawn at 0 with zero
/// width. Returns an empty string when `bars` is empty.
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
    let height = plot_bottom + 22.0;
    let x_px = |value: f64| plot_left + unit_fraction(finite(value), domain_max) * plot_width;

    let mut svg = open_svg(CHART_WIDTH, height, title);
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
            PALETTE[bar.colour % PALETTE.len()],
            mark_attributes(&bar.label, bar.duration),
            bar.start,
            bar.depth,
            escape(&tooltip),
        ));
        let room = right - left - 6.0;
        if !compact && room > text_width(3) {
            let chars = (room / text_width(1)) as usize;
            let shown: String = if bar.label.chars().count() <= chars {
                bar.label.clone()
            } else {
                bar.label
                    .chars()
                    .take(chars.saturating_sub(1))
                    .chain(['…'])
                    .collect()
            };
            svg.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" fill=\"#ffffff\" pointer-events=\"none\">{}</text>",
                px(left + 3.0),
                px(top + bar_height / 2.0 + 4.0),
                escape(&shown)
            ));
        }
        svg.push_str("</g>\n");
    }
    close_svg(svg)
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
