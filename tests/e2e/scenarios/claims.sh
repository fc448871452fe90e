# Sourced by tests/e2e/run.sh (issue #39, item 3).
#
# shared_claim (advisor): two pods reference one ResourceClaim (resourceClaimName). Both
# nodes have free devices of the class, so only the claim's allocation can put the second
# pod beside the first: both must be bound to the same node, the claim allocated once
# (the same device before and after the second pod) and reserved for both pods' uids;
# dralloc's /filter asked for each.
#
# unschedulable_event (bind): a pod that fits no node. In bind mode the profile has no
# DynamicResources plugin, so dralloc's /filter alone decides the devices and
# kube-scheduler's FailedScheduling event is made of its FailedNodes: the event must read
# "0/4 nodes are available: " and, for every cause dralloc's /filter gives for this pod
# (asked here with the same pod and nodes), "<number of nodes> <cause>". (In advisor mode
# the plugin filters first and kube-scheduler calls extenders only with the nodes that
# passed, so a pod that fits nowhere gets the plugin's text there.)

scenario_shared_claim() {
    local filters0 filters1 filters2
    trap claims_cleanup EXIT
    claims_world e2e-shared shared.e2e.dralloc.dev "node-0:2 node-1:2" || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: $NS}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: e2e-shared}
EOF
    dralloc_has ResourceClaim 1 || return 1
    filters0=$(extender_requests filter)
    claims_pod a shared || return 1
    k wait -n "$NS" pod/a --for=jsonpath='{.spec.nodeName}' --timeout="$WAIT" >/dev/null ||
        { k get events -n "$NS" >&2; fail "pod a not scheduled"; return 1; }
    local node dev0 dev1
    node=$(k get pod -n "$NS" a -o jsonpath='{.spec.nodeName}')
    k wait -n "$NS" resourceclaim/shared --for=jsonpath='{.status.reservedFor[0].name}'=a --timeout="$WAIT" >/dev/null ||
        { fail "the claim is not reserved for pod a"; return 1; }
    dev0=$(k get resourceclaim -n "$NS" shared -o jsonpath='{.status.allocation.devices.results[*].pool}/{.status.allocation.devices.results[*].device}')
    filters1=$(extender_requests filter)
    ((filters1 > filters0)) || { fail "dralloc's /filter was not called for pod a"; return 1; }
    # dralloc has the allocation before the second pod comes
    local deadline=$((SECONDS + ${WAIT%s}))
    until dralloc_get /debug/cache | jq -e '.watch.ResourceClaim.resourceVersion' >/dev/null &&
        [[ $(dralloc_get /debug/cache | jq -r '.watch.ResourceClaim.resourceVersion') -ge \
           $(k get resourceclaim -n "$NS" shared -o jsonpath='{.metadata.resourceVersion}') ]]; do
        ((SECONDS >= deadline)) && { fail "dralloc's cache did not catch up with the claim's allocation"; return 1; }
        sleep 0.2
    done
    claims_pod b shared || return 1
    k wait -n "$NS" pod/b --for=jsonpath='{.spec.nodeName}' --timeout="$WAIT" >/dev/null ||
        { k get events -n "$NS" >&2; fail "pod b not scheduled"; return 1; }
    local nodeb
    nodeb=$(k get pod -n "$NS" b -o jsonpath='{.spec.nodeName}')
    [[ $nodeb == "$node" ]] || { fail "pod a on $node, pod b (same claim) on $nodeb"; return 1; }
    deadline=$((SECONDS + ${WAIT%s}))
    local want got
    want=$(k get pods -n "$NS" a b -o json | jq -c '[.items[].metadata.uid] | sort')
    while :; do
        got=$(k get resourceclaim -n "$NS" shared -o json | jq -c '[.status.reservedFor[]?.uid] | sort')
        [[ $got == "$want" ]] && break
        ((SECONDS >= deadline)) && { fail "the claim is reserved for $got, not both pods $want"; return 1; }
        sleep 0.5
    done
    dev1=$(k get resourceclaim -n "$NS" shared -o jsonpath='{.status.allocation.devices.results[*].pool}/{.status.allocation.devices.results[*].device}')
    [[ $dev1 == "$dev0" ]] || { fail "the claim's allocation changed from $dev0 to $dev1"; return 1; }
    filters2=$(extender_requests filter)
    ((filters2 > filters1)) || { fail "dralloc's /filter was not called for pod b"; return 1; }
    k wait -n "$NS" pod/a pod/b --for=jsonpath='{.status.phase}'=Running --timeout="$WAIT" >/dev/null ||
        { fail "the pods are not Running"; return 1; }
    echo "    pods a and b on $node, claim shared: $dev0, reserved for both; dralloc /filter $filters0 -> $filters1 -> $filters2"
}

scenario_unschedulable_event() {
    trap claims_cleanup EXIT
    # node-0: 2 devices, node-1: 1, node-2 and node-3 none; the pod wants 3
    claims_world e2e-unsched unsched.e2e.dralloc.dev "node-0:2 node-1:1" || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: three, namespace: $NS}
spec:
  devices:
    requests:
    - name: gpus
      exactly: {deviceClassName: e2e-unsched, allocationMode: ExactCount, count: 3}
EOF
    dralloc_has ResourceClaim 1 || return 1
    claims_pod big three || return 1
    # kube-scheduler's event
    local deadline=$((SECONDS + ${WAIT%s})) msg
    while :; do
        msg=$(k get events -n "$NS" --field-selector involvedObject.name=big,reason=FailedScheduling \
            -o jsonpath='{.items[-1:].message}' 2>/dev/null)
        [[ -n $msg ]] && break
        ((SECONDS >= deadline)) && { k get events -n "$NS" >&2; fail "no FailedScheduling event for pod big in $WAIT"; return 1; }
        sleep 0.5
    done
    echo "    event: $msg"
    [[ -z $(k get pod -n "$NS" big -o jsonpath='{.spec.nodeName}') ]] || { fail "pod big was bound"; return 1; }
    # what dralloc's /filter says of this pod and the 4 nodes
    local nodes body answer
    nodes=$(k get nodes -o json | jq -c '[.items[].metadata.name]')
    body=$(k get pod -n "$NS" big -o json | jq -c --argjson nodes "$nodes" '{Pod: ., NodeNames: $nodes}')
    if [[ ${TLS:-0} == 1 ]]; then
        answer=$(curl -sf --cacert "$DRALLOC_CACERT" --cert "$DRALLOC_CLIENT_CERT" --key "$DRALLOC_CLIENT_KEY" \
            -H 'Content-Type: application/json' -d "$body" "https://127.0.0.1:$DRALLOC_PORT/filter")
    else
        answer=$(curl -sf -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$DRALLOC_PORT/filter")
    fi || { fail "POST /filter to dralloc failed"; return 1; }
    local n causes
    n=$(jq length <<<"$nodes")
    [[ $(jq -c '.NodeNames // [] | length' <<<"$answer") == 0 ]] || { fail "dralloc's /filter passes nodes: $answer"; return 1; }
    causes=$(jq -r '(.FailedNodes // {}) + (.FailedAndUnresolvableNodes // {}) | [.[]] | group_by(.) | .[] | "\(length) \(.[0])"' <<<"$answer")
    [[ -n $causes ]] || { fail "dralloc's /filter gives no causes: $answer"; return 1; }
    [[ $msg == "0/$n nodes are available: "* ]] || { fail "the event does not start with '0/$n nodes are available: '"; return 1; }
    local line
    while IFS= read -r line; do
        [[ $msg == *"$line"* ]] || { fail "the event lacks dralloc's '$line'"; return 1; }
    done <<<"$causes"
    echo "    dralloc's causes, all in the event: $(tr '\n' ';' <<<"$causes")"
}

# claims_world CLASS DRIVER "NODE:DEVICES ...": a DeviceClass and one slice per node
claims_world() {
    local y nd
    y="apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $1, labels: {e2e-world: claims}}
spec:
  selectors:
  - cel: {expression: 'device.driver == \"$2\"'}
"
    for nd in $3; do
        local node=${nd%%:*} cnt=${nd#*:} i
        y+="---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $node-$2, labels: {e2e-world: claims}}
spec:
  driver: $2
  nodeName: $node
  pool: {name: $node, generation: 1, resourceSliceCount: 1}
  devices:
"
        for ((i = 0; i < cnt; i++)); do y+="  - {name: dev-$i}
"; done
    done
    k apply -f - >/dev/null <<<"$y" || { fail "creating the devices failed"; return 1; }
    dralloc_has DeviceClass 1 && dralloc_has ResourceSlice "$(wc -w <<<"$3")"
}

# claims_pod NAME CLAIM: a pod of dralloc-scheduler using the claim
claims_pod() {
    k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  schedulerName: $SCHEDULER_NAME
  terminationGracePeriodSeconds: 0
  resourceClaims: [{name: gpu, resourceClaimName: $2}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: gpu}]}}]
EOF
}

claims_cleanup() {
    k delete pods -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceclaims -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceslices,deviceclasses -l e2e-world=claims --wait=false >/dev/null 2>&1
    return 0
}
