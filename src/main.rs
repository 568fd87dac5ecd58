//! The `xprof-sql` command: SQL over profiles, an interactive shell,
//! conversion to Parquet, a look inside XSpace files, and the schema.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::AsArray;
use clap::{Parser, Subcommand};
use xprof_sql::convert::batch::{self, Layout};
use xprof_sql::convert::reader::ConvertOptions;
use xprof_sql::format::dataset::{PartitionKey, WriteOptions};
use xprof_sql::format::{Table, docs};
use xprof_sql::output::{OutputFormat, write_stream, write_table_capped};
use xprof_sql::query::diff::DIFFS;
use xprof_sql::query::views::VIEWS;
use xprof_sql::query::{OpenOptions, ProfileSession, SessionOptions};

mod line_editor;
mod progress;
use line_editor::ShellHelper;
use progress::ConvertProgress;

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

/// Limits of the queries of `query` and `shell`.
#[derive(clap::Args, Debug, Clone)]
struct Limits {
    /// Memory the session may hold, for converting raw inputs and running
    /// queries (e.g. `512M`, `2G`): operators spill to a temporary folder
    /// or fail with a clear error past it.
    #[arg(long, value_parser = parse_size)]
    memory_limit: Option<u64>,
    /// Threads a query uses (default: the cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Run only statements that read: queries, EXPLAIN, SHOW, DESCRIBE. DDL,
    /// DML, COPY, SET and table functions that read paths (read_profile)
    /// are refused.
    #[arg(long)]
    read_only: bool,
    /// Stop a statement that runs longer than this many seconds (e.g. `30`,
    /// `0.5`): it fails with a clear error.
    #[arg(long, value_parser = parse_seconds)]
    timeout: Option<std::time::Duration>,
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
    cluster: Option<String>,
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

/// Seconds as a positive decimal number.
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!(
            "{s:?}: the timeout must be a positive number of seconds"
        ));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// `123`, `64K`, `512M`, `2G` (powers of 1024; `KiB`, `MB`, … also read).
fn parse_size(s: &str) -> Result<u64, String> {
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

#[derive(Subcommand)]
enum Command {
    /// Run SQL over profiles; without -e/-f, an interactive shell.
    Query {
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
    },
    /// Interactive SQL shell over profiles.
    Shell {
        /// Profile files, run folders, log folders or converted datasets.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Run to open in a log folder (default: the latest).
        #[arg(long)]
        run: Option<String>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Convert profiles to a Parquet dataset (one folder per table).
    Convert {
        /// Profile files, run folders or log folders.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Dataset folder; converting into an existing one adds traces.
        #[arg(short = 'o', long = "output", required = true)]
        output: PathBuf,
        /// Run to convert in a log folder (default: the latest).
        #[arg(long)]
        run: Option<String>,
        /// A warehouse: hive-style folders `TABLE/run=R/host=H/` by these
        /// keys (any of run, host, date, comma-separated, in folder order).
        #[arg(long, value_name = "KEYS", value_parser = parse_partition_keys)]
        partition_by: Option<PartitionKeys>,
        /// Convert a run the dataset holds already again, replacing it
        /// (else refused: no run is held twice).
        #[arg(long)]
        replace: bool,
        /// The run name to record (`traces.run`, the `run=` folder) for
        /// every input, instead of its run folder's name.
        #[arg(long, value_name = "NAME")]
        run_name: Option<String>,
        /// ZSTD level of the Parquet files.
        #[arg(long, default_value_t = 1)]
        zstd_level: i32,
        /// Files converted at once (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress on standard error.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Compare two runs or traces, every op: what got slower.
    ///
    /// With two inputs, side a is the first input's traces and side b the
    /// second's; with --a and --b, any inputs (a warehouse) and the sides
    /// named by run or trace ids.
    Diff {
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
    },
    /// One self-contained HTML report of profiles: devices' busy time,
    /// step time, top ops and kernels, roofline, busy timeline, TPU units.
    Report {
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
    },
    /// Write the events a query selects as a timeline for ui.perfetto.dev
    /// or chrome://tracing (the query's rows need trace_id and event_id).
    Export {
        /// Profile files, run folders, log folders or converted datasets.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The selection, e.g. `SELECT * FROM events WHERE name LIKE 'fusion%'`.
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
    },
    /// Run an Apache Ballista scheduler or executor that runs this
    /// project's SQL (`query --cluster`; docs/cluster.md).
    Cluster {
        #[command(subcommand)]
        role: ClusterRole,
    },
    /// Planes, lines, event counts and stat names of an XSpace file.
    Inspect {
        /// An `.xplane.pb` file (optionally `.gz`).
        input: PathBuf,
        /// JSON in the shape of XProf's `list_xplane_lines`.
        #[arg(long)]
        json: bool,
    },
    /// The tables and columns, with their meaning.
    Schema {
        /// One table, or one view (its SQL); default: all tables, and the views.
        table: Option<String>,
        /// Markdown (as docs/schema.md).
        #[arg(long)]
        markdown: bool,
    },
}

/// `xprof-sql cluster` roles.
#[derive(Subcommand)]
enum ClusterRole {
    /// The scheduler: plans the stages of each query and hands tasks to
    /// executors. Prints the address it listens on, then serves until
    /// Ctrl-C.
    Scheduler {
        /// Address to listen on (port 0: any free port).
        #[arg(long, default_value = "0.0.0.0:50050")]
        bind: std::net::SocketAddr,
        /// Seconds after which a silent executor counts as dead and its
        /// tasks run again on the others.
        #[arg(long, default_value_t = 30)]
        executor_timeout: u64,
    },
    /// An executor: runs the tasks the scheduler hands out, reading the
    /// warehouse from its own path to it, until Ctrl-C.
    Executor {
        /// The scheduler (`HOST:PORT`, `df://HOST:PORT`).
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// Address its Arrow Flight service (shuffle data, results)
        /// listens on; the port must be free and not 0.
        #[arg(long, default_value = "0.0.0.0:50051")]
        bind: std::net::SocketAddr,
        /// Host name or address the others reach it at (default: the
        /// address the scheduler sees).
        #[arg(long)]
        external_host: Option<String>,
        /// Folder for shuffle files and spills (default: a temporary one).
        #[arg(long)]
        work_dir: Option<PathBuf>,
        /// Tasks run at once (default: the cores).
        #[arg(long, default_value_t = 0)]
        vcores: usize,
        /// Memory of all its tasks together (e.g. `4G`; default: 70% of
        /// the machine's).
        #[arg(long, value_parser = parse_size)]
        memory_limit: Option<u64>,
    },
}

/// The `export --format` choices.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum TimelineFormat {
    /// Chrome Trace Event JSON.
    Chrome,
    /// Perfetto's protobuf trace.
    Perfetto,
}

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

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

/// Whether an error is stdout closed by the reader (e.g. `| head`): the
/// output was not wanted any more, which is not a failure.
fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
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
        Err(e) if is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xprof-sql: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> AnyResult<()> {
    match cli.command {
        Command::Query {
            inputs,
            sql,
            sql_file,
            format,
            output,
            run,
            timer,
            limits,
        } => {
            let started = Instant::now();
            let session = open(&inputs, run, &limits).await?;
            let opened = started.elapsed();
            let sql = match (sql, sql_file) {
                (Some(s), _) => s,
                (None, Some(f)) => {
                    std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?
                }
                (None, None) => return shell(session, limits.read_only).await,
            };
            let result = query(&session, &sql, format, output.as_deref()).await;
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
        Command::Shell {
            inputs,
            run,
            limits,
        } => shell(open(&inputs, run, &limits).await?, limits.read_only).await,
        Command::Convert {
            inputs,
            output,
            run,
            partition_by,
            replace,
            run_name,
            zstd_level,
            threads,
            quiet,
        } => {
            let keys = partition_by.map(|k| k.0).unwrap_or_default();
            let layout = Layout::partitioned(keys).replacing(replace);
            let how = ConvertHow {
                run,
                run_name,
                layout,
                zstd_level,
                threads,
                quiet,
            };
            convert(&inputs, &output, how)
        }
        Command::Diff {
            inputs,
            a,
            b,
            top,
            format,
            run,
            limits,
        } => diff(&inputs, a.zip(b), top, format, run, &limits).await,
        Command::Report {
            inputs,
            output,
            title,
            run,
            limits,
        } => report(&inputs, &output, title, run, &limits).await,
        Command::Export {
            inputs,
            sql,
            output,
            format,
            counters,
            run,
            limits,
        } => {
            let session = open(&inputs, run, &limits).await?;
            export(&session, &sql, &output, format, counters).await
        }
        Command::Cluster { role } => cluster(role).await,
        Command::Inspect { input, json } => inspect(&input, json),
        Command::Schema { table, markdown } => print_schema(table.as_deref(), markdown),
    }
}

/// Prints one table's columns, one view's SQL, or (no name) every table
/// and the list of views; an unknown name is an error naming them all.
fn print_schema(table: Option<&str>, markdown: bool) -> AnyResult<()> {
    if let Some(v) = table.and_then(|n| VIEWS.iter().find(|v| v.name == n)) {
        outln!("view {}: {}\n", v.name, v.doc);
        out!("{}", v.sql);
        return Ok(());
    }
    if let Some(d) = table.and_then(|n| DIFFS.iter().find(|d| d.name == n)) {
        outln!("table function {}(a, b): {}\n", d.name, d.doc);
        outln!("{}", d.sql());
        return Ok(());
    }
    let t = match table {
        Some(name) => Some(Table::from_name(name).ok_or_else(|| {
            let names: Vec<_> = Table::ALL.iter().map(|t| t.name()).collect();
            let views: Vec<_> = VIEWS.iter().map(|v| v.name).collect();
            format!(
                "no table or view {name:?}; tables: {}; views: {}",
                names.join(", "),
                views.join(", ")
            )
        })?),
        None => None,
    };
    if markdown {
        out!("{}", docs::markdown());
    } else {
        out!("{}", docs::text(t));
        if t.is_none() {
            outln!("views:");
            for v in VIEWS {
                outln!("  {}: {}", v.name, v.doc);
            }
            outln!("table functions (a, b: run names or trace ids):");
            for d in DIFFS {
                outln!("  {}(a, b): {}", d.name, d.doc);
            }
        }
    }
    Ok(())
}

async fn open(
    inputs: &[PathBuf],
    run: Option<String>,
    limits: &Limits,
) -> AnyResult<ProfileSession> {
    let mut session = new_session(limits, inputs).await?;
    open_into(&mut session, inputs, run).await?;
    Ok(session)
}

fn session_options(limits: &Limits) -> SessionOptions {
    SessionOptions {
        memory_limit_bytes: limits.memory_limit,
        threads: limits.threads,
        read_only: limits.read_only,
        query_timeout: limits.timeout,
        events_db_schema: limits.schema == SchemaLayout::EventsDb,
    }
}

/// A session under `limits` for `inputs`: local, or planning here and
/// running on the cluster of `--cluster`, which reads only Parquet
/// datasets and warehouses (refused before connecting).
async fn new_session(limits: &Limits, inputs: &[PathBuf]) -> AnyResult<ProfileSession> {
    if let Some(url) = &limits.cluster {
        xprof_sql::cluster::check_inputs(inputs)?;
        return Ok(xprof_sql::cluster::connect(url, session_options(limits)).await?);
    }
    Ok(ProfileSession::with_limits(session_options(limits))?)
}

/// `cluster scheduler` / `cluster executor`: serve until Ctrl-C.
async fn cluster(role: ClusterRole) -> AnyResult<()> {
    use xprof_sql::cluster;
    match role {
        ClusterRole::Scheduler {
            bind,
            executor_timeout,
        } => {
            let scheduler = cluster::start_scheduler(&cluster::SchedulerOptions {
                bind,
                executor_timeout: std::time::Duration::from_secs(executor_timeout),
            })
            .await?;
            // The first line is the address, for scripts and tests that
            // bind port 0.
            outln!(
                "xprof-sql cluster scheduler listening on {}",
                scheduler.addr()
            );
            std::io::stdout().flush()?;
            tokio::select! {
                served = scheduler.serve() => served?,
                _ = tokio::signal::ctrl_c() => eprintln!("xprof-sql: scheduler stopped"),
            }
            Ok(())
        }
        ClusterRole::Executor {
            scheduler,
            bind,
            external_host,
            work_dir,
            vcores,
            memory_limit,
        } => {
            let (host, port) = cluster::scheduler_host_port(&scheduler)?;
            outln!("xprof-sql cluster executor on {bind}, scheduler {host}:{port}");
            std::io::stdout().flush()?;
            // Ballista's executor stops by itself on Ctrl-C and SIGTERM.
            cluster::run_executor(&cluster::ExecutorOptions {
                scheduler_host: host,
                scheduler_port: port,
                bind,
                external_host,
                work_dir,
                vcores,
                memory_pool_bytes: memory_limit,
            })
            .await?;
            Ok(())
        }
    }
}

/// Opens `inputs` into `session`, with progress bars at a terminal and a
/// warning line per input whose converter dropped or repaired something.
async fn open_into(
    session: &mut ProfileSession,
    inputs: &[PathBuf],
    run: Option<String>,
) -> AnyResult<()> {
    let already = session.opened().len();
    let mut options = OpenOptions {
        run,
        ..Default::default()
    };
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
        if let xprof_sql::query::Opened::Converted(c) = o
            && !c.summary.warnings.is_empty()
        {
            eprintln!(
                "warning: {}: {} (SELECT converter_warnings FROM traces)",
                c.file.path.display(),
                c.summary.warnings.join("; ")
            );
        }
    }
    Ok(())
}

/// `report`: the HTML page, written under a temporary name and renamed
/// once whole.
async fn report(
    inputs: &[PathBuf],
    output: &Path,
    title: Option<String>,
    run: Option<String>,
    limits: &Limits,
) -> AnyResult<()> {
    let session = open(inputs, run, limits).await?;
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
    let html = xprof_sql::report::report(&session, &title).await?;
    let tmp = partial_name(output);
    std::fs::write(&tmp, &html).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display()))?;
    eprintln!(
        "wrote {} ({:.0} KiB)",
        output.display(),
        html.len() as f64 / 1024.0
    );
    Ok(())
}

/// `export`: the selection as a timeline file.
async fn export(
    session: &ProfileSession,
    sql: &str,
    output: &Path,
    format: Option<TimelineFormat>,
    counters: bool,
) -> AnyResult<()> {
    use xprof_sql::query::export::{ExportFormat, ExportOptions};
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
    let summary = xprof_sql::query::export::export(session, sql, output, &options).await?;
    eprintln!(
        "wrote {}: {} events on {} tracks, {} flows, {} counter samples",
        output.display(),
        summary.events,
        summary.tracks,
        summary.flows,
        summary.counter_samples
    );
    Ok(())
}

/// A SQL string literal.
fn sql_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `xprof-sql diff`: a verdict line and the top rows of each diff table
/// function that has rows.
async fn diff(
    inputs: &[PathBuf],
    sides: Option<(String, String)>,
    top: usize,
    format: OutputFormat,
    run: Option<String>,
    limits: &Limits,
) -> AnyResult<()> {
    let mut session = new_session(limits, inputs).await?;
    let (a, b) = match sides {
        Some(sides) => {
            open_into(&mut session, inputs, run).await?;
            sides
        }
        None => {
            let [first, second] = inputs else {
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
                open_into(&mut session, std::slice::from_ref(input), run.clone()).await?;
                let ids: Vec<String> = session.opened()[before..]
                    .iter()
                    .flat_map(|o| match o {
                        xprof_sql::query::Opened::Converted(c) => vec![c.trace_id],
                        xprof_sql::query::Opened::Dataset { trace_ids, .. } => trace_ids.clone(),
                    })
                    .map(|id| id.to_string())
                    .collect();
                side_ids.push(ids.join(","));
            }
            let b = side_ids.pop().expect("two sides");
            let a = side_ids.pop().expect("two sides");
            (a, b)
        }
    };
    let verdict_to_stdout = matches!(format, OutputFormat::Table | OutputFormat::Markdown);
    let args = format!("{}, {}", sql_literal(&a), sql_literal(&b));
    let mut shown = 0;
    for d in DIFFS {
        let call = format!("{}({args})", d.name);
        let main = d.measures[0].name;
        let batches = session
            .collect(&format!(
                "SELECT arrow_cast(count(*), 'Int64'), arrow_cast(count(a_rank), 'Int64'), arrow_cast(count(b_rank), 'Int64'), \
                 arrow_cast(sum(a_{main}), 'Float64'), arrow_cast(sum(b_{main}), 'Float64'), \
                 arrow_cast(quantile_cont(a_{main}, 0.5), 'Float64'), arrow_cast(quantile_cont(b_{main}, 0.5), 'Float64') \
                 FROM {call}"
            ))
            .await?;
        let Some(row) = batches.iter().find(|b| b.num_rows() > 0) else {
            continue;
        };
        let int = |c: usize| {
            row.column(c)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .value(0)
        };
        let float = |c: usize| {
            let col = row
                .column(c)
                .as_primitive::<arrow::datatypes::Float64Type>();
            (!col.is_null(0)).then(|| col.value(0))
        };
        use arrow::array::Array as _;
        let (keys, in_a, in_b) = (int(0), int(1), int(2));
        if keys == 0 {
            continue;
        }
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        let change = match (float(3), float(4)) {
            (Some(x), Some(y)) if x != 0.0 => format!(" ({:+.1}%)", 100.0 * (y - x) / x),
            _ => String::new(),
        };
        // Steps are compared by their typical (median) duration, the
        // others by their total.
        let verdict = if d.name == "diff_step_stats" {
            format!(
                "{}: step time p50 a {} us, b {} us; {} steps in a, {} in b",
                d.name,
                fmt(float(5)),
                fmt(float(6)),
                in_a,
                in_b
            )
        } else {
            format!(
                "{}: total {main} a {}, b {}{change}; {keys} keys, {} only in a, {} only in b",
                d.name,
                fmt(float(3)),
                fmt(float(4)),
                keys - in_b,
                keys - in_a
            )
        };
        if verdict_to_stdout {
            if shown > 0 {
                outln!();
            }
            outln!("{verdict}");
        } else {
            eprintln!("{verdict}");
        }
        shown += 1;
        let limit = if top == 0 {
            String::new()
        } else {
            format!(" LIMIT {top}")
        };
        let order: Vec<String> = d.keys.iter().map(|k| k.to_string()).collect();
        query(
            &session,
            &format!(
                "SELECT * FROM {call} ORDER BY diff DESC NULLS LAST, {}{limit}",
                order.join(", ")
            ),
            format,
            None,
        )
        .await?;
    }
    if shown == 0 {
        return Err(format!(
            "no rows on either side (a = {a:?}, b = {b:?}): name sides by run (traces.run) or trace id"
        )
        .into());
    }
    Ok(())
}

/// SQL text split into statements at the `;` tokens of DataFusion's SQL
/// tokenizer, so a `;` inside a string, a quoted name or a comment stays
/// where it is. Pieces holding only whitespace and comments are dropped.
/// Text the tokenizer rejects (an unterminated string) is one statement:
/// the planner then reports the error with its position.
fn statements(sql: &str) -> Vec<String> {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize_with_location() else {
        return if sql.trim().is_empty() {
            Vec::new()
        } else {
            vec![sql.to_string()]
        };
    };
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // Locations are 1-based lines and columns counted in characters.
    let offset = |at: Location| -> usize {
        let line = line_starts[(at.line as usize)
            .saturating_sub(1)
            .min(line_starts.len() - 1)];
        sql[line..]
            .char_indices()
            .nth((at.column as usize).saturating_sub(1))
            .map_or(sql.len(), |(i, _)| line + i)
    };
    let mut out = Vec::new();
    let (mut begin, mut has_sql) = (0, false);
    for t in &tokens {
        match &t.token {
            Token::SemiColon => {
                let at = offset(t.span.start);
                if has_sql {
                    out.push(sql[begin..at].to_string());
                }
                (begin, has_sql) = (at + 1, false);
            }
            Token::Whitespace(_) | Token::EOF => {}
            _ => has_sql = true,
        }
    }
    if has_sql {
        out.push(sql[begin..].to_string());
    }
    out
}

/// Whether the shell has read a whole statement: the text tokenizes and
/// its last token other than whitespace and comments is `;`.
fn statement_complete(sql: &str) -> bool {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
    Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .is_ok_and(|tokens| {
            tokens
                .iter()
                .rev()
                .find(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
                == Some(&Token::SemiColon)
        })
}

async fn query(
    session: &ProfileSession,
    sql: &str,
    format: OutputFormat,
    output: Option<&Path>,
) -> AnyResult<()> {
    query_capped(session, sql, format, output, None, None).await
}

/// [`query`], with table output capped at `max_rows` rows when given, and
/// written to `redirect` instead of stdout when given (the shell's
/// `.output FILE`).
async fn query_capped(
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
    // `-o FILE` is written under a temporary name and renamed once whole:
    // a statement failing midway leaves no partial file.
    let mut file_out: Option<(std::io::BufWriter<std::fs::File>, PathBuf)> = match (format, output)
    {
        (OutputFormat::Parquet, _) | (_, None) => None,
        (_, Some(p)) => {
            let tmp = partial_name(p);
            let file = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", p.display()))?;
            Some((std::io::BufWriter::new(file), tmp))
        }
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
    if let (Some((file, tmp)), Some(path)) = (file_out, output) {
        let kept = written.and_then(|()| {
            file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()).into())
        });
        if kept.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        return kept;
    }
    written
}

/// The temporary name `-o path` is written under: `.NAME.partial` beside it.
fn partial_name(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.partial"))
}

/// The statements of [`query_capped`], each written to the output file,
/// the redirect or stdout.
async fn write_statements(
    session: &ProfileSession,
    stmts: &[String],
    format: OutputFormat,
    output: Option<&Path>,
    max_rows: Option<usize>,
    mut redirect: Option<&mut dyn Write>,
    file_out: &mut Option<(std::io::BufWriter<std::fs::File>, PathBuf)>,
) -> AnyResult<()> {
    let stdout = std::io::stdout();
    for stmt in stmts {
        let stream = session.execute(stmt).await?;
        let mut lock;
        let target: &mut dyn Write = match (file_out.as_mut(), redirect.as_deref_mut()) {
            (Some((f, _)), _) => f,
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

/// The shell's dot-commands, for `.help`.
const SHELL_HELP: &str = "\
.tables                 tables and views of the open profiles
.schema [NAME]          columns of a table, SQL of a view; all tables without NAME
.mode MODE              table (default), csv, json, markdown or line
.timer on|off           print each statement's elapsed time
.maxrows N              table mode shows at most N rows (default 100; 0: all)
.read FILE              run the SQL statements in FILE
.output [FILE]          write results to FILE (created anew); no FILE: back to stdout
.open INPUT             add a profile (file, run or log folder, dataset) as more traces
.help                   this list
.quit  .exit            leave (also Ctrl-D)";

/// What the shell's dot-commands change.
struct ShellSettings {
    format: OutputFormat,
    timer: bool,
    /// Rows a table shows (`None`: all).
    max_rows: Option<usize>,
    /// Where results go after `.output FILE` (`None`: stdout).
    output: Option<std::io::BufWriter<std::fs::File>>,
    /// `--read-only`: `.open` (which reads a path) is refused too.
    read_only: bool,
}

/// Rows the shell's tables show unless `.maxrows` says otherwise.
const SHELL_MAX_ROWS: usize = 100;

/// Runs `sql` as the shell does: in the current mode, timed if asked.
/// Errors are printed, not returned, so the shell goes on.
async fn shell_run(session: &ProfileSession, sql: &str, settings: &mut ShellSettings) {
    let started = Instant::now();
    let redirect = settings.output.as_mut().map(|w| w as &mut dyn Write);
    let result = query_capped(
        session,
        sql,
        settings.format,
        None,
        settings.max_rows,
        redirect,
    );
    if let Err(e) = result.await {
        eprintln!("error: {e}");
    }
    if let Some(Err(e)) = settings.output.as_mut().map(|w| w.flush()) {
        eprintln!("error: .output: {e}");
    }
    if settings.timer {
        eprintln!(
            "Run Time: {:.3} s{}",
            started.elapsed().as_secs_f64(),
            peak_memory_note()
        );
    }
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
fn peak_memory_note() -> String {
    peak_rss_bytes()
        .map(|b| format!(", peak memory {:.0} MiB", b as f64 / 1048576.0))
        .unwrap_or_default()
}

/// One dot-command; `Ok(false)` means leave the shell.
async fn shell_command(
    session: &mut ProfileSession,
    line: &str,
    settings: &mut ShellSettings,
) -> AnyResult<bool> {
    let mut parts = line.split_whitespace();
    let command = parts.next().unwrap_or_default();
    let arg = parts.next();
    match (command, arg) {
        (".quit" | ".exit", _) => return Ok(false),
        (".help", _) => eprintln!("{SHELL_HELP}"),
        (".tables", _) => {
            let sql = format!(
                "SELECT table_name, table_type FROM information_schema.tables \
                 WHERE table_schema = '{}' ORDER BY table_name",
                session.schema().replace('\'', "''")
            );
            for batch in session.collect(&sql).await? {
                let batch = xprof_sql::output::plain_batch(&batch)?;
                let names = batch.column(0).as_string::<i32>();
                let kinds = batch.column(1).as_string::<i32>();
                for i in 0..batch.num_rows() {
                    if kinds.value(i) == "VIEW" {
                        outln!("{} (view)", names.value(i));
                    } else {
                        outln!("{}", names.value(i));
                    }
                }
            }
        }
        (".schema", name) => print_schema(name, false)?,
        (".mode", Some(mode)) => {
            settings.format = match mode {
                "table" => OutputFormat::Table,
                "csv" => OutputFormat::Csv,
                "json" => OutputFormat::Json,
                "markdown" => OutputFormat::Markdown,
                "line" => OutputFormat::Line,
                other => {
                    return Err(
                        format!(".mode {other}: one of table, csv, json, markdown, line").into(),
                    );
                }
            }
        }
        (".maxrows", Some(n)) => {
            let n: usize = n
                .parse()
                .map_err(|_| format!(".maxrows {n}: a number of rows (0: all)"))?;
            settings.max_rows = (n > 0).then_some(n);
        }
        (".timer", Some("on")) => settings.timer = true,
        (".timer", Some("off")) => settings.timer = false,
        (".read", Some(file)) => {
            let sql = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            shell_run(session, &sql, settings).await;
        }
        (".output", file) => {
            if let Some(mut previous) = settings.output.take() {
                previous.flush()?;
            }
            if let Some(file) = file {
                let f = std::fs::File::create(file).map_err(|e| format!("{file}: {e}"))?;
                settings.output = Some(std::io::BufWriter::new(f));
            }
        }
        (".open", Some(input)) => {
            if settings.read_only {
                return Err(".open reads a path: not allowed in a read-only session".into());
            }
            session.open(&[input], &OpenOptions::default()).await?;
            eprintln!("opened {input}");
        }
        (".mode" | ".timer" | ".read" | ".maxrows" | ".open", None) | (".timer", Some(_)) => {
            return Err(format!("{command}: see .help for its argument").into());
        }
        _ => return Err(format!("unknown command {command}; .help lists them").into()),
    }
    Ok(true)
}

async fn shell(mut session: ProfileSession, read_only: bool) -> AnyResult<()> {
    let session = &mut session;
    let mut settings = ShellSettings {
        format: OutputFormat::Table,
        timer: false,
        max_rows: Some(SHELL_MAX_ROWS),
        output: None,
        read_only,
    };
    let result = if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        shell_at_terminal(session, &mut settings).await
    } else {
        shell_from_lines(session, &mut settings).await
    };
    if let Some(mut out) = settings.output.take() {
        out.flush()?;
    }
    result
}

/// The shell reading a pipe or file: statements end at `;`, the last one
/// may end without; Ctrl-C stops the process as for any filter.
async fn shell_from_lines(
    session: &mut ProfileSession,
    settings: &mut ShellSettings,
) -> AnyResult<()> {
    // stdin at a terminal but stdout redirected: prompts go to stderr.
    let prompts = std::io::stdin().is_terminal();
    let prompt = |more: bool| {
        if prompts {
            eprint!("{}", if more { "   ...> " } else { "xprof> " });
        }
    };
    let mut buf = String::new();
    prompt(false);
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let trimmed = line.trim();
        if buf.is_empty() && trimmed.starts_with('.') {
            match shell_command(session, trimmed, settings).await {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => eprintln!("error: {e}"),
            }
            prompt(false);
            continue;
        }
        buf.push_str(&line);
        buf.push('\n');
        if statement_complete(&buf) {
            shell_run(session, &buf, settings).await;
            buf.clear();
        }
        prompt(!buf.is_empty());
    }
    if !buf.trim().is_empty() {
        let redirect = settings.output.as_mut().map(|w| w as &mut dyn Write);
        query_capped(
            session,
            &buf,
            settings.format,
            None,
            settings.max_rows,
            redirect,
        )
        .await?;
    }
    Ok(())
}

/// The shell at a terminal: line editing, multi-line statements, tab
/// completion from the catalog, a history file; Ctrl-C cancels the running
/// statement (or the line being typed) and keeps the shell, Ctrl-D leaves.
async fn shell_at_terminal(
    session: &mut ProfileSession,
    settings: &mut ShellSettings,
) -> AnyResult<()> {
    use rustyline::error::ReadlineError;
    use std::sync::atomic::{AtomicBool, Ordering};
    let config = rustyline::Config::builder()
        .auto_add_history(false)
        .completion_type(rustyline::CompletionType::List)
        .max_history_size(10_000)?
        .build();
    let mut editor: rustyline::Editor<ShellHelper, rustyline::history::FileHistory> =
        rustyline::Editor::with_config(config)?;
    editor.set_helper(Some(ShellHelper::new(catalog_names(session).await?)));
    let history = line_editor::history_path();
    if let Some(path) = history.as_ref().filter(|p| p.exists())
        && let Err(e) = editor.load_history(path)
    {
        eprintln!("warning: history {}: {e}", path.display());
    }
    // While a statement runs the terminal delivers Ctrl-C as SIGINT: it
    // sets this flag instead of ending the process. While a line is typed,
    // the editor reads Ctrl-C as a key.
    let interrupted = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupted))?;
    eprintln!("xprof-sql shell: SQL ending in `;`; `.help` for commands; Ctrl-D leaves");
    let mut history_warned = false;
    loop {
        let line = match editor.readline("xprof> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        editor.add_history_entry(text)?;
        if let Some(path) = &history
            && let Err(e) = editor.append_history(path)
            && !history_warned
        {
            eprintln!("warning: history {}: {e}", path.display());
            history_warned = true;
        }
        interrupted.store(false, Ordering::SeqCst);
        let is_command = text.starts_with('.');
        let work = async {
            if is_command {
                shell_command(session, text, settings).await
            } else {
                shell_run(session, text, settings).await;
                Ok(true)
            }
        };
        match until_interrupted(work, &interrupted).await {
            None => eprintln!("cancelled (Ctrl-C)"),
            Some(Ok(true)) => {}
            Some(Ok(false)) => break,
            Some(Err(e)) => eprintln!("error: {e}"),
        }
        if is_command && text.starts_with(".open") {
            let names = catalog_names(session).await?;
            if let Some(helper) = editor.helper_mut() {
                helper.extend(names);
            }
        }
    }
    Ok(())
}

/// Runs `work` until it ends (`Some`) or `interrupted` is set (`None`; the
/// work is dropped, which cancels a running query and its tasks).
async fn until_interrupted<T>(
    work: impl std::future::Future<Output = T>,
    interrupted: &std::sync::atomic::AtomicBool,
) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(25));
    loop {
        tokio::select! {
            done = &mut work => return Some(done),
            _ = tick.tick() => {
                if interrupted.swap(false, std::sync::atomic::Ordering::SeqCst) {
                    return None;
                }
            }
        }
    }
}

/// Names the shell completes: the session's tables, views and columns.
async fn catalog_names(session: &ProfileSession) -> AnyResult<Vec<String>> {
    let sql = format!(
        "SELECT DISTINCT table_name, column_name FROM information_schema.columns \
         WHERE table_schema = '{}'",
        session.schema().replace('\'', "''")
    );
    let mut names = Vec::new();
    for batch in session.collect(&sql).await? {
        let batch = xprof_sql::output::plain_batch(&batch)?;
        for column in batch.columns() {
            let values = column.as_string::<i32>();
            names.extend(values.iter().flatten().map(String::from));
        }
    }
    Ok(names)
}

/// What `convert` was asked, besides its inputs and output.
struct ConvertHow {
    run: Option<String>,
    run_name: Option<String>,
    layout: Layout,
    zstd_level: i32,
    threads: Option<usize>,
    quiet: bool,
}

/// `--partition-by run,host`: one value holding the keys in order.
#[derive(Clone)]
struct PartitionKeys(Vec<PartitionKey>);

fn parse_partition_keys(s: &str) -> Result<PartitionKeys, String> {
    PartitionKey::parse_list(s).map(PartitionKeys)
}

fn convert(inputs: &[PathBuf], output: &Path, how: ConvertHow) -> AnyResult<()> {
    let ConvertHow {
        run,
        run_name,
        layout,
        zstd_level,
        threads,
        quiet,
    } = how;
    let mut files = Vec::new();
    for i in inputs {
        files.extend(xprof_sql::convert::input::discover(i, run.as_deref())?);
    }
    if let Some(name) = &run_name {
        for f in &mut files {
            f.run = Some(name.clone());
        }
    }
    let start = Instant::now();
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(&f.path).ok())
        .map(|m| m.len())
        .sum();
    let mut options = ConvertOptions::default();
    let bars = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let names = files
            .iter()
            .map(|f| {
                let name = f.path.file_name().unwrap_or(f.path.as_os_str());
                name.to_string_lossy().into_owned()
            })
            .collect();
        let inflated = files
            .iter()
            .map(|f| xprof_sql::convert::input::inflated_len(&f.path).unwrap_or(0))
            .sum();
        ConvertProgress::new(names, Some(inflated))
    });
    options.progress = bars.as_ref().map(ConvertProgress::callback);
    let write = WriteOptions {
        zstd_level,
        ..Default::default()
    };
    let threads = threads.unwrap_or_else(batch::default_threads);
    let converted = batch::convert_to_warehouse(&files, output, &options, &write, threads, &layout);
    if let Some(bars) = &bars {
        bars.clear();
    }
    let converted = converted?;
    if !quiet {
        for c in &converted {
            eprintln!(
                "trace {} {} ({}): {} planes, {} lines, {} events, {} event stats",
                c.trace_id,
                c.file.host,
                c.file.path.display(),
                c.summary.planes,
                c.summary.lines,
                c.summary.events,
                c.summary.event_stats
            );
            for w in &c.summary.warnings {
                eprintln!("  warning: {w}");
            }
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "wrote {} ({:.1} MiB in {:.2} s, {:.0} MiB/s{})",
            output.display(),
            total as f64 / 1048576.0,
            secs,
            total as f64 / 1048576.0 / secs.max(1e-9),
            peak_memory_note()
        );
    }
    Ok(())
}

fn inspect(input: &Path, json: bool) -> AnyResult<()> {
    let bytes = xprof_sql::convert::input::open(input)?;
    let reader = xprof_sql::convert::reader::detect(input, &bytes)?;
    let planes = reader.inspect(&bytes)?;
    if json {
        let planes_json: Vec<String> = planes
            .iter()
            .map(|p| {
                let lines: Vec<String> = p
                    .lines
                    .iter()
                    .map(|l| {
                        format!(
                            "{{\"name\": {}, \"event_count\": {}}}",
                            json_str(&l.name),
                            l.event_count
                        )
                    })
                    .collect();
                format!(
                    "{{\"name\": {}, \"lines\": [{}], \"total_events\": {}}}",
                    json_str(&p.name),
                    lines.join(", "),
                    p.total_events
                )
            })
            .collect();
        outln!(
            "{{\"format\": {}, \"planes\": [{}]}}",
            json_str(reader.name()),
            planes_json.join(", ")
        );
        return Ok(());
    }
    outln!(
        "{} ({}, {} planes)",
        input.display(),
        reader.name(),
        planes.len()
    );
    for p in &planes {
        outln!(
            "plane {:?} (id {}): {} lines, {} events, {} event metadata, {} plane stats",
            p.name,
            p.id,
            p.lines.len(),
            p.total_events,
            p.event_metadata,
            p.plane_stats
        );
        for l in &p.lines {
            outln!(
                "  line {:?} (id {}): {} events",
                l.name,
                l.id,
                l.event_count
            );
        }
        if !p.stat_names.is_empty() {
            outln!("  stats: {}", p.stat_names.join(", "));
        }
    }
    Ok(())
}

/// A JSON string literal (the exporter's escaping).
fn json_str(s: &str) -> String {
    xprof_sql::query::export::chrome::json_string(s)
}

#[cfg(test)]
mod tests {
    use super::{parse_size, statement_complete, statements};

    #[test]
    fn statements_split_at_semicolons_outside_strings_names_and_comments() {
        let trimmed = |sql: &str| -> Vec<String> {
            statements(sql)
                .iter()
                .map(|s| s.trim().to_string())
                .collect()
        };
        assert_eq!(
            trimmed("SELECT ';' AS a; SELECT 2"),
            ["SELECT ';' AS a", "SELECT 2"]
        );
        assert_eq!(
            trimmed("SELECT 1; -- it's; a comment\nSELECT \"a;b\" FROM t;"),
            ["SELECT 1", "-- it's; a comment\nSELECT \"a;b\" FROM t"]
        );
        assert_eq!(
            trimmed("SELECT 'it''s; fine' /* ; */ ;;"),
            ["SELECT 'it''s; fine' /* ; */"]
        );
        assert!(statements("/* ; */ -- ;\n  ;").is_empty());
        assert!(statements("   ").is_empty());
        // The planner reports what the tokenizer rejects, so it stays whole.
        assert_eq!(
            statements("SELECT 'open; SELECT 2"),
            ["SELECT 'open; SELECT 2"]
        );
        // Multi-byte text before a split keeps byte offsets right.
        assert_eq!(
            trimmed("SELECT 'µs→ns' AS u; SELECT 3"),
            ["SELECT 'µs→ns' AS u", "SELECT 3"]
        );
    }

    #[test]
    fn the_shell_waits_for_a_closing_semicolon() {
        assert!(statement_complete("SELECT 1;"));
        assert!(statement_complete("SELECT 1; -- done\n"));
        assert!(!statement_complete("SELECT ';'"));
        assert!(!statement_complete("SELECT 'a;\n"));
        assert!(!statement_complete("SELECT 1 -- ;\n"));
    }

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
