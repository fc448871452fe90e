# Sourced by tests/e2e/run.sh. Two schedulers (issue #39, item 3): dralloc-scheduler
# beside a default kube-scheduler (default profile, DynamicResources on). Each counts
# only its own in-flight allocations (kubernetes/kubernetes#128980); deploy/'s
# MutatingAdmissionPolicy (base/scheduler-name-policy.yaml) sends every pod that uses
# DRA to dralloc-scheduler. Pods are created WITHOUT schedulerName under scarcity
# (scarcity.sh's world, E2E_TWO_SCHEDULERS_PODS pods, 40): every one must come out of
# admission with schedulerName dralloc-scheduler, and the API server must hold no device
# allocated twice (with the rest of scarcity.sh's checks); a pod without DRA must stay
# with default-scheduler and be bound by it (the default scheduler is live, the policy
# does not over-match).
scenario_two_schedulers() {
    local n=${E2E_TWO_SCHEDULERS_PODS:-40} root bin port pid t0
    root=$(cd "$HERE/../.." && pwd)
    bin=${E2E_BIN:-$root/build-upstream/bin}
    ((${#CLUSTER} > 0)) && [[ -f $CLUSTER/kube-scheduler-cert.kubeconfig ]] ||
        { fail "no cluster directory with kube-scheduler-cert.kubeconfig"; return 1; }

    # the policy as deploy/<mode> renders it now
    k kustomize "$root/deploy/$MODE" | yq -y 'select(.kind == "MutatingAdmissionPolicy" or .kind == "MutatingAdmissionPolicyBinding")' \
        >"$CLUSTER/scheduler-name-policy.yaml"
    [[ $(grep -c '^kind: MutatingAdmissionPolicy' "$CLUSTER/scheduler-name-policy.yaml") == 2 ]] ||
        { fail "deploy/$MODE renders no MutatingAdmissionPolicy and binding"; return 1; }
    k apply -f "$CLUSTER/scheduler-name-policy.yaml" >/dev/null || { fail "applying the policy failed"; return 1; }
    # shellcheck disable=SC2064
    trap "scarce_cleanup; k delete -f '$CLUSTER/scheduler-name-policy.yaml' --ignore-not-found >/dev/null 2>&1" EXIT
    # effective once the API server's admission sees it: probe with a server dry-run
    local deadline=$((SECONDS + ${WAIT%s})) got
    while :; do
        got=$(k create --dry-run=server -o jsonpath='{.spec.schedulerName}' -f - <<EOF 2>/dev/null
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: $NS}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: probe}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
EOF
        )
        [[ $got == "$SCHEDULER_NAME" ]] && break
        ((SECONDS >= deadline)) && { fail "the policy did not take effect in $WAIT (a DRA pod gets '$got')"; return 1; }
        sleep 0.5
    done

    # the default scheduler, as system:kube-scheduler (cluster.sh's certificate)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$bin/kube-scheduler" --kubeconfig "$CLUSTER/kube-scheduler-cert.kubeconfig" \
        --authentication-kubeconfig "$CLUSTER/kube-scheduler-cert.kubeconfig" \
        --authorization-kubeconfig "$CLUSTER/kube-scheduler-cert.kubeconfig" \
        --leader-elect=false --bind-address 127.0.0.1 --secure-port "$port" \
        --tls-cert-file "$CLUSTER/pki/kube-scheduler-serving.crt" \
        --tls-private-key-file "$CLUSTER/pki/kube-scheduler-serving.key" \
        </dev/null >"$CLUSTER/default-scheduler.log" 2>&1 &
    pid=$!
    # shellcheck disable=SC2064
    trap "scarce_cleanup; kill $pid 2>/dev/null; wait $pid 2>/dev/null; k delete -f '$CLUSTER/scheduler-name-policy.yaml' --ignore-not-found >/dev/null 2>&1" EXIT
    deadline=$((SECONDS + ${WAIT%s}))
    until curl -sfk "https://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
        kill -0 "$pid" 2>/dev/null || { tail -20 "$CLUSTER/default-scheduler.log" >&2; fail "the default kube-scheduler exited"; return 1; }
        ((SECONDS >= deadline)) && { fail "the default kube-scheduler not healthy after $WAIT"; return 1; }
        sleep 0.5
    done

    # a pod without DRA: the default scheduler's
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: registry.k8s.io/pause:3.10}]
EOF
    k wait -n "$NS" pod/plain --for=jsonpath='{.spec.nodeName}' --timeout="$WAIT" >/dev/null ||
        { fail "the default scheduler did not bind a pod without DRA"; return 1; }
    [[ $(k get pod -n "$NS" plain -o jsonpath='{.spec.schedulerName}') == default-scheduler ]] ||
        { fail "the policy changed the schedulerName of a pod without DRA"; return 1; }
    k delete pod -n "$NS" plain --wait=true --timeout="$WAIT" >/dev/null

    # DRA pods without schedulerName, under scarcity
    scarce_world 4 || { fail "creating the devices failed"; return 1; }
    scarce_claims "$n" || { fail "creating $n claims failed"; return 1; }
    dralloc_synced || return 1
    t0=$SECONDS
    scarce_pods "$n" "" || { fail "creating $n pods failed"; return 1; }
    local scheds
    scheds=$(k get pods -n "$NS" -o json | jq -c '[.items[].spec.schedulerName] | group_by(.) | map({key: .[0], value: length}) | from_entries')
    [[ $scheds == "{\"$SCHEDULER_NAME\":$n}" ]] ||
        { fail "pods created without schedulerName came out of admission with $scheds, want all $n $SCHEDULER_NAME"; return 1; }
    scarce_settle "$n pods, two schedulers" 120 || { scarcity_debug; return 1; }
    echo "    $n pods, all $SCHEDULER_NAME by the policy; settled in $((SECONDS - t0)) s: $(scarce_summary)"
    # who bound them: dralloc-scheduler's events, none from default-scheduler
    local others
    others=$(k get events -n "$NS" -o json | jq -r '[.items[] | select(.reason == "Scheduled" and .involvedObject.name != "plain") | (.reportingComponent // .source.component)] | map(select(. != "dralloc-scheduler")) | unique | join(",")')
    [[ -z $others ]] || { fail "pods were scheduled by: $others"; return 1; }
}
