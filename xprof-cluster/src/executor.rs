//! An executor: its options, running one as its own process
//! ([`run_executor`]) and the registry it resolves plans' function calls
//! with ([`function_registry`]).
//!
//! It runs Ballista's executor with this crate's hooks: every connection
//! it opens carries the cluster token ([`crate::auth`]), its Arrow Flight
//! service checks the token and serves its work folder only, and every
//! task's plan is checked against its data roots before it runs
//! ([`crate::confine`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::GetJobStatusParams;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::utils::{GrpcServerConfig, create_grpc_server_incoming};
use ballista_executor::ArrowFlightServerProvider;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_executor::shutdown::Shutdown;
use datafusion::execution::SessionStateBuilder;

use crate::auth::{ClusterToken, check_bind, endpoint, token_endpoint};
use crate::cancel::JobWatch;
use crate::config::{
    DEFAULT_SCHEDULER_PORT, GRPC_MESSAGE_BYTES, config_producer, with_project_functions,
};
use crate::confine::{ConfinedEngine, Confinement, serve_flight};
use crate::error::{ClusterError, Result};

/// The functions an executor resolves plans' calls with.
pub fn function_registry() -> BallistaFunctionRegistry {
    let state = with_project_functions(SessionStateBuilder::new().with_default_features());
    BallistaFunctionRegistry::from(&state)
}

/// How an executor process runs.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler's host.
    pub scheduler_host: String,
    /// The scheduler's port.
    pub scheduler_port: u16,
    /// Address the executor's Arrow Flight service (shuffle data and
    /// results) listens on; its port is what the scheduler hands out, so
    /// it cannot be 0. Default `127.0.0.1:50051`; any other than a
    /// loopback address needs a [`token`](Self::token).
    pub bind: SocketAddr,
    /// The host other machines reach this executor at (default: the
    /// address the scheduler sees it connect from).
    pub external_host: Option<String>,
    /// Folder for shuffle files and spills (default: a temporary one).
    pub work_dir: Option<PathBuf>,
    /// Tasks run at once (default: the cores).
    pub vcores: usize,
    /// Memory of all its tasks together (default: 70% of the machine's).
    pub memory_pool_bytes: Option<u64>,
    /// The folders it reads datasets from (at least one): a task that
    /// scans a file elsewhere is refused.
    pub data_roots: Vec<PathBuf>,
    /// The cluster's shared secret: it sends it with every call and
    /// refuses calls without it.
    pub token: Option<ClusterToken>,
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        Self {
            scheduler_host: "127.0.0.1".into(),
            scheduler_port: DEFAULT_SCHEDULER_PORT,
            bind: SocketAddr::from(([127, 0, 0, 1], 50051)),
            external_host: None,
            work_dir: None,
            vcores: 0,
            memory_pool_bytes: None,
            data_roots: Vec::new(),
            token: None,
        }
    }
}

/// Runs an executor of this project's plans until Ctrl-C or SIGTERM:
/// connects to the scheduler, serves its Flight port, and runs the tasks
/// it is given.
///
/// Refuses to start on a non-loopback address without a token
/// ([`ClusterError::Insecure`]), without a data root, and when the
/// scheduler refuses its token ([`ClusterError::Unauthenticated`]).
pub async fn run_executor(options: &ExecutorOptions) -> Result<()> {
    if options.bind.port() == 0 {
        return Err(ClusterError::Address(
            "an executor's port cannot be 0: the scheduler hands it to the others".into(),
        ));
    }
    check_bind("an executor", options.bind, options.token.as_ref())?;
    // Ballista's own default work folder is a temporary folder's name,
    // deleted at once; this one lives as long as the executor.
    let temporary;
    let work_dir = match &options.work_dir {
        Some(d) => d.clone(),
        None => {
            temporary = tempfile::Builder::new()
                .prefix("xprof-executor-")
                .tempdir()
                .map_err(|source| ClusterError::Io {
                    path: std::env::temp_dir(),
                    source,
                })?;
            temporary.path().to_path_buf()
        }
    };
    let confinement = Arc::new(Confinement::new(&options.data_roots, &work_dir)?);
    check_token(
        &options.scheduler_host,
        options.scheduler_port,
        options.token.as_ref(),
    )
    .await?;
    let message = GRPC_MESSAGE_BYTES as u32;
    let config = ExecutorProcessConfig {
        bind_host: options.bind.ip().to_string(),
        port: options.bind.port(),
        external_host: options.external_host.clone(),
        scheduler_host: options.scheduler_host.clone(),
        scheduler_port: options.scheduler_port,
        scheduler_connect_timeout_seconds: 10,
        vcores: options.vcores,
        task_scheduling_policy: TaskSchedulingPolicy::PullStaged,
        work_dir: Some(confinement.work_dir().to_string_lossy().into_owned()),
        memory_pool_size: options.memory_pool_bytes,
        grpc_max_decoding_message_size: message,
        grpc_max_encoding_message_size: message,
        override_config_producer: Some(config_producer(options.token.clone())),
        override_function_registry: Some(Arc::new(function_registry())),
        override_execution_engine: Some(Arc::new(ConfinedEngine::new(
            confinement.clone(),
            JobWatch::new(
                format!(
                    "http://{}:{}",
                    options.scheduler_host, options.scheduler_port
                ),
                options.token.as_ref(),
            ),
        ))),
        override_arrow_flight_service: Some(flight_provider(
            confinement.work_dir().to_path_buf(),
            options.token.clone(),
        )),
        override_create_grpc_client_endpoint: options.token.as_ref().map(token_endpoint),
        ..Default::default()
    };
    Ok(start_executor_process(Arc::new(config)).await?)
}

/// The executor's Arrow Flight service for Ballista's hook: confined to
/// `work_dir`, behind the token check.
fn flight_provider(
    work_dir: PathBuf,
    token: Option<ClusterToken>,
) -> Arc<ArrowFlightServerProvider> {
    Arc::new(
        move |_work_dir: String,
              addr: SocketAddr,
              mut shutdown: Shutdown,
              config: GrpcServerConfig| {
            let (work_dir, token) = (work_dir.clone(), token.clone());
            tokio::spawn(async move {
                let incoming = create_grpc_server_incoming(addr, &config)?;
                serve_flight(incoming, work_dir, token, config, async move {
                    shutdown.recv().await
                })
                .await
            })
        },
    )
}

/// Fails when the scheduler at `host:port` answers and refuses `token`,
/// so that an executor with a wrong token stops at once with the reason
/// instead of polling in vain. A scheduler not up yet passes: Ballista
/// keeps trying to reach it.
async fn check_token(host: &str, port: u16, token: Option<&ClusterToken>) -> Result<()> {
    let url = format!("http://{host}:{port}");
    let Ok(endpoint) = endpoint(url, token) else {
        return Ok(());
    };
    let Ok(channel) = endpoint
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(10))
        .connect()
        .await
    else {
        return Ok(());
    };
    match SchedulerGrpcClient::new(channel)
        .get_job_status(GetJobStatusParams {
            job_id: "xprof-token-check".into(),
        })
        .await
    {
        Err(status) if status.code() == tonic::Code::Unauthenticated => {
            Err(ClusterError::Unauthenticated {
                url: format!("{host}:{port}"),
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use datafusion::execution::FunctionRegistry as _;

    use super::*;

    #[test]
    fn executors_resolve_every_function_of_the_project() {
        let registry = function_registry();
        for f in xprof_query::functions::scalar_functions() {
            assert!(registry.udf(f.name()).is_ok(), "{}", f.name());
        }
        for f in xprof_query::functions::aggregate_functions() {
            assert!(registry.udaf(f.name()).is_ok(), "{}", f.name());
        }
        for f in xprof_query::functions::window_functions() {
            assert!(registry.udwf(f.name()).is_ok(), "{}", f.name());
        }
        // Ballista's nested functions too (views use arrays).
        assert!(registry.udf("make_array").is_ok());
    }
}
