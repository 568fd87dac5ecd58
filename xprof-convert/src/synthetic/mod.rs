//! Synthetic, device-shaped profiles: XSpace files with GPU and TPU device
//! planes, TPU planes with LLO lanes ([`llo`]), and Mosaic GPU profiler
//! traces ([`mosaic_gpu`]).
//!
//! Real GPU and TPU device planes need the accelerator; these generators
//! build files with the documented plane, line and stat names
//! (`shared/formats/xspace.md`, `xplane-names.txt`) so tests and
//! benchmarks can exercise device paths anywhere. Every value is
//! deterministic for a given spec. Tests that use them say so.

pub mod llo;
pub mod llo_capture;
pub mod llo_dump;
pub mod llo_proto;
pub mod mosaic_gpu;
pub mod tpu_async_overlap;
pub mod tpu_self_time;

pub use tpu_async_overlap::tpu_async_overlap_space;
pub use tpu_self_time::tpu_self_time_space;

use std::io::Write;

use prost::Message;
use xprof_format::wire::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
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
fn tensor_core_plane(id: i64, ordinal: usize) -> PlaneBuilder {
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

fn task_environment() -> XPlane {
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

/// Shape of a synthetic TPU profile.
#[derive(Debug, Clone)]
pub struct TpuSpec {
    /// TensorCores (`/device:TPU:N` planes).
    pub devices: usize,
    /// Training steps.
    pub steps: usize,
    /// Distinct HLO ops; each step runs every op once.
    pub ops_per_step: usize,
}

impl Default for TpuSpec {
    fn default() -> Self {
        Self {
            devices: 2,
            steps: 4,
            ops_per_step: 8,
        }
    }
}

const CATEGORIES: [&str; 5] = [
    "convolution",
    "data formatting",
    "non-fusion elementwise",
    "all-reduce",
    "loop fusion",
];

/// A TPU-shaped profile: per TensorCore a `/device:TPU:N` plane with
/// `Steps`, `XLA Modules`, `XLA Ops` and `Async XLA Ops` lines, cost-model
/// stats on the op metadata (`flops`, `bytes_accessed`, `hlo_category`, `symbol_id`,
/// `shape_with_layout` as a `ref_value`, `tf_op`, `program_id`),
/// `device_offset_ps`/`device_duration_ps` on op events, a `_counters_`
/// line, and a `/host:CPU` plane whose launch events have `flow` stats
/// pointing at the device modules.
pub fn tpu_space(spec: &TpuSpec) -> XSpace {
    let mut rng = Rng::new(7);
    let mut planes = Vec::new();
    let mut host = PlaneBuilder::new(1, "/host:CPU");
    let launch = host.event_metadata("TpuExecuteOp", "", vec![]);
    let step_md = host.event_metadata("train", "", vec![]);
    let mut host_events = Vec::new();
    let step_ps: i64 = 10_000_000 * (spec.ops_per_step as i64 + 2);
    for d in 0..spec.devices {
        let mut p = tensor_core_plane(10 + d as i64, d);
        let program = p.stat("program_id", x_stat::Value::Int64Value(42));
        let module_md = p.event_metadata(
            "jit_train_step(42)",
            "jit_train_step",
            vec![program.clone()],
        );
        let step_line_md = p.event_metadata("0", "", vec![]);
        let mut ops = Vec::new();
        for o in 0..spec.ops_per_step {
            let cat = CATEGORIES[o % CATEGORIES.len()];
            let stats = vec![
                p.stat("hlo_category", x_stat::Value::StrValue(cat.into())),
                p.stat(
                    "flops",
                    x_stat::Value::Uint64Value(1_000_000 * (o as u64 + 1)),
                ),
                p.stat(
                    "bytes_accessed",
                    x_stat::Value::Uint64Value(4096 * (o as u64 + 1)),
                ),
                p.ref_stat("shape_with_layout", "f32[128,256]{1,0}"),
                p.stat(
                    "tf_op",
                    x_stat::Value::StrValue(format!("jit(train_step)/op_{o}")),
                ),
                p.stat("program_id", x_stat::Value::Int64Value(42)),
                // XProf keys TPU op metrics by (program_id, symbol_id) and
                // drops ops without a symbol id.
                p.stat("symbol_id", x_stat::Value::Int64Value(o as i64 + 1)),
                p.stat(
                    "hlo_module",
                    x_stat::Value::StrValue("jit_train_step".into()),
                ),
            ];
            let name = format!(
                "%fusion.{o} = f32[128,256]{{1,0}} fusion(f32[128,256] %p.{o}), kind=kLoop"
            );
            ops.push(p.event_metadata(&name, &format!("fusion.{o}"), stats));
        }
        let cat = p.stat("hlo_category", x_stat::Value::StrValue("all-reduce".into()));
        let async_md = p.event_metadata(
            "%all-reduce-start = f32[128] all-reduce-start()",
            "all-reduce-start",
            vec![cat],
        );
        let counter_md = p.event_metadata("HBM bandwidth", "", vec![]);
        let (mut steps, mut modules, mut op_events, mut async_events, mut counters) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for s in 0..spec.steps {
            let step_start = s as i64 * step_ps;
            let sn = p.stat("step_num", x_stat::Value::Int64Value(s as i64));
            let g = p.stat("group_id", x_stat::Value::Int64Value(s as i64));
            steps.push(event(
                step_line_md,
                step_start,
                step_ps - 1_000_000,
                vec![sn, g.clone()],
            ));
            let module_start = step_start + 2_000_000;
            let module_dur = step_ps - 5_000_000;
            let flow = p.stat(
                "flow",
                x_stat::Value::Uint64Value((((d * 1000 + s) as u64) << 2) | 1),
            );
            modules.push(event(
                module_md,
                module_start,
                module_dur,
                vec![g.clone(), flow],
            ));
            let mut t = module_start + 500_000;
            for (o, md) in ops.iter().enumerate() {
                let dur = rng.range(2_000_000, 9_000_000);
                let stats = vec![
                    p.stat("device_offset_ps", x_stat::Value::Int64Value(t + 100)),
                    p.stat("device_duration_ps", x_stat::Value::Int64Value(dur - 200)),
                    g.clone(),
                ];
                op_events.push(event(*md, t, dur, stats));
                if o == 0 {
                    async_events.push(event(async_md, t, dur * 2, vec![g.clone()]));
                }
                t += dur.max(1) + 100_000;
            }
            let value = p.stat(
                "counter_value",
                x_stat::Value::DoubleValue(100.0 + s as f64),
            );
            counters.push(event(counter_md, step_start, 0, vec![value]));
            if d == 0 {
                let st = host.stat("step_num", x_stat::Value::Int64Value(s as i64));
                host_events.push(event(step_md, step_start, step_ps - 2_000_000, vec![st]));
            }
            let flow = host.stat(
                "flow",
                x_stat::Value::Uint64Value((((d * 1000 + s) as u64) << 2) | 2),
            );
            host_events.push(event(
                launch,
                step_start + 10_000 * (d as i64 + 1),
                1_000_000,
                vec![flow],
            ));
        }
        p.line(line(1, "Steps", 1_000, steps));
        p.line(line(2, "XLA Modules", 1_000, modules));
        p.line(line(3, "XLA Ops", 1_000, op_events));
        p.line(line(4, "Async XLA Ops", 1_000, async_events));
        p.line(line(5, "_counters_", 1_000, counters));
        planes.push(p.finish());
    }
    host_events.sort_by_key(|e| match e.data {
        Some(x_event::Data::OffsetPs(o)) => (o, -e.duration_ps),
        _ => (0, 0),
    });
    host.line(line(1, "python", 1_000, host_events));
    planes.insert(0, host.finish());
    planes.push(task_environment());
    XSpace {
        planes,
        hostnames: vec!["synthetic-tpu".into()],
        ..Default::default()
    }
}

/// Shape of a synthetic GPU profile.
#[derive(Debug, Clone)]
pub struct GpuSpec {
    /// GPUs (`/device:GPU:N` planes).
    pub devices: usize,
    /// Kernels launched per GPU.
    pub kernels: usize,
    /// Streams per GPU.
    pub streams: usize,
}

impl Default for GpuSpec {
    fn default() -> Self {
        Self {
            devices: 1,
            kernels: 16,
            streams: 2,
        }
    }
}

/// A GPU-shaped profile: `/device:GPU:N` planes with one line per stream
/// (`Stream #N(Compute)`) holding kernels with `kernel_details`,
/// `correlation_id`, `hlo_op` and `hlo_module` stats, and a `/host:CUPTI`
/// plane whose `cudaLaunchKernel` events carry the same correlation ids.
pub fn gpu_space(spec: &GpuSpec) -> XSpace {
    let mut rng = Rng::new(11);
    let mut planes = Vec::new();
    let mut cupti = PlaneBuilder::new(2, "/host:CUPTI");
    let launch = cupti.event_metadata("cudaLaunchKernel", "", vec![]);
    let mut launches = Vec::new();
    let mut correlation: u64 = 1000;
    for d in 0..spec.devices {
        let mut p = PlaneBuilder::new(20 + d as i64, &format!("/device:GPU:{d}"));
        p.plane_stat("device_vendor", x_stat::Value::StrValue("Nvidia".into()));
        p.plane_stat("clock_rate", x_stat::Value::Uint64Value(1_980_000));
        p.plane_stat("core_count", x_stat::Value::Uint64Value(132));
        p.plane_stat("compute_cap_major", x_stat::Value::Uint64Value(9));
        let names = ["gemm_fusion", "loop_add_fusion", "input_reduce_fusion"];
        let mds: Vec<i64> = names
            .iter()
            .map(|n| {
                let details = "regs:32 static_shared:0 dynamic_shared:49152 grid:128,1,1 block:256,1,1 occ_pct:50.0";
                let stats = vec![p.stat("kernel_details", x_stat::Value::StrValue(details.into()))];
                p.event_metadata(n, n, stats)
            })
            .collect();
        let mut per_stream: Vec<Vec<XEvent>> = vec![Vec::new(); spec.streams];
        let mut t = vec![0i64; spec.streams];
        for k in 0..spec.kernels {
            let s = k % spec.streams;
            let dur = rng.range(1_000_000, 20_000_000);
            let start = t[s] + rng.range(100_000, 2_000_000);
            t[s] = start + dur;
            let stats = vec![
                p.stat("correlation_id", x_stat::Value::Uint64Value(correlation)),
                p.stat(
                    "hlo_op",
                    x_stat::Value::StrValue(format!("{}.{}", names[k % 3], k % 3)),
                ),
                p.stat("hlo_module", x_stat::Value::StrValue("jit_train".into())),
                p.stat("group_id", x_stat::Value::Int64Value((k / 8) as i64)),
            ];
            per_stream[s].push(event(mds[k % 3], start, dur, stats));
            let c = cupti.stat("correlation_id", x_stat::Value::Uint64Value(correlation));
            launches.push(event(
                launch,
                start.saturating_sub(500_000).max(0),
                200_000,
                vec![c],
            ));
            correlation += 1;
        }
        for (s, events) in per_stream.into_iter().enumerate() {
            p.line(line(
                s as i64 + 7,
                &format!("Stream #{}(Compute)", s + 7),
                2_000,
                events,
            ));
        }
        planes.push(p.finish());
    }
    launches.sort_by_key(|e| match e.data {
        Some(x_event::Data::OffsetPs(o)) => o,
        _ => 0,
    });
    cupti.line(line(1, "CUPTI thread", 2_000, launches));
    planes.insert(0, cupti.finish());
    planes.push(task_environment());
    XSpace {
        planes,
        hostnames: vec!["synthetic-gpu".into()],
        ..Default::default()
    }
}

/// A GPU-shaped profile over real HLO modules: the `/host:metadata`
/// programs of `sources` (real captures; a program id seen twice is kept
/// once) and a `/device:GPU:0` plane whose one stream runs one kernel per
/// instruction of every computation of every program, in proto order, with
/// `hlo_op`, `program_id`, `hlo_module`, `correlation_id` and a `group_id`
/// per program (so XProf never merges two programs' ops). The device plane
/// is synthetic; the HLO is not. XProf reads it as a GPU profile and
/// names every op from the HLO, which makes it the oracle for
/// `hlo_instructions`' category, expression, framework op and source.
pub fn gpu_space_over_hlo(sources: &[XSpace]) -> XSpace {
    let mut meta = PlaneBuilder::new(1, "/host:metadata");
    let mut programs: Vec<(u64, Vec<u8>)> = Vec::new();
    for space in sources {
        for plane in space.planes.iter().filter(|p| p.name == "/host:metadata") {
            let mut ids: Vec<&i64> = plane.event_metadata.keys().collect();
            ids.sort();
            for id in ids {
                let m = &plane.event_metadata[id];
                let stat = |name: &str| {
                    m.stats.iter().find(|s| {
                        plane
                            .stat_metadata
                            .get(&(s.metadata_id as i64))
                            .is_some_and(|sm| sm.name == name)
                    })
                };
                let (Some(proto), Some(program)) = (stat("Hlo Proto"), stat("program_id")) else {
                    continue;
                };
                let (Some(x_stat::Value::BytesValue(bytes)), Some(x_stat::Value::Uint64Value(pid))) =
                    (&proto.value, &program.value)
                else {
                    continue;
                };
                if programs.iter().any(|(p, _)| p == pid) {
                    continue;
                }
                let stats = vec![
                    meta.stat("Hlo Proto", x_stat::Value::BytesValue(bytes.clone())),
                    meta.stat("program_id", x_stat::Value::Uint64Value(*pid)),
                ];
                meta.event_metadata(&m.name, "", stats);
                programs.push((*pid, bytes.clone()));
            }
        }
    }
    let mut gpu = PlaneBuilder::new(20, "/device:GPU:0");
    gpu.plane_stat("device_vendor", x_stat::Value::StrValue("Nvidia".into()));
    gpu.plane_stat("clock_rate", x_stat::Value::Uint64Value(1_980_000));
    gpu.plane_stat("core_count", x_stat::Value::Uint64Value(132));
    gpu.plane_stat("compute_cap_major", x_stat::Value::Uint64Value(9));
    let mut rng = Rng::new(17);
    let mut events = Vec::new();
    let mut ts_ps = 0i64;
    let mut correlation: u64 = 1;
    for (group, (pid, bytes)) in programs.iter().enumerate() {
        let Ok(module) = crate::xspace::hlo::HloModule::decode(bytes) else {
            continue;
        };
        for instr in module.computations.iter().flat_map(|c| &c.instructions) {
            let md = gpu.event_metadata(&format!("kernel_{}", instr.name), "", vec![]);
            let stats = vec![
                gpu.stat("hlo_op", x_stat::Value::StrValue(instr.name.to_string())),
                gpu.stat("program_id", x_stat::Value::Uint64Value(*pid)),
                gpu.stat(
                    "hlo_module",
                    x_stat::Value::StrValue(module.name.to_string()),
                ),
                gpu.stat("correlation_id", x_stat::Value::Uint64Value(correlation)),
                gpu.stat("group_id", x_stat::Value::Int64Value(group as i64)),
            ];
            let duration_ps = rng.range(1_000_000, 5_000_000);
            ts_ps += rng.range(100_000, 500_000);
            events.push(event(md, ts_ps, duration_ps, stats));
            ts_ps += duration_ps;
            correlation += 1;
        }
    }
    gpu.line(line(7, "Stream #7(Compute)", 2_000, events));
    XSpace {
        planes: vec![meta.finish(), gpu.finish(), task_environment()],
        hostnames: vec!["synthetic-gpu-hlo".into()],
        ..Default::default()
    }
}

/// Writes a large synthetic TPU-shaped XSpace of about `target_bytes` to
/// `out`, one plane at a time (memory stays near one plane's size, not the
/// file's): planes of `ops_per_step` ops, repeated until the size is
/// reached. Returns the bytes written.
pub fn write_large_tpu(
    out: &mut impl Write,
    target_bytes: u64,
    plane_steps: usize,
) -> std::io::Result<u64> {
    let spec = TpuSpec {
        devices: 1,
        steps: plane_steps,
        ops_per_step: 64,
    };
    let space = tpu_space(&spec);
    let mut written = 0u64;
    let mut n = 0i64;
    let mut chunk = Vec::new();
    while written < target_bytes {
        chunk.clear();
        let mut s = space.clone();
        for p in s.planes.iter_mut() {
            if p.name.starts_with("/device:TPU:") {
                p.name = format!("/device:TPU:{n}");
                p.id = 1000 + n;
            }
        }
        if n > 0 {
            s.planes.retain(|p| p.name.starts_with("/device:TPU:"));
            s.hostnames.clear();
        }
        s.encode(&mut chunk).map_err(std::io::Error::other)?;
        out.write_all(&chunk)?;
        written += chunk.len() as u64;
        n += 1;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_use_documented_names() {
        let a = tpu_space(&TpuSpec::default()).encode_to_vec();
        let b = tpu_space(&TpuSpec::default()).encode_to_vec();
        assert!(a == b, "same spec, same bytes");
        let space = tpu_space(&TpuSpec::default());
        let tpu = space
            .planes
            .iter()
            .find(|p| p.name == "/device:TPU:0")
            .unwrap();
        let lines: Vec<_> = tpu.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            lines,
            [
                "Steps",
                "XLA Modules",
                "XLA Ops",
                "Async XLA Ops",
                "_counters_"
            ]
        );
        let gpu = gpu_space(&GpuSpec::default());
        assert!(gpu.planes.iter().any(|p| p.name == "/device:GPU:0"));
    }

    #[test]
    fn large_writer_repeats_planes_until_the_size() {
        let mut out = Vec::new();
        let n = write_large_tpu(&mut out, 200_000, 4).unwrap();
        assert_eq!(n as usize, out.len());
        let space = XSpace::decode(out.as_slice()).unwrap();
        let tpus = space
            .planes
            .iter()
            .filter(|p| p.name.starts_with("/device:TPU:"))
            .count();
        assert!(tpus > 1);
        assert_eq!(
            space
                .planes
                .iter()
                .filter(|p| p.name == "Task Environment")
                .count(),
            1
        );
    }
}
