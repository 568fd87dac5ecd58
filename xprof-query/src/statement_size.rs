//! The size a statement may have before it is planned.
//!
//! A long flat chain (`a AND b AND …` of 8,000 terms, `1+1+…` of 10,000)
//! parses into an expression tree thousands of levels deep. DataFusion's
//! planner, its optimizer and the drop of the tree recurse over it: the
//! process overflows its stack and aborts, and a few thousand terms take
//! seconds to plan (3,001 terms: 9.5 s; the planner is quadratic in the
//! chain). The parser's own limit catches nested parentheses only.
//!
//! [`check_statement_size`] refuses, before anything is planned, a
//! statement longer than [`MAX_STATEMENT_BYTES`] or with an expression
//! nested deeper than [`MAX_EXPRESSION_DEPTH`] (each operator of a chain
//! is one level), and names the limit hit. The statement is parsed and
//! measured on a thread of its own with a stack sized for the longest
//! statement allowed, so measuring cannot overflow either. Every
//! statement of a [`ProfileSession`](crate::session::ProfileSession) is
//! checked, read-only or not.

use std::ops::ControlFlow;

use datafusion::sql::parser::{DFParser, Statement as DFStatement};
use datafusion::sql::sqlparser::ast::{Expr, Visit, Visitor};
use datafusion::sql::sqlparser::dialect::GenericDialect;

use crate::error::{QueryError, Result};

/// The longest statement planned, in bytes (of its text).
pub const MAX_STATEMENT_BYTES: usize = 1 << 20;

/// The deepest expression planned, in levels of its tree: each operator
/// of a chain is one, each parenthesis one, a term one (`1+1+1` is 3
/// levels deep, `(1+(1+1))` 5). Planning 500 levels takes well under
/// a second; legitimate profile queries stay far below.
pub const MAX_EXPRESSION_DEPTH: usize = 500;

/// The stack of the thread that parses and measures a statement: enough
/// for the parser's tree of the longest statement allowed (a 1 MiB chain
/// is ~500,000 levels deep), and only reserved, not used, by short ones.
const MEASURE_STACK_BYTES: usize = 512 << 20;

/// Refuses `sql` if it is longer than [`MAX_STATEMENT_BYTES`] or one of
/// its expressions nests deeper than [`MAX_EXPRESSION_DEPTH`]. A statement
/// that does not parse passes: the planner reports its syntax error.
pub fn check_statement_size(sql: &str) -> Result<()> {
    if sql.len() > MAX_STATEMENT_BYTES {
        return Err(QueryError::TooLarge(format!(
            "the statement is {} bytes; the limit is {MAX_STATEMENT_BYTES} bytes",
            sql.len()
        )));
    }
    let depth = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("xprof-sql-measure".into())
            .stack_size(MEASURE_STACK_BYTES)
            .spawn_scoped(scope, || deepest_expression(sql))
            .map_err(|e| QueryError::TooLarge(format!("no thread to measure the statement: {e}")))?
            .join()
            .map_err(|_| QueryError::TooLarge("measuring the statement failed".into()))
    })?;
    if depth > MAX_EXPRESSION_DEPTH {
        return Err(QueryError::TooLarge(format!(
            "an expression of the statement nests more than {MAX_EXPRESSION_DEPTH} levels deep \
             (operators chained or nested, e.g. a long `a AND b AND …`); the limit is \
             {MAX_EXPRESSION_DEPTH}: split it, or use `IN (…)` for a list of values"
        )));
    }
    Ok(())
}

/// The depth of the deepest expression of `sql`'s statements, counted
/// up to one past [`MAX_EXPRESSION_DEPTH`] (the walk stops there); 0 when
/// `sql` does not parse. The parsed tree is dropped on this thread too.
fn deepest_expression(sql: &str) -> usize {
    let Ok(statements) = DFParser::parse_sql_with_dialect(sql, &GenericDialect {}) else {
        return 0;
    };
    let mut depth = Depth::default();
    for statement in &statements {
        let flow = match statement {
            DFStatement::Statement(s) => s.visit(&mut depth),
            DFStatement::Explain(e) => match e.statement.as_ref() {
                DFStatement::Statement(s) => s.visit(&mut depth),
                _ => ControlFlow::Continue(()),
            },
            _ => ControlFlow::Continue(()),
        };
        if flow.is_break() {
            break;
        }
    }
    depth.deepest
}

/// Expression nesting of a walk: the current level and the deepest seen.
#[derive(Default)]
struct Depth {
    level: usize,
    deepest: usize,
}

impl Visitor for Depth {
    type Break = ();

    fn pre_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<()> {
        self.level += 1;
        self.deepest = self.deepest.max(self.level);
        if self.level > MAX_EXPRESSION_DEPTH {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _expr: &Expr) -> ControlFlow<()> {
        self.level -= 1;
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(op: &str, terms: usize) -> String {
        let sum = vec!["1"; terms].join(op);
        format!("SELECT {sum} AS x")
    }

    #[test]
    fn a_chain_at_the_limit_passes_and_one_past_it_is_refused() {
        // `n` terms chained by n - 1 operators: the operators are the levels,
        // and the outermost term (`1`) one more.
        let at_limit = chain("+", MAX_EXPRESSION_DEPTH);
        assert_eq!(deepest_expression(&at_limit), MAX_EXPRESSION_DEPTH);
        check_statement_size(&at_limit).unwrap();
        let past = chain("+", MAX_EXPRESSION_DEPTH + 1);
        let e = check_statement_size(&past).unwrap_err().to_string();
        assert!(e.contains("nests more than 500 levels"), "{e}");
    }

    #[test]
    fn parentheses_and_terms_are_levels_too() {
        assert_eq!(deepest_expression("SELECT 1+1+1 AS x"), 3);
        assert_eq!(deepest_expression("SELECT (1+(1+1)) AS x"), 5);
        assert_eq!(deepest_expression("SELECT f(a) FROM t WHERE b = 1"), 2);
        // What does not parse is left to the planner's syntax error.
        assert_eq!(deepest_expression("SELEC 1"), 0);
    }

    #[test]
    fn the_longest_statement_allowed_is_measured_without_overflow() {
        // ~512 K levels: the walk stops past the limit, the tree is dropped
        // on the measuring thread's stack.
        let longest = chain("+", (MAX_STATEMENT_BYTES - 20) / 2);
        assert!(longest.len() <= MAX_STATEMENT_BYTES);
        let e = check_statement_size(&longest).unwrap_err().to_string();
        assert!(e.contains("levels deep"), "{e}");
        let e = check_statement_size(&format!("{longest}+1+1+1+1+1+1+1+1+1+1+1+1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bytes; the limit is 1048576 bytes"), "{e}");
    }
}
