//! Hostile input, round 3 (issue 60): what an attacker or a careless user
//! tried against `check`, rank folders, the HTA views, LLO dump folders
//! and `-o` outputs, each as the command or the library meets it. Every
//! test here failed on the code before the fix: a crash, a hang, a silent
//! wrong answer, or a file replaced.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

use xprof_sql::query::{OpenOptions, ProfileSession};

const EXAMPLE: &str = "examples/data/jax_cpu_mlp.xplane.pb";

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(EXAMPLE)
        .display()
        .to_string()
}

/// `SELECT 1+1+…` of `terms` terms.
fn long_sum(terms: usize) -> String {
    format!("SELECT {} AS x", vec!["1"; terms].join("+"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A rules file of `rules` (`(name, sql)`).
fn rules_file(dir: &Path, rules: &[(&str, &str)]) -> PathBuf {
    let text: String = rules
        .iter()
        .map(|(name, sql)| format!("-- check: {name}\n{sql};\n\n"))
        .collect();
    write(dir, "rules.sql", &text)
}

/// `xprof-sql check EXAMPLE --rules RULES ARGS…`: status, stdout, stderr.
fn check(rules: &Path, args: &[&str]) -> (i32, String, String) {
    let ex = example();
    let mut all = vec!["check", ex.as_str(), "--rules", rules.to_str().unwrap()];
    all.extend_from_slice(args);
    cli(&all)
}

#[test]
fn a_time_limit_past_a_year_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(dir.path(), &[("none", "SELECT 1 WHERE false")]);
    let out = dir.path().join("x.json").display().to_string();
    let ex = example();
    for limit in ["1e20", "1e19", "31536001"] {
        for args in [
            vec!["query", "--timeout", limit, &ex, "-e", "SELECT 1"],
            vec![
                "check",
                "--timeout",
                limit,
                &ex,
                "--rules",
                rules.to_str().unwrap(),
            ],
            vec![
                "export",
                "--timeout",
                limit,
                &ex,
                "-e",
                "SELECT * FROM events",
                "-o",
                &out,
            ],
        ] {
            let (code, _, err) = cli(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains("the timeout must be at most 31536000 seconds"),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // A year is taken.
    let (code, out, err) = cli(&["query", "--timeout", "31536000", &ex, "-e", "SELECT 7 AS x"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains('7'), "{out}");
}

#[test]
fn a_long_flat_expression_is_refused_naming_the_limit_not_a_stack_overflow() {
    let ex = example();
    let and_chain = format!(
        "SELECT count(*) FROM events WHERE {}",
        vec!["true"; 8000].join(" AND ")
    );
    for sql in [long_sum(10_000), and_chain] {
        for read_only in [false, true] {
            let mut args = vec!["query", ex.as_str(), "-e", sql.as_str()];
            if read_only {
                args.insert(1, "--read-only");
            }
            let (code, _, err) = cli(&args);
            assert_eq!(code, 1, "{err}");
            assert!(err.contains("nests more than 500 levels deep"), "{err}");
        }
    }
    // At the limit it plans and answers.
    let (code, out, err) = cli(&["query", &ex, "-e", &long_sum(500)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("500"), "{out}");
}

#[test]
fn a_huge_check_parameter_is_a_rule_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(dir.path(), &[("big", "SELECT 1 AS x WHERE ${terms} > 1")]);
    // 120 KB of `1+1+…`, as the rule's parameter.
    let terms = vec!["1"; 60_000].join("+");
    let (code, out, err) = check(&rules, &["--set", &format!("terms={terms}")]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("ERROR  big"), "{out}");
    assert!(out.contains("nests more than 500 levels deep"), "{out}");
}

#[test]
fn the_time_limit_covers_planning() {
    tokio_run(async {
        let mut session = ProfileSession::builder()
            .time_limit(Duration::from_millis(1))
            .build()
            .unwrap();
        session
            .open(&[example()], &OpenOptions::default())
            .await
            .unwrap();
        // 480 terms plan in a good part of a second: far past 1 ms, and
        // planning never yields to the timer.
        let e = session.collect(&long_sum(480)).await.unwrap_err();
        assert!(e.to_string().contains("ran past its time limit"), "{e}");
        // A limit too far to add to the clock is no limit, not a panic.
        let mut session = ProfileSession::builder()
            .time_limit(Duration::MAX)
            .build()
            .unwrap();
        session
            .open(&[example()], &OpenOptions::default())
            .await
            .unwrap();
        let rows = session.collect("SELECT 1 AS x").await.unwrap();
        assert_eq!(rows[0].num_rows(), 1);
    });
}

#[test]
fn check_counts_failing_rows_without_holding_them() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(
        dir.path(),
        &[(
            "many",
            "SELECT value, value * 2 AS twice FROM range(30000000)",
        )],
    );
    let bin = env!("CARGO_BIN_EXE_xprof-sql");
    let (code, kib) = peak_rss_kib(
        bin,
        &[
            "check",
            "--trust-rules",
            "--memory-limit",
            "256M",
            &example(),
            "--rules",
            rules.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    // 30 M rows of two 8-byte columns are 480 MB held; streamed, the
    // process stays well under the 256 MiB limit it was given.
    assert!(kib < 256 * 1024, "peak {kib} KiB");
    let (_, out, _) = check(&rules, &["--trust-rules", "--evidence", "2"]);
    assert!(out.contains("FAIL   many"), "{out}");
    assert!(out.contains("30000000 failing rows"), "{out}");
    assert!(out.contains("… 29999998 more"), "{out}");
}

#[test]
fn a_rule_that_is_not_a_query_is_an_error_and_rules_are_read_only_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let secret = write(dir.path(), "secret.txt", "top secret line\n");
    let secret = secret.display();
    let copy_to = dir.path().join("copied.csv");
    let rules = rules_file(
        dir.path(),
        &[
            ("drop", "DROP VIEW device_busy"),
            ("set", "SET datafusion.execution.batch_size = 1"),
            (
                "external",
                &format!(
                    "CREATE EXTERNAL TABLE s (line VARCHAR) STORED AS CSV LOCATION '{secret}'"
                ),
            ),
            (
                "copy",
                &format!("COPY (SELECT 1 AS x) TO '{}'", copy_to.display()),
            ),
            (
                "read_path",
                &format!("SELECT * FROM read_profile('{secret}', 'events')"),
            ),
            // What the rules before it would have changed, had they run.
            ("after", "SELECT * FROM device_busy WHERE busy_ps < 0"),
        ],
    );
    for trust in [false, true] {
        let mut args = vec![
            "check".to_string(),
            example(),
            "--rules".into(),
            rules.display().to_string(),
        ];
        if trust {
            args.insert(1, "--trust-rules".into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = cli(&args);
        assert_eq!(code, 2, "{out}{err}");
        for name in ["drop", "set", "external", "copy"] {
            assert!(
                out.contains(&format!("ERROR  {name}")) && out.contains("a rule is one query"),
                "trust {trust}: {name}: {out}"
            );
        }
        assert!(!out.contains("top secret"), "{out}");
        assert!(!copy_to.exists());
        assert!(out.contains("PASS   after"), "{out}");
        // A read-only check refuses the path reading table function; a
        // trusted one lets it read (it fails reading a text file).
        assert!(out.contains("ERROR  read_path"), "{out}");
        assert_eq!(
            out.contains("read_profile") && out.contains("read-only"),
            !trust,
            "{out}"
        );
    }
}

#[test]
fn check_refuses_setting_its_own_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(dir.path(), &[("r", "SELECT 1 WHERE ${current} = 999")]);
    for name in ["current", "baseline"] {
        let (code, out, err) = check(&rules, &["--set", &format!("{name}=999")]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains(&format!("${{{name}}} is set by check itself")),
            "{err}"
        );
        assert!(!out.contains("PASS"), "{out}");
    }
}

#[test]
fn the_verdicts_are_printed_when_the_junit_file_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(dir.path(), &[("fails", "SELECT 1 AS evidence_row")]);
    let junit = dir.path().join("no such folder").join("junit.xml");
    let (code, out, err) = check(&rules, &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("FAIL   fails"), "{out}");
    assert!(out.contains("evidence_row=1"), "{out}");
    assert!(err.contains("junit.xml"), "{err}");
}

/// Every command's output path, with `out` as its file.
fn writers(out: &str, rules: &str) -> Vec<Vec<String>> {
    let ex = example();
    [
        vec!["query", &ex, "-e", "SELECT 1 AS x", "-o", out],
        vec![
            "query",
            &ex,
            "-e",
            "SELECT 1 AS x",
            "--format",
            "parquet",
            "-o",
            out,
        ],
        vec![
            "export",
            &ex,
            "-e",
            "SELECT * FROM events LIMIT 3",
            "-o",
            out,
        ],
        vec!["report", &ex, "-o", out],
        vec!["check", &ex, "--rules", rules, "--junit", out],
    ]
    .into_iter()
    .map(|a| a.into_iter().map(String::from).collect())
    .collect()
}

fn run(args: &[String]) -> (i32, String, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cli(&args)
}

#[test]
fn an_output_through_a_symlink_or_onto_a_folder_is_refused_and_nothing_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(dir.path(), &[("ok", "SELECT 1 WHERE false")]);
    let target = write(dir.path(), "kept.txt", "kept");
    let link = dir.path().join("link.out");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for args in writers(link.to_str().unwrap(), rules.to_str().unwrap()) {
        let (code, _, err) = run(&args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains("is a symbolic link to"), "{args:?}: {err}");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
    }
    for args in writers(folder.to_str().unwrap(), rules.to_str().unwrap()) {
        let (code, _, err) = run(&args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains("is a folder"), "{args:?}: {err}");
        assert!(folder.is_dir());
    }
    // Nothing partial is left beside them.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".partial")), "{names:?}");
}

#[test]
fn an_output_to_a_fifo_or_a_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(dir.path(), &[("ok", "SELECT 1 WHERE false")]);
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for args in writers(fifo.to_str().unwrap(), rules.to_str().unwrap()) {
        let reading = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let got = reading.join().unwrap();
        assert!(!got.is_empty(), "{args:?}");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo(),
            "{args:?} replaced the FIFO"
        );
    }
    // A full device is an error; the device stays a device.
    let (code, _, err) = cli(&[
        "query",
        &example(),
        "-e",
        "SELECT * FROM events",
        "-o",
        "/dev/full",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("/dev/full"), "{err}");
    let kind = std::fs::symlink_metadata("/dev/full").unwrap().file_type();
    assert!(kind.is_char_device());
}

/// A Kineto trace of `launches` host launches and as many kernels, every
/// one with correlation id `corr` when `shared`, else its own.
fn kineto(dist_info: &str, launches: usize, shared: bool) -> String {
    let mut events = Vec::new();
    for i in 0..launches {
        let corr = if shared { 5 } else { i + 1 };
        let ts = 10 + i * 10;
        events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":2,"args":{{"correlation":{corr}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"k{i}","pid":0,"tid":7,"ts":{},"dur":3,"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#,
            ts + 4
        ));
    }
    format!(
        r#"{{"schemaVersion":1,"distributedInfo":{dist_info},"traceEvents":[{}]}}"#,
        events.join(",")
    )
}

#[test]
fn shared_correlation_ids_are_counted_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let shared = write(
        dir.path(),
        "shared.json",
        &kineto(r#"{"rank":0}"#, 200, true),
    );
    let own = write(dir.path(), "own.json", &kineto(r#"{"rank":0}"#, 200, false));
    tokio_run(async {
        let rows = query_rows(
            &[&shared],
            "SELECT array_to_string(converter_warnings, '|') AS w FROM traces",
        )
        .await;
        let w = s(&rows[0], "w");
        assert!(
            w.contains(
                "1 correlation id is shared by several launches (200 launches in all; id 5 by 200)"
            ),
            "{w}"
        );
        let rows = query_rows(
            &[&own],
            "SELECT cardinality(converter_warnings) AS n FROM traces",
        )
        .await;
        assert_eq!(i(&rows[0], "n"), 0);
    });
}

#[test]
fn the_rank_is_the_top_level_integer_of_distributed_info() {
    let dir = tempfile::tempdir().unwrap();
    let nested = write(
        dir.path(),
        "nested.json",
        &kineto(r#"{"pg_config":[{"rank":7}],"rank":0}"#, 3, false),
    );
    tokio_run(async {
        let rows = query_rows(&[&nested], "SELECT DISTINCT rank FROM kineto_gpu_events").await;
        assert_eq!(rows.len(), 1);
        assert_eq!(i(&rows[0], "rank"), 0);
    });
    for (name, rank) in [
        ("half.json", "1.5"),
        ("huge.json", "9223372036854775808"),
        ("text.json", "\"1\""),
    ] {
        let text = kineto(&format!(r#"{{"rank":{rank}}}"#), 3, false);
        let path = write(dir.path(), name, &text);
        let (code, _, err) = cli(&["query", path.to_str().unwrap(), "-e", "SELECT 1"]);
        assert_eq!(code, 1, "{err}");
        let offset = text.find(&format!(":{rank}}}")).unwrap() + 1;
        assert!(err.contains(path.to_str().unwrap()), "{err}");
        assert!(
            err.contains(&format!(
                "at byte {offset}: distributedInfo's rank {rank} is not a whole number"
            )),
            "{err}"
        );
    }
}

#[test]
fn a_trace_with_a_byte_order_mark_reads_alone_and_in_a_rank_folder() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("ranks");
    std::fs::create_dir(&run).unwrap();
    write(&run, "rank-0.json", &kineto(r#"{"rank":0}"#, 3, false));
    let bom = run.join("rank-1.json");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(kineto(r#"{"rank":1}"#, 3, false).as_bytes());
    std::fs::write(&bom, bytes).unwrap();
    tokio_run(async {
        let rows = query_rows(&[&bom], "SELECT DISTINCT rank FROM kineto_gpu_events").await;
        assert_eq!(i(&rows[0], "rank"), 1);
        let rows = query_rows(
            &[&run],
            "SELECT rank, count(*) AS kernels FROM kineto_gpu_events GROUP BY rank ORDER BY rank",
        )
        .await;
        let got: Vec<(i64, i64)> = rows
            .iter()
            .map(|r| (i(r, "rank"), i(r, "kernels")))
            .collect();
        assert_eq!(got, [(0, 3), (1, 3)]);
    });
}

#[test]
fn an_empty_xspace_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "host.xplane.pb", "");
    let (code, _, err) = cli(&["query", empty.to_str().unwrap(), "-e", "SELECT 1"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: invalid XSpace at byte 0: the file is empty",
            empty.display()
        )),
        "{err}"
    );
    // As a baseline it fails the check (2), not every op "new" (1).
    let rules = rules_file(dir.path(), &[("r", "SELECT 1 WHERE false")]);
    for baseline in [empty.to_str().unwrap(), "/dev/null"] {
        let (code, _, err) = check(&rules, &["--baseline", baseline]);
        assert_eq!(code, 2, "{baseline}: {err}");
        assert!(err.contains(baseline), "{err}");
        assert!(!err.contains("no such file"), "{err}");
    }
    let (_, _, err) = cli(&["query", "/dev/null", "-e", "SELECT 1"]);
    assert!(
        err.contains("/dev/null: is neither a profile file nor a folder (a character device)"),
        "{err}"
    );
}

/// The synthetic dump folder, copied, with its final-bundles file
/// rewritten by `edit`.
fn dump_with(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, PathBuf) {
    let from = fixture("tpu/synthetic_dump");
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("dump");
    std::fs::create_dir(&to).unwrap();
    let mut bundles = None;
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let mut text = std::fs::read_to_string(e.path()).unwrap();
        if name.ends_with("-124-final_bundles.txt") {
            text = edit(&text);
            bundles = Some(to.join(&name));
        }
        std::fs::write(to.join(&name), text).unwrap();
    }
    (dir, bundles.unwrap())
}

async fn dump_bundles(dump: &Path) -> (i64, String) {
    let rows = query_rows(&[dump], "SELECT count(*) AS n FROM llo_dump_bundles").await;
    let bundles = i(&rows[0], "n");
    // A dump folder is a trace per kernel: every trace's warnings.
    let rows = query_rows(
        &[dump],
        "SELECT array_to_string(converter_warnings, '|') AS w FROM traces ORDER BY trace_id",
    )
    .await;
    let warnings: Vec<String> = rows
        .iter()
        .map(|r| s(r, "w"))
        .filter(|w| !w.is_empty())
        .collect();
    (bundles, warnings.join("|"))
}

#[test]
fn llo_dumps_read_with_every_line_end_and_say_when_they_hold_no_bundle() {
    tokio_run(async {
        let (_d, lf) = dump_with(|t| t.to_string());
        let (bundles, w) = dump_bundles(lf.parent().unwrap()).await;
        assert!(bundles > 100, "{bundles}");
        assert_eq!(w, "");
        for (what, edit) in [
            (
                "CR",
                Box::new(|t: &str| t.replace('\n', "\r")) as Box<dyn Fn(&str) -> String>,
            ),
            ("CRLF", Box::new(|t: &str| t.replace('\n', "\r\n"))),
        ] {
            let (_d, p) = dump_with(edit);
            let got = dump_bundles(p.parent().unwrap()).await;
            assert_eq!(got, (bundles, String::new()), "{what}");
        }
        // A key block never closed ends at the first bundle, with a word.
        let (_d, p) = dump_with(|t| t.replace("= control target key end\n", ""));
        let (got, w) = dump_bundles(p.parent().unwrap()).await;
        assert_eq!(got, bundles);
        assert!(
            w.contains("line 1 (byte 0): the control target key block is not closed before the bundle on line"),
            "{w}"
        );
        // No line end at all: no bundle, and a warning naming the file.
        let (_d, p) = dump_with(|t| t.replace('\n', " "));
        let (got, w) = dump_bundles(p.parent().unwrap()).await;
        assert_eq!(got, 0);
        assert!(
            w.contains(&format!("{}: line 1 (byte 0): no bundle read", p.display())),
            "{w}"
        );
    });
}

#[test]
fn a_duplicated_bundle_address_keeps_both_bundles_with_a_warning() {
    let (_d, p) = dump_with(|t| {
        // The first bundle line, again at the end.
        let first = t
            .lines()
            .find(|l| l.trim_start().starts_with("0 "))
            .unwrap();
        format!("{t}{first}\n")
    });
    let text = std::fs::read_to_string(&p).unwrap();
    let line = text.lines().count();
    let first_ops: i64 = text
        .lines()
        .find(|l| l.trim_start().starts_with("0 "))
        .unwrap()
        .matches(";;")
        .count() as i64
        + 1;
    tokio_run(async {
        let dump = p.parent().unwrap();
        let (_, w) = dump_bundles(dump).await;
        assert!(
            w.contains(&format!("{}: line {line} ", p.display()))
                && w.contains("bundle address 0x0 is also the address of the bundle on line"),
            "{w}"
        );
        // Both bundles, and their ops numbered on at the address (an
        // internal error naming no file before: the declared order broke).
        let rows = query_rows(
            &[dump],
            "SELECT (SELECT count(*) FROM llo_dump_bundles WHERE address = 0) AS bundles, \
             count(*) AS ops, count(DISTINCT position) AS positions \
             FROM llo_dump_ops WHERE address = 0",
        )
        .await;
        assert_eq!(i(&rows[0], "bundles"), 2);
        assert_eq!(i(&rows[0], "ops"), 2 * first_ops);
        assert_eq!(i(&rows[0], "positions"), 2 * first_ops);
    });
}

#[test]
fn an_address_past_the_signed_column_says_so() {
    let (_d, p) = dump_with(|t| {
        let first = t
            .lines()
            .find(|l| l.trim_start().starts_with("0 "))
            .unwrap();
        let big = first.replacen("0 ", "0xffffffffffffffff ", 1);
        t.replacen(first, &big, 1)
    });
    tokio_run(async {
        let (_, w) = dump_bundles(p.parent().unwrap()).await;
        assert!(
            w.contains("its address 0xffffffffffffffff is above 2^63 - 1, the largest the signed 64-bit `address` column holds"),
            "{w}"
        );
        // Printed once with its path, not twice.
        let (_, _, err) = cli(&["query", p.to_str().unwrap(), "-e", "SELECT 1"]);
        let path = p.display().to_string();
        assert!(err.contains(&format!("warning: {path}: line ")), "{err}");
        assert!(!err.contains(&format!("{path}: {path}")), "{err}");
    });
}

#[test]
fn regions_closed_first_in_first_out_read_in_linear_time() {
    // 20,000 regions opened, then closed oldest first: with a searched and
    // shifted stack this was 20,000² steps; the count of each bundle's
    // open regions is checked, not a time.
    let regions = 20_000;
    let (_d, p) = dump_with(|t| {
        let head_end =
            t.find("= control target key end\n").unwrap() + "= control target key end\n".len();
        let mut out = t[..head_end].to_string();
        for r in 0..regions {
            out.push_str(&format!(
                "  {:#x}   :   {{ nop }} /* Start region {} */\n",
                r,
                r + 1
            ));
        }
        for r in 0..regions {
            out.push_str(&format!(
                "  {:#x}   :   {{ nop }} /* End region {} */\n",
                regions + r,
                r + 1
            ));
        }
        out
    });
    tokio_run(async {
        let rows = query_rows(
            &[p.parent().unwrap()],
            "SELECT count(*) AS n, count(region_id) AS inside, \
             min(region_id) AS lo, max(region_id) AS hi FROM llo_dump_bundles",
        )
        .await;
        assert_eq!(i(&rows[0], "n"), 2 * regions as i64);
        // Every bundle is inside its innermost open region: a start
        // bundle in the region it opens, an end bundle in the last one
        // opened, which closes last.
        assert_eq!(i(&rows[0], "inside"), 2 * regions as i64);
        assert_eq!((i(&rows[0], "lo"), i(&rows[0], "hi")), (1, regions as i64));
    });
}

#[test]
fn the_time_limit_covers_the_conversion_of_what_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    // 300,000 events: far more than the 65,536 between two looks at the
    // clock, and far longer than 1 ms to convert.
    let events: Vec<String> = (0..300_000)
        .map(|i| format!(r#"{{"ph":"X","name":"e","pid":1,"tid":1,"ts":{i},"dur":1}}"#))
        .collect();
    let path = write(
        dir.path(),
        "big.json",
        &format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")),
    );
    let (code, _, err) = cli(&[
        "query",
        "--timeout",
        "0.001",
        path.to_str().unwrap(),
        "-e",
        "SELECT count(*) FROM events",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: the conversion ran past the time limit",
            path.display()
        )),
        "{err}"
    );
    let (code, out, err) = cli(&[
        "query",
        path.to_str().unwrap(),
        "-e",
        "SELECT count(*) AS n FROM events",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("300000"), "{out}");
}

#[test]
fn rules_file_errors_say_where_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"-- check: a\nSELECT 1 WHERE false;\n-- check: b\nSELECT '".to_vec();
    let offset = bytes.len();
    bytes.extend_from_slice(b"\xff';\n");
    let latin1 = dir.path().join("latin1.sql");
    std::fs::write(&latin1, bytes).unwrap();
    let (code, _, err) = check(&latin1, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}: not UTF-8 text at byte {offset}",
            latin1.display()
        )),
        "{err}"
    );
    let typo = write(
        dir.path(),
        "typo.sql",
        "-- check: ok\nSELECT 1 WHERE false;\n\n-- check: typo\n-- a rule with a typo\n\nSELECT *\nFORM events;\n",
    );
    let (code, out, _) = check(&typo, &[]);
    assert_eq!(code, 2, "{out}");
    let line = out.lines().find(|l| l.starts_with("ERROR  typo")).unwrap();
    assert!(line.contains(":4: rule typo:"), "{line}");
    assert!(line.contains("file line 8"), "{line}");
}

#[test]
fn a_rank_folder_names_each_file_it_skips_and_fails_on_a_broken_trace() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("ranks");
    std::fs::create_dir(&run).unwrap();
    write(&run, "rank-0.json", &kineto(r#"{"rank":0}"#, 3, false));
    let empty = write(&run, "rank-1.json", "");
    let config = write(&run, "config.json", r#"{"lr": 0.1}"#);
    let (code, out, err) = cli(&[
        "query",
        run.to_str().unwrap(),
        "-e",
        "SELECT count(*) AS n FROM traces",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains('1'), "{out}");
    assert!(
        err.contains(&format!(
            "warning: {}: skipped: the file is empty",
            empty.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "warning: {}: skipped: not a Chrome trace",
            config.display()
        )),
        "{err}"
    );
    // A file that claims to be a trace and is cut fails the folder,
    // naming it.
    let text = kineto(r#"{"rank":2}"#, 3, false);
    let cut = write(&run, "rank-2.json", &text[..text.len() - 40]);
    let (code, _, err) = cli(&["query", run.to_str().unwrap(), "-e", "SELECT 1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&cut.display().to_string()), "{err}");
}

#[test]
fn a_step_number_past_64_bits_reads_as_null_not_a_cast_error() {
    // Numbers the views parse out of names (a step's N, a source line, a
    // Proton pid's SM) are NULL when they do not fit their column: before,
    // `ProfilerStep#99999999999999999999` failed every query of
    // `kineto_ops` with "Cannot cast string … to value of Int64 type",
    // naming neither the file nor the column.
    let dir = tempfile::tempdir().unwrap();
    let text = kineto(r#"{"rank":0}"#, 2, false).replacen(
        r#""traceEvents":["#,
        r#""traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":1,"dur":4},{"ph":"X","cat":"user_annotation","name":"ProfilerStep#99999999999999999999","pid":1,"tid":1,"ts":6,"dur":40},{"ph":"X","cat":"user_annotation","name":"ProfilerStep#8","pid":1,"tid":1,"ts":50,"dur":5},"#,
        1,
    );
    let path = write(dir.path(), "huge_step.json", &text);
    // As HTA, the last step (#8) is left out of `kineto_ops`.
    tokio_run(async {
        let rows = query_rows_with_nulls(
            &[&path],
            "SELECT name, iteration FROM kineto_ops WHERE name LIKE 'ProfilerStep%' ORDER BY ts_ps",
        )
        .await;
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(i(&rows[0], "iteration"), 7);
        assert!(rows[1]["iteration"].is_null(), "{rows:?}");
    });
}
