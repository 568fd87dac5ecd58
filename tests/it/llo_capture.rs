//! TPU kernel-profiling captures: region markers, TraceMe stages, static
//! `_counters_`, and the `llo_proto` programs, joined in SQL.
//!
//! The input is synthetic, shaped after the real capture's facts
//! (`../shared/formats/tpu_kernel_profiling_capture.md`): a real capture
//! cannot be shared. `xprof_testdata::llo_capture` writes it
//! and describes what it wrote (`CaptureTruth`); every table and view is
//! checked against values computed here from that description, and the
//! static tables against XProf 2.24.2's own decoding of the same payloads
//! (tests/fixtures/tpu/expected/synthetic_capture.*, made as
//! tests/fixtures/tpu/README.md says).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use common::*;
use serde_json::Value;
use xprof_testdata::llo_capture::{
    CaptureSpec, CaptureTruth, HLO_OP, MODULE, PROGRAM_ID, REGION_MARKER_BASE, capture_space_bytes,
};

const FIXTURE: &str = "tpu/synthetic_capture.xplane.pb";

fn truth() -> CaptureTruth {
    capture_space_bytes(&CaptureSpec::default()).1
}

fn rows(sql: &str) -> Vec<Row> {
    tokio_run(query_rows(&[fixture(FIXTURE)], sql))
}

fn oi(r: &Row, k: &str) -> Option<i64> {
    r.get(k)
        .map(|v| v.as_i64().unwrap_or_else(|| panic!("{k} in {r:?}")))
}

fn f(r: &Row, k: &str) -> f64 {
    r.get(k)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
}

fn expected(name: &str) -> Value {
    let v = expected_raw(name);
    assert_eq!(v["status"], "OK", "{name}: {v}");
    v["data"].clone()
}

#[test]
fn the_fixture_is_the_generators_output() {
    let (bytes, _) = capture_space_bytes(&CaptureSpec::default());
    assert_generated_fixture(
        FIXTURE,
        &bytes,
        "capture_space_bytes(&CaptureSpec::default())",
        "tests/fixtures/tpu/README.md",
    );
}

/// The marker line is its own kind, every marker is a row of
/// `llo_region_entries` with its kernel, region, address and the time to
/// the next marker of its execution (or the kernel's end).
#[test]
fn region_entries_are_the_markers_timed_to_the_next_one() {
    let t = truth();
    let kinds =
        rows("SELECT kind, count(*) AS n FROM tracks WHERE name = 'Tensor Core' GROUP BY kind");
    assert_eq!(kinds.len(), 1);
    assert_eq!(s(&kinds[0], "kind"), "llo_region_markers");
    let got = rows(
        "SELECT e.*, k.ts_ps AS kernel_ts_ps FROM llo_region_entries e \
         JOIN events k ON k.trace_id = e.trace_id AND k.event_id = e.kernel_event_id \
         ORDER BY e.ts_ps",
    );
    assert_eq!(got.len(), t.markers.len());
    for (n, (r, m)) in got.iter().zip(&t.markers).enumerate() {
        let kernel = &t.kernels[m.execution];
        assert_eq!(i(r, "kernel_ts_ps"), kernel.offset_ps, "marker {n}");
        assert_eq!(s(r, "hlo_op"), HLO_OP);
        assert_eq!(s(r, "hlo_module"), MODULE);
        assert_eq!(r["program_id"].as_u64(), Some(PROGRAM_ID));
        assert_eq!(i(r, "region_id"), m.region_id as i64, "marker {n}");
        assert_eq!(
            i(r, "instrumentation_id"),
            (REGION_MARKER_BASE + m.region_id as u64) as i64
        );
        assert_eq!(i(r, "address"), m.address, "marker {n}");
        assert_eq!(i(r, "ts_ps"), m.offset_ps, "marker {n}");
        // The next marker of the same execution, else the kernel's end.
        let next = t
            .markers
            .get(n + 1)
            .filter(|x| x.execution == m.execution)
            .map_or(kernel.offset_ps + kernel.duration_ps, |x| x.offset_ps);
        assert_eq!(i(r, "dur_ps"), next - m.offset_ps, "marker {n}");
        let first = t
            .markers
            .iter()
            .position(|x| x.execution == m.execution)
            .unwrap();
        assert_eq!(i(r, "entry") as usize, n - first);
        assert_eq!(i(r, "kernel_bundle"), m.address - t.markers[first].address);
    }
}

/// TraceMe stages and scopes are `kernel_scopes` rows of their kernel,
/// `init`/`acc` nested in `ep_run_kernel`.
#[test]
fn traceme_stages_are_kernel_scopes_of_their_kernel() {
    let t = truth();
    let got = rows(
        "SELECT s.scope, s.start_ps, s.dur_ps, k.ts_ps AS kernel_ts_ps, e.depth, \
                p.name AS parent \
         FROM kernel_scopes s \
         JOIN events e ON e.trace_id = s.trace_id AND e.event_id = s.event_id \
         JOIN events k ON k.trace_id = s.trace_id AND k.event_id = s.kernel_event_id \
         LEFT JOIN events p ON p.trace_id = e.trace_id AND p.event_id = e.parent_id \
         WHERE s.source = 'traceme' ORDER BY s.start_ps, s.dur_ps DESC",
    );
    assert_eq!(got.len(), t.scopes.len());
    for (r, sc) in got.iter().zip(&t.scopes) {
        assert_eq!(s(r, "scope"), sc.name);
        assert_eq!(
            (i(r, "start_ps"), i(r, "dur_ps")),
            (sc.offset_ps, sc.duration_ps)
        );
        assert_eq!(i(r, "kernel_ts_ps"), t.kernels[sc.execution].offset_ps);
        let parent = sc.parent.map(|p| t.scopes[p].name);
        assert_eq!(r.get("parent").and_then(|v| v.as_str()), parent);
        assert_eq!(i(r, "depth"), i64::from(parent.is_some()));
    }
    assert!(t.scopes.iter().any(|s| s.parent.is_some()));
}

/// Static `_counters_` samples: every unit is named, they are marked
/// static and keyed to the region of the next marker, and the samples whose
/// duration is an absolute end are clamped to their kernel with a warning.
#[test]
fn static_counters_are_keyed_to_the_next_region_and_clamped() {
    let t = truth();
    let got = rows(
        "SELECT c.name, c.ts_ps, c.value, c.unit, c.measured, c.region_id, e.dur_ps, e.depth \
         FROM unit_counters c JOIN events e ON e.trace_id = c.trace_id AND e.event_id = c.event_id \
         ORDER BY c.ts_ps, c.event_id",
    );
    assert_eq!(got.len(), t.samples.len());
    for (r, x) in got.iter().zip(&t.samples) {
        assert_eq!(s(r, "name"), format!("{}/{}", x.counter, x.stat));
        assert_eq!(i(r, "ts_ps"), x.offset_ps);
        // serde_json may round the last bit of a parsed double.
        assert!(
            (f(r, "value") - x.value).abs() <= 1e-12 * x.value.abs(),
            "{r:?} vs {x:?}"
        );
        assert_eq!(r["measured"], false);
        // The unit is the one the facts sheet's table names for the
        // counter (the generator's `StaticUnit::unit`).
        let unit = t.units.iter().find(|u| u.counter == x.counter).unwrap();
        assert_eq!(s(r, "unit"), unit.unit, "{r:?}");
        assert_eq!(oi(r, "region_id"), x.region_id.map(i64::from), "{r:?}");
        let kernel = &t.kernels[x.execution];
        let want = if x.absolute_end {
            kernel.offset_ps + kernel.duration_ps - x.offset_ps
        } else {
            x.duration_ps
        };
        assert_eq!(i(r, "dur_ps"), want, "{r:?}");
        // Samples are not intervals that nest.
        assert_eq!(i(r, "depth"), 0);
    }
    let units: BTreeSet<String> = got.iter().map(|r| s(r, "unit")).collect();
    assert!(units.contains("MXU"), "{units:?}");
    let clamped = t.samples.iter().filter(|x| x.absolute_end).count();
    assert!(clamped > 0);
    let w = rows("SELECT array_to_string(converter_warnings, '|') AS w FROM traces");
    let w = s(&w[0], "w");
    assert!(
        w.contains(&format!(
            "{clamped} counter samples whose duration_ps is an absolute end"
        )),
        "{w}"
    );
}

/// The XProf 2.24.2 answer for `mode` on the kernel's payload.
fn xprof(mode: &str) -> Value {
    expected(mode)
}

/// `llo_regions` is XProf's `region_tree`, node by node.
#[test]
fn llo_regions_are_xprofs_region_tree() {
    let x = xprof("region_tree");
    assert_eq!(x["hlo_instruction_name"], HLO_OP);
    let mut want = Vec::new();
    fn walk(
        n: &Value,
        parent: Option<usize>,
        depth: i64,
        out: &mut Vec<(Option<usize>, i64, Value)>,
    ) {
        let me = out.len();
        out.push((parent, depth, n.clone()));
        for c in n["children"].as_array().unwrap() {
            walk(c, Some(me), depth + 1, out);
        }
    }
    walk(&x["root"], None, 0, &mut want);
    let got = rows(&format!(
        "SELECT * FROM llo_regions WHERE hlo_op = '{HLO_OP}' ORDER BY node"
    ));
    assert_eq!(got.len(), want.len());
    for (r, (parent, depth, n)) in got.iter().zip(&want) {
        assert_eq!(oi(r, "parent_node"), parent.map(|p| p as i64));
        assert_eq!(i(r, "depth"), *depth);
        assert_eq!(s(r, "name"), n["name"].as_str().unwrap(), "{r:?}");
        assert_eq!(s(r, "kind"), n["kind"].as_str().unwrap(), "{r:?}");
        assert_eq!(
            oi(r, "region_id").unwrap_or(0),
            n["ordinal"].as_i64().unwrap()
        );
        let group = matches!(n["kind"].as_str(), Some("loop" | "predicated_region"));
        let bound = |k: &str| {
            let v = n[k].as_i64().unwrap();
            if group || v < 0 { None } else { Some(v) }
        };
        assert_eq!(oi(r, "start_bundle"), bound("start_bundleno"), "{r:?}");
        assert_eq!(oi(r, "limit_bundle"), bound("limit_bundleno"), "{r:?}");
        assert_eq!(
            i(r, "instructions"),
            n["num_instructions"].as_i64().unwrap()
        );
    }
    // And the generator's own description: every region with its range.
    let t = truth();
    for reg in &t.regions {
        let r = got
            .iter()
            .find(|r| oi(r, "region_id") == Some(reg.id as i64))
            .unwrap_or_else(|| panic!("region {}", reg.id));
        assert_eq!(oi(r, "start_bundle"), reg.start.map(i64::from));
        assert_eq!(oi(r, "limit_bundle"), reg.end.map(i64::from));
        assert_eq!(
            oi(r, "parent_region_id"),
            reg.parent.map(i64::from),
            "{r:?}"
        );
    }
}

/// `llo_bundle_units` is XProf's `bundle_util` (its first 30 bundles, and
/// the total), and the generator's arrays bundle by bundle.
#[test]
fn bundle_units_are_xprofs_bundle_util() {
    let x = xprof("bundle_util");
    let got = rows(&format!(
        "SELECT bundle, xprof_unit, unit, used, capacity, region_id FROM llo_bundle_units \
         WHERE hlo_op = '{HLO_OP}' ORDER BY bundle, xprof_unit"
    ));
    let t = truth();
    assert_eq!(x["total_bundles"].as_i64().unwrap(), t.slots as i64);
    let p = rows(&format!(
        "SELECT bundles FROM llo_programs WHERE hlo_op = '{HLO_OP}'"
    ));
    assert_eq!(i(&p[0], "bundles"), t.slots as i64);
    let by: BTreeMap<(i64, String), &Row> = got
        .iter()
        .map(|r| ((i(r, "bundle"), s(r, "xprof_unit")), r))
        .collect();
    assert_eq!(by.len(), t.slots as usize * 9);
    for b in x["bundles"].as_array().unwrap() {
        let n = b["bundle"].as_i64().unwrap();
        for u in [
            "mxu",
            "xlu",
            "vector_alu",
            "vector_eup",
            "vector_load",
            "vector_store",
            "scalar_alu",
        ] {
            let r = by[&(n, u.to_string())];
            assert_eq!(
                i(r, "used"),
                b[format!("{u}_used")].as_i64().unwrap(),
                "{n} {u}"
            );
            assert_eq!(
                i(r, "capacity"),
                b[format!("{u}_avail")].as_i64().unwrap(),
                "{n} {u}"
            );
        }
        for u in ["spill", "fill"] {
            assert_eq!(i(by[&(n, u.to_string())], "used"), b[u].as_i64().unwrap());
        }
    }
    for unit in &t.units {
        for (bundle, used) in unit.used.iter().enumerate() {
            let key = if unit.capacity.is_some() {
                match unit.unit {
                    "MXU" => "mxu",
                    "XLU" => "xlu",
                    "VALU" => "vector_alu",
                    "EUP" => "vector_eup",
                    "VLD" => "vector_load",
                    "VST" => "vector_store",
                    _ => "scalar_alu",
                }
            } else if unit.counter == "Vector Spills" {
                "spill"
            } else {
                "fill"
            };
            assert_eq!(
                i(by[&(bundle as i64, key.to_string())], "used"),
                *used as i64
            );
        }
    }
}

/// `llo_program_instructions` counts and names opcodes as XProf's
/// `opcodes` mode and `get_llo_analysis` do; `llo_allocations` is its
/// `spills` mode.
#[test]
fn instructions_and_allocations_are_xprofs() {
    let x = xprof("opcodes");
    let p = rows(&format!(
        "SELECT * FROM llo_programs WHERE hlo_op = '{HLO_OP}'"
    ));
    assert_eq!(
        i(&p[0], "instructions"),
        x["total_instructions"].as_i64().unwrap()
    );
    assert_eq!(s(&p[0], "decode_status"), "ok");
    let got = rows(&format!(
        "SELECT opcode, category, count(*) AS n FROM llo_program_instructions \
         WHERE hlo_op = '{HLO_OP}' GROUP BY opcode, category"
    ));
    let ours: BTreeMap<String, (String, i64)> = got
        .iter()
        .map(|r| (s(r, "opcode"), (s(r, "category"), i(r, "n"))))
        .collect();
    for o in x["top_opcodes"].as_array().unwrap() {
        let name = o["opcode"].as_str().unwrap();
        assert_eq!(
            ours[name],
            (
                o["category"].as_str().unwrap().to_string(),
                o["count"].as_i64().unwrap()
            ),
            "{name}"
        );
    }
    let cats = rows(&format!(
        "SELECT category, count(*) AS n FROM llo_program_instructions \
         WHERE hlo_op = '{HLO_OP}' GROUP BY category"
    ));
    let cats: BTreeMap<String, i64> = cats.iter().map(|r| (s(r, "category"), i(r, "n"))).collect();
    let want: BTreeMap<String, i64> = x["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["category"].as_str().unwrap().to_string(),
                c["count"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cats, want);

    // get_llo_analysis: per module, what it counts and by which unit.
    let a = expected_raw("llo_analysis");
    let modules = a["modules"].as_array().unwrap();
    let progs = rows("SELECT hlo_op, analysis_instructions FROM llo_programs");
    assert_eq!(progs.len(), modules.len());
    for m in modules {
        let op = m["hlo_instruction_name"].as_str().unwrap();
        let r = progs.iter().find(|r| s(r, "hlo_op") == op).unwrap();
        assert_eq!(
            i(r, "analysis_instructions"),
            m["total_instructions"].as_i64().unwrap(),
            "{op}"
        );
    }
    let k = modules
        .iter()
        .find(|m| m["hlo_instruction_name"] == HLO_OP)
        .unwrap();
    // The units of the instructions XProf's walk visits.
    let units = rows(&format!(
        "SELECT i.unit, count(*) AS n FROM llo_program_instructions i \
         JOIN llo_regions r ON r.trace_id = i.trace_id AND r.metadata_id = i.metadata_id \
           AND r.region_id = i.region_id \
         WHERE i.hlo_op = '{HLO_OP}' AND r.name NOT IN ('header', 'header_branch', 'footer', \
           'footer_branch', 'check_region', 'check_branch_region') \
         GROUP BY i.unit"
    ));
    let units: BTreeMap<String, i64> = units.iter().map(|r| (s(r, "unit"), i(r, "n"))).collect();
    let want: BTreeMap<String, i64> = k["execution_unit_summary"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(u, n)| (u.clone(), n.as_i64().unwrap()))
        .collect();
    assert_eq!(units, want);
    // Its source map: instruction id -> file:line of the innermost frame.
    let src = rows(&format!(
        "SELECT instruction_id, source_file, source_line FROM llo_program_instructions \
         WHERE hlo_op = '{HLO_OP}' AND source_line IS NOT NULL"
    ));
    // Both ways: every entry of XProf's map is one of our instructions
    // with that source, and every instruction of ours with a source is in
    // XProf's map (a comparison that matched no id would pass nothing).
    let map = k["source_map"].as_object().unwrap();
    let ours: BTreeMap<String, String> = src
        .iter()
        .map(|r| {
            (
                i(r, "instruction_id").to_string(),
                format!("{}:{}", s(r, "source_file"), i(r, "source_line")),
            )
        })
        .collect();
    let xprofs: BTreeMap<String, String> = map
        .iter()
        .map(|(id, v)| (id.clone(), v.as_str().unwrap().to_string()))
        .collect();
    assert!(xprofs.len() >= 10, "{} entries compared", xprofs.len());
    assert_eq!(ours, xprofs);

    let sp = xprof("spills");
    let allocs = rows(&format!(
        "SELECT * FROM llo_allocations WHERE hlo_op = '{HLO_OP}' ORDER BY ordinal"
    ));
    let want = sp["allocations"].as_array().unwrap();
    assert_eq!(allocs.len(), want.len());
    for (r, w) in allocs.iter().zip(want) {
        assert_eq!(i(r, "ordinal"), w["ordinal"].as_i64().unwrap());
        assert_eq!(i(r, "size_bytes"), w["size"].as_i64().unwrap());
        assert_eq!(i(r, "space"), w["space"].as_i64().unwrap());
        for k in ["is_spill", "is_scoped", "is_virtual", "is_remote"] {
            assert_eq!(r[k].as_bool(), w[k].as_bool(), "{k}");
        }
    }
    let total: i64 = allocs.iter().map(|r| i(r, "size_bytes")).sum();
    assert_eq!(
        total,
        sp["summary"]["total_allocation_bytes"].as_i64().unwrap()
    );
}

fn expected_raw(name: &str) -> Value {
    json_fixture(&format!("tpu/expected/synthetic_capture.{name}.json"))
}

/// Static meets measured: each region's occupancy is the generator's
/// formula over its bundles and equals the value `_counters_` carries for
/// it; the profile sums the measured entries per region.
#[test]
fn region_profile_joins_measured_time_and_static_occupancy() {
    let t = truth();
    let util = rows(&format!(
        "SELECT region_id, unit, occupancy_pct, counter_pct FROM llo_region_utilization \
         WHERE hlo_op = '{HLO_OP}'"
    ));
    let mut checked = 0;
    for r in &util {
        let reg = t.region(i(r, "region_id") as u32);
        let unit = t
            .units
            .iter()
            .find(|u| u.unit == s(r, "unit") && u.capacity.is_some());
        let Some(unit) = unit else { continue };
        let want = reg.occupancy_pct(unit).unwrap();
        assert!(
            (f(r, "occupancy_pct") - want).abs() < 1e-9,
            "{r:?} vs {want}"
        );
        if reg.marker {
            // Every marked region's value was laid on the timeline, but
            // for a 0 after a 0 (the emission rule omits it).
            match r.get("counter_pct") {
                Some(c) => assert!((c.as_f64().unwrap() - want).abs() < 1e-9, "{r:?}"),
                None => assert_eq!(want, 0.0, "{r:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 0);
    let prof = rows(&format!(
        "SELECT * FROM llo_region_profile WHERE hlo_op = '{HLO_OP}' ORDER BY region_id"
    ));
    let entries = rows(&format!(
        "SELECT region_id, dur_ps FROM llo_region_entries WHERE hlo_op = '{HLO_OP}'"
    ));
    let total: i64 = entries.iter().map(|r| i(r, "dur_ps")).sum();
    let fired: BTreeSet<u32> = t.markers.iter().map(|m| m.region_id).collect();
    assert_eq!(prof.len(), fired.len());
    for r in &prof {
        let id = i(r, "region_id");
        let mine: Vec<i64> = entries
            .iter()
            .filter(|e| i(e, "region_id") == id)
            .map(|e| i(e, "dur_ps"))
            .collect();
        assert_eq!(i(r, "entries") as usize, mine.len());
        assert_eq!(i(r, "measured_ps"), mine.iter().sum::<i64>());
        assert_eq!(i(r, "executions") as usize, t.kernels.len());
        assert!(
            (f(r, "measured_pct") - 100.0 * i(r, "measured_ps") as f64 / total as f64).abs() < 1e-9
        );
        let reg = t.region(id as u32);
        assert_eq!(oi(r, "start_bundle"), reg.start.map(i64::from));
        let mxu = t.units.iter().find(|u| u.unit == "MXU").unwrap();
        assert!((f(r, "mxu_pct") - reg.occupancy_pct(mxu).unwrap()).abs() < 1e-9);
    }
    // The init body's instructions carry their scope and line.
    let init = prof.iter().find(|r| i(r, "region_id") == 28).unwrap();
    assert_eq!(s(init, "named_scope"), "ep_run_kernel/init");
    assert_eq!(i(init, "source_line"), 30);
}

/// The bundles a marker's measured time executes, from the generator's
/// description: each fired region's segment runs from its first slot to
/// the first slot of the next fired region in slot order (the program's
/// end for the last), and its occupancy is the generator's slot use over
/// those slots.
fn expected_segments(t: &CaptureTruth) -> Vec<(u32, u32, u32)> {
    let fired: BTreeSet<u32> = t.markers.iter().map(|m| m.region_id).collect();
    let mut starts: Vec<(u32, u32)> = t
        .regions
        .iter()
        .filter(|r| fired.contains(&r.id))
        .map(|r| (r.start.expect("a fired region is placed"), r.id))
        .collect();
    starts.sort();
    starts
        .iter()
        .enumerate()
        .map(|(n, (start, id))| {
            let limit = starts.get(n + 1).map_or(t.slots, |next| next.0);
            (*id, *start, limit)
        })
        .collect()
}

fn slot_occupancy(unit: &xprof_testdata::llo_capture::StaticUnit, start: u32, limit: u32) -> f64 {
    let used: u64 = unit.used[start as usize..limit as usize]
        .iter()
        .map(|u| *u as u64)
        .sum();
    100.0 * used as f64 / (unit.capacity.unwrap() as f64 * (limit - start) as f64)
}

/// A region's measured time is paired with the occupancy of the bundles
/// it executes (its own segment, to the next marker), not with its nested
/// range: the loop body (R69, slots 12-220) is entered 8 slots before its
/// first marked child (R27 at slot 20), and those 8 slots hold no matmul,
/// while its nested range is mostly the two matmul bodies. Expected
/// values come from the generator's slot data, not from the views.
#[test]
fn measured_time_is_paired_with_its_own_segments_occupancy() {
    let t = truth();
    let segments = expected_segments(&t);
    // The case this is about: the body's own stretch ends where R27 starts.
    let body = segments.iter().find(|s| s.0 == 69).unwrap();
    assert_eq!((body.1, body.2), (12, 20));
    let mxu = t.units.iter().find(|u| u.unit == "MXU").unwrap();
    let body_self = slot_occupancy(mxu, 12, 20);
    let body_nested = t.region(69).occupancy_pct(mxu).unwrap();
    assert_eq!(body_self, 0.0);
    assert!(body_nested > 70.0, "{body_nested}");

    let got = rows(&format!(
        "SELECT * FROM llo_region_segments WHERE hlo_op = '{HLO_OP}' ORDER BY region_id, unit"
    ));
    let mut checked = 0;
    for (id, start, limit) in &segments {
        let reg = t.region(*id);
        for u in t.units.iter().filter(|u| u.capacity.is_some()) {
            let r = got
                .iter()
                .find(|r| i(r, "region_id") == *id as i64 && s(r, "unit") == u.unit)
                .unwrap_or_else(|| panic!("R{id} {}", u.unit));
            assert_eq!(i(r, "segment_start_bundle"), *start as i64, "{r:?}");
            assert_eq!(i(r, "segment_limit_bundle"), *limit as i64, "{r:?}");
            assert_eq!(i(r, "segment_bundles"), (*limit - *start) as i64, "{r:?}");
            assert_eq!(
                oi(r, "nested_limit_bundle"),
                reg.end.map(i64::from),
                "{r:?}"
            );
            let used: i64 = u.used[*start as usize..*limit as usize]
                .iter()
                .map(|x| *x as i64)
                .sum();
            assert_eq!(i(r, "self_used"), used, "{r:?}");
            assert_eq!(
                f(r, "self_occupancy_pct"),
                slot_occupancy(u, *start, *limit),
                "{r:?}"
            );
            let nested = reg.occupancy_pct(u).unwrap();
            assert!(
                (f(r, "nested_occupancy_pct") - nested).abs() < 1e-9,
                "{r:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(
        got.iter().filter(|r| r.get("capacity").is_some()).count(),
        checked
    );

    // The profile: measured time beside its own segment's numbers, the
    // nested range's beside them under `nested_`, the old names nested.
    let prof = rows(&format!(
        "SELECT * FROM llo_region_profile WHERE hlo_op = '{HLO_OP}' ORDER BY region_id"
    ));
    assert_eq!(prof.len(), segments.len());
    for r in &prof {
        let id = i(r, "region_id") as u32;
        let (_, start, limit) = segments.iter().find(|s| s.0 == id).unwrap();
        assert_eq!(i(r, "self_start_bundle"), *start as i64, "{r:?}");
        assert_eq!(i(r, "self_limit_bundle"), *limit as i64, "{r:?}");
        for u in t.units.iter().filter(|u| u.capacity.is_some()) {
            let col = u.unit.to_lowercase();
            let want = slot_occupancy(u, *start, *limit);
            assert_eq!(f(r, &format!("self_{col}_pct")), want, "R{id} {}", u.unit);
            let nested = t.region(id).occupancy_pct(u).unwrap();
            assert!((f(r, &format!("nested_{col}_pct")) - nested).abs() < 1e-9);
            assert!((f(r, &format!("{col}_pct")) - nested).abs() < 1e-9);
        }
    }
    let body = prof.iter().find(|r| i(r, "region_id") == 69).unwrap();
    assert_eq!(f(body, "self_mxu_pct"), body_self);
    assert_ne!(f(body, "self_mxu_pct"), f(body, "nested_mxu_pct"));
    // Its own instructions: the two DMA instructions of slot 13 (line 27),
    // the load of slot 15 (line 29) and scalar work without a line; the
    // region's own instructions over its whole range are mostly loads of
    // line 29 (`source_line`).
    assert_eq!(i(body, "self_source_line"), 27);
    assert_eq!(i(body, "source_line"), 29);
    let lines: Vec<String> = body["self_source_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().rsplit(':').next().unwrap().to_string())
        .collect();
    assert_eq!(lines, ["27", "29"]);
    let acc = prof.iter().find(|r| i(r, "region_id") == 32).unwrap();
    assert_eq!(i(acc, "self_source_line"), 34);
    assert_eq!(s(acc, "self_named_scope"), "ep_run_kernel/acc");
}

/// The unsigned program id is kept as written.
#[test]
fn program_ids_above_2_63_stay_unsigned() {
    let got = rows("SELECT DISTINCT program_id FROM events WHERE program_id IS NOT NULL");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["program_id"].as_u64(), Some(PROGRAM_ID));
    let ops = rows("SELECT program_id FROM hlo_ops");
    assert_eq!(ops[0]["program_id"].as_u64(), Some(PROGRAM_ID));
}

/// Everything above answers the same from the Parquet dataset.
#[test]
fn capture_views_round_trip_through_parquet() {
    let (dir, _) = dataset_of(&[fixture(FIXTURE)]);
    let sql = "SELECT (SELECT sum(dur_ps) FROM llo_region_entries) AS entries, \
                      (SELECT count(*) FROM llo_regions) AS regions, \
                      (SELECT sum(used) FROM llo_bundle_units) AS used, \
                      (SELECT count(*) FROM llo_program_instructions) AS instructions, \
                      (SELECT sum(size_bytes) FROM llo_allocations) AS alloc, \
                      (SELECT sum(measured_ps) FROM llo_region_profile) AS measured, \
                      (SELECT round(sum(occupancy_pct), 6) FROM llo_region_utilization) AS occ, \
                      (SELECT count(*) FROM kernel_scopes) AS scopes, \
                      (SELECT count(region_id) FROM unit_counters) AS keyed";
    let from_file = rows(sql);
    let from_parquet = tokio_run(query_rows(&[PathBuf::from(dir.path())], sql));
    assert_eq!(from_file, from_parquet);
    assert!(i(&from_file[0], "instructions") > 0);
}

/// A payload that does not decode is a row that says why, a warning with
/// its offset, and the bytes kept; the conversion goes on.
#[test]
fn an_undecodable_payload_is_reported_not_fatal() {
    use prost::Message;
    use xprof_testdata::xspace_proto::{XSpace, x_stat};
    let (bytes, _) = capture_space_bytes(&CaptureSpec::default());
    let mut space = XSpace::decode(bytes.as_slice()).unwrap();
    let meta = space
        .planes
        .iter_mut()
        .find(|p| p.name == "/host:metadata")
        .unwrap();
    for m in meta.event_metadata.values_mut() {
        for st in &mut m.stats {
            if let Some(x_stat::Value::BytesValue(b)) = &mut st.value {
                b.truncate(b.len() / 2);
                b.push(0xff);
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.xplane.pb");
    std::fs::write(&path, space.encode_to_vec()).unwrap();
    let got = tokio_run(query_rows(
        &[&path],
        "SELECT decode_status, bytes FROM llo_programs",
    ));
    assert_eq!(got.len(), 2);
    for r in &got {
        let st = s(r, "decode_status");
        assert!(
            st.contains("byte offset") && st.contains("bad.xplane.pb"),
            "{st}"
        );
    }
    let kept = tokio_run(query_rows(&[&path], "SELECT count(*) AS n FROM llo_protos"));
    assert_eq!(i(&kept[0], "n"), 2);
    let w = tokio_run(query_rows(
        &[&path],
        "SELECT array_to_string(converter_warnings, '|') AS w FROM traces",
    ));
    assert!(s(&w[0], "w").contains("llo_proto not decoded"));
}

/// XProf 2.24.2's `check_kernel_profiling`: its plane and line inventory
/// is ours.
#[test]
fn line_inventory_is_xprofs_check_kernel_profiling() {
    let x = expected_raw("check_kernel_profiling");
    let mut want = BTreeSet::new();
    for p in x["planes"].as_array().unwrap() {
        for l in p["lines"].as_array().unwrap() {
            want.insert((
                p["name"].as_str().unwrap().to_string(),
                l["name"].as_str().unwrap().to_string(),
                l["event_count"].as_i64().unwrap(),
            ));
        }
    }
    let got = rows(
        "SELECT d.name AS plane, t.name AS line, t.event_count FROM tracks t \
         JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id",
    );
    let got: BTreeSet<(String, String, i64)> = got
        .iter()
        .map(|r| (s(r, "plane"), s(r, "line"), i(r, "event_count")))
        .collect();
    assert_eq!(got, want);
}

/// XProf 2.24.2's `get_kernel_stats --include_intra_kernel_regions`: the
/// kernel's executions and time are `hlo_stats`'; and
/// `get_device_time_attribution`'s per-line busy time (each start and
/// duration truncated to ns, intervals unioned) is ours on every line but
/// `_counters_`, where XProf unions the absolute-end durations as written
/// (the generator's raw values give its number) and we clamp them.
#[test]
fn kernel_and_line_times_agree_with_xprof() {
    let ks = expected_raw("kernel_stats_regions");
    let k = &ks.as_array().unwrap()[0];
    let hs =
        rows("SELECT occurrences, total_time_us FROM hlo_stats WHERE hlo_op = 'pallas_matmul.1'");
    assert_eq!(
        i(&hs[0], "occurrences"),
        k["execution_count"].as_i64().unwrap()
    );
    assert_eq!(
        (f(&hs[0], "total_time_us") * 1000.0).round(),
        (k["total_duration_us"].as_f64().unwrap() * 1000.0).round()
    );
    let dta = expected_raw("device_time_attribution");
    let union_ns = |mut spans: Vec<(i64, i64)>| -> i64 { union_sweep_len(&mut spans) };
    let trunc = |ts: i64, dur: i64| (ts / 1000, ts / 1000 + dur / 1000);
    let got = rows(
        "SELECT t.name AS line, e.ts_ps, e.dur_ps FROM events e \
         JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id \
         JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id \
         WHERE d.name LIKE '/device:%'",
    );
    let mut by_line: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    for r in &got {
        by_line
            .entry(s(r, "line"))
            .or_default()
            .push(trunc(i(r, "ts_ps"), i(r, "dur_ps")));
    }
    let want = dta["by_line_duration_ns"].as_object().unwrap();
    // No line is ours alone: every device line with events is XProf's.
    let only_ours: Vec<&String> = by_line.keys().filter(|l| !want.contains_key(*l)).collect();
    assert!(
        only_ours.is_empty(),
        "lines XProf does not have: {only_ours:?}"
    );
    for (line, ns) in want {
        let spans = by_line.remove(line).unwrap_or_default();
        if line == "_counters_" {
            let t = truth();
            let raw: Vec<(i64, i64)> = t
                .samples
                .iter()
                .map(|x| trunc(x.offset_ps, x.duration_ps))
                .collect();
            assert_eq!(union_ns(raw), ns.as_i64().unwrap());
            // Ours: each absolute-end sample clamped to its kernel's end.
            let clamped: Vec<(i64, i64)> = t
                .samples
                .iter()
                .map(|x| {
                    let kernel = &t.kernels[x.execution];
                    let dur = if x.absolute_end {
                        kernel.offset_ps + kernel.duration_ps - x.offset_ps
                    } else {
                        x.duration_ps
                    };
                    trunc(x.offset_ps, dur)
                })
                .collect();
            let ours = union_ns(spans);
            assert_eq!(ours, union_ns(clamped));
            assert!(ours < ns.as_i64().unwrap());
        } else {
            assert_eq!(union_ns(spans), ns.as_i64().unwrap(), "{line}");
        }
    }
}

const DUMP: &str = "tpu/synthetic_dump";

fn dump_truth() -> xprof_testdata::llo_dump::DumpTruth {
    xprof_testdata::llo_dump::dump_folder(&truth())
}

fn dump_rows(sql: &str) -> Vec<Row> {
    tokio_run(query_rows(&[fixture(DUMP)], sql))
}

#[test]
fn the_dump_folder_is_the_generators_output() {
    for (name, text) in &dump_truth().files {
        assert_generated_fixture(
            &format!("{DUMP}/{name}"),
            text.as_bytes(),
            "dump_folder(&capture truth)",
            "tests/fixtures/tpu/README.md",
        );
    }
}

/// The final bundles: every bundle with its ops, tag, loop mark, region
/// comments and the region open at it; every op with its unit.
#[test]
fn dump_bundles_and_ops_are_read_as_written() {
    let d = dump_truth();
    let got = dump_rows(
        "SELECT address, tag, in_loop, ops, region_id, regions_started, regions_ended, \
                is_entry, is_exit FROM llo_dump_bundles ORDER BY address",
    );
    assert_eq!(got.len(), d.bundles.len());
    let list = |r: &Row, k: &str| -> Vec<i64> {
        r[k].as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect()
    };
    for (r, b) in got.iter().zip(&d.bundles) {
        assert_eq!(i(r, "address"), b.address);
        assert_eq!(r.get("tag").and_then(|v| v.as_str()), b.tag, "{r:?}");
        assert_eq!(r["in_loop"].as_bool(), Some(b.in_loop), "{r:?}");
        assert_eq!(i(r, "ops") as usize, b.ops.len(), "{r:?}");
        assert_eq!(oi(r, "region_id"), b.region.map(i64::from), "{r:?}");
        let want: Vec<i64> = b.started.iter().map(|x| *x as i64).collect();
        assert_eq!(list(r, "regions_started"), want);
        let want: Vec<i64> = b.ended.iter().map(|x| *x as i64).collect();
        assert_eq!(list(r, "regions_ended"), want);
        assert_eq!(r["is_entry"].as_bool(), Some(b.address == 0));
        assert_eq!(
            r["is_exit"].as_bool(),
            Some(b.address == d.bundles.len() as i64 - 1)
        );
    }
    let ops = dump_rows(
        "SELECT address, opcode, unit, unit_as_written FROM llo_dump_ops ORDER BY address, position",
    );
    let want: Vec<(i64, String, String)> = d
        .bundles
        .iter()
        .flat_map(|b| {
            b.ops
                .iter()
                .map(|(m, u)| (b.address, m.clone(), u.to_string()))
        })
        .collect();
    let mut got: Vec<(i64, String, String)> = ops
        .iter()
        .map(|r| (i(r, "address"), s(r, "opcode"), s(r, "unit")))
        .collect();
    // The generator writes the pseudo and bounds-check ops last.
    let mut want = want;
    got.sort();
    want.sort();
    assert_eq!(got, want);
    let mxu: BTreeSet<String> = ops
        .iter()
        .filter(|r| s(r, "unit") == "MXU")
        .map(|r| s(r, "unit_as_written"))
        .collect();
    assert_eq!(
        mxu,
        BTreeSet::from(["mxu0".to_string(), "mxu1".to_string()])
    );
}

/// Utilization, schedule analysis and allocations of the dump.
#[test]
fn dump_utilization_schedule_and_allocations_are_read_as_written() {
    let d = dump_truth();
    let util = dump_rows(
        "SELECT unit, sum(used) AS used, max(capacity) AS capacity, count(*) AS n \
         FROM llo_dump_bundle_units GROUP BY unit",
    );
    let by: BTreeMap<String, (i64, i64, i64)> = util
        .iter()
        .map(|r| (s(r, "unit"), (i(r, "used"), i(r, "capacity"), i(r, "n"))))
        .collect();
    assert_eq!(by.len(), 10);
    let count = |u: &str| {
        d.bundles
            .iter()
            .map(|b| b.ops.iter().filter(|o| o.1 == u).count() as i64)
            .sum::<i64>()
    };
    let t = truth();
    let mxu = t.units.iter().find(|u| u.unit == "MXU").unwrap();
    let mxu_used: i64 = d
        .bundles
        .iter()
        .map(|b| mxu.used[b.slot as usize] as i64)
        .sum();
    assert_eq!(by["MXU"], (mxu_used, 2, d.bundles.len() as i64));
    // The entry bundle's `inlined_call_operand` takes no slot.
    assert_eq!(by["VLD"].0, count("VLD"));
    assert_eq!(by["VALU"].0, count("VALU"));
    assert_eq!(by["VST"].0, count("VST"));
    // The bounds-check op (`shalt.err`) is scalar work and counted.
    assert_eq!(by["SALU"].0, count("SALU"));
    assert_eq!(by["FILL"], (0, 3, d.bundles.len() as i64));
    let sched =
        dump_rows("SELECT kind, bundles, name, instances FROM llo_dump_schedule ORDER BY line");
    let kinds: Vec<String> = sched.iter().map(|r| s(r, "kind")).collect();
    assert_eq!(
        kinds,
        ["total", "empty", "non_empty", "instruction", "opcode"]
    );
    assert_eq!(f(&sched[0], "bundles") as usize, d.bundles.len());
    assert_eq!(
        f(&sched[1], "bundles") + f(&sched[2], "bundles"),
        f(&sched[0], "bundles")
    );
    assert_eq!(s(&sched[4], "name"), "custom-call");
    assert_eq!(i(&sched[4], "instances"), 1);
    assert!(s(&sched[3], "name").starts_with("%pallas_matmul.1 = "));
    let allocs = dump_rows(
        "SELECT name, memory_space, size_bytes, is_scoped FROM llo_dump_allocations ORDER BY line",
    );
    let got: Vec<(String, String, i64, bool)> = allocs
        .iter()
        .map(|r| {
            (
                s(r, "name"),
                s(r, "memory_space"),
                i(r, "size_bytes"),
                r["is_scoped"].as_bool().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, i64, bool)> = d
        .allocations
        .iter()
        .map(|(n, sp, sz, sc)| (n.clone(), sp.to_string(), *sz, *sc))
        .collect();
    assert_eq!(got, want);
}

/// The dump next to the capture: its bundles join the measured regions by
/// region id (the addresses differ: the dump is uninstrumented).
#[test]
fn the_dump_joins_the_capture_by_region_id() {
    let got = tokio_run(query_rows(
        &[fixture(FIXTURE), fixture(DUMP)],
        "SELECT p.region_id, p.measured_ps, min(b.address) AS first_address, count(*) AS bundles \
         FROM llo_region_profile p \
         JOIN llo_dump_bundles b ON b.hlo_op = p.hlo_op AND b.region_id = p.region_id \
         GROUP BY p.region_id, p.measured_ps ORDER BY p.region_id",
    ));
    let d = dump_truth();
    let t = truth();
    let fired: BTreeSet<u32> = t.markers.iter().map(|m| m.region_id).collect();
    let in_dump: BTreeSet<u32> = d.bundles.iter().filter_map(|b| b.region).collect();
    let want: Vec<u32> = fired.intersection(&in_dump).copied().collect();
    let got_ids: Vec<u32> = got.iter().map(|r| i(r, "region_id") as u32).collect();
    assert_eq!(got_ids, want);
    for r in &got {
        let id = i(r, "region_id") as u32;
        let n = d.bundles.iter().filter(|b| b.region == Some(id)).count();
        assert_eq!(i(r, "bundles") as usize, n, "{r:?}");
    }
}

/// A dump file that is not what its name says fails with the file, the
/// line and the byte offset.
#[test]
fn a_bad_dump_file_names_its_line_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let name = "1783579888000000000-k.1-121-final_hlo-static-per-bundle-utilization.txt";
    let path = dir.path().join(name);
    std::fs::write(
        &path,
        "== CAPACTIY:\nMXU, XLU\n    2     2\n== UTILIZATION:\n1 0\n1 x\n",
    )
    .unwrap();
    let input = xprof_sql::convert::input::open(&path).unwrap();
    let reader = xprof_sql::convert::registry::detect(&path, &input).unwrap();
    assert_eq!(reader.name(), "llo_dump");
    let mut sink = xprof_sql::convert::sink::MemorySink::default();
    let src = xprof_sql::convert::reader::TraceSource {
        trace_id: 0,
        path: path.clone(),
        run: None,
        host: "dump".into(),
    };
    let e =
        xprof_sql::convert::registry::convert(reader, &input, &src, &Default::default(), &mut sink)
            .unwrap_err()
            .to_string();
    assert!(
        e.contains(name) && e.contains("line 6") && e.contains("at byte 54"),
        "{e}"
    );
}

/// `inspect` lists the stat names a plane uses, not the strings that
/// `ref_value` stats point to (the markers' `long_name` texts).
#[test]
fn inspect_lists_stat_names_not_referenced_strings() {
    let path = fixture(FIXTURE);
    let input = xprof_sql::convert::input::open(&path).unwrap();
    let reader = xprof_sql::convert::registry::detect(&path, &input).unwrap();
    let planes = reader.inspect(&input).unwrap();
    let tpu = planes.iter().find(|p| p.name == "/device:TPU:0").unwrap();
    for name in [
        "long_name",
        "instrumentation_id",
        "device_offset_ps",
        "% util",
    ] {
        assert!(
            tpu.stat_names.iter().any(|n| n == name),
            "{name}: {:?}",
            tpu.stat_names
        );
    }
    assert!(
        !tpu.stat_names.iter().any(|n| n.contains("bundle.")),
        "{:?}",
        tpu.stat_names
    );
}
