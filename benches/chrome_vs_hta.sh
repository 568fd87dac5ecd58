#!/usr/bin/env bash
# Chrome-trace (PyTorch Kineto JSON) parsing: Holistic Trace Analysis vs xprof-sql.
#
#   benches/chrome_vs_hta.sh                       # HTA only, 250 MiB trace, 3 runs
#   XPROF_SQL=target/release/xprof-sql benches/chrome_vs_hta.sh
#   MIB=20 RUNS=5 benches/chrome_vs_hta.sh
#   SKIP_HTA=1 XPROF_SQL=... benches/chrome_vs_hta.sh   # xprof-sql only
#
# Environment (all optional):
#   MIB        trace size in MiB (default 250)
#   RUNS       timed runs per tool; the table shows medians (default 3)
#   SEED       generator seed (default 1)
#   STEPS      ProfilerStep#N ranges in the trace (default 8)
#   WORK       scratch folder, outside the repository (default /tmp/xprof-bench)
#   HTA_VENV   virtual environment for HTA (default ~/.cache/hta-venv)
#   HTA_SPEC   what pip installs there (default holistictraceanalysis; e.g.
#              holistictraceanalysis==0.5.0 to pin)
#   XPROF_SQL  an xprof-sql binary: also times `$XPROF_SQL convert TRACE -o DIR --quiet`
#   SKIP_HTA   1: do not set up or time HTA
#
# What is timed, each run under `/usr/bin/time -v` (wall, user+sys CPU, max RSS):
#   hta        $HTA_VENV/bin/python -c "TraceAnalysis(trace_dir=TRACE_DIR)": a new
#              process each run, so Python start-up and HTA's imports (pandas,
#              plotly, ...) are included; the "hta import only" row measures them alone.
#   xprof-sql  $XPROF_SQL convert TRACE -o OUT --quiet, OUT removed before each run
#              (converting into an existing dataset adds to it).
# The trace is read once before timing so every tool finds it in the page cache.
#
# The trace: benches/gen_kineto_trace.py (deterministic; see its docstring) writes
# $WORK/kineto-${MIB}mib-s${SEED}/rank0.pt.trace.json. HTA wants a folder of
# rank trace files (*.json or *.gz): it takes each file's rank from the first
# `"rank": N` line (`distributedInfo`, near the top), so that folder holds only
# that trace; the generator's log sits next to the folder. The trace is made
# again only when the generator or its arguments changed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
MIB="${MIB:-250}"
RUNS="${RUNS:-3}"
SEED="${SEED:-1}"
STEPS="${STEPS:-8}"
WORK="${WORK:-/tmp/xprof-bench}"
HTA_VENV="${HTA_VENV:-$HOME/.cache/hta-venv}"
HTA_SPEC="${HTA_SPEC:-holistictraceanalysis}"
XPROF_SQL="${XPROF_SQL:-}"
SKIP_HTA="${SKIP_HTA:-0}"

die() { echo "chrome_vs_hta: $*" >&2; exit 1; }
log() { echo "chrome_vs_hta: $*" >&2; }

[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian: apt-get install time)"
command -v python3 >/dev/null || die "python3 is missing"
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer"

mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd -P)"
case "$WORK/" in
  "$(cd "$repo" && pwd -P)/"*) die "WORK ($WORK) is inside the repository; use a folder under /tmp" ;;
esac

# ---- HTA environment (idempotent) ----
if [ "$SKIP_HTA" != 1 ]; then
  if ! "$HTA_VENV/bin/python" -c "import hta.trace_analysis" >/dev/null 2>&1; then
    log "setting up $HTA_VENV ($HTA_SPEC)"
    python3 -m venv "$HTA_VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
    if ! "$HTA_VENV/bin/python" -m pip install --quiet --upgrade pip >&2 \
       || ! "$HTA_VENV/bin/python" -m pip install --quiet "$HTA_SPEC" >&2; then
      die "pip could not install $HTA_SPEC into $HTA_VENV: is the Python package index reachable from this machine?"
    fi
    "$HTA_VENV/bin/python" -c "import hta.trace_analysis" || die "HTA installed but does not import"
  fi
  hta_versions="$("$HTA_VENV/bin/python" - <<'EOF'
import sys
from importlib.metadata import version
print("HolisticTraceAnalysis %s, pandas %s, numpy %s, Python %s" % (
    version("HolisticTraceAnalysis"), version("pandas"), version("numpy"), sys.version.split()[0]))
EOF
)"
  log "$hta_versions"
fi

# ---- the trace (made again only if the generator or its arguments changed) ----
gen="$here/gen_kineto_trace.py"
tdir="$WORK/kineto-${MIB}mib-s${SEED}"
trace="$tdir/rank0.pt.trace.json"
stamp="$tdir.stamp"
want="mib=$MIB seed=$SEED steps=$STEPS gen=$(sha256sum "$gen" | cut -c1-16)"
if [ -f "$trace" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  log "reusing $trace"
else
  rm -rf "$tdir" "$stamp"
  mkdir -p "$tdir"
  log "generating $trace ($MIB MiB)"
  python3 "$gen" "$trace" --mib "$MIB" --seed "$SEED" --steps "$STEPS" 2> "$tdir.gen.log" \
    || { cat "$tdir.gen.log" >&2; die "generator failed"; }
  echo "$want" > "$stamp"
fi
grep -E '^(gen_kineto_trace|total)' "$tdir.gen.log" >&2 || true
bytes="$(stat -c %s "$trace")"
cat "$trace" > /dev/null   # page cache
log "load average before timing: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (other work on the machine skews wall times)"

# ---- timing ----
logs="$WORK/logs-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logs"
results="$logs/results.tsv"   # tool, run, wall s, user s, sys s, max RSS KiB, exit status
: > "$results"

# time_runs NAME PREP_CMD -- CMD...: RUNS runs of CMD under /usr/bin/time -v.
time_runs() {
  local name="$1" prep="$2"; shift 3
  local i out wall user sys rss rc
  for i in $(seq 1 "$RUNS"); do
    eval "$prep"
    out="$logs/${name// /_}.$i"
    set +e
    /usr/bin/time -v -o "$out.time" "$@" > "$out.stdout" 2> "$out.stderr"
    rc=$?
    set -e
    wall="$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(k=1;k<=n;k++) s=s*60+p[k]; print s}' "$out.time")"
    user="$(awk -F': ' '/User time \(seconds\)/ {print $2}' "$out.time")"
    sys="$(awk -F': ' '/System time \(seconds\)/ {print $2}' "$out.time")"
    rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out.time")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$i" "$wall" "$user" "$sys" "$rss" "$rc" >> "$results"
    log "$name run $i: wall ${wall}s user ${user}s sys ${sys}s maxrss ${rss}KiB exit $rc"
    if [ "$rc" != 0 ]; then
      tail -n 20 "$out.stderr" >&2
      die "$name failed (exit $rc); logs in $logs"
    fi
  done
}

if [ "$SKIP_HTA" != 1 ]; then
  hta_py='import sys
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
print("rows", {r: len(df) for r, df in a.t.get_all_traces().items()}, "iterations", a.t.get_iterations())'
  time_runs "hta import only" ":" -- "$HTA_VENV/bin/python" -c "import hta.trace_analysis"
  time_runs "hta" ":" -- "$HTA_VENV/bin/python" -c "$hta_py" "$tdir"
  log "hta: $(cat "$logs/hta.1.stdout")"
fi
if [ -n "$XPROF_SQL" ]; then
  [ -x "$XPROF_SQL" ] || die "XPROF_SQL=$XPROF_SQL is not an executable"
  xout="$WORK/xprof-sql-out"
  time_runs "xprof-sql" "rm -rf '$xout'" -- "$XPROF_SQL" convert "$trace" -o "$xout" --quiet
  log "xprof-sql dataset: $(du -sm "$xout" | cut -f1) MiB in $xout"
fi

# ---- the table (medians of each column over the runs) ----
python3 - "$results" "$bytes" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, wall, user, sys_, rss, _ = line.rstrip("\n").split("\t")
    rows.setdefault(name, []).append((float(wall), float(user) + float(sys_), int(rss) / 1024))
mib = int(sys.argv[2]) / 1048576
print()
print("| tool | input MiB | wall s (median) | CPU s | MiB/s | peak RSS MiB |")
print("|---|---|---|---|---|---|")
for name, runs in rows.items():
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    rss = statistics.median(r[2] for r in runs)
    inp = 0 if name.endswith("import only") else mib
    rate = "%.1f" % (inp / max(wall, 0.01)) if inp else "-"
    print("| %s | %s | %.2f | %.2f | %s | %.0f |" % (name, "%.1f" % inp if inp else "-", wall, cpu, rate, rss))
print()
print("%d run(s) each; CPU = user + sys; medians taken per column." % len(next(iter(rows.values()))))
EOF
if [ "$SKIP_HTA" != 1 ]; then echo "$hta_versions"; fi
log "per-run figures and logs: $logs"
