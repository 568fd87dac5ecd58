//! `xprof-sql cluster scheduler` and `xprof-sql cluster executor`: an
//! Apache Ballista scheduler or executor that runs this project's SQL,
//! serving until Ctrl-C.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{AnyResult, parse_size};

/// `xprof-sql cluster` roles.
#[derive(clap::Subcommand)]
pub enum ClusterRole {
    /// The scheduler: plans the stages of each query and hands tasks to
    /// executors. Prints the address it listens on, then serves until
    /// Ctrl-C.
    Scheduler {
        /// Address to listen on (port 0: any free port). Any other than a
        /// loopback address needs the cluster token.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
        /// Seconds after which a silent executor counts as dead and its
        /// tasks run again on the others; with none left, running queries
        /// fail after as long again (at least 6).
        #[arg(long, default_value_t = 15)]
        executor_timeout: u64,
        /// File holding the cluster's shared secret (default: the
        /// XPROF_CLUSTER_TOKEN environment variable, else a secret it
        /// generates and keeps where this user's executors and clients on
        /// this machine find it); every call must carry it
        /// (docs/cluster.md, Security).
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
    /// An executor: runs the tasks the scheduler hands out, reading the
    /// warehouse from its own path to it, until Ctrl-C.
    Executor {
        /// The scheduler (`HOST:PORT`, `df://HOST:PORT`).
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// A folder it reads datasets from (repeat for several): tasks
        /// that scan files elsewhere are refused.
        #[arg(long = "data-root", value_name = "DIR", required = true)]
        data_roots: Vec<PathBuf>,
        /// Address its Arrow Flight service (shuffle data, results)
        /// listens on; the port must be free and not 0. Any other than a
        /// loopback address needs the cluster token.
        #[arg(long, default_value = "127.0.0.1:50051")]
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
        /// File holding the cluster's shared secret (default: the
        /// XPROF_CLUSTER_TOKEN environment variable, else, for a scheduler
        /// on this machine's loopback, the secret it generated).
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
}

/// The token of `--token-file` (or the environment), with a warning when
/// the file may be read by other users.
fn token(token_file: Option<&std::path::Path>) -> AnyResult<Option<crate::cluster::ClusterToken>> {
    if let Some(warning) =
        token_file.and_then(crate::cluster::ClusterToken::file_permission_warning)
    {
        eprintln!("xprof-sql: warning: {warning}");
    }
    Ok(crate::cluster::ClusterToken::resolve(token_file)?)
}

/// `cluster scheduler` / `cluster executor`: serve until Ctrl-C.
pub async fn cluster(role: ClusterRole) -> AnyResult<()> {
    use crate::cluster;
    match role {
        ClusterRole::Scheduler {
            bind,
            executor_timeout,
            token_file,
        } => {
            // No secret given: one generated, so that other users of this
            // machine cannot submit plans to a loopback scheduler either
            // (docs/cluster.md, Security).
            // Elsewhere than on loopback a secret must be given: one
            // generated here would reach no other machine.
            let given = token(token_file.as_deref())?;
            let generated = given.is_none() && bind.ip().is_loopback();
            let token = match given {
                Some(t) => Some(t),
                None if generated => Some(cluster::ClusterToken::generate()?),
                None => None,
            };
            let scheduler = cluster::start_scheduler(&cluster::SchedulerOptions {
                bind,
                executor_timeout: std::time::Duration::from_secs(executor_timeout),
                token: token.clone(),
            })
            .await?;
            let kept = if let Some(token) = token.as_ref().filter(|_| generated) {
                let port = scheduler.addr().port();
                let path = cluster::local_token_path(port).ok_or(
                    "no private folder to keep the generated cluster token in \
                     ($XDG_RUNTIME_DIR or ~/.cache, mode 700): give one with --token-file FILE",
                )?;
                token.write_private(&path)?;
                Some(path)
            } else {
                None
            };
            // The first line is the address, for scripts and tests that
            // bind port 0. The banner is one write, and a closed stdout
            // does not stop the service: a script that read the first line
            // and closed the pipe before the second was written made the
            // scheduler exit on the broken pipe.
            let mut banner = format!(
                "xprof-sql cluster scheduler listening on {}\n",
                scheduler.addr()
            );
            if let Some(path) = &kept {
                banner.push_str(&format!(
                    "cluster token generated in {} (read by executors and clients of this user on this machine)\n",
                    path.display()
                ));
            }
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(banner.as_bytes())
                .and_then(|()| stdout.flush());
            drop(stdout);
            let served = tokio::select! {
                served = scheduler.serve() => served,
                _ = tokio::signal::ctrl_c() => {
                    eprintln!("xprof-sql: scheduler stopped");
                    Ok(())
                }
            };
            if let Some(path) = &kept {
                let _ = std::fs::remove_file(path);
            }
            Ok(served?)
        }
        ClusterRole::Executor {
            scheduler,
            data_roots,
            bind,
            external_host,
            work_dir,
            vcores,
            memory_limit,
            token_file,
        } => {
            let (host, port) = cluster::scheduler_host_port(&scheduler)?;
            if let Some(warning) = token_file
                .as_deref()
                .and_then(cluster::ClusterToken::file_permission_warning)
            {
                eprintln!("xprof-sql: warning: {warning}");
            }
            let token = cluster::ClusterToken::for_scheduler(&host, port, token_file.as_deref())?;
            // Refused before the banner: a service that will not start
            // says so first.
            cluster::check_bind("an executor", bind, token.as_ref())?;
            // As the scheduler's: a closed stdout does not stop it.
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(
                stdout,
                "xprof-sql cluster executor on {bind}, scheduler {host}:{port}"
            )
            .and_then(|()| stdout.flush());
            drop(stdout);
            // Ballista's executor stops by itself on Ctrl-C and SIGTERM.
            cluster::run_executor(&cluster::ExecutorOptions {
                scheduler_host: host,
                scheduler_port: port,
                bind,
                external_host,
                work_dir,
                vcores,
                memory_pool_bytes: memory_limit,
                data_roots,
                token,
            })
            .await?;
            Ok(())
        }
    }
}
