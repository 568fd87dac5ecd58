//! TPU LLO bundle traces: `llo_instructions` and the LLO views.
//!
//! The input is synthetic (no TPU here, and LLO lanes need libtpu's
//! tracing flags): `xprof_testdata::llo` writes
//! `/device:TPU:N` planes with the lanes and stats named in
//! ../shared/formats/tpu-llo.md, and describes every instruction, kernel
//! and region it wrote (`LloTruth`). Each view is checked against values
//! computed here from that description, and XProf 2.24.2's answers on the
//! same file (tests/fixtures/tpu/expected/synthetic_llo.*, made as
//! tests/fixtures/tpu/README.md says) are compared where XProf computes the
//! same number.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use common::*;
use serde_json::Value;
use xprof_testdata::llo::{
    BUBBLE_BUNDLES, BUNDLE_PS, LLO_UTILIZATION_SERIES, LloSpec, LloTruth, llo_space_bytes,
};

const FIXTURE: &str = "tpu/synthetic_llo.xplane.pb";

fn truth() -> LloTruth {
    llo_space_bytes(&LloSpec::default()).1
}

fn rows(sql: &str) -> Vec<Row> {
    tokio_run(query_rows(&[fixture(FIXTURE)], sql))
}

/// The union length of intervals (touching ones merge).
fn union_ps(mut spans: Vec<(i64, i64)>) -> i64 {
    union_sweep_len(&mut spans)
}

/// Kernel executions as (core, step, short name), from a kernel row
/// joined to its device and module.
const KERNEL_KEY: &str = "d.ordinal AS core, k.ts_ps AS kernel_ts_ps";

#[test]
fn the_fixture_is_the_generators_output() {
    let (bytes, _) = llo_space_bytes(&LloSpec::default());
    assert_generated_fixture(
        FIXTURE,
        &bytes,
        "llo_space_bytes(&LloSpec::default())",
        "tests/fixtures/tpu/README.md",
    );
}

/// Per kernel execution, keyed by (core, offset of the kernel from the
/// first kernel of its core): the truth's kernels.
fn kernel_offsets(t: &LloTruth) -> BTreeMap<(usize, i64), usize> {
    let first: BTreeMap<usize, i64> = t.kernels.iter().fold(BTreeMap::new(), |mut m, k| {
        let e = m.entry(k.core).or_insert(i64::MAX);
        *e = (*e).min(k.offset_ps);
        m
    });
    t.kernels
        .iter()
        .enumerate()
        .map(|(n, k)| ((k.core, k.offset_ps - first[&k.core]), n))
        .collect()
}

/// The same key from SQL: the kernel's start less the first kernel's start
/// on its device (every query below has a row of that first kernel, the
/// first step's `matmul_kernel`).
const KERNEL_OFFSET_SQL: &str = "(k.ts_ps - min(k.ts_ps) OVER (PARTITION BY d.device_id))";

#[test]
fn every_instruction_is_a_row_with_its_stats_and_kernel() {
    let t = truth();
    let got = rows(&format!(
        "SELECT {KERNEL_KEY}, {KERNEL_OFFSET_SQL} AS kernel_offset, i.unit, i.name, \
                i.ts_ps - k.ts_ps AS rel_ps, i.dur_ps, i.bundle_number, i.pallas_primitive, \
                i.source_file, i.source_line, i.kernel, i.llo_scopes, i.unit_id, i.measured \
         FROM llo_instructions i \
         JOIN events k ON k.trace_id = i.trace_id AND k.event_id = i.kernel_event_id \
         JOIN devices d ON d.trace_id = i.trace_id AND d.device_id = i.device_id"
    ));
    assert_eq!(got.len(), t.instructions.len());
    let offsets = kernel_offsets(&t);
    let mut got_rows: Vec<_> = got
        .iter()
        .map(|r| {
            let kernel = offsets[&(i(r, "core") as usize, i(r, "kernel_offset"))];
            let k = &t.kernels[kernel];
            assert_eq!(s(r, "kernel"), k.display_name);
            let scopes: Vec<String> = r["llo_scopes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(scopes.len(), 2, "{r:?}");
            assert_eq!(scopes[0], k.pallas_name);
            assert_eq!(i(r, "unit_id"), 0);
            assert!(r.get("measured").is_none(), "measured is unknown: {r:?}");
            (
                kernel,
                s(r, "unit"),
                s(r, "name"),
                i(r, "rel_ps"),
                i(r, "dur_ps"),
                i(r, "bundle_number"),
                s(r, "pallas_primitive"),
                s(r, "source_file"),
                i(r, "source_line"),
            )
        })
        .collect();
    let mut want: Vec<_> = t
        .instructions
        .iter()
        .map(|x| {
            (
                x.kernel,
                x.unit.clone(),
                x.name.clone(),
                x.offset_ps - t.kernels[x.kernel].offset_ps,
                x.duration_ps,
                x.bundle,
                x.primitive.clone(),
                x.source_file.clone(),
                x.source_line,
            )
        })
        .collect();
    got_rows.sort();
    want.sort();
    assert_eq!(got_rows, want);
    // The instruction written as "42" is named by its `msg`.
    assert!(rows("SELECT 1 AS one FROM llo_instructions WHERE name = '42'").is_empty());
    // Still rows of `events` (nothing lost), on lanes with `tracks.unit`.
    let lanes = rows(
        "SELECT t.unit, count(*) AS n FROM events e JOIN tracks t \
         ON t.trace_id = e.trace_id AND t.track_id = e.track_id \
         WHERE t.kind = 'llo_unit' GROUP BY t.unit ORDER BY t.unit",
    );
    let mut by_unit: BTreeMap<String, i64> = BTreeMap::new();
    for x in &t.instructions {
        *by_unit.entry(x.unit.clone()).or_default() += 1;
    }
    let got_units: BTreeMap<String, i64> =
        lanes.iter().map(|r| (s(r, "unit"), i(r, "n"))).collect();
    assert_eq!(got_units, by_unit);
}

#[test]
fn unit_utilization_is_the_union_of_each_units_instructions() {
    let t = truth();
    let offsets = kernel_offsets(&t);
    let got = rows(&format!(
        "SELECT {KERNEL_KEY}, {KERNEL_OFFSET_SQL} AS kernel_offset, u.unit, u.instructions, \
                u.busy_ps, u.busy_fraction, u.kernel_dur_ps, u.dominant \
         FROM unit_utilization u \
         JOIN events k ON k.trace_id = u.trace_id AND k.event_id = u.kernel_event_id \
         JOIN devices d ON d.trace_id = u.trace_id AND d.device_id = u.device_id"
    ));
    // (kernel, unit) -> (instructions, intervals)
    type PerUnit = BTreeMap<(usize, String), (i64, Vec<(i64, i64)>)>;
    let mut want: PerUnit = BTreeMap::new();
    for x in &t.instructions {
        let e = want.entry((x.kernel, x.unit.clone())).or_default();
        e.0 += 1;
        e.1.push((x.offset_ps, x.offset_ps + x.duration_ps));
    }
    assert_eq!(got.len(), want.len());
    let mut best: BTreeMap<usize, (i64, BTreeSet<String>)> = BTreeMap::new();
    for ((kernel, unit), (_, spans)) in &want {
        let busy = union_ps(spans.clone());
        let b = best.entry(*kernel).or_insert((-1, BTreeSet::new()));
        if busy > b.0 {
            *b = (busy, BTreeSet::from([unit.clone()]));
        } else if busy == b.0 {
            b.1.insert(unit.clone());
        }
    }
    for r in &got {
        let kernel = offsets[&(i(r, "core") as usize, i(r, "kernel_offset"))];
        let unit = s(r, "unit");
        let (n, spans) = &want[&(kernel, unit.clone())];
        let busy = union_ps(spans.clone());
        assert_eq!(i(r, "instructions"), *n, "{r:?}");
        assert_eq!(i(r, "busy_ps"), busy, "{r:?}");
        let dur = t.kernels[kernel].duration_ps;
        assert_eq!(i(r, "kernel_dur_ps"), dur);
        assert!((r["busy_fraction"].as_f64().unwrap() - busy as f64 / dur as f64).abs() < 1e-12);
        assert_eq!(
            r["dominant"].as_bool().unwrap(),
            best[&kernel].1.contains(&unit),
            "{r:?}"
        );
    }
}

#[test]
fn bundle_stats_finds_the_deliberate_bubble_and_only_it() {
    let t = truth();
    let bubbles = rows(
        "SELECT kernel, bundle_number, gap_bundles, gap_ps FROM bundle_stats \
         WHERE row_kind = 'bubble'",
    );
    let matmuls = t
        .kernels
        .iter()
        .filter(|k| k.pallas_name == "matmul_kernel")
        .count();
    assert_eq!(bubbles.len(), matmuls);
    // The bundles around the gap, from the truth.
    // kernel -> bundle -> (first start, last end, units, instructions)
    type Bundle = (i64, i64, BTreeSet<String>, i64);
    let mut bundles: BTreeMap<usize, BTreeMap<i64, Bundle>> = BTreeMap::new();
    for x in &t.instructions {
        let b = bundles
            .entry(x.kernel)
            .or_default()
            .entry(x.bundle)
            .or_insert((i64::MAX, i64::MIN, BTreeSet::new(), 0));
        b.0 = b.0.min(x.offset_ps);
        b.1 = b.1.max(x.offset_ps + x.duration_ps);
        b.2.insert(x.unit.clone());
        b.3 += 1;
    }
    let (kernel, per_bundle) = bundles
        .iter()
        .find(|(k, _)| t.kernels[**k].pallas_name == "matmul_kernel")
        .unwrap();
    let numbers: Vec<i64> = per_bundle.keys().copied().collect();
    let gap_at = numbers.windows(2).find(|w| w[1] > w[0] + 1).unwrap();
    let gap_ps = per_bundle[&gap_at[1]].0 - per_bundle[&gap_at[0]].1;
    assert_eq!(gap_at[1] - gap_at[0] - 1, BUBBLE_BUNDLES);
    assert_eq!(gap_ps, BUBBLE_BUNDLES * BUNDLE_PS);
    for r in &bubbles {
        assert_eq!(s(r, "kernel"), t.kernels[*kernel].display_name);
        assert_eq!(i(r, "bundle_number"), gap_at[0] + 1);
        assert_eq!(i(r, "gap_bundles"), BUBBLE_BUNDLES);
        assert_eq!(i(r, "gap_ps"), gap_ps);
    }
    // Bundle rows: one per (kernel execution, bundle) with its units.
    let got = rows(
        "SELECT count(*) AS n, sum(instructions) AS instructions, sum(units) AS units \
         FROM bundle_stats WHERE row_kind = 'bundle'",
    );
    let n: usize = bundles.values().map(|b| b.len()).sum();
    let units: usize = bundles
        .values()
        .flat_map(|b| b.values())
        .map(|b| b.2.len())
        .sum();
    assert_eq!(i(&got[0], "n") as usize, n);
    assert_eq!(i(&got[0], "instructions") as usize, t.instructions.len());
    assert_eq!(i(&got[0], "units") as usize, units);
}

#[test]
fn instruction_mix_and_source_hotspots_count_per_kernel() {
    let t = truth();
    let mut mix: BTreeMap<(String, String, String), (i64, i64)> = BTreeMap::new();
    let mut lines: BTreeMap<(String, String, i64), (i64, BTreeSet<String>)> = BTreeMap::new();
    for x in &t.instructions {
        let k = t.kernels[x.kernel].display_name.clone();
        let m = mix
            .entry((k.clone(), x.unit.clone(), x.name.clone()))
            .or_default();
        m.0 += 1;
        m.1 += x.duration_ps;
        let l = lines
            .entry((k, x.source_file.clone(), x.source_line))
            .or_default();
        l.0 += 1;
        l.1.insert(x.unit.clone());
    }
    let got: BTreeMap<(String, String, String), (i64, i64)> =
        rows("SELECT kernel, unit, name, instructions, total_ps FROM instruction_mix")
            .iter()
            .map(|r| {
                (
                    (s(r, "kernel"), s(r, "unit"), s(r, "name")),
                    (i(r, "instructions"), i(r, "total_ps")),
                )
            })
            .collect();
    assert_eq!(got, mix);
    let got: BTreeMap<(String, String, i64), (i64, BTreeSet<String>)> = rows(
        "SELECT kernel, source_file, source_line, instructions, unit_names FROM source_hotspots",
    )
    .iter()
    .map(|r| {
        let units = r["unit_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        (
            (s(r, "kernel"), s(r, "source_file"), i(r, "source_line")),
            (i(r, "instructions"), units),
        )
    })
    .collect();
    assert_eq!(got, lines);
}

#[test]
fn llo_concurrency_splits_each_kernel_into_memory_compute_both_neither() {
    let t = truth();
    let offsets = kernel_offsets(&t);
    let got = rows(&format!(
        "SELECT {KERNEL_KEY}, {KERNEL_OFFSET_SQL} AS kernel_offset, c.memory_busy_ps, \
                c.compute_busy_ps, c.overlap_ps, c.memory_only_ps, c.compute_only_ps, c.neither_ps \
         FROM llo_concurrency c \
         JOIN events k ON k.trace_id = c.trace_id AND k.event_id = c.kernel_event_id \
         JOIN devices d ON d.trace_id = c.trace_id AND d.device_id = c.device_id"
    ));
    let pallas = t
        .kernels
        .iter()
        .filter(|k| !k.pallas_name.is_empty())
        .count();
    assert_eq!(got.len(), pallas);
    let mut saw_overlap = false;
    for r in &got {
        let kernel = offsets[&(i(r, "core") as usize, i(r, "kernel_offset"))];
        let spans = |units: &[&str]| -> Vec<(i64, i64)> {
            t.instructions
                .iter()
                .filter(|x| {
                    x.kernel == kernel
                        && units
                            .iter()
                            .any(|u| x.unit == *u || (*u == "MXU" && x.unit.starts_with("MXU")))
                })
                .map(|x| (x.offset_ps, x.offset_ps + x.duration_ps))
                .collect()
        };
        let memory = spans(&["VLD", "VST"]);
        let compute = spans(&["VALU", "EUP", "XLU", "MXU"]);
        let (m, c) = (union_ps(memory.clone()), union_ps(compute.clone()));
        let either = union_ps([memory, compute].concat());
        assert_eq!(i(r, "memory_busy_ps"), m);
        assert_eq!(i(r, "compute_busy_ps"), c);
        assert_eq!(i(r, "overlap_ps"), m + c - either);
        assert_eq!(i(r, "memory_only_ps"), either - c);
        assert_eq!(i(r, "compute_only_ps"), either - m);
        assert_eq!(i(r, "neither_ps"), t.kernels[kernel].duration_ps - either);
        saw_overlap |= m + c - either > 0;
    }
    assert!(saw_overlap, "the matmul main loop overlaps MXU with loads");
}

#[test]
fn llo_regions_are_kernel_scopes_of_their_kernel() {
    let t = truth();
    let offsets = kernel_offsets(&t);
    let got = rows(&format!(
        "SELECT {KERNEL_KEY}, {KERNEL_OFFSET_SQL} AS kernel_offset, s.source, s.scope, \
                s.kernel, s.start_ps - k.ts_ps AS rel_ps, s.dur_ps \
         FROM kernel_scopes s \
         JOIN events k ON k.trace_id = s.trace_id AND k.event_id = s.kernel_event_id \
         JOIN tracks kt ON kt.trace_id = k.trace_id AND kt.track_id = k.track_id \
         JOIN devices d ON d.trace_id = kt.trace_id AND d.device_id = kt.device_id"
    ));
    assert_eq!(got.len(), t.regions.len());
    let mut got_rows: Vec<_> = got
        .iter()
        .map(|r| {
            let kernel = offsets[&(i(r, "core") as usize, i(r, "kernel_offset"))];
            assert_eq!(s(r, "kernel"), t.kernels[kernel].display_name);
            (
                kernel,
                s(r, "source"),
                s(r, "scope"),
                i(r, "rel_ps"),
                i(r, "dur_ps"),
            )
        })
        .collect();
    let mut want: Vec<_> = t
        .regions
        .iter()
        .map(|g| {
            let source = match g.line.as_str() {
                "LLO Ops" => "llo_ops",
                "Pallas Primitives" => "pallas_primitives",
                _ => "source_code",
            };
            (
                g.kernel,
                source.to_string(),
                g.name.clone(),
                g.offset_ps - t.kernels[g.kernel].offset_ps,
                g.duration_ps,
            )
        })
        .collect();
    got_rows.sort();
    want.sort();
    assert_eq!(got_rows, want);
    // Cycle-level summaries leave timed LLO regions out.
    assert!(rows("SELECT 1 AS one FROM warp_scopes").is_empty());
}

fn expected(name: &str) -> Value {
    json_fixture(&format!("tpu/expected/synthetic_llo.{name}.json"))
}

/// XProf 2.24.2 `list_xplane_lines`: the lanes are shaped as XProf expects
/// (`capture_valid_for_llo_analysis`), and its line inventory is ours.
#[test]
fn xprof_takes_the_synthetic_file_for_an_llo_capture() {
    let x = expected("list_xplane_lines");
    assert_eq!(x["capture_valid_for_llo_analysis"], true);
    assert_eq!(x["capture_valid_for_device_analysis"], true);
    // The `TC Stats` line makes it a counter-sampling capture too.
    assert_eq!(x["capture_valid_for_counter_sampling"], true);
    let got = rows(
        "SELECT d.name AS plane, t.name AS line, t.event_count FROM tracks t \
         JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id",
    );
    let got: BTreeSet<(String, String, i64)> = got
        .iter()
        .map(|r| (s(r, "plane"), s(r, "line"), i(r, "event_count")))
        .collect();
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
    assert_eq!(got, want);
}

/// XProf 2.24.2 `get_device_time_attribution`: per line name, the union of
/// the line's intervals over every device plane (XProf merges the planes'
/// lines of one name). `busy_ps` over the same events is the same time.
#[test]
fn busy_time_per_line_equals_xprofs_device_time_attribution() {
    let x = expected("device_time_attribution");
    let want: BTreeMap<String, i64> = x["by_line_duration_ns"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
        .collect();
    let got: BTreeMap<String, i64> = rows(
        "SELECT t.name AS line, busy_ps(e.ts_ps, e.ts_ps + e.dur_ps) AS busy_ps \
         FROM events e JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id \
         JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id \
         WHERE d.name LIKE '/device:%' GROUP BY t.name",
    )
    .iter()
    .map(|r| {
        // Lines of instants (counter samples) have no busy time: XProf
        // says 0.
        let ps = r.get("busy_ps").and_then(Value::as_i64).unwrap_or(0);
        // Every time of the synthetic file is whole ns: XProf's ns
        // truncation loses nothing.
        assert_eq!(ps % 1000, 0);
        (s(r, "line"), ps / 1000)
    })
    .collect();
    assert_eq!(got, want);
    let kernels = rows(
        "SELECT busy_ps(e.ts_ps, e.ts_ps + e.dur_ps) AS busy_ps FROM events e JOIN tracks t \
         ON t.trace_id = e.trace_id AND t.track_id = e.track_id WHERE t.kind = 'xla_ops'",
    );
    assert_eq!(
        i(&kernels[0], "busy_ps") / 1000,
        x["total_device_duration_ns"].as_i64().unwrap()
    );
}

/// XProf 2.24.2 `get_kernel_stats --include_intra_kernel_regions=True
/// --limit=0`: kernel records (by full HLO name) and intra-kernel region
/// records (`LLO Ops`, `Pallas Primitives` and every `* Instructions`
/// line, by name over the whole file) have our counts and durations:
/// kernels from `XLA Ops`, regions from `kernel_scopes` and
/// `llo_instructions`.
#[test]
fn kernel_and_region_stats_equal_xprofs_kernel_stats() {
    let x = expected("kernel_stats_regions");
    let records = x.as_array().unwrap();
    let mut want: BTreeMap<(bool, String), (i64, f64)> = BTreeMap::new();
    for r in records {
        want.insert(
            (
                r["is_intra_kernel_region"].as_bool().unwrap(),
                r["kernel_name"].as_str().unwrap().to_string(),
            ),
            (
                r["execution_count"].as_i64().unwrap(),
                r["total_duration_us"].as_f64().unwrap(),
            ),
        );
    }
    let mut got: BTreeMap<(bool, String), (i64, f64)> = BTreeMap::new();
    let mut add = |region: bool, sql: &str| {
        for r in rows(sql) {
            let e = got.entry((region, s(&r, "name"))).or_insert((0, 0.0));
            e.0 += i(&r, "n");
            e.1 += i(&r, "ps") as f64 / 1e6;
        }
    };
    add(
        false,
        "SELECT e.name, count(*) AS n, sum(e.dur_ps) AS ps FROM events e JOIN tracks t \
         ON t.trace_id = e.trace_id AND t.track_id = e.track_id \
         WHERE t.kind IN ('xla_ops', 'pallas') GROUP BY e.name",
    );
    add(
        true,
        "SELECT scope AS name, count(*) AS n, sum(dur_ps) AS ps FROM kernel_scopes \
         WHERE source IN ('llo_ops', 'pallas_primitives') GROUP BY scope",
    );
    add(
        true,
        "SELECT name, count(*) AS n, sum(dur_ps) AS ps FROM llo_instructions GROUP BY name",
    );
    assert_eq!(got.len(), want.len(), "{got:?}\n{want:?}");
    for (k, (n, us)) in &want {
        let (gn, gus) = got[k];
        assert_eq!(gn, *n, "{k:?}");
        assert!((gus - us).abs() < 1e-4, "{k:?}: {gus} vs {us}");
    }
}

/// The dataset written as Parquet answers the same as the file.
#[test]
fn llo_views_round_trip_through_parquet() {
    let (dir, _) = dataset_of(&[fixture(FIXTURE)]);
    let sql = "SELECT (SELECT count(*) FROM llo_instructions) AS instructions, \
                      (SELECT count(*) FROM bundle_stats WHERE row_kind = 'bubble') AS bubbles, \
                      (SELECT sum(busy_ps) FROM unit_utilization) AS busy, \
                      (SELECT sum(overlap_ps) FROM llo_concurrency) AS overlap, \
                      (SELECT count(*) FROM kernel_scopes) AS scopes";
    let from_file = rows(sql);
    let from_parquet = tokio_run(query_rows(&[PathBuf::from(dir.path())], sql));
    assert_eq!(from_file, from_parquet);
    assert_eq!(
        i(&from_file[0], "instructions") as usize,
        truth().instructions.len()
    );
}

/// Counter samples: the `TC Stats` hardware counters and the
/// `LLO Utilization` series, with the unit each measures, and
/// `utilization_viewer`'s achieved/peak with the facts file's formulas,
/// computed here from the generator's own sample values.
#[test]
fn tpu_counters_name_their_units_and_utilization_divides_by_cycles() {
    let t = truth();
    let got = rows(
        "SELECT d.ordinal AS core, u.sample, u.name, u.unit, u.achieved, u.peak, u.utilization \
         FROM utilization_viewer u JOIN devices d \
         ON d.trace_id = u.trace_id AND d.device_id = u.device_id",
    );
    let mut want = BTreeMap::new();
    for c in &t.counters {
        let v = |n: &str| c.values.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let cycles = v("cycles").unwrap();
        let sum = |a: &str, b: &str| v(a).unwrap() + v(b).unwrap();
        for (name, achieved, peak) in [
            (
                "Scalar Unit",
                sum("count_s0_instruction", "count_s1_instruction"),
                2.0 * cycles,
            ),
            (
                "Vector ALUs",
                sum("count_v0_instruction", "count_v1_instruction"),
                2.0 * cycles,
            ),
            ("Vector Stores", v("count_vector_store").unwrap(), cycles),
            ("Vector Loads", v("count_vector_load").unwrap(), cycles),
            ("MXU", v("count_matmul").unwrap(), cycles / 8.0),
            ("XU", v("count_transpose").unwrap(), cycles),
        ] {
            want.insert(
                (c.core as i64, c.step as i64, name.to_string()),
                (achieved, peak),
            );
        }
    }
    assert_eq!(got.len(), want.len());
    for r in &got {
        let key = (i(r, "core"), i(r, "sample"), s(r, "name"));
        let (achieved, peak) = want[&key];
        assert_eq!(r["achieved"].as_f64().unwrap(), achieved, "{key:?}");
        assert_eq!(r["peak"].as_f64().unwrap(), peak, "{key:?}");
        assert!((r["utilization"].as_f64().unwrap() - achieved / peak).abs() < 1e-12);
    }
    // The LLO Utilization series: per unit, the bundles it was busy.
    let series = rows(
        "SELECT d.ordinal AS core, u.name, u.unit, sum(u.value) AS busy_bundles \
         FROM unit_counters u JOIN devices d ON d.trace_id = u.trace_id AND d.device_id = u.device_id \
         WHERE u.is_llo_utilization GROUP BY d.ordinal, u.name, u.unit",
    );
    assert_eq!(
        series.len(),
        LLO_UTILIZATION_SERIES.len() * LloSpec::default().cores
    );
    for r in &series {
        let unit = LLO_UTILIZATION_SERIES
            .iter()
            .find(|(n, _)| *n == s(r, "name"))
            .unwrap()
            .1;
        assert_eq!(s(r, "unit"), unit);
        let busy: i64 = t
            .instructions
            .iter()
            .filter(|x| x.core as i64 == i(r, "core") && x.unit == unit)
            .map(|x| x.duration_ps / BUNDLE_PS)
            .sum();
        assert_eq!(r["busy_bundles"].as_f64().unwrap(), busy as f64, "{r:?}");
    }
    // Hardware counters of a known unit are named; `cycles` has none.
    let units: BTreeMap<String, Option<String>> =
        rows("SELECT DISTINCT name, unit FROM unit_counters WHERE NOT is_llo_utilization")
            .iter()
            .map(|r| {
                (
                    s(r, "name"),
                    r.get("unit").and_then(Value::as_str).map(String::from),
                )
            })
            .collect();
    assert_eq!(units["cycles"], None);
    assert_eq!(units["count_s1_instruction"].as_deref(), Some("SALU"));
    assert_eq!(units["count_matmul"].as_deref(), Some("MXU"));
    // The static LLO module is listed, not decoded.
    let protos = rows("SELECT device_name, bytes FROM llo_protos");
    assert_eq!(protos.len(), 1);
    assert_eq!(s(&protos[0], "device_name"), "/host:metadata");
    assert_eq!(i(&protos[0], "bytes") as usize, t.llo_proto_bytes);
}
