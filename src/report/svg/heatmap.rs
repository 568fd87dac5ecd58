//! The heatmap ([`heatmap`]): one row per lane (a device, a unit), its
//! equal-width time cells shaded by how busy they were, with a colour
//! legend below.

use super::axes::range_ticks;
use super::format::format_si;
use super::heat::{heat_colour, heat_legend};
use super::legend::LEGEND_SWATCH;
use super::markup::{
    axis_line, close_svg, escape, mark_attributes, max_chars, open_svg, px, round_px, text_element,
    text_width, truncate_label,
};
use super::style::{CHART_WIDTH, MARGIN, MIN_PLOT_WIDTH, TITLE_HEIGHT};

const MAX_LANE_LABEL_CHARS: usize = 32;
const HEAT_ROW_HEIGHT: f64 = 18.0;
const HEAT_CELL_HEIGHT: f64 = 16.0;

/// One row of [`heatmap`].
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// Row label (for example a device or a unit).
    pub name: String,
    /// Fraction busy of each equal-width cell, in `[0, 1]`, left to right.
    pub cells: Vec<f64>,
}

/// Renders a heatmap: one row per lane, each lane's cells equally wide
/// across `[x_start, x_end]` (in `x_unit`, formatted with [`format_si`]),
/// each cell filled from a light-to-dark single-hue scale by its value, a
/// fraction busy in `[0, 1]`, with a 0%..100% colour legend below.
///
/// Values outside `[0, 1]` are clamped for the colour (the tooltip shows the
/// real value); NaN cells are white and say "no data". Each cell's tooltip
/// reads "lane · start–end: value%"; cells also carry `data-start` and
/// `data-end`. `x_label` titles the x axis. Returns an empty string when no
/// lane has any cell.
pub fn heatmap(
    title: &str,
    x_label: &str,
    x_start: f64,
    x_end: f64,
    x_unit: &str,
    lanes: &[Lane],
) -> String {
    if lanes.iter().all(|lane| lane.cells.is_empty()) {
        return String::new();
    }
    let lane_labels: Vec<String> = lanes
        .iter()
        .map(|lane| truncate_label(&lane.name, MAX_LANE_LABEL_CHARS))
        .collect();
    let plot_left = MARGIN + text_width(max_chars(&lane_labels)) + 8.0;
    let plot_width = (CHART_WIDTH - plot_left - MARGIN).max(MIN_PLOT_WIDTH);
    let plot_right = plot_left + plot_width;
    let width = plot_right + MARGIN;
    let plot_top = TITLE_HEIGHT;
    let plot_bottom = plot_top + HEAT_ROW_HEIGHT * lanes.len() as f64;
    let legend_top = plot_bottom + 40.0;
    let height = legend_top + LEGEND_SWATCH + MARGIN;

    let mut svg = open_svg(width, height, title);
    svg.push_str("<g shape-rendering=\"crispEdges\">\n");
    for (row, (lane, label)) in lanes.iter().zip(&lane_labels).enumerate() {
        let row_top = plot_top + HEAT_ROW_HEIGHT * row as f64;
        let cell_top = row_top + (HEAT_ROW_HEIGHT - HEAT_CELL_HEIGHT) / 2.0;
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>\n",
            px(plot_left - 6.0),
            px(row_top + HEAT_ROW_HEIGHT / 2.0 + 4.0),
            escape(&lane.name),
            escape(label),
        ));
        let cell_count = lane.cells.len() as f64;
        for (index, &value) in lane.cells.iter().enumerate() {
            let start_fraction = index as f64 / cell_count;
            let end_fraction = (index + 1) as f64 / cell_count;
            let left = round_px(plot_left + start_fraction * plot_width);
            let right = round_px(plot_left + end_fraction * plot_width);
            let cell_start = x_start + (x_end - x_start) * start_fraction;
            let cell_end = x_start + (x_end - x_start) * end_fraction;
            let tooltip = format!(
                "{} · {}–{}: {}",
                lane.name,
                format_si(cell_start, x_unit),
                format_si(cell_end, x_unit),
                busy_text(value)
            );
            svg.push_str(&format!(
                "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{} data-start=\"{cell_start}\" data-end=\"{cell_end}\"><title>{}</title></rect>\n",
                px(left),
                px(cell_top),
                px(right - left),
                px(HEAT_CELL_HEIGHT),
                heat_colour(value),
                mark_attributes(&lane.name, value),
                escape(&tooltip),
            ));
        }
    }
    svg.push_str("</g>\n");

    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    svg.push_str(&axis_line(plot_left, plot_top, plot_left, plot_bottom));
    for (fraction, label) in range_ticks(x_start, x_end, x_unit) {
        let tick_x = plot_left + fraction * plot_width;
        svg.push_str(&axis_line(tick_x, plot_bottom, tick_x, plot_bottom + 4.0));
        svg.push_str(&text_element(tick_x, plot_bottom + 16.0, "middle", &label));
    }
    svg.push_str(&text_element(
        (plot_left + plot_right) / 2.0,
        plot_bottom + 31.0,
        "middle",
        x_label,
    ));
    svg.push_str(&heat_legend(plot_left, legend_top, "100% busy"));
    close_svg(svg)
}

/// A busy fraction as a percentage for tooltips.
fn busy_text(fraction: f64) -> String {
    if fraction.is_nan() {
        "no data".to_string()
    } else {
        format_si(fraction * 100.0, "%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::heat::{HEAT_LEGEND_STEPS, NO_DATA_FILL};
    use crate::report::svg::testing::{attribute_values, count, data_values, luminance};

    #[test]
    fn heatmap_draws_lanes_times_cells() {
        let lanes = vec![
            Lane {
                name: "TPU:0".into(),
                cells: vec![0.0, 0.25, 0.5, 0.75, 1.0, 1.5, f64::NAN],
            },
            Lane {
                name: "TPU:1 <mxu>".into(),
                cells: vec![0.1; 7],
            },
            Lane {
                name: "TPU:2".into(),
                cells: vec![0.9; 7],
            },
        ];
        let svg = heatmap("Busy", "time", 0.0, 7e9, "ps", &lanes);
        assert_eq!(count(&svg, "<rect class=\"cell\""), 21);
        assert_eq!(data_values(&svg).len(), 21);
        assert!(svg.contains("<title>TPU:0 · 2.00 ms–3.00 ms: 50.0%</title>"));
        assert!(svg.contains("<title>TPU:0 · 6.00 ms–7.00 ms: no data</title>"));
        assert!(svg.contains("data-label=\"TPU:1 &lt;mxu&gt;\""));
        assert_eq!(count(&svg, "class=\"legend-swatch\""), HEAT_LEGEND_STEPS);
        assert!(svg.contains(">0%</text>") && svg.contains(">100% busy</text>"));
        assert!(svg.contains(">time</text>"));
        assert!(svg.contains(">0 s</text>") && svg.contains(">6 ms</text>"));
        // The first lane's cells tile the plot left to right with no gaps.
        let first_lane: Vec<(f64, f64)> = svg
            .lines()
            .filter(|line| line.starts_with("<rect class=\"cell\""))
            .take(7)
            .map(|line| {
                let x: f64 = attribute_values(line, "x")[0].parse().expect("x");
                let width: f64 = attribute_values(line, "width")[0].parse().expect("width");
                (x, width)
            })
            .collect();
        for pair in first_lane.windows(2) {
            assert!(pair[0].1 > 0.0);
            assert!((pair[0].0 + pair[0].1 - pair[1].0).abs() < 1e-9, "{pair:?}");
        }
    }

    #[test]
    fn heat_colours_darken_with_value() {
        let colours: Vec<String> = (0..=10)
            .map(|step| heat_colour(f64::from(step) / 10.0))
            .collect();
        for pair in colours.windows(2) {
            assert!(luminance(&pair[0]) > luminance(&pair[1]), "{pair:?}");
        }
        assert_eq!(heat_colour(0.0), "#f7fbff");
        assert_eq!(heat_colour(1.0), "#08306b");
        assert_eq!(heat_colour(-3.0), "#f7fbff");
        assert_eq!(heat_colour(f64::INFINITY), "#08306b");
        assert_eq!(heat_colour(f64::NAN), NO_DATA_FILL);
    }

    #[test]
    fn empty_inputs_give_empty_strings() {
        assert_eq!(heatmap("t", "time", 0.0, 1.0, "ps", &[]), "");
        let no_cells = vec![Lane {
            name: "idle".into(),
            cells: Vec::new(),
        }];
        assert_eq!(heatmap("t", "time", 0.0, 1.0, "ps", &no_cells), "");
    }

    #[test]
    fn output_is_deterministic_and_well_formed_for_extreme_inputs() {
        let lanes = vec![Lane {
            name: String::new(),
            cells: vec![0.5; 5000],
        }];
        let svg = heatmap("t", "", f64::NEG_INFINITY, f64::NAN, "", &lanes);
        assert_eq!(count(&svg, "<rect class=\"cell\""), 5000);
    }
}
