//! The `events_db` view (XProf's Events DB), computed in one pass over the
//! events instead of the SQL's chain of joins.
//!
//! The view's definition is `views/events_db.sql` (what `xprof-sql schema
//! events_db` prints, and what a test compares this with on every profile
//! it has). Run as SQL, DataFusion attaches the stats, `trace_args`, the
//! step, the step roots and the nested ops' time to the 2.8 M events of a
//! real 102 MiB profile by six left hash joins, each building a table of
//! the wide event rows: 23 s and 5.1 GB. Here the small inputs (stats,
//! steps, nested time, HLO instructions) are read once into arrays indexed
//! by event ([`Nodes`](crate::views::nodes::Nodes)), and each batch of the SQL's own `base` rows is
//! turned into the view's rows by looking them up: linear in the events
//! and stats, each of the base's partitions on its own core.
//!
//! The inputs are the definition's own CTEs (the text above the line
//! [`SHARED_CTES_END`](inputs::SHARED_CTES_END) marks) with a `SELECT` of
//! their own, so the rules that pick rows and compute times stay written
//! once, in the SQL. What this folder computes itself is the final
//! `SELECT` and the `stats`/`args`/`step_roots` CTEs: each is written next
//! to the SQL it reproduces. Columns the query does not read are not
//! computed, and inputs no row needs are not run.
//!
//! - `mod.rs`: the view as a table provider, and the one filter it takes;
//! - `inputs.rs`: the SQL of each input, and the typed base batch;
//! - `exec.rs`: the execution plan that reads them;
//! - `lookups.rs`: what the rows look up, read once (steps, nested time,
//!   HLO instructions, step names);
//! - `stat_values.rs`: one stat's key and value as the rows read them;
//! - `stats.rs`: the stats of each event (the `stats` and `args` CTEs);
//! - `rows.rs`: the final `SELECT`, one output row at a time;
//! - `columns.rs`: the view's columns and their builders.

mod columns;
mod exec;
mod inputs;
mod lookups;
mod rows;
mod stat_values;
mod stats;

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::Result;
use datafusion::datasource::TableType;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner as _};

pub use exec::EventsDbExec;
pub use inputs::input_sql;

use crate::plan::{plan_in_schema, session_state};
use columns::{COLUMNS, view_schema};
use inputs::INPUT_COUNT;

/// The `events_db` view of the tables in one schema.
#[derive(Debug)]
pub(crate) struct EventsDbTable {
    tables_schema: String,
    definition: &'static str,
    schema: SchemaRef,
}

/// The `events_db` view's [`NativeView`](crate::views::NativeView).
pub(crate) fn native_view(tables_schema: &str, definition: &'static str) -> Arc<dyn TableProvider> {
    Arc::new(EventsDbTable {
        tables_schema: tables_schema.to_string(),
        definition,
        schema: view_schema(),
    })
}

#[async_trait]
impl TableProvider for EventsDbTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    fn get_table_definition(&self) -> Option<&str> {
        Some(self.definition)
    }

    /// `step IS NOT NULL` is taken (inexactly: it is checked again above),
    /// so that rows without a step are never made; nothing else.
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if is_step_not_null(f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let state = session_state(state, "events_db")?;
        let with_step_only = filters.iter().any(is_step_not_null);
        let projection = projection
            .cloned()
            .unwrap_or_else(|| (0..COLUMNS.len()).collect());
        let mut inputs = Vec::with_capacity(INPUT_COUNT);
        for sql in input_sql(self.definition, &projection)? {
            let logical = plan_in_schema(state, &self.tables_schema, &sql).await?;
            let logical = state.optimize(&logical)?;
            // This process's own planner, also in a cluster session: the
            // rows are made here, as event_steps' are.
            inputs.push(
                DefaultPhysicalPlanner::default()
                    .create_physical_plan(&logical, state)
                    .await?,
            );
        }
        Ok(Arc::new(EventsDbExec::new(
            inputs,
            self.schema.clone(),
            projection,
            with_step_only,
        )?))
    }
}

/// `step IS NOT NULL`, the one filter the view takes.
fn is_step_not_null(filter: &Expr) -> bool {
    matches!(filter, Expr::IsNotNull(inner)
        if matches!(inner.as_ref(), Expr::Column(c) if c.name == "step"))
}
