//! The bundle picture ([`bundle_picture`]): a compiled kernel's bundles on
//! x, its units on y, each cell shaded by the slots the bundle uses of the
//! unit's capacity, with the program's regions marked on top.

use super::heat::{heat_colour, heat_legend};
use super::legend::LEGEND_SWATCH;
use super::markup::{
    axis_line, close_svg, escape, max_chars, open_svg, px, text_element, text_width,
};
use super::style::{CHART_WIDTH, MARGIN, MIN_PLOT_WIDTH, REFERENCE_COLOUR, TITLE_HEIGHT};

const ROW_HEIGHT: f64 = 18.0;
const CELL_HEIGHT: f64 = 16.0;
const HIGHLIGHT: &str = "#D55E00";

/// One unit's row of [`bundle_picture`].
#[derive(Debug, Clone, PartialEq)]
pub struct UnitRow {
    /// The unit (`MXU`, `VLD`, ...).
    pub unit: String,
    /// Slots of the unit per bundle.
    pub capacity: u32,
    /// Slots used in each bundle, bundle 0 first.
    pub used: Vec<u32>,
}

/// What a cell's fraction is of: the tooltip's word after `N of M`, and
/// the legend's label at the full end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellScale {
    /// `slots` (`MXU: 1 of 2 slots`).
    pub of: &'static str,
    /// `100% of the slots`.
    pub full: &'static str,
}

/// Slots used of a unit's capacity (the bundle picture).
pub const SLOTS: CellScale = CellScale {
    of: "slots",
    full: "100% of the slots",
};

/// One lane per unit from a query's cells (`unit`, `bundle`, `used`,
/// `capacity`, a row per bundle and unit): units in the order of `order`,
/// any other after them by name; a bundle with no cell uses 0 slots.
pub fn unit_rows(
    unit: &[String],
    bundle: &[f64],
    used: &[f64],
    capacity: &[f64],
    order: &[&str],
) -> Vec<UnitRow> {
    let mut rows: std::collections::BTreeMap<(usize, String), UnitRow> = Default::default();
    for i in 0..unit.len() {
        let rank = order
            .iter()
            .position(|u| *u == unit[i])
            .unwrap_or(order.len());
        let row = rows
            .entry((rank, unit[i].clone()))
            .or_insert_with(|| UnitRow {
                unit: unit[i].clone(),
                capacity: capacity[i] as u32,
                used: Vec::new(),
            });
        let b = bundle[i] as usize;
        if row.used.len() <= b {
            row.used.resize(b + 1, 0);
        }
        row.used[b] = used[i] as u32;
    }
    rows.into_values().collect()
}

/// Live registers of a type over the most of that type live at once in
/// any program of the capture (the register-pressure picture: the data
/// holds no register-file size, so the capture's busiest program is the
/// scale, the same for every program drawn).
pub const LIVE_OF_CAPTURE_PEAK: CellScale = CellScale {
    of: "live (the most in any program of the capture)",
    full: "the capture's peak",
};

/// A region's bundle range, `[start, limit)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleRange {
    /// The region's label (`R32 predicated_region`).
    pub label: String,
    /// First bundle.
    pub start: u32,
    /// Bundle past the last.
    pub limit: u32,
}

/// Renders `rows` (every row the same number of bundles, or padded with
/// empty cells to the longest) as one lane per unit. A bundle's cell is
/// filled by `used / capacity` on the heat scale; cells of equal use next
/// to each other are drawn as one run, and each lane draws one `<path>`
/// per level of use (a 3,000-bundle kernel stays a few hundred KB). The
/// numbers drawn are in each lane's attributes: `data-unit`,
/// `data-capacity` and `data-used` (the used slots of every bundle,
/// space-separated), so a test reads one cell per bundle × unit back.
///
/// `regions` are marked by a line at their first bundle, and `hot` (an
/// index into `regions`) by an outlined band over its bundles labelled
/// above the lanes. Returns an empty string when there is no bundle.
pub fn bundle_picture(
    title: &str,
    rows: &[UnitRow],
    regions: &[BundleRange],
    hot: Option<usize>,
    scale: CellScale,
) -> String {
    let bundles = rows.iter().map(|r| r.used.len()).max().unwrap_or(0);
    if bundles == 0 {
        return String::new();
    }
    let labels: Vec<String> = rows.iter().map(|r| r.unit.clone()).collect();
    let plot_left = MARGIN + text_width(max_chars(&labels)).max(30.0) + 8.0;
    let plot_width = (CHART_WIDTH - plot_left - MARGIN).max(MIN_PLOT_WIDTH);
    let plot_right = plot_left + plot_width;
    let band_top = TITLE_HEIGHT + 14.0;
    let plot_top = band_top + 4.0;
    let plot_bottom = plot_top + ROW_HEIGHT * rows.len() as f64;
    let legend_top = plot_bottom + 40.0;
    let height = legend_top + LEGEND_SWATCH + MARGIN;
    let cell_width = plot_width / bundles as f64;
    let x_of = |bundle: f64| plot_left + bundle * cell_width;

    let mut svg = open_svg(plot_right + MARGIN, height, title);
    svg.push_str("<g shape-rendering=\"crispEdges\">\n");
    for (lane, row) in rows.iter().enumerate() {
        let row_top = plot_top + ROW_HEIGHT * lane as f64;
        let cell_top = row_top + (ROW_HEIGHT - CELL_HEIGHT) / 2.0;
        svg.push_str(&text_element(
            plot_left - 6.0,
            row_top + ROW_HEIGHT / 2.0 + 4.0,
            "end",
            &row.unit,
        ));
        let used_text: Vec<String> = row.used.iter().map(u32::to_string).collect();
        svg.push_str(&format!(
            "<g class=\"lane\" data-unit=\"{}\" data-capacity=\"{}\" data-used=\"{}\">",
            escape(&row.unit),
            row.capacity,
            used_text.join(" ")
        ));
        // One path per level of use, each a list of runs.
        let mut levels: Vec<u32> = row.used.iter().copied().filter(|u| *u > 0).collect();
        levels.sort_unstable();
        levels.dedup();
        for level in levels {
            let mut d = String::new();
            let mut bundle = 0;
            while bundle < row.used.len() {
                if row.used[bundle] != level {
                    bundle += 1;
                    continue;
                }
                let run_start = bundle;
                while bundle < row.used.len() && row.used[bundle] == level {
                    bundle += 1;
                }
                let left = x_of(run_start as f64);
                let width = (bundle - run_start) as f64 * cell_width;
                d.push_str(&format!(
                    "M{} {}h{}v{}h-{}z",
                    px(left),
                    px(cell_top),
                    px(width),
                    px(CELL_HEIGHT),
                    px(width)
                ));
            }
            let fraction = if row.capacity > 0 {
                f64::from(level) / f64::from(row.capacity)
            } else {
                f64::NAN
            };
            svg.push_str(&format!(
                "<path fill=\"{}\" d=\"{d}\"><title>{}: {level} of {} {}</title></path>",
                heat_colour(fraction),
                escape(&row.unit),
                row.capacity,
                scale.of
            ));
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</g>\n");
    for (index, region) in regions.iter().enumerate() {
        let left = x_of(f64::from(region.start));
        let right = x_of(f64::from(region.limit.max(region.start)));
        if Some(index) == hot {
            svg.push_str(&format!(
                "<rect class=\"hot\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{HIGHLIGHT}\" stroke-width=\"2\" data-start=\"{}\" data-limit=\"{}\"><title>{} (bundles {}–{}): the most measured time</title></rect>\n",
                px(left),
                px(band_top),
                px(right - left),
                px(plot_bottom - band_top),
                region.start,
                region.limit,
                escape(&region.label),
                region.start,
                region.limit.saturating_sub(1),
            ));
            svg.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" fill=\"{HIGHLIGHT}\">{}</text>\n",
                px(left),
                px(band_top - 3.0),
                escape(&region.label)
            ));
        } else {
            svg.push_str(&format!(
                "<line class=\"region-start\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{REFERENCE_COLOUR}\" stroke-width=\"0.6\" stroke-dasharray=\"2 2\" data-start=\"{3}\" data-limit=\"{6}\"><title>{4} (bundles {3}–{5})</title></line>\n",
                px(left),
                px(plot_top),
                px(plot_bottom),
                region.start,
                escape(&region.label),
                region.limit.saturating_sub(1),
                region.limit,
            ));
        }
    }
    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    for tick in [0, bundles / 4, bundles / 2, 3 * bundles / 4, bundles] {
        svg.push_str(&text_element(
            x_of(tick as f64),
            plot_bottom + 16.0,
            "middle",
            &tick.to_string(),
        ));
    }
    svg.push_str(&text_element(
        (plot_left + plot_right) / 2.0,
        plot_bottom + 31.0,
        "middle",
        "bundle",
    ));
    svg.push_str(&heat_legend(plot_left, legend_top, scale.full));
    close_svg(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::svg::testing::{attribute_values, count};

    fn rows() -> Vec<UnitRow> {
        vec![
            UnitRow {
                unit: "MXU".into(),
                capacity: 2,
                used: vec![0, 2, 2, 1, 2, 0],
            },
            UnitRow {
                unit: "VLD".into(),
                capacity: 3,
                used: vec![1, 1, 1, 1, 1, 3],
            },
        ]
    }

    #[test]
    fn every_bundle_and_unit_is_a_cell_with_its_value() {
        let regions = [
            BundleRange {
                label: "R28 init".into(),
                start: 1,
                limit: 3,
            },
            BundleRange {
                label: "R32 acc".into(),
                start: 3,
                limit: 5,
            },
        ];
        let svg = bundle_picture("k", &rows(), &regions, Some(1), SLOTS);
        assert_eq!(attribute_values(&svg, "data-unit"), ["MXU", "VLD"]);
        assert_eq!(
            attribute_values(&svg, "data-used"),
            ["0 2 2 1 2 0", "1 1 1 1 1 3"]
        );
        // MXU: levels 1 and 2 (2 runs of 2); VLD: levels 1 and 3.
        assert_eq!(count(&svg, "<path "), 4);
        let runs: usize = attribute_values(&svg, "d")
            .iter()
            .map(|d| count(d, "z"))
            .sum();
        assert_eq!(runs, 2 + 1 + 1 + 1);
        assert!(svg.contains("MXU: 2 of 2 slots"));
        assert!(svg.contains("#08306b"), "a full cell is the darkest");
        assert_eq!(count(&svg, "class=\"hot\""), 1);
        assert_eq!(count(&svg, "class=\"region-start\""), 1);
        assert!(svg.contains("R32 acc (bundles 3–4): the most measured time"));
    }

    #[test]
    fn no_bundle_draws_nothing() {
        assert_eq!(bundle_picture("k", &[], &[], None, SLOTS), "");
    }
}
