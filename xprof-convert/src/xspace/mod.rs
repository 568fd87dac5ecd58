//! XSpace (`*.xplane.pb`) to the normalized tables.
//!
//! Two passes over the mapped bytes, never a decoded tree:
//!
//! 1. [`scan`] finds planes, lines and metadata maps, counts events per
//!    line, checks their order and precomputes the self time of the few
//!    events that stay open long. This is needed because a plane's
//!    metadata comes *after* its lines on the wire.
//! 2. Per plane, the metadata is loaded ([`meta`]) and the lines are
//!    streamed into bounded batches: each event's name, promoted stats,
//!    nesting, containing step/module, flows and counters are resolved as
//!    it is read.
//!
//! Memory is bounded by a batch per table, a plane's metadata, and a few
//! words per line; only a line whose events are out of time order is held
//! whole (to sort it), and flow endpoints (32 bytes each) are kept until
//! the end of the trace to pair them.

mod emit;
mod inspect;
pub(crate) mod meta;
pub(crate) mod scan;

use std::path::PathBuf;
use std::sync::Arc;

use xprof_format::builders::DEFAULT_BATCH_ROWS;

pub use inspect::{LineInfo, PlaneInfo, inspect};

use crate::error::{ConvertError, Result};
use crate::pb::PbError;
use crate::sink::TableSink;

/// Options of the XSpace converter.
#[derive(Clone)]
pub struct XSpaceOptions {
    /// Rows per batch handed to the sink.
    pub batch_rows: usize,
    /// Called now and then with (bytes done, bytes in all).
    pub progress: Option<Arc<dyn Fn(u64, u64) + Send + Sync>>,
}

impl Default for XSpaceOptions {
    fn default() -> Self {
        Self {
            batch_rows: DEFAULT_BATCH_ROWS,
            progress: None,
        }
    }
}

impl std::fmt::Debug for XSpaceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XSpaceOptions")
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
    /// Planes converted.
    pub planes: usize,
    /// Lines (XLine messages) converted.
    pub lines: usize,
    /// Events converted.
    pub events: u64,
    /// Stats of events converted (rows of `event_args`).
    pub event_stats: u64,
    /// Things the converter noticed and kept (also in `traces`).
    pub warnings: Vec<String>,
}

pub(crate) fn malformed(path: &std::path::Path, e: PbError) -> ConvertError {
    ConvertError::Malformed {
        path: path.to_path_buf(),
        format: "XSpace",
        offset: e.offset,
        what: e.what.to_string(),
    }
}

/// Converts the XSpace in `bytes` into the tables, batch by batch.
///
/// ```
/// use prost::Message;
/// use xprof_convert::sink::MemorySink;
/// use xprof_convert::xspace::{convert, TraceSource, XSpaceOptions};
/// use xprof_format::{wire::*, Table};
///
/// let mut plane = XPlane { id: 1, name: "/host:CPU".into(), ..Default::default() };
/// plane.event_metadata.insert(1, XEventMetadata { id: 1, name: "step".into(), ..Default::default() });
/// plane.lines.push(XLine {
///     id: 1, name: "main".into(), timestamp_ns: 10,
///     events: vec![XEvent { metadata_id: 1, data: Some(x_event::Data::OffsetPs(5)), duration_ps: 100, stats: vec![] }],
///     ..Default::default()
/// });
/// let bytes = XSpace { planes: vec![plane], ..Default::default() }.encode_to_vec();
/// let src = TraceSource { trace_id: 0, path: "mem.xplane.pb".into(), run: None, host: "mem".into() };
/// let mut sink = MemorySink::default();
/// let summary = convert(&bytes, &src, &XSpaceOptions::default(), &mut sink).unwrap();
/// assert_eq!(summary.events, 1);
/// assert_eq!(sink.rows(Table::Events), 1);
/// ```
pub fn convert(
    bytes: &[u8],
    source: &TraceSource,
    options: &XSpaceOptions,
    sink: &mut dyn TableSink,
) -> Result<Summary> {
    emit::Converter::new(bytes, source, options, sink, None).run()
}

/// Like [`convert`] over an opened file, dropping the file's pages from
/// memory as they are done with, so resident memory stays bounded whatever
/// the file's size.
pub fn convert_input(
    input: &crate::input::InputBytes,
    source: &TraceSource,
    options: &XSpaceOptions,
    sink: &mut dyn TableSink,
) -> Result<Summary> {
    let release = |start: u64, end: u64| input.release(start as usize, end as usize);
    emit::Converter::new(input, source, options, sink, Some(&release)).run()
}
