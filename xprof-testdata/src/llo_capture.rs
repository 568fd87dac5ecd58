//! Synthetic TPU kernel-profiling captures: the shape a real one has.
//!
//! A real capture (a Pallas kernel on a TPU v6e, profiled with libtpu's
//! `--xla_enable_custom_call_region_trace` and
//! `--xla_xprof_register_llo_debug_info`) cannot be shared; every fact it
//! holds is in `shared/formats/tpu_kernel_profiling_capture.md`, and this
//! generator writes a smaller file of the same shape, rule by rule:
//!
//! - `/device:TPU:0` with `XLA Modules` and `XLA Ops` (one Pallas kernel,
//!   run [`CaptureSpec::executions`] times), empty `Async XLA Ops` and
//!   `TC Overlay` lines, all line timestamps 0 and event offsets about
//!   81 ms after the profile start (§2);
//! - device times on a 1250-ps tick, events of a line that share a tick
//!   pushed apart by 78 ps, `device_offset_ps`/`device_duration_ps` stats
//!   holding the tick (§2);
//! - a `Tensor Core` line of zero-length region-entry markers
//!   `bundle.<2^27 + R>` with `instrumentation_id` and a `long_name` ref
//!   `[<id>]  0x<addr>: bundle.<id>` (§4), firing `R0, R2`, then per loop
//!   trip `R69, R27, R28, R31, R32, R7, R8, R4, R5`; the predicated `init`
//!   body runs on even trips and `acc` on odd ones, but both markers fire on
//!   every trip;
//! - an `XLA TraceMe` line of Mosaic pipeline stages (`ep_*`, one event
//!   metadata per trace site, the same name under two ids for copy-in and
//!   wait-in) with `init`/`acc` nested in `ep_run_kernel` (§5);
//! - a `_counters_` line (id 2^63-1) of static `% util` samples (`spills`,
//!   `fills` for the spill and fill series) at the op start and at every
//!   marker, each carrying the static occupancy of the region whose marker
//!   comes next, omitted when it and the unit's previous sample are 0,
//!   lasting to the next marker, and the last sample of each execution
//!   (value 0, at the final marker) with the op's absolute end offset as
//!   its duration (§6);
//! - `/host:metadata` with one event metadata per program carrying an
//!   `llo_proto`, and `<module>(<program_id>)` carrying `program_id` (§7);
//!   the program id is above 2^63, as the real one is;
//! - `Task Environment` with the profile start and stop.
//!
//! [`CaptureTruth`] describes everything written, for tests to compute
//! their expected values from.

use std::collections::BTreeMap;

use crate::xspace_proto::{XEvent, XSpace, x_stat};
use prost::Message;

use crate::llo_proto::{kernel_proto, small_fusion_proto, static_cases_proto};
use crate::plane::{PlaneBuilder, event, line};

pub use crate::llo_capture_truth::{
    BASE_ADDRESS, CaptureKernel, CaptureMarker, CaptureSample, CaptureScope, CaptureSpec,
    CaptureTruth, HLO_OP, JITTER_PS, MODULE, MODULE_ID, PROGRAM_ID, ProgramRegion,
    REGION_MARKER_BASE, StaticUnit, TICK_PS,
};

/// The kernel's regions on a schedule of `SLOTS` slots, shaped after §7.2
/// (a whole-kernel region, the body block, a loop whose body holds two
/// predicated regions, `init` and `acc`).
const SLOTS: u32 = 240;

fn regions() -> Vec<ProgramRegion> {
    let r = |id, parent, role, placed: Option<(u32, u32)>, marker| ProgramRegion {
        id,
        parent,
        role,
        start: placed.map(|p| p.0),
        end: placed.map(|p| p.1),
        marker,
    };
    vec![
        r(0, None, "top", Some((0, SLOTS)), true),
        r(2, Some(0), "sub_region", Some((3, SLOTS)), true),
        r(64, Some(2), "loop_pre_header", Some((8, 12)), false),
        r(4, Some(2), "loop_header", Some((220, 228)), true),
        r(5, Some(2), "loop_header_branch", Some((228, 232)), true),
        r(69, Some(2), "loop_body", Some((12, 220)), true),
        r(26, Some(69), "pred_check", None, false),
        r(27, Some(69), "pred_check_branch", Some((20, 24)), true),
        r(28, Some(69), "pred_region", Some((24, 110)), true),
        r(29, Some(69), "pred_fallthru", None, false),
        r(30, Some(69), "pred_check", None, false),
        r(31, Some(69), "pred_check_branch", Some((110, 114)), true),
        r(32, Some(69), "pred_region", Some((114, 200)), true),
        r(33, Some(69), "pred_fallthru", None, false),
        r(7, Some(2), "loop_footer", Some((200, 210)), true),
        r(8, Some(2), "loop_footer_branch", Some((210, 220)), true),
        r(68, Some(2), "loop_exit", None, false),
    ]
}

/// Used slots per schedule slot for each unit, deterministic, busiest in
/// the two predicated bodies (matmul, loads, adds, stores), scalar work
/// everywhere; XLU, EUP, spills and fills stay 0 as on the real capture.
fn static_units(regions: &[ProgramRegion]) -> Vec<StaticUnit> {
    let body = |s: u32| {
        regions
            .iter()
            .any(|r| r.role == "pred_region" && r.start <= Some(s) && Some(s) < r.end)
    };
    let mk =
        |counter, stat, unit, field, capacity: Option<u32>, f: &dyn Fn(u32) -> u8| StaticUnit {
            counter,
            stat,
            unit,
            field,
            capacity,
            used: (0..SLOTS).map(f).collect(),
        };
    vec![
        mk("MXU", "% util", "MXU", 1, Some(2), &|s| {
            if body(s) {
                [2, 1, 2, 2][(s % 4) as usize]
            } else {
                0
            }
        }),
        mk("XLU", "% util", "XLU", 2, Some(2), &|_| 0),
        mk("Vector ALU", "% util", "VALU", 3, Some(4), &|s| {
            if body(s) && s % 3 == 0 { 1 } else { 0 }
        }),
        mk("Vector EUP", "% util", "EUP", 4, Some(1), &|_| 0),
        mk("Vector Load", "% util", "VLD", 5, Some(3), &|s| {
            if body(s) {
                (s % 3) as u8 + 1
            } else if s % 5 == 0 {
                1
            } else {
                0
            }
        }),
        mk("Vector Store", "% util", "VST", 6, Some(2), &|s| {
            if body(s) && s % 4 == 1 { 1 } else { 0 }
        }),
        mk("Scalar ALU", "% util", "SALU", 7, Some(2), &|s| {
            if s == 0 || s == 1 {
                0
            } else {
                (s % 2) as u8 + u8::from(s % 7 == 0)
            }
        }),
        mk("Vector Spills", "spills", "VMEM", 8, None, &|_| 0),
        mk("Vector Fills", "fills", "VMEM", 9, None, &|_| 0),
    ]
}

/// Ticks from one marker to the next inside a loop trip: (region, ticks
/// after it until the next marker). Region 28's body (`init`) runs on even
/// trips, 32's (`acc`) on odd ones; a skipped body leaves a few ticks.
fn trip_markers(trip: usize) -> [(u32, i64); 9] {
    let (init, acc) = if trip.is_multiple_of(2) {
        (712, 3)
    } else {
        (3, 744)
    };
    [
        (69, 2400),
        (27, 1),
        (28, init),
        (31, 1),
        (32, acc),
        (7, 0),
        (8, 2),
        (4, 0),
        (5, 40),
    ]
}

/// Bundle address of each marked region's trace instruction: the kernel's
/// base plus the region's first slot less the grid slots that stay empty
/// before it (one in eight here), as §4 derives the real addresses.
fn marker_address(r: &ProgramRegion) -> i64 {
    let slot = r.start.unwrap_or(0) as i64;
    BASE_ADDRESS + slot - slot / 8
}

/// Builds the capture and its description.
pub fn capture_space(spec: &CaptureSpec) -> (XSpace, CaptureTruth) {
    let regions = regions();
    let units = static_units(&regions);
    let mut truth = CaptureTruth {
        slots: SLOTS,
        units,
        ..Default::default()
    };
    truth.regions = regions;

    let mut p = PlaneBuilder::new(2, "/device:TPU:0");
    for (name, value) in [
        ("core_details", x_stat::Value::BytesValue(Vec::new())),
        (
            "device_type_string",
            x_stat::Value::StrValue("TPU v6 Lite".into()),
        ),
        (
            "peak_teraflops_per_second",
            x_stat::Value::DoubleValue(946.7),
        ),
        (
            "peak_hbm_bw_gigabytes_per_second",
            x_stat::Value::DoubleValue(1637.99),
        ),
        ("has_megacore", x_stat::Value::Int64Value(0)),
        ("has_merged_vmem", x_stat::Value::Int64Value(1)),
    ] {
        p.plane_stat(name, value);
    }
    let module_md = p.event_metadata(&format!("{MODULE}({PROGRAM_ID})"), "", vec![]);
    let op_stats = vec![
        p.stat(
            "hlo_category",
            x_stat::Value::StrValue("custom-call".into()),
        ),
        p.stat("program_id", x_stat::Value::Uint64Value(PROGRAM_ID)),
        p.stat("symbol_id", x_stat::Value::Uint64Value(1)),
        p.stat(
            "source",
            x_stat::Value::StrValue("/work/pallas_matmul.py:48".into()),
        ),
        p.stat(
            "tf_op",
            x_stat::Value::StrValue("jit(pallas_matmul)/pallas_call:".into()),
        ),
    ];
    let op_md = p.event_metadata(
        &format!(
            "%{HLO_OP} = f32[1024,1024]{{1,0}} custom-call(f32[1024,512]{{1,0}} %p0, \
             f32[512,1024]{{1,0}} %p1), custom_call_target=\"tpu_custom_call\""
        ),
        HLO_OP,
        op_stats,
    );
    // Trace sites in program order (§5): name, per-site metadata id.
    let site = |p: &mut PlaneBuilder, name: &str| p.event_metadata(name, "", vec![]);
    let s_init0 = site(&mut p, "ep_initialize_0");
    let s_init1 = site(&mut p, "ep_initialize_1");
    let s_copy_in = [site(&mut p, "ep_copy_in"), site(&mut p, "ep_copy_in")];
    let s_wait_in = [site(&mut p, "ep_wait_in"), site(&mut p, "ep_wait_in")];
    let s_run = site(&mut p, "ep_run_kernel");
    let s_init = site(&mut p, "init");
    let s_acc = site(&mut p, "acc");
    let s_copy_out = site(&mut p, "ep_copy_out");
    let s_wait_out = site(&mut p, "ep_wait_out");
    let s_finalize = site(&mut p, "ep_finalize");
    let mut marker_md: BTreeMap<u32, i64> = BTreeMap::new();
    let mut counter_md: BTreeMap<&'static str, i64> = BTreeMap::new();
    for u in &truth.units {
        counter_md.insert(u.counter, p.event_metadata(u.counter, "", vec![]));
    }

    let (mut modules, mut ops, mut markers, mut samples) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The tick at which each execution starts; executions are apart by
    // idle gaps of different lengths, as on the real capture.
    let mut op_tick: i64 = 81_300_000_000 / TICK_PS;
    // Ticks of markers already used on the line: (tick, count).
    let mut last_marker_tick = (i64::MIN, 0);
    let mut prev_value: BTreeMap<&'static str, f64> = BTreeMap::new();
    for execution in 0..spec.executions {
        // Marker sequence: (region, ticks to the next marker).
        let mut sequence: Vec<(u32, i64)> = vec![(0, 1), (2, 30)];
        for trip in 0..spec.trips {
            sequence.extend(trip_markers(trip));
        }
        // The last marker is followed by `ep_finalize` until the op ends.
        let finalize_ticks = 1440;
        let mut tick = op_tick + 1;
        let mut marker_ticks = Vec::new();
        for (region, gap) in &sequence {
            marker_ticks.push((*region, tick));
            tick += gap;
        }
        let last_tick = marker_ticks.last().map_or(tick, |m| m.1);
        let end_tick = last_tick + finalize_ticks;
        let op_offset = op_tick * TICK_PS;
        let op_dur = (end_tick - op_tick) * TICK_PS;
        truth.kernels.push(CaptureKernel {
            offset_ps: op_offset,
            duration_ps: op_dur,
        });
        let dev = |p: &mut PlaneBuilder, off: i64, dur: i64| {
            vec![
                p.stat("device_offset_ps", x_stat::Value::Uint64Value(off as u64)),
                p.stat("device_duration_ps", x_stat::Value::Uint64Value(dur as u64)),
            ]
        };
        // The module starts 3 ticks before its op and ends 1 after.
        let mut mstats = dev(&mut p, op_offset - 3 * TICK_PS, op_dur + 4 * TICK_PS);
        mstats.extend([
            p.stat("run_id", x_stat::Value::Uint64Value(8 + execution as u64)),
            p.stat("replica_id", x_stat::Value::Int64Value(0)),
            p.stat("queue_id", x_stat::Value::Uint64Value(0)),
            p.stat("core_type", x_stat::Value::Uint64Value(0)),
        ]);
        modules.push(event(
            module_md,
            op_offset - 3 * TICK_PS,
            op_dur + 4 * TICK_PS,
            mstats,
        ));
        let mut ostats = dev(&mut p, op_offset, op_dur);
        ostats.extend([
            p.stat("flops", x_stat::Value::Int64Value(134_217_728)),
            p.stat("model_flops", x_stat::Value::Int64Value(134_217_728)),
            p.stat("bytes_accessed", x_stat::Value::Int64Value(0)),
        ]);
        ops.push(event(op_md, op_offset, op_dur, ostats));

        // Markers, jittered when they share a tick.
        let first_marker = truth.markers.len();
        for (region, tick) in &marker_ticks {
            let k = if last_marker_tick.0 == *tick {
                last_marker_tick.1 + 1
            } else {
                0
            };
            last_marker_tick = (*tick, k);
            let id = REGION_MARKER_BASE + *region as u64;
            let md = *marker_md
                .entry(*region)
                .or_insert_with(|| p.event_metadata(&format!("bundle.{id}"), "", vec![]));
            let address = marker_address(truth.region(*region));
            let offset = tick * TICK_PS + k * JITTER_PS;
            let mut stats = dev(&mut p, tick * TICK_PS, 0);
            stats.push(p.stat("instrumentation_id", x_stat::Value::Uint64Value(id)));
            stats.push(p.ref_stat("long_name", &format!("[{id}]  {address:#x}: bundle.{id}")));
            markers.push(event(md, offset, 0, stats));
            truth.markers.push(CaptureMarker {
                execution,
                region_id: *region,
                offset_ps: offset,
                device_offset_ps: tick * TICK_PS,
                address,
            });
        }
        let exec_markers: Vec<CaptureMarker> = truth.markers[first_marker..].to_vec();

        // TraceMe stages: initialize at the start, per trip copy-in and
        // wait-in after R69, run_kernel (with init or acc) over the body
        // that runs, copy-out and wait-out after acc, finalize at the end.
        let mut scope = |name: &'static str, md: i64, start: i64, ticks: i64, parent| {
            truth.scopes.push(CaptureScope {
                execution,
                name,
                metadata_id: md,
                offset_ps: start * TICK_PS,
                duration_ps: ticks * TICK_PS,
                parent,
            });
            truth.scopes.len() - 1
        };
        scope("ep_initialize_0", s_init0, op_tick + 2, 5, None);
        scope("ep_initialize_1", s_init1, op_tick + 8, 6, None);
        let at = |region: u32, trip: usize| -> i64 {
            exec_markers
                .iter()
                .filter(|m| m.region_id == region)
                .nth(trip)
                .map(|m| m.device_offset_ps / TICK_PS)
                .expect("marker")
        };
        for trip in 0..spec.trips {
            let r69 = at(69, trip);
            scope("ep_copy_in", s_copy_in[0], r69 + 2, 12, None);
            scope("ep_copy_in", s_copy_in[1], r69 + 16, 14, None);
            scope("ep_wait_in", s_wait_in[0], r69 + 40, 8, None);
            scope("ep_wait_in", s_wait_in[1], r69 + 60, 2300, None);
            // The body runs from its marker to the next branch's marker.
            let (body_region, next_region, name, md) = if trip.is_multiple_of(2) {
                (28, 31, "init", s_init)
            } else {
                (32, 7, "acc", s_acc)
            };
            let start = at(body_region, trip) + 1;
            let end = at(next_region, trip) - 1;
            let run = scope("ep_run_kernel", s_run, start, end - start, None);
            scope(name, md, start + 1, end - start - 2, Some(run));
            if !trip.is_multiple_of(2) {
                let r7 = at(7, trip);
                scope("ep_copy_out", s_copy_out, r7 + 3, 10, None);
                if trip + 1 < spec.trips {
                    scope("ep_wait_out", s_wait_out, r7 + 20, 6, None);
                }
            }
        }
        scope(
            "ep_finalize",
            s_finalize,
            last_tick + 16,
            finalize_ticks - 18,
            None,
        );

        // Static counters: at the op start and at every marker, each unit
        // carries the next marker's region value; 0 after the last one.
        let mut times: Vec<(i64, Option<u32>)> =
            vec![(op_offset, exec_markers.first().map(|m| m.region_id))];
        for (i, m) in exec_markers.iter().enumerate() {
            times.push((m.offset_ps, exec_markers.get(i + 1).map(|n| n.region_id)));
        }
        for (i, (offset, next_region)) in times.iter().enumerate() {
            let last = i + 1 == times.len();
            for u in &truth.units {
                let value = match next_region {
                    Some(r) => {
                        let region = truth.region(*r);
                        match u.capacity {
                            Some(_) => region.occupancy_pct(u).unwrap_or(0.0),
                            None => 0.0,
                        }
                    }
                    None => 0.0,
                };
                let prev = prev_value.insert(u.counter, value);
                if value == 0.0 && prev == Some(0.0) {
                    continue;
                }
                let (duration, absolute_end) = if last {
                    (op_offset + op_dur, true)
                } else {
                    (exec_markers[i].offset_ps - offset, false)
                };
                truth.samples.push(CaptureSample {
                    execution,
                    counter: u.counter,
                    stat: u.stat,
                    offset_ps: *offset,
                    duration_ps: duration,
                    value,
                    region_id: *next_region,
                    absolute_end,
                });
            }
        }
        op_tick = end_tick + [194_320, 109_520, 150_000][execution % 3];
    }
    truth
        .scopes
        .sort_by_key(|s| (s.offset_ps, std::cmp::Reverse(s.duration_ps)));
    // Parents were indices before the sort: re-point them.
    let mut scope_events = Vec::new();
    for s in &truth.scopes {
        let stats = vec![
            p.stat(
                "device_offset_ps",
                x_stat::Value::Uint64Value(s.offset_ps as u64),
            ),
            p.stat(
                "device_duration_ps",
                x_stat::Value::Uint64Value(s.duration_ps as u64),
            ),
        ];
        scope_events.push(event(s.metadata_id, s.offset_ps, s.duration_ps, stats));
    }
    let nested: Vec<Option<usize>> = truth
        .scopes
        .iter()
        .map(|s| {
            truth.scopes.iter().position(|o| {
                o.name == "ep_run_kernel"
                    && s.name != "ep_run_kernel"
                    && o.offset_ps < s.offset_ps
                    && s.offset_ps + s.duration_ps <= o.offset_ps + o.duration_ps
            })
        })
        .collect();
    for (s, parent) in truth.scopes.iter_mut().zip(nested) {
        s.parent = parent;
    }
    for s in &truth.samples {
        let md = counter_md[s.counter];
        let v = p.stat(s.stat, x_stat::Value::DoubleValue(s.value));
        samples.push(event(md, s.offset_ps, s.duration_ps, vec![v]));
    }
    // Samples at one time come in no fixed unit order on the real line;
    // here they are in unit order, stable by time.
    p.line(line(2, "XLA Modules", 0, modules));
    p.line(line(3, "XLA Ops", 0, ops));
    p.line(line(4, "Async XLA Ops", 0, Vec::<XEvent>::new()));
    p.line(line(7, "TC Overlay", 0, Vec::<XEvent>::new()));
    p.line(line(8, "Tensor Core", 0, markers));
    p.line(line(6, "XLA TraceMe", 0, scope_events));
    p.line(line(i64::MAX, "_counters_", 0, samples));
    let device = p.finish();

    let mut meta = PlaneBuilder::new(0, "/host:metadata");
    let kernel_proto = kernel_proto(&truth);
    let other_proto = small_fusion_proto();
    for (name, bytes) in [
        (format!("{MODULE}({MODULE_ID})::{HLO_OP}"), kernel_proto),
        ("jit__other(29)::fusion.28".to_string(), other_proto),
    ] {
        let stat = meta.stat("llo_proto", x_stat::Value::BytesValue(bytes.clone()));
        meta.event_metadata(&name, "", vec![stat]);
        truth.llo_protos.push((name, bytes));
    }
    let program = meta.stat("program_id", x_stat::Value::Uint64Value(PROGRAM_ID));
    let module_name = format!("{MODULE}({PROGRAM_ID})");
    meta.event_metadata(&module_name, &module_name, vec![program]);
    meta.plane_stat("process_id", x_stat::Value::Int64Value(4242));

    let mut env = PlaneBuilder::new(0, "Task Environment");
    let start_ns: u64 = 1_783_580_000_000_000_000;
    env.plane_stat("profile_start_time", x_stat::Value::Uint64Value(start_ns));
    env.plane_stat(
        "profile_stop_time",
        x_stat::Value::Uint64Value(start_ns + 681_900_000),
    );
    let space = XSpace {
        planes: vec![meta.finish(), device, env.finish()],
        hostnames: vec!["synthetic-tpu-vm".into()],
        ..Default::default()
    };
    (space, truth)
}

/// The capture's bytes.
pub fn capture_space_bytes(spec: &CaptureSpec) -> (Vec<u8>, CaptureTruth) {
    let (space, truth) = capture_space(spec);
    (space.encode_to_vec(), truth)
}

/// An XSpace holding only the payload of [`static_cases_proto`] on
/// `/host:metadata` (`jit_edge_cases(31)::edge_cases.1`): the fixture on
/// which XProf's static modes are compared rule by rule.
pub fn static_cases_space_bytes() -> Vec<u8> {
    let mut meta = PlaneBuilder::new(0, "/host:metadata");
    let stat = meta.stat("llo_proto", x_stat::Value::BytesValue(static_cases_proto()));
    meta.event_metadata("jit_edge_cases(31)::edge_cases.1", "", vec![stat]);
    XSpace {
        planes: vec![meta.finish()],
        hostnames: vec!["synthetic-tpu-vm".into()],
        ..Default::default()
    }
    .encode_to_vec()
}
