//! Errors of `xprof-format`.

use std::path::PathBuf;

/// What went wrong writing or reading the normalized tables.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// An I/O error on a path.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Arrow refused a batch.
    #[error("{table}: {source}")]
    Arrow {
        /// The table being built.
        table: &'static str,
        /// The cause.
        source: arrow::error::ArrowError,
    },
    /// The Parquet writer or reader failed.
    #[error("{path}: {source}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: parquet::errors::ParquetError,
    },
    /// A dataset file of another schema version.
    #[error("{path}: schema version {found}, this build reads {expected}")]
    SchemaVersion {
        /// The file.
        path: PathBuf,
        /// Version in the file.
        found: String,
        /// Version this build writes.
        expected: i32,
    },
    /// A dataset folder whose layout does not fit the operation (a
    /// warehouse partitioned otherwise, a run converted twice).
    #[error("{path}: {why}")]
    Layout {
        /// The dataset folder (or the file that does not fit).
        path: PathBuf,
        /// What does not fit, and what to do.
        why: String,
    },
}

/// Shorthand.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;
