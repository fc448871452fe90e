# Sourced by tests/e2e/run.sh. API priority and fairness (issue #39): deploy/'s
# FlowSchema dralloc-scheduler (base/flowschema.yaml) must classify every request of
# the ServiceAccount both containers of the pod run as — dralloc's /bind writes and its
# kube-scheduler's — into workload-high, as kube-apiserver's built-in FlowSchema
# `kube-scheduler` does for the cluster's own scheduler. Without it they land in
# workload-low with every other service account (seen before the FlowSchema existed).
# kube-apiserver says which FlowSchema and priority level served a request in the
# X-Kubernetes-PF-FlowSchema-UID and -PriorityLevel-UID response headers.
scenario_apf() {
    local token fs pl want_fs want_pl headers
    token=$(awk '/token:/ {print $2; exit}' "$CLUSTER/dralloc.kubeconfig")
    [[ -n $token ]] || { fail "no token in $CLUSTER/dralloc.kubeconfig"; return 1; }
    want_fs=$(k get flowschema dralloc-scheduler -o jsonpath='{.metadata.uid}') ||
        { fail "deploy/ applied no FlowSchema dralloc-scheduler"; return 1; }
    want_pl=$(k get prioritylevelconfiguration workload-high -o jsonpath='{.metadata.uid}')
    # a write as dralloc's /bind makes it (a dry-run create of a claim: authorized, classified, not stored)
    headers=$(curl -sk -o /dev/null -D - -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        "https://127.0.0.1:$APISERVER_PORT/apis/resource.k8s.io/v1/namespaces/$NS/resourceclaims?dryRun=All" \
        -d '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"apf"},"spec":{}}')
    fs=$(tr -d '\r' <<<"$headers" | awk -F': ' 'tolower($1) == "x-kubernetes-pf-flowschema-uid" {print $2}')
    pl=$(tr -d '\r' <<<"$headers" | awk -F': ' 'tolower($1) == "x-kubernetes-pf-prioritylevel-uid" {print $2}')
    [[ $fs == "$want_fs" ]] || { fail "dralloc's request matched FlowSchema uid '$fs', not dralloc-scheduler ($want_fs)"; return 1; }
    [[ $pl == "$want_pl" ]] || { fail "dralloc's request went to priority level uid '$pl', not workload-high ($want_pl)"; return 1; }
    echo "    dralloc's requests: FlowSchema dralloc-scheduler, priority level workload-high"
}
