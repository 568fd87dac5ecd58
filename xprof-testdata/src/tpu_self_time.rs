//! A synthetic TPU plane that tells XProf's TPU self-time rule from
//! nesting on raw times: ops whose `device_offset_ps`/`device_duration_ps`
//! nest differently than their raw offsets, an async copy on the `Async
//! XLA Ops` line over a fusion, a copy-done on `XLA Ops` with an async
//! event inside it, and partly overlapping ops. The rule and the cases are
//! in tests/fixtures/tpu/expected/NOTES.md; XProf 2.24.2's hlo_stats on the
//! file is `tests/fixtures/tpu/expected/synthetic_self_time.tool.hlo_stats.json`.

use crate::xspace_proto::{XSpace, x_stat};

use crate::plane::{event, line, task_environment, tensor_core_plane};

/// One µs in ps.
const US: i64 = 1_000_000;

/// An op of the plane: HLO name, category, raw start and duration, and the
/// device start and duration where they differ from the raw ones.
struct Op {
    name: &'static str,
    category: &'static str,
    start_ps: i64,
    dur_ps: i64,
    device: Option<(i64, i64)>,
}

const fn op(name: &'static str, category: &'static str, start_us: i64, dur_us: i64) -> Op {
    Op {
        name,
        category,
        start_ps: start_us * US,
        dur_ps: dur_us * US,
        device: None,
    }
}

/// The `XLA Ops` line, in wire order. Every op's self time differs from
/// every other's, by XProf's rule and by raw nesting alike, so queries
/// that rank ops (XProf's top-10 by self time) have one answer.
fn xla_ops() -> Vec<Op> {
    vec![
        // Plain nesting: while.1 [0,100) holds fusion.a [10,31), fusion.b [40,52).
        op("while.1", "while", 0, 100),
        op("fusion.a", "loop fusion", 10, 21),
        op("fusion.b", "loop fusion", 40, 12),
        // A fusion under copy-done.4 of the `Async XLA Ops` line: no nesting
        // across lines.
        op("fusion.c", "loop fusion", 250, 53),
        // copy-done.5 on `XLA Ops` with an async event inside its span.
        op("copy-done.5", "copy-done", 500, 105),
        // Partial overlap: p2 closes p1, p3 is p2's child.
        op("fusion.p1", "loop fusion", 700, 101),
        op("fusion.p2", "loop fusion", 750, 99),
        op("fusion.p3", "loop fusion", 760, 11),
        // Inside by raw times, not by device times (its device end is
        // 1.25 ns late): XProf gives copy-done.6 its whole time as self.
        op("copy-done.6", "copy-done", 1000, 102),
        Op {
            device: Some((1052 * US, 50 * US + 1250)),
            ..op("fusion.d", "loop fusion", 1052, 50)
        },
        // Inside by device times, not by raw ones (raw end 78 ps late).
        op("fusion.e", "loop fusion", 1200, 97),
        Op {
            dur_ps: 49 * US + 78,
            device: Some((1248 * US, 49 * US)),
            ..op("fusion.f", "loop fusion", 1248, 49)
        },
    ]
}

/// The `Async XLA Ops` line.
fn async_ops() -> Vec<Op> {
    vec![
        op("copy-done.4", "copy-done", 200, 200),
        op("all-gather-done.1", "all-gather", 520, 20),
        op("copy-done.7", "copy-done", 1600, 100),
        op("copy-done.8", "copy-done", 1620, 20),
    ]
}

/// The profile: one `/device:TPU:0` plane (program 42, one 2000 µs step)
/// and the `Task Environment` plane.
pub fn tpu_self_time_space() -> XSpace {
    let mut p = tensor_core_plane(10, 0);
    let span_ps = 2000 * US;
    let group = p.stat("group_id", x_stat::Value::Int64Value(0));
    let step_md = p.event_metadata("0", "", vec![]);
    let step_num = p.stat("step_num", x_stat::Value::Int64Value(0));
    p.line(line(
        1,
        "Steps",
        0,
        vec![event(step_md, 0, span_ps, vec![step_num, group.clone()])],
    ));
    let program = p.stat("program_id", x_stat::Value::Int64Value(42));
    let module_md = p.event_metadata("jit_case(42)", "jit_case", vec![program]);
    p.line(line(
        2,
        "XLA Modules",
        0,
        vec![event(module_md, 0, span_ps, vec![group.clone()])],
    ));
    let mut symbol = 0;
    for (line_id, line_name, ops) in [(3, "XLA Ops", xla_ops()), (4, "Async XLA Ops", async_ops())]
    {
        let mut events = Vec::new();
        for o in ops {
            symbol += 1;
            let stats = vec![
                p.stat("hlo_category", x_stat::Value::StrValue(o.category.into())),
                p.stat("flops", x_stat::Value::Int64Value(1000)),
                p.stat("bytes_accessed", x_stat::Value::Int64Value(4096)),
                p.stat("program_id", x_stat::Value::Int64Value(42)),
                p.stat("symbol_id", x_stat::Value::Int64Value(symbol)),
                p.stat(
                    "tf_op",
                    x_stat::Value::StrValue(format!("jit(case)/{}", o.name)),
                ),
                p.stat("hlo_module", x_stat::Value::StrValue("jit_case".into())),
                p.stat(
                    "source",
                    x_stat::Value::StrValue(format!("case.py:{}", 10 + symbol)),
                ),
            ];
            let expression = format!("%{} = f32[128]{{0}} {}(f32[128] %p)", o.name, o.category);
            let md = p.event_metadata(&expression, o.name, stats);
            let (device_start, device_dur) = o.device.unwrap_or((o.start_ps, o.dur_ps));
            let stats = vec![
                p.stat("device_offset_ps", x_stat::Value::Int64Value(device_start)),
                p.stat("device_duration_ps", x_stat::Value::Int64Value(device_dur)),
                group.clone(),
            ];
            events.push(event(md, o.start_ps, o.dur_ps, stats));
        }
        p.line(line(line_id, line_name, 0, events));
    }
    XSpace {
        planes: vec![p.finish(), task_environment()],
        hostnames: vec!["synthetic-self-time".into()],
        ..Default::default()
    }
}
