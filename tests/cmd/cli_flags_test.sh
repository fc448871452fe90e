#!/usr/bin/env bash
# cli_flags_test.sh — kubectl's flag habits on every subcommand, end to end (CTest; the
# argument is the dralloc binary; cmd/flags.h): a value after "=" or joined to its
# shorthand gives the same output as the value apart, unknown flags and missing values
# are named (exit 2) in each command's words, `--help` answers where it stands, `--`
# makes cel eval's next word the expression.
set -euo pipefail
B=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export SOURCE_DATE_EPOCH=1767225600   # allocate's allocationTimestamp: the same in every run compared
# run OUT ARGS...: stdout to $T/OUT.out, stderr to $T/OUT.err, the exit code echoed
run() { local o=$1; shift; set +e; "$B" "$@" >"$T/$o.out" 2>"$T/$o.err"; echo $?; set -e; }
same() { cmp -s "$T/$1.out" "$T/$2.out" || { diff "$T/$1.out" "$T/$2.out" | head; fail "$1 and $2 differ"; }; }

CL=$ROOT/testdata/why/cluster.yaml
# capacity: -o json, --output=json, -ojson, -o=json; --by=class as --by class
[ "$(run cap1 capacity -f "$CL" -o json)" = 0 ] || fail "capacity -o json: $(cat "$T/cap1.err")"
[ "$(run cap2 capacity --filename="$CL" --output=json)" = 0 ] && same cap1 cap2
[ "$(run cap3 capacity -f "$CL" -ojson)" = 0 ] && same cap1 cap3
[ "$(run cap4 capacity -f="$CL" -o=json)" = 0 ] && same cap1 cap4
[ "$(run cap5 capacity -f "$CL" --by class)" = 0 ] && [ "$(run cap6 capacity -f "$CL" --by=class)" = 0 ] && same cap5 cap6
grep -q 'gpu.example.com' "$T/cap5.out" || fail "capacity --by class: $(cat "$T/cap5.out")"
# why: -n NS and --namespace=NS, -o json and -ojson (exit 1: the pod fits no node)
[ "$(run why1 why trainer -n ml -f "$CL" -o json)" = 1 ] || fail "why: $(cat "$T/why1.err")"
[ "$(run why2 why trainer --namespace=ml --filename="$CL" -ojson)" = 1 ] && same why1 why2
[ "$(run why3 why -f "$CL" -o=json -- ml/trainer)" = 1 ] && same why1 why3
# plan: --workload=F as --workload F
TD=$ROOT/testdata/plan/gpus
[ "$(run plan1 plan -f "$TD/cluster.yaml" --workload "$TD/two-gpu.yaml" -o csv)" = 0 ] || fail "plan: $(cat "$T/plan1.err")"
[ "$(run plan2 plan -f "$TD/cluster.yaml" --workload="$TD/two-gpu.yaml" --output=csv --strict=false)" = 0 ] && same plan1 plan2
# allocate: --node=N, --pod=P, -n=NS, -ojson as -o json (one pod's claim on gpu-c)
POD=$ROOT/testdata/why/one-gpu-pod.yaml
[ "$(run al1 allocate -f "$CL" -f "$POD" --node gpu-c --pod small -n ml --seed 1 -o json)" = 0 ] \
  && grep -q '"kind": "ResourceClaim"' "$T/al1.out" || fail "allocate --pod: $(cat "$T/al1.err")"
[ "$(run al2 allocate --filename="$CL" -f="$POD" --node=gpu-c --pod=small -n=ml --seed=1 -ojson)" = 0 ] && same al1 al2
# cel eval: -- makes "-1 + 2" the expression, flags may follow it
echo '{"name": "gpu-0", "driver": "gpu.example.com", "attributes": {"model": {"string": "H100"}}}' >"$T/dev.json"
[ "$(run cel1 cel eval -- '-1 + 2' --device-json "$T/dev.json")" = 0 ] && grep -qx 1 "$T/cel1.out" || fail "cel eval --"
[ "$(run cel2 cel eval '1 + 1' --device-json="$T/dev.json" --output=json)" = 0 ] && grep -q '"value":"2"' "$T/cel2.out" \
  || fail "cel eval --output=json: $(cat "$T/cel2.out")"

# unknown flags named, in each command's words, exit 2
want_err() {   # want_err LINE ARGS...: exit 2 and LINE on stderr's first line
  local line=$1; shift
  local rc; rc=$(run e "$@")
  [ "$rc" = 2 ] && [ "$(head -1 "$T/e.err")" = "$line" ] || fail "dralloc $*: exit $rc, stderr $(head -2 "$T/e.err")"
}
want_err "dralloc allocate: unknown flag or argument: --bogus" allocate --bogus
want_err "dralloc capacity: unexpected argument --bogus" capacity --bogus
want_err "dralloc why: unexpected argument --bogus" why --bogus
want_err "dralloc plan: unexpected argument --bogus" plan --bogus
want_err "dralloc serve: unexpected argument '--bogus'" serve --bogus
want_err "dralloc bench: unexpected argument '--bogus'" bench --bogus
want_err "dralloc plan merge: unexpected argument --bogus" plan merge --bogus
# a value missing at the end named
want_err "dralloc allocate: flag needs an argument: --node" allocate --node
want_err "dralloc capacity: --by needs a value" capacity --by
want_err "dralloc why: -n needs a value" why -n
want_err "dralloc plan: --min-nodes needs a value" plan --min-nodes
want_err "dralloc serve: --listen needs HOST:PORT" serve --listen
want_err "dralloc bench: --json needs a file name" bench --json
# --preemption: off or evict, and evict only in bind mode (issue #42)
want_err 'dralloc serve: --preemption: Unsupported value: "maybe": supported values: "off", "evict"' serve --preemption=maybe
want_err "dralloc serve: --preemption=evict needs --bind: in advisor mode kube-scheduler's DynamicResources plugin allocates, and its own preemption (with the preempt verb) decides victims" serve --preemption evict --snapshot /nonexistent
[ "$(run p serve --preemption=off --preemption-hold=90s --help)" = 0 ] || fail "serve --preemption=off --preemption-hold=90s"
want_err "dralloc serve: --preemption-hold needs a Go duration (5m, 90s) up to 24h" serve --preemption-hold=soon
# a boolean's value other than true or false is no flag
want_err "dralloc serve: unexpected argument '--watch-list=maybe'" serve --watch-list=maybe

# --help where it stands: after valid flags it answers (exit 0), after an unknown one not
for c in allocate capacity why plan serve bench; do
  [ "$(run h "$c" --help)" = 0 ] && grep -q "usage: dralloc $c" "$T/h.out" || fail "$c --help"
done
[ "$(run h serve --threads=2 --listen=127.0.0.1:0 -v --help)" = 0 ] || fail "serve ARGS --help"
[ "$(run h serve --threads=0 --help)" = 2 ] || fail "serve --threads=0 --help: the bad value is reported first"
# the help's flag sections come from the tables, in the columns they had
[ "$(run h serve --help)" = 0 ] && grep -q '^  --listen HOST:PORT     address to serve on' "$T/h.out" \
  && grep -q '^  --max-inflight-bytes SIZE  request bytes held at once' "$T/h.out" || fail "serve --help layout"
[ "$(run h allocate --help)" = 0 ] && grep -q '^  -n, --namespace NS namespace of --claim/--pod names without one' "$T/h.out" \
  && grep -q '^                     pods of NS are allocated$' "$T/h.out" || fail "allocate --help layout"
echo "cli_flags: ok"
