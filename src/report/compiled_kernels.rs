//! The report's compiled-kernel section: for each kernel of an LLO
//! compiler dump folder (a compile, not a run), its schedule in numbers
//! (`llo_kernels`: bundles, empty bundles, occupancy per unit, spill and
//! fill slots, VMEM and SMEM), the bundle picture (bundles × units, slots
//! used of capacity, from the compiler's per-bundle utilization file,
//! regions marked from the final bundles' region comments) and its
//! allocations. A dump holds no measured time, and the section says so:
//! the measured timeline and source lines need a kernel-profiling
//! capture (the kernel section).

use std::fmt::Write as _;

use xprof_query::ProfileSession;

use super::page::{COUNT, Result, Section, ask, figure, table};
use super::svg::{self, BundleRange};

/// Kernels drawn, longest schedule first.
const MAX_KERNELS: usize = 6;

/// The units of the bundle picture, in this order (a dump's spill and fill
/// columns have a capacity, and are drawn last).
const UNITS: [&str; 10] = [
    "MXU", "VALU", "VLD", "VST", "SALU", "XLU", "EUP", "VPOP", "FILL", "SPILL",
];

const KERNELS_SQL: &str = "\
SELECT trace_id, hlo_op, bundles, empty_bundles, mxu_pct, valu_pct, vld_pct, vst_pct, salu_pct,
       xlu_pct, eup_pct, spill_slots, fill_slots, vmem_bytes, smem_bytes
FROM llo_kernels WHERE source = 'dump'
ORDER BY bundles DESC NULLS LAST, hlo_op, trace_id";

/// `trace_id = … AND hlo_op = '…'`.
fn filter(trace_id: i64, hlo_op: &str) -> String {
    format!(
        "trace_id = {trace_id} AND hlo_op = '{}'",
        hlo_op.replace('\'', "''")
    )
}

fn summary_sql(filter: &str) -> String {
    format!(
        "\
SELECT bundles, empty_bundles, mxu_pct, valu_pct, vld_pct, vst_pct, salu_pct, spill_slots,
       fill_slots, vmem_bytes, smem_bytes
FROM llo_kernels WHERE {filter} AND source = 'dump'"
    )
}

fn bundles_sql(filter: &str) -> String {
    format!(
        "\
SELECT unit, address AS bundle, used, capacity
FROM llo_dump_bundle_units WHERE {filter} AND capacity > 0
ORDER BY unit, address"
    )
}

/// Each region's own bundles: those whose innermost open region it is
/// (`llo_dump_bundles.region_id`, from the `Start region N` comments).
fn regions_sql(filter: &str) -> String {
    format!(
        "\
SELECT region_id, min(address) AS start_bundle, max(address) + 1 AS limit_bundle
FROM llo_dump_bundles WHERE {filter} AND region_id IS NOT NULL AND address IS NOT NULL
GROUP BY region_id
ORDER BY start_bundle, region_id"
    )
}

fn allocations_sql(filter: &str) -> String {
    format!(
        "\
SELECT name, memory_space, size_bytes, is_scoped, tag
FROM llo_dump_allocations WHERE {filter}
ORDER BY size_bytes DESC, line"
    )
}

fn int(v: f64) -> Option<i64> {
    v.is_finite().then_some(v as i64)
}

/// The section, or `None` when no dump folder was opened.
pub(super) async fn section(session: &ProfileSession) -> Result<Option<Section>> {
    let kernels = ask(session, KERNELS_SQL).await?;
    if kernels.rows() == 0 {
        return Ok(None);
    }
    let traces = kernels.f64s("trace_id");
    let ops = kernels.strings("hlo_op");
    let mut body = String::from(
        "<p class=\"sub\">A compiler dump folder holds each kernel's schedule, not a run: there is no measured time here. Profile the kernel (a kernel-profiling capture) for its measured regions and source lines; compare two compiles with <code>xprof-sql diff OLD NEW</code> (<code>diff_llo_kernels</code>).</p>\n",
    );
    let shown = kernels.rows().min(MAX_KERNELS);
    if kernels.rows() > shown {
        let _ = writeln!(
            body,
            "<p class=\"sub\">The {shown} kernels with the longest schedules of the {} compiled (<code>llo_kernels</code>).</p>",
            kernels.rows()
        );
    }
    for row in 0..shown {
        let trace_id = int(traces[row]).unwrap_or(0);
        let op = &ops[row];
        let f = filter(trace_id, op);
        let _ = writeln!(
            body,
            "<h3 data-kernel=\"{}\">{} <span class=\"sub\">trace {trace_id}, compiled: its schedule only, not run</span></h3>",
            svg::escape(op),
            svg::escape(op),
        );
        let sql = summary_sql(&f);
        let summary = ask(session, &sql).await?;
        body.push_str(&table(
            "llo_kernels",
            &summary,
            &[
                ("bundles", "bundles", Some(COUNT)),
                ("empty", "empty_bundles", Some(COUNT)),
                ("MXU", "mxu_pct", Some("%")),
                ("VALU", "valu_pct", Some("%")),
                ("VLD", "vld_pct", Some("%")),
                ("VST", "vst_pct", Some("%")),
                ("SALU", "salu_pct", Some("%")),
                ("spill slots", "spill_slots", Some(COUNT)),
                ("fill slots", "fill_slots", Some(COUNT)),
                ("VMEM", "vmem_bytes", Some("B")),
                ("SMEM", "smem_bytes", Some("B")),
            ],
            &sql,
        ));
        body.push_str(&bundle_picture(session, op, &f).await?);
        let sql = allocations_sql(&f);
        let allocations = ask(session, &sql).await?;
        if allocations.rows() > 0 {
            body.push_str("<p class=\"sub\">Buffer allocations (VMEM, SMEM, sync flags):</p>");
            body.push_str(&table(
                "llo_dump_allocations",
                &allocations,
                &[
                    ("allocation", "name", None),
                    ("space", "memory_space", None),
                    ("size", "size_bytes", Some("B")),
                    ("scoped", "is_scoped", None),
                    ("tag", "tag", None),
                ],
                &sql,
            ));
        }
    }
    Ok(Some(Section {
        id: "compiled-kernels",
        title: "Compiled kernels: the schedule (compiler dump)".into(),
        views: vec![
            "llo_kernels",
            "llo_dump_bundle_units",
            "llo_dump_bundles",
            "llo_dump_allocations",
        ],
        body,
    }))
}

/// The kernel's bundles on x, its units on y, each cell the slots used of
/// the unit's capacity; its regions marked.
async fn bundle_picture(session: &ProfileSession, op: &str, filter: &str) -> Result<String> {
    let sql = bundles_sql(filter);
    let cells = ask(session, &sql).await?;
    if cells.rows() == 0 {
        return Ok(String::new());
    }
    let rows = svg::unit_rows(
        &cells.strings("unit"),
        &cells.f64s("bundle"),
        &cells.f64s("used"),
        &cells.f64s("capacity"),
        &UNITS,
    );
    let regions_sql = regions_sql(filter);
    let bounds = ask(session, &regions_sql).await?;
    let ids = bounds.f64s("region_id");
    let starts = bounds.f64s("start_bundle");
    let limits = bounds.f64s("limit_bundle");
    let ranges: Vec<BundleRange> = (0..bounds.rows())
        .filter(|&i| ids[i] as i64 != 0)
        .map(|i| BundleRange {
            label: format!("R{}", ids[i] as i64),
            start: starts[i] as u32,
            limit: limits[i] as u32,
        })
        .collect();
    let bundles = rows.iter().map(|r| r.used.len()).max().unwrap_or(0);
    Ok(figure(
        "llo_dump_bundle_units",
        &svg::bundle_picture(
            &format!("{op}: {bundles} bundles × units"),
            &rows,
            &ranges,
            None,
            svg::SLOTS,
        ),
        &format!("{sql};\n\n{regions_sql}"),
        "The compiled kernel's bundles on x, its units on y: each cell is the slots the bundle uses of the unit's capacity, as the compiler counted them (the dump's per-bundle utilization file, llo_dump_bundle_units; MXU is the MXUs it models busy). Dashed lines mark where each region's own bundles start (the final bundles' region comments, llo_dump_bundles.region_id). No time is measured here.",
    ))
}
