//! One memory budget for a session: it decides whether raw inputs are
//! converted into memory or through a temporary dataset (by their inflated
//! size), and it bounds query execution (spill, or a clean error).

use crate::common;

use common::*;
use xprof_sql::format::Table;
use xprof_sql::query::{OpenOptions, Opened, ProfileSession, SessionOptions};

fn through_dataset(s: &ProfileSession) -> bool {
    s.opened().iter().all(|o| match o {
        Opened::Converted(c) => !c.written.is_empty(),
        Opened::Dataset { .. } => true,
    })
}

async fn event_count(s: &ProfileSession) -> i64 {
    let b = s
        .sql("SELECT count(*) AS n FROM events")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    i64s(&b[0], "n")[0].unwrap()
}

#[tokio::test]
async fn a_small_input_stays_in_memory_a_large_one_goes_through_a_dataset() {
    let mut small = ProfileSession::new();
    small
        .open(&[cpu_fixture(REAL_CPU[0])], &OpenOptions::default())
        .await
        .unwrap();
    assert!(!through_dataset(&small), "185 KB is converted into memory");
    // The same input under a limit it does not fit in as Arrow arrays.
    let mut limited = ProfileSession::with_limits(SessionOptions {
        memory_limit_bytes: Some(1 << 20),
        threads: Some(2),
        ..Default::default()
    })
    .unwrap();
    limited
        .open(&[cpu_fixture(REAL_CPU[0])], &OpenOptions::default())
        .await
        .unwrap();
    assert!(through_dataset(&limited));
    assert_eq!(event_count(&small).await, event_count(&limited).await);
}

#[tokio::test]
async fn a_gzip_input_is_judged_by_what_it_inflates_to() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("big.xplane.pb.gz");
    let bytes = std::fs::read(cpu_fixture(REAL_CPU[0])).unwrap();
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::best(),
    );
    e.write_all(&bytes).unwrap();
    e.finish().unwrap();
    let compressed = std::fs::metadata(&gz).unwrap().len();
    assert!(compressed < bytes.len() as u64 / 2);
    // A limit between the compressed and the inflated size.
    let options = OpenOptions {
        in_memory_limit_bytes: (compressed + bytes.len() as u64) / 2,
        ..Default::default()
    };
    let mut s = ProfileSession::new();
    s.open(&[&gz], &options).await.unwrap();
    assert!(through_dataset(&s), "judged by the inflated size");
}

/// Runs `sql`; its batches and how often its operators spilled
/// (DataFusion's `spill_count` metrics, summed over the plan).
pub(crate) async fn collect_counting_spills(
    s: &ProfileSession,
    sql: &str,
) -> datafusion::error::Result<(Vec<arrow::array::RecordBatch>, usize)> {
    fn spills(plan: &dyn datafusion::physical_plan::ExecutionPlan) -> usize {
        plan.metrics().and_then(|m| m.spill_count()).unwrap_or(0)
            + plan
                .children()
                .into_iter()
                .map(|c| spills(c.as_ref()))
                .sum::<usize>()
    }
    let df = s.sql(sql).await.expect("plans");
    let task = std::sync::Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await?;
    let batches = datafusion::physical_plan::collect(plan.clone(), task).await?;
    Ok((batches, spills(plan.as_ref())))
}

/// The limit is enforced: without it the sort runs in memory (no spill);
/// under 256 KiB the same sort spills and gives the same rows, or fails
/// with "Resources exhausted". (Without `with_memory_limit` in
/// query::session both runs are unbounded and neither spills: this fails.)
#[tokio::test]
async fn a_query_over_the_memory_limit_spills_or_fails_cleanly() {
    // Sorting every stat row of the largest real fixture under 256 KiB.
    let sql = "SELECT event_id, key, str_value FROM event_args ORDER BY str_value, key, event_id";
    let mut free = ProfileSession::new();
    free.open(&[cpu_fixture(REAL_CPU[1])], &OpenOptions::default())
        .await
        .unwrap();
    let (expected, free_spills) = collect_counting_spills(&free, sql).await.unwrap();
    assert_eq!(free_spills, 0, "no limit, no spill");
    let expected_rows: usize = expected.iter().map(|b| b.num_rows()).sum();
    assert_eq!(expected_rows, {
        let bytes = std::fs::read(cpu_fixture(REAL_CPU[1])).unwrap();
        convert_bytes(&bytes, &Default::default())
            .0
            .rows(Table::EventArgs)
    });
    let mut tight = ProfileSession::with_limits(SessionOptions {
        memory_limit_bytes: Some(256 << 10),
        threads: Some(1),
        ..Default::default()
    })
    .unwrap();
    tight
        .open(&[cpu_fixture(REAL_CPU[1])], &OpenOptions::default())
        .await
        .unwrap();
    match collect_counting_spills(&tight, sql).await {
        Ok((batches, spills)) => {
            assert!(spills > 0, "ran under 256 KiB without spilling");
            // Spilled: the same rows in the same order.
            let a = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
            let b = arrow::compute::concat_batches(&expected[0].schema(), &expected).unwrap();
            assert_eq!(a.columns(), b.columns());
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("Resources exhausted"), "{e}");
        }
    }
}
