#!/usr/bin/env bash
# cel-peers.sh — runs the CEL selector benchmark of ../shared/bench/cel-peers (three
# JavaScript CEL evaluators, node bench.js) and ours (dralloc bench cel) on the same
# N synthetic devices in one go, and prints ns per evaluation side by side.
#
#   bench/cel-peers.sh [--devices N] [--reps R] [--build]
#
# Defaults: N=100000, R=3 (bench.js's default). The peers are copied to a temp dir
# and installed with npm (the shared folder is read-only). build-release/dralloc is
# built with `make release` when missing (or always with --build).
#
# Statistics: bench.js reports the best (fastest) of R timed passes after one warm-up;
# dralloc reports median/p99/min over R timed passes after one warm-up. The ratio
# column compares like with like: fastest peer's best pass / our best pass (so 10.0
# means we are 10x faster). A peer whose match count differs from the reference is
# marked '!' and left out of "fastest peer".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers_src=${CEL_PEERS_DIR:-$root/../shared/bench/cel-peers}
N=100000
R=3
build=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --devices|-n) N=$2; shift 2 ;;
    --reps|-r) R=$2; shift 2 ;;
    --build) build=1; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

echo "== node bench.js $N --reps $R"
(cd "$work" && node bench.js "$N" --reps "$R" --json "$work/peers.json")
echo
echo "== dralloc bench cel --devices $N --reps $R"
status=0
"$dralloc" bench cel --devices "$N" --reps "$R" --json "$work/ours.json" || status=$?
if [[ $status -ne 0 ]]; then
  echo "cel-peers.sh: dralloc bench cel failed (exit $status)" >&2
  [[ -f $work/ours.json ]] || exit $status
fi

echo
echo "== ns per evaluation, N=$N, R=$R ($(nproc) CPUs, $(date -u +%Y-%m-%d))"
node - "$work/peers.json" "$work/ours.json" <<'JS'
const fs = require("fs");
const peers = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const ours = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const fmt = (ns) => (ns < 100 ? ns.toFixed(1) : ns.toFixed(0));
const head = ["expression", "matches", "ours min", "ours median", "ours p99"];
for (const p of peers.peers) head.push(p.name);
head.push("fastest peer / ours");
const rows = [head];
for (const o of ours.expressions) {
  const row = [o.id, String(o.matches) + (o.crossCheck === "ok" ? "" : " MISMATCH"), fmt(o.nsPerEvalMin), fmt(o.nsPerEvalMedian), fmt(o.nsPerEvalP99)];
  let best = null;
  for (const p of peers.peers) {
    const e = p.exprs.find((x) => x.id === o.id);
    if (!e || e.unsupported) { row.push("n/a"); continue; }
    const ok = e.crossCheck === "ok";
    row.push(fmt(e.nsPerEval) + (ok ? "" : " !"));
    if (ok && (best === null || e.nsPerEval < best)) best = e.nsPerEval;
  }
  row.push(best === null ? "n/a" : (best / o.nsPerEvalMin).toFixed(1) + "x");
  rows.push(row);
}
const w = head.map((_, c) => Math.max(...rows.map((r) => r[c].length)));
const line = (r) => r.map((s, c) => (c === 0 ? s.padEnd(w[c]) : s.padStart(w[c]))).join("  ");
console.log(line(rows[0]));
for (const r of rows.slice(1)) console.log(line(r));
console.log("(ns/eval; peers: best of R passes; '!' = peer's match count or errors differ from the reference)");
// Markdown for bench/README.md
console.log("\n| " + head.join(" | ") + " |\n|" + head.map((_, c) => (c === 0 ? "---" : "---:")).join("|") + "|");
for (const r of rows.slice(1)) console.log("| " + r.join(" | ") + " |");
JS
exit $status
