//! The second pass: planes to rows.

use std::borrow::Cow;

use xprof_format::hash::{FxHashMap, FxHashSet};
use xprof_format::schema::{CONVERTER_VERSION, SCHEMA_VERSION};
use xprof_format::{
    EventArgsBuilder, EventRow, EventsBuilder, Interner, StatValue, Sym, Table, TableBuilder,
};

use super::meta::{PlaneMeta, Promoted, StatKind, decode_stat, for_each_stat};
use super::scan::{
    EventHeader, LineScan, PlaneScan, ReleaseBehind, ReleaseFn, Span, event_header, scan_plane,
    scan_space,
};
use super::{Summary, TraceSource, XSpaceOptions, malformed};
use crate::error::{ConvertError, Result};
use crate::nest::{Nester, Open};
use crate::pb::{PbError, PbResult};
use crate::sink::TableSink;

/// Kind of a plane, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceKind {
    Host,
    HostOther,
    Gpu,
    Tpu,
    SparseCore,
    Custom,
    Metadata,
    TaskEnvironment,
    Other,
}

impl DeviceKind {
    pub fn of(name: &str) -> (DeviceKind, Option<i32>) {
        let num = |s: &str| {
            s.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok())
        };
        if name == "/host:CPU" {
            (DeviceKind::Host, None)
        } else if name == "/host:metadata" {
            (DeviceKind::Metadata, None)
        } else if name == "Task Environment" {
            (DeviceKind::TaskEnvironment, None)
        } else if let Some(rest) = name.strip_prefix("/device:GPU:") {
            (DeviceKind::Gpu, num(rest))
        } else if let Some(rest) = name.strip_prefix("/device:TPU:") {
            if rest.contains("SparseCore") {
                (DeviceKind::SparseCore, num(rest))
            } else {
                (DeviceKind::Tpu, num(rest))
            }
        } else if name.starts_with("/device:CUSTOM:") {
            (DeviceKind::Custom, None)
        } else if name.starts_with("/host:") {
            (DeviceKind::HostOther, None)
        } else {
            (DeviceKind::Other, None)
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Host => "host",
            DeviceKind::HostOther => "host_other",
            DeviceKind::Gpu => "gpu",
            DeviceKind::Tpu => "tpu",
            DeviceKind::SparseCore => "sparse_core",
            DeviceKind::Custom => "custom",
            DeviceKind::Metadata => "metadata",
            DeviceKind::TaskEnvironment => "task_environment",
            DeviceKind::Other => "other",
        }
    }

    pub fn is_device(self) -> bool {
        matches!(
            self,
            DeviceKind::Gpu | DeviceKind::Tpu | DeviceKind::SparseCore | DeviceKind::Custom
        )
    }
}

/// Kind of a line, from its name and its plane's kind.
pub(crate) fn track_kind(name: &str, device: DeviceKind) -> &'static str {
    match name {
        "Steps" => "steps",
        "XLA Modules" => "xla_modules",
        "XLA Ops" => "xla_ops",
        "Async XLA Ops" => "async_xla_ops",
        "XLA TraceMe" => "traceme",
        "Framework Ops" => "framework_ops",
        "Framework Name Scope" => "framework_name_scope",
        "Source code" => "source",
        "_counters_" => "counters",
        "Launch Stats" => "launch_stats",
        "Sparse Core Steps" => "sparse_core_steps",
        "Sparse Core Modules" => "sparse_core_modules",
        "Sparse Core Ops" => "sparse_core_ops",
        "Host Offload Ops" => "host_offload_ops",
        _ if device == DeviceKind::Gpu && name.starts_with("Stream") => "stream",
        _ if matches!(device, DeviceKind::Host | DeviceKind::HostOther) => "thread",
        _ => "other",
    }
}

/// `event_args` batches are finished early when their string and binary
/// values reach this size, bounding memory with very long stat strings.
const ARGS_PAYLOAD_LIMIT: usize = 64 << 20;

/// Where an open event's row is (its number among all event rows of the
/// trace), so its self time can be written when it closes.
#[derive(Debug, Clone, Copy)]
struct Slot {
    row: u64,
    self_known: bool,
}

/// Intervals of a `Steps` or `XLA Modules` line, sorted by start.
#[derive(Debug, Default)]
struct Containers {
    spans: Vec<(i64, i64, i64)>,
}

impl Containers {
    /// The interval that contains `[ts, ts + dur)`.
    fn find(&self, ts: i64, dur: i64) -> Option<i64> {
        let end = ts.saturating_add(dur.max(0));
        let upto = self.spans.partition_point(|s| s.0 <= ts);
        self.spans[..upto]
            .iter()
            .rev()
            .take(8)
            .find(|s| end <= s.1)
            .map(|s| s.2)
    }
}

/// One endpoint of an XSpace flow.
#[derive(Debug, Clone, Copy)]
struct FlowPoint {
    flow_id: u64,
    ts_ps: i64,
    event_id: i64,
    context: u8,
}

/// One event with a correlation id.
#[derive(Debug, Clone, Copy)]
struct CorrPoint {
    correlation_id: i64,
    on_device: bool,
    ts_ps: i64,
    event_id: i64,
}

/// Per-plane state of the second pass.
struct PlaneCtx<'a> {
    device_id: i32,
    kind: DeviceKind,
    meta: PlaneMeta<'a>,
    interner: Interner,
    steps: Containers,
    modules: Containers,
    /// Metadata ids used on `XLA Ops` lines (for `hlo_ops`).
    op_metadata: FxHashSet<i64>,
    /// Cache of `event name/stat name` counter names.
    counter_names: FxHashMap<(i64, u64), Sym>,
    unknown_metadata: u64,
    unknown_stats: u64,
}

pub(crate) struct Converter<'a, 's> {
    bytes: &'a [u8],
    release: Option<ReleaseFn<'a>>,
    source: &'a TraceSource,
    options: &'a XSpaceOptions,
    sink: &'s mut dyn TableSink,
    trace_id: i32,
    origin_ns: i64,
    /// Event rows not yet handed to the sink; their `self_ps` is patched
    /// when the event closes.
    events: EventsBuilder,
    event_args: EventArgsBuilder,
    counters: TableBuilder,
    /// Row number (among all event rows of the trace) of the first row in
    /// `events`.
    staged_base: u64,
    next_track_id: i32,
    flow_points: Vec<FlowPoint>,
    corr_points: Vec<CorrPoint>,
    max_end_ps: i64,
    summary: Summary,
    bytes_done: u64,
}

impl<'a, 's> Converter<'a, 's> {
    pub fn new(
        bytes: &'a [u8],
        source: &'a TraceSource,
        options: &'a XSpaceOptions,
        sink: &'s mut dyn TableSink,
        release: Option<ReleaseFn<'a>>,
    ) -> Self {
        let cap = options.batch_rows.min(1 << 16);
        Self {
            bytes,
            release,
            source,
            options,
            sink,
            trace_id: source.trace_id,
            origin_ns: 0,
            events: EventsBuilder::new(source.trace_id, cap),
            event_args: EventArgsBuilder::new(source.trace_id, cap),
            counters: TableBuilder::new(Table::Counters),
            staged_base: 0,
            next_track_id: 0,
            flow_points: Vec::new(),
            corr_points: Vec::new(),
            max_end_ps: 0,
            summary: Summary::default(),
            bytes_done: 0,
        }
    }

    fn err(&self, e: PbError) -> ConvertError {
        malformed(&self.source.path, e)
    }

    pub fn run(mut self) -> Result<Summary> {
        let bytes = self.bytes;
        let space = scan_space(bytes).map_err(|e| self.err(e))?;
        let mut planes = Vec::with_capacity(space.planes.len());
        for span in &space.planes {
            planes.push(scan_plane(*span, self.release).map_err(|e| self.err(e))?);
            self.release_span(span);
        }
        let (start_ns, stop_ns) = self.task_environment(&planes)?;
        // Files written by JAX/TSL are normalized to the profile start; a
        // file with epoch timestamps is shifted so ts 0 is the start.
        let min_line_ns = planes
            .iter()
            .flat_map(|p| p.lines.iter())
            .map(|l| l.timestamp_ns)
            .min();
        if min_line_ns.is_some_and(|t| t > 100_000_000_000_000_000) {
            self.origin_ns = start_ns.or(min_line_ns).unwrap_or(0);
        }
        let mut base: i64 = 0;
        for ((device_id, plane), span) in planes.iter().enumerate().zip(&space.planes) {
            self.convert_plane(device_id as i32, plane, base)?;
            base += plane.event_count as i64;
            // Spans released one by one leave their edge pages: drop the
            // whole plane once it is done.
            self.release_span(span);
        }
        self.flush_flows()?;
        self.write_trace(&space, start_ns, stop_ns)?;
        Ok(self.summary)
    }

    /// `profile_start_time`/`profile_stop_time` of the `Task Environment` plane.
    fn task_environment(&mut self, planes: &[PlaneScan<'a>]) -> Result<(Option<i64>, Option<i64>)> {
        let Some(p) = planes.iter().find(|p| p.name == "Task Environment") else {
            return Ok((None, None));
        };
        let mut interner = Interner::new();
        let mut warnings = Vec::new();
        let meta = PlaneMeta::load(&p.stat_metadata, &[], &mut interner, &mut warnings)
            .map_err(|e| self.err(e))?;
        let (mut start, mut stop) = (None, None);
        for s in &p.stats {
            let raw = decode_stat(*s).map_err(|e| self.err(e))?;
            let v = meta.resolve(raw.value).map_err(|e| self.err(e))?;
            match meta.stats.get(&raw.metadata_id).map(|s| s.name.as_ref()) {
                Some("profile_start_time") => start = v.as_i64(),
                Some("profile_stop_time") => stop = v.as_i64(),
                _ => {}
            }
        }
        Ok((start, stop))
    }

    fn release_span(&self, span: &Span<'_>) {
        if let Some(r) = self.release {
            r(span.offset, span.offset + span.bytes.len() as u64);
        }
    }

    fn progress(&mut self, n: u64) {
        self.bytes_done += n;
        if let Some(p) = &self.options.progress {
            p(self.bytes_done, self.bytes.len() as u64);
        }
    }

    fn convert_plane(
        &mut self,
        device_id: i32,
        plane: &PlaneScan<'a>,
        event_base: i64,
    ) -> Result<()> {
        let (kind, ordinal) = DeviceKind::of(&plane.name);
        let mut interner = Interner::new();
        let meta = PlaneMeta::load(
            &plane.stat_metadata,
            &plane.event_metadata,
            &mut interner,
            &mut self.summary.warnings,
        )
        .map_err(|e| self.err(e))?;
        let mut ctx = PlaneCtx {
            device_id,
            kind,
            meta,
            interner,
            steps: Containers::default(),
            modules: Containers::default(),
            op_metadata: FxHashSet::default(),
            counter_names: FxHashMap::default(),
            unknown_metadata: 0,
            unknown_stats: 0,
        };
        // Line event-id bases in file order.
        let mut bases = Vec::with_capacity(plane.lines.len());
        let mut b = event_base;
        for l in &plane.lines {
            bases.push(b);
            b += l.event_count as i64;
        }
        if kind.is_device() {
            for (l, base) in plane.lines.iter().zip(&bases) {
                let target = match l.name.as_ref() {
                    "Steps" | "Sparse Core Steps" => &mut ctx.steps,
                    "XLA Modules" | "Sparse Core Modules" => &mut ctx.modules,
                    _ => continue,
                };
                let ts_base = self.line_base_ps(l);
                let mut idx = 0i64;
                each_event(l, |h| {
                    let ts = ts_base.saturating_add(h.offset_ps);
                    target
                        .spans
                        .push((ts, ts.saturating_add(h.duration_ps.max(0)), base + idx));
                    idx += 1;
                    Ok(())
                })
                .map_err(|e| self.err(e))?;
                target.spans.sort_unstable();
            }
        }
        // Tracks: lines with the same id are one track, emitted together.
        let mut track_of: FxHashMap<i64, usize> = FxHashMap::default();
        let mut groups: Vec<Vec<(&LineScan<'a>, i64)>> = Vec::new();
        for (l, base) in plane.lines.iter().zip(&bases) {
            let g = *track_of.entry(l.id).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push((l, *base));
        }
        let mut tracks: Vec<(i32, &LineScan<'a>, u64)> = Vec::with_capacity(groups.len());
        for chunks in &groups {
            let track_id = self.next_track_id;
            self.next_track_id += 1;
            let count = chunks.iter().map(|(l, _)| l.event_count as u64).sum();
            tracks.push((track_id, chunks[0].0, count));
            if let [(l, base)] = chunks.as_slice()
                && l.sorted
            {
                self.emit_sorted_line(&mut ctx, l, track_id, *base)?;
            } else {
                self.emit_buffered_track(&mut ctx, chunks, track_id)?;
            }
            if self.events.len() >= self.options.batch_rows {
                self.flush_all_events(&ctx.interner)?;
            }
            self.summary.lines += chunks.len();
            for (l, _) in chunks {
                self.release_span(&l.span);
            }
            self.progress(chunks.iter().map(|(l, _)| l.span.bytes.len() as u64).sum());
        }
        if ctx.unknown_metadata > 0 {
            self.summary.warnings.push(format!(
                "{}: {} events with unknown event-metadata ids (kept with an empty name)",
                plane.name, ctx.unknown_metadata
            ));
        }
        if ctx.unknown_stats > 0 {
            self.summary.warnings.push(format!(
                "{}: {} event stats with unknown stat-metadata ids (kept as `#<id>`)",
                plane.name, ctx.unknown_stats
            ));
        }
        self.flush_all_events(&ctx.interner)?;
        self.write_plane_tables(&ctx, plane, ordinal, &tracks)?;
        self.summary.planes += 1;
        self.summary.events += plane.event_count;
        // The metadata's pages go with the whole plane (`run`).
        let rest = plane
            .event_metadata
            .iter()
            .chain(&plane.stat_metadata)
            .chain(&plane.stats);
        let meta_bytes: u64 = rest.map(|s| s.bytes.len() as u64).sum();
        self.progress(meta_bytes);
        Ok(())
    }

    fn line_base_ps(&self, l: &LineScan<'_>) -> i64 {
        l.timestamp_ns
            .saturating_sub(self.origin_ns)
            .saturating_mul(1000)
    }

    /// A line in time order: streamed in bounded batches.
    fn emit_sorted_line(
        &mut self,
        ctx: &mut PlaneCtx<'a>,
        l: &LineScan<'a>,
        track_id: i32,
        base: i64,
    ) -> Result<()> {
        let ts_base = self.line_base_ps(l);
        let role = LineRole::of(l.name.as_ref(), ctx.kind);
        let on_counters = track_kind(&l.name, ctx.kind) == "counters";
        let mut nester = Nester::<Slot>::default();
        let mut index: u32 = 0;
        let mut line_events = l.span.cursor();
        let mut behind = ReleaseBehind::new(self.release, l.span.offset);
        while !line_events.is_empty() {
            let (field, wire) = line_events.tag().map_err(|e| self.err(e))?;
            if field != 4 {
                line_events.skip(wire).map_err(|e| self.err(e))?;
                continue;
            }
            let (bytes, offset) = line_events.len_field(wire).map_err(|e| self.err(e))?;
            behind.at(offset);
            let h = event_header(Span { bytes, offset }).map_err(|e| self.err(e))?;
            let event_id = base + index as i64;
            if h.num_occurrences.is_some() {
                let ev = EventAt {
                    h,
                    event_id,
                    ts: ts_base,
                    depth: 0,
                    parent_id: None,
                    self_ps: None,
                };
                self.push_event(ctx, &ev, track_id, role, on_counters)?;
            } else {
                let known = l.long_self.get(&index).copied();
                let slot = Slot {
                    row: self.staged_end(),
                    self_known: known.is_some(),
                };
                let (events, base_row) = (&mut self.events, self.staged_base);
                let (depth, parent) = nester.push(h.offset_ps, h.duration_ps, index, slot, |o| {
                    write_self(events, base_row, o)
                });
                let parent_id = parent.map(|p| base + p.index as i64);
                let ts = ts_base.saturating_add(h.offset_ps);
                let ev = EventAt {
                    h,
                    event_id,
                    ts,
                    depth,
                    parent_id,
                    self_ps: known,
                };
                self.push_event(ctx, &ev, track_id, role, on_counters)?;
                if self.events.len() >= self.options.batch_rows {
                    // Rows from the first open event whose self time is
                    // still unknown on are held back (it closes within
                    // LONG_OPEN_EVENTS events; longer ones are known).
                    let hold = nester
                        .open()
                        .iter()
                        .filter(|o| !o.data.self_known)
                        .map(|o| o.data.row)
                        .min();
                    let upto = hold.unwrap_or(self.staged_end());
                    if upto - self.staged_base >= (self.options.batch_rows as u64 / 2).max(1) {
                        self.flush_events(&ctx.interner, upto)?;
                    }
                }
            }
            index += 1;
        }
        let (events, base_row) = (&mut self.events, self.staged_base);
        nester.finish(|o| write_self(events, base_row, o));
        Ok(())
    }

    /// A track whose events are out of time order, or split over several
    /// lines with the same id: held whole and sorted.
    fn emit_buffered_track(
        &mut self,
        ctx: &mut PlaneCtx<'a>,
        chunks: &[(&LineScan<'a>, i64)],
        track_id: i32,
    ) -> Result<()> {
        let first = chunks[0].0;
        if chunks.len() > 1 {
            self.summary.warnings.push(format!(
                "{} lines share id {} ({:?}): merged into one track",
                chunks.len(),
                first.id,
                first.name
            ));
        } else {
            self.summary.warnings.push(format!(
                "line {:?} (id {}): events out of time order; sorted in memory",
                first.name, first.id
            ));
        }
        let role = LineRole::of(first.name.as_ref(), ctx.kind);
        let on_counters = track_kind(&first.name, ctx.kind) == "counters";
        let mut all: Vec<EventAt<'a>> = Vec::new();
        for (l, base) in chunks {
            let ts_base = self.line_base_ps(l);
            let mut index = 0i64;
            each_event(l, |h| {
                let ts = if h.num_occurrences.is_some() {
                    ts_base
                } else {
                    ts_base.saturating_add(h.offset_ps)
                };
                all.push(EventAt {
                    h,
                    event_id: base + index,
                    ts,
                    depth: 0,
                    parent_id: None,
                    self_ps: None,
                });
                index += 1;
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        }
        all.sort_by_key(|e| (e.ts, std::cmp::Reverse(e.h.duration_ps), e.event_id));
        // Nesting and self times of the timed events, all known before any
        // row is written.
        let mut nester = Nester::<u32>::default();
        let mut selfs = vec![0i64; all.len()];
        for pos in 0..all.len() {
            if all[pos].h.num_occurrences.is_some() {
                continue;
            }
            let (ts, dur) = (all[pos].ts, all[pos].h.duration_ps);
            let (depth, parent) = nester.push(ts, dur, pos as u32, pos as u32, |o| {
                selfs[o.data as usize] = o.self_ps()
            });
            all[pos].depth = depth;
            all[pos].parent_id = parent.map(|p| all[p.data as usize].event_id);
        }
        nester.finish(|o| selfs[o.data as usize] = o.self_ps());
        for (pos, mut ev) in all.into_iter().enumerate() {
            if ev.h.num_occurrences.is_none() {
                ev.self_ps = Some(selfs[pos]);
            }
            self.push_event(ctx, &ev, track_id, role, on_counters)?;
            if self.events.len() >= self.options.batch_rows {
                self.flush_all_events(&ctx.interner)?;
            }
        }
        Ok(())
    }

    /// Writes one event's rows: `events`, `event_args`, `counters`, and
    /// remembers its flow and correlation endpoints.
    fn push_event(
        &mut self,
        ctx: &mut PlaneCtx<'a>,
        at: &EventAt<'a>,
        track_id: i32,
        role: LineRole,
        on_counters: bool,
    ) -> Result<()> {
        let EventAt {
            h,
            event_id,
            ts,
            depth,
            parent_id,
            self_ps,
        } = *at;
        let trace_id = self.trace_id;
        let (name_sym, display_sym, mut p) = match ctx.meta.events.get(&h.metadata_id) {
            Some(m) => (m.name_sym, m.display_sym, m.promoted),
            None => {
                ctx.unknown_metadata += 1;
                (ctx.meta.empty_sym, ctx.meta.empty_sym, Promoted::default())
            }
        };
        if role == LineRole::Ops {
            ctx.op_metadata.insert(h.metadata_id);
        }
        let aggregated = h.num_occurrences.is_some();
        let dur = h.duration_ps;
        self.max_end_ps = self.max_end_ps.max(ts.saturating_add(dur.max(0)));

        // Own stats: every one to event_args, the well-known ones promoted.
        let mut stat_count: i32 = 0;
        let args = &mut self.event_args;
        let meta = &ctx.meta;
        let interner = &mut ctx.interner;
        let counters = &mut self.counters;
        let mut unknown = 0u64;
        let mut counter_stats: Vec<(u64, f64)> = Vec::new();
        for_each_stat(h.body, 4, |span| {
            let raw = decode_stat(span)?;
            let (key, kind) = match meta.stat_key(raw.metadata_id) {
                Some(k) => k,
                None => {
                    unknown += 1;
                    (
                        interner.intern(&format!("#{}", raw.metadata_id)),
                        StatKind::Other,
                    )
                }
            };
            let v = meta.resolve(raw.value)?;
            args.push(event_id, key, &v);
            p.apply(kind, &v, interner);
            if on_counters
                && kind != StatKind::CounterValue
                && let Some(x) = v.as_f64()
            {
                counter_stats.push((raw.metadata_id, x));
            }
            stat_count += 1;
            Ok(())
        })
        .map_err(|e| malformed(&self.source.path, e))?;
        ctx.unknown_stats += unknown;
        self.summary.event_stats += stat_count as u64;

        // Counters.
        if let Some(v) = p.counter_value {
            push_counter(counters, trace_id, track_id, event_id, name_sym, ts, v);
        }
        for (stat_id, v) in counter_stats {
            let name = *ctx
                .counter_names
                .entry((h.metadata_id, stat_id))
                .or_insert_with(|| {
                    let ev = ctx.interner.get(name_sym).to_string();
                    let st = ctx
                        .meta
                        .stats
                        .get(&stat_id)
                        .map(|s| s.name.to_string())
                        .unwrap_or_else(|| format!("#{stat_id}"));
                    ctx.interner.intern(&format!("{ev}/{st}"))
                });
            push_counter(counters, trace_id, track_id, event_id, name, ts, v);
        }

        // Flows and correlation ids, paired at the end of the trace.
        if let Some(flow) = p.flow {
            self.flow_points.push(FlowPoint {
                flow_id: (flow >> 2) & ((1u64 << 56) - 1),
                ts_ps: ts,
                event_id,
                context: (flow >> 58) as u8,
            });
        }
        if let Some(c) = p.correlation_id {
            self.corr_points.push(CorrPoint {
                correlation_id: c,
                on_device: ctx.kind.is_device(),
                ts_ps: ts,
                event_id,
            });
        }

        let (step_event_id, module_event_id) = match role {
            LineRole::Steps => (None, None),
            LineRole::Modules => (ctx.steps.find(ts, dur), None),
            _ if ctx.kind.is_device() => (ctx.steps.find(ts, dur), ctx.modules.find(ts, dur)),
            _ => (None, None),
        };
        let self_value = if aggregated {
            p.self_duration_ps.unwrap_or(dur)
        } else {
            self_ps.unwrap_or(0)
        };

        self.events.push(&EventRow {
            event_id,
            track_id,
            metadata_id: h.metadata_id,
            name: name_sym,
            display_name: display_sym,
            ts_ps: ts,
            dur_ps: dur,
            self_ps: self_value,
            depth: depth as i32,
            parent_id,
            occurrences: h.num_occurrences.map_or(1, |n| n.max(1)),
            device_offset_ps: p.device_offset_ps,
            device_duration_ps: p.device_duration_ps,
            hlo_op: p.hlo_op,
            hlo_module: p.hlo_module,
            program_id: p.program_id,
            tf_op: p.tf_op,
            hlo_category: p.hlo_category,
            flops: p.flops,
            bytes_accessed: p.bytes_accessed,
            correlation_id: p.correlation_id,
            group_id: p.group_id,
            step_num: p.step_num,
            step_event_id,
            module_event_id,
            kernel_event_id: None,
            stat_count,
        });

        if self.event_args.len() >= self.options.batch_rows
            || self.event_args.payload_bytes() >= ARGS_PAYLOAD_LIMIT
        {
            self.flush_event_args(&ctx.interner)?;
        }
        Ok(())
    }

    /// Hands every held `event_args` row to the sink.
    fn flush_event_args(&mut self, interner: &Interner) -> Result<()> {
        if !self.event_args.is_empty() {
            let batch = self
                .event_args
                .finish(interner)
                .map_err(arrow_err(Table::EventArgs))?;
            self.sink.write(Table::EventArgs, batch)?;
        }
        Ok(())
    }

    /// Row number after the last staged event row.
    fn staged_end(&self) -> u64 {
        self.staged_base + self.events.len() as u64
    }

    fn flush_all_events(&mut self, interner: &Interner) -> Result<()> {
        let end = self.staged_end();
        self.flush_events(interner, end)
    }

    /// Hands event rows before row `upto` to the sink (keeping the rest,
    /// whose self time may still change), and every `event_args` and
    /// `counters` row.
    fn flush_events(&mut self, interner: &Interner, upto: u64) -> Result<()> {
        let n = (upto - self.staged_base) as usize;
        if n > 0 {
            let batch = self
                .events
                .finish_front(n, interner)
                .map_err(arrow_err(Table::Events))?;
            self.sink.write(Table::Events, batch)?;
            self.staged_base = upto;
        }
        self.flush_event_args(interner)?;
        if !self.counters.is_empty() {
            let batch = self
                .counters
                .finish(interner)
                .map_err(arrow_err(Table::Counters))?;
            self.sink.write(Table::Counters, batch)?;
        }
        Ok(())
    }

    /// `devices`, `device_args`, `tracks`, `event_metadata`,
    /// `metadata_args`, `stat_metadata`, `hlo_ops` rows of one plane.
    fn write_plane_tables(
        &mut self,
        ctx: &PlaneCtx<'a>,
        plane: &PlaneScan<'a>,
        ordinal: Option<i32>,
        tracks: &[(i32, &LineScan<'a>, u64)],
    ) -> Result<()> {
        let (trace_id, device_id) = (self.trace_id, ctx.device_id);
        let err = |e: PbError| malformed(&self.source.path, e);
        let meta = &ctx.meta;
        let mut interner = Interner::new();

        // Plane stats.
        let mut args = TableBuilder::new(Table::DeviceArgs);
        let mut plane_stats: FxHashMap<&str, StatValue<'_>> = FxHashMap::default();
        for s in &plane.stats {
            let raw = decode_stat(*s).map_err(err)?;
            let v = meta.resolve(raw.value).map_err(err)?;
            let key: Cow<'_, str> = match meta.stats.get(&raw.metadata_id) {
                Some(st) => Cow::Borrowed(st.name.as_ref()),
                None => Cow::Owned(format!("#{}", raw.metadata_id)),
            };
            args.i32(0).append_value(trace_id);
            args.i32(1).append_value(device_id);
            args.utf8(2).append_value(&key);
            let ty = interner.intern(v.type_name());
            args.push_value(3, &v, ty);
            if let Cow::Borrowed(k) = key {
                plane_stats.insert(k, v);
            }
        }
        self.sink.write(
            Table::DeviceArgs,
            args.finish(&interner)
                .map_err(arrow_err(Table::DeviceArgs))?,
        )?;

        let mut d = TableBuilder::new(Table::Devices);
        let f = |k: &str| plane_stats.get(k).and_then(|v| v.as_f64());
        d.i32(0).append_value(trace_id);
        d.i32(1).append_value(device_id);
        d.i64(2).append_value(plane.id);
        d.utf8(3).append_value(&plane.name);
        d.utf8(4).append_value(ctx.kind.name());
        d.i32(5).append_option(ordinal);
        d.utf8(6).append_option(
            plane_stats
                .get("device_type_string")
                .and_then(|v| v.as_str()),
        );
        d.utf8(7)
            .append_option(plane_stats.get("device_vendor").and_then(|v| v.as_str()));
        d.f64(8).append_option(f("peak_teraflops_per_second"));
        d.f64(9)
            .append_option(f("peak_hbm_bw_gigabytes_per_second"));
        d.f64(10).append_option(f("clock_rate"));
        d.i64(11)
            .append_option(plane_stats.get("core_count").and_then(|v| v.as_i64()));
        d.i32(12).append_value(tracks.len() as i32);
        d.i64(13).append_value(plane.event_count as i64);
        d.i32(14).append_value(plane.stats.len() as i32);
        self.sink.write(
            Table::Devices,
            d.finish(&interner).map_err(arrow_err(Table::Devices))?,
        )?;

        let mut t = TableBuilder::new(Table::Tracks);
        for (track_id, l, count) in tracks {
            t.i32(0).append_value(trace_id);
            t.i32(1).append_value(*track_id);
            t.i32(2).append_value(device_id);
            t.i64(3).append_value(l.id);
            t.i64(4).append_value(l.display_id);
            t.utf8(5).append_value(&l.name);
            t.utf8(6).append_value(&l.display_name);
            t.utf8(7).append_value(track_kind(&l.name, ctx.kind));
            t.utf8(8).append_null();
            t.i64(9).append_value(l.timestamp_ns);
            t.i64(10).append_value(l.duration_ps);
            t.i64(11).append_value(*count as i64);
        }
        self.sink.write(
            Table::Tracks,
            t.finish(&interner).map_err(arrow_err(Table::Tracks))?,
        )?;

        let mut sm = TableBuilder::new(Table::StatMetadata);
        for id in &meta.stat_order {
            let s = &meta.stats[id];
            sm.i32(0).append_value(trace_id);
            sm.i32(1).append_value(device_id);
            sm.i64(2).append_value(*id as i64);
            sm.utf8(3).append_value(&s.name);
            sm.utf8(4)
                .append_option((!s.description.is_empty()).then_some(s.description.as_ref()));
        }
        self.sink.write(
            Table::StatMetadata,
            sm.finish(&interner)
                .map_err(arrow_err(Table::StatMetadata))?,
        )?;

        let mut em = TableBuilder::new(Table::EventMetadata);
        let mut ma = TableBuilder::new(Table::MetadataArgs);
        let mut ops = TableBuilder::new(Table::HloOps);
        let mut arg_interner = Interner::new();
        for id in &meta.event_order {
            let m = &meta.events[id];
            em.i32(0).append_value(trace_id);
            em.i32(1).append_value(device_id);
            em.i64(2).append_value(*id);
            em.utf8(3).append_value(&m.name);
            em.utf8(4)
                .append_option((!m.display_name.is_empty()).then_some(m.display_name.as_ref()));
            em.binary(5)
                .append_option((!m.metadata.is_empty()).then_some(m.metadata));
            let list = em.list_i64(6);
            list.values().append_slice(&m.child_ids);
            list.append(true);
            em.i32(7).append_value(m.stats.len() as i32);
            for s in &m.stats {
                let raw = decode_stat(*s).map_err(err)?;
                let v = meta.resolve(raw.value).map_err(err)?;
                let key = match meta.stats.get(&raw.metadata_id) {
                    Some(st) => arg_interner.intern(&st.name),
                    None => arg_interner.intern(&format!("#{}", raw.metadata_id)),
                };
                ma.i32(0).append_value(trace_id);
                ma.i32(1).append_value(device_id);
                ma.i64(2).append_value(*id);
                ma.dict(3).push(key);
                let ty = arg_interner.intern(v.type_name());
                ma.push_value(4, &v, ty);
            }
            let p = &m.promoted;
            if p.has_cost_model() || (ctx.kind.is_device() && ctx.op_metadata.contains(id)) {
                let s = |x: Option<Sym>| x.map(|x| ctx.interner.get(x));
                ops.i32(0).append_value(trace_id);
                ops.i32(1).append_value(device_id);
                ops.i64(2).append_value(*id);
                ops.i64(3).append_option(p.program_id);
                ops.utf8(4).append_option(s(p.hlo_module));
                let op_name = s(p.hlo_op).unwrap_or(if m.display_name.is_empty() {
                    &m.name
                } else {
                    &m.display_name
                });
                ops.utf8(5).append_value(op_name);
                ops.utf8(6).append_option(s(p.hlo_category));
                ops.utf8(7).append_value(&m.name);
                ops.utf8(8).append_option(s(p.shape));
                ops.i64(9).append_option(p.flops);
                ops.i64(10).append_option(p.model_flops);
                ops.i64(11).append_option(p.bytes_accessed);
                ops.utf8(12).append_option(s(p.tf_op));
                ops.utf8(13).append_option(s(p.source));
            }
        }
        self.sink.write(
            Table::EventMetadata,
            em.finish(&interner)
                .map_err(arrow_err(Table::EventMetadata))?,
        )?;
        self.sink.write(
            Table::MetadataArgs,
            ma.finish(&arg_interner)
                .map_err(arrow_err(Table::MetadataArgs))?,
        )?;
        self.sink.write(
            Table::HloOps,
            ops.finish(&interner).map_err(arrow_err(Table::HloOps))?,
        )?;
        Ok(())
    }

    fn flush_flows(&mut self) -> Result<()> {
        let mut f = TableBuilder::new(Table::Flows);
        let trace_id = self.trace_id;
        let row = |f: &mut TableBuilder,
                   id: i64,
                   kind: &str,
                   ctx: Option<i32>,
                   src: Option<i64>,
                   dst: Option<i64>| {
            f.i32(0).append_value(trace_id);
            f.i64(1).append_value(id);
            f.utf8(2).append_value(kind);
            f.i32(3).append_option(ctx);
            f.i64(4).append_option(src);
            f.i64(5).append_option(dst);
        };
        // Correlation ids: each device event is linked from the first host
        // event with the same id.
        let mut corr = std::mem::take(&mut self.corr_points);
        corr.sort_unstable_by_key(|c| (c.correlation_id, c.on_device, c.ts_ps, c.event_id));
        for group in corr.chunk_by(|a, b| a.correlation_id == b.correlation_id) {
            let host = group.iter().find(|c| !c.on_device).map(|c| c.event_id);
            let devices: Vec<_> = group.iter().filter(|c| c.on_device).collect();
            if devices.is_empty() {
                row(
                    &mut f,
                    group[0].correlation_id,
                    "correlation_id",
                    None,
                    host,
                    None,
                );
            }
            for d in devices {
                row(
                    &mut f,
                    d.correlation_id,
                    "correlation_id",
                    None,
                    host,
                    Some(d.event_id),
                );
            }
        }
        // XSpace flows: endpoints of one flow id in time order, linked
        // one to the next.
        let mut flows = std::mem::take(&mut self.flow_points);
        flows.sort_unstable_by_key(|p| (p.flow_id, p.ts_ps, p.event_id));
        for group in flows.chunk_by(|a, b| a.flow_id == b.flow_id) {
            let ctx = Some(group[0].context as i32);
            let id = group[0].flow_id as i64;
            if group.len() == 1 {
                row(&mut f, id, "flow", ctx, Some(group[0].event_id), None);
            }
            for pair in group.windows(2) {
                row(
                    &mut f,
                    id,
                    "flow",
                    ctx,
                    Some(pair[0].event_id),
                    Some(pair[1].event_id),
                );
            }
        }
        let interner = Interner::new();
        self.sink.write(
            Table::Flows,
            f.finish(&interner).map_err(arrow_err(Table::Flows))?,
        )?;
        Ok(())
    }

    fn write_trace(
        &mut self,
        space: &super::scan::SpaceScan<'_>,
        start_ns: Option<i64>,
        stop_ns: Option<i64>,
    ) -> Result<()> {
        let interner = Interner::new();
        let mut t = TableBuilder::new(Table::Traces);
        let list = |t: &mut TableBuilder, col: usize, items: &[String]| {
            let l = t.list_utf8(col);
            for s in items {
                l.values().append_value(s);
            }
            l.append(true);
        };
        t.i32(0).append_value(self.trace_id);
        t.utf8(1).append_value("xspace");
        t.utf8(2).append_value(self.source.path.to_string_lossy());
        t.utf8(3).append_option(self.source.run.as_deref());
        t.utf8(4).append_value(&self.source.host);
        t.i64(5).append_option(start_ns);
        t.i64(6).append_option(stop_ns);
        t.i64(7).append_value(self.max_end_ps);
        t.i32(8).append_value(SCHEMA_VERSION);
        t.utf8(9).append_value(CONVERTER_VERSION);
        list(&mut t, 10, &space.hostnames);
        list(&mut t, 11, &space.errors);
        list(&mut t, 12, &space.warnings);
        list(&mut t, 13, &self.summary.warnings);
        self.sink.write(
            Table::Traces,
            t.finish(&interner).map_err(arrow_err(Table::Traces))?,
        )?;
        Ok(())
    }
}

/// An event placed on its track, ready to be written.
#[derive(Debug, Clone, Copy)]
struct EventAt<'a> {
    h: EventHeader<'a>,
    event_id: i64,
    ts: i64,
    depth: u32,
    parent_id: Option<i64>,
    /// Self time when already known (else patched when the event closes).
    self_ps: Option<i64>,
}

/// What a line is to the derived columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineRole {
    Steps,
    Modules,
    Ops,
    Other,
}

impl LineRole {
    fn of(name: &str, kind: DeviceKind) -> LineRole {
        if !kind.is_device() {
            return LineRole::Other;
        }
        match name {
            "Steps" | "Sparse Core Steps" => LineRole::Steps,
            "XLA Modules" | "Sparse Core Modules" => LineRole::Modules,
            "XLA Ops" | "Async XLA Ops" | "Sparse Core Ops" => LineRole::Ops,
            _ => LineRole::Other,
        }
    }
}

fn write_self(events: &mut EventsBuilder, base_row: u64, o: &Open<Slot>) {
    if !o.data.self_known {
        // Rows of events still open are always staged (never flushed).
        *events.self_ps_mut((o.data.row - base_row) as usize) = o.self_ps();
    }
}

fn push_counter(
    b: &mut TableBuilder,
    trace_id: i32,
    track_id: i32,
    event_id: i64,
    name: Sym,
    ts: i64,
    value: f64,
) {
    b.i32(0).append_value(trace_id);
    b.i32(1).append_value(track_id);
    b.i64(2).append_value(event_id);
    b.dict(3).push(name);
    b.i64(4).append_value(ts);
    b.f64(5).append_value(value);
}

fn each_event<'a>(
    l: &LineScan<'a>,
    mut f: impl FnMut(EventHeader<'a>) -> PbResult<()>,
) -> PbResult<()> {
    for_each_stat(l.span, 4, |span| f(event_header(span)?))
}

fn arrow_err(table: Table) -> impl FnOnce(arrow::error::ArrowError) -> ConvertError {
    move |source| {
        ConvertError::Format(xprof_format::FormatError::Arrow {
            table: table.name(),
            source,
        })
    }
}
