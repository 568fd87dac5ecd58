//! Profiles as performance tests: a rules file of named SQL checks, each a
//! query that must return no rows (a row it returns is a failure, and the
//! row is the evidence), run over a session, with verdicts and a JUnit
//! report. `xprof-sql check` and Python's `xprof_sql.check` run it.
//!
//! A rules file is plain SQL. Each rule starts with a header comment
//! `-- check: NAME`; further `--` lines right under it describe it; its
//! query runs to the next header (a trailing `;` is dropped). Text before
//! the first header is ignored (a file comment). `${NAME}` and
//! `${NAME:default}` in a query are parameters, replaced by the values
//! given (`--set NAME=VALUE`) or the default; `${current}` and
//! `${baseline}` are the trace ids of the profiles checked and of the
//! baseline (`'0,1'` style lists the `diff_*` functions take and an `IN
//! (…)` reads). A parameter with no value is an error of its rule, never
//! a pass.
//!
//! A rule that returns no rows passes only when it had rows to judge: its
//! **data** are the rows of its query with the outermost `WHERE` and
//! `HAVING` left out (the rows its conditions look at), or the rows of a
//! `-- data: SQL` line under its header. A rule with no data has the
//! verdict [`Status::NoData`], never a pass; so has a rule that reads
//! `${baseline}` when no baseline was given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow::record_batch::RecordBatch;

use crate::error::{QueryError, Result};
use crate::session::ProfileSession;

/// One named check of a rules file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Its name (`-- check: NAME`).
    pub name: String,
    /// The `--` lines under the header, joined by a space.
    pub description: String,
    /// The 1-based line of its header in the file.
    pub line: usize,
    /// Its query as written, parameters not yet replaced.
    pub sql: String,
    /// The 1-based line of the file where its query starts (errors of
    /// the SQL parser are placed on the file's lines by it).
    pub sql_line: usize,
    /// The query of its `-- data: SQL` line, if it has one: the rows it
    /// judges (else those of [`data_sql`] of its query).
    pub data: Option<String>,
}

/// How a rule came out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// The query returned no rows.
    Passed,
    /// The query returned rows: the failure's evidence.
    Failed,
    /// The query could not run (bad SQL, a missing table or parameter):
    /// the message says why.
    Error(String),
    /// The query returned no rows, but it had no rows to judge (its data
    /// are empty, or it reads a baseline that was not given): not a pass.
    /// The message says what was empty.
    NoData(String),
}

/// A rule's verdict.
#[derive(Debug, Clone)]
pub struct RuleResult {
    /// The rule.
    pub rule: Rule,
    /// Passed, failed or could not run.
    pub status: Status,
    /// Rows the query returned (0 unless it failed).
    pub rows: usize,
    /// The first failing rows, at most the evidence limit.
    pub evidence: Vec<RecordBatch>,
    /// Seconds the rule took.
    pub seconds: f64,
}

impl RuleResult {
    /// Whether the rule passed.
    pub fn passed(&self) -> bool {
        self.status == Status::Passed
    }
}

/// The verdicts of a rules file.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The rules file.
    pub path: PathBuf,
    /// One result per rule, in file order.
    pub results: Vec<RuleResult>,
}

/// How many rules came out each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Rules that passed.
    pub passed: usize,
    /// Rules that failed.
    pub failed: usize,
    /// Rules that could not run.
    pub errors: usize,
    /// Rules with no data to judge.
    pub no_data: usize,
}

impl Counts {
    /// Every rule counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.errors + self.no_data
    }

    /// The exit status these verdicts give: 2 when a rule could not run,
    /// else 1 when a rule failed, else 3 when a rule had no data, else 0
    /// (every rule passed).
    pub fn exit_code(&self) -> i32 {
        if self.errors > 0 {
            2
        } else if self.failed > 0 {
            1
        } else if self.no_data > 0 {
            3
        } else {
            0
        }
    }
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            passed: self.passed + o.passed,
            failed: self.failed + o.failed,
            errors: self.errors + o.errors,
            no_data: self.no_data + o.no_data,
        }
    }
}

impl CheckReport {
    /// Rules that passed, failed, could not run and had no data.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for r in &self.results {
            match r.status {
                Status::Passed => counts.passed += 1,
                Status::Failed => counts.failed += 1,
                Status::Error(_) => counts.errors += 1,
                Status::NoData(_) => counts.no_data += 1,
            }
        }
        counts
    }

    /// The process exit status `check` gives ([`Counts::exit_code`]): 0
    /// only when every rule passed.
    pub fn exit_code(&self) -> i32 {
        self.counts().exit_code()
    }
}

/// The rules of `text` (read from `path`, named in errors).
pub fn parse_rules(path: &Path, text: &str) -> Result<Vec<Rule>> {
    let mut rules: Vec<Rule> = Vec::new();
    let mut in_header = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(name) = trimmed
            .strip_prefix("--")
            .map(str::trim_start)
            .and_then(|c| c.strip_prefix("check:"))
        {
            let name = name.trim();
            if name.is_empty() || name.chars().any(char::is_whitespace) {
                return Err(rules_error(
                    path,
                    index + 1,
                    format!("a rule name is one word, got {name:?}"),
                ));
            }
            if let Some(first) = rules.iter().find(|r| r.name == name) {
                return Err(rules_error(
                    path,
                    index + 1,
                    format!("rule {name} is already defined on line {}", first.line),
                ));
            }
            rules.push(Rule {
                name: name.to_string(),
                description: String::new(),
                line: index + 1,
                sql: String::new(),
                sql_line: index + 1,
                data: None,
            });
            in_header = true;
            continue;
        }
        let Some(rule) = rules.last_mut() else {
            continue;
        };
        if in_header && let Some(comment) = trimmed.strip_prefix("--") {
            if let Some(data) = comment.trim_start().strip_prefix("data:") {
                let data = data.trim().trim_end_matches(';').trim_end();
                if data.is_empty() || rule.data.is_some() {
                    return Err(rules_error(
                        path,
                        index + 1,
                        format!("rule {}: one `-- data: SQL` line with a query", rule.name),
                    ));
                }
                rule.data = Some(data.to_string());
                continue;
            }
            if !rule.description.is_empty() {
                rule.description.push(' ');
            }
            rule.description.push_str(comment.trim());
            continue;
        }
        in_header = false;
        if rule.sql.trim().is_empty() {
            rule.sql.clear();
            if trimmed.is_empty() {
                continue;
            }
            rule.sql_line = index + 1;
        }
        rule.sql.push_str(line);
        rule.sql.push('\n');
    }
    for rule in &mut rules {
        let sql = rule.sql.trim().trim_end_matches(';').trim_end().to_string();
        if sql.is_empty() {
            return Err(rules_error(
                path,
                rule.line,
                format!("rule {} has no query", rule.name),
            ));
        }
        rule.sql = sql;
    }
    if rules.is_empty() {
        return Err(rules_error(
            path,
            1,
            "no rule: each starts with a `-- check: NAME` line above its query".into(),
        ));
    }
    Ok(rules)
}

fn rules_error(path: &Path, line: usize, what: String) -> QueryError {
    QueryError::Inputs(format!("{}:{line}: {what}", path.display()))
}

/// `sql` with its `${NAME}` and `${NAME:default}` parameters replaced by
/// `params` (or the default); the name of the first one with no value is
/// the error.
pub fn substitute(sql: &str, params: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err("a `${` with no closing `}`".into());
        };
        let inside = &after[..end];
        let (name, default) = match inside.split_once(':') {
            Some((n, d)) => (n.trim(), Some(d)),
            None => (inside.trim(), None),
        };
        match params.get(name).map(String::as_str).or(default) {
            Some(value) => out.push_str(value),
            None => {
                return Err(format!(
                    "parameter ${{{name}}} has no value (give it with --set {name}=VALUE{})",
                    if name == "baseline" {
                        ", or profiles with --baseline"
                    } else {
                        ""
                    }
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The parameters a check sets itself: the trace ids of the inputs and of
/// the baseline.
pub const BUILT_IN_PARAMS: &[&str] = &["current", "baseline"];

/// Refuses a user parameter named as a built-in one
/// ([`BUILT_IN_PARAMS`]): a value set over `${current}` would make every
/// rule compare what was not asked, and pass.
pub fn refuse_built_in_params<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    match names.into_iter().find(|n| BUILT_IN_PARAMS.contains(n)) {
        None => Ok(()),
        Some(name) => Err(format!(
            "--set {name}=…: ${{{name}}} is set by check itself (the trace ids of the {}); \
             give your parameter another name",
            if name == "current" {
                "inputs"
            } else {
                "--baseline profiles"
            }
        )),
    }
}

/// Runs every rule of `rules` (from `path`) over `session` with
/// `params`, keeping at most `evidence_rows` failing rows of each.
pub async fn run_rules(
    session: &ProfileSession,
    path: &Path,
    rules: &[Rule],
    params: &BTreeMap<String, String>,
    evidence_rows: usize,
) -> CheckReport {
    let mut results = Vec::with_capacity(rules.len());
    for rule in rules {
        let started = Instant::now();
        let place = |why: String| {
            format!(
                "{}:{}: rule {}: {why}",
                path.display(),
                rule.line,
                rule.name
            )
        };
        let (status, rows, evidence) = if needs_baseline(rule) && !params.contains_key("baseline") {
            let why = "it compares with a baseline, and none was given (--baseline PROFILE…)";
            (Status::NoData(place(why.into())), 0, Vec::new())
        } else {
            let outcome = match substitute(&rule.sql, params) {
                Err(why) => Err(why),
                Ok(sql) => match check_one_query(&sql) {
                    Err(why) => Err(why),
                    Ok(()) => run_one(session, &sql, evidence_rows)
                        .await
                        .map_err(|e| e.to_string()),
                },
            };
            match outcome {
                Ok((0, _)) => match judged(session, rule, params).await {
                    Ok(true) => (Status::Passed, 0, Vec::new()),
                    Ok(false) => {
                        let why = match &rule.data {
                            Some(_) => "its `-- data:` query returns no rows".to_string(),
                            None => "the rows its conditions judge (its query without its \
                                     outermost WHERE and HAVING) are none"
                                .to_string(),
                        };
                        (Status::NoData(place(why)), 0, Vec::new())
                    }
                    Err(why) => (
                        Status::Error(place(format!("its data: {why}"))),
                        0,
                        Vec::new(),
                    ),
                },
                Ok((rows, evidence)) => (Status::Failed, rows, evidence),
                Err(why) => (
                    Status::Error(place(in_file(&why, rule.sql_line))),
                    0,
                    Vec::new(),
                ),
            }
        };
        results.push(RuleResult {
            rule: rule.clone(),
            status,
            rows,
            evidence,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    CheckReport {
        path: path.to_path_buf(),
        results,
    }
}

/// `why` with the SQL parser's `Line: L, Column: C` (counted in the rule's
/// query) as the line of the rules file, `sql_line` being the query's
/// first. Parameter values of several lines shift it.
fn in_file(why: &str, sql_line: usize) -> String {
    const AT: &str = "Line: ";
    let Some(start) = why.find(AT) else {
        return why.to_string();
    };
    let digits = &why[start + AT.len()..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let Ok(line) = digits[..end].parse::<usize>() else {
        return why.to_string();
    };
    format!(
        "{}file line {}{}",
        &why[..start],
        sql_line + line.saturating_sub(1),
        &digits[end..]
    )
}

/// Whether `rule` reads the baseline's trace ids.
fn needs_baseline(rule: &Rule) -> bool {
    let reads = |sql: &str| sql.contains("${baseline}") || sql.contains("${baseline:");
    reads(&rule.sql) || rule.data.as_deref().is_some_and(reads)
}

/// Whether `rule`, which returned no rows, had rows to judge: its `-- data:`
/// query, else [`data_sql`] of its query, returns a row. A query whose data
/// cannot be told apart (not one `SELECT`) is taken as judged.
async fn judged(
    session: &ProfileSession,
    rule: &Rule,
    params: &BTreeMap<String, String>,
) -> Result<bool, String> {
    let sql = substitute(rule.data.as_deref().unwrap_or(&rule.sql), params)?;
    let data = match &rule.data {
        Some(_) => Some(sql),
        None => data_sql(&sql),
    };
    let Some(data) = data else {
        return Ok(true);
    };
    let probe = format!("SELECT 1 FROM ({data}) AS data LIMIT 1");
    let batches = session.collect(&probe).await.map_err(|e| e.to_string())?;
    Ok(batches.iter().any(|b| b.num_rows() > 0))
}

/// The rows a rule's query judges: the query with the outermost `WHERE`
/// and `HAVING` of its `SELECT` left out (its `WITH` and joins kept).
/// `None` when the query is not one `SELECT` (a `UNION`, say), whose
/// conditions cannot be told apart, or does not parse.
pub fn data_sql(sql: &str) -> Option<String> {
    use datafusion::sql::sqlparser::ast::{SetExpr, Statement};
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    let mut statements = Parser::parse_sql(&GenericDialect {}, sql).ok()?;
    let [Statement::Query(query)] = statements.as_mut_slice() else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return None;
    };
    select.selection = None;
    select.having = None;
    Some(query.to_string())
}

/// The row count of `sql` and its first `keep` rows. The rows stream by:
/// only the evidence kept is held, whatever the count (a rule returning
/// 30 M rows holds `keep` of them, within the session's memory limit).
async fn run_one(
    session: &ProfileSession,
    sql: &str,
    keep: usize,
) -> Result<(usize, Vec<RecordBatch>)> {
    use futures_util::StreamExt as _;
    let mut stream = session.execute(sql).await?;
    let mut rows = 0;
    let mut evidence = Vec::new();
    let mut left = keep;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        rows += batch.num_rows();
        if left > 0 && batch.num_rows() > 0 {
            let take = batch.num_rows().min(left);
            // A copy of the rows kept, not a slice holding the whole
            // batch's buffers.
            let kept = arrow::compute::take_record_batch(
                &batch,
                &arrow::array::UInt32Array::from_iter_values(0..take as u32),
            )
            .map_err(datafusion::error::DataFusionError::from)?;
            evidence.push(kept);
            left -= take;
        }
    }
    Ok((rows, evidence))
}

/// Refuses `sql` unless it is one query (`SELECT`, `WITH`, `VALUES`): a
/// rule judges rows, and a `DROP VIEW`, `SET` or `INSERT` returning none
/// would pass while changing what the rules after it see.
pub fn check_one_query(sql: &str) -> Result<(), String> {
    use datafusion::sql::parser::{DFParser, Statement as DFStatement};
    use datafusion::sql::sqlparser::ast::Statement;
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    // What does not parse is left to the planner, whose error says where.
    let Ok(statements) = DFParser::parse_sql_with_dialect(sql, &GenericDialect {}) else {
        return Ok(());
    };
    if statements.len() != 1 {
        return Err(format!(
            "a rule is one query, this one has {} statements",
            statements.len()
        ));
    }
    match &statements[0] {
        DFStatement::Statement(s) if matches!(s.as_ref(), Statement::Query(_)) => Ok(()),
        other => {
            let text = other.to_string();
            let short: String = text.chars().take(60).collect();
            Err(format!(
                "a rule is one query (SELECT …) returning the failing rows, not {short:?}"
            ))
        }
    }
}

/// Evidence rows as text, one line per row (`col=value, …`).
pub fn evidence_lines(evidence: &[RecordBatch]) -> Vec<String> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default().with_null("NULL");
    let mut lines = Vec::new();
    for b in evidence {
        let schema = b.schema();
        let formatters: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect();
        for row in 0..b.num_rows() {
            let cells: Vec<String> = schema
                .fields()
                .iter()
                .zip(&formatters)
                .map(|(f, fmt)| match fmt {
                    Ok(fmt) => format!("{}={}", f.name(), fmt.value(row)),
                    Err(_) => format!("{}=?", f.name()),
                })
                .collect();
            lines.push(cells.join(", "));
        }
    }
    lines
}

/// The report as JUnit XML (the `testsuites` form CI systems read): one
/// test suite per rules file, one test case per rule; a failed rule is a
/// `<failure>` holding its evidence rows, a rule that could not run an
/// `<error>`.
pub fn junit_xml(reports: &[CheckReport]) -> String {
    let mut tests = 0;
    let mut failures = 0;
    let mut errors = 0;
    let mut skipped = 0;
    let mut seconds = 0.0;
    let mut suites = String::new();
    for report in reports {
        let Counts {
            failed,
            errors: errored,
            no_data,
            ..
        } = report.counts();
        let time: f64 = report.results.iter().map(|r| r.seconds).sum();
        tests += report.results.len();
        failures += failed;
        errors += errored;
        skipped += no_data;
        seconds += time;
        let suite = report
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "rules".into());
        suites.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"{errored}\" skipped=\"{no_data}\" time=\"{time:.3}\" file=\"{}\">\n",
            xml(&suite),
            report.results.len(),
            xml(&report.path.display().to_string()),
        ));
        for r in &report.results {
            suites.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\" time=\"{:.3}\"",
                xml(&r.rule.name),
                xml(&suite),
                xml(&report.path.display().to_string()),
                r.rule.line,
                r.seconds
            ));
            match &r.status {
                Status::Passed => suites.push_str("/>\n"),
                Status::Failed => {
                    let lines = evidence_lines(&r.evidence);
                    let mut text = lines.join("\n");
                    if r.rows > lines.len() {
                        text.push_str(&format!("\n… {} rows in all", r.rows));
                    }
                    suites.push_str(&format!(
                        ">\n      <failure message=\"{} failing rows{}\" type=\"rows\">{}</failure>\n    </testcase>\n",
                        r.rows,
                        if r.rule.description.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", xml(&r.rule.description))
                        },
                        xml(&text)
                    ));
                }
                Status::Error(why) => suites.push_str(&format!(
                    ">\n      <error message=\"{}\" type=\"cannot_run\">{}</error>\n    </testcase>\n",
                    xml(why),
                    xml(why)
                )),
                Status::NoData(why) => suites.push_str(&format!(
                    ">\n      <skipped message=\"no data: {}\"/>\n    </testcase>\n",
                    xml(why)
                )),
            }
        }
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"xprof-sql check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n{suites}</testsuites>\n"
    )
}

/// `s` escaped for XML text and attributes; characters XML 1.0 cannot
/// hold become U+FFFD.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_split_at_their_headers_with_lines_and_descriptions() {
        let text = "-- my checks\n\n-- check: first\n-- p90 under 12 ms\nSELECT 1 WHERE false;\n\n--check:second\nSELECT *\nFROM t -- trailing\n;\n";
        let rules = parse_rules(Path::new("r.sql"), text).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(
            (
                rules[0].name.as_str(),
                rules[0].line,
                rules[0].description.as_str()
            ),
            ("first", 3, "p90 under 12 ms")
        );
        assert_eq!(rules[0].sql, "SELECT 1 WHERE false");
        assert_eq!(rules[1].line, 7);
        assert_eq!(rules[1].sql, "SELECT *\nFROM t -- trailing");
        let e = parse_rules(Path::new("r.sql"), "SELECT 1").unwrap_err();
        assert!(e.to_string().starts_with("r.sql:1: no rule"), "{e}");
        let e = parse_rules(
            Path::new("r.sql"),
            "-- check: a\nSELECT 1\n-- check: a\nSELECT 2",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "r.sql:3: rule a is already defined on line 1"
        );
        let e = parse_rules(Path::new("r.sql"), "-- check: a\n-- check: b\nSELECT 1").unwrap_err();
        assert_eq!(e.to_string(), "r.sql:1: rule a has no query");
    }

    #[test]
    fn parser_errors_are_placed_on_the_rules_file_lines() {
        let text = "-- check: bad\n-- what it checks\n\nSELECT 1\nFORM events\n";
        let rules = parse_rules(Path::new("r.sql"), text).unwrap();
        assert_eq!(rules[0].sql_line, 4);
        assert_eq!(
            in_file(
                "Expected: end of statement, found: FORM at Line: 2, Column: 1",
                4
            ),
            "Expected: end of statement, found: FORM at file line 5, Column: 1"
        );
        assert_eq!(in_file("no position", 4), "no position");
    }

    #[test]
    fn parameters_take_values_then_defaults_and_name_the_missing_one() {
        let params = BTreeMap::from([("floor".to_string(), "70".to_string())]);
        assert_eq!(
            substitute("x < ${floor} AND y < ${ceiling:5}", &params).unwrap(),
            "x < 70 AND y < 5"
        );
        let e = substitute("diff_hlo_stats('${baseline}', '${current}')", &params).unwrap_err();
        assert!(
            e.contains("${baseline} has no value") && e.contains("--baseline"),
            "{e}"
        );
        assert!(substitute("${open", &params).is_err());
    }

    #[test]
    fn junit_escapes_and_counts() {
        let rule = |name: &str| Rule {
            name: name.into(),
            description: "a < b".into(),
            line: 3,
            sql: "SELECT 1".into(),
            sql_line: 4,
            data: None,
        };
        let report = CheckReport {
            path: PathBuf::from("rules.sql"),
            results: vec![
                RuleResult {
                    rule: rule("ok"),
                    status: Status::Passed,
                    rows: 0,
                    evidence: vec![],
                    seconds: 0.5,
                },
                RuleResult {
                    rule: rule("bad&"),
                    status: Status::Error("no table \"x\" <here>".into()),
                    rows: 0,
                    evidence: vec![],
                    seconds: 0.25,
                },
            ],
        };
        assert_eq!(report.exit_code(), 2);
        let x = junit_xml(&[report]);
        assert!(x.contains("tests=\"2\" failures=\"0\" errors=\"1\""), "{x}");
        assert!(x.contains("name=\"bad&amp;\""), "{x}");
        assert!(x.contains("no table &quot;x&quot; &lt;here&gt;"), "{x}");
    }
}
