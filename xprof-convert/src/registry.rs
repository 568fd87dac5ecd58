//! The registry of the formats this build reads: the list of readers
//! ([`READERS`]), choosing one by name ([`reader_named`]) or by a file's
//! name and content ([`detect`]), and converting an input with one
//! ([`convert`]).
//!
//! The top of the reader layer: it names every reader in
//! [`readers`](crate::readers); no reader names it.
//!
//! ```
//! use xprof_convert::reader::{ConvertOptions, TraceSource};
//! use xprof_convert::registry;
//! use xprof_convert::sink::MemorySink;
//! let path = std::path::Path::new("../examples/data/jax_cpu_mlp.xplane.pb");
//! let input = xprof_convert::input::open(path).unwrap();
//! let reader = registry::detect(path, &input).unwrap();
//! assert_eq!(reader.name(), "xspace");
//! let source = TraceSource { trace_id: 0, path: path.into(), run: None, host: "cpu".into() };
//! let mut sink = MemorySink::default();
//! let summary = registry::convert(reader, &input, &source, &ConvertOptions::default(), &mut sink).unwrap();
//! assert!(summary.events > 0);
//! ```

use std::path::Path;

use crate::assembler::TraceAssembler;
use crate::conversion::{ConvertOptions, Summary, TraceSource};
use crate::error::{ConvertError, Result};
use crate::input::InputBytes;
use crate::reader::ProfileReader;
use crate::readers::{chrome, llo_dump, proton_tree, xspace};
use crate::sink::TableSink;

/// Every format this build reads, in detection order.
///
/// The JSON formats come first: their sniffing looks past leading blanks,
/// which XSpace's (a first byte of 0x0a, a newline) would take for a plane.
/// Mosaic GPU's traces are Chrome traces of a particular producer, so
/// its reader is asked before the Chrome reader.
pub static READERS: &[&dyn ProfileReader] = &[
    &chrome::mosaic_gpu::MosaicGpuReader,
    &chrome::ChromeTraceReader,
    &proton_tree::ProtonTreeReader,
    &xspace::XSpaceReader,
    &llo_dump::LloDumpReader,
];

/// How many bytes of an input (inflated) detection reads: room for the
/// top-level metadata real Kineto traces write before `traceEvents`
/// (`deviceProperties` of 8 GPUs, `distributedInfo`: 26 KiB in a real
/// PyTorch 2.x trace) many times over.
pub const SNIFF_BYTES: usize = 1 << 20;

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
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if let Some(r) = READERS.iter().find(|r| r.sniff(path, head)) {
        return Ok(*r);
    }
    let why = match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{' | b'[') => {
            "JSON, but neither a Chrome trace (no top-level \"traceEvents\" key in its first \
             MiB, no \"ph\" in its first 4 KiB) nor a Proton tree profile (no \"frame\"); \
             name its format with --input-format if it is one"
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
