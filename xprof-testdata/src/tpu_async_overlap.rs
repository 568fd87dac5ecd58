//! A synthetic TPU profile for XProf's `analyze_async_overlap`: async
//! windows from start/done pairs (`copy-start`/`copy-done`, `-start.N`,
//! `.N-start`, `send`/`recv`) and from an `Async XLA Ops` line, windows
//! hidden, partial and exposed (two exactly at XProf's 0.9 and 0.1
//! thresholds), a done and a start without their pair, a window of no
//! length, and a chip whose TensorCore and two SparseCores run at once.
//! The rules are in tests/fixtures/tpu/expected/NOTES.md; XProf 2.24.2's
//! answer is `tests/fixtures/tpu/expected/synthetic_async_overlap.async_overlap.json`.

use crate::xspace_proto::{XEvent, XSpace};

use crate::plane::{PlaneBuilder, event, line, task_environment};

/// One ns and one µs in ps.
const NS: i64 = 1000;
const US: i64 = 1_000_000;

/// Events of one line: (instruction, ps start, ps duration). Names with
/// `=` are written as XLA writes them on op lines: the metadata name is
/// the HLO text (`%name = ...`), the display name the instruction.
type Ops = &'static [(&'static str, i64, i64)];

const TC0_OPS: Ops = &[
    (
        "%fusion.0 = f32[128,256]{1,0} fusion(f32[128,256] %p.0), kind=kLoop",
        0,
        US,
    ),
    (
        "%copy-start.1 = (f32[8], u32[]) copy-start(f32[8] %p.1)",
        US,
        100 * NS,
    ),
    (
        "%fusion.1 = f32[128,256]{1,0} fusion(f32[128,256] %p.2), kind=kLoop",
        1100 * NS,
        4 * US,
    ),
    (
        "%convolution.2 = f32[128,256]{1,0} convolution(f32[128,256] %p.3, f32[256,256] %p.4)",
        5100 * NS,
        900 * NS,
    ),
    // copy-start.1 .. copy-done.1: 5.1 µs, 4.9 µs covered: hidden.
    (
        "%copy-done.1 = f32[8] copy-done((f32[8], u32[]) %copy-start.1)",
        6 * US,
        100 * NS,
    ),
    ("all-reduce-start.3", 6100 * NS, 100 * NS),
    ("fusion.2", 6200 * NS, US),
    // 3.2 µs, 1 µs covered: partial.
    ("all-reduce-done.3", 9200 * NS, 100 * NS),
    ("all-gather.4-start", 9300 * NS, 100 * NS),
    // 3.2 µs, nothing covered: exposed.
    ("all-gather.4-done", 12400 * NS, 100 * NS),
    ("send.5", 12500 * NS, 100 * NS),
    ("fusion.3", 12600 * NS, 100 * NS),
    // 1 µs, 0.1 covered: exactly 0.1, exposed.
    ("send-done.5", 13400 * NS, 100 * NS),
    ("recv.6", 13500 * NS, 50 * NS),
    ("fusion.4", 13550 * NS, 900 * NS),
    // 1 µs, 0.9 covered: exactly 0.9, hidden.
    ("recv-done.6", 14450 * NS, 50 * NS),
    // A done without its start and a start without its done.
    ("copy-done.9", 15 * US, 10 * NS),
    ("collective-permute-start.7", 15100 * NS, 10 * NS),
    // Op family `call`.
    ("fusion.7.call-start", 15200 * NS, 10 * NS),
    ("fusion.5", 15210 * NS, 200 * NS),
    ("fusion.7.call-done", 15410 * NS, 10 * NS),
];

const SC0_OPS: Ops = &[
    ("sc-fusion.0", 500 * NS, 2 * US),
    ("sc-fusion.1", 8 * US, 2 * US),
    ("all-to-all-start.8", 10 * US, 100 * NS),
    ("sc-fusion.2", 10100 * NS, 500 * NS),
    // 1.1 µs, 0.5 covered: partial.
    ("all-to-all-done.8", 11 * US, 100 * NS),
];

const SC1_OPS: Ops = &[("sc-fusion.3", 6 * US, US)];

/// TPU:1 has an `Async XLA Ops` line: its events are the windows.
const TC1_ASYNC: Ops = &[
    (
        "%all-reduce-start.2 = f32[128] all-reduce-start(f32[128] %p.9)",
        0,
        2 * US,
    ),
    (
        "%copy-start.11 = (f32[8], u32[]) copy-start(f32[8] %p.10)",
        3100 * NS,
        US,
    ),
    // No length: no window.
    ("copy-start.12", 4500 * NS, 0),
];

const TC1_OPS: Ops = &[
    ("all-reduce-start.2", 0, 100 * NS),
    ("fusion.10", 100 * NS, 900 * NS),
    ("all-reduce-done.2", 1900 * NS, 100 * NS),
    // Straddle copy-start.11's window at both ends.
    ("fusion.11", 2900 * NS, 500 * NS),
    ("fusion.12", 3900 * NS, 700 * NS),
];

fn events(p: &mut PlaneBuilder, ops: Ops) -> Vec<XEvent> {
    ops.iter()
        .map(|&(name, start_ps, dur_ps)| {
            let display = match name.split_once(" = ") {
                Some((lhs, _)) => lhs.trim_start_matches('%'),
                None => "",
            };
            let md = p.event_metadata(name, display, vec![]);
            event(md, start_ps, dur_ps, vec![])
        })
        .collect()
}

/// The profile: TPU:0 with two SparseCores (start/done pairs), TPU:1 with
/// an `Async XLA Ops` line, and the `Task Environment` plane; every line
/// starts at 1000 ns.
pub fn tpu_async_overlap_space() -> XSpace {
    let mut planes = Vec::new();
    for (id, name, lines) in [
        (10, "/device:TPU:0", vec![(3, "XLA Ops", TC0_OPS)]),
        (
            20,
            "/device:TPU:0 SparseCore 0",
            vec![(3, "Sparse Core Ops", SC0_OPS)],
        ),
        (
            21,
            "/device:TPU:0 SparseCore 1",
            vec![(3, "Sparse Core Ops", SC1_OPS)],
        ),
        (
            11,
            "/device:TPU:1",
            vec![(3, "XLA Ops", TC1_OPS), (4, "Async XLA Ops", TC1_ASYNC)],
        ),
    ] {
        let mut p = PlaneBuilder::new(id, name);
        for (line_id, line_name, ops) in lines {
            let evs = events(&mut p, ops);
            p.line(line(line_id, line_name, 1000, evs));
        }
        planes.push(p.finish());
    }
    planes.push(task_environment());
    XSpace {
        planes,
        hostnames: vec!["synthetic-async".into()],
        ..Default::default()
    }
}
