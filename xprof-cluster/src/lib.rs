//! `xprof-cluster`: this project's SQL on an [Apache Ballista] cluster.
//!
//! It owns what a Ballista scheduler and its executors need to run any
//! plan of `xprof-query` (the scalar, aggregate and window functions of
//! [`xprof_query::functions`], by the names plans carry), a client
//! [`ProfileSession`] that plans on this process and runs on the cluster
//! ([`connect`]), and the pieces the `xprof-sql cluster` commands and the
//! tests start: a scheduler ([`start_scheduler`]), executors as their own
//! process ([`run_executor`]) or inside this one ([`LocalCluster`]).
//!
//! What runs where (docs/cluster.md): the client parses SQL, expands the
//! views and table functions (`diff_*`) into one logical plan over the
//! Parquet tables of a dataset or warehouse, and sends it. The scheduler
//! lists the files and plans the stages; executors read the files from
//! the same path and exchange shuffle data over Arrow Flight. Inputs must
//! therefore be Parquet datasets or warehouses (`xprof-sql convert`) at a
//! path every machine reads: a raw profile opened by the client would
//! live in its memory only, and is refused ([`check_inputs`]).
//!
//! The dictionary aggregate of `xprof-query`
//! ([`xprof_query::dictionary_aggregate`]) is a local physical rule: the
//! cluster plans with DataFusion's and Ballista's rules only, so no
//! custom execution plan is ever sent to an executor (docs/design.md).
//!
//! [Apache Ballista]: https://datafusion.apache.org/ballista/

#![warn(missing_docs)]

mod planner;
pub use planner::ClusterExec;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt as _;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::{
    SessionConfigExt, ballista_aggregate_functions, ballista_scalar_functions,
    ballista_window_functions,
};
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::BallistaCodec;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service_with_listener};
use datafusion::execution::{FunctionRegistry as _, SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use xprof_query::{ProfileSession, SessionOptions};

/// The port a scheduler listens on unless told otherwise (Ballista's).
pub const DEFAULT_SCHEDULER_PORT: u16 = 50050;

/// Largest gRPC message between client, scheduler and executors: plans of
/// the deeper views are several MiB once encoded.
const GRPC_MESSAGE_BYTES: usize = 256 << 20;

/// What went wrong starting or reaching a cluster.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// Ballista failed (starting a service, registering, a task).
    #[error("ballista: {0}")]
    Ballista(String),
    /// DataFusion failed (planning, the remote context).
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// Opening inputs or running SQL failed.
    #[error(transparent)]
    Query(#[from] xprof_query::QueryError),
    /// The scheduler at `url` cannot be reached.
    #[error(
        "cannot reach the scheduler at {url}: {reason} (is `xprof-sql cluster scheduler` running there?)"
    )]
    Unreachable {
        /// The scheduler's address as given.
        url: String,
        /// Why.
        reason: String,
    },
    /// An address or URL that cannot be used.
    #[error("{0}")]
    Address(String),
    /// An input a cluster cannot read.
    #[error("{}: {reason}", path.display())]
    Input {
        /// The input.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file or folder (an executor's work folder, a bound port).
    #[error("{}: {source}", path.display())]
    Io {
        /// The path or address.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl From<ballista_core::error::BallistaError> for ClusterError {
    fn from(e: ballista_core::error::BallistaError) -> Self {
        ClusterError::Ballista(e.to_string())
    }
}

/// Shorthand.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

/// The functions a plan of this project can call, with Ballista's own:
/// what the scheduler's sessions and the executors' registry hold. Plans
/// name functions, so both sides must register them under the same names.
fn with_project_functions(builder: SessionStateBuilder) -> SessionState {
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

/// The functions an executor resolves plans' calls with.
pub fn function_registry() -> BallistaFunctionRegistry {
    let state = with_project_functions(SessionStateBuilder::new().with_default_features());
    BallistaFunctionRegistry::from(&state)
}

/// The Ballista settings every process of a cluster shares.
fn cluster_config() -> SessionConfig {
    SessionConfig::new_with_ballista()
        .with_ballista_grpc_client_max_message_size(GRPC_MESSAGE_BYTES)
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

/// Refuses inputs a cluster cannot read: anything but a Parquet dataset or
/// warehouse folder written by `xprof-sql convert`.
pub fn check_inputs<P: AsRef<Path>>(inputs: &[P]) -> Result<()> {
    for p in inputs {
        let p = p.as_ref();
        if !(p.is_dir() && xprof_query::xprof_format::dataset::is_dataset(p)) {
            return Err(ClusterError::Input {
                path: p.to_path_buf(),
                reason: format!(
                    "a cluster reads Parquet datasets or warehouses only, at a path every executor reads: convert it first (`xprof-sql convert {} -o DATASET`)",
                    p.display()
                ),
            });
        }
    }
    Ok(())
}

/// The scheduler URL of `df://HOST:PORT`, `HOST:PORT` or `HOST`
/// (port [`DEFAULT_SCHEDULER_PORT`]).
pub fn scheduler_url(address: &str) -> Result<String> {
    let rest = address
        .strip_prefix("df://")
        .or_else(|| address.strip_prefix("http://"))
        .unwrap_or(address)
        .trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') {
        return Err(ClusterError::Address(format!(
            "{address:?} is not a scheduler address (df://HOST:PORT)"
        )));
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !h.ends_with(':') => {
            let port: u16 = p
                .parse()
                .map_err(|_| ClusterError::Address(format!("{address:?}: {p:?} is not a port")))?;
            (h, port)
        }
        _ => (rest, DEFAULT_SCHEDULER_PORT),
    };
    Ok(format!("df://{host}:{port}"))
}

/// The host and port of a scheduler address in any form
/// [`scheduler_url`] takes.
pub fn scheduler_host_port(address: &str) -> Result<(String, u16)> {
    let url = scheduler_url(address)?;
    let (host, port) = url
        .trim_start_matches("df://")
        .rsplit_once(':')
        .expect("scheduler_url writes df://HOST:PORT");
    let port = port.parse().expect("scheduler_url checked the port");
    Ok((host.to_string(), port))
}

/// Checks that a scheduler answers at `url` (`df://HOST:PORT`).
async fn check_reachable(url: &str) -> Result<()> {
    let http = url.replacen("df://", "http://", 1);
    let unreachable = |reason: String| ClusterError::Unreachable {
        url: url.to_string(),
        reason,
    };
    let endpoint = tonic::transport::Endpoint::new(http)
        .map_err(|e| unreachable(e.to_string()))?
        .connect_timeout(Duration::from_secs(10));
    endpoint.connect().await.map_err(|e| {
        unreachable(std::error::Error::source(&e).map_or(e.to_string(), |s| s.to_string()))
    })?;
    Ok(())
}

/// A session whose queries run on the scheduler at `address`
/// (`df://HOST:PORT`): SQL is planned here, with every view and function
/// of this project, and run there. Open Parquet datasets or warehouses
/// into it with [`open`].
pub async fn connect(address: &str, options: SessionOptions) -> Result<ProfileSession> {
    let url = scheduler_url(address)?;
    check_reachable(&url).await?;
    let local = options.context()?;
    let state = local.state();
    // Ballista's restrictions first (they apply only to a config without
    // Ballista's extension): no dynamic filters, whose producer and scan
    // may land in different stages and leave the scan waiting forever
    // (apache/datafusion-ballista#1375), no physical scalar subqueries
    // (#1909), no view types over Flight, sort-merge joins that spill. The
    // client sends its settings with every query, and the scheduler and
    // executors plan and run under them.
    let config = state
        .config()
        .clone()
        .upgrade_for_ballista()
        .with_ballista_grpc_client_max_message_size(GRPC_MESSAGE_BYTES)
        // No order-preserving repartitions: a Ballista shuffle reads each
        // partition from every task that wrote it, one after the other,
        // so an order kept by the local plan's repartition is gone after
        // the exchange. With them, a window over such an exchange failed
        // (`framework_op_stats`: "Expects PARTITION BY expression to be
        // ordered") and a sort-merge join lost rows (`op_profile`: 27 of
        // 72); without them, sorts run after the exchange.
        .set_bool("datafusion.optimizer.prefer_existing_sort", false)
        // Hash joins, not Ballista's sort-merge joins: a left sort-merge
        // join across stages failed `proton_kernels` on Ballista 55
        // ("column declared non-nullable but contains null values"), where
        // the hash join answers as locally (`tests/it/cluster.rs`). A hash
        // join holds its build side (the smaller input) in memory; `SET
        // datafusion.optimizer.prefer_hash_join = false` goes back.
        .set_bool("datafusion.optimizer.prefer_hash_join", true)
        // The client asks for the job's status (every 50 ms) instead of
        // waiting on the scheduler's push, which drops a status when its
        // channel is full and leaves the client waiting.
        .set_bool(ballista_core::config::BALLISTA_CLIENT_PULL, true);
    // Planned here (`planner`): DataFusion's physical rules, not the
    // local session's dictionary aggregate, whose plan node has no
    // encoding for executors (and finds no dictionaries on a cluster).
    let http = url.replacen("df://", "http://", 1);
    let config = config.with_ballista_query_planner(Arc::new(planner::ClientPlanner::new(http)));
    let state = SessionStateBuilder::new_from_existing(state)
        .with_config(config)
        .with_physical_optimizer_rules(
            datafusion::physical_optimizer::optimizer::PhysicalOptimizer::new().rules,
        )
        .build();
    let ctx = SessionContext::remote_with_state(&url, state).await?;
    // The upgrade to Ballista's planner keeps Ballista's functions only;
    // ours are registered again when tables are (`ProfileTables::register`).
    xprof_query::functions::register_all(&ctx);
    // Ballista's Flight shuffle hydrates dictionaries into their values,
    // and a stage that declared a dictionary column then fails: read
    // strings plain from the start.
    Ok(ProfileSession::with_context(ctx)
        .with_options(options)
        .with_string_columns(xprof_query::StringColumns::Plain))
}

/// Opens `inputs` (Parquet datasets or warehouses, [`check_inputs`]) into
/// a cluster session.
pub async fn open<P: AsRef<Path>>(session: &mut ProfileSession, inputs: &[P]) -> Result<()> {
    check_inputs(inputs)?;
    session
        .open(inputs, &xprof_query::OpenOptions::default())
        .await?;
    Ok(())
}

/// A scheduler and executors inside this process on 127.0.0.1: for tests,
/// examples and trying a cluster on one machine. Dropped, it stops the
/// scheduler; the executors stop with the runtime.
pub struct LocalCluster {
    scheduler: Scheduler,
}

impl LocalCluster {
    /// Starts a scheduler on a free port and `executors` executors of
    /// `vcores` task slots each, and waits until they have registered.
    pub async fn start(executors: usize, vcores: usize) -> Result<Self> {
        let scheduler = start_scheduler(&SchedulerOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            executor_timeout: Duration::from_secs(30),
        })
        .await?;
        let http = format!("http://127.0.0.1:{}", scheduler.addr().port());
        for _ in 0..executors {
            let client = SchedulerGrpcClient::connect(http.clone())
                .await
                .map_err(|e| ClusterError::Unreachable {
                    url: http.clone(),
                    reason: e.to_string(),
                })?
                .max_decoding_message_size(GRPC_MESSAGE_BYTES)
                .max_encoding_message_size(GRPC_MESSAGE_BYTES);
            let config = cluster_config();
            let runtime =
                datafusion::execution::runtime_env::RuntimeEnvBuilder::new().build_arc()?;
            ballista_executor::new_standalone_executor_from_builder(
                client,
                vcores.max(1),
                Arc::new(move || config.clone()),
                Arc::new(move |_| Ok(runtime.clone())),
                BallistaCodec::default(),
                function_registry(),
            )
            .await?;
        }
        Ok(Self { scheduler })
    }

    /// The scheduler's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.scheduler.addr().port()
    }

    /// The scheduler's URL, `df://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.scheduler.addr().port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_urls_take_the_forms_users_write() {
        assert_eq!(scheduler_url("df://h:1").unwrap(), "df://h:1");
        assert_eq!(scheduler_url("h:2").unwrap(), "df://h:2");
        assert_eq!(scheduler_url("h").unwrap(), "df://h:50050");
        assert_eq!(
            scheduler_url("http://10.0.0.1:7/").unwrap(),
            "df://10.0.0.1:7"
        );
        assert!(scheduler_url("h:x").is_err());
        assert!(scheduler_url("df://").is_err());
        assert!(scheduler_url("df://h/p").is_err());
        assert_eq!(
            scheduler_host_port("df://10.0.0.1:7").unwrap(),
            ("10.0.0.1".to_string(), 7)
        );
        assert_eq!(
            scheduler_host_port("h").unwrap(),
            ("h".to_string(), DEFAULT_SCHEDULER_PORT)
        );
    }

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
