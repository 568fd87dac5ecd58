"""The Python session answers as the CLI does, its schemas are the CLI's,
and its errors say where the input is wrong."""

from __future__ import annotations

import re
import shutil
import subprocess

import pyarrow as pa
import pytest

import xprof_sql
from conftest import JAX_CPU, JAX_GPU, JAX_STEPS, KINETO, PROTON_TREE

# One question per analysis family, over every input format it applies to.
QUERIES = [
    ([JAX_CPU], "SELECT d.name, t.name AS track, count(*) AS n, sum(e.dur_ps) AS total_ps "
                "FROM events e JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) "
                "GROUP BY 1, 2 ORDER BY n DESC, 1, 2"),
    ([JAX_CPU], "SELECT * FROM hlo_stats ORDER BY trace_id, rank"),
    ([JAX_GPU], "SELECT * FROM kernel_stats ORDER BY trace_id, rank"),
    ([JAX_STEPS], "SELECT * FROM step_stats ORDER BY trace_id, device_id"),
    ([KINETO], "SELECT name, count(*) AS n, sum(dur_ps) AS dur FROM events GROUP BY name ORDER BY dur DESC, name LIMIT 50"),
    ([PROTON_TREE], "SELECT * FROM profile_nodes ORDER BY node_id"),
    ([JAX_CPU, JAX_GPU], "SELECT trace_id, source_format, host FROM traces ORDER BY trace_id"),
]


@pytest.mark.parametrize("inputs,sql", QUERIES, ids=[f"q{i}" for i in range(len(QUERIES))])
def test_answers_equal_the_cli(inputs, sql, cli_query):
    got = xprof_sql.open(*inputs).sql(sql)
    want = cli_query(inputs, sql)
    assert got.num_rows == want.num_rows > 0
    assert got.schema.names == want.schema.names
    # Same types (the Parquet round trip of the CLI's answer keeps the
    # Arrow types it wrote) and values (dictionary columns compared by
    # value: the round trip re-encodes their dictionaries).
    assert got.schema.types == want.schema.types
    assert got.to_pylist() == want.to_pylist(), f"{sql}: differs from the CLI"


def _cli_columns(cli, table: str) -> list[tuple[str, bool, str]]:
    """(name, nullable, doc) of a table's columns as `xprof-sql schema TABLE` prints them."""
    text = subprocess.run([str(cli), "schema", table], check=True, capture_output=True, text=True).stdout
    cols = []
    for line in text.splitlines()[1:]:
        m = re.match(
            r"^  (\S+)\s+((?:VARCHAR \(dictionary\)|BIGINT UNSIGNED|[A-Z]+(?:\[\])?)(?: NOT NULL)?)\s+(.*)$", line
        )
        if m:
            cols.append((m.group(1), not m.group(2).endswith("NOT NULL"), m.group(3).strip()))
    return cols


def test_every_table_schema_equals_the_cli_schema(cli):
    s = xprof_sql.open(JAX_CPU)
    tables = s.tables()
    listed = subprocess.run([str(cli), "schema"], check=True, capture_output=True, text=True).stdout
    cli_tables = re.findall(r"^(\w+): ", listed, flags=re.M)
    assert sorted(tables) == sorted(cli_tables)
    for t in tables:
        schema = s.schema(t)
        want = _cli_columns(cli, t)
        assert [(f.name, f.nullable, f.metadata[b"doc"].decode()) for f in schema] == want, t


def test_views_are_the_cli_views(cli):
    listed = subprocess.run([str(cli), "schema"], check=True, capture_output=True, text=True).stdout
    views_part = listed.split("views:", 1)[1].split("table functions", 1)[0]
    cli_views = re.findall(r"^  (\w+): ", views_part, flags=re.M)
    s = xprof_sql.open(JAX_CPU)
    assert sorted(s.views()) == sorted(cli_views)
    # A view's schema is its query's.
    assert s.schema("hlo_stats").names == s.sql("SELECT * FROM hlo_stats LIMIT 0").schema.names


def test_results_go_to_pandas():
    df = xprof_sql.open(JAX_CPU).sql("SELECT hlo_op_name, occurrences FROM hlo_stats").to_pandas()
    assert len(df) > 0 and df["occurrences"].dtype.kind == "i"


def test_sql_batches_stream_the_whole_result():
    s = xprof_sql.open(JAX_CPU)
    total = s.sql("SELECT count(*) AS n FROM events").column("n")[0].as_py()
    batches = s.sql_batches("SELECT event_id, ts_ps FROM events")
    assert batches.schema.names == ["event_id", "ts_ps"]
    rows = 0
    for b in batches:
        assert isinstance(b, pa.RecordBatch)
        rows += b.num_rows
    assert rows == total > 0
    with pytest.raises(StopIteration):
        next(batches)
    # The iterator composes with pyarrow's own reader, under its schema
    # (count(*) is declared NOT NULL).
    counted = s.sql_batches("SELECT count(*) AS n FROM events")
    assert counted.schema.field("n").nullable is False
    reader = pa.RecordBatchReader.from_batches(counted.schema, counted)
    assert reader.read_all().column("n")[0].as_py() == total


def test_a_missing_file_is_an_input_error(tmp_path):
    missing = tmp_path / "nope.xplane.pb"
    with pytest.raises(xprof_sql.InputError) as e:
        xprof_sql.open(missing)
    assert e.value.path is not None and "nope" in e.value.path


def test_a_truncated_profile_names_file_and_offset(tmp_path):
    data = JAX_CPU.read_bytes()
    cut = tmp_path / "cut.xplane.pb"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(xprof_sql.InputError) as e:
        xprof_sql.open(cut)
    assert e.value.path == str(cut)
    assert isinstance(e.value.offset, int) and 0 < e.value.offset <= len(data) // 2
    assert str(e.value.offset) in str(e.value)


def test_bad_sql_is_a_query_error():
    s = xprof_sql.open(JAX_CPU)
    with pytest.raises(xprof_sql.QueryError, match="no_such_table"):
        s.sql("SELECT * FROM no_such_table")
    with pytest.raises(KeyError):
        s.schema("no_such_table")


def test_read_only_sessions_refuse_writes(tmp_path):
    s = xprof_sql.open(JAX_CPU, read_only=True)
    with pytest.raises(xprof_sql.ReadOnlyError):
        s.sql(f"COPY (SELECT 1) TO '{tmp_path / 'x.parquet'}'")
    assert not (tmp_path / "x.parquet").exists()
    assert issubclass(xprof_sql.ReadOnlyError, xprof_sql.QueryError)
    # Reads still answer.
    assert s.sql("SELECT count(*) AS n FROM events").num_rows == 1


# A query that runs for minutes: a cross join of the events with themselves
# and a range, aggregated (nothing to stream out early).
LONG_QUERY = (
    "SELECT sum(a.ts_ps % 7 + b.dur_ps % 5 + r.value) AS s FROM events a, events b, "
    "(SELECT value FROM range(1000000)) r"
)


def test_ctrl_c_cancels_a_running_query():
    import _thread
    import threading

    s = xprof_sql.open(JAX_CPU, threads=2)
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.sql(LONG_QUERY)
    finally:
        timer.cancel()
    # The session still answers.
    assert s.sql("SELECT 1 AS one").column("one")[0].as_py() == 1


def test_timeout_stops_a_statement():
    s = xprof_sql.open(JAX_CPU, timeout=1.0)
    with pytest.raises(xprof_sql.QueryError, match="time limit"):
        s.sql(LONG_QUERY)


def test_memory_limit_and_threads_are_applied():
    s = xprof_sql.open(JAX_CPU, memory_limit="256M", threads=3)
    got = s.sql("SELECT name, value FROM information_schema.df_settings "
                "WHERE name = 'datafusion.execution.target_partitions'")
    assert got.column("value")[0].as_py() == "3"
    with pytest.raises(ValueError):
        xprof_sql.open(JAX_CPU, memory_limit="lots")


def test_a_dataset_from_the_cli_opens(cli, tmp_path):
    subprocess.run([str(cli), "convert", str(JAX_GPU), "-o", str(tmp_path / "ds"), "--quiet"], check=True)
    raw = xprof_sql.open(JAX_GPU).sql("SELECT count(*) AS n, sum(dur_ps) AS d FROM events")
    ds = xprof_sql.open(tmp_path / "ds").sql("SELECT count(*) AS n, sum(dur_ps) AS d FROM events")
    assert raw.equals(ds)
    shutil.rmtree(tmp_path / "ds")
