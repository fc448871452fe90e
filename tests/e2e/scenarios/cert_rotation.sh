# Sourced by tests/e2e/run.sh. Certificate rotation (issue #39, item 3), on a cluster
# whose dralloc serves mTLS (cluster.sh --tls, deploy/README.md "Serving beyond
# loopback"): --tls-cert-file/--tls-private-key-file/--client-ca-file from a directory
# laid out as a mounted Secret (tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>), and
# --client-allowed-names=kube-scheduler; kube-scheduler's extender has enableHTTPS and a
# client certificate (CN kube-scheduler).
#
# Before: openssl s_client (with the client certificate) gets the first serving
# certificate; a handshake without a client certificate, or with one of the same CA whose
# name is not allowed, is refused; a pod is scheduled through dralloc. Then a new key
# pair and certificate (same CA, new serial) are written to a new directory and ..data
# swapped, as the kubelet updates a Secret volume: new connections must get the new
# certificate (serial and SHA-256 fingerprint), dralloc's /metrics count the reload, its
# pid is unchanged (no restart), and a second pod is scheduled through it.
scenario_cert_rotation() {
    [[ ${TLS:-0} == 1 ]] || { fail "needs a cluster with dralloc over TLS (cluster.sh up --tls)"; return 1; }
    local pid0 want got reloads0 reloads1 f0 f1 filters0 filters1 filters2
    pid0=$(cat "$CLUSTER/dralloc.pid")
    want=$(cert_id "$DRALLOC_TLS_DIR/tls.crt")
    got=$(served_cert_id) || { fail "no TLS handshake with dralloc (client certificate CN kube-scheduler)"; return 1; }
    [[ $got == "$want" ]] || { fail "dralloc serves '$got', its file holds '$want'"; return 1; }
    echo "    serving $got"
    # mTLS is enforced: no client certificate, or a name not allowed, is refused
    curl -sf --cacert "$DRALLOC_CACERT" "https://127.0.0.1:$DRALLOC_PORT/healthz" >/dev/null 2>&1 &&
        { fail "a request without a client certificate was answered"; return 1; }
    curl -sf --cacert "$DRALLOC_CACERT" --cert "$CLUSTER/pki/admin.crt" --key "$CLUSTER/pki/admin.key" \
        "https://127.0.0.1:$DRALLOC_PORT/healthz" >/dev/null 2>&1 &&
        { fail "a client certificate with CN e2e-admin (not in --client-allowed-names) was accepted"; return 1; }

    trap rotation_cleanup EXIT
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-rotation-gpu}
spec:
  selectors:
  - cel: {expression: device.driver == "rotation.e2e.dralloc.dev"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-0-rotation.e2e.dralloc.dev}
spec:
  driver: rotation.e2e.dralloc.dev
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0}
  - {name: gpu-1}
EOF
    dralloc_has DeviceClass 1 && dralloc_has ResourceSlice 1 || return 1
    filters0=$(extender_requests filter)
    rotation_pod before || return 1
    filters1=$(extender_requests filter)
    ((filters1 > filters0)) || { fail "dralloc's /filter was not called before the rotation"; return 1; }

    # the rotation: a new key pair and certificate, a new directory, ..data swapped
    reloads0=$(tls_reloads loaded)
    local v="..$(date +%Y_%m_%d_%H_%M_%S.%N)" d=$DRALLOC_TLS_DIR
    mkdir -p "$d/$v"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/$v/tls.key" \
        -out "$d/$v/tls.csr" -subj "/CN=dralloc" 2>/dev/null &&
        openssl x509 -req -in "$d/$v/tls.csr" -CA "$CLUSTER/pki/ca.crt" -CAkey "$CLUSTER/pki/ca.key" \
            -CAcreateserial -days 7 -out "$d/$v/tls.crt" -extfile <(printf '%s\n' "basicConstraints=CA:FALSE" \
            "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" \
            "subjectAltName=IP:127.0.0.1,DNS:localhost") 2>/dev/null ||
        { fail "making the new certificate failed"; return 1; }
    rm -f "$d/$v/tls.csr"
    cp "$CLUSTER/pki/ca.crt" "$d/$v/ca.crt"
    local old
    old=$(readlink "$d/..data")
    ln -s "$v" "$d/..data_tmp" && mv -T "$d/..data_tmp" "$d/..data" || { fail "swapping ..data failed"; return 1; }
    rm -rf "${d:?}/$old"   # as the kubelet does once ..data points to the new directory
    want=$(cert_id "$d/tls.crt")
    [[ $want != "$got" ]] || { fail "the new certificate is the old one"; return 1; }
    local t0=$SECONDS deadline=$((SECONDS + 30))
    while :; do
        got=$(served_cert_id)
        [[ $got == "$want" ]] && break
        ((SECONDS >= deadline)) && { fail "30 s after the swap, new connections still get '$got', not '$want'"; return 1; }
        sleep 0.5
    done
    reloads1=$(tls_reloads loaded)
    echo "    new connections get $got $((SECONDS - t0)) s after the swap; dralloc_tls_reloads_total{outcome=\"loaded\"} $reloads0 -> $reloads1"
    ((reloads1 > reloads0)) || { fail "dralloc's /metrics count no reload"; return 1; }
    [[ $(cat "$CLUSTER/dralloc.pid") == "$pid0" ]] && kill -0 "$pid0" 2>/dev/null ||
        { fail "dralloc was restarted or exited"; return 1; }
    # kube-scheduler goes on scheduling through dralloc (its connections opened after the
    # swap get the new certificate, which it verifies with its caFile)
    rotation_pod after || return 1
    filters2=$(extender_requests filter)
    ((filters2 > filters1)) || { fail "dralloc's /filter was not called after the rotation"; return 1; }
    [[ $(tls_reloads failed) == 0 ]] || { fail "dralloc counts failed reloads"; return 1; }
    echo "    dralloc /filter $filters0 -> $filters1 (before) -> $filters2 (after the rotation), same pid $pid0"
}

# cert_id FILE: serial and SHA-256 fingerprint of a PEM certificate
cert_id() {
    openssl x509 -in "$1" -noout -serial -fingerprint -sha256 | tr '\n' ' ' | sed 's/ $//'
}

# served_cert_id: the same of the certificate dralloc's listener presents on a new
# connection (with kube-scheduler's client certificate; verified against the CA)
served_cert_id() {
    local out
    out=$(timeout 10 openssl s_client -connect "127.0.0.1:$DRALLOC_PORT" -CAfile "$DRALLOC_CACERT" \
        -cert "$DRALLOC_CLIENT_CERT" -key "$DRALLOC_CLIENT_KEY" -verify_return_error </dev/null 2>/dev/null) || return 1
    openssl x509 -noout -serial -fingerprint -sha256 <<<"$out" | tr '\n' ' ' | sed 's/ $//'
}

tls_reloads() { # loaded|failed
    curl -sf "http://127.0.0.1:$DRALLOC_HEALTH_PORT/metrics" |
        awk -v o="$1" '$1 == "dralloc_tls_reloads_total{outcome=\"" o "\"}" { print $2 }'
}

# rotation_pod NAME: a pod with a claim of its own (made first) on node-0, bound
rotation_pod() {
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: $NS}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: e2e-rotation-gpu}
EOF
    dralloc_has ResourceClaim 1 || return 1
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
    k wait -n "$NS" "pod/$1" --for=jsonpath='{.spec.nodeName}'=node-0 --timeout="$WAIT" >/dev/null ||
        { k get events -n "$NS" >&2; fail "pod $1 not scheduled on node-0"; return 1; }
    k wait -n "$NS" "resourceclaim/$1" --for=jsonpath='{.status.reservedFor[0].name}'="$1" --timeout="$WAIT" >/dev/null ||
        { fail "claim $1 not reserved for its pod"; return 1; }
}

rotation_cleanup() {
    k delete pods -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceclaims -n "$NS" --all --wait=true --timeout="$WAIT" >/dev/null 2>&1
    k delete resourceslice node-0-rotation.e2e.dralloc.dev --wait=false >/dev/null 2>&1
    k delete deviceclass e2e-rotation-gpu --wait=false >/dev/null 2>&1
    return 0
}
