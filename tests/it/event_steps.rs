//! `event_steps`: the walk that computes it gives the rows of its
//! recursive SQL definition (`xprof-sql schema event_steps`), on every
//! real profile with steps and on a graph built to hit each rule.

use std::path::PathBuf;

use serde_json::json;

use crate::common::{fixture, i, query_rows, s};

/// One row of the view: trace, event, step number, root event, step name.
type StepRow = (i64, i64, i64, i64, String);

/// The rows of `from` (the view's name, or its SQL as a subquery) over
/// `paths`, sorted.
async fn steps(paths: &[PathBuf], from: &str) -> Vec<StepRow> {
    let sql = format!(
        "SELECT trace_id, event_id, CAST(step_group_id AS BIGINT) AS step, \
         step_root_event_id, step_name FROM {from}"
    );
    let mut rows: Vec<StepRow> = query_rows(paths, &sql)
        .await
        .iter()
        .map(|r| {
            (
                i(r, "trace_id"),
                i(r, "event_id"),
                i(r, "step"),
                i(r, "step_root_event_id"),
                s(r, "step_name"),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// The view's SQL definition, as a subquery.
fn definition() -> String {
    let view = xprof_sql::query::views::VIEWS
        .iter()
        .find(|v| v.name == "event_steps")
        .expect("the event_steps view");
    format!("({}) AS reference", view.sql.trim().trim_end_matches(';'))
}

/// On the real profiles (JAX on CPU, nested host steps, JAX on GPU where
/// kernels take their launch's step, a Pallas kernel, and a PyTorch trace
/// with launches but no step roots), the walk's rows are the recursive
/// SQL's, row for row.
#[tokio::test]
async fn the_walk_gives_the_rows_of_the_recursive_definition_on_real_profiles() {
    for (rel, with_steps) in [
        ("xspace/jax_cpu_mlp_5steps_w128.xplane.pb", true),
        ("xspace/jax_cpu_mlp_20steps_w256.xplane.pb", true),
        ("xspace/jax_cpu_nested_4steps.xplane.pb", true),
        ("gpu/jax_gpu.xplane.pb", true),
        ("gpu/jax_pallas.xplane.pb", true),
        ("gpu/torch_kineto.json", false),
    ] {
        let paths = [fixture(rel)];
        let walked = steps(&paths, "event_steps").await;
        let defined = steps(&paths, &definition()).await;
        assert_eq!(walked.len(), defined.len(), "{rel}");
        assert_eq!(walked, defined, "{rel}");
        assert_eq!(!walked.is_empty(), with_steps, "{rel}");
    }
}

/// A Chrome trace whose events make a step graph by their args: nesting
/// on a thread, producer (`_pt`, `_p`) to consumer (`_ct`, `_c`) chains,
/// step roots (`_r`) with and without a number.
fn step_graph() -> serde_json::Value {
    let mut events = Vec::new();
    let mut event = |name: &str, tid: i64, ts: i64, dur: i64, args: serde_json::Value| {
        events.push(json!({"ph": "X", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": args}));
    };
    // The first step: its root produces 1; `inner`, a root nested in it,
    // starts no step of its own.
    event(
        "train",
        1,
        0,
        100,
        json!({"_r": 1, "iter_num": 7, "_pt": 1, "_p": 1}),
    );
    event("inner", 1, 10, 20, json!({"_r": 1, "step_num": 99}));
    event("in_inner", 1, 12, 5, json!({}));
    // A chain: hop i consumes i and produces i + 1, so `train 7` reaches
    // hop i in i hops, and hops 65 and 66 are beyond its 64.
    for hop in 1..=66 {
        event(
            "hop",
            100 + hop,
            200 + hop,
            1,
            json!({"_ct": 1, "_c": hop, "_pt": 1, "_p": hop + 1}),
        );
    }
    // A later root producing 64: hop 64 stays in the first step (earlier
    // root), hops 65 and 66 are this one's (2 and 3 hops from it), though
    // the first root's walk got to hop 64 before it. A negative int step
    // number names the step by its unsigned value.
    event(
        "train",
        2,
        1000,
        10,
        json!({"_r": 1, "step_num": -3, "_pt": 1, "_p": 64}),
    );
    // A root without a number, named after its step's number (2); its
    // producer id -1 is the consumer's 2^64 - 1; a cycle behind it.
    event("eval", 3, 2000, 10, json!({"_r": 1, "_pt": 2, "_p": -1}));
    event(
        "consumer",
        4,
        2100,
        1,
        json!({"_ct": 2, "_c": 18446744073709551615u64, "_pt": 2, "_p": 500}),
    );
    event(
        "cycle_a",
        5,
        2200,
        1,
        json!({"_ct": 2, "_c": 500, "_pt": 2, "_p": 501}),
    );
    event(
        "cycle_b",
        6,
        2300,
        1,
        json!({"_ct": 2, "_c": 501, "_pt": 2, "_p": 500}),
    );
    // An event consuming what it produces has no edge to itself.
    event(
        "self_loop",
        7,
        2400,
        1,
        json!({"_ct": 3, "_c": 9, "_pt": 3, "_p": 9}),
    );
    // `_r` of 0 is no root.
    event("not_root", 8, 3000, 10, json!({"_r": 0, "iter_num": 1}));
    event("under_not_root", 8, 3001, 1, json!({}));
    json!({ "traceEvents": events })
}

/// Writes the step graph twice (two traces with the same ids), and
/// returns the folder and the files.
fn two_step_graphs() -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let text = serde_json::to_vec(&step_graph()).unwrap();
    let paths: Vec<PathBuf> = ["a", "b"]
        .iter()
        .map(|n| {
            let p = dir.path().join(format!("{n}.trace.json"));
            std::fs::write(&p, &text).unwrap();
            p
        })
        .collect();
    (dir, paths)
}

/// Event names per step name and trace.
async fn names_by_step(paths: &[PathBuf]) -> Vec<(i64, i64, String, String, i64)> {
    query_rows(
        paths,
        "SELECT s.trace_id, CAST(s.step_group_id AS BIGINT) AS step, s.step_name, e.name, count(*) AS n \
         FROM event_steps s JOIN events e ON e.trace_id = s.trace_id AND e.event_id = s.event_id \
         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 4",
    )
    .await
    .iter()
    .map(|r| {
        (
            i(r, "trace_id"),
            i(r, "step"),
            s(r, "step_name"),
            s(r, "name"),
            i(r, "n"),
        )
    })
    .collect()
}

/// Each rule of the view on the graph above, in two traces at once: the
/// earliest root within 64 hops wins, also where its walk passed the
/// event a later root reaches its successors through; nested roots start
/// no step; ids compare unsigned; cycles end; steps are numbered per
/// trace. The walk's rows are also the recursive SQL's.
#[tokio::test]
async fn each_rule_of_the_definition_holds_on_a_built_step_graph() {
    let (_dir, paths) = two_step_graphs();
    let got = names_by_step(&paths).await;
    let mut want = Vec::new();
    let traces: std::collections::BTreeSet<i64> = got.iter().map(|r| r.0).collect();
    assert_eq!(traces.len(), 2, "{got:?}");
    for trace in traces {
        for (step, step_name, name, n) in [
            (0, "train 7", "hop", 64),
            (0, "train 7", "in_inner", 1),
            (0, "train 7", "inner", 1),
            (0, "train 7", "train", 1),
            (1, "train 18446744073709551613", "hop", 2),
            (1, "train 18446744073709551613", "train", 1),
            (2, "eval 2", "consumer", 1),
            (2, "eval 2", "cycle_a", 1),
            (2, "eval 2", "cycle_b", 1),
            (2, "eval 2", "eval", 1),
        ] {
            want.push((trace, step, step_name.to_string(), name.to_string(), n));
        }
    }
    assert_eq!(got, want);
    let walked = steps(&paths, "event_steps").await;
    assert_eq!(walked, steps(&paths, &definition()).await);
    // Hop 64 is the first step's, 65 and 66 the second's: by start time.
    let hops = query_rows(
        &paths,
        "SELECT e.ts_ps, s.step_name FROM event_steps s JOIN events e \
         ON e.trace_id = s.trace_id AND e.event_id = s.event_id \
         WHERE e.name = 'hop' AND e.ts_ps >= 264000000 AND s.trace_id = (SELECT min(trace_id) FROM events) \
         ORDER BY 1",
    )
    .await;
    let hops: Vec<(i64, String)> = hops
        .iter()
        .map(|r| (i(r, "ts_ps"), s(r, "step_name")))
        .collect();
    assert_eq!(
        hops,
        vec![
            (264_000_000, "train 7".to_string()),
            (265_000_000, "train 18446744073709551613".to_string()),
            (266_000_000, "train 18446744073709551613".to_string()),
        ]
    );
}

/// The view's column types are those the SQL view declared before the
/// walk replaced it (`DESCRIBE event_steps` then), and the columns it
/// declares NOT NULL hold no NULL.
#[tokio::test]
async fn the_walk_keeps_the_views_column_types() {
    let paths = [fixture("xspace/jax_cpu_nested_4steps.xplane.pb")];
    let described = query_rows(
        &paths,
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns \
         WHERE table_name = 'event_steps' ORDER BY ordinal_position",
    )
    .await;
    let described: Vec<[String; 3]> = described
        .iter()
        .map(|r| ["column_name", "data_type", "is_nullable"].map(|k| s(r, k)))
        .collect();
    let want = [
        ("trace_id", "Int32"),
        ("event_id", "Int64"),
        ("step_group_id", "Decimal128(20, 0)"),
        ("step_root_event_id", "Int64"),
        ("step_name", "Utf8View"),
    ]
    .map(|(c, t)| [c.to_string(), t.to_string(), "NO".to_string()]);
    assert_eq!(described, want);
    let counts = query_rows(
        &paths,
        "SELECT count(*) AS n, count(trace_id) + count(event_id) + count(step_group_id) \
         + count(step_root_event_id) + count(step_name) AS filled FROM event_steps",
    )
    .await;
    assert!(i(&counts[0], "n") > 100);
    assert_eq!(i(&counts[0], "filled"), 5 * i(&counts[0], "n"));
}

/// An XSpace host plane where events repeat a step stat with two values
/// (an `XEvent` may carry one key twice), each on a line of its own: the
/// definition takes each event's largest value of a key (`max`).
fn repeated_stats_space() -> Vec<u8> {
    use prost::Message as _;
    use xprof_testdata::xspace_proto::{XSpace, x_stat::Value};
    use xprof_testdata::{PlaneBuilder, event, line};
    let mut p = PlaneBuilder::new(1, "/host:CPU");
    let events: Vec<(&str, Vec<(&str, Value)>)> = vec![
        // The root produces 3 and 5 (the larger last) and is numbered 9,
        // not 4 (the larger first).
        (
            "train",
            vec![
                ("_r", Value::Int64Value(1)),
                ("iter_num", Value::Int64Value(9)),
                ("iter_num", Value::Int64Value(4)),
                ("_pt", Value::Int64Value(1)),
                ("_p", Value::Uint64Value(3)),
                ("_p", Value::Uint64Value(5)),
            ],
        ),
        // Consumes 5: in the step.
        (
            "consumes_5",
            vec![("_ct", Value::Int64Value(1)), ("_c", Value::Int64Value(5))],
        ),
        // Consumes 3, which the root also carries but not as its largest:
        // in no step.
        (
            "consumes_3",
            vec![("_ct", Value::Int64Value(1)), ("_c", Value::Int64Value(3))],
        ),
        // Consumes 2 and 5 (the larger last), then 5 and 2: both in the step.
        (
            "consumes_2_5",
            vec![
                ("_ct", Value::Int64Value(1)),
                ("_c", Value::Int64Value(2)),
                ("_c", Value::Int64Value(5)),
            ],
        ),
        (
            "consumes_5_2",
            vec![
                ("_ct", Value::Int64Value(1)),
                ("_c", Value::Int64Value(5)),
                ("_c", Value::Int64Value(2)),
            ],
        ),
    ];
    for (n, (name, stats)) in events.into_iter().enumerate() {
        let stats = stats
            .into_iter()
            .map(|(key, value)| p.stat(key, value))
            .collect();
        let metadata = p.event_metadata(name, "", vec![]);
        let n = n as i64;
        p.line(line(
            n + 1,
            name,
            0,
            vec![event(metadata, 1_000 * n, 500, stats)],
        ));
    }
    XSpace {
        planes: vec![p.finish()],
        ..Default::default()
    }
    .encode_to_vec()
}

#[tokio::test]
async fn an_events_repeated_stat_counts_with_its_largest_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repeated.xplane.pb");
    std::fs::write(&path, repeated_stats_space()).unwrap();
    let paths = [path];
    let walked = steps(&paths, "event_steps").await;
    assert_eq!(walked, steps(&paths, &definition()).await);
    let names: Vec<(i64, i64, String, String)> = query_rows(
        &paths,
        "SELECT st.event_id, st.step_root_event_id, st.step_name, CAST(e.name AS VARCHAR) AS name \
         FROM event_steps st JOIN events e USING (trace_id, event_id) ORDER BY st.event_id",
    )
    .await
    .iter()
    .map(|r| {
        (
            i(r, "event_id"),
            i(r, "step_root_event_id"),
            s(r, "step_name"),
            s(r, "name"),
        )
    })
    .collect();
    let in_step: Vec<&str> = names.iter().map(|n| n.3.as_str()).collect();
    assert_eq!(
        in_step,
        ["train", "consumes_5", "consumes_2_5", "consumes_5_2"]
    );
    assert!(names.iter().all(|n| n.2 == "train 9" && n.1 == names[0].0));
}
