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
python3 - "$T/all.json" "$T/s1.json" <<'PY' || fail "scenario contents"
import json, sys
a = json.load(open(sys.argv[1]))["scenarios"]
assert [s["file"] for s in a] == ["a-two-gpu.yaml", "b-extres.json", "c-gang.yaml", "d-shared.yaml"], a
assert [s["index"] for s in json.load(open(sys.argv[2]))["scenarios"]] == [1], "shard 1/3 holds index 1"
w = a[0]["workloads"][0]
assert isinstance(w["placed"], int) and isinstance(w["unplaced"], int)
assert (w["name"], w["replicas"], w["placed"], w["unplaced"]) == ("train", 14, 12, 2), w
assert w["placements"] == [{"node": "node-a", "replicas": 4}, {"node": "node-b", "replicas": 4}, {"node": "node-c", "replicas": 4}]
assert "reason" in w and all(k in a[0] for k in ("nodes", "classes", "pools", "counters", "summary"))
PY

# one workload: csv and the html report
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" -o csv --report "$T/r.html" >"$T/p.csv"
head -2 "$T/p.csv" | tail -1 | grep -q '^train,false,14,12,2,0,' || fail "csv row: $(head -2 "$T/p.csv")"
grep -q '<svg' "$T/r.html" && ! grep -q '<script' "$T/r.html" || fail "html report"
# table on stdout
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" | grep -q '^train  *14  *12  *2 ' || fail "table"
# what-ifs through the CLI
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/many.json" --min-nodes "$TD/gpus/shape.yaml" -o json \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["minNodes"]["count"] == 7, d["minNodes"]' || fail "min-nodes"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" --add-nodes "$TD/gpus/shape.yaml:2" \
  --remove-nodes zone=b -o json | python3 -c '
import json,sys; d=json.load(sys.stdin); w=d["workloads"][0]
assert d["summary"]["nodes"] == 4 and w["placed"] == 14, (d["summary"], w)' || fail "add/remove nodes"

# capacity
"$B" capacity -f "$TD/mig/cluster.yaml" --by counter -o csv | grep -q '^gpu.nvidia.com,node-a100,gpu-0-counter-set,memory,40Gi,0,40Gi$' \
  || fail "capacity --by counter: $("$B" capacity -f "$TD/mig/cluster.yaml" --by counter -o csv)"
"$B" capacity -f "$TD/gpus/cluster.yaml" | grep -q '^node-a  *8  *0  *8  *0%$' || fail "capacity table"
"$B" capacity -f "$TD/gpus/cluster.yaml" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["nodes"]) == 3' \
  || fail "capacity json"

# usage errors exit 2
set +e
"$B" plan -f "$TD/gpus/cluster.yaml" 2>/dev/null; [ $? = 2 ] || fail "plan without --workload must exit 2"
"$B" plan -f "$TD/gpus/cluster.yaml" --scenarios "$TD/scenarios" --shard 3/3 2>/dev/null; [ $? = 2 ] || fail "bad shard must exit 2"
"$B" capacity -f "$TD/gpus/cluster.yaml" --by rack 2>/dev/null; [ $? = 2 ] || fail "bad --by must exit 2"
echo "plan_cli: ok"
