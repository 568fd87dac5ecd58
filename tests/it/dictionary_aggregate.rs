//! `xprof_query::dictionary_aggregate` is exact: on the real CPU and GPU
//! profiles, in memory and as a Parquet dataset of 64-row row groups
//! (many dictionaries, read in 64-row batches), a session grouping with
//! `DictionaryPartialAggregateExec` and a DataFusion context without it
//! (same tables, same configuration otherwise) return the same batches,
//! schema included; so does a session that emits its partial state every
//! two groups. The plan shows which aggregates it replaces.

use crate::common;

use std::sync::Arc;

use common::*;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use xprof_sql::query::dictionary_aggregate::DictionaryGroupBy;
use xprof_sql::query::{OpenOptions, ProfileSession, default_config};

/// Replaced: one dictionary key, with counts, sums, min/max, averages,
/// NULL keys, `HAVING`, a join below, `DISTINCT`; several keys mixing
/// dictionaries and integers (signed and unsigned, NULLs in both); two
/// integer keys.
const REPLACED: &[&str] = &[
    "SELECT name, count(*) AS n, sum(dur_ps) AS total_ps, min(ts_ps) AS first_ps, \
     max(dur_ps) AS longest_ps, avg(dur_ps) AS mean_ps FROM events \
     GROUP BY name ORDER BY total_ps DESC, name",
    "SELECT hlo_category, count(*) AS n, sum(self_ps) AS self_ps FROM events \
     GROUP BY hlo_category ORDER BY hlo_category NULLS FIRST",
    "SELECT key, count(*) AS n, sum(int_value) AS ints FROM event_args GROUP BY key \
     HAVING count(*) > 1 ORDER BY key",
    "SELECT e.name, count(*) AS n, sum(e.dur_ps) AS total_ps FROM events e \
     JOIN tracks t USING (trace_id, track_id) WHERE t.kind <> 'counters' \
     GROUP BY e.name ORDER BY total_ps DESC, e.name",
    // DataFusion turns it into a grouping by (name, track_id) and then by
    // name: both are replaced.
    "SELECT name, count(DISTINCT track_id) AS tracks FROM events GROUP BY name ORDER BY 1",
    "SELECT name, depth, count(*) AS n FROM events GROUP BY name, depth ORDER BY 1, 2",
    "SELECT trace_id, hlo_category, name, sum(dur_ps) AS total_ps FROM events \
     GROUP BY trace_id, hlo_category, name ORDER BY 1, 2 NULLS FIRST, 3",
    "SELECT parent_id, name, hlo_op, step_event_id, count(*) AS n, max(ts_ps) AS last_ps \
     FROM events GROUP BY parent_id, name, hlo_op, step_event_id \
     ORDER BY 1 NULLS FIRST, 2, 3 NULLS FIRST, 4 NULLS FIRST",
    "SELECT key, value_type, uint_value, count(*) AS n FROM event_args \
     GROUP BY key, value_type, uint_value ORDER BY 1, 2, 3 NULLS FIRST",
    // Two integer keys: packed into one word where a batch's values fit in
    // 32 bits and have no NULLs, and a run of equal pairs (the ops of one
    // step on a track) takes its group without hashing; NULL steps and
    // durations past 32 bits take the general path in the same partition.
    "SELECT depth, step_event_id, count(*) AS n, sum(dur_ps) AS total_ps, \
     max(ts_ps + dur_ps) - min(ts_ps) AS span_ps FROM events \
     GROUP BY depth, step_event_id ORDER BY 1, 2 NULLS FIRST",
    "SELECT depth, dur_ps, count(*) AS n FROM events GROUP BY depth, dur_ps ORDER BY 1, 2",
    "SELECT trace_id, int_value, count(*) AS n FROM event_args GROUP BY trace_id, int_value \
     ORDER BY 1, 2 NULLS FIRST",
];

/// Left alone: more than two keys, all integers, a floating-point key, five keys,
/// `FILTER`, an expression key, grouping sets.
const KEPT: &[&str] = &[
    "SELECT depth, parent_id, step_event_id, count(*) AS n FROM events \
     GROUP BY depth, parent_id, step_event_id ORDER BY 1, 2 NULLS FIRST, 3 NULLS FIRST",
    "SELECT key, double_value, count(*) AS n FROM event_args GROUP BY key, double_value \
     ORDER BY 1, 2 NULLS FIRST",
    "SELECT name, display_name, hlo_op, hlo_module, tf_op, count(*) AS n FROM events \
     GROUP BY name, display_name, hlo_op, hlo_module, tf_op ORDER BY 1, 2, 3, 4, 5",
    "SELECT name, count(*) FILTER (WHERE depth = 0) AS top FROM events GROUP BY name ORDER BY 1",
    "SELECT upper(name) AS upper_name, count(*) AS n FROM events GROUP BY upper(name) ORDER BY 1",
    "SELECT kind, count(*) AS n FROM tracks GROUP BY ROLLUP (kind) ORDER BY 1 NULLS FIRST",
];

/// Grouped by a column a Parquet dataset declares sorted (`track_id`):
/// DataFusion streams that aggregate there, which is left alone; in memory
/// nothing is declared sorted and it is replaced.
const SORTED_KEY: &str =
    "SELECT name, track_id, count(*) AS n FROM events GROUP BY name, track_id ORDER BY 1, 2";

/// A session on a context with the default configuration, and the rule
/// when `rule` is given.
fn session(rule: Option<DictionaryGroupBy>) -> ProfileSession {
    let mut state = SessionStateBuilder::new()
        .with_config(default_config())
        .with_default_features();
    if let Some(rule) = rule {
        state = state.with_physical_optimizer_rule(Arc::new(rule));
    }
    ProfileSession::builder()
        .context(SessionContext::new_with_state(state.build()))
        .build()
        .unwrap()
}

#[tokio::test]
async fn dictionary_grouping_returns_what_datafusion_returns() {
    let mut datasets = Vec::new();
    let mut inputs = Vec::new();
    for input in [cpu_fixture(REAL_CPU[0]), gpu_fixture(REAL_GPU[0])] {
        let dataset = small_row_group_dataset_of(std::slice::from_ref(&input));
        inputs.push((input, false));
        inputs.push((dataset.path().to_path_buf(), true));
        datasets.push(dataset);
    }
    for (input, small_batches) in &inputs {
        let mut plain = session(None);
        let mut sessions = vec![
            session(Some(DictionaryGroupBy::default())),
            session(Some(DictionaryGroupBy::with_max_groups(2))),
        ];
        for s in std::iter::once(&mut plain).chain(&mut sessions) {
            s.open(&[input], &OpenOptions::default()).await.unwrap();
            if *small_batches {
                split_into_small_scans(s).await;
            }
        }
        for sql in REPLACED.iter().chain(KEPT).chain([&SORTED_KEY]) {
            let expected = collect_one(plain.context(), sql).await;
            assert!(expected.num_rows() > 0, "{sql} on {input:?}");
            for s in &sessions {
                let got = collect_one(s.context(), sql).await;
                assert_eq!(got, expected, "{sql} on {input:?}");
            }
        }
        for sql in REPLACED {
            let plan = explain_text(sessions[0].context(), sql).await;
            assert!(plan.contains("DictionaryPartialAggregateExec"), "{plan}");
        }
        for sql in KEPT {
            let plan = explain_text(sessions[0].context(), sql).await;
            assert!(!plan.contains("DictionaryPartialAggregateExec"), "{plan}");
        }
        let plan = explain_text(sessions[0].context(), SORTED_KEY).await;
        let replaced = plan.contains("DictionaryPartialAggregateExec");
        assert_eq!(replaced, !*small_batches, "{plan}");
    }
}

#[tokio::test]
async fn profile_sessions_group_dictionaries_with_the_rule() {
    let mut s = ProfileSession::new();
    s.open(&[cpu_fixture(REAL_CPU[0])], &OpenOptions::default())
        .await
        .unwrap();
    let plan = explain_text(s.context(), REPLACED[0]).await;
    assert!(plan.contains("DictionaryPartialAggregateExec"), "{plan}");
}
