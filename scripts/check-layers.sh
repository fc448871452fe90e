#!/usr/bin/env bash
# check-layers.sh — the layering rule, checked: base ← cel ← engine ← extender,
# planner, report, bench ← cmd. A file may include its own layer and the layers below it, never one above or
# beside it (extender, bench and cmd are siblings; cmd may use both), and no layer
# includes another layer's private headers (*_internal.h, or headers a file marks
# "private to"). engine/ has a public face: other layers include only the headers
# listed in engine_public (cel/: cel.h only) (the service layers, extender and planner, only those in
# service_public: never engine.h, the CLI's one-shot world). Prints every violation;
# exit 1 when there is one. Run by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

# what each layer may include
declare -A allowed=(
  [base]="base"
  [cel]="base cel"
  [engine]="base cel engine"
  [extender]="base cel engine report extender"
  [planner]="base cel engine planner"
  [report]="base cel engine report"
  [bench]="base cel engine bench"
  [cmd]="base cel engine extender planner report bench cmd"
)

cel_public=" cel/cel.h "
engine_public=" engine/engine.h engine/snapshot.h engine/context.h engine/causes.h engine/model.h engine/preempt.h "
service_public=" engine/snapshot.h engine/context.h engine/causes.h engine/preempt.h "

bad=0
for layer in base cel engine extender planner report bench cmd; do
  [ -d "$layer" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    target=${inc%%/*}
    [ "$target" = "$inc" ] && continue          # a file-local include
    case " ${allowed[$layer]} " in
      *" $target "*) ;;
      *) echo "check-layers: $file includes $inc: $layer may include only ${allowed[$layer]}"; bad=1; continue ;;
    esac
    if [ "$target" = cel ] && [ "$layer" != cel ] && [[ "$cel_public" != *" $inc "* ]]; then
      echo "check-layers: $file includes $inc: $layer may include only cel's$cel_public"; bad=1; continue
    fi
    if [ "$target" = engine ] && [ "$layer" != engine ]; then
      case "$layer" in extender|planner) pub=$service_public ;; *) pub=$engine_public ;; esac
      case "$pub" in
        *" $inc "*) ;;
        *) echo "check-layers: $file includes $inc: $layer may include only engine's$pub"; bad=1; continue ;;
      esac
    fi
    if [ "$target" != "$layer" ] && { [[ "$inc" == *_internal.h ]] || head -3 "$inc" 2>/dev/null | grep -qs "private to $target/"; }; then
      echo "check-layers: $file includes $inc, private to $target/"
      bad=1
    fi
  done < <(grep -rHn --include='*.c' --include='*.h' --include='*.cc' '^#include "' "$layer" | cut -d: -f1,3-)
done
[ $bad = 0 ] && echo "check-layers: every include goes down the layers"
exit $bad
