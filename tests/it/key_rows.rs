//! `event_args` scans kept to some stat keys are estimated by those keys'
//! rows, and the estimate is true.
//!
//! On Parquet datasets of the real CPU and GPU profiles (also in 64-row
//! row groups: many batches and dictionaries): every `event_args` file's
//! footer holds the rows of each `key`, equal to a `GROUP BY key` count of
//! the file's rows; a scan filtered by `key = 'k'` or `key IN (…)` declares
//! (inexactly) the rows the query then returns, a scan without such a
//! filter the table's rows; and a join of one key's stats with the events
//! plans its build side as one table when the estimate is under the
//! session's threshold, where the unfiltered estimate is not.

use crate::common;

use common::*;
use datafusion::common::Statistics;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::statistics::{StatisticsArgs, StatisticsContext};
use xprof_sql::format::Table;
use xprof_sql::format::dataset;
use xprof_sql::format::value_rows::{METADATA_KEY, ValueRows};
use xprof_sql::query::{OpenOptions, ProfileSession};

/// The rows per key in the footer of each `event_args` file of `dataset`.
fn footer_counts(dataset: &std::path::Path) -> Vec<ValueRows> {
    let files = dataset::table_files(dataset, Table::EventArgs).unwrap();
    assert!(!files.is_empty(), "{dataset:?}");
    files
        .iter()
        .map(|path| {
            dataset::rows_by_key(path)
                .unwrap()
                .unwrap_or_else(|| panic!("no {METADATA_KEY} in {path:?}"))
        })
        .collect()
}

/// What `plan` declares of all its partitions, as DataFusion's rules read
/// it.
fn whole_statistics(plan: &dyn ExecutionPlan) -> Statistics {
    StatisticsContext::new()
        .compute(plan, &StatisticsArgs::new())
        .unwrap()
        .as_ref()
        .clone()
}

/// What the one Parquet scan of `sql`'s plan declares.
async fn scan_statistics(session: &ProfileSession, sql: &str) -> Statistics {
    let plan = session
        .context()
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let mut scans = Vec::new();
    plan.apply(|node| {
        if node.downcast_ref::<DataSourceExec>().is_some() {
            scans.push(whole_statistics(node.as_ref()));
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    assert_eq!(scans.len(), 1, "{sql}: {plan:?}");
    scans.remove(0)
}

/// `text` as an SQL string literal.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The `(key, rows)` of `event_args` by DataFusion, most rows first.
async fn key_rows(session: &ProfileSession) -> Vec<(String, i64)> {
    let batch = collect_one(
        session.context(),
        "SELECT CAST(key AS VARCHAR) AS key, count(*) AS n FROM event_args \
         GROUP BY key ORDER BY n DESC, key",
    )
    .await;
    strings(&batch, "key")
        .into_iter()
        .zip(i64s(&batch, "n").into_iter().map(Option::unwrap))
        .collect()
}

#[tokio::test]
async fn key_filtered_event_args_scans_declare_the_rows_they_return() {
    for input in [cpu_fixture(REAL_CPU[0]), gpu_fixture(REAL_GPU[0])] {
        let (plain, _) = dataset_of(std::slice::from_ref(&input));
        let small = small_row_group_dataset_of(std::slice::from_ref(&input));
        for dataset in [plain.path(), small.path()] {
            let mut session = ProfileSession::new();
            session
                .open(&[dataset], &OpenOptions::default())
                .await
                .unwrap();
            let by_sql = key_rows(&session).await;
            assert!(by_sql.len() >= 3, "{input:?}: {by_sql:?}");

            // The footers count what the files hold.
            let footers = footer_counts(dataset);
            let by_footer: Vec<(String, i64)> = {
                let mut all = std::collections::BTreeMap::<String, i64>::new();
                for counts in &footers {
                    for (key, rows) in counts.iter() {
                        *all.entry(key.to_string()).or_default() += rows as i64;
                    }
                }
                let mut all: Vec<_> = all.into_iter().collect();
                all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                all
            };
            assert_eq!(by_footer, by_sql, "{dataset:?}");

            // A scan declares the rows its keys keep.
            let total: i64 = by_sql.iter().map(|(_, n)| n).sum();
            let (most, most_rows) = &by_sql[0];
            let (least, least_rows) = by_sql.last().unwrap();
            let (most, least) = (quoted(most), quoted(least));
            let cases = [
                (format!("key = {most}"), *most_rows),
                (format!("{least} = key"), *least_rows),
                (
                    format!("key IN ({most}, {least}) AND event_id >= 0"),
                    most_rows + least_rows,
                ),
                ("key = 'no such key'".to_string(), 0),
                (format!("key <> {most}"), total),
                ("event_id >= 0".to_string(), total),
            ];
            for (filter, expected) in cases {
                let sql = format!("SELECT * FROM event_args WHERE {filter}");
                let declared = scan_statistics(&session, &sql).await.num_rows;
                if filter.starts_with("key <>") || filter.starts_with("event_id") {
                    // No key kept: the files' rows, as DataFusion says them.
                    assert_eq!(declared.get_value(), Some(&(expected as usize)), "{sql}");
                    continue;
                }
                assert_eq!(
                    declared,
                    Precision::Inexact(expected as usize),
                    "{sql} on {dataset:?}"
                );
                let returned = collect_one(session.context(), &sql).await.num_rows();
                assert_eq!(returned as i64, expected, "{sql} on {dataset:?}");
            }
        }
    }
}

#[tokio::test]
async fn one_keys_stats_join_the_events_through_one_build_table() {
    let (dataset, _) = dataset_of(&[cpu_fixture(REAL_CPU[0])]);
    let mut session = ProfileSession::new();
    session
        .open(&[dataset.path()], &OpenOptions::default())
        .await
        .unwrap();
    let by_sql = key_rows(&session).await;
    let key = quoted(&by_sql.last().unwrap().0);
    let bytes = |sql: String| {
        let session = &session;
        async move {
            let stats = scan_statistics(session, &sql).await;
            *stats.total_byte_size.get_value().unwrap()
        }
    };
    let kept = bytes(format!(
        "SELECT trace_id, event_id, int_value FROM event_args WHERE key = {key}"
    ))
    .await;
    let events = bytes("SELECT trace_id, event_id, dur_ps FROM events".to_string()).await;
    let all = bytes("SELECT trace_id, event_id, int_value FROM event_args".to_string()).await;
    // Between the kept stats and both whole tables.
    let threshold = kept + 1;
    assert!(threshold < all.min(events), "{kept} {all} {events}");
    for set in [
        format!("SET datafusion.optimizer.hash_join_single_partition_threshold = {threshold}"),
        "SET datafusion.execution.target_partitions = 2".to_string(),
    ] {
        session.sql(&set).await.unwrap().collect().await.unwrap();
    }
    let join = |filter: &str| {
        format!(
            "SELECT a.int_value, count(*) AS n, sum(e.dur_ps) AS total_ps \
             FROM event_args a JOIN events e USING (trace_id, event_id) \
             WHERE {filter} GROUP BY a.int_value"
        )
    };
    let plan = explain_text(session.context(), &join(&format!("a.key = {key}"))).await;
    assert!(plan.contains("mode=CollectLeft"), "{plan}");
    let plan = explain_text(session.context(), &join(&format!("a.key <> {key}"))).await;
    assert!(plan.contains("mode=Partitioned"), "{plan}");
}

#[test]
fn rows_by_value_count_across_dictionaries_and_round_trip_escaped() {
    use arrow::array::{DictionaryArray, Int32Array, StringArray};
    use arrow::datatypes::Int32Type;
    let first: DictionaryArray<Int32Type> = DictionaryArray::new(
        Int32Array::from(vec![Some(0), Some(1), Some(0), None, Some(2)]),
        std::sync::Arc::new(StringArray::from(vec![Some("a\tb"), Some("c\\"), None])),
    );
    // Another dictionary, the same string at another index.
    let second: DictionaryArray<Int32Type> = DictionaryArray::new(
        Int32Array::from(vec![1, 1, 0]),
        std::sync::Arc::new(StringArray::from(vec!["new\nline", "a\tb"])),
    );
    let mut counted = ValueRows::new();
    counted.count(&first);
    counted.count(&second);
    let got: Vec<(&str, u64)> = counted.iter().collect();
    assert_eq!(got, [("a\tb", 4), ("c\\", 1), ("new\nline", 1)]);
    assert_eq!(counted.total(), 6);
    assert_eq!(counted.rows_of("a\tb"), 4);
    assert_eq!(counted.rows_of("absent"), 0);
    let text = counted.encode();
    assert_eq!(text, "4\ta\\tb\n1\tc\\\\\n1\tnew\\nline\n");
    let decoded = ValueRows::decode(&text).unwrap();
    assert_eq!(decoded.iter().collect::<Vec<_>>(), got);
    assert_eq!(ValueRows::decode("x\ty\n"), None);
    assert_eq!(ValueRows::decode("1\tbad\\q\n"), None);
    assert_eq!(ValueRows::decode("no tab\n"), None);
}
