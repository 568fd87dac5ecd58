//! `xprof-sql report`: one self-contained HTML file of a profile's
//! pictures, every chart drawn from a view of this project and aggregated
//! in SQL first, so a 100 MB profile gives a page of a few hundred KB.
//!
//! Each [`Section`] names the view it draws from and shows the SQL behind
//! each chart on demand (`<details>`); a section whose queries return no
//! rows is left out. Charts are inline SVG ([`svg`]); the page has no
//! network reference and one small script that records script errors
//! into `<body data-errors>`, which it sets once the page has loaded (so
//! the browser test, which reads it, knows the script ran). Every drawn
//! value is in a `data-value` attribute of its mark, under an element
//! with `data-chart="<view>"`, so a test compares the page with the views.

mod kernel;
mod page;
mod pytorch;
pub mod svg;

pub use page::Result;

use std::fmt::Write as _;

use xprof_query::ProfileSession;

use page::{COUNT, Section, ask, figure, table};
use svg::{Bar, Lane, Point, Series};

/// Resolution of the busy timeline: cells per device.
const TIMELINE_CELLS: usize = 120;
/// Rows of the top-N tables and bar charts.
const TOP: usize = 15;

const OVERVIEW_TRACES_SQL: &str = "\
SELECT trace_id, host, run, source_format, duration_ps, source_path
FROM traces ORDER BY trace_id";

const OVERVIEW_DEVICES_SQL: &str = "\
SELECT trace_id, device_name, device_kind, ops, span_ps, busy_ps, busy_pct
FROM device_busy ORDER BY trace_id, device_id";

async fn overview(session: &ProfileSession, several: bool) -> Result<Option<Section>> {
    let traces = ask(session, OVERVIEW_TRACES_SQL).await?;
    if traces.rows() == 0 {
        return Ok(None);
    }
    let mut body = table(
        "traces",
        &traces,
        &[
            ("trace", "trace_id", Some(COUNT)),
            ("host", "host", None),
            ("run", "run", None),
            ("format", "source_format", None),
            ("span", "duration_ps", Some("ps")),
            ("file", "source_path", None),
        ],
        OVERVIEW_TRACES_SQL,
    );
    let devices = ask(session, OVERVIEW_DEVICES_SQL).await?;
    if devices.rows() > 0 {
        let names = devices.strings("device_name");
        let traces_col = devices.f64s("trace_id");
        let busy_ps = devices.f64s("busy_ps");
        let span_ps = devices.f64s("span_ps");
        let pct = devices.f64s("busy_pct");
        let bars: Vec<Bar> = (0..devices.rows())
            .map(|i| Bar {
                label: device_label(several, traces_col[i], &names[i]),
                value: pct[i],
                tooltip: format!(
                    "{}: busy {} of {} ({:.1}%)",
                    names[i],
                    svg::format_si(busy_ps[i], "ps"),
                    svg::format_si(span_ps[i], "ps"),
                    pct[i]
                ),
            })
            .collect();
        body.push_str(&figure(
            "device_busy",
            &svg::hbar_chart("Busy fraction per device", "%", &bars),
            OVERVIEW_DEVICES_SQL,
            "Share of each device's span (first op start to last op end) in which an op ran.",
        ));
        body.push_str(&table(
            "device_busy",
            &devices,
            &[
                ("trace", "trace_id", Some(COUNT)),
                ("device", "device_name", None),
                ("kind", "device_kind", None),
                ("ops", "ops", Some(COUNT)),
                ("span", "span_ps", Some("ps")),
                ("busy", "busy_ps", Some("ps")),
                ("busy %", "busy_pct", Some("%")),
            ],
            OVERVIEW_DEVICES_SQL,
        ));
    }
    Ok(Some(Section {
        id: "overview",
        title: "Overview".into(),
        views: vec!["traces", "device_busy"],
        body,
    }))
}

fn device_label(several: bool, trace_id: f64, name: &str) -> String {
    if several {
        format!("{}: {name}", trace_id as i64)
    } else {
        name.to_string()
    }
}

/// The steps of the device with the most steps, per trace.
const STEPS_SQL: &str = "\
WITH per_device AS (
  SELECT trace_id, device_id, count(*) AS steps,
         row_number() OVER (PARTITION BY trace_id ORDER BY count(*) DESC, device_id) AS pick
  FROM step_stats GROUP BY trace_id, device_id)
SELECT s.trace_id, s.device_id, s.step_num, s.step_name, s.dur_ps, s.busy_ps, s.idle_ps
FROM step_stats s JOIN per_device p
  ON s.trace_id = p.trace_id AND s.device_id = p.device_id AND p.pick = 1
ORDER BY s.trace_id, s.step_num, s.start_ps";

/// The nearest-rank percentile `q` (0..1) of `values`.
fn percentile(values: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// At most this many bars in a step-time chart: a 30,000-step profile
/// drew 15 MB of SVG, one bar per step.
const MAX_STEP_BARS: usize = 200;

/// Bars of `per_bar` consecutive steps each: the label "first–last" (or
/// the step's own), and the mean busy and idle time of those steps, so a
/// bar's height is their mean step time.
fn step_bars(
    step_nums: &[String],
    busy: &[f64],
    idle: &[f64],
    per_bar: usize,
) -> Vec<(String, f64, f64)> {
    let per_bar = per_bar.max(1);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (0..step_nums.len())
        .step_by(per_bar)
        .map(|start| {
            let end = (start + per_bar).min(step_nums.len());
            let label = if end - start == 1 {
                step_nums[start].clone()
            } else {
                format!("{}–{}", step_nums[start], step_nums[end - 1])
            };
            (label, mean(&busy[start..end]), mean(&idle[start..end]))
        })
        .collect()
}

async fn step_time(session: &ProfileSession) -> Result<Option<Section>> {
    let steps = ask(session, STEPS_SQL).await?;
    if steps.rows() == 0 {
        return Ok(None);
    }
    let trace = steps.f64s("trace_id");
    let step_num = steps.strings("step_num");
    let dur = steps.f64s("dur_ps");
    let busy = steps.f64s("busy_ps");
    let idle = steps.f64s("idle_ps");
    let mut body = String::new();
    let mut traces: Vec<f64> = trace.clone();
    traces.dedup();
    for t in traces {
        let rows: Vec<usize> = (0..steps.rows()).filter(|&i| trace[i] == t).collect();
        let per_bar = rows.len().div_ceil(MAX_STEP_BARS);
        let bars = step_bars(
            &rows
                .iter()
                .map(|&i| step_num[i].clone())
                .collect::<Vec<_>>(),
            &rows.iter().map(|&i| busy[i]).collect::<Vec<_>>(),
            &rows.iter().map(|&i| idle[i]).collect::<Vec<_>>(),
            per_bar,
        );
        let categories: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        let series = vec![
            Series {
                name: "busy (ops running)".into(),
                values: bars.iter().map(|b| b.1).collect(),
            },
            Series {
                name: "idle".into(),
                values: bars.iter().map(|b| b.2).collect(),
            },
        ];
        let durations: Vec<f64> = rows.iter().map(|&i| dur[i]).collect();
        let p50 = percentile(&durations, 0.5);
        let p90 = percentile(&durations, 0.9);
        let chart = svg::stacked_bars(
            &format!("Step time, trace {}", t as i64),
            "ps",
            &categories,
            &series,
            &[("p50".to_string(), p50), ("p90".to_string(), p90)],
        );
        body.push_str(&figure(
            "step_stats",
            &chart,
            STEPS_SQL,
            &format!(
                "{} steps; p50 {}, p90 {} (nearest rank). Busy is the union of the step's ops; idle the rest of the step.{}",
                rows.len(),
                svg::format_si(p50, "ps"),
                svg::format_si(p90, "ps"),
                if per_bar > 1 {
                    format!(" Each bar is the mean of {per_bar} consecutive steps (at most {MAX_STEP_BARS} bars).")
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(Some(Section {
        id: "steps",
        title: "Step time".into(),
        views: vec!["step_stats"],
        body,
    }))
}

fn top_hlo_sql() -> String {
    format!(
        "SELECT trace_id, rank, hlo_op_name, category, occurrences, total_self_time_us, self_time_pct,
       measured_gflops_per_s, memory_gibps, operational_intensity, bound_by
FROM hlo_stats ORDER BY total_self_time_us DESC, trace_id, rank LIMIT {TOP}"
    )
}

fn top_kernels_sql() -> String {
    format!(
        "SELECT trace_id, rank, kernel_name, op_name, occurrences, total_duration_us, avg_duration_us,
       occupancy_pct, registers_per_thread, shmem_bytes
FROM kernel_stats ORDER BY total_duration_us DESC, trace_id, rank LIMIT {TOP}"
    )
}

const ROOFLINE_SQL: &str = "\
SELECT trace_id, hlo_op, category, operational_intensity, measured_gflops_per_s,
       total_self_time_us, bound_by, peak_gflops_per_s, peak_hbm_gibps
FROM roofline
WHERE operational_intensity > 0 AND measured_gflops_per_s > 0
ORDER BY total_self_time_us DESC LIMIT 200";

async fn top_ops(session: &ProfileSession, several: bool) -> Result<Option<Section>> {
    let mut body = String::new();
    let mut views = Vec::new();
    let hlo_sql = top_hlo_sql();
    let hlo = ask(session, &hlo_sql).await?;
    if hlo.rows() > 0 {
        views.push("hlo_stats");
        let names = hlo.strings("hlo_op_name");
        let trace = hlo.f64s("trace_id");
        let self_us = hlo.f64s("total_self_time_us");
        let rate = hlo.f64s("measured_gflops_per_s");
        let intensity = hlo.f64s("operational_intensity");
        let bound = hlo.strings("bound_by");
        let bars: Vec<Bar> = (0..hlo.rows())
            .map(|i| Bar {
                label: device_label(several, trace[i], &names[i]),
                value: self_us[i] * 1e6,
                tooltip: format!(
                    "{}: self time {}, {} FLOP/s, intensity {:.2} FLOP/B, bound by {}",
                    names[i],
                    svg::format_si(self_us[i] * 1e6, "ps"),
                    svg::format_si(rate[i] * 1e9, ""),
                    intensity[i],
                    if bound[i].is_empty() { "?" } else { &bound[i] }
                ),
            })
            .collect();
        body.push_str(&figure(
            "hlo_stats",
            &svg::hbar_chart("Top HLO ops by self time", "ps", &bars),
            &hlo_sql,
            "Self time: the op's time less the ops nested in it, summed over its occurrences.",
        ));
        body.push_str(&table(
            "hlo_stats",
            &hlo,
            &[
                ("op", "hlo_op_name", None),
                ("category", "category", None),
                ("count", "occurrences", Some(COUNT)),
                ("self time µs", "total_self_time_us", Some("")),
                ("self %", "self_time_pct", Some("%")),
                ("GFLOP/s", "measured_gflops_per_s", Some("")),
                ("GiB/s", "memory_gibps", Some("")),
                ("FLOP/B", "operational_intensity", Some("")),
                ("bound by", "bound_by", None),
            ],
            &hlo_sql,
        ));
    }
    let roofline = ask(session, ROOFLINE_SQL).await?;
    if roofline.rows() > 0 {
        views.push("roofline");
        let names = roofline.strings("hlo_op");
        let x = roofline.f64s("operational_intensity");
        let y = roofline.f64s("measured_gflops_per_s");
        let bound = roofline.strings("bound_by");
        let points: Vec<Point> = (0..roofline.rows())
            .map(|i| Point {
                label: names[i].clone(),
                x: x[i],
                y: y[i] * 1e9,
                tooltip: format!(
                    "{}: {:.2} FLOP/B, {} FLOP/s, bound by {}",
                    names[i],
                    x[i],
                    svg::format_si(y[i] * 1e9, ""),
                    bound[i]
                ),
            })
            .collect();
        let peak_flops = roofline.f64s("peak_gflops_per_s").first().map(|v| v * 1e9);
        let peak_bw = roofline
            .f64s("peak_hbm_gibps")
            .first()
            .map(|v| v * 1024.0 * 1024.0 * 1024.0);
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
        body.push_str(&figure(
            "roofline",
            &svg::roofline(
                "Roofline (achieved FLOP/s vs operational intensity)",
                &points,
                finite(peak_flops),
                finite(peak_bw),
            ),
            ROOFLINE_SQL,
            "Each point is an HLO op; the line is the device's peak compute and memory bandwidth.",
        ));
    }
    let kernels_sql = top_kernels_sql();
    let kernels = ask(session, &kernels_sql).await?;
    if kernels.rows() > 0 {
        views.push("kernel_stats");
        let names = kernels.strings("kernel_name");
        let trace = kernels.f64s("trace_id");
        let total_us = kernels.f64s("total_duration_us");
        let count = kernels.f64s("occurrences");
        let occupancy = kernels.f64s("occupancy_pct");
        let bars: Vec<Bar> = (0..kernels.rows())
            .map(|i| Bar {
                label: device_label(several, trace[i], &names[i]),
                value: total_us[i] * 1e6,
                tooltip: format!(
                    "{}: {} in {} launches, occupancy {:.1}%",
                    names[i],
                    svg::format_si(total_us[i] * 1e6, "ps"),
                    count[i],
                    occupancy[i]
                ),
            })
            .collect();
        body.push_str(&figure(
            "kernel_stats",
            &svg::hbar_chart("Top GPU kernels by total time", "ps", &bars),
            &kernels_sql,
            "GPU kernels with their launch configuration (XProf's kernel_stats).",
        ));
        body.push_str(&table(
            "kernel_stats",
            &kernels,
            &[
                ("kernel", "kernel_name", None),
                ("op", "op_name", None),
                ("count", "occurrences", Some(COUNT)),
                ("total µs", "total_duration_us", Some("")),
                ("avg µs", "avg_duration_us", Some("")),
                ("occupancy", "occupancy_pct", Some("%")),
                ("regs/thread", "registers_per_thread", Some("")),
                ("shared mem", "shmem_bytes", Some("B")),
            ],
            &kernels_sql,
        ));
    }
    if body.is_empty() {
        return Ok(None);
    }
    Ok(Some(Section {
        id: "ops",
        title: "Top ops and kernels".into(),
        views,
        body,
    }))
}

fn timeline_sql() -> String {
    format!(
        "WITH span AS (
  SELECT trace_id, device_id, min(ts_ps) AS lo, max(end_ps) AS hi, min(depth) AS top_depth FROM device_ops
  GROUP BY trace_id, device_id),
cells AS (
  SELECT o.trace_id, o.device_id, s.lo, greatest((s.hi - s.lo + {TIMELINE_CELLS} - 1) / {TIMELINE_CELLS}, 1) AS width,
         o.ts_ps, o.end_ps
  FROM device_ops o JOIN span s ON o.trace_id = s.trace_id AND o.device_id = s.device_id
  WHERE o.depth = s.top_depth),
split AS (
  SELECT trace_id, device_id, lo, width, ts_ps, end_ps,
         unnest(range((ts_ps - lo) / width, (greatest(end_ps - 1, ts_ps) - lo) / width + 1)) AS cell
  FROM cells)
SELECT trace_id, device_id, cell,
       least(sum(least(end_ps, lo + (cell + 1) * width) - greatest(ts_ps, lo + cell * width)), min(width)) AS busy_ps,
       min(width) AS width_ps, min(lo) AS lo_ps
FROM split GROUP BY trace_id, device_id, cell ORDER BY trace_id, device_id, cell"
    )
}

async fn busy_timeline(session: &ProfileSession, several: bool) -> Result<Option<Section>> {
    let sql = timeline_sql();
    let cells = ask(session, &sql).await?;
    if cells.rows() == 0 {
        return Ok(None);
    }
    let names = ask(
        session,
        "SELECT trace_id, device_id, name FROM devices ORDER BY trace_id, device_id",
    )
    .await?;
    let name_of: std::collections::HashMap<(i64, i64), String> = {
        let t = names.f64s("trace_id");
        let d = names.f64s("device_id");
        let n = names.strings("name");
        (0..names.rows())
            .map(|i| ((t[i] as i64, d[i] as i64), n[i].clone()))
            .collect()
    };
    let trace = cells.f64s("trace_id");
    let device = cells.f64s("device_id");
    let cell = cells.f64s("cell");
    let busy = cells.f64s("busy_ps");
    let width = cells.f64s("width_ps");
    let mut lanes: Vec<Lane> = Vec::new();
    let mut keys: Vec<(i64, i64)> = Vec::new();
    let mut max_span: f64 = 0.0;
    for i in 0..cells.rows() {
        let key = (trace[i] as i64, device[i] as i64);
        if keys.last() != Some(&key) {
            keys.push(key);
            let name = name_of.get(&key).cloned().unwrap_or_default();
            lanes.push(Lane {
                name: device_label(several, key.0 as f64, &name),
                cells: vec![0.0; TIMELINE_CELLS],
            });
            max_span = max_span.max(width[i] * TIMELINE_CELLS as f64);
        }
        if let Some(lane) = lanes.last_mut()
            && let Some(c) = lane.cells.get_mut(cell[i] as usize)
        {
            *c = (busy[i] / width[i]).clamp(0.0, 1.0);
        }
    }
    let chart = svg::heatmap(
        "Busy timeline per device",
        "time from each device's first op",
        0.0,
        max_span,
        "ps",
        &lanes,
    );
    Ok(Some(Section {
        id: "timeline",
        title: "Busy timeline".into(),
        views: vec!["device_ops"],
        body: figure(
            "device_ops",
            &chart,
            &sql,
            &format!(
                "Each device's span in {TIMELINE_CELLS} cells; a cell's shade is the share of it covered by the device's outermost ops (its lowest nesting depth; summed, capped at 100%)."
            ),
        ),
    }))
}

const UNITS_SQL: &str = "\
SELECT kernel, unit, avg(busy_fraction) AS busy_fraction, count(*) AS executions,
       min(first_bundle) AS first_bundle, max(last_bundle) AS last_bundle
FROM unit_utilization GROUP BY kernel, unit ORDER BY kernel, unit";

const BUNDLES_SQL: &str = "\
WITH k AS (SELECT kernel, max(bundle_number) + 1 AS bundles FROM llo_instructions GROUP BY kernel)
SELECT i.kernel, i.unit, (i.bundle_number * 40) / k.bundles AS cell,
       count(DISTINCT i.bundle_number) AS issuing, min(k.bundles) AS bundles
FROM llo_instructions i JOIN k ON i.kernel = k.kernel
GROUP BY i.kernel, i.unit, cell ORDER BY i.kernel, i.unit, cell";

const HOTSPOTS_SQL: &str = "\
SELECT kernel, source_file, source_line, instructions, busy_ps, unit_names
FROM source_hotspots ORDER BY busy_ps DESC, kernel, source_file, source_line LIMIT 15";

async fn llo(session: &ProfileSession) -> Result<Option<Section>> {
    let units = ask(session, UNITS_SQL).await?;
    if units.rows() == 0 {
        return Ok(None);
    }
    let mut body = String::new();
    let kernel = units.strings("kernel");
    let unit = units.strings("unit");
    let frac = units.f64s("busy_fraction");
    let bars: Vec<Bar> = (0..units.rows())
        .map(|i| Bar {
            label: format!("{} {}", kernel[i], unit[i]),
            value: frac[i] * 100.0,
            tooltip: format!(
                "{} on {}: busy {:.1}% of the kernel",
                kernel[i],
                unit[i],
                frac[i] * 100.0
            ),
        })
        .collect();
    body.push_str(&figure(
        "unit_utilization",
        &svg::hbar_chart("Unit utilization per kernel", "%", &bars),
        UNITS_SQL,
        "Share of the kernel's time each functional unit issues (mean over executions).",
    ));
    // Units × bundle ranges: the share of a range's bundles that issue on
    // the unit.
    let bundles = ask(session, BUNDLES_SQL).await?;
    if bundles.rows() > 0 {
        let kernel = bundles.strings("kernel");
        let unit = bundles.strings("unit");
        let cell = bundles.f64s("cell");
        let issuing = bundles.f64s("issuing");
        let total = bundles.f64s("bundles");
        let mut start = 0;
        while start < bundles.rows() {
            let end = (start..bundles.rows())
                .find(|&i| kernel[i] != kernel[start])
                .unwrap_or(bundles.rows());
            let n_bundles = total[start];
            let mut lanes: Vec<Lane> = Vec::new();
            for i in start..end {
                if lanes.last().is_none_or(|l| l.name != unit[i]) {
                    lanes.push(Lane {
                        name: unit[i].clone(),
                        cells: vec![0.0; 40],
                    });
                }
                let c = cell[i] as usize;
                // Bundles falling in cell c.
                let lo = (c as f64 * n_bundles / 40.0).ceil();
                let hi = ((c + 1) as f64 * n_bundles / 40.0).ceil();
                let in_cell = (hi - lo).max(1.0);
                if let Some(lane) = lanes.last_mut()
                    && let Some(v) = lane.cells.get_mut(c)
                {
                    *v = (issuing[i] / in_cell).clamp(0.0, 1.0);
                }
            }
            body.push_str(&figure(
                "llo_instructions",
                &svg::heatmap(
                    &format!("{}: units × bundles", kernel[start]),
                    "bundle",
                    0.0,
                    n_bundles,
                    "",
                    &lanes,
                ),
                BUNDLES_SQL,
                "Share of each range of the compiled program's bundles in which the unit issues an instruction.",
            ));
            start = end;
        }
    }
    let hotspots = ask(session, HOTSPOTS_SQL).await?;
    if hotspots.rows() > 0 {
        body.push_str(&table(
            "source_hotspots",
            &hotspots,
            &[
                ("kernel", "kernel", None),
                ("file", "source_file", None),
                ("line", "source_line", Some("")),
                ("instructions", "instructions", Some("")),
                ("busy", "busy_ps", Some("ps")),
                ("units", "unit_names", None),
            ],
            HOTSPOTS_SQL,
        ));
    }
    Ok(Some(Section {
        id: "llo",
        title: "TPU kernels (LLO)".into(),
        views: vec!["unit_utilization", "llo_instructions", "source_hotspots"],
        body,
    }))
}

const PROTON_SQL: &str = "\
SELECT name, launches, time_ps, avg_time_ps, flops, bytes, gflop_per_s, gbyte_per_s, util
FROM proton_kernels WHERE depth > 0 ORDER BY time_ps DESC, name LIMIT 20";

async fn proton(session: &ProfileSession) -> Result<Option<Section>> {
    let kernels = ask(session, PROTON_SQL).await?;
    if kernels.rows() == 0 {
        return Ok(None);
    }
    let names = kernels.strings("name");
    let time = kernels.f64s("time_ps");
    let launches = kernels.f64s("launches");
    let rate = kernels.f64s("gflop_per_s");
    let bars: Vec<Bar> = (0..kernels.rows())
        .map(|i| Bar {
            label: names[i].clone(),
            value: time[i],
            tooltip: format!(
                "{}: {} in {} launches, {} FLOP/s",
                names[i],
                svg::format_si(time[i], "ps"),
                launches[i],
                svg::format_si(rate[i] * 1e9, "")
            ),
        })
        .collect();
    let mut body = figure(
        "proton_kernels",
        &svg::hbar_chart("Proton kernels by time", "ps", &bars),
        PROTON_SQL,
        "Triton Proton's kernels (tree profile) with achieved rates.",
    );
    body.push_str(&table(
        "proton_kernels",
        &kernels,
        &[
            ("kernel", "name", None),
            ("launches", "launches", Some("")),
            ("time", "time_ps", Some("ps")),
            ("avg", "avg_time_ps", Some("ps")),
            ("FLOPs", "flops", Some("")),
            ("bytes", "bytes", Some("B")),
            ("GFLOP/s", "gflop_per_s", Some("")),
            ("GB/s", "gbyte_per_s", Some("")),
            ("util", "util", Some("")),
        ],
        PROTON_SQL,
    ));
    Ok(Some(Section {
        id: "proton",
        title: "Proton kernels".into(),
        views: vec!["proton_kernels"],
        body,
    }))
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;color:#1a1a1a}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
nav a{margin-right:14px;font-size:13px}.sub{color:#555;font-size:13px}
figure{margin:16px 0}figcaption{font-size:12px;color:#444;margin-top:4px}.view{color:#777}
details summary{cursor:pointer;color:#2060a0;font-size:12px}pre{background:#f4f4f4;padding:8px;font-size:11px;overflow-x:auto}
table{border-collapse:collapse;font-size:12px;margin:8px 0}th,td{border-bottom:1px solid #e2e2e2;padding:3px 8px;text-align:left;max-width:380px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.path{max-width:none}th{background:#f0f0f0}
.table{overflow-x:auto}h3{font-size:15px;margin:24px 0 4px}
.multiples{display:flex;flex-wrap:wrap}.multiples .execution svg{width:372px;height:auto}
table.heat td{text-align:right}";

/// The report of everything opened in `session`, as one HTML document.
pub async fn report(session: &ProfileSession, title: &str) -> Result<String> {
    let traces = ask(session, "SELECT count(*) AS n FROM traces").await?;
    let several = traces.f64s("n").first().copied().unwrap_or(0.0) > 1.0;
    let mut sections = Vec::new();
    for s in [
        overview(session, several).await?,
        step_time(session).await?,
        top_ops(session, several).await?,
        busy_timeline(session, several).await?,
        llo(session).await?,
        kernel::section(session).await?,
        proton(session).await?,
        pytorch::section(session).await?,
    ]
    .into_iter()
    .flatten()
    {
        sections.push(s);
    }
    let mut html = String::with_capacity(1 << 16);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"xprof-sql {}\"><title>{}</title><style>{STYLE}</style>\
         <script>window.addEventListener('error',function(e){{document.body.dataset.errors=\
         (document.body.dataset.errors||'')+e.message+';'}});window.addEventListener('load',\
         function(){{document.body.dataset.errors=document.body.dataset.errors||''}});</script>\
         </head>\n<body>\
         <h1>{}</h1><p class=\"sub\">xprof-sql report: every chart is a view of the profile's tables; \
         open \"SQL\" under a chart for its query.</p><nav>",
        env!("CARGO_PKG_VERSION"),
        svg::escape(title),
        svg::escape(title)
    );
    for s in &sections {
        let _ = write!(html, "<a href=\"#{}\">{}</a>", s.id, svg::escape(&s.title));
    }
    html.push_str("</nav>\n");
    for s in &sections {
        let _ = write!(
            html,
            "<section id=\"{}\" data-views=\"{}\"><h2>{}</h2>\n{}</section>\n",
            s.id,
            s.views.join(" "),
            svg::escape(&s.title),
            s.body
        );
    }
    html.push_str("</body></html>\n");
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::{MAX_STEP_BARS, percentile, step_bars};

    #[test]
    fn percentiles_are_nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 3.0);
        assert_eq!(percentile(&v, 0.9), 5.0);
        assert_eq!(percentile(&v, 0.2), 1.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn many_steps_draw_at_most_max_bars_of_their_means() {
        let n: usize = 30_001;
        let nums: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let busy: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let idle: Vec<f64> = (0..n).map(|i| (2 * i) as f64).collect();
        let per_bar = n.div_ceil(MAX_STEP_BARS);
        let bars = step_bars(&nums, &busy, &idle, per_bar);
        assert!(bars.len() <= MAX_STEP_BARS, "{}", bars.len());
        // Every step in exactly one bar, in order: the bars' means
        // weighted by their sizes give back the totals.
        let sizes: Vec<usize> = (0..bars.len())
            .map(|b| (n - b * per_bar).min(per_bar))
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), n);
        let busy_total: f64 = bars.iter().zip(&sizes).map(|(b, &k)| b.1 * k as f64).sum();
        let idle_total: f64 = bars.iter().zip(&sizes).map(|(b, &k)| b.2 * k as f64).sum();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
        assert!(close(busy_total, busy.iter().sum::<f64>()), "{busy_total}");
        assert!(close(idle_total, idle.iter().sum::<f64>()), "{idle_total}");
        assert_eq!(bars[0].0, format!("0–{}", per_bar - 1));
        let last_start = (bars.len() - 1) * per_bar;
        assert_eq!(bars.last().unwrap().0, format!("{last_start}–{}", n - 1));
        assert_eq!(bars[0].1, (per_bar - 1) as f64 / 2.0);
        // Few steps: one bar each, their own values.
        let few = step_bars(&nums[..3], &busy[..3], &idle[..3], 1);
        assert_eq!(
            few,
            vec![
                ("0".into(), 0.0, 0.0),
                ("1".into(), 1.0, 2.0),
                ("2".into(), 2.0, 4.0)
            ]
        );
    }
}
