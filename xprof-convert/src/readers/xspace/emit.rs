//! The second pass: each plane's metadata, lines and events decoded and
//! described to the [`TraceAssembler`], which owns ids, nesting,
//! containment, flows and the rows.

use std::borrow::Cow;
use std::path::Path;

use xprof_format::hash::{FxHashMap, FxHashSet};
use xprof_format::small_table_rows::{
    DeviceArgRow, DeviceRow, EventMetadataRow, HloInstructionRow, HloOpRow, LloAllocationRow,
    LloBdiStallRow, LloBundleSourceRow, LloBundleUnitRow, LloProgramInstructionRow, LloProgramRow,
    LloRegionRow, LloRegisterLiveRangeRow, LloRegisterPressureRow, LloTargetInfoRow,
    MetadataArgRow, StatMetadataRow,
};
use xprof_format::{EventRow, Interner, StatValue, Sym};

use super::hlo::HloModule;
use super::meta::{PlaneMeta, Promoted, StatKind, decode_stat, for_each_stat};
use super::scan::{
    EventHeader, LineScan, PlaneScan, ReleaseBehind, ReleaseFn, SpaceScan, Span, event_header,
    malformed, scan_plane, scan_space,
};
use crate::assembler::{Pending, Placed, TraceAssembler, TraceInfo, Track, TrackSpec};
use crate::codec::pb::{PbError, PbResult};
use crate::conversion::ConvertOptions;
use crate::error::{ConvertError, Result};
use crate::names::{self, DeviceKind, LineKind, Role};

/// Per-plane state of the second pass.
struct PlaneCtx<'a> {
    kind: DeviceKind,
    meta: PlaneMeta<'a>,
    /// Metadata ids used on op lines (for `hlo_ops`).
    op_metadata: FxHashSet<i64>,
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
    bytes: &'a [u8],
    release: Option<ReleaseFn<'a>>,
    path: &'a Path,
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

    /// `devices`, `device_args`, `event_metadata`, `metadata_args`,
    /// `stat_metadata` and `hlo_ops` rows of one plane, each in its
    /// table's order (metadata by id, not map order).
    fn write_plane_tables(
        &self,
        asm: &mut TraceAssembler<'_>,
        ctx: &PlaneCtx<'a>,
        plane: &PlaneScan<'a>,
        device_id: i32,
        ordinal: Option<i32>,
    ) -> Result<()> {
        let trace_id = asm.trace_id();
        let err = |e: PbError| malformed(self.path, e);
        let meta = &ctx.meta;

        // Plane stats.
        let mut plane_stats: FxHashMap<&str, StatValue<'_>> = FxHashMap::default();
        for s in &plane.stats {
            let raw = decode_stat(*s).map_err(err)?;
            let value = meta.resolve(raw.value).map_err(err)?;
            let key: Cow<'_, str> = match meta.stats.get(&raw.metadata_id) {
                Some(st) => Cow::Borrowed(st.name.as_ref()),
                None => Cow::Owned(format!("#{}", raw.metadata_id)),
            };
            asm.device_row(&DeviceArgRow {
                trace_id,
                device_id,
                key: &key,
                value: value.clone(),
            });
            if let Cow::Borrowed(k) = key {
                plane_stats.insert(k, value);
            }
        }

        let mut stat_ids: Vec<u64> = meta.stat_order.clone();
        stat_ids.sort_unstable_by_key(|id| *id as i64);
        for id in stat_ids {
            let s = &meta.stats[&id];
            asm.device_row(&StatMetadataRow {
                trace_id,
                device_id,
                stat_metadata_id: id as i64,
                name: &s.name,
                description: (!s.description.is_empty()).then_some(s.description.as_ref()),
            });
        }

        let mut event_ids: Vec<i64> = meta.event_order.clone();
        event_ids.sort_unstable();
        for id in event_ids {
            let m = &meta.events[&id];
            asm.device_row(&EventMetadataRow {
                trace_id,
                device_id,
                metadata_id: id,
                name: &m.name,
                display_name: (!m.display_name.is_empty()).then_some(m.display_name.as_ref()),
                metadata: (!m.metadata.is_empty()).then_some(m.metadata),
                child_ids: &m.child_ids,
                stat_count: m.stats.len() as i32,
            });
            let mut hlo_proto: Option<&[u8]> = None;
            let mut llo_proto: Option<&[u8]> = None;
            let mut hlo_program_id: Option<u64> = None;
            for s in &m.stats {
                let raw = decode_stat(*s).map_err(err)?;
                let value = meta.resolve(raw.value).map_err(err)?;
                let key: Cow<'_, str> = match meta.stats.get(&raw.metadata_id) {
                    Some(st) => Cow::Borrowed(st.name.as_ref()),
                    None => Cow::Owned(format!("#{}", raw.metadata_id)),
                };
                if ctx.kind == DeviceKind::Metadata {
                    match (key.as_ref(), &value) {
                        (names::HLO_PROTO_STAT, StatValue::Bytes(b)) => hlo_proto = Some(b),
                        ("program_id", v) => hlo_program_id = v.as_u64(),
                        _ => {}
                    }
                }
                // XProf reads an `llo_proto` of any plane's event metadata.
                if let (names::LLO_PROTO_STAT, StatValue::Bytes(b)) = (key.as_ref(), &value) {
                    llo_proto = Some(b);
                }
                asm.device_row(&MetadataArgRow {
                    trace_id,
                    device_id,
                    metadata_id: id,
                    key: &key,
                    value,
                });
            }
            if let Some(bytes) = hlo_proto {
                hlo_instruction_rows(asm, device_id, id, hlo_program_id, bytes, &m.name);
            }
            if let Some(bytes) = llo_proto {
                let offset = (bytes.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
                llo_program_rows(asm, device_id, id, bytes, &m.name, self.path, offset);
            }
            let p = &m.promoted;
            if p.has_cost_model() || (ctx.kind.is_accelerator() && ctx.op_metadata.contains(&id)) {
                let s = |asm: &mut TraceAssembler<'_>, x: Option<Sym>| {
                    x.map(|x| asm.interner().get(x).to_string())
                };
                let (module, op, category) = (
                    s(asm, p.hlo_module),
                    s(asm, p.hlo_op),
                    s(asm, p.hlo_category),
                );
                let (shape, tf_op, source) = (s(asm, p.shape), s(asm, p.tf_op), s(asm, p.source));
                let op_name = op.as_deref().unwrap_or(if m.display_name.is_empty() {
                    &m.name
                } else {
                    &m.display_name
                });
                asm.device_row(&HloOpRow {
                    trace_id,
                    device_id,
                    metadata_id: id,
                    program_id: p.program_id,
                    hlo_module: module.as_deref(),
                    hlo_op: op_name,
                    category: category.as_deref(),
                    expression: &m.name,
                    shape: shape.as_deref(),
                    flops: p.flops,
                    model_flops: p.model_flops,
                    bytes_accessed: p.bytes_accessed,
                    tf_op: tf_op.as_deref(),
                    source: source.as_deref(),
                });
            }
        }

        let f = |k: &str| plane_stats.get(k).and_then(|v| v.as_f64());
        asm.end_device(DeviceRow {
            trace_id,
            device_id,
            plane_id: plane.id,
            name: &plane.name,
            kind: ctx.kind.name(),
            ordinal,
            r#type: plane_stats
                .get("device_type_string")
                .and_then(|v| v.as_str()),
            vendor: plane_stats.get("device_vendor").and_then(|v| v.as_str()),
            peak_tflops: f("peak_teraflops_per_second"),
            peak_hbm_gbps: f("peak_hbm_bw_gigabytes_per_second"),
            clock_rate: f("clock_rate"),
            core_count: plane_stats.get("core_count").and_then(|v| v.as_i64()),
            // Filled by the assembler.
            line_count: 0,
            event_count: 0,
            stat_count: plane.stats.len() as i32,
            process_name: None,
        })
    }
}

/// `hlo_instructions` rows of one `Hlo Proto` stat. A proto that does not
/// decode is kept as bytes in `metadata_args` and named in
/// `traces.converter_warnings`; the conversion goes on, as XProf's does.
fn hlo_instruction_rows(
    asm: &mut TraceAssembler<'_>,
    device_id: i32,
    metadata_id: i64,
    program_id: Option<u64>,
    bytes: &[u8],
    metadata_name: &str,
) {
    let module = match HloModule::decode(bytes) {
        Ok(m) => m,
        Err(e) => {
            asm.warn(format!(
                "/host:metadata `{metadata_name}`: Hlo Proto not decoded ({e}); kept as bytes"
            ));
            return;
        }
    };
    let trace_id = asm.trace_id();
    let program_id = program_id.or(u64::try_from(module.id).ok());
    let roles = module.computation_roles();
    for (computation, role) in module.computations.iter().zip(roles) {
        for instr in &computation.instructions {
            let operands: Vec<String> = instr
                .operand_ids
                .iter()
                .map(|id| module.instruction_name(*id).into_owned())
                .collect();
            let called: Vec<String> = instr
                .called_computation_ids
                .iter()
                .map(|id| module.computation_name(*id).into_owned())
                .collect();
            let stack = module.stack(instr);
            let source = module.source(instr, &stack);
            asm.device_row(&HloInstructionRow {
                trace_id,
                device_id,
                metadata_id,
                program_id,
                hlo_module: &module.name,
                computation: &computation.name,
                computation_role: role.name(),
                instruction_id: instr.id,
                name: &instr.name,
                opcode: &instr.opcode,
                category: &module.category(instr),
                expression: &module.expression(instr),
                shape: &module.shape_text(instr),
                operands: &operands,
                called_computations: &called,
                fusion_kind: non_empty(&instr.fusion_kind),
                custom_call_target: non_empty(&instr.custom_call_target),
                op_type: non_empty(&instr.op_type),
                op_name: non_empty(&instr.op_name),
                tf_op: &instr.tf_op(),
                deduplicated_name: non_empty(&instr.deduplicated_name),
                source: source.as_deref(),
                source_stack: non_empty(&stack),
            });
        }
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

/// The `llo_*` rows of one `llo_proto` stat. A payload that does not
/// decode is a `llo_programs` row saying why, and a converter warning with
/// the payload's byte offset in the file; its bytes stay in
/// `metadata_args`.
fn llo_program_rows(
    asm: &mut TraceAssembler<'_>,
    device_id: i32,
    metadata_id: i64,
    bytes: &[u8],
    metadata_name: &str,
    path: &Path,
    offset: usize,
) {
    let trace_id = asm.trace_id();
    // `<module>(<module id>)::<HLO op>`.
    let named_op = metadata_name.rsplit_once("::").map(|(_, op)| op);
    let program = match super::llo_proto::decode(bytes) {
        Ok(p) => p,
        Err(e) => {
            let status = format!(
                "{e} (payload of {} bytes at byte offset {offset} of {})",
                bytes.len(),
                path.display()
            );
            asm.warn(format!(
                "/host:metadata `{metadata_name}`: llo_proto not decoded: {status}; kept as bytes"
            ));
            asm.device_row(&LloProgramRow {
                trace_id,
                device_id,
                metadata_id,
                hlo_op: named_op.unwrap_or(metadata_name),
                program: metadata_name,
                hlo_module: None,
                module_id: None,
                bytes: bytes.len() as i64,
                bundles: None,
                regions: None,
                instructions: None,
                analysis_instructions: None,
                allocations: None,
                decode_status: &status,
            });
            return;
        }
    };
    let hlo_op = if program.hlo_op.is_empty() {
        named_op.unwrap_or(metadata_name)
    } else {
        program.hlo_op.as_str()
    };
    asm.device_row(&LloProgramRow {
        trace_id,
        device_id,
        metadata_id,
        hlo_op,
        program: metadata_name,
        hlo_module: non_empty(&program.hlo_module),
        module_id: Some(program.module_id),
        bytes: bytes.len() as i64,
        bundles: Some(program.bundles),
        regions: Some(
            program
                .regions
                .iter()
                .filter(|r| r.region_id.is_some())
                .count() as i64,
        ),
        instructions: Some(program.instructions.len() as i64),
        analysis_instructions: Some(program.analysis_instructions()),
        allocations: Some(program.allocations.len() as i64),
        decode_status: "ok",
    });
    for r in &program.regions {
        asm.device_row(&LloRegionRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            node: r.node as i64,
            parent_node: r.parent_node.map(|n| n as i64),
            depth: r.depth,
            region_id: r.region_id,
            parent_region_id: r.parent_region_id,
            name: &r.name,
            kind: r.kind,
            start_bundle: r.start_bundle,
            limit_bundle: r.limit_bundle,
            instructions: r.instructions,
            trip_count: r.trip_count,
            region_path: &r.region_path,
            named_scope: r.source.named_scope.as_deref(),
            primitive: r.source.primitive.as_deref(),
            source_file: r.source.file.as_deref(),
            source_line: r.source.line,
        });
    }
    for u in &program.bundle_units {
        asm.device_row(&LloBundleUnitRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            bundle: u.bundle,
            unit: u.unit,
            xprof_unit: u.xprof_unit,
            used: u.used,
            capacity: u.capacity,
            region_id: u.region_id,
        });
    }
    for i in &program.instructions {
        asm.device_row(&LloProgramInstructionRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            instruction_id: i.instruction_id,
            opcode: &i.opcode,
            opcode_value: i.opcode_value,
            category: i.category,
            unit: i.unit,
            bundle: i.bundle,
            region_id: i.region_id,
            mxu: i.mxu,
            register_type: i.register_type,
            pseudo_kind: i.pseudo_kind,
            comment: i.comment.as_deref(),
            primitive: i.primitive.as_deref(),
            named_scope: i.named_scope.as_deref(),
            source_file: i.source_file.as_deref(),
            source_line: i.source_line,
        });
    }
    for a in &program.allocations {
        asm.device_row(&LloAllocationRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            ordinal: a.ordinal,
            size_bytes: a.size_bytes,
            memory_space: &a.memory_space,
            space: a.space,
            is_spill: a.is_spill,
            is_scoped: a.is_scoped,
            is_virtual: a.is_virtual,
            is_remote: a.is_remote,
        });
    }
    for r in &program.live_ranges {
        asm.device_row(&LloRegisterLiveRangeRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            instruction_id: r.instruction_id,
            register_type: r.register_type,
            register: r.register,
            start_bundle: r.start_bundle,
            end_bundle: r.end_bundle,
        });
    }
    for p in &program.register_pressure {
        asm.device_row(&LloRegisterPressureRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            bundle: p.bundle,
            register_type: p.register_type,
            live: p.live,
            region_id: program.region_of_bundle(p.bundle),
        });
    }
    for b in &program.bdi_stalls {
        let i = &program.instructions[b.walk_index];
        asm.device_row(&LloBdiStallRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            instruction_id: b.instruction_id,
            bundle: b.bundle,
            code: b.code,
            position: b.position,
            comment: i.comment.as_deref().unwrap_or_default(),
            region_id: i.region_id,
        });
    }
    for b in &program.bundle_sources {
        asm.device_row(&LloBundleSourceRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            bundle: b.bundle,
            source: &b.source,
            source_file: &b.source_file,
            source_line: b.source_line,
            instructions: b.instructions,
            region_id: program.region_of_bundle(b.bundle),
        });
    }
    if let Some(t) = &program.target {
        let topo = |v| t.has_topology.then_some(v);
        let part = |name: &str, b: Option<[i32; 3]>| {
            b.map(|[x, y, z]| format!("{name} x={x}, y={y}, z={z}"))
        };
        let bounds: Vec<String> = [
            part("chips", t.chips_per_host_bounds),
            part("hosts", t.host_bounds),
        ]
        .into_iter()
        .flatten()
        .collect();
        let bounds = (!bounds.is_empty()).then(|| bounds.join("; "));
        asm.device_row(&LloTargetInfoRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            replica_count: t.replica_count,
            reserved_hbm_usage_bytes: t.reserved_hbm_usage_bytes,
            chip_config_name: t.has_topology.then_some(t.chip_config_name.as_str()),
            platform_type: topo(t.platform_type),
            variant: topo(t.variant),
            enhanced_barrier_enabled: t.has_topology.then_some(t.enhanced_barrier_enabled),
            chips_per_host_x: t.chips_per_host_bounds.map(|b| b[0]),
            chips_per_host_y: t.chips_per_host_bounds.map(|b| b[1]),
            chips_per_host_z: t.chips_per_host_bounds.map(|b| b[2]),
            host_x: t.host_bounds.map(|b| b[0]),
            host_y: t.host_bounds.map(|b| b[1]),
            host_z: t.host_bounds.map(|b| b[2]),
            bounds: bounds.as_deref(),
        });
    }
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

fn each_event<'a>(
    l: &LineScan<'a>,
    mut f: impl FnMut(EventHeader<'a>) -> PbResult<()>,
) -> PbResult<()> {
    for_each_stat(l.span, 4, |span| f(event_header(span)?))
}
