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
#[derive(Debug, Default)]
pub struct MemorySink {
    /// Batches per table.
    pub tables: BTreeMap<Table, Vec<RecordBatch>>,
}

impl MemorySink {
    /// Number of rows of `table`.
    pub fn rows(&self, table: Table) -> usize {
        self.tables
            .get(&table)
            .map_or(0, |b| b.iter().map(|b| b.num_rows()).sum())
    }

    /// Adds every batch of `other`.
    pub fn extend(&mut self, other: MemorySink) {
        for (t, b) in other.tables {
            self.tables.entry(t).or_default().extend(b);
        }
    }
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
        if batch.num_rows() > 0 {
            self.tables.entry(table).or_default().push(compact(batch));
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
