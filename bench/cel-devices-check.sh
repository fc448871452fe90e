#!/usr/bin/env bash
# cel-devices-check.sh — proves the C port of bench.js's makeDevices field by field:
# dumps makeDevices(N, 42) from ../shared/bench/cel-peers/bench.js (its generator
# section, run in node) and `dralloc bench cel --dump -` in the same one-line-per-device
# format, and compares them byte for byte.
#
#   bench/cel-devices-check.sh [--devices N]      (default 100000; DRALLOC=path overrides the binary)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench_js=${CEL_PEERS_DIR:-$root/../shared/bench/cel-peers}/bench.js
dralloc=${DRALLOC:-$root/build-release/dralloc}
N=100000
[[ ${1:-} == --devices ]] && N=$2
[[ -x $dralloc ]] || make -C "$root" release
work=$(mktemp -d /tmp/cel-devices.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The generator section of bench.js: from `function rng` up to the quantity helpers.
sed -n '/^function rng(seed)/,/^\/\/ Minimal Quantity/p' "$bench_js" > "$work/gen.js"
cat >> "$work/gen.js" <<'JS'
const N = Number(process.argv[2]);
const out = [];
for (const d of makeDevices(N, 42)) {
  if (d.driver !== GPU) {
    const a = d.attributes["nic.example.com"], c = d.capacity["nic.example.com"];
    out.push(`nic ${a.linkType.value} ${a.speedGbps.value} ${a.rdma.value} ${c.bandwidth} ${c.vfs}`);
    continue;
  }
  const g = d.attributes[GPU], c = d.capacity[GPU];
  const root = d.attributes[STD] ? d.attributes[STD].pcieRoot.value : "-";
  out.push(`gpu ${g.type.value} ${g.uuid.value} ${g.index.value} ${g.productName.value}|${g.brand.value}|` +
    `${g.architecture.value}|${g.cudaComputeCapability.value} ${g.driverVersion.value} ${g.numaNode.value} ` +
    `${g.migEnabled.value} ${root} ${c.memory} ${c.multiprocessors}`);
}
process.stdout.write(out.join("\n") + "\n");
JS
node "$work/gen.js" "$N" > "$work/js.txt"
"$dralloc" bench cel --devices "$N" --dump "$work/c.txt"
if cmp -s "$work/js.txt" "$work/c.txt"; then
  echo "cel-devices-check: $N devices identical ($(md5sum < "$work/c.txt" | cut -c1-32))"
else
  echo "cel-devices-check: MISMATCH, first differences:"
  diff "$work/js.txt" "$work/c.txt" | head -10
  exit 1
fi
