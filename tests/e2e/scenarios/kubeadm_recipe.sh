# Sourced by tests/e2e/run.sh. The kubeadm recipe of deploy/README.md ("Adding the
# sidecar to an existing kube-scheduler instead"), issue #39 item 5, done as the README
# says and then run on this cluster:
#
# 1. kubeadm v1.37.2 (build-upstream/bin/kubeadm) renders the kube-scheduler static pod
#    with deploy/kubeadm/kube-scheduler+strategic.yaml: `kubeadm init phase
#    control-plane scheduler --config kubeadm.yaml` whose InitConfiguration names the
#    patches directory (kubeadm refuses `--config` together with `--patches`: "can not
#    mix '--config' with arguments [patches]", the recipe's first form), in dry-run
#    mode (KUBEADM_INIT_DRYRUN_DIR: the manifest is written there, not to
#    /etc/kubernetes). The rendered pod must carry what the README promises.
# 2. The pod's containers run as processes, host paths mapped into $CLUSTER/kubeadm/host:
#    scheduler.conf is cluster.sh's system:kube-scheduler kubeconfig (what kubeadm's is);
#    the init container's command copies it as written; kube-scheduler runs with the
#    rendered command (plus a free secure port and serving certificate) and
#    deploy/kubeadm/kube-scheduler-config.yaml (extender URL moved to a free port);
#    dralloc with the rendered args, as system:kube-scheduler with the README's step 3
#    binding and nothing else — the real authorizer judges it.
# 3. It must work: the kube-system/kube-scheduler Lease is taken (leader election from
#    the file), a DRA pod created without schedulerName (default-scheduler) lands on the
#    only node with devices with its claim allocated by the in-tree plugin, and the
#    sidecar dralloc was asked (/filter).
scenario_kubeadm_recipe() {
    local root bin kd host m sport dport hport spid dpid
    root=$(cd "$HERE/../.." && pwd)
    bin=${E2E_BIN:-$root/build-upstream/bin}
    [[ -x $bin/kubeadm ]] || { fail "no $bin/kubeadm (make e2e-build)"; return 1; }
    kd=$CLUSTER/kubeadm host=$CLUSTER/kubeadm/host
    rm -rf "$kd" && mkdir -p "$kd/patches" "$kd/manifests" "$host/etc/kubernetes/dralloc" "$host/var/run/dralloc" || return 1

    # 1. kubeadm renders the static pod with the patch
    cp "$root/deploy/kubeadm/kube-scheduler+strategic.yaml" "$kd/patches/"
    cat >"$kd/kubeadm.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
patches:
  directory: $kd/patches
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
EOF
    KUBEADM_INIT_DRYRUN_DIR=$kd/manifests "$bin/kubeadm" init phase control-plane scheduler \
        --config "$kd/kubeadm.yaml" --dry-run >"$kd/kubeadm.log" 2>&1 ||
        { cat "$kd/kubeadm.log" >&2; fail "kubeadm init phase control-plane scheduler failed"; return 1; }
    grep -q 'Applied patch of type "application/strategic-merge-patch+json" to target "kube-scheduler"' "$kd/kubeadm.log" ||
        { cat "$kd/kubeadm.log" >&2; fail "kubeadm did not apply the strategic patch"; return 1; }
    m=$kd/manifests/kube-scheduler.yaml
    [[ -f $m ]] || { fail "kubeadm wrote no kube-scheduler.yaml"; return 1; }
    yq . "$m" >"$kd/pod.json" || { fail "the rendered manifest is not YAML"; return 1; }
    local bad
    bad=$(jq -r '
        (.spec.containers | map({key: .name, value: .}) | from_entries) as $c
        | [ (if ($c["kube-scheduler"].command | index("--config=/etc/kubernetes/dralloc/kube-scheduler-config.yaml")) == null
             then "kube-scheduler has no --config" else empty end),
            (if [$c["kube-scheduler"].command[] | select(startswith("--kubeconfig") or startswith("--leader-elect"))] != []
             then "kube-scheduler keeps --kubeconfig or --leader-elect (ignored with --config)" else empty end),
            (if $c["kube-scheduler"].image != "registry.k8s.io/kube-scheduler:v1.37.2" then "kube-scheduler image \($c["kube-scheduler"].image)" else empty end),
            (if $c.dralloc == null then "no dralloc container" else empty end),
            (if ($c.dralloc.args | index("--kubeconfig=/var/run/dralloc/kubeconfig")) == null then "dralloc not on the copied kubeconfig" else empty end),
            (if [.spec.initContainers[]? | select(.name == "dralloc-credentials")] == [] then "no dralloc-credentials init container" else empty end),
            (if .spec.hostNetwork != true then "not on the host network" else empty end),
            (if ([.spec.volumes[].name] | sort) != ["dralloc-config", "dralloc-credentials", "kubeconfig"]
             then "volumes \([.spec.volumes[].name])" else empty end),
            (if [$c["kube-scheduler"].volumeMounts[] | select(.name == "dralloc-config" and .mountPath == "/etc/kubernetes/dralloc")] == []
             then "kube-scheduler lacks the config mount" else empty end)
          ] | join("; ")' "$kd/pod.json")
    [[ -z $bad ]] || { fail "the rendered static pod: $bad"; return 1; }

    # 2. its containers as processes, host paths under $host
    local conf=$host/etc/kubernetes/scheduler.conf
    cp "$CLUSTER/kube-scheduler-cert.kubeconfig" "$conf" && chmod 0600 "$conf"
    local init
    init=$(jq -r '.spec.initContainers[] | select(.name == "dralloc-credentials") | .command[2]' "$kd/pod.json")
    init=${init//\/etc\/kubernetes\/scheduler.conf/$conf}
    init=${init//\/var\/run\/dralloc/$host/var/run/dralloc}
    (($(id -u) == 0)) || init=${init//-o 65532 -g 65532 /} # not root here: the copy without its owner
    sh -c "$init" || { fail "the init container's command failed: $init"; return 1; }
    [[ $(stat -c %a "$host/var/run/dralloc/kubeconfig") == 400 ]] || { fail "the copied kubeconfig is not mode 0400"; return 1; }

    read -r sport dport hport <<<"$(python3 -c '
import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')"
    sed -e "s|/etc/kubernetes/scheduler.conf|$conf|" -e "s|http://127.0.0.1:8888|http://127.0.0.1:$dport|" \
        "$root/deploy/kubeadm/kube-scheduler-config.yaml" >"$host/etc/kubernetes/dralloc/kube-scheduler-config.yaml"
    grep -q "127.0.0.1:$dport" "$host/etc/kubernetes/dralloc/kube-scheduler-config.yaml" ||
        { fail "deploy/kubeadm/kube-scheduler-config.yaml has no urlPrefix http://127.0.0.1:8888"; return 1; }

    # dralloc (step 3 of the README: system:kube-scheduler gets dralloc-read)
    k create clusterrolebinding dralloc-read-kube-scheduler --clusterrole=dralloc-read --user=system:kube-scheduler >/dev/null ||
        { fail "the README's clusterrolebinding failed"; return 1; }
    local dargs=() a
    mapfile -t dargs < <(jq -r '.spec.containers[] | select(.name == "dralloc") | .args[]' "$kd/pod.json")
    for i in "${!dargs[@]}"; do
        a=${dargs[$i]}
        case $a in
            --listen=*) dargs[$i]=--listen=127.0.0.1:$dport ;;
            --health-listen=*) dargs[$i]=--health-listen=127.0.0.1:$hport ;;
            --kubeconfig=*) dargs[$i]=--kubeconfig=$host/var/run/dralloc/kubeconfig ;;
        esac
    done
    "$DRALLOC" "${dargs[@]}" </dev/null >"$kd/dralloc.log" 2>&1 &
    dpid=$!
    local scmd=()
    mapfile -t scmd < <(jq -r '.spec.containers[] | select(.name == "kube-scheduler") | .command[]' "$kd/pod.json")
    scmd=("${scmd[@]//\/etc\/kubernetes\/scheduler.conf/$conf}")
    scmd=("${scmd[@]//\/etc\/kubernetes\/dralloc/$host/etc/kubernetes/dralloc}")
    "$bin/${scmd[0]}" "${scmd[@]:1}" --secure-port "$sport" \
        --tls-cert-file "$CLUSTER/pki/kube-scheduler-serving.crt" --tls-private-key-file "$CLUSTER/pki/kube-scheduler-serving.key" \
        </dev/null >"$kd/kube-scheduler.log" 2>&1 &
    spid=$!
    # shellcheck disable=SC2064
    trap "kill $spid $dpid 2>/dev/null; wait $spid $dpid 2>/dev/null
          k delete pods -n '$NS' --all --wait=true --timeout='$WAIT' >/dev/null 2>&1
          k delete resourceclaims -n '$NS' --all >/dev/null 2>&1
          k delete deviceclass e2e-kubeadm-gpu --ignore-not-found >/dev/null 2>&1
          k delete resourceslice node-1-kubeadm.e2e.dralloc.dev --ignore-not-found >/dev/null 2>&1
          k delete clusterrolebinding dralloc-read-kube-scheduler --ignore-not-found >/dev/null 2>&1
          k delete lease -n kube-system kube-scheduler --ignore-not-found >/dev/null 2>&1" EXIT

    local deadline=$((SECONDS + ${WAIT%s}))
    until curl -sf "http://127.0.0.1:$hport/readyz" >/dev/null 2>&1 &&
        curl -sfk "https://127.0.0.1:$sport/healthz" >/dev/null 2>&1; do
        kill -0 "$dpid" 2>/dev/null || { tail -20 "$kd/dralloc.log" >&2; fail "the sidecar dralloc exited"; return 1; }
        kill -0 "$spid" 2>/dev/null || { tail -20 "$kd/kube-scheduler.log" >&2; fail "kube-scheduler (rendered command) exited"; return 1; }
        ((SECONDS >= deadline)) && { tail -5 "$kd/dralloc.log" "$kd/kube-scheduler.log" >&2; fail "not ready after $WAIT"; return 1; }
        sleep 0.5
    done
    # 3. leader election from the file: the Lease kube-system/kube-scheduler taken
    local holder
    until holder=$(k get lease -n kube-system kube-scheduler -o jsonpath='{.spec.holderIdentity}' 2>/dev/null) && [[ -n $holder ]]; do
        ((SECONDS >= deadline)) && { fail "kube-system/kube-scheduler Lease not taken in $WAIT"; return 1; }
        sleep 0.5
    done

    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-kubeadm-gpu}
spec:
  selectors:
  - cel: {expression: device.driver == "kubeadm.e2e.dralloc.dev"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-kubeadm.e2e.dralloc.dev}
spec:
  driver: kubeadm.e2e.dralloc.dev
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: kubeadm-gpu, namespace: $NS}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: e2e-kubeadm-gpu}
EOF
    # the sidecar's cache holds the slice before the pod (its watch is not the scheduler's)
    until [[ $(curl -sf "http://127.0.0.1:$dport/debug/cache" | jq -r '.objects.ResourceSlice // 0') -ge 1 ]]; do
        ((SECONDS >= deadline)) && { fail "the sidecar dralloc never saw the slice"; return 1; }
        sleep 0.3
    done
    local filters_before
    filters_before=$(curl -sf "http://127.0.0.1:$hport/metrics" |
        awk '$1 ~ /^dralloc_.*requests_total/ && $0 ~ "\"/?filter\"" { n += $NF } END { printf "%d\n", n }')
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Pod
metadata: {name: kubeadm, namespace: $NS}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: kubeadm-gpu}]
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {claims: [{name: gpu}]}
EOF
    k wait -n "$NS" pod/kubeadm --for=jsonpath='{.spec.nodeName}'=node-1 --timeout="$WAIT" >/dev/null ||
        { k get pod -n "$NS" kubeadm -o yaml >&2; tail -20 "$kd/kube-scheduler.log" >&2; fail "pod not scheduled on node-1"; return 1; }
    local sched claim dev filters_after
    sched=$(k get pod -n "$NS" kubeadm -o jsonpath='{.spec.schedulerName}')
    [[ $sched == default-scheduler ]] || { fail "the pod went to '$sched', not default-scheduler"; return 1; }
    claim=$(k get pod -n "$NS" kubeadm -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
    k wait -n "$NS" "resourceclaim/$claim" --for=jsonpath='{.status.allocation.devices.results[0].device}'=gpu-0 \
        --timeout="$WAIT" >/dev/null || { fail "claim '$claim' not allocated gpu-0"; return 1; }
    filters_after=$(curl -sf "http://127.0.0.1:$hport/metrics" |
        awk '$1 ~ /^dralloc_.*requests_total/ && $0 ~ "\"/?filter\"" { n += $NF } END { printf "%d\n", n }')
    ((filters_after > filters_before)) ||
        { fail "the sidecar's /filter was not called ($filters_before -> $filters_after)"; return 1; }
    echo "    kubeadm v1.37.2 rendered the patched static pod; its kube-scheduler (Lease holder $holder) put the pod on node-1, claim $claim: gpu-0; sidecar /filter $filters_before -> $filters_after"
}
