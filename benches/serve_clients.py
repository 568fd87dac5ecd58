#!/usr/bin/env python3
"""Many clients at once against `xprof-sql serve` (issue 63).

    serve_clients.py XPROF_SQL DATASET [--clients 16] [--rounds 5] [--memory-limit 2G]

Starts `XPROF_SQL serve DATASET`, then CLIENTS threads, each with its own
ADBC Flight SQL connection, run every query of QUERIES ROUNDS times. Every
answer must equal `XPROF_SQL query DATASET -e SQL` (run once per query,
before the server starts). Prints, per query, the median and the largest
latency seen by clients, then the server's peak resident memory (VmHWM)
and its resident memory when idle after the run. Needs
`pip install adbc-driver-flightsql pyarrow`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import pathlib
import statistics
import subprocess
import tempfile
import time

import adbc_driver_flightsql.dbapi as flight_sql
import pyarrow.parquet as pq

QUERIES = {
    "count": "SELECT count(*) AS n FROM events",
    "top_ops": "SELECT name, count(*) AS calls, sum(dur_ps) AS total_ps FROM events "
    "GROUP BY name ORDER BY total_ps DESC, name LIMIT 20",
    "op_profile": "SELECT * FROM op_profile ORDER BY 1, 2, 3 LIMIT 50",
    "step_stats": "SELECT * FROM step_stats ORDER BY 1, 2, 3",
    "long_events": "SELECT trace_id, event_id, name, dur_ps FROM events "
    "ORDER BY dur_ps DESC, event_id LIMIT 100",
}


def status_kib(pid: int, key: str) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("xprof_sql")
    parser.add_argument("dataset")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memory-limit", default="2G")
    args = parser.parse_args()

    expected = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, sql in QUERIES.items():
            out = pathlib.Path(tmp) / f"{name}.parquet"
            subprocess.run(
                [args.xprof_sql, "query", args.dataset, "-e", sql, "--format", "parquet", "-o", str(out)],
                check=True,
                capture_output=True,
            )
            expected[name] = pq.read_table(out).to_pylist()

    server = subprocess.Popen(
        [args.xprof_sql, "serve", args.dataset, "--bind", "127.0.0.1:0", "--memory-limit", args.memory_limit],
        stdout=subprocess.PIPE,
        text=True,
    )
    uri = server.stdout.readline().strip().split(" on ")[-1]
    opened_kib = status_kib(server.pid, "VmRSS")

    # One client alone first: the answer time of a small query once the
    # session is open (issue 63, part 3's serve target: <= 20 ms).
    alone = {"SELECT 1": [], "SELECT count(*) FROM events": []}
    with flight_sql.connect(uri) as conn, conn.cursor() as cur:
        for sql in alone:
            cur.execute(sql)
            cur.fetchall()
            for _ in range(30):
                started = time.perf_counter()
                cur.execute(sql)
                cur.fetchall()
                alone[sql].append(time.perf_counter() - started)

    def client(index: int) -> dict[str, list[float]]:
        seen: dict[str, list[float]] = {name: [] for name in QUERIES}
        with flight_sql.connect(uri) as conn, conn.cursor() as cur:
            for _ in range(args.rounds):
                for name, sql in QUERIES.items():
                    started = time.perf_counter()
                    cur.execute(sql)
                    rows = cur.fetch_arrow_table().to_pylist()
                    seen[name].append(time.perf_counter() - started)
                    if rows != expected[name]:
                        raise AssertionError(f"client {index}: {name} answered differently from the CLI")
        return seen

    started = time.perf_counter()
    try:
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            results = list(pool.map(client, range(args.clients)))
        wall = time.perf_counter() - started
        time.sleep(1.0)
        peak_kib = status_kib(server.pid, "VmHWM")
        idle_kib = status_kib(server.pid, "VmRSS")
    finally:
        server.terminate()
        server.wait()

    for sql, times in alone.items():
        print(f"one client, after its first query: {sql!r} median {statistics.median(times) * 1e3:.1f} ms "
              f"over {len(times)}")
    answers = args.clients * args.rounds * len(QUERIES)
    print(f"{args.clients} clients x {args.rounds} rounds x {len(QUERIES)} queries = {answers} answers, "
          f"all equal to `xprof-sql query`, in {wall:.2f} s")
    print(f"{'query':<12} {'median ms':>10} {'max ms':>10}")
    for name in QUERIES:
        times = [t for r in results for t in r[name]]
        print(f"{name:<12} {statistics.median(times) * 1e3:>10.1f} {max(times) * 1e3:>10.1f}")
    print(f"server resident memory: {opened_kib / 1024:.0f} MiB after opening, "
          f"peak {peak_kib / 1024:.0f} MiB, {idle_kib / 1024:.0f} MiB idle after the run "
          f"(--memory-limit {args.memory_limit})")


if __name__ == "__main__":
    main()
