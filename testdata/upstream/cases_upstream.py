"""cases_upstream.py — the Go table entries missing from the shared corpus, one
case() call per entry, in the order of the Go file. Read next to the Go source:
every argument mirrors the Go helper call it came from (see gen_upstream.py)."""
from gen_upstream import *  # noqa: F401,F403

# ---- basic -------------------------------------------------------------------

case("simple",
     claims=[claim_req(claim0, req0, classA)],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1))])

case("other-node",
     claims=[claim_req(claim0, req0, classA)],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverB), one_device(slice2, node2, pool2, driverA)],
     node_=node(node2, region2),
     expect=[alloc(local_selector(node2), res(req0, driverA, pool2, device1))])

case("no-slices",
     claims=[claim_req(claim0, req0, classA)],
     classes=[cls(classA, driverA)])

case("not-enough-suitable-devices",
     claims=[claim_req(claim0, req0, classA), claim_req(claim0, req1, classA)],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     note="Both claims are named claim-0, as in Go.")

case("no-classes",
     claims=[claim_req(claim0, req0, classA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     error="could not retrieve device class class-a")

case("all-devices-with-consumed-counters",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [all_request(req0, classA)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(device(device1), counters(counterSet1, {"memory": "4Gi"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA,
                    counter_sets=[counter_set(counterSet1, {"memory": "8Gi"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1))])

case("all-devices-plus-another-reversed",
     claims=[claim(claim1, [request(req0, classB, 1)]), claim(claim0, [all_request(req0, classA)])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[one_device(slice1, node1, pool1, driverA), one_device(slice1, node1, pool1, driverB)],
     expect=[alloc(local_selector(node1), res(req0, driverB, pool1, device1)),
             alloc(local_selector(node1), res(req0, driverA, pool1, device1))])

case("all-devices-no-solution",
     claims=[claim(claim1, [request(req0, classA, 1)]), claim(claim0, [all_request(req0, classA)])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)])

case("all-devices-no-solution-reversed",
     claims=[claim(claim0, [all_request(req0, classA)]), claim(claim1, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)])

case("all-devices-some-allocated-admin-access",
     features=["AdminAccess"],
     claims=[claim(claim0, [request(req0, classA, 1, mode="All", admin=True)])],
     allocated=["driver-a/pool-1/device-1"],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1), device(device2)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, admin=True),
                   res(req0, driverA, pool1, device2, admin=True))],
     note="claimWithRequest + AllocationMode=All keeps count 1.")

case("all-devices-some-allocated-prioritized-list",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 0, mode="All"), sub(subReq1, classB, 1))])],
     allocated=["driver-a/pool-1/device-1"],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1), device(device2)]),
             one_device(slice2, node1, pool2, driverB)],
     expect=[alloc(local_selector(node1), res("req-0/subReq-1", driverB, pool2, device1))])

case("several-different-drivers",
     claims=[claim_req(claim0, req0, classA), claim_req(claim0, req0, classB)],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1), device(device2)]),
             one_device(slice1, node1, pool1, driverB)],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1)),
             alloc(local_selector(node1), res(req0, driverB, pool1, device1))],
     note="Both claims are named claim-0, as in Go.")

case("admin-access-enabled",
     features=["AdminAccess"],
     claims=[claim_req(claim0, req0, classA, admin=True)],
     allocated=["driver-a/pool-1/device-1", "driver-a/pool-1/device-2"],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, admin=True))])

_full_attrs = {"driverVersion": V("1.0.0"), "numa": I(1),
               "stringAttribute": S("stringAttributeValue"), "boolAttribute": B(True)}
case("with-constraint",
     claims=[claim(claim0, [request(req0, classA, 1), request(req1, classA, 1)],
                   [match(intAttribute), match(versionAttribute), match(stringAttribute), match(boolAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, _full_attrs), device(device2, None, _full_attrs)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req1, driverA, pool1, device2))])

case("with-constraint-not-matching-int-attribute",
     claims=[claim(claim0, [request(req0, classA, 2)], [match(intAttribute)])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"numa": I(1)}), device(device2, None, {"numa": I(2)})])])

case("partitionable-all-mode-constraint-must-error-with-reserved-counter",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 0, mode="All")], [match(intAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [device(device1, None, {"numa": I(1)}),
                     with_counters(device(device2, None, {"numa": I(2)}), counters(counterSet1, {"c": "1"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "1"})])],
     error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied",
     added_after_snapshot=True)

case("with-claim-config-for-two-requests",
     claims=[claim(claim0, [request(req0, classA, 1), request(req1, classA, 1), request(req2, classA, 1)],
                   config=[claim_config([req0, req1], driverA, "deviceAttribute")])],
     classes=[cls(classA, driverA)],
     slices=[multiple_devices(slice1, node1, pool1, driverA, 3)],
     expect=[alloc_exact(local_selector(node1),
                         [res(req0, driverA, pool1, device0), res(req1, driverA, pool1, device1),
                          res(req2, driverA, pool1, device2)],
                         [cfg("FromClaim", [req0, req1], driverA, "deviceAttribute")])])

case("unknown-selector",
     claims=[claim(claim0, [request(req0, classA, 1, {})])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     error="CEL expression empty (unsupported selector type?)")

case("unknown-allocation-mode",
     claims=[claim(claim0, [request(req0, classA, 1, mode="future-mode")])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     error="unsupported count mode future-mode")

case("invalid-CEL-one-device",
     claims=[claim(claim0, [request(req0, classA, 1, sel("noSuchVar"))])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     error="undeclared reference")

case("all-devices-invalid-CEL",
     claims=[claim(claim0, [request(req0, classA, 500)])],
     classes=[cls(classA, driverA)],
     error="exceeds the claim limit",
     note="Despite its name the Go entry is a copy of too-many-devices-single-request (count 500, no slices, default node).")

# ---- prioritized list ----------------------------------------------------------

case("claim-config-covering-all-requests-is-cleared",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 1), sub(subReq1, classB, 1)),
                            request(req1, classA, 1)],
                   config=[claim_config(["req-0/subReq-0", req1], driverA, "all")])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[multiple_devices(slice1, node1, pool1, driverA, 2)],
     expect=[alloc_exact(local_selector(node1),
                         [res("req-0/subReq-0", driverA, pool1, device0), res(req1, driverA, pool1, device1)],
                         [cfg("FromClaim", None, driverA, "all")])])

case("prioritized-list-allocation-mode-all-multiple-requests",
     features=["PrioritizedList"],
     claims=[claim(claim0, [request(req0, classA, 1),
                            first_available(req1, sub(subReq0, classA, 0, mode="All"), sub(subReq1, classA, 1))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1), device(device2)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1),
                   res("req-1/subReq-1", driverA, pool1, device2))])

case("prioritized-list-disabled",
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 1))])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled")

case("prioritized-list-with-backtracking",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 1, mem_ge("8Gi")),
                                            sub(subReq1, classA, 1, mem_ge("4Gi"))),
                            request(req1, classA, 1, mem_ge("8Gi"))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1, {"memory": "8Gi"})]),
             slice_(slice2, node1, pool2, driverA, [device(device2, {"memory": "4Gi"})])],
     expect=[alloc(local_selector(node1), res("req-0/subReq-1", driverA, pool2, device2),
                   res(req1, driverA, pool1, device1))])

case("prioritized-list-too-many-in-first-subrequest",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classB, 500), sub(subReq1, classA, 1))])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     expect=[alloc(local_selector(node1), res("req-0/subReq-1", driverA, pool1, device1))])

# ---- partitionable devices / counters ------------------------------------------

case("partitionable-devices-counter-cache-scoped-by-pool-ID",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 1)]), claim(claim1, [request(req1, classB, 1)])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(device(device1), counters(counterSet1, {"c": "1"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "1"})]),
             slice_(slice3, node1, pool(pool1, 2), driverB,
                    [with_counters(device(device2), counters(counterSet1, {"c": "2"}))]),
             slice_(slice4, node1, pool(pool1, 2), driverB, counter_sets=[counter_set(counterSet1, {"c": "2"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1)),
             alloc(local_selector(node1), res(req1, driverB, pool1, device2))],
     added_after_snapshot=True)

case("partitionable-devices-counter-cache-not-crossed-between-driver-schemas",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 1)]), claim(claim1, [request(req1, classB, 1)])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(device(device1), counters(counterSet1, {"c": "1"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "1"})]),
             slice_(slice3, node1, pool(pool1, 2), driverB,
                    [with_counters(device(device2), counters(counterSet2, {"d": "2"}))]),
             slice_(slice4, node1, pool(pool1, 2), driverB, counter_sets=[counter_set(counterSet2, {"d": "1"})])],
     added_after_snapshot=True)

case("partitionable-devices-taint-releases-counter",
     features=["PartitionableDevices", "DeviceTaints"],
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(with_taints(device(device1), taintNoSchedule), counters(counterSet1, {"c": "1"})),
                     with_counters(device(device2), counters(counterSet1, {"c": "1"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "1"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device2))],
     added_after_snapshot=True)

case("partitionable-devices-constraint-releases-counter",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 2)], [match(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(device(device1, None, {"stringAttribute": S("red")}), counters(counterSet1, {"c": "1"})),
                     with_counters(device(device2, None, {"stringAttribute": S("blue")}), counters(counterSet1, {"c": "1"})),
                     with_counters(device(device3, None, {"stringAttribute": S("blue")}), counters(counterSet1, {"c": "1"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "2"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device2), res(req0, driverA, pool1, device3))],
     added_after_snapshot=True)

case("partitionable-consumable-capacity-backtrack-releases-counter",
     features=["PartitionableDevices", "ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, attr_is("kind", "shared")),
                            request(req1, classA, 1, attr_is("kind", "counteronly"))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(with_multi(device(device1, None, {"kind": S("shared")})), counters(counterSet1, {"c": "1"})),
                     device(device2, None, {"kind": S("shared")}),
                     with_counters(device(device3, None, {"kind": S("counteronly")}), counters(counterSet1, {"c": "1"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "1"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device2), res(req1, driverA, pool1, device3))],
     added_after_snapshot=True)

case("consumable-capacity-rejection-rolls-back-constraints",
     features=["ConsumableCapacity", "PrioritizedList"],
     claims=[claim(claim0, [request(req0, classA, 1, attr_is("stringAttribute", "cap"), capacity="2")]),
             claim(claim1, [first_available(req0,
                                            sub(subReq0, classA, 1, attr_is("stringAttribute", "cap"), mode="All", capacity="2"),
                                            sub(subReq1, classA, 1, attr_is("stringAttribute", "fb")))],
                   [match(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [with_multi(device(device1, {capacity0: "2"}, {"stringAttribute": S("cap")})),
                     device(device2, None, {"stringAttribute": S("fb")})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "2"})),
             alloc(local_selector(node1), res("req-0/subReq-1", driverA, pool1, device2))],
     note="subReq-0 is subRequest(..., 1, ...).withAllocationMode(All): it keeps count 1.",
     added_after_snapshot=True)

case("partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership",
     features=["PartitionableDevices", "ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, attr_is("kind", "shared"))]),
             claim(claim1, [request(req1, classA, 1, sel(f'device.attributes["{driverA}"].kind == "shared" || '
                                                          f'device.attributes["{driverA}"].kind == "fallback"')),
                            request(req2, classA, 1, attr_is("kind", "gate")),
                            request(req3, classA, 1, attr_is("kind", "shared"))],
                   [match(stringAttribute, [req1, req2])])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(with_multi(device(device1, None, {"kind": S("shared"), "stringAttribute": S("red")})),
                                   counters(counterSet1, {"c": "1"})),
                     device(device2, None, {"kind": S("fallback"), "stringAttribute": S("blue")}),
                     device(device3, None, {"kind": S("gate"), "stringAttribute": S("blue")})]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"c": "1"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True)),
             alloc(local_selector(node1), res(req1, driverA, pool1, device2), res(req2, driverA, pool1, device3),
                   res(req3, driverA, pool1, device1, share=True))],
     added_after_snapshot=True)


def _fc(name, *dccs, attrs=None):
    return with_counters(device(name, FROM_COUNTERS, attrs), *dccs)


case("partitionable-devices-multiple-devices",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 1), request(req1, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [_fc(device1, counters(counterSet1, {"memory": "4Gi"})),
                     _fc(device2, counters(counterSet1, {"memory": "6Gi"})),
                     _fc(device3, counters(counterSet1, {"memory": "4Gi"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"memory": "8Gi"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req1, driverA, pool1, device3))])

case("partitionable-devices-unused-counters-in-counter-set",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 2)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(device(device1), counters(counterSet1, {"memory": "5Gi"})),
                     with_counters(device(device2), counters(counterSet1, {"memory": "4Gi"})),
                     with_counters(device(device3), counters(counterSet1, {"memory": "4Gi"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA,
                    counter_sets=[counter_set(counterSet1, {"memory": "8Gi", "unused": "1Gi"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device2), res(req0, driverA, pool1, device3))])

case("partitionable-devices-overallocated-capacity-pool",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [_fc(device1, counters(counterSet1, {"memory": "4Gi"})),
                     _fc(device2, counters(counterSet1, {"memory": "20Gi"}))]),
             slice_(slice2, node1, pool1, driverA, counter_sets=[counter_set(counterSet1, {"memory": "18Gi"})])],
     allocated=["driver-a/pool-1/device-2"],
     note="Both slices claim resourceSliceCount 1 for the same pool, as in Go (sliceWithDevices with a plain pool name).")

case("partitionable-devices-per-device-node-selection-nodename",
     features=["PartitionableDevices", "PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 1, mem_ge("6Gi")),
                                            sub(subReq1, classA, 1, mem_ge("4Gi")))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, PER_DEVICE, pool(pool1, 2), driverA,
                    [with_node(_fc(device1, counters(counterSet1, {"memory": "4Gi"})), node1),
                     with_node(_fc(device2, counters(counterSet1, {"memory": "6Gi"})), node2)]),
             slice_(slice2, PER_DEVICE, pool(pool1, 2), driverA,
                    counter_sets=[counter_set(counterSet1, {"memory": "18Gi"})])],
     expect=[alloc(local_selector(node1), res("req-0/subReq-1", driverA, pool1, device1))])

case("partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
     features=["PartitionableDevices", "PrioritizedList"],
     claims=[claim(claim0, [request(req0, classA, 3), request(req1, classB, 3)])],
     classes=[cls(classA, driverA), cls(classB, driverB)],
     slices=[slice_(slice1, PER_DEVICE, pool(pool1, 2), driverA,
                    [with_node(_fc(device1, counters(counterSet1, {"memory": "4Gi"})), label_selector("region", region1)),
                     with_node(_fc(device2, counters(counterSet1, {"memory": "4Gi"})), node1),
                     with_node(_fc(device3, counters(counterSet1, {"memory": "4Gi"})), ALL)]),
             slice_(slice2, PER_DEVICE, pool(pool1, 2), driverA,
                    counter_sets=[counter_set(counterSet1, {"memory": "18Gi"})]),
             slice_(slice3, node1, pool(pool2, 2), driverB,
                    [_fc(device1, counters(counterSet2, {"memory": "4Gi"})),
                     _fc(device2, counters(counterSet2, {"memory": "4Gi"})),
                     _fc(device3, counters(counterSet2, {"memory": "4Gi"}))]),
             slice_(slice4, node1, pool(pool2, 2), driverB, counter_sets=[counter_set(counterSet2, {"memory": "12Gi"})])],
     expect=[alloc(local_selector(node1),
                   res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device2),
                   res(req0, driverA, pool1, device3), res(req1, driverB, pool2, device1),
                   res(req1, driverB, pool2, device2), res(req1, driverB, pool2, device3))])

# ---- taints --------------------------------------------------------------------

case("tainted-disabled",
     claims=[claim_req(claim0, req0, classA)],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [with_taints(device(device1), taintNoSchedule, taintNoExecute)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1))])

case("tainted-admin-access-disabled",
     features=["AdminAccess"],
     claims=[claim_req(claim0, req0, classA, admin=True)],
     allocated=["driver-a/pool-1/device-1", "driver-a/pool-1/device-2"],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [with_taints(device(device1), taintNoSchedule)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, admin=True))])

case("tainted-all-devices-single",
     features=["DeviceTaints"],
     claims=[claim(claim0, [all_request(req0, classA)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [with_taints(device(device1), taintNoSchedule)])])

case("prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 0, attr_is("generation", "v6"), mode="All"),
                                            sub(subReq1, classA, 0, attr_is("generation", "v5"), mode="All"))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1, None, {"generation": S("v5")})]),
             slice_(slice2, node1, pool2, driverA, [device(device1, None, {"generation": S("v5")})])],
     expect=[alloc(local_selector(node1), res("req-0/subReq-1", driverA, pool1, device1),
                   res("req-0/subReq-1", driverA, pool2, device1))])

case("prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req0, sub(subReq0, classA, 0, attr_is("generation", "v6"), mode="All"),
                                            sub(subReq1, classA, 0, attr_is("generation", "v5"), mode="All"))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1, None, {"generation": S("v5")})]),
             slice_(slice2, node2, pool2, driverA, [device(device1, None, {"generation": S("v5")}),
                                                   device(device2, None, {"generation": S("v6")})])],
     expect=[alloc(local_selector(node1), res("req-0/subReq-1", driverA, pool1, device1))])

case("partitionable-devices-with-attribute-selector",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 2),
                            request(req1, classA, 1, sel(f'device.attributes["{driverA}"].special'))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_counters(device(device1, None, {"special": B(True)}),
                                   counters(counterSet1, {"cpu1": "1"}), counters(counterSet2, {"mem": "10Gi"})),
                     with_counters(device(device2, None, {"special": B(False)}),
                                   counters(counterSet1, {"cpu2": "1"}), counters(counterSet2, {"mem": "10Gi"})),
                     with_counters(device(device3, None, {"special": B(False)}),
                                   counters(counterSet1, {"cpu3": "1"}), counters(counterSet2, {"mem": "10Gi"}))]),
             slice_(slice2, node1, pool(pool1, 2), driverA,
                    counter_sets=[counter_set(counterSet1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                                  counter_set(counterSet2, {"mem": "30Gi"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device2), res(req0, driverA, pool1, device3),
                   res(req1, driverA, pool1, device1))])

# ---- binding conditions --------------------------------------------------------

case("binding-conditions-without-feature-gate",
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [with_binding(device(device1), ["IsPrepare"], ["BindingFailed"])])])

case("partitionable-devices-with-binding-conditions-multiple",
     features=["PartitionableDevices", "DeviceBindingAndStatus"],
     claims=[claim(claim0, [request(req0, classA, 2)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_binding(_fc(device1, counters(counterSet1, {"memory": "4Gi"})), ["IsPrepare"], ["BindingFailed"]),
                     with_binding(_fc(device2, counters(counterSet1, {"memory": "4Gi"})), ["IsPrepare2"], ["BindingFailed2"])]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"memory": "8Gi"})])],
     expect=[alloc_exact(local_selector(node1),
                         [res(req0, driverA, pool1, device1, binding=["IsPrepare"], failure=["BindingFailed"]),
                          res(req0, driverA, pool1, device2, binding=["IsPrepare2"], failure=["BindingFailed2"])])])

# ---- consumable capacity -------------------------------------------------------

case("consumable-capacity-disabled-feature",
     features=["DeviceBindingAndStatus"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="1")])],
     classes=[cls(classA, driverA)],
     slices=[one_device(slice1, node1, pool1, driverA)],
     error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled")

case("consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="1")])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [with_multi(device(device1, {capacity1: "1"}))])])

_multi_true = cls(classA, driverA, multialloc=True)

case("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1)]), claim(claim1, [request(req0, classA, 1)])],
     classes=[_multi_true],
     slices=[slice_(slice1, node1, pool1, driverA, [with_multi(device(device1, {capacity0: "2"}))])])

case("consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="1")]),
             claim(claim1, [request(req0, classA, 1, capacity="1")])],
     classes=[_multi_true],
     slices=[slice_(slice1, node1, pool1, driverA, [with_multi(device(device1, {capacity0: "2"}))])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "1"})),
             alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "1"}))])

case("consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="1")]),
             claim(claim1, [request(req0, classA, 1, capacity="1")])],
     classes=[_multi_true],
     slices=[slice_(slice1, node1, pool1, driverA, [with_range(with_multi(device(device1)), {capacity0: "4"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "2"})),
             alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "2"}))])

case("consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="2")])],
     classes=[_multi_true],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [with_valid_values(with_multi(device(device1)), "1", {capacity0: "3"}, ["3"])])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "3"}))])

case("consumable-capacity-with-multi-allocatable-device-backtrack",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="2"), request(req1, classA, 1, capacity="2")],
                   [match(stringAttribute)]),
             claim(claim1, [request(req0, classA, 1, capacity="2")])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [with_range(with_multi(device(device2, None, {"stringAttribute": S("stringAttributeValue1")})), {capacity0: "2"}),
                     with_range(with_multi(device(device1, None, {"stringAttribute": S("stringAttributeValue2")})), {capacity0: "4"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "2"}),
                   res(req1, driverA, pool1, device1, share=True, consumed={capacity0: "2"})),
             alloc(local_selector(node1), res(req0, driverA, pool1, device2, share=True, consumed={capacity0: "2"}))])

case("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="1"), all_request(req1, classA, capacity="1")])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [with_multi(device(device1, {capacity0: "1"})),
                                                   with_multi(device(device2, {capacity0: "1"}))])])

case("allow-multiple-allocations-with-partitionable-device",
     features=["PrioritizedList", "PartitionableDevices", "ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1),
                            first_available(req1, sub(subReq0, classA, 1, mem_ge("6Gi")),
                                            sub(subReq1, classA, 1, mem_ge("4Gi")))])],
     classes=[_multi_true],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_multi(_fc(device1, counters(counterSet1, {"memory": "4Gi"}))),
                     with_multi(_fc(device2, counters(counterSet1, {"memory": "6Gi"}))),
                     with_multi(_fc(device3, counters(counterSet1, {"memory": "4Gi"})))]),
             slice_(slice2, node1, pool(pool1, 2), driverA, counter_sets=[counter_set(counterSet1, {"memory": "8Gi"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={"memory": "4Gi"}),
                   res("req-1/subReq-1", driverA, pool1, device3, share=True, consumed={"memory": "4Gi"}))])

case("distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
     features=["ConsumableCapacity"],
     claims=[claim(claim0, [request(req0, classA, 1, capacity="2"), request(req1, classA, 1, capacity="2")],
                   [distinct(stringAttribute)])],
     classes=[_multi_true],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_range(with_multi(device(device1, None, {"stringAttribute": S("stringAttributeValue1")})), {capacity0: "4"})]),
             slice_(slice1, node1, pool(pool1, 2), driverA,
                    [with_range(with_multi(device(device2, None, {"stringAttribute": S("stringAttributeValue2")})), {capacity0: "4"})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1, share=True, consumed={capacity0: "2"}),
                   res(req1, driverA, pool1, device2, share=True, consumed={capacity0: "2"}))],
     note="Both slices are named slice-1, as in Go.")

# ---- list-type attributes ------------------------------------------------------


def _strs(*v):
    return {"strings": list(v)}


case("list-attributes-match-constraint-backtrack-needs-intersection-restore",
     features=["ListTypeAttributes"],
     claims=[claim(claim0, [request(req0, classA, 3)], [match(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"stringAttribute": _strs("value1", "value2")}),
                     device(device2, None, {"stringAttribute": _strs("value1")}),
                     device(device3, None, {"stringAttribute": _strs("value2")}),
                     device(device4, None, {"stringAttribute": _strs("value2")})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device3),
                   res(req0, driverA, pool1, device4))],
     added_after_snapshot=True)

case("list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements",
     features=["ListTypeAttributes"],
     claims=[claim(claim0, [request(req0, classA, 2)], [match(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"stringAttribute": S("value1")}),
                     device(device2, None, {"stringAttribute": _strs("value2", "value3")})])])

case("list-attributes-match-constaint-list-of-bool-values-with-common-elements",
     features=["ListTypeAttributes"],
     claims=[claim(claim0, [request(req0, classA, 2)], [match(boolAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"boolAttribute": {"bools": [True, False]}}),
                     device(device2, None, {"boolAttribute": {"bools": [True]}})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device2))])

case("list-attributes-match-constaint-list-of-version-values-with-common-elements",
     features=["ListTypeAttributes"],
     claims=[claim(claim0, [request(req0, classA, 2)], [match(versionAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"driverVersion": {"versions": ["1.0.0", "1.1.0", "2.0.0"]}}),
                     device(device2, None, {"driverVersion": {"versions": ["1.1.0", "2.0.0", "2.1.0"]}})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device2))])

_LD = ["ListTypeAttributes", "ConsumableCapacity"]

case("list-attributes-distinct-constraint-scalar-string-values-not-distinct",
     features=_LD,
     claims=[claim(claim0, [request(req0, classA, 2)], [distinct(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"stringAttribute": S("value1")}),
                     device(device2, None, {"stringAttribute": S("value1")})])])

case("list-attributes-distinct-constraint-list-of-string-values-all-distinct",
     features=_LD,
     claims=[claim(claim0, [request(req0, classA, 2)], [distinct(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"stringAttribute": _strs("value1", "value2")}),
                     device(device2, None, {"stringAttribute": _strs("value2", "value3")}),
                     device(device3, None, {"stringAttribute": _strs("value3", "value4")})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device3))])

case("list-attributes-distinct-constraint-list-of-string-values-with-common-elements",
     features=_LD,
     claims=[claim(claim0, [request(req0, classA, 2)], [distinct(stringAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"stringAttribute": _strs("value1", "value2", "value3")}),
                     device(device2, None, {"stringAttribute": _strs("value2", "value4", "value5")})])])

case("list-attributes-distinct-constraint-list-of-int-values-all-distinct",
     features=_LD,
     claims=[claim(claim0, [request(req0, classA, 2)], [distinct(intAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"numa": {"ints": [0, 1]}}),
                     device(device2, None, {"numa": {"ints": [1, 2]}}),
                     device(device3, None, {"numa": {"ints": [2, 3]}})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device3))])

case("list-attributes-distinct-constraint-list-of-bool-values-all-distinct",
     features=_LD,
     claims=[claim(claim0, [request(req0, classA, 2)], [distinct(boolAttribute)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"boolAttribute": {"bools": [True]}}),
                     device(device2, None, {"boolAttribute": {"bools": [True, False]}}),
                     device(device3, None, {"boolAttribute": {"bools": [False]}})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device1), res(req0, driverA, pool1, device3))])

case("list-attributes-distinct-constraint-backtrack-needs-remove",
     features=_LD,
     claims=[claim(claim0, [request(req0, classA, 1), request(req1, classA, 1), request(req2, classA, 1)],
                   [distinct(stringAttribute, [req0, req1, req2])])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA,
                    [device(device1, None, {"stringAttribute": _strs("value1", "value2", "value3")}),
                     device(device2, None, {"stringAttribute": _strs("value3", "value4", "value5")}),
                     device(device3, None, {"stringAttribute": _strs("value1", "value2")}),
                     device(device4, None, {"stringAttribute": _strs("value3", "value4")}),
                     device(device0, None, {"stringAttribute": _strs("value5", "value6")})])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device3), res(req1, driverA, pool1, device4),
                   res(req2, driverA, pool1, device0))],
     added_after_snapshot=True)

# ---- pools across nodes --------------------------------------------------------

case("multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
     claims=[claim_req(claim0, req0, classA)],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node2, pool(pool1, 2, 1), driverA, [device(device1)]),
             slice_(slice1, node2, pool(pool1, 2, 1), driverA, [device(device2)]),
             slice_(slice2, node1, pool(pool1, 2, 2), driverA, [device(device1)])])

case("partitionable-devices-devices-consume-counter-set-in-different-nodes",
     features=["PartitionableDevices"],
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 3), driverA, counter_sets=[counter_set(counterSet1, {"memory": "8Gi"})]),
             slice_(slice2, node1, pool(pool1, 3), driverA, [_fc(device1, counters(counterSet1, {"memory": "6Gi"}))]),
             slice_(slice3, node2, pool(pool1, 3), driverA, [_fc(device2, counters(counterSet1, {"memory": "6Gi"})),
                                                            _fc(device3, counters(counterSet1, {"memory": "2Gi"}))])],
     allocated=["driver-a/pool-1/device-1"],
     node_=node(node2, region1),
     expect=[alloc(local_selector(node2), res(req0, driverA, pool1, device3))])

case("different-resourceslices-in-pool-can-target-different-nodes",
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node2, pool(pool1, 2), driverA, [device(device1)]),
             slice_(slice2, node1, pool(pool1, 2), driverA, [device(device2)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool1, device2))])

case("invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA, [device(device1)]),
             slice_(slice2, node1, pool(pool1, 2), driverA, [device(device1)]),
             slice_(slice3, node1, pool(pool2, 1), driverA, [device(device2)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool2, device2))])

case("no-allocation-from-incomplete-pools",
     claims=[claim(claim0, [request(req0, classA, 1)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 2), driverA, [device(device1)])])

case("check-combinations-with-prioritized-list",
     features=["PrioritizedList"],
     claims=[claim(claim0, [first_available(req1, sub(subReq0, classA, 3, attr_is("type", "Y")), sub(subReq1, classA, 2)),
                            first_available(req2, sub(subReq0, classA, 2), sub(subReq1, classA, 1, attr_is("type", "X")))])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool1, driverA, [device(device1, None, {"type": S("X")}),
                                                   device(device2, None, {"type": S("Y")}),
                                                   device(device3, None, {"type": S("Y")})])],
     expect=[alloc(local_selector(node1), res("req-1/subReq-1", driverA, pool1, device2),
                   res("req-1/subReq-1", driverA, pool1, device3), res("req-2/subReq-1", driverA, pool1, device1))],
     stats=(26, 32))

# ---- TestLexicographicalAllocator ------------------------------------------------

case("lexicographical-sorting-pools-with-binding-conditions",
     table="TestLexicographicalAllocator",
     features=["DeviceBindingAndStatus"],
     claims=[claim(claim0, [request(req0, classA, 2)])],
     classes=[cls(classA, driverA)],
     slices=[slice_(slice1, node1, pool(pool1, 1), driverA,
                    [with_binding(device(device1), ["IsPrepare"], ["BindingFailed"])]),
             slice_(slice3, node1, pool(pool3, 1), driverA, [device(device3)]),
             slice_(slice2, node1, pool(pool2, 1), driverA, [device(device2)])],
     expect=[alloc(local_selector(node1), res(req0, driverA, pool2, device2), res(req0, driverA, pool3, device3))],
     note="TestLexicographicalAllocator runs against the incubating and experimental variants only.")
