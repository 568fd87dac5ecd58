//! The rest of XProf's static LLO analysis as tables: `register_pressure`
//! (`llo_register_live_ranges`, `llo_register_pressure`), `bdi_stalls`
//! (`llo_bdi_stalls`), `source_for_bundle` (`llo_bundle_sources`) and
//! `target_info` (`llo_target_info`), each compared with XProf 2.24.2's
//! answer on the same payload (tests/fixtures/tpu/expected/, made as
//! tests/fixtures/tpu/README.md says).
//!
//! Two inputs: the synthetic kernel-profiling capture (its Pallas kernel,
//! shaped after the real one) and a hand-made payload holding an edge case
//! of each rule (`xprof_testdata::llo_proto::static_cases_proto`).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use serde_json::Value;
use xprof_testdata::llo_capture::{HLO_OP, static_cases_space_bytes};

const CAPTURE: &str = "tpu/synthetic_capture.xplane.pb";
const CASES: &str = "tpu/synthetic_llo_static.xplane.pb";
const CASES_OP: &str = "edge_cases.1";

/// The two inputs: (fixture, its name in expected/, the HLO op).
const INPUTS: [(&str, &str, &str); 2] = [
    (CAPTURE, "synthetic_capture", HLO_OP),
    (CASES, "synthetic_llo_static", CASES_OP),
];

fn rows(fixture_rel: &str, sql: &str) -> Vec<Row> {
    tokio_run(query_rows(&[fixture(fixture_rel)], sql))
}

fn oi(r: &Row, k: &str) -> Option<i64> {
    r.get(k)
        .filter(|v| !v.is_null())
        .map(|v| v.as_i64().unwrap_or_else(|| panic!("{k} in {r:?}")))
}

/// XProf's answer (its `data`) for `mode` on `name`.
fn xprof(name: &str, mode: &str) -> Value {
    let v = json_fixture(&format!("tpu/expected/{name}.{mode}.json"));
    assert_eq!(v["status"], "OK", "{name} {mode}: {v}");
    v["data"].clone()
}

#[test]
fn the_static_cases_fixture_is_the_generators_output() {
    assert_generated_fixture(
        CASES,
        &static_cases_space_bytes(),
        "static_cases_space_bytes()",
        "tests/fixtures/tpu/README.md",
    );
}

/// Region path of every bundle, as `llo_bundle_units` and `llo_regions`
/// give it (XProf prints it beside each bundle).
fn bundle_paths(fx: &str, op: &str) -> BTreeMap<i64, String> {
    rows(
        fx,
        &format!(
            "SELECT DISTINCT u.bundle, r.region_path FROM llo_bundle_units u \
             JOIN llo_regions r ON r.trace_id = u.trace_id AND r.metadata_id = u.metadata_id \
               AND r.region_id = u.region_id \
             WHERE u.hlo_op = '{op}'"
        ),
    )
    .iter()
    .map(|r| (i(r, "bundle"), s(r, "region_path")))
    .collect()
}

/// `register_pressure`: the number of live ranges, the peak per register
/// type and the 15 hottest bundles (with their region and live registers
/// by type) are what SQL over the two tables gives.
#[test]
fn register_pressure_is_xprofs() {
    for (fx, name, op) in INPUTS {
        let x = xprof(name, "register_pressure");
        let n = rows(
            fx,
            &format!("SELECT count(*) AS n FROM llo_register_live_ranges WHERE hlo_op = '{op}'"),
        );
        assert_eq!(
            i(&n[0], "n"),
            x["total_live_ranges"].as_i64().unwrap(),
            "{name}"
        );
        assert!(i(&n[0], "n") > 0, "{name}: no live range compared");
        let peaks: BTreeMap<String, i64> = rows(
            fx,
            &format!(
                "SELECT register_type, max(live) AS peak FROM llo_register_pressure \
                 WHERE hlo_op = '{op}' GROUP BY register_type"
            ),
        )
        .iter()
        .map(|r| (s(r, "register_type"), i(r, "peak")))
        .collect();
        let want: BTreeMap<String, i64> = x["peak_by_register_type"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(peaks, want, "{name}");
        let hottest = rows(
            fx,
            &format!(
                "SELECT bundle, sum(live) AS total FROM llo_register_pressure \
                 WHERE hlo_op = '{op}' GROUP BY bundle ORDER BY total DESC, bundle LIMIT 15"
            ),
        );
        let by_type: BTreeMap<(i64, String), i64> = rows(
            fx,
            &format!(
                "SELECT bundle, register_type, live FROM llo_register_pressure WHERE hlo_op = '{op}'"
            ),
        )
        .iter()
        .map(|r| ((i(r, "bundle"), s(r, "register_type")), i(r, "live")))
        .collect();
        let paths = bundle_paths(fx, op);
        let want = x["hottest_bundles"].as_array().unwrap();
        assert_eq!(hottest.len(), want.len(), "{name}");
        for (r, w) in hottest.iter().zip(want) {
            let b = i(r, "bundle");
            assert_eq!(b, w["bundle"].as_i64().unwrap(), "{name}");
            assert_eq!(
                i(r, "total"),
                w["total_live"].as_i64().unwrap(),
                "{name} {b}"
            );
            assert_eq!(paths[&b], w["region"].as_str().unwrap(), "{name} {b}");
            for (ty, live) in w["by_type"].as_object().unwrap() {
                assert_eq!(
                    by_type[&(b, ty.clone())],
                    live.as_i64().unwrap(),
                    "{name} {b} {ty}"
                );
            }
            let ours = by_type.keys().filter(|(bb, _)| *bb == b).count();
            assert_eq!(ours, w["by_type"].as_object().unwrap().len(), "{name} {b}");
        }
    }
}

/// Live ranges from the hand-made payload's rules, one by one: a range
/// reaches its last user, a user before the definition does not pull it
/// back, a later instruction with the same id replaces the earlier, a
/// negative register opens none, an unscheduled definition starts at 0.
#[test]
fn live_ranges_follow_the_rules_case_by_case() {
    let got: BTreeMap<i64, (String, i64, i64)> = rows(
        CASES,
        "SELECT instruction_id, register_type, start_bundle, end_bundle FROM llo_register_live_ranges",
    )
    .iter()
    .map(|r| {
        (
            i(r, "instruction_id"),
            (s(r, "register_type"), i(r, "start_bundle"), i(r, "end_bundle")),
        )
    })
    .collect();
    let want: BTreeMap<i64, (String, i64, i64)> = [
        (1, ("VREG", 0, 1)),
        (2, ("VREG", 0, 1)),
        (3, ("VREG", 1, 3)),
        (5, ("SREG", 3, 3)),
        (7, ("SREG", 1, 1)),
        (9, ("VMREG", 2, 2)),
        (10, ("PREG", 0, 7)),
        (11, ("RPREG", 5, 7)),
    ]
    .into_iter()
    .map(|(id, (t, a, b))| (id, (t.to_string(), a, b)))
    .collect();
    assert_eq!(got, want);
}

/// `bdi_stalls`: the annotated instructions, their codes in order, the
/// histogram and each instruction's bundle and region.
#[test]
fn bdi_stalls_are_xprofs() {
    for (fx, name, op) in INPUTS {
        let x = xprof(name, "bdi_stalls");
        let got = rows(
            fx,
            &format!(
                "SELECT s.instruction_id, s.bundle, s.code, s.position, r.region_path \
                 FROM llo_bdi_stalls s LEFT JOIN llo_regions r ON r.trace_id = s.trace_id \
                   AND r.metadata_id = s.metadata_id AND r.region_id = s.region_id \
                 WHERE s.hlo_op = '{op}' ORDER BY s.instruction_id, s.position"
            ),
        );
        let mut codes: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for r in &got {
            codes
                .entry(i(r, "instruction_id"))
                .or_default()
                .push(s(r, "code"));
        }
        assert_eq!(
            codes.len() as i64,
            x["total_annotated_instructions"].as_i64().unwrap(),
            "{name}"
        );
        let mut hist: BTreeMap<String, i64> = BTreeMap::new();
        for r in &got {
            *hist.entry(s(r, "code")).or_default() += 1;
        }
        let want: BTreeMap<String, i64> = x["code_histogram"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_i64().unwrap()))
            .collect();
        assert_eq!(hist, want, "{name}");
        for w in x["instructions"].as_array().unwrap() {
            let id = w["ordinal"].as_i64().unwrap();
            let want: Vec<String> = w["codes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            assert_eq!(codes[&id], want, "{name} {id}");
            let r = got.iter().find(|r| i(r, "instruction_id") == id).unwrap();
            // XProf prints an unscheduled instruction's bundle as 0; the
            // table keeps it NULL.
            assert_eq!(
                oi(r, "bundle").unwrap_or(0),
                w["bundle"].as_i64().unwrap(),
                "{name} {id}"
            );
            assert_eq!(
                s(r, "region_path"),
                w["region"].as_str().unwrap(),
                "{name} {id}"
            );
        }
    }
    let unscheduled = rows(
        CASES,
        "SELECT bundle FROM llo_bdi_stalls WHERE instruction_id = 10",
    );
    assert!(unscheduled.iter().all(|r| oi(r, "bundle").is_none()));
    // The hand-made payload has annotated instructions to compare.
    assert!(
        !xprof("synthetic_llo_static", "bdi_stalls")["instructions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// `source_for_bundle`, asked of XProf bundle by bundle: every bundle's
/// sources and region path, both ways (a bundle XProf gives sources for
/// has exactly those rows, and every bundle with rows was asked).
#[test]
fn bundle_sources_are_xprofs_source_for_bundle() {
    for (fx, name, op) in INPUTS {
        let x = json_fixture(&format!("tpu/expected/{name}.source_for_bundle.json"));
        let asked = x.as_array().unwrap();
        let got = rows(
            fx,
            &format!(
                "SELECT bundle, source, instructions FROM llo_bundle_sources \
                 WHERE hlo_op = '{op}' ORDER BY bundle, source"
            ),
        );
        let mut ours: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for r in &got {
            assert!(i(r, "instructions") > 0);
            ours.entry(i(r, "bundle")).or_default().push(s(r, "source"));
        }
        let paths = bundle_paths(fx, op);
        let mut asked_bundles = BTreeSet::new();
        for a in asked {
            assert_eq!(a["status"], "OK", "{name}: {a}");
            let d = &a["data"];
            let b = d["bundle"].as_i64().unwrap();
            asked_bundles.insert(b);
            let want: Vec<String> = d["sources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            assert_eq!(
                d["frames"], d["sources"],
                "{name} {b}: frames differ from sources"
            );
            assert_eq!(
                ours.get(&b).cloned().unwrap_or_default(),
                want,
                "{name} bundle {b}"
            );
            assert_eq!(
                paths.get(&b).map(String::as_str).unwrap_or(""),
                d["region_path"].as_str().unwrap(),
                "{name} bundle {b}"
            );
        }
        let with_rows: BTreeSet<i64> = ours.keys().copied().collect();
        assert!(
            with_rows.is_subset(&asked_bundles),
            "{name}: bundles never asked of XProf: {:?}",
            with_rows.difference(&asked_bundles).collect::<Vec<_>>()
        );
        assert!(!with_rows.is_empty(), "{name}: no source compared");
    }
}

/// `target_info`: the key fields XProf prints, NULL where it prints none.
#[test]
fn target_info_is_xprofs() {
    for (fx, name, op) in INPUTS {
        let x = xprof(name, "target_info");
        assert_eq!(x["has_target_arguments"], true, "{name}");
        let got = rows(
            fx,
            &format!("SELECT * FROM llo_target_info WHERE hlo_op = '{op}'"),
        );
        assert_eq!(got.len(), 1, "{name}");
        let r = &got[0];
        let k = x["key_fields"].as_object().unwrap();
        assert_eq!(i(r, "replica_count"), k["replica_count"].as_i64().unwrap());
        assert_eq!(
            i(r, "reserved_hbm_usage_bytes"),
            k["reserved_hbm_usage_bytes"].as_i64().unwrap()
        );
        assert_eq!(
            r.get("chip_config_name").and_then(|v| v.as_str()),
            k.get("chip_config_name").and_then(|v| v.as_str()),
            "{name}"
        );
        assert_eq!(
            oi(r, "platform_type"),
            k.get("platform_type").and_then(|v| v.as_i64()),
            "{name}"
        );
        assert_eq!(
            r.get("enhanced_barrier_enabled").and_then(|v| v.as_bool()),
            k.get("enhanced_barrier_enabled").and_then(|v| v.as_bool()),
            "{name}"
        );
        let bounds = |x: &str, y: &str, z: &str| match (oi(r, x), oi(r, y), oi(r, z)) {
            (Some(x), Some(y), Some(z)) => Some(format!("x={x}, y={y}, z={z}")),
            _ => None,
        };
        assert_eq!(
            bounds("chips_per_host_x", "chips_per_host_y", "chips_per_host_z").as_deref(),
            k.get("chips_per_host_bounds").and_then(|v| v.as_str()),
            "{name}"
        );
        assert_eq!(
            bounds("host_x", "host_y", "host_z").as_deref(),
            k.get("host_bounds").and_then(|v| v.as_str()),
            "{name}"
        );
    }
    // A program without field 7 has no row (the capture's small fusion).
    let none = rows(
        CAPTURE,
        "SELECT count(*) AS n FROM llo_target_info WHERE hlo_op = 'fusion.28'",
    );
    assert_eq!(i(&none[0], "n"), 0);
}

/// The capture's kernel: the tables agree with the generator's own
/// program, bundle by bundle (each load is read by the next matmul or add
/// and each add by the next store, so a range runs from a load to its
/// reader).
#[test]
fn capture_pressure_is_the_sum_of_its_ranges() {
    let ranges = rows(
        CAPTURE,
        &format!(
            "SELECT register_type, start_bundle, end_bundle FROM llo_register_live_ranges \
             WHERE hlo_op = '{HLO_OP}'"
        ),
    );
    let mut want: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for r in &ranges {
        assert!(i(r, "end_bundle") >= i(r, "start_bundle"));
        for b in i(r, "start_bundle")..=i(r, "end_bundle") {
            *want.entry((b, s(r, "register_type"))).or_default() += 1;
        }
    }
    let got: BTreeMap<(i64, String), i64> = rows(
        CAPTURE,
        &format!(
            "SELECT bundle, register_type, live FROM llo_register_pressure WHERE hlo_op = '{HLO_OP}'"
        ),
    )
    .iter()
    .map(|r| ((i(r, "bundle"), s(r, "register_type")), i(r, "live")))
    .collect();
    assert_eq!(got, want);
    assert!(
        ranges
            .iter()
            .any(|r| i(r, "end_bundle") > i(r, "start_bundle")),
        "no range spans bundles"
    );
}
