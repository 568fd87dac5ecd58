//! `xprof_sql._native`: the Rust side of the `xprof_sql` Python package.
//!
//! It owns the bridge between Python and the library crates: a
//! `Session` wraps an [`xprof_sql::query::ProfileSession`] and a tokio
//! runtime; query results leave as Arrow through the C data interface
//! (`arrow-pyarrow`, no copy of the buffers); tables leave as DataFusion
//! table providers through `datafusion-ffi`'s `FFI_TableProvider` capsule
//! (`__datafusion_table_provider__`), which DataFusion-Python registers.
//! The GIL is released while Rust works, and every wait polls Python's
//! signal handlers so Ctrl-C cancels a running query.
//!
//! The Python-facing API, its docstrings and type stubs are in
//! `python/xprof_sql/`.

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arrow::datatypes::SchemaRef;
use arrow_pyarrow::{IntoPyArrow, ToPyArrow};
use datafusion::catalog::TableProvider;
use datafusion::datasource::TableType;
use datafusion::execution::SendableRecordBatchStream;
use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_ffi::table_provider::FFI_TableProvider;
use futures_util::StreamExt;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use tokio::runtime::Runtime;
use xprof_sql::convert::ConvertError;
use xprof_sql::convert::many::{self, ConvertSettings, Layout};
use xprof_sql::convert::reader::Progress;
use xprof_sql::format::dataset::{PartitionKey, WriteOptions};
use xprof_sql::format::{FormatError, Table};
use xprof_sql::query::{OpenOptions, ProfileSession, QueryError as RustQueryError, SessionOptions};

create_exception!(
    _native,
    Error,
    PyException,
    "Base class of the errors of xprof_sql."
);
create_exception!(
    _native,
    InputError,
    Error,
    "An input could not be read: `path` and `offset` (bytes into the file, or into what a .gz inflates to; None when unknown) say where."
);
create_exception!(
    _native,
    QueryError,
    Error,
    "A statement failed to plan or run."
);
create_exception!(
    _native,
    ReadOnlyError,
    QueryError,
    "A read-only session refused a statement that writes or reads a path."
);

/// How often a wait on Rust work returns to Python to check for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// A Python exception for a converter error, carrying path and offset.
fn convert_error(py: Python<'_>, e: &ConvertError) -> PyErr {
    let (path, offset) = match e {
        ConvertError::Io { path, .. } | ConvertError::UnknownFormat { path, .. } => {
            (Some(path.clone()), None)
        }
        ConvertError::Malformed { path, offset, .. } => (Some(path.clone()), Some(*offset)),
        _ => (None, None),
    };
    input_error(py, e.to_string(), path, offset)
}

fn input_error(py: Python<'_>, msg: String, path: Option<PathBuf>, offset: Option<u64>) -> PyErr {
    let err = InputError::new_err(msg);
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in
    // practice; if it did, the message still says it all.
    let _ = value.setattr("path", path.map(|p| p.display().to_string()));
    let _ = value.setattr("offset", offset);
    err
}

/// The Python exception for a library error.
fn query_error(py: Python<'_>, e: RustQueryError) -> PyErr {
    match e {
        RustQueryError::Convert(c) => convert_error(py, &c),
        RustQueryError::Format(f) => format_error(py, f),
        RustQueryError::ReadOnly(msg) => ReadOnlyError::new_err(msg),
        RustQueryError::Inputs(msg) => input_error(py, msg, None, None),
        other => datafusion_or_query_error(py, other.to_string(), &other),
    }
}

fn format_error(py: Python<'_>, f: FormatError) -> PyErr {
    input_error(py, f.to_string(), None, None)
}

/// DataFusion errors that wrap a converter error (`read_profile`, a
/// `CREATE EXTERNAL TABLE … STORED AS XSPACE`) are input errors too.
fn datafusion_or_query_error(
    py: Python<'_>,
    msg: String,
    e: &(dyn std::error::Error + 'static),
) -> PyErr {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(c) = s.downcast_ref::<ConvertError>() {
            return convert_error(py, c);
        }
        source = s.source();
    }
    QueryError::new_err(msg)
}

fn df_error(py: Python<'_>, e: datafusion::error::DataFusionError) -> PyErr {
    query_error(py, RustQueryError::DataFusion(e))
}

/// Runs `work` on `runtime` with the GIL released, returning to Python
/// every [`SIGNAL_POLL`] to run its signal handlers: a KeyboardInterrupt
/// aborts the task (dropping a query's stream cancels its work) and is
/// raised. The wait is a channel's, on this thread: a Tokio timer here
/// shared the runtime's workers with the query's long polls and fired
/// minutes late, so Ctrl-C went unseen until the query ended.
fn run_cancellable<T: Send + 'static>(
    py: Python<'_>,
    runtime: &Runtime,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    let (done_tx, mut done_rx) = std::sync::mpsc::sync_channel(1);
    let task = runtime.spawn(async move {
        let _ = done_tx.send(work.await);
    });
    loop {
        // The receiver is Send, not Sync: it goes into the GIL-free
        // closure and comes back.
        let (waited, rx) = py.detach(move || (done_rx.recv_timeout(SIGNAL_POLL), done_rx));
        done_rx = rx;
        match waited {
            Ok(done) => return Ok(done),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let why = match runtime.block_on(task) {
                    Err(join) => join.to_string(),
                    Ok(()) => "it ended without an answer".to_string(),
                };
                return Err(QueryError::new_err(format!("query task failed: {why}")));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupted) = py.check_signals() {
                    task.abort();
                    return Err(interrupted);
                }
            }
        }
    }
}

fn new_runtime(threads: Option<usize>) -> PyResult<Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("xprof-sql");
    if let Some(t) = threads {
        builder.worker_threads(t.max(1));
    }
    builder
        .build()
        .map_err(|e| QueryError::new_err(format!("tokio runtime: {e}")))
}

/// Opened profiles and the SQL over them: `xprof_sql.open(...)`.
#[pyclass(module = "xprof_sql._native", frozen)]
struct Session {
    session: Arc<ProfileSession>,
    runtime: Arc<Runtime>,
}

#[pymethods]
impl Session {
    /// Opens `inputs` (files, run folders, log folders, datasets,
    /// warehouses) into a new session.
    #[new]
    #[pyo3(signature = (inputs, memory_limit=None, threads=None, read_only=false, timeout=None, run=None))]
    fn new(
        py: Python<'_>,
        inputs: Vec<PathBuf>,
        memory_limit: Option<u64>,
        threads: Option<usize>,
        read_only: bool,
        timeout: Option<f64>,
        run: Option<String>,
    ) -> PyResult<Self> {
        let runtime = Arc::new(new_runtime(threads)?);
        let query_timeout = match timeout {
            Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
            Some(secs) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "timeout must be a positive number of seconds, not {secs}"
                )));
            }
            None => None,
        };
        let options = SessionOptions {
            memory_limit_bytes: memory_limit,
            threads,
            read_only,
            query_timeout,
            events_db_schema: false,
        };
        let mut session = ProfileSession::builder()
            .options(options)
            .build()
            .map_err(|e| query_error(py, e))?;
        let open = OpenOptions {
            run,
            ..Default::default()
        };
        let opened = run_cancellable(py, &runtime, async move {
            session.open(&inputs, &open).await.map(|()| session)
        })?;
        let session = opened.map_err(|e| query_error(py, e))?;
        Ok(Self {
            session: Arc::new(session),
            runtime,
        })
    }

    /// Runs one statement and returns its whole result as a `pyarrow.Table`.
    fn sql<'py>(&self, py: Python<'py>, query: String) -> PyResult<Bound<'py, PyAny>> {
        let session = Arc::clone(&self.session);
        let collected = run_cancellable(py, &self.runtime, async move {
            let mut stream = session.execute(&query).await?;
            let schema = stream.schema();
            let mut batches = Vec::new();
            while let Some(b) = stream.next().await {
                batches.push(b?);
            }
            Ok::<_, RustQueryError>((schema, batches))
        })?;
        let (schema, batches) = collected.map_err(|e| query_error(py, e))?;
        let table = arrow_pyarrow::Table::try_new(batches, schema)
            .map_err(|e| QueryError::new_err(e.to_string()))?;
        table.into_pyarrow(py)
    }

    /// Runs one statement and returns an iterator of its record batches,
    /// pulled one at a time (the result is never held whole).
    fn sql_batches(&self, py: Python<'_>, query: String) -> PyResult<Batches> {
        let session = Arc::clone(&self.session);
        let started = run_cancellable(
            py,
            &self.runtime,
            async move { session.execute(&query).await },
        )?;
        let stream = started.map_err(|e| query_error(py, e))?;
        Ok(Batches {
            schema: stream.schema(),
            stream: Arc::new(tokio::sync::Mutex::new(Some(stream))),
            runtime: Arc::clone(&self.runtime),
        })
    }

    /// `(name, kind)` of every table and view of the profile schema, kind
    /// being "table" or "view".
    fn catalog(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let session = Arc::clone(&self.session);
        let sql = format!(
            "SELECT table_name, table_type FROM information_schema.tables \
             WHERE table_schema = '{}' ORDER BY table_name",
            session.schema()
        );
        let batches = run_cancellable(py, &self.runtime, async move {
            session.context().sql(&sql).await?.collect().await
        })?
        .map_err(|e| df_error(py, e))?;
        let mut out = Vec::new();
        for b in &batches {
            let names = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8)
                .map_err(|e| QueryError::new_err(e.to_string()))?;
            let types = arrow::compute::cast(b.column(1), &arrow::datatypes::DataType::Utf8)
                .map_err(|e| QueryError::new_err(e.to_string()))?;
            let names = names.as_any().downcast_ref::<arrow::array::StringArray>();
            let types = types.as_any().downcast_ref::<arrow::array::StringArray>();
            let (Some(names), Some(types)) = (names, types) else {
                continue;
            };
            for i in 0..b.num_rows() {
                let kind = if types.value(i) == "VIEW" {
                    "view"
                } else {
                    "table"
                };
                out.push((names.value(i).to_string(), kind.to_string()));
            }
        }
        Ok(out)
    }

    /// The Arrow schema of a table or view; a table's fields carry their
    /// documentation as field metadata `doc`.
    fn schema<'py>(&self, py: Python<'py>, name: String) -> PyResult<Bound<'py, PyAny>> {
        let provider = self.provider(py, &name)?;
        let schema = provider.schema();
        let documented = match Table::from_name(&name) {
            Some(t) => documented_schema(&schema, t),
            None => schema.as_ref().clone(),
        };
        documented.to_pyarrow(py)
    }

    /// A table or view as a DataFusion table provider other engines
    /// register (`__datafusion_table_provider__`).
    fn table_provider(&self, py: Python<'_>, name: String) -> PyResult<ExportedTable> {
        let provider = self.provider(py, &name)?;
        // A view crosses as a table: the other side scans it here, and
        // never needs its logical plan (which holds this session's own
        // providers, which no codec of the other side could serialize).
        let provider: Arc<dyn TableProvider> = match provider.table_type() {
            TableType::View => Arc::new(ScannedView {
                schema: provider.schema(),
                ctx: self.session.context().clone(),
                name: datafusion::common::TableReference::partial(
                    self.session.schema().to_string(),
                    name.as_str(),
                ),
            }),
            _ => provider,
        };
        Ok(ExportedTable {
            provider,
            name,
            runtime: Arc::clone(&self.runtime),
        })
    }

    /// The session's inputs as opened: `(path, trace_id)` per converted
    /// file or dataset trace.
    fn opened(&self) -> Vec<(String, i32)> {
        let mut out = Vec::new();
        for o in self.session.opened() {
            match o {
                xprof_sql::query::Opened::Converted(c) => {
                    out.push((c.file.path.display().to_string(), c.trace_id));
                }
                xprof_sql::query::Opened::Dataset { path, trace_ids } => {
                    for id in trace_ids {
                        out.push((path.display().to_string(), *id));
                    }
                }
            }
        }
        out
    }
}

impl Session {
    fn provider(&self, py: Python<'_>, name: &str) -> PyResult<Arc<dyn TableProvider>> {
        let session = Arc::clone(&self.session);
        let reference =
            datafusion::common::TableReference::partial(session.schema().to_string(), name);
        let found = run_cancellable(py, &self.runtime, async move {
            session.context().table_provider(reference).await
        })?;
        found.map_err(|_| PyKeyError::new_err(format!("no table or view {name:?}")))
    }
}

/// `schema` with each column's documentation from [`Table`]'s definition.
fn documented_schema(schema: &SchemaRef, table: Table) -> arrow::datatypes::Schema {
    let def = table.def();
    let fields: Vec<arrow::datatypes::Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let mut f = f.as_ref().clone();
            if let Some(c) = def.columns.iter().find(|c| c.name == f.name()) {
                let mut meta = f.metadata().clone();
                meta.insert("doc".to_string(), c.doc.to_string());
                f = f.with_metadata(meta);
            }
            f
        })
        .collect();
    arrow::datatypes::Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// The batches of one statement, pulled one at a time.
#[pyclass(module = "xprof_sql._native", frozen)]
struct Batches {
    schema: SchemaRef,
    stream: Arc<tokio::sync::Mutex<Option<SendableRecordBatchStream>>>,
    runtime: Arc<Runtime>,
}

#[pymethods]
impl Batches {
    /// The result's Arrow schema (`pyarrow.Schema`).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.schema.as_ref().to_pyarrow(py)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let stream = Arc::clone(&self.stream);
        let next = run_cancellable(py, &self.runtime, async move {
            let mut guard = stream.lock().await;
            let s = guard.as_mut()?;
            let next = s.next().await;
            if next.is_none() {
                // Finished: free the plan's resources now.
                *guard = None;
            }
            next
        });
        let next = match next {
            Ok(n) => n,
            Err(interrupted) => {
                // The aborted task dropped nothing it held; drop the stream
                // so the query stops.
                self.close();
                return Err(interrupted);
            }
        };
        match next {
            None => Ok(None),
            Some(Ok(batch)) => batch.to_pyarrow(py).map(Some),
            Some(Err(e)) => Err(df_error(py, e)),
        }
    }

    /// Stops the query and frees what it holds; iteration ends.
    fn close(&self) {
        let stream = Arc::clone(&self.stream);
        self.runtime.spawn(async move {
            stream.lock().await.take();
        });
    }
}

/// A view seen as a base table: planned with this session's own state
/// (its rules and functions) and run here; the other side gets the
/// physical plan, never the view's logical plan, which holds this
/// session's providers that no codec of the other side could serialize.
struct ScannedView {
    schema: SchemaRef,
    ctx: datafusion::prelude::SessionContext,
    name: datafusion::common::TableReference,
}

impl std::fmt::Debug for ScannedView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScannedView")
            .field("name", &self.name)
            .finish()
    }
}

#[async_trait::async_trait]
impl TableProvider for ScannedView {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
    fn table_type(&self) -> TableType {
        TableType::Base
    }
    async fn scan(
        &self,
        _state: &dyn datafusion::catalog::Session,
        projection: Option<&Vec<usize>>,
        filters: &[datafusion::logical_expr::Expr],
        limit: Option<usize>,
    ) -> datafusion::error::Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        let mut df = self.ctx.table(self.name.clone()).await?;
        for f in filters {
            df = df.filter(f.clone())?;
        }
        if let Some(p) = projection {
            let names: Vec<&str> = p
                .iter()
                .map(|&i| self.schema.field(i).name().as_str())
                .collect();
            df = df.select_columns(&names)?;
        }
        if let Some(n) = limit {
            df = df.limit(0, Some(n))?;
        }
        let plan = df.create_physical_plan().await?;
        Ok(Arc::new(SealedPlan {
            properties: Arc::clone(plan.properties()),
            plan,
            task_ctx: self.ctx.task_ctx(),
        }))
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&datafusion::logical_expr::Expr],
    ) -> datafusion::error::Result<Vec<datafusion::logical_expr::TableProviderFilterPushDown>> {
        // Applied exactly, on this side, before the view's rows leave.
        Ok(vec![
            datafusion::logical_expr::TableProviderFilterPushDown::Exact;
            filters.len()
        ])
    }
}

/// A view's physical plan handed over as one leaf: `datafusion-ffi` wraps
/// every node of a plan it is given and rebuilds each parent's properties
/// for it, which on a view's deep plan (`hlo_stats`: joins over windows
/// over aggregates) ran for minutes. The other side needs only the rows,
/// so it sees a leaf with the plan's properties, run here with this
/// session's task context (its memory pool and limits).
#[derive(Debug)]
struct SealedPlan {
    plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    properties: Arc<datafusion::physical_plan::PlanProperties>,
    task_ctx: Arc<datafusion::execution::TaskContext>,
}

impl datafusion::physical_plan::DisplayAs for SealedPlan {
    fn fmt_as(
        &self,
        _t: datafusion::physical_plan::DisplayFormatType,
        f: &mut std::fmt::Formatter,
    ) -> std::fmt::Result {
        write!(f, "SealedPlan: {}", self.plan.name())
    }
}

impl datafusion::physical_plan::ExecutionPlan for SealedPlan {
    fn name(&self) -> &str {
        "SealedPlan"
    }
    fn properties(&self) -> &Arc<datafusion::physical_plan::PlanProperties> {
        &self.properties
    }
    fn children(&self) -> Vec<&Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        Vec::new()
    }
    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(
            &Arc<dyn datafusion::physical_plan::PhysicalExpr>,
        ) -> datafusion::error::Result<
            datafusion::common::tree_node::TreeNodeRecursion,
        >,
    ) -> datafusion::error::Result<datafusion::common::tree_node::TreeNodeRecursion> {
        // The sealed plan's expressions are its own business.
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    }
    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn datafusion::physical_plan::ExecutionPlan>>,
    ) -> datafusion::error::Result<Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(datafusion::error::DataFusionError::Internal(
                "SealedPlan is a leaf".into(),
            ))
        }
    }
    fn execute(
        &self,
        partition: usize,
        _context: Arc<datafusion::execution::TaskContext>,
    ) -> datafusion::error::Result<datafusion::execution::SendableRecordBatchStream> {
        self.plan.execute(partition, Arc::clone(&self.task_ctx))
    }
}

/// One table or view of a session, exported to other DataFusion engines.
#[pyclass(module = "xprof_sql._native", frozen)]
struct ExportedTable {
    name: String,
    provider: Arc<dyn TableProvider>,
    runtime: Arc<Runtime>,
}

const TABLE_PROVIDER_CAPSULE: &CStr = c"datafusion_table_provider";
const CODEC_CAPSULE: &CStr = c"datafusion_logical_extension_codec";

#[pymethods]
impl ExportedTable {
    /// The capsule DataFusion-Python's `register_table` asks for.
    /// `session` is the registering session, or the host's logical codec
    /// as a bare capsule (DataFusion-Python's protocol).
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = host_codec(&session)?;
        let provider = FFI_TableProvider::new_with_ffi_codec(
            Arc::clone(&self.provider),
            true,
            Some(self.runtime.handle().clone()),
            codec,
        );
        PyCapsule::new_with_value(py, provider, TABLE_PROVIDER_CAPSULE)
    }

    fn __repr__(&self) -> String {
        format!("<xprof_sql table provider {:?}>", self.name)
    }
}

/// The host's logical extension codec: from a session's
/// `__datafusion_logical_extension_codec__`, or the capsule itself.
fn host_codec(session: &Bound<'_, PyAny>) -> PyResult<FFI_LogicalExtensionCodec> {
    let obj = if session.hasattr("__datafusion_logical_extension_codec__")? {
        session.call_method0("__datafusion_logical_extension_codec__")?
    } else {
        session.clone()
    };
    let capsule = obj.cast::<PyCapsule>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "expected a DataFusion session or its logical extension codec capsule",
        )
    })?;
    let ptr = capsule.pointer_checked(Some(CODEC_CAPSULE))?;
    // SAFETY: a capsule named `datafusion_logical_extension_codec` holds an
    // `FFI_LogicalExtensionCodec` (datafusion-ffi's protocol); it is cloned
    // (its own reference count) while the capsule is alive.
    let codec = unsafe { ptr.cast::<FFI_LogicalExtensionCodec>().as_ref() };
    Ok(codec.clone())
}

/// Converts `inputs` to a Parquet dataset (or, with `partition_by`, a
/// warehouse) in `out`; returns one dict per trace written.
#[pyfunction]
#[pyo3(signature = (inputs, out, partition_by=None, run=None, run_name=None, replace=false, threads=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out: PathBuf,
    partition_by: Option<String>,
    run: Option<String>,
    run_name: Option<String>,
    replace: bool,
    threads: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<ConvertedTrace>> {
    let keys = match &partition_by {
        Some(k) => PartitionKey::parse_list(k).map_err(pyo3::exceptions::PyValueError::new_err)?,
        None => Vec::new(),
    };
    let settings = ConvertSettings {
        run,
        run_name,
        layout: Layout::partitioned(keys).replacing(replace),
        write: WriteOptions::default(),
        threads,
        format: None,
    };
    let converted = py.detach(|| {
        many::convert_inputs(&inputs, &out, &settings, |files| {
            progress.map(|callback| progress_callback(callback, files.len()))
        })
    });
    // A Ctrl-C pressed during the conversion is raised now: the dataset is
    // complete (a conversion is never left half-written).
    py.check_signals()?;
    let converted = converted.map_err(|e| convert_error(py, &e))?;
    Ok(converted
        .into_iter()
        .map(|c| ConvertedTrace {
            path: c.file.path.display().to_string(),
            trace_id: c.trace_id,
            host: c.file.host.clone(),
            run: c.file.run.clone(),
            events: c.summary.events,
            warnings: c.summary.warnings.clone(),
        })
        .collect())
}

/// One converted input, as `convert` reports it.
#[derive(IntoPyObject)]
struct ConvertedTrace {
    path: String,
    trace_id: i32,
    host: String,
    run: Option<String>,
    events: u64,
    warnings: Vec<String>,
}

/// Calls the Python `callback(file_index, files, bytes_done, bytes_total)`
/// from the converting threads, at most every 50 ms per file and always
/// when a file finishes.
fn progress_callback(callback: Py<PyAny>, files: usize) -> Arc<dyn Fn(Progress) + Send + Sync> {
    let last = std::sync::Mutex::new(std::collections::HashMap::<usize, std::time::Instant>::new());
    Arc::new(move |p: Progress| {
        let now = std::time::Instant::now();
        let done = p.bytes_done >= p.bytes_total;
        if let Ok(mut last) = last.lock() {
            let due = last
                .get(&p.file)
                .is_none_or(|t| now.duration_since(*t) >= Duration::from_millis(50));
            if !due && !done {
                return;
            }
            last.insert(p.file, now);
        }
        Python::attach(|py| {
            // A failing progress display must not fail the conversion.
            let _ = callback.call1(py, (p.file, files, p.bytes_done, p.bytes_total));
        });
    })
}

/// The table and view names of the profile schema, and their docs.
#[pyfunction]
fn table_docs() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Table::ALL
        .iter()
        .map(|t| (t.name().to_string(), t.def().doc.to_string()))
        .collect();
    for v in xprof_sql::query::views::VIEWS {
        out.push((v.name.to_string(), v.doc.to_string()));
    }
    out
}

/// Runs the `xprof-sql` command line (`argv[0]` is the program name) in
/// this process, as the Rust binary does, and returns its exit status:
/// the wheel's `xprof-sql` console command (`xprof_sql._cli`). The GIL is
/// released while it runs.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| xprof_sql::run_cli(argv))
}

/// Runs rules files over `inputs` (and `baseline`) as `xprof-sql check
/// --format json` does and returns the same JSON document as text. A
/// rules file that does not parse, or inputs that do not open, raise;
/// a rule that cannot run is a rule with status `error`.
#[pyfunction]
#[pyo3(signature = (inputs, rules, baseline=Vec::new(), params=Vec::new(), evidence=5, memory_limit=None, threads=None, run=None, trust_rules=false))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    rules: Vec<PathBuf>,
    baseline: Vec<PathBuf>,
    params: Vec<(String, String)>,
    evidence: usize,
    memory_limit: Option<u64>,
    threads: Option<usize>,
    run: Option<String>,
    trust_rules: bool,
) -> PyResult<String> {
    use xprof_sql::query::check::{parse_rules, refuse_built_in_params, run_rules};
    refuse_built_in_params(params.iter().map(|(n, _)| n.as_str()))
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
    let mut files = Vec::new();
    for path in &rules {
        let text = std::fs::read_to_string(path).map_err(|e| {
            input_error(
                py,
                format!("{}: {e}", path.display()),
                Some(path.clone()),
                None,
            )
        })?;
        files.push((
            path.clone(),
            parse_rules(path, &text).map_err(|e| query_error(py, e))?,
        ));
    }
    let runtime = new_runtime(threads)?;
    // Read-only unless trusted, as `xprof-sql check`: rules may come from
    // a pull request.
    let options = SessionOptions {
        memory_limit_bytes: memory_limit,
        threads,
        read_only: !trust_rules,
        ..Default::default()
    };
    let mut session = ProfileSession::builder()
        .options(options)
        .build()
        .map_err(|e| query_error(py, e))?;
    let open = OpenOptions {
        run,
        ..Default::default()
    };
    let done = run_cancellable(py, &runtime, async move {
        session.open(&inputs, &open).await?;
        let mut values = std::collections::BTreeMap::new();
        values.insert("current".to_string(), session.trace_ids_since(0));
        if !baseline.is_empty() {
            let before = session.opened().len();
            session.open(&baseline, &open).await?;
            values.insert("baseline".to_string(), session.trace_ids_since(before));
        }
        values.extend(params);
        let mut reports = Vec::new();
        for (path, rules) in &files {
            reports.push(run_rules(&session, path, rules, &values, evidence).await);
        }
        Ok::<_, RustQueryError>(xprof_sql::check_report_json(&reports).to_string())
    })?;
    done.map_err(|e| query_error(py, e))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Session>()?;
    m.add_class::<Batches>()?;
    m.add_class::<ExportedTable>()?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(table_docs, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("QueryError", py.get_type::<QueryError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
