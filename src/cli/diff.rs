//! `xprof-sql diff`: two runs or traces compared by every diff table
//! function; for each one with rows, its verdict line
//! ([`crate::query::diff::Verdict`]) and its top rows.

use std::path::PathBuf;

use crate::output::OutputFormat;
use crate::query::diff::{DIFFS, Verdict, kernel_lines, kernel_lines_sql};

use crate::cli::query::{SessionArgs, new_session, open_into};
use crate::cli::{AnyResult, Limits, outln, run_sql};

/// `diff`'s arguments.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// Profiles: two inputs (a, b), or any inputs with --a and --b.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Side a: a run name, a trace id, or trace ids `0,1`.
    #[arg(long, requires = "b")]
    a: Option<String>,
    /// Side b: a run name, a trace id, or trace ids `0,1`.
    #[arg(long, requires = "a")]
    b: Option<String>,
    /// Rows per table, the largest increase (b − a) first; 0: all.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Output format of the tables (csv, json and line print the
    /// verdicts on standard error).
    #[arg(long, value_enum, default_value = "table")]
    format: OutputFormat,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

/// `xprof-sql diff`: a verdict line and the top rows of each diff table
/// function that has rows.
pub async fn diff(args: DiffArgs) -> AnyResult<()> {
    let DiffArgs {
        inputs,
        a,
        b,
        top,
        format,
        run,
        limits,
        session: settings,
    } = args;
    let mut session = new_session(&limits, &settings, &inputs).await?;
    let (a, b) = match a.zip(b) {
        Some(sides) => {
            open_into(&mut session, &inputs, run, settings.input_format).await?;
            sides
        }
        None => {
            let [first, second] = inputs.as_slice() else {
                return Err(format!(
                    "diff takes two inputs (side a, side b), got {}; with more, name the sides with --a and --b (run names or trace ids)",
                    inputs.len()
                )
                .into());
            };
            // One input at a time: the traces each one adds are its side.
            let mut side_ids = Vec::new();
            for input in [first, second] {
                let before = session.opened().len();
                open_into(
                    &mut session,
                    std::slice::from_ref(input),
                    run.clone(),
                    settings.input_format,
                )
                .await?;
                side_ids.push(session.trace_ids_since(before));
            }
            let b = side_ids.pop().expect("two sides");
            let a = side_ids.pop().expect("two sides");
            (a, b)
        }
    };
    let verdict_to_stdout = matches!(format, OutputFormat::Table | OutputFormat::Markdown);
    let mut shown = 0;
    for d in DIFFS {
        let batches = session.collect(&d.verdict_sql(&a, &b)).await?;
        let Some(verdict) = Verdict::from_batches(&batches) else {
            continue;
        };
        if verdict.keys == 0 {
            continue;
        }
        let line = verdict.line(d);
        if verdict_to_stdout {
            if shown > 0 {
                outln!();
            }
            outln!("{line}");
        } else {
            eprintln!("{line}");
        }
        shown += 1;
        // Compiled kernels: a line for each, as the diff's own verdict.
        if d.name == "diff_llo_kernels" {
            let rows = session.collect(&kernel_lines_sql(&a, &b)).await?;
            for line in kernel_lines(&rows) {
                if verdict_to_stdout {
                    outln!("  {line}");
                } else {
                    eprintln!("  {line}");
                }
            }
        }
        run_sql(&session, &d.top_rows_sql(&a, &b, top), format, None).await?;
    }
    if shown == 0 {
        return Err(format!(
            "no rows on either side (a = {a:?}, b = {b:?}): name sides by run (traces.run) or trace id"
        )
        .into());
    }
    Ok(())
}
