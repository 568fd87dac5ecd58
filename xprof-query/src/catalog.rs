//! Registration of everything a profile puts on a DataFusion context: the
//! tables ([`crate::tables`]), the functions ([`crate::functions`]), the
//! views ([`crate::views`]) and the diff table functions
//! ([`crate::diff`]), under one schema of the context's default catalog.
//!
//! The top of the crate's SQL side: it imports those modules and none of
//! them imports it. A new kind of thing registered per profile is added
//! here; a new table, function, view or diff goes in its own module's list.

use std::sync::Arc;

use datafusion::catalog::MemorySchemaProvider;
use datafusion::common::TableReference;
use datafusion::datasource::ViewTable;
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use xprof_format::Table;

use crate::error::Result;
use crate::plan::plan_in_schema;
use crate::tables::ProfileTables;
use crate::views::{HELPERS, VIEWS};

impl ProfileTables {
    /// Registers every table and view in `schema` of `ctx`'s default
    /// catalog (created when missing), replacing tables and views of the
    /// same names there: give profiles a schema of their own (the default,
    /// `xprof`), never one holding a host's tables.
    pub async fn register(&self, ctx: &SessionContext, schema: &str) -> Result<()> {
        ensure_schema(ctx, schema)?;
        crate::functions::register_all(ctx);
        crate::functions::register_event_functions(ctx, self.provider(Table::Events));
        for (t, p) in self.providers() {
            let name = TableReference::partial(schema, t.name());
            ctx.deregister_table(name.clone())?;
            ctx.register_table(name, p.clone())?;
        }
        register_views(ctx, schema).await
    }
}

/// Creates `schema` in the default catalog of `ctx` when it is missing.
pub(crate) fn ensure_schema(ctx: &SessionContext, schema: &str) -> Result<()> {
    let catalog_name = ctx
        .state()
        .config()
        .options()
        .catalog
        .default_catalog
        .clone();
    let catalog = ctx
        .catalog(&catalog_name)
        .ok_or_else(|| DataFusionError::Plan(format!("no default catalog {catalog_name:?}")))?;
    if catalog.schema(schema).is_none() {
        catalog.register_schema(schema, Arc::new(MemorySchemaProvider::new()))?;
    }
    Ok(())
}

/// Creates every helper view ([`HELPERS`]) and view of [`VIEWS`] in
/// `schema` of `ctx` (the tables must be there), then the diff table functions over them
/// ([`crate::diff::register_diff_functions`]). Views are bound to the
/// tables registered now: registering the tables again re-creates them.
pub async fn register_views(ctx: &SessionContext, schema: &str) -> Result<()> {
    ensure_schema(ctx, schema)?;
    for v in HELPERS.iter().chain(VIEWS) {
        let name = TableReference::partial(schema, v.name);
        ctx.deregister_table(name.clone())?;
        if let Some(native) = v.native {
            // The SQL is its definition; the rows come another way.
            ctx.register_table(name, native(schema, v.sql))?;
            continue;
        }
        let plan = plan_in_schema(&ctx.state(), schema, v.sql).await?;
        ctx.register_table(
            name,
            Arc::new(ViewTable::new(plan, Some(v.sql.to_string()))),
        )?;
    }
    crate::diff::register_diff_functions(ctx, schema).await
}
