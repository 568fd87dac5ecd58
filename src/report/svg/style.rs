//! The look every chart shares: the series palette, line colours, the
//! chart width and margins, and the font's estimated character width.

/// Series colours: the Okabe–Ito colour-blind-safe palette (with Tol's
/// indigo and wine in place of black and reddish purple), ordered so that
/// neighbouring series alternate dark and light. The CIE L* lightness of
/// each entry is 46, 71, 22, 70, 54, 89, 58 and 32, so adjacent stacked
/// segments stay distinguishable in grayscale. Series `i` uses
/// `PALETTE[i % PALETTE.len()]`.
pub(super) const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#332288", "#56B4E9", "#D55E00", "#F0E442", "#009E73", "#882255",
];

/// Line colours: grid lines, axes, and reference marks (a stacked bar
/// chart's reference lines, a roofline's roof).
pub(super) const GRID_COLOUR: &str = "#e3e3e3";
pub(super) const AXIS_COLOUR: &str = "#444444";
pub(super) const REFERENCE_COLOUR: &str = "#222222";

/// Preferred total width of a chart, in px.
pub(super) const CHART_WIDTH: f64 = 760.0;
/// Narrowest plot area, whatever the labels take.
pub(super) const MIN_PLOT_WIDTH: f64 = 200.0;
pub(super) const MARGIN: f64 = 10.0;
/// Height of the visible title line above the plot.
pub(super) const TITLE_HEIGHT: f64 = 28.0;
/// Estimated average advance of one character at 12px sans-serif.
pub(super) const CHAR_WIDTH: f64 = 6.6;

/// The palette colour of series `index`.
pub(super) fn palette_colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// Fill of the marks past the palette: the series (regions) with the
/// least time, drawn alike and named together in a legend.
pub(super) const OTHER_COLOUR: &str = "#b0b0b0";

/// The text colour that reads on `fill` (`#rrggbb`): dark on light fills
/// (the palette's orange, sky blue, yellow and green, the grey of the
/// others), white on dark ones.
pub(super) fn text_colour_on(fill: &str) -> &'static str {
    let channel = |at: usize| {
        fill.get(at..at + 2)
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .map_or(0.0, f64::from)
    };
    let luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    if luminance > 120.0 {
        "#1a1a1a"
    } else {
        "#ffffff"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::testing::luminance;

    #[test]
    fn palette_alternates_lightness() {
        for index in 0..PALETTE.len() {
            let here = luminance(palette_colour(index));
            let next = luminance(palette_colour(index + 1));
            assert!((here - next).abs() > 20.0, "{index}: {here} vs {next}");
        }
        assert_eq!(palette_colour(PALETTE.len()), PALETTE[0]);
    }

    #[test]
    fn text_reads_on_every_fill() {
        // White on the indigo, blue, vermilion and wine; dark on the rest.
        let dark: Vec<&str> = PALETTE
            .iter()
            .copied()
            .filter(|fill| text_colour_on(fill) == "#1a1a1a")
            .collect();
        assert_eq!(dark, ["#E69F00", "#56B4E9", "#F0E442", "#009E73"]);
        assert_eq!(text_colour_on(OTHER_COLOUR), "#1a1a1a");
    }
}
