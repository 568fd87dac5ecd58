//! What goes wrong starting, reaching or using a cluster: one
//! [`ClusterError`] for the whole crate, with its [`Result`] shorthand.

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
