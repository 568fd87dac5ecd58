"""Other engines use the tables: DataFusion-Python registers them through
the FFI table provider capsule, DuckDB and pandas read returned tables."""

from __future__ import annotations

import pyarrow as pa
import pytest

import xprof_sql
from conftest import JAX_CPU, JAX_GPU


@pytest.fixture(scope="module")
def session():
    return xprof_sql.open(JAX_CPU, JAX_GPU)


def test_datafusion_python_registers_our_tables(session):
    import datafusion
    ctx = datafusion.SessionContext()
    ctx.register_table("events", session.table_provider("events"))
    ctx.register_table("hlo_stats", session.table_provider("hlo_stats"))
    want = session.sql("SELECT trace_id, count(*) AS n, sum(dur_ps) AS d FROM events GROUP BY trace_id ORDER BY trace_id")
    got = ctx.sql("SELECT trace_id, count(*) AS n, sum(dur_ps) AS d FROM events GROUP BY trace_id ORDER BY trace_id").to_arrow_table()
    assert got.num_rows == 2
    assert got.to_pylist() == want.to_pylist()
    # A view through the provider answers as the session does.
    want_hlo = session.sql("SELECT trace_id, hlo_op_name, total_self_time_us, rank FROM hlo_stats ORDER BY 3 DESC, 2, 1, rank")
    got_hlo = ctx.sql("SELECT trace_id, hlo_op_name, total_self_time_us, rank FROM hlo_stats ORDER BY 3 DESC, 2, 1, rank").to_arrow_table()
    assert got_hlo.num_rows > 0 and got_hlo.to_pylist() == want_hlo.to_pylist()


def test_datafusion_python_joins_our_tables_with_its_own(session):
    import datafusion
    ctx = datafusion.SessionContext()
    ctx.register_table("events", session.table_provider("events"))
    top = session.sql("SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC, name LIMIT 3")
    names = top.column("name").to_pylist()
    # The user's own table: an owner per op name.
    ctx.from_pydict({"name": names, "owner": ["alice", "bob", "carol"]}, name="owners")
    got = ctx.sql(
        "SELECT o.owner, count(*) AS n FROM events e JOIN owners o ON e.name = o.name "
        "GROUP BY o.owner ORDER BY o.owner"
    ).to_pydict()
    want = dict(zip(names, top.column("n").to_pylist()))
    assert got["owner"] == ["alice", "bob", "carol"]
    assert got["n"] == [want[names[0]], want[names[1]], want[names[2]]]


def test_duckdb_queries_a_returned_table(session):
    import duckdb
    events = session.sql("SELECT trace_id, name, dur_ps FROM events")  # noqa: F841 - read by DuckDB by name
    got = duckdb.sql("SELECT trace_id, count(*) AS n, sum(dur_ps) AS d FROM events GROUP BY trace_id ORDER BY trace_id").arrow()
    if isinstance(got, pa.RecordBatchReader):
        got = got.read_all()
    want = session.sql("SELECT trace_id, count(*) AS n, sum(dur_ps) AS d FROM events GROUP BY trace_id ORDER BY trace_id")
    assert got.column("n").to_pylist() == want.column("n").to_pylist()
    assert [int(d) for d in got.column("d").to_pylist()] == want.column("d").to_pylist()


def test_results_are_handed_over_without_a_copy(session):
    # pyarrow reads the Rust buffers in place: importing the same result
    # twice gives two tables, each a view of batches Rust allocated; the
    # C data interface leaves no Python-side copy to make (a copy would show
    # as buffers owned by pyarrow's pool).
    pool = pa.default_memory_pool()
    before = pool.bytes_allocated()
    t = session.sql("SELECT * FROM events")
    assert t.nbytes > 50_000
    assert pool.bytes_allocated() - before < t.nbytes // 10
