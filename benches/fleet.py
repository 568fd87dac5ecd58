#!/usr/bin/env python3
"""A fleet of hosts from one real profile: conversion and views, locally and
on a Ballista cluster (issue 48, item 4).

    python3 benches/fleet.py PROFILE.xplane.pb WORK --xprof-sql BIN
        [--hosts 1,8,64] [--runs 3] [--views hlo_stats,step_stats,device_busy]
        [--no-cluster]

For each host count N, WORK/logs{N}/fleet/ gets N copies of PROFILE named
host00.xplane.pb, host01.xplane.pb, … (real copies, not links), converted
into the warehouse WORK/wh{N} with `--partition-by host` (one run). Then
each view is read in full (`SELECT * FROM VIEW`, CSV to a pipe):

- locally: `xprof-sql query WORK/wh{N} -e SQL`;
- on a cluster on 127.0.0.1: a scheduler and two executors (each
  `--vcores 1`, so the two use the machine's two cores), all three
  started afresh for each (N, view) so their peak RSS is that query's;
  the client runs `xprof-sql query --cluster df://… WORK/wh{N} -e SQL`.

Each query: one warm-up, then `--runs` runs; medians of wall, CPU
(user+sys) and peak RSS (of the client process; for the cluster also
each service's `VmHWM`). The cluster's answer is compared with the local
one (rows sorted; the same sums may differ in the last digits where rows
are added in another order, which the table marks). Prints markdown
tables. Standard library only.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_of, processor, timed  # noqa: E402

SCHEDULER_PORT = 50150
EXECUTOR_PORTS = (50151, 50152)


def copies(profile, work, hosts):
    """WORK/logs{N}/fleet/hostII.xplane.pb, N real copies of PROFILE."""
    run = os.path.join(work, f"logs{hosts}", "fleet")
    os.makedirs(run, exist_ok=True)
    size = os.path.getsize(profile)
    for i in range(hosts):
        path = os.path.join(run, f"host{i:02d}.xplane.pb")
        if not (os.path.exists(path) and os.path.getsize(path) == size):
            shutil.copyfile(profile, path)
    return run


def vm_hwm_mib(pid):
    """Peak RSS of a running process (`VmHWM`), MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def wait_port(port, proc, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"fleet: a cluster service exited ({proc.returncode}) before listening on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    sys.exit(f"fleet: nothing listens on 127.0.0.1:{port} after {seconds} s")


class Cluster:
    """A scheduler and two executors on 127.0.0.1, for one measurement."""

    def __init__(self, bin_, work):
        self.procs = []
        self.log = log = open(os.path.join(work, "cluster.log"), "a")
        env = dict(os.environ)
        env.pop("XPROF_CLUSTER_TOKEN", None)
        sched = subprocess.Popen([bin_, "cluster", "scheduler", "--bind", f"127.0.0.1:{SCHEDULER_PORT}"],
                                 stdout=log, stderr=log, env=env)
        self.procs.append(sched)
        wait_port(SCHEDULER_PORT, sched)
        for k, port in enumerate(EXECUTOR_PORTS):
            spill = os.path.join(work, f"executor{k}")
            os.makedirs(spill, exist_ok=True)
            ex = subprocess.Popen([bin_, "cluster", "executor", "--scheduler", f"127.0.0.1:{SCHEDULER_PORT}",
                                   "--data-root", work, "--bind", f"127.0.0.1:{port}", "--vcores", "1",
                                   "--work-dir", spill], stdout=log, stderr=log, env=env)
            self.procs.append(ex)
            wait_port(port, ex)
        time.sleep(1.0)  # the executors' first poll of the scheduler

    def peaks(self):
        """(scheduler, larger executor) peak RSS so far, MiB."""
        hwm = [vm_hwm_mib(p.pid) for p in self.procs]
        return hwm[0], max(hwm[1:])

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGINT)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.log.close()


def answer(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"fleet: {' '.join(cmd[:4])} failed:\n{out.stderr[-3000:]}")
    lines = out.stdout.splitlines()
    return lines[:1] + sorted(lines[1:])


def medians(runs, cmd):
    timed(cmd)  # warm-up
    return median_of(runs, cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("work")
    ap.add_argument("--xprof-sql", required=True)
    ap.add_argument("--hosts", default="1,8,64")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--views", default="hlo_stats,step_stats,device_busy")
    ap.add_argument("--no-cluster", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="reuse the warehouses WORK/wh{N} already there instead of converting again")
    args = ap.parse_args()
    bin_ = os.path.abspath(args.xprof_sql)
    work = os.path.abspath(args.work)
    hosts = [int(h) for h in args.hosts.split(",")]
    views = args.views.split(",")
    size_mib = os.path.getsize(args.profile) / 2**20
    print(f"profile: {args.profile} ({size_mib:.1f} MiB); processor: {processor()}, "
          f"{os.cpu_count()} cores; {args.runs} runs after a warm-up, medians")

    print("\n| hosts | input | convert wall | CPU | peak RSS | MiB/s | warehouse |")
    print("|---|---|---|---|---|---|---|")
    for n in hosts:
        run = copies(args.profile, work, n)
        wh = os.path.join(work, f"wh{n}")
        if args.keep and os.path.isdir(wh):
            continue
        shutil.rmtree(wh, ignore_errors=True)
        wall, cpu, rss = timed([bin_, "convert", run, "-o", wh, "--partition-by", "host", "--quiet"])
        out_mib = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(wh) for f in fs) / 2**20
        print(f"| {n} | {n * size_mib:,.1f} MiB | {wall:.1f} s | {cpu:.1f} s | {rss:,.0f} MiB | "
              f"{n * size_mib / wall:.0f} | {out_mib:,.0f} MiB |", flush=True)

    print("\n| view | hosts | rows | local wall | CPU | peak RSS | cluster wall | client RSS | "
          "scheduler RSS | executor RSS | same answer |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for view in views:
        sql = f"SELECT * FROM {view}"
        for n in hosts:
            wh = os.path.join(work, f"wh{n}")
            local = [bin_, "query", wh, "--format", "csv", "-e", sql]
            lw, lc, lr = medians(args.runs, local)
            local_answer = answer(local)
            row = f"| {view} | {n} | {len(local_answer) - 1:,} | {lw:.2f} s | {lc:.2f} s | {lr:,.0f} MiB |"
            if args.no_cluster:
                print(row + " | | | | |", flush=True)
                continue
            cluster = Cluster(bin_, work)
            try:
                remote = [bin_, "query", "--cluster", f"df://127.0.0.1:{SCHEDULER_PORT}", wh,
                          "--format", "csv", "-e", sql]
                cw, _, cr = medians(args.runs, remote)
                sched_rss, exec_rss = cluster.peaks()
                same = "yes" if answer(remote) == local_answer else "differs"
            finally:
                cluster.stop()
            print(row + f" {cw:.2f} s | {cr:,.0f} MiB | {sched_rss:,.0f} MiB | {exec_rss:,.0f} MiB | {same} |",
                  flush=True)


if __name__ == "__main__":
    main()
