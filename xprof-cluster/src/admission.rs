//! Which jobs the scheduler takes: none while no executor is registered.
//!
//! Ballista's scheduler queues a job whether or not an executor exists to
//! run it, and its client then waits without a word: a cluster whose
//! executor failed to start answered a query with minutes of silence
//! (issue 60). [`Admission`] serves Ballista's scheduler service, and
//! before it takes a job waits a bounded time (the scheduler's executor
//! timeout) for an executor to register, then refuses the job with a
//! message that says what to start. Every other call passes through
//! unchanged.

use std::time::{Duration, Instant};

use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpc;
use ballista_core::serde::protobuf::{
    CancelJobParams, CancelJobResult, CleanJobDataParams, CleanJobDataResult,
    CreateUpdateSessionParams, CreateUpdateSessionResult, ExecuteQueryParams, ExecuteQueryResult,
    ExecutorStoppedParams, ExecutorStoppedResult, GetJobMetricsParams, GetJobMetricsResult,
    GetJobStatusParams, GetJobStatusResult, HeartBeatParams, HeartBeatResult, PollWorkParams,
    PollWorkResult, RegisterExecutorParams, RegisterExecutorResult, RemoveSessionParams,
    RemoveSessionResult, UpdateTaskStatusParams, UpdateTaskStatusResult,
};
use ballista_scheduler::scheduler_server::SchedulerServer;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use tonic::{Request, Response, Status};

/// How often the executors are looked at while a job waits for one.
const LOOK_EVERY: Duration = Duration::from_millis(200);

type Inner = SchedulerServer<LogicalPlanNode, PhysicalPlanNode>;

/// Ballista's scheduler service, taking jobs only when an executor is
/// registered (waiting up to `wait` for one).
pub(crate) struct Admission {
    inner: Inner,
    wait: Duration,
}

impl Admission {
    pub(crate) fn new(inner: Inner, wait: Duration) -> Self {
        Self { inner, wait }
    }

    /// Waits up to `self.wait` for a registered executor; the refusal
    /// when none comes.
    async fn executor_ready(&self) -> Result<(), Status> {
        let since = Instant::now();
        loop {
            let registered = self
                .inner
                .state
                .executor_manager
                .get_executors_state()
                .await
                .map_err(|e| Status::internal(format!("listing executors: {e}")))?;
            if !registered.is_empty() {
                return Ok(());
            }
            if since.elapsed() >= self.wait {
                return Err(Status::unavailable(format!(
                    "no executor is registered with this scheduler (waited {} s): start one with \
                     `xprof-sql cluster executor --scheduler HOST:PORT --data-root DIR` \
                     (docs/cluster.md)",
                    self.wait.as_secs()
                )));
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }
}

#[async_trait::async_trait]
impl SchedulerGrpc for Admission {
    async fn poll_work(
        &self,
        request: Request<PollWorkParams>,
    ) -> Result<Response<PollWorkResult>, Status> {
        self.inner.poll_work(request).await
    }
    async fn register_executor(
        &self,
        request: Request<RegisterExecutorParams>,
    ) -> Result<Response<RegisterExecutorResult>, Status> {
        self.inner.register_executor(request).await
    }
    async fn heart_beat_from_executor(
        &self,
        request: Request<HeartBeatParams>,
    ) -> Result<Response<HeartBeatResult>, Status> {
        self.inner.heart_beat_from_executor(request).await
    }
    async fn update_task_status(
        &self,
        request: Request<UpdateTaskStatusParams>,
    ) -> Result<Response<UpdateTaskStatusResult>, Status> {
        self.inner.update_task_status(request).await
    }
    async fn create_update_session(
        &self,
        request: Request<CreateUpdateSessionParams>,
    ) -> Result<Response<CreateUpdateSessionResult>, Status> {
        self.inner.create_update_session(request).await
    }
    async fn remove_session(
        &self,
        request: Request<RemoveSessionParams>,
    ) -> Result<Response<RemoveSessionResult>, Status> {
        self.inner.remove_session(request).await
    }
    type ExecuteQueryPushStream = <Inner as SchedulerGrpc>::ExecuteQueryPushStream;
    async fn execute_query_push(
        &self,
        request: Request<ExecuteQueryParams>,
    ) -> Result<Response<Self::ExecuteQueryPushStream>, Status> {
        self.executor_ready().await?;
        self.inner.execute_query_push(request).await
    }
    async fn execute_query(
        &self,
        request: Request<ExecuteQueryParams>,
    ) -> Result<Response<ExecuteQueryResult>, Status> {
        self.executor_ready().await?;
        self.inner.execute_query(request).await
    }
    async fn get_job_status(
        &self,
        request: Request<GetJobStatusParams>,
    ) -> Result<Response<GetJobStatusResult>, Status> {
        self.inner.get_job_status(request).await
    }
    async fn get_job_metrics(
        &self,
        request: Request<GetJobMetricsParams>,
    ) -> Result<Response<GetJobMetricsResult>, Status> {
        self.inner.get_job_metrics(request).await
    }
    async fn executor_stopped(
        &self,
        request: Request<ExecutorStoppedParams>,
    ) -> Result<Response<ExecutorStoppedResult>, Status> {
        self.inner.executor_stopped(request).await
    }
    async fn cancel_job(
        &self,
        request: Request<CancelJobParams>,
    ) -> Result<Response<CancelJobResult>, Status> {
        SchedulerGrpc::cancel_job(&self.inner, request).await
    }
    async fn clean_job_data(
        &self,
        request: Request<CleanJobDataParams>,
    ) -> Result<Response<CleanJobDataResult>, Status> {
        self.inner.clean_job_data(request).await
    }
}
