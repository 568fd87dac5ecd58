//! Independent checks of view columns no XProf tool computes: each number
//! is recomputed here from the raw input, decoded with prost, and compared
//! with the view. (The golden `tests/sql/*.slt` files hold what the views
//! answer; these tests say why those answers are right.)

use crate::common;

use std::collections::BTreeMap;

use common::*;
use prost::Message;
use xprof_testdata::xspace_proto::{XEvent, XLine, XPlane, XSpace, XStat, x_event, x_stat};

fn space(rel: &str) -> XSpace {
    XSpace::decode(&*std::fs::read(fixture(rel)).unwrap()).unwrap()
}

fn stat_name<'a>(plane: &'a XPlane, s: &XStat) -> &'a str {
    &plane.stat_metadata[&(s.metadata_id as i64)].name
}

/// An integer stat of the event (its own first, then its metadata's).
fn int_stat(plane: &XPlane, ev: &XEvent, key: &str) -> Option<i64> {
    let md = plane.event_metadata.get(&ev.metadata_id);
    ev.stats
        .iter()
        .chain(md.into_iter().flat_map(|m| &m.stats))
        .find(|s| stat_name(plane, s) == key)
        .and_then(|s| match s.value {
            Some(x_stat::Value::Int64Value(v)) => Some(v),
            Some(x_stat::Value::Uint64Value(v)) => Some(v as i64),
            _ => None,
        })
}

/// Start and end of an event in ps, from its line (the fixtures' line
/// times are relative to the profile start, so no origin is taken off).
fn span_ps(line: &XLine, ev: &XEvent) -> (i64, i64) {
    let Some(x_event::Data::OffsetPs(offset)) = ev.data else {
        panic!("an aggregated event")
    };
    let start = line.timestamp_ns * 1000 + offset;
    (start, start + ev.duration_ps)
}

/// `device_busy` per device: ops, first start, last end, span, summed op
/// time, busy time (the union), idle and busy percent, from the raw op
/// lines (TPU `XLA Ops`; GPU streams).
#[tokio::test]
async fn device_busy_is_the_raw_op_lines() {
    for rel in [
        "tpu/synthetic_tpu.xplane.pb",
        "tpu/synthetic_self_time.xplane.pb",
        "gpu/jax_gpu.xplane.pb",
        "gpu/jax_pallas.xplane.pb",
    ] {
        let mut want = BTreeMap::new();
        for plane in space(rel).planes {
            let ops: Vec<(i64, i64)> = plane
                .lines
                .iter()
                .filter(|l| {
                    (plane.name.starts_with("/device:TPU:") && l.name == "XLA Ops")
                        || (plane.name.starts_with("/device:GPU:") && l.name.starts_with("Stream"))
                })
                .flat_map(|l| l.events.iter().map(move |e| span_ps(l, e)))
                .collect();
            if ops.is_empty() {
                continue;
            }
            let first = ops.iter().map(|o| o.0).min().unwrap();
            let last = ops.iter().map(|o| o.1).max().unwrap();
            let busy = union_sweep_len(&mut ops.clone());
            let op_time: i64 = ops.iter().map(|o| o.1 - o.0).sum();
            want.insert(
                plane.name.clone(),
                (
                    ops.len() as i64,
                    first,
                    last,
                    last - first,
                    op_time,
                    busy,
                    last - first - busy,
                ),
            );
        }
        assert!(!want.is_empty(), "{rel}");
        let rows = query_rows(&[fixture(rel)], "SELECT * FROM device_busy").await;
        assert_eq!(rows.len(), want.len(), "{rel}");
        for r in &rows {
            let name = r["device_name"].as_str().unwrap();
            let got = (
                i(r, "ops"),
                i(r, "first_ps"),
                i(r, "last_ps"),
                i(r, "span_ps"),
                i(r, "op_time_ps"),
                i(r, "busy_ps"),
                i(r, "idle_ps"),
            );
            let w = want[name];
            assert_eq!(got, w, "{rel} {name}");
            let pct = r["busy_pct"].as_f64().unwrap();
            let want_pct = 100.0 * w.5 as f64 / w.3 as f64;
            assert!(
                (pct - want_pct).abs() <= 1e-12 * want_pct,
                "{rel} {name}: {pct} vs {want_pct}"
            );
        }
    }
}

/// As much of `xla.HloProto` as counting its computations and
/// instructions needs (field numbers from xla/service/hlo.proto).
#[derive(Clone, PartialEq, prost::Message)]
struct HloProto {
    #[prost(message, optional, tag = "1")]
    hlo_module: Option<HloModule>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HloModule {
    #[prost(message, repeated, tag = "3")]
    computations: Vec<HloComputation>,
    #[prost(int64, tag = "5")]
    id: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HloComputation {
    #[prost(message, repeated, tag = "2")]
    instructions: Vec<HloInstructionName>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HloInstructionName {}

/// `hlo_instructions` holds every instruction of every computation of
/// every HLO module the trace carries (`/host:metadata`'s `Hlo Proto`
/// stats), per program: counted here from the protos.
#[tokio::test]
async fn hlo_instructions_are_every_instruction_of_the_protos() {
    for rel in [
        "gpu/jax_gpu.xplane.pb",
        "gpu/jax_pallas.xplane.pb",
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
        "xspace/jax_cpu_nested_4steps.xplane.pb",
    ] {
        let mut want: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for plane in space(rel)
            .planes
            .iter()
            .filter(|p| p.name == "/host:metadata")
        {
            for md in plane.event_metadata.values() {
                let Some(proto) = md.stats.iter().find_map(|s| match &s.value {
                    Some(x_stat::Value::BytesValue(b)) if stat_name(plane, s) == "Hlo Proto" => {
                        Some(b)
                    }
                    _ => None,
                }) else {
                    continue;
                };
                let module = HloProto::decode(proto.as_slice())
                    .unwrap()
                    .hlo_module
                    .unwrap();
                let program = md
                    .stats
                    .iter()
                    .find(|s| stat_name(plane, s) == "program_id")
                    .and_then(|s| match s.value {
                        Some(x_stat::Value::Int64Value(v)) => Some(v),
                        Some(x_stat::Value::Uint64Value(v)) => Some(v as i64),
                        _ => None,
                    })
                    .unwrap_or(module.id);
                let entry = want.entry(program.to_string()).or_default();
                entry.0 += module.computations.len() as i64;
                entry.1 += module
                    .computations
                    .iter()
                    .map(|c| c.instructions.len() as i64)
                    .sum::<i64>();
            }
        }
        assert!(!want.is_empty(), "{rel}: no HLO proto");
        let rows = query_rows(
            &[fixture(rel)],
            "SELECT CAST(program_id AS VARCHAR) AS program, count(DISTINCT computation) AS computations, \
             count(*) AS instructions FROM hlo_instructions GROUP BY program_id",
        )
        .await;
        let got: BTreeMap<String, (i64, i64)> = rows
            .iter()
            .map(|r| {
                (
                    r["program"].as_str().unwrap().to_string(),
                    (i(r, "computations"), i(r, "instructions")),
                )
            })
            .collect();
        assert_eq!(got, want, "{rel}");
    }
}

/// `event_stats`: an event's own stats (`origin = 'event'`) and its
/// metadata's that it does not override (`'metadata'`), counted per stat
/// name from the raw file.
#[tokio::test]
async fn event_stats_are_own_then_metadata_stats() {
    for rel in ["gpu/jax_gpu.xplane.pb", "tpu/synthetic_tpu.xplane.pb"] {
        let mut want: BTreeMap<(String, String), i64> = BTreeMap::new();
        for plane in space(rel).planes {
            for line in &plane.lines {
                for ev in &line.events {
                    let own: Vec<&str> = ev.stats.iter().map(|s| stat_name(&plane, s)).collect();
                    for key in &own {
                        *want.entry(("event".into(), key.to_string())).or_default() += 1;
                    }
                    let md = plane.event_metadata.get(&ev.metadata_id);
                    for s in md.into_iter().flat_map(|m| &m.stats) {
                        let key = stat_name(&plane, s);
                        if !own.contains(&key) {
                            *want
                                .entry(("metadata".into(), key.to_string()))
                                .or_default() += 1;
                        }
                    }
                }
            }
        }
        let rows = query_rows(
            &[fixture(rel)],
            "SELECT origin, key, count(*) AS n FROM event_stats GROUP BY origin, key",
        )
        .await;
        let got: BTreeMap<(String, String), i64> = rows
            .iter()
            .map(|r| {
                (
                    (
                        r["origin"].as_str().unwrap().to_string(),
                        r["key"].as_str().unwrap().to_string(),
                    ),
                    i(r, "n"),
                )
            })
            .collect();
        assert!(got.len() > 10, "{rel}: {got:?}");
        assert_eq!(got, want, "{rel}");
    }
}

/// `kernel_launch` on the real GPU captures: every kernel paired with the
/// host call carrying its `correlation_id`, the delay from the call's
/// start to the kernel's start, and the queue from the call's end.
#[tokio::test]
async fn kernel_launch_delays_are_the_correlated_events() {
    for rel in ["gpu/jax_gpu.xplane.pb", "gpu/jax_pallas.xplane.pb"] {
        let space = space(rel);
        let mut host = BTreeMap::new();
        let mut kernels = Vec::new();
        for plane in &space.planes {
            for line in &plane.lines {
                for ev in &line.events {
                    let Some(id) = int_stat(plane, ev, "correlation_id") else {
                        continue;
                    };
                    let span = span_ps(line, ev);
                    if plane.name.starts_with("/device:GPU:") {
                        kernels.push((id, span));
                    } else {
                        host.insert(id, span);
                    }
                }
            }
        }
        let mut want: Vec<(i64, i64, i64)> = kernels
            .iter()
            .filter_map(|(id, (k_start, _))| {
                let (h_start, h_end) = host.get(id)?;
                Some((*k_start, k_start - h_start, k_start - h_end))
            })
            .collect();
        assert!(!want.is_empty(), "{rel}");
        let rows = query_rows(
            &[fixture(rel)],
            "SELECT ts_ps, launch_delay_ps, queue_ps FROM kernel_launch WHERE link = 'correlation_id'",
        )
        .await;
        let mut got: Vec<(i64, i64, i64)> = rows
            .iter()
            .map(|r| (i(r, "ts_ps"), i(r, "launch_delay_ps"), i(r, "queue_ps")))
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{rel}");
    }
}

/// A step as the raw file has it: name, start, end, and its device.
struct RawStep {
    name: String,
    device: String,
    start: i64,
    end: i64,
}

/// `step_stats` per step and device: the ops of the step, their first
/// start and last end, busy time (their union) and idle (the step less
/// busy, at least 0), recomputed from the raw file. TPU: the ops of the
/// `XLA Ops` line inside each event of the same plane's `Steps` line. Host
/// profiles (XLA on CPU, GPU captures): host steps are the events with a
/// `step_num` stat; a host op (an event with an `hlo_op` stat) is in the
/// last step that started at or before it, a GPU kernel in the step in
/// which its launch (`correlation_id`) started, if that start is before
/// the step's end.
#[tokio::test]
async fn step_stats_ops_busy_and_idle_are_the_raw_steps() {
    for rel in [
        "tpu/synthetic_tpu.xplane.pb",
        "gpu/jax_gpu.xplane.pb",
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
    ] {
        let space = space(rel);
        let tpu = rel.starts_with("tpu/");
        let mut steps: Vec<RawStep> = Vec::new();
        // (step index, device name) -> op intervals
        let mut ops: BTreeMap<(usize, String), Vec<(i64, i64)>> = BTreeMap::new();
        let has_stat = |plane: &XPlane, ev: &XEvent, key: &str| {
            let md = plane.event_metadata.get(&ev.metadata_id);
            ev.stats
                .iter()
                .chain(md.into_iter().flat_map(|m| &m.stats))
                .any(|s| stat_name(plane, s) == key)
        };
        if tpu {
            for plane in space
                .planes
                .iter()
                .filter(|p| p.name.starts_with("/device:TPU:"))
            {
                for l in plane.lines.iter().filter(|l| l.name == "Steps") {
                    for ev in &l.events {
                        let (start, end) = span_ps(l, ev);
                        steps.push(RawStep {
                            name: plane.event_metadata[&ev.metadata_id].name.clone(),
                            device: plane.name.clone(),
                            start,
                            end,
                        });
                    }
                }
                for l in plane.lines.iter().filter(|l| l.name == "XLA Ops") {
                    for ev in &l.events {
                        let (start, end) = span_ps(l, ev);
                        let step = steps
                            .iter()
                            .position(|s| {
                                s.device == plane.name && s.start <= start && end <= s.end
                            })
                            .expect("an op outside every step");
                        ops.entry((step, plane.name.clone()))
                            .or_default()
                            .push((start, end));
                    }
                }
            }
        } else {
            // Host steps, then ops placed by the time they (or their
            // launch) started.
            let mut points: Vec<(i64, String, (i64, i64))> = Vec::new();
            let mut launches = BTreeMap::new();
            for plane in &space.planes {
                for l in &plane.lines {
                    for ev in &l.events {
                        let (start, end) = span_ps(l, ev);
                        if plane.name == "/host:CPU" {
                            if let Some(n) = int_stat(plane, ev, "step_num") {
                                let name = &plane.event_metadata[&ev.metadata_id].name;
                                steps.push(RawStep {
                                    name: format!("{name} {n}"),
                                    device: plane.name.clone(),
                                    start,
                                    end,
                                });
                            }
                            if has_stat(plane, ev, "hlo_op") {
                                points.push((start, plane.name.clone(), (start, end)));
                            }
                            if let Some(id) = int_stat(plane, ev, "correlation_id") {
                                launches.insert(id, start);
                            }
                        }
                    }
                }
            }
            for plane in space
                .planes
                .iter()
                .filter(|p| p.name.starts_with("/device:GPU:"))
            {
                for l in &plane.lines {
                    for ev in &l.events {
                        let id = int_stat(plane, ev, "correlation_id").expect("a kernel's id");
                        points.push((launches[&id], plane.name.clone(), span_ps(l, ev)));
                    }
                }
            }
            for (at, device, interval) in points {
                let step = steps
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.start <= at)
                    .max_by_key(|(i, s)| (s.start, *i))
                    .map(|(i, _)| i);
                if let Some(step) = step.filter(|&i| at < steps[i].end) {
                    ops.entry((step, device)).or_default().push(interval);
                }
            }
        }
        assert!(!ops.is_empty(), "{rel}");
        // Every step has a row: with its ops' device, else its own.
        let mut want = BTreeMap::new();
        for (i, s) in steps.iter().enumerate() {
            let mine: Vec<_> = ops.iter().filter(|((step, _), _)| *step == i).collect();
            if mine.is_empty() {
                want.insert(
                    (s.start, s.device.clone()),
                    (s.name.clone(), 0, 0, s.end - s.start),
                );
            }
            for ((_, device), intervals) in mine {
                let busy = union_sweep_len(&mut intervals.clone());
                let idle = (s.end - s.start - busy).max(0);
                want.insert(
                    (s.start, device.clone()),
                    (s.name.clone(), intervals.len() as i64, busy, idle),
                );
            }
        }
        let rows = query_rows(
            &[fixture(rel)],
            "SELECT s.start_ps, d.name AS device, s.step_name, s.ops, s.busy_ps, s.idle_ps \
             FROM step_stats s JOIN devices d USING (trace_id, device_id)",
        )
        .await;
        let got: BTreeMap<(i64, String), (String, i64, i64, i64)> = rows
            .iter()
            .map(|r| {
                (
                    (i(r, "start_ps"), r["device"].as_str().unwrap().to_string()),
                    (
                        r["step_name"].as_str().unwrap().to_string(),
                        i(r, "ops"),
                        i(r, "busy_ps"),
                        i(r, "idle_ps"),
                    ),
                )
            })
            .collect();
        assert_eq!(got, want, "{rel}");
    }
}

/// `event_steps`' step columns besides the name: each step's root
/// (`step_root_event_id`) is an event carrying the `_r` stat, and the
/// steps are numbered (`step_group_id`) from 0 in the order their roots
/// start, named after the root and its `iter_num` or `step_num`; all
/// recomputed from the raw file's root events.
#[tokio::test]
async fn event_steps_roots_and_numbers_are_the_raw_roots() {
    for rel in [
        "xspace/jax_cpu_nested_4steps.xplane.pb",
        "xspace/jax_cpu_mlp_5steps_w128.xplane.pb",
        "gpu/jax_gpu.xplane.pb",
    ] {
        let space = space(rel);
        let mut roots: Vec<(i64, String, String)> = Vec::new();
        for plane in &space.planes {
            for l in &plane.lines {
                for ev in &l.events {
                    if int_stat(plane, ev, "_r").is_none() {
                        continue;
                    }
                    let name = plane.event_metadata[&ev.metadata_id].name.clone();
                    let n = int_stat(plane, ev, "iter_num")
                        .or_else(|| int_stat(plane, ev, "step_num"))
                        .expect("a step number");
                    roots.push((span_ps(l, ev).0, name.clone(), format!("{name} {n}")));
                }
            }
        }
        roots.sort();
        assert!(roots.len() >= 4, "{rel}");
        let rows = query_rows(
            &[fixture(rel)],
            "SELECT DISTINCT s.step_group_id, s.step_name, e.name, e.ts_ps \
             FROM event_steps s JOIN events e ON e.trace_id = s.trace_id \
             AND e.event_id = s.step_root_event_id ORDER BY s.step_group_id",
        )
        .await;
        let got: Vec<(i64, i64, String, String)> = rows
            .iter()
            .map(|r| {
                (
                    i(r, "step_group_id"),
                    i(r, "ts_ps"),
                    r["name"].as_str().unwrap().to_string(),
                    r["step_name"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let want: Vec<(i64, i64, String, String)> = roots
            .into_iter()
            .enumerate()
            .map(|(g, (ts, name, step))| (g as i64, ts, name, step))
            .collect();
        assert_eq!(got, want, "{rel}");
    }
}
