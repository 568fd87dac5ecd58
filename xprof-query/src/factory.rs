//! Profiles from SQL and from a host's own `SessionContext`, the
//! DataFusion way:
//!
//! - a [`TableProviderFactory`] per input format, so that
//!   `CREATE EXTERNAL TABLE k STORED AS XSPACE LOCATION 'run/'` works
//!   (and `STORED AS PROFILE` for any format, detected by content); the
//!   table is the profile's `events` unless `OPTIONS ('table' 'tracks')`
//!   names another. Tables created from the same location share one
//!   conversion.
//! - [`SessionContextExt::register_profile`](crate::SessionContextExt::register_profile)
//!   (in `context.rs`): every table and view of a profile under a schema
//!   of the caller's choosing.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use datafusion::prelude::SessionContext;
//! use xprof_query::SessionContextExt;
//! let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data/jax_cpu_mlp.xplane.pb");
//! let ctx = SessionContext::new();
//! // Every table and view under `p`; the context prepared for profiles.
//! ctx.register_profile("p", profile).await?;
//! ctx.sql(&format!("CREATE EXTERNAL TABLE k STORED AS XSPACE LOCATION '{profile}'")).await?;
//! let same = ctx
//!     .sql("SELECT count(*) = (SELECT count(*) FROM k) AS same FROM p.events")
//!     .await?
//!     .collect()
//!     .await?;
//! assert_eq!(same[0].num_rows(), 1);
//! # Ok::<(), xprof_query::QueryError>(()) }).unwrap();
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::error::DataFusionError;
use datafusion::logical_expr::CreateExternalTable;
use xprof_format::Table;

use crate::error::{QueryError, Result};
use crate::inputs::{Inputs, OpenOptions};
use crate::tables::ProfileTables;

/// Creates profile tables for `CREATE EXTERNAL TABLE … STORED AS FORMAT`.
#[derive(Debug, Default)]
pub struct ProfileTableFactory {
    /// The format the statement names; `None` for `PROFILE` (any).
    format: Option<&'static str>,
    /// Opened locations, so the tables of one profile share a conversion.
    /// Held for the factory's (the context's) life: a temporary dataset
    /// made for `CREATE EXTERNAL TABLE` outlives `DROP TABLE`.
    opened: Mutex<HashMap<(PathBuf, Option<String>), ProfileTables>>,
}

impl ProfileTableFactory {
    /// A factory for inputs of `format` (a reader name, e.g. `xspace`), or
    /// of any format when `None`.
    pub fn new(format: Option<&'static str>) -> Self {
        Self {
            format,
            opened: Mutex::new(HashMap::new()),
        }
    }

    fn open(&self, location: &Path, run: Option<String>) -> Result<ProfileTables> {
        let key = (
            std::path::absolute(location).unwrap_or_else(|_| location.to_path_buf()),
            run.clone(),
        );
        if let Some(t) = self.opened.lock().expect("no panic holds it").get(&key) {
            return Ok(t.clone());
        }
        let mut options = OpenOptions {
            run,
            ..OpenOptions::default()
        };
        // The format the statement names reads the input, also where
        // detection cannot tell it (`check_format` refused a file that
        // reads as another).
        options.convert.format = self.format;
        let mut inputs = Inputs::default();
        inputs.open(&[location], &options)?;
        let tables = inputs.tables()?;
        self.opened
            .lock()
            .expect("no panic holds it")
            .insert(key, tables.clone());
        Ok(tables)
    }

    fn check_format(&self, location: &Path) -> Result<()> {
        let Some(format) = self.format else {
            return Ok(());
        };
        if location.is_file() {
            let head =
                xprof_convert::input::read_head(location, xprof_convert::registry::SNIFF_BYTES)?;
            // A file detection cannot place is read as the format named.
            let Ok(found) = xprof_convert::registry::detect(location, &head) else {
                return Ok(());
            };
            let found = found.name();
            if found != format {
                return Err(QueryError::Inputs(format!(
                    "{}: STORED AS {} but the file is {found}",
                    location.display(),
                    format.to_uppercase()
                )));
            }
        }
        Ok(())
    }
}

#[async_trait]
impl TableProviderFactory for ProfileTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let external = |e: QueryError| DataFusionError::External(Box::new(e));
        let [location] = cmd.locations.as_slice() else {
            return Err(DataFusionError::Plan(
                "a profile table takes one LOCATION (a file, run folder, log folder or dataset)"
                    .into(),
            ));
        };
        let location = Path::new(location);
        let option = |k: &str| {
            cmd.options
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(k) || key.ends_with(&format!(".{k}")))
                .map(|(_, v)| v.clone())
        };
        let table_name = option("table").unwrap_or_else(|| "events".into());
        let table = Table::from_name(&table_name).ok_or_else(|| {
            DataFusionError::Plan(format!(
                "no profile table {table_name:?}; tables: {}",
                Table::ALL.map(|t| t.name()).join(", ")
            ))
        })?;
        self.check_format(location).map_err(external)?;
        let tables = self.open(location, option("run")).map_err(external)?;
        Ok(tables.provider(table))
    }
}
