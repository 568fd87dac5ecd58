//! Series legends: entries of a colour swatch and a name, laid out in rows
//! that wrap.

use super::markup::{escape, label_width, px};

pub(super) const LEGEND_ROW_HEIGHT: f64 = 18.0;
pub(super) const LEGEND_SWATCH: f64 = 12.0;

/// Lays legend entries out left to right from `left`, wrapping before
/// `right`; returns each entry's top-left corner and the number of rows.
pub(super) fn flow_legend(
    names: &[String],
    left: f64,
    right: f64,
    top: f64,
) -> (Vec<(f64, f64)>, usize) {
    let mut positions = Vec::with_capacity(names.len());
    let mut x = left;
    let mut row = 0usize;
    for name in names {
        let entry_width = LEGEND_SWATCH + 4.0 + label_width(name) + 14.0;
        if x > left && x + entry_width > right {
            row += 1;
            x = left;
        }
        positions.push((x, top + LEGEND_ROW_HEIGHT * row as f64));
        x += entry_width;
    }
    (positions, row + 1)
}

/// One legend entry: a colour swatch and the (possibly truncated) name, with
/// the full name as tooltip.
pub(super) fn legend_entry(
    x: f64,
    y: f64,
    colour: &str,
    shown_name: &str,
    full_name: &str,
) -> String {
    format!(
        "<g class=\"legend-entry\"><title>{}</title><rect class=\"legend-swatch\" x=\"{}\" y=\"{}\" width=\"{size}\" height=\"{size}\" fill=\"{colour}\"/><text x=\"{}\" y=\"{}\">{}</text></g>\n",
        escape(full_name),
        px(x),
        px(y),
        px(x + LEGEND_SWATCH + 4.0),
        px(y + LEGEND_SWATCH - 1.0),
        escape(shown_name),
        size = px(LEGEND_SWATCH),
    )
}
