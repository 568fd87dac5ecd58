#!/usr/bin/env python3
"""Two builds of xprof-sql side by side on the same queries.

    python3 benches/ab.py --a OLD_BIN --b NEW_BIN DATASET Q.sql… [--runs 5]
        [--view NAME…]

Each query (a `.sql` file, or `--view NAME` for `SELECT * FROM NAME`)
runs as `BIN query DATASET -f Q.sql --format csv` in a new process, the
two builds interleaved run by run after one warm-up each; prints the
medians of wall and CPU time (user + sys) and the ratio B / A, and checks
that both builds print the same rows. For a change that should not move
query time (a build setting, say): issue 46. Standard library only.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import processor, timed  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="the build before")
    ap.add_argument("--b", required=True, help="the build after")
    ap.add_argument("dataset")
    ap.add_argument("queries", nargs="*")
    ap.add_argument("--view", action="append", default=[])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    cases = [(os.path.basename(q), q) for q in args.queries]
    for v in args.view:
        path = os.path.join(tmp, f"{v}.sql")
        with open(path, "w") as f:
            f.write(f"SELECT * FROM {v}\n")
        cases.append((v, path))
    print(f"processor: {processor()}, {os.cpu_count()} cores; {args.runs} runs each after a warm-up, "
          f"interleaved, medians")
    print("\n| query | A wall | B wall | B / A | A CPU | B CPU | B / A | same answer |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for name, path in cases:
        cmd = lambda b: [b, "query", args.dataset, "-f", path, "--format", "csv"]  # noqa: E731
        # Rows sorted: a view without ORDER BY may come in another order.
        answers = [sorted(subprocess.run(cmd(b), capture_output=True, text=True, check=True)
                          .stdout.splitlines()) for b in (args.a, args.b)]
        same = "yes" if answers[0] == answers[1] else "DIFFERS"
        a, b = [], []
        for _ in range(args.runs):
            a.append(timed(cmd(args.a)))
            b.append(timed(cmd(args.b)))
        med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        aw, bw, ac, bc = med(a, 0), med(b, 0), med(a, 1), med(b, 1)
        ratios.append(bw / aw)
        print(f"| {name} | {aw:.3f} s | {bw:.3f} s | {bw / aw:.2f} | {ac:.3f} s | {bc:.3f} s | "
              f"{bc / ac:.2f} | {same} |", flush=True)
    geo = statistics.geometric_mean(ratios)
    print(f"\ngeomean wall B / A: {geo:.3f}")


if __name__ == "__main__":
    main()
