//! Stopping a cancelled job's running tasks on an executor.
//!
//! Ballista's pull scheduling has no message from the scheduler to an
//! executor that stops a task: a job cancelled on the scheduler
//! (`crate::job` cancels the job of a client that gave up) gets no new
//! tasks, but a task already running went on to its end, a core busy for
//! over a minute after its client had gone (issue 60). So each executor
//! watches the jobs it runs tasks of ([`JobWatch`]): once a second it
//! asks the scheduler for their status, and a task of a job that failed
//! or was cancelled is stopped ([`CancellableStage`]); its plan's streams
//! and the tasks they spawned are dropped. A task notices only when it
//! returns to the runtime: the client makes every join's output
//! cooperative for that (`planner::yield_after_joins`), and the watch
//! runs on a thread of its own, which busy workers cannot starve.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::{
    GetJobStatusParams, ShuffleWritePartition, TaskColumnStats, job_status,
};
use ballista_executor::execution_engine::QueryStageExecutor;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::TaskContext;
use datafusion::physical_plan::metrics::MetricsSet;
use tokio::sync::watch;
use tonic::transport::{Channel, Endpoint};

use crate::auth::{ClusterToken, endpoint};
use crate::config::on_own_runtime;

/// How often the scheduler is asked about the jobs with running tasks.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The longest one status call may take.
const CALL_WITHIN: Duration = Duration::from_secs(5);

/// The jobs an executor runs tasks of, each with a flag set when the
/// scheduler says the job failed or was cancelled.
pub(crate) struct JobWatch {
    scheduler: Endpoint,
    /// Job id → (tasks running, the flag).
    jobs: Mutex<HashMap<String, (usize, watch::Sender<bool>)>>,
    /// Whether the loop that asks the scheduler runs.
    started: std::sync::Once,
}

impl fmt::Debug for JobWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JobWatch")
    }
}

impl JobWatch {
    /// A watch asking the scheduler at `scheduler_url`
    /// (`http://HOST:PORT`) with `token`; `None` for an address that is
    /// not a URL (the executor then stops no task early).
    pub(crate) fn new(scheduler_url: String, token: Option<&ClusterToken>) -> Option<Arc<Self>> {
        let scheduler = endpoint(scheduler_url, token)
            .ok()?
            .connect_timeout(CALL_WITHIN)
            .timeout(CALL_WITHIN);
        Some(Arc::new(Self {
            scheduler,
            jobs: Mutex::new(HashMap::new()),
            started: std::sync::Once::new(),
        }))
    }

    /// Marks one more task of `job_id` running; the flag it gets set
    /// when the job ended without it. The task is counted until the
    /// returned [`Watching`] is dropped.
    fn watch(self: &Arc<Self>, job_id: &str) -> Watching {
        // On a thread and runtime of its own: the executor's runtime may
        // have every worker inside a long poll of a task's operators.
        self.started.call_once(|| {
            let (watch, scheduler) = (Arc::downgrade(self), self.scheduler.clone());
            on_own_runtime("xprof-job-watch", async move {
                ask_scheduler(watch, scheduler.connect_lazy()).await;
            });
        });
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let (count, flag) = jobs
            .entry(job_id.to_string())
            .or_insert_with(|| (0, watch::channel(false).0));
        *count += 1;
        Watching {
            cancelled: flag.subscribe(),
            watch: Arc::clone(self),
            job_id: job_id.to_string(),
        }
    }

    /// The jobs with running tasks now.
    fn running(&self) -> Vec<String> {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.keys().cloned().collect()
    }

    /// Sets the flag of `job_id`.
    fn cancel(&self, job_id: &str) {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, flag)) = jobs.get(job_id) {
            flag.send_replace(true);
        }
    }
}

/// One running task's hold on a job of the [`JobWatch`].
struct Watching {
    cancelled: watch::Receiver<bool>,
    watch: Arc<JobWatch>,
    job_id: String,
}

impl Drop for Watching {
    fn drop(&mut self) {
        let mut jobs = self.watch.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((count, _)) = jobs.get_mut(&self.job_id) {
            *count -= 1;
            if *count == 0 {
                jobs.remove(&self.job_id);
            }
        }
    }
}

/// Asks the scheduler, once a second, about every job with running tasks,
/// and flags those that failed or were cancelled; ends with the watch.
async fn ask_scheduler(watch: std::sync::Weak<JobWatch>, channel: Channel) {
    let mut scheduler = SchedulerGrpcClient::new(channel);
    loop {
        tokio::time::sleep(LOOK_EVERY).await;
        let Some(watch) = watch.upgrade() else {
            return;
        };
        for job_id in watch.running() {
            let Ok(answer) = scheduler
                .get_job_status(GetJobStatusParams {
                    job_id: job_id.clone(),
                })
                .await
            else {
                // A scheduler that does not answer stops nothing: the
                // task goes on as Ballista would run it.
                continue;
            };
            if let Some(job_status::Status::Failed(_)) =
                answer.into_inner().status.and_then(|s| s.status)
            {
                watch.cancel(&job_id);
            }
        }
    }
}

/// A task's stage, stopped when its job is cancelled (see the module).
pub(crate) struct CancellableStage {
    inner: Arc<dyn QueryStageExecutor>,
    job_id: String,
    watch: Arc<JobWatch>,
}

impl CancellableStage {
    pub(crate) fn new(
        inner: Arc<dyn QueryStageExecutor>,
        job_id: String,
        watch: Arc<JobWatch>,
    ) -> Self {
        Self {
            inner,
            job_id,
            watch,
        }
    }
}

impl fmt::Debug for CancellableStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.inner, f)
    }
}

impl fmt::Display for CancellableStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner, f)
    }
}

#[async_trait::async_trait]
impl QueryStageExecutor for CancellableStage {
    async fn execute_query_stage(
        &self,
        task_id: usize,
        context: Arc<TaskContext>,
    ) -> Result<Vec<ShuffleWritePartition>> {
        let mut watching = self.watch.watch(&self.job_id);
        tokio::select! {
            done = self.inner.execute_query_stage(task_id, context) => done,
            _ = watching.cancelled.wait_for(|cancelled| *cancelled) => {
                Err(DataFusionError::Execution(format!(
                    "job {} was cancelled or failed on the scheduler; task {task_id} stopped",
                    self.job_id
                )))
            }
        }
    }

    fn collect_plan_metrics(&self) -> Vec<MetricsSet> {
        self.inner.collect_plan_metrics()
    }

    fn collect_runtime_stats_reports(
        &self,
    ) -> Vec<ballista_core::serde::protobuf::RuntimeStatsReport> {
        self.inner.collect_runtime_stats_reports()
    }

    fn collect_window_state_reports(
        &self,
    ) -> Result<Vec<ballista_core::serde::protobuf::WindowStateReport>> {
        self.inner.collect_window_state_reports()
    }

    fn collect_column_stats(&self) -> Vec<TaskColumnStats> {
        self.inner.collect_column_stats()
    }
}
