//! The scheduler: its options, starting it in this process
//! ([`start_scheduler`]) and the session it plans each query in
//! ([`scheduler_session`]), with this project's functions registered.
//!
//! Ballista's own server (`start_grpc_service_with_listener`) has no hook
//! for authentication, so this crate serves Ballista's scheduler service
//! itself, behind the token check of [`crate::auth`]; it mounts that
//! service only (not Ballista's REST API, health routes or Flight proxy,
//! which this project does not use).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::error::BallistaError;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::create_scheduler;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;

use crate::admission::Admission;
use crate::auth::{ClusterToken, TokenCheck, check_bind, token_endpoint};
use crate::config::{
    DEFAULT_SCHEDULER_PORT, GRPC_MESSAGE_BYTES, config_producer, with_project_functions,
};
use crate::error::{ClusterError, Result};

/// The shortest executor timeout accepted: a busy executor reports every
/// 5 s (Ballista's poll loop), so less would count busy executors dead.
pub const MIN_EXECUTOR_TIMEOUT: Duration = Duration::from_secs(6);

/// The longest a job waits for an executor to register before the
/// scheduler refuses it (or the executor timeout, if shorter).
pub const ADMISSION_WAIT: Duration = Duration::from_secs(15);

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
    /// [`Scheduler::addr`]). Default `127.0.0.1:50050`; any other than a
    /// loopback address needs a [`token`](Self::token).
    pub bind: SocketAddr,
    /// An executor silent this long is dead: its running tasks and the
    /// shuffle output it held are run again elsewhere; when none is left,
    /// the running queries fail after as long again (at least
    /// [`MIN_EXECUTOR_TIMEOUT`]; default 15 s).
    pub executor_timeout: Duration,
    /// The cluster's shared secret: every call must carry it.
    pub token: Option<ClusterToken>,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], DEFAULT_SCHEDULER_PORT)),
            executor_timeout: Duration::from_secs(15),
            token: None,
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
///
/// Refuses a non-loopback address without a token
/// ([`ClusterError::Insecure`]) and an executor timeout under
/// [`MIN_EXECUTOR_TIMEOUT`].
pub async fn start_scheduler(options: &SchedulerOptions) -> Result<Scheduler> {
    check_bind("the scheduler", options.bind, options.token.as_ref())?;
    if options.executor_timeout < MIN_EXECUTOR_TIMEOUT {
        return Err(ClusterError::Setting(format!(
            "an executor timeout of {:?} is under {}s: a busy executor reports every 5 s, and would count as dead",
            options.executor_timeout,
            MIN_EXECUTOR_TIMEOUT.as_secs()
        )));
    }
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
    let timeout_s = options.executor_timeout.as_secs();
    let message = GRPC_MESSAGE_BYTES as u32;
    // Liveness: an executor that has not polled for `timeout_s` is lost
    // (checked every quarter of it); its tasks run again elsewhere. When
    // the last one is lost, the running jobs fail after `timeout_s` more
    // unless an executor registers, and their clients get the error.
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
        override_config_producer: Some(config_producer(options.token.clone())),
        override_session_builder: Some(Arc::new(scheduler_session)),
        override_create_grpc_client_endpoint: options.token.as_ref().map(token_endpoint),
        ..Default::default()
    };
    let cluster = BallistaCluster::new_from_config(&config).await?;
    let scheduler =
        create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(config)).await?;
    // Jobs only when an executor is registered, after a bounded wait for
    // one (`admission`); shorter than a client's call deadline (20 s).
    let admission_wait = options.executor_timeout.min(ADMISSION_WAIT);
    let service = SchedulerGrpcServer::new(Admission::new(scheduler, admission_wait))
        .max_encoding_message_size(GRPC_MESSAGE_BYTES)
        .max_decoding_message_size(GRPC_MESSAGE_BYTES);
    let service = InterceptedService::new(service, TokenCheck::new(options.token.clone()));
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    // No per-call timeout (Ballista's axum server had none either).
    let served = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(20)))
        .http2_keepalive_timeout(Some(Duration::from_secs(20)))
        .add_service(service)
        .serve_with_incoming(incoming);
    let service = tokio::spawn(async move { served.await.map_err(BallistaError::TonicError) });
    Ok(Scheduler {
        addr,
        service: Some(service),
    })
}
