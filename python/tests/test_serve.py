"""`xprof-sql serve` through real Flight SQL clients: the ADBC Flight SQL
driver (as a tool connects) and pyarrow.flight (for the server's own
actions). Answers are compared with `xprof-sql query` on the same inputs."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import adbc_driver_flightsql
import adbc_driver_flightsql.dbapi as flight_sql
import adbc_driver_manager
import pyarrow as pa
import pyarrow.flight as flight
import pytest

from conftest import FIXTURES, JAX_CPU, KINETO

# A capture other than the example (20 steps, another width).
STEPS20 = FIXTURES / "xspace" / "jax_cpu_mlp_20steps_w256.xplane.pb"

TOKEN = "test-token-0123456789"
SESSION_HEADER = adbc_driver_flightsql.DatabaseOptions.RPC_CALL_HEADER_PREFIX.value + "x-xprof-session"
AUTH_HEADER = adbc_driver_flightsql.DatabaseOptions.AUTHORIZATION_HEADER.value


class Server:
    """A `serve` process: its address and process id."""

    def __init__(self, cli: pathlib.Path, inputs: list[pathlib.Path], *args: str, token: str | None = None):
        env = dict(os.environ)
        env.pop("XPROF_SQL_TOKEN", None)
        if token is not None:
            env["XPROF_SQL_TOKEN"] = token
        self.process = subprocess.Popen(
            [str(cli), "serve", *map(str, inputs), "--bind", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        line = self.process.stdout.readline()
        if "grpc://" not in line:
            self.process.kill()
            raise AssertionError(f"serve did not start: {line!r} {self.process.stderr.read()}")
        self.uri = line.strip().split(" on ")[-1]

    def connect(self, **db_kwargs):
        return flight_sql.connect(self.uri, db_kwargs=db_kwargs)

    def cpu_seconds(self) -> float:
        """User and system CPU time of the process so far."""
        fields = pathlib.Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="module")
def served_folder(tmp_path_factory) -> pathlib.Path:
    """A folder of two captures, served; clients may open what is in it."""
    folder = tmp_path_factory.mktemp("served") / "runs"
    folder.mkdir()
    shutil.copy(STEPS20, folder / "steps.xplane.pb")
    shutil.copy(KINETO, folder / "kineto.json")
    return folder


@pytest.fixture(scope="module")
def server(cli, served_folder):
    """A loopback server without a token over the CLI example and a folder."""
    s = Server(cli, [JAX_CPU, served_folder], "--timeout", "120")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def guarded(cli):
    """A server whose calls must carry a token."""
    s = Server(cli, [JAX_CPU], token=TOKEN)
    yield s
    s.stop()


def test_a_query_answers_as_the_cli_does(server, served_folder, cli_query):
    sql = (
        "SELECT name, count(*) AS calls, sum(dur_ps) AS total_ps FROM events "
        "GROUP BY name ORDER BY total_ps DESC, name LIMIT 20"
    )
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(sql)
        answer = cur.fetch_arrow_table()
    expected = cli_query([JAX_CPU, served_folder], sql)
    assert answer.num_rows == expected.num_rows > 0
    assert answer.column_names == expected.column_names
    assert answer.to_pylist() == expected.to_pylist()


def test_catalog_calls_list_tables_and_views_with_column_docs(server, cli):
    with server.connect() as conn:
        assert set(conn.adbc_get_table_types()) >= {"TABLE", "VIEW"}
        info = conn.adbc_get_info()
        assert info["vendor_name"] == "xprof-sql"
        objects = conn.adbc_get_objects(depth="tables", db_schema_filter="xprof").read_all().to_pylist()
        tables = {
            t["table_name"]: t["table_type"]
            for catalog in objects
            for schema in catalog["catalog_db_schemas"]
            for t in schema["db_schema_tables"]
        }
        schema = conn.adbc_get_table_schema("events", db_schema_filter="xprof")
    assert tables["events"] == "TABLE"
    assert tables["op_profile"] == "VIEW"
    assert not [name for name in tables if name.startswith("_")], "helper views stay unlisted"
    # Each column carries the text `xprof-sql schema events` prints for it.
    printed = subprocess.run([str(cli), "schema", "events"], check=True, capture_output=True, text=True).stdout
    docs = {}
    for line in printed.splitlines()[1:]:
        parts = line.split(None, 1)
        if len(parts) == 2:
            rest = parts[1].replace(" NOT NULL", "", 1).split(None, 1)
            docs[parts[0]] = rest[1].strip() if len(rest) > 1 else ""
    remarks = {
        f.name: f.metadata[b"ARROW:FLIGHT:SQL:REMARKS"].decode()
        for f in schema
        if f.metadata and b"ARROW:FLIGHT:SQL:REMARKS" in f.metadata
    }
    assert remarks["ts_ps"] == docs["ts_ps"] != ""
    assert remarks["dur_ps"] == docs["dur_ps"] != ""
    assert set(remarks) == {f.name for f in schema}


def test_a_prepared_statement_binds_parameters(server, served_folder, cli_query):
    sql = "SELECT count(*) AS n, sum(dur_ps) AS total_ps FROM events WHERE dur_ps > $1 AND name LIKE $2"
    with server.connect() as conn, conn.cursor() as cur:
        answers = []
        for threshold in (100_000, 50_000_000):
            cur.execute(sql, parameters=(threshold, "%dot%"))
            answers.append(cur.fetch_arrow_table().to_pylist())
    for threshold, answer in zip((100_000, 50_000_000), answers):
        literal = sql.replace("$1", str(threshold)).replace("$2", "'%dot%'")
        assert answer == cli_query([JAX_CPU, served_folder], literal).to_pylist()
    assert answers[0] != answers[1], "the two bindings select different events"
    assert answers[0][0]["n"] > 0


def test_a_token_is_required_when_set(guarded):
    for kwargs in ({}, {AUTH_HEADER: "Bearer wrong-token"}):
        with pytest.raises(adbc_driver_manager.Error) as refused:
            with guarded.connect(**kwargs) as conn, conn.cursor() as cur:
                cur.execute("SELECT 1")
                cur.fetchall()
        assert "token" in str(refused.value)
        assert "UNAUTHENTICATED" in str(refused.value).upper()
    # The token as a bearer header, and as basic auth's password (the
    # handshake answers with the bearer form).
    for kwargs in ({AUTH_HEADER: f"Bearer {TOKEN}"}, {"username": "anyone", "password": TOKEN}):
        with guarded.connect(**kwargs) as conn, conn.cursor() as cur:
            cur.execute("SELECT count(*) AS n FROM events")
            assert cur.fetchone()[0] > 0


def test_off_loopback_without_a_token_is_refused(cli):
    refused = subprocess.run(
        [str(cli), "serve", str(JAX_CPU), "--bind", "0.0.0.0:0"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "XPROF_SQL_TOKEN"},
        timeout=60,
    )
    assert refused.returncode == 1
    assert "not a loopback address" in refused.stderr
    assert refused.stdout == ""


def test_writes_are_refused(server):
    with server.connect() as conn, conn.cursor() as cur:
        for sql in ("CREATE TABLE t AS SELECT 1 AS a", "INSERT INTO events SELECT * FROM events"):
            with pytest.raises(adbc_driver_manager.Error) as refused:
                cur.execute(sql)
                cur.fetchall()
            assert "PermissionDenied" in str(refused.value), str(refused.value)
            assert "read-only" in str(refused.value)
        # An update through Flight SQL's own ExecuteUpdate.
        cur.adbc_statement.set_sql_query("DELETE FROM events")
        with pytest.raises(adbc_driver_manager.Error) as refused:
            cur.adbc_statement.execute_update()
        assert "PermissionDenied" in str(refused.value), str(refused.value)
        assert "read-only" in str(refused.value)
        # Still answers.
        cur.execute("SELECT 1 AS one")
        assert cur.fetchone() == (1,)


# A query that computes without sending anything for far longer than
# any test waits (a billion steps of a recursive CTE, ~1.3 cores), and
# whose operators yield often, so that a stop takes effect at once.
HEAVY = (
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 1000000000) "
    "SELECT count(*) FROM t"
)


def settles(server: Server, within_s: float) -> bool:
    """Whether the server's CPU comes to rest (under 0.2 s in a second)
    within `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        before = server.cpu_seconds()
        time.sleep(1.0)
        if server.cpu_seconds() - before < 0.2:
            return True
    return False


def test_a_long_query_is_cut_by_the_time_limit(cli):
    server = Server(cli, [JAX_CPU], "--timeout", "2")
    try:
        cut_within_limit(server)
    finally:
        server.stop()


def cut_within_limit(server: Server):
    started = time.monotonic()
    with server.connect() as conn, conn.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error) as cut:
            cur.execute(HEAVY)
            cur.fetchall()
        assert "time limit" in str(cut.value)
        assert "DEADLINE" in str(cut.value).upper()
        cur.execute("SELECT 2 AS two")
        assert cur.fetchone() == (2,)
    assert time.monotonic() - started < 30
    # The cut query stops computing too.
    assert settles(server, 15.0)


def test_a_client_that_stops_reading_or_goes_away_stops_its_query(cli):
    # No time limit to speak of: only the client's going away can stop
    # the query.
    patient = Server(cli, [JAX_CPU], "--timeout", "3600")
    try:
        # A client that stops reading holds the server at rest: each batch
        # is made when the client asks for it.
        with patient.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT a.event_id, b.event_id AS other FROM events a, events b")
            reader = cur.fetch_record_batch()
            assert reader.read_next_batch().num_rows > 0
            assert settles(patient, 5.0)
            before = patient.cpu_seconds()
            time.sleep(2.0)
            assert patient.cpu_seconds() - before < 0.2
        # A client killed in the middle of a query that computes without
        # sending: the server works on it until the client goes, then
        # stops.
        client = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import adbc_driver_flightsql.dbapi as f\n"
                f"with f.connect({patient.uri!r}) as c, c.cursor() as cur:\n"
                f"    cur.execute({HEAVY!r})\n"
                "    cur.fetchall()\n",
            ],
            stderr=subprocess.DEVNULL,
        )
        busy = False
        deadline = time.monotonic() + 30.0
        while not busy and time.monotonic() < deadline:
            before = patient.cpu_seconds()
            time.sleep(1.0)
            busy = patient.cpu_seconds() - before > 0.5
        assert busy, "the query runs while its client waits"
        client.kill()
        client.wait()
        assert settles(patient, 15.0), "the query of a client that went away still runs"
        with patient.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT 3 AS three")
            assert cur.fetchone() == (3,)
    finally:
        patient.stop()


def test_named_sessions_open_query_and_close(server, served_folder, cli_query):
    client = flight.FlightClient(server.uri)

    def action(kind: str, body: dict | None = None):
        results = client.do_action(flight.Action(kind, json.dumps(body or {}).encode()))
        return [json.loads(r.body.to_pybytes()) for r in results]

    opened = action("open_session", {"name": "steps", "paths": [str(served_folder / "steps.xplane.pb")]})
    assert opened[0]["name"] == "steps"
    assert action("list_sessions")[0] == [{"name": "steps", "inputs": [str((served_folder / "steps.xplane.pb").resolve())]}]
    sql = "SELECT count(*) AS n, sum(dur_ps) AS total_ps FROM events"
    with server.connect(**{SESSION_HEADER: "steps"}) as conn, conn.cursor() as cur:
        cur.execute(sql)
        assert cur.fetch_arrow_table().to_pylist() == cli_query([served_folder / "steps.xplane.pb"], sql).to_pylist()
    # The served session is untouched.
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute(sql)
        assert cur.fetch_arrow_table().to_pylist() == cli_query([JAX_CPU, served_folder], sql).to_pylist()
    # Paths outside what the server was given are refused, `..` included.
    for outside in (KINETO, served_folder / "..", served_folder / ".." / "runs" / ".." / ".."):
        with pytest.raises(flight.FlightUnauthorizedError) as refused:
            action("open_session", {"name": "out", "paths": [str(outside)]})
        assert "not readable here" in str(refused.value)
    with pytest.raises(pa.ArrowException) as refused:
        action("open_session", {"name": "steps", "paths": [str(served_folder / "kineto.json")]})
    assert "open already" in str(refused.value)
    action("close_session", {"name": "steps"})
    assert action("list_sessions")[0] == []
    with pytest.raises(adbc_driver_manager.Error) as gone:
        with server.connect(**{SESSION_HEADER: "steps"}) as conn, conn.cursor() as cur:
            cur.execute(sql)
            cur.fetchall()
    assert "no session named" in str(gone.value)
