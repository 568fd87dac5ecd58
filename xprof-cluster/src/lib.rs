//! `xprof-cluster`: this project's SQL on an [Apache Ballista] cluster.
//!
//! It owns what a Ballista scheduler and its executors need to run any
//! plan of `xprof-query` (the scalar, aggregate and window functions of
//! [`xprof_query::functions`], by the names plans carry), a client
//! [`ProfileSession`](xprof_query::ProfileSession) that plans on this process and runs on the cluster
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
//! Security (docs/cluster.md, Security): services listen on loopback
//! unless given a shared secret ([`ClusterToken`]), which every call then
//! carries and every server checks; executors read files inside their
//! dataset roots and shuffle files inside their work folder only, and
//! refuse plans that write.
//!
//! One file per part: `error.rs` ([`ClusterError`]); `auth.rs`, the token
//! and the loopback rule ([`check_bind`]); `config.rs`, what every
//! process shares (the default port, the gRPC message limit, the Ballista
//! settings, this project's functions); `confine.rs`, what an executor
//! reads (the plan check and the confined Flight service);
//! `scheduler.rs`; `executor.rs`; `local.rs` ([`LocalCluster`]);
//! `client.rs` ([`connect`], scheduler addresses, the inputs a cluster
//! reads); `planner.rs` (planning on the client, [`ClusterExec`]);
//! `job.rs` (a query's job: submitted with deadlines, cancelled when the
//! client gives up, [`wait_for_cancellations`]); `admission.rs` (the
//! scheduler takes jobs only with an executor registered); `cancel.rs`
//! (executors stop the tasks of cancelled jobs). The others import
//! `config`, `auth` and `error`; besides, `scheduler`, `executor` and
//! `local` import `confine`, which imports `cancel`; `scheduler` imports
//! `admission`, `local` the scheduler and the executor, `client` the
//! planner, and the planner `job`.
//!
//! [Apache Ballista]: https://datafusion.apache.org/ballista/

#![warn(missing_docs)]

mod admission;
mod auth;
mod cancel;
mod client;
mod config;
mod confine;
mod error;
mod executor;
mod job;
mod local;
mod planner;
mod scheduler;

pub use auth::{ClusterToken, TOKEN_ENV, check_bind, local_token_path};
pub use client::{
    check_inputs, connect, connect_with_token, open, scheduler_host_port, scheduler_url,
};
pub use config::DEFAULT_SCHEDULER_PORT;
pub use error::{ClusterError, Result};
pub use executor::{ExecutorOptions, function_registry, run_executor};
pub use job::wait_for_cancellations;
pub use local::{LocalCluster, LocalClusterOptions};
pub use planner::ClusterExec;
pub use scheduler::{
    ADMISSION_WAIT, MIN_EXECUTOR_TIMEOUT, Scheduler, SchedulerOptions, scheduler_session,
    start_scheduler,
};
