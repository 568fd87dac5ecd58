//! `xprof-sql shell`: the interactive shell over profiles (the shell
//! itself is `crate::shell`).

use std::path::PathBuf;

use crate::cli::query::{SessionArgs, open};
use crate::cli::{AnyResult, Limits};

/// `shell`'s arguments.
#[derive(clap::Args)]
pub struct ShellArgs {
    /// Profile files, run folders, log folders or converted datasets.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

/// `shell`: the interactive shell over the inputs.
pub async fn shell(args: ShellArgs) -> AnyResult<()> {
    let ShellArgs {
        inputs,
        run,
        limits,
        session,
    } = args;
    let session = open(&inputs, run, &limits, &session).await?;
    crate::shell::run(session, limits.read_only).await
}
