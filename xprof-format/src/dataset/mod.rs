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
//!
//! This file is the layout (table folders, their files, removing a
//! trace's); `partitions.rs` the warehouse's `KEY=VALUE` folders,
//! `traces.rs` the traces a dataset holds, `footers.rs` what a file's
//! footer says (schema version, rows per stat key), and `part_writer.rs`
//! the writer of one part of every table.

mod footers;
mod part_writer;
mod partitions;
mod traces;

use std::fs;
use std::path::{Path, PathBuf};

pub use footers::{check_schema_version, footer_value, rows_by_key};
pub use part_writer::{PartWriter, WriteOptions, part_name, writer_properties};
pub use partitions::{
    PartitionKey, is_partition_value, key_names, partition_keys, partition_path, run_name_date,
    utc_date,
};
pub use traces::{TraceEntry, trace_ids, traces};

use crate::error::{FormatError, Result};
use crate::schema::Table;

/// File extension of dataset files.
pub const EXTENSION: &str = "parquet";

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
