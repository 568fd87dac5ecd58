//! XSpace (`*.xplane.pb`) to the normalized tables.
//!
//! Two passes over the mapped bytes, never a decoded tree:
//!
//! 1. `scan.rs` finds planes, lines and metadata maps, counts events per
//!    line, checks their order and precomputes the self time of the few
//!    events that stay open long. This is needed because a plane's
//!    metadata comes *after* its lines on the wire.
//! 2. Per plane, the metadata is loaded (`meta.rs`) and the lines are
//!    streamed into bounded batches: each event's name, promoted stats,
//!    nesting, containing step/module, flows and counters are resolved as
//!    it is read.
//!
//! Memory is bounded by a batch per table, a plane's metadata, and a few
//! words per line; only a line whose events are out of time order is held
//! whole (to sort it), and flow endpoints (32 bytes each) are kept until
//! the end of the trace to pair them.
//!
//! The programs a `/host:metadata` plane stores are decoded by [`hlo`]
//! (XLA's HLO modules) and [`llo_proto`] (TPU LLO programs). The children
//! import each other and the crate's lower layers, never this module.

mod emit;
pub mod hlo;
mod inspect;
pub mod llo_proto;
pub(crate) mod meta;
mod plane_tables;
pub(crate) mod scan;

use std::path::Path;

pub use inspect::inspect;

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::conversion::{ConvertOptions, Summary, TraceSource};
use crate::error::Result;
use crate::input::InputBytes;
use crate::reader::{PlaneInfo, ProfileReader};
use crate::sink::TableSink;

/// The XSpace format in the reader registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct XSpaceReader;

/// Whether a file name looks like an XSpace file.
pub fn is_xspace_name(name: &str) -> bool {
    name.ends_with(".xplane.pb") || name.ends_with(".xplane.pb.gz")
}

impl ProfileReader for XSpaceReader {
    fn name(&self) -> &'static str {
        "xspace"
    }

    fn owns_file_name(&self, file_name: &str) -> bool {
        is_xspace_name(file_name)
    }

    fn file_suffixes(&self) -> &'static [&'static str] {
        // `*.pb` files are XSpace by their content.
        &[".xplane.pb.gz", ".xplane.pb", ".pb.gz", ".pb"]
    }

    fn sniff(&self, _path: &Path, head: &[u8]) -> bool {
        // An XSpace starts with a plane (field 1) or, for an empty
        // profile, errors/warnings/hostnames (fields 2-4), all
        // length-delimited; an empty file is an empty XSpace.
        matches!(head.first(), None | Some(0x0a | 0x12 | 0x1a | 0x22))
    }

    fn convert(
        &self,
        input: &InputBytes,
        options: &ConvertOptions,
        asm: &mut TraceAssembler<'_>,
    ) -> Result<TraceInfo> {
        let release = |start: u64, end: u64| input.release(start as usize, end as usize);
        emit::Decoder::new(input, &input.path, options, Some(&release)).run(asm)
    }

    fn inspect(&self, input: &InputBytes) -> Result<Vec<PlaneInfo>> {
        inspect(input, &input.path)
    }
}

/// Converts the XSpace in `bytes` into the tables, batch by batch.
///
/// ```
/// use xprof_convert::reader::{ConvertOptions, TraceSource};
/// use xprof_convert::sink::MemorySink;
/// use xprof_convert::xspace::convert;
/// use xprof_format::Table;
///
/// let bytes = std::fs::read("../examples/data/jax_cpu_mlp.xplane.pb").unwrap();
/// let src = TraceSource { trace_id: 0, path: "jax_cpu_mlp.xplane.pb".into(), run: None, host: "cpu".into() };
/// let mut sink = MemorySink::default();
/// let summary = convert(&bytes, &src, &ConvertOptions::default(), &mut sink).unwrap();
/// assert!(summary.events > 0);
/// assert_eq!(sink.rows(Table::Events) as u64, summary.events);
/// ```
///
/// (`tests/it/xspace_derived.rs` converts XSpaces written event by event.)
pub fn convert(
    bytes: &[u8],
    source: &TraceSource,
    options: &ConvertOptions,
    sink: &mut dyn TableSink,
) -> Result<Summary> {
    let mut asm = TraceAssembler::new(source, "xspace", options, sink);
    let info = emit::Decoder::new(bytes, &source.path, options, None).run(&mut asm)?;
    asm.finish(info)
}
