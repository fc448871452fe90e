#!/usr/bin/env bash
# End-to-end scenarios on a real Kubernetes v1.37.2 control plane with dralloc deployed
# as deploy/ says (tests/e2e/README.md). `make e2e` runs it after `make e2e-build
# release`. Each cluster is started in a temporary directory by cluster.sh and stopped
# at the end; its logs stay there when a scenario failed (the path is printed).
#
#   tests/e2e/run.sh [SCENARIO...]      default: every scenario
#   E2E_CLUSTER=DIR tests/e2e/run.sh smoke   on a cluster already up (cluster.sh up DIR),
#                                       only the scenarios of its mode; left running
#   E2E_KEEP=1                          keep the cluster's directory (logs) after a pass
#
# The last line is always `N passed, M failed`; the exit status is 0 when M is 0.
#
# Adding a scenario: write a function scenario_NAME that returns non-zero (or calls
# fail) on failure, and list NAME in ADVISOR_SCENARIOS, TLS_SCENARIOS or BIND_SCENARIOS below. It
# runs in a subshell with KUBECONFIG, the ports of $CLUSTER/env and a fresh namespace
# $NS; every wait is bounded (E2E_WAIT, default 60s).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER_SH=$HERE/cluster.sh
WAIT=${E2E_WAIT:-60}s

# advisor: 2 nodes, as deploy/advisor ships (watch_cut last: it restarts kube-apiserver)
ADVISOR_SCENARIOS=(smoke shared_claim kubeadm_recipe watch_cut)
# tls: advisor, 2 nodes, dralloc over mTLS (cluster.sh --tls)
TLS_SCENARIOS=(cert_rotation)
# bind: 4 nodes, the Deployment's two replicas (cluster.sh --replicas 2; failover last:
# it kills the leading replica)
BIND_SCENARIOS=(smoke_bind apf unschedulable_event template_gate slice_wake bind_scarcity two_schedulers failover)
# preempt: bind, 4 nodes, two replicas, dralloc with --preemption=evict (deploy/bind
# ships it off; E2E_DRALLOC_ARGS adds it): its own cluster, as it kills the leader
PREEMPT_SCENARIOS=(preempt)

PASSED=0 FAILED=0 FAILED_NAMES=()
NOTES_DIR=$(mktemp -d /tmp/dralloc-e2e-notes.XXXXXX)
CLUSTER=

k() { "$KUBECTL" "$@"; }
# fail MSG: print MSG now, and keep it (E2E_FAIL_NOTES, one file per scenario) so that
# the run's last lines name every failure's reason: CI shows a run's tail, and a
# scenario's debug dump (events, logs) would otherwise push the reason out of it
fail() {
    echo "    FAIL: $*" >&2
    [[ -n ${E2E_FAIL_NOTES:-} ]] && echo "$*" >>"$E2E_FAIL_NOTES"
    return 1
}

# ---- scenarios -----------------------------------------------------------------------

# A pod with a claim from a ResourceClaimTemplate, scheduled by the dralloc-scheduler
# profile: only node-0 has devices, so the pod must land there with one of its two
# devices allocated and reserved for it, dralloc's extender must have been asked, and
# the pod's deletion must complete (fake-kubelet).
scenario_smoke() { smoke template; }

# Bind mode: the profile has no DynamicResources plugin, so dralloc's /bind allocates
# the claim, writes its status and binds the pod. The claim is made before the pod
# (resourceClaimName): the plugin's PreEnqueue gate, which holds a pod until the claim
# of its template exists, is off in this profile (README: a pod tried before the
# resourceclaim controller made its claim can be parked for minutes).
scenario_smoke_bind() { smoke claim; }

smoke() { # template|claim
    local filters_before binds_before claim_src
    filters_before=$(extender_requests filter)
    binds_before=$(extender_requests bind)
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: e2e-smoke-gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.e2e.dralloc.dev"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-0-gpu.e2e.dralloc.dev
spec:
  driver: gpu.e2e.dralloc.dev
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: e2e}
  - name: gpu-1
    attributes:
      model: {string: e2e}
EOF
    if [[ $1 == template ]]; then
        k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
  namespace: $NS
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: e2e-smoke-gpu
EOF
        claim_src="resourceClaimTemplateName: one-gpu"
    else
        k apply -f - >/dev/null <<EOF || return 1
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: one-gpu
  namespace: $NS
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: e2e-smoke-gpu
EOF
        claim_src="resourceClaimName: one-gpu"
        dralloc_has ResourceClaim 1 || return 1
    fi
    # the pod only once dralloc's cache holds the devices (its watch is not the
    # scheduler's: a filter answered before it saw the slice would reject node-0)
    dralloc_has DeviceClass 1 && dralloc_has ResourceSlice 1 || return 1
    k apply -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Pod
metadata:
  name: smoke
  namespace: $NS
spec:
  schedulerName: $SCHEDULER_NAME
  resourceClaims:
  - name: gpu
    $claim_src
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      claims:
      - name: gpu
EOF
    k wait -n "$NS" pod/smoke --for=jsonpath='{.spec.nodeName}'=node-0 --timeout="$WAIT" >/dev/null ||
        { k get pod -n "$NS" smoke -o yaml >&2; k get events -n "$NS" >&2; fail "pod not scheduled on node-0"; return 1; }
    local claim=one-gpu
    if [[ $1 == template ]]; then
        claim=$(k get pod -n "$NS" smoke -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
        [[ -n $claim ]] || { fail "the resourceclaim controller made no claim for the pod"; return 1; }
    fi
    k wait -n "$NS" "resourceclaim/$claim" --for=jsonpath='{.status.allocation.devices.results[0].pool}'=node-0 \
        --timeout="$WAIT" >/dev/null ||
        { k get resourceclaim -n "$NS" "$claim" -o yaml >&2; fail "claim $claim not allocated"; return 1; }
    local dev reserved
    dev=$(k get resourceclaim -n "$NS" "$claim" -o jsonpath='{.status.allocation.devices.results[0].device}')
    [[ $dev == gpu-0 || $dev == gpu-1 ]] || { fail "claim $claim allocated device '$dev'"; return 1; }
    reserved=$(k get resourceclaim -n "$NS" "$claim" -o jsonpath='{.status.reservedFor[0].name}')
    [[ $reserved == smoke ]] || { fail "claim $claim reserved for '$reserved', not the pod"; return 1; }
    k wait -n "$NS" pod/smoke --for=jsonpath='{.status.phase}'=Running --timeout="$WAIT" >/dev/null ||
        { fail "fake-kubelet did not report the pod Running"; return 1; }
    local filters_after binds_after
    filters_after=$(extender_requests filter)
    binds_after=$(extender_requests bind)
    ((filters_after > filters_before)) ||
        { fail "dralloc's /filter was not called ($filters_before -> $filters_after requests)"; return 1; }
    if [[ $MODE == bind ]]; then
        ((binds_after > binds_before)) ||
            { fail "bind mode: dralloc's /bind was not called ($binds_before -> $binds_after requests)"; return 1; }
    fi
    echo "    pod on node-0, claim $claim: $dev; dralloc /filter $filters_before -> $filters_after, /bind $binds_before -> $binds_after"
    # deletion through the fake kubelet (grace period honoured, then removed)
    k delete -n "$NS" pod/smoke --wait=true --timeout="$WAIT" >/dev/null ||
        { fail "pod deletion did not finish"; return 1; }
    k delete deviceclass e2e-smoke-gpu >/dev/null
    k delete resourceslice node-0-gpu.e2e.dralloc.dev >/dev/null
}

# dralloc_get PATH [PORT]: GET on dralloc's main listener (PORT: DRALLOC_PORT), over
# HTTPS with kube-scheduler's client certificate when the cluster's dralloc serves TLS
dralloc_get() {
    local port=${2:-$DRALLOC_PORT}
    if [[ ${TLS:-0} == 1 ]]; then
        curl -sf --cacert "$DRALLOC_CACERT" --cert "$DRALLOC_CLIENT_CERT" --key "$DRALLOC_CLIENT_KEY" "https://127.0.0.1:$port$1"
    else
        curl -sf "http://127.0.0.1:$port$1"
    fi
}

# dralloc_has KIND N: wait until dralloc's cache holds at least N objects of KIND
dralloc_has() {
    local deadline=$((SECONDS + ${WAIT%s})) n
    while :; do
        n=$(dralloc_get /debug/cache | jq -r --arg k "$1" '.objects[$k] // 0')
        [[ $n =~ ^[0-9]+$ ]] && ((n >= $2)) && return 0
        ((SECONDS >= deadline)) && { fail "dralloc's cache has ${n:-?} $1 objects, want >= $2"; return 1; }
        sleep 0.2
    done
}

# dralloc's count of extender requests of one verb, from its /metrics (0 if none);
# HEALTH_PORT: DRALLOC_HEALTH_PORT
extender_requests() {
    curl -sf "http://127.0.0.1:${2:-$DRALLOC_HEALTH_PORT}/metrics" |
        awk -v verb="$1" '$1 ~ /^dralloc_.*requests_total/ && $0 ~ "\"/?" verb "\"" { n += $NF } END { printf "%d\n", n }'
}

# the scenarios of tests/e2e/scenarios/ (each file defines scenario_NAME functions)
for f in "$HERE"/scenarios/*.sh; do
    # shellcheck source=/dev/null
    source "$f"
done

# ---- runner ------------------------------------------------------------------------

cluster_up() { # MODE NODES FLAGS
    local tls=0
    [[ " $3 " == *" --tls "* ]] && tls=1
    if [[ -n ${E2E_CLUSTER:-} ]]; then
        # a cluster already up (cluster.sh up DIR): used as it is, left running
        grep -qx "MODE=$1" "$E2E_CLUSTER/env" || return 2
        [[ $(sed -n 's/^TLS=//p' "$E2E_CLUSTER/env") == "$tls" ]] || return 2
        CLUSTER=$E2E_CLUSTER
        return 0
    fi
    CLUSTER=$(mktemp -d "${TMPDIR:-/tmp}/dralloc-e2e.XXXXXX")
    local t0=$SECONDS
    # shellcheck disable=SC2086
    if ! "$CLUSTER_SH" up "$CLUSTER" --mode "$1" --nodes "$2" $3; then
        echo "cluster ($1, $2 nodes $3) did not come up: logs in $CLUSTER" >&2
        "$CLUSTER_SH" down "$CLUSTER" || true
        CLUSTER=
        return 1
    fi
    echo "cluster: $1 mode, $2 nodes${3:+ ($3)}, up in $((SECONDS - t0))s ($CLUSTER)"
}

cluster_down() {
    [[ -n $CLUSTER ]] || return 0
    [[ $CLUSTER == "${E2E_CLUSTER:-}" ]] && { CLUSTER=; return 0; }
    "$CLUSTER_SH" down "$CLUSTER" || true
    if ((FAILED == 0)) && [[ -z ${E2E_KEEP:-} ]]; then rm -rf "$CLUSTER"; else echo "logs kept in $CLUSTER"; fi
    CLUSTER=
}
trap 'cluster_down' EXIT
trap 'exit 130' INT TERM

run_scenarios() { # MODE NODES FLAGS NAME...
    local mode=$1 nodes=$2 flags=$3 name
    shift 3
    (($#)) || return 0
    cluster_up "$mode" "$nodes" "$flags"
    case $? in
        0) ;;
        2) echo "skipped (E2E_CLUSTER is not in $mode mode${flags:+ with $flags}): $*"; return ;;
        *)
        for name; do echo "FAIL $name (no cluster)"; FAILED=$((FAILED + 1)); FAILED_NAMES+=("$name"); done
        return ;;
    esac
    for name; do
        local t0=$SECONDS ns="e2e-${name//_/-}-$RANDOM"
        (
            set -a; source "$CLUSTER/env"; set +a
            export NS=$ns E2E_FAIL_NOTES=$NOTES_DIR/$name
            k create namespace "$NS" >/dev/null || exit 1
            "scenario_$name"
        )
        if (($? == 0)); then
            echo "PASS $name ($((SECONDS - t0))s)"; PASSED=$((PASSED + 1))
        else
            echo "FAIL $name ($((SECONDS - t0))s)"; FAILED=$((FAILED + 1)); FAILED_NAMES+=("$name")
        fi
    done
    cluster_down
}

wanted() { # NAME: on the command line, or no names given
    local n
    ((${#ARGS[@]} == 0)) && return 0
    for n in "${ARGS[@]}"; do [[ $n == "$1" ]] && return 0; done
    return 1
}

ARGS=("$@")
for n in "${ARGS[@]}"; do
    declare -F "scenario_$n" >/dev/null || { echo "run.sh: no scenario $n" >&2; echo "0 passed, 1 failed"; exit 2; }
done
sel_advisor=() sel_tls=() sel_bind=() sel_preempt=()
for n in "${ADVISOR_SCENARIOS[@]}"; do wanted "$n" && sel_advisor+=("$n"); done
for n in "${TLS_SCENARIOS[@]}"; do wanted "$n" && sel_tls+=("$n"); done
for n in "${BIND_SCENARIOS[@]}"; do wanted "$n" && sel_bind+=("$n"); done
for n in "${PREEMPT_SCENARIOS[@]}"; do wanted "$n" && sel_preempt+=("$n"); done
run_scenarios advisor 2 "" "${sel_advisor[@]}"
run_scenarios advisor 2 "--tls" "${sel_tls[@]}"
run_scenarios bind 4 "--replicas 2" "${sel_bind[@]}"   # bind_scarcity: 4 nodes
E2E_DRALLOC_ARGS_SAVED=${E2E_DRALLOC_ARGS:-}
export E2E_DRALLOC_ARGS="$E2E_DRALLOC_ARGS_SAVED --preemption=evict --preemption-hold=60s"
run_scenarios bind 4 "--replicas 2" "${sel_preempt[@]}"
export E2E_DRALLOC_ARGS=$E2E_DRALLOC_ARGS_SAVED
if ((FAILED)); then
    for n in "${FAILED_NAMES[@]}"; do
        if [[ -s $NOTES_DIR/$n ]]; then
            echo "failed: $n: $(tr '\n' ' ' <"$NOTES_DIR/$n" | cut -c1-1500)"
        else
            echo "failed: $n"
        fi
    done
fi
rm -rf "$NOTES_DIR"
echo "$PASSED passed, $FAILED failed"
((FAILED == 0))
