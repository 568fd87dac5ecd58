//! Registration of everything a profile puts on a DataFusion context: the
//! tables ([`crate::tables`]), the functions ([`crate::functions`]), the
//! views ([`crate::views`]) and the diff table functions
//! ([`crate::diff`]), under one schema of the context's default catalog.
//!
//! The top of the crate's SQL side: it imports those modules and none of
//! them imports it. A new kind of thing registered per profile is added
//! here; a new table, function, view or diff goes in its own module's list.

use std::sync::Arc;

use datafusion::common::TableReference;
use datafusion::datasource::ViewTable;
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use xprof_format::Table;

use crate::error::Result;
use crate::plan::plan_in_schema;
use crate::profile_schema::ProfileSchema;
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

/// Creates `schema` in the default catalog of `ctx` when it is missing or
/// empty, as a [`ProfileSchema`] (views planned when first named).
pub(crate) fn ensure_schema(ctx: &SessionContext, schema: &str) -> Result<()> {
    let catalog_name = default_catalog(ctx);
    let catalog = ctx
        .catalog(&catalog_name)
        .ok_or_else(|| DataFusionError::Plan(format!("no default catalog {catalog_name:?}")))?;
    // An empty schema of another kind (DataFusion makes the default
    // schema, `xprof` in this crate's config, when it makes the context)
    // is replaced: nothing in it is lost, and views become lazy there.
    let replace = match catalog.schema(schema) {
        None => true,
        Some(p) => !p.is::<ProfileSchema>() && p.table_names().is_empty(),
    };
    if replace {
        catalog.register_schema(schema, Arc::new(ProfileSchema::new(schema)))?;
    }
    Ok(())
}

/// Creates every helper view ([`HELPERS`]) and view of [`VIEWS`] in
/// `schema` of `ctx` (the tables must be there), then the diff table
/// functions over them ([`crate::diff::register_diff_functions`]). In a
/// schema this crate created (a [`ProfileSchema`]) a view is planned when
/// a statement first names it; in one the host registered, every view is
/// planned now. Either way views are bound to the tables registered
/// before they are planned: registering the tables again re-creates them.
pub async fn register_views(ctx: &SessionContext, schema: &str) -> Result<()> {
    ensure_schema(ctx, schema)?;
    let provider = ctx
        .catalog(&default_catalog(ctx))
        .and_then(|c| c.schema(schema));
    let lazy = provider
        .as_ref()
        .and_then(|p| p.as_ref().downcast_ref::<ProfileSchema>());
    if let Some(lazy) = lazy {
        let weak = ctx.state_weak_ref();
        lazy.set_state_source(Arc::new(move || weak.upgrade().map(|s| s.read().clone())));
    }
    for v in HELPERS.iter().chain(VIEWS) {
        let name = TableReference::partial(schema, v.name);
        if let Some(native) = v.native {
            // The SQL is its definition; the rows come another way.
            ctx.deregister_table(name.clone())?;
            ctx.register_table(name, native(schema, v.sql))?;
        } else if let Some(lazy) = lazy {
            lazy.define_view(v.name, v.sql);
        } else {
            ctx.deregister_table(name.clone())?;
            let plan = plan_in_schema(&ctx.state(), schema, v.sql).await?;
            ctx.register_table(
                name,
                Arc::new(ViewTable::new(plan, Some(v.sql.to_string()))),
            )?;
        }
    }
    crate::diff::register_diff_functions(ctx, schema);
    Ok(())
}

/// The name of `ctx`'s default catalog.
fn default_catalog(ctx: &SessionContext) -> String {
    ctx.state_ref()
        .read()
        .config()
        .options()
        .catalog
        .default_catalog
        .clone()
}
