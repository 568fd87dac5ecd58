"""Reads every table of an xprof-sql Parquet dataset with pyarrow (an
independent reader) and checks the basics: every table folder is there,
the schema version is in the metadata, and events are sorted as declared ((track_id, ts_ps): track ids are
numbered device by device).

usage: python3 tests/read_dataset.py DATASET_DIR
"""
import sys, pathlib
import pyarrow.dataset as ds
import pyarrow.parquet as pq

root = pathlib.Path(sys.argv[1])
tables = ["traces", "devices", "device_args", "tracks", "events", "event_args",
          "event_metadata", "metadata_args", "stat_metadata", "counters", "flows", "hlo_ops",
          "hlo_instructions", "llo_programs", "llo_regions", "llo_bundle_units",
          "llo_program_instructions", "llo_allocations", "llo_dump_bundles", "llo_dump_ops",
          "llo_dump_bundle_units", "llo_dump_schedule", "llo_dump_allocations",
          "profile_nodes", "node_metrics"]
SCHEMA_VERSION = b"4"  # xprof_format::SCHEMA_VERSION
for t in tables:
    files = sorted((root / t).glob("*.parquet"))
    assert files, f"{t}: no files"
    for f in files:
        md = pq.read_metadata(f).metadata
        assert md[b"xprof_sql.schema_version"] == SCHEMA_VERSION, f
    table = ds.dataset([str(f) for f in files], format="parquet").to_table()
    print(f"{t}: {table.num_rows} rows, {len(files)} files")
ev = ds.dataset(str(root / "events"), format="parquet").to_table()
traces = ds.dataset(str(root / "traces"), format="parquet").to_table()
assert ev.num_rows > 0 and traces.num_rows >= 1
for f in sorted((root / "events").glob("*.parquet")):
    t = pq.read_table(f, columns=["track_id", "ts_ps"]).to_pylist()
    keys = [(r["track_id"], r["ts_ps"]) for r in t]
    assert keys == sorted(keys), f"{f}: not sorted by (track_id, ts_ps)"
print("pyarrow read every table: ok")
