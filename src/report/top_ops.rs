//! The report's top ops: the HLO ops and GPU kernels with the most time
//! (`hlo_stats`, `kernel_stats`) and the roofline (`roofline`).

use xprof_query::ProfileSession;

use super::page::{COUNT, Result, Section, TOP, ask, device_label, figure, table};
use super::svg::{self, Bar, Point};

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

pub(super) async fn section(session: &ProfileSession, several: bool) -> Result<Option<Section>> {
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
