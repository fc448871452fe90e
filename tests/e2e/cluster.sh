#!/usr/bin/env bash
# A real Kubernetes v1.37.2 control plane on loopback, with dralloc deployed as
# deploy/<mode> describes, for end-to-end tests (tests/e2e/README.md).
#
#   tests/e2e/cluster.sh up DIR [--mode advisor|bind] [--nodes N] [--replicas 1|2] [--tls]
#   tests/e2e/cluster.sh down DIR
#   tests/e2e/cluster.sh stop DIR COMPONENT      (TERM, KILL after E2E_STOP_GRACE s, 30)
#   tests/e2e/cluster.sh restart DIR COMPONENT   (stop if running, then its command again)
#
# up starts, each from build-upstream/bin (make e2e-build) unless said otherwise:
#   etcd                     plain HTTP on 127.0.0.1, data in DIR/etcd
#   kube-apiserver           HTTPS on 127.0.0.1 (certificates made here with openssl),
#                            --authorization-mode=Node,RBAC, default admission plugins,
#                            default feature gates; no unauthenticated port, anonymous off
#   kube-controller-manager  --controllers=* (the resourceclaim controller included),
#                            --use-service-account-credentials, its own client cert
#   fake-kubelet             keeps the N Nodes (node-0..node-N-1, created here) Ready
#   dralloc serve            live mode, the rendered Deployment's flags, as the
#                            dralloc-system/dralloc-scheduler ServiceAccount (a real token)
#   kube-scheduler           the rendered KubeSchedulerConfiguration of deploy/<mode>
#                            (profile, extender and leader election as shipped; only the
#                            extender's address and the kubeconfig changed), as the same
#                            ServiceAccount: the pod of deploy/ runs both containers as it
# and writes DIR/kubeconfig (admin), DIR/env (ports, mode: `source` it), DIR/*.log,
# DIR/*.pid, DIR/*.cmd (the command line, for restart). down stops what up started (by
# pid file, TERM then KILL) and waits.
#
# --replicas 2: the Deployment's two replicas of the pair (deploy/base/deployment.yaml
# has replicas: 2): a second kube-scheduler (kube-scheduler-1, same configuration and
# Lease) with its own dralloc sidecar (dralloc-1), each scheduler calling only its own
# dralloc on loopback, as in the pod. The second pair starts once the first one's
# kube-scheduler holds the Lease, so replica 0 leads at first.
# --tls: dralloc serves HTTPS with client certificates, as deploy/README.md "Serving
# beyond loopback" says (--tls-cert-file, --tls-private-key-file, --client-ca-file,
# --client-allowed-names=kube-scheduler; the extender enableHTTPS with tlsConfig). Its
# files are laid out as a mounted Secret: DIR/dralloc-tls/{tls.crt,tls.key,ca.crt} ->
# ..data/ -> a timestamped directory, so a rotation swaps the ..data symlink.
#
# Node lifecycle: the nodelifecycle controller stays ON; fake-kubelet (cmd/fake-kubelet)
# renews each Node's Lease in kube-node-lease and its Ready condition every 10s, marks
# pods bound to a node Running/Ready and finishes deletions (grace 0). So nodes are
# never tainted not-ready/unreachable and pod deletion behaves as with kubelets.
#
# Environment: E2E_BIN (build-upstream/bin), KUBECTL (E2E_BIN/kubectl, else PATH's), DRALLOC (build-release/dralloc, else
# build/dralloc), E2E_SCHEDULER_IDENTITY=sa|cert (sa: the ServiceAccount as deployed;
# cert: CN=system:kube-scheduler), E2E_DRALLOC_ARGS (extra flags for dralloc serve),
# E2E_TIMEOUT (seconds per wait, default 90).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${E2E_BIN:-$ROOT/build-upstream/bin}
TIMEOUT=${E2E_TIMEOUT:-90}
# kubectl v1.37.2 built by e2e-build (its kustomize renders deploy/), else the PATH's
if [[ -z ${KUBECTL:-} ]]; then
    if [[ -x $BIN/kubectl ]]; then KUBECTL=$BIN/kubectl; else KUBECTL=kubectl; fi
fi
# start order; down stops them in reverse (dralloc-1, kube-scheduler-1: --replicas 2)
COMPONENTS=(etcd kube-apiserver kube-controller-manager fake-kubelet dralloc kube-scheduler dralloc-1 kube-scheduler-1)

die() { echo "cluster.sh: $*" >&2; exit 1; }
log() { echo "cluster.sh: $*" >&2; }

usage() {
    echo "usage: $0 up DIR [--mode advisor|bind] [--nodes N] [--replicas 1|2] [--tls] | $0 down DIR | $0 stop|restart DIR COMPONENT" >&2
    exit 2
}

# wait_for COMPONENT WHAT CMD...: retry CMD until it succeeds, at most $TIMEOUT
# seconds; fails at once when COMPONENT's process exits
wait_for() {
    local comp=$1 what=$2; shift 2
    local deadline=$((SECONDS + TIMEOUT))
    until "$@" >/dev/null 2>&1; do
        if ! alive "$comp"; then
            log "$comp exited while waiting for $what"
            return 1
        fi
        if ((SECONDS >= deadline)); then
            log "timed out after ${TIMEOUT}s waiting for $what"
            return 1
        fi
        sleep 0.5
    done
}

# start NAME CMD...: run CMD in the background, log to DIR/NAME.log (appended: a
# restart keeps the earlier log), pid in DIR/NAME.pid, the command in DIR/NAME.cmd
start() {
    local name=$1; shift
    printf '%q ' "$@" >"$DIR/$name.cmd"
    "$@" </dev/null >>"$DIR/$name.log" 2>&1 &
    echo $! >"$DIR/$name.pid"
}

# alive NAME: the process of DIR/NAME.pid still runs (and is still ours)
alive() {
    local pid
    pid=$(cat "$DIR/$1.pid" 2>/dev/null) || return 1
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
    # a zombie or a recycled pid is not ours
    [[ $(cat "/proc/$pid/stat" 2>/dev/null | awk '{print $3}') != Z ]] || return 1
    # the program's name (dralloc-1: dralloc) in its command line
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "${1%-[0-9]}" || return 1
}

check_alive() {
    alive "$1" || { tail -n 30 "$DIR/$1.log" >&2; die "$1 exited (log: $DIR/$1.log)"; }
}

free_ports() { # N: print N free loopback ports
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# ---- certificates ------------------------------------------------------------------
make_certs() {
    local pki=$DIR/pki
    mkdir -p "$pki"
    (
        cd "$pki"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout ca.key -out ca.crt -days 7 -subj "/CN=dralloc-e2e-ca" \
            -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
        # name subject extendedKeyUsage [subjectAltName]
        leaf() {
            local ext="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=$3"
            [[ -n ${4:-} ]] && ext+="
subjectAltName=$4"
            openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
            openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
                -days 7 -out "$1.crt" -extfile <(echo "$ext") 2>/dev/null
            rm -f "$1.csr"
        }
        leaf apiserver "/CN=kube-apiserver" serverAuth \
            "IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
        leaf kube-controller-manager-serving "/CN=kube-controller-manager" serverAuth "IP:127.0.0.1,DNS:localhost"
        leaf kube-scheduler-serving "/CN=kube-scheduler" serverAuth "IP:127.0.0.1,DNS:localhost"
        leaf admin "/O=system:masters/CN=e2e-admin" clientAuth
        leaf kube-controller-manager "/CN=system:kube-controller-manager" clientAuth
        leaf kube-scheduler "/CN=system:kube-scheduler" clientAuth
        leaf front-proxy-client "/CN=front-proxy-client" clientAuth
        # --tls: dralloc's serving certificate and kube-scheduler's client certificate
        # for the extender (CN kube-scheduler: --client-allowed-names=kube-scheduler)
        leaf dralloc-serving "/CN=dralloc" serverAuth "IP:127.0.0.1,DNS:localhost"
        leaf dralloc-client "/CN=kube-scheduler" clientAuth
        leaf apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
        # the service-account token signing key pair
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
        openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    )
}

# kubeconfig FILE USER (cert CRT KEY | token TOKEN)
kubeconfig() {
    local file=$1 user=$2 kind=$3
    {
        cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $DIR/pki/ca.crt
contexts:
- name: e2e
  context: {cluster: e2e, user: $user${KUBECONFIG_NS:+, namespace: $KUBECONFIG_NS}}
current-context: e2e
users:
- name: $user
  user:
EOF
        if [[ $kind == cert ]]; then
            echo "    client-certificate: $4"
            echo "    client-key: $5"
        else
            echo "    token: $4"
        fi
    } >"$file"
}

kc() { "$KUBECTL" --kubeconfig "$DIR/kubeconfig" "$@"; }

# ---- up ----------------------------------------------------------------------------
up() {
    local mode=advisor nodes=2 replicas=1 tls=0
    while (($#)); do
        case $1 in
            --mode) mode=${2:?}; shift 2 ;;
            --mode=*) mode=${1#--mode=}; shift ;;
            --nodes) nodes=${2:?}; shift 2 ;;
            --nodes=*) nodes=${1#--nodes=}; shift ;;
            --replicas) replicas=${2:?}; shift 2 ;;
            --replicas=*) replicas=${1#--replicas=}; shift ;;
            --tls) tls=1; shift ;;
            *) usage ;;
        esac
    done
    [[ $mode == advisor || $mode == bind ]] || die "--mode: advisor or bind, not $mode"
    [[ $nodes =~ ^[0-9]+$ ]] || die "--nodes: a number, not $nodes"
    [[ $replicas == 1 || $replicas == 2 ]] || die "--replicas: 1 or 2, not $replicas"
    local b
    for b in etcd kube-apiserver kube-controller-manager kube-scheduler fake-kubelet; do
        [[ -x $BIN/$b ]] || die "$BIN/$b missing: run make e2e-build"
    done
    local dralloc=${DRALLOC:-}
    if [[ -z $dralloc ]]; then
        if [[ -x $ROOT/build-release/dralloc ]]; then dralloc=$ROOT/build-release/dralloc
        elif [[ -x $ROOT/build/dralloc ]]; then dralloc=$ROOT/build/dralloc
        else die "no dralloc binary: run make release"; fi
    fi
    command -v "$KUBECTL" >/dev/null || die "kubectl not found"
    for c in "${COMPONENTS[@]}"; do
        alive "$c" && die "$DIR already has a running $c: cluster.sh down $DIR first"
    done
    local t0=$SECONDS
    mkdir -p "$DIR"
    rm -rf "$DIR/etcd"
    for c in "${COMPONENTS[@]}"; do rm -f "$DIR/$c.log" "$DIR/$c.cmd"; done

    local ports
    read -r ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT SCHEDULER_PORT DRALLOC_PORT DRALLOC_HEALTH_PORT \
        SCHEDULER_PORT_1 DRALLOC_PORT_1 DRALLOC_HEALTH_PORT_1 <<<"$(free_ports 10)"
    local scheme=http
    ((tls)) && scheme=https
    cat >"$DIR/env" <<EOF
MODE=$mode
NODES=$nodes
REPLICAS=$replicas
TLS=$tls
DRALLOC_SCHEME=$scheme
ETCD_PORT=$ETCD_PORT
APISERVER_PORT=$APISERVER_PORT
KCM_PORT=$KCM_PORT
SCHEDULER_PORT=$SCHEDULER_PORT
DRALLOC_PORT=$DRALLOC_PORT
DRALLOC_HEALTH_PORT=$DRALLOC_HEALTH_PORT
EOF
    ((replicas == 2)) && cat >>"$DIR/env" <<EOF
SCHEDULER_PORT_1=$SCHEDULER_PORT_1
DRALLOC_PORT_1=$DRALLOC_PORT_1
DRALLOC_HEALTH_PORT_1=$DRALLOC_HEALTH_PORT_1
EOF
    ((tls)) && cat >>"$DIR/env" <<EOF
DRALLOC_TLS_DIR=$DIR/dralloc-tls
DRALLOC_CACERT=$DIR/pki/ca.crt
DRALLOC_CLIENT_CERT=$DIR/pki/dralloc-client.crt
DRALLOC_CLIENT_KEY=$DIR/pki/dralloc-client.key
EOF
    cat >>"$DIR/env" <<EOF
DRALLOC=$dralloc
KUBECTL=$KUBECTL
KUBECONFIG=$DIR/kubeconfig
SCHEDULER_NAME=dralloc-scheduler
EOF

    make_certs
    local pki=$DIR/pki
    kubeconfig "$DIR/kubeconfig" e2e-admin cert "$pki/admin.crt" "$pki/admin.key"
    kubeconfig "$DIR/kube-controller-manager.kubeconfig" system:kube-controller-manager cert \
        "$pki/kube-controller-manager.crt" "$pki/kube-controller-manager.key"
    kubeconfig "$DIR/kube-scheduler-cert.kubeconfig" system:kube-scheduler cert \
        "$pki/kube-scheduler.crt" "$pki/kube-scheduler.key"

    # deploy/<mode> rendered: the scheduler configuration, dralloc's flags, the RBAC
    "$KUBECTL" kustomize "$ROOT/deploy/$mode" >"$DIR/deploy.yaml" || die "kubectl kustomize deploy/$mode failed"

    log "etcd on 127.0.0.1:$ETCD_PORT"
    start etcd "$BIN/etcd" --name e2e --data-dir "$DIR/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
        --unsafe-no-fsync --log-level warn
    wait_for etcd "etcd /health" curl -sf "http://127.0.0.1:$ETCD_PORT/health" || { check_alive etcd; die "etcd not healthy"; }

    log "kube-apiserver on https://127.0.0.1:$APISERVER_PORT"
    start kube-apiserver "$BIN/kube-apiserver" \
        --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
        --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
        --client-ca-file "$pki/ca.crt" --anonymous-auth=false \
        --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
        --service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type none \
        --authorization-mode Node,RBAC --allow-privileged=true --profiling=false \
        --requestheader-client-ca-file "$pki/ca.crt" --requestheader-allowed-names front-proxy-client \
        --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
        --requestheader-extra-headers-prefix X-Remote-Extra- \
        --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key"
    # /readyz needs credentials (anonymous is off): the admin's
    local acurl=(curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key")
    wait_for kube-apiserver "kube-apiserver /readyz" "${acurl[@]}" "https://127.0.0.1:$APISERVER_PORT/readyz" ||
        { check_alive kube-apiserver; die "kube-apiserver not ready (log: $DIR/kube-apiserver.log)"; }

    log "kube-controller-manager on https://127.0.0.1:$KCM_PORT"
    start kube-controller-manager "$BIN/kube-controller-manager" \
        --kubeconfig "$DIR/kube-controller-manager.kubeconfig" \
        --authentication-kubeconfig "$DIR/kube-controller-manager.kubeconfig" \
        --authorization-kubeconfig "$DIR/kube-controller-manager.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
        --tls-cert-file "$pki/kube-controller-manager-serving.crt" \
        --tls-private-key-file "$pki/kube-controller-manager-serving.key" \
        --controllers '*' --use-service-account-credentials --leader-elect=false \
        --root-ca-file "$pki/ca.crt" --service-account-private-key-file "$pki/sa.key" \
        --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
        --profiling=false

    # deploy/<mode>'s namespace, service account, RBAC and FlowSchema (and the ConfigMap,
    # harmless), as rendered; not the Deployment and its PodDisruptionBudget: the
    # processes run here
    yq -y 'select(.kind == "Namespace" or .kind == "ServiceAccount" or .kind == "ClusterRole" or
               .kind == "ClusterRoleBinding" or .kind == "Role" or .kind == "RoleBinding" or
               .kind == "ConfigMap" or .kind == "FlowSchema")' "$DIR/deploy.yaml" >"$DIR/deploy-rbac.yaml"
    kc apply -f "$DIR/deploy-rbac.yaml" >"$DIR/deploy-apply.log" 2>&1 ||
        { cat "$DIR/deploy-apply.log" >&2; die "applying deploy/$mode's RBAC failed"; }
    local token
    token=$(kc create token dralloc-scheduler -n dralloc-system --duration 48h) ||
        die "kubectl create token dralloc-system/dralloc-scheduler failed"
    # the service account's namespace, as in the pod (in-cluster config): dralloc's own
    # objects (its requeue claim, extender/requeue.h) go there
    KUBECONFIG_NS=dralloc-system kubeconfig "$DIR/dralloc.kubeconfig" system:serviceaccount:dralloc-system:dralloc-scheduler token "$token"
    if [[ ${E2E_SCHEDULER_IDENTITY:-sa} == cert ]]; then
        cp "$DIR/kube-scheduler-cert.kubeconfig" "$DIR/kube-scheduler.kubeconfig"
        # deploy/ grants the scheduler's Lease to the ServiceAccount only
        kc create rolebinding e2e-kube-scheduler-leader-election -n dralloc-system \
            --role dralloc-scheduler-leader-election --user system:kube-scheduler >/dev/null
    else
        cp "$DIR/dralloc.kubeconfig" "$DIR/kube-scheduler.kubeconfig"
    fi

    # the Nodes, Ready; fake-kubelet keeps them so
    local i nodes_yaml=
    for ((i = 0; i < nodes; i++)); do
        nodes_yaml+="---
apiVersion: v1
kind: Node
metadata:
  name: node-$i
  labels: {kubernetes.io/hostname: node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  capacity: {cpu: \"32\", memory: 128Gi, pods: \"110\"}
  allocatable: {cpu: \"32\", memory: 128Gi, pods: \"110\"}
  nodeInfo: {kubeletVersion: v1.37.2, operatingSystem: linux, architecture: amd64}
  conditions:
  - {type: Ready, status: \"True\", reason: KubeletReady, message: fake-kubelet}
"
    done
    if ((nodes > 0)); then
        echo "$nodes_yaml" | kc create -f - >/dev/null || die "creating the Nodes failed"
    fi
    log "fake-kubelet for $nodes nodes"
    start fake-kubelet "$BIN/fake-kubelet" --kubeconfig "$DIR/kubeconfig"

    # the Deployment's dralloc args and the shipped KubeSchedulerConfiguration
    DARGS=()
    local a
    while IFS= read -r a; do DARGS+=("$a"); done < <(yq -r 'select(.kind == "Deployment") | .spec.template.spec.containers[] |
                   select(.name == "dralloc") | .args[]' "$DIR/deploy.yaml")
    [[ ${DARGS[0]:-} == serve ]] || die "deploy/$mode: the dralloc container's args do not start with serve"
    yq -r 'select(.kind == "ConfigMap" and .data["config.yaml"] != null) | .data["config.yaml"]' \
        "$DIR/deploy.yaml" >"$DIR/kube-scheduler-config.shipped.yaml"
    [[ -s $DIR/kube-scheduler-config.shipped.yaml ]] || die "deploy/$mode: no ConfigMap with config.yaml"
    if ((tls)); then
        # a mounted Secret's layout: the names link through ..data to a timestamped
        # directory, which a rotation replaces by swapping ..data
        local v="..$(date +%Y_%m_%d_%H_%M_%S.%N)"
        mkdir -p "$DIR/dralloc-tls/$v"
        cp "$pki/dralloc-serving.crt" "$DIR/dralloc-tls/$v/tls.crt"
        cp "$pki/dralloc-serving.key" "$DIR/dralloc-tls/$v/tls.key"
        cp "$pki/ca.crt" "$DIR/dralloc-tls/$v/ca.crt"
        ln -sfn "$v" "$DIR/dralloc-tls/..data"
        for a in tls.crt tls.key ca.crt; do ln -sfn "..data/$a" "$DIR/dralloc-tls/$a"; done
    fi
    start_pair "" "$DRALLOC_PORT" "$DRALLOC_HEALTH_PORT" "$SCHEDULER_PORT" "$dralloc" "$tls"

    local c
    wait_for kube-controller-manager "kube-controller-manager /healthz" curl -sfk "https://127.0.0.1:$KCM_PORT/healthz" ||
        { check_alive kube-controller-manager; die "kube-controller-manager not healthy"; }
    wait_for kube-controller-manager "the default ServiceAccount (kube-controller-manager's serviceaccount controller)" \
        kc get serviceaccount default -n default || die "no default ServiceAccount"
    wait_pair "" "$DRALLOC_HEALTH_PORT" "$SCHEDULER_PORT"
    if ((replicas == 2)); then
        # the second replica once the first leads: replica 0 is the leader at first
        start_pair -1 "$DRALLOC_PORT_1" "$DRALLOC_HEALTH_PORT_1" "$SCHEDULER_PORT_1" "$dralloc" "$tls"
        wait_pair -1 "$DRALLOC_HEALTH_PORT_1" "$SCHEDULER_PORT_1"
    fi
    local c
    wait_for kube-controller-manager "kube-controller-manager /healthz" curl -sfk "https://127.0.0.1:$KCM_PORT/healthz" ||
        { check_alive kube-controller-manager; die "kube-controller-manager not healthy"; }
    if ((nodes > 0)); then
        wait_for fake-kubelet "node leases" bash -c "[ \$('$KUBECTL' --kubeconfig '$DIR/kubeconfig' get lease -n kube-node-lease -o name | wc -l) -ge $nodes ]" ||
            { check_alive fake-kubelet; die "fake-kubelet wrote no node leases"; }
    fi
    for c in "${COMPONENTS[@]}"; do
        [[ $c == *-1 ]] && ((replicas < 2)) && continue
        check_alive "$c"
    done
    log "up in $((SECONDS - t0))s: mode $mode, $nodes nodes, $replicas replica(s)$( ((tls)) && echo ", dralloc over mTLS"); KUBECONFIG=$DIR/kubeconfig"
}

# start_pair SUFFIX DRALLOC_PORT HEALTH_PORT SCHEDULER_PORT DRALLOC_BINARY TLS: one replica
# of the Deployment's pod: dralloc serve with the Deployment's flags (the addresses moved
# to free loopback ports), kube-scheduler with the rendered KubeSchedulerConfiguration,
# only where it reaches dralloc and the API server changed
start_pair() {
    local sfx=$1 port=$2 hport=$3 sport=$4 dralloc=$5 tls=$6 a pki=$DIR/pki
    local -a dargs=()
    for a in "${DARGS[@]}"; do
        case $a in
            --listen=*) dargs+=("--listen=127.0.0.1:$port") ;;
            --health-listen=*) dargs+=("--health-listen=127.0.0.1:$hport") ;;
            *) dargs+=("$a") ;;
        esac
    done
    if ((tls)); then
        # deploy/README.md "Serving beyond loopback"
        dargs+=("--tls-cert-file=$DIR/dralloc-tls/tls.crt" "--tls-private-key-file=$DIR/dralloc-tls/tls.key"
            "--client-ca-file=$DIR/dralloc-tls/ca.crt" "--client-allowed-names=kube-scheduler")
    fi
    # shellcheck disable=SC2206
    local extra=(${E2E_DRALLOC_ARGS:-})
    log "dralloc$sfx ${dargs[*]} on 127.0.0.1:$port (health $hport)"
    start "dralloc$sfx" "$dralloc" "${dargs[@]}" --kubeconfig "$DIR/dralloc.kubeconfig" "${extra[@]}"

    local scheme=http
    ((tls)) && scheme=https
    yq -y --arg url "$scheme://127.0.0.1:$port" --arg kc "$DIR/kube-scheduler.kubeconfig" --argjson tls "$tls" \
        --arg ca "$pki/ca.crt" --arg cert "$pki/dralloc-client.crt" --arg key "$pki/dralloc-client.key" \
        '.clientConnection.kubeconfig = $kc | .extenders |= map(.urlPrefix = $url
           | if $tls == 1 then .enableHTTPS = true | .tlsConfig = {caFile: $ca, certFile: $cert, keyFile: $key} else . end)' \
        "$DIR/kube-scheduler-config.shipped.yaml" >"$DIR/kube-scheduler$sfx-config.yaml"
    log "kube-scheduler$sfx on https://127.0.0.1:$sport"
    start "kube-scheduler$sfx" "$BIN/kube-scheduler" --config "$DIR/kube-scheduler$sfx-config.yaml" \
        --authentication-kubeconfig "$DIR/kube-scheduler.kubeconfig" \
        --authorization-kubeconfig "$DIR/kube-scheduler.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$sport" \
        --tls-cert-file "$pki/kube-scheduler-serving.crt" --tls-private-key-file "$pki/kube-scheduler-serving.key"
}

# wait_pair SUFFIX HEALTH_PORT SCHEDULER_PORT: the replica's kube-scheduler healthy, the
# Lease held (by it or the other replica), its dralloc ready
wait_pair() {
    local sfx=$1 hport=$2 sport=$3
    wait_for "kube-scheduler$sfx" "kube-scheduler$sfx /healthz" curl -sfk "https://127.0.0.1:$sport/healthz" ||
        { check_alive "kube-scheduler$sfx"; die "kube-scheduler$sfx not healthy"; }
    wait_for "kube-scheduler$sfx" "the scheduler's Lease dralloc-system/dralloc-scheduler" \
        bash -c "'$KUBECTL' --kubeconfig '$DIR/kubeconfig' get lease -n dralloc-system dralloc-scheduler -o jsonpath='{.spec.holderIdentity}' | grep -q ." ||
        { check_alive "kube-scheduler$sfx"; die "kube-scheduler$sfx: nobody took the Lease"; }
    wait_for "dralloc$sfx" "dralloc$sfx /readyz" curl -sf "http://127.0.0.1:$hport/readyz" ||
        { check_alive "dralloc$sfx"; die "dralloc$sfx not ready (log: $DIR/dralloc$sfx.log)"; }
}

# ---- stop, restart -----------------------------------------------------------------
# stop COMPONENT: TERM, KILL after E2E_STOP_GRACE seconds (30); waits until it is gone.
# (kube-apiserver stops listening at once on TERM but its process may linger until then.)
stop_one() {
    local name=$1 pid deadline
    if alive "$name"; then
        pid=$(cat "$DIR/$name.pid")
        kill -TERM "$pid" 2>/dev/null || true
        deadline=$((SECONDS + ${E2E_STOP_GRACE:-30}))
        while kill -0 "$pid" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; do
            if ((SECONDS >= deadline)); then
                log "$name (pid $pid) still there ${E2E_STOP_GRACE:-30} s after TERM: KILL"
                kill -KILL "$pid" 2>/dev/null || true
                break
            fi
            sleep 0.2
        done
    fi
}

# restart COMPONENT: stop it (if it runs), then its command of DIR/COMPONENT.cmd again,
# its log appended; waits for kube-apiserver's /readyz or dralloc's /readyz
restart() {
    local name=$1
    [[ -f $DIR/$name.cmd ]] || die "no $DIR/$name.cmd: was $name started by cluster.sh up?"
    # shellcheck source=/dev/null
    source "$DIR/env"
    stop_one "$name"
    echo "---- cluster.sh restart $(date -u +%FT%TZ) ----" >>"$DIR/$name.log"
    eval "start $name $(cat "$DIR/$name.cmd")"
    local pki=$DIR/pki
    case $name in
        kube-apiserver)
            wait_for kube-apiserver "kube-apiserver /readyz" curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" \
                --key "$pki/admin.key" "https://127.0.0.1:$APISERVER_PORT/readyz" ||
                { check_alive kube-apiserver; die "kube-apiserver not ready after its restart"; } ;;
        dralloc) wait_for dralloc "dralloc /readyz" curl -sf "http://127.0.0.1:$DRALLOC_HEALTH_PORT/readyz" || die "dralloc not ready" ;;
        dralloc-1) wait_for dralloc-1 "dralloc-1 /readyz" curl -sf "http://127.0.0.1:$DRALLOC_HEALTH_PORT_1/readyz" || die "dralloc-1 not ready" ;;
        *) sleep 1; check_alive "$name" ;;
    esac
    log "restarted $name"
}

# ---- down --------------------------------------------------------------------------
down() {
    local i c pid pids=() names=()
    for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
        c=${COMPONENTS[i]}
        if alive "$c"; then
            pid=$(cat "$DIR/$c.pid")
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid"); names+=("$c")
        fi
        rm -f "$DIR/$c.pid"
    done
    local deadline=$((SECONDS + 20))
    for i in "${!pids[@]}"; do
        while kill -0 "${pids[i]}" 2>/dev/null &&
            [[ $(awk '{print $3}' "/proc/${pids[i]}/stat" 2>/dev/null) != Z ]]; do
            if ((SECONDS >= deadline)); then
                log "${names[i]} (pid ${pids[i]}) ignored TERM: KILL"
                kill -KILL "${pids[i]}" 2>/dev/null || true
                break
            fi
            sleep 0.2
        done
    done
    ((${#names[@]})) && log "stopped ${names[*]}" || log "nothing running in $DIR"
}

(($# >= 2)) || usage
cmd=$1 DIR=$2
shift 2
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
case $cmd in
    up) up "$@" ;;
    down) (($# == 0)) || usage; down ;;
    restart) (($# == 1)) || usage; restart "$1" ;;
    stop) (($# == 1)) || usage; stop_one "$1"; log "stopped $1" ;;
    *) usage ;;
esac
