# Sourced by tests/e2e/run.sh. dralloc's watches cut, and resumed from a compacted
# resourceVersion (issue #39, item 3). Restarts kube-apiserver: run it last on its cluster.
#
# 1. The cut: kube-apiserver restarted (cluster.sh restart: TERM, KILL after 5 s; etcd and
#    its history kept).
#    Every watch connection of dralloc breaks; dralloc must re-establish them. Then the
#    world changes (the slice of node-0 deleted, one on node-1 created, a DeviceClass and a
#    claim added): dralloc's /debug/cache must converge with the API server (the number of
#    objects of every kind equal, each kind's resourceVersion at least the newest object's
#    of it), and a pod must be scheduled on node-1 (advisor mode: dralloc's /filter, which
#    is stricter than the plugin's, passes node-1 only once it has the new slice).
# 2. The 410: kube-apiserver stopped; etcd's revision moved on (two writes of a key outside
#    /registry) and compacted to it (etcd's gRPC gateway, /v3/kv/compaction, physical); then
#    kube-apiserver started. dralloc resumes each watch from a resourceVersion that is now
#    compacted: it must log "resourceVersion too old: relisting", count the relists
#    (dralloc_watch_lists_total, /debug/cache's relists per kind), and converge again
#    with further changes (node-1's slice deleted, node-0's created again), the second pod
#    scheduled on node-0.
# kube-scheduler runs with leader election (renew deadline 10 s): when kube-apiserver is
# away longer, it loses its Lease and exits, as it does in a pod, where the kubelet
# restarts it; here cluster.sh restarts it then (said in the output).
scenario_watch_cut() {
    ((${#CLUSTER} > 0)) || { fail "no cluster directory"; return 1; }
    local lists0 lists1 lists2 relists0 relists1 relists2 gone0 gone1
    trap watchcut_cleanup EXIT
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-watch, labels: {e2e-world: watch}}
spec:
  selectors:
  - cel: {expression: device.driver == "watch.e2e.dralloc.dev"}
EOF
    watch_slice node-0 || return 1
    dralloc_converged "before" || return 1
    lists0=$(watch_lists)
    relists0=$(kind_relists)
    gone0=$(grep -c 'resourceVersion too old: relisting' "$CLUSTER/dralloc.log")

    # 1. the cut
    local t0=$SECONDS
    E2E_STOP_GRACE=5 "$CLUSTER_SH" restart "$CLUSTER" kube-apiserver 2>&1 | sed 's/^/    /' || { fail "restarting kube-apiserver failed"; return 1; }
    echo "    kube-apiserver restarted in $((SECONDS - t0)) s"
    scheduler_back || return 1
    k delete resourceslice node-0-watch.e2e.dralloc.dev >/dev/null || return 1
    watch_slice node-1 || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-watch-2, labels: {e2e-world: watch}}
spec:
  selectors:
  - cel: {expression: device.driver == "watch-2.e2e.dralloc.dev"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: $NS}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: e2e-watch}
EOF
    dralloc_converged "after the cut" || return 1
    watch_pod one node-1 || return 1
    lists1=$(watch_lists)
    relists1=$(kind_relists)
    echo "    after the cut: converged, pod one on node-1; dralloc_watch_lists_total $lists0 -> $lists1, relists per kind $relists0 -> $relists1"

    # 2. a compacted resourceVersion
    t0=$SECONDS
    E2E_STOP_GRACE=5 "$CLUSTER_SH" stop "$CLUSTER" kube-apiserver 2>&1 | sed 's/^/    /'
    local rev
    etcd_put >/dev/null && rev=$(etcd_put) || { fail "writing to etcd failed"; return 1; }
    curl -sf -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/compaction" -d "{\"revision\": \"$rev\", \"physical\": true}" >/dev/null ||
        { fail "compacting etcd at revision $rev failed"; return 1; }
    echo "    kube-apiserver stopped; etcd compacted at revision $rev"
    E2E_STOP_GRACE=5 "$CLUSTER_SH" restart "$CLUSTER" kube-apiserver 2>&1 | sed 's/^/    /' || { fail "starting kube-apiserver failed"; return 1; }
    echo "    kube-apiserver back $((SECONDS - t0)) s after its stop"
    scheduler_back || return 1
    local deadline=$((SECONDS + 90))
    while :; do
        gone1=$(grep -c 'resourceVersion too old: relisting' "$CLUSTER/dralloc.log")
        lists2=$(watch_lists)
        ((gone1 > gone0 && lists2 > lists1)) && break
        ((SECONDS >= deadline)) && { tail -20 "$CLUSTER/dralloc.log" >&2; fail "no relist after the compaction in 90 s (410 logged $gone0 -> $gone1, lists $lists1 -> $lists2)"; return 1; }
        sleep 0.5
    done
    k delete resourceslice node-1-watch.e2e.dralloc.dev >/dev/null || return 1
    watch_slice node-0 || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two, namespace: $NS}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: e2e-watch}
EOF
    dralloc_converged "after the 410" || return 1
    watch_pod two node-0 || return 1
    relists2=$(kind_relists)
    echo "    after the 410: $((gone1 - gone0)) kinds logged 'resourceVersion too old: relisting'; dralloc_watch_lists_total $lists1 -> $(watch_lists), relists per kind $relists1 -> $relists2; converged, pod two on node-0"
    [[ $relists2 != "$relists1" ]] || { fail "/debug/cache counts no relist"; return 1; }
}

# watch_slice NODE: a slice of 1 device of watch.e2e.dralloc.dev on NODE
watch_slice() {
    k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $1-watch.e2e.dralloc.dev, labels: {e2e-world: watch}}
spec:
  driver: watch.e2e.dralloc.dev
  nodeName: $1
  pool: {name: $1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: dev-0}
EOF
}

# dralloc_converged LABEL: within 90 s, dralloc's /debug/cache holds as many objects of
# each kind as the API server and, for each, a resourceVersion at least the list's
dralloc_converged() {
    local label=$1 deadline=$((SECONDS + 90)) kind res want rv cache have hrv ok
    while :; do
        ok=1
        cache=$(dralloc_get /debug/cache) || ok=0
        for kind in DeviceClass:deviceclasses ResourceSlice:resourceslices ResourceClaim:resourceclaims Node:nodes; do
            ((ok)) || break
            res=$(k get "${kind#*:}" -A -o json 2>/dev/null) || { ok=0; break; }
            want=$(jq '.items | length' <<<"$res")
            rv=$(jq -r '[.items[].metadata.resourceVersion | tonumber] | max // 0' <<<"$res")
            have=$(jq -r --arg k "${kind%%:*}" '.objects[$k] // -1' <<<"$cache")
            hrv=$(jq -r --arg k "${kind%%:*}" '.watch[$k].resourceVersion // "0"' <<<"$cache")
            [[ $have == "$want" && $hrv =~ ^[0-9]+$ ]] && ((hrv >= rv)) || ok=0
        done
        ((ok)) && return 0
        if ((SECONDS >= deadline)); then
            jq -c '{objects, watch: (.watch | map_values({resourceVersion, relists, errors, lastError}))}' <<<"$cache" >&2
            fail "$label: dralloc's cache did not converge with the API server in 90 s ($kind: $have objects at ${hrv:-?}, the API server $want, newest $rv)"
            return 1
        fi
        sleep 0.5
    done
}

# watch_pod CLAIM NODE: a pod using the claim, bound to NODE
watch_pod() {
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  schedulerName: $SCHEDULER_NAME
  terminationGracePeriodSeconds: 0
  resourceClaims: [{name: gpu, resourceClaimName: $1}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: gpu}]}}]
EOF
    k wait -n "$NS" "pod/$1" --for=jsonpath='{.spec.nodeName}'="$2" --timeout="$WAIT" >/dev/null ||
        { k get events -n "$NS" >&2; fail "pod $1 not scheduled on $2"; return 1; }
}

# scheduler_back: kube-scheduler running and holding its Lease; restarted (once) when it
# exited, having lost its Lease while kube-apiserver was away (as the kubelet would)
scheduler_back() {
    local pid
    pid=$(cat "$CLUSTER/kube-scheduler.pid")
    sleep 2   # a lost Lease is seen within the retry period
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "    kube-scheduler exited ($(grep -o -i -m1 'leaderelection lost\|lost lease\|Leaderelection lost' "$CLUSTER/kube-scheduler.log" || echo 'see its log')): restarted, as the kubelet restarts the container"
        "$CLUSTER_SH" restart "$CLUSTER" kube-scheduler 2>&1 | sed 's/^/    /' || { fail "restarting kube-scheduler failed"; return 1; }
    fi
    local deadline=$((SECONDS + 90))
    until curl -sfk "https://127.0.0.1:$SCHEDULER_PORT/healthz" >/dev/null 2>&1 &&
        [[ -n $(k get lease -n dralloc-system dralloc-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null) ]]; do
        ((SECONDS >= deadline)) && { fail "kube-scheduler not back with its Lease in 90 s"; return 1; }
        sleep 0.5
    done
}

etcd_put() { # prints etcd's revision after writing a key outside /registry
    curl -sf -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/put" -d '{"key": "ZTJlLXdhdGNoLWN1dA==", "value": "eA=="}' |
        jq -er '.header.revision'
}

watch_lists() {
    curl -sf "http://127.0.0.1:$DRALLOC_HEALTH_PORT/metrics" | awk '$1 == "dralloc_watch_lists_total" { print $2 }'
}

kind_relists() { # DeviceClass,ResourceSlice,ResourceClaim,Node,DeviceTaintRule relists
    dralloc_get /debug/cache | jq -r '[.watch | .DeviceClass, .ResourceSlice, .ResourceClaim, .Node, .DeviceTaintRule | .relists] | map(tostring) | join(",")'
}

watchcut_cleanup() {
    k delete pods -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceclaims -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceslices,deviceclasses -l e2e-world=watch --wait=false >/dev/null 2>&1
    return 0
}
