//! The pieces every generator builds XSpaces from: [`PlaneBuilder`]
//! (stats named by string and interned), [`event`], [`line`], a seeded
//! [`Rng`], the TPU TensorCore plane and the `Task Environment` plane.

use crate::xspace_proto::{
    XEvent, XEventMetadata, XLine, XPlane, XStat, XStatMetadata, x_event, x_stat,
};

/// Wall clock of the synthetic profile start (ns since the Unix epoch).
pub const PROFILE_START_NS: i64 = 1_764_000_000_000_000_000;

/// Builds one plane, naming stats by string and interning them.
#[derive(Debug)]
pub struct PlaneBuilder {
    plane: XPlane,
}

impl PlaneBuilder {
    /// A plane named `name` with id `id`.
    pub fn new(id: i64, name: &str) -> Self {
        Self {
            plane: XPlane {
                id,
                name: name.into(),
                ..Default::default()
            },
        }
    }

    /// The stat-metadata id of `name`, added when new.
    pub fn stat_id(&mut self, name: &str) -> u64 {
        if let Some((id, _)) = self
            .plane
            .stat_metadata
            .iter()
            .find(|(_, m)| m.name == name)
        {
            return *id as u64;
        }
        let id = self.plane.stat_metadata.len() as i64 + 1;
        self.plane.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: name.into(),
                description: String::new(),
            },
        );
        id as u64
    }

    /// A stat `name = value`.
    pub fn stat(&mut self, name: &str, value: x_stat::Value) -> XStat {
        XStat {
            metadata_id: self.stat_id(name),
            value: Some(value),
        }
    }

    /// A stat whose string value is interned as a `ref_value`.
    pub fn ref_stat(&mut self, name: &str, value: &str) -> XStat {
        let v = self.stat_id(value);
        self.stat(name, x_stat::Value::RefValue(v))
    }

    /// Adds event metadata; returns its id.
    pub fn event_metadata(&mut self, name: &str, display_name: &str, stats: Vec<XStat>) -> i64 {
        let id = self.plane.event_metadata.len() as i64 + 1;
        self.plane.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: name.into(),
                display_name: display_name.into(),
                stats,
                ..Default::default()
            },
        );
        id
    }

    /// Adds a plane stat.
    pub fn plane_stat(&mut self, name: &str, value: x_stat::Value) {
        let s = self.stat(name, value);
        self.plane.stats.push(s);
    }

    /// Adds a line.
    pub fn line(&mut self, line: XLine) {
        self.plane.lines.push(line);
    }

    /// The plane.
    pub fn finish(self) -> XPlane {
        self.plane
    }
}

/// An event at `offset_ps` lasting `duration_ps`.
pub fn event(metadata_id: i64, offset_ps: i64, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
    XEvent {
        metadata_id,
        data: Some(x_event::Data::OffsetPs(offset_ps)),
        duration_ps,
        stats,
    }
}

/// A line.
pub fn line(id: i64, name: &str, timestamp_ns: i64, events: Vec<XEvent>) -> XLine {
    XLine {
        id,
        name: name.into(),
        timestamp_ns,
        events,
        ..Default::default()
    }
}

/// Deterministic pseudo-random numbers (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// Next value in `[lo, hi)`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        lo + (r % (hi - lo).max(1) as u64) as i64
    }
}

/// A TPU v6e TensorCore plane `/device:TPU:<ordinal>` with the device's
/// stats (type, peak FLOP/s and HBM bandwidth, one core), no lines yet.
pub(crate) fn tensor_core_plane(id: i64, ordinal: usize) -> PlaneBuilder {
    let mut p = PlaneBuilder::new(id, &format!("/device:TPU:{ordinal}"));
    p.plane_stat(
        "device_type_string",
        x_stat::Value::StrValue("TPU v6 Lite".into()),
    );
    p.plane_stat(
        "peak_teraflops_per_second",
        x_stat::Value::DoubleValue(918.0),
    );
    p.plane_stat(
        "peak_hbm_bw_gigabytes_per_second",
        x_stat::Value::DoubleValue(1640.0),
    );
    p.plane_stat("core_count", x_stat::Value::Int64Value(1));
    p
}

/// The `Task Environment` plane: the profile start and stop.
pub(crate) fn task_environment() -> XPlane {
    let mut p = PlaneBuilder::new(100, "Task Environment");
    p.plane_stat(
        "profile_start_time",
        x_stat::Value::Uint64Value(PROFILE_START_NS as u64),
    );
    p.plane_stat(
        "profile_stop_time",
        x_stat::Value::Uint64Value(PROFILE_START_NS as u64 + 1_000_000_000),
    );
    p.finish()
}
