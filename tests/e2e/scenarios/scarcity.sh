# Sourced by tests/e2e/run.sh: a world of scarce, partitionable devices and the checks
# of what the API server holds about it, shared by scenario_bind_scarcity
# (bind_scarcity.sh) and scenario_two_schedulers (two_schedulers.sh).
#
# The world, per node node-I (pool node-I of driver gpu.e2e.dralloc.dev, two
# ResourceSlices):
#   node-I-counters  a counter set gpu0 {memory: 8Gi}, in a slice of its own
#   node-I-devices   gpu0-full    size=full numa=0, consumes gpu0 memory 8Gi
#                    gpu0-half-0  size=half numa=0, consumes gpu0 memory 4Gi
#                    gpu0-half-1  size=half numa=0, consumes gpu0 memory 4Gi
#                    gpu1         size=full numa=1, no counters
# so a node holds at most gpu1 + (gpu0-full | one or two halves), i.e. 2-3 devices.
# Claims (labels e2e-kind=single|pair):
#   single  one request gpu, firstAvailable [full (size=full), half (size=half)]
#   pair    two devices (ExactCount 2) with matchAttribute gpu.e2e.dralloc.dev/numa:
#           only the two halves of gpu0 satisfy it (gpu1 is on numa 1, gpu0-full and a
#           half together exceed the counter)

SCARCE_DRIVER=gpu.e2e.dralloc.dev
SCARCE_CLASS=e2e-scarce-gpu

# scarce_world NODES: the DeviceClass and 2 slices per node
scarce_world() {
    local n=$1 i y
    y="apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: $SCARCE_CLASS
spec:
  selectors:
  - cel:
      expression: device.driver == \"$SCARCE_DRIVER\"
"
    for ((i = 0; i < n; i++)); do
        y+="---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-$i-counters, labels: {e2e-world: scarce}}
spec:
  driver: $SCARCE_DRIVER
  nodeName: node-$i
  pool: {name: node-$i, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu0
    counters:
      memory: {value: 8Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-$i-devices, labels: {e2e-world: scarce}}
spec:
  driver: $SCARCE_DRIVER
  nodeName: node-$i
  pool: {name: node-$i, generation: 1, resourceSliceCount: 2}
  devices:
  - name: gpu0-full
    attributes: {size: {string: full}, numa: {int: 0}}
    consumesCounters: [{counterSet: gpu0, counters: {memory: {value: 8Gi}}}]
  - name: gpu0-half-0
    attributes: {size: {string: half}, numa: {int: 0}}
    consumesCounters: [{counterSet: gpu0, counters: {memory: {value: 4Gi}}}]
  - name: gpu0-half-1
    attributes: {size: {string: half}, numa: {int: 0}}
    consumesCounters: [{counterSet: gpu0, counters: {memory: {value: 4Gi}}}]
  - name: gpu1
    attributes: {size: {string: full}, numa: {int: 1}}
"
    done
    k apply -f - >/dev/null <<<"$y"
}

# dralloc_synced [PORT]: wait until dralloc's cache (PORT: the main listener of the replica) holds as many DeviceClasses, ResourceSlices
# and ResourceClaims as the API server (pods are created only then: dralloc's watch is
# not the scheduler's, a filter answered before it saw the devices would reject nodes)
dralloc_synced() {
    local deadline=$((SECONDS + ${WAIT%s})) kind want have
    for kind in DeviceClass:deviceclasses ResourceSlice:resourceslices ResourceClaim:resourceclaims; do
        while :; do
            want=$(k get "${kind#*:}" -A --no-headers 2>/dev/null | wc -l)
            have=$(dralloc_get /debug/cache "${1:-}" | jq -r --arg k "${kind%%:*}" '.objects[$k] // 0')
            [[ $have == "$want" ]] && break
            ((SECONDS >= deadline)) && { fail "dralloc's cache has ${have:-?} ${kind%%:*} objects, the API server $want"; return 1; }
            sleep 0.2
        done
    done
}

scarce_world_delete() {
    k delete resourceslice -l e2e-world=scarce --wait=false >/dev/null 2>&1
    k delete deviceclass "$SCARCE_CLASS" --wait=false >/dev/null 2>&1
    return 0
}

# scarce_cleanup: $NS's pods and claims and the world, whether the scenario passed or
# not (the next scenario on this cluster must find the devices free); bounded
scarce_cleanup() {
    k delete pods -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceclaims -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    scarce_world_delete
}

# scarce_kind I: every 4th claim a pair, the others single
scarce_kind() { if (($1 % 4 == 0)); then echo pair; else echo single; fi; }

# scarce_claim_spec KIND: the claim's spec (indented for a ResourceClaim's spec:)
scarce_claim_spec() {
    local sel='device.attributes["'$SCARCE_DRIVER'"].size'
    if [[ $1 == pair ]]; then
        cat <<EOF
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: $SCARCE_CLASS
        allocationMode: ExactCount
        count: 2
    constraints:
    - requests: [gpus]
      matchAttribute: $SCARCE_DRIVER/numa
EOF
    else
        cat <<EOF
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - name: full
        deviceClassName: $SCARCE_CLASS
        selectors: [{cel: {expression: '$sel == "full"'}}]
      - name: half
        deviceClassName: $SCARCE_CLASS
        selectors: [{cel: {expression: '$sel == "half"'}}]
EOF
    fi
}

# scarce_claims N: ResourceClaims c-000.. in $NS
scarce_claims() {
    local i kind y=
    for ((i = 0; i < $1; i++)); do
        kind=$(scarce_kind "$i")
        y+="---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: $(printf c-%03d "$i")
  namespace: $NS
  labels: {e2e-kind: $kind}
spec:
$(scarce_claim_spec "$kind")
"
    done
    k apply -f - >/dev/null <<<"$y"
}

# scarce_pods N SCHEDULER [FROM]: pods p-FROM..p-(N-1) (FROM: 0) in $NS, each using claim c-III (resourceClaimName);
# SCHEDULER empty: no schedulerName (the API server defaults it, admission may change it).
# Labels: e2e-kind, e2e-half=a (I/4 even) | b (I/4 odd): pairs and singles in each half.
scarce_pods() {
    local i kind y= sched=
    [[ -n $2 ]] && sched="schedulerName: $2"
    for ((i = ${3:-0}; i < $1; i++)); do
        kind=$(scarce_kind "$i")
        y+="---
apiVersion: v1
kind: Pod
metadata:
  name: $(printf p-%03d "$i")
  namespace: $NS
  labels: {e2e-kind: $kind, e2e-half: $( ((i / 4 % 2 == 0)) && echo a || echo b)}
spec:
  $sched
  terminationGracePeriodSeconds: 0
  resourceClaims:
  - name: gpu
    resourceClaimName: $(printf c-%03d "$i")
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      claims:
      - name: gpu
"
    done
    k apply -f - >/dev/null <<<"$y"
}

# scarce_state: one JSON object summarising what the API server holds now (pods and
# claims of $NS, the world's slices); violations in the arrays named below
scarce_state() {
    local d rc
    d=$(mktemp -d) || return 1
    k get pods -n "$NS" -o json >"$d/pods" && k get resourceclaims -A -o json >"$d/claims" &&
        k get resourceslices -o json >"$d/slices" || { rm -rf "$d"; return 1; }
    jq -n --slurpfile pods "$d/pods" --slurpfile claims "$d/claims" --slurpfile slices "$d/slices" \
        --arg driver "$SCARCE_DRIVER" --arg ns "$NS" -f /dev/stdin <<'EOF'
def qty: # a Kubernetes quantity (the suffixes used here) as a number
  capture("^(?<n>[0-9.]+)(?<s>[A-Za-z]*)$") as $c
  | ($c.n | tonumber) * ({"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": 1048576, "Gi": 1073741824}[$c.s]);
def key: "\(.driver)/\(.pool)/\(.device)";
$pods[0] as $pods | $claims[0] as $claims | $slices[0] as $slices |
# every device of the driver: key -> {attributes, consumes, node}
([$slices.items[] | select(.spec.driver == $driver) | .spec as $s | ($s.devices // [])[]
  | {key: "\($s.driver)/\($s.pool.name)/\(.name)",
     value: {attrs: (.attributes // {}), consumes: (.consumesCounters // []), node: $s.nodeName, pool: $s.pool.name}}]
 | from_entries) as $devs
# every counter: driver/pool/set/counter -> capacity
| ([$slices.items[] | select(.spec.driver == $driver) | .spec as $s | ($s.sharedCounters // [])[]
   | .name as $set | .counters | to_entries[]
   | {key: "\($s.driver)/\($s.pool.name)/\($set)/\(.key)", value: (.value.value | qty)}] | from_entries) as $caps
# every allocated device of every claim in the cluster (all namespaces: a device is
# allocated twice whichever claims hold it)
| [$claims.items[] | select(.status.allocation != null) | . as $c
   | .status.allocation.devices.results[]? | select(.driver == $driver)
   | {claim: "\($c.metadata.namespace)/\($c.metadata.name)", request, driver, pool, device, key: key}] as $allocs
| ($allocs | group_by(.key) | map(select(length > 1) | {device: .[0].key, claims: map(.claim)})) as $dups
| ($allocs | map(select($devs[.key] == null) | .key)) as $unknown
| ([$allocs[] | $devs[.key] as $d | select($d != null) | $d.consumes[] | .counterSet as $set
    | .counters | to_entries[] | {key: "\($d.pool)/\($set)/\(.key)", v: (.value.value | qty)}]
   | group_by(.key) | map({counter: .[0].key, used: (map(.v) | add), cap: $caps["\($driver)/\(.[0].key)"]})
   | map(select(.cap == null or .used > .cap))) as $over
# the claims of this namespace: the constraints of their kind
| [$claims.items[] | select(.metadata.namespace == $ns)] as $mine
| [$mine[] | select(.status.allocation != null) | . as $c | .status.allocation.devices.results as $r
   | if $c.metadata.labels["e2e-kind"] == "pair" then
       select(($r | length) != 2 or ($r | map(select(.request == "gpus")) | length) != 2
              or ($r | map($devs[key].attrs.numa.int) | unique | length) != 1)
     else
       select(($r | length) != 1 or ($r[0].request | IN("gpu/full", "gpu/half") | not)
              or ($devs[$r[0] | key].attrs.size.string != ($r[0].request | ltrimstr("gpu/"))))
     end
   | {claim: $c.metadata.name, results: $r}] as $badConstraint
# pods: bound ones must have their claim allocated on their node and reserved for them
| ($mine | map({key: .metadata.name, value: .}) | from_entries) as $byName
| [$pods.items[] | select(.metadata.deletionTimestamp == null)] as $live
| [$live[] | select(.spec.nodeName != null)] as $bound
| [$live[] | select(.spec.nodeName == null)] as $pending
| [$bound[] | . as $p | $byName[$p.spec.resourceClaims[0].resourceClaimName] as $c
   | select($c == null or $c.status.allocation == null
            or ([$c.status.reservedFor[]? | select(.uid == $p.metadata.uid)] | length) != 1
            or ([$c.status.allocation.devices.results[] | select(.pool != $p.spec.nodeName)] | length) > 0
            or ([$c.status.allocation.nodeSelector.nodeSelectorTerms[]?.matchFields[]?
                 | select(.key == "metadata.name") | .values[]] != [$p.spec.nodeName]))
   | {pod: $p.metadata.name, node: $p.spec.nodeName, claim: $c.metadata.name, allocation: $c.status.allocation,
      reservedFor: $c.status.reservedFor}] as $badBound
| ([$bound[] | .spec.resourceClaims[0].resourceClaimName] | map({key: ., value: true}) | from_entries) as $boundClaims
| [$mine[] | select(.status.allocation != null and ($boundClaims[.metadata.name] | not)) | .metadata.name] as $orphans
# saturation: the nodes where a pending single (or pair) would still fit
| [$slices.items[] | select(.spec.driver == $driver and .spec.sharedCounters != null) | .spec.pool.name] as $nodes
| ($allocs | map({key: .key, value: true}) | from_entries) as $used
| [$nodes[] | . as $n
   | ([$allocs[] | select(.pool == $n) | $devs[.key].consumes[]? | select(.counterSet == "gpu0")
       | .counters.memory.value | qty] | add // 0) as $c
   | {node: $n, gpu1Free: ($used["\($driver)/\($n)/gpu1"] | not), gpu0Used: ($c / 1073741824)}] as $perNode
| {
    pods: ($live | length), bound: ($bound | length), pending: ($pending | length),
    pendingSingles: ([$pending[] | select(.metadata.labels["e2e-kind"] == "single")] | length),
    pendingPairs: ([$pending[] | select(.metadata.labels["e2e-kind"] == "pair")] | length),
    allocatedDevices: ($allocs | length),
    schedulers: ([$live[] | .spec.schedulerName] | group_by(.) | map({key: .[0], value: length}) | from_entries),
    perNode: $perNode,
    fitsSingle: [$perNode[] | select(.gpu1Free or .gpu0Used < 8) | .node],
    fitsPair: [$perNode[] | select(.gpu0Used == 0) | .node],
    dups: $dups, unknown: $unknown, overCounters: $over, badConstraint: $badConstraint,
    badBound: $badBound, orphans: $orphans
  }
| .violations = (.dups + .unknown + .overCounters + .badConstraint)
| .settled = ((.badBound | length) == 0 and (.orphans | length) == 0
              and (.pendingSingles == 0 or (.fitsSingle | length) == 0)
              and (.pendingPairs == 0 or (.fitsPair | length) == 0))
EOF
    rc=$?
    rm -rf "$d"
    return $rc
}

# scarce_settle LABEL SECONDS: poll the API server's state until it is settled (every
# bound pod's claim allocated on its node and reserved for it, no allocation without a
# bound pod, no pending pod that would fit anywhere); fail at once on a device
# allocated twice, a counter exceeded, a constraint broken. Leaves the last state in
# $SCARCE_STATE.
scarce_settle() {
    local label=$1 deadline=$((SECONDS + $2)) s
    while :; do
        if ! s=$(scarce_state); then
            ((SECONDS >= deadline)) && { fail "$label: reading the API server's state failed"; return 1; }
            sleep 1; continue
        fi
        SCARCE_STATE=$s
        if [[ $(jq '.violations | length' <<<"$s") != 0 ]]; then
            jq '{dups, unknown, overCounters, badConstraint}' <<<"$s" >&2
            fail "$label: the API server holds an inconsistent allocation (above)"
            return 1
        fi
        [[ $(jq .settled <<<"$s") == true ]] && return 0
        if ((SECONDS >= deadline)); then
            jq '{bound, pending, pendingSingles, pendingPairs, perNode, fitsSingle, fitsPair, badBound, orphans}' <<<"$s" >&2
            fail "$label: not settled after $2 s (above)"
            return 1
        fi
        sleep 2
    done
}

scarce_summary() { # one line from $SCARCE_STATE
    jq -r '"\(.bound) bound, \(.pending) pending (\(.pendingSingles) single, \(.pendingPairs) pair), \(.allocatedDevices) devices allocated; gpu0 used per node (GiB): \([.perNode[].gpu0Used] | map(tostring) | join(",")), gpu1 free on \([.perNode[] | select(.gpu1Free)] | length) nodes"' <<<"$SCARCE_STATE"
}
