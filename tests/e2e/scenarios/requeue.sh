# Sourced by tests/e2e/run.sh. The pods kube-scheduler parked on dralloc's "no node".
#
# A pod an extender leaves with no node is parked by kube-scheduler until an event
# registered for extenders (framework.UnrollWildCardResource: pods, Nodes, storage,
# ResourceClaims, DeviceClasses) or podMaxInUnschedulablePodsDuration (5 minutes). A
# ResourceSlice is not among them: devices published for a new node reach dralloc, and
# kube-scheduler never asks again. Measured before extender/requeue.c: the pod below
# was still pending 60 s after its slice was created. dralloc --bind now updates its own
# ResourceClaim (dralloc-system/dralloc-requeue, allocating nothing) when such a change
# follows a "no node" it gave: a ResourceClaim event, which requeues the pod.
#
# slice_wake (bind): a pod whose claim no device matches gets FailedScheduling; then a
# ResourceSlice with a device for it is created on node-1: the pod must be bound to
# node-1 within 30 s, the leader's dralloc must have written its requeue claim (its
# /debug/cache "requeue".writes rose), and the claim must exist with its annotation.
scenario_slice_wake() {
    trap requeue_cleanup EXIT
    # the class, and no device of it anywhere yet (claims.sh's world with no node)
    claims_world e2e-wake wake.e2e.dralloc.dev "" || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: $NS}
spec:
  devices:
    requests:
    - name: dev
      exactly: {deviceClassName: e2e-wake}
EOF
    dralloc_has ResourceClaim 1 || return 1
    local writes0
    writes0=$(dralloc_get /debug/cache | jq '.requeue.writes // 0')
    claims_pod p one || return 1
    local deadline=$((SECONDS + ${WAIT%s}))
    until [[ -n $(k get events -n "$NS" --field-selector involvedObject.name=p,reason=FailedScheduling -o name) ]]; do
        ((SECONDS >= deadline)) && { k get events -n "$NS" >&2; fail "no FailedScheduling event for pod p in $WAIT"; return 1; }
        sleep 0.5
    done
    # kube-scheduler has parked it; now the device appears
    sleep 2
    local t0=$SECONDS
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-wake.e2e.dralloc.dev, labels: {e2e-world: claims}}
spec:
  driver: wake.e2e.dralloc.dev
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: dev-0}]
EOF
    k wait -n "$NS" pod/p --for=jsonpath='{.spec.nodeName}'=node-1 --timeout=30s >/dev/null ||
        { k get pods,events -n "$NS" >&2; dralloc_get /debug/cache | jq -c .requeue >&2
          fail "pod p not bound to node-1 within 30 s of its device's ResourceSlice (kube-scheduler did not ask again)"; return 1; }
    local took=$((SECONDS - t0)) writes1 ann
    writes1=$(dralloc_get /debug/cache | jq '.requeue.writes // 0')
    ((writes1 > writes0)) || { fail "dralloc's requeue writes $writes0 -> $writes1: the pod was woken by something else"; return 1; }
    ann=$(k get resourceclaim -n dralloc-system dralloc-requeue -o jsonpath='{.metadata.annotations.dralloc\.dev/requeue}') ||
        { fail "no ResourceClaim dralloc-system/dralloc-requeue"; return 1; }
    [[ -n $ann ]] || { fail "the requeue claim has no dralloc.dev/requeue annotation"; return 1; }
    echo "    pod p bound to node-1 ${took} s after its ResourceSlice; dralloc's requeue writes $writes0 -> $writes1 (last: $ann)"
}

requeue_cleanup() { claims_cleanup; }
