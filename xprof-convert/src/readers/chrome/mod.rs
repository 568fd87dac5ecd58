//! Chrome Trace Event JSON (PyTorch Kineto, JAX `*.trace.json.gz`,
//! Proton's kernel timeline and intra-kernel traces, Perfetto exports) to
//! the normalized tables.
//!
//! A check that the input is UTF-8 (16 MiB at a time), then two passes
//! over the mapped bytes, never a document tree:
//!
//! 1. `scan.rs` walks the event array once, keeping 40 bytes per event
//!    (where its text is, its track, start and duration), matching `B`/`E`
//!    and `b`/`e` pairs, and reading the `M` (metadata) events that name
//!    processes and threads;
//! 2. `emit.rs` places each track's events in time order and parses each
//!    event's text again for its name and `args`.
//!
//! What maps where (also in `docs/formats.md`):
//!
//! - a process (`pid`) is a device (`devices`), named by its
//!   `process_name`; it is a `gpu` device when its `process_labels` say
//!   `GPU` or it has GPU events (`cat` `kernel`, `gpu_memcpy`,
//!   `gpu_memset`, `gpu_user_annotation`), else `host`;
//! - a thread (`tid`) is a track (`thread`, or `stream` on a GPU); async
//!   events (`b`/`n`/`e`) go to one `async` track per process and name,
//!   counters (`C`) to one `counters` track per process and name;
//! - `X`, matched `B`/`E`, `i`/`I`, matched `b`/`e`, `n` and `C` events
//!   are rows of `events`; `ts`/`dur` are µs, stored exactly in ps from the
//!   earliest timestamp of the file;
//! - `args` are rows of `event_args` (numbers as `int`, `uint` or
//!   `double`, strings as `str`, booleans as `int` 0/1, objects and arrays
//!   as their JSON text); the event's `cat`, `id`, `s`, `bp`, `cname`, and
//!   any other field not mapped to a column, are rows too, under their own
//!   names; an `E`'s args join its `B`'s;
//! - `C` args are `counters` samples, one series per `name/key`;
//! - `s`/`t`/`f` flows are `flows` rows between the slices they bind to;
//! - `args.correlation` fills `correlation_id` and pairs host launches
//!   with device kernels in `flows`;
//! - top-level keys other than `traceEvents` are `device_args` of a
//!   first device named `Trace Metadata` (kind `task_environment`), with
//!   [`ORIGIN_KEY`], where `ts_ps = 0` is on the file's own time axis.

mod emit;
pub mod mosaic_gpu;
mod scan;

pub use emit::{ORIGIN_KEY, TRACE_METADATA_DEVICE};

use std::path::Path;

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::codec::json::{self, JsonError, Utf8Doc};
use crate::conversion::ConvertOptions;
use crate::error::{ConvertError, Result};
use crate::input::InputBytes;
use crate::reader::{LineInfo, PlaneInfo, ProfileReader};

/// The name of the format in errors.
const FORMAT: &str = "Chrome trace JSON";

/// Chrome Trace Event JSON in the reader registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChromeTraceReader;

/// Whether a file name is a Chrome trace's: `*.trace.json[.gz]`
/// (JAX, Kineto's `*.pt.trace.json`), `*.chrome_trace` (Proton).
pub fn is_chrome_trace_name(name: &str) -> bool {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    name.ends_with(".trace.json") || name.ends_with(".chrome_trace")
}

impl ProfileReader for ChromeTraceReader {
    fn name(&self) -> &'static str {
        "chrome_trace"
    }

    fn owns_file_name(&self, file_name: &str) -> bool {
        is_chrome_trace_name(file_name)
    }

    fn file_suffixes(&self) -> &'static [&'static str] {
        // Plain `*.json` traces (Kineto's, exports) are Chrome traces by
        // their content.
        &[
            ".pt.trace.json.gz",
            ".pt.trace.json",
            ".trace.json.gz",
            ".trace.json",
            ".chrome_trace.gz",
            ".chrome_trace",
            ".json.gz",
            ".json",
        ]
    }

    /// A JSON object with a top-level `traceEvents` key (found by reading
    /// the keys in order, their values skipped, so that metadata of any
    /// length before it is passed over), or an object or array with a
    /// `"ph"` in its first 4 KiB (a bare event array, a lone event).
    fn sniff(&self, _path: &Path, head: &[u8]) -> bool {
        let head = head.strip_prefix(json::UTF8_BOM).unwrap_or(head);
        let near = &head[..head.len().min(4096)];
        let has_ph = String::from_utf8_lossy(near).contains("\"ph\"");
        match head.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => has_top_level_trace_events(head) || has_ph,
            Some(b'[') => has_ph,
            _ => false,
        }
    }

    fn convert(
        &self,
        input: &InputBytes,
        options: &ConvertOptions,
        asm: &mut TraceAssembler<'_>,
    ) -> Result<TraceInfo> {
        convert(input, options, asm, Flavor::Generic)
    }

    fn inspect(&self, input: &InputBytes) -> Result<Vec<PlaneInfo>> {
        inspect(input, Flavor::Generic)
    }
}

/// Whether the JSON object `head` starts with has a `traceEvents` key
/// among the top-level keys that `head` holds whole. Values are skipped,
/// not parsed; a value cut by the end of `head` ends the search.
fn has_top_level_trace_events(head: &[u8]) -> bool {
    let mut j = json::Json::new(head);
    if j.begin_object().is_err() {
        return false;
    }
    let mut first = true;
    loop {
        match j.next_key(first) {
            Ok(Some(key)) if key == "traceEvents" => return true,
            Ok(Some(_)) if j.skip().is_ok() => first = false,
            _ => return false,
        }
    }
}

/// Producers whose Chrome traces carry meaning the generic reading does
/// not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Any Chrome trace.
    Generic,
    /// Mosaic GPU's profiler: `pid` is 1 + SM id, `tid` 1 + warpgroup.
    MosaicGpu,
}

/// Pass 1, with the flavour's lane names.
fn scan_as<'a>(
    input: &'a InputBytes,
    options: &ConvertOptions,
    flavor: Flavor,
) -> Result<(Utf8Doc<'a>, scan::Scanned)> {
    let doc = json::document(input, FORMAT)?;
    let mut scanned = scan::scan(input, doc, options).map_err(|e| malformed(&input.path, e))?;
    if flavor == Flavor::MosaicGpu {
        scanned.name_mosaic_gpu_lanes();
    }
    Ok((doc, scanned))
}

/// Converts a Chrome trace read as `flavor`.
pub(crate) fn convert(
    input: &InputBytes,
    options: &ConvertOptions,
    asm: &mut TraceAssembler<'_>,
    flavor: Flavor,
) -> Result<TraceInfo> {
    let (doc, scanned) = scan_as(input, options, flavor)?;
    emit::emit(input, doc, &scanned, asm).map_err(|e| match e {
        emit::EmitError::Json(e) => malformed(&input.path, e),
        emit::EmitError::Convert(e) => e,
    })
}

/// Devices and tracks of a Chrome trace read as `flavor`.
pub(crate) fn inspect(input: &InputBytes, flavor: Flavor) -> Result<Vec<PlaneInfo>> {
    let (_, scanned) = scan_as(input, &ConvertOptions::default(), flavor)?;
    let mut planes = Vec::new();
    for (index, dev) in scanned.devices.iter().enumerate() {
        let lines: Vec<LineInfo> = dev
            .tracks
            .iter()
            .map(|&t| {
                let t = &scanned.tracks[t as usize];
                LineInfo {
                    id: t.line_id,
                    name: t.name.clone(),
                    display_name: t.name.clone(),
                    event_count: t.events.len() as u64,
                }
            })
            .collect();
        planes.push(PlaneInfo {
            id: dev.pid.as_int().unwrap_or(index as i64),
            name: dev.display_name(),
            total_events: lines.iter().map(|l| l.event_count).sum(),
            lines,
            event_metadata: 0,
            stat_names: Vec::new(),
            plane_stats: 0,
        });
    }
    Ok(planes)
}

fn malformed(path: &Path, e: JsonError) -> ConvertError {
    json::malformed(path, FORMAT, e)
}
