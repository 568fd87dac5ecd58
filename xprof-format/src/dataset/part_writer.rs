//! The writer of one part (one trace, or one slice of it) of every table:
//! each file written under a temporary name and renamed when the whole
//! part is complete, the big tables encoded on threads of their own.

use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::{KeyValue, SortingColumn};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::{EXTENSION, table_dir};
use crate::error::{FormatError, Result};
use crate::schema::{ColumnType, SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE_KEY, Table};
use crate::table_file::TableFileWriter;

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
    /// folder (a warehouse's [`partition_path`](super::partition_path)), known only now: a
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
    use crate::dataset::{check_schema_version, is_dataset, table_files};
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
