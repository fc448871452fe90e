#!/usr/bin/env bash
# screenshot_test.sh — what a person sees: the `dralloc plan --report` page and
# `dralloc serve`'s status page (GET /) rendered by headless Chromium (Debian's
# chromium). A page whose charts did not render is as small as a blank page's
# screenshot; each must be at least 4 times that, and the plan page's HTML must carry
# inline SVG and no script.
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
shot "http://$addr/" "$out/status.png"

for page in plan status; do
  s=$(size "$out/$page.png")
  if [ "$s" -lt $((4 * blank)) ]; then
    echo "screenshot_test: the $page page looks blank ($s bytes against $blank for an empty page)"
    exit 1
  fi
  echo "screenshot_test: $page page $s bytes (blank page $blank)"
done
