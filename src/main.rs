//! The `xprof-sql` command: SQL over profiles, an interactive shell,
//! conversion to Parquet, a look inside XSpace files, and the schema.
//!
//! This file parses the command line, starts the runtime and hands each
//! subcommand to its file: [`cli`] holds one file per subcommand and what
//! they share, [`shell`] the interactive shell.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;
mod shell;

use cli::AnyResult;

#[derive(Parser)]
#[command(
    name = "xprof-sql",
    version,
    about = "SQL over accelerator profiles (XSpace) with Apache DataFusion and Parquet"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run SQL over profiles; without -e/-f, an interactive shell.
    Query(cli::query::QueryArgs),
    /// Interactive SQL shell over profiles.
    Shell(cli::query::ShellArgs),
    /// Convert profiles to a Parquet dataset (one folder per table).
    Convert(cli::convert::ConvertArgs),
    /// Compare two runs or traces, every op: what got slower.
    ///
    /// With two inputs, side a is the first input's traces and side b the
    /// second's; with --a and --b, any inputs (a warehouse) and the sides
    /// named by run or trace ids.
    Diff(cli::diff::DiffArgs),
    /// One self-contained HTML report of profiles: devices' busy time,
    /// step time, top ops and kernels, roofline, busy timeline, TPU units.
    Report(cli::report::ReportArgs),
    /// Write the events a query selects as a timeline for ui.perfetto.dev
    /// or chrome://tracing (the query's rows need trace_id and event_id).
    Export(cli::report::ExportArgs),
    /// Run an Apache Ballista scheduler or executor that runs this
    /// project's SQL (`query --cluster`; docs/cluster.md).
    Cluster {
        #[command(subcommand)]
        role: cli::cluster::ClusterRole,
    },
    /// Planes, lines, event counts and stat names of an XSpace file.
    Inspect(cli::convert::InspectArgs),
    /// The tables and columns, with their meaning.
    Schema(cli::schema::SchemaArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("xprof-sql: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if cli::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xprof-sql: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the subcommand.
async fn run(cli: Cli) -> AnyResult<()> {
    match cli.command {
        Command::Query(args) => cli::query::query(args).await,
        Command::Shell(args) => cli::query::shell(args).await,
        Command::Convert(args) => cli::convert::convert(args),
        Command::Diff(args) => cli::diff::diff(args).await,
        Command::Report(args) => cli::report::report(args).await,
        Command::Export(args) => cli::report::export(args).await,
        Command::Cluster { role } => cli::cluster::cluster(role).await,
        Command::Inspect(args) => cli::convert::inspect(args),
        Command::Schema(args) => cli::schema::schema(args),
    }
}
