//! The report's custom-kernel section: for each kernel with LLO region
//! markers (a TPU kernel-profiling capture) or a decoded `llo_proto`, its
//! inside. The measured region entries of its slowest execution on a
//! timeline (the other executions as small multiples), its regions by
//! measured time beside the static occupancy per unit of the bundles that
//! time executes (each region's own segment, marker to next marker:
//! `llo_region_segments`), the bundle picture (bundles × units, slots used
//! of capacity, the segments marked, the one with the most measured time
//! outlined), the register pressure picture (live registers of each type
//! per bundle), its source lines by measured time (a row for the time
//! whose instructions carry none) and its VMEM allocations. Each chart names its view and shows its SQL, with
//! the kernel's trace and HLO op written into it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use xprof_query::ProfileSession;

use super::page::{COUNT, PATH, Result, Section, ask, figure, table};
use super::svg::{self, Bar, BundleRange, RegionBar, UnitRow};

/// Kernels shown, slowest execution first.
const MAX_KERNELS: usize = 4;
/// Executions drawn per kernel: the slowest large, the others small.
const MAX_EXECUTIONS: usize = 8;

/// The units of the bundle picture and the heat table, in this order
/// (units with a capacity only: spills and fills are counts).
const UNITS: [&str; 7] = ["MXU", "VALU", "VLD", "VST", "SALU", "XLU", "EUP"];

/// Every kernel with region markers or a decoded program, whether it ran
/// (`ran`: it has region entries, or `XLA Ops` events of its name, in its
/// module where both are known) and whether its trace holds any device op
/// at all (`measured_trace`: a file of payloads alone ran nothing, and
/// its programs are drawn from their schedules).
const KERNELS_SQL: &str = "\
WITH runs AS (
  SELECT e.trace_id, e.hlo_op, count(DISTINCT e.kernel_event_id) AS executions,
         max(k.dur_ps) AS slowest_ps
  FROM llo_region_entries e
  JOIN events k ON k.trace_id = e.trace_id AND k.event_id = e.kernel_event_id
  GROUP BY e.trace_id, e.hlo_op),
programs AS (
  SELECT trace_id, hlo_op, min(metadata_id) AS metadata_id, max(bundles) AS bundles,
         max(hlo_module) AS hlo_module
  FROM llo_programs WHERE decode_status = 'ok' GROUP BY trace_id, hlo_op),
ops AS (
  SELECT o.trace_id, CAST(o.display_name AS VARCHAR) AS display_name,
         split_part(CAST(o.hlo_op AS VARCHAR), '::', -1) AS hlo_op,
         regexp_replace(CAST(m.name AS VARCHAR), '\\([0-9]+\\)$', '') AS hlo_module, o.dur_ps
  FROM device_ops o
  LEFT JOIN events m ON m.trace_id = o.trace_id AND m.event_id = o.module_event_id),
device_runs AS (
  SELECT p.trace_id, p.hlo_op, count(*) AS device_executions, max(o.dur_ps) AS device_slowest_ps
  FROM programs p
  JOIN ops o ON o.trace_id = p.trace_id AND (o.display_name = p.hlo_op OR o.hlo_op = p.hlo_op)
   AND (o.hlo_module IS NULL OR p.hlo_module IS NULL OR o.hlo_module = p.hlo_module)
  GROUP BY p.trace_id, p.hlo_op),
measured AS (SELECT DISTINCT trace_id FROM device_ops)
SELECT coalesce(r.trace_id, p.trace_id) AS trace_id, coalesce(r.hlo_op, p.hlo_op) AS hlo_op,
       r.executions, r.slowest_ps, p.metadata_id, p.bundles, p.hlo_module,
       d.device_executions,
       r.trace_id IS NOT NULL OR d.trace_id IS NOT NULL AS ran,
       t.trace_id IS NOT NULL AS measured_trace
FROM runs r FULL OUTER JOIN programs p ON p.trace_id = r.trace_id AND p.hlo_op = r.hlo_op
LEFT JOIN device_runs d ON d.trace_id = coalesce(r.trace_id, p.trace_id)
  AND d.hlo_op = coalesce(r.hlo_op, p.hlo_op)
LEFT JOIN measured t ON t.trace_id = coalesce(r.trace_id, p.trace_id)
ORDER BY coalesce(r.slowest_ps, d.device_slowest_ps) DESC NULLS LAST, trace_id, hlo_op";

/// A kernel of the section.
struct Kernel {
    trace_id: i64,
    hlo_op: String,
    /// Executions with region markers.
    executions: Option<i64>,
    /// `XLA Ops` events of the program (a program without markers).
    device_executions: Option<i64>,
    metadata_id: Option<i64>,
}

impl Kernel {
    /// `trace_id = … AND hlo_op = '…'`, for the SQL shown.
    fn filter(&self, prefix: &str) -> String {
        format!(
            "{prefix}trace_id = {} AND {prefix}hlo_op = '{}'",
            self.trace_id,
            self.hlo_op.replace('\'', "''")
        )
    }

    fn program_filter(&self) -> Option<String> {
        self.metadata_id
            .map(|m| format!("trace_id = {} AND metadata_id = {m}", self.trace_id))
    }
}

fn int(v: f64) -> Option<i64> {
    v.is_finite().then_some(v as i64)
}

/// The entries of the kernel's slowest executions, with each region's
/// depth and name, and the provenance and static occupancy of its own
/// segment (the bundles an entry's `dur_ps` executes).
fn timeline_sql(k: &Kernel) -> String {
    format!(
        "\
WITH runs AS (
  SELECT DISTINCT e.kernel_event_id, x.ts_ps AS kernel_ts_ps, x.dur_ps AS kernel_ps
  FROM llo_region_entries e
  JOIN events x ON x.trace_id = e.trace_id AND x.event_id = e.kernel_event_id
  WHERE {f}),
ranked AS (
  SELECT *, row_number() OVER (ORDER BY kernel_ps DESC, kernel_event_id) AS run_rank FROM runs)
SELECT r.run_rank, r.kernel_event_id, r.kernel_ps, e.entry, e.region_id,
       e.ts_ps - r.kernel_ts_ps AS start_ps, e.dur_ps,
       g.name AS region_name, g.depth, g.named_scope,
       p.self_source_file AS source_file, p.self_source_line AS source_line,
       p.self_start_bundle, p.self_limit_bundle,
       p.self_mxu_pct AS mxu_pct, p.self_valu_pct AS valu_pct, p.self_vld_pct AS vld_pct,
       p.self_vst_pct AS vst_pct, p.self_salu_pct AS salu_pct
FROM llo_region_entries e
JOIN ranked r ON r.kernel_event_id = e.kernel_event_id
LEFT JOIN llo_region_profile p ON p.trace_id = e.trace_id AND p.hlo_op = e.hlo_op
  AND (p.hlo_module IS NOT DISTINCT FROM e.hlo_module) AND p.region_id = e.region_id
LEFT JOIN llo_regions g ON g.trace_id = p.trace_id AND g.metadata_id = p.metadata_id
  AND g.region_id = e.region_id
WHERE {f} AND r.run_rank <= {MAX_EXECUTIONS}
ORDER BY r.run_rank, e.entry",
        f = k.filter("e."),
    )
}

fn regions_sql(k: &Kernel) -> String {
    format!(
        "\
SELECT region_id, name, entries, measured_ps, measured_pct, named_scope,
       self_source_file, self_source_line, self_start_bundle, self_limit_bundle
FROM llo_region_profile WHERE {}
ORDER BY measured_ps DESC, region_id",
        k.filter("")
    )
}

fn occupancy_sql(k: &Kernel) -> String {
    format!(
        "\
SELECT region_id, unit, self_occupancy_pct, segment_start_bundle, segment_limit_bundle
FROM llo_region_segments WHERE {} AND capacity IS NOT NULL
ORDER BY region_id, unit",
        k.filter("")
    )
}

fn bundles_sql(filter: &str) -> String {
    format!(
        "\
SELECT unit, bundle, used, capacity
FROM llo_bundle_units WHERE {filter} AND capacity IS NOT NULL
ORDER BY unit, bundle"
    )
}

/// The measured segments of a kernel's program: each fired region's own
/// bundles, from its marker to the next.
fn segments_sql(filter: &str) -> String {
    format!(
        "\
SELECT DISTINCT region_id, name, segment_start_bundle AS start_bundle,
       segment_limit_bundle AS limit_bundle
FROM llo_region_segments WHERE {filter}
ORDER BY start_bundle, region_id"
    )
}

fn boundaries_sql(filter: &str) -> String {
    format!(
        "\
SELECT region_id, name, start_bundle, limit_bundle
FROM llo_regions WHERE {filter} AND region_id IS NOT NULL AND start_bundle IS NOT NULL
ORDER BY start_bundle, node"
    )
}

/// The program's live registers per bundle and type, with the scale they
/// are shaded on: the most registers of that type live at once in any
/// program of the capture on the same device (`capture_peak`, over
/// `programs` programs), as the data holds no register-file size
/// (`llo_target_info` has none); and the program's own peak beside it.
fn pressure_sql(filter: &str) -> String {
    format!(
        "\
WITH program AS (
  SELECT register_type, bundle, live, trace_id, device_id
  FROM llo_register_pressure WHERE {filter}),
capture AS (
  SELECT c.register_type, max(c.live) AS capture_peak, count(DISTINCT c.metadata_id) AS programs
  FROM llo_register_pressure c
  JOIN (SELECT DISTINCT trace_id, device_id FROM program) d
    ON d.trace_id = c.trace_id AND d.device_id = c.device_id
  GROUP BY c.register_type)
SELECT p.register_type, p.bundle, p.live,
       max(p.live) OVER (PARTITION BY p.register_type) AS program_peak,
       c.capture_peak, c.programs
FROM program p JOIN capture c ON c.register_type = p.register_type
ORDER BY p.register_type, p.bundle"
    )
}

fn sources_sql(k: &Kernel) -> String {
    format!(
        "\
SELECT coalesce(self_source_file, '(no source line)') AS source_file,
       CAST(self_source_line AS VARCHAR) AS source_line,
       sum(measured_ps) AS measured_ps, sum(measured_pct) AS measured_pct, count(*) AS regions
FROM llo_region_profile WHERE {}
GROUP BY self_source_file, self_source_line
ORDER BY measured_ps DESC, source_file, source_line",
        k.filter("")
    )
}

fn allocations_sql(filter: &str) -> String {
    format!(
        "\
SELECT ordinal, memory_space, size_bytes, is_scoped, is_spill
FROM llo_allocations WHERE {filter}
ORDER BY size_bytes DESC, ordinal"
    )
}

/// The section, or `None` when no kernel has region markers or a
/// decoded program.
pub(super) async fn section(session: &ProfileSession) -> Result<Option<Section>> {
    let kernels = ask(session, KERNELS_SQL).await?;
    if kernels.rows() == 0 {
        return Ok(None);
    }
    let traces = kernels.f64s("trace_id");
    let ops = kernels.strings("hlo_op");
    let executions = kernels.f64s("executions");
    let device_executions = kernels.f64s("device_executions");
    let metadata = kernels.f64s("metadata_id");
    let modules = kernels.strings("hlo_module");
    let bundles = kernels.f64s("bundles");
    let ran = kernels.strings("ran");
    let measured_trace = kernels.strings("measured_trace");
    // A program that did not run in a capture that ran something: named
    // in one line, not drawn. A file of payloads alone (no device op)
    // ran nothing, and its schedules are all there is to draw.
    let (drawn, not_run): (Vec<usize>, Vec<usize>) =
        (0..kernels.rows()).partition(|&row| ran[row] == "true" || measured_trace[row] != "true");
    let mut body = String::new();
    if !not_run.is_empty() {
        body.push_str(&not_run_line(
            &not_run
                .iter()
                .map(|&row| {
                    let mut about = Vec::new();
                    if !modules[row].is_empty() {
                        about.push(modules[row].clone());
                    }
                    if let Some(b) = int(bundles[row]) {
                        about.push(format!("{b} bundles"));
                    }
                    (ops[row].clone(), about.join(", "))
                })
                .collect::<Vec<_>>(),
        ));
    }
    let shown = drawn.len().min(MAX_KERNELS);
    if drawn.len() > shown {
        let _ = writeln!(
            body,
            "<p class=\"sub\">The {shown} kernels with the slowest executions of the {} that ran (<code>llo_region_entries</code>, <code>llo_programs</code>, <code>device_ops</code>).</p>",
            drawn.len()
        );
    }
    for &row in &drawn[..shown] {
        let k = Kernel {
            trace_id: int(traces[row]).unwrap_or(0),
            hlo_op: ops[row].clone(),
            executions: int(executions[row]),
            device_executions: int(device_executions[row]),
            metadata_id: int(metadata[row]),
        };
        let times = |n: i64| format!("{n} execution{}", if n == 1 { "" } else { "s" });
        let runs = match (k.executions, k.device_executions) {
            (Some(n), _) => format!(", {}", times(n)),
            (None, Some(n)) => format!(", {}, no region markers", times(n)),
            (None, None) => ", not run: the file holds no device events, only its schedule".into(),
        };
        let _ = writeln!(
            body,
            "<h3 data-kernel=\"{}\">{} <span class=\"sub\">trace {}{}</span></h3>",
            svg::escape(&k.hlo_op),
            svg::escape(&k.hlo_op),
            k.trace_id,
            svg::escape(&runs)
        );
        let hot = if k.executions.is_some() {
            body.push_str(&timeline(session, &k).await?);
            regions_by_time(session, &k, &mut body).await?
        } else {
            None
        };
        if let Some(filter) = k.program_filter() {
            let ranges = region_ranges(session, &filter, k.executions.is_some(), hot).await?;
            body.push_str(&bundle_picture(session, &k, &filter, &ranges).await?);
            body.push_str(&register_pressure(session, &k, &filter, &ranges).await?);
        }
        if k.executions.is_some() {
            let sql = sources_sql(&k);
            let sources = ask(session, &sql).await?;
            if sources.rows() > 0 {
                body.push_str(
                    "<p class=\"sub\">Source lines by measured time: each region's measured time under the line most of its own segment's instructions carry (llo_region_profile.self_source_line); the time of segments whose instructions carry no line is its own row, so the shares add to 100%.</p>",
                );
                body.push_str(&table(
                    "llo_region_profile",
                    &sources,
                    &[
                        ("file", "source_file", Some(PATH)),
                        ("line", "source_line", None),
                        ("measured", "measured_ps", Some("ps")),
                        ("% of kernel", "measured_pct", Some("%")),
                        ("regions", "regions", Some(COUNT)),
                    ],
                    &sql,
                ));
            }
        }
        if let Some(filter) = k.program_filter() {
            let sql = allocations_sql(&filter);
            let allocations = ask(session, &sql).await?;
            if allocations.rows() > 0 {
                body.push_str("<p class=\"sub\">Buffer allocations (VMEM, SMEM, sync flags):</p>");
                body.push_str(&table(
                    "llo_allocations",
                    &allocations,
                    &[
                        ("allocation", "ordinal", Some(COUNT)),
                        ("space", "memory_space", None),
                        ("size", "size_bytes", Some("B")),
                        ("scoped", "is_scoped", None),
                        ("spill", "is_spill", None),
                    ],
                    &sql,
                ));
            }
        }
    }
    Ok(Some(Section {
        id: "kernels",
        title: "Custom kernels: regions and bundles".into(),
        views: vec![
            "llo_region_entries",
            "llo_region_profile",
            "llo_region_segments",
            "llo_bundle_units",
            "llo_regions",
            "llo_allocations",
            "llo_register_pressure",
        ],
        body,
    }))
}

/// Most programs named in the line of those that did not run.
const MAX_NOT_RUN: usize = 12;

/// The line naming the programs (`(hlo_op, module and size)`) that the
/// capture holds compiled but did not run: no region marker, no
/// `XLA Ops` event. Their static tables hold them all the same.
fn not_run_line(programs: &[(String, String)]) -> String {
    let names: Vec<String> = programs
        .iter()
        .take(MAX_NOT_RUN)
        .map(|(op, about)| {
            if about.is_empty() {
                format!("<code>{}</code>", svg::escape(op))
            } else {
                format!("<code>{}</code> ({})", svg::escape(op), svg::escape(about))
            }
        })
        .collect();
    let more = programs.len().saturating_sub(MAX_NOT_RUN);
    format!(
        "<p class=\"sub not-run\" data-not-run=\"{}\">Not drawn: {} compiled program{} of this capture did not run in it (no region marker, no <code>XLA Ops</code> event): {}{}. {} in <code>llo_programs</code>, <code>llo_bundle_units</code> and <code>llo_register_pressure</code>.</p>\n",
        svg::escape(
            &programs
                .iter()
                .map(|(op, _)| op.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        programs.len(),
        if programs.len() == 1 { "" } else { "s" },
        names.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        if programs.len() == 1 {
            "Its schedule is"
        } else {
            "Their schedules are"
        }
    )
}

/// The slowest execution's region timeline, then the others small.
async fn timeline(session: &ProfileSession, k: &Kernel) -> Result<String> {
    let sql = timeline_sql(k);
    let entries = ask(session, &sql).await?;
    if entries.rows() == 0 {
        return Ok(String::new());
    }
    let rank = entries.f64s("run_rank");
    let event = entries.f64s("kernel_event_id");
    let kernel_ps = entries.f64s("kernel_ps");
    let region = entries.f64s("region_id");
    let start = entries.f64s("start_ps");
    let dur = entries.f64s("dur_ps");
    let name = entries.strings("region_name");
    let depth = entries.f64s("depth");
    let scope = entries.strings("named_scope");
    let file = entries.strings("source_file");
    let line = entries.strings("source_line");
    let seg_start = entries.f64s("self_start_bundle");
    let seg_limit = entries.f64s("self_limit_bundle");
    let occupancy: Vec<(&str, Vec<f64>)> = ["mxu", "valu", "vld", "vst", "salu"]
        .into_iter()
        .map(|u| (u, entries.f64s(&format!("{u}_pct"))))
        .collect();
    // Colours by region, the same in every execution: the palette's in
    // the order of the regions' time over the executions drawn, so the
    // regions that take the time get a colour of their own and those past
    // the palette (the shortest) share its grey.
    let mut time: BTreeMap<i64, f64> = BTreeMap::new();
    for (r, d) in region.iter().zip(&dur) {
        *time.entry(*r as i64).or_default() += if d.is_finite() { *d } else { 0.0 };
    }
    let mut by_time: Vec<(i64, f64)> = time.into_iter().collect();
    by_time.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let colours: BTreeMap<i64, usize> = by_time
        .iter()
        .enumerate()
        .map(|(colour, (r, _))| (*r, colour))
        .collect();
    let mut html = String::new();
    let mut small = String::new();
    let mut at = 0;
    while at < entries.rows() {
        let end = (at..entries.rows())
            .find(|&i| rank[i] != rank[at])
            .unwrap_or(entries.rows());
        let bars: Vec<RegionBar> = (at..end)
            .map(|i| {
                let mut label = format!("R{}", region[i] as i64);
                if !name[i].is_empty() {
                    let _ = write!(label, " {}", name[i]);
                }
                if !scope[i].is_empty() {
                    let _ = write!(label, " {}", scope[i]);
                }
                let occupied: Vec<String> = occupancy
                    .iter()
                    .filter(|(_, v)| v[i].is_finite())
                    .map(|(u, v)| format!("{} {:.1}%", u.to_uppercase(), v[i]))
                    .collect();
                let mut tooltip = format!("dur_ps {}", dur[i]);
                if !occupied.is_empty() {
                    let _ = write!(
                        tooltip,
                        "\nstatic occupancy of the bundles it executes (its own segment, bundles {}–{}): {}",
                        seg_start[i],
                        seg_limit[i] - 1.0,
                        occupied.join(", ")
                    );
                }
                if !line[i].is_empty() {
                    let _ = write!(tooltip, "\nsource: {}:{}", file[i], line[i]);
                }
                RegionBar {
                    label,
                    start: start[i],
                    duration: dur[i],
                    depth: if depth[i].is_finite() {
                        depth[i] as u32
                    } else {
                        0
                    },
                    colour: colours[&(region[i] as i64)],
                    tooltip,
                }
            })
            .collect();
        let slowest = rank[at] == 1.0;
        let title = format!(
            "{}, execution {} (event {}): {}",
            k.hlo_op,
            rank[at] as i64,
            event[at] as i64,
            svg::format_si(kernel_ps[at], "ps")
        );
        let chart = svg::region_timeline(&title, "ps", kernel_ps[at], &bars, !slowest);
        let wrapped = format!(
            "<div class=\"execution\" data-execution=\"{}\" data-kernel-event=\"{}\">{chart}</div>",
            rank[at] as i64, event[at] as i64
        );
        if slowest {
            html.push_str(&wrapped);
        } else {
            small.push_str(&wrapped);
        }
        at = end;
    }
    let others = k.executions.unwrap_or(1).min(MAX_EXECUTIONS as i64) - 1;
    let caption = format!(
        "Measured region entries of the slowest execution: time from the kernel's start on x, region nesting depth (llo_regions.depth) on y; a colour per region, the legend under the chart naming them (the regions with the most time each their own, those past the palette's eight grey); hover a bar for its whole name, its dur_ps and the static occupancy and source line of the bundles that time executes (the region's own segment, from its marker to the next: llo_region_profile.self_*).{}",
        if others > 0 {
            format!(" Below, the next {others} executions by time, same colours.")
        } else {
            String::new()
        }
    );
    Ok(figure(
        "llo_region_entries",
        &format!("{html}<div class=\"multiples\">{small}</div>"),
        &sql,
        &caption,
    ))
}

/// Each region's share of the kernel's measured time beside the static
/// occupancy per unit of its own segment; returns the bundle range of the
/// segment with the most measured time.
async fn regions_by_time(
    session: &ProfileSession,
    k: &Kernel,
    body: &mut String,
) -> Result<Option<(i64, String, u32, u32)>> {
    let sql = regions_sql(k);
    let regions = ask(session, &sql).await?;
    if regions.rows() == 0 {
        return Ok(None);
    }
    let id = regions.f64s("region_id");
    let name = regions.strings("name");
    let pct = regions.f64s("measured_pct");
    let measured = regions.f64s("measured_ps");
    let scope = regions.strings("named_scope");
    let line = regions.strings("self_source_line");
    let start = regions.f64s("self_start_bundle");
    let limit = regions.f64s("self_limit_bundle");
    let segment = |i: usize| {
        if start[i].is_finite() && limit[i].is_finite() {
            format!(
                " over bundles {}–{} (its own segment)",
                start[i],
                limit[i] - 1.0
            )
        } else {
            String::new()
        }
    };
    let label = |i: usize| {
        let mut l = format!("R{} {}", id[i] as i64, name[i]);
        if !scope[i].is_empty() {
            let _ = write!(l, " {}", scope[i]);
        }
        l
    };
    let bars: Vec<Bar> = (0..regions.rows())
        .map(|i| Bar {
            label: label(i),
            value: pct[i],
            tooltip: format!(
                "{} measured{}{}",
                svg::format_si(measured[i], "ps"),
                segment(i),
                if line[i].is_empty() {
                    String::new()
                } else {
                    format!(", source line {}", line[i])
                }
            ),
        })
        .collect();
    body.push_str(&figure(
        "llo_region_profile",
        &svg::hbar_chart(&format!("{}: regions by measured time", k.hlo_op), "%", &bars),
        &sql,
        "Each region's share of the kernel's measured time (all executions): the time from its entry marker to the next marker, spent in the region's own segment (its bundles up to the next marker; children's time is theirs).",
    ));
    // The heat table: region × unit occupancy, in the order above.
    let occ_sql = occupancy_sql(k);
    let occ = ask(session, &occ_sql).await?;
    if occ.rows() > 0 {
        let occ_region = occ.f64s("region_id");
        let occ_unit = occ.strings("unit");
        let occ_pct = occ.f64s("self_occupancy_pct");
        let mut cells: BTreeMap<(i64, String), f64> = BTreeMap::new();
        for i in 0..occ.rows() {
            cells.insert((occ_region[i] as i64, occ_unit[i].clone()), occ_pct[i]);
        }
        let units: Vec<&str> = UNITS
            .into_iter()
            .filter(|u| cells.keys().any(|(_, cu)| cu == u))
            .collect();
        let mut html =
            String::from("<table class=\"heat\"><thead><tr><th>region</th><th>source line</th>");
        for u in &units {
            let _ = write!(html, "<th>{u}</th>");
        }
        html.push_str("</tr></thead><tbody>");
        for i in 0..regions.rows() {
            let region = id[i] as i64;
            let _ = write!(
                html,
                "<tr><td title=\"{0}\">{0}</td><td>{1}</td>",
                svg::escape(&label(i)),
                svg::escape(&line[i])
            );
            for u in &units {
                match cells.get(&(region, u.to_string())) {
                    Some(v) => {
                        let _ = write!(
                            html,
                            "<td class=\"num\" style=\"background:{};color:{}\" data-label=\"R{region} {u}\" data-value=\"{v}\">{:.1}%</td>",
                            svg::heat_colour(v / 100.0),
                            if *v > 55.0 { "#ffffff" } else { "#1a1a1a" },
                            v
                        );
                    }
                    None => html.push_str("<td></td>"),
                }
            }
            html.push_str("</tr>");
        }
        html.push_str("</tbody></table>");
        body.push_str(&figure(
            "llo_region_segments",
            &html,
            &occ_sql,
            "Static occupancy per unit of the bundles each region's measured time executes: its own segment, from its marker to the next marker (slots used over capacity × bundles, from the compiler's schedule; llo_region_segments.self_occupancy_pct). Not the region's nested range: a region holding marked children is mostly their bundles (nested_occupancy_pct there). Regions in the order of their measured time; the source line is its segment's.",
        ));
    }
    let hot = (0..regions.rows())
        .find(|&i| start[i].is_finite() && limit[i].is_finite())
        .map(|i| (id[i] as i64, label(i), start[i] as u32, limit[i] as u32));
    Ok(hot)
}

/// Bundles × units of the kernel's program, its regions marked.
async fn bundle_picture(
    session: &ProfileSession,
    k: &Kernel,
    filter: &str,
    regions: &Regions,
) -> Result<String> {
    let measured = k.executions.is_some();
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
    let (ranges, hot_index, bounds_sql) = regions;
    let bundles = rows.iter().map(|r| r.used.len()).max().unwrap_or(0);
    Ok(figure(
        "llo_bundle_units",
        &svg::bundle_picture(
            &format!("{}: {bundles} bundles × units", k.hlo_op),
            &rows,
            ranges,
            *hot_index,
            svg::SLOTS,
        ),
        &format!("{sql};\n\n{bounds_sql}"),
        &format!(
            "The compiled program's bundles on x, its units on y: each cell is the slots the bundle uses of the unit's capacity (llo_bundle_units). {}",
            if measured {
                "Dashed lines mark where each measured segment starts, a region's own bundles from its marker to the next marker (llo_region_segments); the outlined band is the segment with the most measured time: the bundles that time executes, not the region's nested range."
            } else {
                "Dashed lines mark where regions start (llo_regions)."
            }
        ),
    ))
}

/// The program's placed regions as bundle ranges, the index of the
/// hottest one, and the SQL that found them.
type Regions = (Vec<BundleRange>, Option<usize>, String);

/// The ranges marked on the bundle and register pictures: the measured
/// segments of a kernel with region markers (`measured`), else the
/// program's placed regions.
async fn region_ranges(
    session: &ProfileSession,
    filter: &str,
    measured: bool,
    hot: Option<(i64, String, u32, u32)>,
) -> Result<Regions> {
    let bounds_sql = if measured {
        segments_sql(filter)
    } else {
        boundaries_sql(filter)
    };
    let bounds = ask(session, &bounds_sql).await?;
    let b_id = bounds.f64s("region_id");
    let b_name = bounds.strings("name");
    let b_start = bounds.f64s("start_bundle");
    let b_limit = bounds.f64s("limit_bundle");
    let mut ranges: Vec<BundleRange> = (0..bounds.rows())
        .filter(|&i| measured || b_id[i] as i64 != 0)
        .map(|i| BundleRange {
            label: format!("R{} {}", b_id[i] as i64, b_name[i]),
            start: b_start[i] as u32,
            limit: if b_limit[i].is_finite() {
                b_limit[i] as u32
            } else {
                b_start[i] as u32
            },
        })
        .collect();
    let hot_index = hot.map(|(id, label, start, limit)| {
        match ranges
            .iter()
            .position(|r| r.label.starts_with(&format!("R{id} ")))
        {
            Some(p) => p,
            None => {
                ranges.push(BundleRange {
                    label,
                    start,
                    limit,
                });
                ranges.len() - 1
            }
        }
    });
    Ok((ranges, hot_index, bounds_sql))
}

/// Live registers per bundle, one lane per register type (XProf's
/// `register_pressure`), each shaded by its share of the most registers
/// of that type live in any program of the capture ([`pressure_sql`]):
/// one scale for every program, so a small fusion reads light beside the
/// kernel that fills the registers.
async fn register_pressure(
    session: &ProfileSession,
    k: &Kernel,
    filter: &str,
    regions: &Regions,
) -> Result<String> {
    let sql = pressure_sql(filter);
    let cells = ask(session, &sql).await?;
    if cells.rows() == 0 {
        return Ok(String::new());
    }
    let bundles = ask(
        session,
        &format!("SELECT max(bundles) AS bundles FROM llo_programs WHERE {filter}"),
    )
    .await?
    .f64s("bundles")
    .first()
    .copied()
    .filter(|b| b.is_finite())
    .unwrap_or(0.0) as usize;
    let ty = cells.strings("register_type");
    let bundle = cells.f64s("bundle");
    let live = cells.f64s("live");
    let program_peak = cells.f64s("program_peak");
    let capture_peak = cells.f64s("capture_peak");
    let programs = cells.f64s("programs");
    let mut rows: BTreeMap<String, UnitRow> = BTreeMap::new();
    // Per type: (the program's peak, the capture's peak).
    let mut peaks: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for i in 0..cells.rows() {
        let row = rows.entry(ty[i].clone()).or_insert_with(|| UnitRow {
            unit: ty[i].clone(),
            capacity: capture_peak[i] as u32,
            used: vec![0; bundles],
        });
        let b = bundle[i] as usize;
        if row.used.len() <= b {
            row.used.resize(b + 1, 0);
        }
        row.used[b] = live[i] as u32;
        peaks.insert(ty[i].clone(), (program_peak[i], capture_peak[i]));
    }
    let rows: Vec<UnitRow> = rows.into_values().collect();
    let (ranges, hot_index, bounds_sql) = regions;
    let scale: Vec<String> = peaks
        .iter()
        .map(|(t, (_, capture))| format!("{t} {capture}"))
        .collect();
    let below: Vec<String> = peaks
        .iter()
        .filter(|(_, (own, capture))| own < capture)
        .map(|(t, (own, _))| format!("{t} {own}"))
        .collect();
    let own = if below.is_empty() {
        "this program's own peaks".to_string()
    } else {
        format!("this program's own peak: {}", below.join(", "))
    };
    let programs = programs.iter().copied().fold(0.0, f64::max);
    Ok(figure(
        "llo_register_pressure",
        &svg::bundle_picture(
            &format!("{}: live registers per bundle", k.hlo_op),
            &rows,
            ranges,
            *hot_index,
            svg::LIVE_OF_CAPTURE_PEAK,
        ),
        &format!("{sql};\n\n{bounds_sql}"),
        &format!(
            "Register pressure as the compiler scheduled it (XProf's register_pressure): the program's bundles on x, one lane per register type; each cell is the registers of that type live in the bundle (hover for the count), shaded by its share of the most registers of that type live at once in any program of this capture ({} program{} with live registers: {}; {}). The data holds no register-file size (llo_target_info has none), so the darkest cell is the capture's busiest program, not a full register file, and every program is shaded on the same scale. Regions (or a kernel's measured segments) are marked as above.",
            programs,
            if programs == 1.0 { "" } else { "s" },
            scale.join(", "),
            own
        ),
    ))
}
