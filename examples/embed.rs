//! Embedding xprof-sql in a host program: the host owns its DataFusion
//! context and its own tables; profiles are added under a schema of their
//! own (`xprof`, or one per profile), so nothing of the host's is replaced,
//! and host tables join profile tables in plain SQL.
//!
//! cargo run --release --example embed -- [PROFILE...]

use std::sync::Arc;

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use xprof_sql::query::{OpenOptions, ProfileSession, SessionContextExt};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut inputs: Vec<String> = std::env::args().skip(1).collect();
    if inputs.is_empty() {
        inputs.push(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/examples/data/jax_cpu_mlp.xplane.pb"
            )
            .into(),
        );
    }
    // The host's context and its own table, here named `events` on
    // purpose: opening profiles does not touch it.
    let ctx = SessionContext::new();
    let schema = Arc::new(Schema::new(vec![
        Field::new("op", DataType::Utf8, false),
        Field::new("budget_us", DataType::Int64, false),
    ]));
    let budgets = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["dot_general", "add", "tanh"])),
            Arc::new(Int64Array::from(vec![50, 5, 5])),
        ],
    )?;
    ctx.register_table(
        "events",
        Arc::new(MemTable::try_new(schema, vec![vec![budgets]])?),
    )?;

    // Profiles go under schema `xprof` (ProfileSession) ...
    let mut session = ProfileSession::builder().context(ctx.clone()).build()?;
    session.open(&inputs, &OpenOptions::default()).await?;
    // ... or under a schema of the host's choosing, and `CREATE EXTERNAL
    // TABLE ... STORED AS XSPACE` works from SQL.
    ctx.register_profile("first", &inputs[0]).await?;

    // The host's table joined to the profile's: ops over their budget.
    let df = ctx
        .sql(
            "SELECT b.op, b.budget_us, count(*) AS n, avg(e.dur_ps) / 1e6 AS avg_us \
             FROM xprof.events e JOIN events b ON e.hlo_op LIKE b.op || '%' \
             GROUP BY 1, 2 HAVING avg(e.dur_ps) / 1e6 > b.budget_us ORDER BY avg_us DESC",
        )
        .await?;
    df.show().await?;
    let df = ctx
        .sql(
            "SELECT d.name AS device, count(*) AS events FROM first.events e \
             JOIN first.tracks t USING (trace_id, track_id) JOIN first.devices d USING (trace_id, device_id) \
             GROUP BY 1 ORDER BY 2 DESC",
        )
        .await?;
    df.show().await?;
    println!(
        "host table `events` still has {} rows",
        ctx.table("events").await?.count().await?
    );
    Ok(())
}
