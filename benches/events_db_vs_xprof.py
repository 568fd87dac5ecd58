#!/usr/bin/env python3
"""XProf's Events DB against `--schema events_db`, from the raw profile.

    python3 benches/events_db_vs_xprof.py PROFILE.xplane.pb --xprof-sql BIN
        [--runs 5] [--xprof ~/.cache/xprof-ref-venv/bin/xprof]

For the Events view in full and each of the five queries XProf documents
for it (tests/fixtures/events_db/q*.sql), each run a new process under
`/usr/bin/time -v` (wall, user+sys CPU, peak RSS), the two tools
interleaved run by run:

- XProf: `xprof create_events_db PROFILE --bypass_cache` (which writes the
  view in full, as Parquet), then for a query `xprof query_events_db
  --session_id PROFILE --query SQL --bypass_cache`: the two processes'
  times added (the peak RSS is the larger);
- xprof-sql: `xprof-sql query PROFILE --schema events_db -e SQL` (the
  conversion in the same process), the view in full as
  `COPY (SELECT * FROM Events) TO 'FILE.parquet'`.

Prints a markdown table of medians and the ratios XProf / xprof-sql.
Standard library only.
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import processor, timed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
QUERIES = os.path.join(HERE, "..", "tests", "fixtures", "events_db")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("--xprof-sql", required=True)
    ap.add_argument("--xprof", default=os.path.expanduser("~/.cache/xprof-ref-venv/bin/xprof"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    env_path = os.path.dirname(args.xprof) + ":" + os.environ["PATH"]
    os.environ["PATH"] = env_path
    out_dir = tempfile.mkdtemp(prefix="events_db_bench_")
    full = os.path.join(out_dir, "events.parquet")
    cases = [("the view in full", None)]
    for n in range(1, 6):
        with open(os.path.join(QUERIES, f"q{n}.sql")) as f:
            cases.append((f"q{n}", f.read().strip()))
    create = [args.xprof, "create_events_db", args.profile, "--bypass_cache"]
    print(f"processor: {processor()}, {os.cpu_count()} cores; {args.runs} runs each, medians")
    print()
    print("| case | XProf wall | xprof-sql wall | wall × | XProf CPU | xprof-sql CPU | CPU × "
          "| XProf RSS | xprof-sql RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, sql in cases:
        theirs, ours = [], []
        for _ in range(args.runs):
            w, c, r = timed(create)
            if sql is not None:
                w2, c2, r2 = timed([args.xprof, "query_events_db", "--session_id", args.profile,
                                    "--query", sql, "--bypass_cache"])
                w, c, r = w + w2, c + c2, max(r, r2)
            theirs.append((w, c, r))
            if os.path.exists(full):
                os.remove(full)
            ours_sql = sql or f"COPY (SELECT * FROM Events) TO '{full}'"
            ours.append(timed([args.xprof_sql, "query", args.profile, "--schema", "events_db",
                               "-e", ours_sql, "--format", "csv"]))
        med = lambda xs, i: statistics.median(x[i] for x in xs)
        tw, ow, tc, oc = med(theirs, 0), med(ours, 0), med(theirs, 1), med(ours, 1)
        print(f"| {name} | {tw:.2f} s | {ow:.2f} s | {tw / ow:.1f}× | {tc:.2f} s | {oc:.2f} s "
              f"| {tc / oc:.1f}× | {med(theirs, 2):,.0f} MiB | {med(ours, 2):,.0f} MiB |",
              flush=True)


if __name__ == "__main__":
    main()
