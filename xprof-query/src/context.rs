//! What a host's `SessionContext` gets from this project: its rules and
//! table formats ([`prepare_context`]), and a profile's tables under a
//! schema of the host's choosing ([`SessionContextExt::register_profile`]).

use std::path::Path;
use std::sync::Arc;

use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use xprof_convert::registry::READERS;

use crate::error::Result;
use crate::factory::ProfileTableFactory;
use crate::inputs::{Inputs, OpenOptions};
use crate::physical::dictionary_aggregate::DictionaryGroupBy;
use crate::physical::single_trace_join::SingleTraceJoin;

/// Gives a host's context what a session's own context has: this
/// project's two physical rules ([`SingleTraceJoin`] before DataFusion's
/// rules, [`DictionaryGroupBy`] after them) and `CREATE EXTERNAL TABLE …
/// STORED AS XSPACE` (each format) and `STORED AS PROFILE`. Adding them
/// twice adds them once.
///
/// ```
/// use datafusion::prelude::SessionContext;
/// let ctx = SessionContext::new();
/// xprof_query::prepare_context(&ctx);
/// xprof_query::prepare_context(&ctx);
/// let rules = ctx.state().physical_optimizers().len();
/// assert_eq!(rules, datafusion::physical_optimizer::optimizer::PhysicalOptimizer::new().rules.len() + 2);
/// ```
pub fn prepare_context(ctx: &SessionContext) {
    register_table_factories(ctx);
    let state = ctx.state_ref();
    let mut state = state.write();
    use datafusion::physical_optimizer::PhysicalOptimizerRule as _;
    let name = SingleTraceJoin.name().to_string();
    if state.physical_optimizers().iter().any(|r| r.name() == name) {
        return;
    }
    let rules = with_project_rules(state.physical_optimizers().to_vec());
    *state = SessionStateBuilder::new_from_existing(state.clone())
        .with_physical_optimizer_rules(rules)
        .build();
}

/// `rules` with this project's two: [`SingleTraceJoin`] first,
/// [`DictionaryGroupBy`] last.
pub(crate) fn with_project_rules(
    mut rules: Vec<Arc<dyn datafusion::physical_optimizer::PhysicalOptimizerRule + Send + Sync>>,
) -> Vec<Arc<dyn datafusion::physical_optimizer::PhysicalOptimizerRule + Send + Sync>> {
    rules.insert(0, Arc::new(SingleTraceJoin));
    rules.push(Arc::new(DictionaryGroupBy::default()));
    rules
}

/// Registers a [`ProfileTableFactory`] for each format this build reads
/// (`STORED AS XSPACE`, …) and for `STORED AS PROFILE` (any format).
pub(crate) fn register_table_factories(ctx: &SessionContext) {
    let state = ctx.state_ref();
    let mut state = state.write();
    let factories = state.table_factories_mut();
    for r in READERS {
        factories.insert(
            r.name().to_uppercase(),
            Arc::new(ProfileTableFactory::new(Some(r.name()))),
        );
    }
    factories.insert("PROFILE".into(), Arc::new(ProfileTableFactory::new(None)));
}

/// Profiles on any `SessionContext`.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use datafusion::prelude::SessionContext;
/// use xprof_query::SessionContextExt as _;
/// let ctx = SessionContext::new();
/// let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/data/jax_cpu_mlp.xplane.pb");
/// ctx.register_profile("p", profile).await?;
/// let answer = ctx.sql("SELECT count(*) AS n FROM p.events").await?.collect().await?;
/// assert_eq!(answer[0].num_rows(), 1);
/// # Ok::<(), xprof_query::QueryError>(()) }).unwrap();
/// ```
pub trait SessionContextExt {
    /// Opens the profile at `path` (a file, run folder, log folder or
    /// dataset) and registers its tables and views under schema `name`
    /// (`name.events`, `name.tracks`, …), the context prepared as
    /// [`prepare_context`](crate::prepare_context) prepares it. The
    /// context's other tables are left as they are.
    fn register_profile(
        &self,
        name: &str,
        path: impl AsRef<Path>,
    ) -> impl std::future::Future<Output = Result<()>> + Send;
}

impl SessionContextExt for SessionContext {
    fn register_profile(
        &self,
        name: &str,
        path: impl AsRef<Path>,
    ) -> impl std::future::Future<Output = Result<()>> + Send {
        let path = path.as_ref().to_path_buf();
        let name = name.to_string();
        async move {
            prepare_context(self);
            let mut inputs = Inputs::default();
            inputs.open(&[path], &OpenOptions::default())?;
            inputs.tables()?.register(self, &name).await
        }
    }
}
