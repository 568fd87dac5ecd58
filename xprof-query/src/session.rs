//! [`ProfileSession`]: opens profiles and registers the tables and views
//! under their own schema of a DataFusion [`SessionContext`], with the
//! limits its statements run under ([`SessionOptions`]). One way to make
//! one: [`ProfileSession::builder`] (or [`ProfileSession::new`] for the
//! defaults).

use std::path::Path;
use std::sync::Arc;

use datafusion::common::TableReference;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::physical_optimizer::optimizer::PhysicalOptimizer;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::context::{register_table_factories, with_project_rules};
use crate::error::{QueryError, Result};
use crate::inputs::{Inputs, MEMORY_PER_INPUT_BYTE};
use crate::physical::deadline::{Deadline, timed_out};
use crate::tables::{DEFAULT_SCHEMA, StringColumns};

use crate::inputs::{OpenOptions, Opened};

/// Profiles registered as SQL tables.
///
/// The tables and views live in their own schema (`xprof`, see
/// [`DEFAULT_SCHEMA`]): on a context of its own ([`ProfileSession::new`])
/// that is the default schema, so `SELECT * FROM events` works; on a host's
/// context ([`SessionBuilder::context`]) the host's tables stay as they
/// are and the profile's are `xprof.events`, `xprof.tracks`, ...
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use xprof_query::{OpenOptions, ProfileSession};
/// let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data/jax_cpu_mlp.xplane.pb");
/// let mut session = ProfileSession::builder()
///     .read_only(true)
///     .time_limit(std::time::Duration::from_secs(60))
///     .build()?;
/// session.open(&[profile], &OpenOptions::default()).await?;
/// let batches = session.collect("SELECT count(*) AS n FROM events").await?;
/// assert_eq!(batches[0].num_rows(), 1);
/// // A read-only session refuses what would change or read elsewhere.
/// assert!(session.collect("DROP TABLE events").await.is_err());
/// # Ok::<(), xprof_query::QueryError>(()) }).unwrap();
/// ```
pub struct ProfileSession {
    ctx: SessionContext,
    schema: String,
    inputs: Inputs,
    options: SessionOptions,
    strings: StringColumns,
}

impl std::fmt::Debug for ProfileSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileSession")
            .field("schema", &self.schema)
            .field("opened", &self.inputs.opened())
            .finish()
    }
}

impl Default for ProfileSession {
    fn default() -> Self {
        Self::new()
    }
}

/// Limits of a session's queries, all set at once
/// ([`SessionBuilder::options`]) or one by one on the builder.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Memory the queries may hold (DataFusion's memory pool). Sorts,
    /// aggregations and joins that would exceed it spill to a temporary
    /// folder where they can, and fail with a "Resources exhausted" error
    /// where they cannot; the process is never aborted. Also caps what is
    /// converted into memory on open (see [`OpenOptions::in_memory_limit_bytes`]).
    pub memory_limit_bytes: Option<u64>,
    /// Threads (DataFusion partitions) a query uses; default: the cores.
    /// Like the memory limit, it sizes a context the session makes: with
    /// a host's context, size that context instead.
    pub threads: Option<usize>,
    /// Run only statements that read ([`crate::read_only`]): queries,
    /// `EXPLAIN`, `SHOW`, `DESCRIBE`; no DDL, DML, `COPY`, `SET`, and no
    /// table function that may read a path (`read_profile`). For services
    /// that run their users' SQL.
    pub read_only: bool,
    /// Wall-clock limit of one statement, planning and execution: past it
    /// the statement fails with a "Resources exhausted" error and its tasks
    /// are cancelled ([`ProfileSession::execute`]). It bounds the
    /// conversion of what [`ProfileSession::open`] converts as well.
    pub query_timeout: Option<std::time::Duration>,
    /// XProf's Events DB layout: unqualified `events` (and `Events`, as
    /// SQL folds it) is the [`events_db`](crate::views) view, XProf's
    /// `Events` with its 31 columns, so queries written for
    /// `xprof query_events_db` run unchanged; the project's tables and
    /// views stay reachable under their schema (`xprof.events`,
    /// `xprof.hlo_stats`).
    pub events_db_schema: bool,
}

/// The schema holding `events` as XProf's Events DB names it
/// ([`SessionOptions::events_db_schema`]).
pub const EVENTS_DB_SCHEMA: &str = "events_db";

impl SessionOptions {
    /// The largest inflated input kept in memory under these limits.
    pub fn in_memory_limit(&self, requested: u64) -> u64 {
        match self.memory_limit_bytes {
            // Converted tables and query state share the limit: half each.
            Some(limit) => requested.min(limit / 2 / MEMORY_PER_INPUT_BYTE),
            None => requested,
        }
    }

    /// A DataFusion context sized by these limits (memory, threads), with
    /// [`default_config`] and this project's rules: what
    /// [`SessionBuilder::build`] makes when given no context, for a host
    /// that starts from it (a cluster's client does).
    pub fn context(&self) -> Result<SessionContext> {
        let mut config = default_config();
        if let Some(t) = self.threads {
            config = config.with_target_partitions(t.max(1));
        }
        let mut runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new();
        if let Some(limit) = self.memory_limit_bytes {
            runtime = runtime.with_memory_limit(limit as usize, 1.0);
        }
        Ok(new_context(config, runtime.build_arc()?))
    }
}

/// The default DataFusion configuration for profile queries: the profile
/// schema is the default one, filters are pushed into the Parquet scan,
/// and plans keep the stored sort order rather than re-sorting for
/// parallelism (`prefer_existing_sort`): a per-track window such as the
/// gaps between consecutive events merges the `(track_id, ts_ps)`-sorted
/// scans instead of sorting every event again (50 M events: 7.6 s and
/// 0.3 GiB instead of 15.7 s and 2.2 GiB; benches/README.md).
///
/// A hash join whose build side is estimated under [`COLLECT_LEFT_BYTES`]
/// (DataFusion: 1 MiB) builds one table that every partition probes,
/// instead of repartitioning both sides by the key: the stats of one key
/// joined with the events (`event_args` estimated by its keys' rows) is
/// such a join, 15 MB of build for 50 M probe rows (1.19 s → 0.77 s,
/// benches/README.md, issue 48).
pub fn default_config() -> SessionConfig {
    SessionConfig::new()
        .with_information_schema(true)
        .with_default_catalog_and_schema("datafusion", DEFAULT_SCHEMA)
        .set_bool("datafusion.execution.parquet.pushdown_filters", true)
        .set_bool("datafusion.optimizer.prefer_existing_sort", true)
        .set_usize(
            "datafusion.optimizer.hash_join_single_partition_threshold",
            COLLECT_LEFT_BYTES,
        )
        .set_usize(
            "datafusion.optimizer.hash_join_single_partition_threshold_rows",
            COLLECT_LEFT_ROWS,
        )
}

/// Estimated bytes under which a hash join's build side is collected
/// into one table ([`default_config`]).
pub const COLLECT_LEFT_BYTES: usize = 32 << 20;

/// Estimated rows under which a hash join's build side is collected into
/// one table when its bytes are not estimated ([`default_config`]).
pub const COLLECT_LEFT_ROWS: usize = 2 << 20;

/// A context of our own: `config`, `runtime`, DataFusion's defaults, and
/// two physical rules: joins of one trace keyed without `trace_id`
/// ([`SingleTraceJoin`], before DataFusion's rules) and grouping by
/// dictionary strings without hashing every row ([`DictionaryGroupBy`],
/// after them).
fn new_context(config: SessionConfig, runtime: Arc<RuntimeEnv>) -> SessionContext {
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features()
        .with_physical_optimizer_rules(with_project_rules(PhysicalOptimizer::new().rules))
        .build();
    SessionContext::new_with_state(state)
}

/// How a [`ProfileSession`] is made: [`ProfileSession::builder`], each
/// setting optional, then [`SessionBuilder::build`].
#[derive(Default)]
#[must_use]
pub struct SessionBuilder {
    context: Option<SessionContext>,
    schema: Option<String>,
    options: SessionOptions,
    strings: StringColumns,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("host_context", &self.context.is_some())
            .field("schema", &self.schema)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// Registers the tables in the host's `ctx`, under schema `xprof`
    /// (or [`SessionBuilder::schema`]), instead of in a context of the
    /// session's own. The host's context keeps its rules; give it this
    /// project's with [`prepare_context`](crate::prepare_context) unless it plans elsewhere (a
    /// cluster's does).
    pub fn context(mut self, ctx: SessionContext) -> Self {
        self.context = Some(ctx);
        self
    }

    /// The schema the tables and views go under (default `xprof`).
    pub fn schema(mut self, name: &str) -> Self {
        self.schema = Some(name.to_string());
        self
    }

    /// Memory the queries may hold ([`SessionOptions::memory_limit_bytes`]).
    pub fn memory_limit_bytes(mut self, bytes: u64) -> Self {
        self.options.memory_limit_bytes = Some(bytes);
        self
    }

    /// Threads a query uses ([`SessionOptions::threads`]).
    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = Some(threads);
        self
    }

    /// Runs only statements that read ([`SessionOptions::read_only`]).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.options.read_only = read_only;
        self
    }

    /// Wall-clock limit of one statement ([`SessionOptions::query_timeout`]).
    pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
        self.options.query_timeout = Some(limit);
        self
    }

    /// XProf's Events DB layout ([`SessionOptions::events_db_schema`]).
    pub fn events_db_schema(mut self, events_db: bool) -> Self {
        self.options.events_db_schema = events_db;
        self
    }

    /// How dictionary string columns are read: [`StringColumns::Plain`]
    /// for engines that lose dictionaries between processes (a Ballista
    /// cluster, `xprof-cluster`).
    pub fn string_columns(mut self, strings: StringColumns) -> Self {
        self.strings = strings;
        self
    }

    /// Every limit at once, replacing those set before.
    pub fn options(mut self, options: SessionOptions) -> Self {
        self.options = options;
        self
    }

    /// The session. Fails when a memory or thread limit is given with a
    /// host's context (they size a context the session makes), or when
    /// DataFusion cannot make the runtime the memory limit asks for.
    pub fn build(self) -> Result<ProfileSession> {
        let ctx = match self.context {
            Some(ctx) => {
                if self.options.memory_limit_bytes.is_some() || self.options.threads.is_some() {
                    return Err(QueryError::Settings(
                        "a memory or thread limit sizes a context the session makes; with a \
                         host's context, give its RuntimeEnv and SessionConfig those limits"
                            .into(),
                    ));
                }
                ctx
            }
            None => {
                let ctx = self.options.context()?;
                register_table_factories(&ctx);
                ctx
            }
        };
        Ok(ProfileSession {
            ctx,
            schema: self.schema.unwrap_or_else(|| DEFAULT_SCHEMA.to_string()),
            inputs: Inputs::default(),
            options: self.options,
            strings: self.strings,
        })
    }
}

impl ProfileSession {
    /// A session with its own DataFusion context ([`default_config`]) and
    /// no limits, where `CREATE EXTERNAL TABLE … STORED AS XSPACE` works
    /// too: `ProfileSession::builder().build()`.
    pub fn new() -> Self {
        let ctx = new_context(default_config(), Arc::default());
        register_table_factories(&ctx);
        Self {
            ctx,
            schema: DEFAULT_SCHEMA.to_string(),
            inputs: Inputs::default(),
            options: SessionOptions::default(),
            strings: StringColumns::default(),
        }
    }

    /// The one way to a session with settings: a context (its own or a
    /// host's), the schema, memory, threads, read-only, time limit, the
    /// Events DB layout and string handling, then
    /// [`SessionBuilder::build`].
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// The DataFusion context holding the tables.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// The schema holding the tables.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// What was opened so far.
    pub fn opened(&self) -> &[Opened] {
        self.inputs.opened()
    }

    /// The trace ids of what was opened after the first `before` inputs
    /// of [`Self::opened`], as the side list the `diff_*` functions take
    /// (`0,1`): one side of a comparison opened input by input.
    pub fn trace_ids_since(&self, before: usize) -> String {
        self.opened()[before.min(self.opened().len())..]
            .iter()
            .flat_map(|o| match o {
                Opened::Converted(c) => vec![c.trace_id],
                Opened::Dataset { trace_ids, .. } => trace_ids.clone(),
            })
            .map(|id| id.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Plans one SQL statement as [`ProfileSession::execute`] does: its
    /// size checked ([`crate::statement_size`]), in a read-only session
    /// checked ([`crate::read_only::check_read_only`]) and planned with
    /// DDL, DML and statements denied, under the time limit. The
    /// `DataFrame` is DataFusion's: running it through its own methods
    /// (`collect`, `show`) runs outside the time limit and the memory
    /// message, which [`ProfileSession::execute`] and
    /// [`ProfileSession::collect`] add.
    pub async fn sql(&self, sql: &str) -> Result<datafusion::dataframe::DataFrame> {
        let (ctx, read_only, sql) = (self.ctx.clone(), self.options.read_only, sql.to_string());
        let (_, deadline) = self.deadline();
        within(deadline, async move { plan(&ctx, read_only, &sql).await }).await
    }

    /// Plans and starts one SQL statement under the session's limits: the
    /// size and read-only checks and the time limit, which covers
    /// planning and every batch of the returned stream. With a time limit
    /// the statement is planned on a thread of its own, since planning
    /// never yields: the caller gets its error at the deadline while the
    /// planning runs to its end there (bounded by the statement size).
    /// Running out of memory under the memory limit is said plainly.
    pub async fn execute(
        &self,
        sql: &str,
    ) -> Result<datafusion::execution::SendableRecordBatchStream> {
        self.execute_with_params(sql, None).await
    }

    /// [`ProfileSession::execute`] with values for the statement's
    /// placeholders (`$1`, `$2`, … in order; `None`: the statement has
    /// none), as a prepared statement of a server binds them. A
    /// placeholder left without a value is an error.
    pub async fn execute_with_params(
        &self,
        sql: &str,
        params: Option<Vec<datafusion::scalar::ScalarValue>>,
    ) -> Result<datafusion::execution::SendableRecordBatchStream> {
        let (ctx, read_only, sql) = (self.ctx.clone(), self.options.read_only, sql.to_string());
        let (started, deadline) = self.deadline();
        let stream = within(deadline, async move {
            let mut frame = plan(&ctx, read_only, &sql).await?;
            if let Some(values) = params {
                frame = bind_params(frame, values)?;
            }
            Ok(frame.execute_stream().await?)
        })
        .await
        .map(|stream| match deadline {
            Some((_, limit)) => Box::pin(Deadline::new(stream, started, limit))
                as datafusion::execution::SendableRecordBatchStream,
            None => stream,
        });
        let Some(memory_limit) = self.options.memory_limit_bytes else {
            return stream;
        };
        // Out of memory under the limit: say so, whatever operator found
        // it and however it wrapped the pool's error.
        let stream = stream.map_err(|e| match e {
            QueryError::DataFusion(e) => QueryError::DataFusion(out_of_memory(e, memory_limit)),
            other => other,
        })?;
        use futures_util::TryStreamExt as _;
        let schema = stream.schema();
        Ok(Box::pin(
            datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                schema,
                stream.map_err(move |e| out_of_memory(e, memory_limit)),
            ),
        ))
    }

    /// Now, and when a statement started now must end (with the limit);
    /// a limit too far to add to the clock is no limit.
    fn deadline(
        &self,
    ) -> (
        tokio::time::Instant,
        Option<(tokio::time::Instant, std::time::Duration)>,
    ) {
        let started = tokio::time::Instant::now();
        let deadline = self
            .options
            .query_timeout
            .and_then(|limit| Some((started.checked_add(limit)?, limit)));
        (started, deadline)
    }

    /// Runs one SQL statement under the session's limits and collects its
    /// batches.
    pub async fn collect(&self, sql: &str) -> Result<Vec<arrow::record_batch::RecordBatch>> {
        use futures_util::TryStreamExt;
        Ok(self.execute(sql).await?.try_collect().await?)
    }

    /// Opens inputs: files, run folders, log folders or Parquet datasets
    /// written by `convert`. Several inputs become several traces of the
    /// same tables. Tables and views are (re-)registered afterwards.
    pub async fn open<P: AsRef<Path>>(
        &mut self,
        inputs: &[P],
        options: &OpenOptions,
    ) -> Result<()> {
        let mut options = OpenOptions {
            in_memory_limit_bytes: self.options.in_memory_limit(options.in_memory_limit_bytes),
            ..options.clone()
        };
        // The statement time limit bounds each open's conversion too.
        if options.convert.deadline.is_none() {
            options.convert.deadline = self
                .options
                .query_timeout
                .and_then(|limit| std::time::Instant::now().checked_add(limit));
        }
        self.inputs.open(inputs, &options)?;
        self.register().await
    }

    /// Registers the tables and views (empty until something is opened),
    /// and in the Events DB layout ([`SessionOptions::events_db_schema`])
    /// XProf's `Events` as the default schema's `events`.
    pub async fn register(&self) -> Result<()> {
        self.inputs
            .tables_with(self.strings)?
            .register(&self.ctx, &self.schema)
            .await?;
        if self.options.events_db_schema {
            crate::catalog::ensure_schema(&self.ctx, EVENTS_DB_SCHEMA)?;
            let view = self
                .ctx
                .table_provider(TableReference::partial(self.schema.as_str(), "events_db"))
                .await?;
            let name = TableReference::partial(EVENTS_DB_SCHEMA, "events");
            self.ctx.deregister_table(name.clone())?;
            self.ctx.register_table(name, view)?;
            self.ctx
                .state_ref()
                .write()
                .config_mut()
                .options_mut()
                .catalog
                .default_schema = EVENTS_DB_SCHEMA.to_string();
        }
        Ok(())
    }
}

/// `error` said plainly when DataFusion's memory pool ran out under the
/// session's memory limit (an operator that could spill no more, or one
/// that cannot spill): operators wrap the pool's error in their own words
/// ("Decreasing allocation after spilling should succeed").
fn out_of_memory(error: DataFusionError, limit_bytes: u64) -> DataFusionError {
    match error.find_root() {
        DataFusionError::ResourcesExhausted(what) if !what.contains("time limit") => {
            DataFusionError::ResourcesExhausted(format!(
                "the query needs more memory than the memory limit of {limit_bytes} bytes \
                 ({:.1} MiB) lets DataFusion's operators hold, after spilling what they can \
                 to disk; raise the limit, or make the query smaller (fewer rows, fewer \
                 columns, a LIMIT). DataFusion said: {what}",
                limit_bytes as f64 / (1 << 20) as f64
            ))
        }
        _ => error,
    }
}

/// The stack of the thread a statement is planned on under a timeout
/// ([`ProfileSession::execute`]): DataFusion's planner recurses over the
/// expression tree, up to [`MAX_EXPRESSION_DEPTH`](crate::statement_size::MAX_EXPRESSION_DEPTH) deep.
const PLAN_STACK_BYTES: usize = 64 << 20;

/// Plans `sql` in `ctx`: see [`ProfileSession::sql`].
async fn plan(
    ctx: &SessionContext,
    read_only: bool,
    sql: &str,
) -> Result<datafusion::dataframe::DataFrame> {
    crate::statement_size::check_statement_size(sql)?;
    let planned = if read_only {
        let functions: Vec<String> = ctx.state().table_functions().keys().cloned().collect();
        crate::read_only::check_read_only(sql, &functions)?;
        let options = datafusion::execution::context::SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false)
            .with_allow_statements(false);
        ctx.sql_with_options(sql, options).await
    } else {
        ctx.sql(sql).await
    };
    // A mistyped table or view name gets the nearest names, as a mistyped
    // column does.
    Ok(planned.map_err(|e| crate::suggest::with_table_suggestion(ctx, e))?)
}

/// `frame` with `values` for its placeholders `$1`, `$2`, …, each cast to
/// the type the plan infers for it where it infers one: a client binds a
/// string where the column is a dictionary of strings, or an `INT` where
/// it is a `BIGINT`, and means the same value.
pub fn bind_params(
    frame: datafusion::dataframe::DataFrame,
    values: Vec<datafusion::scalar::ScalarValue>,
) -> Result<datafusion::dataframe::DataFrame> {
    let types = frame.logical_plan().get_parameter_types()?;
    let mut typed = Vec::with_capacity(values.len());
    for (index, value) in values.into_iter().enumerate() {
        typed.push(match types.get(&format!("${}", index + 1)) {
            Some(Some(wanted)) if *wanted != value.data_type() && !value.is_null() => {
                value.cast_to(wanted)?
            }
            _ => value,
        });
    }
    Ok(frame.with_param_values(typed)?)
}

/// `work` (planning), on a thread of its own and given up at the
/// deadline when there is one.
async fn within<T: Send + 'static>(
    deadline: Option<(tokio::time::Instant, std::time::Duration)>,
    work: impl std::future::Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    let Some((at, limit)) = deadline else {
        return work.await;
    };
    let (answer, planned) = tokio::sync::oneshot::channel();
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("xprof-sql-plan".into())
        .stack_size(PLAN_STACK_BYTES)
        .spawn(move || {
            let _ = answer.send(runtime.block_on(work));
        })
        .map_err(|e| {
            QueryError::DataFusion(DataFusionError::Execution(format!(
                "no thread to plan the statement on: {e}"
            )))
        })?;
    match tokio::time::timeout_at(at, planned).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => Err(QueryError::DataFusion(DataFusionError::Execution(
            "planning the statement failed without an answer".into(),
        ))),
        Err(_) => Err(timed_out(limit).into()),
    }
}
