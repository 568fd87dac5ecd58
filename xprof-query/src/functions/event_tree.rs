//! What `ancestors` and `descendants` share: a table of the events above or
//! below one event of the `events` table, through `parent_id`, with their
//! distance from it.
//!
//! The candidates are read with one filtered scan of the event's own track
//! (a parent is on the same track and encloses its child in time, so
//! ancestors enclose the event and descendants start within it), and the
//! `parent_id` chain is then walked exactly: an event is a descendant only
//! if its chain reaches the event, whatever the times say.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, AsArray, BooleanArray, Int32Array, RecordBatch};
use arrow::compute::filter_record_batch;
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue, plan_err};
use datafusion::datasource::TableType;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::logical_expr::{Expr, col, lit};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

/// Which way from the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// The enclosing events, up to the track's top level.
    Up,
    /// The enclosed events, down to the leaves.
    Down,
}

impl Direction {
    fn function_name(self) -> &'static str {
        match self {
            Direction::Up => "ancestors",
            Direction::Down => "descendants",
        }
    }
}

/// The table function: bound to the `events` table of the profiles
/// registered last.
#[derive(Debug)]
pub(crate) struct EventTreeFunction {
    pub(crate) events: Arc<dyn TableProvider>,
    pub(crate) direction: Direction,
}

/// An integer literal argument.
fn int_arg(exprs: &[Expr], index: usize, what: &str, function: &str) -> Result<i64> {
    let value = match exprs.get(index) {
        Some(Expr::Literal(v, _)) => v.clone(),
        Some(Expr::Cast(c)) => match c.expr.as_ref() {
            Expr::Literal(v, _) => v.clone(),
            _ => ScalarValue::Null,
        },
        _ => ScalarValue::Null,
    };
    let as_i64 = match value {
        ScalarValue::Int8(Some(v)) => Some(i64::from(v)),
        ScalarValue::Int16(Some(v)) => Some(i64::from(v)),
        ScalarValue::Int32(Some(v)) => Some(i64::from(v)),
        ScalarValue::Int64(Some(v)) => Some(v),
        ScalarValue::UInt8(Some(v)) => Some(i64::from(v)),
        ScalarValue::UInt16(Some(v)) => Some(i64::from(v)),
        ScalarValue::UInt32(Some(v)) => Some(i64::from(v)),
        ScalarValue::UInt64(Some(v)) => i64::try_from(v).ok(),
        _ => None,
    };
    as_i64.ok_or_else(|| {
        DataFusionError::Plan(format!(
            "{function}(trace_id, event_id): argument {} ({what}) must be an integer literal",
            index + 1
        ))
    })
}

impl TableFunctionImpl for EventTreeFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let name = self.direction.function_name();
        let exprs = args.exprs();
        if exprs.len() != 2 {
            return plan_err!(
                "{name}(trace_id, event_id) takes 2 arguments, got {}",
                exprs.len()
            );
        }
        let trace_id = int_arg(exprs, 0, "trace_id", name)?;
        let trace_id = i32::try_from(trace_id).map_err(|_| {
            DataFusionError::Plan(format!("{name}: trace_id {trace_id} out of range"))
        })?;
        let event_id = int_arg(exprs, 1, "event_id", name)?;
        let mut fields: Vec<Field> = self
            .events
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new("distance", DataType::Int32, false));
        Ok(Arc::new(EventTree {
            events: self.events.clone(),
            direction: self.direction,
            trace_id,
            event_id,
            schema: Arc::new(Schema::new(fields)),
        }))
    }
}

/// The events above or below one event.
#[derive(Debug)]
struct EventTree {
    events: Arc<dyn TableProvider>,
    direction: Direction,
    trace_id: i32,
    event_id: i64,
    schema: SchemaRef,
}

/// The one row of the event, or an error naming it.
struct Origin {
    track_id: i32,
    ts_ps: i64,
    end_ps: i64,
    depth: i32,
    parent_id: Option<i64>,
}

fn i64_column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a arrow::array::Int64Array> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<Int64Type>())
        .ok_or_else(|| DataFusionError::Internal(format!("events.{name} is not BIGINT")))
}

fn i32_column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int32Array> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<Int32Type>())
        .ok_or_else(|| DataFusionError::Internal(format!("events.{name} is not INT")))
}

impl EventTree {
    async fn origin(&self, ctx: &SessionContext) -> Result<Origin> {
        let batches = ctx
            .read_table(self.events.clone())?
            .filter(
                col("trace_id")
                    .eq(lit(self.trace_id))
                    .and(col("event_id").eq(lit(self.event_id))),
            )?
            .select_columns(&["track_id", "ts_ps", "dur_ps", "depth", "parent_id"])?
            .collect()
            .await?;
        let batch = batches.iter().find(|b| b.num_rows() > 0).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "{}: no event {} in trace {}",
                self.direction.function_name(),
                self.event_id,
                self.trace_id
            ))
        })?;
        let parent = i64_column(batch, "parent_id")?;
        let ts_ps = i64_column(batch, "ts_ps")?.value(0);
        Ok(Origin {
            track_id: i32_column(batch, "track_id")?.value(0),
            ts_ps,
            end_ps: ts_ps + i64_column(batch, "dur_ps")?.value(0),
            depth: i32_column(batch, "depth")?.value(0),
            parent_id: parent.is_valid(0).then(|| parent.value(0)),
        })
    }

    /// Events of the origin's track that could be in the answer.
    async fn candidates(&self, ctx: &SessionContext, origin: &Origin) -> Result<Vec<RecordBatch>> {
        let same_track = col("trace_id")
            .eq(lit(self.trace_id))
            .and(col("track_id").eq(lit(origin.track_id)));
        let near = match self.direction {
            Direction::Up => col("ts_ps")
                .lt_eq(lit(origin.ts_ps))
                .and((col("ts_ps") + col("dur_ps")).gt_eq(lit(origin.end_ps)))
                .and(col("depth").lt(lit(origin.depth))),
            Direction::Down => col("ts_ps")
                .gt_eq(lit(origin.ts_ps))
                .and(col("ts_ps").lt_eq(lit(origin.end_ps)))
                .and(col("depth").gt(lit(origin.depth))),
        };
        ctx.read_table(self.events.clone())?
            .filter(same_track.and(near))?
            .collect()
            .await
    }
}

/// The distance of each candidate from the origin, or None where its
/// `parent_id` chain does not lead there.
fn distances(
    batches: &[RecordBatch],
    direction: Direction,
    origin_id: i64,
    origin: &Origin,
) -> Result<Vec<Vec<Option<i32>>>> {
    let mut parent_of: HashMap<i64, Option<i64>> = HashMap::new();
    for b in batches {
        let ids = i64_column(b, "event_id")?;
        let parents = i64_column(b, "parent_id")?;
        for i in 0..b.num_rows() {
            parent_of.insert(ids.value(i), parents.is_valid(i).then(|| parents.value(i)));
        }
    }
    let mut found: HashMap<i64, i32> = HashMap::new();
    match direction {
        Direction::Up => {
            let mut next = origin.parent_id;
            let mut distance = 1;
            while let Some(id) = next {
                if found.insert(id, distance).is_some() {
                    break; // a cycle: never in a valid file, never loop
                }
                next = parent_of.get(&id).copied().flatten();
                distance += 1;
            }
        }
        Direction::Down => {
            // Memoized walk up each candidate's chain: Some(d) when it
            // reaches the origin after d steps, None when it leaves the
            // candidates.
            let mut memo: HashMap<i64, Option<i32>> = HashMap::new();
            memo.insert(origin_id, Some(0));
            for &start in parent_of.keys() {
                let mut chain = Vec::new();
                let mut at = Some(start);
                let result = loop {
                    let Some(id) = at else { break None };
                    if let Some(known) = memo.get(&id) {
                        break *known;
                    }
                    if chain.len() > parent_of.len() {
                        break None;
                    }
                    chain.push(id);
                    at = parent_of.get(&id).copied().flatten();
                };
                for (steps_below, id) in chain.iter().rev().enumerate() {
                    memo.insert(*id, result.map(|d| d + steps_below as i32 + 1));
                }
            }
            for (id, d) in memo {
                if let Some(d) = d.filter(|d| *d > 0) {
                    found.insert(id, d);
                }
            }
        }
    }
    batches
        .iter()
        .map(|b| {
            let ids = i64_column(b, "event_id")?;
            Ok(ids
                .values()
                .iter()
                .map(|id| found.get(id).copied())
                .collect())
        })
        .collect()
}

#[async_trait]
impl TableProvider for EventTree {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let state = crate::plan::session_state(state, "event_tree")?;
        let ctx = SessionContext::new_with_state(state.clone());
        let origin = self.origin(&ctx).await?;
        let candidates = self.candidates(&ctx, &origin).await?;
        let distances = distances(&candidates, self.direction, self.event_id, &origin)?;
        let mut out = Vec::new();
        for (batch, distance) in candidates.iter().zip(distances) {
            let keep = BooleanArray::from(
                distance
                    .iter()
                    .map(|d| Some(d.is_some()))
                    .collect::<Vec<_>>(),
            );
            let kept = filter_record_batch(batch, &keep)?;
            let distance: Int32Array = distance.into_iter().flatten().map(Some).collect();
            let mut columns = kept.columns().to_vec();
            columns.push(Arc::new(distance));
            out.push(RecordBatch::try_new(self.schema.clone(), columns)?);
        }
        Ok(MemorySourceConfig::try_new_exec(
            &[out],
            self.schema.clone(),
            projection.cloned(),
        )?)
    }
}
