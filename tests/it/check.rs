//! `xprof-sql check`: rules files of SQL checks over real profiles and a
//! baseline. The evidence of a failing rule is compared with the same
//! answer computed another way (each side's `hlo_stats` alone, the steps
//! of `step_stats`, `llo_region_profile`); the exit statuses 0, 1 and 2
//! and the JUnit file come from the command itself.

use crate::common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use xprof_sql::query::check::{Status, parse_rules, run_rules};
use xprof_sql::query::{OpenOptions, ProfileSession};

const READY: &str = "examples/checks/ready.sql";

fn ready() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(READY)
}

/// The ready rules file with only the rules named `keep`.
fn ready_rules(keep: &[&str]) -> Vec<xprof_sql::query::check::Rule> {
    let text = std::fs::read_to_string(ready()).unwrap();
    let rules = parse_rules(&ready(), &text).unwrap();
    let names: BTreeSet<&str> = rules.iter().map(|r| r.name.as_str()).collect();
    for k in keep {
        assert!(names.contains(k), "{k} is a ready check");
    }
    rules
        .into_iter()
        .filter(|r| keep.contains(&r.name.as_str()))
        .collect()
}

async fn session_of(inputs: &[PathBuf]) -> ProfileSession {
    let mut s = ProfileSession::new();
    for input in inputs {
        s.open(std::slice::from_ref(input), &OpenOptions::default())
            .await
            .unwrap();
    }
    s
}

/// Self time per (hlo_op, category) of one profile alone.
async fn self_times(input: &Path) -> BTreeMap<String, f64> {
    let rows = query_rows(
        &[input],
        "SELECT hlo_op, category, sum(total_self_time_us) AS us FROM hlo_stats GROUP BY 1, 2",
    )
    .await;
    rows.iter()
        .map(|r| (op_key(r), r["us"].as_f64().unwrap()))
        .collect()
}

/// `hlo_op category` of a row (a NULL category as empty: CPU ops have
/// none).
fn op_key(r: &Row) -> String {
    format!(
        "{} {}",
        s(r, "hlo_op"),
        r.get("category").and_then(|c| c.as_str()).unwrap_or("")
    )
}

fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Two real JAX CPU runs of one model, widths 128 (the baseline) and 512:
/// the ops `op_regressions` names are exactly those more than 5 % slower
/// among those that took 100 µs or more in the baseline, computed from
/// each run's `hlo_stats` alone; the same ops at widths 128 vs 128 pass.
#[tokio::test]
async fn op_regressions_name_the_ops_that_got_slower() {
    let base = cpu_fixture("jax_cpu_mlp_5steps_w128");
    let now = cpu_fixture("jax_cpu_mlp_5steps_w512");
    let (a, b) = (self_times(&base).await, self_times(&now).await);
    let want: BTreeSet<String> = a
        .iter()
        .filter(|(op, us)| **us >= 100.0 && b.get(*op).is_some_and(|n| n / **us > 1.05))
        .map(|(op, _)| op.clone())
        .collect();
    assert!(want.len() >= 3, "{want:?}");
    let session = session_of(&[now.clone(), base.clone()]).await;
    let rules = ready_rules(&["op_regressions", "new_ops", "vanished_ops"]);
    let report = run_rules(
        &session,
        &ready(),
        &rules,
        &params(&[("current", "0"), ("baseline", "1")]),
        1000,
    )
    .await;
    let regressions = &report.results[0];
    assert_eq!(regressions.status, Status::Failed);
    assert_eq!(regressions.rows, want.len());
    let got: BTreeSet<String> = rows_of(&regressions.evidence).iter().map(op_key).collect();
    assert_eq!(got, want);
    // New and vanished ops: the keys on one side only.
    let only = |x: &BTreeMap<String, f64>, y: &BTreeMap<String, f64>| -> BTreeSet<String> {
        x.keys().filter(|k| !y.contains_key(*k)).cloned().collect()
    };
    for (result, want) in [
        (&report.results[1], only(&b, &a)),
        (&report.results[2], only(&a, &b)),
    ] {
        let got: BTreeSet<String> = rows_of(&result.evidence).iter().map(op_key).collect();
        assert_eq!(got, want, "{}", result.rule.name);
        assert_eq!(result.passed(), want.is_empty());
    }
    // A run against itself: no regression, nothing new or gone.
    let same = session_of(&[base.clone(), base]).await;
    let report = run_rules(
        &same,
        &ready(),
        &rules,
        &params(&[("current", "0"), ("baseline", "1")]),
        5,
    )
    .await;
    assert!(report.results.iter().all(|r| r.passed()), "{report:?}");
}

/// `step_time_p90` on a real 20-step run: the nearest-rank p90 of the
/// steps, computed here, fails a ceiling just under it and passes one
/// just over it.
#[tokio::test]
async fn step_time_p90_holds_or_fails_at_the_p90() {
    let input = cpu_fixture("jax_cpu_mlp_20steps_w256");
    let steps = query_rows(&[&input], "SELECT device_id, dur_ps FROM step_stats").await;
    let mut by_device: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in &steps {
        by_device
            .entry(i(r, "device_id"))
            .or_default()
            .push(i(r, "dur_ps"));
    }
    assert_eq!(by_device.len(), 1);
    let durations = by_device.values_mut().next().unwrap();
    durations.sort_unstable();
    let rank = (0.9 * durations.len() as f64).ceil() as usize;
    let p90_ms = durations[rank - 1] as f64 / 1e9;
    let session = session_of(std::slice::from_ref(&input)).await;
    let rules = ready_rules(&["step_time_p90"]);
    for (ceiling, fails) in [(p90_ms * 0.999, true), (p90_ms * 1.001, false)] {
        let report = run_rules(
            &session,
            &ready(),
            &rules,
            &params(&[("current", "0"), ("max_p90_ms", &ceiling.to_string())]),
            5,
        )
        .await;
        let r = &report.results[0];
        assert_eq!(r.status == Status::Failed, fails, "{ceiling}: {r:?}");
        if fails {
            let rows = rows_of(&r.evidence);
            assert_eq!(rows.len(), 1);
            assert!(close(rows[0]["p90_ms"].as_f64().unwrap(), p90_ms));
            assert_eq!(i(&rows[0], "steps") as usize, durations.len());
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// A kernel-profiling check on the synthetic capture: the `acc` region's
/// MXU occupancy holds a floor under it and fails one over it, the
/// evidence being its `llo_region_profile` row.
#[tokio::test]
async fn a_region_occupancy_floor_holds_and_fails() {
    let input = fixture("tpu/synthetic_capture.xplane.pb");
    let acc = query_rows(
        &[&input],
        "SELECT region_id, mxu_pct FROM llo_region_profile WHERE named_scope LIKE '%acc'",
    )
    .await;
    assert_eq!(acc.len(), 1);
    let mxu = acc[0]["mxu_pct"].as_f64().unwrap();
    let session = session_of(std::slice::from_ref(&input)).await;
    let rules = ready_rules(&["region_occupancy_floor"]);
    for (floor, fails) in [((mxu - 1.0).floor(), false), ((mxu + 1.0).ceil(), true)] {
        let report = run_rules(
            &session,
            &ready(),
            &rules,
            &params(&[("current", "0"), ("min_pct", &floor.to_string())]),
            5,
        )
        .await;
        let r = &report.results[0];
        assert_eq!(r.status == Status::Failed, fails, "{floor}: {r:?}");
        if fails {
            let rows = rows_of(&r.evidence);
            assert_eq!(i(&rows[0], "region_id"), i(&acc[0], "region_id"));
            assert!(close(rows[0]["occupancy_pct"].as_f64().unwrap(), mxu));
        }
    }
}

/// The command's exit statuses: 0 all passed, 1 a rule failed, 2 a rule
/// could not run (bad SQL, a missing table, a parameter with no value) or
/// the check could not start (a rules file with no rule, a missing
/// input); a rule that cannot run is never a pass. `--junit` writes one
/// test case per rule with the failure's evidence.
#[test]
fn exit_statuses_say_passed_failed_or_could_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = cpu_fixture("jax_cpu_mlp_5steps_w128");
    let input = input.to_str().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let pass = write(
        "pass.sql",
        "-- check: ops_ran\nSELECT 1 WHERE (SELECT count(*) FROM hlo_stats) = 0;\n",
    );
    let fail = write(
        "fail.sql",
        "-- check: ops_ran\nSELECT 1 WHERE (SELECT count(*) FROM hlo_stats) = 0;\n\n\
         -- check: no_op_over_1us\n-- every op under 1 µs\n\
         SELECT hlo_op, total_self_time_us FROM hlo_stats WHERE total_self_time_us > 1 ORDER BY 2 DESC\n",
    );
    let (code, out, _) = cli(&["check", input, "--rules", &pass]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("PASS   ops_ran")
            && out.contains("1 rules: 1 passed, 0 failed, 0 could not run"),
        "{out}"
    );
    let junit = dir.path().join("junit.xml");
    let (code, out, _) = cli(&[
        "check",
        input,
        "--rules",
        &fail,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    let over: Vec<Row> = tokio_run(query_rows(
        &[cpu_fixture("jax_cpu_mlp_5steps_w128")],
        "SELECT hlo_op FROM hlo_stats WHERE total_self_time_us > 1",
    ));
    assert!(
        out.contains(&format!(
            "FAIL   no_op_over_1us  ({fail}:4): {} failing rows",
            over.len()
        )),
        "{out}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"2\" failures=\"1\" errors=\"0\""),
        "{xml}"
    );
    assert!(xml.contains("<failure message=\""), "{xml}");
    // Rules that cannot run: each an error naming its rule and line.
    let broken = write(
        "broken.sql",
        "-- check: fine\nSELECT 1 WHERE false\n\
         -- check: bad_sql\nSELEC nothing\n\
         -- check: no_table\nSELECT * FROM no_such_table\n\
         -- check: no_param\nSELECT * FROM hlo_stats WHERE total_self_time_us > ${ceiling}\n",
    );
    let (code, out, _) = cli(&["check", input, "--rules", &broken, "--format", "json"]);
    assert_eq!(code, 2, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let status: Vec<(&str, &str)> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        status,
        [
            ("fine", "pass"),
            ("bad_sql", "error"),
            ("no_table", "error"),
            ("no_param", "error")
        ]
    );
    for (k, line) in [(1, 3), (2, 5), (3, 7)] {
        let e = doc["rules"][k]["error"].as_str().unwrap();
        assert!(e.contains(&format!("broken.sql:{line}: rule ")), "{e}");
    }
    assert!(
        doc["rules"][2]["error"]
            .as_str()
            .unwrap()
            .contains("no_such_table")
    );
    assert!(
        doc["rules"][3]["error"]
            .as_str()
            .unwrap()
            .contains("${ceiling} has no value")
    );
    assert_eq!(doc["exit_code"], 2);
    // The same rule passes once its parameter is given.
    let (code, out, _) = cli(&[
        "check",
        input,
        "--rules",
        &broken,
        "--set",
        "ceiling=1e12",
        "--format",
        "json",
    ]);
    assert_eq!(code, 2, "bad_sql and no_table still cannot run: {out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["rules"][3]["status"], "pass");
    // A check that cannot start: 2 as well, never 0 or 1.
    let empty = write("empty.sql", "SELECT 1\n");
    let (code, _, err) = cli(&["check", input, "--rules", &empty]);
    assert_eq!(code, 2);
    assert!(err.contains("empty.sql:1: no rule"), "{err}");
    let (code, _, err) = cli(&["check", "/no/such/profile.xplane.pb", "--rules", &pass]);
    assert_eq!(code, 2, "{err}");
    // With --baseline, ${baseline} is the baseline's trace ids.
    let base = cpu_fixture("jax_cpu_mlp_5steps_w512");
    let (code, out, _) = cli(&[
        "check",
        input,
        "--baseline",
        base.to_str().unwrap(),
        "--rules",
        ready().to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let by_name: BTreeMap<&str, &str> = doc["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    // Every ready check runs on a real pair (none is an error): the
    // 128-wide run is no slower than the 512-wide baseline; the GPU, LLO
    // and PyTorch rules have no data in two JAX CPU runs, so the check
    // exits 3, not 0.
    assert!(by_name.values().all(|s| *s != "error"), "{out}");
    assert_eq!(by_name.len(), 12);
    assert_eq!(by_name["op_regressions"], "pass");
    for name in [
        "kernel_regressions",
        "kineto_op_regressions",
        "region_occupancy_floor",
    ] {
        assert_eq!(by_name[name], "no_data", "{name}: {out}");
    }
    assert_eq!(code, 3);
}
