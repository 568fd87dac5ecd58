//! Hash joins on `trace_id` and other keys whose inputs hold one trace:
//! the `trace_id` pair leaves the hash keys for the join filter.
//!
//! Nearly every join of the profile tables is on `(trace_id, x)`: events
//! with their tracks, stats with their events, ops with their metadata.
//! DataFusion 55 hashes and compares every key column of every probe row,
//! and its perfect hash join (a build-side array indexed by the key, used
//! when the build keys are few or dense) takes single-key joins only. A
//! profile opened alone is one trace, so there the `trace_id` key sorts
//! nothing out and stops the fast path.
//!
//! [`SingleTraceJoin`] rewrites a [`HashJoinExec`] whose keys include the
//! pair `trace_id = trace_id` (plain columns of both inputs) when the
//! statistics of both inputs say their `trace_id` is one and the same
//! value: the pair is removed from the keys and `trace_id = trace_id` is
//! ANDed to the join filter. An equi-key and a conjunct of the filter are
//! both parts of the same `ON` condition, so the join gives the same rows
//! for every join type; only joins that treat NULL keys as unequal are
//! rewritten. The statistics decide whether the rewrite pays, never what
//! the answer is: with several traces the pair stays a key (a filter would
//! meet every trace's rows of the same `x`).
//!
//! Measured on the 50 M-event synthetic dataset (`benches/README.md`,
//! issue 30, item 3): `top_kernels` (events joined with the tracks of two
//! kinds, grouped by name) 0.69 s → 0.35 s in process, the join itself
//! 332 ms → 207 ms with the array map; the dynamic filter pushed into the
//! events scan is then on `track_id` alone, which prunes by statistics as
//! before.

use std::sync::Arc;

use arrow::datatypes::{Field, Schema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{JoinSide, NullEquality, Result, ScalarValue};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{BinaryExpr, Column};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::joins::HashJoinExec;
use datafusion::physical_plan::joins::utils::{ColumnIndex, JoinFilter};
use datafusion::physical_plan::statistics::{StatisticsArgs, StatisticsContext};

/// The column whose key pair is moved.
const TRACE_ID: &str = "trace_id";

/// The physical rule (see the module documentation). Sessions run it
/// before DataFusion's own rules, so the join's distribution, build side
/// and dynamic filter are planned for the keys that remain.
#[derive(Debug, Default, Clone, Copy)]
pub struct SingleTraceJoin;

impl PhysicalOptimizerRule for SingleTraceJoin {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(join) = node.downcast_ref::<HashJoinExec>() else {
                return Ok(Transformed::no(node));
            };
            match rewrite(join)? {
                Some(rewritten) => Ok(Transformed::yes(rewritten)),
                None => Ok(Transformed::no(node)),
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "single_trace_join"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `join` with its `trace_id` key pair moved into the filter, or `None`
/// where the rule does not apply.
fn rewrite(join: &HashJoinExec) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    if join.on().len() < 2
        || join.null_equality() != NullEquality::NullEqualsNothing
        || join.null_aware
    {
        return Ok(None);
    }
    let Some(at) = join.on().iter().position(|(l, r)| {
        [l, r].iter().all(|e| {
            e.downcast_ref::<Column>()
                .is_some_and(|c| c.name() == TRACE_ID)
        })
    }) else {
        return Ok(None);
    };
    let column =
        |e: &Arc<dyn PhysicalExpr>| e.downcast_ref::<Column>().expect("checked above").index();
    let (left_index, right_index) = (column(&join.on()[at].0), column(&join.on()[at].1));
    let (Some(left_trace), Some(right_trace)) = (
        single_value(join.left(), left_index)?,
        single_value(join.right(), right_index)?,
    ) else {
        return Ok(None);
    };
    if left_trace != right_trace {
        return Ok(None);
    }

    // The filter's intermediate batch: the old filter's columns, then the
    // two `trace_id`s.
    let (old_expr, mut indices, mut fields) = match join.filter() {
        Some(f) => (
            Some(Arc::clone(f.expression())),
            f.column_indices().to_vec(),
            f.schema().fields().iter().cloned().collect::<Vec<_>>(),
        ),
        None => (None, Vec::new(), Vec::new()),
    };
    let first = indices.len();
    let left_field = join.left().schema().field(left_index).clone();
    let right_field = join.right().schema().field(right_index).clone();
    fields.push(Arc::new(left_field));
    fields.push(Arc::new(right_field));
    indices.push(ColumnIndex {
        index: left_index,
        side: JoinSide::Left,
    });
    indices.push(ColumnIndex {
        index: right_index,
        side: JoinSide::Right,
    });
    let same_trace: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
        Arc::new(Column::new(TRACE_ID, first)),
        Operator::Eq,
        Arc::new(Column::new(TRACE_ID, first + 1)),
    ));
    let expression = match old_expr {
        Some(old) => Arc::new(BinaryExpr::new(old, Operator::And, same_trace)),
        None => same_trace,
    };
    let filter = JoinFilter::new(
        expression,
        indices,
        Arc::new(Schema::new(
            fields
                .into_iter()
                .map(|f| Field::clone(&f))
                .collect::<Vec<_>>(),
        )),
    );
    let mut on = join.on().to_vec();
    on.remove(at);
    let rewritten = join
        .builder()
        .with_on(on)
        .with_filter(Some(filter))
        .reset_state()
        .build_exec()?;
    Ok(Some(rewritten))
}

/// The one non-NULL value the statistics of `plan` give column `index`
/// (its minimum and maximum, exact or estimated, equal), if they do.
fn single_value(plan: &Arc<dyn ExecutionPlan>, index: usize) -> Result<Option<ScalarValue>> {
    let stats = StatisticsContext::new().compute(plan.as_ref(), &StatisticsArgs::new())?;
    let Some(column) = stats.column_statistics.get(index) else {
        return Ok(None);
    };
    match (column.min_value.get_value(), column.max_value.get_value()) {
        (Some(min), Some(max)) if min == max && !min.is_null() => Ok(Some(min.clone())),
        _ => Ok(None),
    }
}
