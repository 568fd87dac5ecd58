//! Run-to-run diffs (`diff_*` table functions, `xprof-sql diff`): against
//! XProf 2.24.2's `diff_sessions` on two real GPU profiles, against the
//! views they compare (recomputed here per side) on two real CPU runs of
//! one model at two widths, and the command's verdicts and order.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use common::*;
use serde_json::Value;

fn f(r: &Row, k: &str) -> Option<f64> {
    r.get(k).and_then(Value::as_f64)
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Relative closeness for sums of the same floats in another order.
fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
}

#[tokio::test]
async fn device_time_and_kernels_are_xprofs_diff_sessions_numbers() {
    let xprof = json_fixture("gpu/expected/jax_gpu__jax_pallas.diff_sessions.json");
    let inputs = [gpu_fixture("jax_gpu"), gpu_fixture("jax_pallas")];
    // Device time: XProf's is the union of the device's kernel intervals.
    let busy = query_rows_with_nulls(
        &inputs,
        "SELECT sum(a_busy_us) AS a, sum(b_busy_us) AS b FROM diff_device_busy(0, 1) \
         WHERE device_kind <> 'host'",
    )
    .await;
    for (side, key) in [
        ("a", "baseline_total_device_duration_us"),
        ("b", "optimized_total_device_duration_us"),
    ] {
        let ours = round4(f(&busy[0], side).unwrap_or(0.0));
        assert_eq!(ours, xprof[key].as_f64().unwrap(), "{key}");
    }

    // Every kernel XProf lists, with its numbers; in XProf's order (by
    // the size of the change).
    let ours = query_rows_with_nulls(
        &inputs,
        "SELECT kernel_name, a_total_duration_us, b_total_duration_us, diff, ratio, \
                a_rank, b_rank, only_in \
         FROM diff_kernel_stats(0, 1) ORDER BY abs(diff) DESC, kernel_name",
    )
    .await;
    let theirs = xprof["kernel_diffs"].as_array().unwrap();
    assert!(!theirs.is_empty());
    assert_eq!(ours.len(), theirs.len(), "{ours:?}");
    for (o, t) in ours.iter().zip(theirs) {
        assert_eq!(s(o, "kernel_name"), t["kernel_name"].as_str().unwrap());
        let a = f(o, "a_total_duration_us").unwrap_or(0.0);
        let b = f(o, "b_total_duration_us").unwrap_or(0.0);
        assert_eq!(
            round4(a),
            t["baseline_duration_us"].as_f64().unwrap(),
            "{o:?}"
        );
        assert_eq!(
            round4(b),
            t["optimized_duration_us"].as_f64().unwrap(),
            "{o:?}"
        );
        assert_eq!(
            round4(f(o, "diff").unwrap()),
            t["delta_duration_us"].as_f64().unwrap(),
            "{o:?}"
        );
        // A kernel on one side only has no ratio and names its side.
        let only = o.get("only_in").and_then(Value::as_str);
        match (a > 0.0, b > 0.0) {
            (true, true) => assert!(close(f(o, "ratio").unwrap(), b / a) && only.is_none()),
            (true, false) => assert_eq!(only, Some("a"), "{o:?}"),
            (false, true) => assert_eq!(only, Some("b"), "{o:?}"),
            _ => panic!("a row on neither side: {o:?}"),
        }
    }

    // HLO ops: XProf has none for jax_gpu (NO_DATA) and its pallas_call
    // for jax_pallas.
    let hlo = query_rows_with_nulls(
        &inputs,
        "SELECT hlo_op, category, a_rank, b_self_time_us, b_total_time_us, b_occurrences \
         FROM diff_hlo_stats(0, 1)",
    )
    .await;
    assert_eq!(xprof["hlo_stats"]["baseline"]["status"], "NO_DATA");
    assert!(hlo.iter().all(|r| r["a_rank"].is_null()), "{hlo:?}");
    let records = xprof["hlo_stats"]["optimized"]["records"]
        .as_array()
        .unwrap();
    assert_eq!(hlo.len(), records.len());
    for t in records {
        let o = hlo
            .iter()
            .find(|r| r["hlo_op"] == t["op_name"])
            .unwrap_or_else(|| panic!("{} missing: {hlo:?}", t["op_name"]));
        assert_eq!(o["category"], t["category"]);
        assert_eq!(
            round4(f(o, "b_self_time_us").unwrap()),
            t["total_self_time_us"].as_f64().unwrap()
        );
        assert_eq!(
            round4(f(o, "b_total_time_us").unwrap()),
            t["total_time_us"].as_f64().unwrap()
        );
        assert_eq!(i(o, "b_occurrences"), t["occurrences"].as_i64().unwrap());
    }
}

/// `(hlo_op, category)` → (self µs, total µs, occurrences) of one trace's
/// `hlo_stats` rows, summed here.
async fn hlo_by_key(
    inputs: &[std::path::PathBuf],
    trace: i64,
) -> BTreeMap<(String, String), (f64, f64, i64)> {
    let rows = query_rows_with_nulls(
        inputs,
        &format!(
            "SELECT hlo_op, coalesce(category, '') AS category, total_self_time_us, total_time_us, occurrences \
             FROM hlo_stats WHERE trace_id = {trace}"
        ),
    )
    .await;
    let mut out: BTreeMap<(String, String), (f64, f64, i64)> = BTreeMap::new();
    for r in rows {
        let e = out.entry((s(&r, "hlo_op"), s(&r, "category"))).or_default();
        e.0 += f(&r, "total_self_time_us").unwrap();
        e.1 += f(&r, "total_time_us").unwrap();
        e.2 += i(&r, "occurrences");
    }
    out
}

/// Keys ranked by self time (largest first), then by key.
fn ranks(side: &BTreeMap<(String, String), (f64, f64, i64)>) -> BTreeMap<(String, String), i64> {
    let mut keys: Vec<_> = side.iter().collect();
    keys.sort_by(|x, y| y.1.0.total_cmp(&x.1.0).then(x.0.cmp(y.0)));
    keys.into_iter()
        .enumerate()
        .map(|(n, (k, _))| (k.clone(), n as i64 + 1))
        .collect()
}

#[tokio::test]
async fn a_wider_model_is_slower_in_every_large_op() {
    let inputs = [
        cpu_fixture("jax_cpu_mlp_5steps_w128"),
        cpu_fixture("jax_cpu_mlp_5steps_w512"),
    ];
    let (a, b) = (hlo_by_key(&inputs, 0).await, hlo_by_key(&inputs, 1).await);
    let (rank_a, rank_b) = (ranks(&a), ranks(&b));
    let rows = query_rows_with_nulls(&inputs, "SELECT * FROM diff_hlo_stats(0, 1)").await;
    let keys: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    assert_eq!(rows.len(), keys.len(), "a row per key of either side");
    let total_a: f64 = a.values().map(|v| v.0).sum();
    let mut large = 0;
    for r in &rows {
        let key = (
            s(r, "hlo_op"),
            r.get("category")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        );
        let (sa, sb) = (a.get(&key), b.get(&key));
        for (side, vals, rank) in [("a", sa, &rank_a), ("b", sb, &rank_b)] {
            match vals {
                Some(v) => {
                    assert!(
                        close(f(r, &format!("{side}_self_time_us")).unwrap(), v.0),
                        "{r:?}"
                    );
                    assert!(
                        close(f(r, &format!("{side}_total_time_us")).unwrap(), v.1),
                        "{r:?}"
                    );
                    assert_eq!(i(r, &format!("{side}_occurrences")), v.2, "{r:?}");
                    assert_eq!(i(r, &format!("{side}_rank")), rank[&key], "{r:?}");
                }
                None => {
                    assert!(r[&format!("{side}_self_time_us")].is_null(), "{r:?}");
                    assert_eq!(r["only_in"], if side == "a" { "b" } else { "a" }, "{r:?}");
                }
            }
        }
        let (va, vb) = (sa.map_or(0.0, |v| v.0), sb.map_or(0.0, |v| v.0));
        assert!(close(f(r, "diff").unwrap(), vb - va), "{r:?}");
        match (sa, sb) {
            (Some(_), Some(_)) if va > 0.0 => assert!(close(f(r, "ratio").unwrap(), vb / va)),
            _ => assert!(r["ratio"].is_null(), "{r:?}"),
        }
        // The direction of every large op: 4× the width is slower.
        if va >= 0.05 * total_a {
            large += 1;
            assert!(vb > va, "{key:?} is not slower at width 512: {r:?}");
        }
    }
    assert!(large >= 3, "only {large} large ops");

    // Steps: the same five step numbers, each side's duration.
    let steps = query_rows_with_nulls(
        &inputs,
        "SELECT d.step_num, d.a_step_time_us, d.b_step_time_us, \
                (SELECT avg(dur_ps) FROM step_stats s WHERE s.trace_id = 0 AND s.step_num = d.step_num) / 1e6 AS a_here, \
                (SELECT avg(dur_ps) FROM step_stats s WHERE s.trace_id = 1 AND s.step_num = d.step_num) / 1e6 AS b_here \
         FROM diff_step_stats(0, 1) d ORDER BY step_num",
    )
    .await;
    assert_eq!(
        steps.iter().map(|r| i(r, "step_num")).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    for r in &steps {
        assert!(
            close(f(r, "a_step_time_us").unwrap(), f(r, "a_here").unwrap()),
            "{r:?}"
        );
        assert!(
            close(f(r, "b_step_time_us").unwrap(), f(r, "b_here").unwrap()),
            "{r:?}"
        );
    }

    // XProf's diff_sessions finds no kernels on CPU (its expected file:
    // no kernel rows, zero device time); neither does diff_kernel_stats.
    let xprof = json_fixture(
        "xspace/expected/jax_cpu_mlp_5steps_w128__jax_cpu_mlp_5steps_w512.diff_sessions.json",
    );
    assert_eq!(xprof["kernel_diffs"].as_array().unwrap().len(), 0);
    assert_eq!(
        xprof["baseline_total_device_duration_us"].as_f64(),
        Some(0.0)
    );
    let kernels = query_rows(&inputs, "SELECT count(*) AS n FROM diff_kernel_stats(0, 1)").await;
    assert_eq!(i(&kernels[0], "n"), 0);
}

#[tokio::test]
async fn sides_are_runs_trace_ids_or_lists_of_them() {
    let inputs = [
        cpu_fixture("jax_cpu_mlp_5steps_w128"),
        cpu_fixture("jax_cpu_mlp_20steps_w256"),
        cpu_fixture("jax_cpu_mlp_5steps_w512"),
    ];
    // Side a: traces 0 and 1 together; side b: trace 2 (by string or
    // integer).
    let both = query_rows(
        &inputs,
        "SELECT (SELECT sum(a_self_time_us) FROM diff_hlo_stats('0,1', 2)) AS pair, \
                (SELECT sum(total_self_time_us) FROM hlo_stats WHERE trace_id IN (0, 1)) AS here, \
                (SELECT sum(b_self_time_us) FROM diff_hlo_stats('0,1', '2')) AS b",
    )
    .await;
    assert!(close(
        f(&both[0], "pair").unwrap(),
        f(&both[0], "here").unwrap()
    ));
    assert!(f(&both[0], "b").unwrap() > 0.0);
    let mut session = xprof_sql::query::ProfileSession::new();
    session
        .open(&inputs[..1], &Default::default())
        .await
        .unwrap();
    for bad in [
        "SELECT * FROM diff_hlo_stats(0)",
        "SELECT * FROM diff_hlo_stats(0, 1, 2)",
        "SELECT * FROM diff_hlo_stats(0, 1.5)",
    ] {
        let e = match session.sql(bad).await {
            Ok(df) => df.collect().await.unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("diff_hlo_stats") && e.contains("side"),
            "{bad}: {e}"
        );
    }
}

#[tokio::test]
async fn a_kernel_against_itself_has_no_difference() {
    let llo = fixture("tpu/synthetic_llo.xplane.pb");
    let inputs = [llo.clone(), llo];
    let rows = query_rows_with_nulls(&inputs, "SELECT * FROM diff_unit_utilization(0, 1)").await;
    let units = query_rows(
        &inputs,
        "SELECT count(DISTINCT (kernel, unit)) AS n FROM unit_utilization WHERE trace_id = 0",
    )
    .await;
    assert!(i(&units[0], "n") > 0);
    assert_eq!(rows.len() as i64, i(&units[0], "n"));
    for r in &rows {
        assert_eq!(f(r, "diff"), Some(0.0), "{r:?}");
        assert_eq!(r["a_rank"], r["b_rank"], "{r:?}");
        assert_eq!(r["a_busy_fraction"], r["b_busy_fraction"], "{r:?}");
        assert!(r["only_in"].is_null(), "{r:?}");
    }
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn the_diff_command_gives_verdicts_and_the_largest_increases_first() {
    let a = cpu_fixture("jax_cpu_mlp_5steps_w128");
    let b = cpu_fixture("jax_cpu_mlp_5steps_w512");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = run(&["diff", a, b, "--format", "csv", "--top", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    // The verdicts (on stderr with CSV) hold the same totals as SQL.
    let totals = run(&[
        "query",
        a,
        b,
        "--format",
        "csv",
        "-e",
        "SELECT round(sum(a_self_time_us), 3) AS a, round(sum(b_self_time_us), 3) AS b FROM diff_hlo_stats(0, 1)",
    ]);
    let totals = String::from_utf8(totals.stdout).unwrap();
    let fields: Vec<f64> = totals
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let hlo = stderr
        .lines()
        .find(|l| l.starts_with("diff_hlo_stats: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        hlo.starts_with(&format!(
            "diff_hlo_stats: total self_time_us a {:.3}, b {:.3} (+",
            fields[0], fields[1]
        )),
        "{hlo} vs {totals}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("diff_step_stats: step time p50 a ")),
        "{stderr}"
    );
    // No kernels on CPU: no kernel table.
    assert!(!stderr.contains("diff_kernel_stats"), "{stderr}");
    // Each table: a header and at most --top rows, largest diff first.
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.is_empty()).collect();
    let headers: Vec<usize> = (0..lines.len())
        .filter(|&n| lines[n].contains(",diff,ratio,"))
        .collect();
    assert_eq!(headers.len(), 3, "device busy, HLO ops, steps: {stdout}");
    for (n, &h) in headers.iter().enumerate() {
        let end = headers.get(n + 1).copied().unwrap_or(lines.len());
        let diff_col = lines[h].split(',').position(|c| c == "diff").unwrap();
        let diffs: Vec<f64> = lines[h + 1..end]
            .iter()
            .map(|l| split_csv(l)[diff_col].parse::<f64>().unwrap())
            .collect();
        assert!((1..=3).contains(&diffs.len()), "{}: {diffs:?}", lines[h]);
        assert!(
            diffs.windows(2).all(|w| w[0] >= w[1]),
            "{}: {diffs:?}",
            lines[h]
        );
    }
    assert!(
        lines[headers[1]].starts_with("hlo_op,category,"),
        "{stdout}"
    );

    // More than two inputs need the sides named.
    let c = cpu_fixture("jax_cpu_nested_4steps");
    let out = run(&["diff", a, b, c.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--a and --b"));
    // Named sides that match nothing are an error, not an empty answer.
    let out = run(&["diff", a, b, "--a", "nope", "--b", "nothing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no rows on either side"));
}
