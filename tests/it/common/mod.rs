//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::compute::concat_batches;
use arrow::datatypes::DataType;
use xprof_sql::convert::reader::{ConvertOptions, Summary, TraceSource};
use xprof_sql::convert::sink::MemorySink;
use xprof_sql::convert::xspace;
use xprof_sql::format::Table;

/// The real JAX CPU profiles (see tests/fixtures/xspace/README.md).
pub const REAL_CPU: [&str; 3] = [
    "jax_cpu_mlp_5steps_w128",
    "jax_cpu_mlp_20steps_w256",
    "jax_cpu_nested_4steps",
];

/// Real GPU profiles captured on an H200 (tests/fixtures/gpu/README.md).
pub const REAL_GPU: [&str; 2] = ["jax_gpu", "jax_pallas"];

pub fn fixture(rel: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("tests/fixtures")
    .join(rel)
}

pub fn cpu_fixture(stem: &str) -> PathBuf {
    fixture(&format!("xspace/{stem}.xplane.pb"))
}

pub fn gpu_fixture(stem: &str) -> PathBuf {
    fixture(&format!("gpu/{stem}.xplane.pb"))
}

pub fn source(trace_id: i32) -> TraceSource {
    TraceSource {
        trace_id,
        path: "test.xplane.pb".into(),
        run: None,
        host: "test".into(),
    }
}

/// Converts bytes into memory.
pub fn convert_bytes(bytes: &[u8], options: &ConvertOptions) -> (MemorySink, Summary) {
    let mut sink = MemorySink::default();
    let summary = xspace::convert(bytes, &source(0), options, &mut sink).expect("converts");
    (sink, summary)
}

/// The committed fixture `rel` is `bytes`, what `generator` writes today
/// (`XPROF_SQL_BLESS=1` rewrites it; `readme` says how to remake XProf's
/// answers on it after that).
pub fn assert_generated_fixture(rel: &str, bytes: &[u8], generator: &str, readme: &str) {
    let path = fixture(rel);
    if std::env::var_os("XPROF_SQL_BLESS").is_some() {
        std::fs::write(&path, bytes).unwrap();
    }
    let committed = std::fs::read(&path).expect("committed fixture");
    assert!(
        committed == bytes,
        "{} differs from {generator}; rerun with XPROF_SQL_BLESS=1 and regenerate \
         its expected files ({readme})",
        path.display()
    );
}

/// Length of the union of intervals `[start, end)` (touching ones merge,
/// empty ones count nothing): an independent reference for `busy_ps`.
pub fn union_sweep_len(spans: &mut [(i64, i64)]) -> i64 {
    spans.sort_unstable();
    let (mut total, mut cur) = (0i64, None::<(i64, i64)>);
    for &(s, e) in spans.iter().filter(|(s, e)| e > s) {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// One table as a single batch (empty batch when no rows).
pub fn table(sink: &MemorySink, t: Table) -> RecordBatch {
    let batches = sink.tables.get(&t).cloned().unwrap_or_default();
    concat_batches(&t.schema(), &batches).expect("same schema")
}

/// A column as strings (NULL as "NULL"), whatever its type.
pub fn strings(batch: &RecordBatch, name: &str) -> Vec<String> {
    let col = batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let col = arrow::compute::cast(col, &DataType::Utf8).expect("castable");
    let s = col.as_string::<i32>();
    (0..s.len())
        .map(|i| {
            if s.is_null(i) {
                "NULL".into()
            } else {
                s.value(i).to_string()
            }
        })
        .collect()
}

/// An Int64 column (NULL as None).
pub fn i64s(batch: &RecordBatch, name: &str) -> Vec<Option<i64>> {
    let col = batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let col = arrow::compute::cast(col, &DataType::Int64).expect("castable");
    let a = col.as_primitive::<arrow::datatypes::Int64Type>();
    (0..a.len())
        .map(|i| a.is_valid(i).then(|| a.value(i)))
        .collect()
}

/// Converts `inputs` (files or folders) into a new Parquet dataset, one
/// trace per file; returns the folder and what was written.
pub fn dataset_of(
    inputs: &[PathBuf],
) -> (tempfile::TempDir, Vec<xprof_sql::convert::many::Converted>) {
    dataset_with(inputs, &Default::default())
}

/// [`dataset_of`] with row groups of 64 rows: many row groups (and
/// dictionaries) even from a small fixture.
pub fn small_row_group_dataset_of(inputs: &[PathBuf]) -> tempfile::TempDir {
    let write = xprof_sql::format::dataset::WriteOptions {
        max_row_group_rows: 64,
        ..Default::default()
    };
    dataset_with(inputs, &write).0
}

fn dataset_with(
    inputs: &[PathBuf],
    write: &xprof_sql::format::dataset::WriteOptions,
) -> (tempfile::TempDir, Vec<xprof_sql::convert::many::Converted>) {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = inputs
        .iter()
        .flat_map(|p| xprof_sql::convert::discover::discover(p, None).unwrap())
        .collect();
    let written = xprof_sql::convert::many::convert_to_dataset(
        &files,
        dir.path(),
        &Default::default(),
        write,
        1,
        None,
    )
    .unwrap();
    (dir, written)
}

/// Makes `session` split even a small file into two scans of 64-row
/// batches, as it does a large one.
pub async fn split_into_small_scans(session: &xprof_sql::query::ProfileSession) {
    for set in [
        "SET datafusion.execution.target_partitions = 2",
        "SET datafusion.optimizer.repartition_file_min_size = 0",
        // (splitting is judged worthwhile only for more rows than a batch)
        "SET datafusion.execution.batch_size = 64",
    ] {
        session.sql(set).await.unwrap().collect().await.unwrap();
    }
}

/// The fields of one CSV line (quoted fields may hold commas and doubled
/// quotes), as XProf's Events DB exports are written.
pub fn split_csv(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                out.last_mut().unwrap().push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// A row of a query result as a JSON object (NULL columns absent).
pub type Row = serde_json::Map<String, serde_json::Value>;

/// The JSON of the committed fixture `rel` (an expected file).
pub fn json_fixture(rel: &str) -> serde_json::Value {
    let path = fixture(rel);
    serde_json::from_slice(&std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}")))
        .unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Runs `f` to completion on a fresh multi-threaded runtime.
pub fn tokio_run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// The string in column `k` of `r`; panics naming it when absent or NULL.
pub fn s(r: &Row, k: &str) -> String {
    r.get(k)
        .and_then(|v| v.as_str())
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
        .to_string()
}

/// The integer in column `k` of `r`; panics naming it when absent or NULL.
pub fn i(r: &Row, k: &str) -> i64 {
    r.get(k)
        .and_then(|v| v.as_i64())
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
}

/// The rows of `sql` over the profiles at `paths` (files, folders or
/// datasets), as JSON objects (NULL columns absent).
pub async fn query_rows<P: AsRef<std::path::Path>>(paths: &[P], sql: &str) -> Vec<Row> {
    query_rows_as(paths, sql, false).await
}

/// As `query_rows`, with every column of the result in every row (NULL as
/// JSON null), so that a missing column is told apart from a NULL.
pub async fn query_rows_with_nulls<P: AsRef<std::path::Path>>(paths: &[P], sql: &str) -> Vec<Row> {
    query_rows_as(paths, sql, true).await
}

async fn query_rows_as<P: AsRef<std::path::Path>>(
    paths: &[P],
    sql: &str,
    explicit_nulls: bool,
) -> Vec<Row> {
    use xprof_sql::query::{OpenOptions, ProfileSession};
    let mut session = ProfileSession::new();
    let paths: Vec<&std::path::Path> = paths.iter().map(|p| p.as_ref()).collect();
    session.open(&paths, &OpenOptions::default()).await.unwrap();
    let batches = session.sql(sql).await.unwrap().collect().await.unwrap();
    batches_to_rows(&batches, explicit_nulls)
}

/// Batches as JSON objects (NULL columns absent).
pub fn rows_of(batches: &[arrow::record_batch::RecordBatch]) -> Vec<Row> {
    batches_to_rows(batches, false)
}

fn batches_to_rows(batches: &[arrow::record_batch::RecordBatch], explicit_nulls: bool) -> Vec<Row> {
    use serde_json::Value;
    let mut out = Vec::new();
    {
        let mut w = arrow::json::WriterBuilder::new()
            .with_explicit_nulls(explicit_nulls)
            .build::<_, arrow::json::writer::JsonArray>(&mut out);
        for b in batches {
            w.write(&xprof_sql::output::plain_batch(b).unwrap())
                .unwrap();
        }
        w.finish().unwrap();
    }
    if out.is_empty() {
        return Vec::new();
    }
    match serde_json::from_slice(&out).unwrap() {
        Value::Array(a) => a
            .into_iter()
            .map(|v| match v {
                Value::Object(m) => m,
                other => panic!("{other}"),
            })
            .collect(),
        other => panic!("{other}"),
    }
}

/// Environment variable naming the command `measure_child` runs (its
/// program and arguments, separated by U+001F).
const MEASURE_ENV: &str = "XPROF_SQL_TEST_MEASURE";

/// Runs `program args…` and returns its exit code and peak RSS (KiB).
///
/// The figure is the child's own: `ru_maxrss` of a child counts the memory
/// of the process it was spawned from until it calls `exec` (the kernel
/// folds the old address space's high-water mark in), so a child spawned
/// straight from this test binary, where other tests hold hundreds of MiB,
/// would report theirs. This binary is started afresh as a small parent
/// (the ignored test `common::measure_child`), which spawns the command and
/// reports its rusage.
pub fn peak_rss_kib(program: &str, args: &[&str]) -> (i32, i64) {
    let spec: Vec<&str> = std::iter::once(program)
        .chain(args.iter().copied())
        .collect();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "common::measure_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MEASURE_ENV, spec.join("\u{1f}"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| Some(&l[l.find("measured: ")? + "measured: ".len()..]))
        .unwrap_or_else(|| {
            panic!(
                "no measurement: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let (code, kib) = line.split_once(' ').unwrap();
    (code.parse().unwrap(), kib.parse().unwrap())
}

/// The small parent of [`peak_rss_kib`]: runs the command in
/// `XPROF_SQL_TEST_MEASURE` and prints `measured: CODE PEAK_KIB`.
#[test]
#[ignore = "run by peak_rss_kib as a fresh process"]
fn measure_child() {
    let spec = std::env::var(MEASURE_ENV).expect("run by peak_rss_kib");
    let mut parts = spec.split('\u{1f}');
    // Reaped by wait4 below, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(parts.next().unwrap())
        .args(parts)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    println!(
        "measured: {} {}",
        libc::WEXITSTATUS(status),
        usage.ru_maxrss
    );
}

/// A plane `name` of one line (`main`) holding one event (`op{id % 50}`,
/// 5 ps at 10 ps).
pub fn one_event_plane(id: i64, name: String) -> xprof_testdata::xspace_proto::XPlane {
    use xprof_testdata::xspace_proto::{XEvent, XEventMetadata, XLine, XPlane, x_event};
    XPlane {
        id,
        name,
        lines: vec![XLine {
            id: 1,
            name: "main".into(),
            timestamp_ns: 1000,
            events: vec![XEvent {
                metadata_id: 1,
                data: Some(x_event::Data::OffsetPs(10)),
                duration_ps: 5,
                ..Default::default()
            }],
            ..Default::default()
        }],
        event_metadata: [(
            1,
            XEventMetadata {
                id: 1,
                name: format!("op{}", id % 50),
                ..Default::default()
            },
        )]
        .into(),
        ..Default::default()
    }
}

/// The answer to `sql` on `ctx`, as one batch (of the query's schema, also
/// when it has no rows).
pub async fn collect_one(ctx: &datafusion::prelude::SessionContext, sql: &str) -> RecordBatch {
    let frame = ctx.sql(sql).await.unwrap();
    let schema = std::sync::Arc::new(frame.schema().as_arrow().clone());
    let batches = frame.collect().await.unwrap();
    concat_batches(&schema, &batches).unwrap()
}

/// `EXPLAIN sql` on `ctx` as a text table (`sql` may start with
/// `ANALYZE`).
pub async fn explain_text(ctx: &datafusion::prelude::SessionContext, sql: &str) -> String {
    let plan = ctx
        .sql(&format!("EXPLAIN {sql}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string()
}

/// The raw text of a file, inflated when gzipped (for reading a Chrome
/// trace independently of the converter).
pub fn raw_text(path: &std::path::Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .unwrap();
        text
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

/// A JSON number of µs as written (no float on the way), in exact ps.
pub fn us_text_to_ps(text: &str) -> i128 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    assert!(frac.len() <= 6 && !int.contains(['e', 'E']), "{text}");
    int.parse::<i128>().unwrap() * 1_000_000 + format!("{frac:0<6}").parse::<i128>().unwrap()
}

/// Runs the built `xprof-sql` with `args`: exit status, stdout, stderr.
pub fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
