//! A Parquet column-chunk writer for `Dictionary(Int32, Utf8)` columns
//! that keeps the arrays' dictionary indices.
//!
//! arrow-rs' `ArrowWriter` dictionary-encodes a `DictionaryArray` by
//! hashing and comparing the string of every *row* again, although the
//! converters interned each string once already (`benches/README.md`,
//! target 3: a third of `events`' Parquet encoding). This writer merges
//! each batch's (small) dictionary into the chunk's dictionary, one hash
//! per distinct value, and then maps every row's key through a remap
//! array. Rows never have their string hashed or compared; statistics
//! compare a value once per page it appears in.
//!
//! What it writes is what `ArrowWriter` writes for such a column with the
//! same properties: a PLAIN dictionary page, then version 1 data pages
//! (RLE definition levels, `RLE_DICTIONARY` indices) of at most
//! `data_page_row_count_limit` rows, compressed with the column's codec;
//! chunk statistics, a column index and an offset index as the column's
//! [`EnabledStatistics`] asks. Past `dictionary_page_size_limit` bytes of
//! dictionary the rest of the chunk falls back to PLAIN pages, as arrow-rs
//! does. Two differences: min/max are never truncated (they are exact,
//! and say so), and no bloom filter is written (the dataset enables none).

use arrow::array::{Array, DictionaryArray, StringArray};
use arrow::datatypes::Int32Type;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, Type as PhysicalType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ColumnChunkMetaData, ColumnIndexBuilder, OffsetIndexBuilder};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

use crate::hash::FxHashMap;

/// Whether [`DictColumnWriter`] can write a column compressed with
/// `compression` (the codecs it links: none and ZSTD).
pub fn supports(compression: Compression) -> bool {
    matches!(
        compression,
        Compression::UNCOMPRESSED | Compression::ZSTD(_)
    )
}

/// A page's statistics for the column index.
struct PageStats {
    null_count: i64,
    rows: i64,
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
}

/// Writes one column chunk of a `Dictionary(Int32, Utf8)` column.
pub struct DictColumnWriter {
    descr: ColumnDescPtr,
    nullable: bool,
    statistics: EnabledStatistics,
    page_row_limit: usize,
    dictionary_limit: usize,
    compression: Compression,
    compressor: Option<zstd::bulk::Compressor<'static>>,

    /// Chunk dictionary: value -> index.
    ids: FxHashMap<Box<[u8]>, u32>,
    /// The dictionary page, PLAIN encoded (4-byte length, bytes).
    dictionary_page: Vec<u8>,
    /// Where each dictionary value's bytes start in `dictionary_page`.
    value_starts: Vec<u32>,
    /// Past the dictionary size limit: PLAIN pages from here on.
    fallback: bool,
    /// Per batch: batch key -> chunk index (`u32::MAX`: a NULL value).
    remap: Vec<u32>,

    /// Current page: chunk indices of its non-null rows (dictionary mode).
    page_indices: Vec<u32>,
    /// Current page: PLAIN values of its non-null rows (fallback mode).
    page_plain: Vec<u8>,
    /// Current page: definition level per row (nullable columns).
    page_levels: Vec<u8>,
    page_rows: usize,
    page_nulls: usize,
    page_min: Option<Vec<u8>>,
    page_max: Option<Vec<u8>>,
    /// Index -> number of the last page that compared it for min/max.
    seen_in_page: Vec<u32>,
    page_number: u32,

    /// Finished data pages and their statistics.
    pages: Vec<(CompressedPage, PageStats)>,
    encodings: Vec<Encoding>,
    rows: u64,
    nulls: u64,
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for DictColumnWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DictColumnWriter")
            .field("column", &self.descr.path())
            .field("rows", &self.rows)
            .field("dictionary_values", &self.value_starts.len())
            .finish_non_exhaustive()
    }
}

impl DictColumnWriter {
    /// A writer for column `descr` (a BYTE_ARRAY leaf) under `props`.
    pub fn new(descr: ColumnDescPtr, props: &WriterProperties) -> Result<Self> {
        if descr.physical_type() != PhysicalType::BYTE_ARRAY || descr.max_rep_level() != 0 {
            return Err(ParquetError::General(format!(
                "{}: a dictionary column must be a flat BYTE_ARRAY",
                descr.path()
            )));
        }
        let path = descr.path();
        let compression = props.compression(path);
        let compressor = match compression {
            Compression::UNCOMPRESSED => None,
            Compression::ZSTD(level) => Some(
                zstd::bulk::Compressor::new(level.compression_level())
                    .map_err(|e| ParquetError::External(Box::new(e)))?,
            ),
            other => {
                return Err(ParquetError::NYI(format!(
                    "{path}: {other} in the dictionary column writer"
                )));
            }
        };
        Ok(Self {
            nullable: descr.max_def_level() > 0,
            statistics: props.statistics_enabled(path),
            page_row_limit: props.data_page_row_count_limit().max(1),
            dictionary_limit: props.dictionary_page_size_limit(),
            compression,
            compressor,
            descr,
            ids: FxHashMap::default(),
            dictionary_page: Vec::new(),
            value_starts: Vec::new(),
            fallback: false,
            remap: Vec::new(),
            page_indices: Vec::new(),
            page_plain: Vec::new(),
            page_levels: Vec::new(),
            page_rows: 0,
            page_nulls: 0,
            page_min: None,
            page_max: None,
            seen_in_page: Vec::new(),
            page_number: 1,
            pages: Vec::new(),
            encodings: vec![Encoding::RLE],
            rows: 0,
            nulls: 0,
            min: None,
            max: None,
            scratch: Vec::new(),
        })
    }

    /// Appends a batch of the column. Values must be `Utf8`; a NULL key or
    /// a NULL value is a NULL row.
    pub fn write(&mut self, array: &DictionaryArray<Int32Type>) -> Result<()> {
        let values = array
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| {
                ParquetError::General(format!(
                    "{}: dictionary values are {}, not Utf8",
                    self.descr.path(),
                    array.values().data_type()
                ))
            })?;
        if !self.fallback && self.dictionary_page.len() > self.dictionary_limit {
            self.flush_page()?;
            self.fallback = true;
        }
        if self.fallback {
            return self.write_plain(array, values);
        }
        self.merge_dictionary(values);
        let keys = array.keys();
        let no_nulls = keys.null_count() == 0 && values.null_count() == 0;
        let mut start = 0;
        while start < keys.len() {
            let take = (self.page_row_limit - self.page_rows).min(keys.len() - start);
            let end = start + take;
            if no_nulls {
                for &key in &keys.values()[start..end] {
                    let index = self.remap[key as usize];
                    self.push_index(index);
                }
                if self.nullable {
                    self.page_levels.resize(self.page_levels.len() + take, 1);
                }
            } else if self.nullable && keys.null_count() == keys.len() {
                self.page_levels.resize(self.page_levels.len() + take, 0);
                self.page_nulls += take;
            } else {
                for row in start..end {
                    let index = if keys.is_valid(row) {
                        self.remap[keys.values()[row] as usize]
                    } else {
                        u32::MAX
                    };
                    if index == u32::MAX {
                        self.push_null()?;
                    } else {
                        self.push_index(index);
                        if self.nullable {
                            self.page_levels.push(1);
                        }
                    }
                }
            }
            self.page_rows += take;
            self.rows += take as u64;
            if self.page_rows == self.page_row_limit {
                self.flush_page()?;
            }
            start = end;
        }
        Ok(())
    }

    /// Adds the batch's values to the chunk dictionary and fills `remap`.
    fn merge_dictionary(&mut self, values: &StringArray) {
        self.remap.clear();
        for i in 0..values.len() {
            if values.is_null(i) {
                self.remap.push(u32::MAX);
                continue;
            }
            let bytes = values.value(i).as_bytes();
            let index = match self.ids.get(bytes) {
                Some(&index) => index,
                None => {
                    let index = self.value_starts.len() as u32;
                    self.value_starts
                        .push(self.dictionary_page.len() as u32 + 4);
                    self.dictionary_page
                        .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                    self.dictionary_page.extend_from_slice(bytes);
                    self.ids.insert(bytes.into(), index);
                    self.seen_in_page.push(0);
                    index
                }
            };
            self.remap.push(index);
        }
    }

    #[inline(always)]
    fn push_index(&mut self, index: u32) {
        self.page_indices.push(index);
        let seen = &mut self.seen_in_page[index as usize];
        if *seen != self.page_number {
            *seen = self.page_number;
            if self.statistics != EnabledStatistics::None {
                self.update_page_bounds(index);
            }
        }
    }

    fn update_page_bounds(&mut self, index: u32) {
        let value = dictionary_value(&self.dictionary_page, &self.value_starts, index);
        update_bounds(&mut self.page_min, &mut self.page_max, value);
    }

    fn push_null(&mut self) -> Result<()> {
        if !self.nullable {
            return Err(ParquetError::General(format!(
                "{}: NULL in a required column",
                self.descr.path()
            )));
        }
        self.page_levels.push(0);
        self.page_nulls += 1;
        Ok(())
    }

    /// The fallback path: PLAIN values, compared row by row.
    fn write_plain(
        &mut self,
        array: &DictionaryArray<Int32Type>,
        values: &StringArray,
    ) -> Result<()> {
        let keys = array.keys();
        for row in 0..keys.len() {
            let value = keys
                .is_valid(row)
                .then(|| keys.values()[row] as usize)
                .filter(|&k| values.is_valid(k))
                .map(|k| values.value(k).as_bytes());
            match value {
                None => self.push_null()?,
                Some(bytes) => {
                    self.page_plain
                        .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                    self.page_plain.extend_from_slice(bytes);
                    if self.statistics != EnabledStatistics::None {
                        update_bounds(&mut self.page_min, &mut self.page_max, bytes);
                    }
                    if self.nullable {
                        self.page_levels.push(1);
                    }
                }
            }
            self.page_rows += 1;
            self.rows += 1;
            if self.page_rows == self.page_row_limit {
                self.flush_page()?;
            }
        }
        Ok(())
    }

    /// Encodes, compresses and keeps the current page.
    fn flush_page(&mut self) -> Result<()> {
        if self.page_rows == 0 {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(self.page_indices.len() * 2 + self.page_plain.len() + 16);
        if self.nullable {
            self.scratch.clear();
            encode_hybrid(&self.page_levels, 1, &mut self.scratch);
            buf.extend_from_slice(&(self.scratch.len() as u32).to_le_bytes());
            buf.extend_from_slice(&self.scratch);
        }
        let dictionary_len = self.value_starts.len();
        let encoding = if self.fallback || dictionary_len == 0 {
            buf.extend_from_slice(&self.page_plain);
            Encoding::PLAIN
        } else {
            let bit_width = bits_needed(dictionary_len as u32 - 1);
            buf.push(bit_width);
            encode_hybrid(&self.page_indices, bit_width, &mut buf);
            Encoding::RLE_DICTIONARY
        };
        if !self.encodings.contains(&encoding) {
            self.encodings.push(encoding);
        }
        let uncompressed = buf.len();
        let page = Page::DataPage {
            buf: self.compress(buf)?,
            num_values: self.page_rows as u32,
            encoding,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        if let Some(min) = &self.page_min {
            update_bounds(&mut self.min, &mut self.max, min);
        }
        if let Some(max) = &self.page_max {
            update_bounds(&mut self.min, &mut self.max, max);
        }
        let stats = PageStats {
            null_count: self.page_nulls as i64,
            rows: self.page_rows as i64,
            min: self.page_min.take(),
            max: self.page_max.take(),
        };
        self.pages
            .push((CompressedPage::new(page, uncompressed), stats));
        self.nulls += self.page_nulls as u64;
        self.page_indices.clear();
        self.page_plain.clear();
        self.page_levels.clear();
        self.page_rows = 0;
        self.page_nulls = 0;
        self.page_number = self.page_number.wrapping_add(1).max(1);
        if self.page_number == 1 {
            // Wrapped around: forget every stamp so none matches by chance.
            self.seen_in_page.fill(0);
        }
        Ok(())
    }

    fn compress(&mut self, buf: Vec<u8>) -> Result<Bytes> {
        match &mut self.compressor {
            None => Ok(buf.into()),
            Some(c) => c
                .compress(&buf)
                .map(Bytes::from)
                .map_err(|e| ParquetError::External(Box::new(e))),
        }
    }

    /// Finishes the chunk: its bytes (dictionary page first, offsets from
    /// 0) and what `SerializedRowGroupWriter::append_column` needs.
    pub fn close(mut self) -> Result<(Bytes, ColumnCloseResult)> {
        self.flush_page()?;
        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let mut uncompressed_total = 0u64;
        let mut dictionary_offset = None;
        if self.encodings.contains(&Encoding::RLE_DICTIONARY) {
            let dictionary = std::mem::take(&mut self.dictionary_page);
            let uncompressed = dictionary.len();
            let page = Page::DictionaryPage {
                buf: self.compress(dictionary)?,
                num_values: self.value_starts.len() as u32,
                encoding: Encoding::PLAIN,
                is_sorted: false,
            };
            let spec = writer.write_page(CompressedPage::new(page, uncompressed))?;
            uncompressed_total += spec.uncompressed_size as u64;
            dictionary_offset = Some(spec.offset as i64);
            if !self.encodings.contains(&Encoding::PLAIN) {
                self.encodings.push(Encoding::PLAIN);
            }
        }
        let mut offsets = OffsetIndexBuilder::new();
        let mut column_index = ColumnIndexBuilder::new(PhysicalType::BYTE_ARRAY);
        let mut data_offset = None;
        for (page, stats) in std::mem::take(&mut self.pages) {
            let spec = writer.write_page(page)?;
            uncompressed_total += spec.uncompressed_size as u64;
            data_offset.get_or_insert(spec.offset as i64);
            offsets.append_offset_and_size(spec.offset as i64, spec.bytes_written as i32);
            offsets.append_row_count(stats.rows);
            column_index.append(
                stats.min.is_none(),
                stats.min.unwrap_or_default(),
                stats.max.unwrap_or_default(),
                stats.null_count,
            );
        }
        writer.close()?;
        let data_offset = data_offset.ok_or_else(|| {
            ParquetError::General(format!(
                "{}: a column chunk without rows",
                self.descr.path()
            ))
        })?;
        let bytes_written = sink.bytes_written() as u64;
        let mut metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(self.compression)
            .set_encodings(self.encodings.clone())
            .set_num_values(self.rows as i64)
            .set_total_compressed_size(bytes_written as i64)
            .set_total_uncompressed_size(uncompressed_total as i64)
            .set_data_page_offset(data_offset)
            .set_dictionary_page_offset(dictionary_offset);
        if self.statistics != EnabledStatistics::None {
            metadata = metadata.set_statistics(Statistics::byte_array(
                self.min.take().map(ByteArray::from),
                self.max.take().map(ByteArray::from),
                None,
                Some(self.nulls),
                false,
            ));
        }
        let column_index = if self.statistics == EnabledStatistics::Page {
            Some(column_index.build()?)
        } else {
            None
        };
        let close = ColumnCloseResult {
            bytes_written,
            rows_written: self.rows,
            metadata: metadata.build()?,
            bloom_filter: None,
            column_index,
            offset_index: Some(offsets.build()),
        };
        Ok((Bytes::from(sink.into_inner()?), close))
    }
}

/// Value `index` of a PLAIN dictionary page whose values start at
/// `starts` (each after its 4-byte length).
fn dictionary_value<'a>(page: &'a [u8], starts: &[u32], index: u32) -> &'a [u8] {
    let start = starts[index as usize] as usize;
    let len = u32::from_le_bytes(page[start - 4..start].try_into().expect("4 bytes")) as usize;
    &page[start..start + len]
}

/// Widens `[min, max]` to hold `value` (byte order, as Parquet compares
/// UTF-8 strings).
fn update_bounds(min: &mut Option<Vec<u8>>, max: &mut Option<Vec<u8>>, value: &[u8]) {
    match min {
        Some(m) if m.as_slice() <= value => {}
        _ => *min = Some(value.to_vec()),
    }
    match max {
        Some(m) if m.as_slice() >= value => {}
        _ => *max = Some(value.to_vec()),
    }
}

/// Bits needed to hold `max_value` (0 for 0).
fn bits_needed(max_value: u32) -> u8 {
    (32 - max_value.leading_zeros()) as u8
}

/// Values that can be encoded by [`encode_hybrid`].
trait HybridValue: Copy + PartialEq {
    fn as_u64(self) -> u64;
}

impl HybridValue for u8 {
    fn as_u64(self) -> u64 {
        self as u64
    }
}

impl HybridValue for u32 {
    fn as_u64(self) -> u64 {
        self as u64
    }
}

/// Appends `values` in Parquet's RLE / bit-packed hybrid encoding:
/// runs of 8 or more equal values as RLE runs, the rest bit-packed in
/// groups of 8 (the last group padded with zeros; the page's value count
/// says where it ends).
fn encode_hybrid<T: HybridValue>(values: &[T], bit_width: u8, out: &mut Vec<u8>) {
    /// Groups per bit-packed run, so that its header is one byte.
    const MAX_GROUPS: usize = 63;
    let mut packed_start = 0; // first value not yet written
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let mut run = 1;
        while i + run < values.len() && values[i + run] == v {
            run += 1;
        }
        if run >= 8 {
            // Pending values before the run go out bit-packed; complete
            // their last group of 8 with values of the run.
            let pending = i - packed_start;
            let fill = (8 - pending % 8) % 8;
            if fill > 0 && run - fill < 8 {
                i += run;
                continue;
            }
            let packed_end = i + fill;
            write_bit_packed(
                &values[packed_start..packed_end],
                bit_width,
                MAX_GROUPS,
                out,
            );
            let rle_len = run - fill;
            write_rle(v.as_u64(), rle_len, bit_width, out);
            i += run;
            packed_start = i;
        } else {
            i += run;
        }
    }
    write_bit_packed(&values[packed_start..], bit_width, MAX_GROUPS, out);
}

fn write_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn write_rle(value: u64, len: usize, bit_width: u8, out: &mut Vec<u8>) {
    write_varint((len as u64) << 1, out);
    let bytes = (bit_width as usize).div_ceil(8);
    out.extend_from_slice(&value.to_le_bytes()[..bytes]);
}

/// Bit-packs `values` (padded to a multiple of 8) in runs of at most
/// `max_groups` groups, least significant bits first.
fn write_bit_packed<T: HybridValue>(
    values: &[T],
    bit_width: u8,
    max_groups: usize,
    out: &mut Vec<u8>,
) {
    let width = bit_width as u32;
    for run in values.chunks(max_groups * 8) {
        let groups = run.len().div_ceil(8);
        write_varint(((groups as u64) << 1) | 1, out);
        // `bits` stays below 8 between values and `width` is at most 32,
        // so the accumulator never overflows.
        let mut acc = 0u64;
        let mut bits = 0u32;
        let padding = groups * 8 - run.len();
        let padded = run
            .iter()
            .map(|v| v.as_u64())
            .chain(std::iter::repeat_n(0, padding));
        for value in padded {
            acc |= value << bits;
            bits += width;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        debug_assert_eq!(bits, 0, "8 values of any width fill whole bytes");
    }
}
