#!/usr/bin/env bash
# screenshot_test.sh — what a person sees: the `dralloc plan --report` page (the test
# cluster, fleets of 200 and 2,000 nodes from `dralloc bench fleet`, the buy list of two
# shapes on the 200) and `dralloc
# serve`'s status page (GET /) rendered by headless Chromium (Debian's chromium). A page
# whose charts did not render is as small as a blank page's screenshot; each must be at
# least 4 times that, the plan page's HTML must carry inline SVG and no script, and the
# first screen (the top 900 px) must hold the summary and the reasons: the page is
# printed to the size of one screen (--print-to-pdf would paginate; a DOM dump of the
# first screen is not available headless), so the checks read the HTML in page order
# up to the heatmap, which must come after the summary, the causes and the class table.
# SHOTS=DIR keeps the screenshots there.
#   screenshot_test.sh DRALLOC SOURCE_DIR
set -euo pipefail
dralloc=$1 src=$2
out=$(mktemp -d /tmp/dralloc-shot.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$out"' EXIT
shot() {   # shot URL PNG
  timeout 60 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,900 \
    --user-data-dir="$out/profile" --screenshot="$2" "$1" >/dev/null 2>&1 || true
  [ -s "$2" ] || { echo "screenshot_test: no screenshot of $1"; exit 1; }
}
size() { stat -c %s "$1"; }

printf '<!DOCTYPE html><html><body></body></html>' > "$out/blank.html"
shot "file://$out/blank.html" "$out/blank.png"
blank=$(size "$out/blank.png")

"$dralloc" plan -f "$src/testdata/plan/gpus/cluster.yaml" --workload "$src/testdata/plan/gpus/two-gpu.yaml" \
  --report "$out/plan.html" >/dev/null
grep -q '<svg' "$out/plan.html" || { echo "screenshot_test: the plan report has no SVG chart"; exit 1; }
if grep -qi '<script' "$out/plan.html"; then echo "screenshot_test: the plan report carries a script"; exit 1; fi
shot "file://$out/plan.html" "$out/plan.png"

# fleets: the first screen in page order — summary, what fits with the causes, allocatable
# now — before the heatmap; one cell per node, not a bar
for n in 200 2000; do
  "$dralloc" bench fleet --devices $n --dump "$out/fleet$n" >/dev/null
  "$dralloc" plan -f "$out/fleet$n/cluster.json" --workload "$out/fleet$n/workloads.json" --report "$out/fleet$n.html" >/dev/null
  html="$out/fleet$n.html"
  first=$(sed -n '1,/<h2>Nodes<\/h2>/p' "$html")
  for want in 'class="sum"' 'nodes are available' 'untolerated taint example.com/maintenance=firmware:NoSchedule' \
              'held by claims' 'Allocatable now' 'allocatable now' 'unfittable'; do
    grep -q "$want" <<<"$first" || { echo "screenshot_test: fleet $n: the page before the heatmap lacks $want"; exit 1; }
  done
  pos() { grep -bo "$1" "$html" | head -1 | cut -d: -f1; }
  [ "$(pos 'class="sum"')" -lt "$(pos '<h2>What fits')" ] && [ "$(pos '<h2>What fits')" -lt "$(pos '<h2>Allocatable now')" ] \
    && [ "$(pos '<h2>Allocatable now')" -lt "$(pos '<h2>Nodes')" ] || { echo "screenshot_test: fleet $n: sections out of order"; exit 1; }
  cells=$(grep -o '<rect x="[0-9]*" y="[0-9]*" width="7" height="7"' "$html" | wc -l)
  [ "$cells" -ge "$n" ] || { echo "screenshot_test: fleet $n: $cells heatmap cells for $n nodes"; exit 1; }
  shot "file://$html" "$out/fleet$n.png"
done

# the buy list (issue #40): a 200-node fleet, two shapes at two prices — the first section
# of the page is "What to buy", with the count and the total, before what fits
"$dralloc" plan -f "$out/fleet200/cluster.json" --workload "$out/fleet200/workloads.json" \
  --min-nodes "$out/fleet200/shape-h100.json" --min-nodes "$out/fleet200/shape-a100.json" \
  --price h100-99999=98,a100-99999=33 --report "$out/buy200.html" >/dev/null
pos() { grep -bo "$2" "$1" | head -1 | cut -d: -f1; }
[ -n "$(pos "$out/buy200.html" '<h2>What to buy')" ] && [ "$(pos "$out/buy200.html" '<h2>What to buy')" -lt "$(pos "$out/buy200.html" '<h2>What fits')" ] \
  && grep -q '&times; h100-99999, <b>588</b> in all' "$out/buy200.html" || { echo "screenshot_test: the buy page does not open with what to buy"; exit 1; }
shot "file://$out/buy200.html" "$out/buy200.png"

"$dralloc" serve --snapshot "$src/testdata/demo" --listen 127.0.0.1:0 2>"$out/serve.log" &
pid=$!
addr=
for _ in $(seq 100); do
  addr=$(sed -n 's/.*listening on \(.*\)$/\1/p' "$out/serve.log")
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "screenshot_test: dralloc serve did not start"; cat "$out/serve.log"; exit 1; }
curl -fsS -X POST --data @"$src/testdata/demo/requests/filter-fails.json" "http://$addr/filter" >/dev/null
curl -fsS "http://$addr/" >"$out/status.html"
first=$(sed -n '1,/<h2>Nodes<\/h2>/p' "$out/status.html")
for want in 'class="sum"' 'Recent filter decisions' 'nodes are available' 'Allocatable now'; do
  grep -q "$want" <<<"$first" || { echo "screenshot_test: the status page before the heatmap lacks $want"; exit 1; }
done
shot "http://$addr/" "$out/status.png"

for page in plan fleet200 fleet2000 buy200 status; do
  s=$(size "$out/$page.png")
  if [ "$s" -lt $((4 * blank)) ]; then
    echo "screenshot_test: the $page page looks blank ($s bytes against $blank for an empty page)"
    exit 1
  fi
  echo "screenshot_test: $page page $s bytes (blank page $blank)"
done
if [ -n "${SHOTS:-}" ]; then mkdir -p "$SHOTS" && cp "$out"/*.png "$SHOTS"/; fi
