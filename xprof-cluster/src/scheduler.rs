//! The scheduler: its options, starting it in this process
//! ([`start_scheduler`]) and the session it plans each query in
//! ([`scheduler_session`]), with this project's functions registered.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::SessionConfigExt;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};

use crate::config::{
    DEFAULT_SCHEDULER_PORT, GRPC_MESSAGE_BYTES, cluster_config, with_project_functions,
};
use crate::error::{ClusterError, Result};

/// The scheduler's session for one query: the client's settings, this
/// project's functions, DataFusion's and Ballista's rules.
pub fn scheduler_session(config: SessionConfig) -> datafusion::error::Result<SessionState> {
    // The adaptive planner runs the physical optimizer again at each stage
    // and spent minutes on the deeper views' plans; the static planner
    // plans once.
    let config = config.with_ballista_adaptive_query_planner(false);
    let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new().build_arc()?;
    Ok(with_project_functions(
        SessionStateBuilder::new()
            .with_default_features()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_optimizer_rules(ballista_core::optimizer::ballista_default_optimizer_rules()),
    ))
}

/// How a scheduler runs.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// Address to listen on (port 0: any free port, see
    /// [`Scheduler::addr`]).
    pub bind: SocketAddr,
    /// An executor silent this long is dead: its running tasks and the
    /// shuffle output it held are run again elsewhere.
    pub executor_timeout: Duration,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([0, 0, 0, 0], DEFAULT_SCHEDULER_PORT)),
            executor_timeout: Duration::from_secs(30),
        }
    }
}

/// A scheduler serving in this process.
pub struct Scheduler {
    addr: SocketAddr,
    service: Option<tokio::task::JoinHandle<ballista_core::error::Result<()>>>,
}

impl Scheduler {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the service fails (or forever).
    pub async fn serve(mut self) -> Result<()> {
        let Some(service) = self.service.take() else {
            return Ok(());
        };
        match service.await {
            Ok(r) => Ok(r?),
            Err(e) => Err(ClusterError::Ballista(format!(
                "the scheduler stopped: {e}"
            ))),
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        if let Some(service) = &self.service {
            service.abort();
        }
    }
}

/// Starts a scheduler: binds `options.bind`, registers this project's
/// functions for every session ([`scheduler_session`]) and serves in the
/// background. Executors poll it for tasks (Ballista's pull scheduling).
pub async fn start_scheduler(options: &SchedulerOptions) -> Result<Scheduler> {
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .map_err(|source| ClusterError::Io {
            path: PathBuf::from(options.bind.to_string()),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ClusterError::Io {
        path: PathBuf::from(options.bind.to_string()),
        source,
    })?;
    let timeout_s = options.executor_timeout.as_secs().max(2);
    let message = GRPC_MESSAGE_BYTES as u32;
    let config = SchedulerConfig {
        bind_host: addr.ip().to_string(),
        bind_port: addr.port(),
        scheduling_policy: TaskSchedulingPolicy::PullStaged,
        executor_timeout_seconds: timeout_s,
        expire_dead_executor_interval_seconds: (timeout_s / 4).max(1),
        no_executors_grace_period_seconds: timeout_s,
        grpc_server_max_decoding_message_size: message,
        grpc_server_max_encoding_message_size: message,
        grpc_client_max_message_size: message,
        override_config_producer: Some(Arc::new(cluster_config)),
        override_session_builder: Some(Arc::new(scheduler_session)),
        ..Default::default()
    };
    let cluster = BallistaCluster::new_from_config(&config).await?;
    let scheduler =
        create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(config)).await?;
    let service = tokio::spawn(start_grpc_service_with_listener(listener, scheduler));
    Ok(Scheduler {
        addr,
        service: Some(service),
    })
}
