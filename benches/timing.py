"""Timing of whole commands for the Python benches (standard library only).

`timed(cmd)` runs one command and returns its wall time, CPU time (user +
system) and peak RSS; `processor()` names the CPU
the figures were measured on (`/proc/cpuinfo`), which every report states.
"""

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, env=None):
    """(wall s, CPU s, peak RSS MiB) of one run of `cmd`; exits on failure.

    Wall time by `time.perf_counter`; CPU time (user + system) from the
    child's resource usage (`os.wait4`), at microsecond resolution
    (`/usr/bin/time` rounds to 10 ms, a tenth of a small query); peak RSS
    from `/usr/bin/time`, whose own small process starts the command: the
    kernel counts the RSS a process had before `exec` into its peak, so a
    child forked straight from this (possibly large) Python process would
    report Python's memory. The command's output is dropped."""
    err = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                            stderr=err, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    text = err.read().decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd[:4]))} failed ({proc.returncode}):\n{text[-3000:]}")
    rss_kib = int(text.strip().splitlines()[-1])
    return wall, usage.ru_utime + usage.ru_stime, rss_kib / 1024


def median_of(runs, cmd, env=None):
    """Medians of (wall, CPU, peak RSS) over `runs` runs of `cmd`."""
    samples = [timed(cmd, env=env) for _ in range(runs)]
    return tuple(statistics.median(s[k] for s in samples) for k in range(3))


def processor():
    """The CPU's model name, as `/proc/cpuinfo` gives it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"
