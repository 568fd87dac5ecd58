//! Golden SQL: every view and function with its query and answer side by
//! side, in `tests/sql/*.slt`.
//!
//! The files use the sqllogictest record syntax, read by this small
//! harness (no extra dependency): a `# profile: PATH` line names the
//! inputs the file's queries run on (paths from the repository root; the
//! line may repeat), then records
//!
//! ```text
//! query <column types> [rowsort]
//! SELECT ...
//! ----
//! value value
//! ```
//!
//! separated by blank lines. The column types are one letter per column of
//! the answer, checked against its Arrow types: `I` integer, `R` floating
//! point or decimal, `T` text (strings, dictionaries of them, binary), `B`
//! boolean, `?` anything else (lists, structs, times). Values are written
//! space-separated as Arrow displays them, `NULL` for NULL and `(empty)`
//! for an empty string.
//! `statement ok` / `statement error <text>` records run a statement and
//! check it succeeds / fails with a message containing `<text>`.
//! `XPROF_SQL_BLESS=1` rewrites the answers from what the queries return
//! (review the diff).

use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use xprof_sql::query::{OpenOptions, ProfileSession};

enum Record {
    Query {
        header: String,
        sql: String,
        expected: Vec<String>,
        rowsort: bool,
    },
    Statement {
        header: String,
        sql: String,
        error: Option<String>,
    },
}

struct SltFile {
    profiles: Vec<PathBuf>,
    /// Comment lines before each record (kept when blessing).
    preambles: Vec<Vec<String>>,
    records: Vec<Record>,
}

fn parse(text: &str, root: &Path) -> SltFile {
    let mut profiles = Vec::new();
    let mut preambles = Vec::new();
    let mut records = Vec::new();
    let mut comments = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(p) = line.strip_prefix("# profile: ") {
            profiles.push(root.join(p.trim()));
            comments.push(line.to_string());
            continue;
        }
        if line.starts_with('#') || line.trim().is_empty() {
            comments.push(line.to_string());
            continue;
        }
        let header = line.to_string();
        let mut sql = Vec::new();
        while let Some(l) = lines.peek() {
            if l.trim().is_empty() || *l == "----" {
                break;
            }
            sql.push(lines.next().unwrap().to_string());
        }
        let sql = sql.join("\n");
        if let Some(rest) = header.strip_prefix("query ") {
            let mut expected = Vec::new();
            if lines.peek() == Some(&"----") {
                lines.next();
                while let Some(l) = lines.peek() {
                    if l.trim().is_empty() {
                        break;
                    }
                    expected.push(lines.next().unwrap().to_string());
                }
            }
            records.push(Record::Query {
                rowsort: rest.split_whitespace().any(|w| w == "rowsort"),
                header,
                sql,
                expected,
            });
        } else if let Some(rest) = header.strip_prefix("statement ") {
            let error = rest.strip_prefix("error").map(|e| e.trim().to_string());
            records.push(Record::Statement { header, sql, error });
        } else {
            panic!("unknown record {header:?}");
        }
        // Trailing blank lines belong to the next record's preamble.
        preambles.push(std::mem::take(&mut comments));
    }
    preambles.push(comments);
    SltFile {
        profiles,
        preambles,
        records,
    }
}

/// The sqllogictest type letter of an Arrow type.
fn type_letter(t: &DataType) -> char {
    match t {
        t if t.is_integer() => 'I',
        t if t.is_floating() => 'R',
        DataType::Decimal128(..) | DataType::Decimal256(..) => 'R',
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => 'T',
        DataType::Dictionary(_, value) => type_letter(value),
        DataType::Boolean => 'B',
        _ => '?',
    }
}

/// The type letters of a query's answer.
fn type_letters(schema: &arrow::datatypes::Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| type_letter(f.data_type()))
        .collect()
}

fn render(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let values: Vec<String> = formatters
                .iter()
                .map(|f| {
                    let v = f.value(row).to_string();
                    if v.is_empty() { "(empty)".into() } else { v }
                })
                .collect();
            rows.push(values.join(" "));
        }
    }
    rows
}

async fn run_file(path: &Path, root: &Path, bless: bool) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = parse(&text, root);
    assert!(
        !file.profiles.is_empty(),
        "{}: no `# profile:` line",
        path.display()
    );
    let mut session = ProfileSession::new();
    session
        .open(&file.profiles, &OpenOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut failures = Vec::new();
    let mut out = String::new();
    for (i, record) in file.records.iter().enumerate() {
        for c in &file.preambles[i] {
            out.push_str(c);
            out.push('\n');
        }
        match record {
            Record::Statement { header, sql, error } => {
                let result = match session.sql(sql).await {
                    Ok(df) => df.collect().await.map(|_| ()).map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                };
                match (error, result) {
                    (None, Err(e)) => failures.push(format!("{sql}\nfailed: {e}")),
                    (Some(want), Ok(())) => {
                        failures.push(format!("{sql}\nsucceeded, expected error {want:?}"))
                    }
                    (Some(want), Err(e)) if !e.contains(want.as_str()) => {
                        failures.push(format!("{sql}\nerror {e:?} lacks {want:?}"))
                    }
                    _ => {}
                }
                out.push_str(&format!("{header}\n{sql}\n"));
            }
            Record::Query {
                header,
                sql,
                expected,
                rowsort,
            } => {
                let batches = match session.sql(sql).await {
                    Ok(df) => {
                        let schema = df.schema().as_arrow().clone();
                        df.collect()
                            .await
                            .map(|b| (schema, b))
                            .map_err(|e| e.to_string())
                    }
                    Err(e) => Err(e.to_string()),
                };
                let declared = header
                    .strip_prefix("query ")
                    .and_then(|r| r.split_whitespace().next())
                    .unwrap_or("")
                    .to_string();
                let mut letters = declared.clone();
                let mut got = match batches {
                    Ok((schema, b)) => {
                        letters = type_letters(&schema);
                        if letters != declared {
                            failures.push(format!(
                                "{sql}\ncolumn types {declared:?}, the answer has {letters:?}"
                            ));
                        }
                        render(&b)
                    }
                    Err(e) => {
                        failures.push(format!("{sql}\nfailed: {e}"));
                        expected.clone()
                    }
                };
                // Blessing writes the answer's letters, keeping the options.
                let header = match header.strip_prefix("query ") {
                    Some(rest) => {
                        let options: Vec<&str> = rest.split_whitespace().skip(1).collect();
                        std::iter::once(format!("query {letters}"))
                            .chain(options.iter().map(|o| o.to_string()))
                            .collect::<Vec<_>>()
                            .join(" ")
                    }
                    None => header.clone(),
                };
                if *rowsort {
                    got.sort();
                }
                let mut want = expected.clone();
                if *rowsort {
                    want.sort();
                }
                if got != want {
                    failures.push(format!(
                        "{sql}\nexpected:\n{}\ngot:\n{}",
                        want.join("\n"),
                        got.join("\n")
                    ));
                }
                out.push_str(&format!("{header}\n{sql}\n----\n"));
                for row in &got {
                    out.push_str(row);
                    out.push('\n');
                }
            }
        }
    }
    for c in file.preambles.last().unwrap() {
        out.push_str(c);
        out.push('\n');
    }
    if bless {
        std::fs::write(path, out.trim_end().to_string() + "\n").unwrap();
        return Vec::new();
    }
    failures
        .into_iter()
        .map(|f| format!("{}: {f}", path.display()))
        .collect()
}

#[tokio::test]
async fn every_golden_sql_file_answers_as_written() {
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    );
    let bless = std::env::var_os("XPROF_SQL_BLESS").is_some();
    let mut files: Vec<_> = std::fs::read_dir(root.join("tests/sql"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for f in &files {
        failures.extend(run_file(f, &root, bless).await);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every registered view and function appears in some golden file.
#[tokio::test]
async fn every_view_and_function_has_a_golden_query() {
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    );
    let mut all = String::new();
    for e in std::fs::read_dir(root.join("tests/sql")).unwrap() {
        all.push_str(&std::fs::read_to_string(e.unwrap().path()).unwrap());
    }
    let views = xprof_sql::query::views::VIEWS
        .iter()
        .map(|v| format!("FROM {}", v.name));
    let functions = xprof_sql::query::functions::NAMES
        .iter()
        .chain(xprof_sql::query::functions::EVENT_FUNCTION_NAMES)
        .map(|f| format!("{f}("));
    for usage in views.chain(functions) {
        assert!(
            all.contains(&usage),
            "no golden query in tests/sql/ has {usage:?}"
        );
    }
}

/// Every view and helper view documents each of its columns, by its real
/// name and in order, with a `-- @column` line that says something.
#[tokio::test]
async fn every_view_documents_each_of_its_columns() {
    let mut session = ProfileSession::new();
    session
        .open(
            &[std::path::PathBuf::from(
                "examples/data/jax_cpu_mlp.xplane.pb",
            )],
            &OpenOptions::default(),
        )
        .await
        .unwrap();
    let views = xprof_sql::query::views::VIEWS
        .iter()
        .chain(xprof_sql::query::views::HELPERS);
    for view in views {
        let real: Vec<String> = session
            .sql(&format!("SELECT * FROM {} LIMIT 0", view.name))
            .await
            .unwrap()
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let documented = view.columns();
        let names: Vec<&str> = documented.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, real, "{}: its `-- @column` lines", view.name);
        for (name, meaning) in &documented {
            assert!(
                meaning.len() > 3 && meaning.ends_with('.'),
                "{}.{name}: a meaning, a sentence: {meaning:?}",
                view.name
            );
        }
    }
}
