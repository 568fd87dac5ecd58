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
    let mut limited = ProfileSession::builder()
        .options(SessionOptions {
            memory_limit_bytes: Some(1 << 20),
            threads: Some(2),
            ..Default::default()
        })
        .build()
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
    let mut tight = ProfileSession::builder()
        .options(SessionOptions {
            memory_limit_bytes: Some(256 << 10),
            threads: Some(1),
            ..Default::default()
        })
        .build()
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

/// A query that cannot fit under the memory limit (a hash join's build
/// side, which does not spill, of every stat row under 256 KiB) fails with
/// an error that says the memory limit ran out and what to do, not an
/// operator's own words.
#[tokio::test]
async fn a_query_over_the_memory_limit_says_the_limit_ran_out() {
    let mut tight = ProfileSession::builder()
        .options(SessionOptions {
            memory_limit_bytes: Some(256 << 10),
            threads: Some(1),
            ..Default::default()
        })
        .build()
        .unwrap();
    tight
        .open(&[cpu_fixture(REAL_CPU[1])], &OpenOptions::default())
        .await
        .unwrap();
    let sql = "SELECT count(*) FROM event_args a JOIN event_args b \
               ON a.str_value = b.str_value AND a.event_id = b.event_id";
    let e = tight.collect(sql).await.unwrap_err().to_string();
    assert!(
        e.contains("needs more memory than the memory limit of 262144 bytes (0.2 MiB)"),
        "{e}"
    );
    assert!(e.contains("DataFusion said: "), "{e}");
}

/// Runs `xprof-sql ARGS`; its standard output and the peak memory it
/// reports on standard error (`query --timer`, `convert`), in MiB. The
/// process reads its own peak (`VmHWM`): a child's `ru_maxrss` starts
/// from the test process's own size, which the suite's other tests grow.
fn cli_with_peak_mib(args: &[&std::ffi::OsStr]) -> (String, u64) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xprof-sql {args:?}: {stderr}");
    let peak = stderr
        .split("peak memory ")
        .nth(1)
        .and_then(|rest| rest.split(" MiB").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak memory in {stderr:?}"));
    (String::from_utf8(out.stdout).unwrap(), peak)
}

/// `count(*)` of events and of their devices in `input`, from the CLI,
/// with the peak memory it reports (MiB).
fn count_devices_with_peak_mib(input: &std::path::Path) -> (String, u64) {
    cli_with_peak_mib(&[
        "query".as_ref(),
        input.as_os_str(),
        "--timer".as_ref(),
        "--threads".as_ref(),
        "2".as_ref(),
        "--format".as_ref(),
        "csv".as_ref(),
        "-e".as_ref(),
        "SELECT count(*) AS n, count(DISTINCT t.device_id) AS devices \
         FROM events e JOIN tracks t USING (trace_id, track_id)"
            .as_ref(),
    ])
}

/// Converts `input` into the dataset `output` with the CLI; the peak
/// memory it reports (MiB).
fn convert_with_peak_mib(input: &std::path::Path, output: &std::path::Path) -> u64 {
    cli_with_peak_mib(&[
        "convert".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        output.as_os_str(),
    ])
    .1
}

/// Issue 30, item 4: a Chrome trace whose 200,000 events each sit on a
/// process of their own (15 MB), and an XSpace of 200,000 one-event
/// planes (12 MB), are queried and converted within 256 MiB: memory grows
/// with rows, not with the devices they are spread over.
/// Before the assembler held small devices' rows together (and the memory
/// sink joined short batches), 20,000 such processes took 0.95 GB and
/// 5.7 s in `query`, and 20,000 such planes 0.83 GB and 8.8 s.
#[test]
fn many_processes_or_planes_take_memory_by_their_rows() {
    let devices = 200_000;
    let limit_mib = 256;
    let want = "n,devices\n200000,200000";
    let dir = tempfile::tempdir().unwrap();

    let trace = dir.path().join("pids.json");
    let mut json = String::from("{\"traceEvents\": [");
    for i in 0..devices {
        if i > 0 {
            json.push_str(", ");
        }
        json.push_str(&format!(
            "{{\"ph\": \"X\", \"name\": \"op{}\", \"pid\": {i}, \"tid\": 1, \"ts\": {}, \"dur\": 5}}",
            i % 50,
            i * 10
        ));
    }
    json.push_str("]}");
    std::fs::write(&trace, &json).unwrap();
    assert!(json.len() > 14 << 20, "{} bytes", json.len());

    let (out, peak) = count_devices_with_peak_mib(&trace);
    assert_eq!(out.trim(), want);
    assert!(peak <= limit_mib, "query: peak memory {peak} MiB");
    let dataset = dir.path().join("dataset");
    let peak = convert_with_peak_mib(&trace, &dataset);
    assert!(peak <= limit_mib, "convert: peak memory {peak} MiB");
    assert_eq!(count_devices_with_peak_mib(&dataset).0.trim(), want);

    // 200,000 planes of one line of one event; 0.30 GB in `query` while
    // each plane's scan kept room for 4 lines.
    use prost::Message;
    let planes = (0..devices)
        .map(|i| one_event_plane(i, format!("/device:GPU:{i}")))
        .collect();
    let space = dir.path().join("planes.xplane.pb");
    let bytes = xprof_testdata::xspace_proto::XSpace {
        planes,
        ..Default::default()
    }
    .encode_to_vec();
    assert!(bytes.len() > 10 << 20, "{} bytes", bytes.len());
    std::fs::write(&space, bytes).unwrap();
    let (out, peak) = count_devices_with_peak_mib(&space);
    assert_eq!(out.trim(), want);
    assert!(peak <= limit_mib, "query of planes: peak memory {peak} MiB");
    let peak = convert_with_peak_mib(&space, &dir.path().join("planes_dataset"));
    assert!(
        peak <= limit_mib,
        "convert of planes: peak memory {peak} MiB"
    );
}
