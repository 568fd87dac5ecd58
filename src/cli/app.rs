//! The command line: its arguments, and each subcommand handed to its
//! file ([`run_cli`]). The `xprof-sql` binary and the Python wheel's
//! `xprof-sql` command both run it.

use std::ffi::OsString;

use clap::{Parser, Subcommand};

use super::AnyResult;

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
    Query(super::query::QueryArgs),
    /// Interactive SQL shell over profiles.
    Shell(super::shell::ShellArgs),
    /// Convert profiles to a Parquet dataset (one folder per table).
    Convert(super::convert::ConvertArgs),
    /// Compare two runs or traces, every op: what got slower.
    ///
    /// With two inputs, side a is the first input's traces and side b the
    /// second's; with --a and --b, any inputs (a warehouse) and the sides
    /// named by run or trace ids.
    Diff(super::diff::DiffArgs),
    /// Profiles as performance tests: run rules files of SQL checks (each a
    /// query that must return no rows) over profiles and a baseline.
    ///
    /// Exit status: 0 when every rule passes, 1 when a rule fails (its rows
    /// are the evidence), 2 when a rule cannot run (bad SQL, a missing table
    /// or parameter) or the check cannot start, 3 when no rule failed or
    /// errored but a rule had no data to judge (never a pass). `--junit
    /// FILE` writes JUnit XML for CI. Rules and the ready checks:
    /// docs/analyses.md.
    Check(super::check::CheckArgs),
    /// One self-contained HTML report of profiles: devices' busy time,
    /// step time, top ops and kernels, roofline, busy timeline, TPU units.
    Report(super::report::ReportArgs),
    /// Write the events a query selects as a timeline for ui.perfetto.dev
    /// or chrome://tracing (the query's rows need trace_id and event_id).
    Export(super::export::ExportArgs),
    /// Run an Apache Ballista scheduler or executor that runs this
    /// project's SQL (`query --cluster`; docs/cluster.md).
    #[cfg(feature = "cluster")]
    Cluster {
        #[command(subcommand)]
        role: super::cluster::ClusterRole,
    },
    /// Open profiles once and answer Arrow Flight SQL (ADBC, JDBC, ODBC,
    /// DBeaver, Grafana) until Ctrl-C: read-only, loopback unless given a
    /// token (docs/serve.md).
    #[cfg(feature = "serve")]
    Serve(super::serve::ServeArgs),
    /// Open profiles once and serve an AI agent over the Model Context
    /// Protocol on standard input and output: tools to list, describe and
    /// query tables, run analyses, write reports (docs/serve.md).
    #[cfg(feature = "serve")]
    Mcp(super::mcp::McpArgs),
    /// Planes, lines, event counts and stat names of an XSpace file.
    Inspect(super::inspect::InspectArgs),
    /// The tables and columns, with their meaning.
    Schema(super::schema::SchemaArgs),
}

/// Runs the `xprof-sql` command line `args` (the first is the program
/// name) and returns the process's exit status: 0 on success, 1 on an
/// error (printed on stderr), 2 for arguments it cannot take (clap prints
/// the usage and exits the process, as it does for `--help`); `check`
/// gives its own (0 passed, 1 a rule failed, 2 a rule could not run).
pub fn run_cli<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("xprof-sql: cannot start the runtime: {e}");
            return 1;
        }
    };
    let check = matches!(cli.command, Command::Check(_));
    let outcome = runtime.block_on(run(cli));
    // Not a graceful drop: a statement stopped by --timeout may leave
    // tasks inside a long poll of an operator, which a drop would wait
    // for (seconds after the limit). What the command had to do is done.
    runtime.shutdown_background();
    // The cluster jobs of queries it gave up on (--timeout) are cancelled
    // before the process ends, or they would run on without a client.
    #[cfg(feature = "cluster")]
    crate::cluster::wait_for_cancellations();
    match outcome {
        Ok(status) => status,
        Err(e) if super::is_broken_pipe(e.as_ref()) => 0,
        Err(e) => {
            eprintln!("xprof-sql: {e}");
            // A check that cannot start is a check that cannot run, never
            // a failed (1) or passed one.
            if check { 2 } else { 1 }
        }
    }
}

/// Runs the subcommand; returns its exit status.
async fn run(cli: Cli) -> AnyResult<i32> {
    let done = match cli.command {
        Command::Check(args) => return super::check::check(args).await,
        Command::Query(args) => super::query::query(args).await,
        Command::Shell(args) => super::shell::shell(args).await,
        Command::Convert(args) => super::convert::convert(args),
        Command::Diff(args) => super::diff::diff(args).await,
        Command::Report(args) => super::report::report(args).await,
        Command::Export(args) => super::export::export(args).await,
        #[cfg(feature = "cluster")]
        Command::Cluster { role } => super::cluster::cluster(role).await,
        #[cfg(feature = "serve")]
        Command::Serve(args) => super::serve::serve(args).await,
        #[cfg(feature = "serve")]
        Command::Mcp(args) => super::mcp::mcp(args).await,
        Command::Inspect(args) => super::inspect::inspect(args),
        Command::Schema(args) => super::schema::schema(args),
    };
    done.map(|()| 0)
}
