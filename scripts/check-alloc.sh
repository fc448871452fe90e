#!/usr/bin/env bash
# check-alloc.sh — C and C++ code (.c and .cc of every layer, cmd/ included) allocates
# through the failing-loudly wrappers of base/base.h (xmalloc, xcalloc, xrealloc,
# xstrdup: abort with a message on out-of-memory) or an arena, never through an unchecked malloc/calloc/realloc/
# strdup/strndup/asprintf whose NULL would be dereferenced later. base/alloc.c is the
# one place that calls them. Run by `make test`; prints each offending line.
set -euo pipefail
cd "$(dirname "$0")/.."
hits=$(grep -rnE --include='*.c' --include='*.cc' \
         '(^|[^x_A-Za-z0-9])(malloc|calloc|realloc|strdup|strndup|asprintf|vasprintf)\(' \
         base cel engine extender planner report cmd |
       grep -v '^base/alloc\.c:' | grep -vE '^[^:]+:[0-9]+:\s*(/\*|\*|//)' || true)
if [ -n "$hits" ]; then
  echo "check-alloc: allocate with xmalloc/xcalloc/xrealloc/xstrdup (base/base.h):"
  echo "$hits"
  exit 1
fi
echo "check-alloc: every allocation goes through the failing-loudly wrappers"
