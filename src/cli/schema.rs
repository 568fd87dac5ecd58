//! `xprof-sql schema` (and the shell's `.schema`): the tables and their
//! columns, the views' SQL and the diff table functions, as text or
//! Markdown.

use crate::format::{Table, docs};
use crate::query::diff::DIFFS;
use crate::query::views::{self, VIEWS};

use crate::cli::{AnyResult, out, outln};

/// `schema`'s arguments.
#[derive(clap::Args)]
pub struct SchemaArgs {
    /// One table, or one view (its SQL); default: all tables, and the views.
    table: Option<String>,
    /// Markdown (as docs/schema.md).
    #[arg(long)]
    markdown: bool,
}

/// `schema`.
pub fn schema(args: SchemaArgs) -> AnyResult<()> {
    print_schema(args.table.as_deref(), args.markdown)
}

/// Prints one table's columns, one view's SQL, or (no name) every table
/// and the list of views; an unknown name is an error naming them all.
pub fn print_schema(table: Option<&str>, markdown: bool) -> AnyResult<()> {
    if let Some(v) = table.and_then(views::find) {
        outln!("view {}: {}\n", v.name, v.doc);
        let columns = v.columns();
        if !columns.is_empty() {
            outln!("columns:");
            let width = columns
                .iter()
                .map(|(name, _)| name.len())
                .max()
                .unwrap_or(0);
            for (name, meaning) in &columns {
                outln!("  {name:width$}  {meaning}");
            }
            outln!();
        }
        out!("{}", v.sql);
        return Ok(());
    }
    if let Some(d) = table.and_then(|n| DIFFS.iter().find(|d| d.name == n)) {
        outln!("table function {}(a, b): {}\n", d.name, d.doc);
        outln!("{}", d.sql());
        return Ok(());
    }
    let t = match table {
        Some(name) => Some(Table::from_name(name).ok_or_else(|| {
            let names: Vec<_> = Table::ALL.iter().map(|t| t.name()).collect();
            let views: Vec<_> = VIEWS.iter().map(|v| v.name).collect();
            format!(
                "no table or view {name:?}; tables: {}; views: {}",
                names.join(", "),
                views.join(", ")
            )
        })?),
        None => None,
    };
    if markdown {
        out!("{}", docs::markdown());
    } else {
        out!("{}", docs::text(t));
        if t.is_none() {
            outln!("views:");
            for v in VIEWS {
                outln!("  {}: {}", v.name, v.doc);
            }
            outln!("table functions (a, b: run names or trace ids):");
            for d in DIFFS {
                outln!("  {}(a, b): {}", d.name, d.doc);
            }
        }
    }
    Ok(())
}
