//! Derived columns (nesting, self time, containing step/module, promoted
//! stats, flows, counters) and odd-but-valid input, on synthetic XSpace
//! files built with the documented names (no real TPU/GPU capture has
//! these lines; the inputs here are synthetic).

use crate::common;

use common::*;
use prost::Message;
use xprof_sql::convert::reader::ConvertOptions;
use xprof_sql::format::Table;
use xprof_testdata::xspace_proto::*;
use xprof_testdata::*;

fn opts(batch_rows: usize) -> ConvertOptions {
    ConvertOptions {
        batch_rows,
        ..Default::default()
    }
}

#[test]
fn tpu_ops_get_their_step_module_and_cost_model() {
    let spec = TpuSpec {
        devices: 2,
        steps: 3,
        ops_per_step: 5,
    };
    let (sink, _) = convert_bytes(&tpu_space(&spec).encode_to_vec(), &opts(1 << 16));
    let ev = table(&sink, Table::Events);
    let tracks = table(&sink, Table::Tracks);
    let track_kind: std::collections::BTreeMap<i64, String> = i64s(&tracks, "track_id")
        .into_iter()
        .map(Option::unwrap)
        .zip(strings(&tracks, "kind"))
        .collect();
    let ids = i64s(&ev, "event_id");
    let kinds: Vec<String> = i64s(&ev, "track_id")
        .iter()
        .map(|t| track_kind[&t.unwrap()].clone())
        .collect();
    let ts = i64s(&ev, "ts_ps");
    let dur = i64s(&ev, "dur_ps");
    let step = i64s(&ev, "step_event_id");
    let module = i64s(&ev, "module_event_id");
    let device_of: std::collections::BTreeMap<i64, i64> = i64s(&tracks, "track_id")
        .into_iter()
        .map(Option::unwrap)
        .zip(i64s(&tracks, "device_id").into_iter().map(Option::unwrap))
        .collect();
    let dev: Vec<i64> = i64s(&ev, "track_id")
        .iter()
        .map(|t| device_of[&t.unwrap()])
        .collect();
    let pos = |id: i64| ids.iter().position(|x| *x == Some(id)).unwrap();
    let mut ops = 0;
    for i in 0..ev.num_rows() {
        if kinds[i] != "xla_ops" {
            continue;
        }
        ops += 1;
        let (s, m) = (
            pos(step[i].expect("op in a step")),
            pos(module[i].expect("op in a module")),
        );
        assert_eq!(kinds[s], "steps");
        assert_eq!(kinds[m], "xla_modules");
        assert_eq!(dev[s], dev[i], "containers come from the same plane");
        for c in [s, m] {
            assert!(
                ts[c] <= ts[i]
                    && ts[i].unwrap() + dur[i].unwrap() <= ts[c].unwrap() + dur[c].unwrap()
            );
        }
    }
    assert_eq!(ops, spec.devices * spec.steps * spec.ops_per_step);
    // Cost model promoted from the metadata, device timing from the event.
    let cat = strings(&ev, "hlo_category");
    let flops = i64s(&ev, "flops");
    let doff = i64s(&ev, "device_offset_ps");
    let disp = strings(&ev, "display_name");
    let i = (0..ev.num_rows())
        .find(|i| kinds[*i] == "xla_ops" && disp[*i] == "fusion.1")
        .unwrap();
    assert_eq!(cat[i], "data formatting");
    assert_eq!(flops[i], Some(2_000_000));
    assert_eq!(
        doff[i],
        Some(ts[i].unwrap() - 1_000_000 + 100),
        "raw device_offset_ps kept (line starts at 1000 ns)"
    );
    // hlo_ops: the ref_value shape resolved to its string.
    let ops_t = table(&sink, Table::HloOps);
    assert!(
        strings(&ops_t, "shape")
            .iter()
            .any(|s| s == "f32[128,256]{1,0}")
    );
    assert!(
        strings(&ops_t, "expression")
            .iter()
            .any(|s| s.starts_with("%fusion.0 = "))
    );
    // Counters from counter_value.
    let counters = table(&sink, Table::Counters);
    assert_eq!(counters.num_rows(), spec.devices * spec.steps);
    assert_eq!(strings(&counters, "name")[0], "HBM bandwidth");
}

#[test]
fn flows_link_host_launches_to_device_modules() {
    let spec = TpuSpec {
        devices: 2,
        steps: 3,
        ops_per_step: 2,
    };
    let (sink, _) = convert_bytes(&tpu_space(&spec).encode_to_vec(), &opts(1 << 16));
    let flows = table(&sink, Table::Flows);
    let ev = table(&sink, Table::Events);
    let names: std::collections::BTreeMap<i64, String> = i64s(&ev, "event_id")
        .into_iter()
        .map(Option::unwrap)
        .zip(strings(&ev, "name"))
        .collect();
    assert_eq!(flows.num_rows(), spec.devices * spec.steps);
    for (src, dst) in i64s(&flows, "src_event_id")
        .into_iter()
        .zip(i64s(&flows, "dst_event_id"))
    {
        assert_eq!(names[&src.unwrap()], "TpuExecuteOp");
        assert_eq!(names[&dst.unwrap()], "jit_train_step(42)");
    }
}

#[test]
fn gpu_kernels_are_linked_to_their_launch_by_correlation_id() {
    let spec = GpuSpec {
        devices: 2,
        kernels: 10,
        streams: 3,
    };
    let (sink, _) = convert_bytes(&gpu_space(&spec).encode_to_vec(), &opts(1 << 16));
    let flows = table(&sink, Table::Flows);
    assert_eq!(flows.num_rows(), 20);
    assert!(
        strings(&flows, "kind")
            .iter()
            .all(|k| k == "correlation_id")
    );
    assert!(i64s(&flows, "src_event_id").iter().all(Option::is_some));
    let devices = table(&sink, Table::Devices);
    assert_eq!(
        strings(&devices, "kind"),
        ["host_other", "gpu", "gpu", "task_environment"]
    );
    assert_eq!(strings(&devices, "vendor")[1], "Nvidia");
    let tracks = table(&sink, Table::Tracks);
    assert_eq!(
        strings(&tracks, "kind")
            .iter()
            .filter(|k| *k == "stream")
            .count(),
        6
    );
}

/// One parent holding `n` children, then a sibling: the parent's self time
/// must be right whatever the batch size (it stays open across batches).
fn long_parent_space(n: i64) -> Vec<u8> {
    let mut p = PlaneBuilder::new(1, "/host:CPU");
    let parent = p.event_metadata("parent", "", vec![]);
    let child = p.event_metadata("child", "", vec![]);
    let mut events = vec![event(parent, 0, 10 * n + 10, vec![])];
    for i in 0..n {
        events.push(event(child, 10 * i, 5, vec![]));
        if i % 100 == 0 {
            // A grandchild now and then.
            events.push(event(child, 10 * i + 1, 1, vec![]));
        }
    }
    events.push(event(parent, 10 * n + 20, 7, vec![]));
    p.line(line(1, "main", 0, events));
    XSpace {
        planes: vec![p.finish()],
        ..Default::default()
    }
    .encode_to_vec()
}

fn nesting(sink: &xprof_sql::convert::sink::MemorySink) -> Vec<(i64, i64, Option<i64>, i64)> {
    let ev = table(sink, Table::Events);
    let mut rows: Vec<_> = i64s(&ev, "event_id")
        .into_iter()
        .zip(i64s(&ev, "depth"))
        .zip(i64s(&ev, "parent_id"))
        .zip(i64s(&ev, "self_ps"))
        .map(|(((e, d), p), s)| (e.unwrap(), d.unwrap(), p, s.unwrap()))
        .collect();
    rows.sort();
    rows
}

#[test]
fn self_time_is_right_across_batch_boundaries() {
    let n = 10_000; // more than LONG_OPEN_EVENTS: the parent's self time comes from the first pass
    let bytes = long_parent_space(n);
    let (big, _) = convert_bytes(&bytes, &opts(1 << 20));
    let mut small = xprof_sql::convert::sink::MemorySink::keeping_batches();
    xprof_sql::convert::xspace::convert(&bytes, &common::source(0), &opts(7), &mut small)
        .expect("converts");
    let a = nesting(&big);
    assert_eq!(a, nesting(&small));
    let children_ps = n * 5;
    assert_eq!(a[0], (0, 0, None, 10 * n + 10 - children_ps));
    assert_eq!(
        a[1],
        (1, 1, Some(0), 4),
        "first child holds a 1 ps grandchild"
    );
    assert_eq!(a[2], (2, 2, Some(1), 1));
    assert_eq!(a.last().unwrap(), &(a.len() as i64 - 1, 0, None, 7));
    assert!(
        table(&small, Table::Events).num_rows() as i64 > 7,
        "many batches"
    );
    assert!(small.tables[&Table::Events].len() > 100);
}

#[test]
fn out_of_order_and_split_lines_are_sorted_and_merged() {
    let mut p = PlaneBuilder::new(1, "/host:CPU");
    let a = p.event_metadata("a", "", vec![]);
    // Line 1 out of order; line 2 split into two chunks with the same id.
    p.line(line(
        1,
        "t1",
        0,
        vec![
            event(a, 50, 10, vec![]),
            event(a, 0, 100, vec![]),
            event(a, 10, 5, vec![]),
        ],
    ));
    p.line(line(2, "t2", 0, vec![event(a, 0, 10, vec![])]));
    p.line(line(2, "t2", 1, vec![event(a, 0, 10, vec![])]));
    let bytes = XSpace {
        planes: vec![p.finish()],
        ..Default::default()
    }
    .encode_to_vec();
    let (sink, summary) = convert_bytes(&bytes, &opts(1 << 16));
    assert_eq!(summary.warnings.len(), 2, "{:?}", summary.warnings);
    let tracks = table(&sink, Table::Tracks);
    assert_eq!(tracks.num_rows(), 2);
    assert_eq!(i64s(&tracks, "event_count"), [Some(3), Some(2)]);
    let ev = table(&sink, Table::Events);
    // Sorted by (track, ts) in the output, and numbered in that order.
    assert_eq!(i64s(&ev, "ts_ps"), [0, 10, 50, 0, 1000].map(Some));
    assert_eq!(i64s(&ev, "event_id"), [0, 1, 2, 3, 4].map(Some));
    assert_eq!(i64s(&ev, "parent_id"), [None, Some(0), Some(0), None, None]);
    assert_eq!(i64s(&ev, "self_ps"), [85, 5, 10, 10, 10].map(Some));
    let traces = table(&sink, Table::Traces);
    assert!(strings(&traces, "converter_warnings")[0].contains("out of time order"));
}

#[test]
fn aggregated_events_keep_their_count_and_self_time() {
    let mut p = PlaneBuilder::new(1, "/device:TPU:0");
    let op = p.event_metadata("fusion", "", vec![]);
    let self_stat = p.stat("self_duration_ps", x_stat::Value::Int64Value(700));
    let e = XEvent {
        metadata_id: op,
        data: Some(x_event::Data::NumOccurrences(5)),
        duration_ps: 1000,
        stats: vec![self_stat],
    };
    let zero = XEvent {
        metadata_id: op,
        data: Some(x_event::Data::NumOccurrences(0)),
        duration_ps: 3,
        stats: vec![],
    };
    p.line(line(1, "XLA Ops", 0, vec![e, zero]));
    let bytes = XSpace {
        planes: vec![p.finish()],
        ..Default::default()
    }
    .encode_to_vec();
    let (sink, _) = convert_bytes(&bytes, &opts(1 << 16));
    let ev = table(&sink, Table::Events);
    assert_eq!(
        i64s(&ev, "occurrences"),
        [Some(5), Some(1)],
        "a count below 1 counts as 1"
    );
    assert_eq!(i64s(&ev, "self_ps"), [Some(700), Some(3)]);
    assert_eq!(i64s(&ev, "depth"), [Some(0), Some(0)]);
}

#[test]
fn unknown_ids_and_compressed_strings_are_data() {
    use std::io::Write;
    let mut p = PlaneBuilder::new(1, "/host:CPU");
    let a = p.event_metadata("a", "", vec![]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all("big text".as_bytes()).unwrap();
    let compressed = p.stat(
        "long_name",
        x_stat::Value::CompressedStrValue(gz.finish().unwrap()),
    );
    let unknown = XStat {
        metadata_id: 999,
        value: Some(x_stat::Value::Int64Value(1)),
    };
    let bad_ref = p.stat("shape", x_stat::Value::RefValue(12345));
    p.line(line(
        1,
        "t",
        0,
        vec![
            event(a, 0, 10, vec![compressed, unknown, bad_ref]),
            event(77, 20, 1, vec![]),
        ],
    ));
    let bytes = XSpace {
        planes: vec![p.finish()],
        ..Default::default()
    }
    .encode_to_vec();
    let (sink, summary) = convert_bytes(&bytes, &opts(1 << 16));
    assert_eq!(summary.warnings.len(), 2, "{:?}", summary.warnings);
    let args = table(&sink, Table::EventArgs);
    assert_eq!(strings(&args, "key"), ["long_name", "#999", "shape"]);
    assert_eq!(strings(&args, "str_value"), ["big text", "NULL", "NULL"]);
    assert_eq!(
        strings(&args, "value_type"),
        ["compressed_str", "int", "ref"]
    );
    assert_eq!(i64s(&args, "uint_value")[2], Some(12345));
    let ev = table(&sink, Table::Events);
    assert_eq!(strings(&ev, "name"), ["a", ""]);
}

#[test]
fn epoch_timestamps_are_shifted_to_the_profile_start() {
    let mut space = tpu_space(&TpuSpec {
        devices: 1,
        steps: 1,
        ops_per_step: 1,
    });
    for p in &mut space.planes {
        for l in &mut p.lines {
            l.timestamp_ns += PROFILE_START_NS;
        }
    }
    let (sink, _) = convert_bytes(&space.encode_to_vec(), &opts(1 << 16));
    let ev = table(&sink, Table::Events);
    assert_eq!(i64s(&ev, "ts_ps").iter().flatten().min(), Some(&1_000_000));
    let traces = table(&sink, Table::Traces);
    assert_eq!(i64s(&traces, "start_unix_ns"), [Some(PROFILE_START_NS)]);
}

#[test]
fn llo_lanes_get_their_kernel_unit_and_come_after_their_containers() {
    // Synthetic TPU plane with the documented LLO line names
    // (shared/formats/tpu-llo.md); no real LLO capture is at hand. The
    // lanes come before `XLA Ops` and `Steps` in the file on purpose: the
    // converter emits container tracks first.
    let mut p = PlaneBuilder::new(1, "/device:TPU:0");
    let k = p.event_metadata("fusion.1", "", vec![]);
    let step = p.event_metadata("1", "", vec![]);
    let add = p.event_metadata("vadd", "", vec![]);
    let mul = p.event_metadata("vmatmul", "", vec![]);
    let region = p.event_metadata("region0", "", vec![]);
    // Two kernels [0, 100) and [200, 300); one instruction outside both.
    p.line(line(
        5,
        "VALU Instructions",
        0,
        vec![
            event(add, 10, 2, vec![]),
            event(add, 150, 2, vec![]),
            event(add, 250, 2, vec![]),
        ],
    ));
    p.line(line(
        6,
        "MXU0 Instructions",
        0,
        vec![event(mul, 20, 30, vec![])],
    ));
    p.line(line(7, "LLO Ops", 0, vec![event(region, 200, 50, vec![])]));
    p.line(line(
        2,
        "XLA Ops",
        0,
        vec![event(k, 0, 100, vec![]), event(k, 200, 100, vec![])],
    ));
    p.line(line(1, "Steps", 0, vec![event(step, 0, 400, vec![])]));
    let bytes = XSpace {
        planes: vec![p.finish()],
        ..Default::default()
    }
    .encode_to_vec();
    let (sink, _) = convert_bytes(&bytes, &opts(1 << 16));
    let tracks = table(&sink, Table::Tracks);
    // Containers first (Steps, XLA Ops), then the rest in file order.
    assert_eq!(
        strings(&tracks, "name"),
        [
            "Steps",
            "XLA Ops",
            "VALU Instructions",
            "MXU0 Instructions",
            "LLO Ops"
        ]
    );
    assert_eq!(
        strings(&tracks, "kind"),
        ["steps", "xla_ops", "llo_unit", "llo_unit", "llo_ops"]
    );
    assert_eq!(
        strings(&tracks, "unit"),
        ["NULL", "NULL", "VALU", "MXU0", "NULL"]
    );
    let ev = table(&sink, Table::Events);
    let ids = i64s(&ev, "event_id");
    let names = strings(&ev, "name");
    let ts = i64s(&ev, "ts_ps");
    let kernel = i64s(&ev, "kernel_event_id");
    let step_of = i64s(&ev, "step_event_id");
    let id_of = |name: &str, t: i64| {
        (0..ev.num_rows())
            .find(|i| names[*i] == name && ts[*i] == Some(t))
            .map(|i| ids[i])
            .unwrap()
    };
    let (k0, k1, s0) = (id_of("fusion.1", 0), id_of("fusion.1", 200), id_of("1", 0));
    for i in 0..ev.num_rows() {
        let expected = match (names[i].as_str(), ts[i].unwrap()) {
            ("vadd", 10) | ("vmatmul", 20) => k0,
            ("vadd", 250) | ("region0", 200) => k1,
            _ => None,
        };
        assert_eq!(kernel[i], expected, "{} at {:?}", names[i], ts[i]);
        if names[i] != "1" {
            assert_eq!(step_of[i], s0, "{} is in the step", names[i]);
        }
    }
    // Event ids follow (track_id, ts_ps).
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

/// One event on one line of one plane: one `events` row (the example of
/// `xprof_convert::xspace::convert` once, before its generator moved out
/// of that crate).
#[test]
fn one_event_xspace_converts_to_one_event() {
    use xprof_sql::convert::reader::TraceSource;
    use xprof_sql::convert::sink::MemorySink;
    use xprof_sql::convert::xspace::convert;

    let mut plane = XPlane {
        id: 1,
        name: "/host:CPU".into(),
        ..Default::default()
    };
    plane.event_metadata.insert(
        1,
        XEventMetadata {
            id: 1,
            name: "step".into(),
            ..Default::default()
        },
    );
    plane.lines.push(XLine {
        id: 1,
        name: "main".into(),
        timestamp_ns: 10,
        events: vec![XEvent {
            metadata_id: 1,
            data: Some(x_event::Data::OffsetPs(5)),
            duration_ps: 100,
            stats: vec![],
        }],
        ..Default::default()
    });
    let bytes = XSpace {
        planes: vec![plane],
        ..Default::default()
    }
    .encode_to_vec();
    let src = TraceSource {
        trace_id: 0,
        path: "mem.xplane.pb".into(),
        run: None,
        host: "mem".into(),
    };
    let mut sink = MemorySink::default();
    let summary = convert(&bytes, &src, &ConvertOptions::default(), &mut sink).unwrap();
    assert_eq!(summary.events, 1);
    assert_eq!(sink.rows(Table::Events), 1);
}
