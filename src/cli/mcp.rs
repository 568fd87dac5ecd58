//! `xprof-sql mcp`: the inputs opened once and served to an agent over
//! the Model Context Protocol on standard input and output
//! (docs/serve.md, Agents).

use std::path::PathBuf;

use crate::serve::mcp::{McpServer, serve_stdio};

use crate::cli::AnyResult;
use crate::cli::serve::{ServedArgs, open_sessions};

/// `mcp`'s arguments.
#[derive(clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    served: ServedArgs,
    /// Folder reports and timelines are written into (default: a new
    /// private folder under the system's temporary folder, named on
    /// standard error).
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
}

/// `mcp`: opens the inputs and serves the agent until it closes standard
/// input. Nothing but the protocol is written to standard output.
pub async fn mcp(args: McpArgs) -> AnyResult<()> {
    let McpArgs { served, output_dir } = args;
    let inputs = served.inputs().len();
    let output_dir = match output_dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.canonicalize()
                .map_err(|e| format!("{}: {e}", dir.display()))?
        }
        // A new folder of a name no one can guess, readable by this user
        // only (another user cannot place a link in it), kept after the
        // server ends.
        None => tempfile::Builder::new()
            .prefix("xprof-sql-mcp-")
            .tempdir()
            .map_err(|e| format!("no folder for reports in the temporary folder: {e}"))?
            .keep(),
    };
    let (sessions, _) = open_sessions(served).await?;
    eprintln!(
        "xprof-sql mcp: serving {} input(s) on standard input and output; reports and timelines \
         go to {}",
        inputs,
        output_dir.display()
    );
    serve_stdio(McpServer::new(sessions, output_dir)).await?;
    Ok(())
}
