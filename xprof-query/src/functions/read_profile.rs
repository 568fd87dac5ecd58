//! `read_profile('path' [, 'table'])`: one table of a profile opened from
//! SQL, without registering it first.
//!
//! The input is anything `xprof-sql query` opens (a file, a run or log
//! folder, a converted dataset); the table is `events` unless named. It is
//! converted when the query is planned, into memory or, above the
//! in-memory limit, into a temporary dataset kept while the plan lives.
//! Trace ids start at 0 for each call, so rows of two calls (or of a call
//! and the session's tables) share ids: join them on names, not ids.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue, plan_err};
use datafusion::logical_expr::Expr;
use xprof_format::Table;

use crate::inputs::{Inputs, OpenOptions};

/// The `read_profile` table function.
#[derive(Debug, Default)]
pub struct ReadProfile;

fn string_arg(exprs: &[Expr], index: usize) -> Option<String> {
    match exprs.get(index) {
        Some(Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            _,
        )) => Some(s.clone()),
        _ => None,
    }
}

impl TableFunctionImpl for ReadProfile {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        if exprs.is_empty() || exprs.len() > 2 {
            return plan_err!(
                "read_profile('path' [, 'table']) takes 1 or 2 arguments, got {}",
                exprs.len()
            );
        }
        let Some(path) = string_arg(exprs, 0) else {
            return plan_err!("read_profile: the path must be a string literal");
        };
        let table = match exprs.get(1) {
            None => Table::Events,
            Some(_) => {
                let Some(name) = string_arg(exprs, 1) else {
                    return plan_err!("read_profile: the table name must be a string literal");
                };
                Table::from_name(&name).ok_or_else(|| {
                    let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
                    DataFusionError::Plan(format!(
                        "read_profile: no table {name:?}; one of {}",
                        names.join(", ")
                    ))
                })?
            }
        };
        let mut inputs = Inputs::default();
        inputs
            .open(&[&path], &OpenOptions::default())
            .map_err(|e| DataFusionError::Plan(format!("read_profile({path:?}): {e}")))?;
        if inputs.opened().is_empty() {
            return plan_err!("read_profile({path:?}): no profile there");
        }
        let tables = inputs
            .tables()
            .map_err(|e| DataFusionError::Plan(format!("read_profile({path:?}): {e}")))?;
        Ok(tables.provider(table))
    }
}
