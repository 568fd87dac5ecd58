//! Where converted batches go.

use std::collections::BTreeMap;
use std::path::Path;

use arrow::record_batch::RecordBatch;
use xprof_format::Table;
use xprof_format::dataset::{PartWriter, WriteOptions};

use crate::error::Result;

/// Receives the batches of every table as a converter produces them.
///
/// Batches of one table arrive in the table's sort order.
pub trait TableSink {
    /// Takes one batch of `table`.
    fn write(&mut self, table: Table, batch: RecordBatch) -> Result<()>;
}

/// Counts rows and drops the batches: measures converting alone.
#[derive(Debug, Default)]
pub struct CountingSink {
    /// Rows seen, all tables together.
    pub rows: usize,
}

impl TableSink for CountingSink {
    fn write(&mut self, _table: Table, batch: RecordBatch) -> Result<()> {
        self.rows += batch.num_rows();
        Ok(())
    }
}

/// Keeps every batch in memory (for small inputs queried directly).
///
/// Short batches are joined as they arrive, into batches of about
/// [`MemorySink::BATCH_ROWS`] rows: a file of many small devices (20,000
/// Chrome `pid`s) gives a batch per device and table, and each batch
/// costs kilobytes of array headers and buffers whatever its rows, so
/// holding them apart made memory grow with devices, not rows. At most
/// [`MemorySink::OPEN_RUN`] short batches per table are held apart at
/// any time; [`MemorySink::tables`] always holds every row, in order.
#[derive(Debug, Default)]
pub struct MemorySink {
    /// Batches per table.
    pub tables: BTreeMap<Table, Vec<RecordBatch>>,
    /// Per table, where the trailing run of short batches not yet joined
    /// starts in `tables`.
    open_run: BTreeMap<Table, usize>,
    /// Keep batches as the converter made them (never join).
    keep_batches: bool,
}

impl MemorySink {
    /// A sink that keeps every batch as the converter made it, never
    /// joining short ones: for checking a converter's batching.
    pub fn keeping_batches() -> Self {
        Self {
            keep_batches: true,
            ..Self::default()
        }
    }

    /// Number of rows of `table`.
    pub fn rows(&self, table: Table) -> usize {
        self.tables
            .get(&table)
            .map_or(0, |b| b.iter().map(|b| b.num_rows()).sum())
    }

    /// Adds every batch of `other`.
    pub fn extend(&mut self, other: MemorySink) {
        for (t, b) in other.tables {
            let batches = self.tables.entry(t).or_default();
            batches.extend(b);
            self.open_run.insert(t, batches.len());
        }
    }

    /// Rows a run of short batches is joined into.
    pub const BATCH_ROWS: usize = 8192;
    /// Short batches held apart before they are joined.
    pub const OPEN_RUN: usize = 64;
}

/// Joins `batches[start..]` (batches of `table`) into one batch in their
/// place.
fn join_run(table: Table, batches: &mut Vec<RecordBatch>, start: usize) -> Result<()> {
    if batches.len() - start > 1 {
        let schema = batches[start].schema();
        let joined =
            arrow::compute::concat_batches(&schema, &batches[start..]).map_err(|source| {
                crate::error::ConvertError::Format(xprof_format::FormatError::Arrow {
                    table: table.name(),
                    source,
                })
            })?;
        batches.truncate(start);
        batches.push(joined);
    }
    Ok(())
}

/// `batch`, or a copy in buffers of its size when it holds much more
/// memory than its rows use: a device's last, short batch keeps its
/// builders' capacity, so a file of many small devices (20,000 Chrome
/// `pid`s, 1,000 one-event planes) held capacity per device, not rows.
fn compact(batch: RecordBatch) -> RecordBatch {
    use arrow::array::{ArrayRef, MutableArrayData, make_array};
    let used: usize = batch
        .columns()
        .iter()
        .map(|c| {
            c.to_data()
                .get_slice_memory_size()
                .unwrap_or(usize::MAX / 64)
        })
        .sum();
    if batch.get_array_memory_size() <= used.saturating_mul(2).saturating_add(4096) {
        return batch;
    }
    let columns: std::result::Result<Vec<ArrayRef>, arrow::error::ArrowError> = batch
        .columns()
        .iter()
        .map(|c| {
            let data = c.to_data();
            let mut copy = MutableArrayData::new(vec![&data], false, data.len());
            copy.try_extend(0, 0, data.len())?;
            Ok(make_array(copy.freeze()))
        })
        .collect();
    // A copy that cannot be made leaves the batch as it is.
    match columns.and_then(|c| RecordBatch::try_new(batch.schema(), c)) {
        Ok(compacted) => compacted,
        Err(_) => batch,
    }
}

impl TableSink for MemorySink {
    fn write(&mut self, table: Table, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let batches = self.tables.entry(table).or_default();
        if self.keep_batches {
            batches.push(compact(batch));
            return Ok(());
        }
        let start = self.open_run.entry(table).or_insert(0);
        if batch.num_rows() >= Self::BATCH_ROWS {
            join_run(table, batches, *start)?;
            batches.push(compact(batch));
            *start = batches.len();
            return Ok(());
        }
        batches.push(compact(batch));
        let run = &batches[*start..];
        let run_rows: usize = run.iter().map(RecordBatch::num_rows).sum();
        if run.len() >= Self::OPEN_RUN || run_rows >= Self::BATCH_ROWS {
            join_run(table, batches, *start)?;
            if run_rows >= Self::BATCH_ROWS {
                *start = batches.len();
            }
        }
        Ok(())
    }
}

/// Writes one part of a Parquet dataset; see [`xprof_format::dataset`].
#[derive(Debug)]
pub struct ParquetSink {
    writer: PartWriter,
}

impl ParquetSink {
    /// Starts part `part` in dataset folder `dir`.
    pub fn create(dir: &Path, part: &str, options: WriteOptions) -> Result<Self> {
        Ok(Self {
            writer: PartWriter::create(dir, part, options)?,
        })
    }

    /// Makes the part's files visible; see [`PartWriter::finish`].
    pub fn finish(self) -> Result<Vec<std::path::PathBuf>> {
        Ok(self.writer.finish()?)
    }

    /// Makes the part's files visible in `subdir` of each table's folder;
    /// see [`PartWriter::finish_in`].
    pub fn finish_in(self, subdir: &Path) -> Result<Vec<std::path::PathBuf>> {
        Ok(self.writer.finish_in(subdir)?)
    }
}

impl TableSink for ParquetSink {
    fn write(&mut self, table: Table, batch: RecordBatch) -> Result<()> {
        Ok(self.writer.write(table, &batch)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray, DictionaryArray, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema};
    use std::sync::Arc;

    /// A batch of `rows` rows of `(id, name)` from `first`, the name a
    /// dictionary column.
    fn batch(first: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new(
                "name",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
        ]));
        let ids = Int64Array::from_iter_values(first..first + rows);
        let strings: Vec<Option<String>> = (first..first + rows)
            .map(|i| (i % 3 != 0).then(|| format!("op{}", i % 7)))
            .collect();
        let names: DictionaryArray<Int32Type> = strings.iter().map(|s| s.as_deref()).collect();
        RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(names)]).unwrap()
    }

    fn rows_of(sink: &MemorySink) -> Vec<(i64, Option<String>)> {
        let mut out = Vec::new();
        for b in &sink.tables[&Table::Events] {
            let ids = b.column(0).as_primitive::<Int64Type>();
            let names = b.column(1).as_dictionary::<Int32Type>();
            let values = names
                .values()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            for i in 0..b.num_rows() {
                let name = names
                    .is_valid(i)
                    .then(|| values.value(names.keys().value(i) as usize).to_string());
                out.push((ids.value(i), name));
            }
        }
        out
    }

    #[test]
    fn short_batches_are_joined_in_order_and_never_held_apart_for_long() {
        let mut sink = MemorySink::default();
        let mut want = MemorySink::keeping_batches();
        let mut next = 0;
        // 20,000 one-row batches, a long one, then a few short ones.
        let sizes = std::iter::repeat_n(1, 20_000).chain([10_000, 5, 7]);
        for rows in sizes {
            let b = batch(next, rows);
            next += rows;
            sink.write(Table::Events, b.clone()).unwrap();
            want.write(Table::Events, b).unwrap();
            let held = sink.tables[&Table::Events].len();
            assert!(
                held <= 4 + MemorySink::OPEN_RUN,
                "{held} batches held after {next} rows"
            );
        }
        assert_eq!(rows_of(&sink), rows_of(&want));
        assert_eq!(sink.rows(Table::Events), next as usize);
        let sizes: Vec<usize> = sink.tables[&Table::Events]
            .iter()
            .map(RecordBatch::num_rows)
            .collect();
        // Two joined runs of 8,192 rows, the rest of the one-row batches
        // (3,616 rows) joined before the long batch, the long batch, and
        // the two short ones at the end.
        assert_eq!(sizes, [8192, 8192, 3616, 10_000, 5, 7]);
    }

    #[test]
    fn extended_sinks_keep_every_row_in_order_and_are_not_joined_again() {
        let mut a = MemorySink::default();
        let mut b = MemorySink::default();
        for i in 0..100 {
            a.write(Table::Events, batch(i, 1)).unwrap();
        }
        b.write(Table::Events, batch(100, 10_000)).unwrap();
        a.extend(b);
        a.write(Table::Events, batch(10_100, 1)).unwrap();
        let ids: Vec<i64> = rows_of(&a).into_iter().map(|r| r.0).collect();
        assert_eq!(ids, (0..10_101).collect::<Vec<_>>());
        // The extended batches end `a`'s open run: the row written after
        // them starts a new one instead of copying them all again.
        let sizes: Vec<usize> = a.tables[&Table::Events]
            .iter()
            .map(RecordBatch::num_rows)
            .collect();
        let mut want = vec![64];
        want.extend([1; 36]);
        want.extend([10_000, 1]);
        assert_eq!(sizes, want);
    }
}
