//! The dictionary column writer against arrow-rs' reader and against the
//! data itself: every value read back, and every statistic it declares
//! (chunk min/max/null count, each page's column index entry) recomputed
//! from the rows it covers. The inputs are synthetic: batches whose
//! dictionaries differ, repeat values, hold NULL values, and leave values
//! unused, with runs and random keys (RLE and bit-packed indices, widths
//! 0 to 10 bits), through small pages and row groups.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, DictionaryArray, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use parquet::file::page_index::column_index::ColumnIndexMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnPath;
use xprof_format::table_file::TableFileWriter;

/// A small deterministic generator (no `rand` in this workspace).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn schema() -> SchemaRef {
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", dict.clone(), true),
        Field::new("key", dict, false),
    ]))
}

fn vocabulary(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "{}op_{i:04}",
                ["fusion.", "copy.", "", "all-reduce."][i % 4]
            )
        })
        .collect()
}

/// A dictionary column of `rows` rows over a random subset of `words`
/// (`distinct` of them, listed in a shuffled order, one listed twice when
/// there is room), with runs and NULLs when `nullable`.
fn dictionary_column(
    rng: &mut Lcg,
    words: &[String],
    distinct: usize,
    rows: usize,
    nullable: bool,
) -> DictionaryArray<Int32Type> {
    let mut values: Vec<Option<&str>> = (0..distinct)
        .map(|_| Some(words[rng.below(words.len())].as_str()))
        .collect();
    if distinct > 2 {
        values.push(values[0]);
        if nullable {
            values.push(None);
        }
    }
    let mut keys = Vec::with_capacity(rows);
    while keys.len() < rows {
        let key = if nullable && rng.below(10) == 0 {
            None
        } else {
            Some(rng.below(values.len()) as i32)
        };
        let run = if rng.below(4) == 0 {
            1 + rng.below(40)
        } else {
            1
        };
        for _ in 0..run.min(rows - keys.len()) {
            keys.push(key);
        }
    }
    DictionaryArray::try_new(Int32Array::from(keys), Arc::new(StringArray::from(values)))
        .expect("keys in range")
}

fn batches(seed: u64, sizes: &[(usize, usize)]) -> Vec<RecordBatch> {
    let mut rng = Lcg(seed);
    let words = vocabulary(1000);
    let mut id = 0i64;
    sizes
        .iter()
        .map(|&(rows, distinct)| {
            let ids: Int64Array = (id..id + rows as i64).collect();
            id += rows as i64;
            let name = dictionary_column(&mut rng, &words, distinct, rows, true);
            let key = dictionary_column(&mut rng, &words[..16], distinct.min(16), rows, false);
            let columns: Vec<ArrayRef> = vec![Arc::new(ids), Arc::new(name), Arc::new(key)];
            RecordBatch::try_new(schema(), columns).unwrap()
        })
        .collect()
}

/// The logical strings of a dictionary column.
fn strings(array: &ArrayRef) -> Vec<Option<String>> {
    let dict = array
        .as_any()
        .downcast_ref::<DictionaryArray<Int32Type>>()
        .expect("read back as a dictionary");
    let values = dict
        .values()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    (0..dict.len())
        .map(|i| {
            dict.key(i)
                .filter(|&k| values.is_valid(k))
                .map(|k| values.value(k).to_string())
        })
        .collect()
}

fn column_strings(batches: &[RecordBatch], column: usize) -> Vec<Option<String>> {
    batches
        .iter()
        .flat_map(|b| strings(b.column(column)))
        .collect()
}

fn props(
    page_rows: usize,
    group_rows: usize,
) -> parquet::file::properties::WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
        .set_dictionary_enabled(true)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(page_rows)
        .set_max_row_group_row_count(Some(group_rows))
}

fn write_ours(batches: &[RecordBatch], props: WriterProperties) -> Bytes {
    let mut writer = TableFileWriter::try_new(Vec::new(), schema(), props).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    Bytes::from(writer.into_inner().unwrap())
}

fn read(file: &Bytes) -> (Vec<RecordBatch>, Arc<ParquetMetaData>) {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let builder =
        ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options).unwrap();
    let metadata = builder.metadata().clone();
    let batches = builder
        .build()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (batches, metadata)
}

fn bounds<'a>(
    rows: impl Iterator<Item = &'a Option<String>>,
) -> (Option<&'a [u8]>, Option<&'a [u8]>, i64) {
    let mut min: Option<&[u8]> = None;
    let mut max: Option<&[u8]> = None;
    let mut nulls = 0;
    for row in rows {
        match row {
            None => nulls += 1,
            Some(s) => {
                let b = s.as_bytes();
                min = Some(min.map_or(b, |m| m.min(b)));
                max = Some(max.map_or(b, |m| m.max(b)));
            }
        }
    }
    (min, max, nulls)
}

/// Checks every statistic the file declares for dictionary column
/// `column` against `expected` (the column's rows in file order).
fn check_declarations(
    metadata: &ParquetMetaData,
    column: usize,
    expected: &[Option<String>],
    level: EnabledStatistics,
) {
    let mut first_row = 0usize;
    for (g, group) in metadata.row_groups().iter().enumerate() {
        let rows = &expected[first_row..first_row + group.num_rows() as usize];
        let chunk = group.column(column);
        assert_eq!(chunk.num_values(), rows.len() as i64);
        let (min, max, nulls) = bounds(rows.iter());
        match (level, chunk.statistics()) {
            (EnabledStatistics::None, stats) => assert!(stats.is_none(), "{stats:?}"),
            (_, Some(Statistics::ByteArray(stats))) => {
                assert_eq!(stats.min_opt().map(|v| v.data()), min, "row group {g} min");
                assert_eq!(stats.max_opt().map(|v| v.data()), max, "row group {g} max");
                assert_eq!(
                    stats.null_count_opt(),
                    Some(nulls as u64),
                    "row group {g} nulls"
                );
                assert!(stats.min_is_exact() || min.is_none());
            }
            (_, other) => panic!("row group {g}: statistics {other:?}"),
        }
        let locations = &metadata.offset_index().expect("offset index")[g][column].page_locations;
        let index = &metadata.column_index().expect("page index read")[g][column];
        match (level, index) {
            (EnabledStatistics::Page, ColumnIndexMetaData::BYTE_ARRAY(index)) => {
                assert_eq!(index.num_pages() as usize, locations.len());
                for (p, location) in locations.iter().enumerate() {
                    let start = location.first_row_index as usize;
                    let end = locations
                        .get(p + 1)
                        .map_or(rows.len(), |next| next.first_row_index as usize);
                    let (min, max, nulls) = bounds(rows[start..end].iter());
                    assert_eq!(index.min_value(p), min, "row group {g} page {p} min");
                    assert_eq!(index.max_value(p), max, "row group {g} page {p} max");
                    assert_eq!(
                        index.null_count(p),
                        Some(nulls),
                        "row group {g} page {p} nulls"
                    );
                    assert_eq!(index.is_null_page(p), min.is_none());
                }
            }
            (EnabledStatistics::Page, other) => panic!("column index {other:?}"),
            (_, index) => assert!(matches!(index, ColumnIndexMetaData::NONE), "{index:?}"),
        }
        first_row += rows.len();
    }
    assert_eq!(first_row, expected.len());
}

/// Writes `input` with `props`, reads it back, and checks values and
/// declarations; returns the metadata for further checks.
fn round_trip(input: &[RecordBatch], props: WriterProperties) -> Arc<ParquetMetaData> {
    let stats_level = props.statistics_enabled(&ColumnPath::from("name"));
    let file = write_ours(input, props);
    let (output, metadata) = read(&file);
    for column in [1, 2] {
        let expected = column_strings(input, column);
        assert_eq!(column_strings(&output, column), expected, "column {column}");
        check_declarations(&metadata, column, &expected, stats_level);
    }
    let ids: Vec<i64> = output
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(ids, (0..ids.len() as i64).collect::<Vec<_>>());
    metadata
}

fn encodings(metadata: &ParquetMetaData, column: usize) -> Vec<Encoding> {
    let mut all: Vec<Encoding> = metadata
        .row_groups()
        .iter()
        .flat_map(|g| g.column(column).encodings().collect::<Vec<_>>())
        .collect();
    all.sort_by_key(|e| *e as i32);
    all.dedup();
    all
}

#[test]
fn values_and_statistics_survive_small_pages_and_row_groups() {
    let input = batches(1, &[(500, 300), (37, 3), (1200, 1000), (8, 1), (640, 64)]);
    let metadata = round_trip(&input, props(7, 300).build());
    assert!(encodings(&metadata, 1).contains(&Encoding::RLE_DICTIONARY));
    assert!(metadata.row_groups().len() > 5);
}

#[test]
fn large_pages_and_one_row_group() {
    let input = batches(2, &[(20_000, 900), (20_000, 2), (5_000, 1)]);
    let metadata = round_trip(&input, props(20_000, 1 << 20).build());
    assert_eq!(metadata.row_groups().len(), 1);
    assert_eq!(
        encodings(&metadata, 1),
        vec![Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY]
    );
}

#[test]
fn a_single_value_dictionary_has_zero_bit_indices() {
    let input = batches(3, &[(100, 1), (50, 1)]);
    round_trip(&input, props(64, 1000).build());
}

#[test]
fn past_the_dictionary_limit_pages_fall_back_to_plain() {
    let input = batches(4, &[(400, 200), (400, 200), (400, 200)]);
    let props = props(50, 10_000)
        .set_dictionary_page_size_limit(256)
        .build();
    let metadata = round_trip(&input, props);
    let encodings = encodings(&metadata, 1);
    assert!(
        encodings.contains(&Encoding::RLE_DICTIONARY),
        "{encodings:?}"
    );
    assert!(encodings.contains(&Encoding::PLAIN), "{encodings:?}");
}

#[test]
fn statistics_levels_and_no_compression() {
    let input = batches(5, &[(300, 50), (300, 50)]);
    for level in [EnabledStatistics::None, EnabledStatistics::Chunk] {
        let props = props(40, 250)
            .set_statistics_enabled(level)
            .set_compression(Compression::UNCOMPRESSED)
            .build();
        round_trip(&input, props);
    }
}

#[test]
fn all_null_pages_are_null_pages() {
    let name: DictionaryArray<Int32Type> = DictionaryArray::try_new(
        Int32Array::from(vec![None::<i32>; 30]),
        Arc::new(StringArray::from(Vec::<&str>::new())),
    )
    .unwrap();
    let key: DictionaryArray<Int32Type> = vec!["a"; 30].into_iter().collect();
    let ids: Int64Array = (0..30).collect();
    let batch =
        RecordBatch::try_new(schema(), vec![Arc::new(ids), Arc::new(name), Arc::new(key)]).unwrap();
    round_trip(&[batch], props(10, 1000).build());
}

/// The same batches through arrow-rs' own writer read back the same, and
/// ours is not larger than a few percent more.
#[test]
fn reads_back_like_arrow_writer_output() {
    let input = batches(6, &[(20_000, 500), (20_000, 500), (7_000, 40)]);
    let props = props(20_000, 1 << 20).build();
    let ours = write_ours(&input, props.clone());
    let mut theirs = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut theirs, schema(), Some(props)).unwrap();
    for b in &input {
        writer.write(b).unwrap();
    }
    writer.close().unwrap();
    let (a, _) = read(&ours);
    let (b, _) = read(&Bytes::from(theirs.clone()));
    for column in [1, 2] {
        assert_eq!(column_strings(&a, column), column_strings(&b, column));
    }
    assert!(
        ours.len() as f64 <= theirs.len() as f64 * 1.05,
        "{} bytes vs arrow-rs {}",
        ours.len(),
        theirs.len()
    );
}

#[test]
fn a_batch_of_another_schema_is_refused() {
    let mut writer = TableFileWriter::try_new(Vec::new(), schema(), props(10, 10).build()).unwrap();
    let other = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(vec![1]))],
    )
    .unwrap();
    assert!(writer.write(&other).is_err());
}

/// A write that fails part-way (a NULL dictionary value in the required
/// `key` column, which `RecordBatch` validation does not see) spends the
/// writer: no later write or close can finish a file that lacks rows.
#[test]
fn after_a_failed_write_nothing_more_is_written() {
    let mut writer =
        TableFileWriter::try_new(Vec::new(), schema(), props(10, 100).build()).unwrap();
    let good = batches(7, &[(30, 5)]);
    writer.write(&good[0]).unwrap();
    let key: DictionaryArray<Int32Type> = DictionaryArray::try_new(
        Int32Array::from(vec![0, 1]),
        Arc::new(StringArray::from(vec![Some("a"), None])),
    )
    .unwrap();
    let name: DictionaryArray<Int32Type> = vec!["x", "y"].into_iter().collect();
    let bad = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![30, 31])),
            Arc::new(name),
            Arc::new(key),
        ],
    )
    .unwrap();
    let error = writer.write(&bad).unwrap_err().to_string();
    assert!(error.contains("NULL in a required column"), "{error}");
    assert!(writer.write(&good[0]).is_err());
    assert!(writer.into_inner().is_err());
}

/// A nullable column whose batch holds no NULL (the common case for
/// `events`' names) next to one whose batch is all NULL.
#[test]
fn nullable_columns_without_nulls_and_all_null() {
    let name: DictionaryArray<Int32Type> = ["b", "a", "b", "c"]
        .iter()
        .cycle()
        .take(50)
        .copied()
        .collect();
    let key: DictionaryArray<Int32Type> = vec!["k"; 50].into_iter().collect();
    let ids: Int64Array = (0..50).collect();
    let full = RecordBatch::try_new(
        schema(),
        vec![Arc::new(ids), Arc::new(name), Arc::new(key.clone())],
    )
    .unwrap();
    let empty: DictionaryArray<Int32Type> = DictionaryArray::try_new(
        Int32Array::from(vec![None::<i32>; 50]),
        Arc::new(StringArray::from(vec!["unused"])),
    )
    .unwrap();
    let ids: Int64Array = (50..100).collect();
    let nulls = RecordBatch::try_new(
        schema(),
        vec![Arc::new(ids), Arc::new(empty), Arc::new(key)],
    )
    .unwrap();
    round_trip(&[full, nulls], props(16, 1000).build());
}
