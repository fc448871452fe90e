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
  | grep -q '^all  *7  *7 ' || fail "min-nodes"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" --add-nodes "$TD/gpus/shape.yaml:2" \
  --remove-nodes zone=b -o csv >"$T/w.csv"
grep -q '^train,false,14,14,0,' "$T/w.csv" && grep -q '^train,gpu-node-whatif-1,4$' "$T/w.csv" \
  && ! grep -q 'node-c' "$T/w.csv" || fail "add/remove nodes: $(cat "$T/w.csv")"

# capacity
# unavailable nodes (testdata/capacity/nodes.yaml): named in the node table, not free;
# --count-unavailable-nodes counts them
out=$("$B" capacity -f "$TD/../capacity/nodes.yaml")
grep -Eq '^gpu-cordoned \(cordoned\) +2 +0 +0 +2 ' <<<"$out" || fail "capacity: cordoned node: $out"
grep -Eq '^gpu-notready \(NotReady\) +2 +0 +0 +2 ' <<<"$out" || fail "capacity: NotReady node: $out"
out=$("$B" capacity -f "$TD/../capacity/nodes.yaml" --by class --count-unavailable-nodes)
grep -Eq '^gpu.example.com +10 +0 +10 +0 ' <<<"$out" || fail "capacity --count-unavailable-nodes: $out"
"$B" capacity -f "$TD/mig/cluster.yaml" --by counter -o csv | grep -q '^gpu.nvidia.com,node-a100,gpu-0-counter-set,memory,40Gi,0,40Gi$' \
  || fail "capacity --by counter: $("$B" capacity -f "$TD/mig/cluster.yaml" --by counter -o csv)"
"$B" capacity -f "$TD/gpus/cluster.yaml" | grep -q '^node-a  *8  *0  *8  *0  *0%$' || fail "capacity table"
[ "$("$B" capacity -f "$TD/gpus/cluster.yaml" -o json | grep -c '"name": "node-')" = 3 ] || fail "capacity json"

# --min-nodes answers under both scorings (testdata/plan/gpus/small-then-whole.yaml
# works out 2 under binpack, 23 under spread), and names a workload no count helps
# (tests/planner/plan_minnodes_cli_test.sh has the rest)
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/small-then-whole.yaml" --min-nodes "$TD/gpus/shape.yaml" \
  | grep -qx "all  *2  *23  *every workload together, in file order" \
  || fail "min-nodes under both scorings"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/sixteen.yaml" --min-nodes "$TD/gpus/shape.yaml" -o json >"$T/mn.json"
python3 - "$T/mn.json" <<'PY' || fail "min-nodes: the 16-GPU workload is not named impossible"
import json, sys
m = json.load(open(sys.argv[1]))["minNodes"]["gpu-node"]
assert m["all"] == {"binpack": 0, "spread": 0, "excluded": ["sixteen"]}, m
assert "impossible" in m["perWorkload"]["sixteen"], m
PY

# shards carry digests and i/N; merge refuses a missing, duplicate or foreign shard, naming it
grep -q '"shard": "1/3"' "$T/s1.json" && grep -q '"snapshot": "' "$T/s1.json" || fail "shard digests"
set +e
"$B" plan merge "$T/s0.json" "$T/s2.json" 2>"$T/err"; [ $? = 2 ] && grep -q "shard 1/3 is missing" "$T/err" || fail "merge: missing shard: $(cat "$T/err")"
"$B" plan merge "$T/s0.json" "$T/s1.json" "$T/s1.json" "$T/s2.json" 2>"$T/err"; [ $? = 2 ] && grep -q "shard 1/3 is given twice" "$T/err" \
  || fail "merge: duplicate shard: $(cat "$T/err")"
"$B" plan -f "$TD/mig/cluster.yaml" --scenarios "$TD/scenarios" --shard 1/3 -o json >"$T/other1.json" 2>/dev/null
"$B" plan merge "$T/s0.json" "$T/other1.json" "$T/s2.json" 2>"$T/err"; [ $? = 2 ] && grep -q "other1.json was planned on another snapshot" "$T/err" \
  || fail "merge: foreign shard: $(cat "$T/err")"
set -e

# dralloc why on a snapshot (testdata/why/cluster.yaml works the counts out), and as kubectl dra
set +e
"$B" why ml/trainer -f "$ROOT/testdata/why/cluster.yaml" >"$T/why.txt"; rc=$?
set -e
[ $rc = 1 ] || fail "why: exit $rc, want 1 (fits no node)"
grep -qx "0/4 nodes are available: 1 devices of class gpu.example.com held by claims, 1 no device matches class gpu.example.com and the selectors, 1 too few free devices of class gpu.example.com, 1 untolerated taint example.com/maintenance=firmware:NoSchedule." "$T/why.txt" \
  || fail "why: count by cause: $(cat "$T/why.txt")"
grep -q "4 held by claim ml/hog" "$T/why.txt" && grep -q "taint example.com/maintenance=firmware:NoSchedule not tolerated" "$T/why.txt" \
  && ! grep -q "cpu-d" "$T/why.txt" || fail "why: closest nodes: $(cat "$T/why.txt")"
ln -s "$(cd "$(dirname "$B")" && pwd)/$(basename "$B")" "$T/kubectl-dra"
set +e
"$T/kubectl-dra" why trainer -n ml -f "$ROOT/testdata/why/cluster.yaml" -o json >"$T/why.json"; rc=$?
set -e
[ $rc = 1 ] && grep -q '"closest"' "$T/why.json" || fail "kubectl-dra why: exit $rc"
# a pod that fits some nodes: the others counted as such, not "0/N nodes are available"
"$B" why ml/small -f "$ROOT/testdata/why/cluster.yaml" -f "$ROOT/testdata/why/one-gpu-pod.yaml" >"$T/why-some.txt" \
  && grep -qx 'pod ml/small fits 1 of 4 nodes: gpu-c' "$T/why-some.txt" \
  && grep -q '^3/4 nodes do not fit it: 1 devices of class gpu.example.com held by claims, ' "$T/why-some.txt" \
  && ! grep -q 'nodes are available' "$T/why-some.txt" || fail "why, fits some: $(cat "$T/why-some.txt")"
# a gang's shortfall (issue #40 item 5), worked by hand: 430 nodes — 414 with 8 free
# GPUs, 10 with 8 GPUs behind an untolerated node taint, 6 without GPUs — and a gang of
# 480 replicas of 8 GPUs: 414 fit, 66 short, none placed; the causes are counted on the
# state without the gang's own replicas (10 taint, 6 no device), not "414 held by claims"
{
echo "# 430 nodes: 414 with 8 free GPUs, 10 with 8 GPUs tainted example.com/repair:NoSchedule, 6 without GPUs"
echo '{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"}, "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}'
for i in $(seq -w 1 430); do
  taint=; ((10#$i > 414 && 10#$i <= 424)) && taint=', "spec": {"taints": [{"key": "example.com/repair", "effect": "NoSchedule"}]}'
  echo "---"; echo "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n$i\"}$taint}"
  ((10#$i > 424)) && continue
  devs=$(for g in 0 1 2 3 4 5 6 7; do printf '{"name": "gpu-%d"}%s' $g "$([ $g -lt 7 ] && echo ,)"; done)
  echo "---"; echo "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceSlice\", \"metadata\": {\"name\": \"n$i-gpus\"}, \"spec\": {\"driver\": \"gpu.example.com\", \"pool\": {\"name\": \"n$i\", \"generation\": 1, \"resourceSliceCount\": 1}, \"nodeName\": \"n$i\", \"devices\": [$devs]}}"
done
} >"$T/cluster66.yaml"
cat >"$T/gang66.yaml" <<'Y'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus-8}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu.example.com, count: 8}}]
---
workloads:
- name: train
  replicas: 480
  gang: true
  template:
    spec:
      containers: [{name: c, image: busybox}]
      resourceClaims: [{name: g, resourceClaimTemplateName: gpus-8}]
Y
"$B" plan -f "$T/cluster66.yaml" --workload "$T/gang66.yaml" >"$T/g66.txt"
grep -q "train: gang 66 replicas short: 414 of 480 fit, none placed (all or nothing); without the gang's own replicas, 16/430 nodes do not fit it: 10 node(s) had untolerated taint {example.com/repair: }, 6 no device matches class gpu.example.com and the selectors." "$T/g66.txt" \
  || fail "gang shortfall (text): $(grep train: "$T/g66.txt")"
"$B" plan -f "$T/cluster66.yaml" --workload "$T/gang66.yaml" -o json | jq -e '.workloads[0] | .short == {"replicas": 66, "fitted": 414} and ([.causes[].nodes] == [10, 6]) and ([.causes[].cause | select(test("held by"))] == [])' >/dev/null \
  || fail "gang shortfall (json)"
# a pod-level error: its count, no "closest nodes" repeating it per node
set +e
"$B" why ml/lost -f "$ROOT/testdata/why/cluster.yaml" -f "$ROOT/testdata/why/missing-class-pod.yaml" >"$T/why-lost.txt"
set -e
grep -q '^0/4 nodes are available: 4 claim ml/lost-gpu, request gpu: could not retrieve device class b200.example.com' "$T/why-lost.txt" \
  && ! grep -q 'closest nodes' "$T/why-lost.txt" || fail "why, pod-level error: $(cat "$T/why-lost.txt")"
# why -A: every pending DRA pod, one line each (trainer and lost fit nowhere: exit 1;
# hog is bound, not listed)
set +e
"$B" why -A -f "$ROOT/testdata/why/cluster.yaml" -f "$ROOT/testdata/why/one-gpu-pod.yaml" \
  -f "$ROOT/testdata/why/missing-class-pod.yaml" >"$T/why-all.txt"; rc=$?
"$B" why -A -f "$ROOT/testdata/why/cluster.yaml" -f "$ROOT/testdata/why/one-gpu-pod.yaml" -o json >"$T/why-all.json"
set -e
[ $rc = 1 ] && grep -Eq '^ml +small +1/4 +fits$' "$T/why-all.txt" && grep -Eq '^ml +trainer +0/4 +0/4 nodes are available: ' "$T/why-all.txt" \
  && grep -Eq '^ml +lost +0/4 ' "$T/why-all.txt" && ! grep -q 'hog' "$T/why-all.txt" || fail "why -A (exit $rc): $(cat "$T/why-all.txt")"
jq -e '.schemaVersion == 1 and ([.pods[].pod] | sort) == ["ml/small", "ml/trainer"]' "$T/why-all.json" >/dev/null || fail "why -A -o json: $(cat "$T/why-all.json")"
# --csv-dir: one table per file; JSON outputs open with schemaVersion (issue #40 item 9)
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/gang.yaml" -o json --csv-dir "$T/csv" >"$T/plan.json"
for t in workloads placements nodes classes; do [ -s "$T/csv/$t.csv" ] || fail "--csv-dir: no $t.csv"; done
head -1 "$T/csv/workloads.csv" | grep -qx 'workload,gang,replicas,placed,unplaced,headroom,reason' \
  && grep -qx 'after,node-a,1' "$T/csv/placements.csv" && [ "$(grep -c '' "$T/csv/nodes.csv")" = 4 ] \
  || fail "--csv-dir tables: $(cat "$T/csv/"*.csv)"
jq -e '.schemaVersion == 1' "$T/plan.json" >/dev/null || fail "plan -o json: no schemaVersion"
"$B" capacity -f "$TD/gpus/cluster.yaml" -o json | jq -e '.schemaVersion == 1' >/dev/null || fail "capacity -o json: no schemaVersion"
set +e
"$B" why ml/small -f "$ROOT/testdata/why/cluster.yaml" -f "$ROOT/testdata/why/one-gpu-pod.yaml" -o json | jq -e '.schemaVersion == 1' >/dev/null \
  || fail "why -o json: no schemaVersion"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/gang.yaml" --csv-dir /proc/nope 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -q -- "--csv-dir /proc/nope" "$T/err" || fail "--csv-dir unwritable: $(cat "$T/err")"
set -e
# kubectl dra --help as kubectl prints a plugin's help (cobra's layout)
"$T/kubectl-dra" --help >"$T/help.txt"
grep -qx 'Usage:' "$T/help.txt" && grep -qx '  kubectl dra \[command\]' "$T/help.txt" && grep -qx 'Available Commands:' "$T/help.txt" \
  && grep -q '^  why  ' "$T/help.txt" && grep -q '^      --context string' "$T/help.txt" \
  && grep -qx 'Use "kubectl dra \[command\] --help" for more information about a command.' "$T/help.txt" \
  && ! grep -q '^  serve' "$T/help.txt" || fail "kubectl dra --help: $(cat "$T/help.txt")"

# usage errors exit 2
set +e
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/gpus/two-gpu.yaml" --add-nodes "$TD/gpus/shape.yaml" 2>"$T/err"
[ $? = 2 ] && grep -q "want SHAPE.yaml:COUNT" "$T/err" || fail "--add-nodes without :COUNT: $(cat "$T/err")"
printf 'workloads:\n- name: w\n  replica: 3\n  template: {spec: {containers: [{name: c, image: x}]}}\n' >"$T/typo.yaml"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$T/typo.yaml" 2>"$T/err" >/dev/null
[ $? = 0 ] && grep -q 'unknown field "replica" (did you mean "replicas"?)' "$T/err" || fail "typo warning: $(cat "$T/err")"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$T/typo.yaml" --strict 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -q "strict" "$T/err" || fail "--strict: $(cat "$T/err")"
# strict pod templates (testdata/plan/templates): the template decoded as the API server
# decodes a PodTemplateSpec — unknown fields warned with kubectl's path, errors under
# --strict; a wrong type is an error always, in the decoder's words
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/templates/typos.yaml" 2>"$T/err" >/dev/null
[ $? = 0 ] || fail "template typos: exit $?, want 0 (warnings)"
cat >"$T/want" <<'ERR'
dralloc plan: warning: TD/templates/typos.yaml: workloads[0].template: unknown field "spec.nodeSelecter" (did you mean "nodeSelector"?)
dralloc plan: warning: TD/templates/typos.yaml: workloads[0].template: unknown field "spec.containers[0].resources.requets" (did you mean "requests"?)
ERR
sed "s|$TD|TD|" "$T/err" | cmp -s - "$T/want" || { sed "s|$TD|TD|" "$T/err" | diff "$T/want" -; fail "template typos: warnings"; }
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/templates/typos.yaml" --strict 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -qF 'workloads[0].template: unknown field "spec.nodeSelecter" (did you mean "nodeSelector"?), unknown field "spec.containers[0].resources.requets" (did you mean "requests"?) (--strict)' "$T/err" \
  || fail "template typos --strict: $(cat "$T/err")"
printf 'workloads:\n- name: w\n  template: {spec: {containers: [{name: c, resources: {requests: "60"}}]}}\n' >"$T/wrongtype.yaml"
for strict in "" --strict; do
  "$B" plan -f "$TD/gpus/cluster.yaml" --workload "$T/wrongtype.yaml" $strict 2>"$T/err" >/dev/null
  [ $? = 2 ] && grep -qF 'workloads[0].template: spec.containers[0].resources.requests: expected map, got string (json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList)' "$T/err" \
    || fail "template wrong type $strict: $(cat "$T/err")"
done
printf 'workloads:\n- name: w\n  template: {spec: {nodeSelector: [zone=a], containers: [{name: c}]}}\n' >"$T/wrongtype.yaml"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$T/wrongtype.yaml" 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -qF 'workloads[0].template: spec.nodeSelector: expected map, got list (json: cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector of type map[string]string)' "$T/err" \
  || fail "template list for a map: $(cat "$T/err")"
printf 'workloads:\n- name: w\n  template: {spec: {containers: [{name: c, ports: [{containerPort: "80"}], livenessProbe: {httpGet: {port: true}}}]}}\n' >"$T/wrongtype.yaml"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$T/wrongtype.yaml" 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -qF 'spec.containers[0].ports[0].containerPort: expected integer, got string (json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32)' "$T/err" \
  || fail "template string for an int32 (the first wrong type is the one reported): $(cat "$T/err")"
printf 'workloads:\n- name: w\n  template: {spec: {containers: [{name: c, resources: {limits: {cpu: 8 cores}}}]}}\n' >"$T/wrongtype.yaml"
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$T/wrongtype.yaml" 2>"$T/err" >/dev/null
[ $? = 2 ] && grep -qF "spec.containers[0].resources.limits[cpu]: quantities must match the regular expression" "$T/err" \
  || fail "template bad quantity: $(cat "$T/err")"
# a realistic template (resources, probes, nodeSelector, tolerations, affinity, volumes, ...):
# no warning under --strict; zone a only, 2 nodes x 8 GPUs for 10 replicas of 2: 8 placed
"$B" plan -f "$TD/gpus/cluster.yaml" --workload "$TD/templates/realistic.yaml" --strict -o csv 2>"$T/err" >"$T/p.csv"
[ $? = 0 ] && [ ! -s "$T/err" ] && grep -q '^trainer,false,10,8,2,0,' "$T/p.csv" || fail "realistic template: $(cat "$T/err" "$T/p.csv")"
# every workload file under testdata/ reads with no warning under --strict
for f in "$TD"/*/workloads.yaml "$TD"/scenarios/* "$TD"/gpus/{two-gpu,gang,shared-claim,sixteen,small-then-whole}.yaml \
         "$TD"/gpus/{many,extres}.json "$ROOT"/testdata/why/workloads.yaml "$ROOT"/testdata/bestfit/workloads.yaml; do
  "$B" plan -f "$TD/gpus/cluster.yaml" --workload "$f" --strict 2>"$T/err" >/dev/null
  ! grep -q "unknown field\|expected\|strict" "$T/err" || fail "$f under --strict: $(cat "$T/err")"
done
"$B" why -f "$ROOT/testdata/why/cluster.yaml" ml/nosuch 2>"$T/err"; [ $? = 2 ] && grep -q "pod ml/nosuch not found" "$T/err" || fail "why: no such pod"
"$B" plan -f "$TD/gpus/cluster.yaml" 2>/dev/null; [ $? = 2 ] || fail "plan without --workload must exit 2"
"$B" plan -f "$TD/gpus/cluster.yaml" --scenarios "$TD/scenarios" --shard 3/3 2>/dev/null; [ $? = 2 ] || fail "bad shard must exit 2"
"$B" capacity -f "$TD/gpus/cluster.yaml" --by rack 2>/dev/null; [ $? = 2 ] || fail "bad --by must exit 2"
echo "plan_cli: ok"
