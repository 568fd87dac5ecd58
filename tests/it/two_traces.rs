//! One trace or two: every view answers each trace of a session holding
//! two traces as it answers that trace alone. The XProf-oracle tests run
//! on one trace per session; a view that dropped `trace_id` from a join,
//! a partition or a grouping would still pass them, and fails here (the
//! two traces of each pair are the same kind of profile, so their ops,
//! kernels and steps share names).

use crate::common::*;
use crate::warehouse::rows;

use xprof_sql::query::views::VIEWS;
use xprof_sql::query::{OpenOptions, ProfileSession};

/// Pairs of fixtures of one kind, covering the CPU, GPU, TPU and LLO views
/// (and the Events DB walk through `event_steps`).
const PAIRS: [(&str, &str); 4] = [
    (
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
        "xspace/jax_cpu_mlp_20steps_w256.xplane.pb",
    ),
    ("gpu/jax_gpu.xplane.pb", "gpu/jax_pallas.xplane.pb"),
    (
        "tpu/synthetic_tpu.xplane.pb",
        "tpu/synthetic_self_time.xplane.pb",
    ),
    (
        "tpu/synthetic_llo.xplane.pb",
        "tpu/synthetic_capture.xplane.pb",
    ),
];

async fn session(paths: &[&str]) -> ProfileSession {
    let mut s = ProfileSession::new();
    let paths: Vec<_> = paths.iter().map(|p| fixture(p)).collect();
    s.open(&paths, &OpenOptions::default()).await.unwrap();
    s
}

/// The view's rows of one trace, without the `trace_id` column.
async fn trace_rows(s: &ProfileSession, view: &str, trace_id: Option<i32>) -> Vec<String> {
    let schema = s
        .sql(&format!("SELECT * FROM {view} LIMIT 0"))
        .await
        .unwrap()
        .schema()
        .clone();
    let columns: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|n| *n != "trace_id")
        .map(|n| format!("\"{n}\""))
        .collect();
    let filter = match trace_id {
        Some(t) => format!(" WHERE trace_id = {t}"),
        None => String::new(),
    };
    let sql = format!("SELECT {} FROM {view}{filter}", columns.join(", "));
    rows(
        &s.collect(&sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_trace_of_two_answers_as_alone() {
    let mut compared = 0;
    for (a, b) in PAIRS {
        let both = session(&[a, b]).await;
        let (alone_a, alone_b) = (session(&[a]).await, session(&[b]).await);
        for view in VIEWS {
            let has_trace_id = both
                .sql(&format!("SELECT * FROM {} LIMIT 0", view.name))
                .await
                .unwrap()
                .schema()
                .field_with_unqualified_name("trace_id")
                .is_ok();
            if !has_trace_id {
                continue;
            }
            for (trace_id, alone) in [(0, &alone_a), (1, &alone_b)] {
                let want = trace_rows(alone, view.name, None).await;
                let got = trace_rows(&both, view.name, Some(trace_id)).await;
                assert_eq!(
                    got, want,
                    "{}: trace {trace_id} of ({a}, {b}) answers otherwise than alone",
                    view.name
                );
                compared += usize::from(!want.is_empty());
            }
        }
    }
    // Most views have rows on some trace of these pairs.
    assert!(compared >= 40, "{compared} (view, trace) pairs with rows");
}
