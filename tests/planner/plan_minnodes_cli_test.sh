#!/usr/bin/env bash
# plan_minnodes_cli_test.sh — `dralloc plan --min-nodes ... [--price ...]` end to end
# (CTest; the argument is the dralloc binary), against the answers worked out by hand in
# testdata/plan/buy/*.yaml: per-workload counts, an impossible workload named with its
# cause and left out of the whole file's count, the cheapest mix of two shapes where the
# shape cheaper per node is not, and the first screen of the text report.
set -euo pipefail
B=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TD=$ROOT/testdata/plan/buy
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# a mixed file with one impossible workload (mixed.yaml): train 2, infer 0, b200
# impossible (no B200 anywhere), all but b200: 3 under either scoring
"$B" plan -f "$TD/cluster.yaml" --workload "$TD/mixed.yaml" --min-nodes "$TD/shape-gpu4.yaml" -o json >"$T/mixed.json"
python3 - "$T/mixed.json" <<'PY' || fail "min-nodes on a mixed file: $(head -c 2000 "$T/mixed.json")"
import json, sys
p = json.load(open(sys.argv[1]))
m = p["minNodes"]
assert list(m) == ["gpu4"], m
s = m["gpu4"]
assert s["all"] == {"binpack": 3, "spread": 3, "excluded": ["b200"]}, s["all"]
per = s["perWorkload"]
assert per["train"] == {"binpack": 2, "spread": 2}, per
assert per["infer"] == {"binpack": 0, "spread": 0}, per
assert per["b200"]["impossible"].startswith("no device matches class b200.example.com"), per["b200"]
# the plan printed is the cluster with the 3 copies, not a probe fleet
assert p["addedNodes"] == {"gpu4": 3}, p["addedNodes"]
assert p["summary"]["nodes"] == 4 and p["summary"]["unplaced"] == 1, p["summary"]
assert "buy" not in p
PY
# the first screen says it, before the workloads table
"$B" plan -f "$TD/cluster.yaml" --workload "$TD/mixed.yaml" --min-nodes "$TD/shape-gpu4.yaml" >"$T/mixed.txt"
head -8 "$T/mixed.txt" | grep -q '^all placeable  *3  *3  *without b200$' || fail "text: all: $(head -8 "$T/mixed.txt")"
head -8 "$T/mixed.txt" | grep -q '^train  *2  *2 ' && head -8 "$T/mixed.txt" | grep -q '^b200 .*impossible: no device matches class b200.example.com' \
  || fail "text: per workload: $(head -8 "$T/mixed.txt")"
grep -q '^THE PLAN BELOW: the cluster with 3 x gpu4 added' "$T/mixed.txt" || fail "text: which cluster"

# no count within --max-nodes: null, and the plan is the cluster as given
"$B" plan -f "$TD/cluster.yaml" --workload "$TD/mixed.yaml" --min-nodes "$TD/shape-gpu4.yaml" --max-nodes 2 -o json >"$T/max2.json"
python3 - "$T/max2.json" <<'PY' || fail "min-nodes within --max-nodes 2"
import json, sys
p = json.load(open(sys.argv[1]))
s = p["minNodes"]["gpu4"]
assert s["all"] == {"binpack": None, "spread": None, "excluded": ["b200"]}, s["all"]
assert s["perWorkload"]["train"] == {"binpack": 2, "spread": 2}, s
assert p["addedNodes"] == {} and p["summary"]["nodes"] == 1, (p["addedNodes"], p["summary"])
PY

# two shapes at two prices (nine.yaml): small alone 5 x 10 = 50, big alone 2 x 30 = 60,
# the cheapest mix 1 small + 1 big = 40; b200 left out
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" \
  --min-nodes "$TD/shape-big.yaml" --price small=10,big=30 -o json >"$T/buy.json"
python3 - "$T/buy.json" <<'PY' || fail "the buy list: $(head -c 3000 "$T/buy.json")"
import json, sys
p = json.load(open(sys.argv[1]))
b = p["buy"]
assert b["total"] == 40 and b["nodes"] == {"small": 1, "big": 1}, b
assert b["excluded"] == ["b200"] and "impossible" in b["perWorkload"]["b200"], b
serve = b["perWorkload"]["serve"]
assert serve["existing"] == 0 and serve["small"] + serve["big"] == 9 and serve["unplaced"] == 0, serve
assert p["minNodes"]["small"]["all"]["binpack"] == 5 and p["minNodes"]["big"]["all"]["binpack"] == 2, p["minNodes"]
assert p["addedNodes"] == {"small": 1, "big": 1}, p["addedNodes"]
assert p["workloads"][0]["placed"] == 9, p["workloads"][0]
PY
# other prices, other answer: big at 18 is cheaper than 2 small: 1 big + 1 small = 28
# against 2 big = 36 and 5 small = 50
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" \
  --min-nodes "$TD/shape-big.yaml" --price small=10 --price big=18 -o json >"$T/buy2.json"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["buy"]; assert b["total"] == 28 and b["nodes"] == {"small": 1, "big": 1}, b' "$T/buy2.json" \
  || fail "the buy list at other prices"
# and when the big node is the cheaper one, it alone: 2 x 12 = 24 against 12 + 13 = 25 for 1 + 1
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" \
  --min-nodes "$TD/shape-big.yaml" --price small=13,big=12 -o json >"$T/buy3.json"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["buy"]; assert b["total"] == 24 and b["nodes"] == {"small": 0, "big": 2}, b' "$T/buy3.json" \
  || fail "the buy list when the big node is cheaper: $(head -c 600 "$T/buy3.json")"
# the text report's first lines: what to buy
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" \
  --min-nodes "$TD/shape-big.yaml" --price small=10,big=30 >"$T/buy.txt"
head -1 "$T/buy.txt" | grep -qx 'WHAT TO BUY: 1 x small + 1 x big, 40 in all (the cheapest mix at the prices given, binpack scoring)' \
  || fail "text: first line: $(head -1 "$T/buy.txt")"
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" \
  --min-nodes "$TD/shape-big.yaml" --price small=10,big=30 -o table --report "$T/buy.html" >/dev/null
grep -q '<h2>What to buy</h2>' "$T/buy.html" && grep -q '<th>on big</th>' "$T/buy.html" || fail "html: what to buy"

# one shape priced: its own count for all but b200, 3 x 5 = 15
"$B" plan -f "$TD/cluster.yaml" --workload "$TD/mixed.yaml" --min-nodes "$TD/shape-gpu4.yaml" --price gpu4=5 -o json >"$T/buy1.json"
python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["buy"]; assert b["total"] == 15 and b["nodes"] == {"gpu4": 3} and b["excluded"] == ["b200"], b' "$T/buy1.json" \
  || fail "the buy list of one shape: $(head -c 600 "$T/buy1.json")"

# usage: a price for no shape, a shape without a price, a price not > 0, --price without --min-nodes
set +e
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" --price small=0 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -q "the price 0 is not a number > 0" "$T/err" || fail "--price 0: $(cat "$T/err")"
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" --price small=10,huge=3 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -q "no --min-nodes shape is named huge (the shapes: small)" "$T/err" || fail "--price for no shape: $(cat "$T/err")"
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" --min-nodes "$TD/shape-big.yaml" \
  --price small=10 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -q "no price for shape big" "$T/err" || fail "--price missing a shape: $(cat "$T/err")"
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --price small=10 2>"$T/err" >/dev/null
[ $? = 2 ] || fail "--price without --min-nodes must exit 2"
"$B" plan -f "$TD/cpu-cluster.yaml" --workload "$TD/nine.yaml" --min-nodes "$TD/shape-small.yaml" --min-nodes "$TD/shape-small.yaml" 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -q "two node shapes are named small" "$T/err" || fail "the same shape twice: $(cat "$T/err")"
set -e
echo "plan_minnodes_cli: ok"
