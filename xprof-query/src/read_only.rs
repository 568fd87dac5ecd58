//! Read-only checking of SQL for sessions that run SQL they did not write
//! (a service letting its users query profiles): only queries pass, and
//! only table functions that read nothing outside the session.
//!
//! [`check_read_only`] parses with DataFusion's parser and refuses, naming
//! the statement, anything but `SELECT`/`WITH`/`VALUES` queries,
//! `EXPLAIN` of one, `SHOW TABLES`/`SHOW COLUMNS`, `SHOW ALL` or one
//! setting, and `DESCRIBE`: DDL
//! (`CREATE`, `DROP`, `CREATE EXTERNAL TABLE`), DML (`INSERT`, `COPY`),
//! `SET` and the rest. A query may call only the table functions in
//! [`SAFE_TABLE_FUNCTIONS`]; `read_profile` and any other registered one
//! that may read a path is refused. The session also plans with
//! DataFusion's own `SQLOptions` denying DDL, DML and statements, a second
//! line behind this one.

use datafusion::sql::parser::{DFParser, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{ObjectName, Statement, visit_relations};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use std::ops::ControlFlow;

use crate::error::{QueryError, Result};

/// Table functions a read-only session may call: they read only the
/// session's own tables. The `diff_*` functions ([`crate::diff::DIFFS`])
/// may be called too: they compare the session's own traces. `range` and `generate_series` are not among them:
/// their rows are made without ever yielding to the runtime, so a query
/// time limit cannot stop `range(10^15)`.
pub const SAFE_TABLE_FUNCTIONS: &[&str] = &["ancestors", "descendants"];

/// Checks that every statement of `sql` only reads: see the module doc.
/// `table_functions` are the names of the table functions the session
/// has registered (any of them not in [`SAFE_TABLE_FUNCTIONS`] is refused).
pub fn check_read_only(sql: &str, table_functions: &[String]) -> Result<()> {
    let statements = DFParser::parse_sql_with_dialect(sql, &GenericDialect {})
        .map_err(QueryError::DataFusion)?;
    for statement in &statements {
        check_statement(statement, table_functions)?;
    }
    Ok(())
}

fn refuse(what: &str, statement: &dyn std::fmt::Display) -> QueryError {
    let text = statement.to_string();
    let short: String = text.chars().take(120).collect();
    QueryError::ReadOnly(format!(
        "{what} is not allowed in a read-only session: {short}"
    ))
}

fn check_statement(statement: &DFStatement, table_functions: &[String]) -> Result<()> {
    match statement {
        DFStatement::Statement(s) => check_sql_statement(s, table_functions),
        DFStatement::Explain(e) => check_statement(&e.statement, table_functions),
        DFStatement::CreateExternalTable(_) => Err(refuse("CREATE EXTERNAL TABLE", statement)),
        DFStatement::CopyTo(_) => Err(refuse("COPY", statement)),
        _ => Err(refuse("this statement", statement)),
    }
}

fn check_sql_statement(statement: &Statement, table_functions: &[String]) -> Result<()> {
    match statement {
        Statement::Query(_) => check_relations(statement, table_functions),
        Statement::Explain {
            statement: inner, ..
        } => check_sql_statement(inner, table_functions),
        Statement::ExplainTable { .. }
        | Statement::ShowTables { .. }
        | Statement::ShowColumns { .. } => check_relations(statement, table_functions),
        // `SHOW ALL`, `SHOW datafusion.execution.batch_size`: the settings,
        // read from information_schema.df_settings.
        Statement::ShowVariable { .. } => Ok(()),
        other => {
            // The statement's leading keywords (sqlparser prints them in
            // capitals): `SET`, `CREATE TABLE`, `INSERT INTO`, ...
            let text = other.to_string();
            let kind: Vec<&str> = text
                .split_whitespace()
                .take_while(|w| w.chars().all(|c| c.is_ascii_uppercase()))
                .take(3)
                .collect();
            let kind = if kind.is_empty() {
                "this statement".to_string()
            } else {
                kind.join(" ")
            };
            Err(refuse(&kind, other))
        }
    }
}

/// Refuses a relation naming a registered table function that is not safe.
fn check_relations(statement: &Statement, table_functions: &[String]) -> Result<()> {
    let mut refused: Option<String> = None;
    let _ = visit_relations(statement, |name: &ObjectName| {
        let last = name
            .0
            .last()
            .map(|p| p.to_string().trim_matches('"').to_lowercase())
            .unwrap_or_default();
        if table_functions
            .iter()
            .any(|f| f.eq_ignore_ascii_case(&last))
            && !SAFE_TABLE_FUNCTIONS.contains(&last.as_str())
            && !crate::diff::DIFFS.iter().any(|d| d.name == last)
        {
            refused = Some(last);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    match refused {
        Some(f) => Err(refuse(&format!("table function {f}()"), statement)),
        None => Ok(()),
    }
}
