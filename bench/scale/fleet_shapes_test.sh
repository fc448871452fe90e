#!/usr/bin/env bash
# fleet_shapes_test.sh — `dralloc bench fleet --shape gpu8|mig8` (issue 43) end to end at
# a small size: the in-process run ingests every object (a refused one fails it) and
# counts what fleet_gen.h says the shapes hold; the dump reads back through `capacity
# -f` with the same devices and allocations, and `plan` places the workload beside it.
#   fleet_shapes_test.sh DRALLOC
set -euo pipefail
d=$1
out=$(mktemp -d /tmp/dralloc-fleet.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "fleet_shapes_test: $*"; exit 1; }

# gpu8, 50 nodes: 16 devices a node; per ten nodes 17 claims holding 72 GPUs and 72 NICs
"$d" bench fleet --shape gpu8 --devices 50 --reps 3 > "$out/gpu8.txt" || { cat "$out/gpu8.txt"; fail "gpu8 run"; }
grep -q "gpu8: 50 nodes, 800 devices, 85 allocated claims holding 720 devices; 90.0 % of the GPUs held" "$out/gpu8.txt" \
  || { cat "$out/gpu8.txt"; fail "gpu8 counts"; }
# mig8, 10 nodes: 152 devices a node; 11 claims on even nodes, 9 on odd, one device each
"$d" bench fleet --shape mig8 --devices 10 --reps 3 > "$out/mig8.txt" || { cat "$out/mig8.txt"; fail "mig8 run"; }
grep -q "mig8: 10 nodes, 1520 devices, 100 allocated claims holding 100 devices; 89.8 % of the memory slices held" \
  "$out/mig8.txt" || { cat "$out/mig8.txt"; fail "mig8 counts"; }
if "$d" bench fleet --shape gpu9 --devices 10 2>/dev/null; then fail "--shape gpu9 must be refused"; fi

"$d" bench fleet --shape gpu8 --devices 50 --dump "$out/g" > /dev/null
for f in cluster/classes.json cluster/nodes-0000.json cluster/slices-0000.json cluster/claims-0000.json \
         workloads.json probes.json; do [ -s "$out/g/$f" ] || fail "--dump lacks $f"; done
"$d" capacity -f "$out/g/cluster" -o json > "$out/cap.json"
jq -e '([.nodes[].devices] | add) == 800 and ([.nodes[].allocated] | add) == 720' "$out/cap.json" > /dev/null \
  || fail "capacity of the dump: $(jq -c '[([.nodes[].devices] | add), ([.nodes[].allocated] | add)]' "$out/cap.json")"
# the workload: one pod a node (50), each a GPU and a NIC on one PCIe root; per ten nodes
# 8 GPUs are free (GPUs 6-7 on nodes 6 and 7, GPUs 3, 5, 6, 7 on node 9), each with the
# NIC of its index, on its root, free too: 40 pods placed, 10 not
"$d" plan -f "$out/g/cluster" --workload "$out/g/workloads.json" -o json > "$out/plan.json" || true
jq -e '.workloads[0].placed == 40' "$out/plan.json" > /dev/null \
  || fail "plan: $(jq -c '.workloads[0] | {placed, replicas}' "$out/plan.json")"
echo "fleet_shapes_test: ok"
