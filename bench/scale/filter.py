#!/usr/bin/env python3
"""/filter latency against a running `dralloc serve` (bench/scale/run.sh starts it on a
fleet dumped by `dralloc bench fleet --shape ... --dump DIR`).

Each request is a pod claiming one of the dump's probe claims (probes.json: unallocated,
the workload's spec) and `--names` NodeNames sampled as kube-scheduler's
percentageOfNodesToScore samples them: a spread of the fleet (start + i * 7919, a prime
that divides no fleet size, so every residue of the shapes' fill pattern is met).
Requests go one at a time on one keep-alive connection; the first request of a batch
size decides every node it names (cold), the later ones meet the fit memo for nodes an
earlier request named (as pods of one Deployment do). With --rotate each request names
the next NAMES nodes of the spread instead (request r: spread positions r*NAMES ..
(r+1)*NAMES-1, wrapping), as kube-scheduler's rotating start index does once the fleet is
larger than a filter's names: every request meets nodes no earlier one named (cold, until
the spread wraps). Prints one line per batch size: first, p50, p99, max in ms.

usage: filter.py HOST:PORT NODE_PREFIX NODES --names 1000,5000 [--requests 200] [--rotate] [--claim PREFIX]
"""
import argparse
import http.client
import json
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("prefix")      # gpu | mig (fleet_gen.h's node names: PREFIX-NNNNNN)
    ap.add_argument("nodes", type=int)
    ap.add_argument("--names", default="1000,5000")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--rotate", action="store_true")
    ap.add_argument("--claim", default="probe")   # the probe claims' name prefix (PREFIX-0 .. PREFIX-63)
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=600)
    for want in [int(x) for x in a.names.split(",")]:
        n = min(want, a.nodes)
        lat = []
        for r in range(a.requests):
            start = (r * n if a.rotate else r) * 7919 % a.nodes
            names = ["%s-%06d" % (a.prefix, (start + i * 7919) % a.nodes) for i in range(n)]
            pod = {"metadata": {"name": "probe-pod-%d" % r, "namespace": "ml", "uid": "uid-probe-%d-%d" % (want, r)},
                   "spec": {"containers": [{"name": "c"}],
                            "resourceClaims": [{"name": "dev", "resourceClaimName": "%s-%d" % (a.claim, r % 64)}]}}
            body = json.dumps({"Pod": pod, "Nodes": None, "NodeNames": names})
            t0 = time.perf_counter()
            conn.request("POST", "/filter", body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            lat.append((time.perf_counter() - t0) * 1e3)
            if resp.status != 200:
                raise SystemExit("filter: HTTP %d: %s" % (resp.status, data[:300]))
            if r == 0:
                out = json.loads(data)
                if out.get("Error"):
                    raise SystemExit("filter: %s" % out["Error"])
                fits = len(out.get("NodeNames") or [])
        first = lat[0]
        s = sorted(lat)
        q = lambda p: s[min(len(s) - 1, int(p * len(s)))]
        print("/filter %5d names: first %.1f ms, p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d requests; %d of the first's "
              "nodes fit)" % (n, first, q(0.5), q(0.99), s[-1], len(lat), fits))


if __name__ == "__main__":
    main()
