#!/usr/bin/env python3
"""Each HTA analysis against the view that answers it, on one Kineto trace.

    python3 benches/views_vs_hta.py TRACE_DIR --xprof-sql BIN [--runs 3] [--hta-runs 1]
        [--hta-python ~/.cache/hta-venv/bin/python] [--work /tmp/xprof-bench/views]

TRACE_DIR holds the trace files HTA reads (one per rank; e.g. the folder
`benches/gen_kineto_trace.py` writes into). For each analysis, under
`/usr/bin/time -v` (wall, user+sys CPU, peak RSS), each a new process:

- HTA: `TraceAnalysis(trace_dir=TRACE_DIR)` then the analysis, from the raw
  file (HTA has no other way in): HTA's time to the answer;
- xprof-sql from the raw file: `xprof-sql query TRACE_DIR -e SQL`, the
  conversion in the same process;
- xprof-sql after convert: `xprof-sql query DATASET -e SQL` on the dataset
  that `xprof-sql convert TRACE_DIR -o DATASET` wrote once (its time is
  printed too).

Answers are written as CSV to a pipe this script reads and drops; each
process is started afresh, so the times include start-up. Prints a markdown table of
medians and the ratios HTA / xprof-sql. Standard library only.
"""

import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_of, processor, timed  # noqa: E402

# (view, SQL, HTA call on `a`, a TraceAnalysis)
ANALYSES = [
    ("temporal_breakdown", "SELECT * FROM temporal_breakdown",
     "a.get_temporal_breakdown(visualize=False)"),
    ("gpu_kernel_type_breakdown + gpu_kernel_breakdown",
     "SELECT * FROM gpu_kernel_type_breakdown; SELECT * FROM gpu_kernel_breakdown",
     "a.get_gpu_kernel_breakdown(visualize=False)"),
    ("idle_time_breakdown", "SELECT * FROM idle_time_breakdown",
     "a.get_idle_time_breakdown(visualize=False, show_idle_interval_stats=True)"),
    ("comm_comp_overlap", "SELECT * FROM comm_comp_overlap",
     "a.get_comm_comp_overlap(visualize=False)"),
    ("kernel_launch_stats", "SELECT * FROM kernel_launch_stats",
     "a.get_cuda_kernel_launch_stats(visualize=False)"),
    ("queue_length_summary", "SELECT * FROM queue_length_summary",
     "a.get_queue_length_summary()"),
]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace_dir")
    p.add_argument("--xprof-sql", required=True)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--hta-runs", type=int, default=1)
    p.add_argument("--hta-python", default=os.path.expanduser("~/.cache/hta-venv/bin/python"))
    p.add_argument("--work", default="/tmp/xprof-bench/views")
    p.add_argument("--skip-hta", action="store_true")
    args = p.parse_args()

    os.makedirs(args.work, exist_ok=True)
    dataset = os.path.join(args.work, "dataset")
    shutil.rmtree(dataset, ignore_errors=True)
    size = sum(os.path.getsize(os.path.join(args.trace_dir, f)) for f in os.listdir(args.trace_dir))
    print(f"trace: {args.trace_dir} ({size / 2**20:.1f} MiB), processor: {processor()}, {os.cpu_count()} CPUs")
    convert = timed([args.xprof_sql, "convert", args.trace_dir, "-o", dataset, "--quiet"])
    print(f"xprof-sql convert: {convert[0]:.2f} s wall, {convert[1]:.2f} s CPU, {convert[2]:.0f} MiB peak")

    rows = []
    for view, sql, call in ANALYSES:
        query = ["--format", "csv"]
        raw = median_of(args.runs, [args.xprof_sql, "query", args.trace_dir, "-e", sql, *query])
        after = median_of(args.runs, [args.xprof_sql, "query", dataset, "-e", sql, *query])
        hta = None
        if not args.skip_hta:
            code = (
                "import logging; logging.disable(logging.CRITICAL)\n"
                "from hta.trace_analysis import TraceAnalysis\n"
                f"a = TraceAnalysis(trace_dir={args.trace_dir!r})\n"
                f"r = {call}\n"
            )
            hta = median_of(args.hta_runs, [args.hta_python, "-c", code])
        rows.append((view, hta, raw, after))
        print(f"{view}: raw {raw[0]:.2f} s, after convert {after[0]:.2f} s" + (f", HTA {hta[0]:.2f} s" if hta else ""),
              file=sys.stderr)

    print()
    print("| view | HTA wall s | HTA CPU s | HTA peak MiB | xprof-sql from raw: wall s | CPU s | peak MiB "
          "| after convert: wall s | peak MiB | HTA ÷ raw wall | raw ÷ HTA peak |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for view, hta, raw, after in rows:
        h = hta or (float("nan"),) * 3
        print(f"| `{view}` | {h[0]:.2f} | {h[1]:.2f} | {h[2]:.0f} | {raw[0]:.2f} | {raw[1]:.2f} | {raw[2]:.0f} "
              f"| {after[0]:.2f} | {after[2]:.0f} | {h[0] / raw[0]:.1f}× | {raw[2] / h[2]:.2f} |")


if __name__ == "__main__":
    main()
