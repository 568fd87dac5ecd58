//! Human-readable documentation of the tables, generated from [`crate::schema`].
//!
//! `docs/schema.md` in the repository is [`markdown`]'s output (a test keeps
//! them equal), and `xprof-sql schema` prints [`text`].

use std::fmt::Write;

use crate::schema::{SCHEMA_VERSION, Table, TableDef};

/// Markdown documentation of every table.
pub fn markdown() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Tables (schema v{SCHEMA_VERSION})\n");
    out.push_str(
        "Generated from `xprof-format/src/schema/` (`xprof-sql schema --markdown`); do not edit by hand.\n\n\
         Times are Int64 picoseconds (`_ps`) from the trace start unless the name says otherwise. \
         Every table starts with `trace_id`; `(trace_id, <table>_id)` is unique across a dataset. \
         In a Parquet dataset each table is a folder (`DIR/<table>/*.parquet`).\n\n",
    );
    for t in Table::ALL {
        table_markdown(&mut out, t.def());
    }
    out.push_str(PLANNED);
    out
}

/// The decisions taken for the inputs still to come (Proton, Chrome
/// trace, Mosaic GPU, LLO), so that their readers fit the model above.
const PLANNED: &str = "\
## Decided for the inputs to come (not tables yet)

- **Untimed call trees** (Proton's hatchet profile: kernels and scopes
  with aggregate metrics, no timestamps) go to their own tables, not to
  `events`: `profile_nodes` (`node_id`, `parent_id` explicit, `depth`,
  `name`, `path` as `VARCHAR[]`, `frame_type`, `time_ps`, `count`,
  `device_id`, `device_type`, FLOPs by width, bytes, the
  exclusive/property flags) and `node_metrics` (`node_id`, `metric`, typed
  value) for every other metric. `events` keeps its columns non-nullable:
  nothing is synthesized for rows that have no time.
- **Cycle-based data** (Proton intra-kernel traces, Mosaic GPU, LLO
  bundles) keeps cycles as cycles: `kernel_scopes` has `start_cycle` and
  `end_cycle` (Int64); `ts_ps`/`dur_ps` there are derived only when the
  clock is recorded in the input and are NULL otherwise, with the
  frequency used in `traces`/`device_args`.
- **LLO lanes** stay rows of `events` (nothing lost; `tracks.kind =
  'llo_unit'`, `tracks.unit` set, `kernel_event_id` filled today) and get a
  typed projection `llo_instructions` (`event_id`, `track_id`, `unit`,
  `unit_id`, `name`, `ts_ps`, `dur_ps`, `bundle_number`,
  `instruction_ordinal`, `llo_scopes` as `VARCHAR[]`, `pallas_primitive`,
  `source_file`, `source_line`, `source_call_stack`, `details`,
  `measured`, `kernel_event_id`).
- **`traces.source_format`** names the reader: `xspace`, `chrome_trace`,
  `proton_tree`, `mosaic_gpu` (Proton intra-kernel traces are `chrome_trace`).
";

fn table_markdown(out: &mut String, def: &TableDef) {
    let _ = writeln!(out, "## `{}`\n\n{}\n", def.name, def.doc);
    let _ = writeln!(out, "Sorted by: {}.\n", def.sort_by.join(", "));
    out.push_str("| column | type | null | meaning |\n|---|---|---|---|\n");
    for c in def.columns {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            c.name,
            c.ty.sql_name(),
            if c.nullable { "yes" } else { "" },
            c.doc.replace('|', "\\|")
        );
    }
    out.push('\n');
}

/// Plain-text documentation of one table, or of all when `table` is `None`.
pub fn text(table: Option<Table>) -> String {
    let mut out = String::new();
    let tables: Vec<Table> = match table {
        Some(t) => vec![t],
        None => Table::ALL.to_vec(),
    };
    for t in tables {
        let def = t.def();
        let _ = writeln!(out, "{}: {}", def.name, def.doc);
        let width = def.columns.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in def.columns {
            let _ = writeln!(
                out,
                "  {:width$}  {:<22} {}",
                c.name,
                format!(
                    "{}{}",
                    c.ty.sql_name(),
                    if c.nullable { "" } else { " NOT NULL" }
                ),
                c.doc
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_schema_md_is_up_to_date() {
        // The directory at run time: a test binary built in another checkout
        // of the same tree (a shared build folder) must read this one's docs.
        let dir = std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
        let path = format!("{dir}/../docs/schema.md");
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        let generated = super::markdown();
        if on_disk != generated {
            if std::env::var_os("XPROF_SQL_BLESS").is_some() {
                std::fs::write(path, &generated).unwrap();
            } else {
                panic!("docs/schema.md is stale: rerun with XPROF_SQL_BLESS=1");
            }
        }
    }

    #[test]
    fn text_lists_every_column_of_a_table() {
        let t = super::text(Some(crate::Table::Events));
        for c in crate::Table::Events.def().columns {
            assert!(t.contains(c.name), "{}", c.name);
        }
    }
}
