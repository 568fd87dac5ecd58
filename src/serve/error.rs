//! What a server refuses or fails at, in words a client can act on.

/// Errors of the servers ([`crate::serve`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A path outside those the server may read.
    #[error(
        "{path}: not readable here: a client may open only the inputs the server was started \
         with and files below them ({allowed})"
    )]
    Confined {
        /// The path asked for.
        path: std::path::PathBuf,
        /// The paths it may read, for the message.
        allowed: String,
    },
    /// A path that does not exist or cannot be resolved.
    #[error("{path}: {source}")]
    Path {
        /// The path.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A named session that is not open.
    #[error("no session named {name:?}; open sessions: {open}")]
    NoSession {
        /// The name asked for.
        name: String,
        /// The names open, for the message.
        open: String,
    },
    /// A named session of that name is open already.
    #[error("a session named {0:?} is open already; close it first or pick another name")]
    Exists(String),
    /// A request past a limit the server sets.
    #[error("{0}")]
    Limit(String),
    /// A request that is malformed (a bad name, a bad handle).
    #[error("{0}")]
    BadRequest(String),
    /// Opening inputs or running SQL failed.
    #[error(transparent)]
    Query(#[from] crate::query::QueryError),
}
