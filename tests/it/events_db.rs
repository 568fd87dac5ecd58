//! The `events_db` view (`--schema events_db`) against XProf 2.24.2's
//! Events DB on the same files (tests/fixtures/events_db, made by its
//! make_expected.py): the five queries XProf documents for its `Events`
//! view run unchanged and answer as XProf does, the view has XProf's 31
//! columns and types, and its rows are XProf's, column by column.

use crate::common;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use common::*;
use xprof_sql::query::{OpenOptions, ProfileSession, SessionOptions};

/// The fixtures XProf's answers were made on: the real CPU and GPU
/// profiles, and the synthetic TPU ones (no real TPU capture is here).
const FIXTURES: [&str; 7] = [
    "xspace/jax_cpu_mlp_5steps_w128",
    "xspace/jax_cpu_mlp_20steps_w256",
    "xspace/jax_cpu_nested_4steps",
    "gpu/jax_gpu",
    "gpu/jax_pallas",
    "tpu/synthetic_tpu",
    "tpu/synthetic_self_time",
];

fn stem(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap()
}

async fn session(rel: &str) -> ProfileSession {
    let mut s = ProfileSession::builder()
        .options(SessionOptions {
            events_db_schema: true,
            ..Default::default()
        })
        .build()
        .unwrap();
    s.open(
        &[fixture(&format!("{rel}.xplane.pb"))],
        &OpenOptions::default(),
    )
    .await
    .unwrap();
    s
}

/// Every cell as text: NULL empty, lists as compact JSON arrays, as the
/// expected files write them.
fn cells(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let options = FormatOptions::default();
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let row = b
                .columns()
                .iter()
                .map(|c| {
                    if c.is_null(i) {
                        return String::new();
                    }
                    match c.data_type() {
                        DataType::List(_) => {
                            let items = c.as_list::<i32>().value(i);
                            let items = items.as_string::<i32>();
                            serde_json::to_string(
                                &items.iter().map(|v| v.unwrap_or("")).collect::<Vec<_>>(),
                            )
                            .unwrap()
                        }
                        _ => ArrayFormatter::try_new(c.as_ref(), &options)
                            .unwrap()
                            .value(i)
                            .to_string(),
                    }
                })
                .collect();
            rows.push(row);
        }
    }
    rows
}

/// A CSV expected file: its header and rows.
fn expected_csv(name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let path = fixture(&format!("events_db/{name}"));
    let text = if name.ends_with(".gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        text
    } else {
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
    };
    let mut lines = text.lines();
    let header = split_csv(lines.next().unwrap());
    (header, lines.map(split_csv).collect())
}

/// Equal as XProf writes numbers (DuckDB's shortest double text, ours
/// Arrow's) or as text.
fn same_cell(ours: &str, xprof: &str) -> bool {
    match (ours.parse::<f64>(), xprof.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
        _ => ours == xprof,
    }
}

#[tokio::test]
async fn xprofs_documented_queries_answer_as_xprof() {
    let mut answered = [0usize; 5];
    for rel in FIXTURES {
        let s = session(rel).await;
        for n in 1..=5 {
            let query = std::fs::read_to_string(fixture(&format!("events_db/q{n}.sql"))).unwrap();
            let df = s.sql(&query).await.unwrap_or_else(|e| panic!("q{n}: {e}"));
            let names: Vec<String> = df
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            let got = cells(&df.collect().await.unwrap());
            let (header, want) = expected_csv(&format!("{}.q{n}.csv", stem(rel)));
            let at = format!("{} q{n}", stem(rel));
            assert_eq!(names, header, "{at}: columns");
            assert_eq!(got.len(), want.len(), "{at}: rows\n{got:?}\n{want:?}");
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    g.iter().zip(w).all(|(a, b)| same_cell(a, b)),
                    "{at}:\n  ours  {g:?}\n  XProf {w:?}"
                );
            }
            answered[n - 1] += got.len();
        }
    }
    // Every query has rows somewhere (the real captures have no `XLA Ops`
    // rows: queries 2, 4 and 5 answer on the TPU files).
    assert!(answered.iter().all(|n| *n > 0), "{answered:?}");
}

/// XProf's Arrow schema (`xspace/expected/events_db_schema.txt`): names,
/// order and types. (XProf declares every column nullable; the view
/// declares what its rows hold: a column that is never NULL, like
/// `device`, says so, which DataFusion may rely on.)
#[tokio::test]
async fn the_view_has_xprofs_columns_and_types() {
    let text = std::fs::read_to_string(fixture("xspace/expected/events_db_schema.txt")).unwrap();
    let arrow_part = text
        .split("## Arrow schema")
        .nth(1)
        .unwrap()
        .split("## Parquet schema")
        .next()
        .unwrap();
    let want: Vec<(String, String)> = arrow_part
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with(' ') && !l.starts_with('('))
        .map(|l| {
            let (name, ty) = l.split_once(": ").unwrap();
            (name.to_string(), ty.to_string())
        })
        .collect();
    assert_eq!(want.len(), 31);
    let s = session(FIXTURES[0]).await;
    let df = s.sql("SELECT * FROM Events").await.unwrap();
    let got: Vec<(String, String)> = df
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let ty = match f.data_type() {
                DataType::Utf8 => "string".to_string(),
                DataType::UInt32 => "uint32".to_string(),
                DataType::UInt64 => "uint64".to_string(),
                DataType::Int64 => "int64".to_string(),
                DataType::List(item) if *item.data_type() == DataType::Utf8 => {
                    "list<element: string>".to_string()
                }
                other => format!("{other:?}"),
            };
            (f.name().clone(), ty)
        })
        .collect();
    assert_eq!(got, want);
}

/// `trace_args` as the set of its `key=value` parts, without the
/// `is_eager` stats XProf's event grouping adds (and this view does not).
fn args_parts(text: &str) -> Vec<String> {
    let mut parts: Vec<String> = text
        .split(',')
        .filter(|p| !p.is_empty() && !p.starts_with("is_eager="))
        .map(str::to_string)
        .collect();
    parts.sort();
    parts
}

#[tokio::test]
async fn the_view_is_xprofs_events_db_row_by_row() {
    for rel in FIXTURES {
        let s = session(rel).await;
        let batches = s
            .sql("SELECT * FROM Events")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let (header, want) = expected_csv(&format!("{}.events.csv.gz", stem(rel)));
        let args = header.iter().position(|c| c == "trace_args").unwrap();
        let fingerprint = header.iter().position(|c| c == "hlo_fingerprint").unwrap();
        // Rows as comparable text: trace_args as its sorted parts, and
        // hlo_fingerprint (not computed here) blank.
        let canonical = |mut r: Vec<String>| {
            r[args] = args_parts(&r[args]).join(",");
            r[fingerprint] = String::new();
            r
        };
        let mut got: Vec<Vec<String>> = cells(&batches).into_iter().map(canonical).collect();
        let mut want: Vec<Vec<String>> = want.into_iter().map(canonical).collect();
        got.sort();
        want.sort();
        assert_eq!(got.len(), want.len(), "{rel}: rows");
        let mut wrong = Vec::new();
        for (g, w) in got.iter().zip(&want) {
            for (c, name) in header.iter().enumerate() {
                if !same_cell(&g[c], &w[c]) {
                    wrong.push(format!(
                        "{name}: ours {:?}, XProf {:?}\n  row {w:?}",
                        g[c], w[c]
                    ));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{rel}: {} differences, first:\n{}",
            wrong.len(),
            wrong[..wrong.len().min(8)].join("\n")
        );
    }
}

/// The CLI's `--schema events_db`: XProf's first documented query, as
/// written for `xprof query_events_db`.
#[test]
fn the_cli_runs_xprofs_queries_with_schema_events_db() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(["query", fixture("gpu/jax_gpu.xplane.pb").to_str().unwrap()])
        .args(["--schema", "events_db", "--format", "csv", "-e"])
        .arg(std::fs::read_to_string(fixture("events_db/q1.sql")).unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let (_, want) = expected_csv("jax_gpu.q1.csv");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("total_events\n{}\n", want[0][0])
    );
}

/// Double stats in `trace_args` are written as XProf writes them
/// (`absl::StrCat`, `%g`): where rounding to six digits carries into the
/// next power of ten, the notation is the carried value's (999999.7 is
/// `1e+06`, 9.9999996e-05 is `0.0001`), as XProf 2.24.2 writes them.
#[tokio::test]
async fn trace_args_write_doubles_as_xprof_across_a_carry() {
    use prost::Message;
    use xprof_testdata::xspace_proto::{XSpace, x_stat};
    use xprof_testdata::{PlaneBuilder, event, line};

    let mut plane = PlaneBuilder::new(1, "/host:CPU");
    let op = plane.event_metadata("op", "", vec![]);
    let stats = vec![
        plane.stat("big", x_stat::Value::DoubleValue(999_999.7)),
        plane.stat("small", x_stat::Value::DoubleValue(9.999_999_6e-5)),
        plane.stat("plain", x_stat::Value::DoubleValue(0.25)),
    ];
    plane.line(line(1, "main", 0, vec![event(op, 0, 1_000, stats)]));
    let bytes = XSpace {
        planes: vec![plane.finish()],
        ..Default::default()
    }
    .encode_to_vec();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doubles.xplane.pb");
    std::fs::write(&path, bytes).unwrap();
    let mut s = ProfileSession::builder()
        .options(SessionOptions {
            events_db_schema: true,
            ..Default::default()
        })
        .build()
        .unwrap();
    s.open(&[path], &OpenOptions::default()).await.unwrap();
    let got = cells(
        &s.sql("SELECT trace_args FROM Events")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap(),
    );
    assert_eq!(got, [["big=1e+06,plain=0.25,small=0.0001"]]);
}

/// Every cell as text, NULL as `␀` (unlike an empty string), with the
/// columns' names and types first.
fn typed_cells(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let options = FormatOptions::default().with_null("␀");
    let mut rows: Vec<Vec<String>> = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            rows.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        ArrayFormatter::try_new(c.as_ref(), &options)
                            .unwrap()
                            .value(i)
                            .to_string()
                    })
                    .collect(),
            );
        }
    }
    rows.sort();
    if let Some(b) = batches.first() {
        let schema = b.schema();
        let fields = schema.fields().iter();
        rows.insert(
            0,
            fields
                .map(|f| format!("{}: {}", f.name(), f.data_type()))
                .collect(),
        );
    }
    rows
}

/// The provider that computes `events_db` gives the rows of the view's SQL
/// definition (`xprof-sql schema events_db`), whole, counted, and for
/// projections that leave out each of its costly parts (stats, steps,
/// nested ops, HLO instructions, TPU step and module names), on every
/// fixture (host steps, GPU kernels and their instructions, TPU ops with
/// nested ops and metadata stats).
#[tokio::test]
async fn the_provider_gives_the_rows_of_the_sql_definition() {
    let view = xprof_sql::query::views::VIEWS
        .iter()
        .find(|v| v.name == "events_db")
        .expect("the events_db view");
    let definition = format!("({}) AS reference", view.sql.trim().trim_end_matches(';'));
    for rel in FIXTURES {
        // The project's layout: `events` is the table the definition reads.
        let mut s = ProfileSession::builder()
            .options(SessionOptions::default())
            .build()
            .unwrap();
        s.open(
            &[fixture(&format!("{rel}.xplane.pb"))],
            &OpenOptions::default(),
        )
        .await
        .unwrap();
        // The projections, and `step IS NOT NULL` (the filter the
        // provider takes) with the step read and not read.
        for (columns, filter) in [
            ("*", ""),
            ("count(*) AS n", ""),
            ("device, step, start_ns, end_ns", ""),
            ("kernel_details, flow, source_line, category", ""),
            (
                "self_time_ns, kernel_name, stream_id, thread_id, thread_name, correlation_id",
                "",
            ),
            (
                "hlo_op, hlo_module, tf_op_name, tf_op_type, input_tensors, output_tensors",
                "",
            ),
            ("trace_args, flops, memory_accessed", ""),
            ("device, step, start_ns, end_ns", " WHERE step IS NOT NULL"),
            ("count(*) AS n", " WHERE step IS NOT NULL"),
            (
                "kernel_name, category, hlo_op",
                " WHERE step IS NOT NULL AND start_ns > 0",
            ),
        ] {
            let mut got = Vec::new();
            for from in ["events_db", definition.as_str()] {
                let sql = format!("SELECT {columns} FROM {from}{filter}");
                let batches = s.sql(&sql).await.unwrap().collect().await.unwrap();
                got.push(typed_cells(&batches));
            }
            // Host steps and GPU kernels in their launch's step; the TPU
            // ones' `Steps` names (synthetic_tpu).
            let has_steps = !rel.ends_with("jax_pallas") && !rel.ends_with("self_time");
            assert!(
                got[0].len() > 1 || (!filter.is_empty() && !has_steps),
                "{rel}: {columns}{filter}: no rows"
            );
            if !filter.is_empty() {
                // The provider takes the filter: only rows with a step
                // are made.
                let plan = explain_text(
                    s.context(),
                    &format!("SELECT {columns} FROM events_db{filter}"),
                )
                .await;
                assert!(plan.contains("rows with a step only"), "{rel}: {plan}");
            }
            let only = |a: &Vec<Vec<String>>, b: &Vec<Vec<String>>| {
                a.iter()
                    .filter(|r| !b.contains(r))
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
            };
            assert!(
                got[0] == got[1],
                "{rel}: {columns}{filter}: {} rows against {}; only the provider's: {:?}; only the SQL's: {:?}",
                got[0].len(),
                got[1].len(),
                only(&got[0], &got[1]),
                only(&got[1], &got[0]),
            );
        }
    }
}
