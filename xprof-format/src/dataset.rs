//! The Parquet dataset layout: one folder per table, one file per
//! converted part, written atomically.
//!
//! ```text
//! DIR/traces/<part>.parquet
//! DIR/events/<part>.parquet
//! ...
//! ```
//!
//! A warehouse is the same layout partitioned hive-style by some of
//! [`PartitionKey`]: every table's files one folder level per key below
//! the table's folder, the same keys in the same order everywhere.
//!
//! ```text
//! DIR/events/run=<run>/host=<host>/<part>.parquet
//! ```
//!
//! Each file is first written as `DIR/<table>/.<part>.parquet.tmp` and
//! renamed when every table of the part is complete, so an interrupted or
//! failed conversion leaves no file a reader would pick up. Converting
//! another trace into the same folder adds files and rewrites none.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::{KeyValue, SortingColumn};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::error::{FormatError, Result};
use crate::schema::{ColumnType, SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE_KEY, Table};
use crate::table_file::TableFileWriter;
use crate::value_rows::{self, ValueRows};

/// File extension of dataset files.
pub const EXTENSION: &str = "parquet";

/// Options of the Parquet writer.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// ZSTD level (1 is the fastest; measured in `benches/`).
    pub zstd_level: i32,
    /// Maximum rows per row group.
    pub max_row_group_rows: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            zstd_level: 1,
            max_row_group_rows: 1024 * 1024,
        }
    }
}

/// Writer properties for one table: ZSTD, dictionaries, page statistics
/// and page index, the declared sort order and the schema version.
pub fn writer_properties(table: Table, options: &WriteOptions) -> WriterProperties {
    let def = table.def();
    let sorting: Vec<SortingColumn> = def
        .sort_by
        .iter()
        .map(|c| SortingColumn {
            column_idx: def.column_index(c).expect("sort column exists") as i32,
            descending: false,
            nulls_first: false,
        })
        .collect();
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(options.zstd_level).unwrap_or_default(),
        ))
        .set_dictionary_enabled(true)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(options.max_row_group_rows))
        .set_sorting_columns(Some(sorting))
        .set_key_value_metadata(Some(vec![
            KeyValue::new(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string()),
            KeyValue::new(TABLE_KEY.to_string(), def.name.to_string()),
        ]));
    // Dictionaries pay for names; for ids, times and values they only
    // cost memory (up to a dictionary page per column before falling
    // back) and time. Sorted or clustered 64-bit integers take delta
    // encoding; 32-bit ones are plain (below). The stat values of the
    // `*_args` tables interleave unrelated stats, where deltas look
    // random: plain values let ZSTD find the repeats (event_args of the
    // 102 MiB profile: 14.8 MiB delta, 6.6 MiB plain).
    for c in def.columns {
        let path = parquet::schema::types::ColumnPath::from(c.name);
        match c.ty {
            ColumnType::Int64 | ColumnType::UInt64 | ColumnType::Float64
                if c.name.ends_with("_value") =>
            {
                builder = builder
                    .set_column_dictionary_enabled(path.clone(), false)
                    .set_column_encoding(path, Encoding::PLAIN);
            }
            // 32-bit ids, depths and counts: plain values, which ZSTD
            // packs as small as a dictionary or deltas would (constant
            // `trace_id`, sorted `track_id`, small `depth`) at a fraction
            // of the cost: arrow-rs' delta encoder and dictionary hashing
            // took 10-19 ms per column per 0.8 M `events` rows, plain
            // 6-7 ms (`XPROF_SQL_BENCH_COLUMNS=1 cargo bench --bench
            // convert`, benches/README.md).
            ColumnType::Int32 => {
                builder = builder
                    .set_column_dictionary_enabled(path.clone(), false)
                    .set_column_encoding(path, Encoding::PLAIN);
            }
            ColumnType::Int64 | ColumnType::UInt64 => {
                builder = builder
                    .set_column_dictionary_enabled(path.clone(), false)
                    .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
            }
            ColumnType::Float64 | ColumnType::Binary => {
                builder = builder.set_column_dictionary_enabled(path, false);
            }
            // The `*_args` tables interleave every stat of every event, so
            // the min/max of `key`, `value_type` and `str_value` over a page
            // span nearly all names and prune nothing, while computing them
            // compares every value's string (a third of `event_args`'
            // dictionary cost: benches/README.md, target 3). No statistics
            // are written for them rather than useless ones.
            ColumnType::DictUtf8 if def.name.ends_with("_args") => {
                builder = builder.set_column_statistics_enabled(path, EnabledStatistics::None);
            }
            _ => {}
        }
    }
    builder.build()
}

/// The folder of `table` in a dataset.
pub fn table_dir(dataset: &Path, table: Table) -> PathBuf {
    dataset.join(table.name())
}

/// Whether `dir` looks like a dataset written by [`PartWriter`].
pub fn is_dataset(dir: &Path) -> bool {
    table_dir(dir, Table::Traces).is_dir() && table_dir(dir, Table::Events).is_dir()
}

/// The Parquet files of `table` in a dataset, sorted by path: the files in
/// the table's folder and, in a warehouse, in its `KEY=VALUE` folders.
/// Names starting with `.` (files being written) are skipped.
pub fn table_files(dataset: &Path, table: Table) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    collect_files(&table_dir(dataset, table), &mut files)?;
    files.sort();
    Ok(files)
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(FormatError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    for entry in entries {
        let entry = entry.map_err(|source| FormatError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if name.contains('=') {
                collect_files(&path, files)?;
            }
        } else if path.extension().is_some_and(|e| e == EXTENSION) {
            files.push(path);
        }
    }
    Ok(())
}

/// A column a warehouse is partitioned by: one folder level
/// `KEY=VALUE` under every table's folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PartitionKey {
    /// The run (`traces.run`): the run folder's name, or the name given.
    Run,
    /// The host (`traces.host`).
    Host,
    /// The UTC day of the capture, `YYYY-MM-DD`: of `traces.start_unix_ns`
    /// where the input records it, else of the run folder's name when it is
    /// a time stamp (`YYYY_MM_DD_HH_MM_SS`, as JAX and TensorFlow name
    /// runs).
    Date,
}

impl PartitionKey {
    /// Every key.
    pub const ALL: [PartitionKey; 3] = [Self::Run, Self::Host, Self::Date];

    /// The key's folder and column name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Host => "host",
            Self::Date => "date",
        }
    }

    /// The key named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Keys written `run,host` (no key twice).
    pub fn parse_list(list: &str) -> std::result::Result<Vec<Self>, String> {
        let mut keys = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let key = Self::from_name(name)
                .ok_or_else(|| format!("unknown partition key {name:?} (use run, host or date)"))?;
            if keys.contains(&key) {
                return Err(format!("partition key {name:?} given twice"));
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err("no partition key (use run, host or date)".into());
        }
        Ok(keys)
    }
}

/// Whether `value` can be a partition folder's value as it is: ASCII
/// letters, digits, `.`, `_` and `-`, not starting with `.`. Other
/// characters would be escaped differently by the engines that read the
/// layout (DataFusion's object store, DuckDB, pyarrow), so they are
/// refused rather than written in a form one of them reads back changed.
pub fn is_partition_value(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('.')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The folder below a table's folder for these keys and values:
/// `run=R/host=H`.
pub fn partition_path(values: &[(PartitionKey, String)]) -> PathBuf {
    values
        .iter()
        .map(|(k, v)| format!("{}={v}", k.name()))
        .collect()
}

/// The keys a dataset is partitioned by (empty for a flat dataset, or a
/// folder without files), read from where its files are. Every file of
/// every table must sit below the same keys in the same order, else the
/// layout is refused, naming a file that does not fit.
pub fn partition_keys(dataset: &Path) -> Result<Vec<PartitionKey>> {
    let mut found: Option<(Vec<PartitionKey>, PathBuf)> = None;
    for t in Table::ALL {
        let dir = table_dir(dataset, t);
        for file in table_files(dataset, t)? {
            let rel = file.strip_prefix(&dir).unwrap_or(&file);
            let mut keys = Vec::new();
            let folders: Vec<_> = rel.iter().collect();
            for folder in &folders[..folders.len().saturating_sub(1)] {
                let folder = folder.to_string_lossy();
                let key = folder
                    .split_once('=')
                    .and_then(|(k, _)| PartitionKey::from_name(k))
                    .ok_or_else(|| FormatError::Layout {
                        path: file.clone(),
                        why: format!("folder {folder:?} is not a partition (run=, host= or date=)"),
                    })?;
                keys.push(key);
            }
            match &found {
                None => found = Some((keys, file)),
                Some((first, first_file)) if *first != keys => {
                    return Err(FormatError::Layout {
                        path: dataset.to_path_buf(),
                        why: format!(
                            "files partitioned differently: {} under [{}], {} under [{}]",
                            first_file.display(),
                            key_names(first),
                            file.display(),
                            key_names(&keys)
                        ),
                    });
                }
                Some(_) => {}
            }
        }
    }
    Ok(found.map(|(k, _)| k).unwrap_or_default())
}

/// `run,host`.
pub fn key_names(keys: &[PartitionKey]) -> String {
    keys.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
}

/// The day `YYYY-MM-DD` (UTC) of a time in ns since the Unix epoch.
pub fn utc_date(unix_ns: i64) -> String {
    let days = unix_ns.div_euclid(86_400 * 1_000_000_000);
    // Days to a civil date (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The day `YYYY-MM-DD` of a run folder named as JAX and TensorFlow name
/// them (`2026_12_02_15_04_05`), or `None`.
pub fn run_name_date(run: &str) -> Option<String> {
    let parts: Vec<&str> = run.split('_').collect();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if parts.len() == 6
        && digits(parts[0], 4)
        && parts[1..].iter().all(|p| digits(p, 2))
        && (1..=12).contains(&parts[1].parse::<u32>().ok()?)
        && (1..=31).contains(&parts[2].parse::<u32>().ok()?)
    {
        Some(format!("{}-{}-{}", parts[0], parts[1], parts[2]))
    } else {
        None
    }
}

/// One trace already in a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEntry {
    /// `traces.trace_id`.
    pub trace_id: i32,
    /// `traces.run`.
    pub run: Option<String>,
    /// `traces.host`.
    pub host: String,
}

/// The traces of a dataset (its `traces` files), by trace id.
pub fn traces(dataset: &Path) -> Result<Vec<TraceEntry>> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int32Type;
    let mut entries = Vec::new();
    for path in table_files(dataset, Table::Traces)? {
        for batch in read_columns(&path, &["trace_id", "run", "host"])? {
            let ids = batch.column(0).as_primitive::<Int32Type>();
            let text = |c: usize, i: usize| -> Option<String> {
                let col = batch.column(c);
                if col.is_null(i) {
                    return None;
                }
                arrow::compute::cast(&col.slice(i, 1), &arrow::datatypes::DataType::Utf8)
                    .ok()
                    .map(|a| a.as_string::<i32>().value(0).to_string())
            };
            for i in 0..batch.num_rows() {
                entries.push(TraceEntry {
                    trace_id: ids.value(i),
                    run: text(1, i),
                    host: text(2, i).unwrap_or_default(),
                });
            }
        }
    }
    entries.sort_by_key(|e| e.trace_id);
    Ok(entries)
}

/// The named columns of a Parquet file, in that order.
fn read_columns(path: &Path, columns: &[&str]) -> Result<Vec<RecordBatch>> {
    let parquet_err = |source| FormatError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(|source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(parquet_err)?;
    let schema = builder.parquet_schema();
    let mut indices = Vec::new();
    for name in columns {
        let idx = (0..schema.num_columns())
            .find(|i| schema.column(*i).name() == *name)
            .ok_or_else(|| FormatError::Layout {
                path: path.to_path_buf(),
                why: format!("no column {name}"),
            })?;
        indices.push(idx);
    }
    let mask = parquet::arrow::ProjectionMask::leaves(schema, indices.iter().copied());
    let reader = builder.with_projection(mask).build().map_err(parquet_err)?;
    let mut batches = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|source| FormatError::Arrow {
            table: "traces",
            source,
        })?;
        // The projection keeps the file's column order; put it in `columns`'.
        let order: Vec<usize> = columns
            .iter()
            .map(|n| batch.schema().index_of(n).expect("projected"))
            .collect();
        batches.push(batch.project(&order).map_err(|source| FormatError::Arrow {
            table: "traces",
            source,
        })?);
    }
    Ok(batches)
}

/// Removes every file of the traces `trace_ids` (parts named
/// `<trace_id:06>-…`) from every table of a dataset, and the partition
/// folders left empty. Returns the files removed.
pub fn remove_traces(dataset: &Path, trace_ids: &[i32]) -> Result<Vec<PathBuf>> {
    let prefixes: Vec<String> = trace_ids.iter().map(|id| format!("{id:06}-")).collect();
    let mut removed = Vec::new();
    for t in Table::ALL {
        for file in table_files(dataset, t)? {
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| prefixes.iter().any(|p| n.starts_with(p))) {
                fs::remove_file(&file).map_err(|source| FormatError::Io {
                    path: file.clone(),
                    source,
                })?;
                // Partition folders left empty go too (never the table's).
                let table = table_dir(dataset, t);
                let mut dir = file.parent();
                while let Some(d) = dir.filter(|d| *d != table && d.starts_with(&table)) {
                    if fs::remove_dir(d).is_err() {
                        break;
                    }
                    dir = d.parent();
                }
                removed.push(file);
            }
        }
    }
    Ok(removed)
}

/// The value of `key` in the key-value metadata of the Parquet file at
/// `path` (`None`: not there), reading only the file's footer.
pub fn footer_value(path: &Path, key: &str) -> Result<Option<String>> {
    use parquet::file::reader::FileReader;
    let file = File::open(path).map_err(|source| FormatError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = parquet::file::reader::SerializedFileReader::new(file).map_err(|source| {
        FormatError::Parquet {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok(reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == key))
        .and_then(|k| k.value.clone()))
}

/// The rows per `key` in the footer of the `event_args` file at `path`
/// ([`crate::value_rows`]); `None` when it has none (written before them)
/// or they do not read.
pub fn rows_by_key(path: &Path) -> Result<Option<ValueRows>> {
    Ok(footer_value(path, value_rows::METADATA_KEY)?.and_then(|text| ValueRows::decode(&text)))
}

/// Checks that a dataset file was written with this build's schema
/// version (its `xprof_sql.schema_version` key-value metadata), reading
/// only the file's footer.
pub fn check_schema_version(path: &Path) -> Result<()> {
    match footer_value(path, SCHEMA_VERSION_KEY)? {
        Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
        other => Err(FormatError::SchemaVersion {
            path: path.to_path_buf(),
            found: other.unwrap_or_else(|| "none (not written by xprof-sql)".into()),
            expected: SCHEMA_VERSION,
        }),
    }
}

/// The trace ids already in a dataset (from its `traces` files).
pub fn trace_ids(dataset: &Path) -> Result<Vec<i32>> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int32Type;
    let mut ids = Vec::new();
    for path in table_files(dataset, Table::Traces)? {
        let file = File::open(&path).map_err(|source| FormatError::Io {
            path: path.clone(),
            source,
        })?;
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|source| FormatError::Parquet {
                path: path.clone(),
                source,
            })?;
        for batch in reader {
            let batch = batch.map_err(|source| FormatError::Arrow {
                table: "traces",
                source,
            })?;
            let col = batch.column(0).as_primitive::<Int32Type>();
            ids.extend(
                (0..col.len())
                    .filter(|i| col.is_valid(*i))
                    .map(|i| col.value(i)),
            );
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// A file-name-safe part name for a trace: `000042-host`.
pub fn part_name(trace_id: i32, host: &str) -> String {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!("{trace_id:06}-{host}")
}

type FileWriter = TableFileWriter<BufWriter<File>>;

/// A table's writer: on the caller's thread, or on its own thread fed
/// through a bounded channel (the big tables, so encoding and compressing
/// them runs beside decoding).
enum Writer {
    Inline(Box<FileWriter>),
    Background {
        tx: std::sync::mpsc::SyncSender<RecordBatch>,
        handle: std::thread::JoinHandle<parquet::errors::Result<()>>,
    },
}

struct OpenFile {
    tmp: PathBuf,
    dest: PathBuf,
    /// `None` once closed.
    writer: Option<Writer>,
}

impl OpenFile {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let failed = match &mut self.writer {
            Some(Writer::Inline(w)) => {
                let r = w.write(batch);
                return r.map_err(|source| self.parquet_err(source));
            }
            Some(Writer::Background { tx, .. }) => tx.send(batch.clone()).is_err(),
            None => true,
        };
        if failed {
            // The writer thread stopped: its error says why.
            self.close()?;
            return Err(self.parquet_err(parquet::errors::ParquetError::General(
                "writer closed".into(),
            )));
        }
        Ok(())
    }

    fn parquet_err(&self, source: parquet::errors::ParquetError) -> FormatError {
        FormatError::Parquet {
            path: self.tmp.clone(),
            source,
        }
    }

    /// Closes the file (a no-op when closed already).
    fn close(&mut self) -> Result<()> {
        let r = match self.writer.take() {
            None => Ok(()),
            Some(Writer::Inline(w)) => (*w).close().map(|_| ()),
            Some(Writer::Background { tx, handle }) => {
                drop(tx);
                handle.join().unwrap_or_else(|_| {
                    Err(parquet::errors::ParquetError::General(
                        "writer thread panicked".into(),
                    ))
                })
            }
        };
        r.map_err(|source| self.parquet_err(source))
    }
}

/// Tables encoded on their own thread.
const BACKGROUND_TABLES: [Table; 2] = [Table::Events, Table::EventArgs];

/// Writes one part (one trace, or one slice of it) of every table.
///
/// Nothing is visible to readers until [`PartWriter::finish`]; dropping
/// the writer before that removes the temporary files.
pub struct PartWriter {
    files: Vec<Option<OpenFile>>,
    dataset: PathBuf,
    part: String,
    options: WriteOptions,
    finished: bool,
}

impl std::fmt::Debug for PartWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartWriter")
            .field("dataset", &self.dataset)
            .field("part", &self.part)
            .finish()
    }
}

impl PartWriter {
    /// Starts part `part` of the dataset in `dataset` (created if needed).
    /// Fails when a file of that part already exists.
    pub fn create(dataset: &Path, part: &str, options: WriteOptions) -> Result<Self> {
        for t in Table::ALL {
            let dest = table_dir(dataset, t).join(format!("{part}.{EXTENSION}"));
            if dest.exists() {
                return Err(FormatError::Io {
                    path: dest,
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "part already written; datasets only grow",
                    ),
                });
            }
        }
        Ok(Self {
            files: Table::ALL.iter().map(|_| None).collect(),
            dataset: dataset.to_path_buf(),
            part: part.to_string(),
            options,
            finished: false,
        })
    }

    fn open(&mut self, table: Table) -> Result<&mut OpenFile> {
        let idx = Table::ALL.iter().position(|t| *t == table).expect("listed");
        if self.files[idx].is_none() {
            let dir = table_dir(&self.dataset, table);
            fs::create_dir_all(&dir).map_err(|source| FormatError::Io {
                path: dir.clone(),
                source,
            })?;
            let tmp = dir.join(format!(".{}.{EXTENSION}.tmp", self.part));
            let dest = dir.join(format!("{}.{EXTENSION}", self.part));
            let file = File::create(&tmp).map_err(|source| FormatError::Io {
                path: tmp.clone(),
                source,
            })?;
            let writer = TableFileWriter::try_new(
                BufWriter::with_capacity(1 << 20, file),
                table.schema(),
                writer_properties(table, &self.options),
            )
            .and_then(|w| match table {
                // Scans that keep a few stat keys are estimated by these.
                Table::EventArgs => w.with_rows_by_value("key"),
                _ => Ok(w),
            })
            .map_err(|source| FormatError::Parquet {
                path: tmp.clone(),
                source,
            })?;
            let writer = if BACKGROUND_TABLES.contains(&table) {
                let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(4);
                let handle = std::thread::Builder::new()
                    .name(format!("parquet-{}", table.name()))
                    .spawn(move || {
                        let mut writer = writer;
                        for batch in rx {
                            writer.write(&batch)?;
                        }
                        writer.close().map(|_| ())
                    })
                    .map_err(|source| FormatError::Io {
                        path: tmp.clone(),
                        source,
                    })?;
                Writer::Background { tx, handle }
            } else {
                Writer::Inline(Box::new(writer))
            };
            self.files[idx] = Some(OpenFile {
                tmp,
                dest,
                writer: Some(writer),
            });
        }
        Ok(self.files[idx].as_mut().expect("just opened"))
    }

    /// Appends a batch of `table`.
    pub fn write(&mut self, table: Table, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.open(table)?.write(batch)
    }

    /// Closes every table's file (an empty file for tables without rows)
    /// and makes them visible. Returns the files written.
    pub fn finish(self) -> Result<Vec<PathBuf>> {
        self.finish_in(Path::new(""))
    }

    /// [`PartWriter::finish`], the files going to `subdir` of each table's
    /// folder (a warehouse's [`partition_path`]), known only now: a
    /// capture's date is read during conversion. Fails, keeping nothing,
    /// when a file of the part is there already.
    pub fn finish_in(mut self, subdir: &Path) -> Result<Vec<PathBuf>> {
        for t in Table::ALL {
            self.open(t)?;
        }
        let mut closed = Vec::new();
        for f in self.files.iter_mut() {
            let f = f.as_mut().expect("all opened");
            // `dest` is `<table folder>/<part>.parquet`.
            let name = f.dest.file_name().expect("a file name").to_os_string();
            let table_folder = f.dest.parent().expect("a table folder");
            f.dest = table_folder.join(subdir).join(name);
            f.close()?;
            closed.push((f.tmp.clone(), f.dest.clone()));
        }
        for (_, dest) in &closed {
            if dest.exists() {
                return Err(FormatError::Io {
                    path: dest.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "part already written; datasets only grow",
                    ),
                });
            }
        }
        let mut written = Vec::new();
        for (tmp, dest) in closed {
            if let Some(dir) = dest.parent() {
                fs::create_dir_all(dir).map_err(|source| FormatError::Io {
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
            fs::rename(&tmp, &dest).map_err(|source| FormatError::Io {
                path: dest.clone(),
                source,
            })?;
            written.push(dest);
        }
        self.finished = true;
        Ok(written)
    }
}

impl Drop for PartWriter {
    fn drop(&mut self) {
        if !self.finished {
            for mut f in self.files.iter_mut().filter_map(Option::take) {
                let _ = f.close();
                let _ = fs::remove_file(&f.tmp);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::{Interner, TableBuilder};
    use parquet::arrow::ArrowWriter;

    fn stat_batch() -> RecordBatch {
        let interner = Interner::new();
        let mut t = TableBuilder::new(Table::StatMetadata);
        t.i32(0).append_value(0);
        t.i32(1).append_value(0);
        t.i64(2).append_value(1);
        t.utf8(3).append_value("x");
        t.utf8(4).append_null();
        t.finish(&interner).unwrap()
    }

    #[test]
    fn finish_writes_every_table_and_keeps_the_version() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PartWriter::create(dir.path(), "p0", WriteOptions::default()).unwrap();
        w.write(Table::StatMetadata, &stat_batch()).unwrap();
        let files = w.finish().unwrap();
        assert_eq!(files.len(), Table::ALL.len());
        assert!(is_dataset(dir.path()));
        let f = File::open(table_dir(dir.path(), Table::StatMetadata).join("p0.parquet")).unwrap();
        let reader = parquet::file::reader::SerializedFileReader::new(f).unwrap();
        use parquet::file::reader::FileReader;
        let kv = reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .unwrap();
        assert!(kv.iter().any(|k| k.key == SCHEMA_VERSION_KEY
            && k.value.as_deref() == Some(SCHEMA_VERSION.to_string().as_str())));
        assert_eq!(reader.metadata().file_metadata().num_rows(), 1);
        // Datasets only grow: the same part cannot be written twice.
        assert!(PartWriter::create(dir.path(), "p0", WriteOptions::default()).is_err());
        assert_eq!(part_name(3, "host a/b"), "000003-host_a_b");
    }

    #[test]
    fn a_file_of_another_schema_version_is_named_with_both_versions() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PartWriter::create(dir.path(), "p0", WriteOptions::default()).unwrap();
        w.write(Table::StatMetadata, &stat_batch()).unwrap();
        w.finish().unwrap();
        let good = table_dir(dir.path(), Table::StatMetadata).join("p0.parquet");
        check_schema_version(&good).unwrap();
        // The same rows written with version 0 in the key-value metadata.
        let old = dir.path().join("old.parquet");
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![KeyValue::new(
                SCHEMA_VERSION_KEY.to_string(),
                "0".to_string(),
            )]))
            .build();
        // A schema without the version in its metadata, so the only
        // version in the file is the one written above.
        let plain = std::sync::Arc::new(arrow::datatypes::Schema::new(
            Table::StatMetadata.schema().fields().clone(),
        ));
        let mut w =
            ArrowWriter::try_new(File::create(&old).unwrap(), plain.clone(), Some(props)).unwrap();
        w.write(&RecordBatch::try_new(plain, stat_batch().columns().to_vec()).unwrap())
            .unwrap();
        w.close().unwrap();
        let e = check_schema_version(&old).unwrap_err().to_string();
        assert!(
            e.contains("old.parquet")
                && e.contains("schema version 0")
                && e.contains(&format!("reads {SCHEMA_VERSION}")),
            "{e}"
        );
    }

    #[test]
    fn dropping_an_unfinished_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = PartWriter::create(dir.path(), "p0", WriteOptions::default()).unwrap();
        w.write(Table::StatMetadata, &stat_batch()).unwrap();
        drop(w);
        let left: Vec<_> = fs::read_dir(table_dir(dir.path(), Table::StatMetadata))
            .unwrap()
            .collect();
        assert!(left.is_empty(), "{left:?}");
        assert!(
            table_files(dir.path(), Table::StatMetadata)
                .unwrap()
                .is_empty()
        );
    }
}
