//! Proton's tree profile (hatchet JSON, `*.hatchet`, or the same tree in
//! MessagePack, `*.hatchet_msgpack`, transcribed by [`crate::codec::msgpack`]) to
//! `profile_nodes`, `node_metrics` and, from its `device_info`, `devices`.
//!
//! The file is `[root, device_info]`; a node is
//! `{"frame": {"name", "type"}, "metrics": {...}, "children": [...]}`.
//! Nodes are numbered depth first from the root (0). Metrics named
//! ` (exc)` (exclusive) or ` (pty)` (property) lose the suffix and keep
//! the meaning in `node_metrics.kind`; inclusive `time (ns)`, `count`,
//! `device_id`, `device_type`, `flops*` and `bytes` are columns of
//! `profile_nodes`, every other metric a row of `node_metrics`. Each
//! device of `device_info` is a `gpu` device: its keys are `device_args`,
//! its SMs `core_count`, its clock `clock_rate` (kHz, as written), and its
//! peak memory bandwidth `2 × bus_width × memory_clock_rate × 10^3 / 8`
//! bytes/s, as proton-viewer computes it, in `peak_hbm_gbps`.
//!
//! A tree is small (a node per kernel and scope, not per launch), so its
//! nodes are read whole and written sorted; nesting deeper than
//! [`MAX_DEPTH`] is an error.

use std::borrow::Cow;
use std::path::Path;

use xprof_format::StatValue;
use xprof_format::schema::{DeviceArgRow, DeviceRow, NodeMetricRow, ProfileNodeRow};

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::codec::json::{
    self, Json, JsonError, JsonResult, Kind, MAX_DEPTH, NumberValue, Scalar, Utf8Doc, number_value,
};
use crate::codec::msgpack;
use crate::conversion::ConvertOptions;
use crate::error::{ConvertError, Result};
use crate::input::InputBytes;
use crate::names::DeviceKind;
use crate::reader::{LineInfo, PlaneInfo, ProfileReader};

const FORMAT: &str = "Proton tree JSON";
const FORMAT_MSGPACK: &str = "Proton tree MessagePack";

/// Proton's tree profile in the reader registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProtonTreeReader;

/// A metric value, owned.
#[derive(Debug, Clone, PartialEq)]
enum Metric {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    None,
}

impl Metric {
    fn read(j: &mut Json<'_>) -> JsonResult<Metric> {
        Ok(match j.scalar()? {
            Scalar::Null => Metric::None,
            Scalar::Bool(b) => Metric::Int(b as i64),
            Scalar::Number(n) => match number_value(n) {
                NumberValue::Int(v) => Metric::Int(v),
                NumberValue::Uint(v) => Metric::Uint(v),
                NumberValue::Double(v) => Metric::Double(v),
            },
            Scalar::String(s) => Metric::Str(s.into_owned()),
            Scalar::Composite(c) => Metric::Str(c.to_string()),
        })
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Metric::Int(v) => Some(*v as f64),
            Metric::Uint(v) => Some(*v as f64),
            Metric::Double(v) => Some(*v),
            Metric::Str(s) => s.trim().parse().ok(),
            Metric::None => None,
        }
    }

    fn as_text(&self) -> Option<String> {
        match self {
            Metric::Str(s) => Some(s.clone()),
            Metric::Int(v) => Some(v.to_string()),
            Metric::Uint(v) => Some(v.to_string()),
            Metric::Double(v) => Some(v.to_string()),
            Metric::None => None,
        }
    }

    fn stat(&self) -> StatValue<'_> {
        match self {
            Metric::Int(v) => StatValue::Int(*v),
            Metric::Uint(v) => StatValue::Uint(*v),
            Metric::Double(v) => StatValue::Double(*v),
            Metric::Str(s) => StatValue::Str(Cow::Borrowed(s)),
            Metric::None => StatValue::None,
        }
    }
}

/// One node, read whole.
#[derive(Debug, Default)]
struct Node {
    node_id: i64,
    parent_id: Option<i64>,
    depth: i32,
    name: String,
    path: Vec<String>,
    frame_type: Option<String>,
    metrics: Vec<(String, Metric)>,
}

/// The `kind` of a metric and its name without the suffix.
fn metric_kind(raw: &str) -> (&str, &'static str) {
    if let Some(m) = raw.strip_suffix(" (exc)") {
        (m, "exclusive")
    } else if let Some(m) = raw.strip_suffix(" (pty)") {
        (m, "property")
    } else {
        (raw, "inclusive")
    }
}

/// Metrics that are columns of `profile_nodes` (inclusive only).
const PROMOTED: [&str; 10] = [
    "time (ns)",
    "count",
    "device_id",
    "device_type",
    "flops",
    "flops8",
    "flops16",
    "flops32",
    "flops64",
    "bytes",
];

struct TreeReader {
    nodes: Vec<Node>,
}

impl TreeReader {
    /// Reads the node at `j` (and its subtree) with the given parent.
    fn node(&mut self, j: &mut Json<'_>, parent: Option<usize>, depth: usize) -> JsonResult<()> {
        if depth >= MAX_DEPTH {
            return Err(j.error(format!("the tree nests deeper than {MAX_DEPTH} levels")));
        }
        if j.kind()? != Kind::Object {
            return Err(j.error("a tree node is not an object"));
        }
        let index = self.nodes.len();
        self.nodes.push(Node {
            node_id: index as i64,
            parent_id: parent.map(|p| p as i64),
            depth: depth as i32,
            ..Node::default()
        });
        j.begin_object()?;
        let mut first = true;
        while let Some(key) = j.next_key(first)? {
            first = false;
            match key.as_ref() {
                "frame" => {
                    if j.kind()? != Kind::Object {
                        return Err(j.error("a node's frame is not an object"));
                    }
                    j.begin_object()?;
                    let mut f = true;
                    while let Some(k) = j.next_key(f)? {
                        f = false;
                        match k.as_ref() {
                            "name" => {
                                self.nodes[index].name =
                                    Metric::read(j)?.as_text().unwrap_or_default();
                            }
                            "type" => self.nodes[index].frame_type = Metric::read(j)?.as_text(),
                            _ => {
                                let v = Metric::read(j)?;
                                self.nodes[index].metrics.push((format!("frame.{k}"), v));
                            }
                        }
                    }
                }
                "metrics" => {
                    if j.kind()? != Kind::Object {
                        return Err(j.error("a node's metrics are not an object"));
                    }
                    j.begin_object()?;
                    let mut f = true;
                    while let Some(k) = j.next_key(f)? {
                        f = false;
                        let v = Metric::read(j)?;
                        self.nodes[index].metrics.push((k.into_owned(), v));
                    }
                }
                "children" => {
                    if j.kind()? != Kind::Array {
                        return Err(j.error("a node's children are not an array"));
                    }
                    j.begin_array()?;
                    let mut f = true;
                    while j.next_element(f)? {
                        f = false;
                        self.node(j, Some(index), depth + 1)?;
                    }
                }
                _ => {
                    let v = Metric::read(j)?;
                    self.nodes[index].metrics.push((key.into_owned(), v));
                }
            }
        }
        Ok(())
    }
}

/// A device of `device_info`.
struct DeviceInfo {
    device_type: String,
    id: String,
    fields: Vec<(String, Metric)>,
}

fn device_info(j: &mut Json<'_>) -> JsonResult<Vec<DeviceInfo>> {
    let mut out = Vec::new();
    if j.kind()? != Kind::Object {
        return Err(j.error("device_info is not an object"));
    }
    j.begin_object()?;
    let mut first = true;
    while let Some(device_type) = j.next_key(first)? {
        first = false;
        if j.kind()? != Kind::Object {
            j.skip()?;
            continue;
        }
        j.begin_object()?;
        let mut f = true;
        while let Some(id) = j.next_key(f)? {
            f = false;
            let mut fields = Vec::new();
            if j.kind()? == Kind::Object {
                j.begin_object()?;
                let mut g = true;
                while let Some(k) = j.next_key(g)? {
                    g = false;
                    fields.push((k.into_owned(), Metric::read(j)?));
                }
            } else {
                j.skip()?;
            }
            out.push(DeviceInfo {
                device_type: device_type.to_string(),
                id: id.into_owned(),
                fields,
            });
        }
    }
    Ok(out)
}

fn read_tree(doc: Utf8Doc<'_>) -> JsonResult<(Vec<Node>, Vec<DeviceInfo>)> {
    let mut j = doc.at(0);
    if j.kind()? != Kind::Array {
        return Err(j.error("a Proton tree profile is a JSON array [root, device_info]"));
    }
    j.begin_array()?;
    let mut reader = TreeReader { nodes: Vec::new() };
    let mut devices = Vec::new();
    let mut index = 0;
    while j.next_element(index == 0)? {
        match index {
            0 => reader.node(&mut j, None, 0)?,
            1 => devices = device_info(&mut j)?,
            _ => {
                j.skip()?;
            }
        }
        index += 1;
    }
    if !j.at_end() {
        return Err(j.error("more after the end of the JSON document"));
    }
    // Depth first: a parent comes before its children, so its path is
    // known (whatever the order of a node's keys).
    for i in 1..reader.nodes.len() {
        let parent = reader.nodes[i].parent_id.unwrap_or(0) as usize;
        let mut path = reader.nodes[parent].path.clone();
        path.push(reader.nodes[i].name.clone());
        reader.nodes[i].path = path;
    }
    if reader.nodes.is_empty() {
        return Err(JsonError {
            offset: 0,
            what: "the profile has no root node".into(),
        });
    }
    Ok((reader.nodes, devices))
}

fn malformed(path: &Path, e: JsonError) -> ConvertError {
    json::malformed(path, FORMAT, e)
}

/// Whether `head` starts a MessagePack tree: an array of two whose first
/// element is a map (a node).
fn is_msgpack_tree(head: &[u8]) -> bool {
    matches!(head, [0x92, 0x80..=0x8f | 0xde | 0xdf, ..])
}

/// The nodes and devices of a tree profile, JSON or MessagePack.
fn load(input: &InputBytes) -> Result<(Vec<Node>, Vec<DeviceInfo>)> {
    if !is_msgpack_tree(input) {
        let doc = json::document(input, FORMAT)?;
        return read_tree(doc).map_err(|e| malformed(&input.path, e));
    }
    let transcript =
        msgpack::to_json(input).map_err(|e| json::malformed(&input.path, FORMAT_MSGPACK, e))?;
    let doc = Utf8Doc::check(transcript.json.as_bytes(), |_, _| {})
        .map_err(|e| json::malformed(&input.path, FORMAT_MSGPACK, e))?;
    read_tree(doc).map_err(|e| {
        let offset = transcript.input_offset(e.offset);
        json::malformed(&input.path, FORMAT_MSGPACK, JsonError { offset, ..e })
    })
}

impl ProfileReader for ProtonTreeReader {
    fn name(&self) -> &'static str {
        "proton_tree"
    }

    fn owns_file_name(&self, file_name: &str) -> bool {
        let name = file_name.strip_suffix(".gz").unwrap_or(file_name);
        name.ends_with(".hatchet") || name.ends_with(".hatchet_msgpack")
    }

    fn file_suffixes(&self) -> &'static [&'static str] {
        &[
            ".hatchet.gz",
            ".hatchet",
            ".hatchet_msgpack.gz",
            ".hatchet_msgpack",
        ]
    }

    fn sniff(&self, _path: &Path, head: &[u8]) -> bool {
        if is_msgpack_tree(head) {
            return head.windows(6).any(|w| w == b"\xa5frame");
        }
        head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
            && String::from_utf8_lossy(head).contains("\"frame\"")
    }

    fn convert(
        &self,
        input: &InputBytes,
        _options: &ConvertOptions,
        asm: &mut TraceAssembler<'_>,
    ) -> Result<TraceInfo> {
        let (nodes, devices) = load(input)?;
        let trace_id = asm.trace_id();
        for dev in &devices {
            let field = |k: &str| dev.fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
            let device_id = asm.begin_device(DeviceKind::Gpu, false)?;
            for (key, value) in &dev.fields {
                asm.device_row(&DeviceArgRow {
                    trace_id,
                    device_id,
                    key,
                    value: value.stat(),
                });
            }
            let peak_bw = match (
                field("bus_width").and_then(Metric::as_f64),
                field("memory_clock_rate").and_then(Metric::as_f64),
            ) {
                (Some(width), Some(khz)) => Some(2.0 * width * khz * 1e3 / 8.0 / 1e9),
                _ => None,
            };
            let name = format!("{}:{}", dev.device_type, dev.id);
            let arch = field("arch").and_then(Metric::as_text);
            asm.end_device(DeviceRow {
                trace_id: 0,
                device_id: 0,
                plane_id: dev.id.parse().unwrap_or(-1),
                name: &name,
                kind: DeviceKind::Gpu.name(),
                ordinal: dev.id.parse().ok(),
                r#type: arch.as_deref(),
                vendor: Some(match dev.device_type.as_str() {
                    "CUDA" => "NVIDIA",
                    "HIP" => "AMD",
                    other => other,
                }),
                peak_tflops: None,
                peak_hbm_gbps: peak_bw,
                clock_rate: field("clock_rate").and_then(Metric::as_f64),
                core_count: field("num_sms").and_then(Metric::as_f64).map(|v| v as i64),
                line_count: 0,
                event_count: 0,
                stat_count: dev.fields.len() as i32,
                process_name: None,
            })?;
        }
        for node in &nodes {
            let mut promoted: [Option<&Metric>; 10] = [None; 10];
            let mut others = 0;
            for (raw, value) in &node.metrics {
                let (metric, kind) = metric_kind(raw);
                match PROMOTED.iter().position(|p| *p == metric) {
                    Some(i) if kind == "inclusive" => promoted[i] = Some(value),
                    _ => {
                        asm.trace_row(&NodeMetricRow {
                            trace_id,
                            node_id: node.node_id,
                            metric,
                            kind,
                            value: value.stat(),
                        });
                        others += 1;
                    }
                }
            }
            let f = |i: usize| promoted[i].and_then(Metric::as_f64);
            let t = |i: usize| promoted[i].and_then(Metric::as_text);
            let (device_id, device_type) = (t(2), t(3));
            asm.trace_row(&ProfileNodeRow {
                trace_id,
                node_id: node.node_id,
                parent_id: node.parent_id,
                depth: node.depth,
                name: &node.name,
                path: &node.path,
                frame_type: node.frame_type.as_deref(),
                time_ps: f(0).map(|ns| (ns * 1000.0).round() as i64),
                count: f(1).map(|c| c.round() as i64),
                device_id: device_id.as_deref(),
                device_type: device_type.as_deref(),
                flops: f(4),
                flops8: f(5),
                flops16: f(6),
                flops32: f(7),
                flops64: f(8),
                bytes: f(9),
                metric_count: others,
            });
        }
        asm.summary_mut().lines += nodes.len();
        Ok(TraceInfo::default())
    }

    fn inspect(&self, input: &InputBytes) -> Result<Vec<PlaneInfo>> {
        let (nodes, devices) = load(input)?;
        let mut planes: Vec<PlaneInfo> = devices
            .iter()
            .map(|d| PlaneInfo {
                id: d.id.parse().unwrap_or(-1),
                name: format!("{}:{}", d.device_type, d.id),
                lines: Vec::new(),
                total_events: 0,
                event_metadata: 0,
                stat_names: d.fields.iter().map(|(k, _)| k.clone()).collect(),
                plane_stats: d.fields.len(),
            })
            .collect();
        planes.push(PlaneInfo {
            id: -1,
            name: "call tree".into(),
            lines: vec![LineInfo {
                id: 0,
                name: "nodes".into(),
                display_name: "nodes".into(),
                event_count: nodes.len() as u64,
            }],
            total_events: 0,
            event_metadata: 0,
            stat_names: Vec::new(),
            plane_stats: 0,
        });
        Ok(planes)
    }
}
