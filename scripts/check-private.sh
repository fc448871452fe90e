#!/usr/bin/env bash
# check-private.sh BUILD_DIR — every function the engine and CEL libraries export is
# either declared in the layer's public headers (engine: engine.h snapshot.h context.h json.h
# causes.h model.h preempt.h; CEL: cel.h) or carries the private mark (dra__, cel__), so a name
# says at a glance whether another layer may call it. Reads the libraries' symbol
# tables (nm). Run by `make test`.
set -euo pipefail
b="${1:-build}"
bad=0
check() {   # LIB PRIVATE_PREFIX PUBLIC_HEADERS...
  local lib=$1 mark=$2
  shift 2
  [ -f "$lib" ] || { echo "check-private: no $lib (build first)"; exit 1; }
  local pub
  pub=$(cat "$@" | grep -ohE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u)
  for s in $(nm -g --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort -u); do
    case "$s" in "$mark"*) continue ;; esac
    if ! grep -qxF "$s" <<<"$pub"; then
      echo "check-private: $s is exported by $(basename "$lib") but is in no public header: make it static or name it $mark..."
      bad=1
    fi
  done
}
check "$b/engine/libdra_engine.a" dra__ engine/engine.h engine/snapshot.h engine/context.h engine/causes.h engine/model.h engine/json.h engine/preempt.h
check "$b/cel/libdra_cel.a" cel__ cel/cel.h
[ "$bad" = 0 ] || exit 1
echo "check-private: every exported engine and CEL function is public or marked private"
