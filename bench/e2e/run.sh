#!/usr/bin/env bash
# bench/e2e/run.sh — `dralloc bench e2e` (issue #39, item 4): one DRA workload scheduled
# twice on a real v1.37.2 control plane (tests/e2e/cluster.sh), same run:
#   (a) in-tree:  kube-scheduler, plain KubeSchedulerConfiguration (default profile, so
#                 the DynamicResources plugin allocates), on an advisor-mode cluster whose
#                 dralloc and dralloc-scheduler are stopped first
#   (b) dralloc:  the bind-mode cluster as cluster.sh brings it up (deploy/bind's profile:
#                 DynamicResources off, dralloc filters, scores, allocates and binds)
# Workload: scheduler_perf's SchedulingWithResourceClaimTemplate/5000pods_500nodes objects
# (dra/templates), scaled (see --nodes/--pods). Last line:
#   e2e 5000pods_500nodes: in-tree X pods/s, dralloc Y pods/s (Y/X = R)
#
#   bench/e2e/run.sh [--nodes N] [--devices D] [--pods P] [--shape basic|match|mig] [--qps Q]
#                    [--only intree|dralloc] [--keep]
#
# Both sides get the same client rate limits, as scheduler_perf gives its components
# (util.go: QPS 5000, burst 5000): kube-scheduler's clientConnection qps/burst = Q/2Q and
# kube-controller-manager (its resourceclaim controller makes the claims from the
# template) restarted with --kube-api-qps Q --kube-api-burst 2Q; otherwise the default 50
# and 20 QPS would be what is measured. In (b) kube-scheduler is restarted with the
# shipped configuration plus those two fields and leaderElect false (no lease wait).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${E2E_BIN:-$ROOT/build-upstream/bin}
CLUSTER=$ROOT/tests/e2e/cluster.sh
NODES=${BENCH_E2E_NODES:-500}
DEVICES=${BENCH_E2E_DEVICES:-10}
PODS=${BENCH_E2E_PODS:-5000}
SHAPE=${BENCH_E2E_SHAPE:-basic}
QPS=${BENCH_E2E_QPS:-1000}
ONLY=
KEEP=${BENCH_E2E_KEEP:-}
TIMEOUT=${BENCH_E2E_TIMEOUT:-1200s}
while (($#)); do
    case $1 in
        --nodes) NODES=$2; shift 2 ;;
        --devices) DEVICES=$2; shift 2 ;;
        --pods) PODS=$2; shift 2 ;;
        --shape) SHAPE=$2; shift 2 ;;
        --qps) QPS=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        *) echo "usage: $0 [--nodes N] [--devices D] [--pods P] [--shape basic|match|mig] [--qps Q] [--only intree|dralloc] [--keep] [--timeout 600s]" >&2; exit 2 ;;
    esac
done
case $SHAPE in
    basic) NAME=5000pods_500nodes; SLICES=$NODES ;;
    match) NAME=match_empty_500nodes; SLICES=$NODES ;;
    mig) NAME=mig_5000nodes; SLICES=$((NODES * (1 + (19 * DEVICES + 63) / 64))) ;; # --devices = GPUs a node
    *) echo "--shape: basic, match or mig" >&2; exit 2 ;;
esac

log() { echo "bench-e2e: $*" >&2; }
WORK=$(mktemp -d /tmp/bench-e2e.XXXXXX)
log "work directory $WORK"

# the load generator (a Go module of its own: bench/e2e, client-go v0.37.2)
(cd "$HERE" && GOFLAGS=-mod=mod go build -trimpath -o "$WORK/benche2e" .) || { log "building bench/e2e failed"; exit 1; }
LOAD=$WORK/benche2e

# stop PIDFILE's process (one we started), TERM then KILL
stop_pid() {
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

# restart DIR's kube-controller-manager with the raised client rate limits
kcm_qps() {
    local dir=$1 pid args=()
    pid=$(cat "$dir/kube-controller-manager.pid")
    mapfile -d '' args <"/proc/$pid/cmdline"
    stop_pid "$dir/kube-controller-manager.pid"
    "${args[@]}" --kube-api-qps "$QPS" --kube-api-burst $((2 * QPS)) </dev/null >>"$dir/kube-controller-manager.log" 2>&1 &
    echo $! >"$dir/kube-controller-manager.pid"
}

# start a kube-scheduler with CONFIG in DIR, pid in DIR/kube-scheduler.pid; wait /healthz
start_scheduler() {
    local dir=$1 config=$2 kubeconfig=$3 port=$4
    "$BIN/kube-scheduler" --config "$config" \
        --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$port" \
        --tls-cert-file "$dir/pki/kube-scheduler-serving.crt" --tls-private-key-file "$dir/pki/kube-scheduler-serving.key" \
        </dev/null >>"$dir/kube-scheduler.log" 2>&1 &
    echo $! >"$dir/kube-scheduler.pid"
    for _ in $(seq 180); do
        curl -sfk "https://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
        kill -0 "$(cat "$dir/kube-scheduler.pid")" 2>/dev/null || { tail -20 "$dir/kube-scheduler.log" >&2; return 1; }
        sleep 0.5
    done
    return 1
}

# column SIDE: bring up a cluster, set up the objects, run the pods; result in $WORK/SIDE.json
column() {
    local side=$1 dir=$WORK/$1 mode sched
    if [[ $side == intree ]]; then mode=advisor; sched=default-scheduler; else mode=bind; sched=dralloc-scheduler; fi
    log "($side) cluster.sh up --mode $mode --nodes $NODES"
    "$CLUSTER" up "$dir" --mode "$mode" --nodes "$NODES" 2>"$WORK/$side-up.log" || { cat "$WORK/$side-up.log" >&2; return 1; }
    # shellcheck disable=SC1091
    source "$dir/env"
    kcm_qps "$dir"
    local pki=$dir/pki
    if [[ $side == intree ]]; then
        # the in-tree side: no dralloc, and kube-scheduler with its default profile
        stop_pid "$dir/kube-scheduler.pid"
        stop_pid "$dir/dralloc.pid"
        cat >"$dir/intree-scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $dir/kube-scheduler-cert.kubeconfig
  qps: $QPS
  burst: $((2 * QPS))
leaderElection:
  leaderElect: false
EOF
        start_scheduler "$dir" "$dir/intree-scheduler.yaml" "$dir/kube-scheduler-cert.kubeconfig" "$SCHEDULER_PORT" ||
            { log "in-tree kube-scheduler did not start"; return 1; }
    else
        stop_pid "$dir/kube-scheduler.pid"
        yq -y --argjson q "$QPS" '.clientConnection.qps = $q | .clientConnection.burst = (2 * $q) | .leaderElection.leaderElect = false' \
            "$dir/kube-scheduler-config.yaml" >"$dir/kube-scheduler-config.bench.yaml"
        start_scheduler "$dir" "$dir/kube-scheduler-config.bench.yaml" "$dir/kube-scheduler.kubeconfig" "$SCHEDULER_PORT" ||
            { log "kube-scheduler (bind) did not start"; return 1; }
    fi
    # (set -e does not apply here: column runs on the left of ||)
    "$LOAD" setup --kubeconfig "$dir/kubeconfig" --nodes "$NODES" --devices "$DEVICES" --shape "$SHAPE" --ns test >&2 ||
        { log "($side) setup failed"; "$CLUSTER" down "$dir" 2>/dev/null; return 1; }
    local pids="apiserver=$(cat "$dir/kube-apiserver.pid"),etcd=$(cat "$dir/etcd.pid"),kcm=$(cat "$dir/kube-controller-manager.pid"),scheduler=$(cat "$dir/kube-scheduler.pid"),fake-kubelet=$(cat "$dir/fake-kubelet.pid")"
    local dm=
    if [[ $side == dralloc ]]; then
        pids+=",dralloc=$(cat "$dir/dralloc.pid")"
        dm=http://127.0.0.1:$DRALLOC_HEALTH_PORT/metrics
        # dralloc has seen every slice before the first pod
        for _ in $(seq 120); do
            n=$(curl -s "$dm" | grep '^dralloc_snapshot_objects{kind="ResourceSlice"}' | awk '{print $2}')
            [[ ${n:-0} -ge $SLICES ]] && break
            sleep 0.5
        done
    fi
    sleep 2 # the scheduler's informers have the slices too
    log "($side) $PODS pods, schedulerName $sched"
    "$LOAD" run --kubeconfig "$dir/kubeconfig" --ns test --pods "$PODS" --scheduler "$sched" --qps "$QPS" \
        --timeout "$TIMEOUT" --out "$WORK/$side.json" --pids "$pids" \
        --sched-metrics "https://127.0.0.1:$SCHEDULER_PORT/metrics" --dralloc-metrics "$dm" \
        --tls-cert "$pki/admin.crt" --tls-key "$pki/admin.key" | sed "s/^$sched:/($side)/" | tee "$WORK/$side.txt"
    local rc=${PIPESTATUS[0]}
    # bind mode's own account (extender/bind.h): outcomes and where a bind's time went
    [[ -n $dm ]] && curl -s "$dm" | grep -E '^dralloc_(binds_total|bind_phase_seconds_total|bind_conflicts_total|bind_claim_gets_total)' |
        sed "s/^/($side) /" | tee -a "$WORK/$side.txt"
    "$CLUSTER" down "$dir" 2>/dev/null || true
    return "$rc"
}

log "$(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
case $SHAPE in
    basic) UP='500 nodes x 10 devices, 2500 init claims + 2500 measured pods'; REQ='1 request' ;;
    match) UP='500 nodes x 10 devices, no init claims, steady state of 10 pods'; REQ='5 requests, matchAttribute pciRoot' ;;
    mig) UP="dralloc's own shape (bench/README.md), 5000 nodes x 8 GPUs x 19 partitions, 5000 pods"; REQ='1 request for a 1g.5gb MIG partition, counters' ;;
esac
echo "e2e scale: $NODES nodes x $DEVICES $([[ $SHAPE == mig ]] && echo 'GPUs (19 partitionable devices each)' || echo devices) (ResourceSlices), no init claims, $PODS pods each with a claim from a ResourceClaimTemplate ($SHAPE: $REQ), client QPS $QPS; upstream $NAME: $UP"
rc=0
[[ $ONLY == dralloc ]] || column intree || rc=$?
[[ $ONLY == intree ]] || column dralloc || rc=$?
pps() { python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["podsPerSecond"])' "$1" 2>/dev/null || echo 0; }
X=$(pps "$WORK/intree.json"); Y=$(pps "$WORK/dralloc.json")
R=$(python3 -c "import sys; x,y=float(sys.argv[1]),float(sys.argv[2]); print('%.2f' % (y/x) if x else 'n/a')" "$X" "$Y")
if [[ -z $KEEP && $rc == 0 ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi
echo "e2e $NAME: in-tree $X pods/s, dralloc $Y pods/s (Y/X = $R)"
exit "$rc"
