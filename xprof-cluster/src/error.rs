//! What goes wrong starting, reaching or using a cluster: one
//! [`ClusterError`] for the whole crate, with its [`Result`] shorthand.
//! No variant ever holds a cluster token.

use std::net::SocketAddr;
use std::path::PathBuf;

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
    /// A setting out of its range.
    #[error("{0}")]
    Setting(String),
    /// An input a cluster cannot read.
    #[error("{}: {reason}", path.display())]
    Input {
        /// The input.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A service asked to listen on a non-loopback address without a
    /// cluster token.
    #[error(
        "{what} will not listen on {addr} without a cluster token: anyone who can reach that address could run plans on the cluster and read the files its executors read. Listen on 127.0.0.1 (the default), or give every process of the cluster the same secret with --token-file FILE or the XPROF_CLUSTER_TOKEN environment variable (docs/cluster.md, Security)"
    )]
    Insecure {
        /// The service ("the scheduler", "an executor").
        what: String,
        /// The address it was asked to listen on.
        addr: SocketAddr,
    },
    /// A cluster token that cannot be used (too short, not text); the
    /// reason never quotes it.
    #[error("cluster token: {0}")]
    Token(String),
    /// The scheduler at `url` refused this process's token (none, or a
    /// wrong one).
    #[error(
        "the scheduler at {url} refused this process: the cluster token is missing or wrong (give the cluster's shared secret with --token-file FILE or XPROF_CLUSTER_TOKEN)"
    )]
    Unauthenticated {
        /// The scheduler's address as given.
        url: String,
    },
    /// A dataset root of an executor (`--data-root`) that cannot be used.
    #[error("data root {}: {reason}", path.display())]
    DataRoot {
        /// The folder as given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An executor started without a dataset root.
    #[error(
        "an executor needs at least one --data-root DIR: it reads datasets inside those folders only (the warehouse's path, the same on every machine)"
    )]
    NoDataRoot,
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
