#!/usr/bin/env bash
# check-cycles.sh BUILD_DIR — no call cycle in engine/ or cel/ spans more than two
# files (alloc.c and derived.c call each other by design: the search asks derived
# attributes per candidate, and their evaluation reports through the allocator).
# Reads which file defines and which uses each global symbol from each library's
# object files (nm), closes the "calls" relation transitively, and prints every group
# of three or more files that all reach each other. Run by `make test`.
set -euo pipefail
bad=0
for lib in engine cel; do
dir="${1:-build}/$lib/CMakeFiles/dra_$lib.dir"
[ -d "$dir" ] || { echo "check-cycles: no $dir (build first)"; exit 1; }
for o in $(find "$dir" -name '*.o' | sort); do
  f=${o#"$dir"/}; f=${f%.o}; f=${f%.c}; f=${f%.cc}
  nm "$o" | awk -v f="$f" 'NF == 3 && $2 ~ /^[TDBR]$/ { print "D", f, $3 } NF == 2 && $1 == "U" { print "U", f, $2 }'
done | awk -v lib="$lib" '
  $1 == "D" { def[$3] = $2; files[$2] = 1; next }
  { use[++n] = $2 " " $3; files[$2] = 1 }
  END {
    for (i = 1; i <= n; i++) { split(use[i], p, " "); if ((p[2] in def) && def[p[2]] != p[1]) r[p[1], def[p[2]]] = 1 }
    for (k in files) for (i in files) if ((i, k) in r) for (j in files) if ((k, j) in r) r[i, j] = 1
    bad = 0
    for (i in files) {
      if (done[i]) continue
      grp = i; cnt = 1
      for (j in files) if (j != i && ((i, j) in r) && ((j, i) in r)) { grp = grp " " j; cnt++; done[j] = 1 }
      done[i] = 1
      if (cnt > 2) { print "check-cycles: these " lib " files call each other round: " grp; bad = 1 }
    }
    if (bad) exit 1
    print "check-cycles: no call cycle in " lib "/ spans more than two files"
  }' || bad=1
done
exit $bad
