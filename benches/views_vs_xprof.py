"""Each analysis view against the XProf tool computing the same table (issue 30, item 2).

usage (the venv of ../shared/bench/reference.sh has xprof 2.24.2):
  ~/.cache/xprof-ref-venv/bin/python benches/views_vs_xprof.py XPLANE DATASET [XPROF_SQL] [RUNS]

XPLANE is a raw profile (`reference.sh gen-trace 30000 DIR` makes the real
107 MiB JAX one), DATASET the same file converted (`xprof-sql convert
XPLANE -o DATASET`), XPROF_SQL the binary (default: target/release's under
$CARGO_TARGET_DIR, else ./target). For each view it runs, RUNS times
(default 3) and alternating:

  xprof-sql query DATASET --threads 2 -e "SELECT * FROM <view>" --format parquet -o OUT
      the whole process (opening the dataset, running, writing every row
      and column), wall time;
  the XProf tool for the same table, in a child process, from the XSpace:
      xspace_to_tool_data([XPLANE], TOOL, {...}) of xprof.convert.raw_to_tool_data
      (hlo_stats, framework_op_stats, kernel_stats, op_profile,
      roofline_model, overview_page for step_stats), the CLI's
      get_device_time_attribution for device_busy, and create_events_db
      (whose `step` column is event_steps') for event_steps.
kernel_launch has no XProf tool (XProf shows launches only in the trace
viewer): its time is printed alone.

It prints one line per view: medians of both, the ratio, the rows the view
gave. A tool that XProf answers with an error or no data on this profile
(kernel_stats on a CPU-only profile) is timed all the same: the time is
what XProf spent finding that out.
"""
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

VBIN = pathlib.Path(sys.executable).parent
ENV = dict(os.environ, PATH=f"{VBIN}:{os.environ['PATH']}")

# view -> how XProf computes the same table ("tool:NAME" through
# xspace_to_tool_data, "cli:NAME" through the xprof CLI, None: no tool).
VIEWS = {
    "hlo_stats": "tool:hlo_stats",
    "framework_op_stats": "tool:framework_op_stats",
    "kernel_stats": "tool:kernel_stats",
    "step_stats": "tool:overview_page",
    "device_busy": "cli:get_device_time_attribution",
    "op_profile": "tool:op_profile",
    "event_steps": "cli:create_events_db",
    "roofline": "tool:roofline_model",
    "kernel_launch": None,
}

TOOL_CALL = """
import sys
from xprof.convert import raw_to_tool_data
params = {'use_saved_result': False}
if sys.argv[2] == 'op_profile':
    params['group_by'] = 'program'
try:
    raw_to_tool_data.xspace_to_tool_data([sys.argv[1]], sys.argv[2], params)
except Exception as e:  # an answer all the same: XProf found no data
    print(repr(e)[:200], file=sys.stderr)
"""


def xprof_sql_binary():
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    return str(pathlib.Path(target) / "release" / "xprof-sql")


def run_ours(binary, dataset, view, out):
    cmd = [binary, "query", dataset, "--threads", "2", "-e",
           f"SELECT * FROM {view}", "--format", "parquet", "-o", out]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def run_xprof(how, xplane):
    kind, name = how.split(":")
    # A fresh log dir each time: XProf caches tool results next to the input.
    with tempfile.TemporaryDirectory() as tmp:
        run = pathlib.Path(tmp) / "plugins" / "profile" / "run1"
        run.mkdir(parents=True)
        local = run / "host.xplane.pb"
        try:
            os.link(xplane, local)
        except OSError:
            shutil.copy(xplane, local)
        if kind == "tool":
            cmd = [sys.executable, "-c", TOOL_CALL, str(local), name]
        elif name == "create_events_db":
            cmd = [str(VBIN / "xprof"), "create_events_db", str(local), "--bypass_cache"]
        else:
            cmd = [str(VBIN / "xprof"), name, str(run), "--bypass_cache=True"]
        t = time.perf_counter()
        subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t


def rows_of(path):
    import pyarrow.parquet as pq  # pylint: disable=import-outside-toplevel
    return pq.ParquetFile(path).metadata.num_rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    xplane, dataset = os.path.abspath(sys.argv[1]), sys.argv[2]
    binary = sys.argv[3] if len(sys.argv) > 3 else xprof_sql_binary()
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    print(f"input {os.path.getsize(xplane) / 2**20:.1f} MiB, {runs} runs each, medians")
    print(f"{'view':<20} {'xprof-sql s':>11} {'XProf s':>9} {'ratio':>7} {'rows':>9}  XProf tool")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "view.parquet")
        for view, how in VIEWS.items():
            ours, theirs = [], []
            for _ in range(runs):
                ours.append(run_ours(binary, dataset, view, out))
                if how:
                    theirs.append(run_xprof(how, xplane))
            a = statistics.median(ours)
            b = statistics.median(theirs) if theirs else float("nan")
            ratio = f"{b / a:6.1f}x" if theirs else "   -  "
            print(f"{view:<20} {a:11.2f} {b:9.2f} {ratio:>7} {rows_of(out):>9}  {how or '(none)'}",
                  flush=True)


if __name__ == "__main__":
    main()
