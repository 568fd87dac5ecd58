//! The XSpace protobuf messages (`tensorflow.profiler`, proto3), written
//! by hand with `prost` derives so that no `protoc` is needed to build.
//!
//! Maps are `BTreeMap`s so that encoding is deterministic.
//!
//! The converter (`xprof-convert`) does not use them: it walks the
//! bytes, where a whole [`XSpace`] decoded into these types costs about
//! 10x the file in memory. The generators and tests use them to *write*
//! files (and a few tests to read them back).

use std::collections::BTreeMap;

/// A whole profile: the planes of one host.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XSpace {
    /// Planes (devices and sources).
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<XPlane>,
    /// Errors recorded by the profiler.
    #[prost(string, repeated, tag = "2")]
    pub errors: Vec<String>,
    /// Warnings recorded by the profiler.
    #[prost(string, repeated, tag = "3")]
    pub warnings: Vec<String>,
    /// Host names.
    #[prost(string, repeated, tag = "4")]
    pub hostnames: Vec<String>,
}

/// One device or source.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XPlane {
    /// Plane id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Plane name, e.g. `/device:TPU:0`.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Timelines.
    #[prost(message, repeated, tag = "3")]
    pub lines: Vec<XLine>,
    /// Event metadata by id.
    #[prost(btree_map = "int64, message", tag = "4")]
    pub event_metadata: BTreeMap<i64, XEventMetadata>,
    /// Stat metadata by id.
    #[prost(btree_map = "int64, message", tag = "5")]
    pub stat_metadata: BTreeMap<i64, XStatMetadata>,
    /// Plane stats.
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<XStat>,
}

/// One timeline.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XLine {
    /// Line id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Display id; falls back to `id` when 0.
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    /// Line name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Display name; falls back to `name` when empty.
    #[prost(string, tag = "11")]
    pub display_name: String,
    /// Start of the line in ns.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    /// Duration of the line in ps.
    #[prost(int64, tag = "9")]
    pub duration_ps: i64,
    /// Events.
    #[prost(message, repeated, tag = "4")]
    pub events: Vec<XEvent>,
}

/// One interval on a line.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XEvent {
    /// Key into the plane's event metadata.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// Offset from the line start, or the occurrence count.
    #[prost(oneof = "x_event::Data", tags = "2, 5")]
    pub data: Option<x_event::Data>,
    /// Duration in ps.
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    /// Stats.
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// The `data` oneof of [`XEvent`].
pub mod x_event {
    /// Offset or occurrence count.
    #[derive(Clone, Copy, PartialEq, ::prost::Oneof)]
    pub enum Data {
        /// Offset from the line start in ps.
        #[prost(int64, tag = "2")]
        OffsetPs(i64),
        /// Number of occurrences of an aggregated event.
        #[prost(int64, tag = "5")]
        NumOccurrences(i64),
    }
}

/// A typed key/value.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XStat {
    /// Key into the plane's stat metadata.
    #[prost(uint64, tag = "1")]
    pub metadata_id: u64,
    /// The value.
    #[prost(oneof = "x_stat::Value", tags = "2, 3, 4, 5, 6, 7, 8")]
    pub value: Option<x_stat::Value>,
}

/// The `value` oneof of [`XStat`].
pub mod x_stat {
    /// A stat value.
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Value {
        /// A double.
        #[prost(double, tag = "2")]
        DoubleValue(f64),
        /// An unsigned integer.
        #[prost(uint64, tag = "3")]
        Uint64Value(u64),
        /// A signed integer.
        #[prost(int64, tag = "4")]
        Int64Value(i64),
        /// A string.
        #[prost(string, tag = "5")]
        StrValue(String),
        /// Bytes.
        #[prost(bytes = "vec", tag = "6")]
        BytesValue(Vec<u8>),
        /// An id into the stat metadata whose name is the value.
        #[prost(uint64, tag = "7")]
        RefValue(u64),
        /// A gzip-compressed string.
        #[prost(bytes = "vec", tag = "8")]
        CompressedStrValue(Vec<u8>),
    }
}

/// Metadata shared by events.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XEventMetadata {
    /// Id (also the map key).
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Short name.
    #[prost(string, tag = "4")]
    pub display_name: String,
    /// Opaque bytes.
    #[prost(bytes = "vec", tag = "3")]
    pub metadata: Vec<u8>,
    /// Stats shared by every event with this metadata.
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
    /// Child metadata ids.
    #[prost(int64, repeated, tag = "6")]
    pub child_id: Vec<i64>,
}

/// A stat name.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct XStatMetadata {
    /// Id (also the map key).
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Description.
    #[prost(string, tag = "3")]
    pub description: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn plane_fields_are_on_the_wire_in_field_order() {
        // The streaming decoder relies on prost (like protobuf-C++) writing
        // lines (3) before event metadata (4): check our own writer does.
        let mut plane = XPlane {
            id: 1,
            name: "p".into(),
            ..Default::default()
        };
        plane.lines.push(XLine {
            id: 7,
            ..Default::default()
        });
        plane.event_metadata.insert(
            5,
            XEventMetadata {
                id: 5,
                name: "e".into(),
                ..Default::default()
            },
        );
        let bytes = plane.encode_to_vec();
        let line_pos = bytes.iter().position(|b| *b == (3 << 3 | 2)).unwrap();
        let meta_pos = bytes.iter().position(|b| *b == (4 << 3 | 2)).unwrap();
        assert!(line_pos < meta_pos);
        assert_eq!(XPlane::decode(bytes.as_slice()).unwrap(), plane);
    }
}
