//! What an executor reads: the dataset roots it was started with
//! (`--data-root`) and its own shuffle work folder, nothing else.
//!
//! Two doors lead to files. A task's plan names the files it scans and
//! the shuffle partitions it reads; [`ConfinedEngine`] checks every plan
//! before it runs: file scans must lie inside a data root, shuffle reads
//! inside the work folder, and plans that write (`COPY`, `INSERT INTO`,
//! a shuffle writer inside a stage) are refused. And the Arrow Flight
//! service hands out shuffle files by the `FetchPartition` tickets other
//! executors and clients send; Ballista joins the ticket's job id to the
//! work folder unchecked, so a job id of `../x` or `/etc` escapes it.
//! [`ConfinedFlight`] wraps Ballista's service and refuses such tickets.
//!
//! Each check resolves `..` and symbolic links (`canonicalize`) before
//! comparing with the roots, themselves resolved at start. What remains:
//! a file swapped for a link between the check and the open, which needs
//! write access to a data root or the work folder.

use std::future::Future;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use arrow_flight::flight_service_server::{FlightService, FlightServiceServer};
use arrow_flight::{
    Action, Criteria, Empty, FlightData, FlightDescriptor, FlightInfo, HandshakeRequest, PollInfo,
    SchemaResult, Ticket,
};
use ballista_core::JobId;
use ballista_core::error::BallistaError;
use ballista_core::execution_plans::range_shuffle::index_path as range_index_path;
use ballista_core::execution_plans::sort_shuffle::{SortShuffleWriterExec, get_index_path};
use ballista_core::execution_plans::{
    RangeShuffleReaderExec, RangeShuffleWriterExec, ShuffleReaderExec, ShuffleWriterExec,
    create_shuffle_path,
};
use ballista_core::serde::decode_protobuf;
use ballista_core::serde::scheduler::{
    Action as BallistaAction, PartitionLocation, ShuffleFileKind, ShuffleLayout,
};
use ballista_core::utils::{GrpcServerConfig, create_grpc_server};
use ballista_executor::execution_engine::{
    DefaultExecutionEngine, ExecutionEngine, QueryStageExecutor,
};
use ballista_executor::flight_service::BallistaFlightService;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::DataFusionError;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};

use crate::auth::{ClusterToken, TokenCheck};
use crate::cancel::{CancellableStage, JobWatch};
use crate::config::GRPC_MESSAGE_BYTES;
use crate::error::{ClusterError, Result};

/// The folders one executor may read, resolved once at start.
#[derive(Debug)]
pub(crate) struct Confinement {
    /// Dataset roots (`--data-root`), canonical.
    data_roots: Vec<PathBuf>,
    /// The shuffle work folder, canonical.
    work_dir: PathBuf,
}

/// Folders refused as a data root (after resolving links): each holds
/// the system's own files (`/` all of them, `/etc` its secrets, `/proc`
/// every process's memory maps and environment).
const SYSTEM_FOLDERS: &[&str] = &[
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/proc", "/root", "/run",
    "/sbin", "/sys", "/usr", "/var",
];

impl Confinement {
    /// Resolves `data_roots` (at least one; each an existing folder) and
    /// `work_dir` (created if missing).
    pub(crate) fn new(data_roots: &[PathBuf], work_dir: &Path) -> Result<Self> {
        if data_roots.is_empty() {
            return Err(ClusterError::NoDataRoot);
        }
        let data_roots = data_roots
            .iter()
            .map(|root| {
                let real = root.canonicalize().map_err(|e| ClusterError::DataRoot {
                    path: root.clone(),
                    reason: e.to_string(),
                })?;
                if !real.is_dir() {
                    return Err(ClusterError::DataRoot {
                        path: root.clone(),
                        reason: "not a folder".into(),
                    });
                }
                if let Some(system) = SYSTEM_FOLDERS.iter().find(|s| real == Path::new(s)) {
                    return Err(ClusterError::DataRoot {
                        path: root.clone(),
                        reason: format!(
                            "is {system}, a system folder: tasks could read any file under it; \
                             give the warehouse's folder"
                        ),
                    });
                }
                Ok(real)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            data_roots,
            work_dir: canonical_work_dir(work_dir)?,
        })
    }

    /// The work folder, resolved.
    pub(crate) fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// Refuses a stage whose plan reads outside the data roots or the work
    /// folder, or writes. `stage` is the plan a task carries: a shuffle
    /// writer (the engine rebuilds it on this executor's work folder) over
    /// the operators that run.
    pub(crate) fn check_stage(&self, stage: &dyn ExecutionPlan) -> datafusion::error::Result<()> {
        for child in stage.children() {
            self.check_node(child.as_ref())?;
        }
        Ok(())
    }

    fn check_node(&self, node: &dyn ExecutionPlan) -> datafusion::error::Result<()> {
        if node.downcast_ref::<DataSinkExec>().is_some() {
            return Err(refused(
                "a plan that writes (COPY, INSERT INTO, a table sink): executors of this cluster only read"
                    .into(),
            ));
        }
        if node.downcast_ref::<ShuffleWriterExec>().is_some()
            || node.downcast_ref::<RangeShuffleWriterExec>().is_some()
            || node.downcast_ref::<SortShuffleWriterExec>().is_some()
        {
            return Err(refused(
                "a shuffle writer inside a stage (the scheduler writes one per stage, at its top)"
                    .into(),
            ));
        }
        if let Some(source) = node.downcast_ref::<DataSourceExec>() {
            let source = source.data_source();
            if let Some(files) = source.downcast_ref::<FileScanConfig>() {
                self.check_scan(files)?;
            } else if source.downcast_ref::<MemorySourceConfig>().is_none() {
                return Err(refused(
                    "a data source other than files or in-plan rows, which this executor cannot check"
                        .into(),
                ));
            }
        }
        if let Some(reader) = node.downcast_ref::<ShuffleReaderExec>() {
            self.check_shuffle_reads(&reader.partition)?;
        }
        if let Some(reader) = node.downcast_ref::<RangeShuffleReaderExec>() {
            self.check_shuffle_reads(&reader.partition)?;
        }
        for child in node.children() {
            self.check_node(child.as_ref())?;
        }
        Ok(())
    }

    /// Every file of a scan lies inside a data root, once resolved.
    fn check_scan(&self, files: &FileScanConfig) -> datafusion::error::Result<()> {
        if files.object_store_url.as_str() != ObjectStoreUrl::local_filesystem().as_str() {
            return Err(refused(format!(
                "a scan of {}: executors of this cluster read local files only",
                files.object_store_url.as_str()
            )));
        }
        let local = datafusion::object_store::local::LocalFileSystem::new();
        for file in files.file_groups.iter().flat_map(|g| g.iter()) {
            let location = &file.object_meta.location;
            let path = local
                .path_to_filesystem(location)
                .map_err(|e| refused(format!("a scan of /{location}: {e}")))?;
            let real = path
                .canonicalize()
                .map_err(|e| refused(format!("a scan of {}: {e}", path.display())))?;
            if !self.data_roots.iter().any(|root| real.starts_with(root)) {
                return Err(refused(format!(
                    "a scan of {}, which is outside this executor's data roots (--data-root)",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// Every shuffle partition a reader may read from this executor's disk
    /// names one job folder of the work folder.
    fn check_shuffle_reads(
        &self,
        partitions: &[Vec<PartitionLocation>],
    ) -> datafusion::error::Result<()> {
        for location in partitions.iter().flatten() {
            let job_id = &location.partition_id.job_id;
            if !is_one_name(job_id) {
                return Err(refused(format!(
                    "a shuffle read of job {:?}, which is not a job of this cluster",
                    job_id.as_str()
                )));
            }
            let path = location.path(&self.work_dir.to_string_lossy())?;
            if let Ok(real) = path.canonicalize()
                && !real.starts_with(&self.work_dir)
            {
                return Err(refused(format!(
                    "a shuffle read of {}, which leads outside the work folder",
                    path.display()
                )));
            }
        }
        Ok(())
    }
}

/// `work_dir`, created if missing, resolved.
pub(crate) fn canonical_work_dir(work_dir: &Path) -> Result<PathBuf> {
    let io = |source| ClusterError::Io {
        path: work_dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(work_dir).map_err(io)?;
    work_dir.canonicalize().map_err(io)
}

/// What a refused task fails with (the client sees it in the job's
/// error).
fn refused(what: String) -> DataFusionError {
    DataFusionError::Execution(format!("xprof-sql executor refused the task: {what}"))
}

/// Whether a job id is one plain folder name: not empty, not `..`, no
/// separator, not absolute.
fn is_one_name(job_id: &JobId) -> bool {
    let mut parts = Path::new(job_id.as_str()).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(Component::Normal(_)), None)
    ) && !job_id.as_str().contains('/')
}

/// Ballista's execution engine, after [`Confinement::check_stage`]; with
/// a [`JobWatch`], each task stops when its job is cancelled
/// ([`crate::cancel`]).
pub(crate) struct ConfinedEngine {
    inner: DefaultExecutionEngine,
    confinement: Arc<Confinement>,
    watch: Option<Arc<JobWatch>>,
}

impl ConfinedEngine {
    pub(crate) fn new(confinement: Arc<Confinement>, watch: Option<Arc<JobWatch>>) -> Self {
        Self {
            inner: DefaultExecutionEngine::new(),
            confinement,
            watch,
        }
    }
}

impl ExecutionEngine for ConfinedEngine {
    fn create_query_stage_exec(
        &self,
        job_id: JobId,
        stage_id: usize,
        task_id: usize,
        global_output_partition_ids: Vec<usize>,
        plan: Arc<dyn ExecutionPlan>,
        work_dir: &str,
        config: &SessionConfig,
    ) -> datafusion::error::Result<Arc<dyn QueryStageExecutor>> {
        self.confinement.check_stage(plan.as_ref())?;
        let job = job_id.to_string();
        let stage = self.inner.create_query_stage_exec(
            job_id,
            stage_id,
            task_id,
            global_output_partition_ids,
            plan,
            work_dir,
            config,
        )?;
        Ok(match &self.watch {
            Some(watch) => Arc::new(CancellableStage::new(stage, job, Arc::clone(watch))),
            None => stage,
        })
    }
}

/// Ballista's Arrow Flight service, refusing partition fetches that lead
/// outside the work folder.
#[derive(Clone)]
pub(crate) struct ConfinedFlight {
    inner: BallistaFlightService,
    work_dir: Arc<PathBuf>,
}

impl ConfinedFlight {
    /// Serves the shuffle files of `work_dir` (resolved).
    pub(crate) fn new(work_dir: PathBuf) -> Self {
        Self {
            inner: BallistaFlightService::new(work_dir.to_string_lossy().into_owned()),
            work_dir: Arc::new(work_dir),
        }
    }

    /// Refuses a `FetchPartition` ticket or action body whose file is not
    /// a file of the work folder.
    fn check(&self, bytes: &[u8]) -> std::result::Result<(), Status> {
        let BallistaAction::FetchPartition {
            job_id,
            stage_id,
            partition_id,
            file_id,
            layout,
            file_kind,
            ..
        } = decode_protobuf(bytes)
            .map_err(|e| Status::invalid_argument(format!("not a partition fetch: {e}")))?;
        // The other parts of the path are numbers: a job id of one plain
        // name keeps the path inside the work folder but for links.
        if !is_one_name(&job_id) {
            return Err(Status::permission_denied(format!(
                "xprof-sql executor: refused a partition fetch for job {:?}, which is not a job of this cluster",
                job_id.as_str()
            )));
        }
        let sort = matches!(layout, ShuffleLayout::Sort);
        let data = create_shuffle_path(
            self.work_dir.as_path(),
            &job_id,
            stage_id,
            partition_id,
            file_id,
            sort,
        )
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let path = match (file_kind, sort) {
            (ShuffleFileKind::Data, _) => data,
            (ShuffleFileKind::Index, true) => get_index_path(&data),
            (ShuffleFileKind::Index, false) => range_index_path(&data),
        };
        let real = path.canonicalize().map_err(|_| {
            Status::not_found(format!(
                "xprof-sql executor: no shuffle partition {}/{stage_id}/{partition_id}",
                job_id.as_str()
            ))
        })?;
        if !real.starts_with(self.work_dir.as_path()) {
            return Err(Status::permission_denied(format!(
                "xprof-sql executor: refused a partition fetch that leads outside the work folder (job {:?})",
                job_id.as_str()
            )));
        }
        Ok(())
    }
}

type Inner = BallistaFlightService;

#[tonic::async_trait]
impl FlightService for ConfinedFlight {
    type HandshakeStream = <Inner as FlightService>::HandshakeStream;
    type ListFlightsStream = <Inner as FlightService>::ListFlightsStream;
    type DoGetStream = <Inner as FlightService>::DoGetStream;
    type DoPutStream = <Inner as FlightService>::DoPutStream;
    type DoExchangeStream = <Inner as FlightService>::DoExchangeStream;
    type DoActionStream = <Inner as FlightService>::DoActionStream;
    type ListActionsStream = <Inner as FlightService>::ListActionsStream;

    async fn handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> std::result::Result<Response<Self::HandshakeStream>, Status> {
        self.inner.handshake(request).await
    }

    async fn list_flights(
        &self,
        request: Request<Criteria>,
    ) -> std::result::Result<Response<Self::ListFlightsStream>, Status> {
        self.inner.list_flights(request).await
    }

    async fn get_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        self.inner.get_flight_info(request).await
    }

    async fn poll_flight_info(
        &self,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<PollInfo>, Status> {
        self.inner.poll_flight_info(request).await
    }

    async fn get_schema(
        &self,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<SchemaResult>, Status> {
        self.inner.get_schema(request).await
    }

    async fn do_get(
        &self,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<Self::DoGetStream>, Status> {
        self.check(&request.get_ref().ticket)?;
        self.inner.do_get(request).await
    }

    async fn do_put(
        &self,
        request: Request<Streaming<FlightData>>,
    ) -> std::result::Result<Response<Self::DoPutStream>, Status> {
        self.inner.do_put(request).await
    }

    async fn do_exchange(
        &self,
        request: Request<Streaming<FlightData>>,
    ) -> std::result::Result<Response<Self::DoExchangeStream>, Status> {
        self.inner.do_exchange(request).await
    }

    async fn do_action(
        &self,
        request: Request<Action>,
    ) -> std::result::Result<Response<Self::DoActionStream>, Status> {
        // The one action Ballista serves reads a partition's file.
        if request.get_ref().r#type == "IO_BLOCK_TRANSPORT" {
            self.check(&request.get_ref().body)?;
        }
        self.inner.do_action(request).await
    }

    async fn list_actions(
        &self,
        request: Request<Empty>,
    ) -> std::result::Result<Response<Self::ListActionsStream>, Status> {
        self.inner.list_actions(request).await
    }
}

/// Serves an executor's Arrow Flight service on `incoming` until
/// `shutdown`: Ballista's, confined to `work_dir` (resolved), behind the
/// token check.
pub(crate) async fn serve_flight(
    incoming: TcpIncoming,
    work_dir: PathBuf,
    token: Option<ClusterToken>,
    config: GrpcServerConfig,
    shutdown: impl Future<Output = ()>,
) -> std::result::Result<(), BallistaError> {
    let service = FlightServiceServer::new(ConfinedFlight::new(work_dir))
        .max_decoding_message_size(GRPC_MESSAGE_BYTES)
        .max_encoding_message_size(GRPC_MESSAGE_BYTES);
    create_grpc_server(&config)
        .add_service(InterceptedService::new(service, TokenCheck::new(token)))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
        .map_err(BallistaError::TonicError)
}

#[cfg(test)]
mod tests {
    use arrow_flight::flight_service_client::FlightServiceClient;
    use ballista_core::serde::protobuf;
    use datafusion::prelude::{ParquetReadOptions, SessionContext};
    use futures_util::TryStreamExt as _;
    use prost::Message as _;

    use super::*;
    use crate::auth::endpoint;

    #[test]
    fn a_system_folder_is_no_data_root() {
        let tmp = tempfile::tempdir().unwrap();
        for root in ["/", "/etc", "/proc", "/etc/../"] {
            let e = Confinement::new(&[PathBuf::from(root)], &tmp.path().join("work"))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.contains("a system folder"), "{root}: {e}");
        }
        Confinement::new(&[tmp.path().to_path_buf()], &tmp.path().join("work")).unwrap();
    }

    #[test]
    fn job_ids_are_one_plain_name() {
        for ok in ["job1", "aBcD3fG", "x.y"] {
            assert!(is_one_name(&JobId::from(ok.to_string())), "{ok}");
        }
        for bad in [
            "",
            "..",
            ".",
            "../trav",
            "/etc/passwd",
            "a/b",
            "/",
            "a/../..",
            "a/",
        ] {
            assert!(!is_one_name(&JobId::from(bad.to_string())), "{bad}");
        }
    }

    /// A `FetchPartition` for stage 1, partition 0 of `job_id`, as an
    /// executor or a client sends it.
    fn fetch(job_id: &str) -> Vec<u8> {
        protobuf::Action {
            action_type: Some(protobuf::action::ActionType::FetchPartition(
                protobuf::FetchPartition {
                    job_id: job_id.into(),
                    stage_id: 1,
                    partition_id: 0,
                    host: "127.0.0.1".into(),
                    port: 1,
                    ..Default::default()
                },
            )),
            settings: vec![],
        }
        .encode_to_vec()
    }

    fn plant(path: &Path, bytes: &[u8]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_flight_service_wants_the_token_and_serves_the_work_folder_only() {
        let tmp = tempfile::tempdir().unwrap();
        let work = canonical_work_dir(&tmp.path().join("work")).unwrap();
        plant(&work.join("job1/1/0/data.arrow"), b"inside");
        plant(&tmp.path().join("trav/1/0/data.arrow"), b"outside secret");
        plant(
            &tmp.path().join("elsewhere/1/0/data.arrow"),
            b"linked secret",
        );
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), work.join("linkjob")).unwrap();

        let token = ClusterToken::new("0123456789abcdef0123").unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(serve_flight(
            TcpIncoming::from(listener),
            work.clone(),
            Some(token.clone()),
            GrpcServerConfig::default(),
            std::future::pending::<()>(),
        ));
        let client = |t: Option<ClusterToken>| {
            let url = url.clone();
            async move {
                FlightServiceClient::new(
                    endpoint(url, t.as_ref()).unwrap().connect().await.unwrap(),
                )
            }
        };
        let block = |job: &str| Action {
            r#type: "IO_BLOCK_TRANSPORT".into(),
            body: fetch(job).into(),
        };
        async fn bytes(
            c: &mut FlightServiceClient<tonic::transport::Channel>,
            a: Action,
        ) -> std::result::Result<Vec<u8>, Status> {
            let results: Vec<arrow_flight::Result> =
                c.do_action(a).await?.into_inner().try_collect().await?;
            Ok(results.into_iter().flat_map(|r| r.body.to_vec()).collect())
        }

        let mut ok = client(Some(token.clone())).await;
        assert_eq!(bytes(&mut ok, block("job1")).await.unwrap(), b"inside");
        for job in ["../trav", "/etc/passwd", "linkjob"] {
            let e = bytes(&mut ok, block(job)).await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::PermissionDenied, "{job}: {e}");
            let e = ok
                .do_get(Ticket {
                    ticket: fetch(job).into(),
                })
                .await
                .unwrap_err();
            assert_eq!(e.code(), tonic::Code::PermissionDenied, "{job}: {e}");
        }

        let wrong = ClusterToken::new("0123456789abcdef0124").unwrap();
        for t in [None, Some(wrong)] {
            let mut c = client(t).await;
            let e = bytes(&mut c, block("job1")).await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e}");
        }
        server.abort();
    }

    #[tokio::test]
    async fn plans_reading_outside_the_data_roots_or_writing_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("root"), tmp.path().join("outside"));
        let ctx = SessionContext::new();
        for dir in [&root, &outside] {
            std::fs::create_dir_all(dir).unwrap();
            let sql = format!(
                "COPY (SELECT 1 AS x) TO '{}' STORED AS PARQUET",
                dir.join("t.parquet").display()
            );
            ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        }
        std::os::unix::fs::symlink(outside.join("t.parquet"), root.join("link.parquet")).unwrap();
        let confinement =
            Confinement::new(std::slice::from_ref(&root), &tmp.path().join("work")).unwrap();
        let scan = |path: PathBuf| {
            let ctx = ctx.clone();
            async move {
                ctx.read_parquet(path.to_str().unwrap(), ParquetReadOptions::default())
                    .await
                    .unwrap()
                    .create_physical_plan()
                    .await
                    .unwrap()
            }
        };

        let inside = scan(root.join("t.parquet")).await;
        confinement.check_node(inside.as_ref()).unwrap();
        for (what, path) in [
            ("outside", outside.join("t.parquet")),
            ("a link", root.join("link.parquet")),
            ("dot-dot", root.join("../outside/t.parquet")),
        ] {
            let e = confinement
                .check_node(scan(path).await.as_ref())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("outside this executor's data roots"),
                "{what}: {e}"
            );
        }
        ctx.register_parquet(
            "t",
            root.join("t.parquet").to_str().unwrap(),
            ParquetReadOptions::default(),
        )
        .await
        .unwrap();
        let copy = format!(
            "COPY (SELECT x FROM t) TO '{}' STORED AS PARQUET",
            root.join("out.parquet").display()
        );
        let copy = ctx
            .sql(&copy)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let e = confinement
            .check_node(copy.as_ref())
            .unwrap_err()
            .to_string();
        assert!(e.contains("a plan that writes"), "{e}");
        assert!(!root.join("out.parquet").exists());

        assert!(matches!(
            Confinement::new(&[], tmp.path()),
            Err(ClusterError::NoDataRoot)
        ));
        assert!(Confinement::new(&[tmp.path().join("missing")], tmp.path()).is_err());
    }
}
