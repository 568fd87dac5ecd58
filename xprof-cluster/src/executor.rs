//! An executor: its options, running one as its own process
//! ([`run_executor`]) and the registry it resolves plans' function calls
//! with ([`function_registry`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use datafusion::execution::SessionStateBuilder;

use crate::config::{
    DEFAULT_SCHEDULER_PORT, GRPC_MESSAGE_BYTES, cluster_config, with_project_functions,
};
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
    /// it cannot be 0.
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
}

impl Default for ExecutorOptions {
    fn default() -> Self {
        Self {
            scheduler_host: "127.0.0.1".into(),
            scheduler_port: DEFAULT_SCHEDULER_PORT,
            bind: SocketAddr::from(([0, 0, 0, 0], 50051)),
            external_host: None,
            work_dir: None,
            vcores: 0,
            memory_pool_bytes: None,
        }
    }
}

/// Runs an executor of this project's plans until Ctrl-C or SIGTERM:
/// connects to the scheduler, serves its Flight port, and runs the tasks
/// it is given.
pub async fn run_executor(options: &ExecutorOptions) -> Result<()> {
    if options.bind.port() == 0 {
        return Err(ClusterError::Address(
            "an executor's port cannot be 0: the scheduler hands it to the others".into(),
        ));
    }
    let work_dir = match &options.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|source| ClusterError::Io {
                path: d.clone(),
                source,
            })?;
            Some(d.to_string_lossy().into_owned())
        }
        None => None,
    };
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
        work_dir,
        memory_pool_size: options.memory_pool_bytes,
        grpc_max_decoding_message_size: message,
        grpc_max_encoding_message_size: message,
        override_config_producer: Some(Arc::new(cluster_config)),
        override_function_registry: Some(Arc::new(function_registry())),
        ..Default::default()
    };
    Ok(start_executor_process(Arc::new(config)).await?)
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
