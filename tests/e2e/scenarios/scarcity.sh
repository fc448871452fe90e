# Sourced by tests/e2e/run.sh: a world of scarce, partitionable devices and the checks
# of what the API server holds about it, shared by scenario_bind_scarcity
# (bind_scarcity.sh) and scenario_two_schedulers (two_schedulers.sh).
#
# The world, per node node-I: pool node-I of driver gpu.e2e.dralloc.dev (two
# ResourceSlices) and pool node-I of driver mig.e2e.dralloc.dev (two more):
#   node-I-counters      a counter set gpu0 {memory: 8Gi}, in a slice of its own
#   node-I-devices       gpu0-full    size=full numa=0, consumes gpu0 memory 8Gi
#                        gpu0-half-0  size=half numa=0, consumes gpu0 memory 4Gi
#                        gpu0-half-1  size=half numa=0, consumes gpu0 memory 4Gi
#                        gpu1         size=full numa=1, no counters
#   node-I-mig-counters  a MIG-carved GPU: counter set gpu2 {memory: 40Gi, slices: 7}
#   node-I-mig-devices   mig-1g-0..6  profile=1g.5gb,  consumes gpu2 memory 5Gi,  slices 1
#                        mig-3g-0..1  profile=3g.20gb, consumes gpu2 memory 20Gi, slices 3
# so a node holds at most gpu1 + (gpu0-full | one or two halves), i.e. 2-3 GPUs, and MIG
# partitions up to 40Gi and 7 slices (two 3g fill the memory: no 1g after them).
# Claims and pods (label e2e-kind, by I % 4):
#   pair    (0) two devices (ExactCount 2) with matchAttribute gpu.e2e.dralloc.dev/numa:
#               only the two halves of gpu0 satisfy it (gpu1 is on numa 1, gpu0-full and
#               a half together exceed the counter)
#   single  (1) one request gpu, firstAvailable [full (size=full), half (size=half)]
#   mig     (2) one request gpu, firstAvailable [threeg (3g.20gb), oneg (1g.5gb)] of
#               class e2e-scarce-mig
#   extres  (3) no claim: a container limit deviceclass.resource.kubernetes.io/e2e-scarce-mig1g
#               of 1, a DRA extended resource (KEP-5004, DRAExtendedResource, on by
#               default since 1.36); the scheduler side (dralloc's /bind in bind mode)
#               creates its claim, annotated resource.kubernetes.io/extended-resource-claim,
#               owned by the pod and named in pod.status.extendedResourceClaimStatus

SCARCE_DRIVER=gpu.e2e.dralloc.dev
SCARCE_CLASS=e2e-scarce-gpu
SCARCE_MIG_DRIVER=mig.e2e.dralloc.dev
SCARCE_MIG_CLASS=e2e-scarce-mig
SCARCE_MIG1G_CLASS=e2e-scarce-mig1g

# scarce_world NODES: the DeviceClasses and 4 slices per node
scarce_world() {
    local n=$1 i y m
    y="apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: $SCARCE_CLASS
spec:
  selectors:
  - cel:
      expression: device.driver == \"$SCARCE_DRIVER\"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: $SCARCE_MIG_CLASS
spec:
  selectors:
  - cel:
      expression: device.driver == \"$SCARCE_MIG_DRIVER\"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: $SCARCE_MIG1G_CLASS
spec:
  selectors:
  - cel:
      expression: device.driver == \"$SCARCE_MIG_DRIVER\" && device.attributes[\"$SCARCE_MIG_DRIVER\"].profile == \"1g.5gb\"
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
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-$i-mig-counters, labels: {e2e-world: scarce}}
spec:
  driver: $SCARCE_MIG_DRIVER
  nodeName: node-$i
  pool: {name: node-$i, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu2
    counters:
      memory: {value: 40Gi}
      slices: {value: \"7\"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-$i-mig-devices, labels: {e2e-world: scarce}}
spec:
  driver: $SCARCE_MIG_DRIVER
  nodeName: node-$i
  pool: {name: node-$i, generation: 1, resourceSliceCount: 2}
  devices:
"
        for m in 0 1 2 3 4 5 6; do
            y+="  - name: mig-1g-$m
    attributes: {profile: {string: 1g.5gb}}
    consumesCounters: [{counterSet: gpu2, counters: {memory: {value: 5Gi}, slices: {value: \"1\"}}}]
"
        done
        for m in 0 1; do
            y+="  - name: mig-3g-$m
    attributes: {profile: {string: 3g.20gb}}
    consumesCounters: [{counterSet: gpu2, counters: {memory: {value: 20Gi}, slices: {value: \"3\"}}}]
"
        done
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
    k delete deviceclass "$SCARCE_CLASS" "$SCARCE_MIG_CLASS" "$SCARCE_MIG1G_CLASS" --wait=false >/dev/null 2>&1
    return 0
}

# scarce_cleanup: $NS's pods and claims and the world, whether the scenario passed or
# not (the next scenario on this cluster must find the devices free); bounded
scarce_cleanup() {
    k delete pods -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceclaims -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    scarce_world_delete
}

# scarce_kind I: pair, single, mig, extres in turn (the world's comment)
scarce_kind() { local k=(pair single mig extres); echo "${k[$1 % 4]}"; }

# scarce_claim_spec KIND: the claim's spec (indented for a ResourceClaim's spec:)
scarce_claim_spec() {
    local sel='device.attributes["'$SCARCE_DRIVER'"].size'
    local mig='device.attributes["'$SCARCE_MIG_DRIVER'"].profile'
    if [[ $1 == mig ]]; then
        cat <<EOF
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - name: threeg
        deviceClassName: $SCARCE_MIG_CLASS
        selectors: [{cel: {expression: '$mig == "3g.20gb"'}}]
      - name: oneg
        deviceClassName: $SCARCE_MIG_CLASS
        selectors: [{cel: {expression: '$mig == "1g.5gb"'}}]
EOF
    elif [[ $1 == pair ]]; then
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

# scarce_claims N: ResourceClaims c-000.. in $NS (none for the extres pods)
scarce_claims() {
    local i kind y=
    for ((i = 0; i < $1; i++)); do
        kind=$(scarce_kind "$i")
        [[ $kind == extres ]] && continue
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

# scarce_pods N SCHEDULER [FROM]: pods p-FROM..p-(N-1) (FROM: 0) in $NS, each using claim
# c-III (resourceClaimName) or, extres, asking for one e2e-scarce-mig1g device as an
# extended resource;
# SCHEDULER empty: no schedulerName (the API server defaults it, admission may change it).
# Labels: e2e-kind, e2e-half=a (I/4 even) | b (I/4 odd): every kind in each half.
scarce_pods() {
    local i kind y= sched= use
    [[ -n $2 ]] && sched="schedulerName: $2"
    for ((i = ${3:-0}; i < $1; i++)); do
        kind=$(scarce_kind "$i")
        use="  resourceClaims:
  - name: gpu
    resourceClaimName: $(printf c-%03d "$i")
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      claims:
      - name: gpu"
        [[ $kind == extres ]] && use="  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      limits:
        deviceclass.resource.kubernetes.io/$SCARCE_MIG1G_CLASS: \"1\""
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
$use
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
        --arg driver "$SCARCE_DRIVER" --arg mig "$SCARCE_MIG_DRIVER" --arg ns "$NS" -f /dev/stdin <<'EOF'
def qty: # a Kubernetes quantity (the suffixes used here) as a number
  capture("^(?<n>[0-9.]+)(?<s>[A-Za-z]*)$") as $c
  | ($c.n | tonumber) * ({"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": 1048576, "Gi": 1073741824}[$c.s]);
def key: "\(.driver)/\(.pool)/\(.device)";
def ours: IN($driver, $mig);
# the claim a pod uses: its one claim, or the extended-resource claim made for it
def claimOf: .spec.resourceClaims[0].resourceClaimName // .status.extendedResourceClaimStatus.resourceClaimName;
def kindOf: # a claim's kind: its label, or extres for an extended-resource claim
  if .metadata.annotations["resource.kubernetes.io/extended-resource-claim"] == "true" then "extres"
  else .metadata.labels["e2e-kind"] end;
$pods[0] as $pods | $claims[0] as $claims | $slices[0] as $slices |
# every device of both drivers: key -> {attributes, consumes, node, pool, driver}
([$slices.items[] | select(.spec.driver | ours) | .spec as $s | ($s.devices // [])[]
  | {key: "\($s.driver)/\($s.pool.name)/\(.name)",
     value: {attrs: (.attributes // {}), consumes: (.consumesCounters // []), node: $s.nodeName, pool: $s.pool.name,
             driver: $s.driver}}]
 | from_entries) as $devs
# every counter: driver/pool/set/counter -> capacity
| ([$slices.items[] | select(.spec.driver | ours) | .spec as $s | ($s.sharedCounters // [])[]
   | .name as $set | .counters | to_entries[]
   | {key: "\($s.driver)/\($s.pool.name)/\($set)/\(.key)", value: (.value.value | qty)}] | from_entries) as $caps
# every allocated device of every claim in the cluster (all namespaces: a device is
# allocated twice whichever claims hold it)
| [$claims.items[] | select(.status.allocation != null) | . as $c
   | .status.allocation.devices.results[]? | select(.driver | ours)
   | {claim: "\($c.metadata.namespace)/\($c.metadata.name)", request, driver, pool, device, key: key}] as $allocs
| ($allocs | group_by(.key) | map(select(length > 1) | {device: .[0].key, claims: map(.claim)})) as $dups
| ($allocs | map(select($devs[.key] == null) | .key)) as $unknown
# counter use: driver/pool/set/counter -> sum over the allocated devices
| ([$allocs[] | $devs[.key] as $d | select($d != null) | $d.consumes[] | .counterSet as $set
    | .counters | to_entries[] | {key: "\($d.driver)/\($d.pool)/\($set)/\(.key)", v: (.value.value | qty)}]
   | group_by(.key) | map({key: .[0].key, value: (map(.v) | add)}) | from_entries) as $use
| ($use | to_entries | map({counter: .key, used: .value, cap: $caps[.key]})
   | map(select(.cap == null or .used > .cap))) as $over
# the claims of this namespace: the constraints of their kind
| [$claims.items[] | select(.metadata.namespace == $ns)] as $mine
| [$mine[] | select(.status.allocation != null) | . as $c | .status.allocation.devices.results as $r
   | ($c | kindOf) as $kind
   | if $kind == "pair" then
       select(($r | length) != 2 or ($r | map(select(.request == "gpus")) | length) != 2
              or ($r | map($devs[key].attrs.numa.int) | unique | length) != 1)
     elif $kind == "single" then
       select(($r | length) != 1 or ($r[0].request | IN("gpu/full", "gpu/half") | not)
              or ($devs[$r[0] | key].attrs.size.string != ($r[0].request | ltrimstr("gpu/"))))
     elif $kind == "mig" then
       select(($r | length) != 1 or $r[0].driver != $mig
              or ({"gpu/threeg": "3g.20gb", "gpu/oneg": "1g.5gb"}[$r[0].request] as $want
                  | $want == null or $devs[$r[0] | key].attrs.profile.string != $want))
     elif $kind == "extres" then
       select(($r | length) != 1 or $r[0].driver != $mig or $devs[$r[0] | key].attrs.profile.string != "1g.5gb")
     else . end
   | {claim: $c.metadata.name, kind: $kind, results: $r}] as $badConstraint
# pods: bound ones must have their claim allocated on their node and reserved for them
| ($mine | map({key: .metadata.name, value: .}) | from_entries) as $byName
| [$pods.items[] | select(.metadata.deletionTimestamp == null)] as $live
| [$live[] | select(.spec.nodeName != null)] as $bound
| [$live[] | select(.spec.nodeName == null)] as $pending
| [$bound[] | . as $p | ($p | claimOf) as $cn | (if $cn then $byName[$cn] else null end) as $c
   | select($c == null or $c.status.allocation == null
            or ([$c.status.reservedFor[]? | select(.uid == $p.metadata.uid)] | length) != 1
            or ([$c.status.allocation.devices.results[] | select(.pool != $p.spec.nodeName)] | length) > 0
            or ([$c.status.allocation.nodeSelector.nodeSelectorTerms[]?.matchFields[]?
                 | select(.key == "metadata.name") | .values[]] != [$p.spec.nodeName]))
   | {pod: $p.metadata.name, node: $p.spec.nodeName, claim: $cn, allocation: $c.status.allocation,
      reservedFor: $c.status.reservedFor}] as $badBound
| ([$bound[] | claimOf | select(. != null)] | map({key: ., value: true}) | from_entries) as $boundClaims
| [$mine[] | select(.status.allocation != null and ($boundClaims[.metadata.name] | not)) | .metadata.name] as $orphans
# saturation: the nodes where a pending pod of each kind would still fit
| [$slices.items[] | select(.spec.driver == $driver and .spec.sharedCounters != null) | .spec.pool.name] as $nodes
| ($allocs | map({key: .key, value: true}) | from_entries) as $used
| [$nodes[] | . as $n
   | {node: $n, gpu1Free: ($used["\($driver)/\($n)/gpu1"] | not),
      gpu0Used: (($use["\($driver)/\($n)/gpu0/memory"] // 0) / 1073741824),
      migMemUsed: (($use["\($mig)/\($n)/gpu2/memory"] // 0) / 1073741824),
      migSlicesUsed: ($use["\($mig)/\($n)/gpu2/slices"] // 0),
      free1g: ([range(7) | select($used["\($mig)/\($n)/mig-1g-\(.)"] | not)] | length),
      free3g: ([range(2) | select($used["\($mig)/\($n)/mig-3g-\(.)"] | not)] | length)}
   | .fits1g = (.free1g > 0 and .migSlicesUsed + 1 <= 7 and .migMemUsed + 5 <= 40)
   | .fits3g = (.free3g > 0 and .migSlicesUsed + 3 <= 7 and .migMemUsed + 20 <= 40)] as $perNode
| def pendingOf($k): [$pending[] | select(.metadata.labels["e2e-kind"] == $k)] | length;
{
    pods: ($live | length), bound: ($bound | length), pending: ($pending | length),
    pendingSingles: pendingOf("single"), pendingPairs: pendingOf("pair"),
    pendingMig: pendingOf("mig"), pendingExtres: pendingOf("extres"),
    allocatedDevices: ($allocs | length),
    extendedClaims: ([$mine[] | select(kindOf == "extres")] | length),
    schedulers: ([$live[] | .spec.schedulerName] | group_by(.) | map({key: .[0], value: length}) | from_entries),
    perNode: $perNode,
    fitsSingle: [$perNode[] | select(.gpu1Free or .gpu0Used < 8) | .node],
    fitsPair: [$perNode[] | select(.gpu0Used == 0) | .node],
    fitsMig: [$perNode[] | select(.fits1g or .fits3g) | .node],
    fitsExtres: [$perNode[] | select(.fits1g) | .node],
    dups: $dups, unknown: $unknown, overCounters: $over, badConstraint: $badConstraint,
    badBound: $badBound, orphans: $orphans
  }
| .violations = (.dups + .unknown + .overCounters + .badConstraint)
| .settled = ((.badBound | length) == 0 and (.orphans | length) == 0
              and (.pendingSingles == 0 or (.fitsSingle | length) == 0)
              and (.pendingPairs == 0 or (.fitsPair | length) == 0)
              and (.pendingMig == 0 or (.fitsMig | length) == 0)
              and (.pendingExtres == 0 or (.fitsExtres | length) == 0))
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
            fail "$label: the API server holds an inconsistent allocation: $(jq -c '{dups, unknown, overCounters,
                 badConstraint: [.badConstraint[].claim]}' <<<"$s")"
            return 1
        fi
        [[ $(jq .settled <<<"$s") == true ]] && return 0
        if ((SECONDS >= deadline)); then
            jq '{bound, pending, pendingSingles, pendingPairs, pendingMig, pendingExtres, perNode, fitsSingle, fitsPair,
                 fitsMig, fitsExtres, badBound, orphans}' <<<"$s" >&2
            fail "$label: not settled after $2 s: $(jq -c '{bound, pending, pendingSingles, pendingPairs, pendingMig,
                 pendingExtres, fitsSingle, fitsPair, fitsMig, fitsExtres, badBound: [.badBound[].pod], orphans}' <<<"$s")"
            return 1
        fi
        sleep 2
    done
}

scarce_summary() { # one line from $SCARCE_STATE
    jq -r '"\(.bound) bound, \(.pending) pending (\(.pendingSingles) single, \(.pendingPairs) pair, \(.pendingMig) mig, \(.pendingExtres) extres), \(.allocatedDevices) devices allocated, \(.extendedClaims) extended-resource claims; gpu0 used per node (GiB): \([.perNode[].gpu0Used] | map(tostring) | join(",")), gpu1 free on \([.perNode[] | select(.gpu1Free)] | length) nodes; MIG memory used per node (GiB): \([.perNode[].migMemUsed] | map(tostring) | join(","))"' <<<"$SCARCE_STATE"
}
