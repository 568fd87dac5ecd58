//! Synthetic TPU profiles with LLO lanes (Pallas kernels, cycle level).
//!
//! No real LLO capture is at hand (it needs a TPU and libtpu's custom-call
//! tracing flags), so this builds what `shared/formats/tpu-llo.md`
//! describes, with its line and stat names exactly: per TensorCore a
//! `/device:TPU:N` plane with `XLA Modules`, `XLA Ops` (two Pallas kernels
//! and a fusion per step), `LLO Ops`, `Pallas Primitives` and `Source code`
//! regions inside the kernels, and one lane per functional unit
//! (`SALU`/`VALU`/`EUP`/`XLU`/`VLD`/`VST`/`MXU0 Instructions`) whose events
//! carry `bundle_number`, `instruction_ordinal`, `unit_id`, `llo_scopes`,
//! `pallas_primitive`, `source_info`, `source_call_stack` and `details` as
//! their own stats (XProf's tools read event stats only); a `TC Stats`
//! line of hardware-counter samples (`counter_value` events named as the
//! facts file names the counters, one sample per step, from the step's
//! instructions) and an `LLO Utilization` line of per-unit series; plus a
//! `/host:metadata` plane holding an `llo_proto` plane stat.
//!
//! Every time is a whole number of ns (bundles are 1000 ps), so XProf's
//! ns truncation loses nothing and its numbers compare exactly.
//!
//! The kernels have known shapes: `matmul_kernel` loads (VLD + SALU), then
//! overlaps MXU matmuls with loads and stores, then stalls for
//! [`BUBBLE_BUNDLES`] bundles (a gap in the bundle numbers and in time, no
//! unit busy), then runs vector math (VALU + EUP) and stores;
//! `softmax_kernel` mixes VALU, EUP, XLU and memory without a gap, and one
//! of its instructions is named only by a number with its name in `msg`.
//! [`LloTruth`] lists every instruction, kernel and region as written.

use crate::xspace_proto::{XEvent, XSpace, x_stat};
use prost::Message;

use crate::plane::{PlaneBuilder, event, line, task_environment};

/// Bundles of the deliberate stall in `matmul_kernel`.
pub const BUBBLE_BUNDLES: i64 = 10;
/// Time of one bundle (ps).
pub const BUNDLE_PS: i64 = 1000;

/// Shape of a synthetic LLO profile.
#[derive(Debug, Clone)]
pub struct LloSpec {
    /// TensorCores (`/device:TPU:N` planes).
    pub cores: usize,
    /// Steps; each runs both kernels and a fusion once.
    pub steps: usize,
}

impl Default for LloSpec {
    fn default() -> Self {
        Self { cores: 2, steps: 2 }
    }
}

/// One instruction as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LloInstruction {
    /// Core (`/device:TPU:<core>`).
    pub core: usize,
    /// Unit of its lane (`VALU`, `MXU0`, ...).
    pub unit: String,
    /// The instruction's name (after the `msg` fallback).
    pub name: String,
    /// Start (ps from the line's timestamp).
    pub offset_ps: i64,
    /// Duration (ps).
    pub duration_ps: i64,
    /// `bundle_number`.
    pub bundle: i64,
    /// Index into [`LloTruth::kernels`].
    pub kernel: usize,
    /// `pallas_primitive`.
    pub primitive: String,
    /// Source file of `source_info`.
    pub source_file: String,
    /// Source line of `source_info`.
    pub source_line: i64,
}

/// A kernel (`XLA Ops` event) as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LloKernel {
    /// Core.
    pub core: usize,
    /// Step.
    pub step: usize,
    /// Short name (`custom-call.1`: the metadata's display name).
    pub display_name: String,
    /// The Pallas kernel it runs (`matmul_kernel`), or empty for a fusion.
    pub pallas_name: String,
    /// Start (ps from the line's timestamp).
    pub offset_ps: i64,
    /// Duration (ps).
    pub duration_ps: i64,
}

/// A region (`LLO Ops`, `Pallas Primitives`, `Source code`) as written.
#[derive(Debug, Clone, PartialEq)]
pub struct LloRegion {
    /// Core.
    pub core: usize,
    /// Line name.
    pub line: String,
    /// Region name.
    pub name: String,
    /// Start (ps from the line's timestamp).
    pub offset_ps: i64,
    /// Duration (ps).
    pub duration_ps: i64,
    /// Index into [`LloTruth::kernels`].
    pub kernel: usize,
}

/// Everything the generator wrote, for tests to compare against.
#[derive(Debug, Clone, Default)]
pub struct LloTruth {
    /// Every instruction event.
    pub instructions: Vec<LloInstruction>,
    /// Every kernel, Pallas or not.
    pub kernels: Vec<LloKernel>,
    /// Every region.
    pub regions: Vec<LloRegion>,
    /// Bytes of the `llo_proto` plane stat.
    pub llo_proto_bytes: usize,
    /// Hardware-counter samples on `TC Stats`, one per core and step.
    pub counters: Vec<LloCounterSample>,
}

/// One `TC Stats` sample: counter values over one step of one core.
#[derive(Debug, Clone, PartialEq)]
pub struct LloCounterSample {
    /// Core.
    pub core: usize,
    /// Step.
    pub step: usize,
    /// (counter name, value), in the order written.
    pub values: Vec<(String, f64)>,
}

/// The counters a `TC Stats` sample holds, as `shared/formats/tpu-llo.md`
/// names them, from the step's instructions: scalar and vector ALU
/// instructions split over slots 0 and 1, loads, stores, MXU matmul pushes
/// (one per bundle an MXU instruction occupies), transposes (XLU), and
/// the step's cycles (one per bundle of the step's duration).
fn counter_values(
    instructions: &[LloInstruction],
    core: usize,
    kernels: &[usize],
    cycles: i64,
) -> Vec<(String, f64)> {
    let count = |unit: &str| {
        instructions
            .iter()
            .filter(|x| x.core == core && kernels.contains(&x.kernel) && x.unit == unit)
            .map(|x| x.duration_ps / BUNDLE_PS)
            .sum::<i64>() as f64
    };
    let salu = count("SALU");
    let valu = count("VALU");
    vec![
        ("cycles".into(), cycles as f64),
        ("count_s0_instruction".into(), (salu / 2.0).ceil()),
        ("count_s1_instruction".into(), (salu / 2.0).floor()),
        ("count_v0_instruction".into(), (valu / 2.0).ceil()),
        ("count_v1_instruction".into(), (valu / 2.0).floor()),
        ("count_vector_load".into(), count("VLD")),
        ("count_vector_store".into(), count("VST")),
        ("count_matmul".into(), count("MXU0")),
        ("count_transpose".into(), count("XLU")),
    ]
}

/// The `LLO Utilization` series (the older per-unit utilization lane):
/// event name and the unit whose busy bundles it counts.
pub const LLO_UTILIZATION_SERIES: [(&str, &str); 6] = [
    ("Scalar ALU", "SALU"),
    ("Vector ALU", "VALU"),
    ("Vector EUP", "EUP"),
    ("Vector Load", "VLD"),
    ("Vector Store", "VST"),
    ("XLU", "XLU"),
];

/// Units with a lane, in line order.
const UNITS: [&str; 7] = ["SALU", "VALU", "EUP", "XLU", "VLD", "VST", "MXU0"];

/// A phase of a kernel: bundles, what issues on each, its region names.
struct Phase {
    bundles: std::ops::Range<i64>,
    llo_op: &'static str,
    primitive: &'static str,
    source_line: i64,
    /// (unit, instruction, every n-th bundle, duration in bundles).
    issues: &'static [(&'static str, &'static str, i64, i64)],
}

const MATMUL: &[Phase] = &[
    Phase {
        bundles: 1..11,
        llo_op: "prologue",
        primitive: "load",
        source_line: 12,
        issues: &[("VLD", "vld", 1, 1), ("SALU", "sadd.s32", 2, 1)],
    },
    Phase {
        bundles: 11..51,
        llo_op: "main_loop",
        primitive: "dot_general",
        source_line: 20,
        issues: &[
            ("MXU0", "vmatmul.bf16", 4, 4),
            ("VLD", "vld", 1, 1),
            ("VST", "vst", 2, 1),
            ("SALU", "sadd.s32", 4, 1),
        ],
    },
    // Bundles 51..61 never issue: the bubble.
    Phase {
        bundles: 61..81,
        llo_op: "epilogue",
        primitive: "exp",
        source_line: 31,
        issues: &[
            ("VALU", "vadd.f32", 1, 1),
            ("EUP", "vexp.f32", 2, 2),
            ("VST", "vst", 5, 1),
        ],
    },
];

const SOFTMAX: &[Phase] = &[
    Phase {
        bundles: 1..21,
        llo_op: "row_max",
        primitive: "reduce_max",
        source_line: 8,
        issues: &[
            ("VLD", "vld", 1, 1),
            ("XLU", "vrot.lane", 2, 2),
            ("VALU", "vmax.f32", 2, 1),
        ],
    },
    Phase {
        bundles: 21..41,
        llo_op: "normalize",
        primitive: "div",
        source_line: 9,
        issues: &[
            ("EUP", "vrcp.f32", 4, 2),
            ("VALU", "vmul.f32", 1, 1),
            ("VST", "vst", 2, 1),
        ],
    },
];

/// Builds the profile and its description.
pub fn llo_space(spec: &LloSpec) -> (XSpace, LloTruth) {
    let mut truth = LloTruth::default();
    let mut planes = Vec::new();
    let line_ts_ns = 1_000;
    for core in 0..spec.cores {
        let mut p = PlaneBuilder::new(10 + core as i64, &format!("/device:TPU:{core}"));
        p.plane_stat("device_id", x_stat::Value::Int64Value(core as i64));
        p.plane_stat(
            "device_type_string",
            x_stat::Value::StrValue("TPU v6 Lite".into()),
        );
        let module_md = p.event_metadata("jit_step(7)", "jit_step", vec![]);
        // (metadata id, short name, Pallas kernel, phases)
        let kernel_md: Vec<(i64, String, &str, &[Phase])> = [
            ("matmul_kernel", MATMUL, 1),
            ("softmax_kernel", SOFTMAX, 2),
        ]
        .into_iter()
        .map(|(pallas, phases, n)| {
            let display = format!("custom-call.{n}");
            let md = p.event_metadata(
                &format!(
                    "%custom-call.{n} = bf16[256,256]{{1,0}} custom-call(bf16[256,256]{{1,0}} %p0), \
                     custom_call_target=\"tpu_custom_call\", kernel_name=\"{pallas}\""
                ),
                &display,
                vec![],
            );
            (md, display, pallas, phases)
        })
        .collect();
        let fusion_md = p.event_metadata(
            "%fusion.3 = f32[256]{0} fusion(bf16[256,256]{1,0} %custom-call.2), kind=kLoop",
            "fusion.3",
            vec![],
        );
        let mut modules = Vec::new();
        let mut kernels = Vec::new();
        let mut llo_ops = Vec::new();
        let mut primitives = Vec::new();
        let mut sources = Vec::new();
        let mut lanes: Vec<Vec<XEvent>> = vec![Vec::new(); UNITS.len()];
        let mut names: std::collections::HashMap<&str, i64> = Default::default();
        let mut tc_stats = Vec::new();
        let mut utilization = Vec::new();
        let step_ps = 400_000;
        for step in 0..spec.steps {
            let step_start = step as i64 * step_ps + 10_000;
            modules.push(event(module_md, step_start, step_ps - 20_000, vec![]));
            let mut t = step_start + 5_000;
            for (md, display, pallas, phases) in &kernel_md {
                let (md, pallas, phases) = (*md, *pallas, *phases);
                let kernel = truth.kernels.len();
                // Setup before the first bundle and drain after the last.
                let first = t + 3_000;
                let last_bundle = phases.last().map_or(0, |ph| ph.bundles.end - 1);
                let duration = 3_000 + last_bundle * BUNDLE_PS + 4_000;
                kernels.push(event(md, t, duration, vec![]));
                truth.kernels.push(LloKernel {
                    core,
                    step,
                    display_name: display.clone(),
                    pallas_name: pallas.into(),
                    offset_ps: t,
                    duration_ps: duration,
                });
                let mut ordinal = 0;
                for ph in phases {
                    let start = first + (ph.bundles.start - 1) * BUNDLE_PS;
                    let dur = (ph.bundles.end - ph.bundles.start) * BUNDLE_PS;
                    for (line_name, list, name) in [
                        ("LLO Ops", &mut llo_ops, ph.llo_op.to_string()),
                        (
                            "Pallas Primitives",
                            &mut primitives,
                            ph.primitive.to_string(),
                        ),
                        (
                            "Source code",
                            &mut sources,
                            format!("{pallas}.py:{}", ph.source_line),
                        ),
                    ] {
                        let md = p.event_metadata(&name, "", vec![]);
                        list.push(event(md, start, dur, vec![]));
                        truth.regions.push(LloRegion {
                            core,
                            line: line_name.into(),
                            name,
                            offset_ps: start,
                            duration_ps: dur,
                            kernel,
                        });
                    }
                    for bundle in ph.bundles.clone() {
                        for &(unit, name, every, len) in ph.issues {
                            if (bundle - ph.bundles.start) % every != 0 {
                                continue;
                            }
                            let lane = UNITS.iter().position(|u| *u == unit).expect("a unit");
                            let offset = first + (bundle - 1) * BUNDLE_PS;
                            // One `vmax.f32` of softmax is written as a
                            // number, its name in `msg`.
                            let numbered = name == "vmax.f32" && bundle == 3;
                            let md_name = if numbered { "42" } else { name };
                            let md = *names
                                .entry(md_name)
                                .or_insert_with(|| p.event_metadata(md_name, "", vec![]));
                            let source_file = format!("{pallas}.py");
                            let mut stats = vec![
                                p.stat("bundle_number", x_stat::Value::Int64Value(bundle)),
                                p.stat("instruction_ordinal", x_stat::Value::Int64Value(ordinal)),
                                p.stat("unit_id", x_stat::Value::Int64Value(0)),
                                p.stat(
                                    "llo_scopes",
                                    x_stat::Value::StrValue(format!(
                                        "[\"{pallas}\", \"{}\"]",
                                        ph.llo_op
                                    )),
                                ),
                                p.stat(
                                    "pallas_primitive",
                                    x_stat::Value::StrValue(ph.primitive.into()),
                                ),
                                p.stat(
                                    "source_info",
                                    x_stat::Value::StrValue(format!(
                                        "{source_file}:{}",
                                        ph.source_line
                                    )),
                                ),
                                p.stat(
                                    "source_call_stack",
                                    x_stat::Value::StrValue(format!(
                                        "{source_file}:{}\nmodel.py:40",
                                        ph.source_line
                                    )),
                                ),
                                p.stat(
                                    "details",
                                    x_stat::Value::StrValue(format!("{name} slot {lane}")),
                                ),
                            ];
                            if numbered {
                                stats.push(p.stat("msg", x_stat::Value::StrValue(name.into())));
                            }
                            lanes[lane].push(event(md, offset, len * BUNDLE_PS, stats));
                            truth.instructions.push(LloInstruction {
                                core,
                                unit: unit.into(),
                                name: name.into(),
                                offset_ps: offset,
                                duration_ps: len * BUNDLE_PS,
                                bundle,
                                kernel,
                                primitive: ph.primitive.into(),
                                source_file,
                                source_line: ph.source_line,
                            });
                            ordinal += 1;
                        }
                    }
                }
                t += duration + 20_000;
            }
            // One counter sample per step, at its end, from its kernels.
            let step_kernels: Vec<usize> =
                (truth.kernels.len() - kernel_md.len()..truth.kernels.len()).collect();
            let values = counter_values(
                &truth.instructions,
                core,
                &step_kernels,
                (step_ps - 20_000) / BUNDLE_PS,
            );
            let sample_at = step_start + step_ps - 20_000;
            for (name, value) in &values {
                let md = p.event_metadata(name, "", vec![]);
                let v = p.stat("counter_value", x_stat::Value::DoubleValue(*value));
                tc_stats.push(event(md, sample_at, 0, vec![v]));
            }
            truth.counters.push(LloCounterSample { core, step, values });
            // The older `LLO Utilization` series: per unit, the bundles it
            // was busy in the step.
            for (series, unit) in LLO_UTILIZATION_SERIES {
                let busy: i64 = truth
                    .instructions
                    .iter()
                    .filter(|x| {
                        x.core == core && step_kernels.contains(&x.kernel) && x.unit == unit
                    })
                    .map(|x| x.duration_ps / BUNDLE_PS)
                    .sum();
                let md = p.event_metadata(series, "", vec![]);
                let v = p.stat("counter_value", x_stat::Value::DoubleValue(busy as f64));
                utilization.push(event(md, sample_at, 0, vec![v]));
            }
            // A plain fusion after the kernels: no instructions.
            kernels.push(event(fusion_md, t, 30_000, vec![]));
            truth.kernels.push(LloKernel {
                core,
                step,
                display_name: "fusion.3".into(),
                pallas_name: String::new(),
                offset_ps: t,
                duration_ps: 30_000,
            });
        }
        p.line(line(1, "XLA Modules", line_ts_ns, modules));
        p.line(line(2, "XLA Ops", line_ts_ns, kernels));
        p.line(line(3, "LLO Ops", line_ts_ns, llo_ops));
        p.line(line(4, "Pallas Primitives", line_ts_ns, primitives));
        p.line(line(5, "Source code", line_ts_ns, sources));
        p.line(line(6, "TC Stats", line_ts_ns, tc_stats));
        p.line(line(7, "LLO Utilization", line_ts_ns, utilization));
        for (i, (unit, events)) in UNITS.iter().zip(lanes).enumerate() {
            p.line(line(
                10 + i as i64,
                &format!("{unit} Instructions"),
                line_ts_ns,
                events,
            ));
        }
        planes.push(p.finish());
    }
    let mut meta = PlaneBuilder::new(1, "/host:metadata");
    let payload: Vec<u8> = (0..512u32).map(|i| (i * 7 % 251) as u8).collect();
    truth.llo_proto_bytes = payload.len();
    meta.plane_stat("llo_proto", x_stat::Value::BytesValue(payload));
    planes.insert(0, meta.finish());
    planes.push(task_environment());
    let space = XSpace {
        planes,
        hostnames: vec!["synthetic-llo".into()],
        ..Default::default()
    };
    (space, truth)
}

/// The profile's bytes.
pub fn llo_space_bytes(spec: &LloSpec) -> (Vec<u8>, LloTruth) {
    let (space, truth) = llo_space(spec);
    (space.encode_to_vec(), truth)
}
