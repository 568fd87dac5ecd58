//! The single-hue colour scale of the charts that shade cells by a
//! fraction (the busy heatmap, the bundle picture, the report's heat
//! tables) and its legend.

use super::format::format_si;
use super::legend::LEGEND_SWATCH;
use super::markup::{px, text_element};
use super::style::GRID_COLOUR;

/// ColorBrewer "Blues" (9 classes), light to dark: the heatmap's single-hue
/// sequential scale, monotonic in lightness so it survives grayscale.
const HEAT_STOPS: [(u8, u8, u8); 9] = [
    (0xf7, 0xfb, 0xff),
    (0xde, 0xeb, 0xf7),
    (0xc6, 0xdb, 0xef),
    (0x9e, 0xca, 0xe1),
    (0x6b, 0xae, 0xd6),
    (0x42, 0x92, 0xc6),
    (0x21, 0x71, 0xb5),
    (0x08, 0x51, 0x9c),
    (0x08, 0x30, 0x6b),
];

/// Fill of a heatmap cell whose value is NaN ("no data").
pub(super) const NO_DATA_FILL: &str = "#ffffff";
/// Swatches in the legend.
pub(super) const HEAT_LEGEND_STEPS: usize = 11;

/// The fill for a fraction (busy, slots used): interpolated along `HEAT_STOPS`,
/// clamped to `[0, 1]`; NaN gives `NO_DATA_FILL`.
pub fn heat_colour(fraction: f64) -> String {
    if fraction.is_nan() {
        return NO_DATA_FILL.to_string();
    }
    let last_segment = HEAT_STOPS.len() - 2;
    let position = fraction.clamp(0.0, 1.0) * (HEAT_STOPS.len() - 1) as f64;
    let segment = (position.floor() as usize).min(last_segment);
    let weight = position - segment as f64;
    let (low, high) = (HEAT_STOPS[segment], HEAT_STOPS[segment + 1]);
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * weight).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(low.0, high.0),
        mix(low.1, high.1),
        mix(low.2, high.2)
    )
}

/// The colour legend: "0%", a row of swatches, then `full` ("100% busy").
pub(super) fn heat_legend(left: f64, top: f64, full: &str) -> String {
    let mut legend = text_element(left, top + LEGEND_SWATCH - 1.0, "start", "0%");
    let swatches_left = left + 24.0;
    for step in 0..HEAT_LEGEND_STEPS {
        let fraction = step as f64 / (HEAT_LEGEND_STEPS - 1) as f64;
        legend.push_str(&format!(
            "<rect class=\"legend-swatch\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{GRID_COLOUR}\" stroke-width=\"0.5\"><title>{}</title></rect>\n",
            px(swatches_left + LEGEND_SWATCH * 1.5 * step as f64),
            px(top),
            px(LEGEND_SWATCH * 1.5),
            px(LEGEND_SWATCH),
            heat_colour(fraction),
            format_si(fraction * 100.0, "%"),
        ));
    }
    let after_swatches = swatches_left + LEGEND_SWATCH * 1.5 * HEAT_LEGEND_STEPS as f64 + 4.0;
    legend.push_str(&text_element(
        after_swatches,
        top + LEGEND_SWATCH - 1.0,
        "start",
        full,
    ));
    legend
}
