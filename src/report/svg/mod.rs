//! Inline SVG charts for the one-file HTML report (`xprof-sql report`).
//!
//! Every chart is returned as one self-contained `<svg>` element string: no
//! scripts, no external CSS, no fonts or images to fetch, so the report opens
//! from disk with no network. Each chart has a `<title>` (its accessible name,
//! also given as `aria-label`), a visible title line, axis lines and light
//! grid lines, in a sans-serif 12px font.
//!
//! Every mark (a bar, a stacked segment, a scatter point, a heatmap cell)
//! carries a `<title>` child (the hover tooltip) and two attributes a browser
//! test can read back from the DOM: `data-label` (the escaped label) and
//! `data-value` (the raw `f64` printed with Rust's `{}` Display, so `NaN` and
//! `inf` appear as such). Nothing else in a chart carries `data-value`.
//!
//! Empty input (no bars, no categories or series, no plottable points, no
//! cells) gives an empty string, so the caller can omit the section.
//!
//! Output is deterministic: elements come out in input order and coordinates
//! are printed with one decimal. No input panics: non-finite and out-of-range
//! values are clamped, skipped or shown as "–" as each chart documents.
//!
//! One file per chart kind, each with its input types and its own tests:
//! `hbar.rs` (horizontal bars), `stacked_bars.rs` (a bar per step, its
//! series stacked), `roofline.rs` (a log–log scatter under the roof),
//! `heatmap.rs` (busy lanes over time), `region_timeline.rs` (a kernel
//! execution's measured regions by depth) and `bundle_picture.rs` (a
//! kernel's bundles × units, cells as runs per level of use, the values
//! in each lane's `data-used` rather than in `data-value` marks). They
//! draw with the shared leaf files: `style.rs` (palette, colours, sizes),
//! `format.rs` (numbers), `markup.rs` (SVG elements, escaping, labels),
//! `heat.rs` (the colour scale of shaded cells and its legend), `axes.rs`
//! (ticks and log axes) and `legend.rs`; `testing.rs` holds what the tests
//! read SVG with. A new chart is a new file next to them, re-exported
//! here: nothing shared imports a chart, and this file only declares and
//! re-exports.

mod axes;
mod bundle_picture;
mod format;
mod hbar;
mod heat;
mod heatmap;
mod legend;
mod markup;
mod region_timeline;
mod roofline;
mod stacked_bars;
mod style;
#[cfg(test)]
mod testing;

pub use bundle_picture::{
    BundleRange, CellScale, LIVE_OF_CAPTURE_PEAK, SLOTS, UnitRow, bundle_picture, unit_rows,
};
pub use format::format_si;
pub use hbar::{Bar, hbar_chart};
pub use heat::heat_colour;
pub use heatmap::{Lane, heatmap};
pub use markup::{elide_path, escape};
pub use region_timeline::{RegionBar, region_timeline};
pub use roofline::{Point, roofline};
pub use stacked_bars::{Series, stacked_bars};
