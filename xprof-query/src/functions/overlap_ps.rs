//! `overlap_ps(a_start_ps, a_end_ps, b_start_ps, b_end_ps)`: how long two
//! intervals overlap, in the unit of the arguments; 0 when they are
//! disjoint or one is empty, NULL when any bound is NULL.
//!
//! ```sql
//! -- time each op spent inside step 3
//! SELECT e.name, overlap_ps(e.ts_ps, e.ts_ps + e.dur_ps, s.ts_ps, s.ts_ps + s.dur_ps)
//! FROM events e, events s WHERE s.event_id = 3 AND e.trace_id = s.trace_id
//! ```

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::{DataType, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{Signature, Volatility};

int64_function! {
    /// The `overlap_ps` scalar function.
    OverlapPs,
    name: "overlap_ps",
    signature: Signature::exact(vec![DataType::Int64; 4], Volatility::Immutable),
    eval: overlaps,
}

/// Overlap of `[a_start, a_end)` and `[b_start, b_end)`, never negative.
pub fn overlap(a_start: i64, a_end: i64, b_start: i64, b_end: i64) -> i64 {
    (a_end.min(b_end).saturating_sub(a_start.max(b_start))).max(0)
}

/// [`overlap`] of each row of the four bound arrays `args`.
fn overlaps(args: &[ArrayRef], rows: usize) -> Result<Int64Array> {
    let cols: Vec<_> = args.iter().map(|a| a.as_primitive::<Int64Type>()).collect();
    Ok((0..rows)
        .map(|row| {
            if cols.iter().any(|c| c.is_null(row)) {
                return None;
            }
            Some(overlap(
                cols[0].value(row),
                cols[1].value(row),
                cols[2].value(row),
                cols[3].value(row),
            ))
        })
        .collect())
}
