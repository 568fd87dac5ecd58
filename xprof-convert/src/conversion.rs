//! What one conversion takes and gives: the [`ConvertOptions`] every
//! reader takes (and the [`Progress`] it reports), the [`TraceSource`]
//! the trace is converted as, and the [`Summary`] it ends with.
//!
//! A leaf: the assembler, the [`ProfileReader`](crate::reader::ProfileReader)
//! trait, the readers and the registry all use these types, and they use
//! nothing of the crate.

use std::path::PathBuf;
use std::sync::Arc;

use xprof_format::builders::DEFAULT_BATCH_ROWS;

/// Options every reader takes.
#[derive(Clone)]
pub struct ConvertOptions {
    /// Rows per batch handed to the sink.
    pub batch_rows: usize,
    /// Called now and then with how far the conversion is.
    pub progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
    /// The name of the reader every file is read with, as the user named
    /// it (`--input-format`, `STORED AS`; one of
    /// [`READERS`](crate::registry::READERS)); `None`: each file's format
    /// is detected ([`detect`](crate::registry::detect)). A name, not the
    /// reader, so that these options stay a leaf the readers depend on.
    pub format: Option<&'static str>,
    /// When the conversion must have ended (`--timeout`): past it, it
    /// stops with [`ConvertError::TimedOut`](crate::ConvertError::TimedOut)
    /// (checked every 65,536 events). `None`: no limit.
    pub deadline: Option<std::time::Instant>,
}

/// How far the conversion of one file is, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The file's index among the files of a batch conversion
    /// ([`crate::many`]); 0 for a single file.
    pub file: usize,
    /// Bytes of the (inflated) input converted so far.
    pub bytes_done: u64,
    /// Bytes of the (inflated) input in all; `bytes_done` equals it once
    /// the file is done.
    pub bytes_total: u64,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        Self {
            batch_rows: DEFAULT_BATCH_ROWS,
            progress: None,
            format: None,
            deadline: None,
        }
    }
}

impl std::fmt::Debug for ConvertOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvertOptions")
            .field("batch_rows", &self.batch_rows)
            .field("format", &self.format)
            .finish()
    }
}

/// Identity of the trace being converted.
#[derive(Debug, Clone)]
pub struct TraceSource {
    /// `traces.trace_id` of every row.
    pub trace_id: i32,
    /// The input file (for `traces.source_path` and errors).
    pub path: PathBuf,
    /// Run name.
    pub run: Option<String>,
    /// Host name.
    pub host: String,
}

/// What a conversion produced.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Devices (XSpace planes) converted.
    pub planes: usize,
    /// Lines of the input (XSpace `XLine` messages) converted.
    pub lines: usize,
    /// Events converted.
    pub events: u64,
    /// Stats of events converted (rows of `event_args`).
    pub event_stats: u64,
    /// Things the converter noticed and kept (also in `traces`).
    pub warnings: Vec<String>,
    /// `traces.start_unix_ns`: when the capture started, where the input
    /// records it.
    pub start_unix_ns: Option<i64>,
}
