//! `busy_ps(start_ps, end_ps)`: the length of the union of intervals, an
//! aggregate. Overlapping and nested intervals count once, so it is the
//! time during which at least one of the rows was running: the building
//! block of device busy time, step busy time and unit utilization.
//!
//! ```sql
//! SELECT t.device_id, busy_ps(e.ts_ps, e.ts_ps + e.dur_ps) AS busy_ps
//! FROM events e JOIN tracks t USING (trace_id, track_id)
//! GROUP BY t.device_id
//! ```
//!
//! Rows with a NULL bound or an empty interval (`end_ps <= start_ps`) add
//! nothing; a group with no such interval gives NULL.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::{DataType, Field, FieldRef, Int64Type};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, Signature, Volatility};

/// The `busy_ps` aggregate.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BusyPs {
    signature: Signature,
}

impl Default for BusyPs {
    fn default() -> Self {
        Self {
            signature: Signature::exact(
                vec![DataType::Int64, DataType::Int64],
                Volatility::Immutable,
            ),
        }
    }
}

impl AggregateUDFImpl for BusyPs {
    fn name(&self) -> &str {
        "busy_ps"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::<IntervalUnion>::default())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let list = |name: &str| {
            Arc::new(Field::new(
                format!("{}[{name}]", args.name),
                DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
                true,
            ))
        };
        Ok(vec![list("starts"), list("ends")])
    }
}

/// Intervals seen so far, merged now and then so memory follows the
/// number of disjoint busy periods, not the number of rows.
#[derive(Debug, Default)]
pub(crate) struct IntervalUnion {
    spans: Vec<(i64, i64)>,
    /// Length of `spans` after the last merge.
    merged_len: usize,
    seen: bool,
}

impl IntervalUnion {
    fn push(&mut self, start: i64, end: i64) {
        if end > start {
            self.spans.push((start, end));
            self.seen = true;
            if self.spans.len() >= 2 * self.merged_len.max(4096) {
                self.merge();
            }
        }
    }

    /// Sorts and merges overlapping or touching intervals.
    fn merge(&mut self) {
        self.spans.sort_unstable();
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(self.spans.len());
        for &(s, e) in &self.spans {
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        self.merged_len = out.len();
        self.spans = out;
    }

    /// Total length of the union.
    pub(crate) fn total(&mut self) -> Option<i64> {
        self.merge();
        self.seen.then(|| {
            self.spans
                .iter()
                .fold(0i64, |acc, (s, e)| acc.saturating_add(e.saturating_sub(*s)))
        })
    }

    fn push_arrays(&mut self, starts: &Int64Array, ends: &Int64Array) {
        for i in 0..starts.len() {
            if starts.is_valid(i) && ends.is_valid(i) {
                self.push(starts.value(i), ends.value(i));
            }
        }
    }
}

impl Accumulator for IntervalUnion {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.push_arrays(
            values[0].as_primitive::<Int64Type>(),
            values[1].as_primitive::<Int64Type>(),
        );
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (starts, ends) = (states[0].as_list::<i32>(), states[1].as_list::<i32>());
        for row in 0..starts.len() {
            if starts.is_valid(row) && ends.is_valid(row) {
                let s = starts.value(row);
                let e = ends.value(row);
                self.push_arrays(s.as_primitive::<Int64Type>(), e.as_primitive::<Int64Type>());
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.merge();
        let list = |v: Vec<ScalarValue>| {
            ScalarValue::List(ScalarValue::new_list_nullable(&v, &DataType::Int64))
        };
        Ok(vec![
            list(
                self.spans
                    .iter()
                    .map(|s| ScalarValue::Int64(Some(s.0)))
                    .collect(),
            ),
            list(
                self.spans
                    .iter()
                    .map(|s| ScalarValue::Int64(Some(s.1)))
                    .collect(),
            ),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Int64(self.total()))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.spans.capacity() * std::mem::size_of::<(i64, i64)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_nested_and_touching_intervals_count_once() {
        let mut u = IntervalUnion::default();
        for (s, e) in [
            (0, 10),
            (5, 15),
            (2, 3),
            (15, 20),
            (30, 40),
            (35, 36),
            (50, 50),
        ] {
            u.push(s, e);
        }
        // [0, 20) and [30, 40); the empty [50, 50) adds nothing.
        assert_eq!(u.total(), Some(30));
        assert_eq!(IntervalUnion::default().total(), None);
    }
}
