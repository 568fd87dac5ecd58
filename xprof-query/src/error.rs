//! Errors of `xprof-query`.

/// What went wrong opening inputs or running SQL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// Converting an input failed.
    #[error(transparent)]
    Convert(#[from] xprof_convert::ConvertError),
    /// Reading or writing the normalized tables failed.
    #[error(transparent)]
    Format(#[from] xprof_format::FormatError),
    /// DataFusion failed (planning or running SQL).
    #[error(transparent)]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// A session's settings do not fit together
    /// ([`crate::SessionBuilder::build`]).
    #[error("{0}")]
    Settings(String),
    /// The inputs cannot be opened together.
    #[error("{0}")]
    Inputs(String),
    /// A read-only session refused a statement (see [`crate::read_only`]).
    #[error("{0}")]
    ReadOnly(String),
    /// A statement is larger than a session plans
    /// ([`crate::statement_size`]); the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    /// Writing an output file (an `export`) failed.
    #[error("{path}: {source}")]
    Output {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Shorthand.
pub type Result<T, E = QueryError> = std::result::Result<T, E>;
