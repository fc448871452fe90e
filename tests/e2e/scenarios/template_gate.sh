# Sourced by tests/e2e/run.sh. Pods with ResourceClaimTemplates in bind mode.
#
# deploy/bind turns kube-scheduler's DynamicResources plugin off (dralloc allocates and
# binds) except at preEnqueue: its gate holds a pod until the claims of its templates
# exist (the resourceclaim controller makes them), and its queueing hints release the pod
# when they do. Without the gate the pod is tried before its claim exists and dralloc's
# /filter finds no claim to decide; a pod so parked waited for
# podMaxInUnschedulablePodsDuration (5 minutes) with nothing to wake it in 1 of 11 runs
# (tests/e2e/README.md).
#
# E2E_TEMPLATE_PODS pods (12), a template each, created at once on 4 nodes × 4 devices:
# every one bound within WAIT, its claim (named in the pod's status) allocated on its
# node and reserved for it alone, no device in two claims, and no FailedScheduling event
# for any of them — a pod tried before its claim existed would have one.
scenario_template_gate() {
    local n=${E2E_TEMPLATE_PODS:-12} i y
    trap claims_cleanup EXIT
    claims_world e2e-tmpl tmpl.e2e.dralloc.dev "node-0:4 node-1:4 node-2:4 node-3:4" || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-dev, namespace: $NS}
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly: {deviceClassName: e2e-tmpl}
EOF
    y=""
    for ((i = 0; i < n; i++)); do y+="---
apiVersion: v1
kind: Pod
metadata: {name: t-$i, namespace: $NS}
spec:
  schedulerName: $SCHEDULER_NAME
  terminationGracePeriodSeconds: 0
  resourceClaims: [{name: dev, resourceClaimTemplateName: one-dev}]
  containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: dev}]}}]
"; done
    k apply -f - >/dev/null <<<"$y" || { fail "creating $n pods failed"; return 1; }
    k wait -n "$NS" pods --all --for=jsonpath='{.spec.nodeName}' --timeout="$WAIT" >/dev/null ||
        { k get pods,resourceclaims,events -n "$NS" >&2; fail "not every pod was bound in $WAIT"; return 1; }
    local bad dups failed
    bad=$(k get pods,resourceclaims -n "$NS" -o json | jq -c '
        [.items[] | select(.kind == "Pod")] as $pods
        | ([.items[] | select(.kind == "ResourceClaim")] | map({key: .metadata.name, value: .}) | from_entries) as $claims
        | [$pods[] | . as $p
           | (first($p.status.resourceClaimStatuses[]? | select(.name == "dev") | .resourceClaimName) // "") as $cn
           | $claims[$cn] as $c
           | select($c == null or ([$c.status.allocation.devices.results[]?.pool] != [$p.spec.nodeName])
                    or ([$c.status.reservedFor[]?.uid] != [$p.metadata.uid]))
           | {pod: $p.metadata.name, node: $p.spec.nodeName, claim: $cn}]')
    [[ $bad == "[]" ]] || { fail "pods whose claim is not allocated on their node and reserved for them: $bad"; return 1; }
    dups=$(k get resourceclaims -n "$NS" -o json | jq -c '[.items[].status.allocation.devices.results[]
        | "\(.pool)/\(.device)"] | group_by(.) | map(select(length > 1) | .[0])')
    [[ $dups == "[]" ]] || { fail "devices in two claims: $dups"; return 1; }
    failed=$(k get events -n "$NS" --field-selector reason=FailedScheduling -o json | jq '.items | length')
    ((failed == 0)) || { k get events -n "$NS" --field-selector reason=FailedScheduling >&2
        fail "$failed FailedScheduling events: pods were tried before their claims existed"; return 1; }
    echo "    $n pods with a template each: all bound, each claim on its pod's node and reserved for it, no FailedScheduling"
}
