"""The Perfetto export, decoded by an independent decoder: the message
classes Perfetto itself publishes (PyPI ``perfetto``, generated from
``protos/perfetto/trace/perfetto_trace.proto``), not this project's own
``xprof_query::export::perfetto`` definitions. A field number, a wire type
or a nesting that Perfetto's schema does not have shows up here as an
unknown field or a wrong value.

The expected slices, args, flows and counter values are read from the
tables by SQL (``cli_query``), not from the export."""

from __future__ import annotations

import collections
import subprocess

# Imported, never skipped: a missing decoder fails the run (CI installs it).
from perfetto.protos.perfetto.trace import perfetto_trace_pb2

from conftest import FIXTURES, JAX_GPU

CAPTURE = FIXTURES / "tpu" / "synthetic_capture.xplane.pb"


def ps_to_ns(ps: int) -> int:
    """Perfetto's nanoseconds as docs/pictures.md states them: rounded to
    nearest, halves up, times before 0 at 0."""
    return 0 if ps <= 0 else (ps + 500) // 1000


def export(cli, inputs, sql, out, *extra):
    subprocess.run(
        [str(cli), "export", *map(str, inputs), "-e", sql, "-o", str(out), "--format", "perfetto", *extra],
        check=True,
        capture_output=True,
    )
    trace = perfetto_trace_pb2.Trace()
    trace.ParseFromString(out.read_bytes())
    return trace


def unknown_fields(message, path="Trace"):
    """Every field of ``message`` (recursively) that Perfetto's schema does
    not declare."""
    from google.protobuf.unknown_fields import UnknownFieldSet

    found = [f"{path}: field {f.field_number}" for f in UnknownFieldSet(message)]
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        children = value if field.is_repeated else [value]
        for k, child in enumerate(children):
            found += unknown_fields(child, f"{path}.{field.name}[{k}]")
    return found


def tracks(trace):
    """uuid -> descriptor; each declared once, a parent before its child."""
    declared = {}
    for packet in trace.packet:
        if not packet.HasField("track_descriptor"):
            continue
        d = packet.track_descriptor
        assert d.uuid not in declared, f"track {d.uuid} declared twice"
        if d.HasField("parent_uuid"):
            assert d.parent_uuid in declared, f"track {d.uuid}'s parent {d.parent_uuid} not declared before it"
        declared[d.uuid] = d
    return declared


def replay_slices(trace):
    """The slices as a viewer builds them: a begin opens a slice on its
    track, an end closes the innermost open one."""
    TrackEvent = perfetto_trace_pb2.TrackEvent
    open_slices = collections.defaultdict(list)
    slices = []
    for packet in trace.packet:
        if not packet.HasField("track_event"):
            continue
        e = packet.track_event
        if e.type == TrackEvent.TYPE_SLICE_BEGIN:
            s = {"track": e.track_uuid, "name": e.name, "begin": packet.timestamp, "event": e}
            open_slices[e.track_uuid].append(s)
            slices.append(s)
        elif e.type == TrackEvent.TYPE_SLICE_END:
            assert open_slices[e.track_uuid], f"an end with no open slice on track {e.track_uuid}"
            s = open_slices[e.track_uuid].pop()
            assert packet.timestamp >= s["begin"]
            s["end"] = packet.timestamp
    assert not any(open_slices.values()), "slices left open at the end"
    return slices


def test_slices_tracks_args_and_flows_decode_as_the_tables_hold_them(cli, cli_query, tmp_path):
    selection = "SELECT trace_id, event_id FROM events WHERE dur_ps > 0"
    trace = export(cli, [JAX_GPU], selection, tmp_path / "gpu.pftrace")
    assert unknown_fields(trace) == []
    declared = tracks(trace)
    slices = replay_slices(trace)

    rows = cli_query(
        [JAX_GPU],
        "SELECT e.event_id, e.name, e.ts_ps, e.dur_ps, t.name AS track, d.name AS device "
        "FROM events e JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) "
        "WHERE e.dur_ps > 0",
    ).to_pylist()
    assert len(rows) > 500

    def lane_name(name):
        return name.split(" (overlap ")[0]

    got = collections.Counter()
    for s in slices:
        thread = declared[s["track"]]
        assert thread.HasField("thread"), "a slice on a track that is not a thread track"
        process = declared[thread.parent_uuid]
        assert process.HasField("process")
        got[(s["name"], s["begin"], s["end"], lane_name(thread.name), process.name)] += 1
    want = collections.Counter(
        (r["name"], ps_to_ns(r["ts_ps"]), ps_to_ns(r["ts_ps"] + r["dur_ps"]), r["track"], r["device"]) for r in rows
    )
    assert got == want

    # Integer args: each selected event's `event_args` int stats, on its slice.
    by_id = {r["event_id"]: (r["name"], ps_to_ns(r["ts_ps"])) for r in rows}
    int_args = cli_query(
        [JAX_GPU],
        "SELECT a.event_id, CAST(a.key AS VARCHAR) AS key, a.int_value FROM event_args a "
        "JOIN events e USING (trace_id, event_id) WHERE e.dur_ps > 0 AND a.value_type = 'int'",
    ).to_pylist()
    assert len(int_args) > 100
    want_args = collections.Counter((*by_id[a["event_id"]], a["key"], a["int_value"]) for a in int_args)
    got_args = collections.Counter(
        (s["name"], s["begin"], a.name, a.int_value)
        for s in slices
        for a in s["event"].debug_annotations
        if a.HasField("int_value")
    )
    assert got_args == want_args

    # Flows: every link leaves one slice and ends at one, and the links are
    # the `flows` rows whose two ends are selected.
    leaving = collections.defaultdict(list)
    ending = collections.defaultdict(list)
    for s in slices:
        for flow_id in s["event"].flow_ids:
            leaving[flow_id].append((s["name"], s["begin"]))
        for flow_id in s["event"].terminating_flow_ids:
            ending[flow_id].append((s["name"], s["begin"]))
    assert set(leaving) == set(ending)
    assert all(len(v) == 1 for v in leaving.values()) and all(len(v) == 1 for v in ending.values())
    got_links = collections.Counter((leaving[f][0], ending[f][0]) for f in leaving)
    links = cli_query(
        [JAX_GPU],
        "SELECT DISTINCT f.flow_id, f.src_event_id, f.dst_event_id FROM flows f "
        "JOIN events s ON s.trace_id = f.trace_id AND s.event_id = f.src_event_id "
        "JOIN events d ON d.trace_id = f.trace_id AND d.event_id = f.dst_event_id "
        "WHERE s.dur_ps > 0 AND d.dur_ps > 0 AND f.src_event_id <> f.dst_event_id",
    ).to_pylist()
    assert len(links) >= 50
    want_links = collections.Counter((by_id[f["src_event_id"]], by_id[f["dst_event_id"]]) for f in links)
    assert got_links == want_links


def test_counter_values_decode_as_the_counters_table_holds_them(cli, cli_query, tmp_path):
    selection = "SELECT trace_id, event_id FROM events WHERE dur_ps > 0"
    trace = export(cli, [CAPTURE], selection, tmp_path / "c.pftrace", "--counters")
    assert unknown_fields(trace) == []
    declared = tracks(trace)
    TrackEvent = perfetto_trace_pb2.TrackEvent
    got = collections.Counter()
    for packet in trace.packet:
        if packet.HasField("track_event") and packet.track_event.type == TrackEvent.TYPE_COUNTER:
            track = declared[packet.track_event.track_uuid]
            assert track.HasField("counter"), "a counter value on a track that is not a counter track"
            assert packet.track_event.HasField("double_counter_value")
            got[(track.name, packet.timestamp, packet.track_event.double_counter_value)] += 1

    # The selection's devices and span, then the `counters` rows inside them.
    span = cli_query(
        [CAPTURE],
        "SELECT min(e.ts_ps) AS lo, max(e.ts_ps + e.dur_ps) AS hi FROM events e WHERE e.dur_ps > 0",
    ).to_pylist()[0]
    samples = cli_query(
        [CAPTURE],
        "SELECT CAST(c.name AS VARCHAR) AS name, c.ts_ps, c.value FROM counters c "
        "JOIN tracks t USING (trace_id, track_id) WHERE t.device_id IN ("
        "SELECT DISTINCT t2.device_id FROM events e JOIN tracks t2 USING (trace_id, track_id) WHERE e.dur_ps > 0)",
    ).to_pylist()
    want = collections.Counter(
        (s["name"], ps_to_ns(s["ts_ps"]), s["value"]) for s in samples if span["lo"] <= s["ts_ps"] <= span["hi"]
    )
    assert sum(want.values()) > 100
    assert got == want
