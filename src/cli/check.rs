//! `xprof-sql check`: profiles as performance tests. Rules files of named
//! SQL checks ([`crate::query::check`]) run over the inputs (and a
//! baseline), with a verdict per rule, its evidence rows, a JUnit file and
//! the exit status CI reads: 0 all passed, 1 a rule failed, 2 a rule (or
//! the check itself) could not run, 3 a rule had no data to judge (and
//! none failed or could not run).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::query::check::{
    CheckReport, Counts, Status, evidence_lines, junit_xml, parse_rules, run_rules,
};

use crate::cli::query::{SessionArgs, new_session, open_into};
use crate::cli::{AnyResult, Limits, outln};

/// `check`'s output formats.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckFormat {
    /// One line per rule, the failing rows under it, a summary line.
    Table,
    /// One JSON document: every rule with its status and evidence rows.
    Json,
}

/// `check`'s arguments.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Profiles checked (files, run folders, datasets).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// A rules file: `-- check: NAME` above each query that must return
    /// no rows. Repeat for several files.
    #[arg(long, required = true)]
    rules: Vec<PathBuf>,
    /// Baseline profiles: opened beside the inputs; rules name the two
    /// sides `${baseline}` and `${current}` (trace ids, as the diff_*
    /// functions take them).
    #[arg(long, num_args = 1..)]
    baseline: Vec<PathBuf>,
    /// A rule parameter, `NAME=VALUE`, replacing `${NAME}` in the rules.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, String)>,
    /// Write the verdicts as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: CheckFormat,
    /// Failing rows kept as evidence per rule.
    #[arg(long, default_value_t = 5)]
    evidence: usize,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    /// Let the rules call table functions that read paths or make rows
    /// without bound (`read_profile`, `range`). A check is read-only by
    /// default, as its rules may come from a pull request: each rule is
    /// one query, which reads only the profiles opened.
    #[arg(long)]
    trust_rules: bool,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

fn parse_param(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: a parameter is NAME=VALUE"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!(
            "{name:?}: a parameter name is letters, digits and _"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// `xprof-sql check`: the exit status (0, 1 or 2), or an error that made
/// the whole check impossible (the caller exits 2 on it).
pub async fn check(args: CheckArgs) -> AnyResult<i32> {
    let CheckArgs {
        inputs,
        rules,
        baseline,
        params,
        junit,
        format,
        evidence,
        run,
        trust_rules,
        mut limits,
        session: settings,
    } = args;
    limits.read_only |= !trust_rules;
    // `current` and `baseline` are the trace ids check gives the rules.
    crate::query::check::refuse_built_in_params(params.iter().map(|(n, _)| n.as_str()))?;
    // The rules first: a typo fails before any profile is read.
    let mut files = Vec::new();
    for path in &rules {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "{}: not UTF-8 text at byte {}",
                path.display(),
                e.utf8_error().valid_up_to()
            )
        })?;
        files.push((path.clone(), parse_rules(path, &text)?));
    }
    let mut all_inputs = inputs.clone();
    all_inputs.extend(baseline.iter().cloned());
    let mut session = new_session(&limits, &settings, &all_inputs).await?;
    open_into(&mut session, &inputs, run.clone(), settings.input_format).await?;
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    values.insert("current".into(), session.trace_ids_since(0));
    if !baseline.is_empty() {
        let before = session.opened().len();
        open_into(&mut session, &baseline, run, settings.input_format).await?;
        values.insert("baseline".into(), session.trace_ids_since(before));
    }
    values.extend(params);
    let mut reports = Vec::new();
    for (path, rules) in &files {
        reports.push(run_rules(&session, path, rules, &values, evidence).await);
    }
    // The verdicts first: a JUnit file that cannot be written loses no
    // evidence.
    match format {
        CheckFormat::Table => print_table(&reports)?,
        CheckFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&check_report_json(&reports))?
        ),
    }
    if let Some(out) = &junit {
        crate::query::output_file::write_output(out, junit_xml(&reports).as_bytes())?;
    }
    Ok(totals(&reports).exit_code())
}

/// The verdicts over every file.
fn totals(reports: &[CheckReport]) -> Counts {
    reports
        .iter()
        .map(CheckReport::counts)
        .fold(Counts::default(), |t, c| t + c)
}

fn print_table(reports: &[CheckReport]) -> AnyResult<()> {
    let counts = totals(reports);
    for report in reports {
        for r in &report.results {
            let place = format!("{}:{}", report.path.display(), r.rule.line);
            match &r.status {
                Status::Passed => outln!("PASS   {}  ({place})", r.rule.name),
                Status::Failed => {
                    outln!(
                        "FAIL   {}  ({place}): {} failing row{}{}",
                        r.rule.name,
                        r.rows,
                        if r.rows == 1 { "" } else { "s" },
                        if r.rule.description.is_empty() {
                            String::new()
                        } else {
                            format!(" — {}", r.rule.description)
                        }
                    );
                    for line in evidence_lines(&r.evidence) {
                        outln!("         {line}");
                    }
                    let shown = r.evidence.iter().map(|b| b.num_rows()).sum::<usize>();
                    if r.rows > shown {
                        outln!("         … {} more", r.rows - shown);
                    }
                }
                Status::Error(why) => outln!("ERROR  {}  {why}", r.rule.name),
                Status::NoData(why) => outln!("NODATA {}  {why}", r.rule.name),
                _ => outln!("?      {}  ({place})", r.rule.name),
            }
        }
    }
    outln!(
        "{} rules: {} passed, {} failed, {} could not run, {} had no data",
        counts.total(),
        counts.passed,
        counts.failed,
        counts.errors,
        counts.no_data
    );
    Ok(())
}

/// The verdicts of `reports` as one JSON document, as `check --format
/// json` prints it and Python's `xprof_sql.check` returns it: every rule
/// (name, file, line, description, status `pass`/`fail`/`error`, rows,
/// evidence rows as objects, error, seconds), the counts and the exit
/// status.
pub fn check_report_json(reports: &[CheckReport]) -> serde_json::Value {
    use serde_json::json;
    let rules: Vec<serde_json::Value> = reports
        .iter()
        .flat_map(|report| {
            report.results.iter().map(move |r| {
                let (status, error) = match &r.status {
                    Status::Passed => ("pass", None),
                    Status::Failed => ("fail", None),
                    Status::Error(why) => ("error", Some(why.clone())),
                    Status::NoData(why) => ("no_data", Some(why.clone())),
                    _ => ("unknown", None),
                };
                let evidence: Vec<serde_json::Value> =
                    r.evidence.iter().flat_map(json_rows).collect();
                json!({
                    "name": r.rule.name,
                    "file": report.path.display().to_string(),
                    "line": r.rule.line,
                    "description": r.rule.description,
                    "status": status,
                    "rows": r.rows,
                    "evidence": evidence,
                    "error": error,
                    "seconds": r.seconds,
                })
            })
        })
        .collect();
    let counts = totals(reports);
    json!({
        "rules": rules,
        "passed": counts.passed,
        "failed": counts.failed,
        "errors": counts.errors,
        "no_data": counts.no_data,
        "exit_code": counts.exit_code(),
    })
}

/// A batch's rows as JSON objects (NULL columns left out), through the
/// plain types `query --format json` writes.
fn json_rows(batch: &arrow::record_batch::RecordBatch) -> Vec<serde_json::Value> {
    let mut buf = Vec::new();
    let written = crate::output::plain_batch(batch).ok().and_then(|plain| {
        let mut w = arrow::json::ArrayWriter::new(&mut buf);
        w.write(&plain).ok()?;
        w.finish().ok()
    });
    match written.and_then(|()| serde_json::from_slice(&buf).ok()) {
        Some(serde_json::Value::Array(rows)) => rows,
        _ => Vec::new(),
    }
}
