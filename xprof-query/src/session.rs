//! [`ProfileSession`]: opens profiles and registers the tables and views
//! under their own schema of a DataFusion [`SessionContext`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::common::TableReference;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::{SessionConfig, SessionContext};
use xprof_convert::batch::{self, Converted};
use xprof_convert::input;
use xprof_convert::reader::ConvertOptions;
use xprof_format::Table;
use xprof_format::dataset::{self, WriteOptions};

use crate::dictionary_aggregate::DictionaryGroupBy;
use crate::error::{QueryError, Result};
use crate::factory::register_table_factories;
use crate::single_trace_join::SingleTraceJoin;
use crate::tables::{DEFAULT_SCHEMA, ProfileTables, StringColumns, TableParts};
use datafusion::physical_optimizer::optimizer::PhysicalOptimizer;

/// Raw inputs up to this inflated size are converted into memory: about
/// 11× this in Arrow arrays (176 MiB), within the conversion budget of
/// docs/design.md. Larger ones go through a temporary dataset, which
/// measured as fast from 100 MiB on and 5-8× smaller in memory.
pub const DEFAULT_IN_MEMORY_LIMIT: u64 = 16 << 20;

/// Bytes of Arrow memory one byte of XSpace input takes when converted
/// into memory (measured: 1,174 MiB for the 105 MiB real profile).
const MEMORY_PER_INPUT_BYTE: u64 = 11;

/// How inputs are opened.
#[derive(Clone)]
pub struct OpenOptions {
    /// Run to open in a log folder (default: the latest).
    pub run: Option<String>,
    /// Threads converting files in parallel.
    pub threads: usize,
    /// Raw inputs whose inflated size (a `.gz` file counts as what it
    /// inflates to) is larger than this in total are converted to a
    /// temporary Parquet dataset and queried from there, so memory stays
    /// bounded; smaller ones are kept in memory, which costs about 11× the
    /// input (benches/README.md, "query and shell memory").
    pub in_memory_limit_bytes: u64,
    /// Options of the converters.
    pub convert: ConvertOptions,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            run: None,
            threads: batch::default_threads(),
            in_memory_limit_bytes: DEFAULT_IN_MEMORY_LIMIT,
            convert: ConvertOptions::default(),
        }
    }
}

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("run", &self.run)
            .field("threads", &self.threads)
            .field("in_memory_limit_bytes", &self.in_memory_limit_bytes)
            .finish()
    }
}

/// One input as opened.
#[derive(Debug, Clone)]
pub enum Opened {
    /// A raw profile converted on open.
    Converted(Converted),
    /// A Parquet dataset folder read as is.
    Dataset {
        /// The folder.
        path: PathBuf,
        /// Its trace ids.
        trace_ids: Vec<i32>,
    },
}

/// The opened inputs of a session or a `CREATE EXTERNAL TABLE`: where
/// each table's rows are.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    parts: BTreeMap<Table, TableParts>,
    opened: Vec<Opened>,
    used_trace_ids: Vec<i32>,
}

impl Inputs {
    /// Opens inputs: files, run folders, log folders or Parquet datasets
    /// written by `convert`.
    pub fn open<P: AsRef<Path>>(&mut self, inputs: &[P], options: &OpenOptions) -> Result<()> {
        let mut files = Vec::new();
        for p in inputs {
            let p = p.as_ref();
            if p.is_dir() && dataset::is_dataset(p) {
                self.add_dataset(p)?;
            } else {
                files.extend(input::discover(p, options.run.as_deref())?);
            }
        }
        if files.is_empty() {
            return Ok(());
        }
        // Decided by what the inputs inflate to, not their size on disk.
        let mut total = 0u64;
        for f in &files {
            total += input::inflated_len(&f.path)?;
        }
        let first = self.used_trace_ids.iter().max().map_or(0, |m| m + 1);
        if total > options.in_memory_limit_bytes {
            let tmp = tempfile::tempdir()
                .map_err(|e| QueryError::Inputs(format!("temporary folder: {e}")))?;
            let converted = batch::convert_to_dataset(
                &files,
                tmp.path(),
                &options.convert,
                &WriteOptions::default(),
                options.threads,
                Some(first),
            )?;
            // The folder lives as long as the last table reading it.
            let tmp = Arc::new(tmp);
            for c in &converted {
                for w in &c.written {
                    if let Some(t) = w
                        .parent()
                        .and_then(|d| d.file_name())
                        .and_then(|n| Table::from_name(&n.to_string_lossy()))
                    {
                        self.parts
                            .entry(t)
                            .or_default()
                            .files
                            .push((w.clone(), Some(tmp.clone())));
                    }
                }
            }
            self.claim_ids(converted.iter().map(|c| c.trace_id).collect(), tmp.path())?;
            self.opened
                .extend(converted.into_iter().map(Opened::Converted));
        } else {
            let (sink, converted) =
                batch::convert_to_memory(&files, first, &options.convert, options.threads)?;
            self.used_trace_ids
                .extend(converted.iter().map(|c| c.trace_id));
            for (t, batches) in sink.tables {
                self.parts.entry(t).or_default().memory.extend(batches);
            }
            self.opened
                .extend(converted.into_iter().map(Opened::Converted));
        }
        Ok(())
    }

    fn claim_ids(&mut self, ids: Vec<i32>, source: &Path) -> Result<()> {
        if let Some(dup) = ids.iter().find(|i| self.used_trace_ids.contains(i)) {
            return Err(QueryError::Inputs(format!(
                "{}: trace id {dup} is already open from another input; convert the inputs into one dataset folder (`xprof-sql convert A B -o DIR`) to query them together",
                source.display()
            )));
        }
        self.used_trace_ids.extend(ids);
        Ok(())
    }

    fn add_dataset(&mut self, dir: &Path) -> Result<()> {
        let mut files = BTreeMap::new();
        for t in Table::ALL {
            let table_files = dataset::table_files(dir, t)?;
            // A dataset of another schema version is refused whole, naming
            // the file and both versions, before any of it is registered.
            for f in &table_files {
                dataset::check_schema_version(f)?;
            }
            files.insert(t, table_files);
        }
        let ids = dataset::trace_ids(dir)?;
        self.claim_ids(ids.clone(), dir)?;
        let keys = dataset::partition_keys(dir)?;
        for (t, fs) in files {
            let parts = self.parts.entry(t).or_default();
            if keys.is_empty() {
                parts.files.extend(fs.into_iter().map(|f| (f, None)));
            } else {
                // Listed by DataFusion, pruned by the partition columns.
                parts
                    .warehouses
                    .push((dataset::table_dir(dir, t), keys.clone()));
            }
        }
        self.opened.push(Opened::Dataset {
            path: dir.to_path_buf(),
            trace_ids: ids,
        });
        Ok(())
    }

    pub fn tables(&self) -> Result<ProfileTables> {
        self.tables_with(StringColumns::default())
    }

    /// The tables, their dictionary string columns as `strings` says.
    pub fn tables_with(&self, strings: StringColumns) -> Result<ProfileTables> {
        ProfileTables::build(&self.parts, strings)
    }

    pub fn opened(&self) -> &[Opened] {
        &self.opened
    }
}

/// Profiles registered as SQL tables.
///
/// The tables and views live in their own schema (`xprof`, see
/// [`DEFAULT_SCHEMA`]): on a context of its own ([`ProfileSession::new`])
/// that is the default schema, so `SELECT * FROM events` works; on a host's
/// context ([`ProfileSession::with_context`]) the host's tables stay as
/// they are and the profile's are `xprof.events`, `xprof.tracks`, ...
///
/// ```no_run
/// # async fn run() -> xprof_query::Result<()> {
/// use xprof_query::{OpenOptions, ProfileSession};
/// let mut session = ProfileSession::new();
/// session.open(&["examples/data/jax_cpu_mlp.xplane.pb"], &OpenOptions::default()).await?;
/// let df = session.sql("SELECT count(*) FROM events").await?;
/// df.show().await?;
/// # Ok(()) }
/// ```
pub struct ProfileSession {
    ctx: SessionContext,
    schema: String,
    inputs: Inputs,
    limits: SessionOptions,
    strings: StringColumns,
}

impl std::fmt::Debug for ProfileSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileSession")
            .field("schema", &self.schema)
            .field("opened", &self.inputs.opened)
            .finish()
    }
}

impl Default for ProfileSession {
    fn default() -> Self {
        Self::new()
    }
}

/// Limits of a session's queries.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Memory the queries may hold (DataFusion's memory pool). Sorts,
    /// aggregations and joins that would exceed it spill to a temporary
    /// folder where they can, and fail with a "Resources exhausted" error
    /// where they cannot; the process is never aborted. Also caps what is
    /// converted into memory on open (see [`OpenOptions::in_memory_limit_bytes`]).
    pub memory_limit_bytes: Option<u64>,
    /// Threads (DataFusion partitions) a query uses; default: the cores.
    pub threads: Option<usize>,
    /// Run only statements that read ([`crate::read_only`]): queries,
    /// `EXPLAIN`, `SHOW`, `DESCRIBE`; no DDL, DML, `COPY`, `SET`, and no
    /// table function that may read a path (`read_profile`). For services
    /// that run their users' SQL.
    pub read_only: bool,
    /// Wall-clock limit of one statement, planning and execution: past it
    /// the statement fails with a "Resources exhausted" error and its tasks
    /// are cancelled ([`ProfileSession::execute`]).
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

    /// A DataFusion context with these limits and [`default_config`].
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
pub fn default_config() -> SessionConfig {
    SessionConfig::new()
        .with_information_schema(true)
        .with_default_catalog_and_schema("datafusion", DEFAULT_SCHEMA)
        .set_bool("datafusion.execution.parquet.pushdown_filters", true)
        .set_bool("datafusion.optimizer.prefer_existing_sort", true)
}

/// A context of our own: `config`, `runtime`, DataFusion's defaults, and
/// two physical rules: joins of one trace keyed without `trace_id`
/// ([`SingleTraceJoin`], before DataFusion's rules) and grouping by
/// dictionary strings without hashing every row ([`DictionaryGroupBy`],
/// after them).
fn new_context(config: SessionConfig, runtime: Arc<RuntimeEnv>) -> SessionContext {
    let mut rules = PhysicalOptimizer::new().rules;
    rules.insert(0, Arc::new(SingleTraceJoin));
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features()
        .with_physical_optimizer_rules(rules)
        .with_physical_optimizer_rule(Arc::new(DictionaryGroupBy::default()))
        .build();
    SessionContext::new_with_state(state)
}

impl ProfileSession {
    /// A session with its own DataFusion context ([`default_config`]),
    /// where `CREATE EXTERNAL TABLE … STORED AS XSPACE` works too.
    pub fn new() -> Self {
        let ctx = new_context(default_config(), Arc::default());
        register_table_factories(&ctx);
        Self::with_context(ctx)
    }

    /// A session with its own context under `limits` (memory, threads):
    /// one memory budget for opening inputs and for running queries.
    pub fn with_limits(limits: SessionOptions) -> Result<Self> {
        let ctx = limits.context()?;
        register_table_factories(&ctx);
        let mut s = Self::with_context(ctx);
        s.limits = limits;
        Ok(s)
    }

    /// A session registering its tables under schema `xprof` of the
    /// caller's context (created when missing).
    pub fn with_context(ctx: SessionContext) -> Self {
        Self::with_context_in(ctx, DEFAULT_SCHEMA)
    }

    /// A session registering its tables under `schema` of the caller's
    /// context.
    pub fn with_context_in(ctx: SessionContext, schema: &str) -> Self {
        Self {
            ctx,
            schema: schema.to_string(),
            inputs: Inputs::default(),
            limits: SessionOptions::default(),
            strings: StringColumns::default(),
        }
    }

    /// This session with `options` for its statements: `read_only`,
    /// `query_timeout` and `events_db_schema` (set it before opening
    /// inputs). `memory_limit_bytes` and `threads` size a context when it
    /// is made ([`ProfileSession::with_limits`]); here they only cap what
    /// inputs convert into memory.
    pub fn with_options(mut self, options: SessionOptions) -> Self {
        self.limits = options;
        self
    }

    /// This session with its dictionary string columns as `strings` says
    /// (set it before opening inputs): [`StringColumns::Plain`] for
    /// engines that lose dictionaries between processes (a Ballista
    /// cluster, `xprof-cluster`).
    pub fn with_string_columns(mut self, strings: StringColumns) -> Self {
        self.strings = strings;
        self
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

    /// Plans one SQL statement. In a read-only session the statement is
    /// checked first ([`crate::read_only::check_read_only`]) and planned
    /// with DDL, DML and statements denied.
    pub async fn sql(&self, sql: &str) -> Result<datafusion::dataframe::DataFrame> {
        if !self.limits.read_only {
            return Ok(self.ctx.sql(sql).await?);
        }
        let functions: Vec<String> = self.ctx.state().table_functions().keys().cloned().collect();
        crate::read_only::check_read_only(sql, &functions)?;
        let options = datafusion::execution::context::SQLOptions::new()
            .with_allow_ddl(false)
            .with_allow_dml(false)
            .with_allow_statements(false);
        Ok(self.ctx.sql_with_options(sql, options).await?)
    }

    /// Plans and starts one SQL statement under the session's limits: the
    /// read-only check and the query timeout, which covers planning and
    /// every batch of the returned stream.
    pub async fn execute(
        &self,
        sql: &str,
    ) -> Result<datafusion::execution::SendableRecordBatchStream> {
        let started = tokio::time::Instant::now();
        let start = async { Ok::<_, QueryError>(self.sql(sql).await?.execute_stream().await?) };
        let Some(limit) = self.limits.query_timeout else {
            return start.await;
        };
        match tokio::time::timeout_at(started + limit, start).await {
            Ok(stream) => Ok(Box::pin(crate::deadline::Deadline::new(
                stream?, started, limit,
            ))),
            Err(_) => Err(crate::deadline::timed_out(limit).into()),
        }
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
        let options = OpenOptions {
            in_memory_limit_bytes: self.limits.in_memory_limit(options.in_memory_limit_bytes),
            ..options.clone()
        };
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
        if self.limits.events_db_schema {
            crate::tables::ensure_schema(&self.ctx, EVENTS_DB_SCHEMA)?;
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
