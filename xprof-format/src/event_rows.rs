//! Typed row builders for the two high-volume tables, `events` and
//! `event_args`.
//!
//! [`TableBuilder`](crate::TableBuilder) serves every table through one
//! builder per column chosen at run time; these serve the tables that hold
//! nearly all rows of a profile with one plain vector per column, so a row
//! costs a handful of `Vec::push`es. The constant `trace_id` is filled when
//! the batch is finished, and the `*_args` value columns are kept as one
//! tagged payload per row and split into their typed columns at the end.
//!
//! ```
//! use xprof_format::event_rows::{EventArgsBuilder, EventRow, EventsBuilder};
//! use xprof_format::{Interner, StatValue, Table};
//! let mut names = Interner::new();
//! let mut events = EventsBuilder::new(7, 1024);
//! let matmul = names.intern("matmul");
//! events.push(&EventRow { event_id: 0, name: matmul, display_name: matmul, dur_ps: 10, ..EventRow::default() });
//! let batch = events.finish(&names).unwrap();
//! assert_eq!(batch.schema(), Table::Events.schema());
//!
//! let mut args = EventArgsBuilder::new(7, 1024);
//! let flops = names.intern("flops");
//! args.push(0, flops, &StatValue::Int(512));
//! assert_eq!(args.finish(&names).unwrap().num_rows(), 1);
//! ```

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray,
    UInt64Array,
};
use arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{Int32Type, Int64Type, UInt64Type};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::StatValue;
use crate::builders::{DictBuilder, Interner, PrimCol, Sym, byte_bitmap, take_front};
use crate::schema::Table;

/// One `events` row (see `docs/schema.md` for each column's meaning).
/// `trace_id` is the builder's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[allow(missing_docs)]
pub struct EventRow {
    pub event_id: i64,
    pub track_id: i32,
    pub metadata_id: i64,
    pub name: Sym,
    pub display_name: Sym,
    pub ts_ps: i64,
    pub dur_ps: i64,
    pub self_ps: i64,
    pub depth: i32,
    pub parent_id: Option<i64>,
    pub occurrences: i64,
    pub device_offset_ps: Option<i64>,
    pub device_duration_ps: Option<i64>,
    pub hlo_op: Option<Sym>,
    pub hlo_module: Option<Sym>,
    pub program_id: Option<u64>,
    pub tf_op: Option<Sym>,
    pub hlo_category: Option<Sym>,
    pub flops: Option<i64>,
    pub bytes_accessed: Option<i64>,
    pub correlation_id: Option<i64>,
    pub group_id: Option<i64>,
    pub step_num: Option<i64>,
    pub step_event_id: Option<i64>,
    pub module_event_id: Option<i64>,
    pub kernel_event_id: Option<i64>,
    pub stat_count: i32,
}

/// Rows of `events`, column by column.
///
/// Rows can be finished a prefix at a time ([`EventsBuilder::finish_front`])
/// so a converter may hold back rows whose `self_ps` is not known yet and
/// patch it later ([`EventsBuilder::self_ps_mut`]).
#[derive(Debug)]
pub struct EventsBuilder {
    trace_id: i32,
    capacity: usize,
    event_id: Vec<i64>,
    track_id: Vec<i32>,
    metadata_id: Vec<i64>,
    name: DictBuilder,
    display_name: DictBuilder,
    ts_ps: Vec<i64>,
    dur_ps: Vec<i64>,
    self_ps: Vec<i64>,
    depth: Vec<i32>,
    parent_id: PrimCol<Int64Type>,
    occurrences: Vec<i64>,
    device_offset_ps: PrimCol<Int64Type>,
    device_duration_ps: PrimCol<Int64Type>,
    hlo_op: DictBuilder,
    hlo_module: DictBuilder,
    program_id: PrimCol<UInt64Type>,
    tf_op: DictBuilder,
    hlo_category: DictBuilder,
    flops: PrimCol<Int64Type>,
    bytes_accessed: PrimCol<Int64Type>,
    correlation_id: PrimCol<Int64Type>,
    group_id: PrimCol<Int64Type>,
    step_num: PrimCol<Int64Type>,
    step_event_id: PrimCol<Int64Type>,
    module_event_id: PrimCol<Int64Type>,
    kernel_event_id: PrimCol<Int64Type>,
    stat_count: Vec<i32>,
}

impl EventsBuilder {
    /// An empty builder of trace `trace_id`'s events, sized for batches of
    /// `capacity` rows.
    pub fn new(trace_id: i32, capacity: usize) -> Self {
        let v = || Vec::with_capacity(capacity);
        let p = || PrimCol::with_capacity(capacity);
        Self {
            trace_id,
            capacity,
            event_id: v(),
            track_id: Vec::with_capacity(capacity),
            metadata_id: v(),
            name: DictBuilder::default(),
            display_name: DictBuilder::default(),
            ts_ps: v(),
            dur_ps: v(),
            self_ps: v(),
            depth: Vec::with_capacity(capacity),
            parent_id: p(),
            occurrences: v(),
            device_offset_ps: p(),
            device_duration_ps: p(),
            hlo_op: DictBuilder::default(),
            hlo_module: DictBuilder::default(),
            program_id: PrimCol::with_capacity(capacity),
            tf_op: DictBuilder::default(),
            hlo_category: DictBuilder::default(),
            flops: p(),
            bytes_accessed: p(),
            correlation_id: p(),
            group_id: p(),
            step_num: p(),
            step_event_id: p(),
            module_event_id: p(),
            kernel_event_id: p(),
            stat_count: Vec::with_capacity(capacity),
        }
    }

    /// Appends a row.
    #[inline]
    pub fn push(&mut self, r: &EventRow) {
        self.event_id.push(r.event_id);
        self.track_id.push(r.track_id);
        self.metadata_id.push(r.metadata_id);
        self.name.push(r.name);
        self.display_name.push(r.display_name);
        self.ts_ps.push(r.ts_ps);
        self.dur_ps.push(r.dur_ps);
        self.self_ps.push(r.self_ps);
        self.depth.push(r.depth);
        self.parent_id.push_opt(r.parent_id);
        self.occurrences.push(r.occurrences);
        self.device_offset_ps.push_opt(r.device_offset_ps);
        self.device_duration_ps.push_opt(r.device_duration_ps);
        self.hlo_op.push_opt(r.hlo_op);
        self.hlo_module.push_opt(r.hlo_module);
        self.program_id.push_opt(r.program_id);
        self.tf_op.push_opt(r.tf_op);
        self.hlo_category.push_opt(r.hlo_category);
        self.flops.push_opt(r.flops);
        self.bytes_accessed.push_opt(r.bytes_accessed);
        self.correlation_id.push_opt(r.correlation_id);
        self.group_id.push_opt(r.group_id);
        self.step_num.push_opt(r.step_num);
        self.step_event_id.push_opt(r.step_event_id);
        self.module_event_id.push_opt(r.module_event_id);
        self.kernel_event_id.push_opt(r.kernel_event_id);
        self.stat_count.push(r.stat_count);
    }

    /// `self_ps` of row `i` (counted from the first unfinished row).
    #[inline]
    pub fn self_ps_mut(&mut self, i: usize) -> &mut i64 {
        &mut self.self_ps[i]
    }

    /// Rows pushed and not yet finished.
    pub fn len(&self) -> usize {
        self.event_id.len()
    }

    /// Whether no unfinished row is held.
    pub fn is_empty(&self) -> bool {
        self.event_id.is_empty()
    }

    /// Every row as a batch.
    pub fn finish(&mut self, interner: &Interner) -> Result<RecordBatch, ArrowError> {
        self.finish_front(self.len(), interner)
    }

    /// The first `n` rows as a batch; later rows stay for the next one.
    pub fn finish_front(
        &mut self,
        n: usize,
        interner: &Interner,
    ) -> Result<RecordBatch, ArrowError> {
        let cap = self.capacity;
        fn i64s(v: &mut Vec<i64>, n: usize, cap: usize) -> ArrayRef {
            Arc::new(Int64Array::from(take_front(v, n, cap)))
        }
        fn i32s(v: &mut Vec<i32>, n: usize, cap: usize) -> ArrayRef {
            Arc::new(Int32Array::from(take_front(v, n, cap)))
        }
        let opt = |c: &mut PrimCol<Int64Type>| -> ArrayRef { Arc::new(c.finish_front(n, cap)) };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![self.trace_id; n])),
            i64s(&mut self.event_id, n, cap),
            i32s(&mut self.track_id, n, cap),
            i64s(&mut self.metadata_id, n, cap),
            self.name.finish_front(n, interner),
            self.display_name.finish_front(n, interner),
            i64s(&mut self.ts_ps, n, cap),
            i64s(&mut self.dur_ps, n, cap),
            i64s(&mut self.self_ps, n, cap),
            i32s(&mut self.depth, n, cap),
            opt(&mut self.parent_id),
            i64s(&mut self.occurrences, n, cap),
            opt(&mut self.device_offset_ps),
            opt(&mut self.device_duration_ps),
            self.hlo_op.finish_front(n, interner),
            self.hlo_module.finish_front(n, interner),
            Arc::new(self.program_id.finish_front(n, cap)),
            self.tf_op.finish_front(n, interner),
            self.hlo_category.finish_front(n, interner),
            opt(&mut self.flops),
            opt(&mut self.bytes_accessed),
            opt(&mut self.correlation_id),
            opt(&mut self.group_id),
            opt(&mut self.step_num),
            opt(&mut self.step_event_id),
            opt(&mut self.module_event_id),
            opt(&mut self.kernel_event_id),
            i32s(&mut self.stat_count, n, cap),
        ];
        RecordBatch::try_new(Table::Events.schema(), columns)
    }
}

/// Value-column flags of one row: which typed column holds a value.
const HAS_INT: u8 = 1;
const HAS_UINT: u8 = 2;
const HAS_DOUBLE: u8 = 4;
const HAS_STR: u8 = 8;
const HAS_BYTES: u8 = 16;

/// The six value columns of an `*_args` table (`value_type`, `int_value`,
/// `uint_value`, `double_value`, `str_value`, `bytes_value`), kept as a
/// tagged payload per row and split into typed columns when finished.
#[derive(Debug)]
pub struct ValueColumns {
    /// Index into [`StatValue::TYPE_NAMES`].
    type_index: Vec<u8>,
    /// `HAS_*` flags.
    flags: Vec<u8>,
    /// The numeric value's bits (int as two's complement, double's bits).
    num: Vec<u64>,
    strs: VarColumn,
    bytes: VarColumn,
}

/// Offsets and bytes of a variable-length column (`str_value`,
/// `bytes_value`); a row without a value takes no bytes.
#[derive(Debug)]
struct VarColumn {
    offsets: Vec<i32>,
    data: Vec<u8>,
}

impl VarColumn {
    fn with_capacity(capacity: usize) -> Self {
        let mut offsets = Vec::with_capacity(capacity + 1);
        offsets.push(0);
        Self {
            offsets,
            data: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, value: Option<&[u8]>) {
        if let Some(v) = value {
            self.data.extend_from_slice(v);
        }
        // Offsets past i32::MAX are prevented by the caller flushing on
        // `payload_bytes`; saturate rather than wrap if one does not.
        self.offsets
            .push(i32::try_from(self.data.len()).unwrap_or(i32::MAX));
    }

    /// Offsets and bytes of every row; starts anew.
    fn finish(&mut self) -> (OffsetBuffer<i32>, arrow::buffer::Buffer) {
        let fresh = Self::with_capacity(self.offsets.capacity().saturating_sub(1));
        let Self { offsets, data } = std::mem::replace(self, fresh);
        (OffsetBuffer::new(offsets.into()), data.into())
    }
}

impl ValueColumns {
    /// Empty columns with room for `capacity` rows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            type_index: Vec::with_capacity(capacity),
            flags: Vec::with_capacity(capacity),
            num: Vec::with_capacity(capacity),
            strs: VarColumn::with_capacity(capacity),
            bytes: VarColumn::with_capacity(capacity),
        }
    }

    /// Appends one value.
    #[inline]
    pub fn push(&mut self, value: &StatValue<'_>) {
        let p = value.parts();
        let mut flags = 0;
        let mut num = 0u64;
        if let Some(v) = p.int {
            flags |= HAS_INT;
            num = v as u64;
        }
        if let Some(v) = p.uint {
            flags |= HAS_UINT;
            num = v;
        }
        if let Some(v) = p.double {
            flags |= HAS_DOUBLE;
            num = v.to_bits();
        }
        if p.str.is_some() {
            flags |= HAS_STR;
        }
        if p.bytes.is_some() {
            flags |= HAS_BYTES;
        }
        self.strs.push(p.str.map(str::as_bytes));
        self.bytes.push(p.bytes);
        self.type_index.push(value.type_index() as u8);
        self.flags.push(flags);
        self.num.push(num);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// Bytes of string and binary values held: finish the batch before
    /// this nears 2 GiB (the 32-bit offsets' limit); a few MiB is typical.
    pub fn payload_bytes(&self) -> usize {
        self.strs.data.len() + self.bytes.data.len()
    }

    /// The six columns of every row; starts anew.
    ///
    /// `int_value`, `uint_value` and `double_value` share one buffer of
    /// value bits: each column's validity says which rows are its own, and
    /// a row's bits under another column's NULL are never read as values.
    pub fn finish(&mut self) -> Result<[ArrayRef; 6], ArrowError> {
        let n = self.len();
        let cap = self.flags.capacity();
        let flags = &self.flags;
        let nulls = |flag: u8| {
            let b = NullBuffer::new(byte_bitmap(flags, flag.trailing_zeros()));
            (b.null_count() > 0).then_some(b)
        };
        let keys = Int32Array::from_iter_values(self.type_index.iter().map(|t| *t as i32));
        let names = Arc::new(StringArray::from_iter_values(StatValue::TYPE_NAMES));
        let value_type: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::try_new(keys, names)?);
        let (int_nulls, uint_nulls, double_nulls, str_nulls, bytes_nulls) = (
            nulls(HAS_INT),
            nulls(HAS_UINT),
            nulls(HAS_DOUBLE),
            nulls(HAS_STR),
            nulls(HAS_BYTES),
        );
        let bits = Buffer::from_vec(take_front(&mut self.num, n, cap));
        let int: ArrayRef = Arc::new(Int64Array::new(
            ScalarBuffer::new(bits.clone(), 0, n),
            int_nulls,
        ));
        let uint: ArrayRef = Arc::new(UInt64Array::new(
            ScalarBuffer::new(bits.clone(), 0, n),
            uint_nulls,
        ));
        let double: ArrayRef = Arc::new(Float64Array::new(
            ScalarBuffer::new(bits, 0, n),
            double_nulls,
        ));
        let (offsets, data) = self.strs.finish();
        let strs: ArrayRef = Arc::new(StringArray::try_new(offsets, data, str_nulls)?);
        let (offsets, data) = self.bytes.finish();
        let bytes: ArrayRef = Arc::new(BinaryArray::try_new(offsets, data, bytes_nulls)?);
        self.type_index.clear();
        self.flags.clear();
        Ok([value_type, int, uint, double, strs, bytes])
    }
}

/// Rows of `event_args`: one per stat an event carries itself.
#[derive(Debug)]
pub struct EventArgsBuilder {
    trace_id: i32,
    capacity: usize,
    event_id: Vec<i64>,
    key: DictBuilder,
    values: ValueColumns,
}

impl EventArgsBuilder {
    /// An empty builder of trace `trace_id`'s event stats, sized for
    /// batches of `capacity` rows.
    pub fn new(trace_id: i32, capacity: usize) -> Self {
        Self {
            trace_id,
            capacity,
            event_id: Vec::with_capacity(capacity),
            key: DictBuilder::default(),
            values: ValueColumns::with_capacity(capacity),
        }
    }

    /// Appends the stat `key` = `value` of event `event_id`.
    #[inline]
    pub fn push(&mut self, event_id: i64, key: Sym, value: &StatValue<'_>) {
        self.event_id.push(event_id);
        self.key.push(key);
        self.values.push(value);
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.event_id.len()
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.event_id.is_empty()
    }

    /// Bytes of string and binary values held (see
    /// [`ValueColumns::payload_bytes`]).
    pub fn payload_bytes(&self) -> usize {
        self.values.payload_bytes()
    }

    /// Every row as a batch; starts anew.
    pub fn finish(&mut self, interner: &Interner) -> Result<RecordBatch, ArrowError> {
        let n = self.len();
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![self.trace_id; n])),
            Arc::new(Int64Array::from(take_front(
                &mut self.event_id,
                n,
                self.capacity,
            ))),
            self.key.finish(interner),
        ];
        columns.extend(self.values.finish()?);
        RecordBatch::try_new(Table::EventArgs.schema(), columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TableBuilder;
    use arrow::array::{Array, AsArray};
    use std::borrow::Cow;

    fn values() -> Vec<StatValue<'static>> {
        vec![
            StatValue::None,
            StatValue::Int(-5),
            StatValue::Uint(u64::MAX),
            StatValue::Double(2.5),
            StatValue::Str(Cow::Borrowed("fusion.1")),
            StatValue::Bytes(b"\x00\xff"),
            StatValue::Ref {
                id: 9,
                name: Some("bf16[8]"),
            },
            StatValue::Ref { id: 10, name: None },
            StatValue::CompressedStr(Cow::Owned("long text".into())),
        ]
    }

    #[test]
    fn event_args_match_the_generic_builder_value_for_value() {
        let mut interner = Interner::new();
        let key = interner.intern("k");
        let type_syms: Vec<Sym> = StatValue::TYPE_NAMES
            .iter()
            .map(|n| interner.intern(n))
            .collect();
        let mut fast = EventArgsBuilder::new(3, 4);
        let mut generic = TableBuilder::new(Table::EventArgs);
        for (i, v) in values().iter().enumerate() {
            fast.push(i as i64, key, v);
            generic.i32(0).append_value(3);
            generic.i64(1).append_value(i as i64);
            generic.dict(2).push(key);
            generic.push_value(3, v, type_syms[v.type_index()]);
        }
        let a = fast.finish(&interner).unwrap();
        let b = generic.finish(&interner).unwrap();
        assert_eq!(a.num_rows(), values().len());
        for c in 0..a.num_columns() {
            let (x, y) = (a.column(c), b.column(c));
            assert_eq!(x.logical_nulls(), y.logical_nulls(), "column {c} nulls");
            // Dictionaries may order their values differently: compare
            // as plain strings.
            let cast =
                |a: &ArrayRef| arrow::compute::cast(a, &arrow::datatypes::DataType::Utf8).unwrap();
            if matches!(x.data_type(), arrow::datatypes::DataType::Dictionary(..)) {
                assert_eq!(&cast(x), &cast(y), "column {c}");
            } else {
                assert_eq!(x, y, "column {c}");
            }
        }
        // The builder is reusable after finishing.
        fast.push(0, key, &StatValue::Str(Cow::Borrowed("again")));
        let again = fast.finish(&interner).unwrap();
        assert_eq!(again.column(7).as_string::<i32>().value(0), "again");
    }

    #[test]
    fn a_prefix_can_be_finished_and_held_rows_patched() {
        let mut interner = Interner::new();
        let (a, b) = (interner.intern("a"), interner.intern("b"));
        let mut e = EventsBuilder::new(1, 2);
        for i in 0..5 {
            e.push(&EventRow {
                event_id: i,
                name: if i % 2 == 0 { a } else { b },
                display_name: a,
                parent_id: (i > 2).then_some(i - 1),
                hlo_op: (i == 4).then_some(b),
                ..EventRow::default()
            });
        }
        let first = e.finish_front(3, &interner).unwrap();
        assert_eq!(first.num_rows(), 3);
        assert_eq!(first.column(10).null_count(), 3, "parent_id of rows 0..3");
        *e.self_ps_mut(1) = 77;
        let rest = e.finish(&interner).unwrap();
        let ids = rest.column(1).as_primitive::<Int64Type>();
        assert_eq!(ids.values(), &[3, 4]);
        assert_eq!(rest.column(8).as_primitive::<Int64Type>().value(1), 77);
        let names =
            arrow::compute::cast(rest.column(4), &arrow::datatypes::DataType::Utf8).unwrap();
        assert_eq!(names.as_string::<i32>().value(0), "b");
        assert_eq!(names.as_string::<i32>().value(1), "a");
        let parents = rest.column(10).as_primitive::<Int64Type>();
        assert_eq!(parents.null_count(), 0);
        assert_eq!(parents.values(), &[2, 3]);
        let ops = rest.column(14);
        assert!(ops.is_null(0) && ops.is_valid(1));
        assert!(
            rest.column(0)
                .as_primitive::<Int32Type>()
                .values()
                .iter()
                .all(|t| *t == 1)
        );
        assert_eq!(rest.schema(), Table::Events.schema());
        assert!(e.is_empty());
    }
}
