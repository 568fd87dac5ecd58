//! `quantile_cont(value, q)`: the exact continuous quantile of a group, as
//! DuckDB computes it, an aggregate.
//!
//! The queries XProf documents for its Events DB run in DuckDB and use
//! `QUANTILE_CONT(x, 0.99)`. DataFusion has a `quantile_cont` too (an alias
//! of its `percentile_cont`), but it interpolates through a fixed-point
//! fraction, so its answers differ from DuckDB's in the 7th digit
//! (8.895569050999999 for DuckDB's 8.89557). This one takes the sorted
//! values `v`, `r = (n - 1) * q`, and returns `v[floor r] + (v[ceil r] -
//! v[floor r]) * (r - floor r)` in doubles, DuckDB's interpolation, so
//! those queries answer as in XProf. Registering the project's functions
//! makes it the `quantile_cont` of the session.
//!
//! ```sql
//! SELECT hlo_op, quantile_cont(dur_ps / 1e6, 0.99) AS p99_us
//! FROM device_ops GROUP BY hlo_op
//! ```
//!
//! NULL values are skipped; an empty group gives NULL; `q` must be a
//! constant in [0, 1].

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDFImpl, Signature, Volatility};

/// The `quantile_cont` aggregate.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct QuantileCont {
    signature: Signature,
}

impl Default for QuantileCont {
    fn default() -> Self {
        Self {
            signature: Signature::uniform(2, vec![DataType::Float64], Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for QuantileCont {
    fn name(&self) -> &str {
        "quantile_cont"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn accumulator(&self, _args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::<Values>::default())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(vec![
            Arc::new(Field::new(
                format!("{}[values]", args.name),
                DataType::List(Arc::new(Field::new("item", DataType::Float64, true))),
                true,
            )),
            Arc::new(Field::new(
                format!("{}[q]", args.name),
                DataType::Float64,
                true,
            )),
        ])
    }
}

/// The values of a group and the quantile asked for.
#[derive(Debug, Default)]
struct Values {
    values: Vec<f64>,
    q: Option<f64>,
}

impl Values {
    fn take_q(&mut self, q: &ArrayRef) -> Result<()> {
        let q = q.as_primitive::<Float64Type>();
        for i in 0..q.len() {
            if q.is_valid(i) {
                let v = q.value(i);
                if !(0.0..=1.0).contains(&v) {
                    return exec_err!("quantile_cont: the quantile must be in [0, 1], not {v}");
                }
                match self.q {
                    Some(seen) if seen != v => {
                        return exec_err!("quantile_cont: the quantile must be one constant");
                    }
                    _ => self.q = Some(v),
                }
            }
        }
        Ok(())
    }
}

/// DuckDB's continuous quantile of `values` (sorted here).
fn quantile(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let rank = (values.len() - 1) as f64 * q;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    Some(values[lo] + (values[hi] - values[lo]) * (rank - rank.floor()))
}

impl Accumulator for Values {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.take_q(&values[1])?;
        let v = values[0].as_primitive::<Float64Type>();
        self.values.extend(v.iter().flatten());
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.take_q(&states[1])?;
        let lists = states[0].as_list::<i32>();
        for row in 0..lists.len() {
            if lists.is_valid(row) {
                let v = lists.value(row);
                self.values
                    .extend(v.as_primitive::<Float64Type>().iter().flatten());
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values: Vec<ScalarValue> = self
            .values
            .iter()
            .map(|v| ScalarValue::Float64(Some(*v)))
            .collect();
        Ok(vec![
            ScalarValue::List(ScalarValue::new_list_nullable(&values, &DataType::Float64)),
            ScalarValue::Float64(self.q),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let q = self.q.unwrap_or(0.5);
        Ok(ScalarValue::Float64(quantile(&mut self.values, q)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.values.capacity() * std::mem::size_of::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn interpolates_as_duckdb() {
        // XProf's Events DB answer (DuckDB) on synthetic_tpu's fusion.7.
        let mut v = vec![8.962, 3.506, 4.845, 5.092, 6.244, 6.288, 6.618, 8.013];
        assert_eq!(quantile(&mut v, 0.99), Some(8.89557));
        assert_eq!(quantile(&mut v, 0.5), Some(6.266));
        assert_eq!(quantile(&mut v, 0.0), Some(3.506));
        assert_eq!(quantile(&mut v, 1.0), Some(8.962));
        assert_eq!(quantile(&mut [], 0.5), None);
    }
}
