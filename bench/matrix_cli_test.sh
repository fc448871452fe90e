#!/usr/bin/env bash
# matrix_cli_test.sh — the bench contract end to end: --list names the scheduler_perf
# workloads, a workload's -o json is one document with the documented keys, and
# `compare` reads two of them (a run against itself: every ratio 1.000).
#   matrix_cli_test.sh DRALLOC
set -euo pipefail
d=$1
out=$(mktemp -d /tmp/dralloc-matrix.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$d" bench --list > "$out/list"
for w in 5000pods_500nodes steady_half_500nodes selector_empty_500nodes match_empty_500nodes gpu_5000nodes; do
  grep -q "^  $w " "$out/list" || { echo "matrix_cli_test: --list lacks $w"; exit 1; }
done
"$d" bench 2000pods_200nodes --reps 1 -o json > "$out/a.json"
for key in '"machine"' '"workloads"' '"podsPerSecond"' '"filterLatencyNs"' '"p50"' '"p90"' '"p99"' '"max"' \
           '"allocationsPerSecond"' '"snapshotBuildMs"' '"peakRssBytes"'; do
  grep -q "$key" "$out/a.json" || { echo "matrix_cli_test: -o json lacks $key"; cat "$out/a.json"; exit 1; }
done
grep -q '"placed": 1000' "$out/a.json" || { echo "matrix_cli_test: 2000pods_200nodes did not place its 1000 pods"; exit 1; }
"$d" bench compare "$out/a.json" "$out/a.json" > "$out/cmp"
grep -q "2000pods_200nodes.*pods/s.*1.000" "$out/cmp" || { echo "matrix_cli_test: compare"; cat "$out/cmp"; exit 1; }
if "$d" bench compare "$out/a.json" 2>/dev/null; then echo "matrix_cli_test: compare with one file must fail"; exit 1; fi
echo "matrix_cli_test: ok"
