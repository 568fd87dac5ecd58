//! Numbers that must be true on real captures (issue 59): what a view says
//! is checked against the same number computed here from the raw file,
//! never against another view.
//!
//! - GPU busy time is device work only: the union of a GPU's `kernel`,
//!   `gpu_memcpy` and `gpu_memset` intervals read from the raw JSON, not
//!   PyTorch's `gpu_user_annotation` ranges laid over them (real: HTA's
//!   `nccl_data`, which has 30 of them);
//! - a real Kineto trace whose top-level metadata runs past the first
//!   4 KiB reads under any name (`NAME.json.gz`), and a format detection
//!   cannot tell can be named (`--input-format`);
//! - a GPU is named by its device (`GPU 0`), the same on every rank, its
//!   process name kept beside it (real: HTA's `sampled_2rank`);
//! - a check rule with no rows to judge is "no data", never a pass.

use crate::common::*;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use xprof_sql::query::check::{Status, parse_rules, run_rules};
use xprof_sql::query::{OpenOptions, ProfileSession};

/// The raw JSON of a (gzipped) Chrome trace.
fn raw_trace(path: &Path) -> serde_json::Value {
    serde_json::from_str(&raw_text(path)).unwrap()
}

/// Each event of a trace's `traceEvents` as a JSON value, with its `ts`
/// and `dur` in exact ps from the text as written (serde's float parsing
/// may be an ulp off, which at these magnitudes is a ns).
fn raw_events(path: &Path) -> Vec<(serde_json::Value, Option<i128>, Option<i128>)> {
    use serde_json::value::RawValue;
    type RawMap<'a> = std::collections::HashMap<String, &'a RawValue>;
    let text = raw_text(path);
    let top: RawMap<'_> = serde_json::from_str(&text).unwrap();
    let events: Vec<RawMap<'_>> = serde_json::from_str(top["traceEvents"].get()).unwrap();
    events
        .iter()
        .map(|e| {
            let object: serde_json::Map<String, serde_json::Value> = e
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::from_str(v.get()).unwrap()))
                .collect();
            let time = |k: &str| e.get(k).map(|v| us_text_to_ps(v.get().trim_matches('"')));
            (serde_json::Value::Object(object), time("ts"), time("dur"))
        })
        .collect()
}

/// Per GPU ordinal (`process_labels` `GPU n`), the union of the intervals
/// of its events of the given `cat`s, in ps, from the raw file.
fn raw_busy_ps(path: &Path, cats: &[&str]) -> BTreeMap<i64, i64> {
    let events = raw_events(path);
    let mut gpu_of_pid: BTreeMap<String, i64> = BTreeMap::new();
    for (e, _, _) in &events {
        if e["ph"] == "M" && e["name"] == "process_labels" {
            let labels = e["args"]["labels"].as_str().unwrap_or("");
            if let Some(n) = labels.strip_prefix("GPU ") {
                gpu_of_pid.insert(e["pid"].to_string(), n.trim().parse().unwrap());
            }
        }
    }
    let origin = events.iter().filter_map(|e| e.1).min().unwrap();
    let mut spans: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for (e, ts, dur) in &events {
        let cat = e["cat"].as_str().unwrap_or("");
        if e["ph"] != "X" || !cats.contains(&cat) {
            continue;
        }
        let gpu = gpu_of_pid[&e["pid"].to_string()];
        let start = (ts.unwrap() - origin) as i64;
        spans
            .entry(gpu)
            .or_default()
            .push((start, start + dur.unwrap() as i64));
    }
    spans
        .into_iter()
        .map(|(gpu, mut s)| (gpu, union_sweep_len(&mut s)))
        .collect()
}

fn nccl_data() -> PathBuf {
    fixture("hta/nccl_data/nccl_data.json.gz")
}

/// `device_busy` of a real Kineto trace with `gpu_user_annotation` ranges
/// (`ProfilerStep#N`, `DistributedDataParallel.forward`, …) on its GPU
/// streams is the union of the GPU's kernels, copies and sets read from
/// the raw JSON, to the ps; the annotations alone would cover far more.
#[test]
fn gpu_busy_time_is_kernels_copies_and_sets_not_annotations() {
    let path = nccl_data();
    let want = raw_busy_ps(&path, &["kernel", "gpu_memcpy", "gpu_memset"]);
    let with_annotations = raw_busy_ps(
        &path,
        &["kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"],
    );
    assert!(!want.is_empty());
    // The fixture is one where counting annotations changes the answer.
    assert!(want.iter().any(|(g, b)| with_annotations[g] > *b));
    let rows = tokio_run(query_rows(
        &[&path],
        "SELECT d.ordinal, b.busy_ps, b.span_ps FROM device_busy b \
         JOIN devices d USING (trace_id, device_id) WHERE b.device_kind = 'gpu' ORDER BY 1",
    ));
    let got: BTreeMap<i64, i64> = rows
        .iter()
        .map(|r| (i(r, "ordinal"), i(r, "busy_ps")))
        .collect();
    assert_eq!(got, want);
    for r in &rows {
        assert!(i(r, "busy_ps") <= i(r, "span_ps"), "{r:?}");
    }
}

/// The annotations stay queryable: every `gpu_user_annotation` event of
/// the raw file is an event of a `gpu_annotations` track named after its
/// stream's `thread_name` (Kineto's `stream 7 `, trailing blank dropped),
/// with its name and exact duration; no other track kind holds
/// one, and the stream tracks hold only kernels, copies and sets.
#[test]
fn gpu_annotations_are_spans_on_their_own_tracks() {
    let path = nccl_data();
    let events = raw_events(&path);
    let thread_name: BTreeMap<(String, String), String> = events
        .iter()
        .filter(|(e, _, _)| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|(e, _, _)| {
            let name = e["args"]["name"].as_str().unwrap().trim_end().to_string();
            ((e["pid"].to_string(), e["tid"].to_string()), name)
        })
        .collect();
    let mut want: Vec<(String, String, i64)> = events
        .iter()
        .filter(|(e, _, _)| e["cat"] == "gpu_user_annotation")
        .map(|(e, _, dur)| {
            let stream = &thread_name[&(e["pid"].to_string(), e["tid"].to_string())];
            (
                format!("{stream} annotations"),
                e["name"].as_str().unwrap().to_string(),
                dur.unwrap() as i64,
            )
        })
        .collect();
    want.sort();
    assert_eq!(want.len(), 30);
    let rows = tokio_run(query_rows(
        &[&path],
        "SELECT t.name AS track, t.kind, e.name, e.dur_ps, a.str_value AS cat \
         FROM events e JOIN tracks t USING (trace_id, track_id) \
         JOIN event_args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id AND a.key = 'cat' \
         WHERE a.str_value = 'gpu_user_annotation' OR t.kind IN ('gpu_annotations', 'stream')",
    ));
    let mut got: Vec<(String, String, i64)> = rows
        .iter()
        .filter(|r| s(r, "cat") == "gpu_user_annotation")
        .map(|r| {
            assert_eq!(s(r, "kind"), "gpu_annotations", "{r:?}");
            (s(r, "track"), s(r, "name"), i(r, "dur_ps"))
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    for r in rows.iter().filter(|r| s(r, "kind") == "stream") {
        assert!(
            ["kernel", "gpu_memcpy", "gpu_memset"].contains(&s(r, "cat").as_str()),
            "{r:?}"
        );
    }
}

/// Kineto names every GPU's process after the Python process: HTA's two
/// real ranks name theirs `pyper:trainer:0:0` and `pyper:trainer:0:1`. A
/// GPU is named by its device (its `process_labels`), so the same GPU of
/// two ranks has one name; the process name is kept in `process_name`.
#[test]
fn gpus_are_named_by_device_the_same_on_every_rank() {
    let folder = fixture("hta/sampled_2rank");
    let mut want: Vec<(String, String, String)> = Vec::new();
    for rank in 0..2 {
        let raw = raw_trace(&folder.join(format!("sampled_rank-{rank}.json.gz")));
        let events = raw["traceEvents"].as_array().unwrap();
        let named = |what: &str, key: &str| -> BTreeMap<String, String> {
            events
                .iter()
                .filter(|e| e["ph"] == "M" && e["name"] == what)
                .map(|e| {
                    (
                        e["pid"].to_string(),
                        e["args"][key].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        let (names, labels) = (
            named("process_name", "name"),
            named("process_labels", "labels"),
        );
        for (pid, label) in &labels {
            if label.starts_with("GPU") {
                want.push((
                    format!("sampled_rank-{rank}"),
                    label.clone(),
                    names[pid].clone(),
                ));
            }
        }
    }
    want.sort();
    let rows = tokio_run(query_rows(
        &[&folder],
        "SELECT t.host, d.name, d.process_name FROM devices d JOIN traces t USING (trace_id) \
         WHERE d.kind = 'gpu'",
    ));
    let mut got: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (s(r, "host"), s(r, "name"), s(r, "process_name")))
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert!(want.iter().any(|w| w.2 == "pyper:trainer:0:1"));
    // The host process keeps its own name.
    let hosts = tokio_run(query_rows(
        &[&folder],
        "SELECT DISTINCT name = process_name AS same FROM devices \
         WHERE kind = 'host' AND process_name IS NOT NULL",
    ));
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0]["same"], true);
}

/// The real `nccl_data` trace's text with its `deviceProperties` entries
/// repeated `copies` times: top-level metadata as long as PyTorch 2.x
/// writes for a large node (a real trace had `traceEvents` at byte
/// 26,259), in front of the real events.
fn long_metadata_trace(copies: usize) -> Vec<u8> {
    let raw = raw_trace(&nccl_data());
    let mut top = raw.as_object().unwrap().clone();
    let events = top.remove("traceEvents").unwrap();
    let devices = top["deviceProperties"].as_array().unwrap().clone();
    let mut many = Vec::new();
    for _ in 0..copies {
        many.extend(devices.iter().cloned());
    }
    top.insert("deviceProperties".into(), serde_json::Value::Array(many));
    // Keys in Kineto's order: metadata first, then the events.
    let mut text = serde_json::to_string_pretty(&serde_json::Value::Object(top)).unwrap();
    text.truncate(text.trim_end().len() - 1);
    text.push_str(",\n  \"traceEvents\": ");
    text.push_str(&serde_json::to_string(&events).unwrap());
    text.push_str("\n}\n");
    text.into_bytes()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

/// A Kineto trace saved as `NAME.json.gz` whose `traceEvents` comes after
/// 26 KiB of metadata is a Chrome trace, as a file and as the one file of
/// a folder, with every event of the real trace.
#[test]
fn a_kineto_trace_with_long_metadata_reads_under_any_name() {
    let text = long_metadata_trace(8);
    let at = text
        .windows(13)
        .position(|w| w == b"\"traceEvents\"")
        .unwrap();
    assert!(at > 26_259, "traceEvents at byte {at}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bert_h100.json.gz");
    std::fs::write(&file, gzip(&text)).unwrap();
    let raw_events = raw_trace(&nccl_data())["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" || e["ph"] == "i")
        .count() as i64;
    let sql = "SELECT t.source_format, count(*) AS n FROM events e JOIN traces t USING (trace_id) \
               JOIN tracks k USING (trace_id, track_id) \
               WHERE k.kind IN ('thread', 'stream', 'gpu_annotations') GROUP BY 1";
    for input in [file.as_path(), dir.path()] {
        let rows = tokio_run(query_rows(&[input], sql));
        assert_eq!(rows.len(), 1, "{input:?}");
        assert_eq!(s(&rows[0], "source_format"), "chrome_trace");
        assert_eq!(i(&rows[0], "n"), raw_events, "{input:?}");
    }
}

/// Metadata past what detection reads (1 MiB) cannot be told from other
/// JSON: the error says to name the format, and `--input-format
/// chrome_trace` reads it, in `query` and `convert`.
#[test]
fn a_format_detection_cannot_tell_can_be_named() {
    let text = long_metadata_trace(400);
    let at = text
        .windows(13)
        .position(|w| w == b"\"traceEvents\"")
        .unwrap();
    assert!(at > xprof_sql::convert::registry::SNIFF_BYTES, "{at}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big_node.json");
    std::fs::write(&file, &text).unwrap();
    let f = file.to_str().unwrap();
    let (code, _, err) = cli(&["query", f, "-e", "SELECT count(*) FROM events"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("big_node.json") && err.contains("--input-format"),
        "{err}"
    );
    let (code, out, err) = cli(&[
        "query",
        f,
        "--input-format",
        "chrome_trace",
        "--format",
        "csv",
        "-e",
        "SELECT source_format FROM traces",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().nth(1), Some("chrome_trace"), "{out}");
    let ds = dir.path().join("ds");
    let (code, _, err) = cli(&[
        "convert",
        f,
        "-o",
        ds.to_str().unwrap(),
        "--input-format",
        "chrome_trace",
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = cli(&["query", f, "--input-format", "no_such", "-e", "SELECT 1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("chrome_trace") && err.contains("xspace"),
        "{err}"
    );
}

/// A rule whose inputs hold no rows is "no data", not a pass. A real
/// PyTorch trace checked against another real PyTorch trace: the HLO and
/// step rules read views that are empty for PyTorch traces, and the
/// kernel rule judges only kernels both sides ran.
#[tokio::test]
async fn rules_with_no_data_are_not_passes() {
    let now = gpu_fixture_json("torch_kineto.json");
    let base = fixture("hta/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
    let mut session = ProfileSession::new();
    for input in [&now, &base] {
        session
            .open(std::slice::from_ref(input), &OpenOptions::default())
            .await
            .unwrap();
    }
    // Kernel names of each side, each trace alone.
    let names = |p: PathBuf| async move {
        let rows = query_rows(&[p], "SELECT DISTINCT name FROM gpu_kernels").await;
        rows.iter()
            .map(|r| s(r, "name"))
            .collect::<std::collections::BTreeSet<_>>()
    };
    let (a, b) = (names(base.clone()).await, names(now.clone()).await);
    let shared = a.intersection(&b).count();
    let ready = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/checks/ready.sql");
    let rules = parse_rules(&ready, &std::fs::read_to_string(&ready).unwrap()).unwrap();
    let params: BTreeMap<String, String> = [("current", "0"), ("baseline", "1")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let report = run_rules(&session, &ready, &rules, &params, 5).await;
    let status: BTreeMap<&str, &Status> = report
        .results
        .iter()
        .map(|r| (r.rule.name.as_str(), &r.status))
        .collect();
    for name in [
        "op_regressions",
        "new_ops",
        "vanished_ops",
        "step_time_p90",
        "region_occupancy_floor",
    ] {
        assert!(
            matches!(status[name], Status::NoData(_)),
            "{name}: {:?}",
            status[name]
        );
    }
    let kernel = status["kernel_regressions"];
    assert_eq!(
        shared == 0,
        matches!(kernel, Status::NoData(_)),
        "{kernel:?}"
    );
    // Every rule that passed had rows to judge; none could not run.
    for r in &report.results {
        assert!(!matches!(r.status, Status::Error(_)), "{r:?}");
    }
    assert!(report.exit_code() != 0);
}

fn gpu_fixture_json(name: &str) -> PathBuf {
    fixture(&format!("gpu/{name}"))
}

/// The command: a rule with no data prints NODATA, counts as no data in
/// JUnit (`skipped`) and JSON, and exits 3 when nothing failed or errored;
/// rules that need a baseline say so when none is given, never ERROR.
#[test]
fn the_command_reports_no_data_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("steps.sql");
    std::fs::write(
        &rules,
        "-- check: step_ceiling\n-- every step under 1 s\n\
         SELECT * FROM step_stats WHERE dur_ps > 1e12;\n\
         -- check: ops_ran\nSELECT 1 WHERE (SELECT count(*) FROM events) = 0;\n",
    )
    .unwrap();
    let input = fixture("gpu/torch_kineto.json");
    let junit = dir.path().join("junit.xml");
    let (code, out, err) = cli(&[
        "check",
        input.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("NODATA step_ceiling"), "{out}");
    assert!(out.contains("PASS   ops_ran"), "{out}");
    assert!(
        out.contains("2 rules: 1 passed, 0 failed, 0 could not run, 1 had no data"),
        "{out}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<skipped message=\"no data: "), "{xml}");
    assert!(xml.contains("skipped=\"1\""), "{xml}");
    // The ready rules without a baseline: those that compare say why.
    let ready = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/checks/ready.sql");
    let jax = cpu_fixture("jax_cpu_mlp_20steps_w256");
    let (_, out, _) = cli(&[
        "check",
        jax.to_str().unwrap(),
        "--rules",
        ready.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    for r in doc["rules"].as_array().unwrap() {
        assert_ne!(r["status"], "error", "{r}");
        if r["name"].as_str().unwrap().contains("regressions") {
            assert_eq!(r["status"], "no_data", "{r}");
            assert!(r["error"].as_str().unwrap().contains("--baseline"), "{r}");
        }
    }
}
