#!/usr/bin/env bash
# matrix_cli_test.sh — the bench contract end to end: --list names the scheduler_perf
# workloads, a workload's -o json is one document with the documented keys, and
# `compare` reads two of them (a run against itself: every ratio 1.000); the
# firstAvailable, partitionable, consumable-capacity and MIG shapes run (at 1 % and
# 0.2 %, --scale, to stay quick under ASan) and give the first pod what upstream's
# shape fixes (else the run exits 1 with MISMATCH); the scaling report is in the JSON.
#   matrix_cli_test.sh DRALLOC
set -euo pipefail
d=$1
out=$(mktemp -d /tmp/dralloc-matrix.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "matrix_cli_test: $*"; exit 1; }

"$d" bench --list > "$out/list"
for w in 5000pods_500nodes steady_half_500nodes selector_empty_500nodes match_empty_500nodes gpu_5000nodes \
         firstavailable_empty_500nodes partitionable_2000pods_100nodes consumable_empty_100nodes mig_5000nodes; do
  grep -q "^  $w " "$out/list" || fail "--list lacks $w"
done
grep -q "from SteadyStateClusterResourceClaimTemplatePartitionable" "$out/list" || fail "--list lacks the upstream sources"

"$d" bench 2000pods_200nodes --reps 1 -o json > "$out/a.json"
for key in '"machine"' '"workloads"' '"podsPerSecond"' '"filterLatencyNs"' '"p50"' '"p90"' '"p99"' '"max"' \
           '"allocationsPerSecond"' '"snapshotBuildMs"' '"peakRssBytes"'; do
  grep -q "$key" "$out/a.json" || { cat "$out/a.json"; fail "-o json lacks $key"; }
done
grep -q '"placed": 1000' "$out/a.json" || fail "2000pods_200nodes did not place its 1000 pods"
"$d" bench compare "$out/a.json" "$out/a.json" > "$out/cmp"
grep -q "2000pods_200nodes.*pods/s.*1.000" "$out/cmp" || { cat "$out/cmp"; fail "compare"; }
if "$d" bench compare "$out/a.json" 2>/dev/null; then fail "compare with one file must fail"; fi

# the new shapes, scaled down; exit 1 (MISMATCH) if a first allocation is not upstream's
"$d" bench firstavailable_empty_500nodes partitionable_2000pods_100nodes consumable_empty_100nodes \
    --scale 0.01 --reps 1 -o json > "$out/new.json" || { cat "$out/new.json"; fail "new workloads"; }
"$d" bench mig_5000nodes --scale 0.002 --reps 1 -o json > "$out/mig.json" || { cat "$out/mig.json"; fail "mig_5000nodes"; }
for w in firstavailable_empty_500nodes partitionable_2000pods_100nodes consumable_empty_100nodes; do
  grep -q "\"name\": \"$w\"" "$out/new.json" || fail "-o json lacks $w"
done
[[ $(grep -c '"firstAllocationCheck": "ok"' "$out/new.json") -eq 3 ]] || { cat "$out/new.json"; fail "first allocations"; }
grep -q '"firstAllocation": "req-0/sub-1:node-00000/instance-0"' "$out/new.json" || fail "firstAvailable did not fall back to sub-1"
grep -q '"firstAllocation": "req-0:node-00000/gpu-0-mig-1g5gb-0"' "$out/mig.json" || { cat "$out/mig.json"; fail "MIG first allocation"; }
grep -q '"placed": 10,' "$out/mig.json" || fail "mig_5000nodes at 0.2 % did not place its 10 pods"
# --build-only: the same build, no pod decided
"$d" bench mig_5000nodes --scale 0.002 --reps 1 --build-only -o json > "$out/migb.json" || { cat "$out/migb.json"; fail "--build-only"; }
grep -q '"buildOnly": true' "$out/migb.json" || fail "--build-only not in -o json"
grep -q '"placed": 0,' "$out/migb.json" || fail "--build-only placed pods"
grep -Eq '"snapshotBuildMs": [1-9]|"snapshotBuildMs": 0\.[0-9]*[1-9]' "$out/migb.json" || { cat "$out/migb.json"; fail "--build-only without a build time"; }
"$d" bench mig_5000nodes --scale 0.002 --reps 1 --build-only | grep -q "snapshot build only" || fail "--build-only table"
"$d" bench compare "$out/new.json" "$out/new.json" > "$out/cmp2"
for w in firstavailable_empty_500nodes partitionable_2000pods_100nodes consumable_empty_100nodes; do
  grep -q "$w.*pods/s.*1.000" "$out/cmp2" || { cat "$out/cmp2"; fail "compare $w"; }
done

# exactness of the thread pool (bench/mx_pool.h): every node's answer and every pick the
# same with 1 and 3 threads (blocks claimed by whichever thread comes first), with and
# without the fit memo — a fill (each commit changes later answers) and a steady shape
digest() { grep -o '"decisionDigest": "[0-9a-f]*"' "$1" | head -1; }
for w in 2000pods_200nodes steady_half_500nodes; do
  ref=
  for args in "--threads 1" "--threads 3" "--threads 1 --no-memo" "--threads 3 --no-memo"; do
    # shellcheck disable=SC2086
    "$d" bench "$w" $args --scale 0.25 --reps 2 -o json > "$out/dg.json" || fail "bench $w $args"
    got=$(digest "$out/dg.json")
    [[ -n $got && $got != *'"0000000000000000"' ]] || { cat "$out/dg.json"; fail "$w $args: no digest, or runs that differ"; }
    [[ -z $ref ]] && ref=$got
    [[ $got == "$ref" ]] || fail "$w $args: decisions differ from --threads 1: $got, want $ref"
  done
done

# the scaling report: one entry per thread count, the contract keys still there
"$d" bench steady_empty_500nodes --threads 1..2 --scale 0.02 --reps 1 -o json > "$out/s.json"
grep -q '"scaling"' "$out/s.json" || { cat "$out/s.json"; fail "no scaling in -o json"; }
[[ $(grep -c '"speedup"' "$out/s.json") -eq 2 ]] || { cat "$out/s.json"; fail "scaling lacks thread counts"; }
grep -q '"podsPerSecond"' "$out/s.json" || fail "scaling json lacks podsPerSecond"
"$d" bench compare "$out/s.json" "$out/s.json" | grep -q "steady_empty_500nodes.*pods/s.*1.000" || fail "compare scaling json"
"$d" bench scaling backtracking_1node --scale 0.05 --reps 1 -o json | grep -q '"scaling"' || fail "bench scaling"
if "$d" bench steady_empty_500nodes --threads 0 2>/dev/null; then fail "--threads 0 must fail"; fi

# listpage: the three readings of one LIST page, every item read each way
"$d" bench listpage --devices 40 --reps 1 --json "$out/lp.json" > "$out/lp" || { cat "$out/lp"; fail "bench listpage"; }
for way in json_loadb dra_json_parse dra_json_list; do
  grep -q "^$way" "$out/lp" || { cat "$out/lp"; fail "listpage lacks $way"; }
  grep -q "\"reading\": \"$way\"" "$out/lp.json" || { cat "$out/lp.json"; fail "listpage json lacks $way"; }
done
grep -q '"slices": 40,' "$out/lp.json" || { cat "$out/lp.json"; fail "listpage json: slices"; }
# relist: 130 nodes' slices (520: two pages) from text into a store, every slice in it
"$d" bench relist --devices 130 --reps 1 --warmup 0 --json "$out/rl.json" > "$out/rl" || { cat "$out/rl"; fail "bench relist"; }
grep -q "520 ResourceSlices of 130 MIG-carved nodes as 2 LIST pages" "$out/rl" || { cat "$out/rl"; fail "relist: pages"; }
grep -q '"slices": 520,' "$out/rl.json" || { cat "$out/rl.json"; fail "relist json: slices"; }
grep -q '"storeMs"' "$out/rl.json" || { cat "$out/rl.json"; fail "relist json: storeMs"; }

# bench e2e: runs the source tree's bench/e2e/run.sh (its usage on a bad option, exit 2);
# without a source tree it says where it looked
e2e_err=$("$d" bench e2e --no-such-option 2>&1) && fail "bench e2e --no-such-option must fail"
grep -q "bench/e2e/run.sh \[--nodes N\]" <<<"$e2e_err" || { echo "$e2e_err"; fail "bench e2e: not the script's usage"; }
e2e_rc=0; e2e_err=$(DRALLOC_SOURCE_DIR=/nonexistent "$d" bench e2e 2>&1) || e2e_rc=$?
[[ $e2e_rc -eq 2 ]] || fail "bench e2e without a source tree: exit $e2e_rc, want 2"
grep -q "DRALLOC_SOURCE_DIR=/nonexistent" <<<"$e2e_err" || { echo "$e2e_err"; fail "bench e2e: no word of where it looked"; }
echo "matrix_cli_test: ok"
