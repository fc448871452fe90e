#!/usr/bin/env bash
# plan_cli_test.sh — `dralloc plan` and `dralloc capacity` end to end (CTest; the
# argument is the dralloc binary): sharded scenario runs merged equal the unsharded
# run, the JSON contract fields, CSV and the HTML report, capacity views, usage errors.
set -euo pipefail
B=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TD=$ROOT/testdata/plan
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# scenarios: unsharded vs 3 shards merged (and merge of the unsharded output is itself)
"$B" plan -f "$TD/gpus/cluster.yaml" --scenarios "$TD/scenarios" -o json >"$T/all.json"
for i in 0 1 2; do
  "$B" plan -f "$TD/gpus/cluster.yaml" --scenarios "$TD/scenarios" --shard "$i/3" -o json >"$T/s$i.json"
done
"$B" plan merge "$T/s2.json" "$T/s0.json" "$T/s1.json" >"$T/merged.json"
"$B" plan merge "$T/all.json" >"$T/all-merged.json"
cmp -s "$T/merged.json" "$T/all-merged.json" || { diff "$T/merged.json" "$T/all-merged.json" | head -20; fail "shards merged differ from the unsharded run"; }
"$B" plan merge "$T/all.json" -o csv >"$T/all.csv"
# scenarios in name order, each workload row as hand-worked (testdata/plan/gpus/*)
head -7 "$T/all.csv" | cut -d, -f1-7 >"$T/rows"
cat >"$T/want" <<'ROWS'
scenario,workload,gang,replicas,placed,unplaced,headroom
a-two-gpu.yaml,train,false,14,12,2,0
b-extres.json,infer,false,5,5,0,1
c-gang.yaml,small,false,2,2,0,0
c-gang.yaml,big,true,6,0,6,0
c-gang.yaml,after,false,5,5,0,0
d-shared.yaml,web,false,3,3,0,1000+
ROWS
cmp -s "$T/rows" "$T/want" || { diff "$T/want" "$T/rows"; fail "scenario rows"; }
grep -q '^a-two-gpu.yaml,train,node-a,4$' "$T/all.csv" || fail "placements csv"
grep -c '"index": 1,' "$T/s1.json" | grep -qx 1 && ! grep -q '"index": [023],' "$T/s1.json" || fail "shard 1/3 holds index 1 only"
# the JSON contract: integers, the per-scenario sections
grep -q '"placed": 12,' "$T/all.json" && grep -q '"unplaced": 2,' "$T/all.json" || fail "placed/unplaced integers"
for k in nodes classes pools counters summary placements reason; do grep -q "\"$k\": " "$T/all.json" || fail "no $k"; done

# one workload: csv and the html report
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" -o csv --report "$T/r.html" >"$T/p.csv"
head -2 "$T/p.csv" | tail -1 | grep -q '^train,false,14,12,2,0,' || fail "csv row: $(head -2 "$T/p.csv")"
grep -q '<svg' "$T/r.html" && ! grep -q '<script' "$T/r.html" || fail "html report"
# table on stdout
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" | grep -q '^train  *14  *12  *2 ' || fail "table"
# what-ifs through the CLI
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/many.json" --min-nodes "$TD/gpus/shape.yaml" \
  | grep -q '^min nodes: 7 more of shape gpu-node' || fail "min-nodes"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" --add-nodes "$TD/gpus/shape.yaml:2" \
  --remove-nodes zone=b -o csv >"$T/w.csv"
grep -q '^train,false,14,14,0,' "$T/w.csv" && grep -q '^train,gpu-node-whatif-1,4$' "$T/w.csv" \
  && ! grep -q 'node-c' "$T/w.csv" || fail "add/remove nodes: $(cat "$T/w.csv")"

# capacity
"$B" capacity -f "$TD/mig/cluster.yaml" --by counter -o csv | grep -q '^gpu.nvidia.com,node-a100,gpu-0-counter-set,memory,40Gi,0,40Gi$' \
  || fail "capacity --by counter: $("$B" capacity -f "$TD/mig/cluster.yaml" --by counter -o csv)"
"$B" capacity -f "$TD/gpus/cluster.yaml" | grep -q '^node-a  *8  *0  *8  *0  *0%$' || fail "capacity table"
[ "$("$B" capacity -f "$TD/gpus/cluster.yaml" -o json | grep -c '"name": "node-')" = 3 ] || fail "capacity json"

# usage errors exit 2
set +e
"$B" plan -f "$TD/gpus/cluster.yaml" 2>/dev/null; [ $? = 2 ] || fail "plan without --workload must exit 2"
"$B" plan -f "$TD/gpus/cluster.yaml" --scenarios "$TD/scenarios" --shard 3/3 2>/dev/null; [ $? = 2 ] || fail "bad shard must exit 2"
"$B" capacity -f "$TD/gpus/cluster.yaml" --by rack 2>/dev/null; [ $? = 2 ] || fail "bad --by must exit 2"
echo "plan_cli: ok"
