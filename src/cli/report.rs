//! `xprof-sql report`: one self-contained HTML page of a profile's views.

use std::path::PathBuf;

use crate::cli::query::{SessionArgs, open};
use crate::cli::{AnyResult, Limits};

/// `report`'s arguments.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Profile files, run folders, log folders or converted datasets.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", required = true)]
    output: PathBuf,
    /// The page's title (default: the inputs' file names).
    #[arg(long)]
    title: Option<String>,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

/// `report`: the HTML page, written under a temporary name and renamed
/// once whole.
pub async fn report(args: ReportArgs) -> AnyResult<()> {
    let ReportArgs {
        inputs,
        output,
        title,
        run,
        limits,
        session,
    } = args;
    let session = open(&inputs, run, &limits, &session).await?;
    let title = title.unwrap_or_else(|| {
        let names: Vec<String> = inputs
            .iter()
            .map(|p| {
                p.file_name()
                    .unwrap_or(p.as_os_str())
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        format!("Profile report: {}", names.join(", "))
    });
    let html = crate::report::report(&session, &title).await?;
    crate::query::output_file::write_output(&output, html.as_bytes())?;
    eprintln!(
        "wrote {} ({:.0} KiB)",
        output.display(),
        html.len() as f64 / 1024.0
    );
    Ok(())
}
