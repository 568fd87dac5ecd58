//! `xprof_query::single_trace_join` is exact and fires only on one trace.
//!
//! On Parquet datasets of the real CPU and GPU profiles (one trace each:
//! the statistics say `trace_id` is one value), a session with
//! `SingleTraceJoin` and a DataFusion context without it return the same
//! batches for joins of every type, with and without a filter of their
//! own, on two and three keys; the plan shows `trace_id` gone from the
//! hash keys and in the join filter. On a dataset of two traces the rule
//! leaves the keys alone, and the answers are again DataFusion's.

use crate::common;

use std::sync::Arc;

use common::*;
use datafusion::execution::SessionStateBuilder;
use datafusion::physical_optimizer::optimizer::PhysicalOptimizer;
use datafusion::prelude::SessionContext;
use xprof_sql::query::single_trace_join::SingleTraceJoin;
use xprof_sql::query::{OpenOptions, ProfileSession, default_config};

/// Joins on `(trace_id, x)` of every type; each result is ordered on all
/// its columns.
const JOINS: &[&str] = &[
    // Inner, grouped (the benchmark's shape).
    "SELECT e.name, count(*) AS n, sum(e.dur_ps) AS total_ps FROM events e \
     JOIN tracks t USING (trace_id, track_id) WHERE t.kind <> 'counters' \
     GROUP BY e.name ORDER BY total_ps DESC, e.name",
    // Stats with their events (both sides large).
    "SELECT a.key, count(*) AS n, sum(e.dur_ps) AS total_ps FROM event_args a \
     JOIN events e USING (trace_id, event_id) GROUP BY a.key ORDER BY a.key",
    // Left and right outer: tracks without events keep their row.
    "SELECT t.track_id, t.name, count(e.event_id) AS n FROM tracks t \
     LEFT JOIN events e ON e.trace_id = t.trace_id AND e.track_id = t.track_id \
     AND e.depth = 0 GROUP BY t.track_id, t.name ORDER BY 1, 2",
    "SELECT t.track_id, count(*) AS n FROM events e \
     RIGHT JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id \
     AND e.dur_ps > 1000000 GROUP BY t.track_id ORDER BY 1",
    "SELECT coalesce(e.track_id, t.track_id) AS track, count(*) AS n FROM \
     (SELECT * FROM events WHERE depth = 0) e FULL JOIN \
     (SELECT * FROM tracks WHERE track_id % 2 = 0) t \
     ON e.trace_id = t.trace_id AND e.track_id = t.track_id GROUP BY 1 ORDER BY 1",
    // Semi and anti joins.
    "SELECT t.track_id FROM tracks t WHERE EXISTS (SELECT 1 FROM events e \
     WHERE e.trace_id = t.trace_id AND e.track_id = t.track_id AND e.depth > 0) ORDER BY 1",
    "SELECT t.track_id FROM tracks t WHERE NOT EXISTS (SELECT 1 FROM events e \
     WHERE e.trace_id = t.trace_id AND e.track_id = t.track_id AND e.depth > 0) ORDER BY 1",
    // A filter of its own, which the rule's conjunct is ANDed to.
    "SELECT e.event_id, p.event_id AS parent FROM events e JOIN events p \
     ON e.trace_id = p.trace_id AND e.parent_id = p.event_id AND e.ts_ps - p.ts_ps > 1000 \
     ORDER BY 1, 2",
    // Three keys.
    "SELECT e.name, count(*) AS n FROM events e JOIN tracks t \
     ON e.trace_id = t.trace_id AND e.track_id = t.track_id AND e.depth = t.device_id \
     GROUP BY e.name ORDER BY 1",
];

/// DataFusion's default rules, with the rule in front when `rule`.
fn session(rule: bool) -> ProfileSession {
    let mut rules = PhysicalOptimizer::new().rules;
    if rule {
        rules.insert(0, Arc::new(SingleTraceJoin));
    }
    let state = SessionStateBuilder::new()
        .with_config(default_config())
        .with_default_features()
        .with_physical_optimizer_rules(rules);
    ProfileSession::builder()
        .context(SessionContext::new_with_state(state.build()))
        .build()
        .unwrap()
}

/// A session without the rule and one with it, both on `dataset`.
async fn sessions_on(dataset: &std::path::Path) -> (ProfileSession, ProfileSession) {
    let mut plain = session(false);
    let mut rewritten = session(true);
    for s in [&mut plain, &mut rewritten] {
        s.open(&[dataset], &OpenOptions::default()).await.unwrap();
    }
    (plain, rewritten)
}

/// The `HashJoinExec` lines of a plan.
fn hash_joins(plan: &str) -> Vec<&str> {
    plan.lines()
        .filter(|l| l.contains("HashJoinExec"))
        .collect()
}

#[tokio::test]
async fn one_trace_joins_move_trace_id_to_the_filter_and_answer_the_same() {
    for input in [cpu_fixture(REAL_CPU[0]), gpu_fixture(REAL_GPU[0])] {
        let (dataset, _) = dataset_of(std::slice::from_ref(&input));
        let (plain, rewritten) = sessions_on(dataset.path()).await;
        for sql in JOINS {
            let expected = collect_one(plain.context(), sql).await;
            let got = collect_one(rewritten.context(), sql).await;
            assert_eq!(got, expected, "{sql} on {input:?}");
            let plan = explain_text(rewritten.context(), sql).await;
            let joins = hash_joins(&plan);
            assert!(!joins.is_empty(), "{plan}");
            for join in joins {
                let (keys, filter) = join.split_once("filter=").expect("a filter");
                assert!(!keys.contains("trace_id@"), "{join}");
                assert!(
                    filter.contains("trace_id@") && filter.contains(" = trace_id@"),
                    "{join}"
                );
            }
        }
        // The benchmark's join on one key gets DataFusion's array map.
        let analyzed = explain_text(rewritten.context(), &format!("ANALYZE {}", JOINS[0])).await;
        assert!(analyzed.contains("array_map_created_count=1"), "{analyzed}");
    }
}

#[tokio::test]
async fn two_traces_keep_trace_id_a_key() {
    let inputs = [cpu_fixture(REAL_CPU[0]), cpu_fixture(REAL_CPU[1])];
    let (dataset, written) = dataset_of(&inputs);
    assert_eq!(written.len(), 2);
    let (plain, rewritten) = sessions_on(dataset.path()).await;
    for sql in JOINS {
        let expected = collect_one(plain.context(), sql).await;
        assert!(expected.num_rows() > 0, "{sql}");
        let got = collect_one(rewritten.context(), sql).await;
        assert_eq!(got, expected, "{sql}");
        let plan = explain_text(rewritten.context(), sql).await;
        for join in hash_joins(&plan) {
            let keys = join.split("filter=").next().unwrap();
            assert!(keys.contains("(trace_id@"), "{join}");
        }
    }
}
