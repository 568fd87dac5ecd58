"""Reads a warehouse written by `xprof-sql convert --partition-by run,host`
with two independent engines, DuckDB (`read_parquet(..., hive_partitioning
= true)`) and pyarrow datasets (`partitioning="hive"`), as their users would,
and checks their answers against the CLI's on the same folder:

- per table, per (run, host): the row count;
- events per (run, host): the sum of `dur_ps` and of `ts_ps`, and the
  trace ids;
- traces: (trace_id, run, host) rows, where the folder's values (which
  DuckDB puts over the file's own `run` and `host`) are the columns';
- the events of one run (`WHERE run = ...`, a filter on the folders).

usage: python3 tests/read_warehouse.py WAREHOUSE_DIR XPROF_SQL_BINARY
(needs the duckdb and pyarrow packages)
"""
import csv, io, pathlib, subprocess, sys

import duckdb
import pyarrow.dataset as ds

root = pathlib.Path(sys.argv[1])
cli = sys.argv[2]


def cli_rows(sql):
    out = subprocess.run([cli, "query", str(root), "-e", sql, "--format", "csv"],
                         check=True, capture_output=True, text=True).stdout
    return [tuple(r.values()) for r in csv.DictReader(io.StringIO(out))]


def duck(sql):
    return [tuple(str(v) for v in r) for r in duckdb.sql(sql).fetchall()]


def files(table):
    return f"read_parquet('{root}/{table}/**/*.parquet', hive_partitioning = true)"


tables = sorted(p.name for p in root.iterdir() if p.is_dir())
assert "events" in tables and "traces" in tables, tables
runs = sorted({p.name.split("=", 1)[1] for p in (root / "events").iterdir()})
assert len(runs) >= 2, f"want several runs, have {runs}"
checked = 0
for t in tables:
    if t == "traces":
        continue  # its own run and host columns: below
    ours = sorted(cli_rows(f"SELECT run, host, count(*) FROM {t} GROUP BY run, host"))
    theirs = sorted(duck(f"SELECT run, host, count(*) FROM {files(t)} GROUP BY ALL"))
    assert ours == theirs, (t, ours, theirs)
    arrow = ds.dataset(str(root / t), format="parquet", partitioning="hive").to_table(
        columns=["run", "host"])
    counts = arrow.group_by(["run", "host"]).aggregate([("run", "count")]).to_pylist()
    by_arrow = sorted((r["run"], r["host"], str(r["run_count"])) for r in counts)
    assert ours == by_arrow, (t, ours, by_arrow)
    checked += sum(int(r[2]) for r in ours)
print(f"{len(tables) - 1} tables, {checked} rows per (run, host) agree: CLI, DuckDB, pyarrow")

sums = "sum(dur_ps), sum(ts_ps), min(trace_id), max(trace_id)"
ours = sorted(cli_rows(f"SELECT run, host, {sums} FROM events GROUP BY run, host"))
theirs = sorted(duck(f"SELECT run, host, {sums} FROM {files('events')} GROUP BY ALL"))
assert ours == theirs, (ours, theirs)
ev = ds.dataset(str(root / "events"), format="parquet", partitioning="hive").to_table(
    columns=["run", "host", "dur_ps", "ts_ps", "trace_id"])
agg = ev.group_by(["run", "host"]).aggregate(
    [("dur_ps", "sum"), ("ts_ps", "sum"), ("trace_id", "min"), ("trace_id", "max")])
by_arrow = sorted((r["run"], r["host"], str(r["dur_ps_sum"]), str(r["ts_ps_sum"]),
                   str(r["trace_id_min"]), str(r["trace_id_max"])) for r in agg.to_pylist())
assert ours == by_arrow, (ours, by_arrow)

ours = sorted(cli_rows("SELECT trace_id, run, host FROM traces"))
theirs = sorted(duck(f"SELECT trace_id, run, host FROM {files('traces')}"))
assert ours == theirs, (ours, theirs)

one = runs[0]
n = cli_rows(f"SELECT count(*) FROM events WHERE run = '{one}'")[0][0]
assert duck(f"SELECT count(*) FROM {files('events')} WHERE run = '{one}'") == [(n,)]
print(f"events, traces and run {one} ({n} events) agree")
