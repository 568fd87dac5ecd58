//! The client side: a [`ProfileSession`] that plans here and runs on a
//! scheduler ([`connect`], [`connect_with_token`]), opening inputs into it
//! ([`open`]) after refusing those a cluster cannot read
//! ([`check_inputs`]), and the forms of a scheduler address
//! ([`scheduler_url`]). With a cluster token, every connection the
//! session opens (to the scheduler, and to executors for results)
//! carries it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt as _;
use ballista_core::extension::SessionConfigExt;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use xprof_query::{ProfileSession, SessionOptions};

use ballista_core::serde::protobuf::GetJobStatusParams;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;

use crate::auth::{ClusterToken, endpoint, token_endpoint};
use crate::config::{DEFAULT_SCHEDULER_PORT, GRPC_MESSAGE_BYTES};
use crate::error::{ClusterError, Result};
use crate::planner;

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

/// Checks that a scheduler answers at `url` (`df://HOST:PORT`) and takes
/// `token`: a call it refuses for the token fails here, with the reason,
/// rather than as the first query's error.
async fn check_reachable(url: &str, token: Option<&ClusterToken>) -> Result<()> {
    let http = url.replacen("df://", "http://", 1);
    let unreachable = |reason: String| ClusterError::Unreachable {
        url: url.to_string(),
        reason,
    };
    let endpoint = endpoint(http, token)
        .map_err(|e| unreachable(e.to_string()))?
        .connect_timeout(Duration::from_secs(10))
        // A scheduler that accepts the connection and never answers (a
        // stopped process) is an error after this, not a wait.
        .timeout(Duration::from_secs(10));
    let channel = endpoint.connect().await.map_err(|e| {
        unreachable(std::error::Error::source(&e).map_or(e.to_string(), |s| s.to_string()))
    })?;
    // Any call shows whether the token is taken; an unknown job's status
    // is the cheapest.
    match SchedulerGrpcClient::new(channel)
        .get_job_status(GetJobStatusParams {
            job_id: "xprof-token-check".into(),
        })
        .await
    {
        Err(status) if status.code() == tonic::Code::Unauthenticated => {
            Err(ClusterError::Unauthenticated {
                url: url.to_string(),
            })
        }
        Err(status)
            if matches!(
                status.code(),
                tonic::Code::Cancelled | tonic::Code::DeadlineExceeded
            ) =>
        {
            Err(unreachable(
                "it accepted the connection but did not answer within 10 s".into(),
            ))
        }
        _ => Ok(()),
    }
}

/// A session whose queries run on the scheduler at `address`
/// (`df://HOST:PORT`), with the cluster token of the environment variable
/// [`TOKEN_ENV`](crate::TOKEN_ENV) if set, else, for a scheduler on this
/// machine's loopback, the token it generated
/// ([`local_token_path`](crate::local_token_path)): [`connect_with_token`].
pub async fn connect(address: &str, options: SessionOptions) -> Result<ProfileSession> {
    let (host, port) = scheduler_host_port(address)?;
    let token = ClusterToken::for_scheduler(&host, port, None)?;
    connect_with_token(address, options, token).await
}

/// A session whose queries run on the scheduler at `address`
/// (`df://HOST:PORT`): SQL is planned here, with every view and function
/// of this project, and run there. Every call to the cluster carries
/// `token`; a scheduler that refuses it fails here
/// ([`ClusterError::Unauthenticated`]). Open Parquet datasets or
/// warehouses into it with [`open`].
pub async fn connect_with_token(
    address: &str,
    options: SessionOptions,
    token: Option<ClusterToken>,
) -> Result<ProfileSession> {
    let url = scheduler_url(address)?;
    check_reachable(&url, token.as_ref()).await?;
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
    // The token on every connection Ballista opens for this session: to
    // the scheduler (the job, its status) and to executors (the results).
    let config = match &token {
        Some(t) => config.with_ballista_override_create_grpc_client_endpoint(token_endpoint(t)),
        None => config,
    };
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
    // Memory and threads sized `local`, whose state this context has.
    let options = SessionOptions {
        memory_limit_bytes: None,
        threads: None,
        ..options
    };
    Ok(ProfileSession::builder()
        .context(ctx)
        .options(options)
        .string_columns(xprof_query::StringColumns::Plain)
        .build()?)
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
}
