//! Profiles inside a host program's DataFusion context: the host's own
//! tables survive, `CREATE EXTERNAL TABLE … STORED AS XSPACE` works from
//! SQL, temporary datasets live as long as the tables reading them, a
//! dataset file of another schema version is refused with a clear error
//! when its table is first read, and views are planned only when named.

use crate::common;

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use common::*;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use xprof_sql::format::Table;
use xprof_sql::query::{OpenOptions, ProfileSession, SessionContextExt};

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let c = batches[0].column(0);
    arrow::compute::cast(c, &DataType::Int64)
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0)
}

fn host_context() -> SessionContext {
    let ctx = SessionContext::new();
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
    )
    .unwrap();
    ctx.register_table(
        "events",
        Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap()),
    )
    .unwrap();
    ctx
}

/// Events in the bundled example, counted independently of SQL.
fn example_events() -> i64 {
    let bytes = std::fs::read(cpu_fixture(REAL_CPU[0])).unwrap();
    let (sink, _) = convert_bytes(&bytes, &Default::default());
    sink.rows(Table::Events) as i64
}

#[tokio::test]
async fn a_host_table_named_events_survives_opening_a_profile() {
    let ctx = host_context();
    let mut session = ProfileSession::builder()
        .context(ctx.clone())
        .build()
        .unwrap();
    session
        .open(&[cpu_fixture(REAL_CPU[0])], &OpenOptions::default())
        .await
        .unwrap();
    assert_eq!(count(&ctx, "SELECT sum(x) FROM events").await, 6);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM xprof.events").await,
        example_events()
    );
    // Views resolve to the profile's tables, not the host's `events`.
    assert!(count(&ctx, "SELECT count(*) FROM xprof.event_stats").await > 0);
    // Host and profile tables in one query.
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM events h JOIN xprof.tracks t ON t.track_id = h.x"
        )
        .await,
        3
    );
    // Opening more re-registers only the profile schema.
    session
        .open(&[gpu_fixture(REAL_GPU[0])], &OpenOptions::default())
        .await
        .unwrap();
    assert_eq!(count(&ctx, "SELECT sum(x) FROM events").await, 6);
    assert_eq!(
        count(&ctx, "SELECT count(DISTINCT trace_id) FROM xprof.traces").await,
        2
    );
}

#[tokio::test]
async fn register_profile_puts_a_profile_under_its_own_schema() {
    let ctx = host_context();
    ctx.register_profile("a", cpu_fixture(REAL_CPU[0]))
        .await
        .unwrap();
    ctx.register_profile("b", gpu_fixture(REAL_GPU[0]))
        .await
        .unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM a.events").await,
        example_events()
    );
    // jax_gpu: 100 kernels on the H200's stream and 868 host events
    // (tests/fixtures/gpu/expected/NOTES.md), on one GPU.
    assert_eq!(count(&ctx, "SELECT count(*) FROM b.events").await, 968);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM b.devices WHERE kind = 'gpu'").await,
        1,
        "the GPU profile's devices"
    );
    assert_eq!(count(&ctx, "SELECT sum(x) FROM events").await, 6);
}

/// The project's two physical rules on a context, by name.
fn project_rules(ctx: &datafusion::prelude::SessionContext) -> Vec<String> {
    ctx.state()
        .physical_optimizers()
        .iter()
        .map(|r| r.name().to_string())
        .filter(|n| n == "single_trace_join" || n == "xprof_dictionary_group_by")
        .collect()
}

#[tokio::test]
async fn a_host_context_gets_the_project_rules_once_from_register_profile() {
    let ctx = host_context();
    assert!(project_rules(&ctx).is_empty());
    ctx.register_profile("a", cpu_fixture(REAL_CPU[0]))
        .await
        .unwrap();
    ctx.register_profile("b", cpu_fixture(REAL_CPU[0]))
        .await
        .unwrap();
    // First the join rule, before DataFusion's; the grouping rule last.
    assert_eq!(
        project_rules(&ctx),
        ["single_trace_join", "xprof_dictionary_group_by"]
    );
    let rules = ctx.state().physical_optimizers().to_vec();
    assert_eq!(rules[0].name(), "single_trace_join");
    assert_eq!(rules[rules.len() - 1].name(), "xprof_dictionary_group_by");
    // And a session's own context has the same two.
    let own = ProfileSession::new();
    assert_eq!(project_rules(own.context()), project_rules(&ctx));
}

#[test]
fn limits_that_size_a_context_are_refused_with_a_host_context() {
    let refused = ProfileSession::builder()
        .context(host_context())
        .memory_limit_bytes(1 << 30)
        .build()
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("sizes a context the session makes"),
        "{refused}"
    );
    let built = ProfileSession::builder()
        .context(host_context())
        .schema("p")
        .read_only(true)
        .build()
        .unwrap();
    assert_eq!(built.schema(), "p");
}

#[tokio::test]
async fn create_external_table_stored_as_xspace() {
    let ctx = host_context();
    xprof_sql::query::prepare_context(&ctx);
    let path = cpu_fixture(REAL_CPU[0]);
    let path = path.to_string_lossy();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE k STORED AS XSPACE LOCATION '{path}'"
    ))
    .await
    .unwrap();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE k_tracks STORED AS XSPACE LOCATION '{path}' OPTIONS ('table' 'tracks')"
    ))
    .await
    .unwrap();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE any_format STORED AS PROFILE LOCATION '{path}'"
    ))
    .await
    .unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM k").await,
        example_events()
    );
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM any_format").await,
        example_events()
    );
    // Both tables come from one conversion: every event's track is there.
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM k JOIN k_tracks t USING (trace_id, track_id)"
        )
        .await,
        example_events()
    );
    let e = ctx
        .sql(&format!(
            "CREATE EXTERNAL TABLE bad STORED AS XSPACE LOCATION '{path}' OPTIONS ('table' 'nope')"
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("no profile table \"nope\""), "{e}");
    assert_eq!(count(&ctx, "SELECT sum(x) FROM events").await, 6);
}

#[tokio::test]
async fn a_temporary_dataset_lives_as_long_as_the_tables_reading_it() {
    let ctx = host_context();
    let mut session = ProfileSession::builder()
        .context(ctx.clone())
        .build()
        .unwrap();
    // Forces the temporary Parquet dataset path.
    let options = OpenOptions {
        in_memory_limit_bytes: 0,
        ..Default::default()
    };
    session
        .open(&[cpu_fixture(REAL_CPU[0])], &options)
        .await
        .unwrap();
    drop(session);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM xprof.events").await,
        example_events()
    );
}

#[tokio::test]
async fn a_dataset_of_another_schema_version_is_refused_by_name() {
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let (dir, written) = dataset_of(&[cpu_fixture(REAL_CPU[0])]);
    // Rewrite the `tracks` file as schema version 0 would have.
    let tracks = written[0]
        .written
        .iter()
        .find(|p| p.parent().unwrap().ends_with("tracks"))
        .unwrap()
        .clone();
    let batches: Vec<RecordBatch> =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(&tracks).unwrap(),
        )
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let plain = Arc::new(Schema::new(Table::Tracks.schema().fields().clone()));
    let props = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "xprof_sql.schema_version".into(),
            "0".to_string(),
        )]))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(&tracks).unwrap(),
        plain.clone(),
        Some(props),
    )
    .unwrap();
    for b in batches {
        w.write(&RecordBatch::try_new(plain.clone(), b.columns().to_vec()).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    // Opening reads no footer but the traces table's: the tables a
    // query does not read answer, the first scan of `tracks` refuses.
    let mut s = ProfileSession::new();
    s.open(&[dir.path()], &OpenOptions::default())
        .await
        .unwrap();
    assert!(count(s.context(), "SELECT count(*) FROM xprof.events").await > 0);
    let e = s
        .collect("SELECT count(*) FROM tracks")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&*tracks.to_string_lossy())
            && e.contains("schema version 0")
            && e.contains(&format!("reads {}", xprof_sql::format::SCHEMA_VERSION)),
        "{e}"
    );
}

#[tokio::test]
async fn views_are_planned_when_first_named_and_again_over_tables_opened_later() {
    use xprof_sql::query::ProfileSchema;
    use xprof_sql::query::views::{HELPERS, VIEWS};
    let open = |paths: Vec<std::path::PathBuf>| async move {
        let mut s = ProfileSession::new();
        s.open(&paths, &OpenOptions::default()).await.unwrap();
        s
    };
    let (a, b) = (cpu_fixture(REAL_CPU[0]), cpu_fixture(REAL_CPU[1]));
    let stats = "SELECT count(*) FROM xprof.event_stats";
    let alone_b = count(open(vec![b.clone()]).await.context(), stats).await;

    let mut s = open(vec![a]).await;
    let schema = s
        .context()
        .catalog("datafusion")
        .unwrap()
        .schema("xprof")
        .unwrap();
    let lazy = schema.as_ref().downcast_ref::<ProfileSchema>().unwrap();
    let planned = |lazy: &ProfileSchema| -> Vec<&str> {
        HELPERS
            .iter()
            .chain(VIEWS)
            .map(|v| v.name)
            .filter(|v| lazy.is_view_planned(v))
            .collect()
    };
    // Neither a query naming no view nor a listing of the views plans one.
    assert_eq!(count(s.context(), "SELECT 1").await, 1);
    let listed = count(
        s.context(),
        "SELECT count(*) FROM information_schema.tables \
         WHERE table_schema = 'xprof' AND table_type = 'VIEW' AND table_name = 'event_stats'",
    )
    .await;
    assert_eq!(listed, 1);
    assert!(planned(lazy).is_empty(), "{:?}", planned(lazy));

    // Naming one plans that one only.
    let alone_a = count(s.context(), stats).await;
    assert!(alone_a > 0 && alone_b > 0);
    assert_eq!(planned(lazy), vec!["event_stats"]);

    // Opening more registers the tables again: the plan over the first
    // input's tables is forgotten, and the view reads both inputs.
    s.open(&[b], &OpenOptions::default()).await.unwrap();
    assert!(planned(lazy).is_empty(), "{:?}", planned(lazy));
    assert_eq!(count(s.context(), stats).await, alone_a + alone_b);
}
