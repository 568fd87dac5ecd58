//! The analysis views (`hlo_stats`, `kernel_stats`, `step_stats`, ...)
//! against XProf 2.24.2's own tools on the same files, and against
//! answers computed here independently from the input.

use crate::common;

use common::*;
use prost::Message;
use xprof_testdata::{TpuSpec, gpu_space_over_hlo, tpu_self_time_space, tpu_space};

/// The synthetic TPU profile XProf's TPU answers were computed on
/// (`tests/fixtures/tpu/expected/`). The input is synthetic (no TPU here):
/// `tpu_space` follows the documented TPU plane and line names. The
/// committed file must be what the generator writes today, so the expected
/// files stay tied to it; `XPROF_SQL_BLESS=1` rewrites it.
#[test]
fn synthetic_tpu_fixture_is_the_generators_output() {
    let bytes = tpu_space(&TpuSpec::default()).encode_to_vec();
    assert_generated_fixture(
        "tpu/synthetic_tpu.xplane.pb",
        &bytes,
        "tpu_space(TpuSpec::default())",
        "tests/fixtures/tpu/README.md",
    );
}

/// The synthetic TPU plane that tells XProf's TPU self-time rule from
/// nesting on raw times (tests/fixtures/tpu/expected/NOTES.md), which
/// XProf's `synthetic_self_time.tool.hlo_stats.json` was computed on.
#[test]
fn synthetic_self_time_fixture_is_the_generators_output() {
    assert_generated_fixture(
        "tpu/synthetic_self_time.xplane.pb",
        &tpu_self_time_space().encode_to_vec(),
        "tpu_self_time_space()",
        "tests/fixtures/tpu/README.md",
    );
}

/// The synthetic GPU profile over real HLO modules that XProf's
/// `synthetic_gpu_hlo.tool.hlo_stats.json` was computed on: the device
/// plane is synthetic (one kernel per HLO instruction), the HLO protos are
/// the real ones of jax_gpu (H200) and jax_cpu_mlp_20steps_w256 (CPU).
/// The committed file must be what the generator writes today;
/// `XPROF_SQL_BLESS=1` rewrites it.
#[test]
fn synthetic_gpu_hlo_fixture_is_the_generators_output() {
    let sources: Vec<_> = [
        "gpu/jax_gpu.xplane.pb",
        "xspace/jax_cpu_mlp_20steps_w256.xplane.pb",
    ]
    .iter()
    .map(|rel| {
        let bytes = std::fs::read(fixture(rel)).unwrap();
        xprof_testdata::xspace_proto::XSpace::decode(bytes.as_slice()).unwrap()
    })
    .collect();
    let bytes = gpu_space_over_hlo(&sources).encode_to_vec();
    assert_generated_fixture(
        "gpu/synthetic_gpu_hlo.xplane.pb",
        &bytes,
        "gpu_space_over_hlo(jax_gpu, jax_cpu_mlp_20steps_w256)",
        "tests/fixtures/gpu/README.md",
    );
}

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The rows of `sql` over the profile at `path`, as JSON objects with
/// every column (NULL as null), so `num` and `text` tell a missing column.
async fn rows(path: &Path, sql: &str) -> Vec<Row> {
    query_rows_with_nulls(&[path], sql).await
}

/// A fixture and the XProf answer file next to it.
fn expected(fixture_rel: &str, suffix: &str) -> (PathBuf, Value) {
    let path = fixture(fixture_rel);
    let stem = path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .trim_end_matches(".xplane.pb")
        .to_string();
    let file = path
        .parent()
        .unwrap()
        .join("expected")
        .join(format!("{stem}.{suffix}"));
    // Large answers are committed gzipped (`<stem>.<suffix>.gz`).
    let gz = file.with_file_name(format!("{stem}.{suffix}.gz"));
    let text = if gz.exists() {
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()),
            &mut text,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
        text
    } else {
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
    };
    (path, serde_json::from_str(&text).unwrap())
}

/// A gviz DataTable (`{"cols": [{"id"}], "rows": [{"c": [{"v"}]}]}`) as
/// rows keyed by column id.
fn gviz_rows(table: &Value) -> Vec<Row> {
    let ids: Vec<&str> = table["cols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            ids.iter()
                .zip(r["c"].as_array().unwrap())
                .map(|(id, c)| (id.to_string(), c.get("v").cloned().unwrap_or(Value::Null)))
                .collect()
        })
        .collect()
}

/// A number of one of our rows (explicit NULLs, see `rows`) or of XProf's
/// gviz tables (every column present): a column that is not there fails
/// the test, so a dropped or renamed column never compares equal to
/// XProf's zeros; NULL is NaN, equal only to NULL (see `close`, `exact`).
fn num(v: Option<&Value>) -> f64 {
    match v {
        Some(Value::Number(n)) => n.as_f64().unwrap(),
        Some(Value::String(s)) => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
        Some(Value::Null) => f64::NAN,
        None => panic!("no such column"),
        Some(other) => panic!("not a number: {other}"),
    }
}

/// A number of XProf's protobuf JSON, which leaves out fields that are
/// zero: absent is 0 there.
fn xnum(v: Option<&Value>) -> f64 {
    match v {
        None | Some(Value::Null) => 0.0,
        some => num(some),
    }
}

/// A text column, as `num`: absent fails, NULL is the empty text (XProf's
/// gviz tables give NULL and "" for the same thing).
fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => String::new(),
        None => panic!("no such column"),
        Some(other) => other.to_string(),
    }
}

/// An integer column (counts, ranks, bytes, registers): equal exactly, or
/// both NULL.
fn exact(what: &str, ours: f64, xprof: f64) {
    if ours.is_nan() && xprof.is_nan() {
        return;
    }
    assert!(
        ours == xprof && ours.fract() == 0.0,
        "{what}: ours {ours}, XProf {xprof}"
    );
}

/// The text of XProf's `source_info` cell: `<div class='source-info-cell'
/// title='STACK'>file:line</div>` or plain text.
fn source_cell_text(cell: &str) -> String {
    match (cell.rfind("'>"), cell.rfind("</div>")) {
        (Some(open), Some(close)) if open + 2 <= close => cell[open + 2..close].to_string(),
        _ => cell.to_string(),
    }
}

/// Every HLO instruction of the real modules in synthetic_gpu_hlo against
/// XProf 2.24.2's hlo_stats row for it (XProf names each op from the
/// instruction: `HloInstruction::ToCategory`, `ToString` with its print
/// options, `TfOpFullname`, the source of the metadata or stack). The
/// device plane is synthetic, the HLO real (jax_gpu on an H200 and a CPU
/// MLP). Keyed by (program, instruction), so one wrong field names itself.
#[tokio::test]
async fn hlo_instructions_are_xprofs() {
    let (path, xprof) = expected("gpu/synthetic_gpu_hlo.xplane.pb", "tool.hlo_stats.json");
    let want = gviz_rows(&xprof);
    let got = rows(
        &path,
        "SELECT program_id, name, category, expression, tf_op, source \
         FROM hlo_instructions ORDER BY program_id, name",
    )
    .await;
    let mut ours = std::collections::HashMap::new();
    for g in &got {
        ours.insert((text(g.get("program_id")), text(g.get("name"))), g);
    }
    // Every instruction ran once, so XProf has a row for each.
    assert_eq!(got.len(), want.len(), "instructions");
    let mut wrong = Vec::new();
    for w in &want {
        let key = (text(w.get("program_id")), text(w.get("hlo_op_name")));
        let g = ours
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} not in hlo_instructions"));
        for (col, theirs) in [
            ("category", text(w.get("category"))),
            ("expression", text(w.get("hlo_op_expression"))),
            ("tf_op", text(w.get("tf_op_name"))),
            ("source", source_cell_text(&text(w.get("source_info")))),
        ] {
            if text(g.get(col)) != theirs {
                wrong.push(format!(
                    "{key:?} {col}:\n  ours  {}\n  XProf {theirs}",
                    text(g.get(col))
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} differences:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Within 0.1% (the tolerance for times), or both near zero.
fn close(what: &str, ours: f64, xprof: f64) {
    if ours.is_nan() && xprof.is_nan() {
        return;
    }
    let tolerance = 1e-3 * xprof.abs().max(ours.abs()) + 1e-9;
    assert!(
        (ours - xprof).abs() <= tolerance,
        "{what}: ours {ours}, XProf {xprof}"
    );
}

/// XProf 2.24.2's hlo_stats tool (`<stem>.tool.hlo_stats.json`, made by
/// tests/fixtures/make_view_expected.py) against the `hlo_stats` view, row
/// by row in rank order, every column. TPU (synthetic): from the op
/// metadata's stats. GPU: category, expression, framework op and source
/// come from the HLO instruction (`hlo_instructions`), and an op that is no
/// instruction of its program is left out, as XProf does: the real jax_gpu
/// capture's kernels all name the CUDA graph `command_buffer_1`, so both
/// sides are empty there; synthetic_gpu_hlo runs one kernel per
/// instruction of real modules. CPU: XProf has no device ops; the view's
/// rows there are the host's XLA ops, an addition.
#[tokio::test]
async fn hlo_stats_is_xprofs() {
    // `compare_cost`: on synthetic_gpu_hlo the kernels carry no `flops` /
    // `bytes_accessed` stats, and XProf runs XLA's GPU cost model over the
    // HLO instead (rates, and `bound_by` from its memory breakdown, e.g.
    // `Shm/L1`); the tables carry what the profile measured, not a cost
    // model, so rates and `bound_by` are compared where the profile has
    // them.
    for (rel, compare_cost) in [
        ("tpu/synthetic_tpu.xplane.pb", true),
        ("tpu/synthetic_self_time.xplane.pb", true),
        ("gpu/jax_pallas.xplane.pb", true),
        ("gpu/jax_gpu.xplane.pb", true),
        ("gpu/synthetic_gpu_hlo.xplane.pb", false),
        ("xspace/jax_cpu_mlp_5steps_w128.xplane.pb", true),
        ("xspace/jax_cpu_mlp_20steps_w256.xplane.pb", true),
        ("xspace/jax_cpu_nested_4steps.xplane.pb", true),
    ] {
        let (path, xprof) = expected(rel, "tool.hlo_stats.json");
        let want = gviz_rows(&xprof);
        let got = rows(
            &path,
            "SELECT * FROM hlo_stats WHERE device_kind <> 'host' ORDER BY rank",
        )
        .await;
        assert_eq!(got.len(), want.len(), "{rel}: rows");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let at = format!("{rel} row {i}");
            exact(&at, num(g.get("rank")), num(w.get("rank")));
            assert_eq!(text(g.get("program_id")), text(w.get("program_id")), "{at}");
            assert_eq!(
                text(g.get("hlo_op_name")),
                text(w.get("hlo_op_name")),
                "{at}"
            );
            exact(&at, num(g.get("occurrences")), num(w.get("occurrences")));
            assert_eq!(text(g.get("category")), text(w.get("category")), "{at}");
            assert_eq!(
                text(g.get("expression")),
                text(w.get("hlo_op_expression")),
                "{at}"
            );
            assert_eq!(text(g.get("tf_op")), text(w.get("tf_op_name")), "{at}");
            if compare_cost {
                assert_eq!(text(g.get("bound_by")), text(w.get("bound_by")), "{at}");
            }
            assert_eq!(
                text(g.get("source")),
                source_cell_text(&text(w.get("source_info"))),
                "{at}"
            );
            for (ours, theirs) in [
                ("total_time_us", "total_time"),
                ("avg_time_us", "avg_time"),
                ("total_self_time_us", "total_self_time"),
                ("avg_self_time_us", "avg_self_time"),
                ("self_time_pct", "total_self_time_percent"),
                (
                    "cumulative_self_time_pct",
                    "cumulative_total_self_time_percent",
                ),
            ] {
                close(
                    &format!("{at} {ours}"),
                    num(g.get(ours)),
                    num(w.get(theirs)),
                );
            }
            if compare_cost {
                for (ours, theirs) in [
                    ("model_gflops_per_s", "model_flop_rate"),
                    ("measured_gflops_per_s", "normalized_flop_rate"),
                    ("memory_gibps", "measured_memory_bw"),
                    ("operational_intensity", "operational_intensity"),
                ] {
                    close(
                        &format!("{at} {ours}"),
                        num(g.get(ours)),
                        num(w.get(theirs)),
                    );
                }
            }
        }
    }
}

/// `xprof get_hlo_stats` (XProf 2.24.2's CLI, `gpu/expected/<stem>.hlo_stats.json`)
/// on the real GPU captures: jax_gpu has no HLO op XProf can name (its
/// kernels all run the CUDA graph `command_buffer_1`), jax_pallas one, the
/// Pallas call; the device rows of `hlo_stats` are the same.
#[tokio::test]
async fn hlo_stats_is_xprofs_cli_answer() {
    for stem in REAL_GPU {
        let (path, xprof) = expected(&format!("gpu/{stem}.xplane.pb"), "hlo_stats.json");
        let records = xprof["records"].as_array().unwrap();
        exact(stem, records.len() as f64, xnum(xprof.get("total_records")));
        let got = rows(
            &path,
            "SELECT * FROM hlo_stats WHERE device_kind <> 'host' ORDER BY rank",
        )
        .await;
        assert_eq!(got.len(), records.len(), "{stem}: rows");
        for (g, w) in got.iter().zip(records) {
            let at = format!("{stem} {}", text(w.get("op_name")));
            exact(&at, num(g.get("rank")), xnum(w.get("rank")));
            exact(&at, num(g.get("program_id")), xnum(w.get("program_id")));
            exact(&at, num(g.get("occurrences")), xnum(w.get("occurrences")));
            assert_eq!(text(g.get("hlo_op_name")), text(w.get("op_name")), "{at}");
            assert_eq!(text(g.get("category")), text(w.get("category")), "{at}");
            assert_eq!(text(g.get("bound_by")), text(w.get("bound_by")), "{at}");
            for (ours, theirs) in [
                ("total_time_us", "total_time_us"),
                ("total_self_time_us", "total_self_time_us"),
                ("self_time_pct", "self_time_percent"),
            ] {
                close(
                    &format!("{at} {ours}"),
                    num(g.get(ours)),
                    xnum(w.get(theirs)),
                );
            }
        }
    }
}

/// The host rows of `hlo_stats` (XLA on CPU), which XProf's tool does not
/// have (it is empty for CPU-only profiles), against the raw XSpace read
/// here with prost: per (program, op) the host events carrying an `hlo_op`
/// stat (their own or their metadata's), counted and summed; self time is
/// the whole time; the percentage is of the larger of the summed op time
/// and the span from the first op's start to the last op's end; the rank
/// orders by self time, then op, then program.
#[tokio::test]
async fn hlo_stats_host_rows_are_the_raw_host_ops() {
    use xprof_testdata::xspace_proto::{XSpace, x_event, x_stat};
    for stem in REAL_CPU {
        let path = cpu_fixture(stem);
        let space = XSpace::decode(&*std::fs::read(&path).unwrap()).unwrap();
        // (program, op) -> (occurrences, total ps)
        let mut ops = std::collections::BTreeMap::<(String, String), (i64, i64)>::new();
        let (mut first_ps, mut last_ps, mut sum_ps) = (i64::MAX, i64::MIN, 0i64);
        for plane in space.planes.iter().filter(|p| p.name == "/host:CPU") {
            let text_of = |v: &Option<x_stat::Value>| match v {
                Some(x_stat::Value::StrValue(s)) => Some(s.clone()),
                Some(x_stat::Value::RefValue(r)) => {
                    Some(plane.stat_metadata[&(*r as i64)].name.clone())
                }
                Some(x_stat::Value::Int64Value(n)) => Some(n.to_string()),
                Some(x_stat::Value::Uint64Value(n)) => Some(n.to_string()),
                _ => None,
            };
            for line in &plane.lines {
                for ev in &line.events {
                    let metadata = plane.event_metadata.get(&ev.metadata_id);
                    let (mut op, mut program) = (None, None);
                    for stat in ev
                        .stats
                        .iter()
                        .chain(metadata.into_iter().flat_map(|m| &m.stats))
                    {
                        match plane.stat_metadata[&(stat.metadata_id as i64)]
                            .name
                            .as_str()
                        {
                            "hlo_op" if op.is_none() => op = text_of(&stat.value),
                            "program_id" if program.is_none() => program = text_of(&stat.value),
                            _ => {}
                        }
                    }
                    let Some(op) = op else { continue };
                    let Some(x_event::Data::OffsetPs(offset_ps)) = ev.data else {
                        panic!("{stem}: an aggregated host op")
                    };
                    let begin_ps = line.timestamp_ns * 1000 + offset_ps;
                    first_ps = first_ps.min(begin_ps);
                    last_ps = last_ps.max(begin_ps + ev.duration_ps);
                    sum_ps += ev.duration_ps;
                    let entry = ops.entry((program.unwrap_or_default(), op)).or_default();
                    entry.0 += 1;
                    entry.1 += ev.duration_ps;
                }
            }
        }
        let device_ps = sum_ps.max(last_ps - first_ps);
        let mut want: Vec<_> = ops.into_iter().collect();
        want.sort_by(|((pa, oa), (_, ta)), ((pb, ob), (_, tb))| {
            tb.cmp(ta).then(oa.cmp(ob)).then(pa.cmp(pb))
        });
        assert!(want.len() > 5, "{stem}: {} host ops", want.len());
        let got = rows(
            &path,
            "SELECT * FROM hlo_stats WHERE device_kind = 'host' ORDER BY rank",
        )
        .await;
        assert_eq!(got.len(), want.len(), "{stem}: rows");
        for (i, (g, ((program, op), (n, total_ps)))) in got.iter().zip(&want).enumerate() {
            let at = format!("{stem} rank {}", i + 1);
            exact(&at, num(g.get("rank")), (i + 1) as f64);
            assert_eq!(text(g.get("hlo_op_name")), *op, "{at}");
            assert_eq!(text(g.get("program_id")), *program, "{at}");
            exact(&at, num(g.get("occurrences")), *n as f64);
            let total_us = *total_ps as f64 / 1e6;
            assert_eq!(num(g.get("total_time_us")), total_us, "{at}");
            assert_eq!(num(g.get("total_self_time_us")), total_us, "{at}");
            let pct = 100.0 * *total_ps as f64 / device_ps as f64;
            let ours = num(g.get("self_time_pct"));
            assert!(
                (ours - pct).abs() <= 1e-9 * pct,
                "{at}: {ours} % vs {pct} %"
            );
        }
    }
}

/// XProf 2.24.2's kernel_stats tool against the `kernel_stats` view on the
/// real GPU captures: every column, row by row (the op of a kernel whose
/// HLO instruction is known is named from the instruction's metadata, as
/// XProf: jax_pallas's `jit(add)/pallas_call`). The CPU and TPU fixtures
/// have no GPU kernels: both sides are empty.
#[tokio::test]
async fn kernel_stats_is_xprofs() {
    for rel in [
        "gpu/jax_gpu.xplane.pb",
        "gpu/jax_pallas.xplane.pb",
        "tpu/synthetic_tpu.xplane.pb",
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
        "xspace/jax_cpu_mlp_20steps_w256.xplane.pb",
        "xspace/jax_cpu_nested_4steps.xplane.pb",
    ] {
        let (path, xprof) = expected(rel, "tool.kernel_stats.json");
        let want = gviz_rows(&xprof);
        let got = rows(&path, "SELECT * FROM kernel_stats ORDER BY rank").await;
        assert_eq!(got.len(), want.len(), "{rel}: rows");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let at = format!("{rel} row {i}");
            for col in [
                "kernel_name",
                "block_dim",
                "grid_dim",
                "is_op_tensor_core_eligible",
                "is_kernel_using_tensor_core",
                "op_name",
            ] {
                assert_eq!(text(g.get(col)), text(w.get(col)), "{at} {col}");
            }
            for col in ["rank", "registers_per_thread", "shmem_bytes", "occurrences"] {
                exact(&format!("{at} {col}"), num(g.get(col)), num(w.get(col)));
            }
            for col in [
                "total_duration_us",
                "avg_duration_us",
                "min_duration_us",
                "max_duration_us",
                "occupancy_pct",
            ] {
                close(&format!("{at} {col}"), num(g.get(col)), num(w.get(col)));
            }
        }
    }
}

/// `xprof get_kernel_stats --include_summary=True` (the CLI; committed as
/// `gpu/expected/<stem>.kernel_stats.json`): per kernel name the total and
/// count, and the device time as the union of the kernels' intervals,
/// which is `device_busy.busy_ps` and `busy_ps` per stream.
#[tokio::test]
async fn device_busy_is_xprofs_device_time() {
    for rel in ["gpu/jax_gpu.xplane.pb", "gpu/jax_pallas.xplane.pb"] {
        let (path, xprof) = expected(rel, "kernel_stats.json");
        let busy = rows(
            &path,
            "SELECT busy_ps FROM device_busy WHERE device_kind = 'gpu'",
        )
        .await;
        assert_eq!(busy.len(), 1, "{rel}");
        exact(
            rel,
            num(busy[0].get("busy_ps")) / 1000.0,
            xnum(xprof.get("total_device_duration_ns")),
        );
        let by_line = rows(
            &path,
            "SELECT track_name, busy_ps(ts_ps, end_ps) AS busy FROM device_ops GROUP BY track_name",
        )
        .await;
        let want = xprof["by_line_duration_ns"].as_object().unwrap();
        assert_eq!(by_line.len(), want.len(), "{rel}");
        for r in &by_line {
            let line = text(r.get("track_name"));
            exact(
                &format!("{rel} {line}"),
                num(r.get("busy")) / 1000.0,
                xnum(want.get(&line)),
            );
        }
        let per_kernel = rows(
            &path,
            "SELECT name, count(*) AS n, sum(dur_ps) AS total FROM device_ops GROUP BY name",
        )
        .await;
        let records = xprof["kernel_records"].as_array().unwrap();
        assert_eq!(per_kernel.len(), records.len(), "{rel}");
        for r in records {
            let name = text(r.get("kernel_name"));
            let ours = per_kernel
                .iter()
                .find(|k| text(k.get("name")) == name)
                .unwrap_or_else(|| panic!("{rel}: no {name}"));
            exact(&name, num(ours.get("n")), xnum(r.get("execution_count")));
            close(
                &name,
                num(ours.get("total")) / 1e6,
                xnum(r.get("total_duration_us")),
            );
        }
    }
}

/// `xprof get_device_time_attribution` on the synthetic TPU file: per line
/// name, the union over both TPU planes of the events' whole-ns intervals
/// (XProf truncates each event to ns first), which `busy_ps` per track name
/// gives.
#[tokio::test]
async fn busy_ps_per_line_is_xprofs_device_time_attribution() {
    for command in ["get_device_time_attribution", "get_kernel_stats"] {
        let (path, xprof) = expected(
            "tpu/synthetic_tpu.xplane.pb",
            &format!("cli.{command}.json"),
        );
        let got = rows(
            &path,
            "SELECT t.name, coalesce(busy_ps(e.ts_ps / 1000, e.ts_ps / 1000 + e.dur_ps / 1000), 0) AS busy_ns \
         FROM events e JOIN tracks t USING (trace_id, track_id) \
         JOIN devices d USING (trace_id, device_id) WHERE d.kind = 'tpu' GROUP BY t.name",
        )
        .await;
        let want = xprof["by_line_duration_ns"].as_object().unwrap();
        assert_eq!(got.len(), want.len());
        for r in &got {
            let line = text(r.get("name"));
            exact(&line, num(r.get("busy_ns")), xnum(want.get(&line)));
        }
        let xla_ops = got
            .iter()
            .find(|r| text(r.get("name")) == "XLA Ops")
            .unwrap();
        exact(
            "XLA Ops",
            num(xla_ops.get("busy_ns")),
            xnum(xprof.get("total_device_duration_ns")),
        );
    }
}

/// XProf 2.24.2's overview_page step table (`[1]`) against `step_stats`.
/// The step time XProf shows is the host `train` marker on CPU profiles,
/// the union of the step's kernels on GPUs (the kernels whose launch is in
/// the step), and the `Steps` event on TPUs: `dur_ps` of the host or
/// device step and `busy_ps` of the GPU row. XProf drops the first and the
/// last step of a CPU/GPU profile with more than 5 steps as possibly
/// incomplete; `step_stats` keeps every step (a user filters), so the test
/// checks that exactly those two are extra. The average step time XProf
/// prints (`steptime_ms_average`, rounded) is the mean over its steps.
#[tokio::test]
async fn step_stats_are_xprofs_step_times() {
    for (rel, time_col) in [
        ("xspace/jax_cpu_mlp_5steps_w128.xplane.pb", "dur_ps"),
        ("xspace/jax_cpu_mlp_20steps_w256.xplane.pb", "dur_ps"),
        ("xspace/jax_cpu_nested_4steps.xplane.pb", "dur_ps"),
        ("gpu/jax_gpu.xplane.pb", "busy_ps"),
        ("gpu/jax_pallas.xplane.pb", "busy_ps"),
        ("tpu/synthetic_tpu.xplane.pb", "dur_ps"),
    ] {
        let (path, xprof) = expected(rel, "tool.overview_page.json");
        let table = &xprof[1];
        let want: Vec<(String, f64)> = gviz_rows(table)
            .iter()
            .map(|r| {
                let ms = match r.get("stepTimeMs") {
                    Some(v) => num(Some(v)),
                    None => num(r.get("tcComputeTimeMs")) + num(r.get("tcIdleTimeMs")),
                };
                (text(r.get("stepnum")), ms)
            })
            .collect();
        let tpu = rel.starts_with("tpu/");
        let key = if rel.starts_with("xspace/") {
            "step_name"
        } else {
            "CAST(step_num AS VARCHAR)"
        };
        let device = if rel.starts_with("gpu/") {
            "gpu"
        } else if tpu {
            "tpu"
        } else {
            "host"
        };
        let got = rows(
            &path,
            &format!(
                "SELECT {key} AS step, {time_col} AS time_ps, device_id FROM step_stats \
                 JOIN devices d USING (trace_id, device_id) WHERE d.kind = '{device}' \
                 ORDER BY start_ps, device_id"
            ),
        )
        .await;
        // TPU: one row per step and core, the same marker length on each.
        let mut ours: Vec<(String, f64)> = Vec::new();
        for r in &got {
            let step = text(r.get("step"));
            let ms = num(r.get("time_ps")) / 1e9;
            match ours.iter_mut().find(|(s, _)| *s == step) {
                Some((_, longest)) => *longest = longest.max(ms),
                None => ours.push((step, ms)),
            }
        }
        if !tpu && ours.len() > 5 {
            ours.remove(0);
            ours.pop();
        }
        assert_eq!(
            ours.iter().map(|(s, _)| s).collect::<Vec<_>>(),
            want.iter().map(|(s, _)| s).collect::<Vec<_>>(),
            "{rel}: steps"
        );
        for ((step, g), (_, w)) in ours.iter().zip(&want) {
            close(&format!("{rel} step {step}"), *g, *w);
        }
        let mean = ours.iter().map(|(_, ms)| ms).sum::<f64>() / ours.len() as f64;
        let printed = text(table["p"].get("steptime_ms_average"));
        let decimals = printed.split('.').nth(1).map_or(0, str::len);
        assert_eq!(format!("{mean:.decimals$}"), printed, "{rel}: average");
    }
}

/// XProf 2.24.2's framework_op_stats (`[0]`, the table with idle) against
/// the `framework_op_stats` view, every row. XProf's fractions are
/// compared as percentages. GPU device rows name the framework op of each
/// op's HLO instruction, as XProf (jax_pallas: `jit(add)/pallas_call`;
/// jax_gpu's kernels are no instruction of their program, so only IDLE).
#[tokio::test]
async fn framework_op_stats_is_xprofs() {
    for rel in [
        "tpu/synthetic_tpu.xplane.pb",
        "gpu/jax_pallas.xplane.pb",
        "gpu/jax_gpu.xplane.pb",
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
        "xspace/jax_cpu_mlp_20steps_w256.xplane.pb",
        "xspace/jax_cpu_nested_4steps.xplane.pb",
    ] {
        let (path, xprof) = expected(rel, "tool.framework_op_stats.json");
        let want: Vec<Row> = gviz_rows(&xprof[0]);
        let got: Vec<Row> = rows(&path, "SELECT * FROM framework_op_stats ORDER BY rank").await;
        let names = |rs: &[Row]| -> Vec<String> {
            rs.iter()
                .map(|r| {
                    format!(
                        "{} {}",
                        text(r.get("host_or_device")),
                        text(r.get("operation"))
                    )
                })
                .collect()
        };
        assert_eq!(names(&got), names(&want), "{rel}");
        for (g, w) in got.iter().zip(&want) {
            let at = format!("{rel} {}", text(w.get("operation")));
            assert_eq!(text(g.get("type")), text(w.get("type")), "{at}");
            exact(&at, num(g.get("occurrences")), num(w.get("occurrences")));
            for col in ["total_time", "avg_time", "total_self_time", "avg_self_time"] {
                close(
                    &format!("{at} {col}"),
                    num(g.get(&format!("{col}_us"))),
                    num(w.get(col)),
                );
            }
            exact(&at, num(g.get("rank")), num(w.get("rank")));
            if text(w.get("host_or_device")) == "Host" {
                for (ours, theirs) in [
                    ("self_time_pct", "host_total_self_time_percent"),
                    (
                        "cumulative_self_time_pct",
                        "Host_cumulative_total_self_time_percent",
                    ),
                ] {
                    close(
                        &format!("{at} {ours}"),
                        num(g.get(ours)),
                        100.0 * num(w.get(theirs)),
                    );
                }
            }
            if text(w.get("host_or_device")) == "Device" {
                assert_eq!(text(g.get("bound_by")), text(w.get("bound_by")), "{at}");
                for (ours, theirs, scale) in [
                    ("self_time_pct", "device_total_self_time_percent", 100.0),
                    (
                        "cumulative_self_time_pct",
                        "device_cumulative_total_self_time_percent",
                        100.0,
                    ),
                    ("measured_gflops_per_s", "measured_flop_rate", 1.0),
                    ("model_gflops_per_s", "model_flop_rate", 1.0),
                    ("memory_gibps", "measured_memory_bw", 1.0),
                    ("operational_intensity", "operational_intensity", 1.0),
                ] {
                    close(
                        &format!("{at} {ours}"),
                        num(g.get(ours)),
                        scale * num(w.get(theirs)),
                    );
                }
            }
        }
    }
}

/// XProf 2.24.2's roofline_model (`[0]`, the per-op rows of step `Total`
/// with infeed and outfeed included) against the `roofline` view on the
/// synthetic TPU profile, and the ridge point and peaks XProf prints. GPU
/// and CPU: XProf's per-op rows need the HLO proto (GPU) or a device
/// (CPU), see `hlo_stats_is_xprofs`.
#[tokio::test]
async fn roofline_is_xprofs() {
    let (path, xprof) = expected("tpu/synthetic_tpu.xplane.pb", "tool.roofline_model.json");
    let table = &xprof[0];
    let want: Vec<Row> = gviz_rows(table)
        .into_iter()
        .filter(|r| {
            text(r.get("step")) == "Total"
                && num(r.get("rank")) > 0.0
                && r.get("include_infeed_outfeed") == Some(&Value::Bool(true))
        })
        .collect();
    let got = rows(&path, "SELECT * FROM roofline ORDER BY rank").await;
    assert_eq!(got.len(), want.len());
    assert!(!got.is_empty());
    let p = &table["p"];
    for (g, w) in got.iter().zip(&want) {
        let at = text(w.get("operation"));
        assert_eq!(text(g.get("hlo_op")), at);
        exact(&at, num(g.get("rank")), num(w.get("rank")));
        assert_eq!(text(g.get("bound_by")), text(w.get("bound_by")), "{at}");
        for (ours, theirs, scale) in [
            ("total_time_us", "total_time", 1.0),
            ("total_self_time_us", "total_self_time", 1.0),
            ("total_time_per_core_us", "total_time_per_core", 1.0),
            ("total_time_pct", "total_time_in_percentage", 100.0),
            ("self_time_pct", "total_self_time_percent", 100.0),
            ("measured_gflops_per_s", "measured_flop_rate", 1.0),
            ("memory_gibps", "hbm_bw", 1.0),
            ("operational_intensity", "operational_intensity", 1.0),
            ("attainable_gflops_per_s", "optimal_flop_rate", 1.0),
            ("compute_efficiency", "compute_efficiency", 1.0),
            ("hbm_bw_utilization", "max_mem_bw_utilization", 1.0),
            ("roofline_efficiency", "roofline_efficiency", 1.0),
        ] {
            close(
                &format!("{at} {ours}"),
                num(g.get(ours)),
                scale * num(w.get(theirs)),
            );
        }
        close(
            "ridge point",
            num(g.get("ridge_point")),
            num(p.get("hbm_ridge_point")),
        );
        close(
            "peak FLOP/s",
            num(g.get("peak_gflops_per_s")),
            num(p.get("peak_flop_rate")),
        );
        close(
            "peak HBM",
            num(g.get("peak_hbm_gibps")),
            num(p.get("peak_hbm_bw")),
        );
    }
}

/// The nodes of an XProf op_profile tree below its root, depth first, with
/// their depth (the root's children are depth 1).
fn op_profile_nodes(root: &Value) -> Vec<(i64, &Value)> {
    fn walk<'a>(node: &'a Value, depth: i64, out: &mut Vec<(i64, &'a Value)>) {
        for child in node["children"].as_array().into_iter().flatten() {
            out.push((depth, child));
            walk(child, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(root, 1, &mut out);
    out
}

/// XProf 2.24.2's op_profile tool (`group_by=program`) against the
/// `op_profile` view: the same nodes in the same depth-first order, with
/// time, occurrences, child counts, FLOPs and FLOP utilization equal, in
/// both of XProf's trees (with IDLE, where utilization is weighted by the
/// share of device time, and without). TPU: synthetic input. GPU (real
/// H200 Pallas kernel): the category (`custom-call`) comes from the HLO
/// instruction, as XProf.
#[tokio::test]
async fn op_profile_is_xprofs() {
    for fixture in ["tpu/synthetic_tpu.xplane.pb", "gpu/jax_pallas.xplane.pb"] {
        let (path, xprof) = expected(fixture, "tool.op_profile.json");
        let got = rows(&path, "SELECT * FROM op_profile ORDER BY node_order").await;
        let with_idle = op_profile_nodes(&xprof["byProgram"]);
        let without_idle = op_profile_nodes(&xprof["byProgramExcludeIdle"]);
        assert_eq!(got.len(), with_idle.len(), "{fixture}: node count");
        assert!(
            got.iter().any(|g| text(g.get("node_kind")) == "op"),
            "{fixture}: no op nodes"
        );
        let mut excl = without_idle.iter();
        for (g, (depth, w)) in got.iter().zip(&with_idle) {
            let kind = text(g.get("node_kind"));
            let name = text(w.get("name"));
            let at = format!("{fixture} {name}");
            exact(&format!("{at}: depth"), num(g.get("depth")), *depth as f64);
            assert_eq!(text(g.get("name")), name, "{fixture}: node order");
            let m = &w["metrics"];
            let time_ps = num(g.get("time_ps"));
            exact(&format!("{at}: time"), time_ps, xnum(m.get("rawTime")));
            exact(&at, num(g.get("occurrences")), xnum(m.get("occurrences")));
            exact(&at, num(g.get("num_children")), xnum(w.get("numChildren")));
            exact(
                &format!("{at}: flops"),
                num(g.get("flops")),
                xnum(m.get("bf16Flops")),
            );
            exact(&at, num(g.get("model_flops")), xnum(m.get("rawFlops")));
            close(
                &format!("{at} avg"),
                num(g.get("avg_time_ps")),
                xnum(m.get("avgTimePs")),
            );
            let utilization = num(g.get("flops_utilization"));
            let device_ps = num(g.get("device_time_ps"));
            close(
                &format!("{at} flops"),
                utilization * time_ps / device_ps,
                xnum(m.get("flops")),
            );
            if kind == "idle" {
                assert!(num(g.get("time_excl_idle_pct")).is_nan(), "{at}");
                continue;
            }
            let (_, w_excl) = excl
                .next()
                .expect("node missing from the exclude-idle tree");
            assert_eq!(text(w_excl.get("name")), name, "{at}: exclude-idle order");
            close(
                &format!("{at} flops excluding idle"),
                utilization * num(g.get("time_excl_idle_pct")) / 100.0,
                xnum(w_excl["metrics"].get("flops")),
            );
        }
        assert!(
            excl.next().is_none(),
            "{fixture}: exclude-idle tree has more nodes"
        );
    }
}

/// An Events DB export (`<stem>.events_db*.csv`) as rows keyed by its
/// header.
fn events_db_csv(rel: &str) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut lines = text.lines();
    let header = split_csv(lines.next().unwrap());
    lines
        .map(|l| header.iter().cloned().zip(split_csv(l)).collect())
        .collect()
}

/// The `event_steps` view against XProf 2.24.2's Events DB `step`
/// (`create_events_db`; tests/fixtures/*/expected/NOTES.md): per thread and
/// event name, how many events have a step (`with_step_count`) on all
/// five real profiles (3 JAX CPU, 2 JAX H200 GPU, where kernels get the
/// step of the host event that launched them); and on
/// jax_cpu_nested_4steps the step name of every host event.
#[tokio::test]
async fn event_steps_are_xprofs_events_db_steps() {
    let per_kernel = "SELECT CASE WHEN d.name = '/host:CPU' THEN CAST(t.line_id & 4294967295 AS VARCHAR) ELSE '' END AS thread_id, \
        e.name AS kernel_name, count(s.step_name) AS with_step \
        FROM events e JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) \
        LEFT JOIN event_steps s ON s.trace_id = e.trace_id AND s.event_id = e.event_id \
        WHERE d.name = '/host:CPU' OR d.name LIKE '/device:GPU:%' GROUP BY 1, 2";
    for rel in [
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
        "xspace/jax_cpu_mlp_20steps_w256.xplane.pb",
        "xspace/jax_cpu_nested_4steps.xplane.pb",
        "gpu/jax_gpu.xplane.pb",
        "gpu/jax_pallas.xplane.pb",
    ] {
        let got: std::collections::BTreeMap<(String, String), i64> =
            rows(&fixture(rel), per_kernel)
                .await
                .iter()
                .map(|r| {
                    (
                        (text(r.get("thread_id")), text(r.get("kernel_name"))),
                        num(r.get("with_step")) as i64,
                    )
                })
                .collect();
        let want: std::collections::BTreeMap<(String, String), i64> = events_db_csv(
            &rel.replace(".xplane.pb", ".events_db_by_kernel.csv")
                .replacen('/', "/expected/", 1),
        )
        .into_iter()
        .map(|r| {
            (
                (r["thread_id"].clone(), r["kernel_name"].clone()),
                r["with_step_count"].parse().unwrap(),
            )
        })
        .collect();
        assert!(want.values().any(|n| *n > 0), "{rel}: XProf gives steps");
        assert_eq!(got, want, "{rel}");
    }
    let per_event = "SELECT CAST(t.line_id & 4294967295 AS VARCHAR) AS thread_id, e.name, \
        CAST(e.ts_ps / 1000 AS VARCHAR) AS start_ns, coalesce(s.step_name, '\\N') AS step \
        FROM events e JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) \
        LEFT JOIN event_steps s ON s.trace_id = e.trace_id AND s.event_id = e.event_id \
        WHERE d.name = '/host:CPU'";
    let mut got: Vec<[String; 4]> = rows(
        &fixture("xspace/jax_cpu_nested_4steps.xplane.pb"),
        per_event,
    )
    .await
    .iter()
    .map(|r| ["thread_id", "name", "start_ns", "step"].map(|k| text(r.get(k))))
    .collect();
    let mut want: Vec<[String; 4]> =
        events_db_csv("xspace/expected/jax_cpu_nested_4steps.events_db_rows.csv")
            .into_iter()
            .map(|r| ["thread_id", "kernel_name", "start_ns", "step"].map(|k| r[k].clone()))
            .collect();
    got.sort();
    want.sort();
    assert_eq!(got.len(), 207);
    assert_eq!(got, want);
}

/// `hlo_stats` holds no op of every trace at once: host and GPU ops never
/// enter the `op_parent` window (only TPU-like ops nest), and the host
/// rows of traces without accelerator ops are chosen by a join with one
/// row per trace, not `NOT IN (subquery)`, which DataFusion planned as a
/// mark join building its hash table over every op (a 64-host fleet:
/// memory grew with the hosts, 1.25 GB for 8; benches/README.md). The
/// window still runs, and nests, where ops nest: the synthetic TPU
/// fixture (`tpu_self_time_space`, documented TPU line names; no real TPU
/// capture can be made here) beside the real CPU and GPU captures.
#[tokio::test]
async fn hlo_stats_windows_only_the_ops_that_nest_and_joins_no_mark() {
    // (fixture, whether its ops nest)
    for (input, nests) in [
        (cpu_fixture(REAL_CPU[0]), false),
        (gpu_fixture(REAL_GPU[0]), false),
        (fixture("tpu/synthetic_self_time.xplane.pb"), true),
    ] {
        let mut s = xprof_sql::query::ProfileSession::new();
        s.open(&[&input], &xprof_sql::query::OpenOptions::default())
            .await
            .unwrap();
        let plan = explain_text(s.context(), "ANALYZE SELECT * FROM hlo_stats").await;
        assert!(
            !plan.contains("Mark"),
            "{}: a mark join:\n{plan}",
            input.display()
        );
        let windowed: Vec<usize> = plan
            .lines()
            .filter(|l| l.contains("wdw=[op_parent("))
            .map(|l| {
                let at = l.find("output_rows=").expect("output_rows") + "output_rows=".len();
                l[at..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert!(
            !windowed.is_empty(),
            "{}: no op_parent window:\n{plan}",
            input.display()
        );
        let ops: usize = query_rows(
            &[&input],
            "SELECT count(*) AS n FROM device_ops \
             WHERE device_kind IN ('tpu', 'sparse_core', 'custom')",
        )
        .await
        .iter()
        .map(|r| i(r, "n") as usize)
        .sum();
        assert_eq!(nests, ops > 0, "{}", input.display());
        for n in windowed {
            assert_eq!(
                n,
                ops,
                "{}: rows through the op_parent window",
                input.display()
            );
        }
    }
}
