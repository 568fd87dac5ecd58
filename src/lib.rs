//! `xprof-sql`: SQL over accelerator profiles.
//!
//! This crate is the `xprof-sql` command-line tool and a facade over the
//! library crates:
//!
//! - [`format`](mod@format) (`xprof-format`): the tables, their Arrow schemas and the
//!   Parquet dataset layout;
//! - [`convert`] (`xprof-convert`): profile formats to Arrow batches;
//! - [`query`] (`xprof-query`): the DataFusion session, tables and views;
//! - [`cluster`] (`xprof-cluster`): the same SQL on an Apache Ballista
//!   cluster.
//!
//! [`output`] writes query results as a table, CSV, JSON or Parquet;
//! [`report`] draws a profile's views as one HTML page; [`run_cli`] runs
//! the command line (the binary's, and the Python wheel's `xprof-sql`):
//! one file per subcommand in `src/cli/`, the interactive shell in
//! `src/shell/`.

#![warn(missing_docs)]

mod cli;
pub mod output;
pub mod report;
#[cfg(feature = "serve")]
pub mod serve;
mod shell;

pub use cli::app::run_cli;
pub use cli::check::check_report_json;

#[cfg(feature = "cluster")]
pub use xprof_cluster as cluster;
pub use xprof_convert as convert;
pub use xprof_format as format;
pub use xprof_query as query;
