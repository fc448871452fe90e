#!/usr/bin/env bash
# soak.sh — `dralloc serve` under ten minutes of mixed HTTP load: does its memory stay
# flat, and does it keep answering?
#
#   bench/soak.sh [--duration 10m] [--warmup 60s] [--nodes 300] [--bin build-release/dralloc]
#
# A generated cluster (NODES nodes × 8 GPUs, half of the even nodes' GPUs in use, three
# claim templates) is served by `dralloc serve --conn-timeout 2s --request-timeout 5s`
# on a free loopback port, and hit at once by
#   - kube-scheduler traffic (one curl --parallel per round, 4 at a time, keep-alive):
#     /filter with NodeNames (100 nodes: a pod fitting everywhere, one fitting on half,
#     one fitting nowhere, a pod without claims) and with a NodeList (50 full Node objects,
#     nodeCacheCapable: false), /prioritize;
#   - probes and scrapes: /healthz, /readyz, /metrics, /debug/cache, the status page;
#   - snapshot swaps: POST /objects of an allocated claim, then DELETE, in a loop;
#   - hostile bodies: truncated JSON, 100,000-deep nesting, invalid UTF-8, 100,000 node
#     names, a 17 MiB body;
#   - 16 slow clients at any time (bash /dev/tcp): headers or a body a byte every 0.5 s,
#     a body that stops, 300 pipelined GETs never read; each is cut by the server and
#     replaced.
# The server's VmRSS is sampled every 5 s. At the end it prints the request counts by
# answer, RSS at start, after the warm-up, at the end and at most, and the drift after
# the warm-up: the median of the last minute's samples against the median of the minute
# after the warm-up. Medians, because a sample can land on a 17 MiB body in flight (+50 %
# of a 30 MiB server for a moment) while growth moves every sample; the mean of three
# end samples failed a run whose RSS went 28.8, 28.9, 28.3, 28.2, 30.9, 28.5, 29.4, 28.9,
# 28.9 MiB minute by minute and 32.8 at the end. Exit 1 when the drift is over 10 %, a
# normal request was not answered 200, a hostile one not 4xx, or the server died or did
# not exit 0 on SIGTERM.
set -euo pipefail

duration=600 warmup= nodes=300 bin=
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build-release/dralloc

secs() {   # 90, 90s, 10m, 1h → seconds
    case $1 in
    *h) echo $((${1%h} * 3600)) ;; *m) echo $((${1%m} * 60)) ;; *s) echo "${1%s}" ;; *) echo "$1" ;;
    esac
}
while [ $# -gt 0 ]; do
    case $1 in
    --duration) duration=$(secs "$2"); shift 2 ;;
    --warmup) warmup=$(secs "$2"); shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$warmup" ] || warmup=$((duration / 10 < 60 ? duration / 5 : 60))
[ -x "$bin" ] || { echo "soak.sh: $bin not found (make release)" >&2; exit 2; }
command -v curl >/dev/null || { echo "soak.sh: needs curl" >&2; exit 2; }

work=$(mktemp -d /tmp/dralloc-soak-XXXXXX)
pid=
cleanup() {
    touch "$work/stop"
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    jobs -p | xargs -r kill 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# ---- the cluster ------------------------------------------------------------------------
node() { printf 'node-%03d' "$1"; }
{
    printf '{"apiVersion":"v1","kind":"List","items":[\n'
    printf '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.example.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == '"'"'gpu.example.com'"'"' && device.attributes['"'"'gpu.example.com'"'"'].type == '"'"'gpu'"'"'"}}]}}'
    for t in one-gpu:1 four-gpus:4 sixteen-gpus:16; do
        printf ',\n{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"%s","namespace":"soak"},"spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com","allocationMode":"ExactCount","count":%s}}]}}}}' "${t%:*}" "${t#*:}"
    done
    for ((i = 0; i < nodes; i++)); do
        n=$(node $i)
        printf ',\n{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"kubernetes.io/hostname":"%s","kubernetes.io/os":"linux"}},"status":{"allocatable":{"cpu":"95","memory":"1040Gi","pods":"110"},"capacity":{"cpu":"96","memory":"1056Gi","pods":"110"}}}' "$n" "$n"
        printf ',\n{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"%s-gpu"},"spec":{"driver":"gpu.example.com","nodeName":"%s","pool":{"name":"%s","generation":1,"resourceSliceCount":1},"devices":[' "$n" "$n" "$n"
        for ((d = 0; d < 8; d++)); do
            printf '%s{"name":"gpu-%d","attributes":{"type":{"string":"gpu"},"index":{"int":%d},"productName":{"string":"NVIDIA H100 80GB HBM3"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:%d0"}},"capacity":{"memory":{"value":"80Gi"}}}' \
                "$([ $d = 0 ] || echo ,)" $d $d $((d / 2 + 1))
        done
        printf ']}}'
        if ((i % 2 == 0)); then   # half of the even nodes' GPUs in use
            printf ',\n{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"%s-used","namespace":"soak"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com","allocationMode":"ExactCount","count":4}}]}},"status":{"allocation":{"devices":{"results":[' "$n"
            for d in 0 1 2 3; do
                printf '%s{"request":"gpu","driver":"gpu.example.com","pool":"%s","device":"gpu-%d"}' "$([ $d = 0 ] || echo ,)" "$n" $d
            done
            printf ']},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["%s"]}]}]}}}}' "$n"
        fi
    done
    printf '\n]}\n'
} >"$work/cluster.json"

# ---- request bodies ---------------------------------------------------------------------
pod() {   # NAME TEMPLATE (empty: no claims)
    if [ -n "$2" ]; then
        printf '{"metadata":{"name":"%s","namespace":"soak","uid":"uid-%s"},"spec":{"containers":[{"name":"main","image":"x","resources":{"claims":[{"name":"gpus"}]}}],"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"%s"}]},"status":{"resourceClaimStatuses":[{"name":"gpus","resourceClaimName":"%s-gpus"}]}}' "$1" "$1" "$2" "$1"
    else
        printf '{"metadata":{"name":"%s","namespace":"soak","uid":"uid-%s"},"spec":{"containers":[{"name":"main","image":"x"}]}}' "$1" "$1"
    fi
}
names() {   # the first N node names as a JSON array
    local i s=
    for ((i = 0; i < $1 && i < nodes; i++)); do s+="${s:+,}\"$(node $i)\""; done
    printf '[%s]' "$s"
}
items() {
    local i s=
    for ((i = 0; i < $1 && i < nodes; i++)); do
        s+="${s:+,}{\"metadata\":{\"name\":\"$(node $i)\",\"labels\":{\"kubernetes.io/hostname\":\"$(node $i)\"}},\"status\":{\"allocatable\":{\"cpu\":\"95\",\"memory\":\"1040Gi\",\"pods\":\"110\"},\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}}}}"
    done
    printf '{"metadata":{},"items":[%s]}' "$s"
}
b=$work/body
mkdir -p "$b"
printf '{"Pod":%s,"Nodes":null,"NodeNames":%s}' "$(pod fit-one one-gpu)" "$(names 100)" >"$b/fit.json"
printf '{"Pod":%s,"Nodes":null,"NodeNames":%s}' "$(pod fit-half four-gpus)" "$(names 100)" >"$b/half.json"
printf '{"Pod":%s,"Nodes":null,"NodeNames":%s}' "$(pod fit-none sixteen-gpus)" "$(names 100)" >"$b/none.json"
printf '{"Pod":%s,"Nodes":null,"NodeNames":%s}' "$(pod no-claims '')" "$(names 100)" >"$b/noclaims.json"
printf '{"Pod":%s,"Nodes":%s,"NodeNames":null}' "$(pod list-half four-gpus)" "$(items 50)" >"$b/nodelist.json"
cp "$b/fit.json" "$b/prioritize.json"
printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"churn","namespace":"soak"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com","allocationMode":"ExactCount","count":1}}]}},"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node-001","device":"gpu-7"}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-001"]}]}]}}}}' >"$b/claim.json"
head -c $(($(wc -c <"$b/fit.json") / 2)) "$b/fit.json" >"$b/truncated.json"
{ printf '%.0s[' $(seq 100000); printf '%.0s]' $(seq 100000); } >"$b/deep.json"
printf '{"Pod":{},"NodeNames":["n\xC0\xAF"]}' >"$b/utf8.json"
{ printf '{"Pod":%s,"NodeNames":[' "$(pod many one-gpu)"; seq -f '"node-%06g"' -s, 100000 | tr -d '\n'; printf ']}'; } >"$b/names.json"
{ printf '{'; head -c $((17 << 20)) /dev/zero | tr '\0' ' '; printf '}'; } >"$b/huge.json"

# ---- the server -------------------------------------------------------------------------
"$bin" serve --snapshot "$work/cluster.json" --listen 127.0.0.1:0 --threads 2 --conn-timeout 2s \
    --request-timeout 5s 2>"$work/serve.log" &
pid=$!
port=
for _ in $(seq 600); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/serve.log")
    [ -n "$port" ] && break
    kill -0 $pid 2>/dev/null || { cat "$work/serve.log"; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "soak.sh: the server did not start" >&2; cat "$work/serve.log"; exit 1; }
url=http://127.0.0.1:$port
rss() { awk '/^VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0; }
echo "soak: $nodes nodes, $(wc -c <"$work/cluster.json") bytes of objects; dralloc serve pid $pid on $url;" \
    "${duration}s, warm-up ${warmup}s"
running() { [ ! -e "$work/stop" ]; }
mkfifo "$work/never"
exec 9<>"$work/never"
nap() { read -r -t "$1" -u 9 _ || true; }   # sleep without a fork: nothing writes the fifo

# ---- the load ---------------------------------------------------------------------------
# every curl line: CLASS CODE; CLASS says what was expected (ok: 200, bad: 4xx)
cfg=$work/sched.cfg
for r in $(seq 10); do
    for f in filter:fit filter:half filter:none filter:noclaims filter:nodelist prioritize:prioritize; do
        # one block per request, "next" between them (not after the last: an empty block
        # makes curl abort the others)
        [ "$r$f" = 1filter:fit ] || printf 'next\n'
        printf 'url = "%s/%s"\ndata-binary = "@%s/%s.json"\nheader = "Content-Type: application/json"\noutput = "/dev/null"\nwrite-out = "ok %%{http_code}\\n"\n' \
            "$url" "${f%:*}" "$b" "${f#*:}"
    done
done >"$cfg"
sched() {
    while running; do curl -s --no-progress-meter --parallel --parallel-max 4 -K "$cfg" >>"$work/codes.sched$1" || true; done
}
probes() {
    while running; do
        curl -s -w 'ok %{http_code}\n' -o /dev/null "$url/healthz" -o /dev/null "$url/readyz" -o /dev/null \
            "$url/metrics" -o /dev/null "$url/debug/cache" -o /dev/null "$url/" >>"$work/codes.probes" || true
        nap 0.2
    done
}
swaps() {
    while running; do
        curl -s -w 'ok %{http_code}\n' -o /dev/null --data-binary "@$b/claim.json" "$url/objects" >>"$work/codes.swaps" || true
        curl -s -w 'ok %{http_code}\n' -o /dev/null -X DELETE "$url/objects/ResourceClaim/soak/churn" >>"$work/codes.swaps" || true
        nap 0.1
    done
}
hostile() {
    local i=0
    while running; do
        for f in truncated deep utf8 names; do
            curl -s -w 'bad %{http_code}\n' -o /dev/null --data-binary "@$b/$f.json" "$url/filter" >>"$work/codes.hostile" || true
        done
        if ((i++ % 10 == 0)); then
            curl -s -w 'bad %{http_code}\n' -o /dev/null --data-binary "@$b/huge.json" "$url/filter" >>"$work/codes.hostile" || true
        fi
        nap 0.5
    done
}
slow_one() {   # KIND: one slow client, until the server cuts it
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 0
    case $1 in
    headers) printf 'POST /filter HTTP/1.1\r\nHost: soak\r\nX-Slow: ' >&3 ;;
    body | stall) printf 'POST /filter HTTP/1.1\r\nHost: soak\r\nContent-Length: 100000\r\n\r\n{' >&3 ;;
    reader) for _ in $(seq 300); do printf 'GET /metrics HTTP/1.1\r\nHost: soak\r\n\r\n'; done >&3 ;;
    esac
    local line rc
    for _ in $(seq 60); do   # at most 30 s (the server's limits are 2 s idle, 5 s per request)
        case $1 in
        headers | body)   # a byte, then wait 0.5 s for the server's 408 or the end of the stream
            printf a >&3 2>/dev/null || break
            rc=0; read -r -t 0.5 -u 3 line || rc=$? ;;
        stall) rc=0; read -r -t 0.5 -u 3 line || rc=$? ;;
        reader) nap 0.5; rc=0; read -r -N 512 -t 0.05 -u 3 line || rc=$? ;;   # ~1 KB/s
        esac
        ((rc == 0 || rc > 128)) || break   # 1: the end of the stream
    done
    exec 3>&- 3<&-
    echo "$1" >>"$work/slow.$2"
}
slow() {
    local kinds=(headers body stall reader) k=$1
    while running; do slow_one "${kinds[k++ % 4]}" "$1" 2>/dev/null || true; done
}
sampler() {
    local t0=$SECONDS
    while running; do
        echo "$((SECONDS - t0)) $(rss)" >>"$work/rss"
        nap 5
    done
}

echo "0 $(rss)" >"$work/rss.start"
sampler &
sched 1 &
sched 2 &
probes &
swaps &
hostile &
for k in $(seq 16); do slow "$k" & done
t0=$SECONDS
while ((SECONDS - t0 < duration)); do
    sleep 5
    kill -0 $pid 2>/dev/null || { echo "soak.sh: the server died" >&2; tail -20 "$work/serve.log"; exit 1; }
    e=$((SECONDS - t0))
    if ((e % 60 < 5)); then
        printf 'soak: %4ds  RSS %6d KiB  requests %d\n' $e "$(rss)" "$(cat "$work"/codes.* 2>/dev/null | wc -l)"
    fi
done
touch "$work/stop"
end_rss=$(rss)
jobs -p | grep -vx "$pid" | xargs -r kill 2>/dev/null || true
sleep 1
kill -TERM $pid
rc=0
wait $pid || rc=$?
pid=

# ---- figures ----------------------------------------------------------------------------
echo
echo "requests (what was expected, the answer: count):"
cat "$work"/codes.* | sort | uniq -c | awk '{printf "  %-4s %s: %d\n", $2, $3, $1}'
total=$(cat "$work"/codes.* | wc -l)
wrong=$(cat "$work"/codes.* | awk '($1 == "ok" && $2 != 200) || ($1 == "bad" && ($2 < 400 || $2 > 499))' | wc -l)
printf 'slow clients: %s; the server cut %s\n' \
    "$(cat "$work"/slow.* 2>/dev/null | sort | uniq -c | awk '{printf "%s%d %s", (NR > 1 ? ", " : ""), $1, $2}')" \
    "$(awk '/slower than/ { n += $5; h += substr($11, 2); b += $14; r += $19 }
            END { printf "%d late (%d in their headers, %d in their body: 408, %d not reading)", n, h, b, r }' \
        "$work/serve.log")"
start=$(awk '{print $2}' "$work/rss.start")
read -r warm endm max < <(awk -v w="$warmup" '
    function median(lo, hi,    n, i, j, v, a) {   # of r[lo..hi]
        n = 0
        for (i = lo; i <= hi; i++) a[++n] = r[i]
        for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { t[NR] = $1; r[NR] = $2; if ($2 > max) max = $2 }
    $1 >= w && !wi { wi = NR }
    END {
        if (!wi) wi = NR
        for (we = wi; we < NR && t[we + 1] < t[wi] + 60; we++) ;
        for (es = NR; es > 1 && t[es - 1] > t[NR] - 60; es--) ;
        printf "%d %d %d\n", median(wi, we), median(es, NR), max
    }' "$work/rss")
drift=$(awk -v a="$warm" -v b="$endm" 'BEGIN { printf "%+.1f", (b - a) * 100 / a }')
printf '\nRSS (KiB): start %d, after warm-up (%ds, median of a minute) %d, end (median of the last minute) %d, max %d; drift after warm-up %s %%\n' \
    "$start" "$warmup" "$warm" "$endm" "$max" "$drift"
printf 'requests: %d in %ds (%.0f/s), %d not answered as expected; server exit %d\n' \
    "$total" "$duration" "$(awk -v n="$total" -v d="$duration" 'BEGIN { print n / d }')" "$wrong" "$rc"
fail=0
awk -v d="$drift" 'BEGIN { exit !(d > 10) }' && { echo "FAIL: RSS grew more than 10 % after warm-up"; fail=1; }
[ "$wrong" = 0 ] || { echo "FAIL: $wrong requests not answered as expected"; fail=1; }
[ "$rc" = 0 ] || { echo "FAIL: dralloc serve exited $rc"; tail -20 "$work/serve.log"; fail=1; }
[ $fail = 0 ] && echo "PASS"
exit $fail
