//! The [`ProfileReader`] trait every input format implements, and what
//! its methods take and give.
//!
//! A reader turns an input's bytes into calls on a
//! [`TraceAssembler`]; nothing after the
//! assembler knows which format the rows came from. Adding a format is one
//! module under [`readers`](crate::readers) implementing [`ProfileReader`]
//! and one line in the registry ([`READERS`](crate::registry::READERS)).
//!
//! A leaf of the reader layer: it names no reader. The readers import it;
//! the registry, above them, lists them.

use std::path::Path;

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::error::Result;
use crate::input::InputBytes;

pub use crate::conversion::{ConvertOptions, Progress, Summary, TraceSource};

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

    /// The file-name suffixes of the format, which discovery strips from
    /// a file's name to name its host (`hostA.xplane.pb` is host `hostA`;
    /// [`host_of`](crate::discover::host_of) takes the longest that
    /// matches). They may be wider than [`owns_file_name`](Self::owns_file_name):
    /// a `*.pb` file is found by its content, not its name, yet `.pb` is
    /// stripped. None by default: the host is the whole file name.
    fn file_suffixes(&self) -> &'static [&'static str] {
        &[]
    }

    /// The other files of the trace `path` is read into, where a trace is
    /// several files (an LLO dump's files of one compile): discovery keeps
    /// one file per trace, and [`convert`](Self::convert) reads these with
    /// it. None by default: a file is a trace.
    fn companions(&self, _path: &Path) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// The host name of a trace read from a file named `file_name`, where
    /// it is not the file name less a [suffix](Self::file_suffixes) (an
    /// LLO dump's kernel, named by its HLO op). None by default.
    fn host_name(&self, _file_name: &str) -> Option<String> {
        None
    }

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

impl std::fmt::Debug for dyn ProfileReader {
    /// A reader shows as its format's name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
