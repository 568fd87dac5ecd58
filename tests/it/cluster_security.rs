//! The cluster's security (docs/cluster.md, Security), on 127.0.0.1 only:
//! calls without the cluster token or with a wrong one are refused,
//! executors serve shuffle files of their work folder only (crafted
//! `FetchPartition` tickets with `../` job ids, absolute ones and links
//! are refused), scan files inside their data roots only and refuse plans
//! that write; meanwhile the normal queries answer as locally. As
//! processes: a service refuses a non-loopback address without a token,
//! an executor with a wrong token stops and says why, and a query whose
//! only executor is killed fails with a clear error in bounded time.

use crate::cluster::{Processes, first_answer, free_port, output_within};
use crate::common::*;
use crate::warehouse::rows_in_order;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arrow_flight::flight_service_client::FlightServiceClient;
use ballista_core::serde::protobuf;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use futures_util::TryStreamExt as _;
use prost::Message as _;
use xprof_sql::cluster::{self, ClusterToken, LocalCluster, LocalClusterOptions};
use xprof_sql::query::{OpenOptions, ProfileSession, SessionOptions};

const SECRET: &str = "secret-for-tests-0123456789abcdef";
const WRONG: &str = "secret-for-tests-0123456789abcdeX";

fn token(secret: &str) -> ClusterToken {
    ClusterToken::new(secret).unwrap()
}

/// `xprof-sql convert INPUT -o OUT`.
fn convert(input: &Path, out: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .arg("convert")
        .arg(input)
        .arg("-o")
        .arg(out)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A data root `root` holding the dataset `root/wh`, a dataset `outside`
/// beside it, and `root/link`, a link to the outside one.
struct Data {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    inside: PathBuf,
    outside: PathBuf,
    link: PathBuf,
}

fn data() -> Data {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("root");
    let inside = root.join("wh");
    let outside = base.join("outside");
    let link = root.join("link");
    convert(&cpu_fixture("jax_cpu_mlp_5steps_w128"), &inside);
    convert(&cpu_fixture("jax_cpu_mlp_5steps_w512"), &outside);
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    Data {
        _tmp: tmp,
        base,
        root,
        inside,
        outside,
        link,
    }
}

/// A query with an exchange: its stages run on both executors, which
/// fetch each other's shuffle output. Ordered by its key (one row a
/// name), so that answers compare row by row, as given.
const GROUPED: &str =
    "SELECT name, count(*) AS n, sum(dur_ps) AS d FROM events GROUP BY name ORDER BY name";

async fn local_rows(dataset: &Path, sql: &str) -> Vec<String> {
    let mut s = ProfileSession::new();
    s.open(&[dataset], &OpenOptions::default()).await.unwrap();
    rows_in_order(&s.collect(sql).await.unwrap())
}

async fn cluster_session(
    c: &LocalCluster,
    dataset: &Path,
    token: Option<ClusterToken>,
) -> ProfileSession {
    let mut s = cluster::connect_with_token(&c.url(), SessionOptions::default(), token)
        .await
        .expect("connects");
    cluster::open(&mut s, &[dataset]).await.expect("opens");
    s
}

async fn cluster_rows(s: &ProfileSession, sql: &str) -> Vec<String> {
    let batches = tokio::time::timeout(Duration::from_secs(120), s.collect(sql))
        .await
        .unwrap_or_else(|_| panic!("{sql}: no answer in 120 s"))
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows_in_order(&batches)
}

/// The error of `sql` on the cluster.
async fn cluster_error(s: &ProfileSession, sql: &str) -> String {
    match tokio::time::timeout(Duration::from_secs(120), s.collect(sql))
        .await
        .unwrap_or_else(|_| panic!("{sql}: no answer in 120 s"))
    {
        Ok(b) => panic!("{sql} answered: {:?}", rows_in_order(&b)),
        Err(e) => e.to_string(),
    }
}

/// A `FetchPartition` of stage 1, partition 0 of `job_id`, as an executor
/// or a client sends it.
fn fetch(job_id: &str) -> Vec<u8> {
    protobuf::Action {
        action_type: Some(protobuf::action::ActionType::FetchPartition(
            protobuf::FetchPartition {
                job_id: job_id.into(),
                stage_id: 1,
                partition_id: 0,
                host: "127.0.0.1".into(),
                port: 1,
                ..Default::default()
            },
        )),
        settings: vec![],
    }
    .encode_to_vec()
}

/// A gRPC channel to `addr` on 127.0.0.1, with `secret` in the
/// `User-Agent` as the cluster's processes send it.
async fn channel(port: u16, secret: Option<&str>) -> tonic::transport::Channel {
    let mut e =
        tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}")).unwrap();
    if let Some(s) = secret {
        e = e.user_agent(format!("xprof-token/{s}")).unwrap();
    }
    e.connect().await.unwrap()
}

/// The bytes an executor's Flight service returns for the
/// `IO_BLOCK_TRANSPORT` fetch of `job_id` (the whole file, raw).
async fn fetch_bytes(
    port: u16,
    secret: Option<&str>,
    job_id: &str,
) -> Result<Vec<u8>, tonic::Status> {
    let mut c = FlightServiceClient::new(channel(port, secret).await);
    let action = arrow_flight::Action {
        r#type: "IO_BLOCK_TRANSPORT".into(),
        body: fetch(job_id).into(),
    };
    let results: Vec<arrow_flight::Result> = c
        .do_action(action)
        .await?
        .into_inner()
        .try_collect()
        .await?;
    Ok(results.into_iter().flat_map(|r| r.body.to_vec()).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_with_a_token_refuses_callers_without_it_and_answers_with_it() {
    let d = data();
    let c = LocalCluster::start(&LocalClusterOptions {
        data_roots: vec![d.root.clone()],
        token: Some(token(SECRET)),
        ..Default::default()
    })
    .await
    .expect("cluster starts");

    // The client: refused at connect, with the reason.
    for t in [None, Some(token(WRONG))] {
        let e = match cluster::connect_with_token(&c.url(), SessionOptions::default(), t).await {
            Ok(_) => panic!("connected without the token"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.contains("cluster token is missing or wrong") && !e.contains(SECRET),
            "{e}"
        );
    }
    // Ballista's own calls, as a stranger would send them: the scheduler's
    // (a job's status, an executor polling for work) and the executors'
    // Flight service.
    for secret in [None, Some(WRONG)] {
        let mut s = SchedulerGrpcClient::new(channel(c.port(), secret).await);
        let e = s
            .get_job_status(protobuf::GetJobStatusParams { job_id: "x".into() })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e}");
        let e = s
            .poll_work(protobuf::PollWorkParams::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e}");
        for addr in c.executor_addrs() {
            let e = fetch_bytes(addr.port(), secret, "job").await.unwrap_err();
            assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e}");
        }
    }
    // With it, queries answer as locally: client → scheduler, executors →
    // scheduler, executor → executor shuffle and client → executor
    // results all carry it.
    let s = cluster_session(&c, &d.inside, Some(token(SECRET))).await;
    for sql in [
        GROUPED,
        "SELECT count(*) AS n, sum(dur_ps) AS d FROM events",
    ] {
        assert_eq!(
            cluster_rows(&s, sql).await,
            local_rows(&d.inside, sql).await,
            "{sql}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn executors_serve_shuffle_files_of_their_work_folder_only() {
    let d = data();
    let c = LocalCluster::start(&LocalClusterOptions {
        executors: 1,
        data_roots: vec![d.root.clone()],
        token: Some(token(SECRET)),
        ..Default::default()
    })
    .await
    .expect("cluster starts");
    let work = c.executor_work_dirs().remove(0);
    let port = c.executor_addrs()[0].port();
    let plant = |path: &Path, bytes: &[u8]| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    // A shuffle file of the work folder, one beside it (reached by a job id
    // of `../NAME`), and one behind a link inside it.
    plant(&work.join("job1/1/0/data.arrow"), b"shuffle bytes");
    let beside = format!("{}-beside", work.file_name().unwrap().to_string_lossy());
    let beside_dir = work.parent().unwrap().join(&beside);
    plant(&beside_dir.join("1/0/data.arrow"), b"secret beside");
    plant(
        &d.base.join("elsewhere/1/0/data.arrow"),
        b"secret behind a link",
    );
    std::os::unix::fs::symlink(d.base.join("elsewhere"), work.join("linkjob")).unwrap();

    let served = fetch_bytes(port, Some(SECRET), "job1").await;
    let mut refusals = Vec::new();
    for job in [
        format!("../{beside}"),
        "/etc/passwd".into(),
        "linkjob".into(),
    ] {
        let action = fetch_bytes(port, Some(SECRET), &job).await;
        let do_get = FlightServiceClient::new(channel(port, Some(SECRET)).await)
            .do_get(arrow_flight::Ticket {
                ticket: fetch(&job).into(),
            })
            .await
            .map(|_| ());
        refusals.push((job, action, do_get));
    }
    let _ = std::fs::remove_dir_all(&beside_dir);
    for (job, action, do_get) in refusals {
        let Err(e) = action else {
            panic!("{job} was served")
        };
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{job}: {e}");
        assert!(
            e.message().contains("refused a partition fetch"),
            "{job}: {e}"
        );
        let Err(e) = do_get else {
            panic!("{job} was served by do_get")
        };
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{job}: {e}");
    }
    // The fetches executors and clients make still work.
    assert_eq!(served.unwrap(), b"shuffle bytes");
    let s = cluster_session(&c, &d.inside, Some(token(SECRET))).await;
    assert_eq!(
        cluster_rows(&s, GROUPED).await,
        local_rows(&d.inside, GROUPED).await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn executors_refuse_scans_outside_their_data_roots_and_writes() {
    let d = data();
    let c = LocalCluster::start(&LocalClusterOptions {
        data_roots: vec![d.root.clone()],
        ..Default::default()
    })
    .await
    .expect("cluster starts");
    let want = local_rows(&d.inside, GROUPED).await;
    let inside = cluster_session(&c, &d.inside, None).await;
    assert_eq!(cluster_rows(&inside, GROUPED).await, want);

    // A dataset outside the data root, directly and through a link inside
    // it: the client opens it (it reads it itself), executors refuse.
    for dataset in [&d.outside, &d.link] {
        let s = cluster_session(&c, dataset, None).await;
        let e = cluster_error(&s, GROUPED).await;
        assert!(
            e.contains("refused the task") && e.contains("outside this executor's data roots"),
            "{}: {e}",
            dataset.display()
        );
    }

    // Writes: refused before anything is written.
    let out = d.base.join("copied.parquet");
    let e = cluster_error(
        &inside,
        &format!(
            "COPY (SELECT name, dur_ps FROM events) TO '{}' STORED AS PARQUET",
            out.display()
        ),
    )
    .await;
    assert!(
        e.contains("refused the task") && e.contains("a plan that writes"),
        "{e}"
    );
    assert!(!out.exists());

    // The cluster still answers.
    assert_eq!(cluster_rows(&inside, GROUPED).await, want);
}

/// A scheduler process on 127.0.0.1 with `secret` and `args`; its address.
fn start_scheduler(procs: &mut Processes, secret: Option<&str>, args: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xprof-sql"));
    cmd.args(["cluster", "scheduler", "--bind", "127.0.0.1:0"])
        .args(args)
        .env_remove(cluster::TOKEN_ENV)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(s) = secret {
        cmd.env(cluster::TOKEN_ENV, s);
    }
    let mut child = cmd.spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    procs.0.push(child);
    let addr = first.trim().rsplit(' ').next().unwrap().to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{first:?}");
    addr
}

/// `xprof-sql cluster executor` on a free port of 127.0.0.1.
fn executor_command(scheduler: &str, root: &Path, secret: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xprof-sql"));
    cmd.args(["cluster", "executor", "--scheduler", scheduler, "--bind"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .arg("--data-root")
        .arg(root)
        .args(["--vcores", "2"])
        .env_remove(cluster::TOKEN_ENV);
    if let Some(s) = secret {
        cmd.env(cluster::TOKEN_ENV, s);
    }
    cmd
}

/// `xprof-sql query --cluster` over `dataset`, CSV.
fn query_command(scheduler: &str, dataset: &Path, sql: &str, secret: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xprof-sql"));
    cmd.args(["query", "--cluster", &format!("df://{scheduler}")])
        .arg(dataset)
        .args(["-e", sql, "--format", "csv"])
        .env_remove(cluster::TOKEN_ENV)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(s) = secret {
        cmd.env(cluster::TOKEN_ENV, s);
    }
    cmd
}

#[test]
fn services_refuse_to_listen_beyond_loopback_without_a_token() {
    // 192.0.2.1 is a documentation address (RFC 5737) no interface has:
    // even a broken check could not listen there.
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        vec!["cluster", "scheduler", "--bind", "192.0.2.1:50050"],
        vec![
            "cluster",
            "executor",
            "--scheduler",
            "127.0.0.1:1",
            "--bind",
            "192.0.2.1:50051",
            "--data-root",
            tmp.path().to_str().unwrap(),
        ],
    ] {
        let child = Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
            .args(&args)
            .env_remove(cluster::TOKEN_ENV)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = output_within(child, Duration::from_secs(30), &args.join(" "));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.contains("will not listen on 192.0.2.1:") && stderr.contains("--token-file"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_token_cluster_of_processes_refuses_strangers_and_fails_a_query_whose_executor_died() {
    let d = data();
    let mut procs = Processes(Vec::new());
    let scheduler = start_scheduler(&mut procs, Some(SECRET), &["--executor-timeout", "6"]);

    // An executor with a wrong token stops at once and says why.
    let child = executor_command(&scheduler, &d.root, Some(WRONG))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = output_within(
        child,
        Duration::from_secs(30),
        "an executor with a wrong token",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cluster token is missing or wrong"),
        "{stderr}"
    );
    assert!(!stderr.contains(WRONG), "{stderr}");

    let log = d.base.join("executor.log");
    let executor = executor_command(&scheduler, &d.root, Some(SECRET))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    procs.0.push(executor);

    // A client without the token is refused; with it, the query answers.
    let count = "SELECT count(*) AS n, sum(dur_ps) AS d FROM events";
    let out = output_within(
        query_command(&scheduler, &d.inside, count, None)
            .spawn()
            .unwrap(),
        Duration::from_secs(60),
        "a client without the token",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cluster token is missing or wrong"),
        "{stderr}"
    );
    first_answer(|| {
        output_within(
            query_command(&scheduler, &d.inside, count, Some(SECRET))
                .spawn()
                .unwrap(),
            Duration::from_secs(120),
            count,
        )
    });

    // A query that runs for ever (five copies of the events crossed: some
    // 10^11 rows), its only executor killed under it: the client ends with
    // a clear error, in about 2¼ times the executor timeout.
    let endless = "SELECT count(*) AS n FROM events a, events b, events c, events d, events e \
                   WHERE a.dur_ps + b.dur_ps + c.dur_ps + d.dur_ps + e.dur_ps >= 0";
    let running = query_command(&scheduler, &d.inside, endless, Some(SECRET))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let victim = procs.0.last_mut().unwrap();
    victim.kill().unwrap();
    victim.wait().unwrap();
    let killed = Instant::now();
    let out = output_within(
        running,
        Duration::from_secs(60),
        "the query whose executor died",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.starts_with("xprof-sql: ")
            && stderr.contains("executors were lost"),
        "{}: {stderr} (stdout {:?})",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        killed.elapsed() < Duration::from_secs(30),
        "the error took {:?}",
        killed.elapsed()
    );
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!log.contains(SECRET), "the executor logged the token");
}

#[test]
fn a_loopback_scheduler_given_no_secret_generates_one_that_only_its_user_reads() {
    use std::os::unix::fs::PermissionsExt;
    let d = data();
    // Where this user's runtime files live; another folder stands for a
    // process that cannot read them (another local user).
    let mine = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let mut procs = Processes(Vec::new());
    let mut child = Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(["cluster", "scheduler", "--bind", "127.0.0.1:0"])
        .env_remove(cluster::TOKEN_ENV)
        .env("XDG_RUNTIME_DIR", mine.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    procs.0.push(child);
    let first = lines.next().unwrap().unwrap();
    let scheduler = first.rsplit(' ').next().unwrap().to_string();
    let port: u16 = scheduler.rsplit(':').next().unwrap().parse().unwrap();
    let second = lines.next().unwrap().unwrap();
    let kept = mine
        .path()
        .join(format!("xprof-sql/scheduler-{port}.token"));
    assert!(
        second.contains(&kept.display().to_string()),
        "{second:?} (expected {})",
        kept.display()
    );
    // Before: a loopback scheduler without a secret took every caller.
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&kept), 0o600);
    assert_eq!(mode(kept.parent().unwrap()), 0o700);
    let secret = std::fs::read_to_string(&kept).unwrap();
    assert!(secret.trim().len() >= 64, "{secret:?}");

    let count = "SELECT count(*) AS n FROM events";
    let as_user = |dir: &Path| {
        let mut cmd = query_command(&scheduler, &d.inside, count, None);
        cmd.env("XDG_RUNTIME_DIR", dir);
        output_within(cmd.spawn().unwrap(), Duration::from_secs(60), count)
    };
    // A caller without this user's files is refused.
    let out = as_user(theirs.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cluster token is missing or wrong"),
        "{stderr}"
    );
    // An executor and a client of the same user find the secret.
    let executor = executor_command(&scheduler, &d.root, None)
        .env("XDG_RUNTIME_DIR", mine.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    procs.0.push(executor);
    let out = first_answer(|| as_user(mine.path()));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("n\n"));
}

#[test]
fn a_scheduler_whose_stdout_is_closed_keeps_serving() {
    // A script that reads the address line and closes the pipe: the
    // banner's write fails (EPIPE), and the scheduler exited on it, which
    // left `cluster::a_cluster_of_processes…` without a scheduler now and
    // then (its banner has a second line, the token's path).
    let d = data();
    let mine = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args(["cluster", "scheduler", "--bind"])
        .arg(format!("127.0.0.1:{}", free_port()))
        .env_remove(cluster::TOKEN_ENV)
        .env("XDG_RUNTIME_DIR", mine.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let tokens = mine.path().join("xprof-sql");
    let started = Instant::now();
    let token = loop {
        let found = std::fs::read_dir(&tokens)
            .ok()
            .and_then(|mut entries| entries.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(path) = found {
            break path;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no token file");
        std::thread::sleep(Duration::from_millis(50));
    };
    // Well after the banner's write.
    std::thread::sleep(Duration::from_secs(1));
    let status = child.try_wait().unwrap();
    let mut procs = Processes(vec![child]);
    assert!(status.is_none(), "the scheduler exited: {status:?}");
    let name = token.file_name().unwrap().to_string_lossy().into_owned();
    let port = name
        .trim_start_matches("scheduler-")
        .trim_end_matches(".token");
    let scheduler = format!("127.0.0.1:{port}");
    let executor = executor_command(&scheduler, &d.root, None)
        .env("XDG_RUNTIME_DIR", mine.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    procs.0.push(executor);
    let sql = "SELECT sum(dur_ps) AS d FROM events";
    first_answer(|| {
        let mut cmd = query_command(&scheduler, &d.inside, sql, None);
        cmd.env("XDG_RUNTIME_DIR", mine.path());
        output_within(cmd.spawn().unwrap(), Duration::from_secs(60), sql)
    });
}
