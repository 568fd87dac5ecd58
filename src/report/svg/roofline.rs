//! The roofline chart ([`roofline`]): a log–log scatter of operational
//! intensity against achieved FLOP/s under the roof of both peaks.

use super::axes::{LogAxis, decade, is_positive_finite};
use super::format::{format_si, tick_label};
use super::markup::{
    axis_line, close_svg, escape, grid_line, mark_attributes, open_svg, px, text_element,
    truncate_label, with_extra,
};
use super::style::{CHART_WIDTH, PALETTE, REFERENCE_COLOUR, TITLE_HEIGHT};

const ROOFLINE_PLOT_HEIGHT: f64 = 300.0;
const MAX_POINT_LABEL_CHARS: usize = 24;
/// Scatter points get a visible text label only up to this many points.
const MAX_LABELLED_POINTS: usize = 10;

/// One scatter point of [`roofline`].
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Point name (for example an HLO op category), in the tooltip and, for
    /// a few points, next to the point.
    pub label: String,
    /// Operational intensity, in FLOP per byte.
    pub x: f64,
    /// Achieved throughput, in FLOP/s.
    pub y: f64,
    /// Extra tooltip text; may be empty.
    pub tooltip: String,
}

/// Renders a roofline chart: a log–log scatter of operational intensity
/// (x, FLOP/byte) against achieved FLOP/s (y), with decade ticks labelled by
/// [`format_si`].
///
/// Points whose `x` or `y` is not positive and finite cannot be placed on a
/// log scale and are skipped. When both `peak_flops` and `peak_bytes_per_s`
/// are given (positive and finite), the axes extend to the ridge point and
/// the roof `min(peak_flops, x * peak_bytes_per_s)` is drawn as a
/// `<polyline class="roof">` across the x range; with only one of them no
/// roof is drawn. Each point is a `<circle>` with `data-label`,
/// `data-value` (achieved FLOP/s) and `data-x` (intensity). Returns an empty
/// string when no point can be plotted.
pub fn roofline(
    title: &str,
    points: &[Point],
    peak_flops: Option<f64>,
    peak_bytes_per_s: Option<f64>,
) -> String {
    let plotted: Vec<&Point> = points
        .iter()
        .filter(|point| is_positive_finite(point.x) && is_positive_finite(point.y))
        .collect();
    if plotted.is_empty() {
        return String::new();
    }
    let roof = match (
        peak_flops.filter(|value| is_positive_finite(*value)),
        peak_bytes_per_s.filter(|value| is_positive_finite(*value)),
    ) {
        (Some(flops_per_s), Some(bytes_per_s)) => Some(Roof {
            flops_per_s,
            bytes_per_s,
        }),
        _ => None,
    };
    let mut x_values: Vec<f64> = plotted.iter().map(|point| point.x).collect();
    let mut y_values: Vec<f64> = plotted.iter().map(|point| point.y).collect();
    if let Some(roof) = &roof {
        let ridge = roof.ridge_intensity();
        if is_positive_finite(ridge) {
            x_values.push(ridge);
        }
        y_values.push(roof.flops_per_s);
    }
    let x_axis = LogAxis::spanning(&x_values);
    let y_axis = LogAxis::spanning(&y_values);

    let plot_left = 72.0;
    let plot_right = CHART_WIDTH - 20.0;
    let plot_width = plot_right - plot_left;
    let plot_top = TITLE_HEIGHT + 6.0;
    let plot_bottom = plot_top + ROOFLINE_PLOT_HEIGHT;
    let height = plot_bottom + 46.0;
    let x_px = |value: f64| plot_left + x_axis.fraction(value) * plot_width;
    let y_px = |value: f64| plot_bottom - y_axis.fraction(value) * ROOFLINE_PLOT_HEIGHT;

    let mut svg = open_svg(CHART_WIDTH, height, title);
    for (exponent, labelled) in x_axis.decades() {
        let tick_x = x_px(decade(exponent));
        svg.push_str(&grid_line(tick_x, plot_top, tick_x, plot_bottom));
        if labelled {
            svg.push_str(&text_element(
                tick_x,
                plot_bottom + 16.0,
                "middle",
                &tick_label(decade(exponent), ""),
            ));
        }
    }
    for (exponent, labelled) in y_axis.decades() {
        let tick_y = y_px(decade(exponent));
        svg.push_str(&grid_line(plot_left, tick_y, plot_right, tick_y));
        if labelled {
            svg.push_str(&text_element(
                plot_left - 6.0,
                tick_y + 4.0,
                "end",
                &tick_label(decade(exponent), ""),
            ));
        }
    }
    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    svg.push_str(&axis_line(plot_left, plot_top, plot_left, plot_bottom));
    svg.push_str(&text_element(
        (plot_left + plot_right) / 2.0,
        plot_bottom + 36.0,
        "middle",
        "Operational intensity (FLOP/byte)",
    ));
    let y_title_y = (plot_top + plot_bottom) / 2.0;
    svg.push_str(&format!(
        "<text x=\"16\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {y})\">Achieved FLOP/s</text>\n",
        y = px(y_title_y),
    ));

    if let Some(roof) = &roof {
        let vertices: Vec<String> = roof
            .vertices(&x_axis, &y_axis)
            .iter()
            .map(|&(x, y)| format!("{},{}", px(x_px(x)), px(y_px(y))))
            .collect();
        let roof_text = format!(
            "roof: {}, {}",
            format_si(roof.flops_per_s, "FLOP/s"),
            format_si(roof.bytes_per_s, "B/s")
        );
        svg.push_str(&format!(
            "<polyline class=\"roof\" points=\"{}\" fill=\"none\" stroke=\"{REFERENCE_COLOUR}\" stroke-width=\"2\" data-peak-flops=\"{}\" data-peak-bytes-per-s=\"{}\"><title>{}</title></polyline>\n",
            vertices.join(" "),
            roof.flops_per_s,
            roof.bytes_per_s,
            escape(&roof_text),
        ));
        svg.push_str(&text_element(
            plot_right - 4.0,
            y_px(roof.flops_per_s) - 6.0,
            "end",
            &roof_text,
        ));
    }

    let show_point_labels = plotted.len() <= MAX_LABELLED_POINTS;
    for point in &plotted {
        let center_x = x_px(point.x);
        let center_y = y_px(point.y);
        svg.push_str(&format!(
            "<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.85\" stroke=\"#111111\" stroke-width=\"0.5\"{} data-x=\"{}\"><title>{}</title></circle>\n",
            px(center_x),
            px(center_y),
            PALETTE[0],
            mark_attributes(&point.label, point.y),
            point.x,
            escape(&point_tooltip(point, roof.as_ref())),
        ));
        if show_point_labels {
            svg.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n",
                px(center_x + 6.0),
                px(center_y - 6.0),
                escape(&truncate_label(&point.label, MAX_POINT_LABEL_CHARS)),
            ));
        }
    }
    close_svg(svg)
}

/// Both peaks of a roofline.
struct Roof {
    flops_per_s: f64,
    bytes_per_s: f64,
}

impl Roof {
    /// The intensity where the memory roof meets the compute roof.
    fn ridge_intensity(&self) -> f64 {
        self.flops_per_s / self.bytes_per_s
    }

    /// Attainable FLOP/s at `intensity`.
    fn attainable(&self, intensity: f64) -> f64 {
        self.flops_per_s.min(intensity * self.bytes_per_s)
    }

    /// The roof's vertices in data space, clipped to the plotted range: from
    /// where the memory slope enters the plot, through the ridge, to the
    /// right edge.
    fn vertices(&self, x_axis: &LogAxis, y_axis: &LogAxis) -> Vec<(f64, f64)> {
        let x_low = decade(x_axis.low_exponent);
        let x_high = decade(x_axis.high_exponent);
        let y_low = decade(y_axis.low_exponent);
        let start = x_low.max(y_low / self.bytes_per_s);
        let ridge = self.ridge_intensity();
        let mut vertices = vec![(start, self.attainable(start))];
        if ridge > start && ridge < x_high {
            vertices.push((ridge, self.flops_per_s));
        }
        vertices.push((x_high, self.attainable(x_high)));
        vertices
    }
}

/// The tooltip of a roofline point.
fn point_tooltip(point: &Point, roof: Option<&Roof>) -> String {
    let mut text = format!(
        "{}\nintensity: {}\nachieved: {}",
        point.label,
        format_si(point.x, "FLOP/B"),
        format_si(point.y, "FLOP/s")
    );
    if let Some(roof) = roof {
        let share = point.y / roof.attainable(point.x) * 100.0;
        text.push_str(&format!("\n{} of roof", format_si(share, "%")));
    }
    with_extra(&text, &point.tooltip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::testing::{attribute_values, count, data_values};

    fn point(label: &str, x: f64, y: f64) -> Point {
        Point {
            label: label.to_string(),
            x,
            y,
            tooltip: String::new(),
        }
    }

    #[test]
    fn roofline_skips_unplottable_points_and_draws_roof_with_both_peaks() {
        let points = vec![
            point("matmul", 100.0, 5e14),
            point("zero", 0.0, 1e12),
            point("negative", -1.0, 1e12),
            point("nan", f64::NAN, 1e12),
            point("infinite", 10.0, f64::INFINITY),
            point("no flops", 10.0, 0.0),
            point("fusion <elementwise>", 0.5, 1e12),
        ];
        let svg = roofline("Roofline", &points, Some(1e15), Some(3e12));
        assert_eq!(data_values(&svg), vec![5e14, 1e12]);
        assert_eq!(
            attribute_values(&svg, "data-x"),
            vec!["100".to_string(), "0.5".to_string()]
        );
        assert!(svg.contains("data-label=\"fusion &lt;elementwise&gt;\""));
        assert_eq!(count(&svg, "<polyline class=\"roof\""), 1);
        // The roof bends at the ridge: three vertices.
        let vertices = attribute_values(&svg, "points");
        assert_eq!(vertices.len(), 1);
        assert_eq!(vertices[0].split(' ').count(), 3);
        assert!(svg.contains("data-peak-flops=\"1000000000000000\""));
        // Decade ticks.
        assert!(svg.contains(">1k</text>"));
        assert!(svg.contains(">0.1</text>"));

        let compute_only = roofline("Roofline", &points, Some(1e15), None);
        let memory_only = roofline("Roofline", &points, None, Some(3e12));
        let bad_peak = roofline("Roofline", &points, Some(f64::NAN), Some(3e12));
        for svg in [&compute_only, &memory_only, &bad_peak] {
            assert!(!svg.contains("<polyline"));
            assert_eq!(data_values(svg).len(), 2);
        }
    }

    #[test]
    fn roofline_roof_spans_the_x_range() {
        let points = vec![point("a", 1.0, 1e12), point("b", 1000.0, 1e14)];
        let svg = roofline("", &points, Some(1e15), Some(1e13));
        let vertices = attribute_values(&svg, "points");
        let coordinates: Vec<(f64, f64)> = vertices[0]
            .split(' ')
            .map(|pair| {
                let (x, y) = pair.split_once(',').expect("x,y");
                (x.parse().expect("x"), y.parse().expect("y"))
            })
            .collect();
        // From the left edge (72) to the right edge (740), flat after the ridge.
        assert_eq!(coordinates.first().map(|c| c.0), Some(72.0));
        assert_eq!(coordinates.last().map(|c| c.0), Some(740.0));
        assert_eq!(coordinates[1].1, coordinates[2].1);
        assert!(coordinates[0].1 > coordinates[1].1);
    }

    #[test]
    fn empty_inputs_give_empty_strings() {
        assert_eq!(roofline("t", &[], Some(1.0), Some(1.0)), "");
        assert_eq!(roofline("t", &[point("bad", 0.0, 1.0)], None, None), "");
    }

    #[test]
    fn output_is_deterministic_and_well_formed_for_extreme_inputs() {
        let extreme_points = vec![
            point("tiny", 5e-324, 5e-324),
            point("huge", f64::MAX, f64::MAX),
        ];
        let svg = roofline("t", &extreme_points, Some(f64::MAX), Some(5e-324));
        assert_eq!(data_values(&svg).len(), 2);
        assert!(!svg.contains("NaN\"") && !svg.contains("inf\""));
    }
}
