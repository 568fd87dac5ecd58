//! Synthetic TPU-shaped profiles: [`tpu_space`] of a [`TpuSpec`], and
//! [`write_large_tpu`] for files of any size (benchmarks).

use std::io::Write;

use prost::Message;

use crate::plane::{PlaneBuilder, Rng, event, line, task_environment, tensor_core_plane};
use crate::xspace_proto::{XSpace, x_event, x_stat};

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
    use crate::gpu::{GpuSpec, gpu_space};

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
