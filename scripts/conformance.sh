#!/usr/bin/env bash
# Runs both conformance corpora from ../shared/conformance (when present) with the given
# runner and prints their figures. Fails only when a corpus passes fewer cases than the
# floor recorded in tests/conformance-floor: a ratchet, so results can only go up.
set -uo pipefail
runner=${1:?usage: conformance.sh RUNNER}
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared/conformance"
[[ -d "$shared" ]] || { echo "conformance: $shared not found, skipped"; exit 0; }

floor() { awk -v k="$1" '$1==k {print $2}' "$root/tests/conformance-floor"; }
status=0
check() { # name, floor-key, command...
  local name=$1 key=$2; shift 2
  local out; out=$("$@" 2>&1); local last; last=$(printf '%s\n' "$out" | tail -n 1)
  printf '%s\n' "$out" | tail -n 40
  local passed; passed=$(sed -n 's/^\([0-9]*\) passed.*/\1/p' <<<"$last")
  local min; min=$(floor "$key"); min=${min:-0}
  echo "conformance $name: ${last:-no summary} (floor $min)"
  if [[ -z "$passed" || "$passed" -lt "$min" ]]; then status=1; fi
}
check allocator allocator "$runner" allocator "$shared/allocator/cases"
check "cel core" cel-core "$runner" cel --tag core "$shared"/cel/*.json
# The extension tags DRA enables, and cel-go's parser cases (those that do not depend
# on the options cel-go's own parser test used).
for tag in ext-strings ext-bindings ext-two-var optional; do
  check "cel $tag" "cel-$tag" "$runner" cel --tag "$tag" "$shared"/cel/*.json
done
# The same corpus as cel-spec defines it (no Kubernetes homogeneous-literal rule, no
# protobuf messages or cel.block, which DRA does not have): what differs from the
# figures above is only that rule, listed in tests/cel-divergences.md.
check "cel core (spec literals)" cel-core-spec "$runner" cel --spec-literals --tag core "$shared"/cel/*.json
for tag in ext-two-var optional; do
  check "cel $tag (spec literals, no proto)" "cel-$tag-spec" "$runner" cel --spec-literals --tag "$tag" \
    --skip-tag proto --skip-tag ext-block "$shared"/cel/*.json
done
check "cel go_parsing" cel-go-parsing "$runner" cel --skip-tag parser-option-dependent "$shared"/cel/go_parsing.json
# dralloc's own allocator cases (derived attributes, DeviceTaintRules, extended resources,
# PodGroup claims, objects as real drivers and older API versions write them); the
# floor is their count, so any failing case fails the run.
check "dralloc testdata" dralloc-testdata "$runner" allocator "$root"/testdata/{derived,taintrules,extres,podgroup,realworld,explain}
# The upstream Go table entries the shared corpus leaves out (testdata/upstream/README.md);
# the floor is their count.
check "upstream" upstream "$runner" allocator "$root"/testdata/upstream
exit $status
