//! Typed rows for the tables that are not high-volume (every table but
//! `events` and `event_args`, which have their own builders in
//! [`crate::event_rows`]).
//!
//! Each row struct is declared with the [`table_row!`] macro, whose field
//! names are the table's column names in order: a test checks every
//! struct against [`Table::schema`], so no table is written by column
//! position. A field of type [`StatValue`] fills the six value columns of
//! the `*_args` tables (`value_type` … `bytes_value`).
//!
//! ```
//! use xprof_format::small_table_rows::{RowBuffer, StatMetadataRow};
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
    fn append(&self, b: &mut TableBuilder, col: usize, _: &mut Interner) {
        match b.column_mut(col) {
            ColumnBuilder::Boolean(c) => c.append_option(*self),
            _ => mismatch(b, col, "bool"),
        }
    }
}

impl Cell for Option<u64> {
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
    /// The column names the row's fields fill, in order.
    fn columns() -> Vec<&'static str>;
    /// Appends the row to `b`, interning strings of dictionary columns in
    /// `interner`.
    fn append(&self, b: &mut TableBuilder, interner: &mut Interner);
}

/// Declares a row struct whose fields are the columns of a table, in
/// order, and implements [`Row`] for it.
#[macro_export]
macro_rules! table_row {
    ($(#[$meta:meta])* $name:ident $(<$lt:lifetime>)? => $table:ident {
        $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        ///
        /// Each field is the column of the same name (see `docs/schema.md`).
        #[derive(Debug, Clone, PartialEq)]
        #[allow(missing_docs)]
        pub struct $name $(<$lt>)? {
            $($(#[$fmeta])* pub $field: $ty),*
        }

        impl $(<$lt>)? $crate::small_table_rows::Row for $name $(<$lt>)? {
            const TABLE: $crate::schema::Table = $crate::schema::Table::$table;
            fn columns() -> Vec<&'static str> {
                let def = Self::TABLE.def();
                let mut out = Vec::new();
                $(
                    let width = <$ty as $crate::small_table_rows::Cell>::WIDTH;
                    if width == 1 {
                        out.push(stringify!($field));
                    } else {
                        // A multi-column value: the columns from the one
                        // the field is named after (`value` starts at
                        // `value_type`).
                        let first = def
                            .column_index(concat!(stringify!($field), "_type"))
                            .expect("value columns");
                        out.extend(def.columns[first..first + width].iter().map(|c| c.name));
                    }
                )*
                out
            }
            fn append(
                &self,
                b: &mut $crate::builders::TableBuilder,
                interner: &mut $crate::builders::Interner,
            ) {
                let mut col = 0usize;
                $(
                    $crate::small_table_rows::Cell::append(&self.$field, b, col, interner);
                    col += <$ty as $crate::small_table_rows::Cell>::WIDTH;
                )*
                debug_assert_eq!(col, Self::TABLE.def().columns.len());
            }
        }
    };
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

table_row! {
    /// One row of `traces`.
    TraceRow<'a> => Traces {
        trace_id: i32,
        source_format: &'a str,
        source_path: &'a str,
        run: Option<&'a str>,
        host: &'a str,
        start_unix_ns: Option<i64>,
        stop_unix_ns: Option<i64>,
        duration_ps: i64,
        schema_version: i32,
        converter_version: &'a str,
        hostnames: &'a [String],
        errors: &'a [String],
        warnings: &'a [String],
        converter_warnings: &'a [String],
    }
}

table_row! {
    /// One row of `devices`.
    DeviceRow<'a> => Devices {
        trace_id: i32,
        device_id: i32,
        plane_id: i64,
        name: &'a str,
        kind: &'a str,
        ordinal: Option<i32>,
        r#type: Option<&'a str>,
        vendor: Option<&'a str>,
        peak_tflops: Option<f64>,
        peak_hbm_gbps: Option<f64>,
        clock_rate: Option<f64>,
        core_count: Option<i64>,
        line_count: i32,
        event_count: i64,
        stat_count: i32,
        process_name: Option<&'a str>,
    }
}

table_row! {
    /// One row of `device_args`.
    DeviceArgRow<'a> => DeviceArgs {
        trace_id: i32,
        device_id: i32,
        key: &'a str,
        value: StatValue<'a>,
    }
}

table_row! {
    /// One row of `tracks`.
    TrackRow<'a> => Tracks {
        trace_id: i32,
        track_id: i32,
        device_id: i32,
        line_id: i64,
        display_id: i64,
        name: &'a str,
        display_name: &'a str,
        kind: &'a str,
        unit: Option<&'a str>,
        timestamp_ns: i64,
        duration_ps: i64,
        event_count: i64,
    }
}

table_row! {
    /// One row of `event_metadata`.
    EventMetadataRow<'a> => EventMetadata {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        name: &'a str,
        display_name: Option<&'a str>,
        metadata: Option<&'a [u8]>,
        child_ids: &'a [i64],
        stat_count: i32,
    }
}

table_row! {
    /// One row of `metadata_args`.
    MetadataArgRow<'a> => MetadataArgs {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        key: &'a str,
        value: StatValue<'a>,
    }
}

table_row! {
    /// One row of `stat_metadata`.
    StatMetadataRow<'a> => StatMetadata {
        trace_id: i32,
        device_id: i32,
        stat_metadata_id: i64,
        name: &'a str,
        description: Option<&'a str>,
    }
}

table_row! {
    /// One row of `counters`; `name` is a symbol of the caller's interner.
    CounterRow => Counters {
        trace_id: i32,
        track_id: i32,
        event_id: i64,
        name: Sym,
        ts_ps: i64,
        value: f64,
    }
}

table_row! {
    /// One row of `flows`.
    FlowRow<'a> => Flows {
        trace_id: i32,
        flow_id: i64,
        kind: &'a str,
        context_type: Option<i32>,
        src_event_id: Option<i64>,
        dst_event_id: Option<i64>,
    }
}

table_row! {
    /// One row of `hlo_ops`.
    HloOpRow<'a> => HloOps {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        program_id: Option<u64>,
        hlo_module: Option<&'a str>,
        hlo_op: &'a str,
        category: Option<&'a str>,
        expression: &'a str,
        shape: Option<&'a str>,
        flops: Option<i64>,
        model_flops: Option<i64>,
        bytes_accessed: Option<i64>,
        tf_op: Option<&'a str>,
        source: Option<&'a str>,
    }
}

table_row! {
    /// One row of `hlo_instructions`.
    HloInstructionRow<'a> => HloInstructions {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        program_id: Option<u64>,
        hlo_module: &'a str,
        computation: &'a str,
        computation_role: &'a str,
        instruction_id: i64,
        name: &'a str,
        opcode: &'a str,
        category: &'a str,
        expression: &'a str,
        shape: &'a str,
        operands: &'a [String],
        called_computations: &'a [String],
        fusion_kind: Option<&'a str>,
        custom_call_target: Option<&'a str>,
        op_type: Option<&'a str>,
        op_name: Option<&'a str>,
        tf_op: &'a str,
        deduplicated_name: Option<&'a str>,
        source: Option<&'a str>,
        source_stack: Option<&'a str>,
    }
}

table_row! {
    /// One row of `llo_programs`.
    LloProgramRow<'a> => LloPrograms {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        program: &'a str,
        hlo_module: Option<&'a str>,
        module_id: Option<i64>,
        bytes: i64,
        bundles: Option<i64>,
        regions: Option<i64>,
        instructions: Option<i64>,
        analysis_instructions: Option<i64>,
        allocations: Option<i64>,
        decode_status: &'a str,
    }
}

table_row! {
    /// One row of `llo_regions`.
    LloRegionRow<'a> => LloRegions {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        node: i64,
        parent_node: Option<i64>,
        depth: i32,
        region_id: Option<i64>,
        parent_region_id: Option<i64>,
        name: &'a str,
        kind: &'a str,
        start_bundle: Option<i64>,
        limit_bundle: Option<i64>,
        instructions: i64,
        trip_count: Option<i64>,
        region_path: &'a str,
        named_scope: Option<&'a str>,
        primitive: Option<&'a str>,
        source_file: Option<&'a str>,
        source_line: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_bundle_units`.
    LloBundleUnitRow<'a> => LloBundleUnits {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        bundle: i64,
        unit: &'a str,
        xprof_unit: &'a str,
        used: i64,
        capacity: Option<i64>,
        region_id: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_program_instructions`.
    LloProgramInstructionRow<'a> => LloProgramInstructions {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        instruction_id: i64,
        opcode: &'a str,
        opcode_value: i32,
        category: &'a str,
        unit: &'a str,
        bundle: Option<i64>,
        region_id: Option<i64>,
        mxu: Option<i32>,
        register_type: Option<&'a str>,
        pseudo_kind: Option<&'a str>,
        comment: Option<&'a str>,
        primitive: Option<&'a str>,
        named_scope: Option<&'a str>,
        source_file: Option<&'a str>,
        source_line: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_allocations`.
    LloAllocationRow<'a> => LloAllocations {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        ordinal: i64,
        size_bytes: i64,
        memory_space: &'a str,
        space: i32,
        is_spill: bool,
        is_scoped: bool,
        is_virtual: bool,
        is_remote: bool,
    }
}

table_row! {
    /// One row of `llo_register_live_ranges`.
    LloRegisterLiveRangeRow<'a> => LloRegisterLiveRanges {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        instruction_id: i64,
        register_type: &'a str,
        register: i32,
        start_bundle: i64,
        end_bundle: i64,
    }
}

table_row! {
    /// One row of `llo_register_pressure`.
    LloRegisterPressureRow<'a> => LloRegisterPressure {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        bundle: i64,
        register_type: &'a str,
        live: i64,
        region_id: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_bdi_stalls`.
    LloBdiStallRow<'a> => LloBdiStalls {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        instruction_id: i64,
        bundle: Option<i64>,
        code: &'a str,
        position: i32,
        comment: &'a str,
        region_id: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_bundle_sources`.
    LloBundleSourceRow<'a> => LloBundleSources {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        bundle: i64,
        source: &'a str,
        source_file: &'a str,
        source_line: Option<i64>,
        instructions: i64,
        region_id: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_target_info`.
    LloTargetInfoRow<'a> => LloTargetInfo {
        trace_id: i32,
        device_id: i32,
        metadata_id: i64,
        hlo_op: &'a str,
        replica_count: i64,
        reserved_hbm_usage_bytes: i64,
        chip_config_name: Option<&'a str>,
        platform_type: Option<i32>,
        variant: Option<i32>,
        enhanced_barrier_enabled: Option<bool>,
        chips_per_host_x: Option<i32>,
        chips_per_host_y: Option<i32>,
        chips_per_host_z: Option<i32>,
        host_x: Option<i32>,
        host_y: Option<i32>,
        host_z: Option<i32>,
        bounds: Option<&'a str>,
    }
}

table_row! {
    /// One row of `llo_dump_bundles`.
    LloDumpBundleRow<'a> => LloDumpBundles {
        trace_id: i32,
        hlo_op: &'a str,
        address: Option<i64>,
        line: i64,
        tag: Option<&'a str>,
        in_loop: bool,
        ops: Option<i64>,
        region_id: Option<i64>,
        regions_started: &'a [i64],
        regions_ended: &'a [i64],
        regions_empty: &'a [i64],
        is_entry: bool,
        is_exit: bool,
        comment: Option<&'a str>,
        unread_text: Option<&'a str>,
    }
}

table_row! {
    /// One row of `llo_dump_ops`.
    LloDumpOpRow<'a> => LloDumpOps {
        trace_id: i32,
        hlo_op: &'a str,
        address: i64,
        position: i32,
        opcode: &'a str,
        unit: &'a str,
        unit_as_written: &'a str,
        result: Option<&'a str>,
        text: &'a str,
    }
}

table_row! {
    /// One row of `llo_dump_bundle_units`.
    LloDumpBundleUnitRow<'a> => LloDumpBundleUnits {
        trace_id: i32,
        hlo_op: &'a str,
        address: i64,
        unit: &'a str,
        unit_as_written: &'a str,
        used: i64,
        capacity: i64,
    }
}

table_row! {
    /// One row of `llo_dump_schedule`.
    LloDumpScheduleRow<'a> => LloDumpSchedule {
        trace_id: i32,
        hlo_op: &'a str,
        line: i64,
        kind: &'a str,
        name: Option<&'a str>,
        bundles: f64,
        pct: Option<f64>,
        instances: Option<i64>,
    }
}

table_row! {
    /// One row of `llo_dump_allocations`.
    LloDumpAllocationRow<'a> => LloDumpAllocations {
        trace_id: i32,
        hlo_op: &'a str,
        line: i64,
        name: &'a str,
        shape: Option<&'a str>,
        memory_space: &'a str,
        size_bytes: i64,
        offset_bytes: Option<i64>,
        is_scoped: bool,
        tag: Option<&'a str>,
    }
}

table_row! {
    /// One row of `profile_nodes`.
    ProfileNodeRow<'a> => ProfileNodes {
        trace_id: i32,
        node_id: i64,
        parent_id: Option<i64>,
        depth: i32,
        name: &'a str,
        path: &'a [String],
        frame_type: Option<&'a str>,
        time_ps: Option<i64>,
        count: Option<i64>,
        device_id: Option<&'a str>,
        device_type: Option<&'a str>,
        flops: Option<f64>,
        flops8: Option<f64>,
        flops16: Option<f64>,
        flops32: Option<f64>,
        flops64: Option<f64>,
        bytes: Option<f64>,
        metric_count: i32,
    }
}

table_row! {
    /// One row of `node_metrics`.
    NodeMetricRow<'a> => NodeMetrics {
        trace_id: i32,
        node_id: i64,
        metric: &'a str,
        kind: &'a str,
        value: StatValue<'a>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: Table) -> Vec<&'static str> {
        t.def().columns.iter().map(|c| c.name).collect()
    }

    #[test]
    fn every_row_struct_names_its_table_columns_in_order() {
        // `type` is a Rust keyword: the field is `r#type`.
        let fix = |v: Vec<&'static str>| -> Vec<String> {
            v.into_iter()
                .map(|s| s.trim_start_matches("r#").to_string())
                .collect()
        };
        let name = |t: Table| fix(names(t));
        assert_eq!(fix(TraceRow::columns()), name(Table::Traces));
        assert_eq!(fix(DeviceRow::columns()), name(Table::Devices));
        assert_eq!(fix(DeviceArgRow::columns()), name(Table::DeviceArgs));
        assert_eq!(fix(TrackRow::columns()), name(Table::Tracks));
        assert_eq!(fix(EventMetadataRow::columns()), name(Table::EventMetadata));
        assert_eq!(fix(MetadataArgRow::columns()), name(Table::MetadataArgs));
        assert_eq!(fix(StatMetadataRow::columns()), name(Table::StatMetadata));
        assert_eq!(fix(CounterRow::columns()), name(Table::Counters));
        assert_eq!(fix(FlowRow::columns()), name(Table::Flows));
        assert_eq!(fix(HloOpRow::columns()), name(Table::HloOps));
        assert_eq!(
            fix(HloInstructionRow::columns()),
            name(Table::HloInstructions)
        );
        assert_eq!(fix(LloProgramRow::columns()), name(Table::LloPrograms));
        assert_eq!(fix(LloRegionRow::columns()), name(Table::LloRegions));
        assert_eq!(
            fix(LloBundleUnitRow::columns()),
            name(Table::LloBundleUnits)
        );
        assert_eq!(
            fix(LloProgramInstructionRow::columns()),
            name(Table::LloProgramInstructions)
        );
        assert_eq!(
            fix(LloAllocationRow::columns()),
            name(Table::LloAllocations)
        );
        assert_eq!(
            fix(LloRegisterLiveRangeRow::columns()),
            name(Table::LloRegisterLiveRanges)
        );
        assert_eq!(
            fix(LloRegisterPressureRow::columns()),
            name(Table::LloRegisterPressure)
        );
        assert_eq!(fix(LloBdiStallRow::columns()), name(Table::LloBdiStalls));
        assert_eq!(
            fix(LloBundleSourceRow::columns()),
            name(Table::LloBundleSources)
        );
        assert_eq!(fix(LloTargetInfoRow::columns()), name(Table::LloTargetInfo));
        assert_eq!(
            fix(LloDumpBundleRow::columns()),
            name(Table::LloDumpBundles)
        );
        assert_eq!(fix(LloDumpOpRow::columns()), name(Table::LloDumpOps));
        assert_eq!(
            fix(LloDumpBundleUnitRow::columns()),
            name(Table::LloDumpBundleUnits)
        );
        assert_eq!(
            fix(LloDumpScheduleRow::columns()),
            name(Table::LloDumpSchedule)
        );
        assert_eq!(
            fix(LloDumpAllocationRow::columns()),
            name(Table::LloDumpAllocations)
        );
        assert_eq!(fix(ProfileNodeRow::columns()), name(Table::ProfileNodes));
        assert_eq!(fix(NodeMetricRow::columns()), name(Table::NodeMetrics));
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
