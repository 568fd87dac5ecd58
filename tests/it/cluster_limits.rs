//! A cluster that cannot answer is an error in bounded time, and a query
//! the client gives up on stops on the cluster (issue 60): a scheduler
//! that accepts connections and never answers, a scheduler with no
//! executor, and a query stopped by its time limit whose tasks must not
//! run on.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use xprof_sql::cluster::{self, LocalCluster, LocalClusterOptions, SchedulerOptions};
use xprof_sql::query::SessionOptions;

use crate::cluster::{cluster_query_command, output_within, two_run_warehouse};

/// A port that accepts connections and never answers on them: what a
/// stopped (SIGSTOP) scheduler or a black-hole proxy looks like.
fn silent_port() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepting = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in accepting.incoming().flatten() {
            held.push(stream);
        }
    });
    (listener, port)
}

#[test]
fn a_silent_scheduler_is_an_error_within_the_time_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = two_run_warehouse(tmp.path());
    let (_listener, port) = silent_port();
    let url = format!("127.0.0.1:{port}");
    let mut cmd = cluster_query_command(&url, &wh, "SELECT count(*) FROM events");
    cmd.args(["--timeout", "2"]);
    let started = Instant::now();
    // Before: still waiting at 60 s.
    let out = output_within(
        cmd.spawn().unwrap(),
        Duration::from_secs(30),
        "silent scheduler",
    );
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&url) && stderr.contains("did not answer"),
        "{stderr}"
    );
    // The limit, and the time to start the process and read the warehouse.
    assert!(took < Duration::from_secs(15), "took {took:?}: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_scheduler_is_an_error_for_the_library_too() {
    let (_listener, port) = silent_port();
    let started = Instant::now();
    let e = match cluster::connect(&format!("127.0.0.1:{port}"), SessionOptions::default()).await {
        Ok(_) => panic!("connected to a silent port"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("did not answer within 10 s"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(20), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduler_without_executors_refuses_a_query_in_bounded_time() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = two_run_warehouse(tmp.path());
    let scheduler = cluster::start_scheduler(&SchedulerOptions {
        bind: "127.0.0.1:0".parse().unwrap(),
        executor_timeout: cluster::MIN_EXECUTOR_TIMEOUT,
        token: None,
    })
    .await
    .unwrap();
    let url = format!("df://{}", scheduler.addr());
    let mut session = cluster::connect(&url, SessionOptions::default())
        .await
        .unwrap();
    cluster::open(&mut session, &[&wh]).await.unwrap();
    let started = Instant::now();
    // Before: the query waited for minutes without a word.
    let e = tokio::time::timeout(
        Duration::from_secs(60),
        // A sum reads the files (a count is answered from their metadata).
        session.collect("SELECT sum(dur_ps) FROM events"),
    )
    .await
    .expect("an answer within 60 s")
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("no executor is registered") && e.contains("cluster executor"),
        "{e}"
    );
    let took = started.elapsed();
    assert!(
        took >= cluster::MIN_EXECUTOR_TIMEOUT && took < Duration::from_secs(20),
        "took {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_the_client_gives_up_on_stops_on_the_executors() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = two_run_warehouse(tmp.path());
    let cluster = LocalCluster::start(&LocalClusterOptions {
        executors: 1,
        vcores: 1,
        data_roots: vec![wh.clone()],
        ..Default::default()
    })
    .await
    .unwrap();
    let options = SessionOptions {
        query_timeout: Some(Duration::from_secs(3)),
        ..Default::default()
    };
    let mut session = cluster::connect(&cluster.url(), options).await.unwrap();
    cluster::open(&mut session, &[&wh]).await.unwrap();
    // Hours of work: every four events of some 800 (10^11 rows).
    let endless = "SELECT count(*) FROM events a, events b, events c, events d \
                   WHERE a.ts_ps + b.ts_ps > c.ts_ps + d.dur_ps";
    let query = session.collect(endless);
    let watch = async {
        let since = Instant::now();
        while cluster.running_tasks() == 0 {
            assert!(since.elapsed() < Duration::from_secs(30), "no task started");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let (answer, ()) = tokio::join!(query, watch);
    let e = answer.unwrap_err().to_string();
    assert!(e.contains("time limit") || e.contains("timeout"), "{e}");
    cluster::wait_for_cancellations();
    // Before: the executor kept the task running for as long as it took.
    let since = Instant::now();
    while cluster.running_tasks() > 0 {
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "{} tasks still running 10 s after the client gave up",
            cluster.running_tasks()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
