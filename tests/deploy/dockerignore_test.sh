#!/usr/bin/env bash
# dockerignore_test.sh — what `docker build .` would send as its context, without
# docker (no engine on CI): the .dockerignore patterns applied as the engine applies
# them (moby/patternmatcher: in order, the last matching pattern decides, "!" takes a
# path back, a pattern that matches a folder matches everything under it; "*" stays
# within one path element, "**" crosses them) to every file of the repository plus
# the local outputs a developer has (build trees, a .git folder). Fails when a build
# tree, .git, tests or test data would go in, or when a file the image's build needs
# (CMakeLists.txt, the layers' sources, scripts/deps.sh) would be left out.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

patterns=() negated=()
while IFS= read -r line || [ -n "$line" ]; do
  line=${line%%$'\r'}
  [[ -z "${line// }" || "$line" == \#* ]] && continue
  neg=0
  if [[ "$line" == !* ]]; then neg=1; line=${line#!}; fi
  line=${line#/}; line=${line%/}
  # glob → anchored regex
  re='' i=0
  while (( i < ${#line} )); do
    c=${line:i:1}
    if [[ "${line:i:3}" == "**/" ]]; then re+='(.*/)?'; i=$((i + 3)); continue; fi
    if [[ "${line:i:2}" == "**" ]]; then re+='.*'; i=$((i + 2)); continue; fi
    case "$c" in
      '*') re+='[^/]*' ;;
      '?') re+='[^/]' ;;
      '.'|'+'|'('|')'|'|'|'^'|'$'|'{'|'}'|'['|']'|'\') re+="\\$c" ;;
      *) re+="$c" ;;
    esac
    i=$((i + 1))
  done
  patterns+=("^${re}\$") negated+=("$neg")
done < .dockerignore

# 1 when path is left out of the context
excluded() {
  local path=$1 out=0 k pre
  for k in "${!patterns[@]}"; do
    pre=$path
    while :; do
      if [[ "$pre" =~ ${patterns[$k]} ]]; then
        if [ "${negated[$k]}" = 1 ]; then out=0; else out=1; fi
        break
      fi
      [[ "$pre" == */* ]] || break
      pre=${pre%/*}
    done
  done
  echo $out
}

fail=0
# what a developer's tree holds besides the repository
extra=(build/CMakeCache.txt build-release/CMakeCache.txt build-release/dralloc build-tsan/tests/live_test
       build-fuzz/fuzz_cel .git/HEAD .git/objects/pack/x.pack bench/out.json report.html plan.json
       cel/eval.o serve.log)
for p in "${extra[@]}"; do
  if [ "$(excluded "$p")" = 0 ]; then echo "dockerignore: $p would go into the image context"; fail=1; fi
done
in=0 out=0
while IFS= read -r f; do
  top=${f%%/*}
  x=$(excluded "$f")
  case "$f" in
    CMakeLists.txt|scripts/deps.sh|base/*|cel/*|engine/*|planner/*|report/*|extender/*|bench/*|cmd/*)
      if [ "$x" = 1 ]; then echo "dockerignore: $f is needed by the image's build but left out"; fail=1; fi ;;
    tests/*|testdata/*|deploy/*|.ci/*)
      if [ "$x" = 0 ]; then echo "dockerignore: $f ($top/) would go into the image context"; fail=1; fi ;;
  esac
  if [ "$x" = 1 ]; then out=$((out + 1)); else in=$((in + 1)); fi
done < <(git ls-files)
echo "dockerignore: $in files of the repository in the context, $out left out"
if [ $fail = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
