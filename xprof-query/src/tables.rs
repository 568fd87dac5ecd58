//! The normalized tables of opened profiles as DataFusion table
//! providers ([`ProfileTables`]): in memory, over Parquet files, over a
//! warehouse's partitioned folders, or a union of those. Registering them
//! (with the functions and views) is the catalog's job (`catalog.rs`).
//!
//! A provider reading a temporary dataset holds that dataset's folder
//! alive ([`GuardedTable`]), so a host that keeps a table keeps its files,
//! whatever happens to the session that opened it; one reading a dataset
//! it was given checks its files' schema versions when first scanned.

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Constraints, Statistics};
use datafusion::datasource::MemTable;
use datafusion::datasource::TableType;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, LogicalPlan, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::union::UnionExec;
use datafusion::prelude::col;
use xprof_convert::sink::{MemorySink, TableSink as _};
use xprof_format::Table;
use xprof_format::dataset;

use crate::error::Result;
use crate::key_rows::KeyRowsTable;

/// The schema profile tables are registered under by default.
pub const DEFAULT_SCHEMA: &str = "xprof";

/// The schema versions of a dataset table's files, checked when the
/// table is first scanned ([`GuardedTable`]): opening a dataset reads no
/// footer but the `traces` table's, so a query pays only for the tables
/// it reads.
#[derive(Debug, Default)]
pub(crate) struct VersionCheck {
    /// Files named one by one.
    files: Vec<PathBuf>,
    /// Warehouse table folders (`W/events`), listed when checked.
    folders: Vec<(PathBuf, Table)>,
    checked: std::sync::OnceLock<()>,
}

impl VersionCheck {
    fn is_empty(&self) -> bool {
        self.files.is_empty() && self.folders.is_empty()
    }

    /// Every file's version, once: a file of another schema version is
    /// refused, naming the file and both versions.
    fn run(&self) -> datafusion::error::Result<()> {
        if self.checked.get().is_some() {
            return Ok(());
        }
        let external = |e: xprof_format::FormatError| DataFusionError::External(Box::new(e));
        for f in &self.files {
            dataset::check_schema_version(f).map_err(external)?;
        }
        for (dir, table) in &self.folders {
            let root = dir.parent().unwrap_or(dir);
            for f in dataset::table_files(root, *table).map_err(external)? {
                dataset::check_schema_version(&f).map_err(external)?;
            }
        }
        let _ = self.checked.set(());
        Ok(())
    }
}

/// A provider that reads as its inner table, and keeps something alive (a
/// temporary dataset folder) for as long as it lives, or checks its
/// files' schema versions at the first scan ([`VersionCheck`]), or both.
#[derive(Debug)]
pub struct GuardedTable {
    inner: Arc<dyn TableProvider>,
    _guard: Option<Arc<dyn std::any::Any + Send + Sync>>,
    versions: VersionCheck,
}

impl GuardedTable {
    /// Wraps `inner`, holding `guard` until the provider is dropped and
    /// checking `versions` before the first scan.
    pub(crate) fn new(
        inner: Arc<dyn TableProvider>,
        guard: Option<Arc<dyn Any + Send + Sync>>,
        versions: VersionCheck,
    ) -> Self {
        Self {
            inner,
            _guard: guard,
            versions,
        }
    }
}

#[async_trait]
impl TableProvider for GuardedTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
    fn constraints(&self) -> Option<&Constraints> {
        self.inner.constraints()
    }
    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }
    fn get_table_definition(&self) -> Option<&str> {
        self.inner.get_table_definition()
    }
    fn get_logical_plan(&'_ self) -> Option<Cow<'_, LogicalPlan>> {
        self.inner.get_logical_plan()
    }
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        self.versions.run()?;
        self.inner.scan(state, projection, filters, limit).await
    }
    async fn scan_with_args<'a>(
        &self,
        state: &dyn Session,
        args: datafusion::catalog::ScanArgs<'a>,
    ) -> datafusion::error::Result<datafusion::catalog::ScanResult> {
        self.versions.run()?;
        self.inner.scan_with_args(state, args).await
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::error::Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }
    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }
}

/// The rows of several providers of one schema, one after the other (a
/// table whose traces are partly in memory, partly in Parquet files). It
/// declares no order of its own.
#[derive(Debug)]
struct UnionTable {
    schema: SchemaRef,
    parts: Vec<Arc<dyn TableProvider>>,
}

#[async_trait]
impl TableProvider for UnionTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn table_type(&self) -> TableType {
        TableType::Base
    }
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let mut plans = Vec::with_capacity(self.parts.len());
        for p in &self.parts {
            plans.push(p.scan(state, projection, filters, limit).await?);
        }
        UnionExec::try_new(plans)
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::error::Result<Vec<TableProviderFilterPushDown>> {
        // Each part may apply them; the union is filtered again.
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }
}

/// `listing`, for `event_args` with key-filtered scans estimated by the
/// rows of their keys ([`KeyRowsTable`]).
fn with_key_rows(table: Table, listing: Arc<ListingTable>) -> Arc<dyn TableProvider> {
    match table {
        Table::EventArgs => Arc::new(KeyRowsTable::new(listing)),
        _ => listing,
    }
}

/// Parquet files of `table` in the dataset layout, with the table's
/// declared sort order (true inside each file: the converter checks every
/// batch it writes against it).
fn listing_options(table: Table) -> ListingOptions {
    let sort: Vec<_> = table
        .def()
        .sort_by
        .iter()
        .map(|c| col(*c).sort(true, false))
        .collect();
    ListingOptions::new(Arc::new(ParquetFormat::default()))
        .with_file_extension(dataset::EXTENSION)
        .with_file_sort_order(vec![sort])
}

/// A Parquet listing table over exactly `files`, with the table's schema
/// and declared sort order (true inside each file: the converter checks
/// every batch it writes against it).
pub(crate) fn listing_table(
    table: Table,
    files: &[PathBuf],
    strings: StringColumns,
) -> Result<Arc<ListingTable>> {
    let urls = files
        .iter()
        .map(|f| {
            let abs = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            ListingTableUrl::parse(abs.to_string_lossy())
        })
        .collect::<datafusion::error::Result<Vec<_>>>()?;
    let options = listing_options(table);
    let config = ListingTableConfig::new_with_multi_paths(urls)
        .with_listing_options(options)
        .with_schema(strings.schema(table));
    Ok(Arc::new(ListingTable::try_new(config)?))
}

/// The partition columns a warehouse's `table` gets: every key, unless
/// one of them is a column of the table already (`traces` has `run` and
/// `host`), in which case none (the folder levels are matched in order,
/// so a later key cannot be declared without the earlier ones); the
/// files are then listed from every folder below the table's all the
/// same.
pub(crate) fn partition_columns(
    table: Table,
    keys: &[dataset::PartitionKey],
) -> Vec<(String, arrow::datatypes::DataType)> {
    let def = table.def();
    if keys.iter().any(|k| def.column_index(k.name()).is_some()) {
        return Vec::new();
    }
    keys.iter()
        .map(|k| (k.name().to_string(), arrow::datatypes::DataType::Utf8))
        .collect()
}

/// A Parquet listing table over a warehouse table's folder `dir`, with
/// the partition columns of [`partition_columns`] after the table's
/// own: a filter on them lists only the folders that match. Each file's
/// rows are sorted as the table declares (as in [`listing_table`]), and a
/// partition column is constant in a file, so the order holds.
pub(crate) fn warehouse_table(
    table: Table,
    dir: &std::path::Path,
    keys: &[dataset::PartitionKey],
    strings: StringColumns,
) -> Result<Arc<ListingTable>> {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    // A trailing separator: the URL is a folder to list, not a file.
    let url = ListingTableUrl::parse(format!("{}/", abs.to_string_lossy().trim_end_matches('/')))?;
    let options = listing_options(table).with_table_partition_cols(partition_columns(table, keys));
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .with_schema(strings.schema(table));
    Ok(Arc::new(ListingTable::try_new(config)?))
}

/// The schema DataFusion sees for `table`: its columns, without the
/// schema-level metadata of the Parquet files (table name, version: the
/// version is checked when a dataset is opened). Tables that carry
/// different metadata cannot meet in a `UNION` (DataFusion merges the
/// logical schemas' metadata but not the physical ones, and refuses the
/// plan), which is what the `event_stats` view does.
pub(crate) fn sql_schema(table: Table) -> SchemaRef {
    Arc::new(arrow::datatypes::Schema::new(
        table.schema().fields().clone(),
    ))
}

/// How string columns stored as dictionaries reach SQL.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StringColumns {
    /// As stored: `Dictionary(Int32, Utf8)` (`name`, `kind`, `key`, …),
    /// which groups and joins without hashing every string.
    #[default]
    Dictionary,
    /// As plain `Utf8`, decoded when read: for engines that lose
    /// dictionaries between processes (Apache Ballista's Arrow Flight
    /// shuffle sends their values, and a stage expecting a dictionary then
    /// fails). The values, their order and every answer are the same.
    Plain,
}

impl StringColumns {
    /// The schema DataFusion sees for `table` (`sql_schema`), its
    /// dictionary string columns plain under [`StringColumns::Plain`].
    pub fn schema(self, table: Table) -> SchemaRef {
        let schema = sql_schema(table);
        if self == StringColumns::Dictionary {
            return schema;
        }
        let fields: Vec<arrow::datatypes::FieldRef> = schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                arrow::datatypes::DataType::Dictionary(_, value) => {
                    Arc::new(f.as_ref().clone().with_data_type(value.as_ref().clone()))
                }
                _ => f.clone(),
            })
            .collect();
        Arc::new(arrow::datatypes::Schema::new(fields))
    }
}

/// Where a table's rows are.
#[derive(Debug, Default, Clone)]
pub(crate) struct TableParts {
    /// Batches converted into memory.
    pub memory: Vec<RecordBatch>,
    /// Parquet files, each with what keeps it alive (a temporary folder).
    pub files: Vec<(PathBuf, Option<Arc<tempfile::TempDir>>)>,
    /// Warehouse folders of the table (`W/events`), with their partition
    /// keys.
    pub warehouses: Vec<(PathBuf, Vec<dataset::PartitionKey>)>,
}

/// Warehouses have partition columns the other inputs lack: a table is
/// read from warehouses of the same keys only.
fn check_warehouses(p: &TableParts) -> Result<()> {
    let (first_dir, keys) = &p.warehouses[0];
    let warehouse = first_dir.parent().unwrap_or(first_dir);
    if !p.memory.is_empty() || !p.files.is_empty() {
        return Err(crate::error::QueryError::Inputs(format!(
            "{}: a warehouse (partitioned by {}) opens only with warehouses of the same keys: its tables have the partition columns, the other inputs' do not; convert them into it (`xprof-sql convert INPUT -o {} --partition-by {}`)",
            warehouse.display(),
            dataset::key_names(keys),
            warehouse.display(),
            dataset::key_names(keys),
        )));
    }
    if let Some((dir, other)) = p.warehouses.iter().find(|(_, k)| k != keys) {
        return Err(crate::error::QueryError::Inputs(format!(
            "{} is partitioned by {}, {} by {}: warehouses open together only when partitioned alike",
            warehouse.display(),
            dataset::key_names(keys),
            dir.parent().unwrap_or(dir).display(),
            dataset::key_names(other),
        )));
    }
    Ok(())
}

/// The one provider of `sources`, or their union.
fn one_or_union(
    schema: SchemaRef,
    mut sources: Vec<Arc<dyn TableProvider>>,
) -> Arc<dyn TableProvider> {
    if sources.len() == 1 {
        sources.pop().expect("one")
    } else {
        Arc::new(UnionTable {
            schema,
            parts: sources,
        })
    }
}

/// Every table of some opened profiles, as providers.
#[derive(Debug, Clone)]
pub struct ProfileTables {
    providers: BTreeMap<Table, Arc<dyn TableProvider>>,
}

impl ProfileTables {
    pub(crate) fn build(
        parts: &BTreeMap<Table, TableParts>,
        strings: StringColumns,
    ) -> Result<Self> {
        let mut providers = BTreeMap::new();
        let empty = TableParts::default();
        for t in Table::ALL {
            let p = parts.get(&t).unwrap_or(&empty);
            let mut sources: Vec<Arc<dyn TableProvider>> = Vec::new();
            if let Some((_, keys)) = p.warehouses.first() {
                check_warehouses(p)?;
                for (dir, _) in &p.warehouses {
                    let versions = VersionCheck {
                        folders: vec![(dir.clone(), t)],
                        ..VersionCheck::default()
                    };
                    sources.push(Arc::new(GuardedTable::new(
                        with_key_rows(t, warehouse_table(t, dir, keys, strings)?),
                        None,
                        versions,
                    )));
                }
                let schema = sources[0].schema();
                providers.insert(t, one_or_union(schema, sources));
                continue;
            }
            let schema = strings.schema(t);
            if !p.memory.is_empty() || p.files.is_empty() {
                // Through a memory sink: the batches of several inputs (and
                // any the converter left short) are joined as it joins them.
                let mut joined = MemorySink::default();
                for b in &p.memory {
                    let columns = b
                        .columns()
                        .iter()
                        .zip(schema.fields())
                        .map(|(c, f)| {
                            // Only plain strings from dictionaries
                            // (`StringColumns::Plain`) change type.
                            if c.data_type() == f.data_type() {
                                Ok(Arc::clone(c))
                            } else {
                                arrow::compute::cast(c, f.data_type())
                            }
                        })
                        .collect::<std::result::Result<Vec<_>, _>>()
                        .map_err(DataFusionError::from)?;
                    let batch = RecordBatch::try_new(schema.clone(), columns)
                        .map_err(DataFusionError::from)?;
                    joined.write(t, batch)?;
                }
                let batches = joined.tables.remove(&t).unwrap_or_default();
                sources.push(Arc::new(MemTable::try_new(schema.clone(), vec![batches])?));
            }
            if !p.files.is_empty() {
                let paths: Vec<PathBuf> = p.files.iter().map(|(f, _)| f.clone()).collect();
                let mut listing = with_key_rows(t, listing_table(t, &paths, strings)?);
                let mut guards: Vec<Arc<tempfile::TempDir>> = Vec::new();
                let mut versions = VersionCheck::default();
                for (f, d) in &p.files {
                    match d {
                        // A temporary dataset is this build's own writing.
                        Some(d) if !guards.iter().any(|x| Arc::ptr_eq(x, d)) => {
                            guards.push(d.clone())
                        }
                        Some(_) => {}
                        None => versions.files.push(f.clone()),
                    }
                }
                if !guards.is_empty() || !versions.is_empty() {
                    let guard = (!guards.is_empty())
                        .then(|| Arc::new(guards) as Arc<dyn Any + Send + Sync>);
                    listing = Arc::new(GuardedTable::new(listing, guard, versions));
                }
                sources.push(listing);
            }
            providers.insert(t, one_or_union(schema, sources));
        }
        Ok(Self { providers })
    }

    /// The provider of `table`.
    pub fn provider(&self, table: Table) -> Arc<dyn TableProvider> {
        self.providers[&table].clone()
    }

    /// Every table with its provider, in [`Table`] order.
    pub(crate) fn providers(&self) -> impl Iterator<Item = (Table, &Arc<dyn TableProvider>)> {
        self.providers.iter().map(|(t, p)| (*t, p))
    }
}
