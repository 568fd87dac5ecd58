//! `xprof-sql mcp`: a Model Context Protocol server over standard input
//! and output (the `rmcp` SDK) for agents that analyse profiles.
//!
//! Its tools open inputs (the paths the server was started with, or below
//! them), list and describe the tables and views, run read-only queries
//! (a bounded number of rows back, the total stated), run a named
//! analysis, and write a report or a Perfetto timeline into the server's
//! output folder. Every answer says what its numbers are in: profiles are
//! in picoseconds where agents expect micro- or milliseconds, and that is
//! where they go wrong. Every refusal is a tool error whose text says what
//! to do instead. The same read-only mode, limits and path confinement as
//! `serve` hold ([`Sessions`]).

use std::path::PathBuf;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use futures_util::TryStreamExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Value, json};

use crate::format::Table;
use crate::query::ProfileSession;
use crate::query::diff::DIFFS;
use crate::query::views::{self, VIEWS};
use crate::serve::ServeError;
use crate::serve::sessions::Sessions;

/// Rows a query answers with unless the agent asks for fewer or more.
pub const DEFAULT_ROWS: usize = 50;
/// The most rows one answer carries.
pub const MAX_ROWS: usize = 1000;

/// What every answer about numbers reminds the agent of.
const UNITS: &str = "Units: a column ending in _ps is picoseconds (1 us = 1e6 ps, 1 ms = 1e9 ps), \
    _ns nanoseconds, _us microseconds, _ms milliseconds, _s seconds, _per_s a rate per second \
    (gflop_per_s: 1e9 floating-point operations per second); _bytes bytes; \
    _flops floating-point operations; _pct a percentage (0-100); _fraction or _ratio a fraction. \
    ts_ps is a time stamp from the trace's own origin, dur_ps a duration. Busy time counts \
    device work only.";

/// The instructions an agent reads on connecting.
const INSTRUCTIONS: &str = "SQL over accelerator profiles (XProf XSpace, PyTorch Kineto and \
    Chrome traces, Triton Proton, TPU LLO). Start with list_tables, then describe a table or \
    view, then query. Ready analyses (op_profile, step_stats, kernel_stats, …) are views: \
    run_analysis runs one. Every statement is read-only and time-limited. Times are in \
    picoseconds unless a column's name says otherwise.";

/// The MCP server ([`serve_stdio`] runs it).
#[derive(Clone)]
pub struct McpServer {
    sessions: Arc<Sessions>,
    output_dir: PathBuf,
}

impl McpServer {
    /// A server over `sessions` writing reports and timelines into
    /// `output_dir` (made when the first file is written).
    pub fn new(sessions: Arc<Sessions>, output_dir: PathBuf) -> Self {
        Self {
            sessions,
            output_dir,
        }
    }
}

/// Serves `server` on standard input and output until the client closes
/// them.
pub async fn serve_stdio(server: McpServer) -> Result<(), String> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP client did not start a session: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("the MCP session ended: {e}"))?;
    Ok(())
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("xprof-sql", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let answer = match request.name.as_ref() {
            "open_inputs" => self.open_inputs(&args).await,
            "close_inputs" => self.close_inputs(&args).await,
            "list_tables" => self.list_tables(&args).await,
            "describe" => self.describe(&args).await,
            "query" => self.query(&args).await,
            "run_analysis" => self.run_analysis(&args).await,
            "write_report" => self.write_report(&args).await,
            "export_timeline" => self.export_timeline(&args).await,
            other => Err(format!(
                "no tool {other:?}; tools: {}",
                tools()
                    .iter()
                    .map(|t| t.name.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        Ok(match answer {
            Ok(value) => {
                let text = serde_json::to_string_pretty(&value).unwrap_or_default();
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(value);
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
        .into())
    }
}

/// The tools, with their input schemas.
fn tools() -> Vec<Tool> {
    let session = json!({"type": "string", "description": "a named session opened with open_inputs; omit for the inputs the server was started with"});
    let read_only = ToolAnnotations::new().read_only(true);
    vec![
        tool(
            "open_inputs",
            "Open profile files, run folders or converted datasets as a named session. Only the \
             paths the server was started with, or files below them, may be opened. Answers \
             the inputs opened.",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "the session's name: letters, digits, _ or -"},
                "paths": {"type": "array", "items": {"type": "string"}}},
                "required": ["name", "paths"]}),
        ),
        tool(
            "close_inputs",
            "Close a named session.",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        ),
        tool(
            "list_tables",
            "The tables, views (ready analyses) and diff table functions a query can name, each \
             with what it holds.",
            json!({"type": "object", "properties": {"session": session}}),
        )
        .with_annotations(read_only.clone()),
        tool(
            "describe",
            "One table's columns (type, meaning, unit), or one view's columns and SQL, or one \
             diff function's SQL.",
            json!({"type": "object", "properties": {"name": {"type": "string"}, "session": session},
                   "required": ["name"]}),
        )
        .with_annotations(read_only.clone()),
        tool(
            "query",
            "Run one read-only SQL statement (DataFusion SQL; tables and views unqualified). \
             Answers at most max_rows rows (default 50, at most 1000) and the total row count, \
             with each column's unit. Aggregate in SQL rather than fetching many rows.",
            json!({"type": "object", "properties": {
                "sql": {"type": "string"},
                "max_rows": {"type": "integer", "minimum": 0, "maximum": MAX_ROWS},
                "session": session},
                "required": ["sql"]}),
        )
        .with_annotations(read_only.clone()),
        tool(
            "run_analysis",
            "Run a named analysis: a view (op_profile, step_stats, …; see list_tables), \
             optionally filtered by a SQL condition and ordered, or a diff function \
             (diff_hlo_stats, diff_kernel_stats, …) between sides a and b (run names or trace ids, e.g. '0' and '1').",
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "filter": {"type": "string", "description": "a SQL condition on the view's columns, e.g. trace_id = 0"},
                "order_by": {"type": "string", "description": "a SQL ORDER BY list, e.g. total_ps DESC"},
                "a": {"type": "string"}, "b": {"type": "string"},
                "max_rows": {"type": "integer", "minimum": 0, "maximum": MAX_ROWS},
                "session": session},
                "required": ["name"]}),
        )
        .with_annotations(read_only),
        tool(
            "write_report",
            "Write the HTML report of a session (busy time, steps, top ops and kernels, \
             roofline, timeline) into the server's output folder; answers its path.",
            json!({"type": "object", "properties": {
                "file_name": {"type": "string", "description": "NAME.html, no folders"},
                "title": {"type": "string"}, "session": session},
                "required": ["file_name"]}),
        ),
        tool(
            "export_timeline",
            "Write the events a query selects (SELECT * FROM events WHERE …) as a timeline for \
             ui.perfetto.dev into the server's output folder: NAME.pftrace (Perfetto) or \
             NAME.json (Chrome). Answers its path and what it holds.",
            json!({"type": "object", "properties": {
                "sql": {"type": "string"},
                "file_name": {"type": "string"},
                "counters": {"type": "boolean"}, "session": session},
                "required": ["sql", "file_name"]}),
        ),
    ]
}

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("tool schemas are objects")
    };
    Tool::new(name, description, Arc::new(schema))
}

type Answer = Result<Value, String>;

impl McpServer {
    async fn session(&self, args: &JsonObject) -> Result<Arc<ProfileSession>, String> {
        let name = optional_str(args, "session")?;
        self.sessions.get(name).await.map_err(|e| explain(&e))
    }

    async fn open_inputs(&self, args: &JsonObject) -> Answer {
        let name = required_str(args, "name")?;
        let paths: Vec<PathBuf> = args
            .get("paths")
            .and_then(Value::as_array)
            .ok_or("give \"paths\": a list of paths")?
            .iter()
            .map(|p| p.as_str().map(PathBuf::from))
            .collect::<Option<_>>()
            .ok_or("\"paths\" holds strings")?;
        let opened = self
            .sessions
            .open(name, &paths)
            .await
            .map_err(|e| explain(&e))?;
        let traces = opened
            .session
            .collect("SELECT count(*) AS traces FROM traces")
            .await
            .ok()
            .and_then(|b| first_u64(&b));
        Ok(json!({
            "session": name,
            "inputs": opened.inputs,
            "traces": traces,
            "next": format!("pass \"session\": \"{name}\" to list_tables, describe, query, run_analysis"),
        }))
    }

    async fn close_inputs(&self, args: &JsonObject) -> Answer {
        let name = required_str(args, "name")?;
        self.sessions.close(name).await.map_err(|e| explain(&e))?;
        Ok(json!({"closed": name}))
    }

    async fn list_tables(&self, args: &JsonObject) -> Answer {
        let session = self.session(args).await?;
        let entries = crate::serve::catalog::entries(session.context())
            .await
            .map_err(|e| e.to_string())?;
        let present: std::collections::HashSet<&str> = entries
            .iter()
            .filter(|e| e.schema == session.schema())
            .map(|e| e.name.as_str())
            .collect();
        let tables: Vec<Value> = Table::ALL
            .iter()
            .filter(|t| present.contains(t.name()))
            .map(|t| json!({"name": t.name(), "kind": "table", "doc": t.def().doc}))
            .collect();
        let views: Vec<Value> = VIEWS
            .iter()
            .filter(|v| present.contains(v.name))
            .map(|v| json!({"name": v.name, "kind": "view", "doc": v.doc}))
            .collect();
        let diffs: Vec<Value> = DIFFS
            .iter()
            .map(|d| json!({"name": format!("{}(a, b)", d.name), "kind": "table function", "doc": d.doc}))
            .collect();
        Ok(json!({
            "tables": tables,
            "views": views,
            "table_functions": diffs,
            "units": UNITS,
        }))
    }

    async fn describe(&self, args: &JsonObject) -> Answer {
        let name = required_str(args, "name")?;
        let session = self.session(args).await?;
        let columns = |schema: &arrow::datatypes::Schema| -> Vec<Value> {
            schema
                .fields()
                .iter()
                .map(|f| {
                    json!({
                        "name": f.name(),
                        "type": f.data_type().to_string(),
                        "nullable": f.is_nullable(),
                        "doc": crate::serve::catalog::column_doc(name, f.name()),
                        "unit": unit_of(f.name()),
                    })
                })
                .collect()
        };
        if let Some(d) = DIFFS.iter().find(|d| d.name == name) {
            return Ok(json!({"name": name, "kind": "table function", "doc": d.doc,
                             "usage": format!("SELECT * FROM {name}('a', 'b')"), "sql": d.sql()}));
        }
        let provider = session
            .context()
            .table_provider(datafusion::common::TableReference::partial(
                session.schema(),
                name,
            ))
            .await
            .map_err(|_| format!("no table or view {name:?} here: list_tables names them"))?;
        let schema = provider.schema();
        if let Some(v) = views::find(name) {
            return Ok(json!({"name": name, "kind": "view", "doc": v.doc,
                             "columns": columns(&schema), "sql": v.sql, "units": UNITS}));
        }
        let doc = Table::from_name(name).map(|t| t.def().doc);
        Ok(
            json!({"name": name, "kind": "table", "doc": doc, "columns": columns(&schema), "units": UNITS}),
        )
    }

    async fn query(&self, args: &JsonObject) -> Answer {
        let sql = required_str(args, "sql")?;
        let max_rows = max_rows(args)?;
        let session = self.session(args).await?;
        answer_rows(&session, sql, max_rows).await
    }

    async fn run_analysis(&self, args: &JsonObject) -> Answer {
        let name = required_str(args, "name")?;
        let max_rows = max_rows(args)?;
        let session = self.session(args).await?;
        let sql = if DIFFS.iter().any(|d| d.name == name) {
            let a = required_str(args, "a")?;
            let b = required_str(args, "b")?;
            format!("SELECT * FROM {name}({}, {})", quote(a), quote(b))
        } else if VIEWS.iter().any(|v| v.name == name) {
            let mut sql = format!("SELECT * FROM {name}");
            if let Some(filter) = optional_str(args, "filter")? {
                sql.push_str(&format!(" WHERE {filter}"));
            }
            if let Some(order) = optional_str(args, "order_by")? {
                sql.push_str(&format!(" ORDER BY {order}"));
            }
            sql
        } else {
            return Err(format!(
                "no analysis {name:?}: views are {}; diff functions are {}",
                VIEWS.iter().map(|v| v.name).collect::<Vec<_>>().join(", "),
                DIFFS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            ));
        };
        let mut answer = answer_rows(&session, &sql, max_rows).await?;
        answer["sql"] = Value::String(sql);
        Ok(answer)
    }

    async fn write_report(&self, args: &JsonObject) -> Answer {
        let path = self.output_path(required_str(args, "file_name")?, &[".html"])?;
        let title = optional_str(args, "title")?.unwrap_or("Profile report");
        let session = self.session(args).await?;
        let html = crate::report::report(&session, title)
            .await
            .map_err(|e| e.to_string())?;
        crate::query::output_file::write_output(&path, html.as_bytes())
            .map_err(|e| e.to_string())?;
        Ok(json!({"path": path, "bytes": html.len()}))
    }

    async fn export_timeline(&self, args: &JsonObject) -> Answer {
        use crate::query::export::{ExportFormat, ExportOptions};
        let sql = required_str(args, "sql")?;
        let file_name = required_str(args, "file_name")?;
        let path = self.output_path(file_name, &[".pftrace", ".json"])?;
        let format = if file_name.ends_with(".pftrace") {
            ExportFormat::Perfetto
        } else {
            ExportFormat::ChromeJson
        };
        let counters = args
            .get("counters")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let session = self.session(args).await?;
        let summary =
            crate::query::export::export(&session, sql, &path, &ExportOptions { format, counters })
                .await
                .map_err(|e| e.to_string())?;
        Ok(json!({
            "path": path,
            "events": summary.events,
            "tracks": summary.tracks,
            "flows": summary.flows,
            "counter_samples": summary.counter_samples,
            "open_with": "https://ui.perfetto.dev (Open trace file)",
        }))
    }

    /// `file_name` in the output folder: a plain name with one of
    /// `extensions`, never a path.
    fn output_path(&self, file_name: &str, extensions: &[&str]) -> Result<PathBuf, String> {
        let plain = !file_name.is_empty()
            && file_name.len() <= 128
            && !file_name.starts_with('.')
            && file_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !plain || !extensions.iter().any(|e| file_name.ends_with(e)) {
            return Err(format!(
                "file_name {file_name:?}: give a plain file name (letters, digits, '.', '_', \
                 '-') ending in {}; it is written in the server's output folder {}",
                extensions.join(" or "),
                self.output_dir.display()
            ));
        }
        std::fs::create_dir_all(&self.output_dir)
            .map_err(|e| format!("{}: {e}", self.output_dir.display()))?;
        Ok(self.output_dir.join(file_name))
    }
}

/// Up to `max_rows` rows of `sql`'s answer as JSON, the total counted.
async fn answer_rows(session: &ProfileSession, sql: &str, max_rows: usize) -> Answer {
    let mut stream = session.execute(sql).await.map_err(|e| explain_query(&e))?;
    let schema = stream.schema();
    let mut kept: Vec<RecordBatch> = Vec::new();
    let (mut total, mut held) = (0u64, 0usize);
    while let Some(batch) = stream
        .try_next()
        .await
        .map_err(|e| explain_datafusion(&e))?
    {
        total += batch.num_rows() as u64;
        if held < max_rows {
            let take = (max_rows - held).min(batch.num_rows());
            kept.push(batch.slice(0, take));
            held += take;
        }
    }
    // Nulls written out: an agent reads a missing key as a missing column.
    let mut writer = arrow::json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, arrow::json::writer::JsonArray>(Vec::new());
    for batch in &kept {
        writer.write(batch).map_err(|e| e.to_string())?;
    }
    writer.finish().map_err(|e| e.to_string())?;
    let bytes = writer.into_inner();
    let rows: Value = if bytes.is_empty() {
        Value::Array(Vec::new())
    } else {
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())?
    };
    let columns: Vec<Value> = schema
        .fields()
        .iter()
        .map(|f| json!({"name": f.name(), "type": f.data_type().to_string(), "unit": unit_of(f.name())}))
        .collect();
    Ok(json!({
        "columns": columns,
        "rows": rows,
        "rows_returned": held,
        "total_rows": total,
        "truncated": (held as u64) < total,
        "units": UNITS,
    }))
}

/// The unit a column's name says, where it says one.
fn unit_of(column: &str) -> Option<&'static str> {
    const SUFFIXES: &[(&str, &str)] = &[
        (
            "flop_per_s",
            "floating-point operations per second (of the prefix's scale: g = 1e9, t = 1e12)",
        ),
        (
            "byte_per_s",
            "bytes per second (of the prefix's scale: g = 1e9, t = 1e12)",
        ),
        (
            "flops_per_s",
            "floating-point operations per second (of the prefix's scale: g = 1e9, t = 1e12)",
        ),
        ("_per_s", "per second"),
        ("_ps", "picoseconds"),
        ("_ns", "nanoseconds"),
        ("_us", "microseconds"),
        ("_ms", "milliseconds"),
        ("_s", "seconds"),
        ("_bytes", "bytes"),
        ("_flops", "floating-point operations"),
        ("_pct", "percent (0-100)"),
        ("_fraction", "fraction (0-1)"),
        ("_ratio", "ratio"),
    ];
    SUFFIXES
        .iter()
        .find(|(suffix, _)| column.ends_with(suffix))
        .map(|(_, unit)| *unit)
}

fn first_u64(batches: &[RecordBatch]) -> Option<u64> {
    use arrow::array::AsArray as _;
    let column = batches.first()?.column(0);
    Some(
        column
            .as_primitive_opt::<arrow::datatypes::Int64Type>()?
            .value(0) as u64,
    )
}

fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn required_str<'a>(args: &'a JsonObject, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("give \"{key}\" (a string)"))
}

fn optional_str<'a>(args: &'a JsonObject, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("\"{key}\" is a string")),
    }
}

fn max_rows(args: &JsonObject) -> Result<usize, String> {
    match args.get("max_rows") {
        None | Some(Value::Null) => Ok(DEFAULT_ROWS),
        Some(v) => match v.as_u64() {
            Some(n) if n as usize <= MAX_ROWS => Ok(n as usize),
            _ => Err(format!(
                "max_rows is a whole number up to {MAX_ROWS}: aggregate in SQL for more"
            )),
        },
    }
}

/// A server error in words an agent can act on.
fn explain(error: &ServeError) -> String {
    match error {
        ServeError::Query(e) => explain_query(e),
        other => other.to_string(),
    }
}

fn explain_query(error: &crate::query::QueryError) -> String {
    match error {
        crate::query::QueryError::ReadOnly(m) => format!(
            "refused: {m}. This server only reads: write a SELECT (or EXPLAIN, SHOW, DESCRIBE)."
        ),
        crate::query::QueryError::DataFusion(e) => explain_datafusion(e),
        other => other.to_string(),
    }
}

fn explain_datafusion(error: &datafusion::error::DataFusionError) -> String {
    let message = error.to_string();
    match error.find_root() {
        datafusion::error::DataFusionError::ResourcesExhausted(what)
            if what.contains("time limit") =>
        {
            format!(
                "{message}. Make the query cheaper: filter (WHERE trace_id = …, a time range), \
                 aggregate, or avoid joining large tables with themselves."
            )
        }
        datafusion::error::DataFusionError::SQL(..)
        | datafusion::error::DataFusionError::Plan(_)
        | datafusion::error::DataFusionError::SchemaError(..) => format!(
            "{message}. list_tables names the tables and views; describe gives their columns."
        ),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The views the instructions and tool descriptions name as examples:
    /// a list in parentheses that ends in "…" and holds only names
    /// (`(op_profile, step_stats, …; see list_tables)`), each name of it.
    fn named_examples(text: &str) -> Vec<String> {
        let is_name = |item: &str| {
            !item.is_empty() && item.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        };
        text.split('(')
            .skip(1)
            .filter_map(|rest| rest.split_once(')').map(|(inside, _)| inside))
            .filter(|inside| inside.contains('…'))
            .filter_map(|inside| {
                let items: Vec<&str> = inside
                    .split([',', ';'])
                    .map(str::trim)
                    .filter(|item| *item != "…" && !item.starts_with("see "))
                    .collect();
                items.iter().all(|item| is_name(item)).then_some(items)
            })
            .flatten()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_analyses_named_to_agents_exist() {
        let mut texts = vec![INSTRUCTIONS.to_string()];
        texts.extend(
            tools()
                .iter()
                .filter_map(|t| t.description.as_ref().map(|d| d.to_string())),
        );
        let mut checked = 0;
        for text in &texts {
            for name in named_examples(text) {
                assert!(
                    VIEWS.iter().any(|v| v.name == name) || DIFFS.iter().any(|d| d.name == name),
                    "{name:?} is named to agents but is no view or diff function"
                );
                checked += 1;
            }
        }
        assert!(checked >= 4, "only {checked} names found");
    }

    #[test]
    fn units_come_from_column_names() {
        assert_eq!(unit_of("total_ps"), Some("picoseconds"));
        assert_eq!(unit_of("bytes_accessed"), None);
        assert_eq!(unit_of("hbm_bytes"), Some("bytes"));
        assert_eq!(unit_of("calls"), None);
        // A rate is not a time.
        assert!(
            unit_of("gflop_per_s")
                .unwrap()
                .starts_with("floating-point operations per second")
        );
        assert!(
            unit_of("gbyte_per_s")
                .unwrap()
                .starts_with("bytes per second")
        );
        assert!(
            unit_of("peak_gflops_per_s")
                .unwrap()
                .starts_with("floating-point operations per second")
        );
        assert_eq!(unit_of("launches_per_s"), Some("per second"));
    }
}
