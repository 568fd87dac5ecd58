"""DuckDB's side of target 4 (benches/README.md): runs benches/queries/*.sql
on a converted dataset with DuckDB, in process, and prints the median of 5
runs after a warm-up. Every table folder of the dataset becomes a view of
the same name, so the SQL is the same text xprof-sql runs.

    ~/.cache/xprof-ref-venv/bin/python benches/duckdb_queries.py DATASET [QUERY.sql ...]
(the venv is made by `shared/bench/reference.sh setup`).

With ONCE=1 each query runs once, with no warm-up: time the whole process
(`/usr/bin/time`) to compare with one `xprof-sql query DATASET -f QUERY.sql`.
"""
import glob
import os
import statistics
import sys
import time

import duckdb


def main():
    dataset = sys.argv[1]
    queries = sys.argv[2:] or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "queries", "*.sql")))
    con = duckdb.connect()
    threads = os.environ.get("THREADS")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    for table in sorted(os.listdir(dataset)):
        files = os.path.join(dataset, table, "*.parquet")
        if glob.glob(files):
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{files}')")
    print(f"duckdb {duckdb.__version__}, threads {con.execute('SELECT current_setting(' + repr('threads') + ')').fetchone()[0]}")
    for path in queries:
        sql = open(path).read()
        if os.environ.get("ONCE"):
            t = time.perf_counter()
            rows = con.execute(sql).fetchall()
            print(f"{os.path.basename(path):20} once {time.perf_counter() - t:.3f} s  ({len(rows)} rows)")
            continue
        con.execute(sql).fetchall()  # warm-up (file metadata, page cache)
        times = []
        for _ in range(5):
            t = time.perf_counter()
            rows = con.execute(sql).fetchall()
            times.append(time.perf_counter() - t)
        print(f"{os.path.basename(path):20} median {statistics.median(times):.3f} s  (min {min(times):.3f}, {len(rows)} rows)")


if __name__ == "__main__":
    main()
