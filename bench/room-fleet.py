#!/usr/bin/env python3
# room-fleet.py NODES OUT.json PENDING — a MIG fleet for the make-room figures of
# bench/README.md ("Making room", issue #42): NODES nodes of 8 GPUs carved as 7 one-slice
# (1g) devices or one 7g device each (a counter set of 7 slices per GPU); on each node a
# pod of PriorityClass batch (0) holding one 1g slice on GPUs 0-3 and one of service
# (500) on GPUs 4-7, so no GPU is whole; PENDING pods of PriorityClass urgent (1000)
# each asking for one 7g. spec.priority is set as the Priority admission plugin sets it.
import json, sys
nodes = int(sys.argv[1]); out = sys.argv[2]; pending = int(sys.argv[3])
items = []
def cls(name, prof):
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                  "spec": {"selectors": [{"cel": {"expression": f'device.attributes["gpu.example.com"].profile == "{prof}"'}}]}})
cls("mig-1g", "1g"); cls("mig-7g", "7g")
items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch"}, "value": 0})
items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "service"}, "value": 500})
items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 1000})
for n in range(nodes):
    node = f"node-{n:05d}"
    items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
    sets, devs = [], []
    for g in range(8):
        sets.append({"name": f"gpu-{g}", "counters": {"slices": {"value": "7"}}})
        devs.append({"name": f"gpu-{g}-7g", "attributes": {"profile": {"string": "7g"}},
                     "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"slices": {"value": "7"}}}]})
        for j in range(7):
            devs.append({"name": f"gpu-{g}-1g-{j}", "attributes": {"profile": {"string": "1g"}},
                         "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"slices": {"value": "1"}}}]})
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-counters"},
                  "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": pool, "sharedCounters": sets}})
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
                  "spec": {"driver": "gpu.example.com", "nodeName": node, "pool": pool, "devices": devs}})
    # two pods: one 1g slice on each of GPUs 0-3 (batch), and on 4-7 (service): no whole GPU free
    for half, pc in ((0, "batch"), (1, "service")):
        pod = f"{node}-{pc}"
        results = [{"request": "gpus", "driver": "gpu.example.com", "pool": node, "device": f"gpu-{g}-1g-{n % 7}"}
                   for g in range(4 * half, 4 * half + 4)]
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": "ml", "uid": pod + "-uid"},
                      "spec": {"nodeName": node, "priorityClassName": pc, "priority": 0 if pc == "batch" else 500, "containers": [{"name": "main", "image": "x",
                               "resources": {"claims": [{"name": "gpus"}]}}],
                               "resourceClaims": [{"name": "gpus", "resourceClaimName": pod + "-gpus"}]},
                      "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}})
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": pod + "-gpus", "namespace": "ml"},
                      "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "mig-1g", "count": 4}}]}},
                      "status": {"allocation": {"devices": {"results": results}, "nodeSelector": {"nodeSelectorTerms": [
                          {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                                 "reservedFor": [{"resource": "pods", "name": pod, "uid": pod + "-uid"}]}})
for k in range(pending):
    pod = f"whole-{k}"
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": "ml", "uid": pod + "-uid"},
                  "spec": {"priorityClassName": "urgent", "priority": 1000, "containers": [{"name": "main", "image": "x",
                           "resources": {"claims": [{"name": "gpu"}]}}],
                           "resourceClaims": [{"name": "gpu", "resourceClaimName": pod + "-gpu"}]}})
    items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": pod + "-gpu", "namespace": "ml"},
                  "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "mig-7g", "count": 1}}]}}})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(out, "w"))
