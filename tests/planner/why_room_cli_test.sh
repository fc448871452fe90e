#!/usr/bin/env bash
# why_room_cli_test.sh — `dralloc why NS/POD --make-room` end to end (CTest; the argument
# is the dralloc binary) on testdata/room/three-nodes.yaml, worked by hand there: the
# JSON contract of issue #42, exit codes 0 (a candidate), 1 (none), 2 (an error: the pod
# not found, not pending, a PriorityClass that does not exist), --allow-pdb-violations.
set -euo pipefail
B=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TD=$ROOT/testdata/room
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# node-b (2 free) needs 2 victims, node-a 3; node-c's pods are under a PDB with no
# disruption allowed, so node-c is no candidate without --allow-pdb-violations
rc=0; "$B" why ml/big -f "$TD/three-nodes.yaml" --make-room -o json >"$T/big.json" || rc=$?
[ "$rc" = 0 ] || fail "ml/big: exit $rc, want 0"
python3 - "$T/big.json" <<'PY' || fail "ml/big: $(head -c 3000 "$T/big.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["pod"] == "ml/big" and p["fits"] is False, p
c = p["candidates"]
assert [x["node"] for x in c] == ["node-b", "node-a"], c
assert c[0]["victims"] == [{"namespace": "ml", "name": "node-b-p4", "priority": 0},
                           {"namespace": "ml", "name": "node-b-p5", "priority": 0}], c[0]
assert c[0]["pdbViolations"] == 0
assert [d["device"] for d in c[0]["devices"]] == ["gpu-4", "gpu-5", "gpu-6", "gpu-7"], c[0]["devices"]
assert all(set(d) == {"request", "driver", "pool", "device"} and d["pool"] == "node-b" for d in c[0]["devices"])
assert [v["name"] for v in c[1]["victims"]] == ["node-a-p4", "node-a-p5", "node-a-p6"], c[1]
PY

# with violations allowed node-c comes last, 3 victims that each violate keep-c
"$B" why ml/big -f "$TD/three-nodes.yaml" --make-room --allow-pdb-violations -o json >"$T/pdb.json"
python3 - "$T/pdb.json" <<'PY' || fail "--allow-pdb-violations: $(head -c 3000 "$T/pdb.json")"
import json, sys
c = json.load(open(sys.argv[1]))["candidates"]
assert [x["node"] for x in c] == ["node-b", "node-a", "node-c"], c
assert c[2]["pdbViolations"] == 3, c[2]
PY

# the text names the victims and the devices
"$B" why ml/big -f "$TD/three-nodes.yaml" --make-room >"$T/big.txt"
grep -q "^  node-b: 2 victim(s), 0 PDB violation(s)$" "$T/big.txt" || fail "text: $(cat "$T/big.txt")"
grep -q "^    evict ml/node-b-p5 (priority 0)$" "$T/big.txt" || fail "text: $(cat "$T/big.txt")"
grep -q "^    gets gpu.example.com/node-b/gpu-7 (request gpus)$" "$T/big.txt" || fail "text: $(cat "$T/big.txt")"

# 9 GPUs on 8-GPU nodes: no victim set anywhere, exit 1 and an empty list
rc=0; "$B" why ml/huge -f "$TD/three-nodes.yaml" --make-room -o json >"$T/huge.json" || rc=$?
[ "$rc" = 1 ] || fail "ml/huge: exit $rc, want 1"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["candidates"] == [] and p["fits"] is False, p' "$T/huge.json" \
  || fail "ml/huge: $(cat "$T/huge.json")"

# plain `why` reads the same snapshot: its PriorityClasses and PDB are not the store's
rc=0; "$B" why ml/big -f "$TD/three-nodes.yaml" >"$T/plain.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "why ml/big (no --make-room): exit $rc, want 1: $(cat "$T/plain.txt")"
grep -q "^pod ml/big fits no node.$" "$T/plain.txt" || fail "why ml/big: $(cat "$T/plain.txt")"

# errors: exit 2 with the reason
expect_error() {   # WANT-TEXT ARGS...
  local want=$1; shift
  rc=0; "$B" why "$@" --make-room >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || fail "$*: exit $rc, want 2"
  grep -qF "$want" "$T/err" || fail "$*: stderr $(cat "$T/err"), want $want"
}
expect_error "pod ml/node-a-p1 is not pending: it is bound to node node-a (spec.nodeName)" ml/node-a-p1 -f "$TD/three-nodes.yaml"
expect_error "pod ml/nope not found" ml/nope -f "$TD/three-nodes.yaml"
expect_error "pod ml/ghost: no PriorityClass with name ghost was found" ml/big -f "$TD/three-nodes.yaml" -f "$TD/ghost.yaml"
rc=0; "$B" why -A --make-room -f "$TD/three-nodes.yaml" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "-A --make-room: exit $rc, want 2"

# plan --defrag: node-b's two latest pods move to node-a's and node-c's free GPU, ml/big
# goes to node-b; ml/huge (9 GPUs) stays unplaced: exit 1. The HTML report has the section.
rc=0; "$B" plan --defrag -f "$TD/three-nodes.yaml" -o json --report "$T/defrag.html" >"$T/defrag.json" || rc=$?
[ "$rc" = 1 ] || fail "plan --defrag: exit $rc, want 1 (ml/huge unplaced)"
python3 - "$T/defrag.json" <<'PY' || fail "plan --defrag: $(cat "$T/defrag.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["moves"] == [{"pod": "ml/node-b-p4", "from": "node-b", "to": "node-a"},
                      {"pod": "ml/node-b-p5", "from": "node-b", "to": "node-c"}], p["moves"]
assert p["strandedBefore"] == 4 and p["strandedAfter"] == 0, p
assert p["pods"][0] == {"pod": "ml/big", "node": "node-b", "moves": 2}, p["pods"]
assert "unplaced" in p["pods"][1], p["pods"]
PY
grep -q "Defragmentation: moves that make room" "$T/defrag.html" || fail "the report has no defrag section"
grep -q "<td>ml/node-b-p5</td><td>node-b</td><td>node-c</td>" "$T/defrag.html" || fail "the report lacks a move"
# one move allowed: none made
"$B" plan --defrag --max-moves 1 -f "$TD/three-nodes.yaml" -o json >"$T/one.json" || true
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["moves"] == [], p' "$T/one.json" || fail "--max-moves 1: $(cat "$T/one.json")"
# plan --preempt: the same two pods evicted for ml/big
"$B" plan --preempt -f "$TD/three-nodes.yaml" -o json >"$T/preempt.json" || true
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert [e["pod"] for e in p["evictions"]] == ["ml/node-b-p4", "ml/node-b-p5"], p' \
  "$T/preempt.json" || fail "plan --preempt: $(cat "$T/preempt.json")"
echo "why_room_cli: ok"
