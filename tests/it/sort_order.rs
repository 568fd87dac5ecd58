//! Every table's declared sort order (`sort_by`, declared to DataFusion
//! and in the Parquet metadata) is true: DataFusion trusts it and drops
//! sorts, so a false one returns wrong answers.
//!
//! For every fixture (the real CPU and GPU profiles, and synthetic TPU,
//! GPU, out-of-order and split-line files, said to be synthetic), through
//! the Parquet path (the only one that declares an order), `SELECT
//! <sort_by> FROM t ORDER BY <sort_by>` must equal the rows of `t` sorted
//! here, independently, and its plan must hold no sort of its own.

use crate::common;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Int32Type, Int64Type};
use common::*;
use prost::Message;
use xprof_sql::format::Table;
use xprof_sql::query::{OpenOptions, ProfileSession};
use xprof_testdata::xspace_proto::*;
use xprof_testdata::*;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Int(i64),
    Str(String),
    // NULLs sort last, as declared.
    Null,
}

fn keys(batches: &[RecordBatch]) -> Vec<Vec<Key>> {
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let row = b
                .columns()
                .iter()
                .map(|c| {
                    if c.is_null(i) {
                        return Key::Null;
                    }
                    match c.data_type() {
                        DataType::Int32 => Key::Int(c.as_primitive::<Int32Type>().value(i) as i64),
                        DataType::Int64 => Key::Int(c.as_primitive::<Int64Type>().value(i)),
                        _ => {
                            let s = arrow::compute::cast(c, &DataType::Utf8).unwrap();
                            Key::Str(s.as_string::<i32>().value(i).to_string())
                        }
                    }
                })
                .collect();
            rows.push(row);
        }
    }
    rows
}

async fn check_session(session: &ProfileSession, what: &str) {
    for t in Table::ALL {
        let cols = t.def().sort_by.join(", ");
        let name = t.name();
        let ordered = session
            .sql(&format!("SELECT {cols} FROM {name} ORDER BY {cols}"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let plain = session
            .sql(&format!("SELECT {cols} FROM {name}"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mut expected = keys(&plain);
        expected.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
        let actual = keys(&ordered);
        assert_eq!(actual.len(), expected.len(), "{what}: {name} row count");
        if let Some(i) = (0..actual.len()).find(|i| actual[*i] != expected[*i]) {
            panic!(
                "{what}: {name} ORDER BY {cols} is wrong at row {i}: {:?}, expected {:?}",
                actual[i], expected[i]
            );
        }
    }
}

/// Converts `inputs` into a Parquet dataset (where the order is declared:
/// in-memory tables declare none, so DataFusion sorts them itself and
/// there is nothing to check) and checks every table: its declared order
/// is true, and DataFusion relies on it (no sort in the plan of
/// `ORDER BY sort_by`; without the declaration there would be one).
async fn check(inputs: &[PathBuf], what: &str) {
    let (dir, _) = dataset_of(inputs);
    let mut pq = ProfileSession::new();
    pq.open(&[dir.path()], &OpenOptions::default())
        .await
        .unwrap();
    check_session(&pq, &format!("{what} (parquet)")).await;
    // One input, one file per table: DataFusion can take the order as is.
    // (Files of several traces overlap in their sort keys, so a plan over
    // them may sort, rightly.)
    if inputs.len() > 1 {
        return;
    }
    for t in Table::ALL {
        let cols = t.def().sort_by.join(", ");
        let name = t.name();
        let physical =
            physical_plan(&pq, &format!("SELECT {cols} FROM {name} ORDER BY {cols}")).await;
        assert!(
            !physical.contains("SortExec"),
            "{what}: {name} is sorted again, its declared order unused:\n{physical}"
        );
    }
}

fn write(dir: &Path, name: &str, space: &XSpace) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, space.encode_to_vec()).unwrap();
    p
}

#[tokio::test]
async fn real_profiles_are_written_in_their_declared_order() {
    for stem in REAL_CPU {
        check(&[cpu_fixture(stem)], stem).await;
    }
    for stem in REAL_GPU {
        check(&[gpu_fixture(stem)], stem).await;
    }
    // Several traces in one dataset: each file is sorted, the merge too.
    check(
        &[cpu_fixture(REAL_CPU[0]), gpu_fixture(REAL_GPU[0])],
        "cpu+gpu",
    )
    .await;
}

#[tokio::test]
async fn synthetic_profiles_are_written_in_their_declared_order() {
    // Synthetic inputs (documented names), no real capture at hand.
    let dir = tempfile::tempdir().unwrap();
    let tpu = write(
        dir.path(),
        "tpu.xplane.pb",
        &tpu_space(&TpuSpec {
            devices: 2,
            steps: 3,
            ops_per_step: 40,
        }),
    );
    let gpu = write(dir.path(), "gpu.xplane.pb", &gpu_space(&GpuSpec::default()));
    // Out of order, split into chunks with the same id, with stats, on a
    // plane whose metadata map is written in descending id order.
    let mut p = PlaneBuilder::new(1, "/device:TPU:0");
    let mut ids = Vec::new();
    for n in (0..20).rev() {
        let s = p.stat("flops", x_stat::Value::Int64Value(n));
        ids.push(p.event_metadata(&format!("op{n}"), "", vec![s]));
    }
    let flow = |id: u64| x_stat::Value::Uint64Value((id << 2) | 1);
    let f1 = p.stat("flow", flow(7));
    let f2 = p.stat("flow", flow(7));
    p.line(line(
        3,
        "XLA Ops",
        0,
        vec![
            event(ids[3], 500, 10, vec![f2]),
            event(ids[1], 0, 100, vec![f1]),
            event(ids[2], 10, 5, vec![]),
        ],
    ));
    p.line(line(1, "Steps", 0, vec![event(ids[0], 0, 1000, vec![])]));
    p.line(line(3, "XLA Ops", 1, vec![event(ids[4], 0, 10, vec![])]));
    let mut host = PlaneBuilder::new(2, "/host:CPU");
    let h = host.event_metadata("launch", "", vec![]);
    let c = host.stat("flow", flow(7));
    host.line(line(9, "main", 0, vec![event(h, 5, 3, vec![c])]));
    let odd = write(
        dir.path(),
        "odd.xplane.pb",
        &XSpace {
            planes: vec![p.finish(), host.finish()],
            ..Default::default()
        },
    );
    for (p, what) in [(&tpu, "tpu"), (&gpu, "gpu"), (&odd, "odd")] {
        check(std::slice::from_ref(p), what).await;
    }
    check(&[tpu, gpu, odd], "tpu+gpu+odd").await;
}

#[tokio::test]
async fn a_parquet_events_scan_relies_on_the_declared_order() {
    // The test above would pass trivially if nothing were declared: check
    // that DataFusion does drop the sort for a single-file dataset.
    let (dir, _) = dataset_of(&[cpu_fixture(REAL_CPU[0])]);
    let mut s = ProfileSession::new();
    s.open(&[dir.path()], &OpenOptions::default())
        .await
        .unwrap();
    let physical = physical_plan(
        &s,
        "SELECT track_id, ts_ps FROM events ORDER BY track_id, ts_ps",
    )
    .await;
    assert!(!physical.contains("SortExec"), "{physical}");
}

/// The physical part of `EXPLAIN sql`, as text.
async fn physical_plan(s: &ProfileSession, sql: &str) -> String {
    let plan = s
        .sql(&format!("EXPLAIN {sql}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    text[text.find("physical_plan").expect("physical plan")..].to_string()
}

#[tokio::test]
async fn a_per_track_window_uses_the_stored_order_and_agrees_with_a_sort_here() {
    // `prefer_existing_sort` (query::session::default_config): a window
    // partitioned by track and ordered by time reads the files' declared
    // (track_id, ts_ps) order instead of sorting every event again. The
    // answer must equal the one computed here from the events sorted
    // independently. The frame is RANGE (peers included), so ties in
    // ts_ps cannot make either side's answer depend on row order.
    // Row groups of 64 rows, so that the file splits into several scans.
    let dir = small_row_group_dataset_of(&[cpu_fixture(REAL_CPU[0])]);
    let window = "SELECT track_id, ts_ps, \
        max(ts_ps + dur_ps) OVER (PARTITION BY track_id ORDER BY ts_ps) AS end_so_far_ps \
        FROM events";
    let mut s = ProfileSession::new();
    s.open(&[dir.path()], &OpenOptions::default())
        .await
        .unwrap();
    // Split even this small file into two scans, as a large one is: each
    // scan is sorted, the two together are not (a track spans both).
    split_into_small_scans(&s).await;
    let physical = physical_plan(&s, window).await;
    assert!(physical.contains("BoundedWindowAggExec"), "{physical}");
    assert!(physical.contains("2 groups"), "{physical}");
    assert!(!physical.contains("SortExec"), "{physical}");

    let sql = format!(
        "SELECT track_id, count(*) AS n, sum(end_so_far_ps) AS total \
         FROM ({window}) GROUP BY track_id ORDER BY track_id"
    );
    let mut got = Vec::new();
    for b in s.sql(&sql).await.unwrap().collect().await.unwrap() {
        let col = |i: usize| arrow::compute::cast(b.column(i), &DataType::Int64).unwrap();
        let (t, n, total) = (col(0), col(1), col(2));
        for i in 0..b.num_rows() {
            let v = |c: &arrow::array::ArrayRef| c.as_primitive::<Int64Type>().value(i);
            got.push((v(&t), v(&n), v(&total)));
        }
    }

    let events = query_rows(&[dir.path()], "SELECT track_id, ts_ps, dur_ps FROM events").await;
    let mut by_track: std::collections::BTreeMap<i64, Vec<(i64, i64)>> = Default::default();
    for r in &events {
        let n = |k: &str| r[k].as_i64().unwrap();
        by_track
            .entry(n("track_id"))
            .or_default()
            .push((n("ts_ps"), n("ts_ps") + n("dur_ps")));
    }
    let mut want = Vec::new();
    for (track, mut spans) in by_track {
        spans.sort();
        // RANGE frame: the latest end of every event starting at or
        // before this one, ties included.
        let (mut total, mut end_so_far, mut i) = (0i64, i64::MIN, 0);
        while i < spans.len() {
            let peers = spans[i..].iter().take_while(|s| s.0 == spans[i].0).count();
            for s in &spans[i..i + peers] {
                end_so_far = end_so_far.max(s.1);
            }
            total += end_so_far * peers as i64;
            i += peers;
        }
        want.push((track, spans.len() as i64, total));
    }
    assert!(want.iter().any(|(_, n, _)| *n > 100), "{want:?}");
    assert_eq!(got, want);
}
