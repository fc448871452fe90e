# Sourced by tests/e2e/run.sh. Opt-in preemption in bind mode (issue #42, item 5):
# dralloc serve --bind --preemption=evict (E2E_DRALLOC_ARGS; deploy/bind ships it off).
#
# In bind mode kube-scheduler's DynamicResources plugin is off except PreEnqueue, so its
# own preemption finds no victim for a pod that lacks devices (1.37 drops candidate
# nodes without victims). dralloc's /filter, finding no node for a pod of priority > 0,
# evicts the lower-priority pods whose devices it needs (Eviction API) and holds their
# node for it (label and annotation dralloc.dev/hold on the pod) until it binds.
#
# The world: 4 nodes × E2E_PREEMPT_GPUS (8) devices of preempt.e2e.dralloc.dev, every
# one held by a pod of PriorityClass e2e-preempt-low (10), each with a claim from a
# ResourceClaimTemplate. Slow deallocation: those pods carry a finalizer, removed
# E2E_PREEMPT_SLOW (2) s after their deletion began (their claims stay reserved until
# then, as on a kubelet whose containers take that long to stop).
#
# preempt (bind, --replicas 2):
#   1. leader change: a pod of e2e-preempt-high (1000) is created; one low pod must be
#      evicted and the pod carry the hold. Then the leading replica (kube-scheduler and
#      dralloc) is killed with SIGKILL, a pod of equal priority that may not preempt
#      (e2e-preempt-peer: 1000, Never) is created, and the victim's deletion finishes.
#      The standby must take kube-scheduler's Lease, its dralloc must have restored the
#      hold from the API, the high pod must be bound to the held node, the equal-priority
#      pod must not be (it stays pending: no device is free), and exactly 1 eviction made;
#   2. trials: E2E_PREEMPT_ROUNDS (4) rounds of E2E_PREEMPT_TRIALS (25) high pods on the
#      full world (100 trials): every high pod bound, and exactly one eviction per high
#      pod (Events "Preempted" posted by dralloc, and low pods gone) — 0 cascading.
PREEMPT_DRIVER=preempt.e2e.dralloc.dev
PREEMPT_FIN=e2e.dralloc.dev/slow

scenario_preempt() {
    local nodes=4 gpus=${E2E_PREEMPT_GPUS:-8} rounds=${E2E_PREEMPT_ROUNDS:-4} trials=${E2E_PREEMPT_TRIALS:-25}
    local total=$((nodes * gpus)) t0=$SECONDS
    [[ ${REPLICAS:-1} == 2 ]] || { fail "needs a cluster with two replicas (cluster.sh up --replicas 2)"; return 1; }
    dralloc_get /debug/cache | jq -e .preemption >/dev/null ||
        { fail "dralloc runs without --preemption=evict (E2E_DRALLOC_ARGS)"; return 1; }
    trap preempt_cleanup EXIT
    preempt_world "$nodes" "$gpus" || { fail "creating the world failed"; return 1; }
    dralloc_has ResourceSlice "$nodes" || return 1

    # which replica leads: the one whose kube-scheduler logged taking the Lease
    local l0 l1 lead standby lport sport shport holder0 holder
    l0=$(grep -c -i 'successfully acquired lease' "$CLUSTER/kube-scheduler.log")
    l1=$(grep -c -i 'successfully acquired lease' "$CLUSTER/kube-scheduler-1.log")
    if ((l0 > 0 && l1 == 0)); then lead="" standby=-1
    elif ((l1 > 0 && l0 == 0)); then lead=-1 standby=""
    else fail "cannot tell the leading replica (Lease taken $l0 and $l1 times)"; return 1; fi
    if [[ -z $lead ]]; then lport=$DRALLOC_PORT sport=$DRALLOC_PORT_1 shport=$DRALLOC_HEALTH_PORT_1
    else lport=$DRALLOC_PORT_1 sport=$DRALLOC_PORT shport=$DRALLOC_HEALTH_PORT; fi
    holder0=$(lease_holder)

    # ---- 1. the hold survives a leader change -------------------------------------------
    preempt_pods low 0 "$total" e2e-preempt-low slow || { fail "creating the low pods failed"; return 1; }
    preempt_wait_bound low "$total" 90 || return 1
    preempt_pods high 0 1 e2e-preempt-high || return 1
    local deadline=$((SECONDS + ${WAIT%s})) hold= victim=
    until [[ -n $hold && -n $victim ]]; do
        hold=$(k get pod -n "$NS" high-0 -o jsonpath='{.metadata.annotations.dralloc\.dev/hold}' 2>/dev/null)
        victim=$(k get pods -n "$NS" -l e2e-preempt=low -o json |
            jq -r '[.items[] | select(.metadata.deletionTimestamp) | .metadata.name] | join(" ")')
        ((SECONDS >= deadline)) && { k get events -n "$NS" >&2; fail "no hold ('$hold') or no victim ('$victim') for high-0 in $WAIT"; return 1; }
        sleep 0.3
    done
    local hnode
    hnode=$(jq -r .node <<<"$hold")
    echo "    high-0: victim $victim evicted, node $hnode held ($((SECONDS - t0)) s)"
    [[ $victim != *" "* ]] || { fail "more than one victim for one pod: $victim"; return 1; }
    [[ $(k get pod -n "$NS" high-0 -o jsonpath='{.metadata.labels.dralloc\.dev/hold}') == true ]] ||
        { fail "high-0 has the annotation but not the label dralloc.dev/hold"; return 1; }
    # the standby's dralloc reads the hold back from the API (every 5 s)
    deadline=$((SECONDS + 20))
    until (($(dralloc_get /debug/cache "$sport" | jq '.preemption.holds | length') >= 1)); do
        ((SECONDS >= deadline)) && { fail "the standby's dralloc did not restore the hold in 20 s"; return 1; }
        sleep 0.5
    done
    kill -KILL "$(cat "$CLUSTER/kube-scheduler$lead.pid")" "$(cat "$CLUSTER/dralloc$lead.pid")" ||
        { fail "killing the leading replica failed"; return 1; }
    local tkill=$SECONDS
    preempt_pods peer 0 1 e2e-preempt-peer || return 1
    preempt_unfinalize "$victim"
    deadline=$((SECONDS + 90))
    until holder=$(lease_holder) && [[ -n $holder && $holder != "$holder0" ]]; do
        ((SECONDS >= deadline)) && { fail "the Lease is still held by '$holder' 90 s after the kill"; return 1; }
        sleep 0.5
    done
    k wait -n "$NS" pod/high-0 --for=jsonpath='{.spec.nodeName}'="$hnode" --timeout=60s >/dev/null ||
        { k get pods -n "$NS" -o wide >&2; k get events -n "$NS" >&2; fail "high-0 not bound to the held node $hnode"; return 1; }
    local peer_node ev
    peer_node=$(k get pod -n "$NS" peer-0 -o jsonpath='{.spec.nodeName}')
    ev=$(preempt_evictions)
    echo "    leader killed; Lease to $holder $((SECONDS - tkill))s later; high-0 bound to $hnode $((SECONDS - tkill)) s after the kill; peer-0 on '${peer_node}'; evictions $ev"
    [[ -z $peer_node ]] || { fail "the equal-priority pod peer-0 was bound to $peer_node"; return 1; }
    ((ev == 1)) || { fail "$ev evictions for one preemptor"; return 1; }
    # the hold is released once bound (label removed by the new leader's dralloc)
    deadline=$((SECONDS + 20))
    until [[ -z $(k get pod -n "$NS" high-0 -o jsonpath='{.metadata.labels.dralloc\.dev/hold}') ]]; do
        ((SECONDS >= deadline)) && { fail "high-0 still labelled dralloc.dev/hold 20 s after binding"; return 1; }
        sleep 0.5
    done
    preempt_clear || return 1

    # ---- 2. trials with slow deallocation: one eviction per preemptor ----------------
    DRALLOC_PORT=$sport DRALLOC_HEALTH_PORT=$shport
    preempt_slow_loop &
    local slow=$! r done_ok=0 cascades=0 all_ev=0
    for ((r = 0; r < rounds; r++)); do
        local tr=$SECONDS e0 e1 lows_left
        preempt_pods low $((r * 1000)) $((r * 1000 + total)) e2e-preempt-low slow || { kill "$slow"; return 1; }
        preempt_wait_bound low "$total" 90 || { kill "$slow"; preempt_debug "$lead" "$standby"; return 1; }
        e0=$(preempt_evictions)
        preempt_pods high $((r * 1000 + 1)) $((r * 1000 + 1 + trials)) e2e-preempt-high || { kill "$slow"; return 1; }
        preempt_wait_bound high "$trials" 150 || { kill "$slow"; preempt_debug "$lead" "$standby"; return 1; }
        sleep 2   # a late eviction would show now
        e1=$(preempt_evictions)
        lows_left=$(k get pods -n "$NS" -l e2e-preempt=low -o json |
            jq '[.items[] | select(.metadata.deletionTimestamp | not)] | length')
        echo "    round $((r + 1)): $trials high pods bound in $((SECONDS - tr)) s; evictions $((e1 - e0)); low pods left $lows_left of $total"
        all_ev=$((all_ev + e1 - e0))
        cascades=$((cascades + e1 - e0 - trials))
        ((e1 - e0 == trials && lows_left == total - trials)) || { kill "$slow"; fail "round $((r + 1)): $((e1 - e0)) evictions, $lows_left low pods left, for $trials preemptors"; return 1; }
        done_ok=$((done_ok + trials))
        preempt_clear || { kill "$slow"; return 1; }
    done
    kill "$slow" 2>/dev/null
    wait "$slow" 2>/dev/null
    echo "    $done_ok trials: $all_ev evictions, $cascades cascading; dralloc: $(dralloc_get /debug/cache | jq -c '.preemption | del(.holds)') ($((SECONDS - t0)) s in all)"
    ((cascades == 0)) || { fail "$cascades cascading evictions"; return 1; }
}

# the DeviceClass, a slice of $2 devices on each of $1 nodes, the PriorityClasses, the template
preempt_world() {
    local y="---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-preempt}
spec:
  selectors:
  - cel: {expression: 'device.driver == \"$PREEMPT_DRIVER\"'}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-preempt-low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-preempt-high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-preempt-peer}
value: 1000
preemptionPolicy: Never
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: $NS}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: e2e-preempt}
" n d devs
    for ((n = 0; n < $1; n++)); do
        devs=
        for ((d = 0; d < $2; d++)); do devs+="  - name: gpu-$d
"; done
        y+="---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-$n-$PREEMPT_DRIVER, labels: {e2e-world: preempt}}
spec:
  driver: $PREEMPT_DRIVER
  nodeName: node-$n
  pool: {name: node-$n, generation: 1, resourceSliceCount: 1}
  devices:
$devs"
    done
    k apply -f - >/dev/null <<<"$y"
}

# preempt_pods KIND FROM TO CLASS [slow]: pods KIND-FROM..KIND-(TO-1), one device each
preempt_pods() {
    local i y= fin=
    [[ ${5:-} == slow ]] && fin="
  finalizers: [$PREEMPT_FIN]"
    for ((i = $2; i < $3; i++)); do
        y+="---
apiVersion: v1
kind: Pod
metadata:
  name: $1-$i
  namespace: $NS
  labels: {e2e-preempt: $1}$fin
spec:
  schedulerName: $SCHEDULER_NAME
  priorityClassName: $4
  terminationGracePeriodSeconds: 0
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu
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

# preempt_wait_bound KIND N SECONDS: N pods of KIND bound (not terminating)
preempt_wait_bound() {
    local deadline=$((SECONDS + $3)) n
    while :; do
        n=$(k get pods -n "$NS" -l "e2e-preempt=$1" -o json |
            jq '[.items[] | select(.spec.nodeName and (.metadata.deletionTimestamp | not))] | length')
        ((n >= $2)) && return 0
        ((SECONDS >= deadline)) && { fail "$n of $2 $1 pods bound in $3 s"; return 1; }
        sleep 0.5
    done
}

# Evictions dralloc made in $NS: its "Preempted" Events (one per victim)
preempt_evictions() {
    k get events -n "$NS" --field-selector reason=Preempted -o json |
        jq '[.items[] | select(.source.component == "dralloc")] | length'
}

preempt_unfinalize() { # POD...
    local p
    for p; do
        k patch pod -n "$NS" "$p" --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
    done
}

# slow deallocation: a terminating pod's finalizer removed E2E_PREEMPT_SLOW s after its
# deletion was first seen
preempt_slow_loop() {
    local slow=${E2E_PREEMPT_SLOW:-2} p
    declare -A seen
    while :; do
        for p in $(k get pods -n "$NS" -o json 2>/dev/null |
            jq -r --arg f "$PREEMPT_FIN" '.items[] | select(.metadata.deletionTimestamp and ((.metadata.finalizers // []) | index($f))) | .metadata.name'); do
            if [[ -z ${seen[$p]:-} ]]; then seen[$p]=$SECONDS
            elif ((SECONDS - seen[$p] >= slow)); then preempt_unfinalize "$p"; fi
        done
        sleep 0.5
    done
}

# every pod of $NS gone (finalizers removed)
preempt_clear() {
    preempt_unfinalize $(k get pods -n "$NS" -o json | jq -r --arg f "$PREEMPT_FIN" \
        '.items[] | select((.metadata.finalizers // []) | index($f)) | .metadata.name')
    k delete pods -n "$NS" --all --wait=false >/dev/null 2>&1
    preempt_unfinalize $(k get pods -n "$NS" -o name 2>/dev/null | sed 's|pod/||')
    k wait pods -n "$NS" --all --for=delete --timeout="$WAIT" >/dev/null 2>&1 ||
        { fail "the pods of $NS are still there after $WAIT"; return 1; }
}

# preempt_debug [KILLED LIVE]: what a stuck round needs to be understood, on stderr (CI
# keeps only the output, not the cluster's logs): the pods, why the pending ones are
# pending (kube-scheduler's last FailedScheduling message), the nodes' taints and
# Ready condition, the claims not yet gone, the live dralloc's holds and requeue
# counts, and its last log lines about holds, preemption and requeues
preempt_debug() {
    local live=${2-}
    k get pods -n "$NS" -o wide >&2
    k get events -n "$NS" --sort-by=.lastTimestamp | tail -40 >&2
    echo "--- FailedScheduling, last per pending pod" >&2
    k get events -n "$NS" --field-selector reason=FailedScheduling -o json |
        jq -r '.items | group_by(.involvedObject.name) | .[] | max_by(.lastTimestamp // .eventTime) |
            "\(.involvedObject.name): \(.message)"' | tail -12 >&2
    echo "--- nodes (taints, Ready)" >&2
    k get nodes -o json | jq -r '.items[] | "\(.metadata.name) taints=\([.spec.taints[]?.key] | join(",")) ready=\(.status.conditions[]? | select(.type == "Ready") | .status)"' >&2
    echo "--- claims: name allocated reservedFor deleting" >&2
    k get resourceclaims -n "$NS" -o json | jq -r '.items[] | "\(.metadata.name) \(.status.allocation != null) \([.status.reservedFor[]?.name] | join(",")) \(.metadata.deletionTimestamp != null)"' >&2
    echo "--- dralloc (the live replica)" >&2
    dralloc_get /debug/cache | jq -c '{preemption, requeue}' >&2
    [[ -f $CLUSTER/dralloc$live.log ]] &&
        grep -E -i 'hold|preempt|requeue|watch|relist' "$CLUSTER/dralloc$live.log" | tail -30 >&2
    return 0
}

preempt_cleanup() {
    preempt_clear >/dev/null 2>&1
    k delete resourceslice -l e2e-world=preempt >/dev/null 2>&1
    k delete deviceclass e2e-preempt >/dev/null 2>&1
    k delete priorityclass e2e-preempt-low e2e-preempt-high e2e-preempt-peer >/dev/null 2>&1
}
