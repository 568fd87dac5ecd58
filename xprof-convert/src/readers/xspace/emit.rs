//! The second pass: each plane's metadata, lines and events decoded and
//! described to the [`TraceAssembler`], which owns ids, nesting,
//! containment, flows and the rows. The plane's own tables are written by
//! `plane_tables.rs`.

use std::path::Path;

use xprof_format::hash::{FxHashMap, FxHashSet};
use xprof_format::{EventRow, Interner, Sym};

use super::meta::{PlaneMeta, Promoted, StatKind, decode_stat, for_each_stat};
use super::scan::{
    EventHeader, LineScan, PlaneScan, ReleaseBehind, ReleaseFn, SpaceScan, Span, event_header,
    malformed, scan_plane, scan_space,
};
use crate::assembler::{Pending, Placed, TraceAssembler, TraceInfo, Track, TrackSpec};
use crate::codec::pb::{PbError, PbResult};
use crate::conversion::ConvertOptions;
use crate::error::{ConvertError, Result};
use crate::names::{DeviceKind, LineKind, Role};

/// Per-plane state of the second pass.
pub(super) struct PlaneCtx<'a> {
    pub(super) kind: DeviceKind,
    pub(super) meta: PlaneMeta<'a>,
    /// Metadata ids used on op lines (for `hlo_ops`).
    pub(super) op_metadata: FxHashSet<i64>,
    /// Cache of `event name/stat name` counter names.
    counter_names: FxHashMap<(i64, u64), Sym>,
    unknown_metadata: u64,
    unknown_stats: u64,
    /// Counter samples whose duration was an absolute end time, clamped
    /// to their kernel: how many, and the first few `(ts_ps, raw dur_ps)`.
    clamped_counters: u64,
    clamped_examples: Vec<(i64, i64)>,
}

/// What a line is to the decoder.
#[derive(Debug, Clone, Copy)]
struct LineUse {
    track: Track,
    /// Its metadata ids go to `hlo_ops`.
    op_line: bool,
    /// A `_counters_` line: every numeric stat is a counter sample.
    counters: bool,
}

/// Emission rank of a track: containers before what they contain.
fn rank(role: Role) -> u8 {
    match role {
        Role::Steps => 0,
        Role::Modules => 1,
        Role::Kernels => 2,
        _ => 3,
    }
}

pub(crate) struct Decoder<'a> {
    pub(super) bytes: &'a [u8],
    release: Option<ReleaseFn<'a>>,
    pub(super) path: &'a Path,
    options: &'a ConvertOptions,
    origin_ns: i64,
    bytes_done: u64,
}

impl<'a> Decoder<'a> {
    pub fn new(
        bytes: &'a [u8],
        path: &'a Path,
        options: &'a ConvertOptions,
        release: Option<ReleaseFn<'a>>,
    ) -> Self {
        Self {
            bytes,
            release,
            path,
            options,
            origin_ns: 0,
            bytes_done: 0,
        }
    }

    fn err(&self, e: PbError) -> ConvertError {
        malformed(self.path, e)
    }

    pub fn run(mut self, asm: &mut TraceAssembler<'_>) -> Result<TraceInfo> {
        let bytes = self.bytes;
        // Zero bytes decode as an XSpace with nothing in it: a truncated
        // copy or a failed write, never a profile (as a `--baseline` it
        // would make every op of the inputs "new").
        if bytes.is_empty() {
            return Err(ConvertError::Malformed {
                path: self.path.to_path_buf(),
                format: "XSpace",
                offset: 0,
                what: "the file is empty (0 bytes), not a profile".into(),
            });
        }
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
        for (plane, span) in planes.iter().zip(&space.planes) {
            self.convert_plane(asm, plane)?;
            // Spans released one by one leave their edge pages: drop the
            // whole plane once it is done.
            self.release_span(span);
        }
        let SpaceScan {
            errors,
            warnings,
            hostnames,
            ..
        } = space;
        Ok(TraceInfo {
            start_unix_ns: start_ns,
            stop_unix_ns: stop_ns,
            hostnames,
            errors,
            warnings,
        })
    }

    /// `profile_start_time`/`profile_stop_time` of the `Task Environment` plane.
    fn task_environment(&self, planes: &[PlaneScan<'a>]) -> Result<(Option<i64>, Option<i64>)> {
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
            p(crate::conversion::Progress {
                file: 0,
                bytes_done: self.bytes_done,
                bytes_total: self.bytes.len() as u64,
            });
        }
    }

    fn convert_plane(&mut self, asm: &mut TraceAssembler<'_>, plane: &PlaneScan<'a>) -> Result<()> {
        let (kind, ordinal) = DeviceKind::of_plane(&plane.name);
        // Lines with the same id are one track.
        let mut track_of: FxHashMap<i64, usize> = FxHashMap::default();
        let mut groups: Vec<Vec<&LineScan<'a>>> = Vec::new();
        for l in &plane.lines {
            let g = *track_of.entry(l.id).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(l);
        }
        let kinds: Vec<LineKind> = groups
            .iter()
            .map(|g| LineKind::of(&g[0].name, kind))
            .collect();
        let record_kernels = kinds.iter().any(|k| k.role == Role::InKernel);
        let device_id = asm.begin_device(kind, record_kernels)?;
        let mut warnings = Vec::new();
        let meta = PlaneMeta::load(
            &plane.stat_metadata,
            &plane.event_metadata,
            asm.interner(),
            &mut warnings,
        )
        .map_err(|e| self.err(e))?;
        for w in warnings {
            asm.warn(w);
        }
        let mut ctx = PlaneCtx {
            kind,
            meta,
            op_metadata: FxHashSet::default(),
            counter_names: FxHashMap::default(),
            unknown_metadata: 0,
            unknown_stats: 0,
            clamped_counters: 0,
            clamped_examples: Vec::new(),
        };
        // Containers (steps, modules, kernels) first, then the rest, each
        // in file order: track ids follow this order.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by_key(|g| rank(kinds[*g].role));
        for g in order {
            let chunks = &groups[g];
            let first = chunks[0];
            let line_kind = kinds[g];
            let track = asm.begin_track(&TrackSpec {
                line_id: first.id,
                display_id: first.display_id,
                name: &first.name,
                display_name: &first.display_name,
                kind: line_kind,
                unit: if line_kind.kind == "llo_unit" {
                    LineKind::unit_of(&first.name)
                } else {
                    None
                },
                timestamp_ns: first.timestamp_ns,
                duration_ps: first.duration_ps,
            });
            let line = LineUse {
                track,
                op_line: kind.is_accelerator() && line_kind.lists_hlo_ops(),
                counters: line_kind.is_counters(),
            };
            if let [l] = chunks.as_slice()
                && l.sorted
            {
                self.emit_sorted_line(asm, &mut ctx, l, line)?;
            } else {
                self.emit_buffered_track(asm, &mut ctx, chunks, line)?;
            }
            asm.summary_mut().lines += chunks.len();
            for l in chunks {
                self.release_span(&l.span);
            }
            self.progress(chunks.iter().map(|l| l.span.bytes.len() as u64).sum());
        }
        if ctx.unknown_metadata > 0 {
            asm.warn(format!(
                "{}: {} events with unknown event-metadata ids (kept with an empty name)",
                plane.name, ctx.unknown_metadata
            ));
        }
        if ctx.unknown_stats > 0 {
            asm.warn(format!(
                "{}: {} event stats with unknown stat-metadata ids (kept as `#<id>`)",
                plane.name, ctx.unknown_stats
            ));
        }
        if ctx.clamped_counters > 0 {
            let examples: Vec<String> = ctx
                .clamped_examples
                .iter()
                .map(|(ts, raw)| format!("ts_ps {ts}: duration_ps {raw}"))
                .collect();
            asm.warn(format!(
                "{}: {} counter samples whose duration_ps is an absolute end time (it passes \
                 the end of the kernel they start in by more than the sample's own offset) \
                 were clamped to that kernel's end ({})",
                plane.name,
                ctx.clamped_counters,
                examples.join(", ")
            ));
        }
        self.write_plane_tables(asm, &ctx, plane, device_id, ordinal)?;
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
        asm: &mut TraceAssembler<'_>,
        ctx: &mut PlaneCtx<'a>,
        l: &LineScan<'a>,
        line: LineUse,
    ) -> Result<()> {
        let ts_base = self.line_base_ps(l);
        let mut stream = asm.stream(line.track);
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
            let mut h = event_header(Span { bytes, offset }).map_err(|e| self.err(e))?;
            if line.counters && h.num_occurrences.is_none() {
                clamp_counter(asm, ctx, ts_base, &mut h);
            }
            let placed = if h.num_occurrences.is_some() {
                stream.place_aggregated(asm, ts_base, h.duration_ps)?
            } else {
                let known = l.long_self.get(&index).copied();
                stream.place(
                    asm,
                    ts_base.saturating_add(h.offset_ps),
                    h.duration_ps,
                    known,
                )?
            };
            self.write_event(asm, ctx, &h, &placed, line)?;
            index += 1;
        }
        stream.finish(asm);
        Ok(())
    }

    /// A track whose events are out of time order, or split over several
    /// lines with the same id: held whole and sorted by the assembler.
    fn emit_buffered_track(
        &mut self,
        asm: &mut TraceAssembler<'_>,
        ctx: &mut PlaneCtx<'a>,
        chunks: &[&LineScan<'a>],
        line: LineUse,
    ) -> Result<()> {
        let first = chunks[0];
        if chunks.len() > 1 {
            asm.warn(format!(
                "{} lines share id {} ({:?}): merged into one track",
                chunks.len(),
                first.id,
                first.name
            ));
        } else {
            asm.warn(format!(
                "line {:?} (id {}): events out of time order; sorted in memory",
                first.name, first.id
            ));
        }
        let mut all: Vec<Pending<EventHeader<'a>>> = Vec::new();
        for l in chunks {
            let ts_base = self.line_base_ps(l);
            each_event(l, |mut h| {
                let aggregated = h.num_occurrences.is_some();
                if line.counters && !aggregated {
                    clamp_counter(asm, ctx, ts_base, &mut h);
                }
                all.push(Pending {
                    ts_ps: if aggregated {
                        ts_base
                    } else {
                        ts_base.saturating_add(h.offset_ps)
                    },
                    dur_ps: h.duration_ps,
                    aggregated,
                    data: h,
                });
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        }
        for (placed, h) in asm.place_sorted(line.track, all) {
            self.write_event(asm, ctx, &h, &placed, line)?;
        }
        Ok(())
    }

    /// One event's stats (`event_args`, promoted columns, counters, flow
    /// and correlation endpoints), then its row.
    fn write_event(
        &self,
        asm: &mut TraceAssembler<'_>,
        ctx: &mut PlaneCtx<'a>,
        h: &EventHeader<'a>,
        at: &Placed,
        line: LineUse,
    ) -> Result<()> {
        let event_id = at.event_id;
        let ts = at.ts_ps;
        let (name_sym, display_sym, mut p) = match ctx.meta.events.get(&h.metadata_id) {
            Some(m) => (m.name_sym, m.display_sym, m.promoted),
            None => {
                ctx.unknown_metadata += 1;
                (ctx.meta.empty_sym, ctx.meta.empty_sym, Promoted::default())
            }
        };
        if line.op_line {
            ctx.op_metadata.insert(h.metadata_id);
        }
        let aggregated = h.num_occurrences.is_some();
        let dur = h.duration_ps;

        // Own stats: every one to event_args, the well-known ones promoted.
        let mut stat_count: i32 = 0;
        let mut unknown = 0u64;
        let mut counter_stats: Vec<(u64, f64)> = Vec::new();
        {
            let meta = &ctx.meta;
            let (mut args, interner) = asm.args_and_interner();
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
                args.arg(event_id, key, &v);
                p.apply(kind, &v, meta.ref_sym(raw.value), interner);
                if line.counters
                    && kind != StatKind::CounterValue
                    && let Some(x) = v.as_f64()
                {
                    counter_stats.push((raw.metadata_id, x));
                }
                stat_count += 1;
                Ok(())
            })
            .map_err(|e| self.err(e))?;
        }
        ctx.unknown_stats += unknown;

        // Counters.
        if let Some(v) = p.counter_value {
            asm.counter(line.track, event_id, name_sym, ts, v);
        }
        for (stat_id, v) in counter_stats {
            let name = match ctx.counter_names.get(&(h.metadata_id, stat_id)) {
                Some(n) => *n,
                None => {
                    let ev = asm.interner().get(name_sym).to_string();
                    let st = ctx
                        .meta
                        .stats
                        .get(&stat_id)
                        .map(|s| s.name.to_string())
                        .unwrap_or_else(|| format!("#{stat_id}"));
                    let n = asm.interner().intern(&format!("{ev}/{st}"));
                    ctx.counter_names.insert((h.metadata_id, stat_id), n);
                    n
                }
            };
            asm.counter(line.track, event_id, name, ts, v);
        }

        // Flows (bits 0-1 direction, 2-57 id, 58-63 context type) and
        // correlation ids, paired at the end of the trace.
        if let Some(flow) = p.flow {
            asm.flow_point(
                (flow >> 2) & ((1u64 << 56) - 1),
                (flow >> 58) as u8,
                ts,
                event_id,
            );
        }
        if let Some(c) = p.correlation_id {
            asm.correlation(c, ts, event_id);
        }

        let self_ps = if aggregated {
            p.self_duration_ps.unwrap_or(dur)
        } else {
            at.self_ps.unwrap_or(0)
        };
        asm.push_event(&EventRow {
            event_id,
            track_id: at.track_id,
            metadata_id: h.metadata_id,
            name: name_sym,
            display_name: display_sym,
            ts_ps: ts,
            dur_ps: dur,
            self_ps,
            depth: at.depth,
            parent_id: at.parent_id,
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
            step_event_id: at.step_event_id,
            module_event_id: at.module_event_id,
            kernel_event_id: at.kernel_event_id,
            stat_count,
        })
    }
}

/// A counter sample that starts inside a kernel and whose duration is an
/// absolute end time: longer than the sample's own offset on its line, and
/// passing the kernel's end. libtpu writes the last static-utilization
/// sample of each kernel execution so (the facts sheet, §6): its duration
/// is the op's end offset. It is clamped to the kernel's end and counted
/// for a converter warning that keeps the raw value.
fn clamp_counter(
    asm: &mut TraceAssembler<'_>,
    ctx: &mut PlaneCtx<'_>,
    ts_base: i64,
    h: &mut EventHeader<'_>,
) {
    if !ctx.kind.is_accelerator() || h.duration_ps <= h.offset_ps {
        return;
    }
    let ts = ts_base.saturating_add(h.offset_ps);
    let Some((_, kernel_end, _)) = asm.kernel_at(ts) else {
        return;
    };
    if ts.saturating_add(h.duration_ps) <= kernel_end {
        return;
    }
    ctx.clamped_counters += 1;
    if ctx.clamped_examples.len() < 3 {
        ctx.clamped_examples.push((ts, h.duration_ps));
    }
    h.duration_ps = kernel_end - ts;
}

fn each_event<'a>(
    l: &LineScan<'a>,
    mut f: impl FnMut(EventHeader<'a>) -> PbResult<()>,
) -> PbResult<()> {
    for_each_stat(l.span, 4, |span| f(event_header(span)?))
}
