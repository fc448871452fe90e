#!/usr/bin/env python3
"""The scaling table of a `dralloc bench scaling WORKLOAD -o json` document, and a
projected curve to 16 threads from what the 1- and 2-thread runs measured.

Model, per scheduling cycle (one pod), from CPU time — what a loaded machine still
measures (wall time there is the other processes' as much as ours):
  T1 = 1 / pods per CPU-second at 1 thread    the cycle's CPU
  f  = (nodes / decisions/s) * pods/s, 1 thread   the filter's share of the cycle
  F  = f T1, S = T1 - F                       filter, and the serial rest (pod request,
                                              score, commit)
  h  = max(0, T2 - T1), T2 = 1 / pods per CPU-second at 2 threads
                                              the CPU a second thread adds per cycle: its
                                              start, spinning, the lines that move
  F(N) = max(F/N + h (N-1)/N, decided * lock) each extra thread adds h, spread over N;
                                              --lock-ns: a floor for nodes decided (not
                                              memo hits) that pass one at a time through
                                              a shared per-node lock. Default 0: the
                                              matrix's path takes none since node views
                                              are found without one (engine/store/
                                              store_views.c's atomic table; the
                                              snapshot's views_lock, 40 ns, until then)
  F(N) > F: the pool decides inline (its rule), so F(N) = F
  speedup(N) = T1 / (S + F(N)), on idle cores
usage: project.py SCALING.json [--lock-ns NS]
"""
import json
import sys


def main():
    path = sys.argv[1]
    lock_ns = float(sys.argv[sys.argv.index("--lock-ns") + 1]) if "--lock-ns" in sys.argv else 0.0
    doc = json.load(open(path))
    for w in doc["workloads"]:
        sc = {e["threads"]: e for e in w.get("scaling", [])}
        nodes = w["parameters"]["nodes"]
        print("%s: measured" % w["name"])
        for t, e in sorted(sc.items()):
            print("  threads %2d  pods/s %9.0f  speedup %.2fx  pods/cpu-s %9.0f  filter speedup %.2fx" %
                  (t, e["podsPerSecond"], e["speedup"], e["podsPerCpuSecond"], e["filterSpeedup"]))
        if 1 not in sc or 2 not in sc:
            continue
        t1 = 1.0 / sc[1]["podsPerCpuSecond"]
        t2 = 1.0 / sc[2]["podsPerCpuSecond"]
        f = min(1.0, nodes / sc[1]["allocationsPerSecond"] * sc[1]["podsPerSecond"])
        f1 = f * t1
        s = t1 - f1
        h = max(0.0, t2 - t1)
        # a memo hit on the planning overlay takes no shared lock: only decided nodes do
        floor = nodes * (1.0 - w.get("memoHitRate", 0.0)) * lock_ns * 1e-9
        print("  per cycle (CPU): %.1f µs, of it filter %.1f µs (%.0f ns a node) and serial %.1f µs; a second thread "
              "adds %.1f µs; lock floor %.1f µs" % (t1 * 1e6, f1 * 1e6, f1 / nodes * 1e9, s * 1e6, h * 1e6, floor * 1e6))
        curve = []
        for n in (1, 2, 4, 8, 16):
            fn = max(f1 / n + h * (n - 1) / n, floor) if n > 1 else f1
            fn = min(fn, f1)
            curve.append("%d: %.2fx" % (n, t1 / (s + fn)))
        print("  projected speedup  " + "  ".join(curve))


if __name__ == "__main__":
    main()
