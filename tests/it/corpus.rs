//! Invariants over the corpus of real public traces
//! (tests/fixtures/corpus/, each folder's `SOURCE.txt` and the README
//! there name the source and licence): PyTorch 2.x Kineto traces from
//! NVIDIA A100, H100 and B200 and AMD MI210, MI250 and MI300X runs, with
//! GPU annotations, CUDA and HIP graphs, torch.compile's Triton kernels
//! and distributed ranks; JAX XSpace from MI300X, MI355X and a TPU v6e;
//! Proton trees. What each view says is held against the raw file where
//! the raw file answers it alone, and against what a number means
//! otherwise (a busy time inside its span, shares that add up).
//!
//! An invariant that fails on one trace is a finding: fix the view, or
//! write down here why the trace is right.

use crate::common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every profile file of the corpus, sorted.
fn corpus() -> Vec<PathBuf> {
    let root = fixture("corpus");
    let mut files = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() || dir.ends_with("licenses") {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.file_name().unwrap() != "SOURCE.txt" {
                files.push(f);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 25, "{files:?}");
    files
}

fn is_chrome(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    (name.ends_with(".json.gz") || name.ends_with(".json")) && !path.starts_with(proton_dir())
}

fn proton_dir() -> PathBuf {
    fixture("corpus/proton-examples")
}

/// One raw event: `ph`, `cat`, `pid` (integer pids only), `ts` and `dur`
/// in exact ps as written.
struct RawEvent {
    ph: String,
    cat: String,
    pid: Option<i64>,
    ts_ps: Option<i128>,
    dur_ps: Option<i128>,
}

fn raw_events(path: &Path) -> Vec<RawEvent> {
    use serde_json::value::RawValue;
    type RawMap<'a> = std::collections::HashMap<String, &'a RawValue>;
    let text = raw_text(path);
    let top: RawMap<'_> = serde_json::from_str(&text).unwrap();
    let events: Vec<RawMap<'_>> = serde_json::from_str(top["traceEvents"].get()).unwrap();
    let string = |e: &RawMap<'_>, k: &str| {
        e.get(k)
            .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
            .unwrap_or_default()
    };
    events
        .iter()
        .map(|e| RawEvent {
            ph: string(e, "ph"),
            cat: string(e, "cat"),
            pid: e.get("pid").and_then(|v| v.get().parse().ok()),
            ts_ps: e
                .get("ts")
                .map(|v| us_text_to_ps(v.get().trim_matches('"'))),
            dur_ps: e
                .get("dur")
                .map(|v| us_text_to_ps(v.get().trim_matches('"'))),
        })
        .collect()
}

/// The categories of device work in Kineto traces (and the capitalised
/// ones of older writers).
const DEVICE_WORK: [&str; 5] = ["kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy"];

/// Per pid, the union of its device-work intervals, in ps.
fn raw_busy_by_pid(events: &[RawEvent]) -> BTreeMap<i64, i64> {
    let origin = events.iter().filter_map(|e| e.ts_ps).min().unwrap_or(0);
    let mut spans: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for e in events {
        if e.ph != "X" || !DEVICE_WORK.contains(&e.cat.as_str()) {
            continue;
        }
        let (Some(pid), Some(ts), Some(dur)) = (e.pid, e.ts_ps, e.dur_ps) else {
            continue;
        };
        let start = i64::try_from(ts - origin).unwrap();
        spans
            .entry(pid)
            .or_default()
            .push((start, start + i64::try_from(dur).unwrap()));
    }
    spans
        .into_iter()
        .map(|(pid, mut s)| (pid, union_sweep_len(&mut s)))
        .collect()
}

/// Every file converts, by the reader its kind says, detected by name or
/// content alone (none is named for its format here).
#[test]
fn every_corpus_trace_reads_as_its_format() {
    for path in corpus() {
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT source_format, count(*) AS n FROM traces GROUP BY 1",
        ));
        let want = if path.starts_with(proton_dir()) {
            "proton_tree"
        } else if is_chrome(&path) {
            "chrome_trace"
        } else {
            "xspace"
        };
        assert_eq!(rows.len(), 1, "{path:?}");
        assert_eq!(s(&rows[0], "source_format"), want, "{path:?}");
    }
}

/// On every device of every trace, busy time lies within the span; on
/// every GPU of every Kineto trace it is the union of the GPU's kernels,
/// copies and sets read from the raw file, to the ps (annotations, syncs
/// and profiler ranges on the same streams are not device work).
#[test]
fn busy_time_is_the_union_of_device_work_on_every_trace() {
    let mut gpus_compared = 0;
    for path in corpus() {
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT d.plane_id, d.kind, b.busy_ps, b.span_ps, b.busy_pct \
             FROM device_busy b JOIN devices d USING (trace_id, device_id)",
        ));
        for r in &rows {
            assert!(
                i(r, "busy_ps") >= 0 && i(r, "busy_ps") <= i(r, "span_ps"),
                "{path:?}: {r:?}"
            );
            if let Some(pct) = r.get("busy_pct").and_then(|v| v.as_f64()) {
                assert!((0.0..=100.0).contains(&pct), "{path:?}: {r:?}");
            }
        }
        if !is_chrome(&path) {
            continue;
        }
        let want = raw_busy_by_pid(&raw_events(&path));
        let got: BTreeMap<i64, i64> = rows
            .iter()
            .filter(|r| s(r, "kind") == "gpu")
            .map(|r| (i(r, "plane_id"), i(r, "busy_ps")))
            .collect();
        assert_eq!(got, want, "{path:?}");
        gpus_compared += want.len();
    }
    // 17 GPUs with device work in 21 Kineto traces.
    assert!(gpus_compared >= 17, "{gpus_compared}");
}

/// Every kernel of a Kineto trace is one row of `gpu_kernels`, with the
/// raw file's count per GPU, and no event is listed twice.
#[test]
fn every_kernel_appears_once_in_gpu_kernels() {
    for path in corpus().into_iter().filter(|p| is_chrome(p)) {
        let mut want: BTreeMap<i64, i64> = BTreeMap::new();
        for e in raw_events(&path) {
            if e.ph == "X"
                && e.cat == "kernel"
                && let Some(pid) = e.pid
            {
                *want.entry(pid).or_default() += 1;
            }
        }
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT d.plane_id, count(*) AS n, count(DISTINCT k.event_id) AS distinct_events \
             FROM gpu_kernels k JOIN devices d USING (trace_id, device_id) GROUP BY 1",
        ));
        let got: BTreeMap<i64, i64> = rows
            .iter()
            .map(|r| {
                assert_eq!(i(r, "n"), i(r, "distinct_events"), "{path:?}");
                (i(r, "plane_id"), i(r, "n"))
            })
            .collect();
        assert_eq!(got, want, "{path:?}");
    }
}

/// Shares add up: HTA's temporal breakdown splits each rank's kernel span
/// into idle, compute and non-compute (100 % together), the kernel-type
/// breakdown's shares of busy time add up to 100 %, and `hlo_stats`'
/// self-time shares to at most 100 %.
#[test]
fn shares_add_up_on_every_trace() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for path in corpus() {
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT idle_pct + compute_pct + non_compute_pct AS total FROM temporal_breakdown \
             WHERE kernel_ps > 0",
        ));
        for r in &rows {
            assert!(
                close(r["total"].as_f64().unwrap(), 100.0),
                "{path:?}: {r:?}"
            );
        }
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT trace_id, rank, sum(pct) AS total FROM gpu_kernel_type_breakdown GROUP BY 1, 2",
        ));
        for r in &rows {
            assert!(
                close(r["total"].as_f64().unwrap(), 100.0),
                "{path:?}: {r:?}"
            );
        }
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT trace_id, sum(self_time_pct) AS total FROM hlo_stats GROUP BY 1",
        ));
        for r in &rows {
            let total = r["total"].as_f64().unwrap();
            assert!(total <= 100.0 + 1e-9, "{path:?}: {r:?}");
        }
    }
}

/// A region's measured time lies inside its kernel's execution, on the
/// kernel-profiling capture (synthetic, in real captures' shapes) and on
/// every corpus trace that has region markers.
#[test]
fn region_entries_lie_inside_their_kernels() {
    let mut inputs = corpus();
    inputs.push(fixture("tpu/synthetic_capture.xplane.pb"));
    let mut entries = 0;
    for path in inputs {
        let rows = tokio_run(query_rows(
            &[&path],
            "SELECT r.ts_ps, r.dur_ps, k.ts_ps AS kernel_ps, k.dur_ps AS kernel_dur_ps \
             FROM llo_region_entries r JOIN events k \
               ON k.trace_id = r.trace_id AND k.event_id = r.kernel_event_id",
        ));
        for r in &rows {
            let (start, end) = (i(r, "ts_ps"), i(r, "ts_ps") + i(r, "dur_ps"));
            let (k_start, k_end) = (i(r, "kernel_ps"), i(r, "kernel_ps") + i(r, "kernel_dur_ps"));
            assert!(k_start <= start && end <= k_end, "{path:?}: {r:?}");
        }
        entries += rows.len();
    }
    assert!(entries > 0);
}
