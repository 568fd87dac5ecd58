//! One query's job on the cluster, seen from the client: submitted to the
//! scheduler, waited on, its results fetched from the executors, and
//! cancelled on the scheduler when the client stops waiting before the end.
//!
//! Ballista's own client (`execute_physical_plan`) does the same but
//! never cancels: a query that ended in the client (`--timeout`, Ctrl-C
//! in the shell, a dropped stream) kept its job running on the cluster,
//! and an executor kept a core busy for over a minute after the client had
//! gone (issue 60). Here the job is held by a [`JobGuard`]: dropped before
//! the job ended, it asks the scheduler to cancel it, and the executors
//! stop its running tasks (`crate::cancel`).
//!
//! Every call to the scheduler has a deadline (Ballista's gRPC client
//! settings: 20 s to connect, 20 s a call), so a scheduler that accepts
//! connections and never answers is an error, not a wait.

use std::sync::Arc;
use std::time::Duration;

use ballista_core::client::BallistaClient;
use ballista_core::extension::{BallistaConfigGrpcEndpoint, SessionConfigExt as _};
use ballista_core::serde::protobuf::execute_query_params::Query;
use ballista_core::serde::protobuf::get_job_status_result::FlightProxy;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::{
    CancelJobParams, ExecuteQueryParams, GetJobStatusParams, GetJobStatusResult, KeyValuePair,
    PartitionLocation, SuccessfulJob, execute_query_result, job_status,
};
use ballista_core::utils::{GrpcClientConfig, create_grpc_client_endpoint};
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{ExecutionPlan, SendableRecordBatchStream};
use datafusion::prelude::SessionConfig;
use datafusion_proto::physical_plan::AsExecutionPlan as _;
use datafusion_proto::protobuf::PhysicalPlanNode;
use futures_util::{StreamExt as _, TryStreamExt as _};
use tonic::transport::Endpoint;

use crate::config::on_own_runtime;

/// How often the job's status is asked for while it runs.
const STATUS_EVERY: Duration = Duration::from_millis(50);

/// The longest a dropped job's cancellation may hold up the drop: the
/// scheduler is usually on loopback or the same network, and answers in
/// milliseconds; one that does not is not waited for longer.
const CANCEL_WITHIN: Duration = Duration::from_secs(3);

/// Runs `plan` (planned on the client) on the scheduler at `url`
/// (`http://HOST:PORT`) and streams its results. The job is cancelled on
/// the scheduler if the stream is dropped before the job ended.
pub(crate) async fn run(
    url: String,
    plan: Arc<dyn ExecutionPlan>,
    session_id: String,
    config: SessionConfig,
) -> Result<SendableRecordBatchStream> {
    let schema = plan.schema();
    let query = job_of(plan, session_id.clone(), &config)?;
    let ballista = config.ballista_config();
    let grpc = GrpcClientConfig::from(&ballista);
    let max_message = ballista.grpc_client_max_message_size();
    let customize = config.ballista_override_create_grpc_client_endpoint();
    let endpoint = scheduler_endpoint(&url, &grpc, customize.as_deref())?;
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| unreachable(&url, &e))?;
    let mut scheduler = SchedulerGrpcClient::new(channel.clone())
        .max_encoding_message_size(max_message)
        .max_decoding_message_size(max_message);

    let mut request = tonic::Request::new(query);
    ballista_core::version::insert_version_header(request.metadata_mut());
    let submitted = scheduler
        .execute_query(request)
        .await
        .map_err(|status| refused(&url, &status))?
        .into_inner();
    let job_id = match submitted.result {
        Some(execute_query_result::Result::Success(success)) => success.job_id,
        Some(execute_query_result::Result::Failure(failure)) => {
            return Err(DataFusionError::Execution(format!(
                "the scheduler at {url} refused the query: {failure:?}"
            )));
        }
        None => {
            return Err(DataFusionError::Execution(format!(
                "the scheduler at {url} answered the query with no job"
            )));
        }
    };
    let mut guard = JobGuard {
        job_id: job_id.clone(),
        endpoint,
        ended: false,
    };

    let (locations, flight_proxy) = loop {
        let GetJobStatusResult {
            status,
            flight_proxy,
        } = scheduler
            .get_job_status(GetJobStatusParams {
                job_id: job_id.clone(),
            })
            .await
            .map_err(|status| refused(&url, &status))?
            .into_inner();
        match status.and_then(|s| s.status) {
            None | Some(job_status::Status::Queued(_)) | Some(job_status::Status::Running(_)) => {
                tokio::time::sleep(STATUS_EVERY).await;
            }
            Some(job_status::Status::Failed(failed)) => {
                guard.ended = true;
                return Err(DataFusionError::Execution(format!(
                    "job {job_id} failed on the cluster: {}",
                    failed.error
                )));
            }
            Some(job_status::Status::Successful(SuccessfulJob {
                partition_location, ..
            })) => {
                guard.ended = true;
                break (partition_location, flight_proxy);
            }
        }
    };

    let fetch = Fetch {
        scheduler_url: url,
        flight_proxy,
        customize,
        max_message,
        use_tls: grpc.use_tls,
        io_retries: grpc.io_retries_times,
        io_retry_wait_ms: grpc.io_retry_wait_time_ms,
    };
    let fetch = Arc::new(fetch);
    let batches = futures_util::stream::iter(locations)
        .map(move |location| {
            let fetch = Arc::clone(&fetch);
            futures_util::stream::once(async move { fetch.partition(location).await }).try_flatten()
        })
        .flatten();
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
}

/// The submission of `plan`: its encoding and the session's settings
/// (the scheduler and executors plan and run under them).
fn job_of(
    plan: Arc<dyn ExecutionPlan>,
    session_id: String,
    config: &SessionConfig,
) -> Result<ExecuteQueryParams> {
    let codec = config.ballista_physical_extension_codec();
    let node = PhysicalPlanNode::try_from_physical_plan(plan, codec.as_ref())?;
    let mut encoded = Vec::new();
    node.try_encode(&mut encoded)?;
    let settings = config
        .options()
        .entries()
        .into_iter()
        .map(|entry| KeyValuePair {
            key: entry.key,
            value: entry.value,
        })
        .collect();
    Ok(ExecuteQueryParams {
        query: Some(Query::PhysicalPlan(encoded)),
        settings,
        session_id,
        operation_id: operation_id(),
    })
}

/// A name for one submission, unique in this process and across
/// processes at one time.
fn operation_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "xprof-{}-{now}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The scheduler's endpoint with Ballista's deadlines and this session's
/// endpoint settings (the cluster token).
fn scheduler_endpoint(
    url: &str,
    grpc: &GrpcClientConfig,
    customize: Option<&BallistaConfigGrpcEndpoint>,
) -> Result<Endpoint> {
    let endpoint = create_grpc_client_endpoint(url.to_string(), Some(grpc))
        .map_err(|e| DataFusionError::Execution(format!("scheduler {url}: {e}")))?;
    match customize {
        Some(customize) => customize
            .configure_endpoint(endpoint)
            .map_err(|e| DataFusionError::Execution(format!("scheduler {url}: {e}"))),
        None => Ok(endpoint),
    }
}

/// The error of a scheduler that cannot be connected to.
fn unreachable(url: &str, e: &tonic::transport::Error) -> DataFusionError {
    let reason = std::error::Error::source(e).map_or(e.to_string(), |s| s.to_string());
    DataFusionError::Execution(format!("cannot reach the scheduler at {url}: {reason}"))
}

/// The error of a call the scheduler refused or did not answer in time.
fn refused(url: &str, status: &tonic::Status) -> DataFusionError {
    let what = match status.code() {
        tonic::Code::Cancelled | tonic::Code::DeadlineExceeded => {
            "did not answer in time".to_string()
        }
        _ => status.message().to_string(),
    };
    DataFusionError::Execution(format!("the scheduler at {url}: {what}"))
}

/// A submitted job: cancelled on the scheduler when dropped before it
/// ended.
struct JobGuard {
    job_id: String,
    endpoint: Endpoint,
    ended: bool,
}

impl Drop for JobGuard {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // A drop cannot wait on the caller's runtime (it may be a
        // current-thread one whose other tasks serve the scheduler, or be
        // shutting down), so the cancellation runs on a thread of its
        // own; a process about to end waits for it with
        // [`wait_for_cancellations`].
        let (job_id, endpoint) = (std::mem::take(&mut self.job_id), self.endpoint.clone());
        let cancel = on_own_runtime("xprof-job-cancel", async move {
            let _ = tokio::time::timeout(CANCEL_WITHIN, async {
                let channel = endpoint.connect().await.ok()?;
                SchedulerGrpcClient::new(channel)
                    .cancel_job(CancelJobParams { job_id })
                    .await
                    .ok()
            })
            .await;
        });
        CANCELLING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(cancel);
    }
}

/// The threads cancelling dropped jobs, not yet waited for.
static CANCELLING: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Waits for the cancellations of jobs whose queries were dropped before
/// they ended (a `--timeout`, an error): a process about to exit calls
/// it, so that its jobs do not run on after it. Each cancellation gives
/// up after 3 s.
pub fn wait_for_cancellations() {
    let pending = std::mem::take(&mut *CANCELLING.lock().unwrap_or_else(|e| e.into_inner()));
    for cancel in pending {
        let _ = cancel.join();
    }
}

/// How results are fetched from the executors that hold them.
struct Fetch {
    scheduler_url: String,
    flight_proxy: Option<FlightProxy>,
    customize: Option<Arc<BallistaConfigGrpcEndpoint>>,
    max_message: usize,
    use_tls: bool,
    io_retries: u8,
    io_retry_wait_ms: u64,
}

impl Fetch {
    /// The batches of one result partition, from the executor that wrote
    /// it (or the Flight proxy the scheduler names).
    async fn partition(&self, location: PartitionLocation) -> Result<SendableRecordBatchStream> {
        let layout = location.layout();
        let executor = location.executor_meta.ok_or_else(|| {
            DataFusionError::Execution("the scheduler named a result with no executor".into())
        })?;
        let partition_id = location.partition_id.ok_or_else(|| {
            DataFusionError::Execution("the scheduler named a result with no partition".into())
        })?;
        let (host, port) = match &self.flight_proxy {
            Some(FlightProxy::External(address)) => host_port(address)?,
            Some(FlightProxy::Local(true)) => host_port(
                self.scheduler_url
                    .trim_start_matches("http://")
                    .trim_start_matches("https://"),
            )?,
            Some(FlightProxy::Local(false)) | None => (executor.host.clone(), executor.port as u16),
        };
        let mut client = BallistaClient::try_new(
            &host,
            port,
            self.max_message,
            self.use_tls,
            self.customize.clone(),
            self.io_retries,
            self.io_retry_wait_ms,
            0,
            0,
        )
        .await
        .map_err(|e| {
            DataFusionError::Execution(format!("executor {host}:{port} holding a result: {e}"))
        })?;
        client
            .fetch_partition_proxied(
                &executor.id,
                &partition_id.into(),
                location.file_id,
                layout,
                &executor.host,
                executor.port as u16,
                true,
            )
            .await
            .map_err(|e| e.into_datafusion())
    }
}

/// `HOST` and `PORT` of `HOST:PORT`.
fn host_port(address: &str) -> Result<(String, u16)> {
    address
        .rsplit_once(':')
        .and_then(|(host, port)| Some((host.to_string(), port.parse().ok()?)))
        .ok_or_else(|| DataFusionError::Execution(format!("{address:?} is not HOST:PORT")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_reads_the_last_colon() {
        assert_eq!(
            host_port("10.0.0.1:50051").unwrap(),
            ("10.0.0.1".into(), 50051)
        );
        assert!(host_port("no-port").is_err());
        assert!(host_port("h:99999").is_err());
    }
}
