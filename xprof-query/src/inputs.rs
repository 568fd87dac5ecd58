//! The inputs a session or a `CREATE EXTERNAL TABLE` opens ([`Inputs`]):
//! files, run and log folders converted into memory or into a temporary
//! dataset, and Parquet datasets and warehouses read as they are; where
//! each table's rows are then ([`TableParts`]), and how opening goes
//! ([`OpenOptions`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use xprof_convert::many::{self, Converted};
use xprof_convert::reader::ConvertOptions;
use xprof_convert::{discover, input};
use xprof_format::Table;
use xprof_format::dataset::{self, WriteOptions};

use crate::error::{QueryError, Result};
use crate::tables::{ProfileTables, StringColumns, TableParts};

/// Raw inputs up to this inflated size are converted into memory: about
/// 11× this in Arrow arrays (176 MiB), within the conversion budget of
/// docs/design.md. Larger ones go through a temporary dataset, which
/// measured as fast from 100 MiB on and 5-8× smaller in memory.
pub const DEFAULT_IN_MEMORY_LIMIT: u64 = 16 << 20;

/// Bytes of Arrow memory one byte of XSpace input takes when converted
/// into memory (measured: 1,174 MiB for the 105 MiB real profile).
pub(crate) const MEMORY_PER_INPUT_BYTE: u64 = 11;

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
            threads: many::default_threads(),
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
                files.extend(discover::discover(p, options.run.as_deref())?);
            }
        }
        // A kernel's dump files named one by one are one trace.
        discover::retain_one_file_per_trace(&mut files, |f| &f.path);
        if files.is_empty() {
            return Ok(());
        }
        // Decided by what the inputs inflate to, not their size on disk.
        let mut total = 0u64;
        for f in &files {
            for path in discover::trace_files(&f.path) {
                total += input::inflated_len(&path)?;
            }
        }
        let first = self.used_trace_ids.iter().max().map_or(0, |m| m + 1);
        if total > options.in_memory_limit_bytes {
            let tmp = tempfile::tempdir()
                .map_err(|e| QueryError::Inputs(format!("temporary folder: {e}")))?;
            let converted = many::convert_to_dataset(
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
                many::convert_to_memory(&files, first, &options.convert, options.threads)?;
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
            files.insert(t, dataset::table_files(dir, t)?);
        }
        // A file of another schema version is refused, naming the file
        // and both versions: the `traces` table's now (it is read for the
        // trace ids), every other table's when first scanned
        // (`tables::VersionCheck`), so opening reads no other footer.
        for f in &files[&Table::Traces] {
            dataset::check_schema_version(f)?;
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
