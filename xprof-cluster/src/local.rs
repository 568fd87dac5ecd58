//! [`LocalCluster`]: a scheduler and executors inside this process, for
//! tests, examples and trying a cluster on one machine.
//!
//! Its executors are built from Ballista's parts (its standalone executor
//! has no hooks): the same token, Flight service and plan checks as an
//! executor process ([`crate::executor`]), each with a temporary work
//! folder of its own.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::BALLISTA_PROTOCOL_VERSION;
use ballista_core::error::BallistaError;
use ballista_core::ids::new_instance_id;
use ballista_core::serde::BallistaCodec;
use ballista_core::serde::protobuf::ExecutorRegistration;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::scheduler::{
    ExecutorOperatingSystemSpecification, ExecutorSpecification,
};
use ballista_core::utils::GrpcServerConfig;
use ballista_executor::execution_loop::poll_loop;
use ballista_executor::executor::Executor;
use ballista_executor::health::ExecutorHealth;
use ballista_executor::metrics::LoggingMetricsCollector;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;

use crate::auth::{ClusterToken, endpoint};
use crate::cancel::JobWatch;
use crate::config::{GRPC_MESSAGE_BYTES, config_producer};
use crate::confine::{ConfinedEngine, Confinement, serve_flight};
use crate::error::{ClusterError, Result};
use crate::executor::function_registry;
use crate::scheduler::{Scheduler, SchedulerOptions, start_scheduler};

/// How a [`LocalCluster`] runs.
#[derive(Debug, Clone)]
pub struct LocalClusterOptions {
    /// How many executors (default 2).
    pub executors: usize,
    /// Task slots of each (default 2).
    pub vcores: usize,
    /// The folders executors read datasets from (at least one).
    pub data_roots: Vec<PathBuf>,
    /// The cluster's shared secret, if any.
    pub token: Option<ClusterToken>,
    /// The scheduler's executor timeout (default 15 s).
    pub executor_timeout: Duration,
}

impl Default for LocalClusterOptions {
    fn default() -> Self {
        Self {
            executors: 2,
            vcores: 2,
            data_roots: Vec::new(),
            token: None,
            executor_timeout: Duration::from_secs(15),
        }
    }
}

/// A scheduler and executors inside this process on 127.0.0.1: for tests,
/// examples and trying a cluster on one machine. Dropped, it stops them
/// and deletes the executors' work folders.
pub struct LocalCluster {
    scheduler: Scheduler,
    executors: Vec<LocalExecutor>,
}

/// One executor of a [`LocalCluster`].
struct LocalExecutor {
    /// Its Arrow Flight service.
    addr: SocketAddr,
    /// Its work folder, resolved.
    work_dir: PathBuf,
    /// Runs the tasks.
    executor: Arc<Executor>,
    /// The Flight service and the poll loop.
    tasks: Vec<JoinHandle<std::result::Result<(), BallistaError>>>,
    /// Deletes the work folder when dropped (after the tasks stopped).
    _folder: tempfile::TempDir,
}

impl Drop for LocalExecutor {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl LocalCluster {
    /// Starts a scheduler on a free port of 127.0.0.1 and
    /// `options.executors` executors, each with a Flight service on a free
    /// port of 127.0.0.1 polling it for tasks.
    pub async fn start(options: &LocalClusterOptions) -> Result<Self> {
        let scheduler = start_scheduler(&SchedulerOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            executor_timeout: options.executor_timeout,
            token: options.token.clone(),
        })
        .await?;
        let http = format!("http://127.0.0.1:{}", scheduler.addr().port());
        let mut executors = Vec::with_capacity(options.executors);
        for _ in 0..options.executors {
            executors.push(start_executor(&http, options).await?);
        }
        Ok(Self {
            scheduler,
            executors,
        })
    }

    /// The scheduler's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.scheduler.addr().port()
    }

    /// The scheduler's URL, `df://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.scheduler.addr().port())
    }

    /// The addresses of the executors' Arrow Flight services.
    pub fn executor_addrs(&self) -> Vec<SocketAddr> {
        self.executors.iter().map(|e| e.addr).collect()
    }

    /// How many tasks the executors are running now, all together.
    pub fn running_tasks(&self) -> usize {
        self.executors
            .iter()
            .map(|e| e.executor.active_task_count())
            .sum()
    }

    /// The executors' work folders (shuffle files), resolved.
    pub fn executor_work_dirs(&self) -> Vec<PathBuf> {
        self.executors.iter().map(|e| e.work_dir.clone()).collect()
    }
}

/// One executor polling the scheduler at `http` (`http://HOST:PORT`).
async fn start_executor(http: &str, options: &LocalClusterOptions) -> Result<LocalExecutor> {
    let folder = tempfile::Builder::new()
        .prefix("xprof-executor-")
        .tempdir()
        .map_err(|source| ClusterError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let confinement = Arc::new(Confinement::new(&options.data_roots, folder.path())?);
    let work_dir = confinement.work_dir().to_path_buf();
    let bind = SocketAddr::from(([127, 0, 0, 1], 0));
    let io = |source| ClusterError::Io {
        path: PathBuf::from(bind.to_string()),
        source,
    };
    let listener = tokio::net::TcpListener::bind(bind).await.map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;

    let vcores = options.vcores.max(1);
    let registration = ExecutorRegistration {
        id: new_instance_id(),
        host: Some(addr.ip().to_string()),
        port: u32::from(addr.port()),
        // Pull scheduling: no executor gRPC service to reach.
        grpc_port: 0,
        specification: Some(
            ExecutorSpecification::default()
                .with_vcores(vcores as u32)
                .into(),
        ),
        os_info: Some(ExecutorOperatingSystemSpecification::default().into()),
        ballista_protocol_version: BALLISTA_PROTOCOL_VERSION,
    };
    let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_temp_file_path(work_dir.clone())
        .build_arc()?;
    let executor = Arc::new(Executor::new(
        registration,
        &work_dir.to_string_lossy(),
        Arc::new(move |_| Ok(runtime.clone())),
        config_producer(options.token.clone()),
        Arc::new(function_registry()),
        Arc::new(LoggingMetricsCollector::default()),
        vcores,
        Arc::new(ConfinedEngine::new(
            confinement,
            JobWatch::new(http.to_string(), options.token.as_ref()),
        )),
    ));

    let flight = tokio::spawn(serve_flight(
        TcpIncoming::from(listener).with_nodelay(Some(true)),
        work_dir.clone(),
        options.token.clone(),
        GrpcServerConfig::default(),
        std::future::pending::<()>(),
    ));
    let unreachable = |reason: String| ClusterError::Unreachable {
        url: http.to_string(),
        reason,
    };
    let channel = endpoint(http.to_string(), options.token.as_ref())
        .map_err(|e| unreachable(e.to_string()))?
        .connect()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let scheduler = SchedulerGrpcClient::new(channel)
        .max_decoding_message_size(GRPC_MESSAGE_BYTES)
        .max_encoding_message_size(GRPC_MESSAGE_BYTES);
    let poll = tokio::spawn(poll_loop(
        scheduler,
        Arc::clone(&executor),
        BallistaCodec::<LogicalPlanNode, PhysicalPlanNode>::default(),
        None,
        None,
        ExecutorHealth::new(),
    ));
    Ok(LocalExecutor {
        addr,
        executor,
        work_dir,
        tasks: vec![flight, poll],
        _folder: folder,
    })
}
