//! [`LocalCluster`]: a scheduler and executors inside this process, for
//! tests, examples and trying a cluster on one machine.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ballista_core::serde::BallistaCodec;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;

use crate::config::{GRPC_MESSAGE_BYTES, cluster_config};
use crate::error::{ClusterError, Result};
use crate::executor::function_registry;
use crate::scheduler::{Scheduler, SchedulerOptions, start_scheduler};

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
