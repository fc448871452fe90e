# Sourced by tests/e2e/run.sh. Bind mode under scarcity (issue #39, item 3).
#
# 4 nodes of scarcity.sh's world (16 GPU devices, at most 12 allocatable at once: the
# partitions share a counter; 36 MIG partitions, whose memory and slice counters allow
# 2-7 a node), E2E_SCARCITY_PODS pods (300) in turn: a pair with a matchAttribute
# constraint, a firstAvailable request (full, else half), a MIG firstAvailable (3g, else
# 1g) — each with its claim made beforehand (resourceClaimName) — and a pod asking for a
# MIG 1g partition as a DRA extended resource (no claim: dralloc's /bind creates it). Everything is asserted on what the API
# server holds: every bound pod's claim allocated on its node and reserved for it, no
# allocation without a bound pod, no device allocated twice among all claims, no
# counter exceeded, the constraints kept, and no pending pod that would still fit
# (the devices are used up). Then half of the pods (e2e-half=a) is deleted: their claims
# must be deallocated by the resourceclaim controller (reservedFor emptied, then
# status.allocation removed) and the pending pods of the other half take the freed
# devices, with the same checks.
scenario_bind_scarcity() {
    local n=${E2E_SCARCITY_PODS:-300} nodes t0 t1
    nodes=$(k get nodes -o name | wc -l)
    ((nodes >= 4)) || { fail "needs 4 nodes, the cluster has $nodes"; return 1; }
    nodes=4
    trap scarce_cleanup EXIT
    scarce_world "$nodes" || { fail "creating the devices failed"; return 1; }
    scarce_claims "$n" || { fail "creating $n claims failed"; return 1; }
    dralloc_synced || return 1
    t0=$SECONDS
    scarce_pods "$n" "$SCHEDULER_NAME" || { fail "creating $n pods failed"; return 1; }
    scarce_settle "after creating $n pods" 120 || { scarcity_debug; return 1; }
    echo "    $n pods, settled in $((SECONDS - t0)) s: $(scarce_summary)"
    local bound1 binds1
    bound1=$(jq .bound <<<"$SCARCE_STATE")
    ((bound1 >= 8)) || { fail "only $bound1 pods bound (the devices allow at least 8)"; scarcity_debug; return 1; }
    binds1=$(extender_requests bind)

    # every kind got devices, the extended-resource pods through claims dralloc created
    jq -e '.bound > 0 and .extendedClaims > 0 and ([.perNode[] | select(.migMemUsed > 0)] | length) > 0' <<<"$SCARCE_STATE" >/dev/null ||
        { fail "no MIG partition or no extended-resource claim allocated: $(scarce_summary)"; scarcity_debug; return 1; }

    # half a goes: their claims must be deallocated (the extended-resource claims deleted
    # with their pods by the garbage collector), the pending pods of half b
    # must take what was freed
    local freed pending_b
    freed=$(k get pods -n "$NS" -l e2e-half=a -o json | jq -r '[.items[] | select(.spec.nodeName != null)
        | .spec.resourceClaims[0].resourceClaimName // .status.extendedResourceClaimStatus.resourceClaimName
        | select(. != null)] | join(" ")')
    pending_b=$(k get pods -n "$NS" -l e2e-half=b -o json | jq '[.items[] | select(.spec.nodeName == null)] | length')
    t1=$SECONDS
    k delete pods -n "$NS" -l e2e-half=a --wait=false >/dev/null || { fail "deleting half the pods failed"; return 1; }
    k wait pods -n "$NS" -l e2e-half=a --for=delete --timeout="$WAIT" >/dev/null ||
        { fail "the deleted pods are still there after $WAIT"; return 1; }
    local deadline=$((SECONDS + ${WAIT%s})) left
    while :; do
        left=$(k get resourceclaims -n "$NS" -o json | jq -r --arg freed " $freed " \
            '[.items[] | .metadata.name as $n | select(($freed | contains(" " + $n + " ")) and
                                (.status.allocation != null or (.status.reservedFor // []) != []))
              | .metadata.name] | join(" ")')
        [[ -z $left ]] && break
        ((SECONDS >= deadline)) && { fail "claims of deleted pods still allocated or reserved after $WAIT: $left"; return 1; }
        sleep 1
    done
    echo "    deleted $((n / 2)) pods; the $(wc -w <<<"$freed") claims they had allocated deallocated $((SECONDS - t1)) s after; $pending_b pods of the other half were pending"
    scarce_settle "after deleting half the pods" 120 || { scarcity_debug; return 1; }
    local bound2 binds2
    bound2=$(jq .bound <<<"$SCARCE_STATE")
    binds2=$(extender_requests bind)
    echo "    settled $((SECONDS - t1)) s after the deletion: $(scarce_summary); dralloc /bind $binds1 -> $binds2"
    if ((pending_b > 0)); then
        # every remaining pod is of half b; the ones bound before stay, the freed
        # devices must have gone to pods pending before
        local bound_b_before
        bound_b_before=$(( $(k get pods -n "$NS" -l e2e-half=b -o name | wc -l) - pending_b ))
        ((bound2 > bound_b_before)) ||
            { fail "no pending pod was scheduled after the deletion ($bound_b_before -> $bound2 bound)"; scarcity_debug; return 1; }
    fi
}

scarcity_debug() {
    k get pods -n "$NS" -o wide >&2 2>&1 | head -40
    k get events -n "$NS" --sort-by=.lastTimestamp 2>&1 | tail -20 >&2
}
