#!/usr/bin/env bash
# check-layers.sh — the layering rule, checked: base ← cel ← engine ← extender,
# planner, report, bench ← cmd. A file may include its own layer and the layers below it, never one above or
# beside it (extender, bench and cmd are siblings; cmd may use both), and no layer
# includes another layer's private headers (*_internal.h, or headers a file marks
# "private to"). engine/ has a public face: other layers include only the headers
# listed in engine_public (cel/: cel.h only) (the service layers, extender and planner, only those in
# service_public: never engine.h, the CLI's one-shot world). Inside engine/, the rooms
# (sub-folders) keep their order, bottom first: decode text world alloc store pod out;
# a room includes only itself, the rooms below it and the public faces at the top
# level, and the public faces include only each other. An include is any
# `#include "..."`, however spaced (`#  include` too). Prints every violation;
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
engine_public=" engine/engine.h engine/snapshot.h engine/context.h engine/causes.h engine/model.h engine/json.h engine/preempt.h "
service_public=" engine/snapshot.h engine/context.h engine/causes.h engine/json.h engine/preempt.h "

# engine/'s rooms, bottom first: each may include the ones before it (engine/README.md)
engine_rooms=(decode text world alloc store pod out room)
declare -A room_rank=()
for i in "${!engine_rooms[@]}"; do room_rank[${engine_rooms[$i]}]=$i; done
# engine/ROOM/x.h → ROOM; engine/x.h → top
engine_room() { local p=${1#engine/}; case "$p" in */*) echo "${p%%/*}" ;; *) echo top ;; esac; }

bad=0
for layer in base cel engine extender planner report bench cmd; do
  [ -d "$layer" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/^#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"${line#*:}")
    target=${inc%%/*}
    [ "$target" = "$inc" ] && continue          # a file-local include
    case " ${allowed[$layer]} " in
      *" $target "*) ;;
      *) echo "check-layers: $file includes $inc: $layer may include only ${allowed[$layer]}"; bad=1; continue ;;
    esac
    if [ "$target" = cel ] && [ "$layer" != cel ] && [[ "$cel_public" != *" $inc "* ]]; then
      echo "check-layers: $file includes $inc: $layer may include only cel's$cel_public"; bad=1; continue
    fi
    if [ "$target" = engine ] && [ "$layer" = engine ]; then
      # inside the engine: a room includes its own, the rooms below it and the public
      # faces at the top; never a room above it
      from=$(engine_room "$file"); to=$(engine_room "$inc")
      if [ "$from" != top ] && [ "$to" != top ] && [ "${room_rank[$to]:-99}" -gt "${room_rank[$from]:-99}" ]; then
        echo "check-layers: $file includes $inc: engine/$from/ may include only the rooms below it (${engine_rooms[*]}, bottom first) and the public headers"
        bad=1
      fi
      if [ "$from" = top ] && [ "$to" != top ]; then
        echo "check-layers: $file includes $inc: a public header of engine/ includes only public headers"
        bad=1
      fi
      continue
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
  done < <(grep -rHnE --include='*.c' --include='*.h' --include='*.cc' '^#[[:space:]]*include[[:space:]]*"' "$layer" |
           cut -d: -f1,3-)
done
[ $bad = 0 ] && echo "check-layers: every include goes down the layers"
exit $bad
