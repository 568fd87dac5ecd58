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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::*;
    use crate::value::StatValue;

    /// The columns `R`'s fields fill, as its table declares them: names in
    /// order, an `Option` exactly where the column may be NULL, and a
    /// `StatValue` over the six value columns.
    fn check<R: Row>(covered: &mut Vec<Table>) {
        let columns = R::TABLE.def().columns;
        let mut at = 0;
        for field in R::fields() {
            let column = &columns[at];
            if field.width == 1 {
                assert_eq!(field.name, column.name, "{}: field order", R::TABLE.name());
                assert_eq!(
                    field.nullable,
                    column.nullable,
                    "{}.{}: an Option exactly where the column may be NULL",
                    R::TABLE.name(),
                    column.name
                );
            } else {
                let names: Vec<_> = columns[at..at + field.width]
                    .iter()
                    .map(|c| c.name)
                    .collect();
                // The value columns as `device_args` declares them.
                let values: Vec<_> = Table::DeviceArgs.def().columns[3..9]
                    .iter()
                    .map(|c| c.name)
                    .collect();
                assert_eq!(
                    names,
                    values,
                    "{}: a StatValue fills the value columns",
                    R::TABLE.name()
                );
            }
            at += field.width;
        }
        assert_eq!(
            at,
            columns.len(),
            "{}: every column has a field",
            R::TABLE.name()
        );
        covered.push(R::TABLE);
    }

    #[test]
    fn every_row_struct_fits_its_table_columns() {
        let mut covered = Vec::new();
        check::<TraceRow<'_>>(&mut covered);
        check::<DeviceRow<'_>>(&mut covered);
        check::<DeviceArgRow<'_>>(&mut covered);
        check::<TrackRow<'_>>(&mut covered);
        check::<EventMetadataRow<'_>>(&mut covered);
        check::<MetadataArgRow<'_>>(&mut covered);
        check::<StatMetadataRow<'_>>(&mut covered);
        check::<CounterRow>(&mut covered);
        check::<FlowRow<'_>>(&mut covered);
        check::<HloOpRow<'_>>(&mut covered);
        check::<HloInstructionRow<'_>>(&mut covered);
        check::<LloProgramRow<'_>>(&mut covered);
        check::<LloRegionRow<'_>>(&mut covered);
        check::<LloBundleUnitRow<'_>>(&mut covered);
        check::<LloProgramInstructionRow<'_>>(&mut covered);
        check::<LloAllocationRow<'_>>(&mut covered);
        check::<LloRegisterLiveRangeRow<'_>>(&mut covered);
        check::<LloRegisterPressureRow<'_>>(&mut covered);
        check::<LloBdiStallRow<'_>>(&mut covered);
        check::<LloBundleSourceRow<'_>>(&mut covered);
        check::<LloTargetInfoRow<'_>>(&mut covered);
        check::<LloDumpBundleRow<'_>>(&mut covered);
        check::<LloDumpOpRow<'_>>(&mut covered);
        check::<LloDumpBundleUnitRow<'_>>(&mut covered);
        check::<LloDumpScheduleRow<'_>>(&mut covered);
        check::<LloDumpAllocationRow<'_>>(&mut covered);
        check::<ProfileNodeRow<'_>>(&mut covered);
        check::<NodeMetricRow<'_>>(&mut covered);
        // events and event_args have builders of their own (event_rows).
        covered.extend([Table::Events, Table::EventArgs]);
        covered.sort();
        assert_eq!(
            covered,
            Table::ALL.to_vec(),
            "every table's row struct is checked"
        );
    }

    #[test]
    fn a_declaration_names_its_columns_as_its_fields_and_keeps_its_docs() {
        let devices = Table::Devices.def();
        let kind = devices
            .columns
            .iter()
            .position(|c| c.name == "type")
            .unwrap();
        assert_eq!(devices.columns[kind].ty, ColumnType::Utf8);
        assert!(
            devices
                .columns
                .iter()
                .all(|c| !c.doc.starts_with(' ') && !c.doc.is_empty())
        );
        assert!(
            Table::ALL
                .iter()
                .all(|t| !t.def().doc.starts_with(' ') && !t.def().doc.is_empty())
        );
        assert_eq!(devices.columns[0].doc, Table::Traces.def().columns[0].doc);
    }

    #[test]
    fn rows_land_in_the_named_columns() {
        use arrow::array::AsArray;
        use arrow::datatypes::{Int32Type, Int64Type};
        let mut b = RowBuffer::new();
        b.push(&TrackRow {
            trace_id: 3,
            track_id: 5,
            device_id: 7,
            line_id: 11,
            display_id: 13,
            name: "VALU Instructions",
            display_name: "VALU",
            kind: "llo_unit",
            unit: Some("VALU"),
            timestamp_ns: 17,
            duration_ps: 19,
            event_count: 23,
        });
        let batch = b.finish().unwrap();
        let i32_of = |c: &str| {
            batch
                .column_by_name(c)
                .unwrap()
                .as_primitive::<Int32Type>()
                .value(0)
        };
        let i64_of = |c: &str| {
            batch
                .column_by_name(c)
                .unwrap()
                .as_primitive::<Int64Type>()
                .value(0)
        };
        assert_eq!(
            (i32_of("trace_id"), i32_of("track_id"), i32_of("device_id")),
            (3, 5, 7)
        );
        assert_eq!((i64_of("line_id"), i64_of("display_id")), (11, 13));
        assert_eq!(
            (
                i64_of("timestamp_ns"),
                i64_of("duration_ps"),
                i64_of("event_count")
            ),
            (17, 19, 23)
        );
        let s = |c: &str| {
            batch
                .column_by_name(c)
                .unwrap()
                .as_string::<i32>()
                .value(0)
                .to_string()
        };
        assert_eq!(s("unit"), "VALU");
        assert_eq!(s("kind"), "llo_unit");

        let mut args = RowBuffer::new();
        args.push(&DeviceArgRow {
            trace_id: 0,
            device_id: 1,
            key: "k",
            value: StatValue::Double(2.5),
        });
        let batch = args.finish().unwrap();
        assert_eq!(
            batch
                .column_by_name("double_value")
                .unwrap()
                .as_primitive::<arrow::datatypes::Float64Type>()
                .value(0),
            2.5
        );
    }
}
