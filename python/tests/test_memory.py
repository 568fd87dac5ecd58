"""A result far larger than memory streams through sql_batches in bounded
memory (the peak is measured in a child process; docs/python.md quotes
it)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import JAX_CPU

CHILD = r"""
import json, resource, sys
import xprof_sql


def peak_kib():
    # This process's own high-water mark: ru_maxrss of a spawned child also
    # counts the parent's memory until exec (pytest's, here).
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


s = xprof_sql.open(sys.argv[1])
events = s.sql("SELECT count(*) AS n FROM events").column("n")[0].as_py()
before = peak_kib()
rows = 0
nbytes = 0
for b in s.sql_batches(
    "SELECT e.event_id, e.ts_ps, e.dur_ps, e.name, r.value FROM events e CROSS JOIN range(100000) r"
):
    rows += b.num_rows
    nbytes += b.nbytes
peak = peak_kib()
print(json.dumps({"events": events, "rows": rows, "bytes": nbytes, "rss_before_kib": before, "peak_rss_kib": peak}))
"""


def test_a_large_result_streams_in_bounded_memory():
    out = subprocess.run([sys.executable, "-c", CHILD, str(JAX_CPU)], check=True, capture_output=True, text=True)
    m = json.loads(out.stdout)
    print(m)
    assert m["events"] > 0 and m["rows"] == m["events"] * 100000
    # ~1.4 GB of Arrow data went through; the process never held more
    # than a small part of it.
    assert m["bytes"] > 1_000_000_000
    # The growth while streaming (peak minus the RSS after opening) stays
    # under 256 MiB, a small part of what passed through: a result that
    # is collected instead of streamed grows by the full ~1.4 GB.
    growth = (m["peak_rss_kib"] - m["rss_before_kib"]) * 1024
    assert growth < 256 * 1024 * 1024, m
    assert growth < m["bytes"] / 5, m
