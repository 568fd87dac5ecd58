//! Perfetto's protobuf trace format: a `Trace` is a sequence of
//! `TracePacket`s (field 1), written here one at a time. Devices are
//! process tracks, track lanes are thread tracks under them, events are
//! `TYPE_SLICE_BEGIN`/`TYPE_SLICE_END` pairs, counters are counter tracks
//! with `double_counter_value`, and flows are `flow_ids` /
//! `terminating_flow_ids` on the slices they join.
//!
//! The messages are this project's own, with the field numbers Perfetto
//! publishes (protos/perfetto/trace/trace_packet.proto,
//! track_event/track_event.proto, track_descriptor.proto,
//! debug_annotation.proto); only the fields used are declared.
//!
//! Times: Perfetto's timestamps are nanoseconds (`uint64`); picoseconds
//! are rounded to the nearest nanosecond (halves up), a slice's end
//! rounded the same way as its start, and times before 0 clamp to 0.

use std::collections::HashMap;
use std::io::Write;

use prost::Message;

use super::timeline::{ArgValue, CounterSample, FlowLink, Lane, LaneNames, Slice, TimelineSink};

/// `perfetto.protos.Trace`.
#[derive(Clone, PartialEq, Message)]
pub struct Trace {
    /// The packets.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `perfetto.protos.TracePacket` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    /// Nanoseconds.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer's sequence.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// A slice begin/end or a counter value.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// A track.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `perfetto.protos.TrackDescriptor` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    /// The track's id.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// Its name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Set on a process track.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// Set on a thread track.
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    /// The enclosing track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Set on a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.ProcessDescriptor` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    /// The process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Its name.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `perfetto.protos.ThreadDescriptor` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct ThreadDescriptor {
    /// The process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// The thread id.
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    /// Its name.
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// `perfetto.protos.CounterDescriptor` (no field used: its presence makes
/// the track a counter track).
#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {}

/// `perfetto.protos.TrackEvent` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    /// Args.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// [`TYPE_SLICE_BEGIN`], [`TYPE_SLICE_END`] or [`TYPE_COUNTER`].
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The track.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// The slice name.
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// A counter's value.
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
    /// Flows this slice starts or continues.
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows ending at this slice.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
/// `TrackEvent.Type.TYPE_SLICE_END`.
pub const TYPE_SLICE_END: i32 = 2;
/// `TrackEvent.Type.TYPE_COUNTER`.
pub const TYPE_COUNTER: i32 = 4;

/// `perfetto.protos.DebugAnnotation` (the fields used).
#[derive(Clone, PartialEq, Message)]
pub struct DebugAnnotation {
    /// An unsigned value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// A signed value.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// A float value.
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    /// A string value.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// The arg's name.
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}

/// The one packet sequence this writer emits.
const SEQUENCE_ID: u32 = 1;

/// Picoseconds to Perfetto's nanoseconds, rounded to nearest.
pub fn ps_to_ns(ps: i64) -> u64 {
    if ps <= 0 {
        0
    } else {
        (ps as u64).saturating_add(500) / 1000
    }
}

/// Streams a timeline as a Perfetto protobuf trace.
pub struct PerfettoWriter<W: Write> {
    out: W,
    /// Process track uuid per (trace, device).
    processes: HashMap<(i32, i32), u64>,
    /// Thread track uuid per lane.
    threads: HashMap<Lane, u64>,
    /// Counter track uuid per (trace, device, series).
    counter_tracks: HashMap<(i32, i32, String), u64>,
    /// The open slices' end times (ns) per lane of the current track.
    open: HashMap<Lane, Vec<u64>>,
    current_track: Option<(i32, i32)>,
    next_uuid: u64,
    buf: Vec<u8>,
}

impl<W: Write> PerfettoWriter<W> {
    /// The writer, once the trace is finished.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// A writer; the trace needs no header.
    pub fn new(out: W) -> Self {
        Self {
            out,
            processes: HashMap::new(),
            threads: HashMap::new(),
            counter_tracks: HashMap::new(),
            open: HashMap::new(),
            current_track: None,
            next_uuid: 1,
            buf: Vec::new(),
        }
    }

    fn uuid(&mut self) -> u64 {
        let u = self.next_uuid;
        self.next_uuid += 1;
        u
    }

    /// Writes one packet as field 1 of `Trace`.
    fn packet(&mut self, packet: &TracePacket) -> std::io::Result<()> {
        self.buf.clear();
        packet
            .encode_length_delimited(&mut self.buf)
            .map_err(std::io::Error::other)?;
        self.out.write_all(&[0x0a])?;
        self.out.write_all(&self.buf)
    }

    fn process(&mut self, trace_id: i32, device_id: i32, name: &str) -> std::io::Result<u64> {
        if let Some(u) = self.processes.get(&(trace_id, device_id)) {
            return Ok(*u);
        }
        let uuid = self.uuid();
        let pid = self.processes.len() as i32 + 1;
        self.processes.insert((trace_id, device_id), uuid);
        self.packet(&TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            track_descriptor: Some(TrackDescriptor {
                uuid: Some(uuid),
                name: Some(name.to_string()),
                process: Some(ProcessDescriptor {
                    pid: Some(pid),
                    process_name: Some(name.to_string()),
                }),
                ..Default::default()
            }),
            ..Default::default()
        })?;
        Ok(uuid)
    }

    fn end_event(&mut self, uuid: u64, ts_ns: u64) -> std::io::Result<()> {
        self.packet(&TracePacket {
            timestamp: Some(ts_ns),
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            track_event: Some(TrackEvent {
                r#type: Some(TYPE_SLICE_END),
                track_uuid: Some(uuid),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// Ends the open slices of `lane` that end at or before `until_ns`
    /// (all of them with `None`).
    fn close_until(&mut self, lane: &Lane, until_ns: Option<u64>) -> std::io::Result<()> {
        let Some(uuid) = self.threads.get(lane).copied() else {
            return Ok(());
        };
        loop {
            let Some(stack) = self.open.get_mut(lane) else {
                return Ok(());
            };
            let Some(&end) = stack.last() else {
                return Ok(());
            };
            if until_ns.is_some_and(|t| end > t) {
                return Ok(());
            }
            stack.pop();
            self.end_event(uuid, end)?;
        }
    }

    /// Ends every open slice (the track changed, or the trace ends).
    fn close_all(&mut self) -> std::io::Result<()> {
        let mut lanes: Vec<Lane> = self.open.keys().cloned().collect();
        lanes.sort_by_key(|l| (l.trace_id, l.device_id, l.track_id, l.overflow));
        for lane in lanes {
            self.close_until(&lane, None)?;
        }
        self.open.clear();
        Ok(())
    }
}

fn annotation(key: &str, value: &ArgValue) -> DebugAnnotation {
    let mut a = DebugAnnotation {
        name: Some(key.to_string()),
        ..Default::default()
    };
    match value {
        ArgValue::Int(i) => a.int_value = Some(*i),
        ArgValue::Uint(u) => a.uint_value = Some(*u),
        ArgValue::Double(d) => a.double_value = Some(*d),
        ArgValue::Str(s) => a.string_value = Some(s.clone()),
    }
    a
}

impl<W: Write> TimelineSink for PerfettoWriter<W> {
    fn lane(&mut self, lane: &Lane, names: &LaneNames) -> std::io::Result<()> {
        let parent = self.process(lane.trace_id, lane.device_id, &names.process)?;
        let uuid = self.uuid();
        let pid = self.processes.len() as i32;
        let tid = self.threads.len() as i32 + 1;
        self.threads.insert(lane.clone(), uuid);
        self.packet(&TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            track_descriptor: Some(TrackDescriptor {
                uuid: Some(uuid),
                name: Some(names.thread.clone()),
                parent_uuid: Some(parent),
                thread: Some(ThreadDescriptor {
                    pid: Some(pid),
                    tid: Some(tid),
                    thread_name: Some(names.thread.clone()),
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn slice(&mut self, lane: &Lane, slice: &Slice) -> std::io::Result<()> {
        let track = (lane.trace_id, lane.track_id);
        if self.current_track != Some(track) {
            self.close_all()?;
            self.current_track = Some(track);
        }
        let begin_ns = ps_to_ns(slice.ts_ps);
        let end_ns = ps_to_ns(slice.ts_ps.saturating_add(slice.dur_ps)).max(begin_ns);
        self.close_until(lane, Some(begin_ns))?;
        let uuid = self.threads.get(lane).copied().unwrap_or(0);
        self.packet(&TracePacket {
            timestamp: Some(begin_ns),
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            track_event: Some(TrackEvent {
                r#type: Some(TYPE_SLICE_BEGIN),
                track_uuid: Some(uuid),
                name: Some(slice.name.clone()),
                debug_annotations: slice.args.iter().map(|(k, v)| annotation(k, v)).collect(),
                flow_ids: slice.flows_out.clone(),
                terminating_flow_ids: slice.flows_in.clone(),
                ..Default::default()
            }),
            ..Default::default()
        })?;
        // Rounding may make a nested slice end a nanosecond after its
        // parent: it ends with it.
        let stack = self.open.entry(lane.clone()).or_default();
        let end_ns = stack.last().map_or(end_ns, |&parent| end_ns.min(parent));
        stack.push(end_ns);
        Ok(())
    }

    fn flow(&mut self, _flow: &FlowLink) -> std::io::Result<()> {
        // Written with the slices (`flow_ids`).
        Ok(())
    }

    fn counter(&mut self, sample: &CounterSample, process: &str) -> std::io::Result<()> {
        self.close_all()?;
        self.current_track = None;
        let key = (sample.trace_id, sample.device_id, sample.name.clone());
        let uuid = match self.counter_tracks.get(&key) {
            Some(u) => *u,
            None => {
                let parent = self.process(sample.trace_id, sample.device_id, process)?;
                let uuid = self.uuid();
                self.counter_tracks.insert(key, uuid);
                self.packet(&TracePacket {
                    trusted_packet_sequence_id: Some(SEQUENCE_ID),
                    track_descriptor: Some(TrackDescriptor {
                        uuid: Some(uuid),
                        name: Some(sample.name.clone()),
                        parent_uuid: Some(parent),
                        counter: Some(CounterDescriptor {}),
                        ..Default::default()
                    }),
                    ..Default::default()
                })?;
                uuid
            }
        };
        self.packet(&TracePacket {
            timestamp: Some(ps_to_ns(sample.ts_ps)),
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            track_event: Some(TrackEvent {
                r#type: Some(TYPE_COUNTER),
                track_uuid: Some(uuid),
                double_counter_value: Some(sample.value),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.close_all()?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(track_id: i32, overflow: u32) -> Lane {
        Lane {
            trace_id: 0,
            device_id: 0,
            track_id,
            overflow,
        }
    }

    fn slice(event_id: i64, ts_ps: i64, dur_ps: i64) -> Slice {
        Slice {
            trace_id: 0,
            event_id,
            name: format!("e{event_id}"),
            ts_ps,
            dur_ps,
            args: vec![("k".into(), ArgValue::Int(event_id))],
            flows_out: vec![],
            flows_in: vec![],
        }
    }

    #[test]
    fn nested_slices_end_in_order_and_decode() {
        let mut bytes = Vec::new();
        let mut w = PerfettoWriter::new(&mut bytes);
        let names = LaneNames {
            process: "dev".into(),
            thread: "t".into(),
        };
        w.lane(&lane(0, 0), &names).unwrap();
        // Parent [0, 10 ns), child [2, 4 ns), then a sibling at 12 ns.
        w.slice(&lane(0, 0), &slice(1, 0, 10_000)).unwrap();
        w.slice(&lane(0, 0), &slice(2, 2_000, 2_000)).unwrap();
        w.slice(&lane(0, 0), &slice(3, 12_000, 1_499)).unwrap();
        w.finish().unwrap();
        let trace = Trace::decode(bytes.as_slice()).unwrap();
        let events: Vec<(i32, u64, Option<String>)> = trace
            .packet
            .iter()
            .filter_map(|p| {
                let e = p.track_event.as_ref()?;
                Some((e.r#type?, p.timestamp?, e.name.clone()))
            })
            .collect();
        assert_eq!(
            events,
            vec![
                (TYPE_SLICE_BEGIN, 0, Some("e1".into())),
                (TYPE_SLICE_BEGIN, 2, Some("e2".into())),
                (TYPE_SLICE_END, 4, None),
                (TYPE_SLICE_END, 10, None),
                (TYPE_SLICE_BEGIN, 12, Some("e3".into())),
                // 13.499 ns rounds to 13.
                (TYPE_SLICE_END, 13, None),
            ]
        );
        let descriptors = trace
            .packet
            .iter()
            .filter(|p| p.track_descriptor.is_some())
            .count();
        assert_eq!(descriptors, 2, "one process and one thread track");
    }

    #[test]
    fn picoseconds_round_to_nearest_nanosecond() {
        assert_eq!(ps_to_ns(-5), 0);
        assert_eq!(ps_to_ns(499), 0);
        assert_eq!(ps_to_ns(500), 1);
        assert_eq!(ps_to_ns(1_499_999), 1_500);
    }
}
