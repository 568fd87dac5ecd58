//! [`ProfileSession`]: opens profiles and registers the tables and views
//! on a DataFusion [`SessionContext`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::datasource::MemTable;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::prelude::{SessionConfig, SessionContext, col};
use xprof_convert::batch::{self, Converted};
use xprof_convert::input;
use xprof_convert::sink::MemorySink;
use xprof_convert::xspace::XSpaceOptions;
use xprof_format::Table;
use xprof_format::dataset::{self, WriteOptions};

use crate::error::{QueryError, Result};
use crate::views::register_views;

/// How inputs are opened.
#[derive(Clone)]
pub struct OpenOptions {
    /// Run to open in a log folder (default: the latest).
    pub run: Option<String>,
    /// Threads converting files in parallel.
    pub threads: usize,
    /// Raw inputs larger than this in total are converted to a temporary
    /// Parquet dataset and queried from there, so memory stays bounded;
    /// smaller ones are kept in memory.
    pub in_memory_limit_bytes: u64,
    /// Options of the XSpace converter.
    pub xspace: XSpaceOptions,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            run: None,
            threads: batch::default_threads(),
            in_memory_limit_bytes: 256 << 20,
            xspace: XSpaceOptions::default(),
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

/// Profiles registered as SQL tables.
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
    memory: MemorySink,
    parquet: BTreeMap<Table, Vec<PathBuf>>,
    opened: Vec<Opened>,
    used_trace_ids: Vec<i32>,
    temp_dirs: Vec<tempfile::TempDir>,
}

impl std::fmt::Debug for ProfileSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileSession")
            .field("opened", &self.opened)
            .finish()
    }
}

impl Default for ProfileSession {
    fn default() -> Self {
        Self::new()
    }
}

/// The default DataFusion configuration for profile queries.
pub fn default_config() -> SessionConfig {
    SessionConfig::new()
        .with_information_schema(true)
        .set_bool("datafusion.execution.parquet.pushdown_filters", true)
}

impl ProfileSession {
    /// A session with its own DataFusion context ([`default_config`]).
    pub fn new() -> Self {
        Self::with_context(SessionContext::new_with_config(default_config()))
    }

    /// A session registering its tables on the caller's context.
    pub fn with_context(ctx: SessionContext) -> Self {
        Self {
            ctx,
            memory: MemorySink::default(),
            parquet: BTreeMap::new(),
            opened: Vec::new(),
            used_trace_ids: Vec::new(),
            temp_dirs: Vec::new(),
        }
    }

    /// The DataFusion context holding the tables.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// What was opened so far.
    pub fn opened(&self) -> &[Opened] {
        &self.opened
    }

    /// Runs one SQL statement.
    pub async fn sql(&self, sql: &str) -> Result<datafusion::dataframe::DataFrame> {
        Ok(self.ctx.sql(sql).await?)
    }

    /// Opens inputs: files, run folders, log folders or Parquet datasets
    /// written by `convert`. Several inputs become several traces of the
    /// same tables. Tables and views are (re-)registered afterwards.
    pub async fn open<P: AsRef<Path>>(
        &mut self,
        inputs: &[P],
        options: &OpenOptions,
    ) -> Result<()> {
        let mut files = Vec::new();
        for p in inputs {
            let p = p.as_ref();
            if p.is_dir() && dataset::is_dataset(p) {
                self.add_dataset(p)?;
            } else {
                files.extend(input::discover(p, options.run.as_deref())?);
            }
        }
        if !files.is_empty() {
            let total: u64 = files
                .iter()
                .filter_map(|f| std::fs::metadata(&f.path).ok())
                .map(|m| m.len())
                .sum();
            let first = self.used_trace_ids.iter().max().map_or(0, |m| m + 1);
            if total > options.in_memory_limit_bytes {
                let tmp = tempfile::tempdir()
                    .map_err(|e| QueryError::Inputs(format!("temporary folder: {e}")))?;
                let converted = batch::convert_to_dataset(
                    &files,
                    tmp.path(),
                    &options.xspace,
                    &WriteOptions::default(),
                    options.threads,
                    Some(first),
                )?;
                for c in &converted {
                    for w in &c.written {
                        if let Some(t) = w
                            .parent()
                            .and_then(|d| d.file_name())
                            .and_then(|n| Table::from_name(&n.to_string_lossy()))
                        {
                            self.parquet.entry(t).or_default().push(w.clone());
                        }
                    }
                }
                self.claim_ids(converted.iter().map(|c| c.trace_id).collect(), tmp.path())?;
                self.opened
                    .extend(converted.into_iter().map(Opened::Converted));
                self.temp_dirs.push(tmp);
            } else {
                let (sink, converted) =
                    batch::convert_to_memory(&files, first, &options.xspace, options.threads)?;
                self.used_trace_ids
                    .extend(converted.iter().map(|c| c.trace_id));
                self.memory.extend(sink);
                self.opened
                    .extend(converted.into_iter().map(Opened::Converted));
            }
        }
        self.register().await
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
        let ids = dataset::trace_ids(dir)?;
        self.claim_ids(ids.clone(), dir)?;
        for t in Table::ALL {
            self.parquet
                .entry(t)
                .or_default()
                .extend(dataset::table_files(dir, t)?);
        }
        self.opened.push(Opened::Dataset {
            path: dir.to_path_buf(),
            trace_ids: ids,
        });
        Ok(())
    }

    async fn register(&mut self) -> Result<()> {
        for t in Table::ALL {
            let name = t.name();
            let mem = self.memory.tables.get(&t).cloned().unwrap_or_default();
            let files = self.parquet.get(&t).cloned().unwrap_or_default();
            let _ = self.ctx.deregister_table(name)?;
            let _ = self.ctx.deregister_table(format!("__{name}_memory"))?;
            let _ = self.ctx.deregister_table(format!("__{name}_parquet"))?;
            match (mem.is_empty(), files.is_empty()) {
                (_, true) => {
                    let table = MemTable::try_new(t.schema(), vec![mem])?;
                    self.ctx.register_table(name, Arc::new(table))?;
                }
                (true, false) => {
                    self.ctx.register_table(name, listing_table(t, &files)?)?;
                }
                (false, false) => {
                    let m = format!("__{name}_memory");
                    let p = format!("__{name}_parquet");
                    self.ctx.register_table(
                        m.as_str(),
                        Arc::new(MemTable::try_new(t.schema(), vec![mem])?),
                    )?;
                    self.ctx
                        .register_table(p.as_str(), listing_table(t, &files)?)?;
                    self.ctx
                        .sql(&format!(
                            "CREATE VIEW {name} AS SELECT * FROM {m} UNION ALL SELECT * FROM {p}"
                        ))
                        .await?;
                }
            }
        }
        register_views(&self.ctx).await
    }
}

/// A Parquet listing table over exactly `files`, with the table's schema
/// and declared sort order.
fn listing_table(table: Table, files: &[PathBuf]) -> Result<Arc<ListingTable>> {
    let urls = files
        .iter()
        .map(|f| {
            let abs = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            ListingTableUrl::parse(abs.to_string_lossy())
        })
        .collect::<datafusion::error::Result<Vec<_>>>()?;
    let sort: Vec<_> = table
        .def()
        .sort_by
        .iter()
        .map(|c| col(*c).sort(true, false))
        .collect();
    let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
        .with_file_extension(dataset::EXTENSION)
        .with_file_sort_order(vec![sort]);
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(options)
        .with_schema(table.schema());
    Ok(Arc::new(ListingTable::try_new(config)?))
}
