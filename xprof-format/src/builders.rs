//! Batch builders converters write rows into.
//!
//! A [`TableBuilder`] holds one Arrow builder per column of a [`Table`]
//! and turns them into a [`RecordBatch`] of that table's schema. Repeated
//! strings go through an [`Interner`]: a converter turns each distinct
//! string into a [`Sym`] once (per plane, per metadata entry) and pushes
//! symbols, so dictionary columns cost an array lookup per row, not a hash.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, ArrowPrimitiveType, BinaryBuilder, BooleanBuilder, DictionaryArray,
    Float64Builder, Int32Array, Int32Builder, Int64Builder, ListBuilder, PrimitiveArray,
    StringArray, StringBuilder, UInt64Builder,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::datatypes::Int32Type;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::hash::FxHasher;
use crate::schema::{ColumnType, Table};

/// Default number of rows in one batch (and one Parquet row group slice).
pub const DEFAULT_BATCH_ROWS: usize = 64 * 1024;

/// An interned string: an index into an [`Interner`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// Append-only string interner.
#[derive(Debug, Default)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>,
    bytes: usize,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The symbol of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&i) = self.index.get(s) {
            return Sym(i);
        }
        let i = u32::try_from(self.strings.len()).expect("fewer than 2^32 distinct strings");
        self.strings.push(s.into());
        self.index.insert(s.into(), i);
        self.bytes += s.len();
        Sym(i)
    }

    /// The string of a symbol.
    pub fn get(&self, sym: Sym) -> &str {
        &self.strings[sym.0 as usize]
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether no string was interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Bytes of the distinct strings (UTF-8, without overhead).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Row validity of a nullable column, materialized at the first NULL:
/// a column without NULLs costs one predictable branch per row.
#[derive(Debug, Default, Clone)]
pub struct Validity {
    /// One flag per row (1 valid, 0 NULL), kept only once a NULL was
    /// pushed; bytes rather than bits so a push is one store.
    flags: Vec<u8>,
    any_null: bool,
}

impl Validity {
    /// Records a valid row.
    #[inline(always)]
    pub fn push_valid(&mut self) {
        if self.any_null {
            self.flags.push(1);
        }
    }

    /// Records a NULL row; `len_before` is the row count before it.
    #[inline]
    pub fn push_null(&mut self, len_before: usize) {
        if !self.any_null {
            self.flags.clear();
            self.flags.resize(len_before, 1);
            self.any_null = true;
        }
        self.flags.push(0);
    }

    /// Whether row `i` is valid.
    #[inline]
    pub fn is_valid(&self, i: usize) -> bool {
        !self.any_null || self.flags[i] != 0
    }

    /// The null buffer of the first `n` rows; the flags of later rows are
    /// kept for the next batch.
    pub fn take_front(&mut self, n: usize) -> Option<NullBuffer> {
        if !self.any_null {
            return None;
        }
        let rest = self.flags.split_off(n.min(self.flags.len()));
        let head = std::mem::replace(&mut self.flags, rest);
        self.any_null = self.flags.contains(&0);
        if !self.any_null {
            self.flags.clear();
        }
        let nulls = NullBuffer::new(byte_bitmap(&head, 0));
        (nulls.null_count() > 0).then_some(nulls)
    }

    /// Drops every flag.
    pub fn clear(&mut self) {
        self.flags.clear();
        self.any_null = false;
    }
}

/// Bit `bit` of every byte of `bytes` as a bitmap (byte `i` to bit `i`,
/// least significant first, as Arrow's validity wants), eight bytes at a
/// time: each byte's bit is masked in place and the eight are gathered
/// into one byte by a multiplication. The products of different bytes
/// land on distinct bit positions, so nothing carries into the result.
pub fn byte_bitmap(bytes: &[u8], bit: u32) -> BooleanBuffer {
    const LOW_BITS: u64 = 0x0101_0101_0101_0101;
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let chunks = bytes.chunks_exact(8);
    let rest = chunks.remainder();
    let mut packed: Vec<u8> = chunks
        .map(|c| {
            let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            (((x >> bit) & LOW_BITS).wrapping_mul(GATHER) >> 56) as u8
        })
        .collect();
    if !rest.is_empty() {
        let last = rest
            .iter()
            .enumerate()
            .fold(0u8, |acc, (i, b)| acc | (((b >> bit) & 1) << i));
        packed.push(last);
    }
    BooleanBuffer::new(packed.into(), 0, bytes.len())
}

/// Moves the first `n` items of `v` out, leaving the rest (with room for
/// `capacity` items) in `v`.
pub fn take_front<T: Copy>(v: &mut Vec<T>, n: usize, capacity: usize) -> Vec<T> {
    let mut rest = Vec::with_capacity(capacity.max(v.len() - n));
    rest.extend_from_slice(&v[n..]);
    v.truncate(n);
    fit(v);
    std::mem::replace(v, rest)
}

/// Gives back the room a finished column does not use. A short batch (a
/// device's last rows) would otherwise keep a whole batch's capacity for
/// as long as the batch lives: 15 MB of events columns per device, so a
/// 40 KB file of 1,000 one-event planes held 10 GB of heap in memory
/// conversion (found by the fuzzer's semantic reader).
fn fit<T>(v: &mut Vec<T>) {
    if v.capacity() > v.len() + v.len() / 4 + 64 {
        v.shrink_to_fit();
    }
}

/// A primitive column kept as a plain vector (and [`Validity`]) until the
/// batch is finished: an append is a `Vec::push`.
#[derive(Debug)]
pub struct PrimCol<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    validity: Validity,
}

impl<T: ArrowPrimitiveType> Default for PrimCol<T> {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl<T: ArrowPrimitiveType> PrimCol<T> {
    /// An empty column with room for `capacity` rows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            values: Vec::with_capacity(capacity),
            validity: Validity::default(),
        }
    }

    /// Appends a value.
    #[inline(always)]
    pub fn push(&mut self, v: T::Native) {
        self.values.push(v);
        self.validity.push_valid();
    }

    /// Appends NULL.
    #[inline(always)]
    pub fn push_null(&mut self) {
        self.validity.push_null(self.values.len());
        self.values.push(T::Native::default());
    }

    /// Appends a value or NULL.
    #[inline(always)]
    pub fn push_opt(&mut self, v: Option<T::Native>) {
        match v {
            Some(v) => self.push(v),
            None => self.push_null(),
        }
    }

    /// The value of row `i` (as pushed; 0 for NULL), to patch it.
    #[inline]
    pub fn value_mut(&mut self, i: usize) -> &mut T::Native {
        &mut self.values[i]
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The first `n` rows as an array; later rows stay.
    pub fn finish_front(&mut self, n: usize, capacity: usize) -> PrimitiveArray<T> {
        let values = take_front(&mut self.values, n, capacity);
        let nulls = self.validity.take_front(n);
        PrimitiveArray::new(values.into(), nulls).with_data_type(T::DATA_TYPE)
    }
}

/// Builds a `Dictionary(Int32, Utf8)` column from symbols.
///
/// Each batch gets its own dictionary holding only the symbols used in it.
#[derive(Debug, Default)]
pub struct DictBuilder {
    keys: Vec<i32>,
    validity: Validity,
    values: Vec<Sym>,
    /// Symbol index -> key + 1 in this batch (0: not yet used).
    remap: Vec<i32>,
}

impl DictBuilder {
    /// Appends a symbol.
    #[inline(always)]
    pub fn push(&mut self, sym: Sym) {
        let i = sym.0 as usize;
        if i >= self.remap.len() {
            self.remap.resize(i + 1, 0);
        }
        let slot = &mut self.remap[i];
        if *slot == 0 {
            self.values.push(sym);
            *slot = self.values.len() as i32;
        }
        self.keys.push(*slot - 1);
        self.validity.push_valid();
    }

    /// Appends a symbol or NULL.
    #[inline(always)]
    pub fn push_opt(&mut self, sym: Option<Sym>) {
        match sym {
            Some(s) => self.push(s),
            None => self.push_null(),
        }
    }

    /// Appends NULL.
    #[inline]
    pub fn push_null(&mut self) {
        self.validity.push_null(self.keys.len());
        self.keys.push(0);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Finishes the batch's column, resolving symbols with `interner`.
    pub fn finish(&mut self, interner: &Interner) -> ArrayRef {
        let n = self.keys.len();
        self.finish_front(n, interner)
    }

    /// Finishes the first `n` rows; later rows start the next batch.
    pub fn finish_front(&mut self, n: usize, interner: &Interner) -> ArrayRef {
        let tail: Vec<Option<Sym>> = (n..self.keys.len())
            .map(|i| {
                self.validity
                    .is_valid(i)
                    .then(|| self.values[self.keys[i] as usize])
            })
            .collect();
        let mut keys = std::mem::replace(&mut self.keys, Vec::with_capacity(n.max(1024)));
        keys.truncate(n);
        fit(&mut keys);
        let nulls = self.validity.take_front(n);
        self.validity.clear();
        let values: StringArray = self.values.iter().map(|s| Some(interner.get(*s))).collect();
        for s in self.values.drain(..) {
            self.remap[s.0 as usize] = 0;
        }
        for s in tail {
            self.push_opt(s);
        }
        let keys = Int32Array::new(keys.into(), nulls);
        Arc::new(
            DictionaryArray::<Int32Type>::try_new(keys, Arc::new(values))
                .expect("keys index the values"),
        )
    }
}

/// One column's builder.
#[derive(Debug)]
#[allow(missing_docs)]
pub enum ColumnBuilder {
    Int32(Int32Builder),
    Int64(Int64Builder),
    UInt64(UInt64Builder),
    Float64(Float64Builder),
    Boolean(BooleanBuilder),
    Utf8(StringBuilder),
    Dict(DictBuilder),
    Binary(BinaryBuilder),
    ListUtf8(ListBuilder<StringBuilder>),
    ListInt64(ListBuilder<Int64Builder>),
}

impl ColumnBuilder {
    fn new(ty: ColumnType, capacity: usize) -> Self {
        match ty {
            ColumnType::Int32 => Self::Int32(Int32Builder::with_capacity(capacity)),
            ColumnType::Int64 => Self::Int64(Int64Builder::with_capacity(capacity)),
            ColumnType::UInt64 => Self::UInt64(UInt64Builder::with_capacity(capacity)),
            ColumnType::Float64 => Self::Float64(Float64Builder::with_capacity(capacity)),
            ColumnType::Boolean => Self::Boolean(BooleanBuilder::with_capacity(capacity)),
            ColumnType::Utf8 => Self::Utf8(StringBuilder::new()),
            ColumnType::DictUtf8 => Self::Dict(DictBuilder::default()),
            ColumnType::Binary => Self::Binary(BinaryBuilder::new()),
            ColumnType::ListUtf8 => Self::ListUtf8(ListBuilder::new(StringBuilder::new())),
            ColumnType::ListInt64 => Self::ListInt64(ListBuilder::new(Int64Builder::new())),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Int32(b) => b.len(),
            Self::Int64(b) => b.len(),
            Self::UInt64(b) => b.len(),
            Self::Float64(b) => b.len(),
            Self::Boolean(b) => b.len(),
            Self::Utf8(b) => b.len(),
            Self::Dict(b) => b.len(),
            Self::Binary(b) => b.len(),
            Self::ListUtf8(b) => b.len(),
            Self::ListInt64(b) => b.len(),
        }
    }

    fn finish(&mut self, interner: &Interner) -> ArrayRef {
        match self {
            Self::Int32(b) => Arc::new(b.finish()),
            Self::Int64(b) => Arc::new(b.finish()),
            Self::UInt64(b) => Arc::new(b.finish()),
            Self::Float64(b) => Arc::new(b.finish()),
            Self::Boolean(b) => Arc::new(b.finish()),
            Self::Utf8(b) => Arc::new(b.finish()),
            Self::Dict(b) => b.finish(interner),
            Self::Binary(b) => Arc::new(b.finish()),
            Self::ListUtf8(b) => Arc::new(b.finish()),
            Self::ListInt64(b) => Arc::new(b.finish()),
        }
    }
}

macro_rules! accessor {
    ($fn:ident, $variant:ident, $ty:ty) => {
        /// The builder of column `col`; panics when the column has another type.
        #[inline]
        pub fn $fn(&mut self, col: usize) -> &mut $ty {
            match &mut self.columns[col] {
                ColumnBuilder::$variant(b) => b,
                other => panic!(
                    "{}.{} is {:?}, not {}",
                    self.table.name(),
                    self.table.def().columns[col].name,
                    std::mem::discriminant(other),
                    stringify!($variant)
                ),
            }
        }
    };
}

/// Rows of one table, column by column.
#[derive(Debug)]
pub struct TableBuilder {
    table: Table,
    columns: Vec<ColumnBuilder>,
}

impl TableBuilder {
    /// An empty builder for `table`.
    pub fn new(table: Table) -> Self {
        Self::with_capacity(table, 1024)
    }

    /// An empty builder for `table` sized for `capacity` rows.
    pub fn with_capacity(table: Table, capacity: usize) -> Self {
        let columns = table
            .def()
            .columns
            .iter()
            .map(|c| ColumnBuilder::new(c.ty, capacity))
            .collect();
        Self { table, columns }
    }

    /// The table this builds.
    pub fn table(&self) -> Table {
        self.table
    }

    /// Index of a column by name; panics when absent (a programming error).
    pub fn col(&self, name: &str) -> usize {
        self.table
            .def()
            .column_index(name)
            .unwrap_or_else(|| panic!("{} has no column {name}", self.table.name()))
    }

    /// Rows pushed so far (the length of the first column).
    pub fn len(&self) -> usize {
        self.columns[0].len()
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The builder of column `col`, whatever its type.
    pub fn column_mut(&mut self, col: usize) -> &mut ColumnBuilder {
        &mut self.columns[col]
    }

    accessor!(i32, Int32, Int32Builder);
    accessor!(i64, Int64, Int64Builder);
    accessor!(u64, UInt64, UInt64Builder);
    accessor!(f64, Float64, Float64Builder);
    accessor!(utf8, Utf8, StringBuilder);
    accessor!(dict, Dict, DictBuilder);
    accessor!(binary, Binary, BinaryBuilder);
    accessor!(list_utf8, ListUtf8, ListBuilder<StringBuilder>);
    accessor!(list_i64, ListInt64, ListBuilder<Int64Builder>);

    /// Appends one stat value to the six value columns starting at
    /// `first` (`value_type`, `int_value`, `uint_value`, `double_value`,
    /// `str_value`, `bytes_value`). `value_type` is interned in `interner`.
    pub fn push_value(&mut self, first: usize, value: &crate::StatValue<'_>, type_sym: Sym) {
        let p = value.parts();
        self.dict(first).push(type_sym);
        self.i64(first + 1).append_option(p.int);
        self.u64(first + 2).append_option(p.uint);
        self.f64(first + 3).append_option(p.double);
        self.utf8(first + 4).append_option(p.str);
        self.binary(first + 5).append_option(p.bytes);
    }

    /// Turns the rows pushed so far into a batch and starts anew.
    pub fn finish(&mut self, interner: &Interner) -> Result<RecordBatch, ArrowError> {
        let columns = self
            .columns
            .iter_mut()
            .map(|c| c.finish(interner))
            .collect();
        RecordBatch::try_new(self.table.schema(), columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};

    /// Every bit of every byte pattern, at every length around the 8-byte
    /// chunks (a wrong gather constant or remainder mixes rows up).
    #[test]
    fn byte_bitmap_takes_one_bit_of_each_byte_in_row_order() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in (0..40).chain([64, 65, 1000]) {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            for bit in 0..8 {
                let got = byte_bitmap(&bytes, bit);
                assert_eq!(got.len(), len);
                let want: Vec<bool> = bytes.iter().map(|b| b >> bit & 1 == 1).collect();
                let got: Vec<bool> = got.iter().collect();
                assert_eq!(got, want, "len {len} bit {bit}");
            }
        }
    }

    #[test]
    fn dict_builder_restarts_its_dictionary_each_batch() {
        let mut interner = Interner::new();
        let a = interner.intern("a");
        let b = interner.intern("b");
        let mut d = DictBuilder::default();
        d.push(b);
        d.push_null();
        d.push(b);
        let arr = d.finish(&interner);
        let dict = arr.as_dictionary::<Int32Type>();
        assert_eq!(dict.values().len(), 1);
        assert!(dict.is_null(1));
        assert_eq!(dict.keys().value(2), 0);
        d.push(a);
        let arr = d.finish(&interner);
        let dict = arr.as_dictionary::<Int32Type>();
        assert_eq!(dict.values().as_string::<i32>().value(0), "a");
        assert_eq!(dict.null_count(), 0);
    }

    #[test]
    fn table_builder_makes_a_batch_of_the_table_schema() {
        let interner = Interner::new();
        let mut t = TableBuilder::new(Table::StatMetadata);
        let (trace, dev, id, name, desc) = (
            t.col("trace_id"),
            t.col("device_id"),
            t.col("stat_metadata_id"),
            t.col("name"),
            t.col("description"),
        );
        t.i32(trace).append_value(0);
        t.i32(dev).append_value(1);
        t.i64(id).append_value(7);
        t.utf8(name).append_value("flops");
        t.utf8(desc).append_null();
        let batch = t.finish(&interner).unwrap();
        assert_eq!(batch.num_rows(), 1);
        assert_eq!(batch.schema(), Table::StatMetadata.schema());
        assert!(t.is_empty());
    }

    #[test]
    fn unequal_columns_are_an_error_not_a_bad_batch() {
        let interner = Interner::new();
        let mut t = TableBuilder::new(Table::StatMetadata);
        t.i32(0).append_value(0);
        assert!(t.finish(&interner).is_err());
    }
}
