//! Synthetic GPU-shaped profiles: [`gpu_space`] of a [`GpuSpec`], and
//! [`gpu_space_over_hlo`], a synthetic device plane over real HLO modules.

use xprof_convert::xspace::hlo::HloModule;

use crate::plane::{PlaneBuilder, Rng, event, line, task_environment};
use crate::xspace_proto::{XEvent, XSpace, x_event, x_stat};

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
        let Ok(module) = HloModule::decode(bytes) else {
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
