//! The subcommands of `xprof-sql`, one file each, and what they share: the
//! limits every session takes (`--memory-limit`, `--threads`,
//! `--read-only`, `--timeout`) and the output helpers (statements run and
//! written to stdout, a file or the shell's `.output`; the peak-memory
//! note of `--timer`).
//!
//! - [`query`]: `query`, and opening a session (`--schema`, `--cluster`)
//!   for the others;
//! - [`shell`], [`convert`], [`inspect`], [`diff`], [`check`],
//!   [`schema`], [`cluster`], [`report`], [`export`]: the subcommands of
//!   those names;
//! - [`app`]: parsing and dispatch (`run_cli`);
//! - [`progress`]: the conversion's progress bars.

use std::io::Write;
use std::path::Path;

use crate::output::{OutputFormat, write_stream, write_table_capped};
use crate::query::ProfileSession;
use crate::query::output_file::OutputFile;

use crate::shell::statement::statements;

pub mod app;
pub mod check;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod convert;
pub mod diff;
pub mod export;
pub mod inspect;
#[cfg(feature = "serve")]
pub mod mcp;
pub mod progress;
pub mod query;
pub mod report;
pub mod schema;
#[cfg(feature = "serve")]
pub mod serve;
pub mod shell;

/// What the subcommands return: any error, printed by `main`.
pub type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

/// `print!` that returns an error instead of panicking when stdout is
/// closed (`xprof-sql … | head`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)?
    }};
}

/// `println!` that returns an error instead of panicking (see `out!`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

pub(crate) use out;
pub(crate) use outln;

/// Limits of the queries of `query` and `shell`.
#[derive(clap::Args, Debug, Clone)]
pub struct Limits {
    /// Memory the session may hold, for converting raw inputs and running
    /// queries (e.g. `512M`, `2G`): operators spill to a temporary folder
    /// or fail with a clear error past it.
    #[arg(long, value_parser = parse_size)]
    pub memory_limit: Option<u64>,
    /// Threads a query uses (default: the cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run only statements that read: queries, EXPLAIN, SHOW (tables,
    /// columns, settings: SHOW ALL), DESCRIBE. DDL,
    /// DML, COPY, SET and table functions that read paths (read_profile)
    /// are refused.
    #[arg(long)]
    pub read_only: bool,
    /// Stop a statement that runs longer than this many seconds (e.g. `30`,
    /// `0.5`): it fails with a clear error.
    #[arg(long, value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
}

/// A reader named by `--input-format`.
pub type InputFormat = &'static dyn crate::convert::reader::ProfileReader;

/// `--input-format NAME`: a reader of this build, by its name.
pub(crate) fn parse_input_format(s: &str) -> Result<InputFormat, String> {
    crate::convert::registry::reader_named(s).ok_or_else(|| {
        let names: Vec<&str> = crate::convert::registry::READERS
            .iter()
            .map(|r| r.name())
            .collect();
        format!("no input format {s:?}; formats: {}", names.join(", "))
    })
}

/// The longest `--timeout` taken: a year. Longer ones overflow the clock
/// (`1e19` s) or a `Duration` (`1e20` s); none is meant.
const MAX_TIMEOUT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// Seconds as a positive decimal number, at most [`MAX_TIMEOUT_SECS`].
pub(crate) fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!(
            "{s:?}: the timeout must be a positive number of seconds"
        ));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "{s:?}: the timeout must be at most {MAX_TIMEOUT_SECS} seconds (365 days)"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// `123`, `64K`, `512M`, `2G` (powers of 1024; `KiB`, `MB`, … also read).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 512M)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        other => return Err(format!("unknown size unit {other:?} (use K, M, G)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Whether an error is stdout closed by the reader (e.g. `| head`): the
/// output was not wanted any more, which is not a failure.
pub fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::BrokenPipe
        {
            return true;
        }
        cur = err.source();
    }
    e.to_string().contains("Broken pipe")
}

/// Runs the statements of `sql`, writing each result in `format` to
/// `output` (one statement) or stdout.
pub async fn run_sql(
    session: &ProfileSession,
    sql: &str,
    format: OutputFormat,
    output: Option<&Path>,
) -> AnyResult<()> {
    run_sql_capped(session, sql, format, output, None, None).await
}

/// [`run_sql`], with table output capped at `max_rows` rows when given, and
/// written to `redirect` instead of stdout when given (the shell's
/// `.output FILE`).
pub async fn run_sql_capped(
    session: &ProfileSession,
    sql: &str,
    format: OutputFormat,
    output: Option<&Path>,
    max_rows: Option<usize>,
    redirect: Option<&mut dyn Write>,
) -> AnyResult<()> {
    let stmts = statements(sql);
    if stmts.is_empty() {
        return Err("no SQL statement given".into());
    }
    // One output file holds one result: several would repeat CSV headers,
    // concatenate JSON arrays or overwrite a Parquet file.
    if let (Some(path), [_, _, ..]) = (output, stmts.as_slice()) {
        return Err(format!(
            "-o {} takes one statement, got {}: run one command per statement \
             (or drop -o to print them all)",
            path.display(),
            stmts.len()
        )
        .into());
    }
    // `-o FILE` is written under a temporary name and renamed once whole
    // (a statement failing midway leaves no partial file), or in place to
    // a device or a FIFO ([`OutputFile`]).
    let mut file_out: Option<std::io::BufWriter<OutputFile>> = match (format, output) {
        (OutputFormat::Parquet, _) | (_, None) => None,
        (_, Some(p)) => Some(std::io::BufWriter::new(OutputFile::create(p)?)),
    };
    let written = write_statements(
        session,
        &stmts,
        format,
        output,
        max_rows,
        redirect,
        &mut file_out,
    )
    .await;
    if let Some(file) = file_out {
        // Dropped on an error: no partial file is left.
        written?;
        file.into_inner().map_err(|e| e.into_error())?.commit()?;
        return Ok(());
    }
    written
}

/// The statements of [`run_sql_capped`], each written to the output file,
/// the redirect or stdout.
async fn write_statements(
    session: &ProfileSession,
    stmts: &[String],
    format: OutputFormat,
    output: Option<&Path>,
    max_rows: Option<usize>,
    mut redirect: Option<&mut dyn Write>,
    file_out: &mut Option<std::io::BufWriter<OutputFile>>,
) -> AnyResult<()> {
    let stdout = std::io::stdout();
    for stmt in stmts {
        let stream = session.execute(stmt).await?;
        let mut lock;
        let target: &mut dyn Write = match (file_out.as_mut(), redirect.as_deref_mut()) {
            (Some(f), _) => f,
            (None, Some(r)) => r,
            (None, None) => {
                lock = stdout.lock();
                &mut lock
            }
        };
        match (format, max_rows) {
            (OutputFormat::Table, Some(max)) => write_table_capped(stream, target, max).await?,
            _ => write_stream(stream, format, target, output).await?,
        };
    }
    Ok(())
}

/// The process's peak resident set so far (`VmHWM` of
/// `/proc/self/status`; `None` where there is none, off Linux).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// `", peak memory N MiB"`, or nothing where the peak is not known.
pub fn peak_memory_note() -> String {
    peak_rss_bytes()
        .map(|b| format!(", peak memory {:.0} MiB", b as f64 / 1048576.0))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use crate::cli::parse_size;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("1 gb"), Ok(1 << 30));
        assert!(parse_size("12X").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("M").is_err());
        assert!(
            parse_size("99999999999T")
                .unwrap_err()
                .contains("too large")
        );
    }
}
