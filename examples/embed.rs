//! Embedding xprof-sql in a host program: your own DataFusion context,
//! profiles registered on it, then plain DataFusion from there.
//!
//! cargo run --release --example embed -- [PROFILE...]

use datafusion::prelude::SessionContext;
use xprof_sql::query::{OpenOptions, ProfileSession, default_config};

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
    // The host program owns the context (and may register its own tables
    // and functions on it); the session adds the profile tables and views.
    let ctx = SessionContext::new_with_config(default_config());
    let mut session = ProfileSession::with_context(ctx.clone());
    session.open(&inputs, &OpenOptions::default()).await?;

    // Top events by total time, per device, straight through DataFusion.
    let df = ctx
        .sql(
            "SELECT d.name AS device, e.name, count(*) AS n, sum(e.dur_ps) / 1e6 AS total_us, \
                    sum(e.self_ps) / 1e6 AS self_us \
             FROM events e JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) \
             GROUP BY 1, 2 ORDER BY total_us DESC LIMIT 10",
        )
        .await?;
    df.show().await?;
    Ok(())
}
