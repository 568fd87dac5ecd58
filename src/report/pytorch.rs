//! The report's PyTorch section: what Holistic Trace Analysis draws for a
//! Kineto trace, per rank, from this project's HTA views. The top GPU
//! kernels by total time (`gpu_kernels`, which Kineto traces fill where
//! XProf's `kernel_stats` stays empty), the time by kernel type with its
//! overlaps (`gpu_kernel_type_breakdown`), the temporal breakdown
//! (`temporal_breakdown`) and the idle time per stream
//! (`idle_time_breakdown`). A trace without those views' rows (no Kineto
//! GPU events) leaves the section out.

use xprof_query::ProfileSession;

use super::page::{COUNT, Result, Section, ask, figure, table};
use super::svg::{self, Bar, Series};

/// Kernels in the top-kernels chart.
const TOP: usize = 15;

/// The top kernels of the Chrome traces (XSpace GPU kernels are drawn
/// from `kernel_stats`, with their launch shapes, in the ops section).
fn top_kernels_sql() -> String {
    format!(
        "SELECT name, count(*) AS launches, sum(dur_ps) AS total_ps, avg(dur_ps) AS avg_ps,
       max(dur_ps) AS max_ps
FROM gpu_kernels WHERE source_format = 'chrome_trace'
GROUP BY name ORDER BY total_ps DESC, name LIMIT {TOP}"
    )
}

/// The ranks' labels: `rank N`, with the trace id where two traces share
/// a rank (two runs in one session).
const RANKS_SQL: &str = "\
SELECT trace_id, rank, count(*) OVER (PARTITION BY rank) AS sharing
FROM (SELECT DISTINCT trace_id, rank FROM kineto_gpu_events)
ORDER BY rank, trace_id";

const TYPES_SQL: &str = "\
SELECT trace_id, rank, kernel_type, time_ps, pct
FROM gpu_kernel_type_breakdown ORDER BY rank, trace_id, kernel_type";

const TEMPORAL_SQL: &str = "\
SELECT trace_id, rank, idle_ps, compute_ps, non_compute_ps, idle_pct, compute_pct, non_compute_pct
FROM temporal_breakdown ORDER BY rank, trace_id";

const IDLE_SQL: &str = "\
SELECT trace_id, rank, stream, idle_category, idle_ps, gaps, idle_ratio
FROM idle_time_breakdown ORDER BY rank, trace_id, stream, idle_category";

/// The profiler steps of the Kineto traces: how many distinct
/// `ProfilerStep#N` names, the first and the last N.
const STEPS_SQL: &str = "\
SELECT count(DISTINCT n) AS names, min(n) AS first, max(n) AS last
FROM (SELECT CAST(regexp_match(e.name, 'ProfilerStep\\s*#\\s*(\\d+)')[1] AS BIGINT) AS n
      FROM events e JOIN tracks t USING (trace_id, track_id)
      JOIN traces r USING (trace_id)
      WHERE r.source_format = 'chrome_trace' AND t.kind = 'thread'
        AND e.name LIKE '%ProfilerStep%')
WHERE n IS NOT NULL";

/// Which steps the charts cover, said under each: the top kernels sum the
/// whole trace, HTA's breakdowns leave out the last profiler step (where a
/// trace has two or more), so a reader does not compare 775 ms of one with
/// 363 ms of the other as the same thing.
struct StepNotes {
    /// Under the top kernels.
    every_step: String,
    /// Under each HTA breakdown.
    hta: String,
}

async fn step_notes(session: &ProfileSession) -> Result<StepNotes> {
    let steps = ask(session, STEPS_SQL).await?;
    let number = |column: &str| steps.f64s(column).first().copied().unwrap_or(f64::NAN);
    let (names, first, last) = (number("names"), number("first"), number("last"));
    Ok(if names >= 2.0 {
        StepNotes {
            every_step: format!(
                " Every profiler step, the last included (ProfilerStep#{first}–#{last}); the \
                 breakdowns below leave the last (#{last}) out, as HTA does."
            ),
            hta: format!(
                " Without the kernels launched in the last profiler step (#{last}), as HTA \
                 leaves them out; the top kernels above include it."
            ),
        }
    } else {
        StepNotes {
            every_step: " The whole trace.".into(),
            hta: " The whole trace (HTA drops a last step only where there are two or more)."
                .into(),
        }
    })
}

/// HTA's three idle classes, in the order stacked.
const IDLE_CLASSES: [&str; 3] = ["host_wait", "kernel_wait", "other"];

/// The rank labels of `RANKS_SQL`'s answer, by (trace, rank).
struct Ranks(Vec<(i64, String)>);

impl Ranks {
    fn label(&self, trace_id: f64) -> String {
        self.0
            .iter()
            .find(|(t, _)| *t == trace_id as i64)
            .map(|(_, l)| l.clone())
            .unwrap_or_else(|| format!("trace {}", trace_id as i64))
    }
}

/// The categories of a stacked chart (one per distinct key, in the
/// answer's order) and each row's category index.
fn categories(keys: &[String]) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let index = keys
        .iter()
        .map(|k| match names.iter().position(|n| n == k) {
            Some(i) => i,
            None => {
                names.push(k.clone());
                names.len() - 1
            }
        })
        .collect();
    (names, index)
}

/// A series per name of `names`, its values per category from the rows.
fn series_of(
    names: &[String],
    categories: usize,
    rows: impl Iterator<Item = (usize, String, f64)>,
) -> Vec<Series> {
    let mut series: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: n.clone(),
            values: vec![0.0; categories],
        })
        .collect();
    for (category, name, value) in rows {
        if let Some(s) = series.iter_mut().find(|s| s.name == name) {
            s.values[category] += value;
        }
    }
    series
}

/// The section, or `None` when the session holds no Kineto GPU events.
pub(super) async fn section(session: &ProfileSession) -> Result<Option<Section>> {
    let ranks = ask(session, RANKS_SQL).await?;
    let kernels_sql = top_kernels_sql();
    let kernels = ask(session, &kernels_sql).await?;
    if ranks.rows() == 0 && kernels.rows() == 0 {
        return Ok(None);
    }
    let mut body = String::new();
    let mut views = Vec::new();
    let notes = step_notes(session).await?;
    if kernels.rows() > 0 {
        views.push("gpu_kernels");
        let names = kernels.strings("name");
        let total = kernels.f64s("total_ps");
        let launches = kernels.f64s("launches");
        let bars: Vec<Bar> = (0..kernels.rows())
            .map(|i| Bar {
                label: names[i].clone(),
                value: total[i],
                tooltip: format!(
                    "{}: {} in {} launches",
                    names[i],
                    svg::format_si(total[i], "ps"),
                    launches[i]
                ),
            })
            .collect();
        body.push_str(&figure(
            "gpu_kernels",
            &svg::hbar_chart("Top GPU kernels by total time", "ps", &bars),
            &kernels_sql,
            &format!(
                "Every GPU kernel of the PyTorch (Kineto) or Proton traces, summed by name over ranks.{}",
                notes.every_step
            ),
        ));
        body.push_str(&table(
            "gpu_kernels",
            &kernels,
            &[
                ("kernel", "name", None),
                ("launches", "launches", Some(COUNT)),
                ("total", "total_ps", Some("ps")),
                ("mean", "avg_ps", Some("ps")),
                ("longest", "max_ps", Some("ps")),
            ],
            &kernels_sql,
        ));
    }
    let rank_ids = ranks.f64s("trace_id");
    let rank_nums = ranks.f64s("rank");
    let sharing = ranks.f64s("sharing");
    let labels = Ranks(
        (0..ranks.rows())
            .map(|i| {
                let rank = if rank_nums[i].is_finite() {
                    format!("rank {}", rank_nums[i] as i64)
                } else {
                    "rank ?".to_string()
                };
                let label = if sharing[i] > 1.0 {
                    format!("{rank} (trace {})", rank_ids[i] as i64)
                } else {
                    rank
                };
                (rank_ids[i] as i64, label)
            })
            .collect(),
    );

    let types = ask(session, TYPES_SQL).await?;
    if types.rows() > 0 {
        views.push("gpu_kernel_type_breakdown");
        let trace = types.f64s("trace_id");
        let kind = types.strings("kernel_type");
        let time = types.f64s("time_ps");
        let keys: Vec<String> = trace.iter().map(|t| labels.label(*t)).collect();
        let (cats, at) = categories(&keys);
        let mut names: Vec<String> = Vec::new();
        for k in &kind {
            if !names.contains(k) {
                names.push(k.clone());
            }
        }
        names.sort();
        let series = series_of(
            &names,
            cats.len(),
            (0..types.rows()).map(|i| (at[i], kind[i].clone(), time[i])),
        );
        body.push_str(&figure(
            "gpu_kernel_type_breakdown",
            &svg::stacked_bars("GPU time by kernel type, per rank", "ps", &cats, &series, &[]),
            TYPES_SQL,
            &format!(
                "How long each set of kernel types ran at once (HTA's kernel-type breakdown, with its overlaps).{}",
                notes.hta
            ),
        ));
    }

    let temporal = ask(session, TEMPORAL_SQL).await?;
    if temporal.rows() > 0 {
        views.push("temporal_breakdown");
        let trace = temporal.f64s("trace_id");
        let cats: Vec<String> = trace.iter().map(|t| labels.label(*t)).collect();
        let series: Vec<Series> = [
            ("compute", "compute_ps"),
            ("non-compute", "non_compute_ps"),
            ("idle", "idle_ps"),
        ]
        .iter()
        .map(|(name, column)| Series {
            name: (*name).to_string(),
            values: temporal.f64s(column),
        })
        .collect();
        body.push_str(&figure(
            "temporal_breakdown",
            &svg::stacked_bars("Temporal breakdown, per rank", "ps", &cats, &series, &[]),
            TEMPORAL_SQL,
            &format!(
                "The GPU's span per rank: computing, running other kernels (communication, memory), idle (HTA's temporal breakdown).{}",
                notes.hta
            ),
        ));
        body.push_str(&table(
            "temporal_breakdown",
            &temporal,
            &[
                ("trace", "trace_id", Some(COUNT)),
                ("rank", "rank", Some(COUNT)),
                ("idle", "idle_ps", Some("ps")),
                ("compute", "compute_ps", Some("ps")),
                ("non-compute", "non_compute_ps", Some("ps")),
                ("idle %", "idle_pct", Some("%")),
                ("compute %", "compute_pct", Some("%")),
                ("non-compute %", "non_compute_pct", Some("%")),
            ],
            TEMPORAL_SQL,
        ));
    }

    let idle = ask(session, IDLE_SQL).await?;
    if idle.rows() > 0 {
        views.push("idle_time_breakdown");
        let trace = idle.f64s("trace_id");
        let stream = idle.f64s("stream");
        let class = idle.strings("idle_category");
        let time = idle.f64s("idle_ps");
        let keys: Vec<String> = (0..idle.rows())
            .map(|i| format!("{} stream {}", labels.label(trace[i]), stream[i] as i64))
            .collect();
        let (cats, at) = categories(&keys);
        let names: Vec<String> = IDLE_CLASSES.iter().map(|c| c.to_string()).collect();
        let series = series_of(
            &names,
            cats.len(),
            (0..idle.rows()).map(|i| (at[i], class[i].clone(), time[i])),
        );
        body.push_str(&figure(
            "idle_time_breakdown",
            &svg::stacked_bars("Idle time per stream", "ps", &cats, &series, &[]),
            IDLE_SQL,
            &format!(
                "Gaps between a stream's kernels: waiting for the host's launch, short waits between kernels (< 30 µs), and other (HTA's idle-time breakdown).{}",
                notes.hta
            ),
        ));
    }
    if body.is_empty() {
        return Ok(None);
    }
    Ok(Some(Section {
        id: "pytorch",
        title: "PyTorch GPU analyses (HTA)".into(),
        views,
        body,
    }))
}
