//! `xprof-sql mcp`: the inputs opened once and served to an agent over
//! the Model Context Protocol on standard input and output
//! (docs/serve.md, Agents).

use std::path::PathBuf;

use crate::serve::mcp::{McpServer, serve_stdio};

use crate::cli::query::SessionArgs;
use crate::cli::serve::open_sessions;
use crate::cli::{AnyResult, Limits};

/// `mcp`'s arguments.
#[derive(clap::Args)]
pub struct McpArgs {
    /// Profile files, run folders, log folders or converted datasets:
    /// opened once, at start. The agent may open these paths and files
    /// below them as named sessions, nothing else.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Folder reports and timelines are written into (default: a new
    /// folder under the system's temporary folder, named on standard
    /// error).
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Named sessions the agent may keep open at once.
    #[arg(long, default_value_t = 8)]
    max_sessions: usize,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

/// `mcp`: opens the inputs and serves the agent until it closes standard
/// input. Nothing but the protocol is written to standard output.
pub async fn mcp(args: McpArgs) -> AnyResult<()> {
    let McpArgs {
        inputs,
        output_dir,
        max_sessions,
        run,
        mut limits,
        session,
    } = args;
    let output_dir = match output_dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.canonicalize()
                .map_err(|e| format!("{}: {e}", dir.display()))?
        }
        // Made when the first file is written.
        None => std::env::temp_dir().join(format!("xprof-sql-mcp-{}", std::process::id())),
    };
    let sessions = open_sessions(&inputs, run, &mut limits, &session, max_sessions).await?;
    eprintln!(
        "xprof-sql mcp: serving {} input(s) on standard input and output; reports and timelines \
         go to {}",
        inputs.len(),
        output_dir.display()
    );
    serve_stdio(McpServer::new(sessions, output_dir)).await?;
    Ok(())
}
