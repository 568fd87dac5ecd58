//! `xprof-sql serve`: the inputs opened once and served over Arrow
//! Flight SQL until Ctrl-C (docs/serve.md).

use std::path::PathBuf;

use crate::query::SessionOptions;
use crate::serve::auth::ServeToken;
use crate::serve::confine::AllowedPaths;
use crate::serve::flight_sql::{self, ServeOptions};
use crate::serve::sessions::{SessionLimits, Sessions};

use crate::cli::query::SessionArgs;
use crate::cli::{AnyResult, Limits};

/// The statement time limit a server has unless given another.
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;
/// The memory a server's queries share unless given another (4 GiB).
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

/// `serve`'s arguments.
#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    served: ServedArgs,
    /// Address to listen on (port 0: any free port). Any other than a
    /// loopback address needs a token.
    #[arg(long, default_value = "127.0.0.1:50060")]
    bind: std::net::SocketAddr,
    /// File whose first line is the token every call must carry (default:
    /// the XPROF_SQL_TOKEN environment variable; none on loopback).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
}

/// What a server (`serve`, `mcp`) opens and under which limits.
#[derive(clap::Args)]
pub struct ServedArgs {
    /// Profile files, run folders, log folders or converted datasets:
    /// opened once, at start. Clients may open these paths and files below
    /// them as named sessions, nothing else.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Named sessions clients may keep open at once.
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

/// `serve`: opens the inputs, prints the address on the first line of
/// standard output, and answers until Ctrl-C.
pub async fn serve(args: ServeArgs) -> AnyResult<()> {
    let ServeArgs {
        served,
        bind,
        token_file,
    } = args;
    let token = match token_file {
        Some(file) => Some(ServeToken::from_file(&file)?),
        None => match std::env::var("XPROF_SQL_TOKEN") {
            Ok(secret) => {
                Some(ServeToken::new(&secret).map_err(|e| format!("XPROF_SQL_TOKEN: {e}"))?)
            }
            Err(_) => None,
        },
    };
    crate::serve::auth::require_token_off_loopback(bind, token.as_ref())?;
    let (sessions, limits) = open_sessions(served).await?;
    let guarded = token.is_some();
    let server = flight_sql::start(sessions, ServeOptions { bind, token }).await?;
    // The first line is the address, for scripts and tests that bind
    // port 0; one write, and a closed stdout does not stop the server.
    let banner = format!(
        "xprof-sql serve: Arrow Flight SQL on grpc://{}\nread-only; statement time limit {} s; \
         memory limit {} MiB; {}\n",
        server.addr(),
        limits.timeout.map(|t| t.as_secs_f64()).unwrap_or_default(),
        limits.memory_limit.unwrap_or_default() >> 20,
        if guarded {
            "every call must carry the token; Ctrl-C stops it"
        } else {
            "no token (loopback); Ctrl-C stops it"
        }
    );
    {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(banner.as_bytes());
        let _ = stdout.flush();
    }
    tokio::select! {
        served = server_wait(server) => served,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

async fn server_wait(server: flight_sql::RunningServer) -> AnyResult<()> {
    Ok(server.wait().await?)
}

impl ServedArgs {
    /// The inputs named.
    pub fn inputs(&self) -> &[PathBuf] {
        &self.inputs
    }
}

/// The sessions a server answers from: the inputs of `served` opened
/// read-only under its limits (given the server's defaults where unset: a
/// [`DEFAULT_TIMEOUT_SECS`] statement limit and [`DEFAULT_MEMORY_LIMIT`]),
/// clients confined to them; and the limits they run under.
pub async fn open_sessions(served: ServedArgs) -> AnyResult<(std::sync::Arc<Sessions>, Limits)> {
    let ServedArgs {
        inputs,
        max_sessions,
        run,
        mut limits,
        session: settings,
    } = served;
    if settings.cluster.is_some() {
        return Err("a server answers from its own process: --cluster is not taken here".into());
    }
    // A server is read-only and bounded, whatever it was given.
    limits.read_only = true;
    limits
        .timeout
        .get_or_insert(std::time::Duration::from_secs(DEFAULT_TIMEOUT_SECS));
    limits.memory_limit.get_or_insert(DEFAULT_MEMORY_LIMIT);
    let allowed = AllowedPaths::new(&inputs)?;
    let session = crate::cli::query::open(&inputs, run, &limits, &settings).await?;
    let options = SessionOptions {
        memory_limit_bytes: limits.memory_limit,
        threads: limits.threads,
        read_only: true,
        query_timeout: limits.timeout,
        events_db_schema: false,
    };
    let sessions = Sessions::new(
        session,
        options,
        allowed,
        SessionLimits {
            max_named: max_sessions,
            ..SessionLimits::default()
        },
    )?;
    Ok((std::sync::Arc::new(sessions), limits))
}
