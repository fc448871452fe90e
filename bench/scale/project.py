#!/usr/bin/env python3
"""The scaling table of a `dralloc bench scaling WORKLOAD -o json` document, and a
projected curve to 16 threads from what the 1- and 2-thread runs measured.

Model, per scheduling cycle (one pod):
  T1 = 1 / pods/s at 1 thread                 the whole cycle
  F1 = nodes / decisions/s at 1 thread        its filter (every node decided)
  S  = T1 - F1                                the serial rest: pod request, score, commit
  h  = max(0, F2 - F1/2)                      what 2 threads paid beyond the ideal split:
                                              the start of a worker, its wait, the join
  F(N) = max(F1/N + h (N-1), nodes * lock)    every extra worker adds one start; nodes
                                              still pass one at a time through the
                                              snapshot's shared per-node lock (engine
                                              store.c views_lock, --lock-ns, default 40 ns:
                                              an uncontended lock and unlock of a line
                                              that moves between cores)
  F(N) > F1: the pool decides inline (its rule), so F(N) = F1
  speedup(N) = T1 / (S + F(N))
On a shared machine F2 carries the other processes' load: take the curve from a quiet
run (bench/scale/run.sh prints the load beside each figure).

usage: project.py SCALING.json [--lock-ns 40]
"""
import json
import sys


def main():
    path = sys.argv[1]
    lock_ns = float(sys.argv[sys.argv.index("--lock-ns") + 1]) if "--lock-ns" in sys.argv else 40.0
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
        t1 = 1.0 / sc[1]["podsPerSecond"]
        f1 = nodes / sc[1]["allocationsPerSecond"]
        f2 = nodes / sc[2]["allocationsPerSecond"]
        s = max(0.0, t1 - f1)
        h = max(0.0, f2 - f1 / 2)
        floor = nodes * lock_ns * 1e-9
        print("  per cycle: %.1f µs, of it filter %.1f µs (%.0f ns a node) and serial %.1f µs; 2 threads' overhead "
              "%.1f µs; lock floor %.1f µs" % (t1 * 1e6, f1 * 1e6, f1 / nodes * 1e9, s * 1e6, h * 1e6, floor * 1e6))
        curve = []
        for n in (1, 2, 4, 8, 16):
            fn = max(f1 / n + h * (n - 1), floor) if n > 1 else f1
            fn = min(fn, f1)
            curve.append("%d: %.2fx" % (n, t1 / (s + fn)))
        print("  projected speedup  " + "  ".join(curve))


if __name__ == "__main__":
    main()
