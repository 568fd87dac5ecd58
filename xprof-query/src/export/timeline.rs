//! What the export reads and its writers ([`super::chrome`],
//! [`super::perfetto`]) write: the slices, lanes, flows and counter
//! samples of a timeline, and the [`TimelineSink`] a writer implements. A
//! leaf: the writers and the export loop import it, it imports neither.
//!
//! A new timeline format is a new file beside this one implementing
//! [`TimelineSink`], and a new [`super::ExportFormat`].

/// One selected event with its place and args, as the writers get it.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// The event's trace.
    pub trace_id: i32,
    /// Its id.
    pub event_id: i64,
    /// Its name.
    pub name: String,
    /// Start, ps from the trace start.
    pub ts_ps: i64,
    /// Duration, ps.
    pub dur_ps: i64,
    /// Its args (`event_args`), in key order.
    pub args: Vec<(String, ArgValue)>,
    /// Ids ([`flow_uid`]) of the flows leaving this slice to another
    /// selected slice.
    pub flows_out: Vec<u64>,
    /// Ids ([`flow_uid`]) of the flows arriving at this slice.
    pub flows_in: Vec<u64>,
}

/// The id of one link of a flow, unique across the traces of an export:
/// `flows.flow_id` is unique within its trace only, and one flow id may
/// fan out from one source to several destinations (a launch and its
/// kernels), which timeline formats cannot say with one id (they chain
/// the events sharing an id), so each (flow, destination) is a link.
pub fn flow_uid(trace_id: i32, flow_id: i64, dst_event_id: i64) -> u64 {
    // SplitMix64 rounds over the three: distinct links collide with
    // negligible odds.
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    mix(mix(mix(trace_id as u32 as u64) ^ flow_id as u64) ^ dst_event_id as u64)
}

/// A typed arg value.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
    /// A float.
    Double(f64),
    /// A string (bytes are written as their hex text).
    Str(String),
}

/// Where a slice is drawn: a device (process) and a track lane (thread).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lane {
    /// The trace.
    pub trace_id: i32,
    /// The device.
    pub device_id: i32,
    /// The track.
    pub track_id: i32,
    /// 0 for the track itself, N for its N-th overflow lane.
    pub overflow: u32,
}

/// Names of devices and tracks, for the writers' descriptors.
#[derive(Debug, Clone)]
pub struct LaneNames {
    /// The device's (process's) name, prefixed by the host when the
    /// export holds several traces.
    pub process: String,
    /// The track's (thread's) name, with ` (overlap N)` for an overflow
    /// lane.
    pub thread: String,
}

/// A counter sample.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterSample {
    /// The trace.
    pub trace_id: i32,
    /// The device.
    pub device_id: i32,
    /// The series name.
    pub name: String,
    /// When, ps from the trace start.
    pub ts_ps: i64,
    /// The value.
    pub value: f64,
}

/// A flow between two selected slices.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowLink {
    /// The flow's trace.
    pub trace_id: i32,
    /// The flow id (`flows.flow_id`).
    pub flow_id: i64,
    /// This link's id ([`flow_uid`]).
    pub link_id: u64,
    /// What kind of link (`flows.kind`).
    pub kind: String,
    /// Where and when it starts (the source slice's start).
    pub from: (Lane, i64),
    /// Where and when it ends (the destination slice's start).
    pub to: (Lane, i64),
}

/// What a timeline writer receives, in order: lanes before their first
/// slice, slices in (trace, device, track, start) order, then flows, then
/// counters, then `finish`.
pub trait TimelineSink {
    /// A lane is used for the first time.
    fn lane(&mut self, lane: &Lane, names: &LaneNames) -> std::io::Result<()>;
    /// A slice on `lane`. Slices of one lane come in start order and nest.
    fn slice(&mut self, lane: &Lane, slice: &Slice) -> std::io::Result<()>;
    /// A flow between two slices written before.
    fn flow(&mut self, flow: &FlowLink) -> std::io::Result<()>;
    /// A counter sample on `device`'s process, named `names.process`.
    fn counter(&mut self, sample: &CounterSample, process: &str) -> std::io::Result<()>;
    /// Ends the file.
    fn finish(&mut self) -> std::io::Result<()>;
}
