//! Two compiles of TPU kernels compared (the kernel author's loop): the
//! dump folder of a compile session (xprof_testdata::llo_compile, shaped
//! after the facts sheet's four dump files, several kernels) reads as one
//! trace per kernel named by its HLO op; `llo_kernels` gives each
//! kernel's numbers, held to the compiler's own files parsed here (the
//! schedule analysis for bundles, the per-bundle utilization for
//! occupancy, spills and fills); `diff_llo_kernels` pairs the kernels of
//! two folders, both named `jf` as real dump folders are; the ready rules
//! of examples/checks/kernels.sql fail on a planted regression with the
//! kernel and its numbers and pass on a recompile without one; `xprof-sql
//! diff` prints a line per kernel.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xprof_sql::query::check::{Status, parse_rules, run_rules};
use xprof_sql::query::{OpenOptions, ProfileSession};
use xprof_testdata::llo_compile::{CompileSession, KernelSpec, compile_session};
use xprof_testdata::llo_dump::UTILIZATION_COLUMNS;

const MATMUL: KernelSpec = KernelSpec::new("matmul_reduce.1", 16, 8);
const SOFTMAX: KernelSpec = KernelSpec::new("softmax.2", 6, 12);

/// The regressed compile: the matmul kernel's reduction doubled (a longer
/// schedule that dilutes its MXU pass) with two vectors spilled; a new
/// kernel; the softmax kernel unchanged.
fn regressed() -> Vec<KernelSpec> {
    vec![
        KernelSpec {
            reduce_bundles: 16,
            spills: 2,
            ..MATMUL
        },
        SOFTMAX,
        KernelSpec::new("layer_norm.3", 4, 6),
    ]
}

/// Three compile sessions, each in a folder named `jf` as libtpu's dump
/// folders are: the baseline, a recompile of the same kernels, and the
/// regressed compile.
struct Compiles {
    _root: tempfile::TempDir,
    base: PathBuf,
    same: PathBuf,
    worse: PathBuf,
    base_truth: CompileSession,
    worse_truth: CompileSession,
}

fn compiles() -> Compiles {
    let root = tempfile::tempdir().unwrap();
    let base_truth = compile_session(1_783_579_888_000_000_000, &[MATMUL, SOFTMAX]);
    let same_truth = compile_session(1_783_580_001_000_000_000, &[MATMUL, SOFTMAX]);
    let worse_truth = compile_session(1_783_580_667_000_000_000, &regressed());
    let folder = |name: &str, truth: &CompileSession| {
        let path = root.path().join(name).join("jf");
        truth.write_to(&path).unwrap();
        path
    };
    Compiles {
        base: folder("base", &base_truth),
        same: folder("same", &same_truth),
        worse: folder("worse", &worse_truth),
        _root: root,
        base_truth,
        worse_truth,
    }
}

/// What the compiler's own files of `hlo_op` in `folder` say, read here
/// from their text: the schedule analysis's total and empty bundles, and
/// the per-bundle utilization's rows and, per column, capacity and slots
/// used.
struct CompilerNumbers {
    total_bundles: i64,
    empty_bundles: i64,
    utilization_rows: i64,
    capacity: BTreeMap<String, i64>,
    used: BTreeMap<String, i64>,
}

fn compiler_numbers(folder: &Path, hlo_op: &str) -> CompilerNumbers {
    let file = |suffix: &str| {
        let entry = std::fs::read_dir(folder)
            .unwrap()
            .flatten()
            .find(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.contains(&format!("-{hlo_op}-")) && name.ends_with(suffix)
            })
            .unwrap_or_else(|| panic!("{hlo_op}'s {suffix}"));
        std::fs::read_to_string(entry.path()).unwrap()
    };
    let schedule = file("-schedule-analysis_final_bundles.txt");
    let count = |label: &str| -> i64 {
        let line = schedule
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("{label}"));
        line.rsplit(':').next().unwrap().trim().parse().unwrap()
    };
    let utilization = file("-final_hlo-static-per-bundle-utilization.txt");
    let lines: Vec<&str> = utilization.lines().collect();
    let names: Vec<String> = lines[1].split(',').map(|n| n.trim().to_string()).collect();
    let caps: Vec<i64> = lines[2]
        .split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect();
    let rows: Vec<Vec<i64>> = lines[4..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|c| c.parse().unwrap()).collect())
        .collect();
    let mut used = BTreeMap::new();
    for (k, name) in names.iter().enumerate() {
        used.insert(name.clone(), rows.iter().map(|r| r[k]).sum());
    }
    CompilerNumbers {
        total_bundles: count("total scheduled bundles:"),
        empty_bundles: count("empty scheduled bundles:"),
        utilization_rows: rows.len() as i64,
        capacity: names.iter().cloned().zip(caps).collect(),
        used,
    }
}

impl CompilerNumbers {
    fn pct(&self, column: &str) -> f64 {
        100.0 * self.used[column] as f64 / (self.capacity[column] * self.utilization_rows) as f64
    }
}

fn f(r: &Row, k: &str) -> f64 {
    r.get(k)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
}

async fn session_of(inputs: &[&Path]) -> (ProfileSession, Vec<String>) {
    let mut session = ProfileSession::new();
    let mut sides = Vec::new();
    for input in inputs {
        let before = session.opened().len();
        session
            .open(&[input], &OpenOptions::default())
            .await
            .unwrap();
        sides.push(session.trace_ids_since(before));
    }
    (session, sides)
}

#[tokio::test]
async fn a_dump_folder_is_one_trace_per_kernel_named_by_its_hlo_op() {
    let c = compiles();
    let traces = query_rows(
        &[&c.worse],
        "SELECT trace_id, host, run, source_format, start_unix_ns FROM traces ORDER BY host",
    )
    .await;
    let hosts: Vec<String> = traces.iter().map(|r| s(r, "host")).collect();
    assert_eq!(
        hosts,
        [
            "layer_norm.3@1783580667000000000",
            "matmul_reduce.1@1783580667000000000",
            "softmax.2@1783580667000000000"
        ]
    );
    for t in &traces {
        assert_eq!(s(t, "source_format"), "llo_dump");
        assert_eq!(i(t, "start_unix_ns"), 1_783_580_667_000_000_000);
    }
    // Each kernel's four files are in its one trace.
    let by_host: BTreeMap<String, i64> = traces
        .iter()
        .map(|r| {
            (
                s(r, "host").split('@').next().unwrap().to_string(),
                i(r, "trace_id"),
            )
        })
        .collect();
    for table in [
        "llo_dump_bundles",
        "llo_dump_ops",
        "llo_dump_bundle_units",
        "llo_dump_schedule",
        "llo_dump_allocations",
    ] {
        let rows = query_rows(
            &[&c.worse],
            &format!("SELECT DISTINCT trace_id, hlo_op FROM {table} ORDER BY hlo_op"),
        )
        .await;
        assert_eq!(rows.len(), 3, "{table}");
        for r in &rows {
            assert_eq!(i(r, "trace_id"), by_host[&s(r, "hlo_op")], "{table}");
        }
    }
    // One file named alone brings its kernel's other files.
    let one = std::fs::read_dir(&c.worse)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with("-softmax.2-121-final_hlo-static-per-bundle-utilization.txt")
        })
        .unwrap();
    let rows = query_rows(
        &[&one],
        "SELECT (SELECT count(*) FROM traces) AS traces, (SELECT count(*) FROM llo_dump_bundles WHERE address IS NOT NULL) AS bundles",
    )
    .await;
    assert_eq!(i(&rows[0], "traces"), 1);
    assert_eq!(
        i(&rows[0], "bundles"),
        c.worse_truth.kernel("softmax.2").bundles
    );
    // A kernel's files named one by one, and the folder beside them, are
    // still one trace per kernel.
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&c.worse)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("-softmax.2-"))
        .collect();
    assert_eq!(inputs.len(), 4);
    inputs.push(c.worse.clone());
    let rows = query_rows(&inputs, "SELECT host FROM traces ORDER BY host").await;
    assert_eq!(rows.len(), 3, "{rows:?}");
}

/// One folder holding two compiles of ops of one name (a dump of two
/// modules, each with its `fusion.1`, or a kernel compiled twice): two
/// traces, each named by the op and its compile's time stamp, and the
/// folder converts to a dataset (run and host are unique).
#[tokio::test]
async fn two_compiles_of_one_op_in_one_folder_are_two_traces() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("jf");
    compile_session(1_783_579_888_000_000_000, &[MATMUL])
        .write_to(&folder)
        .unwrap();
    compile_session(
        1_783_579_999_000_000_000,
        &[KernelSpec {
            spills: 1,
            ..MATMUL
        }],
    )
    .write_to(&folder)
    .unwrap();
    let rows = query_rows(
        &[&folder],
        "SELECT t.host, k.bundles, k.spill_slots FROM llo_kernels k JOIN traces t USING (trace_id) ORDER BY t.host",
    )
    .await;
    let got: Vec<(String, i64)> = rows
        .iter()
        .map(|r| (s(r, "host"), i(r, "spill_slots")))
        .collect();
    assert_eq!(
        got,
        [
            ("matmul_reduce.1@1783579888000000000".to_string(), 0),
            ("matmul_reduce.1@1783579999000000000".to_string(), 1)
        ]
    );
    let out = dir.path().join("ds");
    let (status, _, err) = cli(&[
        "convert",
        folder.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    let rows = query_rows(&[&out], "SELECT count(*) AS n FROM llo_kernels").await;
    assert_eq!(i(&rows[0], "n"), 2);
}

#[tokio::test]
async fn llo_kernels_gives_the_compilers_own_numbers() {
    let c = compiles();
    let rows =
        query_rows_with_nulls(&[&c.worse], "SELECT * FROM llo_kernels ORDER BY hlo_op").await;
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let op = s(r, "hlo_op");
        let compiler = compiler_numbers(&c.worse, &op);
        let truth = c.worse_truth.kernel(&op);
        assert_eq!(s(r, "source"), "dump");
        assert!(r["hlo_module"].is_null(), "{r:?}");
        assert_eq!(i(r, "bundles"), compiler.total_bundles, "{op}");
        assert_eq!(i(r, "empty_bundles"), compiler.empty_bundles, "{op}");
        for (column, unit) in [
            ("MXU", "mxu_pct"),
            ("VALU", "valu_pct"),
            ("VLOAD", "vld_pct"),
            ("VSTORE", "vst_pct"),
            ("SALU", "salu_pct"),
            ("XLU", "xlu_pct"),
            ("EUP", "eup_pct"),
        ] {
            let want = compiler.pct(column);
            let got = f(r, unit);
            assert!((got - want).abs() < 1e-9, "{op} {unit}: {got} vs {want}");
        }
        assert_eq!(i(r, "spill_slots"), compiler.used["VSTORE:SPILL"], "{op}");
        assert_eq!(i(r, "fill_slots"), compiler.used["VLOAD:FILL"], "{op}");
        assert_eq!(i(r, "vmem_bytes"), truth.vmem_bytes, "{op}");
        assert_eq!(i(r, "smem_bytes"), truth.smem_bytes, "{op}");
        for measured in ["peak_vregs", "executions", "mean_us"] {
            assert!(r[measured].is_null(), "{op} {measured}: a dump ran nothing");
        }
    }
    // The planted spill is seen.
    let matmul = rows
        .iter()
        .find(|r| s(r, "hlo_op") == "matmul_reduce.1")
        .unwrap();
    assert_eq!(i(matmul, "spill_slots"), 2);
    assert!(UTILIZATION_COLUMNS.iter().any(|c| c.0 == "VSTORE:SPILL"));
}

#[tokio::test]
async fn diff_llo_kernels_pairs_the_kernels_of_two_compiles() {
    let c = compiles();
    let (session, sides) = session_of(&[&c.base, &c.worse]).await;
    // Both folders are named `jf`: the sides are their trace ids.
    let runs = rows_of(
        &session
            .collect("SELECT DISTINCT run FROM traces")
            .await
            .unwrap(),
    );
    assert_eq!(runs.len(), 1, "{runs:?}");
    let sql = format!(
        "SELECT * FROM diff_llo_kernels('{}', '{}') ORDER BY hlo_op",
        sides[0], sides[1]
    );
    let rows = rows_of(&session.collect(&sql).await.unwrap());
    let ops: Vec<String> = rows.iter().map(|r| s(r, "hlo_op")).collect();
    assert_eq!(ops, ["layer_norm.3", "matmul_reduce.1", "softmax.2"]);
    let new = &rows[0];
    assert_eq!(s(new, "only_in"), "b");
    assert_eq!(
        i(new, "b_bundles"),
        compiler_numbers(&c.worse, "layer_norm.3").total_bundles
    );
    assert!(!new.contains_key("a_bundles"));
    for r in &rows[1..] {
        let op = s(r, "hlo_op");
        let (a, b) = (
            compiler_numbers(&c.base, &op),
            compiler_numbers(&c.worse, &op),
        );
        assert!(!r.contains_key("only_in"), "{r:?}");
        assert_eq!(i(r, "a_bundles"), a.total_bundles, "{op}");
        assert_eq!(i(r, "b_bundles"), b.total_bundles, "{op}");
        assert_eq!(i(r, "diff"), b.total_bundles - a.total_bundles, "{op}");
        assert_eq!(i(r, "a_spill_slots"), a.used["VSTORE:SPILL"], "{op}");
        assert_eq!(i(r, "b_spill_slots"), b.used["VSTORE:SPILL"], "{op}");
        assert!((f(r, "a_mxu_pct") - a.pct("MXU")).abs() < 1e-9, "{op}");
        assert!((f(r, "b_mxu_pct") - b.pct("MXU")).abs() < 1e-9, "{op}");
    }
    let matmul = &rows[1];
    assert_eq!(
        i(matmul, "b_bundles") - i(matmul, "a_bundles"),
        c.worse_truth.kernel("matmul_reduce.1").bundles
            - c.base_truth.kernel("matmul_reduce.1").bundles
    );
    assert_eq!(
        f(matmul, "ratio"),
        i(matmul, "b_bundles") as f64 / i(matmul, "a_bundles") as f64,
        "the ratio of whole bundles is a fraction"
    );
    assert_eq!(i(&rows[2], "diff"), 0, "softmax.2 is unchanged");
}

fn kernel_rules() -> (PathBuf, Vec<xprof_sql::query::check::Rule>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/checks/kernels.sql");
    let text = std::fs::read_to_string(&path).unwrap();
    let rules = parse_rules(&path, &text).unwrap();
    (path, rules)
}

fn params(current: &str, baseline: &str, more: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut p: BTreeMap<String, String> = more
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    p.insert("current".into(), current.into());
    // No baseline given: the parameter is absent, as `check` leaves it.
    if !baseline.is_empty() {
        p.insert("baseline".into(), baseline.into());
    }
    p
}

#[tokio::test]
async fn the_ready_kernel_rules_fail_on_the_planted_regression_and_pass_without() {
    let c = compiles();
    let (path, rules) = kernel_rules();
    let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "kernel_bundle_regressions",
            "kernel_new_spills",
            "kernel_mxu_occupancy_drops",
            "new_kernels"
        ]
    );
    let (session, sides) = session_of(&[&c.worse, &c.base]).await;
    let report = run_rules(
        &session,
        &path,
        &rules,
        &params(&sides[0], &sides[1], &[]),
        10,
    )
    .await;
    let by_name: BTreeMap<&str, _> = report
        .results
        .iter()
        .map(|r| (r.rule.name.as_str(), r))
        .collect();
    let (a, b) = (
        compiler_numbers(&c.base, "matmul_reduce.1"),
        compiler_numbers(&c.worse, "matmul_reduce.1"),
    );
    // Bundles: +27.8 % on the matmul kernel, over the 5 % default.
    let bundles = by_name["kernel_bundle_regressions"];
    assert_eq!(bundles.status, Status::Failed);
    let evidence = rows_of(&bundles.evidence);
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(s(&evidence[0], "hlo_op"), "matmul_reduce.1");
    assert_eq!(i(&evidence[0], "base_bundles"), a.total_bundles);
    assert_eq!(i(&evidence[0], "now_bundles"), b.total_bundles);
    let growth = 100.0 * (b.total_bundles - a.total_bundles) as f64 / a.total_bundles as f64;
    assert!((f(&evidence[0], "growth_pct") - growth).abs() < 1e-9);
    // The new spill.
    let spills = by_name["kernel_new_spills"];
    assert_eq!(spills.status, Status::Failed);
    let evidence = rows_of(&spills.evidence);
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(s(&evidence[0], "hlo_op"), "matmul_reduce.1");
    assert_eq!(i(&evidence[0], "now_spill_slots"), b.used["VSTORE:SPILL"]);
    assert_eq!(i(&evidence[0], "now_fill_slots"), b.used["VLOAD:FILL"]);
    // MXU occupancy diluted by the longer schedule.
    let mxu = by_name["kernel_mxu_occupancy_drops"];
    assert_eq!(mxu.status, Status::Failed);
    let evidence = rows_of(&mxu.evidence);
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert!((f(&evidence[0], "base_mxu_pct") - a.pct("MXU")).abs() < 1e-9);
    assert!((f(&evidence[0], "now_mxu_pct") - b.pct("MXU")).abs() < 1e-9);
    assert!(a.pct("MXU") - b.pct("MXU") > 2.0);
    // The kernel with no baseline.
    let new = by_name["new_kernels"];
    assert_eq!(new.status, Status::Failed);
    let evidence = rows_of(&new.evidence);
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(s(&evidence[0], "hlo_op"), "layer_norm.3");

    // Thresholds set by --set: the growth and the drop allowed pass.
    let loose = params(
        &sides[0],
        &sides[1],
        &[
            ("max_bundle_growth_pct", &format!("{}", growth.ceil())),
            (
                "max_mxu_drop_pts",
                &format!("{}", (a.pct("MXU") - b.pct("MXU")).ceil()),
            ),
        ],
    );
    let report = run_rules(&session, &path, &rules, &loose, 10).await;
    assert_eq!(report.results[0].status, Status::Passed);
    assert_eq!(report.results[2].status, Status::Passed);

    // A recompile of the same kernels: every rule passes, on data.
    let (session, sides) = session_of(&[&c.same, &c.base]).await;
    let report = run_rules(
        &session,
        &path,
        &rules,
        &params(&sides[0], &sides[1], &[]),
        10,
    )
    .await;
    for r in &report.results {
        assert_eq!(r.status, Status::Passed, "{}", r.rule.name);
    }
    // A current side with no kernel against a baseline with kernels: no
    // rule passes, each has no data.
    let cpu = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/jax_cpu_mlp.xplane.pb");
    let (session, sides) = session_of(&[&cpu, &c.base]).await;
    let report = run_rules(
        &session,
        &path,
        &rules,
        &params(&sides[0], &sides[1], &[]),
        10,
    )
    .await;
    for r in &report.results {
        assert!(
            matches!(r.status, Status::NoData(_)),
            "{}: {:?}",
            r.rule.name,
            r.status
        );
    }
    // Without a baseline, no rule passes: each has no data.
    let (session, sides) = session_of(&[&c.same]).await;
    let report = run_rules(&session, &path, &rules, &params(&sides[0], "", &[]), 10).await;
    for r in &report.results {
        assert!(
            matches!(r.status, Status::NoData(_)),
            "{}: {:?}",
            r.rule.name,
            r.status
        );
    }
}

#[test]
fn xprof_sql_diff_and_check_name_the_regressed_kernel() {
    let c = compiles();
    let (base, worse) = (c.base.to_str().unwrap(), c.worse.to_str().unwrap());
    let (status, out, err) = cli(&["diff", base, worse]);
    assert_eq!(status, 0, "{err}");
    let (a, b) = (
        compiler_numbers(&c.base, "matmul_reduce.1"),
        compiler_numbers(&c.worse, "matmul_reduce.1"),
    );
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("matmul_reduce.1:"))
        .unwrap_or_else(|| panic!("{out}"));
    let growth = 100.0 * (b.total_bundles - a.total_bundles) as f64 / a.total_bundles as f64;
    assert!(
        line.contains(&format!(
            "bundles {} -> {} ({growth:+.1}%)",
            a.total_bundles, b.total_bundles
        )),
        "{line}"
    );
    assert!(line.contains("spill slots 0 -> 2 (new)"), "{line}");
    let new = c.worse_truth.kernel("layer_norm.3").bundles;
    assert!(
        out.contains(&format!("layer_norm.3: only in b ({new} bundles)")),
        "{out}"
    );
    assert!(out.contains("diff_llo_kernels: total bundles"), "{out}");

    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/checks/kernels.sql");
    let rules = rules.to_str().unwrap();
    let (status, out, err) = cli(&["check", worse, "--baseline", base, "--rules", rules]);
    assert_eq!(status, 1, "{out}{err}");
    assert!(out.contains("matmul_reduce.1"), "{out}");
    let same = c.same.to_str().unwrap();
    let (status, out, err) = cli(&["check", same, "--baseline", base, "--rules", rules]);
    assert_eq!(status, 0, "{out}{err}");
}

/// Two kernel-profiling captures of one kernel (the generator's, run 3
/// times for 4 loop trips each and 2 times for 6): `llo_kernels` gives
/// each capture's executions and mean time as the generator wrote its
/// kernel events, and `diff_llo_regions` pairs their regions, each side's
/// measured time, entries, mean per entry and own-segment MXU occupancy
/// those of `llo_region_profile` on that capture opened alone.
#[tokio::test]
async fn captures_compare_by_kernel_and_region() {
    use xprof_testdata::llo_capture::{CaptureSpec, capture_space_bytes};
    let dir = tempfile::tempdir().unwrap();
    let specs = [
        CaptureSpec {
            executions: 3,
            trips: 4,
        },
        CaptureSpec {
            executions: 2,
            trips: 6,
        },
    ];
    let mut paths = Vec::new();
    let mut truths = Vec::new();
    for (n, spec) in specs.iter().enumerate() {
        let (bytes, truth) = capture_space_bytes(spec);
        let path = dir.path().join(format!("capture{n}.xplane.pb"));
        std::fs::write(&path, bytes).unwrap();
        paths.push(path);
        truths.push(truth);
    }
    for (path, truth) in paths.iter().zip(&truths) {
        let rows = query_rows(
            &[path],
            "SELECT executions, mean_us FROM llo_kernels WHERE hlo_op = 'pallas_matmul.1'",
        )
        .await;
        assert_eq!(rows.len(), 1);
        assert_eq!(i(&rows[0], "executions") as usize, truth.kernels.len());
        let mean_ps = truth.kernels.iter().map(|k| k.duration_ps).sum::<i64>() as f64
            / truth.kernels.len() as f64;
        assert!((f(&rows[0], "mean_us") - mean_ps / 1e6).abs() < 1e-9);
    }
    let (session, sides) = session_of(&[&paths[0], &paths[1]]).await;
    let diff = rows_of(
        &session
            .collect(&format!(
                "SELECT * FROM diff_llo_regions('{}', '{}') ORDER BY region_id",
                sides[0], sides[1]
            ))
            .await
            .unwrap(),
    );
    assert!(diff.len() >= 5, "{diff:?}");
    let alone = |path: &PathBuf| {
        let path = path.clone();
        async move {
            query_rows(
                &[path],
                "SELECT region_id, measured_ps, entries, self_mxu_pct FROM llo_region_profile",
            )
            .await
        }
    };
    let (a, b) = (alone(&paths[0]).await, alone(&paths[1]).await);
    for r in &diff {
        let id = i(r, "region_id");
        for (side, rows) in [("a", &a), ("b", &b)] {
            let want = rows.iter().find(|w| i(w, "region_id") == id).unwrap();
            let measured = i(want, "measured_ps") as f64;
            let got = f(r, &format!("{side}_measured_us"));
            assert!((got - measured / 1e6).abs() < 1e-9, "R{id} {side}");
            assert_eq!(i(r, &format!("{side}_entries")), i(want, "entries"));
            let mean = f(r, &format!("{side}_mean_us"));
            let want_mean = measured / i(want, "entries") as f64 / 1e6;
            assert!((mean - want_mean).abs() < 1e-9, "R{id} {side}");
            match want.get("self_mxu_pct").and_then(|v| v.as_f64()) {
                Some(pct) => assert!((f(r, &format!("{side}_self_mxu_pct")) - pct).abs() < 1e-9),
                None => assert!(!r.contains_key(&format!("{side}_self_mxu_pct"))),
            }
        }
    }
    // The loop body runs 6 trips instead of 4, twice instead of 3 times:
    // 12 entries on each side.
    let body = diff.iter().find(|r| i(r, "region_id") == 69).unwrap();
    assert_eq!(i(body, "a_entries"), 3 * 4);
    assert_eq!(i(body, "b_entries"), 2 * 6);
}
