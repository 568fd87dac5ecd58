//! A warehouse (`convert --partition-by`): hive-style folders per run and
//! host, runs added without rewriting others and refused twice, partition
//! columns that prune whole folders, and every table and view answering as
//! on a flat dataset of the same inputs.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use common::*;
use xprof_sql::format::Table;
use xprof_sql::query::views::VIEWS;
use xprof_sql::query::{OpenOptions, ProfileSession};

fn xprof_sql(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(args)
        .output()
        .expect("runs")
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn err(out: Output) -> String {
    assert!(!out.status.success(), "succeeded, should not have");
    String::from_utf8(out.stderr).unwrap()
}

/// Two runs of real JAX profiles: `r1` with hosts `hostA` (5 steps, width
/// 128) and `hostB` (20 steps, width 256), `r2` with `hostA` (5 steps,
/// width 512).
fn runs(dir: &Path) -> (PathBuf, PathBuf) {
    let r1 = dir.join("logs/r1");
    let r2 = dir.join("logs/r2");
    std::fs::create_dir_all(&r1).unwrap();
    std::fs::create_dir_all(&r2).unwrap();
    for (stem, to) in [
        ("jax_cpu_mlp_5steps_w128", r1.join("hostA.xplane.pb")),
        ("jax_cpu_mlp_20steps_w256", r1.join("hostB.xplane.pb")),
        ("jax_cpu_mlp_5steps_w512", r2.join("hostA.xplane.pb")),
    ] {
        std::fs::copy(cpu_fixture(stem), to).unwrap();
    }
    (r1, r2)
}

/// Every file under `dir`, relative, with its length and modification
/// time: what a conversion that "rewrites nothing" must leave as it was.
fn files_under(dir: &Path) -> BTreeMap<String, (u64, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let m = std::fs::metadata(&p).unwrap();
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, (m.len(), m.modified().unwrap()));
            }
        }
    }
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn runs_are_added_in_hive_folders_and_never_held_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let (r1, r2) = runs(tmp.path());
    let wh = tmp.path().join("wh");
    let keys = ["--partition-by", "run,host", "--quiet"];
    ok(xprof_sql(
        &[&["convert", s(&r1), "-o", s(&wh)], &keys[..]].concat(),
    ));
    // Every table, one file per trace, in its run and host folder.
    let first = files_under(&wh);
    for t in Table::ALL {
        for (id, host) in [(0, "hostA"), (1, "hostB")] {
            let rel = format!("{}/run=r1/host={host}/{id:06}-{host}.parquet", t.name());
            assert!(first.contains_key(&rel), "{rel} missing: {first:?}");
        }
    }
    assert_eq!(first.len(), 2 * Table::ALL.len(), "{first:?}");

    // A new run adds files and rewrites none.
    ok(xprof_sql(
        &[&["convert", s(&r2), "-o", s(&wh)], &keys[..]].concat(),
    ));
    let second = files_under(&wh);
    for (rel, meta) in &first {
        assert_eq!(second.get(rel), Some(meta), "{rel} was rewritten");
    }
    assert_eq!(second.len(), 3 * Table::ALL.len());
    assert!(second.contains_key("events/run=r2/host=hostA/000002-hostA.parquet"));

    // The same run again is refused, and nothing changes.
    let e = err(xprof_sql(
        &[&["convert", s(&r1), "-o", s(&wh)], &keys[..]].concat(),
    ));
    assert!(
        e.contains("holds run r1 host hostA already (trace 0)") && e.contains("--replace"),
        "{e}"
    );
    assert_eq!(files_under(&wh), second);
    // So is another layout.
    let e = err(xprof_sql(&[
        "convert",
        s(&r2),
        "-o",
        s(&wh),
        "--partition-by",
        "host,run",
        "--quiet",
    ]));
    assert!(
        e.contains("is partitioned by run,host, not partitioned by host,run"),
        "{e}"
    );
    let e = err(xprof_sql(&["convert", s(&r2), "-o", s(&wh), "--quiet"]));
    assert!(e.contains("not a flat dataset"), "{e}");
    assert_eq!(files_under(&wh), second);

    // --replace converts it again: new trace ids, the old files gone, the
    // other run untouched.
    ok(xprof_sql(
        &[&["convert", s(&r1), "-o", s(&wh), "--replace"], &keys[..]].concat(),
    ));
    let third = files_under(&wh);
    assert_eq!(third.len(), 3 * Table::ALL.len(), "{third:?}");
    assert!(
        third
            .keys()
            .all(|f| !f.contains("/000000-") && !f.contains("/000001-"))
    );
    for (rel, meta) in second.iter().filter(|(f, _)| f.contains("run=r2")) {
        assert_eq!(third.get(rel), Some(meta), "{rel} was rewritten");
    }
    let traces = ok(xprof_sql(&[
        "query",
        s(&wh),
        "--format",
        "csv",
        "-e",
        "SELECT trace_id, run, host FROM traces ORDER BY trace_id",
    ]));
    assert_eq!(
        traces,
        "trace_id,run,host\n2,r2,hostA\n3,r1,hostA\n4,r1,hostB\n"
    );
}

#[test]
fn a_run_needs_a_name_and_a_date_needs_a_capture_time() {
    let tmp = tempfile::tempdir().unwrap();
    let file = cpu_fixture("jax_cpu_mlp_5steps_w128");
    let wh = tmp.path().join("wh");
    // A file outside a run folder has no run to partition by...
    let e = err(xprof_sql(&[
        "convert",
        s(&file),
        "-o",
        s(&wh),
        "--partition-by",
        "run",
    ]));
    assert!(e.contains("has no run") && e.contains("--run-name"), "{e}");
    assert!(!wh.exists(), "a refused conversion left {}", wh.display());
    // ... until it is given one.
    ok(xprof_sql(&[
        "convert",
        s(&file),
        "-o",
        s(&wh),
        "--partition-by",
        "run",
        "--run-name",
        "baseline",
        "--quiet",
    ]));
    assert!(
        wh.join("events/run=baseline/000000-jax_cpu_mlp_5steps_w128.parquet")
            .is_file()
    );
    // A name that is no plain folder name is refused, not mangled.
    let e = err(xprof_sql(&[
        "convert",
        s(&file),
        "-o",
        s(&tmp.path().join("wh2")),
        "--partition-by",
        "run",
        "--run-name",
        "a b/c",
    ]));
    assert!(e.contains("cannot be a partition folder"), "{e}");

    // The date: the UTC day of the profile's start time, as DataFusion
    // computes it from `traces.start_unix_ns`.
    let dated = tmp.path().join("dated");
    ok(xprof_sql(&[
        "convert",
        s(&file),
        "-o",
        s(&dated),
        "--partition-by",
        "date",
        "--quiet",
    ]));
    let day = ok(xprof_sql(&[
        "query",
        s(&file),
        "--format",
        "csv",
        "-e",
        "SELECT arrow_cast(arrow_cast(to_timestamp_nanos(start_unix_ns), 'Date32'), 'Utf8') AS day FROM traces",
    ]));
    let day = day.lines().nth(1).expect("a start time").to_string();
    assert!(day.starts_with("20"), "{day}");
    let folder = dated.join(format!("events/date={day}"));
    assert!(folder.is_dir(), "{} missing", folder.display());
    let files = ok(xprof_sql(&[
        "query",
        s(&dated),
        "--format",
        "csv",
        "-e",
        "SELECT date, count(*) AS n FROM events GROUP BY date",
    ]));
    assert_eq!(files, format!("date,n\n{day},391\n"));
}

#[test]
fn run_folder_time_stamps_are_dates() {
    use xprof_sql::format::dataset::{run_name_date, utc_date};
    assert_eq!(
        run_name_date("2026_12_02_16_05_51").as_deref(),
        Some("2026-12-02")
    );
    assert_eq!(run_name_date("2026_13_02_16_05_51"), None);
    assert_eq!(run_name_date("r1"), None);
    assert_eq!(run_name_date("2026_12_02_16_05"), None);
    // Checked against `date -u -d @SECONDS +%F`.
    for (secs, day) in [
        (0i64, "1970-01-01"),
        (951_782_400, "2000-02-29"),
        (951_868_799, "2000-02-29"),
        (4_107_542_400, "2100-03-01"),
        (-1, "1969-12-31"),
        (1_796_227_200, "2026-12-02"),
    ] {
        assert_eq!(utc_date(secs * 1_000_000_000), day, "{secs}");
    }
}

/// Each input converted twice: flat, and partitioned by run and host.
fn flat_and_warehouse(tmp: &Path) -> (PathBuf, PathBuf) {
    let (r1, r2) = runs(tmp);
    let flat = tmp.join("flat");
    let wh = tmp.join("wh");
    ok(xprof_sql(&[
        "convert",
        s(&r1),
        s(&r2),
        "-o",
        s(&flat),
        "--quiet",
    ]));
    ok(xprof_sql(&[
        "convert",
        s(&r1),
        s(&r2),
        "-o",
        s(&wh),
        "--partition-by",
        "run,host",
        "--quiet",
    ]));
    (flat, wh)
}

async fn session(path: &Path) -> ProfileSession {
    let mut session = ProfileSession::new();
    session
        .open(&[path], &OpenOptions::default())
        .await
        .expect("opens");
    session
}

async fn plan_text(session: &ProfileSession, sql: &str) -> String {
    let batches = session.collect(&format!("EXPLAIN {sql}")).await.unwrap();
    let mut text = String::new();
    for b in &batches {
        let plans = b.column(1).as_string::<i32>();
        for i in 0..b.num_rows() {
            text.push_str(plans.value(i));
            text.push('\n');
        }
    }
    text
}

/// The Parquet files a plan reads (its scans' file groups).
fn files_scanned(plan: &str) -> Vec<String> {
    let mut files: Vec<String> = plan
        .split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        .filter(|w| w.ends_with(".parquet"))
        .map(str::to_string)
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn a_filter_on_a_partition_column_reads_only_its_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let (flat, wh) = flat_and_warehouse(tmp.path());
    let warehouse = session(&wh).await;
    let sum = "SELECT sum(dur_ps) FROM events";
    let all = files_scanned(&plan_text(&warehouse, sum).await);
    assert_eq!(all.len(), 3, "{all:?}");
    for (filter, folders) in [
        ("run = 'r1'", vec!["run=r1/host=hostA", "run=r1/host=hostB"]),
        (
            "host = 'hostA'",
            vec!["run=r1/host=hostA", "run=r2/host=hostA"],
        ),
        ("run = 'r2' AND host = 'hostA'", vec!["run=r2/host=hostA"]),
        ("run = 'r3'", vec![]),
    ] {
        let sql = format!("{sum} WHERE {filter}");
        let plan = plan_text(&warehouse, &sql).await;
        let files = files_scanned(&plan);
        assert_eq!(files.len(), folders.len(), "{filter}: {plan}");
        for (f, folder) in files.iter().zip(&folders) {
            assert!(f.contains(folder), "{filter}: {f} is not in {folder}");
        }
        // And the answer is the flat dataset's, filtered through `traces`.
        let here = warehouse.collect(&sql).await.unwrap();
        let there = session(&flat)
            .await
            .collect(&format!(
                "SELECT sum(dur_ps) FROM events e JOIN traces t ON t.trace_id = e.trace_id WHERE {}",
                filter
                    .replace("run =", "t.run =")
                    .replace("host =", "t.host =")
            ))
            .await
            .unwrap();
        assert_eq!(rows(&here), rows(&there), "{filter}");
    }
    // The partition columns are the trace's run and host.
    let mismatched = warehouse
        .collect(
            "SELECT count(*) FROM events e JOIN traces t ON t.trace_id = e.trace_id \
             WHERE e.run <> t.run OR e.host <> t.host",
        )
        .await
        .unwrap();
    assert_eq!(rows(&mismatched), vec!["0".to_string()]);
}

/// Rows as text, sorted: floats to 12 significant digits (files may be
/// read in another order, and sums of floats with them), the rest as
/// Arrow displays them.
pub(crate) fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = rows_in_order(batches);
    out.sort();
    out
}

/// [`rows`] in the order the batches hold them: for a query whose answer
/// is ordered (`ORDER BY`), where the order is part of the answer.
pub(crate) fn rows_in_order(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let cols: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for i in 0..b.num_rows() {
            let cells: Vec<String> = b
                .columns()
                .iter()
                .zip(&cols)
                .map(|(c, f)| match c.data_type() {
                    DataType::Float64 if c.is_valid(i) => {
                        format!(
                            "{:.11e}",
                            c.as_primitive::<arrow::datatypes::Float64Type>().value(i)
                        )
                    }
                    _ => f.value(i).to_string(),
                })
                .collect();
            out.push(cells.join("|"));
        }
    }
    out
}

#[tokio::test]
async fn every_table_and_view_answers_as_on_a_flat_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let (flat, wh) = flat_and_warehouse(tmp.path());
    let (flat, wh) = (session(&flat).await, session(&wh).await);
    for t in Table::ALL {
        let cols: Vec<String> = t
            .def()
            .columns
            .iter()
            .map(|c| format!("\"{}\"", c.name))
            .collect();
        let sql = format!("SELECT {} FROM {}", cols.join(", "), t.name());
        let (a, b) = (
            flat.collect(&sql).await.unwrap(),
            wh.collect(&sql).await.unwrap(),
        );
        assert_eq!(rows(&a), rows(&b), "table {}", t.name());
        if t != Table::Traces {
            assert!(
                !rows(&b).is_empty() || rows(&a).is_empty(),
                "{} is empty on the warehouse",
                t.name()
            );
        }
    }
    let mut compared = 0;
    for v in VIEWS {
        let sql = format!("SELECT * FROM {}", v.name);
        let a = flat.collect(&sql).await.unwrap();
        let b = wh.collect(&sql).await.unwrap();
        let names = |bs: &[RecordBatch]| {
            bs.first().map(|b| {
                b.schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect::<Vec<_>>()
            })
        };
        if let (Some(x), Some(y)) = (names(&a), names(&b)) {
            assert_eq!(x, y, "view {} has other columns on a warehouse", v.name);
        }
        assert_eq!(rows(&a), rows(&b), "view {}", v.name);
        compared += usize::from(!rows(&a).is_empty());
    }
    // The CPU profiles fill most views; the TPU/GPU/LLO-only ones are empty
    // on both.
    assert!(compared >= 10, "only {compared} views had rows");
}

#[tokio::test]
async fn a_warehouse_opens_only_with_warehouses_partitioned_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, wh) = flat_and_warehouse(tmp.path());
    let mut session = ProfileSession::new();
    let e = session
        .open(
            &[wh.clone(), cpu_fixture("jax_cpu_nested_4steps")],
            &OpenOptions::default(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("opens only with warehouses of the same keys")
            && e.contains("--partition-by run,host"),
        "{e}"
    );
}
