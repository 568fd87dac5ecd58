//! The declared sort order of every table, checked on every batch.
//!
//! DataFusion trusts the order a table declares (`sort_by`) and skips
//! sorts because of it, so a batch out of order is a wrong answer, not a
//! slow one. The assembler hands every batch through [`OrderedSink`],
//! which refuses a batch that does not continue its table's order; the
//! check compares a few integers per row.

use std::cmp::Ordering;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Int32Type, Int64Type};
use xprof_format::Table;

use crate::error::{ConvertError, Result};
use crate::sink::TableSink;

/// One sort key value, owned (the last row of the previous batch).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum KeyValue {
    Null,
    Int(i64),
    Str(String),
}

/// A sort column of one batch.
enum KeyColumn<'b> {
    I32(&'b arrow::array::Int32Array),
    I64(&'b arrow::array::Int64Array),
    Str(&'b arrow::array::StringArray),
}

impl KeyColumn<'_> {
    fn value(&self, i: usize) -> KeyValue {
        let valid = match self {
            KeyColumn::I32(a) => a.is_valid(i),
            KeyColumn::I64(a) => a.is_valid(i),
            KeyColumn::Str(a) => a.is_valid(i),
        };
        if !valid {
            return KeyValue::Null;
        }
        match self {
            KeyColumn::I32(a) => KeyValue::Int(a.value(i) as i64),
            KeyColumn::I64(a) => KeyValue::Int(a.value(i)),
            KeyColumn::Str(a) => KeyValue::Str(a.value(i).to_string()),
        }
    }

    /// Compares rows `i` and `j` of this column (NULLs last, as declared).
    fn cmp(&self, i: usize, j: usize) -> Ordering {
        let (vi, vj) = match self {
            KeyColumn::I32(a) => (a.is_valid(i), a.is_valid(j)),
            KeyColumn::I64(a) => (a.is_valid(i), a.is_valid(j)),
            KeyColumn::Str(a) => (a.is_valid(i), a.is_valid(j)),
        };
        match (vi, vj) {
            (false, false) => return Ordering::Equal,
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            _ => {}
        }
        match self {
            KeyColumn::I32(a) => a.value(i).cmp(&a.value(j)),
            KeyColumn::I64(a) => a.value(i).cmp(&a.value(j)),
            KeyColumn::Str(a) => a.value(i).cmp(a.value(j)),
        }
    }
}

/// The first row `i + 1` whose pair `(i, i + 1)` is still tied and
/// descends on `values`; untied pairs that ascend.
fn first_descent_in<T: Ord>(values: &[T], tied: &mut [bool]) -> Option<usize> {
    for (i, (t, pair)) in tied.iter_mut().zip(values.windows(2)).enumerate() {
        if *t {
            match pair[0].cmp(&pair[1]) {
                Ordering::Less => *t = false,
                Ordering::Equal => {}
                Ordering::Greater => return Some(i + 1),
            }
        }
    }
    None
}

impl KeyColumn<'_> {
    /// [`first_descent_in`] of this column, NULLs last.
    fn first_descent(&self, tied: &mut [bool]) -> Option<usize> {
        match self {
            KeyColumn::I32(a) if a.null_count() == 0 => first_descent_in(a.values(), tied),
            KeyColumn::I64(a) if a.null_count() == 0 => first_descent_in(a.values(), tied),
            _ => {
                for (i, t) in tied.iter_mut().enumerate() {
                    if *t {
                        match self.cmp(i, i + 1) {
                            Ordering::Less => *t = false,
                            Ordering::Equal => {}
                            Ordering::Greater => return Some(i + 1),
                        }
                    }
                }
                None
            }
        }
    }
}

fn cmp_keys(a: &[KeyValue], b: &[KeyValue]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (KeyValue::Null, KeyValue::Null) => Ordering::Equal,
            (KeyValue::Null, _) => Ordering::Greater,
            (_, KeyValue::Null) => Ordering::Less,
            _ => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Hands batches to a sink after checking that each continues its
/// table's declared order (`TableDef::sort_by`, ascending, NULLs last).
pub(crate) struct OrderedSink<'s> {
    inner: &'s mut dyn TableSink,
    last: [Option<Vec<KeyValue>>; Table::ALL.len()],
}

impl<'s> OrderedSink<'s> {
    pub fn new(inner: &'s mut dyn TableSink) -> Self {
        Self {
            inner,
            last: Default::default(),
        }
    }

    pub fn write(&mut self, table: Table, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.check(table, &batch)?;
        self.inner.write(table, batch)
    }

    fn check(&mut self, table: Table, batch: &RecordBatch) -> Result<()> {
        let def = table.def();
        let mut cols = Vec::with_capacity(def.sort_by.len());
        for name in def.sort_by {
            let c = batch
                .column_by_name(name)
                .expect("sort columns are in the schema");
            cols.push(match c.data_type() {
                DataType::Int32 => KeyColumn::I32(c.as_primitive::<Int32Type>()),
                DataType::Int64 => KeyColumn::I64(c.as_primitive::<Int64Type>()),
                DataType::Utf8 => KeyColumn::Str(c.as_string::<i32>()),
                other => unreachable!("sort column {name} of type {other}"),
            });
        }
        let bad = |row: usize| {
            ConvertError::Sink(format!(
                "internal error: {} row {row} of a batch breaks the declared order ({}); please report this",
                def.name,
                def.sort_by.join(", ")
            ))
        };
        let idx = Table::ALL.iter().position(|t| *t == table).expect("listed");
        if let Some(prev) = &self.last[idx] {
            let first: Vec<KeyValue> = cols.iter().map(|c| c.value(0)).collect();
            if cmp_keys(prev, &first) == Ordering::Greater {
                return Err(bad(0));
            }
        }
        // Column by column: `tied[i]` says rows i and i + 1 are equal on
        // every column compared so far, so only they are compared on the
        // next. The first bad row is the least over the columns (a column
        // stops at its first; rows after it do not change the least).
        let mut tied = vec![true; batch.num_rows() - 1];
        let first_bad = cols.iter().filter_map(|c| c.first_descent(&mut tied)).min();
        if let Some(row) = first_bad {
            return Err(bad(row));
        }
        let last = batch.num_rows() - 1;
        self.last[idx] = Some(cols.iter().map(|c| c.value(last)).collect());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::MemorySink;
    use xprof_format::schema::StatMetadataRow;
    use xprof_format::small_table_rows::RowBuffer;

    fn batch(ids: &[(i32, i64)]) -> RecordBatch {
        let mut b = RowBuffer::new();
        for (d, id) in ids {
            b.push(&StatMetadataRow {
                trace_id: 0,
                device_id: *d,
                stat_metadata_id: *id,
                name: "x",
                description: None,
            });
        }
        b.finish().unwrap()
    }

    #[test]
    fn a_batch_out_of_order_is_refused() {
        let mut mem = MemorySink::default();
        let mut s = OrderedSink::new(&mut mem);
        s.write(Table::StatMetadata, batch(&[(0, 1), (0, 2), (1, 0)]))
            .unwrap();
        // Continues the order across batches.
        s.write(Table::StatMetadata, batch(&[(1, 0), (1, 5)]))
            .unwrap();
        let e = s
            .write(Table::StatMetadata, batch(&[(1, 4)]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("stat_metadata row 0"), "{e}");
        let e = s
            .write(Table::StatMetadata, batch(&[(2, 3), (2, 1)]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 1"), "{e}");
        assert_eq!(mem.rows(Table::StatMetadata), 5);
    }

    /// A later column may descend only where the earlier ones tie; the
    /// row named is the first bad one over all columns.
    #[test]
    fn later_columns_are_checked_where_earlier_ones_tie() {
        let mut mem = MemorySink::default();
        let mut s = OrderedSink::new(&mut mem);
        s.write(Table::StatMetadata, batch(&[(0, 9), (1, 0), (1, 1)]))
            .unwrap();
        let mut s = OrderedSink::new(&mut mem);
        let e = s
            .write(
                Table::StatMetadata,
                batch(&[(0, 1), (1, 0), (1, 2), (1, 1), (0, 9)]),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("stat_metadata row 3 "), "{e}");
    }
}
