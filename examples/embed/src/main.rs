//! A program that embeds xprof-sql's SQL layer and nothing else: it
//! depends on `xprof-query` (without its optional `export` and `check`
//! features), DataFusion and tokio; not on the `xprof-sql` CLI crate and
//! not on the cluster.
//!
//! It answers the README's query through [`ProfileSession::builder`]
//! (read-only, with a time limit), then puts a profile into a DataFusion
//! context the program owns, beside a table of its own that is named
//! `events` on purpose: the profile goes under its own schema (`xprof`),
//! so the host's table survives, and the two join in plain SQL.
//!
//! ```text
//! cargo run --release -p xprof-embed-example -- [PROFILE...]
//! ```
//!
//! With no argument it reads the bundled real JAX profile
//! (`examples/data/jax_cpu_mlp.xplane.pb`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use xprof_query::{OpenOptions, ProfileSession};

/// The README's first query: events and their total time per device and
/// track.
const README_QUERY: &str = "SELECT d.name, t.name AS track, count(*) AS n, \
    sum(e.dur_ps)/1e6 AS total_us FROM events e \
    JOIN tracks t USING (trace_id, track_id) \
    JOIN devices d USING (trace_id, device_id) \
    GROUP BY 1,2 ORDER BY n DESC";

/// What the program's functions return.
type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The bundled example profile.
fn bundled_example() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../data/jax_cpu_mlp.xplane.pb"
    ))
}

/// The README's query over `inputs`, in a session of its own made by the
/// builder: read-only SQL, and one minute for opening and for the query.
async fn readme_query(inputs: &[PathBuf]) -> AnyResult<Vec<RecordBatch>> {
    let mut session = ProfileSession::builder()
        .read_only(true)
        .time_limit(Duration::from_secs(60))
        .build()?;
    session.open(inputs, &OpenOptions::default()).await?;
    Ok(session.collect(README_QUERY).await?)
}

/// A host context with a table of its own, `events` (an op name prefix and
/// a time budget in µs per call).
fn host_context() -> AnyResult<SessionContext> {
    let ctx = SessionContext::new();
    let schema = Arc::new(Schema::new(vec![
        Field::new("op", DataType::Utf8, false),
        Field::new("budget_us", DataType::Int64, false),
    ]));
    let budgets = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["dot", "add", "tanh"])),
            Arc::new(Int64Array::from(vec![50, 5, 5])),
        ],
    )?;
    ctx.register_table(
        "events",
        Arc::new(MemTable::try_new(schema, vec![vec![budgets]])?),
    )?;
    Ok(ctx)
}

/// The host's budgets joined to the profile's ops (under `xprof.`), in
/// the host's own context: per op prefix, its calls and their mean time.
async fn ops_against_budgets(
    ctx: &SessionContext,
    inputs: &[PathBuf],
) -> AnyResult<Vec<RecordBatch>> {
    let mut session = ProfileSession::builder().context(ctx.clone()).build()?;
    session.open(inputs, &OpenOptions::default()).await?;
    let sql = "SELECT b.op, b.budget_us, count(*) AS calls, \
               avg(e.dur_ps) / 1e6 AS mean_us, avg(e.dur_ps) / 1e6 > b.budget_us AS over \
               FROM xprof.events e JOIN events b ON e.hlo_op LIKE b.op || '%' \
               GROUP BY 1, 2 ORDER BY mean_us DESC";
    Ok(ctx.sql(sql).await?.collect().await?)
}

#[tokio::main]
async fn main() -> AnyResult<()> {
    let mut inputs: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if inputs.is_empty() {
        inputs.push(bundled_example());
    }
    println!("{}", pretty_format_batches(&readme_query(&inputs).await?)?);
    let ctx = host_context()?;
    println!(
        "{}",
        pretty_format_batches(&ops_against_budgets(&ctx, &inputs).await?)?
    );
    let host_rows = ctx.table("events").await?.count().await?;
    println!("the host's own table `events` still has its {host_rows} rows");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{Float64Type, Int64Type};
    use xprof_query::xprof_convert::sink::MemorySink;
    use xprof_query::xprof_convert::{ConvertOptions, TraceSource, xspace};
    use xprof_query::xprof_format::Table;

    /// The bundled profile's events, converted without SQL.
    fn events_without_sql() -> Vec<RecordBatch> {
        let bytes = std::fs::read(bundled_example()).unwrap();
        let source = TraceSource {
            trace_id: 0,
            path: bundled_example(),
            run: None,
            host: "example".into(),
        };
        let mut sink = MemorySink::default();
        xspace::convert(&bytes, &source, &ConvertOptions::default(), &mut sink).unwrap();
        sink.tables.remove(&Table::Events).unwrap()
    }

    /// `column` of every batch as i64 (nulls left out).
    fn int_values(batches: &[RecordBatch], column: &str) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| {
                let values = cast(b.column_by_name(column).unwrap(), &DataType::Int64).unwrap();
                values
                    .as_primitive::<Int64Type>()
                    .iter()
                    .flatten()
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// `column` of every batch as text, one entry per row.
    fn text_values(batches: &[RecordBatch], column: &str) -> Vec<Option<String>> {
        batches
            .iter()
            .flat_map(|b| {
                let values = cast(b.column_by_name(column).unwrap(), &DataType::Utf8).unwrap();
                let values = values.as_string::<i32>();
                (0..values.len())
                    .map(|i| values.is_valid(i).then(|| values.value(i).to_owned()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[tokio::test]
    async fn the_readme_query_through_the_builder_counts_every_event_and_its_time_once() {
        let answer = readme_query(&[bundled_example()]).await.unwrap();
        let events = events_without_sql();
        let rows: usize = events.iter().map(|b| b.num_rows()).sum();
        assert!(rows > 100, "the bundled profile has {rows} events");
        assert_eq!(int_values(&answer, "n").iter().sum::<i64>() as usize, rows);
        // Per group, SQL sums integer ps and divides once; the groups' µs
        // added as f64 differ from the exact total by rounding only.
        let total_ps: i64 = int_values(&events, "dur_ps").iter().sum();
        let total_us: f64 = answer
            .iter()
            .flat_map(|b| {
                let v = b.column_by_name("total_us").unwrap();
                v.as_primitive::<Float64Type>()
                    .iter()
                    .flatten()
                    .collect::<Vec<_>>()
            })
            .sum();
        assert!(total_ps > 0);
        let exact_us = total_ps as f64 / 1e6;
        assert!(
            (total_us - exact_us).abs() <= exact_us * 1e-12,
            "{total_us} µs in SQL, {exact_us} µs in the events"
        );
    }

    #[tokio::test]
    async fn the_host_table_survives_and_joins_the_profile() {
        let ctx = host_context().unwrap();
        let answer = ops_against_budgets(&ctx, &[bundled_example()])
            .await
            .unwrap();
        // Calls per op prefix, counted in the converted events.
        let ops = text_values(&events_without_sql(), "hlo_op");
        let prefixes = text_values(&answer, "op");
        let calls = int_values(&answer, "calls");
        assert!(
            !prefixes.is_empty(),
            "no op of the profile matched a budget"
        );
        for (prefix, calls) in prefixes.iter().zip(&calls) {
            let prefix = prefix.as_deref().unwrap();
            let expected = ops
                .iter()
                .filter(|op| op.as_deref().is_some_and(|op| op.starts_with(prefix)))
                .count();
            assert_eq!(*calls as usize, expected, "calls of {prefix}*");
        }
        // Opening the profile into the host's context replaced nothing.
        assert_eq!(ctx.table("events").await.unwrap().count().await.unwrap(), 3);
    }
}
