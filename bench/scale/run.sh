#!/usr/bin/env bash
# run.sh — every figure of issue 43 (fleet scale) in one command, for a quiet machine:
#
#   bench/scale/run.sh [--quick] [--only 1|2|3] [--before OLD_BINARY] [BINARY]
#
# BINARY defaults to build-release/dralloc (`make release`); --before runs the figures
# an older binary can give (the scaling table, and capacity / plan / serve on the dumped
# fleets, which read files) with it too, each right before the new one's, so that both
# share the machine's state. Every figure is preceded by the load average (`# load`):
# a figure taken at a load above the core count is a figure of the other processes.
#
#   1. scaling   `bench scaling 5000pods_500nodes` with and without --no-memo, and per
#                thread count `perf stat` (task-clock, context switches, migrations:
#                the hardware counters are not exposed in most VMs) over one run, and
#                the projected curve to 16 threads (project.py, from the JSON)
#   2. fleets    `bench fleet --shape gpu8 --devices 20000|100000`, `--shape mig8
#                --devices 20000` in process: ingest as LIST pages, RSS per device and
#                per claim, capacity view, engine filter and update latencies
#   3. files     the same fleets dumped (--dump), then `capacity -f` and `plan -f
#                --workload` timed with their peak RSS (/usr/bin/time), and `serve
#                --snapshot` (time to /readyz, RSS) under /filter requests of 1,000
#                and 5,000 names (filter.py: first, p50, p99)
#
# --quick: 2,000 and 5,000 gpu8 nodes, 1,000 mig8 nodes (a minute, to try the script).
# Scratch files go to ${OUT:-/tmp/dralloc-scale} (the 100,000-node gpu8 dump is 0.7 GB, the
# 20,000-node mig8 one 1.9 GB; the in-process mig8 run peaks near 6 GB of RSS).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
quick=0
only=""
before=""
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --before) before=$2; shift ;;
    --only) only=$2; shift ;;
    *) bin=$1 ;;
    esac
    shift
done
bin=${bin:-$root/build-release/dralloc}
out=${OUT:-/tmp/dralloc-scale}
mkdir -p "$out"
if [ "$quick" = 1 ]; then gpu8="2000 5000"; mig8="1000"; reps=1; else gpu8="20000 100000"; mig8="20000"; reps=3; fi
port=${PORT:-18943}

load() { echo "# load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores, $(date -u +%H:%M:%S)"; }
timed() {   # timed LABEL CMD...: wall, CPU, peak RSS of one command
    local label=$1; shift
    load
    /usr/bin/time -f "$label: wall %e s, CPU %U+%S s, peak RSS %M KiB" "$@" >/dev/null || echo "$label: failed"
}
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }
binaries() { [ -n "$before" ] && echo "before:$before"; echo "after:$bin"; }

want 1 && echo "## 1. scaling (5000pods_500nodes)"
want 1 && for b in $(binaries); do
    name=${b%%:*} exe=${b#*:}
    for memo in "" "--no-memo"; do
        echo "### $name ${memo:-(memo on)}"
        load
        "$exe" bench scaling 5000pods_500nodes $memo --reps $reps -o json >"$out/scaling-$name${memo}.json"
        python3 "$here/project.py" "$out/scaling-$name${memo}.json"
        for t in 1 2; do
            load
            perf stat -x, -e task-clock,context-switches,cpu-migrations \
                "$exe" bench 5000pods_500nodes $memo --threads $t --reps 1 2>"$out/perf.txt" >/dev/null
            awk -F, -v t=$t '{v[$3]=$1} END {printf "perf stat, %d thread(s): task-clock %.0f ms, context switches %d, migrations %d\n", t, v["task-clock"], v["context-switches"], v["cpu-migrations"]}' "$out/perf.txt"
        done
    done
done

want 2 && echo "## 2. fleets in process (after only: bench fleet --shape is new)"
want 2 && for n in $gpu8; do load; /usr/bin/time -f "peak RSS %M KiB" "$bin" bench fleet --shape gpu8 --devices "$n" --reps 100; done
want 2 && for n in $mig8; do load; /usr/bin/time -f "peak RSS %M KiB" "$bin" bench fleet --shape mig8 --devices "$n" --reps 100; done

serve_filter() {   # serve_filter NAME EXE DIR PREFIX NODES
    local name=$1 exe=$2 dir=$3 prefix=$4 nodes=$5
    load
    local t0=$(date +%s.%N)
    "$exe" serve --snapshot "$dir/cluster" "$dir/probes.json" --listen "127.0.0.1:$port" >"$out/serve.log" 2>&1 &
    local pid=$!
    until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
        kill -0 $pid 2>/dev/null || { echo "serve exited:"; tail -5 "$out/serve.log"; return 1; }
        sleep 0.2
    done
    local t1=$(date +%s.%N)
    echo "$name serve: ready after $(echo "$t1 - $t0" | bc) s, RSS $(awk '/VmRSS/ {print $2}' /proc/$pid/status) KiB"
    python3 "$here/filter.py" "127.0.0.1:$port" "$prefix" "$nodes" --names 1000,5000 --requests 100 || true
    echo "$name serve: RSS after the requests $(awk '/VmRSS/ {print $2}' /proc/$pid/status) KiB"
    kill $pid
    wait $pid 2>/dev/null || true
}

want 3 && echo "## 3. from files: capacity, plan, serve + /filter"
want 3 && for spec in $(for n in $gpu8; do echo gpu8:$n; done; for n in $mig8; do echo mig8:$n; done); do
    shape=${spec%%:*} n=${spec#*:}
    dir="$out/$shape-$n"
    [ -d "$dir/cluster" ] || "$bin" bench fleet --shape "$shape" --devices "$n" --dump "$dir" >/dev/null
    prefix=$([ "$shape" = gpu8 ] && echo gpu || echo mig)
    echo "### $shape, $n nodes ($(du -sm "$dir/cluster" | cut -f1) MB of JSON)"
    for b in $(binaries); do
        name=${b%%:*} exe=${b#*:}
        timed "$name capacity -f" "$exe" capacity -f "$dir/cluster" -o json
        timed "$name plan -f --workload ($n pods)" "$exe" plan -f "$dir/cluster" --workload "$dir/workloads.json" -o json
        serve_filter "$name" "$exe" "$dir" "$prefix" "$n"
    done
done
exit 0   # (the last `want N && ...` is false when --only names another part)
