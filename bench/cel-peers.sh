#!/usr/bin/env bash
# cel-peers.sh — runs the CEL selector benchmark of ../shared/bench/cel-peers (three
# JavaScript CEL evaluators, node bench.js) and ours (dralloc bench cel) on the same
# N synthetic devices in one go, and prints ns per evaluation side by side.
#
#   bench/cel-peers.sh [--devices N] [--reps R] [--runs K] [--build]
#
# Defaults: N=100000, R=3 (bench.js's default), K=1. With K > 1 the whole comparison
# runs K times (peers, then ours, each time) and every figure is the median of the K runs
# (the machine is shared; single runs are noisy). The peers are copied to a temp dir
# and installed with npm (the shared folder is read-only). build-release/dralloc is
# built with `make release` when missing (or always with --build).
#
# Statistics: bench.js reports the best (fastest) of R timed passes after one warm-up;
# dralloc reports median/p99/min over R timed passes after one warm-up, per-device
# cel_eval_bool calls and (batch) one cel_eval_bool_many call per pass. The ratio
# column compares like with like: fastest peer's best pass / our best cel_eval_bool pass (so 10.0
# means we are 10x faster). A peer whose match count differs from the reference is
# marked '!' and left out of "fastest peer". The last three columns put both against
# the floor of a selector evaluation: the same selector hand-written in C over the same
# device views (bench/cel_floor.c), its best pass; "ours / C" is CEL's cost as a
# multiple of it, "fastest peer / C" the JavaScript peer's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers_src=${CEL_PEERS_DIR:-$root/../shared/bench/cel-peers}
N=100000
R=3
RUNS=1
build=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --devices|-n) N=$2; shift 2 ;;
    --reps|-r) R=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --build) build=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "cel-peers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f "$peers_src/bench.js" ]] || { echo "cel-peers.sh: $peers_src/bench.js not found (set CEL_PEERS_DIR)" >&2; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "cel-peers.sh: node and npm are needed" >&2; exit 2; }

dralloc=${DRALLOC:-$root/build-release/dralloc}   # DRALLOC overrides (e.g. a debug build)
if [[ $build -eq 1 || ! -x $dralloc ]]; then
  echo "== make release"
  make -C "$root" release
fi

work=$(mktemp -d /tmp/cel-peers.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$peers_src"/. "$work"/
echo "== npm install ($work)"
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >/dev/null)

status=0
for ((k = 1; k <= RUNS; k++)); do
  echo "== run $k/$RUNS: node bench.js $N --reps $R"
  (cd "$work" && node bench.js "$N" --reps "$R" --json "$work/peers-$k.json")
  echo
  echo "== run $k/$RUNS: dralloc bench cel --devices $N --reps $R"
  rc=0
  "$dralloc" bench cel --devices "$N" --reps "$R" --json "$work/ours-$k.json" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "cel-peers.sh: dralloc bench cel failed (exit $rc)" >&2
    status=$rc
    [[ -f $work/ours-$k.json ]] || exit $rc
  fi
  echo
done

echo "== ns per evaluation, N=$N, R=$R, median of $RUNS run(s) ($(nproc) CPUs, load $(cut -d" " -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d), dralloc $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
node - "$work" "$RUNS" <<'JS'
const fs = require("fs");
const [dir, runs] = [process.argv[2], Number(process.argv[3])];
const load = (f) => JSON.parse(fs.readFileSync(`${dir}/${f}`, "utf8"));
const P = [], O = [];
for (let k = 1; k <= runs; k++) { P.push(load(`peers-${k}.json`)); O.push(load(`ours-${k}.json`)); }
const median = (a) => { const s = [...a].sort((x, y) => x - y), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (ns) => (ns < 100 ? ns.toFixed(1) : ns.toFixed(0));
const names = P[0].peers.map((p) => p.name);
const head = ["expression", "matches", "ours min", "ours median", "ours p99", "ours batch min", ...names, "fastest peer / ours",
              "C floor min", "ours / C", "fastest peer / C"];
const rows = [head];
for (const o0 of O[0].expressions) {
  const id = o0.id;
  const ours = O.map((o) => o.expressions.find((x) => x.id === id));
  const ok = ours.every((x) => x.crossCheck === "ok");
  const row = [id, String(o0.matches) + (ok ? "" : " MISMATCH")];
  for (const key of ["nsPerEvalMin", "nsPerEvalMedian", "nsPerEvalP99", "batchNsPerEvalMin"])
    row.push(ours.every((x) => typeof x[key] === "number") ? fmt(median(ours.map((x) => x[key]))) : "n/a");
  const ratios = O.map(() => null);
  for (const name of names) {
    const es = P.map((p) => (p.peers.find((q) => q.name === name) || { exprs: [] }).exprs.find((x) => x.id === id));
    if (es.some((e) => !e || e.unsupported)) { row.push("n/a"); continue; }
    const good = es.every((e) => e.crossCheck === "ok");
    row.push(fmt(median(es.map((e) => e.nsPerEval))) + (good ? "" : " !"));
    if (!good) continue;
    es.forEach((e, k) => { if (ratios[k] === null || e.nsPerEval < ratios[k]) ratios[k] = e.nsPerEval; });
  }
  const r = ratios.every((x) => x !== null) ? median(ratios.map((best, k) => best / ours[k].nsPerEvalMin)) : null;
  row.push(r === null ? "n/a" : r.toFixed(1) + "x");
  // against the floor: the selector hand-written in C over the same views (best passes)
  const floor = ours.every((x) => typeof x.cViewNsPerEvalMin === "number") ? ours.map((x) => x.cViewNsPerEvalMin) : null;
  row.push(floor ? fmt(median(floor)) : "n/a");
  row.push(floor ? median(ours.map((x, k) => x.nsPerEvalMin / floor[k])).toFixed(1) + "x" : "n/a");
  row.push(floor && ratios.every((x) => x !== null) ? median(ratios.map((best, k) => best / floor[k])).toFixed(0) + "x" : "n/a");
  rows.push(row);
}
const w = head.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => r.map((s, c) => (c === 0 ? s.padEnd(w[c]) : s.padStart(w[c]))).join("  ");
for (const r of rows) console.log(line(r));
console.log("(ns/eval, median over runs; ours: cel_eval_bool per device, batch: cel_eval_bool_many; peers: best of R passes;");
console.log(" ratio: median over runs of fastest correct peer's best / our best cel_eval_bool pass;");
console.log(" C floor: the selector hand-written in C over the same device views (bench/cel_floor.c), best pass;");
console.log(" ours / C and fastest peer / C: each one's best pass as a multiple of the floor's;");
console.log(" '!' = the peer's match count or errors differ from the reference)");
console.log("\n| " + head.join(" | ") + " |\n|" + head.map((_, c) => (c === 0 ? "---" : "---:")).join("|") + "|");
for (const r of rows.slice(1)) console.log("| " + r.join(" | ") + " |");
JS
exit $status
