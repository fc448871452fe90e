# Sourced by tests/e2e/run.sh. Failover of the leading replica (issue #39, item 3).
#
# deploy/ runs two replicas of the pod kube-scheduler + dralloc (deploy/base/
# deployment.yaml, replicas: 2); kube-scheduler's leader election (the Lease
# dralloc-system/dralloc-scheduler of the KubeSchedulerConfiguration) decides which
# replica schedules, and each kube-scheduler calls only its own dralloc on loopback.
# cluster.sh --replicas 2 runs both pairs so (no forwarder, no Service: the extender's
# address is the sidecar's, as in the pod); replica 0 leads at first.
#
# Under scarcity (scarcity.sh's world, 4 nodes), E2E_FAILOVER_PODS pods (40) stream in
# (a few every second); once the leader's dralloc has bound a few, both processes of the
# leading replica are killed with SIGKILL (a node lost, the pod gone at once). The
# standby's kube-scheduler must take the Lease (its holder changes) and schedule through
# its own dralloc (its /bind called), and the API server must end settled, with
# scarcity.sh's checks: every pod present, bound or pending only when nothing fits; every
# bound pod's claim allocated on its node and reserved for it; no claim allocated without
# a bound pod reserving it (a /bind cut between the claim's write and the binding must be
# finished by the new leader, or undone); no device in two claims' allocations; no
# counter exceeded; the constraints kept. The old leader may have filled every device
# before it died, so then the pods of one half (e2e-half=a) are deleted: the new leader
# must bind pending pods to the freed devices (its dralloc's /bind called), same checks.
scenario_failover() {
    local n=${E2E_FAILOVER_PODS:-40} lead standby lport lhport sport shport holder0 holder
    [[ ${REPLICAS:-1} == 2 ]] || { fail "needs a cluster with two replicas (cluster.sh up --replicas 2)"; return 1; }
    ((${#CLUSTER} > 0)) || { fail "no cluster directory"; return 1; }
    holder0=$(lease_holder)
    [[ -n $holder0 ]] || { fail "nobody holds the Lease dralloc-system/dralloc-scheduler"; return 1; }
    # which replica leads: the one whose kube-scheduler logged taking the Lease
    local l0 l1
    l0=$(grep -c -i 'successfully acquired lease' "$CLUSTER/kube-scheduler.log")
    l1=$(grep -c -i 'successfully acquired lease' "$CLUSTER/kube-scheduler-1.log")
    if ((l0 > 0 && l1 == 0)); then lead="" standby=-1
    elif ((l1 > 0 && l0 == 0)); then lead=-1 standby=""
    else fail "cannot tell the leading replica (Lease taken $l0 and $l1 times)"; return 1; fi
    if [[ -z $lead ]]; then
        lport=$DRALLOC_PORT lhport=$DRALLOC_HEALTH_PORT sport=$DRALLOC_PORT_1 shport=$DRALLOC_HEALTH_PORT_1
    else
        lport=$DRALLOC_PORT_1 lhport=$DRALLOC_HEALTH_PORT_1 sport=$DRALLOC_PORT shport=$DRALLOC_HEALTH_PORT
    fi
    echo "    leader: replica $(replica "$lead") (holder $holder0), standby: replica $(replica "$standby")"

    trap scarce_cleanup EXIT
    scarce_world 4 || { fail "creating the devices failed"; return 1; }
    scarce_claims "$n" || { fail "creating $n claims failed"; return 1; }
    # both caches hold the world: the standby is ready to take over
    dralloc_synced "$lport" && dralloc_synced "$sport" || return 1
    curl -sf "http://127.0.0.1:$shport/readyz" >/dev/null || { fail "the standby's dralloc is not ready"; return 1; }
    local sbinds0 lbinds0
    sbinds0=$(extender_requests bind "$shport")
    lbinds0=$(extender_requests bind "$lhport")

    # the pods stream in: 4 a second, in the background
    local t0=$SECONDS
    (
        for ((i = 0; i < n; i += 4)); do
            scarce_pods $((i + 4 > n ? n : i + 4)) "$SCHEDULER_NAME" "$i" || exit 1
            sleep 1
        done
    ) &
    local streamer=$!
    # kill -9 the leading replica once its dralloc has bound a few pods and a fifth of
    # the pods are in, mid-stream
    local deadline=$((SECONDS + ${WAIT%s})) lb created
    while :; do
        lb=$(extender_requests bind "$lhport")
        created=$(k get pods -n "$NS" --no-headers 2>/dev/null | wc -l)
        ((lb - lbinds0 >= 3 && created >= n / 5)) && break
        ((SECONDS >= deadline)) && { fail "the leader's dralloc bound $((lb - lbinds0)) pods in $WAIT"; kill "$streamer" 2>/dev/null; return 1; }
        sleep 0.2
    done
    kill -KILL "$(cat "$CLUSTER/kube-scheduler$lead.pid")" "$(cat "$CLUSTER/dralloc$lead.pid")" ||
        { fail "killing the leading replica failed"; return 1; }
    local tkill=$SECONDS
    echo "    killed replica $(replica "$lead") (kube-scheduler and dralloc, SIGKILL) $((tkill - t0)) s in: $((lb - lbinds0)) binds by it, $created of $n pods created"

    # the standby takes the Lease
    deadline=$((SECONDS + 90))
    while :; do
        holder=$(lease_holder)
        [[ -n $holder && $holder != "$holder0" ]] && break
        ((SECONDS >= deadline)) && { fail "the Lease is still held by '$holder' 90 s after the kill"; kill "$streamer" 2>/dev/null; return 1; }
        sleep 0.5
    done
    echo "    Lease taken over by $holder $((SECONDS - tkill)) s after the kill"
    grep -q -i 'successfully acquired lease' "$CLUSTER/kube-scheduler$standby.log" ||
        { fail "kube-scheduler${standby} did not log taking the Lease"; return 1; }
    wait "$streamer" || { fail "creating the pods failed"; return 1; }

    scarce_settle "after the failover" 150 || { scarcity_debug; return 1; }
    local sbinds1 sbinds2 pods bound
    sbinds1=$(extender_requests bind "$shport")
    pods=$(jq .pods <<<"$SCARCE_STATE")
    bound=$(jq .bound <<<"$SCARCE_STATE")
    echo "    settled $((SECONDS - tkill)) s after the kill: $(scarce_summary); the new leader's dralloc /bind $sbinds0 -> $sbinds1"
    ((pods == n)) || { fail "$pods pods left of $n"; return 1; }
    ((bound >= 8)) || { fail "only $bound pods bound (the devices allow at least 8)"; scarcity_debug; return 1; }

    # the old leader may have filled every device before it died: free some, the new
    # leader must bind pending pods to them (through its own dralloc)
    local t1=$SECONDS
    k delete pods -n "$NS" -l e2e-half=a --wait=false >/dev/null || { fail "deleting half the pods failed"; return 1; }
    k wait pods -n "$NS" -l e2e-half=a --for=delete --timeout="$WAIT" >/dev/null ||
        { fail "the deleted pods are still there after $WAIT"; return 1; }
    scarce_settle "after freeing devices" 120 || { scarcity_debug; return 1; }
    sbinds2=$(extender_requests bind "$shport")
    echo "    half the pods deleted; settled $((SECONDS - t1)) s after: $(scarce_summary); the new leader's dralloc /bind $sbinds1 -> $sbinds2"
    ((sbinds2 > sbinds0)) || { fail "the new leader's dralloc was never asked to bind"; scarcity_debug; return 1; }
    [[ $(jq .pending <<<"$SCARCE_STATE") == 0 ]] || (($(jq .bound <<<"$SCARCE_STATE") >= 8)) ||
        { fail "the new leader bound too few pods"; scarcity_debug; return 1; }
}

replica() { if [[ -z $1 ]]; then echo 0; else echo "${1#-}"; fi; }

# the holder of kube-scheduler's Lease dralloc-system/dralloc-scheduler
lease_holder() {
    k get lease -n dralloc-system dralloc-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null
}
