//! Typed rows for the tables that are not high-volume (every table but
//! `events` and `event_args`, which have their own builders in
//! [`crate::event_rows`]): the [`Row`] and [`Cell`] traits and the
//! [`RowBuffer`] rows are pushed into.
//!
//! The row structs themselves are declared with their tables, in
//! [`crate::schema`] (one declaration gives a table's columns and its row
//! struct, so no table is written by column position). A field of type
//! [`StatValue`] fills the six value columns of the `*_args` tables
//! (`value_type` … `bytes_value`).
//!
//! ```
//! use xprof_format::schema::StatMetadataRow;
//! use xprof_format::small_table_rows::RowBuffer;
//! use xprof_format::Table;
//! let mut rows = RowBuffer::new();
//! rows.push(&StatMetadataRow { trace_id: 0, device_id: 1, stat_metadata_id: 7, name: "flops", description: None });
//! let batch = rows.finish().unwrap();
//! assert_eq!(batch.schema(), Table::StatMetadata.schema());
//! ```

use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::builders::{ColumnBuilder, Interner, Sym, TableBuilder};
use crate::schema::Table;
use crate::value::StatValue;

/// One value written into one or more columns of a [`TableBuilder`].
pub trait Cell {
    /// Columns the value fills.
    const WIDTH: usize = 1;
    /// Whether the value may be NULL (an `Option`).
    const NULLABLE: bool = false;
    /// Appends the value at column `col` (and the next `WIDTH - 1`).
    fn append(&self, b: &mut TableBuilder, col: usize, interner: &mut Interner);
}

fn mismatch(b: &TableBuilder, col: usize, what: &str) -> ! {
    panic!(
        "{}.{} does not take a {what}",
        b.table().name(),
        b.table().def().columns[col].name
    )
}

impl Cell for Option<i64> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Int64(c) => c.append_option(*self),
            _ => mismatch(b, col, "i64"),
        }
    }
}

impl Cell for bool {
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Boolean(c) => c.append_value(*self),
            _ => mismatch(b, col, "bool"),
        }
    }
}

impl Cell for Option<bool> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Boolean(c) => c.append_option(*self),
            _ => mismatch(b, col, "bool"),
        }
    }
}

impl Cell for Option<u64> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::UInt64(c) => c.append_option(*self),
            _ => mismatch(b, col, "u64"),
        }
    }
}

impl Cell for u64 {
    fn append(&self, b: &mut TableBuilder, col: usize, i: &mut Interner) {
        Some(*self).append(b, col, i)
    }
}

impl Cell for i64 {
    fn append(&self, b: &mut TableBuilder, col: usize, i: &mut Interner) {
        Some(*self).append(b, col, i)
    }
}

impl Cell for Option<i32> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Int32(c) => c.append_option(*self),
            _ => mismatch(b, col, "i32"),
        }
    }
}

impl Cell for i32 {
    fn append(&self, b: &mut TableBuilder, col: usize, i: &mut Interner) {
        Some(*self).append(b, col, i)
    }
}

impl Cell for Option<f64> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Float64(c) => c.append_option(*self),
            _ => mismatch(b, col, "f64"),
        }
    }
}

impl Cell for f64 {
    fn append(&self, b: &mut TableBuilder, col: usize, i: &mut Interner) {
        Some(*self).append(b, col, i)
    }
}

impl Cell for Option<&str> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, interner: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Utf8(c) => c.append_option(*self),
            ColumnBuilder::Dict(c) => c.push_opt(self.map(|s| interner.intern(s))),
            _ => mismatch(b, col, "string"),
        }
    }
}

impl Cell for &str {
    fn append(&self, b: &mut TableBuilder, col: usize, i: &mut Interner) {
        Some(*self).append(b, col, i)
    }
}

impl Cell for Option<Sym> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Dict(c) => c.push_opt(*self),
            _ => mismatch(b, col, "symbol"),
        }
    }
}

impl Cell for Sym {
    fn append(&self, b: &mut TableBuilder, col: usize, i: &mut Interner) {
        Some(*self).append(b, col, i)
    }
}

impl Cell for Option<&[u8]> {
    const NULLABLE: bool = true;
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Binary(c) => c.append_option(*self),
            _ => mismatch(b, col, "bytes"),
        }
    }
}

impl Cell for &[String] {
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::ListUtf8(c) => {
                for s in self.iter() {
                    c.values().append_value(s);
                }
                c.append(true);
            }
            _ => mismatch(b, col, "list of strings"),
        }
    }
}

impl Cell for &[i64] {
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::ListInt64(c) => {
                c.values().append_slice(self);
                c.append(true);
            }
            _ => mismatch(b, col, "list of i64"),
        }
    }
}

impl Cell for StatValue<'_> {
    const WIDTH: usize = 6;
    fn append(&self, b: &mut TableBuilder, col: usize, interner: &mut Interner) {
        let ty = interner.intern(self.type_name());
        b.push_value(col, self, ty);
    }
}

/// A typed row of one table.
pub trait Row {
    /// The table the row belongs to.
    const TABLE: Table;
    /// The row's fields in order: the columns they fill.
    fn fields() -> Vec<FieldShape>;
    /// Appends the row to `builder`, interning strings of dictionary
    /// columns in `interner`.
    fn append(&self, builder: &mut TableBuilder, interner: &mut Interner);
}

/// One field of a [`Row`]: its column's name, how many columns it fills
/// and whether it may be NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldShape {
    /// The (first) column's name.
    pub name: &'static str,
    /// Columns it fills ([`Cell::WIDTH`]).
    pub width: usize,
    /// Whether it may be NULL ([`Cell::NULLABLE`]).
    pub nullable: bool,
}

/// Rows of one table, turned into a batch at the end.
#[derive(Debug)]
pub struct RowBuffer {
    builder: Option<TableBuilder>,
    interner: Interner,
}

impl Default for RowBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl RowBuffer {
    /// An empty buffer; the table is the one of the first row pushed.
    pub fn new() -> Self {
        Self {
            builder: None,
            interner: Interner::new(),
        }
    }

    /// Appends one row.
    pub fn push<R: Row>(&mut self, row: &R) {
        let b = self
            .builder
            .get_or_insert_with(|| TableBuilder::new(R::TABLE));
        assert_eq!(b.table(), R::TABLE, "one table per buffer");
        row.append(b, &mut self.interner);
    }

    /// Appends a row whose symbols come from `interner` (dictionary
    /// columns of [`Sym`] fields are finished with it).
    pub fn push_with<R: Row>(&mut self, row: &R, interner: &mut Interner) {
        let b = self
            .builder
            .get_or_insert_with(|| TableBuilder::new(R::TABLE));
        row.append(b, interner);
    }

    /// Rows pushed since the last finish.
    pub fn len(&self) -> usize {
        self.builder.as_ref().map_or(0, |b| b.len())
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table, once a row was pushed.
    pub fn table(&self) -> Option<Table> {
        self.builder.as_ref().map(|b| b.table())
    }

    /// The rows so far as one batch (strings interned here; the buffer's
    /// interner starts again, so a buffer reused for many batches holds
    /// only the strings of its rows).
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let interner = std::mem::take(&mut self.interner);
        self.finish_with(&interner)
    }

    /// The rows so far as one batch, dictionary columns resolved through
    /// `interner`.
    pub fn finish_with(&mut self, interner: &Interner) -> Result<RecordBatch, ArrowError> {
        match &mut self.builder {
            Some(b) => b.finish(interner),
            None => Err(ArrowError::InvalidArgumentError(
                "no row pushed: table unknown".into(),
            )),
        }
    }
}
