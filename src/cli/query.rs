//! `xprof-sql query`: SQL over profiles, and the session it runs in
//! (also used by `shell`, `diff`, `report` and `export`): the inputs opened (raw ones converted, with
//! progress bars at a terminal), the limits, and where the queries run and
//! which tables their names mean (`--schema`, `--cluster`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use crate::output::OutputFormat;
use crate::query::{OpenOptions, ProfileSession, SessionOptions};

use crate::cli::progress::ConvertProgress;
use crate::cli::{AnyResult, InputFormat, Limits, peak_memory_note, run_sql};

/// `query`'s arguments.
#[derive(clap::Args)]
pub struct QueryArgs {
    /// Profile files, run folders, log folders or converted datasets.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// SQL to run (several statements separated by `;`).
    #[arg(short = 'e', long = "execute")]
    sql: Option<String>,
    /// File of SQL to run.
    #[arg(short = 'f', long = "file", conflicts_with = "sql")]
    sql_file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: OutputFormat,
    /// Write results to FILE instead of standard output.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Run to open in a log folder (default: the latest).
    #[arg(long)]
    run: Option<String>,
    /// Print to standard error the time taken to open the inputs and to
    /// run the SQL, and the process's peak memory (resident set).
    #[arg(long)]
    timer: bool,
    #[command(flatten)]
    limits: Limits,
    #[command(flatten)]
    session: SessionArgs,
}

/// Where a session's queries run and which tables their names mean
/// (settings of the session, not limits).
#[derive(clap::Args, Debug, Clone)]
pub struct SessionArgs {
    /// Which tables unqualified names mean: `xprof` (this project's), or
    /// `events_db`, where `events` (`Events`) is XProf's Events DB with its
    /// 31 columns, so queries written for `xprof query_events_db` run
    /// unchanged; the project's tables stay under `xprof.` there.
    #[arg(long, value_enum, default_value = "xprof")]
    schema: SchemaLayout,
    /// Run the queries on an Apache Ballista cluster (`df://HOST:PORT`,
    /// started with `xprof-sql cluster`): SQL is planned here and run
    /// there. Inputs must then be Parquet datasets or warehouses at a path
    /// every executor reads (docs/cluster.md).
    #[arg(long, value_name = "URL")]
    pub(crate) cluster: Option<String>,
    /// Read every raw input as this format instead of detecting it (a
    /// reader name: xspace, chrome_trace, mosaic_gpu, proton_tree,
    /// llo_dump).
    #[arg(long, value_name = "FORMAT", value_parser = crate::cli::parse_input_format)]
    pub input_format: Option<InputFormat>,
}

/// The `--schema` choices.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum SchemaLayout {
    /// This project's tables and views.
    Xprof,
    /// XProf's Events DB: `events` is XProf's `Events` view.
    #[value(name = "events_db")]
    EventsDb,
}

/// `query`: the SQL of `-e` or `-f` over the inputs; without either, the
/// interactive shell.
pub async fn query(args: QueryArgs) -> AnyResult<()> {
    let QueryArgs {
        inputs,
        sql,
        sql_file,
        format,
        output,
        run,
        timer,
        limits,
        session,
    } = args;
    let started = Instant::now();
    let session = open(&inputs, run, &limits, &session).await?;
    let opened = started.elapsed();
    let sql = match (sql, sql_file) {
        (Some(s), _) => s,
        (None, Some(f)) => {
            std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?
        }
        (None, None) => return crate::shell::run(session, limits.read_only).await,
    };
    let result = run_sql(&session, &sql, format, output.as_deref()).await;
    if timer {
        eprintln!(
            "Run Time: {:.3} s (opening {:.3} s){}",
            started.elapsed().as_secs_f64(),
            opened.as_secs_f64(),
            peak_memory_note()
        );
    }
    result
}

/// A session under `limits` and `settings` with `inputs` open (`run`: the
/// run of a log folder).
pub async fn open(
    inputs: &[PathBuf],
    run: Option<String>,
    limits: &Limits,
    settings: &SessionArgs,
) -> AnyResult<ProfileSession> {
    let mut session = new_session(limits, settings, inputs).await?;
    open_into(&mut session, inputs, run, settings.input_format).await?;
    Ok(session)
}

fn session_options(limits: &Limits, settings: &SessionArgs) -> SessionOptions {
    SessionOptions {
        memory_limit_bytes: limits.memory_limit,
        threads: limits.threads,
        read_only: limits.read_only,
        query_timeout: limits.timeout,
        events_db_schema: settings.schema == SchemaLayout::EventsDb,
    }
}

/// A session under `limits` for `inputs`: local, or planning here and
/// running on the cluster of `--cluster`, which reads only Parquet
/// datasets and warehouses (refused before connecting).
pub async fn new_session(
    limits: &Limits,
    settings: &SessionArgs,
    inputs: &[PathBuf],
) -> AnyResult<ProfileSession> {
    let options = session_options(limits, settings);
    #[cfg(not(feature = "cluster"))]
    if let Some(url) = &settings.cluster {
        let _ = inputs;
        return Err(format!(
            "--cluster {url}: this xprof-sql was built without the cluster \
             (cargo feature `cluster`, docs/cluster.md)"
        )
        .into());
    }
    #[cfg(feature = "cluster")]
    if let Some(url) = &settings.cluster {
        crate::cluster::check_inputs(inputs)?;
        // `--timeout` bounds reaching the scheduler too.
        let connecting = crate::cluster::connect(url, options);
        let session = match limits.timeout {
            Some(limit) => tokio::time::timeout(limit, connecting)
                .await
                .map_err(|_| {
                    format!(
                        "the scheduler at {url} did not answer within --timeout ({} s)",
                        limit.as_secs_f64()
                    )
                })??,
            None => connecting.await?,
        };
        return Ok(session);
    }
    Ok(ProfileSession::builder().options(options).build()?)
}

/// Opens `inputs` into `session`, with progress bars at a terminal and a
/// warning line per input whose converter dropped or repaired something
/// (`format`: the reader of every raw input, else detected).
pub async fn open_into(
    session: &mut ProfileSession,
    inputs: &[PathBuf],
    run: Option<String>,
    format: Option<InputFormat>,
) -> AnyResult<()> {
    let already = session.opened().len();
    // Files of a rank folder that are not traces are skipped: each named.
    for input in inputs {
        for (file, why) in crate::convert::discover::skipped_files(input) {
            eprintln!("warning: {}: skipped: {why}", file.display());
        }
    }
    let mut options = OpenOptions {
        run,
        ..Default::default()
    };
    options.convert.format = format.map(|r| r.name());
    // Raw inputs are converted as they open: bars for the large ones.
    let bars = std::io::stderr()
        .is_terminal()
        .then(|| ConvertProgress::new(Vec::new(), None));
    options.convert.progress = bars.as_ref().map(ConvertProgress::callback);
    let opened = session.open(inputs, &options).await;
    if let Some(bars) = &bars {
        bars.clear();
    }
    opened?;
    // What the converters dropped or repaired: one line per input (all of
    // it is in `traces.converter_warnings`).
    for o in &session.opened()[already..] {
        if let crate::query::Opened::Converted(c) = o
            && !c.summary.warnings.is_empty()
        {
            // A warning naming the input itself (a dump file's, with its
            // line) is not prefixed with it again.
            let path = c.file.path.display().to_string();
            let own = format!("{path}: ");
            let warnings: Vec<&str> = c
                .summary
                .warnings
                .iter()
                .map(|w| w.strip_prefix(&own).unwrap_or(w))
                .collect();
            eprintln!(
                "warning: {path}: {} (SELECT converter_warnings FROM traces)",
                warnings.join("; ")
            );
        }
    }
    Ok(())
}
