"""Reads every table of an xprof-sql Parquet dataset with pyarrow (an
independent reader) and checks it against the CLI's answers on the same
dataset: every table folder is there, the schema version is in the
metadata, every table has the row count `SELECT count(*)` gives, a few
sums agree (event times and durations, counter values, stat values), and
events are sorted as declared ((track_id, ts_ps): track ids are numbered
device by device).

usage: python3 tests/read_dataset.py DATASET_DIR XPROF_SQL_BINARY
"""
import csv, io, subprocess, sys, pathlib
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

root = pathlib.Path(sys.argv[1])
cli = sys.argv[2]


def cli_rows(sql):
    """The CLI's answer to `sql` over the dataset, as a list of dicts."""
    out = subprocess.run([cli, "query", str(root), "-e", sql, "--format", "csv"],
                         check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


tables = ["traces", "devices", "device_args", "tracks", "events", "event_args",
          "event_metadata", "metadata_args", "stat_metadata", "counters", "flows", "hlo_ops",
          "hlo_instructions", "llo_programs", "llo_regions", "llo_bundle_units",
          "llo_program_instructions", "llo_allocations", "llo_register_live_ranges",
          "llo_register_pressure", "llo_bdi_stalls", "llo_bundle_sources", "llo_target_info",
          "llo_dump_bundles", "llo_dump_ops",
          "llo_dump_bundle_units", "llo_dump_schedule", "llo_dump_allocations",
          "profile_nodes", "node_metrics"]
SCHEMA_VERSION = b"7"  # xprof_format::SCHEMA_VERSION
counts = {}
for t in tables:
    files = sorted((root / t).glob("*.parquet"))
    assert files, f"{t}: no files"
    for f in files:
        md = pq.read_metadata(f).metadata
        assert md[b"xprof_sql.schema_version"] == SCHEMA_VERSION, f
    table = ds.dataset([str(f) for f in files], format="parquet").to_table()
    print(f"{t}: {table.num_rows} rows, {len(files)} files")
    counts[t] = table.num_rows
ev = ds.dataset(str(root / "events"), format="parquet").to_table()
traces = ds.dataset(str(root / "traces"), format="parquet").to_table()
assert ev.num_rows > 0 and traces.num_rows >= 1
for f in sorted((root / "events").glob("*.parquet")):
    t = pq.read_table(f, columns=["track_id", "ts_ps"]).to_pylist()
    keys = [(r["track_id"], r["ts_ps"]) for r in t]
    assert keys == sorted(keys), f"{f}: not sorted by (track_id, ts_ps)"

# The CLI's answers on the same dataset.
want = cli_rows(" UNION ALL ".join(f"SELECT '{t}' AS t, count(*) AS n FROM {t}" for t in tables))
assert {r["t"]: int(r["n"]) for r in want} == counts, (want, counts)
assert counts["events"] > 1000 and counts["counters"] > 0 and counts["llo_regions"] > 0, counts


def column(table, name):
    return ds.dataset(str(root / table), format="parquet").to_table(columns=[name])[name]


sums = cli_rows("SELECT (SELECT min(ts_ps) FROM events) AS first_ts, (SELECT max(ts_ps) FROM events) AS last_ts, "
                "(SELECT sum(dur_ps) FROM events) AS dur, (SELECT sum(value) FROM counters) AS counter, "
                "(SELECT count(int_value) FROM event_args) AS int_args, "
                "(SELECT sum(length(str_value)) FROM event_args) AS str_chars, "
                "(SELECT count(DISTINCT trace_id) FROM traces) AS traces")[0]
ts = column("events", "ts_ps")
assert int(sums["first_ts"]) == pc.min(ts).as_py() and int(sums["last_ts"]) == pc.max(ts).as_py(), sums
assert int(sums["dur"]) == pc.sum(column("events", "dur_ps")).as_py(), sums
counter = pc.sum(column("counters", "value")).as_py()
assert abs(float(sums["counter"]) - counter) <= 1e-9 * abs(counter), (sums, counter)
assert int(sums["int_args"]) == pc.count(column("event_args", "int_value")).as_py(), sums
assert int(sums["str_chars"]) == pc.sum(pc.utf8_length(column("event_args", "str_value"))).as_py(), sums
assert int(sums["traces"]) == len(set(traces.column("trace_id").to_pylist())), sums
print("pyarrow read every table, and it agrees with the CLI: ok")
