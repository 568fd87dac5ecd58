//! The first, cheap pass over an XSpace: where each plane, line and
//! metadata map is, how many events each line has, whether they are in
//! time order, and the self time of the few events that stay open long.
//!
//! It reads tags, lengths and the three time fields of each event, never
//! stats or strings, so it runs near memory speed and keeps only a few
//! words per line.

use std::borrow::Cow;

use xprof_format::hash::FxHashMap;

use crate::assembler::nest::Nester;
use crate::codec::pb::{Cursor, PbError, PbResult, utf8};
use crate::error::ConvertError;

/// The error of an XSpace whose bytes stopped making sense at `e`.
pub(crate) fn malformed(path: &std::path::Path, e: PbError) -> ConvertError {
    ConvertError::Malformed {
        path: path.to_path_buf(),
        format: "XSpace",
        offset: e.offset,
        what: e.what.to_string(),
    }
}

/// An event open for more than this many following events gets its self
/// time computed here, so the second pass can write it at once instead of
/// holding a batch open until the event closes.
pub(crate) const LONG_OPEN_EVENTS: u32 = 4096;

/// A length-delimited field: its bytes and absolute offset.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span<'a> {
    pub bytes: &'a [u8],
    pub offset: u64,
}

impl<'a> Span<'a> {
    pub fn cursor(&self) -> Cursor<'a> {
        Cursor::new(self.bytes, self.offset)
    }
}

/// The top level of an XSpace.
#[derive(Debug, Default)]
pub(crate) struct SpaceScan<'a> {
    pub planes: Vec<Span<'a>>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    pub hostnames: Vec<String>,
}

pub(crate) fn scan_space(bytes: &[u8]) -> PbResult<SpaceScan<'_>> {
    let mut c = Cursor::new(bytes, 0);
    let mut s = SpaceScan::default();
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        match field {
            1 => {
                let (b, offset) = c.len_field(wire)?;
                s.planes.push(Span { bytes: b, offset });
            }
            2..=4 => {
                let (b, _) = c.len_field(wire)?;
                let v = utf8(b).into_owned();
                match field {
                    2 => s.errors.push(v),
                    3 => s.warnings.push(v),
                    _ => s.hostnames.push(v),
                }
            }
            _ => c.skip(wire)?,
        }
    }
    Ok(s)
}

/// The fields of one plane, with its lines pre-scanned.
#[derive(Debug, Default)]
pub(crate) struct PlaneScan<'a> {
    pub id: i64,
    pub name: Cow<'a, str>,
    pub lines: Vec<LineScan<'a>>,
    pub event_metadata: Vec<Span<'a>>,
    pub stat_metadata: Vec<Span<'a>>,
    pub stats: Vec<Span<'a>>,
    pub event_count: u64,
}

/// Bytes read between two calls of the `release` callback while scanning
/// or converting one line: resident input memory stays near this.
pub(crate) const RELEASE_EVERY: u64 = 16 << 20;

/// Called with absolute byte ranges that are done with.
pub(crate) type ReleaseFn<'r> = &'r dyn Fn(u64, u64);

/// Releases the input behind a forward reader, [`RELEASE_EVERY`] bytes at
/// a time.
pub(crate) struct ReleaseBehind<'r> {
    release: Option<ReleaseFn<'r>>,
    done: u64,
}

impl<'r> ReleaseBehind<'r> {
    pub fn new(release: Option<ReleaseFn<'r>>, start: u64) -> Self {
        Self {
            release,
            done: start,
        }
    }

    /// The reader is at `offset`: everything before it is done with.
    #[inline]
    pub fn at(&mut self, offset: u64) {
        if let Some(r) = self.release
            && offset - self.done > RELEASE_EVERY
        {
            r(self.done, offset);
            self.done = offset;
        }
    }
}

pub(crate) fn scan_plane<'a>(
    span: Span<'a>,
    release: Option<ReleaseFn<'_>>,
) -> PbResult<PlaneScan<'a>> {
    let mut c = span.cursor();
    let mut p = PlaneScan::default();
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        match field {
            1 => p.id = c.int64(wire)?,
            2 => p.name = utf8(c.len_field(wire)?.0),
            3..=6 => {
                let (bytes, offset) = c.len_field(wire)?;
                let s = Span { bytes, offset };
                match field {
                    3 => {
                        let line = scan_line(s, release)?;
                        p.event_count += line.event_count as u64;
                        p.lines.push(line);
                    }
                    4 => p.event_metadata.push(s),
                    5 => p.stat_metadata.push(s),
                    _ => p.stats.push(s),
                }
            }
            _ => c.skip(wire)?,
        }
    }
    // Every plane's scan is held until the planes are converted: a file
    // of many small planes (200,000 of one line) held 3 unused slots per
    // vector, a third of its peak memory.
    p.lines.shrink_to_fit();
    p.event_metadata.shrink_to_fit();
    p.stat_metadata.shrink_to_fit();
    p.stats.shrink_to_fit();
    Ok(p)
}

/// The fields of an XEvent that say where it is.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EventHeader<'a> {
    pub metadata_id: i64,
    pub offset_ps: i64,
    pub duration_ps: i64,
    /// `Some` for an aggregated event.
    pub num_occurrences: Option<i64>,
    /// The stats field(s) are read from here by the second pass.
    pub body: Span<'a>,
}

#[inline]
pub(crate) fn event_header(span: Span<'_>) -> PbResult<EventHeader<'_>> {
    let mut c = span.cursor();
    let mut h = EventHeader {
        body: span,
        ..Default::default()
    };
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        match field {
            1 => h.metadata_id = c.int64(wire)?,
            2 => {
                h.offset_ps = c.int64(wire)?;
                h.num_occurrences = None;
            }
            3 => h.duration_ps = c.int64(wire)?,
            5 => h.num_occurrences = Some(c.int64(wire)?),
            _ => c.skip(wire)?,
        }
    }
    Ok(h)
}

/// A line's header fields and what the first pass learned of its events.
#[derive(Debug, Default)]
pub(crate) struct LineScan<'a> {
    pub span: Span<'a>,
    pub id: i64,
    pub display_id: i64,
    pub name: Cow<'a, str>,
    pub display_name: Cow<'a, str>,
    pub timestamp_ns: i64,
    pub duration_ps: i64,
    pub event_count: u32,
    /// Whether non-aggregated events come sorted by (start, longest first).
    pub sorted: bool,
    /// Self time of events that stay open for more than
    /// [`LONG_OPEN_EVENTS`] events (only when `sorted`).
    pub long_self: FxHashMap<u32, i64>,
}

pub(crate) fn scan_line<'a>(
    span: Span<'a>,
    release: Option<ReleaseFn<'_>>,
) -> PbResult<LineScan<'a>> {
    let mut c = span.cursor();
    let mut behind = ReleaseBehind::new(release, span.offset);
    let mut l = LineScan {
        span,
        sorted: true,
        ..Default::default()
    };
    let mut nester = Nester::<()>::default();
    let mut last = (i64::MIN, i64::MAX);
    let mut count: u32 = 0;
    let (mut has_aggregated, mut has_timed) = (false, false);
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        match field {
            1 => l.id = c.int64(wire)?,
            2 => l.name = utf8(c.len_field(wire)?.0),
            3 => l.timestamp_ns = c.int64(wire)?,
            4 => {
                let (bytes, offset) = c.len_field(wire)?;
                behind.at(offset);
                let h = event_header(Span { bytes, offset })?;
                let index = count;
                count = count.checked_add(1).ok_or(PbError {
                    offset,
                    what: "more than 2^32 events on one line",
                })?;
                if h.num_occurrences.is_some() {
                    has_aggregated = true;
                    continue;
                }
                has_timed = true;
                if !l.sorted {
                    continue;
                }
                let key = (h.offset_ps, h.duration_ps);
                if key.0 < last.0 || (key.0 == last.0 && key.1 > last.1) {
                    l.sorted = false;
                    l.long_self.clear();
                    continue;
                }
                last = key;
                let long = &mut l.long_self;
                nester.push(h.offset_ps, h.duration_ps, index, (), |o| {
                    if index - o.index > LONG_OPEN_EVENTS {
                        long.insert(o.index, o.self_ps());
                    }
                });
            }
            9 => l.duration_ps = c.int64(wire)?,
            10 => l.display_id = c.int64(wire)?,
            11 => l.display_name = utf8(c.len_field(wire)?.0),
            _ => c.skip(wire)?,
        }
    }
    if has_aggregated && has_timed {
        // Aggregated events sit at the line start; mixed with timed ones
        // they are placed by sorting.
        l.sorted = false;
        l.long_self.clear();
    }
    if l.sorted {
        let long = &mut l.long_self;
        nester.finish(|o| {
            if count - o.index > LONG_OPEN_EVENTS {
                long.insert(o.index, o.self_ps());
            }
        });
    }
    l.event_count = count;
    if l.display_id == 0 {
        l.display_id = l.id;
    }
    if l.display_name.is_empty() {
        l.display_name = l.name.clone();
    }
    Ok(l)
}
