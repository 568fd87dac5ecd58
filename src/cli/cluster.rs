//! `xprof-sql cluster scheduler` and `xprof-sql cluster executor`: an
//! Apache Ballista scheduler or executor that runs this project's SQL,
//! serving until Ctrl-C.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{AnyResult, outln, parse_size};

/// `xprof-sql cluster` roles.
#[derive(clap::Subcommand)]
pub enum ClusterRole {
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

/// `cluster scheduler` / `cluster executor`: serve until Ctrl-C.
pub async fn cluster(role: ClusterRole) -> AnyResult<()> {
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
