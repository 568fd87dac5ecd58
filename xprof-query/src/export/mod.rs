//! A SQL selection of events back onto a timeline viewer: Chrome Trace
//! Event JSON ([`chrome`], opened by ui.perfetto.dev and chrome://tracing)
//! or Perfetto's protobuf trace ([`perfetto`], for large selections).
//!
//! The selection is any query whose rows carry `trace_id` and `event_id`
//! (`SELECT * FROM events WHERE …` has them, and so do most views). The
//! selected events are written with their tracks and devices, their args
//! (`event_args`), the flows between two selected events, and, when asked,
//! the counter samples of their devices within the selection's time span.
//! Everything is streamed from DataFusion in track and time order: memory
//! holds one batch and one open-slice stack per track, not the selection.
//!
//! A TPU kernel-profiling capture's region markers (zero-length events)
//! are written as slices of their measured time, each under a slice of
//! its kernel execution on the markers' track (`regions.rs`).
//!
//! A compiled kernel's ops (a selection of `llo_dump_ops` rows: `trace_id`,
//! `address`, `position`) are written as its schedule ([`schedule`]): a
//! track per functional-unit slot, a slice per op at its bundle (1 bundle
//! = 1 ns), the SSA dependencies as flows.
//!
//! Slices on one track must nest for a viewer to draw them; a slice that
//! overlaps the one before without nesting in it goes to an overflow lane
//! of its track (`<track> (overlap N)`), so nothing is dropped.

pub mod chrome;
pub mod perfetto;
mod regions;
pub mod schedule;
mod timeline;

pub use timeline::{
    ArgValue, CounterSample, FlowLink, Lane, LaneNames, Slice, TimelineSink, flow_uid,
};

use std::collections::HashMap;
use std::path::Path;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type, Int64Type, UInt64Type};
use futures_util::StreamExt;

use crate::error::{QueryError, Result};
use crate::session::ProfileSession;

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportFormat {
    /// Chrome Trace Event JSON (`{"traceEvents": [...]}`).
    ChromeJson,
    /// Perfetto's protobuf `Trace` (TracePacket, TrackDescriptor, TrackEvent).
    Perfetto,
}

impl ExportFormat {
    /// The format named `name` (`chrome`, `json`, `perfetto`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "chrome" | "json" | "chrome_json" => Some(Self::ChromeJson),
            "perfetto" | "proto" | "pftrace" => Some(Self::Perfetto),
            _ => None,
        }
    }
}

/// What to export besides the selected events.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions {
    /// The file format.
    pub format: ExportFormat,
    /// Also the counter samples (`counters`) of the selected events'
    /// devices within the selection's time span.
    pub counters: bool,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Slices (selected events).
    pub events: u64,
    /// Tracks written, overflow lanes included.
    pub tracks: u64,
    /// Flows between two selected events.
    pub flows: u64,
    /// Counter samples.
    pub counter_samples: u64,
    /// Kernel executions written as the parent slices of their selected
    /// LLO region entries (not counted in `events`).
    pub region_kernels: u64,
}

/// Exports the events selected by `selection` (a query over the
/// session's tables whose rows carry `trace_id` and `event_id`) to `out`.
/// The file appears whole or not at all: it is written beside `out` and
/// renamed when complete.
pub async fn export(
    session: &ProfileSession,
    selection: &str,
    out: &Path,
    options: &ExportOptions,
) -> Result<ExportSummary> {
    let selection = selection.trim().trim_end_matches(';');
    let schema = session.sql(selection).await?.schema().clone();
    let has = |column: &str| schema.field_with_unqualified_name(column).is_ok();
    // A compiled kernel's ops (`llo_dump_ops` rows): its schedule.
    let is_schedule = !has("event_id") && schedule::SCHEDULE_KEYS.iter().all(|c| has(c));
    if !is_schedule {
        for column in ["trace_id", "event_id"] {
            if !has(column) {
                return Err(QueryError::Inputs(format!(
                    "the selection has no {column} column: export needs the events' \
                     trace_id and event_id (e.g. SELECT * FROM events WHERE …), or a \
                     dump's ops with trace_id, address and position (SELECT * FROM \
                     llo_dump_ops WHERE hlo_op = '…') for a kernel's schedule"
                )));
            }
        }
    }
    // Written whole or not at all, never over a device or through a
    // symbolic link ([`OutputFile`](crate::output_file::OutputFile)).
    let file = crate::output_file::OutputFile::create(out)?;
    let writer = std::io::BufWriter::with_capacity(1 << 20, file);
    let finished = |w: std::io::BufWriter<crate::output_file::OutputFile>| {
        w.into_inner()
            .map_err(|e| output_error(out, e.into_error()))?
            .commit()
    };
    // An output dropped unfinished leaves no partial file.
    match options.format {
        ExportFormat::ChromeJson => {
            let mut sink =
                chrome::ChromeJsonWriter::new(writer).map_err(|e| output_error(out, e))?;
            let summary =
                write_into(session, selection, is_schedule, options, &mut sink, out).await?;
            finished(sink.into_inner())?;
            Ok(summary)
        }
        ExportFormat::Perfetto => {
            let mut sink = perfetto::PerfettoWriter::new(writer);
            let summary =
                write_into(session, selection, is_schedule, options, &mut sink, out).await?;
            finished(sink.into_inner())?;
            Ok(summary)
        }
    }
}

/// Writes the selection into `sink`: a compiled kernel's schedule
/// (`is_schedule`: the selection is ops of `llo_dump_ops`), else the
/// selected events.
async fn write_into(
    session: &ProfileSession,
    selection: &str,
    is_schedule: bool,
    options: &ExportOptions,
    sink: &mut (dyn TimelineSink + Send),
    out: &Path,
) -> Result<ExportSummary> {
    if !is_schedule {
        return stream_into(session, selection, options, sink, out).await;
    }
    let counts =
        schedule::write_schedule(session, selection, sink, |e| output_error(out, e)).await?;
    Ok(ExportSummary {
        events: counts.ops,
        tracks: counts.tracks,
        flows: counts.flows,
        ..Default::default()
    })
}

fn output_error(path: &Path, e: std::io::Error) -> QueryError {
    QueryError::Output {
        path: path.to_path_buf(),
        source: e,
    }
}

/// The selection as a CTE the export queries share; they test events
/// against it with `EXISTS` ([`SELECTED`]), a semi join whose build side
/// is only the selection's two id columns.
fn with_selection(selection: &str) -> String {
    format!("WITH xprof_export_selection AS ({selection})")
}

/// Whether event `e` is selected.
const SELECTED: &str = "EXISTS (SELECT 1 FROM xprof_export_selection s \
                        WHERE s.trace_id = e.trace_id AND s.event_id = e.event_id)";

/// Assigns each slice of a track the first lane where it nests.
#[derive(Default)]
struct LaneStacks {
    /// Per lane of the current track: the ends of the open slices.
    open_ends: Vec<Vec<i64>>,
}

impl LaneStacks {
    fn place(&mut self, ts_ps: i64, end_ps: i64) -> u32 {
        for (i, stack) in self.open_ends.iter_mut().enumerate() {
            while stack.last().is_some_and(|&e| e <= ts_ps) {
                stack.pop();
            }
            if stack.last().is_none_or(|&e| end_ps <= e) {
                stack.push(end_ps);
                return i as u32;
            }
        }
        self.open_ends.push(vec![end_ps]);
        (self.open_ends.len() - 1) as u32
    }
}

async fn stream_into(
    session: &ProfileSession,
    selection: &str,
    options: &ExportOptions,
    sink: &mut (dyn TimelineSink + Send),
    path: &Path,
) -> Result<ExportSummary> {
    let io = |e: std::io::Error| output_error(path, e);
    let cte = with_selection(selection);
    let mut summary = ExportSummary::default();
    let traces = session
        .collect(&format!(
            "{cte} SELECT count(DISTINCT trace_id) AS n FROM xprof_export_selection"
        ))
        .await?;
    let several_traces = first_i64(&traces).unwrap_or(0) > 1;

    // Flows first (few): which events they bind, to remember those
    // events' lanes while the slices stream by.
    let flow_rows = session
        .collect(&format!(
            "{cte} SELECT f.trace_id, f.flow_id, f.kind, f.src_event_id, f.dst_event_id \
             FROM flows f \
             WHERE EXISTS (SELECT 1 FROM xprof_export_selection s \
                           WHERE s.trace_id = f.trace_id AND s.event_id = f.src_event_id) \
             AND EXISTS (SELECT 1 FROM xprof_export_selection d \
                         WHERE d.trace_id = f.trace_id AND d.event_id = f.dst_event_id) \
             ORDER BY f.trace_id, f.flow_id, f.src_event_id, f.dst_event_id"
        ))
        .await?;
    let mut flows = Vec::new();
    let mut flow_ends: HashMap<(i32, i64), Option<(Lane, i64)>> = HashMap::new();
    // Per event: the flows leaving it and arriving at it.
    let mut flow_ids: HashMap<(i32, i64), (Vec<u64>, Vec<u64>)> = HashMap::new();
    for b in &flow_rows {
        let trace = b.column(0).as_primitive::<Int32Type>();
        let id = b.column(1).as_primitive::<Int64Type>();
        let kind = strings(b.column(2))?;
        let src = b.column(3).as_primitive::<Int64Type>();
        let dst = b.column(4).as_primitive::<Int64Type>();
        for (i, kind) in kind.into_iter().enumerate() {
            let t = trace.value(i);
            flows.push((t, id.value(i), kind, src.value(i), dst.value(i)));
            flow_ends.insert((t, src.value(i)), None);
            flow_ends.insert((t, dst.value(i)), None);
            let uid = flow_uid(t, id.value(i), dst.value(i));
            flow_ids.entry((t, src.value(i))).or_default().0.push(uid);
            flow_ids.entry((t, dst.value(i))).or_default().1.push(uid);
        }
    }

    // Devices, tracks and hosts by (trace, track): few rows, looked up
    // here so the large sorted stream below carries only the events'
    // own columns.
    let names = session
        .collect(&format!(
            "{cte} SELECT t.trace_id, t.track_id, t.device_id, t.name AS track_name, \
             d.name AS device_name, tr.host \
             FROM tracks t \
             JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id \
             JOIN traces tr ON tr.trace_id = t.trace_id \
             WHERE t.trace_id IN (SELECT DISTINCT trace_id FROM xprof_export_selection)"
        ))
        .await?;
    let mut track_names: HashMap<(i32, i32), (i32, String, String, String)> = HashMap::new();
    for b in &names {
        let trace = b.column(0).as_primitive::<Int32Type>();
        let track = b.column(1).as_primitive::<Int32Type>();
        let device = b.column(2).as_primitive::<Int32Type>();
        let track_name = strings(b.column(3))?;
        let device_name = strings(b.column(4))?;
        let host = strings(b.column(5))?;
        for i in 0..b.num_rows() {
            track_names.insert(
                (trace.value(i), track.value(i)),
                (
                    device.value(i),
                    track_name[i].clone(),
                    device_name[i].clone(),
                    host[i].clone(),
                ),
            );
        }
    }
    let trace_rows = session
        .collect(&format!(
            "{cte} SELECT DISTINCT trace_id FROM xprof_export_selection ORDER BY trace_id"
        ))
        .await?;
    let mut trace_ids = Vec::new();
    for b in &trace_rows {
        let col = arrow::compute::cast(b.column(0), &DataType::Int32)
            .map_err(datafusion::error::DataFusionError::from)?;
        trace_ids.extend(col.as_primitive::<Int32Type>().iter().flatten());
    }
    let regions = regions::region_slices(session, &cte).await?;
    // The kernel execution whose parent slice was written last, per
    // (trace, track).
    let mut parent_written: Option<(i32, i32, i64)> = None;
    let mut placer = Placer {
        several_traces,
        track_names,
        flow_ends,
        flow_ids,
        stacks: LaneStacks::default(),
        current_track: None,
        seen: Default::default(),
    };
    for trace_id in trace_ids {
        // One trace at a time, in the events' stored order (track, start,
        // longer first): the semi join probes the events, so the plan
        // merges the sorted files instead of sorting (track ids are
        // numbered device by device, so this is also device order).
        let mut stream = session
            .execute(&format!(
                "{cte} SELECT e.track_id, e.event_id, e.name, e.ts_ps, e.dur_ps \
                 FROM events e WHERE e.trace_id = {trace_id} AND {SELECTED} \
                 ORDER BY e.track_id, e.ts_ps"
            ))
            .await?;
        while let Some(batch) = stream.next().await {
            let b = batch?;
            if b.num_rows() == 0 {
                continue;
            }
            let event = b.column(1).as_primitive::<Int64Type>();
            let (lo, hi) = (
                arrow::compute::min(event).unwrap_or(0),
                arrow::compute::max(event).unwrap_or(0),
            );
            let mut args = args_of(session, trace_id, lo, hi, event.values()).await?;
            let track = b.column(0).as_primitive::<Int32Type>();
            let name = strings(b.column(2))?;
            let ts = b.column(3).as_primitive::<Int64Type>();
            let dur = b.column(4).as_primitive::<Int64Type>();
            for (i, name) in name.into_iter().enumerate() {
                let mut slice = Slice {
                    trace_id,
                    event_id: event.value(i),
                    name,
                    ts_ps: ts.value(i),
                    dur_ps: dur.value(i).max(0),
                    args: args.remove(&event.value(i)).unwrap_or_default(),
                    flows_out: Vec::new(),
                    flows_in: Vec::new(),
                };
                if let Some(region) = regions.get(&(trace_id, slice.event_id)) {
                    if let Some(k) = &region.kernel {
                        let key = (trace_id, track.value(i), k.event_id);
                        if parent_written != Some(key) {
                            parent_written = Some(key);
                            let parent = Slice {
                                trace_id,
                                event_id: k.event_id,
                                name: k.hlo_op.clone(),
                                ts_ps: k.ts_ps.min(slice.ts_ps),
                                dur_ps: k.dur_ps.max(0),
                                args: vec![(
                                    "kernel_event_id".to_string(),
                                    ArgValue::Int(k.event_id),
                                )],
                                flows_out: Vec::new(),
                                flows_in: Vec::new(),
                            };
                            placer
                                .place_parent(parent, track.value(i), sink, &mut summary)
                                .map_err(io)?;
                        }
                    }
                    slice.name = region.name.clone();
                    slice.dur_ps = region.dur_ps.max(0);
                    slice.args.extend(region.args.iter().cloned());
                }
                placer
                    .place(slice, track.value(i), sink, &mut summary)
                    .map_err(io)?;
            }
        }
    }
    let flow_ends = placer.flow_ends;

    for (trace_id, flow_id, kind, src, dst) in flows {
        let (Some(Some(from)), Some(Some(to))) = (
            flow_ends.get(&(trace_id, src)).cloned(),
            flow_ends.get(&(trace_id, dst)).cloned(),
        ) else {
            continue;
        };
        sink.flow(&FlowLink {
            trace_id,
            flow_id,
            link_id: flow_uid(trace_id, flow_id, dst),
            kind,
            from,
            to,
        })
        .map_err(io)?;
        summary.flows += 1;
    }

    if options.counters {
        let mut stream = session
            .execute(&format!(
                "{cte}, \
                 span AS (SELECT e.trace_id, min(e.ts_ps) AS lo, max(e.ts_ps + e.dur_ps) AS hi \
                   FROM events e WHERE {SELECTED} GROUP BY e.trace_id), \
                 devs AS (SELECT DISTINCT e.trace_id, t.device_id FROM events e \
                   JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id \
                   WHERE {SELECTED}) \
                 SELECT c.trace_id, t.device_id, c.name, c.ts_ps, c.value, d.name AS device_name, tr.host \
                 FROM counters c \
                 JOIN tracks t ON t.trace_id = c.trace_id AND t.track_id = c.track_id \
                 JOIN devs v ON v.trace_id = t.trace_id AND v.device_id = t.device_id \
                 JOIN span p ON p.trace_id = c.trace_id AND c.ts_ps BETWEEN p.lo AND p.hi \
                 JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id \
                 JOIN traces tr ON tr.trace_id = c.trace_id \
                 ORDER BY c.trace_id, t.device_id, c.name, c.ts_ps, c.event_id"
            ))
            .await?;
        while let Some(batch) = stream.next().await {
            let b = batch?;
            let trace = b.column(0).as_primitive::<Int32Type>();
            let device = b.column(1).as_primitive::<Int32Type>();
            let name = strings(b.column(2))?;
            let ts = b.column(3).as_primitive::<Int64Type>();
            let value = b.column(4).as_primitive::<Float64Type>();
            let device_name = strings(b.column(5))?;
            let host = strings(b.column(6))?;
            for i in 0..b.num_rows() {
                let process = if several_traces {
                    format!("{}: {}", host[i], device_name[i])
                } else {
                    device_name[i].clone()
                };
                let sample = CounterSample {
                    trace_id: trace.value(i),
                    device_id: device.value(i),
                    name: name[i].clone(),
                    ts_ps: ts.value(i),
                    value: value.value(i),
                };
                sink.counter(&sample, &process).map_err(io)?;
                summary.counter_samples += 1;
            }
        }
    }
    sink.finish().map_err(io)?;
    Ok(summary)
}

/// Places slices on lanes and hands them to the sink, naming each lane
/// the first time it is used.
struct Placer {
    several_traces: bool,
    /// (device, track name, device name, host) by (trace, track).
    track_names: HashMap<(i32, i32), (i32, String, String, String)>,
    /// Where each flow end was drawn, once it was.
    flow_ends: HashMap<(i32, i64), Option<(Lane, i64)>>,
    /// Per event: the links leaving it and arriving at it.
    flow_ids: HashMap<(i32, i64), (Vec<u64>, Vec<u64>)>,
    stacks: LaneStacks,
    current_track: Option<(i32, i32)>,
    seen: std::collections::HashSet<Lane>,
}

impl Placer {
    /// Places a kernel execution as the parent of its region entries: a
    /// slice on the entries' track that is no selected event, so it
    /// binds no flow.
    fn place_parent(
        &mut self,
        slice: Slice,
        track_id: i32,
        sink: &mut (dyn TimelineSink + Send),
        summary: &mut ExportSummary,
    ) -> std::io::Result<()> {
        let events = summary.events;
        let flows = (
            std::mem::take(&mut self.flow_ends),
            std::mem::take(&mut self.flow_ids),
        );
        let placed = self.place(slice, track_id, sink, summary);
        (self.flow_ends, self.flow_ids) = flows;
        summary.events = events;
        summary.region_kernels += 1;
        placed
    }

    fn place(
        &mut self,
        mut slice: Slice,
        track_id: i32,
        sink: &mut (dyn TimelineSink + Send),
        summary: &mut ExportSummary,
    ) -> std::io::Result<()> {
        let track_key = (slice.trace_id, track_id);
        if self.current_track != Some(track_key) {
            self.current_track = Some(track_key);
            self.stacks = LaneStacks::default();
        }
        let overflow = self
            .stacks
            .place(slice.ts_ps, slice.ts_ps.saturating_add(slice.dur_ps));
        let names = self.track_names.get(&track_key);
        let lane = Lane {
            trace_id: slice.trace_id,
            device_id: names.map_or(0, |n| n.0),
            track_id,
            overflow,
        };
        if !self.seen.contains(&lane) {
            // Names are copied once per lane, not per event.
            let (_, track, device, host) = names.cloned().unwrap_or_default();
            let process = if self.several_traces {
                format!("{host}: {device}")
            } else {
                device
            };
            let thread = if overflow == 0 {
                track
            } else {
                format!("{track} (overlap {overflow})")
            };
            sink.lane(&lane, &LaneNames { process, thread })?;
            self.seen.insert(lane.clone());
            summary.tracks += 1;
        }
        let key = (slice.trace_id, slice.event_id);
        if let Some(end) = self.flow_ends.get_mut(&key) {
            *end = Some((lane.clone(), slice.ts_ps));
        }
        if let Some((out, into)) = self.flow_ids.get(&key) {
            slice.flows_out = out.clone();
            slice.flows_in = into.clone();
        }
        sink.slice(&lane, &slice)?;
        summary.events += 1;
        Ok(())
    }
}

/// The args (`event_args`) of trace `trace_id`'s events `ids` (one batch
/// of selected events, ids within `lo..=hi`), by event, in key order.
/// Event ids follow (track, start) in every converter's output and
/// `event_args` is sorted by them, so the range prunes row groups and a
/// batch of selected events reads a narrow range of the table. A sparse
/// batch (its range over twice its size) also sends its ids, so the scan
/// keeps only theirs; a dense one is filtered here (planning a long `IN`
/// list costs more than reading the few extra rows).
async fn args_of(
    session: &ProfileSession,
    trace_id: i32,
    lo: i64,
    hi: i64,
    ids: &[i64],
) -> Result<HashMap<i64, Vec<(String, ArgValue)>>> {
    use std::fmt::Write as _;
    let sparse = (hi as i128 - lo as i128 + 1) > 2 * ids.len() as i128;
    let mut list = String::new();
    if sparse {
        list.push_str(" AND event_id IN (");
        for (n, id) in ids.iter().enumerate() {
            let _ = write!(list, "{}{id}", if n == 0 { "" } else { "," });
        }
        list.push(')');
    }
    let wanted: std::collections::HashSet<i64> = ids.iter().copied().collect();
    let batches = session
        .collect(&format!(
            "SELECT event_id, key, int_value, uint_value, double_value, str_value, bytes_value \
             FROM event_args WHERE trace_id = {trace_id} AND event_id BETWEEN {lo} AND {hi}{list} \
             ORDER BY event_id, key"
        ))
        .await?;
    let mut out: HashMap<i64, Vec<(String, ArgValue)>> = HashMap::new();
    for b in &batches {
        let event = b.column(0).as_primitive::<Int64Type>();
        let key = strings(b.column(1))?;
        let int_value = b.column(2).as_primitive::<Int64Type>();
        let uint_value = b.column(3).as_primitive::<UInt64Type>();
        let double_value = b.column(4).as_primitive::<Float64Type>();
        let str_value = strings(b.column(5))?;
        let bytes_value = b.column(6);
        for i in 0..b.num_rows() {
            if !wanted.contains(&event.value(i)) {
                continue;
            }
            let value = if int_value.is_valid(i) {
                ArgValue::Int(int_value.value(i))
            } else if uint_value.is_valid(i) {
                ArgValue::Uint(uint_value.value(i))
            } else if double_value.is_valid(i) {
                ArgValue::Double(double_value.value(i))
            } else if b.column(5).is_valid(i) {
                ArgValue::Str(str_value[i].clone())
            } else if bytes_value.is_valid(i) {
                ArgValue::Str(hex(binary_value(bytes_value, i)))
            } else {
                continue;
            };
            out.entry(event.value(i))
                .or_default()
                .push((key[i].clone(), value));
        }
    }
    Ok(out)
}

fn first_i64(batches: &[RecordBatch]) -> Option<i64> {
    let b = batches.iter().find(|b| b.num_rows() > 0)?;
    let col = arrow::compute::cast(b.column(0), &DataType::Int64).ok()?;
    Some(col.as_primitive::<Int64Type>().value(0))
}

/// A string column (any string or dictionary type) as owned strings,
/// NULL as "" (check validity on the array where it matters).
fn strings(col: &dyn Array) -> Result<Vec<String>> {
    let utf8 = arrow::compute::cast(col, &DataType::Utf8)
        .map_err(datafusion::error::DataFusionError::from)?;
    let arr = utf8.as_string::<i32>();
    Ok((0..arr.len())
        .map(|i| {
            if arr.is_valid(i) {
                arr.value(i).to_string()
            } else {
                String::new()
            }
        })
        .collect())
}

fn binary_value(col: &dyn Array, i: usize) -> &[u8] {
    match col.data_type() {
        DataType::Binary => col.as_binary::<i32>().value(i),
        DataType::LargeBinary => col.as_binary::<i64>().value(i),
        DataType::BinaryView => col.as_binary_view().value(i),
        _ => &[],
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
