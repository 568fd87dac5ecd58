//! Errors of `xprof-convert`.

use std::path::PathBuf;

/// What went wrong converting an input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// The input could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The input.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not a valid file of the detected format.
    #[error("{path}: invalid {format} at byte {offset}: {what}")]
    Malformed {
        /// The input.
        path: PathBuf,
        /// The format it was read as.
        format: &'static str,
        /// Byte offset of the problem (in the decompressed stream for `.gz`).
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// The input is of no format this build reads.
    #[error("{path}: not a profile this tool reads ({why})")]
    UnknownFormat {
        /// The input.
        path: PathBuf,
        /// Why it was not recognized.
        why: String,
    },
    /// Writing the normalized tables failed.
    #[error(transparent)]
    Format(#[from] xprof_format::FormatError),
    /// The conversion ran past its deadline
    /// ([`ConvertOptions::deadline`](crate::reader::ConvertOptions::deadline)).
    #[error("{path}: the conversion ran past the time limit and was stopped")]
    TimedOut {
        /// The input.
        path: PathBuf,
    },
    /// A table sink refused a batch.
    #[error("{0}")]
    Sink(String),
}

/// Shorthand.
pub type Result<T, E = ConvertError> = std::result::Result<T, E>;

/// The [`ConvertError::Io`] of an I/O failure on `path`, for `map_err`.
pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ConvertError + '_ {
    move |source| ConvertError::Io {
        path: path.to_path_buf(),
        source,
    }
}
