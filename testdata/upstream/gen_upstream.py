#!/usr/bin/env python3
"""gen_upstream.py — writes the TestAllocator cases of the upstream Go test table
(k8s.io/dynamic-resource-allocation structured/internal/allocatortesting) that the
shared conformance corpus does not ship, in the corpus' JSON case format.

Each case below is a hand transcription of one Go table entry. The helpers mirror
what the Go helpers build (claimWithRequests, request, subRequest, device,
sliceWithDevices, resourcePool, ...) so that a case reads like its Go source and
the JSON carries exactly the fields Go sets (no API defaulting: count 0 is absent,
All-mode requests made from request(..., 1) keep count 1, and so on).

Run from anywhere: python3 testdata/upstream/gen_upstream.py
"""
import copy
import json
import os

GO_FILE = "structured/internal/allocatortesting/allocator_testing.go"
LEX_FILE = "structured/internal/allocatortesting/lexicographical_testing.go"
GO_COMMIT = "71ac8bb398117af6630a6a58e03ff94d933c3c35"  # kubernetes/dynamic-resource-allocation
LEX_COMMIT = "008b3652959ca58af8be3fb5b6ecfe9ae7638282"  # kubernetes/kubernetes staging copy

OUT = os.path.dirname(os.path.abspath(__file__))

# Constants of the Go test file.
region1, region2 = "region-1", "region-2"
node1, node2 = "node-1", "node-2"
classA, classB = "class-a", "class-b"
driverA, driverB = "driver-a", "driver-b"
pool1, pool2, pool3, pool4 = "pool-1", "pool-2", "pool-3", "pool-4"
req0, req1, req2, req3 = "req-0", "req-1", "req-2", "req-3"
subReq0, subReq1 = "subReq-0", "subReq-1"
claim0, claim1 = "claim-0", "claim-1"
slice1, slice2, slice3, slice4 = "slice-1", "slice-2", "slice-3", "slice-4"
device0, device1, device2, device3, device4 = (f"device-{i}" for i in range(5))
counterSet1, counterSet2 = "counter-set-1", "counter-set-2"
capacity0, capacity1 = "capacity-0", "capacity-1"
SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

boolAttribute = "driver-a/boolAttribute"
stringAttribute = "driver-a/stringAttribute"
versionAttribute = "driver-a/driverVersion"
intAttribute = "driver-a/numa"

taintNone = {"key": "taint-key", "value": "taint-value", "effect": "None"}
taintNoSchedule = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
taintNoExecute = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
tolerationNoSchedule = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
tolerationNoExecute = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}

ALL = "nodeSelectionAll"
PER_DEVICE = "nodeSelectionPerDevice"
FROM_COUNTERS = "fromCounters"


# ---- objects ----------------------------------------------------------------

def node(name, region):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}}


def sel(expr):
    return {"cel": {"expression": expr}}


def mem_ge(q):
    return sel(f'device.capacity["{driverA}"].memory.compareTo(quantity("{q}")) >= 0')


def attr_is(name, value):
    return sel(f'device.attributes["{driverA}"].{name} == "{value}"')


def opaque(driver, attribute):
    return {"driver": driver, "parameters": {attribute: attribute + "Value"}}


def cls(name, driver, config_attr=None, multialloc=None, expr=None):
    if expr is None:
        expr = f'device.driver == "{driver}"'
        if multialloc is not None:
            expr += f" && device.allowMultipleAllocations == {'true' if multialloc else 'false'}"
    spec = {"selectors": [sel(expr)]}
    if config_attr:
        spec["config"] = [{"opaque": opaque(driver, config_attr)}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def request(name, klass, count, *selectors, mode="ExactCount", admin=None, capacity=None, tolerations=None):
    ex = {}
    if count:
        ex["count"] = count
    ex["allocationMode"] = mode
    ex["deviceClassName"] = klass
    if selectors:
        ex["selectors"] = list(selectors)
    if admin is not None:
        ex["adminAccess"] = admin
    if tolerations:
        ex["tolerations"] = list(tolerations)
    if capacity is not None:
        ex["capacity"] = {"requests": {capacity0: capacity}} if capacity != "" else {"requests": {}}
    return {"name": name, "exactly": ex}


def all_request(name, klass, capacity=None):
    """allDeviceRequest: no count."""
    r = {"name": name, "exactly": {"allocationMode": "All", "deviceClassName": klass}}
    if capacity is not None:
        r["exactly"]["capacity"] = {"requests": {capacity0: capacity}}
    return r


def sub(name, klass, count, *fields, mode="ExactCount", capacity=None):
    s = {"name": name}
    if count:
        s["count"] = count
    s["allocationMode"] = mode
    s["deviceClassName"] = klass
    sels = [f for f in fields if "cel" in f]
    tols = [f for f in fields if "operator" in f]
    if sels:
        s["selectors"] = sels
    if tols:
        s["tolerations"] = tols
    if capacity is not None:
        s["capacity"] = {"requests": {capacity0: capacity}}
    return s


def first_available(name, *subs):
    return {"name": name, "firstAvailable": list(subs)}


def claim(name, requests=None, constraints=None, config=None):
    """claim(name) without requests has no spec at all; claimWithRequests sets spec.devices."""
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name}}
    if requests is None and constraints is None and config is None:
        return c
    d = {}
    if requests:
        d["requests"] = list(requests)
    if constraints:
        d["constraints"] = list(constraints)
    if config:
        d["config"] = list(config)
    c["spec"] = {"devices": d}
    return c


def claim_req(name, req, klass, *constraints, **kw):
    """claimWithRequest(name, req, class, constraints...): one ExactCount request, count 1."""
    return claim(name, [request(req, klass, 1, **kw)], list(constraints) or None)


def match(attr, requests=None):
    c = {}
    if requests:
        c["requests"] = list(requests)
    c["matchAttribute"] = attr
    return c


def distinct(attr, requests=None):
    c = {}
    if requests:
        c["requests"] = list(requests)
    c["distinctAttribute"] = attr
    return c


def claim_config(requests, driver, attribute):
    c = {}
    if requests:
        c["requests"] = list(requests)
    c["opaque"] = opaque(driver, attribute)
    return c


def S(v):
    return {"string": v}


def I(v):
    return {"int": v}


def B(v):
    return {"bool": v}


def V(v):
    return {"version": v}


def device(name, capacity=None, attrs=None):
    d = {"name": name}
    if attrs:
        d["attributes"] = dict(attrs)
    if capacity == FROM_COUNTERS:
        d["_fromCounters"] = True
    elif capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return d


def counters(counter_set, values=None):
    c = {"counterSet": counter_set}
    if values:
        c["counters"] = {k: {"value": v} for k, v in values.items()}
    return c


def with_counters(d, *dccs):
    d = copy.deepcopy(d)
    d.setdefault("consumesCounters", []).extend(dccs)
    if d.pop("_fromCounters", False):
        cap = {}
        for dcc in d["consumesCounters"]:
            for k, v in dcc.get("counters", {}).items():
                cap[k] = {"value": v["value"]}
        d["capacity"] = cap
    return d


def with_taints(d, *taints):
    d = copy.deepcopy(d)
    d.setdefault("taints", []).extend(taints)
    return d


def with_node(d, selection):
    d = copy.deepcopy(d)
    if isinstance(selection, dict):
        d["nodeSelector"] = selection
    elif selection == ALL:
        d["allNodes"] = True
    else:
        d["nodeName"] = selection
    return d


def with_binding(d, conditions, failure):
    d = copy.deepcopy(d)
    if conditions:
        d["bindingConditions"] = list(conditions)
    if failure:
        d["bindingFailureConditions"] = list(failure)
    return d


def with_multi(d):
    d = copy.deepcopy(d)
    d["allowMultipleAllocations"] = True
    return d


def with_range(d, caps):
    """withCapacityRequestPolicyRange: default 2, validRange min 2 step 2 max 4."""
    d = copy.deepcopy(d)
    c = d.setdefault("capacity", {})
    for k, v in caps.items():
        c[k] = {"value": v, "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}
    return d


def with_valid_values(d, default, caps, extra=()):
    d = copy.deepcopy(d)
    c = d.setdefault("capacity", {})
    for k, v in caps.items():
        c[k] = {"value": v, "requestPolicy": {"default": default, "validValues": [default, *extra]}}
    return d


def label_selector(key, *values):
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}


def local_selector(name):
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def pool(name, count=1, generation=1):
    return {"name": name, "resourceSliceCount": count, "generation": generation}


def slice_(name, selection, pool_, driver, devices=(), counter_sets=()):
    p = pool(pool_) if isinstance(pool_, str) else pool_
    spec = {"driver": driver, "pool": p}
    if isinstance(selection, dict):
        spec["nodeSelector"] = selection
    elif selection == ALL:
        spec["allNodes"] = True
    elif selection == PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = selection
    if devices:
        devs = []
        for d in devices:
            d = dict(d)
            d.pop("_fromCounters", None)
            devs.append(d)
        spec["devices"] = devs
    if counter_sets:
        spec["sharedCounters"] = list(counter_sets)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def counter_set(name, values=None):
    c = {"name": name}
    if values:
        c["counters"] = {k: {"value": v} for k, v in values.items()}
    return c


def one_device(name, selection, pool_, driver):
    return slice_(name, selection, pool_, driver, [device(device1)])


def multiple_devices(name, selection, pool_, driver, count):
    return slice_(name, selection, pool_, driver, [device(f"device-{i}") for i in range(count)])


# ---- expectations -----------------------------------------------------------

def res(request_, driver, pool_, dev, admin=False, tolerations=(), share=False, consumed=None,
        binding=None, failure=None):
    r = {"request": request_, "driver": driver, "pool": pool_, "device": dev}
    if admin:
        r["adminAccess"] = True
    if tolerations:
        r["tolerations"] = list(tolerations)
    if binding:
        r["bindingConditions"] = list(binding)
    if failure:
        r["bindingFailureConditions"] = list(failure)
    if share:
        r["shareID"] = SHARE_ID
    if consumed:
        r["consumedCapacity"] = dict(consumed)
    return r


def alloc(selector, *results):
    """allocationResult(): gomega matcher, results compared as a multiset."""
    return ({"devices": {"results": list(results)}, "nodeSelector": selector}, True)


def alloc_exact(selector, results, config=None):
    """A literal resourceapi.AllocationResult: exact deep equality."""
    d = {"results": list(results)}
    if config:
        d["config"] = list(config)
    return ({"devices": d, "nodeSelector": selector}, False)


def cfg(source, requests, driver, attribute):
    c = {"source": source}
    if requests:
        c["requests"] = list(requests)
    c["opaque"] = opaque(driver, attribute)
    return c


# ---- cases ------------------------------------------------------------------

FEATURES = {
    "AdminAccess": ["adminAccess"], "PrioritizedList": ["prioritizedList"],
    "PartitionableDevices": ["partitionableDevices"], "DeviceTaints": ["deviceTaints"],
    "DeviceBindingAndStatus": ["deviceBindingConditions", "deviceStatus"],
    "ConsumableCapacity": ["consumableCapacity"], "ListTypeAttributes": ["listTypeAttributes"],
}
STABLE = {"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"}

CASES = []


def case(name, features=(), claims=(), classes=(), slices=(), node_=None, allocated=(),
         shared_ids=None, allocated_capacity=None, expect=None, error=None, stats=None,
         note=None, table="TestAllocator", added_after_snapshot=False):
    CASES.append(dict(name=name, features=features, claims=claims, classes=classes, slices=slices,
                      node=node_, allocated=allocated, shared_ids=shared_ids,
                      allocated_capacity=allocated_capacity, expect=expect, error=error,
                      stats=stats, note=note, table=table, added=added_after_snapshot))


def render(c):
    feats = {}
    for f in c["features"]:
        for k in FEATURES[f]:
            feats[k] = True
    out = {"name": f"{c['table']}/{c['name']}"}
    go_file, commit = (LEX_FILE, LEX_COMMIT) if c["table"] == "TestLexicographicalAllocator" else (GO_FILE, GO_COMMIT)
    repo = "kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/" if c["table"] != "TestAllocator" \
        else "kubernetes/dynamic-resource-allocation "
    out["source"] = f"{repo}{go_file} @ {commit[:12]}: {c['table']}/{c['name']}"
    out["features"] = feats
    out["node"] = c["node"] or node(node1, region1)
    out["classes"] = list(c["classes"])
    out["slices"] = list(c["slices"])
    out["allocatedDevices"] = list(c["allocated"])
    if c["shared_ids"]:
        out["allocatedSharedDeviceIDs"] = list(c["shared_ids"])
    if c["allocated_capacity"]:
        out["allocatedCapacity"] = c["allocated_capacity"]
    out["claims"] = list(c["claims"])
    if c["error"] is not None:
        out["expect"] = {"error": c["error"], "errorMatch": "substring"}
    elif c["expect"]:
        out["expect"] = {"allocations": [a for a, _ in c["expect"]]}
        out["compare"] = {"resultsUnorderedPerAllocation": [u for _, u in c["expect"]]}
    elif not c["claims"]:
        out["expect"] = {"allocations": []}
    else:
        out["expect"] = {"unsatisfiable": True}
    if c["stats"]:
        n, stable = c["stats"]
        out["goStats"] = {"numAllocateOneInvocations": n}
        if stable is not None:
            out["goStats"]["byVariant"] = {"stable": stable}
    variants = []
    fs = set(c["features"])
    if fs <= STABLE and c["table"] == "TestAllocator":
        variants.append("stable")
    if "ListTypeAttributes" not in fs:
        variants.append("incubating")
    variants.append("experimental")
    out["goVariants"] = variants
    notes = []
    if c["added"]:
        notes.append("Table entry added upstream after the corpus snapshot 3d036712 (regression test for a fix).")
    if c["note"]:
        notes.append(c["note"])
    if notes:
        out["note"] = " ".join(notes)
    return out


def main():
    import cases_upstream  # noqa: F401  (registers the cases via case())
    names = set()
    for c in CASES:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        fn = os.path.join(OUT, f"{c['table']}__{c['name'].replace(' ', '-')}.json")
        with open(fn, "w") as f:
            json.dump(render(c), f, indent=2)
            f.write("\n")
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    import sys
    sys.path.insert(0, OUT)
    sys.modules["gen_upstream"] = sys.modules[__name__]
    main()
