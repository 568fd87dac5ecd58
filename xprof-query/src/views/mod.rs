//! The canned analyses: SQL views a user can read and copy.
//!
//! Each view is one `.sql` file in this folder, written against the
//! unqualified table names. The file starts with the view's description:
//! `-- ` lines (joined with spaces, they are what `xprof-sql schema`
//! lists), then its columns, one `-- @column NAME: meaning and unit` line
//! each (a longer text goes on in lines starting `--   `), then a line
//! `--` alone; what follows that line is the view's definition, the SQL
//! registered and printed. The header is read at compile time: a file
//! without a description, or with a malformed `@column` line, does not
//! build, and a test holds each view's `@column` names to its real
//! columns. [`VIEWS`] lists the files and [`register_views`] creates them
//! in the schema holding the tables. A view that SQL computes too slowly
//! gets a provider giving the same rows another way ([`NativeView`]):
//! `event_steps` (`event_steps.rs`, a walk in memory) and `events_db`
//! (`events_db/`, one pass over the events).
//!
//! What several views share (the Kineto args and HTA's last-step rule,
//! the busy islands of TPU op lines, ...) is a helper view, written the
//! same way in a file whose name starts with `_` and listed in
//! [`HELPERS`]: registered before the views, printed by `xprof-sql schema
//! _NAME`, but left out of the listings of `schema` and `.tables`.
//!
//! A new view is a new `NAME.sql` here, `view!("NAME")` in [`VIEWS`], and
//! a golden query using it in tests/sql/.

mod event_steps;
mod events_db;
mod nodes;

pub use crate::catalog::register_views;

/// A view: its name, what it answers, and its SQL.
#[derive(Debug, Clone, Copy)]
pub struct ViewDef {
    /// View name, part of the public SQL contract.
    pub name: &'static str,
    /// What the view answers: the description at the top of its `.sql`
    /// file.
    pub doc: &'static str,
    /// The `SELECT` defining it: its `.sql` file after the description.
    pub sql: &'static str,
    /// Its `-- @column` lines as written ([`ViewDef::columns`] reads
    /// them).
    pub column_lines: &'static str,
    /// A table provider that gives the same rows as `sql` another way,
    /// registered in its place: `(schema of the tables, sql)` to provider.
    /// `None` for a view that is its SQL.
    pub native: Option<NativeView>,
}

/// Builds a view's native provider from the schema holding the tables and
/// the view's SQL (which stays its definition).
pub type NativeView =
    fn(&str, &'static str) -> std::sync::Arc<dyn datafusion::catalog::TableProvider>;

/// The view of `NAME.sql` in this folder (with a native provider when
/// given): its description and definition split at compile time, so a file
/// without a description does not build.
macro_rules! view {
    ($name:literal) => {
        view!($name, None)
    };
    ($name:literal, $native:expr) => {{
        const FILE: &str = include_str!(concat!($name, ".sql"));
        const DOC_LEN: usize = scan::<0>(FILE).doc_len;
        const DOC: [u8; DOC_LEN] = scan::<DOC_LEN>(FILE).doc;
        const COLUMNS: (usize, usize) = scan::<0>(FILE).columns;
        ViewDef {
            name: $name,
            doc: utf8(&DOC),
            sql: utf8(FILE.as_bytes().split_at(scan::<0>(FILE).sql_start).1),
            column_lines: utf8(FILE.as_bytes().split_at(COLUMNS.1).0.split_at(COLUMNS.0).1),
            native: $native,
        }
    }};
}

/// The helper views, private pieces the views share (a name starting with
/// `_`): registered before [`VIEWS`], in this order (a helper may read
/// the ones above it), and not listed to users.
pub const HELPERS: &[ViewDef] = &[
    view!("_kineto_events"),
    view!("_kineto_steps"),
    view!("_kineto_last_step"),
    view!("_kineto_cpu_events"),
    view!("_tpu_op_events"),
    view!("_op_busy_islands"),
];

/// Whether `node` is the plan of a native view ([`NativeView`]): the
/// walk that computes `event_steps` or the pass that computes
/// `events_db`. It plans and runs its own input queries, so it runs whole
/// in one process (a cluster keeps it in the client).
pub fn is_native_view_plan(node: &dyn datafusion::physical_plan::ExecutionPlan) -> bool {
    node.is::<event_steps::EventStepsExec>() || node.is::<events_db::EventsDbExec>()
}

/// A view or helper view by name.
pub fn find(name: &str) -> Option<&'static ViewDef> {
    VIEWS.iter().chain(HELPERS).find(|v| v.name == name)
}

impl ViewDef {
    /// Its columns as its `-- @column` lines document them: `(name,
    /// meaning)`, in order, continuation lines joined with a space.
    pub fn columns(&self) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = Vec::new();
        for line in self.column_lines.lines() {
            if let Some(rest) = line.strip_prefix("-- @column ") {
                let (name, text) = rest.split_once(':').unwrap_or((rest, ""));
                out.push((name.trim(), text.trim().to_string()));
            } else if let (Some(more), Some(last)) = (line.strip_prefix("--   "), out.last_mut()) {
                last.1.push(' ');
                last.1.push_str(more.trim());
            }
        }
        out
    }
}

/// Every view, in documentation order.
pub const VIEWS: &[ViewDef] = &[
    view!("event_stats"),
    view!("device_ops"),
    view!("device_busy"),
    view!("hlo_stats"),
    view!("roofline"),
    view!("op_profile"),
    view!("framework_op_stats"),
    view!("kernel_stats"),
    view!("step_stats"),
    view!("event_steps", Some(event_steps::native_view)),
    view!("events_db", Some(events_db::native_view)),
    view!("kernel_launch"),
    view!("gpu_kernels"),
    view!("gpu_peaks"),
    view!("kineto_gpu_events"),
    view!("gpu_kernel_type_breakdown"),
    view!("gpu_kernel_breakdown"),
    view!("temporal_breakdown"),
    view!("idle_time_breakdown"),
    view!("comm_comp_overlap"),
    view!("kernel_launch_stats"),
    view!("queue_length"),
    view!("queue_length_summary"),
    view!("kineto_ops"),
    view!("proton_kernels"),
    view!("kernel_scopes"),
    view!("warp_scopes"),
    view!("llo_instructions"),
    view!("unit_utilization"),
    view!("bundle_stats"),
    view!("instruction_mix"),
    view!("llo_concurrency"),
    view!("llo_region_entries"),
    view!("unit_counters"),
    view!("llo_region_utilization"),
    view!("llo_region_segments"),
    view!("llo_region_profile"),
    // Reads `llo_region_segments` and `llo_region_profile` on a
    // kernel-profiling capture.
    view!("source_hotspots"),
    view!("llo_dump_unit_check"),
    view!("llo_kernels"),
    view!("utilization_viewer"),
    view!("llo_protos"),
    view!("async_overlap"),
    view!("engine_concurrency"),
];

/// A view file read by [`scan`]: its description (the first `N` bytes of
/// it), the description's length, where its `@column` lines are and where
/// the definition starts.
struct Scan<const N: usize> {
    doc: [u8; N],
    doc_len: usize,
    /// Byte range of the `-- @column` lines (empty when there are none).
    columns: (usize, usize),
    sql_start: usize,
}

/// Whether `bytes[at..]` starts with `prefix`.
const fn starts_with(bytes: &[u8], at: usize, prefix: &[u8]) -> bool {
    if at + prefix.len() > bytes.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if bytes[at + i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Reads the header of a view file: its description (`-- ` lines, each
/// without the `-- `, joined by one space), then its `-- @column NAME:
/// text` lines (with `--   ` continuation lines), up to the line `--`;
/// writes the first `N` bytes of the description (call with `N` = 0 for
/// the length, then with the length). Panics, at compile time in
/// [`VIEWS`], when the file does not start that way.
const fn scan<const N: usize>(file: &str) -> Scan<N> {
    let bytes = file.as_bytes();
    let mut doc = [0u8; N];
    let mut doc_len = 0;
    let mut columns = (0, 0);
    let mut line = 0;
    loop {
        if line + 2 > bytes.len() || bytes[line] != b'-' || bytes[line + 1] != b'-' {
            panic!("a view file starts with its description: `-- ` lines, then `--` alone");
        }
        let mut end = line + 2;
        while end < bytes.len() && bytes[end] != b'\n' {
            end += 1;
        }
        if end == line + 2 {
            if doc_len == 0 {
                panic!("a view file's description is empty");
            }
            let sql_start = if end < bytes.len() { end + 1 } else { end };
            if columns.0 > 0 {
                columns.1 = line;
            }
            return Scan {
                doc,
                doc_len,
                columns,
                sql_start,
            };
        }
        if bytes[line + 2] != b' ' {
            panic!("a line of a view's description starts with `-- `");
        }
        if starts_with(bytes, line, b"-- @column ") {
            // `NAME: text`, NAME a plain identifier.
            let mut i = line + 11;
            while i < end && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i == line + 11 || i + 2 > end || bytes[i] != b':' || bytes[i + 1] != b' ' {
                panic!("a view's column line is `-- @column NAME: meaning and unit`");
            }
            if columns.0 == 0 {
                columns.0 = line;
            }
        } else if columns.0 > 0 {
            if !starts_with(bytes, line, b"--   ") {
                panic!(
                    "after a view's `-- @column` lines come their `--   ` continuations or `--`"
                );
            }
        } else {
            if doc_len > 0 {
                if doc_len < N {
                    doc[doc_len] = b' ';
                }
                doc_len += 1;
            }
            let mut i = line + 3;
            while i < end {
                if doc_len < N {
                    doc[doc_len] = bytes[i];
                }
                doc_len += 1;
                i += 1;
            }
        }
        line = end + 1;
    }
}

/// `bytes` as text; they are a part of a view file cut at line ends.
const fn utf8(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("a view file is UTF-8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_file_splits_into_its_description_and_its_definition() {
        let file = "-- Per device: busy\n-- time.\n--\n-- How.\nSELECT 1\n";
        const N: usize = 20;
        let s = scan::<N>(file);
        assert_eq!(s.doc_len, "Per device: busy time.".len());
        assert_eq!(&s.doc[..N], &b"Per device: busy tim"[..]);
        assert_eq!(&file[s.sql_start..], "-- How.\nSELECT 1\n");
        assert_eq!(s.columns, (0, 0));
    }

    #[test]
    fn column_lines_are_read_apart_from_the_description() {
        let file = "-- Busy time.\n-- @column busy_ps: time, in\n--   ps.\n-- @column n: ops.\n--\nSELECT 1\n";
        const N: usize = 11;
        let s = scan::<N>(file);
        assert_eq!(&s.doc[..s.doc_len], b"Busy time.");
        assert_eq!(&file[s.sql_start..], "SELECT 1\n");
        let view = ViewDef {
            name: "v",
            doc: "Busy time.",
            sql: "SELECT 1",
            column_lines: &file[s.columns.0..s.columns.1],
            native: None,
        };
        assert_eq!(
            view.columns(),
            vec![
                ("busy_ps", "time, in ps.".to_string()),
                ("n", "ops.".to_string())
            ]
        );
    }

    #[test]
    fn every_view_has_a_one_line_description_and_a_query() {
        for v in VIEWS {
            assert!(!v.doc.is_empty() && !v.doc.contains('\n'), "{}", v.name);
            assert!(v.sql.contains("SELECT"), "{}", v.name);
        }
        let busy = VIEWS.iter().find(|v| v.name == "device_busy").unwrap();
        assert_eq!(
            busy.doc,
            "Per device: ops, span from first op to last, busy time as the union of op intervals (overlaps once), idle, busy percent."
        );
        assert!(busy.sql.starts_with("SELECT trace_id, device_id"));
    }
}
