//! Pass 1 over a Chrome trace: where each event is, its track and times,
//! `B`/`E` and `b`/`e` matched, processes and threads named by `M` events.

use std::borrow::Cow;
use xprof_format::hash::FxHashMap as HashMap;

use crate::codec::json::{ArrayStep, Json, JsonResult, Kind, Scalar, Utf8Doc, micros_to_ps};
use crate::conversion::{ConvertOptions, Progress};
use crate::input::InputBytes;
use crate::names::DeviceKind;

/// A `pid` or `tid`: JSON numbers and strings are both used.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Id {
    /// An integer.
    Int(i64),
    /// Anything else, as text (a string, or a number that is not an
    /// integer).
    Text(String),
    /// Not given.
    Missing,
}

impl Id {
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Id::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn text(&self) -> String {
        match self {
            Id::Int(v) => v.to_string(),
            Id::Text(s) => s.clone(),
            Id::Missing => String::new(),
        }
    }

    fn read(j: &mut Json<'_>) -> JsonResult<Id> {
        Ok(match j.scalar()? {
            Scalar::Number(n) => match n.parse::<i64>() {
                Ok(v) => Id::Int(v),
                Err(_) => Id::Text(n.to_string()),
            },
            Scalar::String(s) => Id::Text(s.into_owned()),
            Scalar::Bool(b) => Id::Text(b.to_string()),
            Scalar::Composite(c) => Id::Text(c.to_string()),
            Scalar::Null => Id::Missing,
        })
    }
}

/// Kinds of event rows (the phase, folded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// `X`, or a matched `B`.
    Complete,
    /// `i`, `I`, `R`, `n`.
    Instant,
    /// `C`.
    Counter,
    /// A matched `b` (or legacy `S`).
    Async,
}

/// One event row to be: 40 bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rec {
    /// Byte offset of the event object.
    pub start: u64,
    pub ts_ps: i64,
    pub dur_ps: i64,
    /// For a matched `B`/`b`: index in [`Scanned::ends`] of its end
    /// event's offset; `u32::MAX` otherwise.
    pub end_event: u32,
    pub phase: Phase,
}

/// One flow endpoint (`s`, `t`, `f`), bound to a slice in pass 2.
#[derive(Debug, Clone, Copy)]
pub(super) struct FlowRec {
    pub ts_ps: i64,
    pub flow_id: u64,
    /// `f` without `bp:"e"`: binds to the next slice starting at or after
    /// `ts_ps`; otherwise to the enclosing slice.
    pub next_slice: bool,
}

/// What a track is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum TrackKind {
    Thread,
    Async,
    Counters,
    /// The `gpu_user_annotation` (and `cuda_profiler_range`) events of one
    /// GPU stream (Kineto's `ProfilerStep#N` and `record_function` ranges
    /// laid over the kernels): spans of what they name, not device work,
    /// so kept off the stream's own track.
    GpuAnnotations,
    /// The `cuda_sync` events of one GPU stream (`Stream Sync`, `Context
    /// Sync`, `Stream Wait Event`): waits, not device work.
    GpuSyncs,
}

impl TrackKind {
    /// The side track kind of a GPU stream that events of `cat` go to
    /// instead of the stream's own track, if any.
    pub(super) fn beside_stream(cat: &str) -> Option<TrackKind> {
        match cat {
            "gpu_user_annotation" | "cuda_profiler_range" => Some(TrackKind::GpuAnnotations),
            "cuda_sync" => Some(TrackKind::GpuSyncs),
            _ => None,
        }
    }
}

/// A track found in pass 1.
#[derive(Debug)]
pub(super) struct TrackScan {
    pub kind: TrackKind,
    /// `tid` (threads), or the name (async and counter tracks).
    pub tid: Id,
    /// `line_id`: the `tid` when an integer, else the track's position.
    pub line_id: i64,
    /// `thread_name` of `M` events, else `tid`/the name.
    pub name: String,
    pub sort_index: Option<i64>,
    pub gpu_events: bool,
    /// For a track beside a stream ([`TrackKind::beside_stream`]): the
    /// thread track of the stream.
    pub beside: Option<u32>,
    /// Indices into [`Scanned::recs`].
    pub events: Vec<u32>,
    pub flows: Vec<u32>,
}

/// A process found in pass 1.
#[derive(Debug)]
pub(super) struct DeviceScan {
    pub pid: Id,
    pub name: Option<String>,
    pub labels: Option<String>,
    pub sort_index: Option<i64>,
    /// `M` events other than the names: (name, args text).
    pub other_metadata: Vec<(String, String)>,
    pub gpu_events: bool,
    pub tracks: Vec<u32>,
    /// The device kind a flavour of the format gives (Mosaic GPU's SMs);
    /// else `gpu` or `host` from labels and events.
    pub kind: Option<DeviceKind>,
}

impl DeviceScan {
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => match &self.pid {
                Id::Missing => "process".to_string(),
                Id::Int(v) => format!("pid {v}"),
                // A named pid (Proton's `"<kernel> Core<n> CTA<n>"`) is
                // its own name.
                Id::Text(t) => t.clone(),
            },
        }
    }

    pub fn is_gpu(&self) -> bool {
        match &self.labels {
            Some(l) if l.contains("GPU") => true,
            Some(l) if l.contains("CPU") => false,
            _ => self.gpu_events,
        }
    }
}

/// Everything pass 1 learned.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    pub recs: Vec<Rec>,
    /// Offsets of the `E`/`e` events matched to a `B`/`b`.
    pub ends: Vec<u64>,
    pub flows: Vec<FlowRec>,
    pub devices: Vec<DeviceScan>,
    pub tracks: Vec<TrackScan>,
    /// Top-level keys other than `traceEvents`: (key, value span).
    pub top_level: Vec<(String, (usize, usize))>,
    /// Timestamps of `recs` and `flows` are ps from this (the first
    /// timestamp of the file, in whole µs).
    pub base_ps: i128,
    /// Smallest timestamp of `recs` and `flows`: `ts_ps = 0` of the tables.
    pub origin_ps: i64,
    pub warnings: Vec<String>,
}

impl Scanned {
    /// Names the lanes of a Mosaic GPU profile: its `pid` is 1 + the SM id
    /// and its `tid` 1 + the warpgroup's index in the grid, so a process
    /// that no `M` event names is `SM <pid - 1>` (kind `other`: an SM, not
    /// a GPU) and such a thread `warpgroup <tid - 1>`.
    pub fn name_mosaic_gpu_lanes(&mut self) {
        for dev in &mut self.devices {
            if let (None, Some(pid)) = (&dev.name, dev.pid.as_int()) {
                dev.name = Some(format!("SM {}", pid - 1));
                dev.kind = Some(DeviceKind::Other);
            }
        }
        for t in &mut self.tracks {
            if let (TrackKind::Thread, Some(tid)) = (t.kind, t.tid.as_int())
                && t.name == tid.to_string()
            {
                t.name = format!("warpgroup {}", tid - 1);
            }
        }
    }
}

/// `cat` values of GPU activity in Kineto traces (Proton kernels use
/// `kernel` too).
pub(super) fn is_gpu_category(cat: &str) -> bool {
    matches!(
        cat,
        "kernel" | "gpu_memcpy" | "gpu_memset" | "gpu_user_annotation" | "Kernel" | "Memcpy"
    )
}

/// The fields of an event that pass 1 needs.
#[derive(Default)]
struct Fields<'a> {
    ph: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    cat: Option<Cow<'a, str>>,
    pid: Option<Id>,
    tid: Option<Id>,
    ts: Option<Scalar<'a>>,
    dur: Option<Scalar<'a>>,
    id: Option<String>,
    bp: Option<Cow<'a, str>>,
    args: Option<(usize, usize)>,
    /// Whether `name` was a JSON string (`None`: no name).
    name_was_string: Option<bool>,
}

fn read_fields<'a>(j: &mut Json<'a>) -> JsonResult<Fields<'a>> {
    let mut f = Fields::default();
    if j.kind()? != Kind::Object {
        return Err(j.error("an event of traceEvents is not an object"));
    }
    j.begin_object()?;
    let mut first = true;
    while let Some(key) = j.next_key(first)? {
        first = false;
        match key.as_ref() {
            "ph" => f.ph = Some(string_field(j)?),
            "name" => {
                f.name_was_string = Some(j.kind()? == Kind::String);
                f.name = Some(string_field(j)?)
            }
            "cat" => f.cat = Some(string_field(j)?),
            "pid" => f.pid = Some(Id::read(j)?),
            "tid" => f.tid = Some(Id::read(j)?),
            "ts" => f.ts = Some(j.scalar()?),
            "dur" => f.dur = Some(j.scalar()?),
            "id" | "bind_id" => f.id = Some(Id::read(j)?.text()),
            "id2" => {
                let (s, e) = j.skip()?;
                f.id = Some(String::from_utf8_lossy(&j_bytes(j)[s..e]).into_owned());
            }
            "bp" => f.bp = Some(string_field(j)?),
            "args" => f.args = Some(j.skip()?),
            _ => {
                j.skip()?;
            }
        }
    }
    Ok(f)
}

fn j_bytes<'a>(j: &Json<'a>) -> &'a [u8] {
    j.bytes()
}

/// A field that should be a string; other scalars are taken as their text.
fn string_field<'a>(j: &mut Json<'a>) -> JsonResult<Cow<'a, str>> {
    Ok(match j.scalar()? {
        Scalar::String(s) => s,
        Scalar::Number(n) => Cow::Borrowed(n),
        Scalar::Bool(b) => Cow::Owned(b.to_string()),
        Scalar::Null => Cow::Borrowed(""),
        Scalar::Composite(c) => Cow::Borrowed(c),
    })
}

/// A time field (µs) in ps: a number, or a string holding one.
fn time_ps(v: &Scalar<'_>) -> Option<i128> {
    checked_time_ps(v).ok()
}

/// Why a time field was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BadTime {
    /// Not a number, nor a string holding one (a list, `true`, "soon").
    NotANumber,
    /// A number, but past what ps can be kept in (`1e400`, or more µs
    /// than an i64 of ns holds: epoch times past the year 2262).
    OutOfRange,
}

/// The largest |time| taken, in ps: an i64 of ns (epoch µs up to 2262).
const MAX_ABS_TIME_PS: i128 = i64::MAX as i128 * 1000;

/// [`time_ps`], saying why a time is not taken.
fn checked_time_ps(v: &Scalar<'_>) -> Result<i128, BadTime> {
    let literal = match v {
        Scalar::Number(n) => n,
        Scalar::String(s) => {
            let s = s.trim();
            let mut j = Json::new(s.as_bytes());
            match j.number() {
                Ok(n) if n.len() == s.len() => s,
                _ => return Err(BadTime::NotANumber),
            }
        }
        _ => return Err(BadTime::NotANumber),
    };
    match micros_to_ps(literal) {
        Some(ps) if ps.abs() <= MAX_ABS_TIME_PS => Ok(ps),
        _ => Err(BadTime::OutOfRange),
    }
}

/// A value of an `M` event's `args` (`{"name": ...}`, `{"sort_index": ...}`).
fn metadata_arg(
    bytes: &[u8],
    span: Option<(usize, usize)>,
    want: &str,
) -> JsonResult<Option<String>> {
    let Some((start, _)) = span else {
        return Ok(None);
    };
    let mut j = Json::at(bytes, start);
    if j.kind()? != Kind::Object {
        return Ok(None);
    }
    j.begin_object()?;
    let mut first = true;
    let mut found = None;
    while let Some(key) = j.next_key(first)? {
        first = false;
        if key == want {
            found = Some(match j.scalar()? {
                Scalar::String(s) => s.into_owned(),
                Scalar::Number(n) => n.to_string(),
                Scalar::Bool(b) => b.to_string(),
                Scalar::Null => String::new(),
                Scalar::Composite(c) => c.to_string(),
            });
        } else {
            j.skip()?;
        }
    }
    Ok(found)
}

/// Counts of things skipped or repaired, reported once each.
#[derive(Default)]
struct Tally {
    unknown_phase: HashMap<String, u64>,
    /// Events without a `ts`, with one that is no number, or with one out
    /// of range (see [`BadTime`]), all dropped.
    ts_missing: u64,
    ts_not_a_number: u64,
    ts_out_of_range: u64,
    /// Events whose `name` is not a string: kept, named by the value's text.
    name_not_string: u64,
    bad_dur: u64,
    end_without_begin: u64,
    async_end_without_begin: u64,
}

/// Builder state of pass 1.
struct Scanner {
    out: Scanned,
    device_of: HashMap<Id, u32>,
    thread_of: HashMap<(u32, Id), u32>,
    named_of: HashMap<(u32, TrackKind, String), u32>,
    /// The side tracks of each thread track that has one, by kind.
    beside_of: HashMap<(u32, TrackKind), u32>,
    /// Open `B` events per thread track.
    open_b: HashMap<u32, Vec<u32>>,
    /// Open `b` events per (device, cat, id).
    open_async: HashMap<(u32, String, String), Vec<u32>>,
    flow_ids: HashMap<(String, String), u64>,
    tally: Tally,
    min_ts: i64,
    max_end: i64,
    base: Option<i128>,
}

impl Scanner {
    /// `ps` (absolute) relative to the first timestamp seen.
    fn relative(&mut self, ps: i128) -> Option<i64> {
        let base = *self
            .base
            .get_or_insert_with(|| ps - ps.rem_euclid(1_000_000));
        i64::try_from(ps - base).ok()
    }

    fn device(&mut self, pid: Id) -> u32 {
        if let Some(&d) = self.device_of.get(&pid) {
            return d;
        }
        let d = self.out.devices.len() as u32;
        self.out.devices.push(DeviceScan {
            pid: pid.clone(),
            name: None,
            labels: None,
            sort_index: None,
            other_metadata: Vec::new(),
            gpu_events: false,
            tracks: Vec::new(),
            kind: None,
        });
        self.device_of.insert(pid, d);
        d
    }

    fn new_track(&mut self, device: u32, kind: TrackKind, tid: Id, name: String) -> u32 {
        let t = self.out.tracks.len() as u32;
        let dev = &mut self.out.devices[device as usize];
        let line_id = tid.as_int().unwrap_or(dev.tracks.len() as i64);
        dev.tracks.push(t);
        self.out.tracks.push(TrackScan {
            kind,
            tid,
            line_id,
            name,
            sort_index: None,
            gpu_events: false,
            beside: None,
            events: Vec::new(),
            flows: Vec::new(),
        });
        t
    }

    /// The track an event of `cat` on thread track `thread` goes to: the
    /// thread's own, or the side track of its kind beside it.
    fn track_for(&mut self, device: u32, thread: u32, cat: &str) -> u32 {
        let Some(kind) = TrackKind::beside_stream(cat) else {
            return thread;
        };
        if let Some(&t) = self.beside_of.get(&(thread, kind)) {
            return t;
        }
        let tid = self.out.tracks[thread as usize].tid.clone();
        let t = self.new_track(device, kind, tid, String::new());
        // Not the stream's line: numbered by position on the device; named
        // after the stream once its `thread_name` is known (`finish`).
        let track = &mut self.out.tracks[t as usize];
        track.line_id = -1 - t as i64;
        track.beside = Some(thread);
        self.beside_of.insert((thread, kind), t);
        t
    }

    fn thread(&mut self, device: u32, tid: Id) -> u32 {
        let key = (device, tid);
        if let Some(&t) = self.thread_of.get(&key) {
            return t;
        }
        let name = match &key.1 {
            Id::Missing => "thread".to_string(),
            other => other.text(),
        };
        let t = self.new_track(device, TrackKind::Thread, key.1.clone(), name);
        self.thread_of.insert(key, t);
        t
    }

    fn named(&mut self, device: u32, kind: TrackKind, name: &str) -> u32 {
        let key = (device, kind, name.to_string());
        if let Some(&t) = self.named_of.get(&key) {
            return t;
        }
        let t = self.new_track(device, kind, Id::Text(name.to_string()), name.to_string());
        // Not a tid: numbered by position on the device.
        self.out.tracks[t as usize].line_id = -1 - t as i64;
        self.named_of.insert(key, t);
        t
    }

    fn push(&mut self, track: u32, rec: Rec) -> u32 {
        let i = self.out.recs.len() as u32;
        self.min_ts = self.min_ts.min(rec.ts_ps);
        self.max_end = self
            .max_end
            .max(rec.ts_ps.saturating_add(rec.dur_ps.max(0)));
        self.out.recs.push(rec);
        self.out.tracks[track as usize].events.push(i);
        i
    }

    fn flow_id(&mut self, cat: &str, id: &str) -> u64 {
        let n = self.flow_ids.len() as u64 + 1;
        *self
            .flow_ids
            .entry((cat.to_string(), id.to_string()))
            .or_insert(n)
    }

    fn event(&mut self, bytes: &[u8], start: usize, mut f: Fields<'_>) -> JsonResult<()> {
        let Some(ph) = f.ph.as_deref() else {
            *self.tally.unknown_phase.entry("(none)".into()).or_default() += 1;
            return Ok(());
        };
        // Taken, not cloned: a string pid or tid is looked up as is.
        let tid = f.tid.take().unwrap_or(Id::Missing);
        let device = self.device(f.pid.take().unwrap_or(Id::Missing));
        let cat = f.cat.as_deref().unwrap_or("");
        let name = f.name.as_deref().unwrap_or("");
        if ph == "M" {
            let dev = &mut self.out.devices[device as usize];
            match name {
                "process_name" => dev.name = metadata_arg(bytes, f.args, "name")?,
                "process_labels" => dev.labels = metadata_arg(bytes, f.args, "labels")?,
                "process_sort_index" => {
                    dev.sort_index =
                        metadata_arg(bytes, f.args, "sort_index")?.and_then(|s| s.parse().ok())
                }
                "thread_name" | "thread_sort_index" => {
                    let t = self.thread(device, tid);
                    let track = &mut self.out.tracks[t as usize];
                    if name == "thread_name" {
                        if let Some(n) = metadata_arg(bytes, f.args, "name")? {
                            track.name = n;
                        }
                    } else {
                        track.sort_index =
                            metadata_arg(bytes, f.args, "sort_index")?.and_then(|s| s.parse().ok());
                    }
                }
                _ => {
                    let text = f
                        .args
                        .map(|(s, e)| String::from_utf8_lossy(&bytes[s..e]).into_owned())
                        .unwrap_or_default();
                    dev.other_metadata.push((name.to_string(), text));
                }
            }
            return Ok(());
        }
        let ts_ps = match f.ts.as_ref().map(checked_time_ps) {
            None => {
                self.tally.ts_missing += 1;
                return Ok(());
            }
            Some(Err(BadTime::NotANumber)) => {
                self.tally.ts_not_a_number += 1;
                return Ok(());
            }
            Some(Err(BadTime::OutOfRange)) => {
                self.tally.ts_out_of_range += 1;
                return Ok(());
            }
            Some(Ok(ps)) => match self.relative(ps) {
                Some(ts_ps) => ts_ps,
                // Further from the first event's time than i64 ps reach.
                None => {
                    self.tally.ts_out_of_range += 1;
                    return Ok(());
                }
            },
        };
        if f.name_was_string == Some(false) {
            self.tally.name_not_string += 1;
        }
        let gpu = is_gpu_category(cat);
        if gpu {
            self.out.devices[device as usize].gpu_events = true;
        }
        let rec = |phase, dur_ps| Rec {
            start: start as u64,
            ts_ps,
            dur_ps,
            end_event: u32::MAX,
            phase,
        };
        match ph {
            "X" => {
                let dur = f
                    .dur
                    .as_ref()
                    .map(|d| time_ps(d).and_then(|v| i64::try_from(v).ok()));
                let dur_ps = match dur {
                    None => 0,
                    Some(Some(d)) if d >= 0 => d,
                    Some(_) => {
                        self.tally.bad_dur += 1;
                        0
                    }
                };
                let t = self.thread(device, tid);
                self.out.tracks[t as usize].gpu_events |= gpu;
                let on = self.track_for(device, t, cat);
                self.push(on, rec(Phase::Complete, dur_ps));
            }
            "B" => {
                let t = self.thread(device, tid);
                self.out.tracks[t as usize].gpu_events |= gpu;
                let on = self.track_for(device, t, cat);
                let i = self.push(on, rec(Phase::Complete, -1));
                // Ended by the `E` of its thread, wherever it is kept.
                self.open_b.entry(t).or_default().push(i);
            }
            "E" => {
                let t = self.thread(device, tid);
                match self.open_b.get_mut(&t).and_then(Vec::pop) {
                    Some(b) => self.close(b, ts_ps, start),
                    None => self.tally.end_without_begin += 1,
                }
            }
            "i" | "I" | "R" => {
                let t = self.thread(device, tid);
                self.push(t, rec(Phase::Instant, 0));
            }
            "C" => {
                let t = self.named(device, TrackKind::Counters, name);
                self.push(t, rec(Phase::Counter, 0));
            }
            "b" | "S" => {
                let t = self.named(device, TrackKind::Async, name);
                let i = self.push(t, rec(Phase::Async, -1));
                let key = (device, cat.to_string(), f.id.clone().unwrap_or_default());
                self.open_async.entry(key).or_default().push(i);
            }
            "e" | "F" => {
                let key = (device, cat.to_string(), f.id.clone().unwrap_or_default());
                match self.open_async.get_mut(&key).and_then(Vec::pop) {
                    Some(b) => self.close(b, ts_ps, start),
                    None => self.tally.async_end_without_begin += 1,
                }
            }
            "n" | "T" | "p" => {
                let t = self.named(device, TrackKind::Async, name);
                self.push(t, rec(Phase::Instant, 0));
            }
            "s" | "t" | "f" => {
                let t = self.thread(device, tid);
                let flow_id = self.flow_id(cat, f.id.as_deref().unwrap_or(""));
                let i = self.out.flows.len() as u32;
                self.out.flows.push(FlowRec {
                    ts_ps,
                    flow_id,
                    next_slice: ph == "f" && f.bp.as_deref() != Some("e"),
                });
                self.out.tracks[t as usize].flows.push(i);
                self.min_ts = self.min_ts.min(ts_ps);
            }
            other => {
                *self
                    .tally
                    .unknown_phase
                    .entry(other.to_string())
                    .or_default() += 1;
            }
        }
        Ok(())
    }

    /// Closes the open begin `b` at `end_ps` with the end event at `start`.
    fn close(&mut self, b: u32, end_ps: i64, start: usize) {
        let r = &mut self.out.recs[b as usize];
        if end_ps < r.ts_ps {
            self.tally.bad_dur += 1;
            r.dur_ps = 0;
        } else {
            r.dur_ps = end_ps - r.ts_ps;
        }
        r.end_event = self.out.ends.len() as u32;
        self.out.ends.push(start as u64);
        self.max_end = self.max_end.max(end_ps);
    }

    fn finish(mut self) -> Scanned {
        // Begins never ended run to the end of the trace.
        let mut unended = 0u64;
        for r in &mut self.out.recs {
            if r.dur_ps < 0 {
                r.dur_ps = (self.max_end - r.ts_ps).max(0);
                unended += 1;
            }
        }
        let t = &self.tally;
        let w = &mut self.out.warnings;
        if unended > 0 {
            w.push(format!(
                "{unended} begin events (B or b) have no end: they run to the end of the trace"
            ));
        }
        if t.end_without_begin > 0 {
            w.push(format!(
                "{} E events without an open B on their thread were dropped",
                t.end_without_begin
            ));
        }
        if t.async_end_without_begin > 0 {
            w.push(format!(
                "{} async end events (e) without a matching b were dropped",
                t.async_end_without_begin
            ));
        }
        for (n, what) in [
            (t.ts_missing, "without a ts were dropped"),
            (t.ts_not_a_number, "whose ts is not a number were dropped"),
            (
                t.ts_out_of_range,
                "whose ts is out of range (not representable in ps, or beyond an i64 of ns from the first event) were dropped",
            ),
            (
                t.name_not_string,
                "whose name is not a string were kept, named by its JSON text",
            ),
        ] {
            if n > 0 {
                w.push(format!("{n} events {what}"));
            }
        }
        if t.bad_dur > 0 {
            w.push(format!(
                "{} events with a negative or unreadable duration were kept with duration 0",
                t.bad_dur
            ));
        }
        let mut phases: Vec<_> = t.unknown_phase.iter().collect();
        phases.sort();
        for (ph, n) in phases {
            w.push(format!("{n} events of unknown phase {ph:?} were dropped"));
        }
        // Side tracks are named after their streams, whose `thread_name`
        // may come after their events.
        for i in 0..self.out.tracks.len() {
            if let Some(stream) = self.out.tracks[i].beside {
                let stream_name = self.out.tracks[stream as usize].name.trim_end();
                let what = match self.out.tracks[i].kind {
                    TrackKind::GpuSyncs => "syncs",
                    _ => "annotations",
                };
                self.out.tracks[i].name = format!("{stream_name} {what}");
            }
        }
        self.out.base_ps = self.base.unwrap_or(0);
        self.out.origin_ps = if self.min_ts == i64::MAX {
            0
        } else {
            self.min_ts
        };
        self.out
    }
}

/// Pass 1 over `input`.
pub(super) fn scan(
    input: &InputBytes,
    doc: Utf8Doc<'_>,
    options: &ConvertOptions,
) -> JsonResult<Scanned> {
    let bytes: &[u8] = input;
    let mut s = Scanner {
        out: Scanned::default(),
        device_of: HashMap::default(),
        thread_of: HashMap::default(),
        named_of: HashMap::default(),
        beside_of: HashMap::default(),
        open_b: HashMap::default(),
        open_async: HashMap::default(),
        flow_ids: HashMap::default(),
        tally: Tally::default(),
        min_ts: i64::MAX,
        max_end: i64::MIN,
        base: None,
    };
    let mut j = doc.at(0);
    let report = |pos: usize| {
        // Pass 2 reads the events again, from the page cache.
        input.release(0, pos);
        if let Some(p) = &options.progress {
            p(Progress {
                file: 0,
                bytes_done: pos as u64 / 2,
                bytes_total: bytes.len() as u64,
            });
        }
    };
    // `closing_optional`: the Trace Event Format lets a trace in the JSON
    // Array Format (the document is the array) end without its `]`, so
    // that the trace of a program that crashed still loads.
    let events_array =
        |j: &mut Json<'_>, s: &mut Scanner, closing_optional: bool| -> JsonResult<()> {
            j.begin_array()?;
            let mut first = true;
            let mut n = 0u64;
            loop {
                let more = if closing_optional {
                    match j.next_element_or_end(first)? {
                        ArrayStep::Element => true,
                        ArrayStep::Close => false,
                        ArrayStep::EndOfInput => {
                            s.out.warnings.push(format!(
                            "the array of events has no closing ']' (allowed by the Trace Event \
                             Format for traces of programs that ended early): read the {n} events \
                             before the end of the file at byte {}",
                            j.pos()
                        ));
                            false
                        }
                    }
                } else {
                    j.next_element(first)?
                };
                if !more {
                    break;
                }
                first = false;
                let start = j.pos();
                let f = read_fields(j)?;
                s.event(bytes, start, f)?;
                n += 1;
                if n.is_multiple_of(65536) {
                    report(j.pos());
                }
            }
            Ok(())
        };
    match j.kind()? {
        Kind::Array => events_array(&mut j, &mut s, true)?,
        Kind::Object => {
            j.begin_object()?;
            let mut first = true;
            while let Some(key) = j.next_key(first)? {
                first = false;
                if key == "traceEvents" {
                    if j.kind()? != Kind::Array {
                        return Err(j.error("traceEvents is not an array"));
                    }
                    events_array(&mut j, &mut s, false)?;
                } else {
                    let span = j.skip()?;
                    s.out.top_level.push((key.into_owned(), span));
                }
            }
        }
        _ => return Err(j.error("a Chrome trace is a JSON object or array")),
    }
    if !j.at_end() {
        return Err(j.error("more after the end of the JSON document"));
    }
    if s.max_end == i64::MIN {
        s.max_end = 0;
    }
    Ok(s.finish())
}
