//! The canned analyses: SQL views a user can read and copy.
//!
//! Each view is one `.sql` file in this folder, written against the
//! unqualified table names; [`VIEWS`] lists them and [`register_views`]
//! creates them in the schema holding the tables.

pub mod event_steps;

pub use crate::catalog::register_views;

/// A view: its name, what it answers, and its SQL.
#[derive(Debug, Clone, Copy)]
pub struct ViewDef {
    /// View name, part of the public SQL contract.
    pub name: &'static str,
    /// What the view answers.
    pub doc: &'static str,
    /// The `SELECT` defining it.
    pub sql: &'static str,
    /// A table provider that gives the same rows as `sql` another way,
    /// registered in its place: `(schema of the tables, sql)` to provider.
    /// `None` for a view that is its SQL.
    pub native: Option<NativeView>,
}

/// Builds a view's native provider from the schema holding the tables and
/// the view's SQL (which stays its definition).
pub type NativeView =
    fn(&str, &'static str) -> std::sync::Arc<dyn datafusion::catalog::TableProvider>;

/// Every view, in documentation order.
pub const VIEWS: &[ViewDef] = &[
    ViewDef {
        name: "event_stats",
        doc: "Every stat of every event: its own (`origin = 'event'`) and those of its metadata it does not override (`origin = 'metadata'`).",
        sql: include_str!("event_stats.sql"),
        native: None,
    },
    ViewDef {
        name: "device_ops",
        doc: "One row per op or kernel execution on a device (TPU `XLA Ops`/`PALLAS`, GPU streams, host events with an `hlo_op`): what busy time is made of.",
        sql: include_str!("device_ops.sql"),
        native: None,
    },
    ViewDef {
        name: "device_busy",
        doc: "Per device: ops, span from first op to last, busy time as the union of op intervals (overlaps once), idle, busy percent.",
        sql: include_str!("device_busy.sql"),
        native: None,
    },
    ViewDef {
        name: "hlo_stats",
        doc: "Per (program_id, HLO op): occurrences, total and self time, self-time percent and cumulative percent, FLOP rates, memory bandwidth, operational intensity, bound_by, rank: XProf's hlo_stats.",
        sql: include_str!("hlo_stats.sql"),
        native: None,
    },
    ViewDef {
        name: "roofline",
        doc: "Per HLO op: operational intensity, achieved FLOP/s and bandwidth, the device's peaks, ridge point, attainable FLOP/s at the op's intensity, efficiencies: XProf's roofline_model per-op rows.",
        sql: include_str!("roofline.sql"),
        native: None,
    },
    ViewDef {
        name: "op_profile",
        doc: "XProf's op_profile tree by program, flattened: programs and IDLE, their HLO categories, the ops of each; time, percent of device time with and without idle, FLOPs, FLOP and HBM-bandwidth utilization against the device's peaks.",
        sql: include_str!("op_profile.sql"),
        native: None,
    },
    ViewDef {
        name: "framework_op_stats",
        doc: "Per framework op (`tf_op` split into type and operation), device rows with an IDLE row and host rows: occurrences, total and self time, percentages, rates, bound_by: XProf's framework_op_stats.",
        sql: include_str!("framework_op_stats.sql"),
        native: None,
    },
    ViewDef {
        name: "kernel_stats",
        doc: "GPU kernels per name, launch shape (registers, shared memory, grid, block), op and tensor-core flags: occurrences, total/avg/min/max duration, occupancy: XProf's kernel_stats.",
        sql: include_str!("kernel_stats.sql"),
        native: None,
    },
    ViewDef {
        name: "step_stats",
        doc: "Per step and device: start, duration, ops, busy time (union of op intervals within the step), idle; steps from the device's `Steps` line or the host's step annotations.",
        sql: include_str!("step_stats.sql"),
        native: None,
    },
    ViewDef {
        name: "event_steps",
        doc: "The step of each host event and of the GPU kernels it launched, as XProf's Events DB `step` (GroupTfEvents' `group_id`): step root (`_r`), step name, step number; also for host-only profiles. Defined by this SQL, computed by a walk in memory that gives its rows (xprof_query::event_steps).",
        sql: include_str!("event_steps.sql"),
        native: Some(event_steps::native_view),
    },
    ViewDef {
        name: "events_db",
        doc: "XProf's Events DB (`create_events_db`): its rows and 31 columns (`device`, `start_ns`, `self_time_ns`, `step`, `category`, `hlo_op`, `trace_args`, ...), so queries written for XProf's `Events` view run unchanged (`--schema events_db` names it `events`).",
        sql: include_str!("events_db.sql"),
        native: None,
    },
    ViewDef {
        name: "kernel_launch",
        doc: "Each host launch and the device op it started (`correlation_id` or flow): launch delay and queueing.",
        sql: include_str!("kernel_launch.sql"),
        native: None,
    },
    ViewDef {
        name: "gpu_kernels",
        doc: "One row per GPU kernel execution from any source (XSpace GPU streams, PyTorch Kineto, Proton's kernel timeline): device, stream, start, duration, grid/block/registers/shared memory when recorded, and the host launch it pairs with.",
        sql: include_str!("gpu_kernels.sql"),
        native: None,
    },
    ViewDef {
        name: "gpu_peaks",
        doc: "The project's table of GPU peaks by architecture and SM count (A100, H100 SXM/PCIe, H200, B200, MI300X/A): dense tensor TFLOP/s for FP8, FP16/BF16, TF32, FP64, and memory bandwidth.",
        sql: include_str!("gpu_peaks.sql"),
        native: None,
    },
    ViewDef {
        name: "proton_kernels",
        doc: "Per node of a Proton tree (kernel or scope path): launches, time, average time, GFLOP/s, TFLOP/s per width, GB/s, and utilization of the binding resource against the device's peaks, as proton-viewer derives them.",
        sql: include_str!("proton_kernels.sql"),
        native: None,
    },
    ViewDef {
        name: "kernel_scopes",
        doc: "One row per scope instance inside a kernel: Proton instrumentation-mode and Mosaic GPU traces (kernel, SM, CTA, warp or warpgroup, line, scope, call stack, start and end cycles as recorded, times derived from the recorded clock) and TPU LLO regions (`LLO Ops`, `Pallas Primitives`, `Source code`) with the kernel event containing them.",
        sql: include_str!("kernel_scopes.sql"),
        native: None,
    },
    ViewDef {
        name: "warp_scopes",
        doc: "Per kernel and scope of an intra-kernel trace: instances, SMs, CTAs and warps; cycles min/avg/max and spread; cycles per warp.",
        sql: include_str!("warp_scopes.sql"),
        native: None,
    },
    ViewDef {
        name: "llo_instructions",
        doc: "One row per TPU LLO instruction (`<UNIT> Instructions` lanes, `LLO Instructions`): unit, instruction name (with the `msg`/`message`/`annotation`/`label` fallback), time, bundle number, ordinal, unit id, LLO scopes as a list, Pallas primitive, source file and line, call stack, details, and the kernel event containing it.",
        sql: include_str!("llo_instructions.sql"),
        native: None,
    },
    ViewDef {
        name: "unit_utilization",
        doc: "Per kernel execution and functional unit: instructions, busy time (union of intervals), busy fraction of the kernel's duration, and the unit that dominates.",
        sql: include_str!("unit_utilization.sql"),
        native: None,
    },
    ViewDef {
        name: "bundle_stats",
        doc: "Per kernel execution and bundle number: units issued, instructions, first and last time; each gap in the bundle sequence (a scheduling bubble) as a row of its own with its length in bundles and ps.",
        sql: include_str!("bundle_stats.sql"),
        native: None,
    },
    ViewDef {
        name: "instruction_mix",
        doc: "Per kernel, unit and instruction: count, total time, kernel executions and share of the kernel's instructions (XProf's instruction_mix, per kernel).",
        sql: include_str!("instruction_mix.sql"),
        native: None,
    },
    ViewDef {
        name: "llo_concurrency",
        doc: "Per kernel execution: time memory units (VLD/VST/DMA) and compute units (VALU/EUP/XLU/MXU) are busy together, each alone, and neither (XProf's memory/compute concurrency, per kernel).",
        sql: include_str!("llo_concurrency.sql"),
        native: None,
    },
    ViewDef {
        name: "source_hotspots",
        doc: "Per kernel and source line of its LLO instructions: instructions, busy time, units used, kernel executions, bundle range.",
        sql: include_str!("source_hotspots.sql"),
        native: None,
    },
    ViewDef {
        name: "llo_region_entries",
        doc: "One row per LLO region-entry marker of a TPU kernel-profiling capture (`Tensor Core` line): the kernel execution it fired in, region id, bundle address, entry time, and the measured time to the next marker of the same kernel execution (or to the kernel's end).",
        sql: include_str!("llo_region_entries.sql"),
        native: None,
    },
    ViewDef {
        name: "unit_counters",
        doc: "TPU counter samples (hardware counters on `_counters_`/`TC Stats`/`SC Stats`/`CMN Stats`, the `LLO Utilization` series, the static per-region `% util` series of a kernel-profiling capture) with the functional unit each measures, whether it is measured or static, and for static samples the LLO region they describe (the next marker's).",
        sql: include_str!("unit_counters.sql"),
        native: None,
    },
    ViewDef {
        name: "llo_region_utilization",
        doc: "Static: per LLO program, region and unit, the slots the compiler scheduled over the region's bundles and the occupancy percent (the value a kernel-profiling capture's `_counters_` line carries for the region, shown beside it).",
        sql: include_str!("llo_region_utilization.sql"),
        native: None,
    },
    ViewDef {
        name: "llo_region_profile",
        doc: "Per kernel and LLO region that fired: measured entries and time (sum, mean, p50, share of the kernel) next to the region's static unit occupancy, named scope, JAX primitive and source line.",
        sql: include_str!("llo_region_profile.sql"),
        native: None,
    },
    ViewDef {
        name: "utilization_viewer",
        doc: "Per TPU counter sample: each unit's achieved instructions against its peak (scalar, vector ALUs, loads, stores, MXU, XU, RPU over cycles), XProf's utilization viewer with the facts file's counter names.",
        sql: include_str!("utilization_viewer.sql"),
        native: None,
    },
    ViewDef {
        name: "llo_protos",
        doc: "The static LLO modules (`llo_proto` stats) a TPU profile carries: where, their program when known, size, and the bytes as they are (not decoded).",
        sql: include_str!("llo_protos.sql"),
        native: None,
    },
    ViewDef {
        name: "async_overlap",
        doc: "Per async window of a device (an `Async XLA Ops` event, or a start/done pair of the op lines): span, time covered by the device's compute, exposed time, overlap ratio and class (hidden, partial, exposed; `unpaired` for a start or done without its pair): XProf's analyze_async_overlap.",
        sql: include_str!("async_overlap.sql"),
        native: None,
    },
    ViewDef {
        name: "engine_concurrency",
        doc: "Per pair of engines (TensorCore and SparseCore op lines) of a TPU chip: busy time of each and the time both were busy: XProf's analyze_async_overlap concurrency.",
        sql: include_str!("engine_concurrency.sql"),
        native: None,
    },
];
