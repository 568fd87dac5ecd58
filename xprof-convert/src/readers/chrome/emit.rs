//! Pass 2 over a Chrome trace: each device's tracks placed in time order,
//! each event's text parsed again for its name and `args`.

use std::borrow::Cow;
use xprof_format::hash::FxHashMap as HashMap;

use xprof_format::schema::{DeviceArgRow, DeviceRow, EventMetadataRow};
use xprof_format::{EventRow, StatValue, Sym};

use super::scan::{DeviceScan, FlowRec, Id, Phase, Scanned, TrackKind, TrackScan};
use crate::assembler::{Pending, TraceAssembler, TraceInfo, Track, TrackSpec};
use crate::codec::json::{
    Json, JsonError, JsonResult, Kind, NumberValue, Scalar, Utf8Doc, number_value,
};
use crate::error::ConvertError;
use crate::input::InputBytes;
use crate::names::{DeviceKind, LineKind, Role};

/// Pass 2 fails on bad JSON (an event that changed since pass 1 cannot,
/// but its `args` were only skipped there) or on the sink.
pub(super) enum EmitError {
    Json(JsonError),
    Convert(ConvertError),
}

impl From<JsonError> for EmitError {
    fn from(e: JsonError) -> Self {
        EmitError::Json(e)
    }
}

impl From<ConvertError> for EmitError {
    fn from(e: ConvertError) -> Self {
        EmitError::Convert(e)
    }
}

type EmitResult<T> = Result<T, EmitError>;

/// `device_args` key of the `Trace Metadata` device: the trace's rank,
/// the top-level `rank` of its `distributedInfo` object, as an integer
/// (the HTA views read it).
pub const RANK_KEY: &str = "distributedInfo.rank";

/// The top-level `rank` of the `distributedInfo` value at `start`: `None`
/// when the value is not an object or has no `rank`; an error at its
/// offset when the rank is not a whole number from 0 to 2^63 − 1 (a rank
/// of 1.5 read as 1 would give two traces one rank). A `rank` nested
/// deeper (`pg_config`'s) is not the trace's.
fn distributed_rank(bytes: &[u8], start: usize) -> EmitResult<Option<i64>> {
    let mut info = Json::at(bytes, start);
    if info.kind()? != Kind::Object {
        return Ok(None);
    }
    info.begin_object()?;
    let mut rank = None;
    let mut first = true;
    while let Some(key) = info.next_key(first)? {
        first = false;
        if key != "rank" {
            info.skip()?;
            continue;
        }
        let at = info.clone();
        let whole = match info.scalar()? {
            Scalar::Number(n) => match number_value(n) {
                NumberValue::Int(v) if v >= 0 => Some(v),
                _ => None,
            },
            _ => None,
        };
        let Some(v) = whole else {
            let (from, to) = Json::at(bytes, at.pos()).skip()?;
            let text = String::from_utf8_lossy(&bytes[from..to.min(from + 40)]);
            return Err(at
                .error(format!(
                    "distributedInfo's rank {text} is not a whole number from 0 to 2^63-1"
                ))
                .into());
        };
        rank = Some(v);
    }
    Ok(rank)
}

/// Name of the device holding the file's top-level keys.
pub const TRACE_METADATA_DEVICE: &str = "Trace Metadata";

/// `device_args` key of the `Trace Metadata` device: the file's own
/// timestamp (its `ts`, in ps) at `ts_ps = 0`, so that `ts_ps +` this is
/// the `ts` as written (cycle counts of intra-kernel traces are recovered
/// from it).
pub const ORIGIN_KEY: &str = "xprof_sql.ts_origin_ps";

/// A JSON scalar as a stat value (objects and arrays as their text,
/// booleans as 0/1).
fn stat_value<'a>(v: Scalar<'a>) -> StatValue<'a> {
    match v {
        Scalar::Null => StatValue::None,
        Scalar::Bool(b) => StatValue::Int(b as i64),
        Scalar::Number(n) => match number_value(n) {
            NumberValue::Int(v) => StatValue::Int(v),
            NumberValue::Uint(v) => StatValue::Uint(v),
            NumberValue::Double(v) => StatValue::Double(v),
        },
        Scalar::String(s) => StatValue::Str(s),
        Scalar::Composite(c) => StatValue::Str(Cow::Borrowed(c)),
    }
}

/// An event's text, parsed again: its name and every field that is not a
/// column, `args` flattened.
#[derive(Default)]
struct EventText<'a> {
    name: Cow<'a, str>,
    /// `args` entries and the event's other fields, in the order written.
    args: Vec<(Cow<'a, str>, Scalar<'a>)>,
}

/// Fields that are columns (or structure) rather than `event_args`.
fn is_column_field(key: &str) -> bool {
    matches!(key, "ph" | "name" | "pid" | "tid" | "ts" | "dur" | "args")
}

fn read_args<'a>(j: &mut Json<'a>, out: &mut Vec<(Cow<'a, str>, Scalar<'a>)>) -> JsonResult<()> {
    if j.kind()? != Kind::Object {
        // `args` that is not an object is kept whole.
        out.push((Cow::Borrowed("args"), j.scalar()?));
        return Ok(());
    }
    j.begin_object()?;
    let mut first = true;
    while let Some(key) = j.next_key(first)? {
        first = false;
        let value = j.scalar()?;
        out.push((key, value));
    }
    Ok(())
}

/// Parses the event object at `start`; with `args_only` (an `E` or `e`
/// matched to a begin) only its `args`.
fn read_event<'a>(
    doc: &Json<'a>,
    start: u64,
    args_only: bool,
    text: &mut EventText<'a>,
) -> JsonResult<()> {
    let mut j = doc.resume(start as usize);
    j.begin_object()?;
    let mut first = true;
    while let Some(key) = j.next_key(first)? {
        first = false;
        match key.as_ref() {
            "args" => read_args(&mut j, &mut text.args)?,
            "name" if !args_only => {
                text.name = match j.scalar()? {
                    Scalar::String(s) => s,
                    Scalar::Number(n) => Cow::Borrowed(n),
                    Scalar::Composite(c) => Cow::Borrowed(c),
                    Scalar::Bool(b) => Cow::Owned(b.to_string()),
                    Scalar::Null => Cow::Borrowed(""),
                }
            }
            k if args_only || is_column_field(k) => {
                j.skip()?;
            }
            _ => {
                let value = j.scalar()?;
                text.args.push((key, value));
            }
        }
    }
    Ok(())
}

fn track_kind(dev_gpu: bool, t: &TrackScan) -> &'static str {
    match t.kind {
        TrackKind::Async => "async",
        TrackKind::Counters => "counters",
        TrackKind::GpuAnnotations => "gpu_annotations",
        TrackKind::GpuSyncs => "gpu_syncs",
        TrackKind::Thread => {
            let lower = t.name.to_ascii_lowercase();
            let named_stream = lower.starts_with("stream") || lower.contains("gpu stream");
            if named_stream || dev_gpu && t.gpu_events {
                "stream"
            } else {
                "thread"
            }
        }
    }
}

/// The device number of a GPU process: `GPU n` in its labels, else its
/// pid when that is a small integer (Kineto's GPU pid is the device).
fn gpu_ordinal(dev: &DeviceScan) -> Option<i32> {
    let from_labels = dev.labels.as_deref().and_then(|l| {
        let rest = &l[l.find("GPU")? + 3..];
        rest.trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    });
    from_labels.or_else(|| dev.pid.as_int().and_then(|p| i32::try_from(p).ok()))
}

/// Per-device state of pass 2.
struct DeviceNames {
    metadata_ids: HashMap<Sym, i64>,
}

impl DeviceNames {
    fn metadata_id(&mut self, name: Sym) -> i64 {
        let next = self.metadata_ids.len() as i64;
        *self.metadata_ids.entry(name).or_insert(next)
    }
}

/// Pass 2: everything into `asm`.
pub(super) fn emit(
    input: &InputBytes,
    doc: Utf8Doc<'_>,
    s: &Scanned,
    asm: &mut TraceAssembler<'_>,
) -> EmitResult<TraceInfo> {
    let bytes: &[u8] = input;
    for w in &s.warnings {
        asm.warn(w.clone());
    }
    let mut base_time_ns: Option<i64> = None;
    let origin_ps = s.base_ps + s.origin_ps as i128;
    let device_id = asm.begin_device(DeviceKind::TaskEnvironment, false)?;
    let trace_id = asm.trace_id();
    for (key, (start, _)) in &s.top_level {
        let value = stat_value(Json::at(bytes, *start).scalar()?);
        if key == "baseTimeNanoseconds" {
            base_time_ns = value.as_i64();
        }
        if key == "distributedInfo"
            && let Some(rank) = distributed_rank(bytes, *start)?
        {
            asm.device_row(&DeviceArgRow {
                trace_id,
                device_id,
                key: RANK_KEY,
                value: StatValue::Int(rank),
            });
        }
        asm.device_row(&DeviceArgRow {
            trace_id,
            device_id,
            key,
            value,
        });
    }
    // Where `ts_ps = 0` is on the file's own time axis (its `ts`, in ps).
    let origin = i64::try_from(origin_ps)
        .map(StatValue::Int)
        .unwrap_or_else(|_| StatValue::Double(origin_ps as f64));
    asm.device_row(&DeviceArgRow {
        trace_id,
        device_id,
        key: ORIGIN_KEY,
        value: origin,
    });
    asm.end_device(DeviceRow {
        trace_id: 0,
        device_id: 0,
        plane_id: -1,
        name: TRACE_METADATA_DEVICE,
        kind: DeviceKind::TaskEnvironment.name(),
        ordinal: None,
        r#type: None,
        vendor: None,
        peak_tflops: None,
        peak_hbm_gbps: None,
        clock_rate: None,
        core_count: None,
        line_count: 0,
        event_count: 0,
        stat_count: s.top_level.len() as i32 + 1,
        process_name: None,
    })?;
    let doc = doc.at(0);
    for dev in &s.devices {
        emit_device(input, &doc, s, dev, asm)?;
    }
    let origin_ns = origin_ps.div_euclid(1000);
    Ok(TraceInfo {
        start_unix_ns: base_time_ns.and_then(|b| i64::try_from(b as i128 + origin_ns).ok()),
        ..TraceInfo::default()
    })
}

fn emit_device(
    input: &InputBytes,
    doc: &Json<'_>,
    s: &Scanned,
    dev: &DeviceScan,
    asm: &mut TraceAssembler<'_>,
) -> EmitResult<()> {
    let gpu = dev.is_gpu();
    let kind = dev.kind.unwrap_or(if gpu {
        DeviceKind::Gpu
    } else {
        DeviceKind::Host
    });
    let device_id = asm.begin_device(kind, false)?;
    let trace_id = asm.trace_id();
    let mut stat_count = 0;
    let mut arg = |asm: &mut TraceAssembler<'_>, key: &str, value: StatValue<'_>| {
        asm.device_row(&DeviceArgRow {
            trace_id,
            device_id,
            key,
            value,
        });
        stat_count += 1;
    };
    match &dev.pid {
        Id::Int(v) => arg(asm, "pid", StatValue::Int(*v)),
        Id::Text(t) => arg(asm, "pid", StatValue::Str(Cow::Borrowed(t))),
        Id::Missing => {}
    }
    if let Some(l) = &dev.labels {
        arg(asm, "process_labels", StatValue::Str(Cow::Borrowed(l)));
    }
    if let Some(i) = dev.sort_index {
        arg(asm, "process_sort_index", StatValue::Int(i));
    }
    for (name, text) in &dev.other_metadata {
        arg(asm, name, StatValue::Str(Cow::Borrowed(text)));
    }
    for &t in &dev.tracks {
        let t = &s.tracks[t as usize];
        if let Some(i) = t.sort_index {
            let key = format!("thread_sort_index/{}", t.tid.text());
            arg(asm, &key, StatValue::Int(i));
        }
    }
    let mut names = DeviceNames {
        metadata_ids: HashMap::default(),
    };
    for &t in &dev.tracks {
        emit_track(input, doc, s, gpu, &s.tracks[t as usize], &mut names, asm)?;
    }
    let mut metadata: Vec<(i64, Sym)> = names
        .metadata_ids
        .iter()
        .map(|(&sym, &id)| (id, sym))
        .collect();
    metadata.sort_unstable();
    for (metadata_id, sym) in metadata {
        let name = asm.interner().get(sym).to_string();
        asm.device_row(&EventMetadataRow {
            trace_id,
            device_id,
            metadata_id,
            name: &name,
            display_name: None,
            metadata: None,
            child_ids: &[],
            stat_count: 0,
        });
    }
    let ordinal = if gpu { gpu_ordinal(dev) } else { None };
    let name = device_name(dev, ordinal);
    asm.end_device(DeviceRow {
        trace_id: 0,
        device_id: 0,
        plane_id: dev.pid.as_int().unwrap_or(-1),
        name: &name,
        kind: kind.name(),
        ordinal,
        r#type: None,
        vendor: None,
        peak_tflops: None,
        peak_hbm_gbps: None,
        clock_rate: None,
        core_count: None,
        line_count: 0,
        event_count: 0,
        stat_count,
        process_name: dev.name.as_deref(),
    })?;
    Ok(())
}

/// The name of a device: a GPU (`ordinal` set) labelled `GPU n`, or with
/// no `process_name`, is `GPU n`. Kineto names each GPU's process after
/// the Python process (`python3`, `pyper:trainer:0:1`): the same name on
/// every GPU of a rank and another on each rank, so a device would match
/// across neither. Any other process keeps its name.
fn device_name(dev: &DeviceScan, ordinal: Option<i32>) -> String {
    let labelled_gpu = dev.labels.as_deref().is_some_and(|l| l.contains("GPU"));
    match ordinal {
        Some(n) if labelled_gpu || dev.name.is_none() => format!("GPU {n}"),
        _ => dev.display_name(),
    }
}

/// Events parsed between two releases of the whole input's pages: a
/// track's events are spread over the file, so pass 2 touches it all over;
/// dropping the pages now and then keeps resident memory from growing to
/// the file's size (they come back from the page cache when touched).
const RELEASE_EVERY: usize = 1 << 16;

fn emit_track(
    input: &InputBytes,
    doc: &Json<'_>,
    s: &Scanned,
    dev_gpu: bool,
    t: &TrackScan,
    names: &mut DeviceNames,
    asm: &mut TraceAssembler<'_>,
) -> EmitResult<()> {
    let kind = track_kind(dev_gpu, t);
    asm.summary_mut().lines += 1;
    let track: Track = asm.begin_track(&TrackSpec {
        line_id: t.line_id,
        display_id: t.line_id,
        name: &t.name,
        display_name: &t.name,
        kind: LineKind {
            kind,
            role: Role::Other,
        },
        unit: None,
        timestamp_ns: 0,
        duration_ps: 0,
    });
    let pending: Vec<Pending<u32>> = t
        .events
        .iter()
        .map(|&i| {
            let r = &s.recs[i as usize];
            Pending {
                ts_ps: r.ts_ps - s.origin_ps,
                dur_ps: r.dur_ps,
                aggregated: false,
                data: i,
            }
        })
        .collect();
    let placed = asm.place_sorted(track, pending);
    // (start, end, event_id) of the placed slices, for binding flows.
    let mut spans: Vec<(i64, i64, i64)> =
        Vec::with_capacity(if t.flows.is_empty() { 0 } else { placed.len() });
    let bytes: &[u8] = input;
    let mut text = EventText::default();
    for (n, (p, i)) in placed.into_iter().enumerate() {
        if n % RELEASE_EVERY == RELEASE_EVERY - 1 {
            input.release(0, bytes.len());
        }
        let r = &s.recs[i as usize];
        text.name = Cow::Borrowed("");
        text.args.clear();
        read_event(doc, r.start, false, &mut text)?;
        if r.end_event != u32::MAX {
            read_event(doc, s.ends[r.end_event as usize], true, &mut text)?;
        }
        let name = asm.interner().intern(&text.name);
        let metadata_id = names.metadata_id(name);
        let mut correlation_id = None;
        let mut stat_count = 0;
        for (key, value) in text.args.drain(..) {
            let value = stat_value(value);
            if key == "correlation" {
                correlation_id = value.as_i64();
            }
            if r.phase == Phase::Counter
                && let Some(v) = value.as_f64()
            {
                let series = format!("{}/{}", text.name, key);
                let series = asm.interner().intern(&series);
                asm.counter(track, p.event_id, series, p.ts_ps, v);
            }
            let (mut w, interner) = asm.args_and_interner();
            let key = interner.intern(&key);
            w.arg(p.event_id, key, &value);
            stat_count += 1;
        }
        if let Some(c) = correlation_id {
            asm.correlation(c, p.ts_ps, p.event_id);
        }
        if !t.flows.is_empty() {
            spans.push((p.ts_ps, p.ts_ps.saturating_add(r.dur_ps), p.event_id));
        }
        asm.push_event(&EventRow {
            event_id: p.event_id,
            track_id: p.track_id,
            metadata_id,
            name,
            display_name: name,
            ts_ps: p.ts_ps,
            dur_ps: r.dur_ps,
            self_ps: p.self_ps.unwrap_or(r.dur_ps),
            depth: p.depth,
            parent_id: p.parent_id,
            occurrences: 1,
            device_offset_ps: None,
            device_duration_ps: None,
            hlo_op: None,
            hlo_module: None,
            program_id: None,
            tf_op: None,
            hlo_category: None,
            flops: None,
            bytes_accessed: None,
            correlation_id,
            group_id: None,
            step_num: None,
            step_event_id: p.step_event_id,
            module_event_id: p.module_event_id,
            kernel_event_id: p.kernel_event_id,
            stat_count,
        })?;
    }
    bind_flows(s, t, &spans, asm);
    Ok(())
}

/// Binds the track's flow endpoints to its slices: the innermost slice
/// enclosing the endpoint (`s`, `t`, and `f` with `bp:"e"`), or the first
/// slice starting at or after it (`f` otherwise). Endpoints with no slice
/// to bind to are counted in a warning.
fn bind_flows(s: &Scanned, t: &TrackScan, spans: &[(i64, i64, i64)], asm: &mut TraceAssembler<'_>) {
    let mut unbound = 0u64;
    let mut flows: Vec<(i64, &FlowRec)> = t
        .flows
        .iter()
        .map(|&f| {
            let f = &s.flows[f as usize];
            (f.ts_ps - s.origin_ps, f)
        })
        .collect();
    flows.sort_by_key(|&(ts, _)| ts);
    // One sweep: `open` holds the slices started so far that may still
    // enclose a later endpoint, in nesting order, so its top is the
    // innermost (latest-starting) slice covering the endpoint.
    let mut open: Vec<(i64, i64, i64)> = Vec::new();
    let mut next = 0;
    for (ts, f) in flows {
        while let Some(&sp) = spans.get(next).filter(|sp| sp.0 <= ts) {
            while open.last().is_some_and(|top| top.1 < sp.0) {
                open.pop();
            }
            open.push(sp);
            next += 1;
        }
        while open.last().is_some_and(|top| top.1 < ts) {
            open.pop();
        }
        let bound = if f.next_slice {
            spans.get(spans.partition_point(|sp| sp.0 < ts))
        } else {
            open.last()
        };
        match bound {
            Some(sp) => asm.flow_point(f.flow_id, 0, ts, sp.2),
            None => unbound += 1,
        }
    }
    if unbound > 0 {
        asm.warn(format!(
            "{unbound} flow events on track {:?} have no slice to bind to and were dropped",
            t.name
        ));
    }
}
