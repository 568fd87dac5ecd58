//! Planning helpers that the SQL-defined parts of the crate share: plan a
//! statement against the profile tables' schema whatever the host's
//! default ([`plan_in_schema`]), and reach the [`SessionState`] behind a
//! provider's `&dyn Session` ([`session_state`]). A leaf: it imports
//! nothing of this crate.

use datafusion::catalog::Session;
use datafusion::error::DataFusionError;
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::LogicalPlan;

/// Plans `sql` with `schema` as the default schema: unqualified table
/// names resolve to the profile tables there, whatever the host's default.
pub(crate) async fn plan_in_schema(
    state: &SessionState,
    schema: &str,
    sql: &str,
) -> datafusion::common::Result<LogicalPlan> {
    let mut state = state.clone();
    state.config_mut().options_mut().catalog.default_schema = schema.to_string();
    state.create_logical_plan(sql).await
}

/// The [`SessionState`] behind a table provider's `&dyn Session` (every
/// session of this crate has one); `who` names the caller in the error.
pub(crate) fn session_state<'s>(
    session: &'s dyn Session,
    who: &str,
) -> datafusion::common::Result<&'s SessionState> {
    session
        .as_any()
        .downcast_ref::<SessionState>()
        .ok_or_else(|| DataFusionError::Internal(format!("{who}: not a SessionState")))
}
