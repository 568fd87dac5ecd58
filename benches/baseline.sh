#!/usr/bin/env bash
# The committed criterion baseline of the conversion benches
# (benches/convert.rs), so that a change can be compared against it with
# one command:
#
#   benches/baseline.sh compare   # run the benches, compare with benches/baseline/
#   benches/baseline.sh save      # run them and replace benches/baseline/
#
# Criterion keeps baselines under $CARGO_TARGET_DIR/criterion/<group>/<bench>/<name>/;
# this script copies the one named "committed" to and from benches/baseline/
# (only its JSON estimates and samples, a few KiB). Figures are from the
# machine that saved them (benches/README.md names it): on another machine,
# run `save` on the old commit first and `compare` on the new one.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
store=benches/baseline
name=committed
# The per-column encoding benches are part of the baseline.
export XPROF_SQL_BENCH_COLUMNS=${XPROF_SQL_BENCH_COLUMNS:-1}

case "${1:-}" in
save)
  cargo bench --bench convert -- --save-baseline "$name"
  rm -rf "$store"
  (cd "$target/criterion" && find . -path "*/$name/*.json") | while read -r f; do
    mkdir -p "$store/$(dirname "$f")"
    cp "$target/criterion/$f" "$store/$f"
  done
  echo "saved $(find "$store" -name estimates.json | wc -l) benchmarks to $store"
  ;;
compare)
  [ -d "$store" ] || { echo "no $store: run '$0 save' first" >&2; exit 1; }
  mkdir -p "$target/criterion"
  cp -r "$store"/. "$target/criterion/"
  cargo bench --bench convert -- --baseline "$name"
  ;;
*)
  sed -n '2,13p' "$0"
  exit 2
  ;;
esac
