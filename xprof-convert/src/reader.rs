//! The [`ProfileReader`] trait every input format implements, and the
//! registry of the formats this build reads.
//!
//! A reader turns an input's bytes into calls on a
//! [`TraceAssembler`](crate::assembler::TraceAssembler); nothing after the
//! assembler knows which format the rows came from. Adding a format is one
//! module implementing [`ProfileReader`] and one line in [`READERS`].
//!
//! ```
//! use xprof_convert::reader::{self, TraceSource, ConvertOptions};
//! use xprof_convert::sink::MemorySink;
//! let path = std::path::Path::new("../examples/data/jax_cpu_mlp.xplane.pb");
//! let input = xprof_convert::input::open(path).unwrap();
//! let reader = reader::detect(path, &input).unwrap();
//! assert_eq!(reader.name(), "xspace");
//! let source = TraceSource { trace_id: 0, path: path.into(), run: None, host: "cpu".into() };
//! let mut sink = MemorySink::default();
//! let summary = reader::convert(reader, &input, &source, &ConvertOptions::default(), &mut sink).unwrap();
//! assert!(summary.events > 0);
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use xprof_format::builders::DEFAULT_BATCH_ROWS;

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::error::{ConvertError, Result};
use crate::input::InputBytes;
use crate::sink::TableSink;

/// Options every reader takes.
#[derive(Clone)]
pub struct ConvertOptions {
    /// Rows per batch handed to the sink.
    pub batch_rows: usize,
    /// Called now and then with how far the conversion is.
    pub progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
}

/// How far the conversion of one file is, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The file's index among the files of a batch conversion
    /// ([`crate::batch`]); 0 for a single file.
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
        }
    }
}

impl std::fmt::Debug for ConvertOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvertOptions")
            .field("batch_rows", &self.batch_rows)
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

/// One track of a device, as `inspect` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInfo {
    /// The input's id of the line (`XLine.id`).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its display name (or the name).
    pub display_name: String,
    /// Events on the line.
    pub event_count: u64,
}

/// One device, as `inspect` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaneInfo {
    /// The input's id of the device (`XPlane.id`).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Lines in input order (repeated ids are listed as they are).
    pub lines: Vec<LineInfo>,
    /// Events on all lines.
    pub total_events: u64,
    /// Entries of the event metadata map.
    pub event_metadata: usize,
    /// Stat names defined on the device, in input order.
    pub stat_names: Vec<String>,
    /// Device stats.
    pub plane_stats: usize,
}

/// An input format.
pub trait ProfileReader: Send + Sync {
    /// The format's name: `traces.source_format`, and the name used by
    /// `STORED AS` in SQL (upper-cased).
    fn name(&self) -> &'static str;

    /// Whether a file of a run or log folder with this name belongs to
    /// the format (how `discover` picks the files of a folder).
    fn owns_file_name(&self, file_name: &str) -> bool;

    /// Whether `head` (the first bytes of the decompressed input read from
    /// `path`) looks like this format.
    fn sniff(&self, path: &Path, head: &[u8]) -> bool;

    /// Converts the input: describes it to `asm`, returning what it knows
    /// of the trace as a whole.
    fn convert(
        &self,
        input: &InputBytes,
        options: &ConvertOptions,
        asm: &mut TraceAssembler<'_>,
    ) -> Result<TraceInfo>;

    /// Devices, tracks and event counts, without converting.
    fn inspect(&self, input: &InputBytes) -> Result<Vec<PlaneInfo>>;
}

/// Every format this build reads, in detection order.
///
/// The JSON formats come first: their sniffing looks past leading blanks,
/// which XSpace's (a first byte of 0x0a, a newline) would take for a plane.
/// Mosaic GPU's traces are Chrome traces of a particular producer, so
/// its reader is asked before the Chrome reader.
pub static READERS: &[&dyn ProfileReader] = &[
    &crate::mosaic_gpu::MosaicGpuReader,
    &crate::chrome::ChromeTraceReader,
    &crate::proton_tree::ProtonTreeReader,
    &crate::xspace::XSpaceReader,
    &crate::llo_dump::LloDumpReader,
];

/// The reader named `name` (case-insensitive).
pub fn reader_named(name: &str) -> Option<&'static dyn ProfileReader> {
    READERS
        .iter()
        .copied()
        .find(|r| r.name().eq_ignore_ascii_case(name))
}

/// The reader of `bytes` read from `path`: by file name first, then by
/// content.
pub fn detect(path: &Path, bytes: &[u8]) -> Result<&'static dyn ProfileReader> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if let Some(r) = READERS.iter().find(|r| r.owns_file_name(&name)) {
        return Ok(*r);
    }
    let head = &bytes[..bytes.len().min(4096)];
    if let Some(r) = READERS.iter().find(|r| r.sniff(path, head)) {
        return Ok(*r);
    }
    let why = match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{' | b'[') => {
            "JSON, but neither a Chrome trace (no \"traceEvents\" or \"ph\" in its first 4 KiB) \
             nor a Proton tree profile (no \"frame\")"
                .to_string()
        }
        Some(b) => format!(
            "first byte 0x{b:02x} starts none of: {}",
            READERS
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "the file is empty or blank".to_string(),
    };
    Err(ConvertError::UnknownFormat {
        path: path.to_path_buf(),
        why,
    })
}

/// Converts `input` with `reader` into `sink` as trace `source`.
pub fn convert(
    reader: &dyn ProfileReader,
    input: &InputBytes,
    source: &TraceSource,
    options: &ConvertOptions,
    sink: &mut dyn TableSink,
) -> Result<Summary> {
    let mut asm = TraceAssembler::new(source, reader.name(), options, sink);
    let info = reader.convert(input, options, &mut asm)?;
    asm.finish(info)
}
