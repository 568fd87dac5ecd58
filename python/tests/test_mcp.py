"""`xprof-sql mcp` through the Model Context Protocol's Python SDK, as an
agent's host connects: its stdio client starts the server, lists the
tools and calls them. Answers are compared with `xprof-sql query`."""

from __future__ import annotations

import asyncio
import json
import math
import pathlib
import shutil

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import FIXTURES, JAX_CPU, KINETO

# A capture other than the example (20 steps, another width).
STEPS20 = FIXTURES / "xspace" / "jax_cpu_mlp_20steps_w256.xplane.pb"


@pytest.fixture(scope="module")
def served_folder(tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("mcp") / "runs"
    folder.mkdir()
    shutil.copy(STEPS20, folder / "steps.xplane.pb")
    return folder


def call(cli, inputs, steps, *extra):
    """Runs `steps(session)` against a fresh `xprof-sql mcp` over stdio."""

    async def main():
        params = StdioServerParameters(
            command=str(cli), args=["mcp", *map(str, inputs), *extra]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await steps(session)

    return asyncio.run(main())


def answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def refusal(result) -> str:
    assert result.is_error, result.content[0].text
    return result.content[0].text


def test_tools_are_listed_with_schemas(cli, served_folder):
    async def steps(session):
        return await session.list_tools()

    tools = {t.name: t for t in call(cli, [JAX_CPU], steps).tools}
    assert set(tools) == {
        "open_inputs", "close_inputs", "list_tables", "describe", "query",
        "run_analysis", "write_report", "export_timeline",
    }
    assert tools["query"].input_schema["required"] == ["sql"]
    assert tools["query"].annotations.read_only_hint is True


def test_a_query_answers_as_the_cli_does_with_units_and_the_total(cli, cli_query):
    sql = "SELECT name, count(*) AS calls, sum(dur_ps) AS total_ps FROM events GROUP BY name ORDER BY total_ps DESC, name"

    async def steps(session):
        return answer(await session.call_tool("query", {"sql": sql, "max_rows": 5}))

    got = call(cli, [JAX_CPU], steps)
    expected = cli_query([JAX_CPU], sql).to_pylist()
    assert got["total_rows"] == len(expected) > 5
    assert got["rows_returned"] == 5 and got["truncated"] is True
    assert got["rows"] == expected[:5]
    units = {c["name"]: c["unit"] for c in got["columns"]}
    assert units["total_ps"] == "picoseconds" and units["calls"] is None
    assert "picoseconds" in got["units"]


def test_tables_are_listed_and_described_with_their_docs(cli):
    async def steps(session):
        listed = answer(await session.call_tool("list_tables", {}))
        described = answer(await session.call_tool("describe", {"name": "events"}))
        view = answer(await session.call_tool("describe", {"name": "op_profile"}))
        return listed, described, view

    listed, described, view = call(cli, [JAX_CPU], steps)
    assert "events" in {t["name"] for t in listed["tables"]}
    assert "op_profile" in {v["name"] for v in listed["views"]}
    columns = {c["name"]: c for c in described["columns"]}
    assert columns["dur_ps"]["unit"] == "picoseconds" and columns["dur_ps"]["doc"]
    assert view["kind"] == "view" and "SELECT" in view["sql"].upper()


def test_an_analysis_runs_by_name(cli, cli_query):
    async def steps(session):
        return answer(await session.call_tool("run_analysis", {"name": "op_profile", "order_by": "1, 2", "max_rows": 1000}))

    got = call(cli, [JAX_CPU], steps)
    expected = cli_query([JAX_CPU], "SELECT * FROM op_profile ORDER BY 1, 2").to_pylist()
    assert got["total_rows"] == len(expected) > 0
    # Sums of doubles differ in their last bit between runs (DataFusion
    # adds partitions' partial sums in the order they finish): doubles are
    # compared to 1e-12 relative, everything else exactly.
    assert len(got["rows"]) == len(expected)
    for row, want in zip(got["rows"], expected):
        assert row.keys() == want.keys()
        for key, value in want.items():
            if isinstance(value, float):
                assert math.isclose(row[key], value, rel_tol=1e-12, abs_tol=0.0), (key, row[key], value)
            else:
                assert row[key] == value, (key, row[key], value)


def test_refusals_say_what_to_do(cli, served_folder, tmp_path):
    async def steps(session):
        write = refusal(await session.call_tool("query", {"sql": "CREATE TABLE t AS SELECT 1"}))
        outside = refusal(await session.call_tool("open_inputs", {"name": "x", "paths": [str(KINETO)]}))
        escape = refusal(await session.call_tool("write_report", {"file_name": "../r.html"}))
        slow = refusal(await session.call_tool(
            "query", {"sql": "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 1000000000) "
                   "SELECT count(*) FROM t"}))
        still = answer(await session.call_tool("query", {"sql": "SELECT 1 AS one"}))
        return write, outside, escape, slow, still

    write, outside, escape, slow, still = call(
        cli, [JAX_CPU, served_folder], steps, "--output-dir", str(tmp_path), "--timeout", "2")
    assert "read-only" in write.lower() and "SELECT" in write
    assert "not readable here" in outside
    assert "plain file name" in escape
    assert "time limit" in slow and "cheaper" in slow
    assert still["rows"] == [{"one": 1}]
    assert list(tmp_path.iterdir()) == []


def test_a_named_session_and_a_report_written(cli, served_folder, tmp_path, cli_query):
    steps_file = served_folder / "steps.xplane.pb"

    async def steps(session):
        opened = answer(await session.call_tool("open_inputs", {"name": "steps", "paths": [str(steps_file)]}))
        count = answer(await session.call_tool("query", {"sql": "SELECT count(*) AS n FROM events", "session": "steps"}))
        report = answer(await session.call_tool("write_report", {"file_name": "steps.html", "session": "steps"}))
        timeline = answer(await session.call_tool(
            "export_timeline", {"sql": "SELECT * FROM events LIMIT 100", "file_name": "t.pftrace", "session": "steps"}))
        closed = answer(await session.call_tool("close_inputs", {"name": "steps"}))
        gone = refusal(await session.call_tool("query", {"sql": "SELECT 1", "session": "steps"}))
        return opened, count, report, timeline, closed, gone

    opened, count, report, timeline, closed, gone = call(
        cli, [JAX_CPU, served_folder], steps, "--output-dir", str(tmp_path))
    assert opened["inputs"] == [str(steps_file.resolve())]
    assert count["rows"] == cli_query([steps_file], "SELECT count(*) AS n FROM events").to_pylist()
    assert pathlib.Path(report["path"]) == tmp_path.resolve() / "steps.html"
    assert pathlib.Path(report["path"]).read_text().startswith("<!DOCTYPE html>")
    assert timeline["events"] == 100 and pathlib.Path(timeline["path"]).stat().st_size > 0
    assert closed == {"closed": "steps"}
    assert "no session named" in gone
