//! What every process of a cluster shares: the scheduler's default port,
//! the gRPC message limit, the Ballista settings and the functions of this
//! project that plans name. The scheduler, the executors, the in-process
//! cluster and the client all build on these, so both sides of a plan
//! agree on them.

use std::sync::Arc;

use ballista_core::extension::{
    SessionConfigExt, ballista_aggregate_functions, ballista_scalar_functions,
    ballista_window_functions,
};
use datafusion::execution::{FunctionRegistry as _, SessionState, SessionStateBuilder};
use datafusion::prelude::SessionConfig;

use crate::auth::{ClusterToken, token_endpoint};

/// The port a scheduler listens on unless told otherwise (Ballista's).
pub const DEFAULT_SCHEDULER_PORT: u16 = 50050;

/// Largest gRPC message between client, scheduler and executors: plans of
/// the deeper views are several MiB once encoded.
pub(crate) const GRPC_MESSAGE_BYTES: usize = 256 << 20;

/// The functions a plan of this project can call, with Ballista's own:
/// what the scheduler's sessions and the executors' registry hold. Plans
/// name functions, so both sides must register them under the same names.
pub(crate) fn with_project_functions(builder: SessionStateBuilder) -> SessionState {
    let mut state = builder
        .with_scalar_functions(ballista_scalar_functions())
        .with_aggregate_functions(ballista_aggregate_functions())
        .with_window_functions(ballista_window_functions())
        .build();
    for f in xprof_query::functions::scalar_functions() {
        // Replacing a built-in of the same name (`length`) is the point.
        let _ = state.register_udf(Arc::new(f));
    }
    for f in xprof_query::functions::aggregate_functions() {
        let _ = state.register_udaf(Arc::new(f));
    }
    for f in xprof_query::functions::window_functions() {
        let _ = state.register_udwf(Arc::new(f));
    }
    state
}

/// The Ballista settings every process of a cluster shares; with a
/// token, every gRPC connection Ballista opens under them (an executor's
/// shuffle fetches from the others) carries it.
pub(crate) fn cluster_config(token: Option<&ClusterToken>) -> SessionConfig {
    let config = SessionConfig::new_with_ballista()
        .with_ballista_grpc_client_max_message_size(GRPC_MESSAGE_BYTES);
    match token {
        Some(t) => config.with_ballista_override_create_grpc_client_endpoint(token_endpoint(t)),
        None => config,
    }
}

/// [`cluster_config`] as Ballista's config producer.
pub(crate) fn config_producer(token: Option<ClusterToken>) -> ballista_core::ConfigProducer {
    Arc::new(move || cluster_config(token.as_ref()))
}

/// Runs `work` on a thread of its own, on a current-thread Tokio runtime:
/// for work that must neither wait on the caller's runtime (a drop, a
/// runtime shutting down) nor starve behind it (workers inside long polls
/// of a task's operators). `None` when no thread or runtime could start.
pub(crate) fn on_own_runtime<F>(name: &str, work: F) -> Option<std::thread::JoinHandle<()>>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                runtime.block_on(work);
            }
        })
        .ok()
}
