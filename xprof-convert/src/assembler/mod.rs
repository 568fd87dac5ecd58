//! The format-neutral trace assembler: what every input format needs
//! between decoding its bytes and handing Arrow batches to a sink.
//!
//! A reader (XSpace, and each format to come) describes a trace as
//! devices holding tracks holding events, in the calls below; the
//! assembler owns everything derived from that description:
//!
//! - ids: `device_id`, `track_id` and `event_id` are allocated here, in
//!   output order (events are numbered in `(track_id, ts_ps)` order, so
//!   `event_args`, sorted by `event_id`, follows `events`);
//! - nesting: `depth`, `parent_id` and `self_ps`, streamed for a track
//!   given in time order ([`TrackStream`], holding back the few rows whose
//!   self time is not known yet) or computed whole for a track that is not
//!   ([`TraceAssembler::place_sorted`]);
//! - containment: `step_event_id`, `module_event_id` and `kernel_event_id`
//!   from the device's `Steps`, `XLA Modules` and kernel tracks (by
//!   [`Role`]); readers emit container tracks first;
//! - flows and correlation ids, paired at the end of the trace;
//! - counters, and typed rows for every table
//!   ([`xprof_format::small_table_rows`]);
//! - the declared sort order of every table, checked on every batch.
//!
//! Memory: one batch per table (the rows of several small devices are
//! held until they make a batch), a device's container intervals, and the
//! flow endpoints of the trace (paired at its end).

mod flows;
pub(crate) mod nest;
mod order;

use std::collections::BTreeMap;

use xprof_format::schema::{CONVERTER_VERSION, SCHEMA_VERSION};
use xprof_format::schema::{CounterRow, DeviceRow, TraceRow, TrackRow};
use xprof_format::small_table_rows::{Row, RowBuffer};
use xprof_format::{EventArgsBuilder, EventRow, EventsBuilder, Interner, StatValue, Sym, Table};

use crate::conversion::{ConvertOptions, Summary, TraceSource};
use crate::error::{ConvertError, Result};
use crate::names::{DeviceKind, LineKind, Role};
use crate::sink::TableSink;
use flows::FlowPairs;
use nest::{Nester, Open};
use order::OrderedSink;

/// `event_args` batches are finished early when their string and binary
/// values reach this size, bounding memory with very long stat strings.
const ARGS_PAYLOAD_LIMIT: usize = 64 << 20;

/// Ended devices' rows are handed to the sink, and the string interner
/// started again, when the interner's strings reach this size.
const INTERNER_BYTES_LIMIT: usize = 64 << 20;

/// Intervals of one container role on a device, in nesting order: start
/// ascending, the longer first on a tie (the order a track is placed in),
/// so that of several containers of an event the innermost is found
/// first, whichever tracks they came from.
#[derive(Debug, Default)]
struct Containers {
    spans: Vec<(i64, i64, i64)>,
    unsorted: bool,
}

fn nesting_key(s: &(i64, i64, i64)) -> (i64, std::cmp::Reverse<i64>, i64) {
    (s.0, std::cmp::Reverse(s.1), s.2)
}

impl Containers {
    fn push(&mut self, ts: i64, end: i64, event_id: i64) {
        let span = (ts, end, event_id);
        if self
            .spans
            .last()
            .is_some_and(|l| nesting_key(l) > nesting_key(&span))
        {
            self.unsorted = true;
        }
        self.spans.push(span);
    }

    /// The innermost interval that contains `[ts, ts + dur)` (among the
    /// last 8 starting at or before `ts`), as `(start, end, event_id)`.
    fn span_containing(&mut self, ts: i64, dur: i64) -> Option<(i64, i64, i64)> {
        if self.unsorted {
            self.spans.sort_unstable_by_key(nesting_key);
            self.unsorted = false;
        }
        let end = ts.saturating_add(dur.max(0));
        let upto = self.spans.partition_point(|s| s.0 <= ts);
        self.spans[..upto]
            .iter()
            .rev()
            .take(8)
            .find(|s| end <= s.1)
            .copied()
    }

    /// The `event_id` of [`Containers::span_containing`].
    fn find(&mut self, ts: i64, dur: i64) -> Option<i64> {
        self.span_containing(ts, dur).map(|s| s.2)
    }
}

/// A track as a reader describes it.
#[derive(Debug, Clone)]
pub struct TrackSpec<'a> {
    /// The input's own id of the line or thread (`tracks.line_id`).
    pub line_id: i64,
    /// `tracks.display_id`.
    pub display_id: i64,
    /// `tracks.name`.
    pub name: &'a str,
    /// `tracks.display_name`.
    pub display_name: &'a str,
    /// Kind and role, from the name ([`LineKind::of`]).
    pub kind: LineKind,
    /// `tracks.unit` (LLO lanes).
    pub unit: Option<&'a str>,
    /// `tracks.timestamp_ns`.
    pub timestamp_ns: i64,
    /// `tracks.duration_ps`.
    pub duration_ps: i64,
}

/// A track being filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Track {
    /// `tracks.track_id`.
    pub track_id: i32,
    /// What its events are to containment.
    pub role: Role,
    /// Its events are samples, not intervals that nest (counter tracks):
    /// each is at depth 0 with no parent and its duration as self time.
    pub flat: bool,
    index: usize,
}

/// Where an event goes: the derived columns of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// `event_id`.
    pub event_id: i64,
    /// `track_id`.
    pub track_id: i32,
    /// `ts_ps`.
    pub ts_ps: i64,
    /// `depth`.
    pub depth: i32,
    /// `parent_id`.
    pub parent_id: Option<i64>,
    /// The self time when known now; `None` for an event still open (its
    /// row is patched when it closes) and for an aggregated event (whose
    /// self time is the reader's to say).
    pub self_ps: Option<i64>,
    /// `step_event_id`.
    pub step_event_id: Option<i64>,
    /// `module_event_id`.
    pub module_event_id: Option<i64>,
    /// `kernel_event_id`.
    pub kernel_event_id: Option<i64>,
}

/// An event of a track given out of time order, before it is placed.
#[derive(Debug, Clone, Copy)]
pub struct Pending<T> {
    /// Start, ps from the trace start.
    pub ts_ps: i64,
    /// Duration.
    pub dur_ps: i64,
    /// Whether the event is an aggregate (not nested).
    pub aggregated: bool,
    /// The reader's handle to the event.
    pub data: T,
}

/// Per-track counters kept for the `tracks` row.
#[derive(Debug)]
struct TrackState {
    row: OwnedTrack,
    events: i64,
}

#[derive(Debug)]
struct OwnedTrack {
    line_id: i64,
    display_id: i64,
    name: String,
    display_name: String,
    kind: &'static str,
    unit: Option<String>,
    timestamp_ns: i64,
    duration_ps: i64,
}

/// The device being filled.
#[derive(Debug)]
struct DeviceState {
    device_id: i32,
    kind: DeviceKind,
    tracks: Vec<TrackState>,
    first_track_id: i32,
    events: i64,
    steps: Containers,
    modules: Containers,
    kernels: Containers,
    record_kernels: bool,
    /// A track that is not a container was begun (containers must come
    /// first).
    saw_contained: bool,
}

/// What a reader knows of the whole trace, written to `traces` at the end.
#[derive(Debug, Clone, Default)]
pub struct TraceInfo {
    /// `traces.start_unix_ns`.
    pub start_unix_ns: Option<i64>,
    /// `traces.stop_unix_ns`.
    pub stop_unix_ns: Option<i64>,
    /// `traces.hostnames`.
    pub hostnames: Vec<String>,
    /// `traces.errors`: errors the profiler recorded in the file.
    pub errors: Vec<String>,
    /// `traces.warnings`: warnings the profiler recorded in the file.
    pub warnings: Vec<String>,
}

/// How often (in events) a conversion looks at its deadline.
const DEADLINE_EVERY_EVENTS: u64 = 1 << 16;

/// Builds the tables of one trace from a reader's calls; see the module
/// documentation.
pub struct TraceAssembler<'s> {
    source: TraceSource,
    format: &'static str,
    batch_rows: usize,
    sink: OrderedSink<'s>,
    interner: Interner,
    events: EventsBuilder,
    event_args: EventArgsBuilder,
    counters: RowBuffer,
    /// Small tables of the ended devices not yet written and of the
    /// current device.
    device_rows: BTreeMap<Table, RowBuffer>,
    /// `devices` rows of ended devices not yet written.
    devices: RowBuffer,
    /// `tracks` rows of ended devices not yet written.
    tracks: RowBuffer,
    /// Tables of the trace as a whole (`profile_nodes`, `node_metrics`),
    /// written at its end.
    trace_rows: BTreeMap<Table, RowBuffer>,
    /// `event_id` of the first row in `events` (ids are row numbers).
    staged_base: i64,
    next_track_id: i32,
    next_device_id: i32,
    device: Option<DeviceState>,
    /// A [`TrackStream`] is open: it decides when rows are flushed.
    streaming: bool,
    flows: FlowPairs,
    max_end_ps: i64,
    summary: Summary,
    /// [`ConvertOptions::deadline`].
    deadline: Option<std::time::Instant>,
}

impl std::fmt::Debug for TraceAssembler<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceAssembler")
            .field("source", &self.source)
            .field("format", &self.format)
            .finish()
    }
}

fn arrow_err(table: Table) -> impl FnOnce(arrow::error::ArrowError) -> ConvertError {
    move |source| {
        ConvertError::Format(xprof_format::FormatError::Arrow {
            table: table.name(),
            source,
        })
    }
}

impl<'s> TraceAssembler<'s> {
    /// An assembler writing trace `source` of format `format`
    /// (`traces.source_format`) into `sink`.
    pub fn new(
        source: &TraceSource,
        format: &'static str,
        options: &ConvertOptions,
        sink: &'s mut dyn TableSink,
    ) -> Self {
        let batch_rows = options.batch_rows.max(1);
        let cap = batch_rows.min(1 << 16);
        Self {
            source: source.clone(),
            format,
            batch_rows,
            sink: OrderedSink::new(sink),
            interner: Interner::new(),
            events: EventsBuilder::new(source.trace_id, cap),
            event_args: EventArgsBuilder::new(source.trace_id, cap),
            counters: RowBuffer::new(),
            device_rows: BTreeMap::new(),
            devices: RowBuffer::new(),
            tracks: RowBuffer::new(),
            trace_rows: BTreeMap::new(),
            staged_base: 0,
            next_track_id: 0,
            next_device_id: 0,
            device: None,
            streaming: false,
            flows: FlowPairs::default(),
            max_end_ps: 0,
            summary: Summary::default(),
            deadline: options.deadline,
        }
    }

    /// `trace_id` of every row.
    pub fn trace_id(&self) -> i32 {
        self.source.trace_id
    }

    /// The input being converted.
    pub fn source(&self) -> &TraceSource {
        &self.source
    }

    /// The strings of the current device's events: names, promoted stats
    /// and stat keys pushed as [`Sym`]s are interned here. Emptied at the
    /// end of each device.
    pub fn interner(&mut self) -> &mut Interner {
        &mut self.interner
    }

    /// Records something noticed and kept (`traces.converter_warnings`).
    pub fn warn(&mut self, message: String) {
        self.summary.warnings.push(message);
    }

    /// The summary so far (readers add what only they count).
    pub fn summary_mut(&mut self) -> &mut Summary {
        &mut self.summary
    }

    /// Starts the next device; returns its `device_id`. With
    /// `record_kernels`, events of [`Role::Kernels`] tracks are kept as
    /// containers of the device's [`Role::InKernel`] tracks (only needed
    /// when it has such tracks: a TPU has millions of ops).
    pub fn begin_device(&mut self, kind: DeviceKind, record_kernels: bool) -> Result<i32> {
        if self.device.is_some() {
            return Err(ConvertError::Sink(
                "internal error: a device was begun before the last one ended".into(),
            ));
        }
        let device_id = self.next_device_id;
        self.next_device_id += 1;
        self.device = Some(DeviceState {
            device_id,
            kind,
            tracks: Vec::new(),
            first_track_id: self.next_track_id,
            events: 0,
            steps: Containers::default(),
            modules: Containers::default(),
            kernels: Containers::default(),
            record_kernels,
            saw_contained: false,
        });
        Ok(device_id)
    }

    fn device(&mut self) -> &mut DeviceState {
        self.device
            .as_mut()
            .expect("readers begin a device before its tracks")
    }

    /// Starts a track of the current device. Container tracks (steps,
    /// modules, kernels) must be begun before the tracks they contain.
    pub fn begin_track(&mut self, spec: &TrackSpec<'_>) -> Track {
        let track_id = self.next_track_id;
        self.next_track_id += 1;
        let role = spec.kind.role;
        let dev = self.device();
        let container = role.contains_others();
        let late_container = container && dev.saw_contained;
        dev.saw_contained |= !container;
        dev.tracks.push(TrackState {
            row: OwnedTrack {
                line_id: spec.line_id,
                display_id: spec.display_id,
                name: spec.name.to_string(),
                display_name: spec.display_name.to_string(),
                kind: spec.kind.kind,
                unit: spec.unit.map(str::to_string),
                timestamp_ns: spec.timestamp_ns,
                duration_ps: spec.duration_ps,
            },
            events: 0,
        });
        let index = dev.tracks.len() - 1;
        if late_container {
            self.warn(format!(
                "track {:?} contains others but came after them: containment of earlier tracks is incomplete",
                spec.name
            ));
        }
        Track {
            track_id,
            role,
            flat: spec.kind.is_counters(),
            index,
        }
    }

    /// Starts streaming `track`'s events, given in time order (start
    /// ascending, the longer first on a tie).
    pub fn stream(&mut self, track: Track) -> TrackStream {
        self.streaming = true;
        TrackStream {
            track,
            nester: Nester::default(),
            index: 0,
        }
    }

    /// The containment columns of an event of role `role` at `[ts, ts+dur)`,
    /// and records it as a container when its role is one.
    fn contain(&mut self, role: Role, ts: i64, dur: i64, event_id: i64) -> [Option<i64>; 3] {
        let dev = self.device.as_mut().expect("device begun");
        let end = ts.saturating_add(dur.max(0));
        let found = if !dev.kind.is_accelerator() {
            [None; 3]
        } else {
            match role {
                Role::Steps => [None; 3],
                Role::Modules => [dev.steps.find(ts, dur), None, None],
                Role::InKernel => [
                    dev.steps.find(ts, dur),
                    dev.modules.find(ts, dur),
                    dev.kernels.find(ts, dur),
                ],
                _ => [dev.steps.find(ts, dur), dev.modules.find(ts, dur), None],
            }
        };
        match role {
            Role::Steps => dev.steps.push(ts, end, event_id),
            Role::Modules => dev.modules.push(ts, end, event_id),
            Role::Kernels if dev.record_kernels => dev.kernels.push(ts, end, event_id),
            _ => {}
        }
        found
    }

    fn next_event_id(&self) -> i64 {
        self.staged_base + self.events.len() as i64
    }

    /// The kernel (an event of a [`Role::Kernels`] track of the current
    /// device, when the device records them) running at the instant
    /// `ts_ps`, as `(start, end, event_id)`.
    pub fn kernel_at(&mut self, ts_ps: i64) -> Option<(i64, i64, i64)> {
        let dev = self.device.as_mut()?;
        if !dev.record_kernels {
            return None;
        }
        dev.kernels.span_containing(ts_ps, 0)
    }

    /// Places a track's events given in any order: sorts them (start
    /// ascending, longer first on a tie, then input order), computes their
    /// nesting and self time, and returns them in output order.
    pub fn place_sorted<T>(
        &mut self,
        track: Track,
        mut items: Vec<Pending<T>>,
    ) -> Vec<(Placed, T)> {
        // Stable: input order breaks the remaining ties.
        items.sort_by_key(|e| (e.ts_ps, std::cmp::Reverse(e.dur_ps)));
        let first = self.next_event_id();
        let mut nester = Nester::<u32>::default();
        let mut placed: Vec<Placed> = Vec::with_capacity(items.len());
        let mut selfs = vec![None; items.len()];
        for (pos, e) in items.iter().enumerate() {
            let event_id = first + pos as i64;
            let (depth, parent_id) = if e.aggregated {
                (0, None)
            } else if track.flat {
                selfs[pos] = Some(e.dur_ps.max(0));
                (0, None)
            } else {
                let (depth, parent) = nester.push(e.ts_ps, e.dur_ps, pos as u32, pos as u32, |o| {
                    selfs[o.data as usize] = Some(o.self_ps())
                });
                (depth as i32, parent.map(|p| first + p.data as i64))
            };
            let [step, module, kernel] = self.contain(track.role, e.ts_ps, e.dur_ps, event_id);
            placed.push(Placed {
                event_id,
                track_id: track.track_id,
                ts_ps: e.ts_ps,
                depth,
                parent_id,
                self_ps: None,
                step_event_id: step,
                module_event_id: module,
                kernel_event_id: kernel,
            });
        }
        nester.finish(|o| selfs[o.data as usize] = Some(o.self_ps()));
        placed
            .into_iter()
            .zip(selfs)
            .zip(items)
            .map(|((mut p, s), e)| {
                p.self_ps = s;
                (p, e.data)
            })
            .collect()
    }

    /// Adds one stat of event `event_id` (`event_args`); stats come with
    /// their event, before its row is pushed.
    #[inline]
    pub fn arg(&mut self, event_id: i64, key: Sym, value: &StatValue<'_>) {
        self.event_args.push(event_id, key, value);
        self.summary.event_stats += 1;
    }

    /// The stat sink and the interner at once (for readers that intern
    /// keys while adding stats).
    #[inline]
    pub fn args_and_interner(&mut self) -> (ArgWriter<'_>, &mut Interner) {
        (
            ArgWriter {
                args: &mut self.event_args,
                count: &mut self.summary.event_stats,
            },
            &mut self.interner,
        )
    }

    /// A counter sample read from event `event_id` (`counters`).
    pub fn counter(&mut self, track: Track, event_id: i64, name: Sym, ts_ps: i64, value: f64) {
        self.counters.push_with(
            &CounterRow {
                trace_id: self.source.trace_id,
                track_id: track.track_id,
                event_id,
                name,
                ts_ps,
                value,
            },
            &mut self.interner,
        );
    }

    /// An endpoint of a flow (`flows.kind = 'flow'`): endpoints with the
    /// same id are linked in time order at the end of the trace.
    pub fn flow_point(&mut self, flow_id: u64, context_type: u8, ts_ps: i64, event_id: i64) {
        self.flows.flow(flow_id, context_type, ts_ps, event_id);
    }

    /// An event with a correlation id: at the end of the trace each device
    /// event is linked from the first host event with the same id.
    pub fn correlation(&mut self, correlation_id: i64, ts_ps: i64, event_id: i64) {
        let on_device = self.device().kind.is_accelerator();
        self.flows
            .correlation(correlation_id, on_device, ts_ps, event_id);
    }

    /// An error when the conversion is past its deadline
    /// ([`ConvertOptions::deadline`]): for readers that read several files
    /// or rows that are not events.
    pub fn check_deadline(&self) -> Result<()> {
        if self.deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(ConvertError::TimedOut {
                path: self.source.path.clone(),
            });
        }
        Ok(())
    }

    /// Pushes the row of a placed event (in placement order). Its stats
    /// and counters are added before.
    pub fn push_event(&mut self, row: &EventRow) -> Result<()> {
        debug_assert_eq!(row.event_id, self.next_event_id());
        self.max_end_ps = self
            .max_end_ps
            .max(row.ts_ps.saturating_add(row.dur_ps.max(0)));
        self.events.push(row);
        self.summary.events += 1;
        if self.summary.events.is_multiple_of(DEADLINE_EVERY_EVENTS)
            && self.deadline.is_some_and(|d| std::time::Instant::now() > d)
        {
            return Err(ConvertError::TimedOut {
                path: self.source.path.clone(),
            });
        }
        let dev = self.device.as_mut().expect("device begun");
        dev.events += 1;
        if let Some(t) = dev
            .tracks
            .get_mut((row.track_id - dev.first_track_id) as usize)
        {
            t.events += 1;
        }
        if self.event_args.len() >= self.batch_rows
            || self.event_args.payload_bytes() >= ARGS_PAYLOAD_LIMIT
        {
            self.flush_event_args()?;
        }
        if !self.streaming && self.events.len() >= self.batch_rows {
            self.flush_all_events()?;
        }
        Ok(())
    }

    fn flush_event_args(&mut self) -> Result<()> {
        if !self.event_args.is_empty() {
            let batch = self
                .event_args
                .finish(&self.interner)
                .map_err(arrow_err(Table::EventArgs))?;
            self.sink.write(Table::EventArgs, batch)?;
        }
        Ok(())
    }

    fn flush_all_events(&mut self) -> Result<()> {
        let end = self.next_event_id();
        self.flush_events(end)
    }

    /// Hands event rows before `upto` to the sink (keeping the rest, whose
    /// self time may still change), and every `event_args` and `counters`
    /// row.
    fn flush_events(&mut self, upto: i64) -> Result<()> {
        let n = (upto - self.staged_base) as usize;
        if n > 0 {
            let batch = self
                .events
                .finish_front(n, &self.interner)
                .map_err(arrow_err(Table::Events))?;
            self.sink.write(Table::Events, batch)?;
            self.staged_base = upto;
        }
        self.flush_event_args()?;
        if !self.counters.is_empty() {
            let batch = self
                .counters
                .finish_with(&self.interner)
                .map_err(arrow_err(Table::Counters))?;
            self.sink.write(Table::Counters, batch)?;
        }
        Ok(())
    }

    /// A row of one of the current device's small tables (`device_args`,
    /// `event_metadata`, `metadata_args`, `stat_metadata`, `hlo_ops`),
    /// written with the device's other rows ([`TraceAssembler::end_device`]).
    /// Rows must come in the table's order.
    pub fn device_row<R: Row>(&mut self, row: &R) {
        self.device_rows.entry(R::TABLE).or_default().push(row);
    }

    /// A row of a table of the trace as a whole (`profile_nodes`,
    /// `node_metrics`), written when the trace ends. Rows must come in the
    /// table's order.
    pub fn trace_row<R: Row>(&mut self, row: &R) {
        self.trace_rows.entry(R::TABLE).or_default().push(row);
    }

    /// Ends the current device: fills its `devices` row (`trace_id`,
    /// `device_id`, `line_count` and `event_count` are filled here) and
    /// its `tracks`. A device's rows are held with those of the devices
    /// before it until they make a batch (`batch_rows`, all tables): a
    /// file of many small devices (20,000 Chrome `pid`s, planes of one
    /// event) gives batches of many devices, not a batch per device and
    /// table, whose fixed costs made time and memory grow with devices.
    pub fn end_device(&mut self, row: DeviceRow<'_>) -> Result<()> {
        let dev = self.device.take().expect("device begun");
        let trace_id = self.source.trace_id;
        self.devices.push(&DeviceRow {
            trace_id,
            device_id: dev.device_id,
            line_count: dev.tracks.len() as i32,
            event_count: dev.events,
            ..row
        });
        for (i, t) in dev.tracks.iter().enumerate() {
            let r = &t.row;
            self.tracks.push(&TrackRow {
                trace_id,
                track_id: dev.first_track_id + i as i32,
                device_id: dev.device_id,
                line_id: r.line_id,
                display_id: r.display_id,
                name: &r.name,
                display_name: &r.display_name,
                kind: r.kind,
                unit: r.unit.as_deref(),
                timestamp_ns: r.timestamp_ns,
                duration_ps: r.duration_ps,
                event_count: t.events,
            });
        }
        self.summary.planes += 1;
        if self.held_rows() >= self.batch_rows || self.interner.bytes() >= INTERNER_BYTES_LIMIT {
            self.flush_devices()?;
        }
        Ok(())
    }

    /// Rows of ended devices not yet handed to the sink, all tables.
    fn held_rows(&self) -> usize {
        self.events.len()
            + self.event_args.len()
            + self.counters.len()
            + self.devices.len()
            + self.tracks.len()
            + self.device_rows.values().map(RowBuffer::len).sum::<usize>()
    }

    /// Hands every row of ended devices to the sink and starts a new
    /// string interner (its symbols are no longer referenced).
    fn flush_devices(&mut self) -> Result<()> {
        self.flush_all_events()?;
        let mut devices = std::mem::take(&mut self.devices);
        self.write(Table::Devices, &mut devices)?;
        let mut tracks = std::mem::take(&mut self.tracks);
        self.write(Table::Tracks, &mut tracks)?;
        for (table, mut rows) in std::mem::take(&mut self.device_rows) {
            self.write(table, &mut rows)?;
        }
        self.interner = Interner::new();
        Ok(())
    }

    fn write(&mut self, table: Table, rows: &mut RowBuffer) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let batch = rows.finish().map_err(arrow_err(table))?;
        self.sink.write(table, batch)
    }

    /// Ends the trace: writes the rows of devices still held, pairs flows
    /// and writes the `traces` row.
    pub fn finish(mut self, info: TraceInfo) -> Result<Summary> {
        if self.device.is_some() {
            return Err(ConvertError::Sink(
                "internal error: the trace ended inside a device".into(),
            ));
        }
        self.flush_devices()?;
        let mut flows = RowBuffer::new();
        if let Some(warning) =
            std::mem::take(&mut self.flows).write(self.source.trace_id, &mut flows)
        {
            self.warn(warning);
        }
        self.write(Table::Flows, &mut flows)?;
        for (table, mut rows) in std::mem::take(&mut self.trace_rows) {
            self.write(table, &mut rows)?;
        }
        let path = self.source.path.to_string_lossy().into_owned();
        let mut traces = RowBuffer::new();
        traces.push(&TraceRow {
            trace_id: self.source.trace_id,
            source_format: self.format,
            source_path: &path,
            run: self.source.run.as_deref(),
            host: &self.source.host,
            start_unix_ns: info.start_unix_ns,
            stop_unix_ns: info.stop_unix_ns,
            duration_ps: self.max_end_ps,
            schema_version: SCHEMA_VERSION,
            converter_version: CONVERTER_VERSION,
            hostnames: &info.hostnames,
            errors: &info.errors,
            warnings: &info.warnings,
            converter_warnings: &self.summary.warnings,
        });
        self.write(Table::Traces, &mut traces)?;
        self.summary.start_unix_ns = info.start_unix_ns;
        Ok(self.summary)
    }
}

/// Adds stats to `event_args` (see [`TraceAssembler::args_and_interner`]).
pub struct ArgWriter<'a> {
    args: &'a mut EventArgsBuilder,
    count: &'a mut u64,
}

impl ArgWriter<'_> {
    /// Adds one stat of event `event_id`.
    #[inline]
    pub fn arg(&mut self, event_id: i64, key: Sym, value: &StatValue<'_>) {
        self.args.push(event_id, key, value);
        *self.count += 1;
    }
}

/// Where an open event's row is, so its self time can be written when it
/// closes.
#[derive(Debug, Clone, Copy)]
struct Slot {
    event_id: i64,
    self_known: bool,
}

/// A track whose events arrive in time order, placed one at a time; see
/// [`TraceAssembler::stream`].
#[derive(Debug)]
pub struct TrackStream {
    track: Track,
    nester: Nester<Slot>,
    index: u32,
}

fn write_self(events: &mut EventsBuilder, staged_base: i64, o: &Open<Slot>) {
    if !o.data.self_known {
        // Rows of events still open are always staged (never flushed).
        *events.self_ps_mut((o.data.event_id - staged_base) as usize) = o.self_ps();
    }
}

impl TrackStream {
    /// The track.
    pub fn track(&self) -> Track {
        self.track
    }

    /// Flushes full batches, holding back rows from the first open event
    /// whose self time is still unknown.
    fn maybe_flush(&self, asm: &mut TraceAssembler<'_>) -> Result<()> {
        if asm.events.len() < asm.batch_rows {
            return Ok(());
        }
        let hold = self
            .nester
            .open()
            .iter()
            .filter(|o| !o.data.self_known)
            .map(|o| o.data.event_id)
            .min();
        let upto = hold.unwrap_or(asm.next_event_id());
        if upto - asm.staged_base >= (asm.batch_rows as i64 / 2).max(1) {
            asm.flush_events(upto)?;
        }
        Ok(())
    }

    /// Places the next timed event. `known_self_ps` is its self time when
    /// the reader knows it already (a long-open event, precomputed), so
    /// its row never holds a batch back.
    #[inline]
    pub fn place(
        &mut self,
        asm: &mut TraceAssembler<'_>,
        ts_ps: i64,
        dur_ps: i64,
        known_self_ps: Option<i64>,
    ) -> Result<Placed> {
        self.maybe_flush(asm)?;
        let event_id = asm.next_event_id();
        let slot = Slot {
            event_id,
            self_known: known_self_ps.is_some(),
        };
        let (events, base) = (&mut asm.events, asm.staged_base);
        let (depth, parent_id, self_ps) = if self.track.flat {
            (0, None, Some(known_self_ps.unwrap_or(dur_ps.max(0))))
        } else {
            let (depth, parent) = self.nester.push(ts_ps, dur_ps, self.index, slot, |o| {
                write_self(events, base, o)
            });
            (depth, parent.map(|p| p.data.event_id), known_self_ps)
        };
        self.index += 1;
        let [step, module, kernel] = asm.contain(self.track.role, ts_ps, dur_ps, event_id);
        Ok(Placed {
            event_id,
            track_id: self.track.track_id,
            ts_ps,
            depth: depth as i32,
            parent_id,
            self_ps,
            step_event_id: step,
            module_event_id: module,
            kernel_event_id: kernel,
        })
    }

    /// Places the next aggregated event (not nested).
    pub fn place_aggregated(
        &mut self,
        asm: &mut TraceAssembler<'_>,
        ts_ps: i64,
        dur_ps: i64,
    ) -> Result<Placed> {
        self.maybe_flush(asm)?;
        let event_id = asm.next_event_id();
        self.index += 1;
        let [step, module, kernel] = asm.contain(self.track.role, ts_ps, dur_ps, event_id);
        Ok(Placed {
            event_id,
            track_id: self.track.track_id,
            ts_ps,
            depth: 0,
            parent_id: None,
            self_ps: None,
            step_event_id: step,
            module_event_id: module,
            kernel_event_id: kernel,
        })
    }

    /// Closes the track's open events.
    pub fn finish(mut self, asm: &mut TraceAssembler<'_>) {
        let (events, base) = (&mut asm.events, asm.staged_base);
        self.nester.finish(|o| write_self(events, base, o));
        asm.streaming = false;
    }
}
