//! `xprof-sql export`: the events a query selects as a timeline for
//! Perfetto or chrome://tracing.

use std::path::PathBuf;

use crate::cli::query::{SessionArgs, open};
use crate::cli::{AnyResult, Limits};

/// `export`'s arguments.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Profile files, run folders, log folders or converted datasets.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The selection, e.g. `SELECT * FROM events WHERE name LIKE 'fusion%'`;
    /// or a compiled kernel's ops, `SELECT * FROM llo_dump_ops WHERE hlo_op
    /// = '…'`, for its schedule (a track per unit slot, 1 bundle = 1 ns).
    #[arg(short = 'e', long = "execute", required = true)]
    sql: String,
    /// The file to write.
    #[arg(short = 'o', long = "output", required = true)]
    output: PathBuf,
    /// chrome (Trace Event JSON) or perfetto (protobuf); default: by
    /// the file name (`.pftrace`, `.perfetto-trace`: perfetto), else chrome.
    #[arg(long, value_enum)]
    format: Option<TimelineFormat>,
    /// Also the counters of the selected events' devices within the
    /// selection's time span.
    #[arg(long)]
    counters: bool,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

/// The `export --format` choices.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum TimelineFormat {
    /// Chrome Trace Event JSON.
    Chrome,
    /// Perfetto's protobuf trace.
    Perfetto,
}

/// `export`: the selection as a timeline file.
pub async fn export(args: ExportArgs) -> AnyResult<()> {
    use crate::query::export::{ExportFormat, ExportOptions};
    let ExportArgs {
        inputs,
        sql,
        output,
        format,
        counters,
        run,
        limits,
        session,
    } = args;
    let session = open(&inputs, run, &limits, &session).await?;
    let by_name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .is_some_and(|n| n.ends_with(".pftrace") || n.ends_with(".perfetto-trace"));
    let format = match format {
        Some(TimelineFormat::Perfetto) => ExportFormat::Perfetto,
        Some(TimelineFormat::Chrome) => ExportFormat::ChromeJson,
        None if by_name => ExportFormat::Perfetto,
        None => ExportFormat::ChromeJson,
    };
    let options = ExportOptions { format, counters };
    let summary = crate::query::export::export(&session, &sql, &output, &options).await?;
    eprintln!(
        "wrote {}: {} events on {} tracks, {} flows, {} counter samples{}",
        output.display(),
        summary.events,
        summary.tracks,
        summary.flows,
        summary.counter_samples,
        if summary.region_kernels > 0 {
            format!(
                "; LLO region entries under {} kernel executions",
                summary.region_kernels
            )
        } else {
            String::new()
        }
    );
    Ok(())
}
