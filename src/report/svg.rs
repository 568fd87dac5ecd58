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

/// Series colours: the Okabe–Ito colour-blind-safe palette (with Tol's
/// indigo and wine in place of black and reddish purple), ordered so that
/// neighbouring series alternate dark and light. The CIE L* lightness of
/// each entry is 46, 71, 22, 70, 54, 89, 58 and 32, so adjacent stacked
/// segments stay distinguishable in grayscale. Series `i` uses
/// `PALETTE[i % PALETTE.len()]`.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#332288", "#56B4E9", "#D55E00", "#F0E442", "#009E73", "#882255",
];

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
const NO_DATA_FILL: &str = "#ffffff";
const GRID_COLOUR: &str = "#e3e3e3";
const AXIS_COLOUR: &str = "#444444";
const REFERENCE_COLOUR: &str = "#222222";

/// Preferred total width of a chart, in px.
const CHART_WIDTH: f64 = 760.0;
/// Narrowest plot area, whatever the labels take.
const MIN_PLOT_WIDTH: f64 = 200.0;
const MARGIN: f64 = 10.0;
/// Height of the visible title line above the plot.
const TITLE_HEIGHT: f64 = 28.0;
/// Estimated average advance of one character at 12px sans-serif.
const CHAR_WIDTH: f64 = 6.6;

/// Longest label shown in full; longer ones end in an ellipsis.
const MAX_LABEL_CHARS: usize = 48;
const MAX_LANE_LABEL_CHARS: usize = 32;
const MAX_CATEGORY_LABEL_CHARS: usize = 16;
const MAX_LEGEND_LABEL_CHARS: usize = 32;
const MAX_REFERENCE_LABEL_CHARS: usize = 24;
const MAX_POINT_LABEL_CHARS: usize = 24;

/// Most x tick labels a stacked bar chart shows.
const MAX_CATEGORY_LABELS: usize = 60;
/// Scatter points get a visible text label only up to this many points.
const MAX_LABELLED_POINTS: usize = 10;
/// Most labelled decades on a log axis.
const MAX_DECADE_LABELS: usize = 12;

const HBAR_ROW_HEIGHT: f64 = 20.0;
const HBAR_BAR_HEIGHT: f64 = 14.0;
const STACK_PLOT_HEIGHT: f64 = 240.0;
const LEGEND_ROW_HEIGHT: f64 = 18.0;
const LEGEND_SWATCH: f64 = 12.0;
const ROOFLINE_PLOT_HEIGHT: f64 = 300.0;
const HEAT_ROW_HEIGHT: f64 = 18.0;
const HEAT_CELL_HEIGHT: f64 = 16.0;
const HEAT_LEGEND_STEPS: usize = 11;

/// SI prefixes for plain quantities (counts, bytes, FLOP/s, ...).
const SI_SCALES: [(f64, &str); 7] = [
    (1.0, ""),
    (1e3, "k"),
    (1e6, "M"),
    (1e9, "G"),
    (1e12, "T"),
    (1e15, "P"),
    (1e18, "E"),
];

/// Time units below one second, in picoseconds.
const TIME_SCALES_PS: [(f64, &str); 5] = [
    (1.0, "ps"),
    (1e3, "ns"),
    (1e6, "µs"),
    (1e9, "ms"),
    (1e12, "s"),
];
const PS_PER_SECOND: f64 = 1e12;

/// Escapes `s` for XML/HTML text and attribute values: `&`, `<`, `>`, `"`
/// and `'` become entities. Control characters other than tab, newline and
/// carriage return (not allowed in XML) become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut escaped = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '\t' | '\n' | '\r' => escaped.push(c),
            c if c.is_control() => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

/// Formats `value` with three significant digits and a unit prefix.
///
/// - `""` and other units use SI prefixes k, M, G, T, P, E:
///   `format_si(1234.0, "s") == "1.23 ks"`, `format_si(2.5e9, "") == "2.50G"`
///   (no space when the unit is empty); values below 1 keep the plain unit
///   (`"0.500"`).
/// - Time units `"ps"`, `"ns"`, `"us"`/`"µs"`, `"ms"` and `"s"` are shown in
///   the best of ps, ns, µs, ms and s (`format_si(2_500_000.0, "ps") ==
///   "2.50 µs"`); from 1000 s on, SI prefixes on seconds (`"1.23 ks"`).
/// - `"%"` is printed as given, with one decimal: `format_si(45.26, "%") ==
///   "45.3%"`.
/// - Zero prints as `"0"` with the unit (`"0 s"` for time units), negative
///   values get a leading `-`, infinities print as `"∞"`, and NaN prints as
///   `"–"` (an en dash).
pub fn format_si(value: f64, unit: &str) -> String {
    if value.is_nan() {
        return "–".to_string();
    }
    if unit == "%" {
        return format_percent(value);
    }
    match time_unit_in_ps(unit) {
        Some(ps_per_unit) => format_time_ps(value * ps_per_unit),
        None => format_scaled(value, &SI_SCALES, unit, !unit.is_empty()),
    }
}

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
/// labels on the left (cut to 48 characters with an ellipsis; the full label
/// is in the tooltip), the value formatted with [`format_si`] at the bar's
/// end, and an x axis from 0 with 4–6 ticks at multiples of 1, 2 or 5 × 10^k.
///
/// Negative, NaN and infinite values are shown as text; their bars are
/// clamped to the axis (zero length, or full length for +∞). Returns an
/// empty string when `bars` is empty.
pub fn hbar_chart(title: &str, unit: &str, bars: &[Bar]) -> String {
    if bars.is_empty() {
        return String::new();
    }
    let labels: Vec<String> = bars
        .iter()
        .map(|bar| truncate_label(&bar.label, MAX_LABEL_CHARS))
        .collect();
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

/// One stacked series of [`stacked_bars`]: `values[i]` belongs to category
/// `i`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Series name, shown in the legend and tooltips.
    pub name: String,
    /// One value per category; missing trailing values count as absent.
    pub values: Vec<f64>,
}

/// Renders vertical stacked bars, one bar per category (for example one per
/// step), stacking the series bottom-up in the given order, one palette
/// colour per series, with a legend above the plot.
///
/// `reference_lines` are `(name, value)` pairs (for example p50 and p90 of the
/// step time) drawn as dashed horizontal lines labelled on the right; lines
/// with negative or non-finite values are skipped. Only positive, finite
/// values are stacked; others draw no segment. Above about 60 categories,
/// only every n-th x label is shown so the labels do not overlap. Each bar
/// is a `<g class="stack">` with `data-category` and `data-total` (the sum of
/// its segments); each segment has `data-label` (the series), `data-category`
/// and `data-value`. Returns an empty string when there are no categories or
/// no series.
pub fn stacked_bars(
    title: &str,
    unit: &str,
    categories: &[String],
    series: &[Series],
    reference_lines: &[(String, f64)],
) -> String {
    if categories.is_empty() || series.is_empty() {
        return String::new();
    }
    let totals: Vec<f64> = (0..categories.len())
        .map(|index| stack_values(series, index).map(|(_, value)| value).sum())
        .collect();
    let references: Vec<&(String, f64)> = reference_lines
        .iter()
        .filter(|(_, value)| value.is_finite() && *value >= 0.0)
        .collect();
    let max_value = max_positive(
        totals
            .iter()
            .copied()
            .chain(references.iter().map(|(_, value)| *value)),
    );
    let ticks = nice_ticks(max_value);
    let domain_max = domain_top(&ticks);
    let tick_labels: Vec<String> = ticks.iter().map(|&tick| tick_label(tick, unit)).collect();
    let reference_texts: Vec<String> = references
        .iter()
        .map(|(name, value)| {
            let text = format!("{name} {}", tick_label(*value, unit));
            truncate_label(&text, MAX_REFERENCE_LABEL_CHARS)
        })
        .collect();

    let plot_left = MARGIN + text_width(max_chars(&tick_labels)) + 8.0;
    let right_space = if reference_texts.is_empty() {
        MARGIN
    } else {
        text_width(max_chars(&reference_texts)) + 8.0
    };
    let plot_width = (CHART_WIDTH - plot_left - right_space - MARGIN).max(MIN_PLOT_WIDTH);
    let plot_right = plot_left + plot_width;
    let width = plot_right + right_space + MARGIN;

    let legend_names: Vec<String> = series
        .iter()
        .map(|one| truncate_label(&one.name, MAX_LEGEND_LABEL_CHARS))
        .collect();
    let (legend_positions, legend_rows) =
        flow_legend(&legend_names, MARGIN, width - MARGIN, TITLE_HEIGHT);
    let plot_top = TITLE_HEIGHT + LEGEND_ROW_HEIGHT * legend_rows as f64 + 10.0;
    let plot_bottom = plot_top + STACK_PLOT_HEIGHT;
    let height = plot_bottom + 24.0 + MARGIN;
    let y_px = |value: f64| plot_bottom - unit_fraction(value, domain_max) * STACK_PLOT_HEIGHT;

    let mut svg = open_svg(width, height, title);
    for (index, ((name, full_series), (legend_x, legend_y))) in legend_names
        .iter()
        .zip(series)
        .zip(&legend_positions)
        .enumerate()
    {
        svg.push_str(&legend_entry(
            *legend_x,
            *legend_y,
            palette_colour(index),
            name,
            &full_series.name,
        ));
    }
    for (&tick, label) in ticks.iter().zip(&tick_labels) {
        let tick_y = y_px(tick);
        svg.push_str(&grid_line(plot_left, tick_y, plot_right, tick_y));
        svg.push_str(&text_element(plot_left - 6.0, tick_y + 4.0, "end", label));
    }
    svg.push_str(&axis_line(plot_left, plot_bottom, plot_right, plot_bottom));
    svg.push_str(&axis_line(plot_left, plot_top, plot_left, plot_bottom));

    let slot_width = plot_width / categories.len() as f64;
    let bar_width = slot_width * 0.8;
    for (index, (category, total)) in categories.iter().zip(&totals).enumerate() {
        let bar_left = plot_left + slot_width * index as f64 + (slot_width - bar_width) / 2.0;
        svg.push_str(&format!(
            "<g class=\"stack\" data-category=\"{}\" data-total=\"{total}\">\n",
            escape(category)
        ));
        let mut stacked = 0.0;
        for (series_index, value) in stack_values(series, index) {
            let bottom = y_px(stacked);
            stacked += value;
            let top = y_px(stacked);
            let series_name = series.get(series_index).map_or("", |one| one.name.as_str());
            let tooltip = format!(
                "{category} · {series_name}: {} (total {})",
                format_si(value, unit),
                format_si(*total, unit)
            );
            svg.push_str(&format!(
                "<rect class=\"segment\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" data-category=\"{}\"{}><title>{}</title></rect>\n",
                px(bar_left),
                px(top),
                px(bar_width),
                px(bottom - top),
                palette_colour(series_index),
                escape(category),
                mark_attributes(series_name, value),
                escape(&tooltip),
            ));
        }
        svg.push_str("</g>\n");
    }

    let label_every = category_label_step(categories, plot_width);
    for (index, category) in categories.iter().enumerate().step_by(label_every) {
        let center_x = plot_left + slot_width * (index as f64 + 0.5);
        svg.push_str(&axis_line(
            center_x,
            plot_bottom,
            center_x,
            plot_bottom + 4.0,
        ));
        svg.push_str(&format!(
            "<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            px(center_x),
            px(plot_bottom + 16.0),
            escape(&truncate_label(category, MAX_CATEGORY_LABEL_CHARS)),
        ));
    }

    for ((name, value), text) in references.iter().zip(&reference_texts) {
        let line_y = y_px(*value);
        svg.push_str(&format!(
            "<line class=\"reference\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{REFERENCE_COLOUR}\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\" data-ref-label=\"{}\" data-ref-value=\"{value}\"><title>{}</title></line>\n",
            px(plot_left),
            px(plot_right),
            escape(name),
            escape(&format!("{name}: {}", format_si(*value, unit))),
            y = px(line_y),
        ));
        svg.push_str(&text_element(plot_right + 4.0, line_y + 4.0, "start", text));
    }
    close_svg(svg)
}

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
    svg.push_str(&heat_legend(plot_left, legend_top));
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

/// A log10 axis spanning whole decades `[10^low_exponent, 10^high_exponent]`.
struct LogAxis {
    low_exponent: i32,
    high_exponent: i32,
}

impl LogAxis {
    /// The smallest whole-decade range holding all of `values` (positive and
    /// finite), at least one decade wide.
    fn spanning(values: &[f64]) -> LogAxis {
        let positive = values
            .iter()
            .copied()
            .filter(|value| is_positive_finite(*value));
        let min_value = positive.clone().fold(f64::INFINITY, f64::min);
        let max_value = positive.fold(0.0, f64::max);
        if !is_positive_finite(min_value) || !is_positive_finite(max_value) {
            return LogAxis {
                low_exponent: 0,
                high_exponent: 1,
            };
        }
        // log10 of a positive finite f64 lies within [-324, 309].
        let low_exponent = min_value.log10().floor() as i32;
        let high_exponent = (max_value.log10().ceil() as i32).max(low_exponent + 1);
        LogAxis {
            low_exponent,
            high_exponent,
        }
    }

    /// Where `value` falls along the axis, from 0 (low end) to 1 (high end).
    fn fraction(&self, value: f64) -> f64 {
        let span = f64::from(self.high_exponent - self.low_exponent);
        let fraction = (value.log10() - f64::from(self.low_exponent)) / span;
        if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        }
    }

    /// Every decade exponent on the axis, with whether it gets a label (at
    /// most about [`MAX_DECADE_LABELS`] do).
    fn decades(&self) -> Vec<(i32, bool)> {
        let count = usize::try_from(self.high_exponent - self.low_exponent)
            .unwrap_or(0)
            .saturating_add(1);
        let label_every = count.div_ceil(MAX_DECADE_LABELS).max(1);
        (self.low_exponent..=self.high_exponent)
            .enumerate()
            .map(|(index, exponent)| (exponent, index % label_every == 0))
            .collect()
    }
}

/// 10^exponent.
fn decade(exponent: i32) -> f64 {
    10f64.powi(exponent)
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

/// `base`, then `extra` on its own line when there is any.
fn with_extra(base: &str, extra: &str) -> String {
    if extra.is_empty() {
        base.to_string()
    } else {
        format!("{base}\n{extra}")
    }
}

/// A busy fraction as a percentage for tooltips.
fn busy_text(fraction: f64) -> String {
    if fraction.is_nan() {
        "no data".to_string()
    } else {
        format_si(fraction * 100.0, "%")
    }
}

/// The heatmap fill for a busy fraction: interpolated along [`HEAT_STOPS`],
/// clamped to `[0, 1]`; NaN gives [`NO_DATA_FILL`].
fn heat_colour(fraction: f64) -> String {
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

/// The heatmap's colour legend: "0%", a row of swatches, "100%".
fn heat_legend(left: f64, top: f64) -> String {
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
        "100% busy",
    ));
    legend
}

/// X ticks of a range axis as (fraction along the axis, label). Labels are
/// absolute values; if three significant digits make two neighbours equal,
/// ticks after the first are labelled as offsets ("+100 ns").
fn range_ticks(x_start: f64, x_end: f64, unit: &str) -> Vec<(f64, String)> {
    let span = x_end - x_start;
    if !is_positive_finite(span) {
        return vec![
            (0.0, tick_label(x_start, unit)),
            (1.0, tick_label(x_end, unit)),
        ];
    }
    let offsets: Vec<f64> = nice_ticks(span)
        .into_iter()
        .filter(|offset| *offset <= span * (1.0 + 1e-9))
        .collect();
    let absolute: Vec<String> = offsets
        .iter()
        .map(|offset| tick_label(x_start + offset, unit))
        .collect();
    let distinct = absolute.windows(2).all(|pair| pair[0] != pair[1]);
    offsets
        .iter()
        .zip(absolute)
        .enumerate()
        .map(|(index, (offset, label))| {
            let label = if distinct || index == 0 {
                label
            } else {
                format!("+{}", tick_label(*offset, unit))
            };
            ((offset / span).clamp(0.0, 1.0), label)
        })
        .collect()
}

/// The positive, finite values of category `index`, with their series index.
fn stack_values(series: &[Series], index: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
    series
        .iter()
        .enumerate()
        .filter_map(move |(series_index, one)| {
            one.values
                .get(index)
                .copied()
                .filter(|value| is_positive_finite(*value))
                .map(|value| (series_index, value))
        })
}

/// Shows every n-th category label so that at most [`MAX_CATEGORY_LABELS`]
/// labels appear and they do not overlap; returns n (at least 1).
fn category_label_step(categories: &[String], plot_width: f64) -> usize {
    let widest = categories
        .iter()
        .map(|category| {
            truncate_label(category, MAX_CATEGORY_LABEL_CHARS)
                .chars()
                .count()
        })
        .max()
        .unwrap_or(1);
    let label_space = text_width(widest) + 8.0;
    let fitting = (plot_width / label_space).floor();
    let fitting = if fitting >= 1.0 { fitting as usize } else { 1 };
    let max_labels = fitting.min(MAX_CATEGORY_LABELS);
    categories.len().div_ceil(max_labels).max(1)
}

/// Lays legend entries out left to right from `left`, wrapping before
/// `right`; returns each entry's top-left corner and the number of rows.
fn flow_legend(names: &[String], left: f64, right: f64, top: f64) -> (Vec<(f64, f64)>, usize) {
    let mut positions = Vec::with_capacity(names.len());
    let mut x = left;
    let mut row = 0usize;
    for name in names {
        let entry_width = LEGEND_SWATCH + 4.0 + text_width(name.chars().count()) + 14.0;
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
fn legend_entry(x: f64, y: f64, colour: &str, shown_name: &str, full_name: &str) -> String {
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

/// The palette colour of series `index`.
fn palette_colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// Axis ticks from 0 to at least `max_value`: 4–6 ticks a "nice" step apart
/// (1, 2 or 5 × 10^k). A `max_value` that is not positive and finite counts
/// as 1.
fn nice_ticks(max_value: f64) -> Vec<f64> {
    let max_value = if is_positive_finite(max_value) {
        max_value
    } else {
        1.0
    };
    let step = nice_step(max_value);
    // At least three intervals keep 4-6 ticks even at rounding edges.
    let intervals = (max_value / step - 1e-9).ceil().clamp(3.0, 5.0);
    let ticks: Vec<f64> = if step > 0.0 && intervals.is_finite() {
        (0..=intervals as usize)
            .map(|index| index as f64 * step)
            .collect()
    } else {
        Vec::new()
    };
    let usable = ticks.len() >= 2 && ticks.iter().all(|tick| tick.is_finite());
    if usable {
        ticks
    } else {
        (0..=4)
            .map(|index| max_value / 4.0 * f64::from(index))
            .collect()
    }
}

/// The smallest step of 1, 2 or 5 × 10^k that covers `max_value` (positive,
/// finite) in at most five intervals.
fn nice_step(max_value: f64) -> f64 {
    let raw_step = max_value / 5.0;
    let magnitude = 10f64.powf(raw_step.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|multiple| multiple * magnitude)
        .find(|step| max_value / step <= 5.0 + 1e-9)
        .unwrap_or(10.0 * magnitude)
}

/// The top of a linear axis given its ticks; always positive.
fn domain_top(ticks: &[f64]) -> f64 {
    ticks
        .last()
        .copied()
        .filter(|top| is_positive_finite(*top))
        .unwrap_or(1.0)
}

/// `value / domain_max` clamped to `[0, 1]`; NaN gives 0.
fn unit_fraction(value: f64, domain_max: f64) -> f64 {
    let fraction = value / domain_max;
    if fraction.is_nan() {
        0.0
    } else {
        fraction.clamp(0.0, 1.0)
    }
}

/// The largest positive, finite value, or 0.
fn max_positive(values: impl Iterator<Item = f64>) -> f64 {
    values
        .filter(|value| is_positive_finite(*value))
        .fold(0.0, f64::max)
}

fn is_positive_finite(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

/// A tick label: [`format_si`] without trailing zeros ("2.50 ms" → "2.5 ms").
fn tick_label(value: f64, unit: &str) -> String {
    trim_trailing_zeros(&format_si(value, unit))
}

/// Drops trailing zeros after the decimal point of the number a formatted
/// value starts with ("1.00k" → "1k", "0.500" → "0.5", "1.00e-5" → "1e-5").
fn trim_trailing_zeros(text: &str) -> String {
    let number_end = text
        .char_indices()
        .find(|&(index, c)| !(c.is_ascii_digit() || c == '.' || (index == 0 && c == '-')))
        .map_or(text.len(), |(index, _)| index);
    let (number, rest) = text.split_at(number_end);
    if !number.contains('.') {
        return text.to_string();
    }
    let trimmed = number.trim_end_matches('0').trim_end_matches('.');
    format!("{trimmed}{rest}")
}

/// Picoseconds per `unit` for the time units [`format_si`] converts.
fn time_unit_in_ps(unit: &str) -> Option<f64> {
    match unit {
        "ps" => Some(1.0),
        "ns" => Some(1e3),
        "us" | "µs" | "μs" => Some(1e6),
        "ms" => Some(1e9),
        "s" => Some(PS_PER_SECOND),
        _ => None,
    }
}

/// Formats a duration in picoseconds in the best time unit.
fn format_time_ps(value_ps: f64) -> String {
    if value_ps == 0.0 {
        return "0 s".to_string();
    }
    if value_ps.is_finite() && value_ps.abs() < PS_PER_SECOND {
        format_scaled(value_ps, &TIME_SCALES_PS, "", true)
    } else {
        format_scaled(value_ps / PS_PER_SECOND, &SI_SCALES, "s", true)
    }
}

fn format_percent(value: f64) -> String {
    if value.is_infinite() {
        return format!("{}∞%", sign_prefix(value));
    }
    let text = format!("{value:.1}%");
    if text == "-0.0%" {
        "0.0%".to_string()
    } else {
        text
    }
}

/// Formats `value` (not NaN) with three significant digits in the largest
/// of `scales` (ascending `(factor, prefix)` pairs) that does not exceed
/// it, followed by prefix and unit; `spaced` puts a space before them.
fn format_scaled(value: f64, scales: &[(f64, &str)], unit: &str, spaced: bool) -> String {
    let with_suffix = |number: &str, prefix: &str| {
        let suffix = format!("{prefix}{unit}");
        if spaced && !suffix.is_empty() {
            format!("{number} {suffix}")
        } else {
            format!("{number}{suffix}")
        }
    };
    if value == 0.0 {
        return with_suffix("0", "");
    }
    if value.is_infinite() {
        return with_suffix(&format!("{}∞", sign_prefix(value)), "");
    }
    let magnitude = value.abs();
    let mut index = scales
        .iter()
        .rposition(|(factor, _)| magnitude >= *factor)
        .unwrap_or(0);
    if let Some((factor, _)) = scales.get(index)
        && round_sig3(magnitude / factor) >= 1000.0
        && index + 1 < scales.len()
    {
        index += 1;
    }
    let (factor, prefix) = scales.get(index).copied().unwrap_or((1.0, ""));
    with_suffix(&format_sig3(value / factor), prefix)
}

fn sign_prefix(value: f64) -> &'static str {
    if value < 0.0 { "-" } else { "" }
}

/// `value` (finite) with three significant digits; scientific notation
/// below 0.001 and from 1 000 000 on.
fn format_sig3(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return "0".to_string();
    }
    let magnitude = value.abs();
    if !(1e-3..1e6).contains(&magnitude) {
        return format!("{value:.2e}");
    }
    let rounded = round_sig3(magnitude);
    let decimals = if rounded >= 100.0 {
        0
    } else if rounded >= 10.0 {
        1
    } else if rounded >= 1.0 {
        2
    } else {
        // rounded is in [0.001, 1): 3 to 5 decimals.
        (2.0 - rounded.log10().floor()).clamp(3.0, 5.0) as usize
    };
    let signed = if value < 0.0 { -rounded } else { rounded };
    format!("{signed:.decimals$}")
}

/// `magnitude` (positive) rounded to three significant digits.
fn round_sig3(magnitude: f64) -> f64 {
    if !magnitude.is_normal() {
        return magnitude;
    }
    let exponent = magnitude.log10().floor().clamp(-300.0, 300.0) as i32;
    let factor = 10f64.powi(2 - exponent);
    let rounded = (magnitude * factor).round() / factor;
    if rounded.is_finite() {
        rounded
    } else {
        magnitude
    }
}

/// `label` cut to `max_chars` characters, the last one an ellipsis.
fn truncate_label(label: &str, max_chars: usize) -> String {
    if label.chars().count() <= max_chars {
        return label.to_string();
    }
    let mut truncated: String = label.chars().take(max_chars.saturating_sub(1)).collect();
    truncated.push('…');
    truncated
}

/// The most characters among `texts`.
fn max_chars(texts: &[String]) -> usize {
    texts
        .iter()
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0)
}

/// Estimated rendered width of `chars` characters.
fn text_width(chars: usize) -> f64 {
    chars as f64 * CHAR_WIDTH
}

/// A coordinate rounded to one decimal, as printed.
fn round_px(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// A coordinate with one decimal; non-finite values print as 0 and -0.0 as
/// 0.0.
fn px(value: f64) -> String {
    let value = if value.is_finite() { value } else { 0.0 };
    let text = format!("{value:.1}");
    if text == "-0.0" {
        "0.0".to_string()
    } else {
        text
    }
}

/// The `data-label` and `data-value` attributes of a mark, with a leading
/// space.
fn mark_attributes(label: &str, value: f64) -> String {
    format!(" data-label=\"{}\" data-value=\"{value}\"", escape(label))
}

/// The opening `<svg>` tag, the accessible title and the visible title line.
fn open_svg(width: f64, height: f64, title: &str) -> String {
    let title = escape(title);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{title}\" font-family=\"sans-serif\" font-size=\"12\">\n<title>{title}</title>\n<text x=\"{MARGIN:.1}\" y=\"18.0\" font-weight=\"bold\">{title}</text>\n",
        width = px(width),
        height = px(height),
    )
}

fn close_svg(mut svg: String) -> String {
    svg.push_str("</svg>\n");
    svg
}

fn grid_line(x1: f64, y1: f64, x2: f64, y2: f64) -> String {
    line_element(x1, y1, x2, y2, GRID_COLOUR)
}

fn axis_line(x1: f64, y1: f64, x2: f64, y2: f64) -> String {
    line_element(x1, y1, x2, y2, AXIS_COLOUR)
}

fn line_element(x1: f64, y1: f64, x2: f64, y2: f64, colour: &str) -> String {
    format!(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"1\"/>\n",
        px(x1),
        px(y1),
        px(x2),
        px(y2)
    )
}

/// A `<text>` element; `anchor` is start, middle or end.
fn text_element(x: f64, y: f64, anchor: &str, content: &str) -> String {
    format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>\n",
        px(x),
        px(y),
        escape(content)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The raw `data-value` attributes of `svg`, parsed.
    fn data_values(svg: &str) -> Vec<f64> {
        attribute_values(svg, "data-value")
            .iter()
            .map(|text| text.parse::<f64>().expect("data-value parses as f64"))
            .collect()
    }

    /// Every value of attribute `name` in `svg`, in order.
    fn attribute_values(svg: &str, name: &str) -> Vec<String> {
        let needle = format!(" {name}=\"");
        svg.match_indices(&needle)
            .map(|(index, _)| {
                let rest = &svg[index + needle.len()..];
                rest[..rest.find('"').expect("attribute is closed")].to_string()
            })
            .collect()
    }

    fn count(haystack: &str, needle: &str) -> usize {
        haystack.matches(needle).count()
    }

    /// Relative luminance (0 dark .. 1 light) of a `#rrggbb` colour.
    fn luminance(colour: &str) -> f64 {
        let channel = |index: usize| {
            f64::from(u8::from_str_radix(&colour[index..index + 2], 16).expect("hex"))
        };
        0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
    }

    fn bar(label: &str, value: f64) -> Bar {
        Bar {
            label: label.to_string(),
            value,
            tooltip: String::new(),
        }
    }

    fn point(label: &str, x: f64, y: f64) -> Point {
        Point {
            label: label.to_string(),
            x,
            y,
            tooltip: String::new(),
        }
    }

    #[test]
    fn escape_replaces_markup_characters() {
        assert_eq!(
            escape("<a href=\"x\">Tom & Jerry's</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
        assert_eq!(escape("plain µs\tok\n"), "plain µs\tok\n");
        assert_eq!(escape("a\u{0}b\u{7}"), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(escape(""), "");
    }

    #[test]
    fn format_si_picks_time_units() {
        assert_eq!(format_si(2_500_000.0, "ps"), "2.50 µs");
        assert_eq!(format_si(999.0, "ps"), "999 ps");
        assert_eq!(format_si(999_600.0, "ps"), "1.00 µs");
        assert_eq!(format_si(12_345.0, "ps"), "12.3 ns");
        assert_eq!(format_si(7.5e9, "ps"), "7.50 ms");
        assert_eq!(format_si(1.5e12, "ps"), "1.50 s");
        assert_eq!(format_si(999.9e9, "ps"), "1.00 s");
        assert_eq!(format_si(0.5, "ps"), "0.500 ps");
        assert_eq!(format_si(1234.0, "s"), "1.23 ks");
        assert_eq!(format_si(0.0015, "s"), "1.50 ms");
        assert_eq!(format_si(250.0, "ns"), "250 ns");
        assert_eq!(format_si(2500.0, "us"), "2.50 ms");
    }

    #[test]
    fn format_si_uses_si_prefixes() {
        assert_eq!(format_si(1500.0, ""), "1.50k");
        assert_eq!(format_si(2.5e6, ""), "2.50M");
        assert_eq!(format_si(3e9, ""), "3.00G");
        assert_eq!(format_si(4.56e12, ""), "4.56T");
        assert_eq!(format_si(7e15, ""), "7.00P");
        assert_eq!(format_si(12.0, ""), "12.0");
        assert_eq!(format_si(999.96, ""), "1.00k");
        assert_eq!(format_si(0.5, ""), "0.500");
        assert_eq!(format_si(0.0123, ""), "0.0123");
        assert_eq!(format_si(1234.0, "B"), "1.23 kB");
        assert_eq!(format_si(3.35e12, "B/s"), "3.35 TB/s");
        assert_eq!(format_si(1e30, ""), "1.00e12E");
    }

    #[test]
    fn format_si_handles_zero_negative_nan_and_percent() {
        assert_eq!(format_si(0.0, ""), "0");
        assert_eq!(format_si(-0.0, ""), "0");
        assert_eq!(format_si(0.0, "B"), "0 B");
        assert_eq!(format_si(0.0, "ps"), "0 s");
        assert_eq!(format_si(-1234.0, ""), "-1.23k");
        assert_eq!(format_si(-2_500_000.0, "ps"), "-2.50 µs");
        assert_eq!(format_si(f64::NAN, ""), "–");
        assert_eq!(format_si(f64::NAN, "%"), "–");
        assert_eq!(format_si(f64::NAN, "ps"), "–");
        assert_eq!(format_si(f64::INFINITY, ""), "∞");
        assert_eq!(format_si(f64::NEG_INFINITY, "ps"), "-∞ s");
        assert_eq!(format_si(45.26, "%"), "45.3%");
        assert_eq!(format_si(100.0, "%"), "100.0%");
        assert_eq!(format_si(-0.01, "%"), "0.0%");
        assert_eq!(format_si(f64::MAX, "ps"), "1.80e278 Es");
        assert_eq!(format_si(5e-324, ""), "4.94e-324");
    }

    #[test]
    fn nice_ticks_use_1_2_5_steps_from_zero() {
        assert_eq!(nice_ticks(7.3), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(1234.0), vec![0.0, 500.0, 1000.0, 1500.0]);
        assert_eq!(nice_ticks(100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let mut max_value = 1e-12;
        while max_value < 1e15 {
            for multiple in [1.0, 1.3, 2.0, 2.7, 4.9, 5.0, 7.7, 9.99] {
                let target = max_value * multiple;
                let ticks = nice_ticks(target);
                assert!(
                    (4..=6).contains(&ticks.len()),
                    "{target}: {ticks:?} has {} ticks",
                    ticks.len()
                );
                assert_eq!(ticks[0], 0.0);
                let top = ticks[ticks.len() - 1];
                assert!(top >= target * (1.0 - 1e-9), "{target}: top {top}");
                let step = ticks[1];
                let mantissa = step / 10f64.powf(step.log10().floor());
                assert!(
                    [1.0, 2.0, 5.0, 10.0]
                        .iter()
                        .any(|nice| (mantissa - nice).abs() < 1e-6),
                    "{target}: step {step}"
                );
            }
            max_value *= 10.0;
        }
        for degenerate in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            assert_eq!(nice_ticks(degenerate).last().copied(), Some(1.0));
        }
        assert!(nice_ticks(f64::MAX).iter().all(|tick| tick.is_finite()));
        assert!(nice_ticks(5e-324).len() >= 2);
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
        // Truncated on screen, whole in the tooltip.
        let shown = format!("{}…", "x".repeat(MAX_LABEL_CHARS - 1));
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
    fn stacked_bars_stack_series_with_legend_and_references() {
        let categories: Vec<String> = vec!["step 1".into(), "step 2".into(), "step <3>".into()];
        let series = vec![
            Series {
                name: "compute".into(),
                values: vec![2.0, 3.0, 1.0],
            },
            Series {
                name: "all-reduce & wait".into(),
                values: vec![1.0, 0.0, f64::NAN],
            },
            Series {
                name: "idle".into(),
                values: vec![0.5],
            },
        ];
        let references = vec![("p50".to_string(), 3.0), ("bad".to_string(), f64::NAN)];
        let svg = stacked_bars("Step time", "ms", &categories, &series, &references);
        // Only positive, finite values make segments.
        assert_eq!(data_values(&svg), vec![2.0, 1.0, 0.5, 3.0, 1.0]);
        assert_eq!(
            attribute_values(&svg, "data-label"),
            vec![
                "compute",
                "all-reduce &amp; wait",
                "idle",
                "compute",
                "compute"
            ]
        );
        let totals: Vec<f64> = attribute_values(&svg, "data-total")
            .iter()
            .map(|text| text.parse().expect("total"))
            .collect();
        assert_eq!(totals, vec![3.5, 3.0, 1.0]);
        assert!(svg.contains("data-category=\"step &lt;3&gt;\""));
        // One legend entry per series, in palette order.
        assert_eq!(count(&svg, "class=\"legend-entry\""), 3);
        for (index, name) in ["compute", "all-reduce &amp; wait", "idle"]
            .iter()
            .enumerate()
        {
            assert!(svg.contains(&format!("fill=\"{}\"/><text", PALETTE[index])));
            assert!(
                svg.contains(&format!(">{name}</text></g>")),
                "legend {name}"
            );
        }
        // The NaN reference line is skipped.
        assert_eq!(attribute_values(&svg, "data-ref-label"), vec!["p50"]);
        assert!(svg.contains(">p50 3 ms</text>"));
        assert_eq!(count(&svg, "class=\"x-label\""), 3);
    }

    #[test]
    fn stacked_bars_thin_crowded_labels() {
        let categories: Vec<String> = (0..500).map(|step| format!("{step}")).collect();
        let series = vec![Series {
            name: "step".into(),
            values: vec![1.0; 500],
        }];
        let svg = stacked_bars("Steps", "s", &categories, &series, &[]);
        let labels = count(&svg, "class=\"x-label\"");
        assert!(
            (2..=MAX_CATEGORY_LABELS).contains(&labels),
            "{labels} labels"
        );
        assert_eq!(data_values(&svg).len(), 500);
        assert!(svg.contains(">0</text>"));
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
    fn palette_alternates_lightness() {
        for index in 0..PALETTE.len() {
            let here = luminance(palette_colour(index));
            let next = luminance(palette_colour(index + 1));
            assert!((here - next).abs() > 20.0, "{index}: {here} vs {next}");
        }
        assert_eq!(palette_colour(PALETTE.len()), PALETTE[0]);
    }

    #[test]
    fn range_ticks_fall_back_to_offsets_when_labels_collide() {
        let ticks = range_ticks(1e12, 1e12 + 1000.0, "ps");
        let labels: Vec<&str> = ticks.iter().map(|(_, label)| label.as_str()).collect();
        assert_eq!(
            labels,
            vec!["1 s", "+200 ps", "+400 ps", "+600 ps", "+800 ps", "+1 ns"]
        );
        let plain = range_ticks(0.0, 10.0, "");
        assert_eq!(plain.last().map(|(fraction, _)| *fraction), Some(1.0));
        assert_eq!(range_ticks(5.0, 5.0, "").len(), 2);
    }

    #[test]
    fn empty_inputs_give_empty_strings() {
        assert_eq!(hbar_chart("t", "s", &[]), "");
        let series = vec![Series {
            name: "a".into(),
            values: vec![1.0],
        }];
        assert_eq!(stacked_bars("t", "s", &[], &series, &[]), "");
        assert_eq!(stacked_bars("t", "s", &["1".to_string()], &[], &[]), "");
        assert_eq!(roofline("t", &[], Some(1.0), Some(1.0)), "");
        assert_eq!(roofline("t", &[point("bad", 0.0, 1.0)], None, None), "");
        assert_eq!(heatmap("t", "time", 0.0, 1.0, "ps", &[]), "");
        let no_cells = vec![Lane {
            name: "idle".into(),
            cells: Vec::new(),
        }];
        assert_eq!(heatmap("t", "time", 0.0, 1.0, "ps", &no_cells), "");
    }

    #[test]
    fn output_is_deterministic_and_well_formed_for_extreme_inputs() {
        let bars: Vec<Bar> = (0..300)
            .map(|index| bar(&format!("op{index}"), f64::from(index)))
            .collect();
        assert_eq!(hbar_chart("t", "", &bars), hbar_chart("t", "", &bars));
        let extreme_points = vec![
            point("tiny", 5e-324, 5e-324),
            point("huge", f64::MAX, f64::MAX),
        ];
        let svg = roofline("t", &extreme_points, Some(f64::MAX), Some(5e-324));
        assert_eq!(data_values(&svg).len(), 2);
        assert!(!svg.contains("NaN\"") && !svg.contains("inf\""));
        let lanes = vec![Lane {
            name: String::new(),
            cells: vec![0.5; 5000],
        }];
        let svg = heatmap("t", "", f64::NEG_INFINITY, f64::NAN, "", &lanes);
        assert_eq!(count(&svg, "<rect class=\"cell\""), 5000);
        let huge = vec![Series {
            name: "x".into(),
            values: vec![f64::MAX, f64::MAX],
        }];
        let svg = stacked_bars(
            "t",
            "",
            &["a".to_string()],
            &huge,
            &[("r".to_string(), f64::MAX)],
        );
        assert_eq!(count(&svg, "<rect class=\"segment\""), 1);
        assert_eq!(count(&svg, "<svg "), 1);
        assert!(svg.ends_with("</svg>\n"));
    }
}
