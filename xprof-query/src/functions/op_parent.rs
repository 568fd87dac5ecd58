//! `op_parent(event_id, begin_ps, end_ps) OVER (PARTITION BY trace_id,
//! track_id ORDER BY event_id)`: the op each op is nested in, as XProf's
//! TPU op statistics nest them, a window function.
//!
//! XProf (`XEventsOpMetricsDbBuilder`, tests/fixtures/tpu/expected/NOTES.md)
//! walks an op line in order with a stack: before an op is pushed, every
//! op on top of the stack that does not include it (`top.begin <= begin &&
//! end <= top.end`, both ends inclusive) is popped; the op left on top is
//! its parent. Given the ops' device spans it gives the parent XProf
//! subtracts the op's time from, which can differ from `events.parent_id`
//! (nesting by raw times, half-open) when device and raw times disagree by
//! a few ps, as on real TPU captures.
//!
//! ```sql
//! SELECT event_id, op_parent(event_id, device_offset_ps,
//!          device_offset_ps + device_duration_ps)
//!        OVER (PARTITION BY trace_id, track_id ORDER BY event_id) AS parent
//! FROM device_ops
//! ```
//!
//! A row with a NULL argument has no parent and is nobody's parent.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{PartitionEvaluator, Signature, Volatility, WindowUDFImpl};

/// The `op_parent` window function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct OpParent {
    signature: Signature,
}

impl Default for OpParent {
    fn default() -> Self {
        Self {
            signature: Signature::exact(
                vec![DataType::Int64, DataType::Int64, DataType::Int64],
                Volatility::Immutable,
            ),
        }
    }
}

impl WindowUDFImpl for OpParent {
    fn name(&self) -> &str {
        "op_parent"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn partition_evaluator(
        &self,
        _args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        Ok(Box::new(OpParentEvaluator))
    }

    fn field(&self, field_args: WindowUDFFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(
            field_args.name(),
            DataType::Int64,
            true,
        )))
    }
}

#[derive(Debug)]
struct OpParentEvaluator;

impl PartitionEvaluator for OpParentEvaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> Result<ArrayRef> {
        let ids = values[0].as_primitive::<Int64Type>();
        let begins = values[1].as_primitive::<Int64Type>();
        let ends = values[2].as_primitive::<Int64Type>();
        Ok(Arc::new(parents((0..num_rows).map(|i| {
            (ids.is_valid(i) && begins.is_valid(i) && ends.is_valid(i))
                .then(|| (ids.value(i), begins.value(i), ends.value(i)))
        }))))
    }
}

/// The parent of each `(id, begin, end)` in order, by XProf's stack.
fn parents(ops: impl Iterator<Item = Option<(i64, i64, i64)>>) -> Int64Array {
    let mut open: Vec<(i64, i64, i64)> = Vec::new();
    ops.map(|op| {
        let (id, begin, end) = op?;
        while let Some(&(_, top_begin, top_end)) = open.last() {
            if top_begin <= begin && end <= top_end {
                break;
            }
            open.pop();
        }
        let parent = open.last().map(|&(top, _, _)| top);
        open.push((id, begin, end));
        parent
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ops: &[(i64, i64, i64)]) -> Vec<Option<i64>> {
        parents(ops.iter().map(|&o| Some(o))).iter().collect()
    }

    #[test]
    fn nests_by_inclusion_with_both_ends_inclusive() {
        // 1 holds 2 and 3; 4 starts where 1 ends and is not inside it.
        assert_eq!(
            run(&[(1, 0, 100), (2, 10, 30), (3, 40, 100), (4, 100, 120)]),
            vec![None, Some(1), Some(1), None]
        );
        // An op ending exactly at its parent's end is inside it; one
        // ending 1 ps later is not (and closes it).
        assert_eq!(
            run(&[(1, 0, 100), (2, 50, 100), (3, 0, 200), (4, 50, 101)]),
            vec![None, Some(1), None, Some(3)]
        );
    }

    #[test]
    fn a_partial_overlap_closes_the_open_op() {
        // p2 overlaps p1 without being inside: p1 is closed, so p3 (inside
        // both) is p2's child only.
        assert_eq!(
            run(&[(1, 700, 800), (2, 750, 850), (3, 760, 770)]),
            vec![None, None, Some(2)]
        );
    }

    #[test]
    fn a_null_row_is_skipped() {
        let got: Vec<Option<i64>> =
            parents([Some((1, 0, 100)), None, Some((3, 10, 20))].into_iter())
                .iter()
                .collect();
        assert_eq!(got, vec![None, None, Some(1)]);
    }
}
