//! `event_args` over Parquet files, with scans kept to a few stat keys
//! estimated by the rows of those keys ([`KeyRowsTable`]).
//!
//! A Parquet scan estimates its rows as its files' whatever filter is
//! pushed into it, so `event_args` with `key = 'step_num'` (760 K of
//! 146.6 M rows on the 2 GiB synthetic profile) was planned as 146.6 M
//! rows and 2.9 GB: its join with the events was partitioned, both sides
//! repartitioned and the events scan filtered by a hash per partition
//! (benches/README.md, issue 48, item 3). The converter writes the rows
//! of each `key` to every `event_args` file's footer
//! ([`xprof_format::value_rows`]); this provider reads them (once per
//! file) and gives a scan whose filters keep some keys (`key = 'k'`,
//! `key IN ('k', …)`) the statistics of those rows: the scan's rows are
//! the keys' rows, its bytes and each column's bytes scaled by the same
//! share, min and max kept, counts that cannot be known (NULLs, distinct
//! values, sums) absent, all inexact. Files without the counts (written
//! before them), and scans of another object store than the local
//! filesystem, leave the scan as it was.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{Constraints, ScalarValue, Statistics};
use datafusion::datasource::TableType;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::Result;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{
    BinaryExpr, Expr, LogicalPlan, Operator, TableProviderFilterPushDown,
};
use datafusion::object_store::local::LocalFileSystem;
use datafusion::physical_plan::ExecutionPlan;
use xprof_format::value_rows::ValueRows;

/// The column whose rows per value the files count.
const KEY: &str = "key";

/// `event_args` files read through `inner`, with key-filtered scans
/// estimated by the rows of their keys (see the module documentation).
#[derive(Debug)]
pub struct KeyRowsTable {
    inner: Arc<dyn TableProvider>,
    /// Rows per key of each file read so far (`None`: the file has no
    /// counts). Table files are written once and never change.
    counts: Mutex<HashMap<PathBuf, Option<Arc<ValueRows>>>>,
}

impl KeyRowsTable {
    /// `inner` (a Parquet listing table of `event_args`) with estimated
    /// key-filtered scans.
    pub fn new(inner: Arc<dyn TableProvider>) -> Self {
        Self {
            inner,
            counts: Mutex::default(),
        }
    }

    /// The rows per key of the file at `path`, read from its footer the
    /// first time.
    fn counts_of(&self, path: PathBuf) -> Option<Arc<ValueRows>> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts
            .entry(path)
            .or_insert_with_key(|path| {
                xprof_format::dataset::rows_by_key(path)
                    .ok()
                    .flatten()
                    .map(Arc::new)
            })
            .clone()
    }

    /// `plan` with the statistics of the rows of `keys`, or as it is when
    /// it is not a file scan or a file lacks the counts.
    fn estimated(&self, plan: Arc<dyn ExecutionPlan>, keys: &[String]) -> Arc<dyn ExecutionPlan> {
        let config = plan
            .downcast_ref::<DataSourceExec>()
            .and_then(|exec| exec.data_source().downcast_ref::<FileScanConfig>())
            .and_then(|config| self.estimated_config(config, keys));
        match config {
            Some(config) => DataSourceExec::from_data_source(config),
            None => plan,
        }
    }

    /// `config` with the statistics of the rows of `keys`; `None` when a
    /// file lacks the counts.
    fn estimated_config(&self, config: &FileScanConfig, keys: &[String]) -> Option<FileScanConfig> {
        if config.object_store_url.as_str() != ObjectStoreUrl::local_filesystem().as_str() {
            return None;
        }
        let local = LocalFileSystem::new();
        let mut kept = 0u64;
        let mut total = 0u64;
        let mut seen = std::collections::HashSet::new();
        for file in config.file_groups.iter().flat_map(|group| group.iter()) {
            let path = local.path_to_filesystem(&file.object_meta.location).ok()?;
            if !seen.insert(path.clone()) {
                // A file split into byte ranges over several groups.
                continue;
            }
            let counts = self.counts_of(path)?;
            kept += keys.iter().map(|k| counts.rows_of(k)).sum::<u64>();
            total += counts.total();
        }
        if total == 0 {
            return None;
        }
        let share = |stats: &Statistics| scaled(stats, kept, total);
        let groups = config
            .file_groups
            .iter()
            .map(|group| {
                let files = group
                    .iter()
                    .map(|file| {
                        let mut file = file.clone();
                        file.statistics = file.statistics.as_deref().map(|s| Arc::new(share(s)));
                        file
                    })
                    .collect();
                let scaled_group = FileGroup::new(files);
                match group.file_statistics(None) {
                    Some(s) => scaled_group.with_statistics(Arc::new(share(s))),
                    None => scaled_group,
                }
            })
            .collect();
        let mut whole = share(&config.statistics());
        whole.num_rows = Precision::Inexact(usize::try_from(kept).unwrap_or(usize::MAX));
        Some(
            FileScanConfigBuilder::from(config.clone())
                .with_file_groups(groups)
                .with_statistics(whole)
                .build(),
        )
    }
}

/// `stats` for `kept` of `total` rows: rows and bytes scaled, min and
/// max kept, what cannot be known absent, all inexact.
fn scaled(stats: &Statistics, kept: u64, total: u64) -> Statistics {
    let scale = |p: &Precision<usize>| match p.get_value() {
        Some(&v) => Precision::Inexact(
            usize::try_from(v as u128 * u128::from(kept) / u128::from(total)).unwrap_or(usize::MAX),
        ),
        None => Precision::Absent,
    };
    let mut out = stats.clone().to_inexact();
    out.num_rows = scale(&stats.num_rows);
    out.total_byte_size = scale(&stats.total_byte_size);
    for (column, original) in out
        .column_statistics
        .iter_mut()
        .zip(&stats.column_statistics)
    {
        column.null_count = Precision::Absent;
        column.sum_value = Precision::Absent;
        column.distinct_count = Precision::Absent;
        column.byte_size = scale(&original.byte_size);
    }
    out
}

/// The keys a scan's filters keep: a conjunct `key = 'k'`, `key IN ('k',
/// …)` or a disjunction of those (DataFusion writes a short `IN` list as
/// one) keeps its keys, and of several conjuncts the first that says is
/// taken (any other only keeps fewer rows); sorted, each once; `None`
/// when none says.
fn kept_keys(filters: &[Expr]) -> Option<Vec<String>> {
    let mut keys = filters.iter().find_map(keys_of)?;
    // Each key's rows once (`key = 'a' OR key = 'a'`).
    keys.sort();
    keys.dedup();
    Some(keys)
}

/// The keys `expr` keeps, if it says (see [`kept_keys`]).
fn keys_of(expr: &Expr) -> Option<Vec<String>> {
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::And,
            right,
        }) => keys_of(left).or_else(|| keys_of(right)),
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => {
            let mut keys = keys_of(left)?;
            keys.extend(keys_of(right)?);
            Some(keys)
        }
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) => match (is_key(left), is_key(right)) {
            (true, false) => string_literal(right).map(|k| vec![k]),
            (false, true) => string_literal(left).map(|k| vec![k]),
            _ => None,
        },
        Expr::InList(list) if !list.negated && is_key(&list.expr) => {
            list.list.iter().map(string_literal).collect()
        }
        _ => None,
    }
}

/// Whether `expr` is the `key` column (cast or not).
fn is_key(expr: &Expr) -> bool {
    match expr {
        Expr::Column(c) => c.name == KEY,
        Expr::Cast(c) => is_key(&c.expr),
        Expr::TryCast(c) => is_key(&c.expr),
        _ => false,
    }
}

/// The string of a literal (of any string or dictionary type, cast or
/// not).
fn string_literal(expr: &Expr) -> Option<String> {
    fn of(value: &ScalarValue) -> Option<String> {
        match value {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Some(s.clone()),
            ScalarValue::Dictionary(_, inner) => of(inner),
            _ => None,
        }
    }
    match expr {
        Expr::Literal(value, _) => of(value),
        Expr::Cast(c) => string_literal(&c.expr),
        Expr::TryCast(c) => string_literal(&c.expr),
        _ => None,
    }
}

#[async_trait]
impl TableProvider for KeyRowsTable {
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
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self.inner.scan(state, projection, filters, limit).await?;
        Ok(match kept_keys(filters) {
            Some(keys) => self.estimated(plan, &keys),
            None => plan,
        })
    }
    async fn scan_with_args<'a>(
        &self,
        state: &dyn Session,
        args: ScanArgs<'a>,
    ) -> Result<ScanResult> {
        let keys = kept_keys(args.filters().unwrap_or_default());
        let result = self.inner.scan_with_args(state, args).await?;
        Ok(match keys {
            Some(keys) => ScanResult::new(self.estimated(result.into_inner(), &keys)),
            None => result,
        })
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }
    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }
}
