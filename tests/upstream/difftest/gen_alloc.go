package main

// gen_alloc.go: random allocator worlds in the conformance case format, within the API
// server's validation rules for what it generates (k8s.io/kubernetes v1.37.2
// pkg/apis/resource/validation: exactly one of nodeName/nodeSelector/allNodes/
// perDeviceNodeSelection; sharedCounters and devices never in one slice; one node
// selector term; DNS names; at most 32 results a claim; quantities as quantities).
// Small on purpose: a few drivers, pools, devices and claims make contention, and a
// mismatch in a small world shrinks fast.
//
// Every draw is counted in stats (the coverage table of ../README.md).

import (
	"fmt"
	"math/rand"
	"strings"
)

type obj = map[string]any
type arr = []any

// stats counts what the generator exercised.
type stats map[string]int

func (s stats) hit(k string) { s[k]++ }

type gen struct {
	r  *rand.Rand
	st stats
}

func (g *gen) p(prob float64) bool  { return g.r.Float64() < prob }
func (g *gen) n(lo, hi int) int     { return lo + g.r.Intn(hi-lo+1) }
func pick[T any](g *gen, xs ...T) T { return xs[g.r.Intn(len(xs))] }

var drivers = []string{"gpu.example.com", "nic.example.com"}
var models = []string{"a100", "h100", "b200"}

// a device's attributes: the schema selectors and constraints draw on
func (g *gen) attributes(f map[string]bool, driver string, idx int) obj {
	a := obj{}
	if g.p(0.9) {
		a["model"] = obj{"string": pick(g, models...)}
	}
	if g.p(0.9) {
		a["index"] = obj{"int": idx}
	}
	if g.p(0.7) {
		a["numa"] = obj{"int": g.n(0, 1)}
	}
	if g.p(0.6) {
		a["pcieRoot"] = obj{"string": fmt.Sprintf("pci000%d", g.n(0, 2))}
	}
	if g.p(0.5) {
		a["healthy"] = obj{"bool": g.p(0.8)}
	}
	if g.p(0.6) {
		a["driverVersion"] = obj{"version": fmt.Sprintf("1.%d.%d", g.n(0, 3), g.n(0, 2))}
	}
	if g.p(0.3) {
		a["example.com/rack"] = obj{"string": fmt.Sprintf("rack-%d", g.n(0, 1))}
	}
	if f["listTypeAttributes"] && g.p(0.5) {
		g.st.hit("list-type attributes")
		switch g.n(0, 2) {
		case 0:
			xs := arr{}
			for i := g.n(1, 3); i > 0; i-- {
				xs = append(xs, g.n(0, 3))
			}
			a["numas"] = obj{"ints": xs}
		case 1:
			xs := arr{}
			for i := g.n(1, 3); i > 0; i-- {
				xs = append(xs, fmt.Sprintf("pci000%d", g.n(0, 2)))
			}
			a["pcieRoots"] = obj{"strings": xs}
		default:
			a["numa"] = obj{"ints": arr{g.n(0, 1)}} // a list where others have a scalar
		}
	}
	if g.p(0.003) {
		a["broken"] = obj{} // an attribute without a value: a CEL runtime error when read
		g.st.hit("attribute without value")
	}
	return a
}

func (g *gen) capacity(multi bool) obj {
	c := obj{}
	if g.p(0.8) {
		m := obj{"value": pick(g, "40Gi", "80Gi", "10Gi")}
		if multi && g.p(0.7) {
			g.st.hit("consumable capacity request policy")
			pol := obj{"default": pick(g, "1Gi", "5Gi")}
			switch g.n(0, 2) {
			case 0:
				pol["validValues"] = arr{"1Gi", "5Gi", "10Gi"}
				pol["default"] = "1Gi"
			case 1:
				pol["validRange"] = obj{"min": "1Gi", "max": "40Gi", "step": "1Gi"}
			}
			m["requestPolicy"] = pol
		}
		c["memory"] = m
	}
	if g.p(0.4) {
		c["cores"] = obj{"value": fmt.Sprint(g.n(1, 8))}
	}
	return c
}

func (g *gen) taints(f map[string]bool) arr {
	if !g.p(0.15) {
		return nil
	}
	g.st.hit("device taints")
	t := obj{"key": pick(g, "example.com/maint", "example.com/bad"), "effect": pick(g, "NoSchedule", "NoExecute", "None")}
	if g.p(0.5) {
		t["value"] = "true"
	}
	return arr{t}
}

func (g *gen) nodeTarget(s obj, canPerDevice bool) string {
	switch x := g.r.Float64(); {
	case x < 0.6:
		s["nodeName"] = "node-1"
		return "nodeName"
	case x < 0.7:
		s["nodeName"] = "node-2"
		return "other node"
	case x < 0.8:
		s["allNodes"] = true
		return "allNodes"
	case x < 0.9 || !canPerDevice:
		s["nodeSelector"] = obj{"nodeSelectorTerms": arr{obj{"matchExpressions": arr{
			obj{"key": "region", "operator": "In", "values": arr{pick(g, "region-1", "region-2")}}}}}}
		return "nodeSelector"
	default:
		s["perDeviceNodeSelection"] = true
		return "perDeviceNodeSelection"
	}
}

// a pool: device slices, maybe a counter slice, maybe incomplete, stale or invalid
func (g *gen) pool(f map[string]bool, driver, pool string, devNames *[]string) arr {
	var slices arr
	nslices := g.n(1, 2)
	counters := f["partitionableDevices"] && g.p(0.3) || g.p(0.005)
	total := nslices
	if counters {
		total++
	}
	gen := 1
	count := total
	if g.p(0.05) {
		count++ // a slice still missing: the pool is incomplete
		g.st.hit("incomplete pool")
	}
	perDevice := false
	mk := func(i int) obj {
		spec := obj{"driver": driver, "pool": obj{"name": pool, "generation": gen, "resourceSliceCount": count}}
		return obj{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
			"metadata": obj{"name": fmt.Sprintf("%s-%s-%d", strings.Split(driver, ".")[0], pool, i)}, "spec": spec}
	}
	target := obj{}
	how := g.nodeTarget(target, f["partitionableDevices"] || g.p(0.1))
	g.st.hit("slice " + how)
	perDevice = how == "perDeviceNodeSelection"
	var counterSet string
	if counters {
		g.st.hit("shared counters")
		counterSet = "set-" + pool
		s := mk(0)
		for k, v := range target {
			s["spec"].(obj)[k] = v
		}
		s["spec"].(obj)["sharedCounters"] = arr{obj{"name": counterSet, "counters": obj{"memory": obj{"value": pick(g, "40Gi", "80Gi")}}}}
		slices = append(slices, s)
	}
	dup := g.p(0.03)
	for i := 0; i < nslices; i++ {
		s := mk(len(slices))
		for k, v := range target {
			s["spec"].(obj)[k] = v
		}
		var devs arr
		for j := g.n(0, 5); j > 0; j-- {
			idx := len(*devNames)
			name := fmt.Sprintf("dev-%d", idx)
			if dup && len(devs) > 0 {
				name = devs[0].(obj)["name"].(string) // the same name twice: an invalid pool
				g.st.hit("invalid pool (duplicate device)")
				dup = false
			} else {
				*devNames = append(*devNames, driver+"/"+pool+"/"+name)
			}
			multi := f["consumableCapacity"] && g.p(0.2) || g.p(0.005)
			d := obj{"name": name, "attributes": g.attributes(f, driver, idx)}
			if c := g.capacity(multi); len(c) > 0 {
				d["capacity"] = c
			}
			if multi {
				d["allowMultipleAllocations"] = true
				g.st.hit("allowMultipleAllocations device")
			}
			if t := g.taints(f); t != nil {
				d["taints"] = t
			}
			if counters && g.p(0.8) {
				d["consumesCounters"] = arr{obj{"counterSet": counterSet, "counters": obj{"memory": obj{"value": pick(g, "10Gi", "20Gi", "40Gi")}}}}
				g.st.hit("device consumes counters")
			}
			if (f["deviceBindingConditions"] && g.p(0.15)) || g.p(0.005) {
				d["bindingConditions"] = arr{"ready"}
				d["bindingFailureConditions"] = arr{"failed"}
				if g.p(0.3) {
					d["bindsToNode"] = true
				}
				g.st.hit("binding conditions")
			}
			if perDevice {
				switch g.n(0, 2) {
				case 0:
					d["nodeName"] = pick(g, "node-1", "node-2")
				case 1:
					d["allNodes"] = true
				default:
					d["nodeSelector"] = obj{"nodeSelectorTerms": arr{obj{"matchExpressions": arr{
						obj{"key": "region", "operator": "In", "values": arr{pick(g, "region-1", "region-2")}}}}}}
				}
			}
			devs = append(devs, d)
		}
		if devs == nil {
			devs = arr{}
		}
		s["spec"].(obj)["devices"] = devs
		slices = append(slices, s)
	}
	if g.p(0.05) { // an older generation's slice, which the allocator ignores
		s := mk(len(slices))
		s["spec"].(obj)["pool"].(obj)["generation"] = 0
		for k, v := range target {
			s["spec"].(obj)[k] = v
		}
		s["spec"].(obj)["devices"] = arr{obj{"name": "stale-0", "attributes": g.attributes(f, driver, 99)}}
		slices = append(slices, s)
		g.st.hit("stale generation slice")
	}
	return slices
}

func (g *gen) classes(f map[string]bool) arr {
	var cs arr
	for _, d := range drivers {
		c := obj{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
			"metadata": obj{"name": strings.Split(d, ".")[0]},
			"spec":     obj{"selectors": arr{obj{"cel": obj{"expression": fmt.Sprintf("device.driver == %q", d)}}}}}
		if g.p(0.2) {
			sels := c["spec"].(obj)["selectors"].(arr)
			c["spec"].(obj)["selectors"] = append(sels, obj{"cel": obj{"expression": g.selector(f, d)}})
			g.st.hit("class with a CEL selector")
		}
		if g.p(0.1) {
			c["spec"].(obj)["config"] = arr{obj{"opaque": obj{"driver": d, "parameters": obj{"class": true}}}}
		}
		cs = append(cs, c)
	}
	return cs
}

// a CEL selector over the schema above, from a small grammar
func (g *gen) selector(f map[string]bool, driver string) string {
	var atom func(depth int) string
	atom = func(depth int) string {
		a := fmt.Sprintf("device.attributes[%q]", driver)
		if depth < 2 && g.p(0.3) {
			switch g.n(0, 2) {
			case 0:
				return "(" + atom(depth+1) + " && " + atom(depth+1) + ")"
			case 1:
				return "(" + atom(depth+1) + " || " + atom(depth+1) + ")"
			default:
				return "!(" + atom(depth+1) + ")"
			}
		}
		// mostly optional reads (a missing attribute is a runtime error that stops the
		// whole allocation, as it should; drawn now and then, not in every case)
		rd := func(name, def string) string {
			if g.p(0.03) {
				return a + "." + name
			}
			return fmt.Sprintf("%s.?%s.orValue(%s)", a, name, def)
		}
		switch g.n(0, 13) {
		case 0:
			return fmt.Sprintf("%s == %q", rd("model", `""`), pick(g, models...))
		case 1:
			return fmt.Sprintf("%s %s %d", rd("index", "0"), pick(g, ">=", "<", "==", "!="), g.n(0, 6))
		case 2:
			return fmt.Sprintf("has(%s.numa)", a)
		case 3:
			return fmt.Sprintf("%s.?numa.orValue(0) == %d", a, g.n(0, 1))
		case 4:
			if g.p(0.9) {
				return fmt.Sprintf("device.capacity[%q].?memory.orValue(quantity(\"0\")).compareTo(quantity(%q)) >= 0", driver, pick(g, "20Gi", "40Gi", "80Gi"))
			}
			return fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity(%q)) >= 0", driver, pick(g, "20Gi", "40Gi", "80Gi"))
		case 5:
			return fmt.Sprintf("%s.isGreaterThan(semver(%q))", rd("driverVersion", `semver("0.0.0")`), pick(g, "1.0.0", "1.2.0"))
		case 6:
			return fmt.Sprintf("device.driver == %q", pick(g, drivers...))
		case 7:
			return "device.allowMultipleAllocations"
		case 8:
			return rd("healthy", "false")
		case 9:
			return fmt.Sprintf("device.attributes[\"example.com\"].?rack.orValue(\"\") == \"rack-%d\"", g.n(0, 1))
		case 10:
			if f["listTypeAttributes"] {
				return fmt.Sprintf("%s.?numas.orValue([]).exists(x, x == %d)", a, g.n(0, 3))
			}
			return fmt.Sprintf("%s.startsWith(%q)", rd("model", `""`), pick(g, "a", "h"))
		case 11:
			return fmt.Sprintf("%s in [\"pci0000\", \"pci0001\"]", rd("pcieRoot", `""`))
		case 12:
			return fmt.Sprintf("%s %% 2 == %d", rd("index", "0"), g.n(0, 1))
		default:
			return "true"
		}
	}
	return atom(0)
}

func (g *gen) request(f map[string]bool, name string, sub bool) obj {
	driver := pick(g, drivers...)
	r := obj{"deviceClassName": strings.Split(driver, ".")[0]}
	if g.p(0.004) {
		r["deviceClassName"] = "no-such-class"
		g.st.hit("unknown class")
	}
	if g.p(0.4) {
		var sels arr
		for i := g.n(1, 2); i > 0; i-- {
			sels = append(sels, obj{"cel": obj{"expression": g.selector(f, driver)}})
		}
		r["selectors"] = sels
		g.st.hit("request with CEL selectors")
	}
	if g.p(0.15) {
		r["allocationMode"] = "All"
		g.st.hit("allocationMode All")
	} else {
		r["allocationMode"] = "ExactCount"
		r["count"] = pick(g, 1, 1, 1, 2, 2, 3)
		g.st.hit("allocationMode ExactCount")
	}
	if !sub && (f["adminAccess"] && g.p(0.15) || g.p(0.004)) {
		r["adminAccess"] = true
		g.st.hit("admin access")
	}
	if g.p(0.15) {
		tol := obj{"key": pick(g, "example.com/maint", "example.com/bad"), "operator": pick(g, "Exists", "Equal")}
		if tol["operator"] == "Equal" {
			tol["value"] = "true"
		}
		if g.p(0.5) {
			tol["effect"] = pick(g, "NoSchedule", "NoExecute")
		}
		r["tolerations"] = arr{tol}
		g.st.hit("tolerations")
	}
	if (f["consumableCapacity"] && g.p(0.2)) || g.p(0.004) {
		r["capacity"] = obj{"requests": obj{"memory": pick(g, "1Gi", "3Gi", "5Gi", "20Gi")}}
		g.st.hit("capacity request")
	}
	if sub {
		r["name"] = name
		return r
	}
	return obj{"name": name, "exactly": r}
}

func (g *gen) claim(f map[string]bool, i int) obj {
	var reqs arr
	var names []string
	for j := pick(g, 1, 1, 2, 2, 3); j > 0; j-- {
		name := fmt.Sprintf("req-%d", len(reqs))
		names = append(names, name)
		if f["prioritizedList"] && g.p(0.2) || g.p(0.004) {
			g.st.hit("firstAvailable")
			var subs arr
			for k := g.n(2, 3); k > 0; k-- {
				subs = append(subs, g.request(f, fmt.Sprintf("sub-%d", len(subs)), true))
			}
			reqs = append(reqs, obj{"name": name, "firstAvailable": subs})
		} else {
			reqs = append(reqs, g.request(f, name, false))
		}
	}
	devices := obj{"requests": reqs}
	if g.p(0.3) {
		var cons arr
		for k := g.n(1, 2); k > 0; k-- {
			attr := pick(g, "gpu.example.com/numa", "gpu.example.com/model", "gpu.example.com/pcieRoot", "nic.example.com/pcieRoot", "gpu.example.com/driverVersion")
			c := obj{}
			if g.p(0.7) {
				c["matchAttribute"] = attr
				g.st.hit("matchAttribute")
			} else {
				c["distinctAttribute"] = pick(g, "gpu.example.com/index", "gpu.example.com/numa")
				g.st.hit("distinctAttribute")
			}
			if g.p(0.5) && len(names) > 1 {
				c["requests"] = arr{names[0], names[len(names)-1]}
			}
			cons = append(cons, c)
		}
		devices["constraints"] = cons
	}
	if g.p(0.1) {
		devices["config"] = arr{obj{"opaque": obj{"driver": pick(g, drivers...), "parameters": obj{"claim": i}}}}
	}
	return obj{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
		"metadata": obj{"name": fmt.Sprintf("claim-%d", i), "namespace": "default", "uid": fmt.Sprintf("uid-%d", i)},
		"spec":     obj{"devices": devices}}
}

// allocGates are the allocator's Features, as the case format names them.
var allocGates = []string{"adminAccess", "prioritizedList", "partitionableDevices", "deviceTaints", "derivedAttributes",
	"deviceBindingConditions", "consumableCapacity", "listTypeAttributes",
	"compatibilityGroups", "fractionalCapacityRange", "optionalNodeOperations"}

// world draws one case.
func (g *gen) world() obj {
	f := map[string]bool{}
	for _, k := range allocGates {
		if g.p(0.5) {
			f[k] = true
			g.st.hit("gate " + k)
		}
	}
	node := obj{"apiVersion": "v1", "kind": "Node", "metadata": obj{"name": "node-1", "labels": obj{"region": "region-1"}}}
	var slices arr
	var devNames []string
	for _, d := range drivers {
		for p := g.n(1, 2); p > 0; p-- {
			slices = append(slices, g.pool(f, d, fmt.Sprintf("pool-%d", len(slices)), &devNames)...)
		}
	}
	allocated := arr{}
	for _, d := range devNames {
		if g.p(0.15) {
			allocated = append(allocated, d)
			g.st.hit("allocated device")
		}
	}
	var claims arr
	for i := pick(g, 1, 1, 2, 3); i > 0; i-- {
		claims = append(claims, g.claim(f, len(claims)))
	}
	w := obj{"name": "random", "features": f, "node": node, "classes": g.classes(f),
		"slices": slices, "allocatedDevices": allocated, "claims": claims}
	if g.p(0.1) {
		d := pick(g, drivers...)
		sel := obj{"driver": d}
		if g.p(0.5) {
			sel["pool"] = "pool-0"
		}
		if g.p(0.5) && len(devNames) > 0 {
			parts := strings.Split(pick(g, devNames...), "/")
			sel = obj{"driver": parts[0], "pool": parts[1], "device": parts[2]}
		}
		w["deviceTaintRules"] = arr{obj{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
			"metadata": obj{"name": "rule-0"},
			"spec":     obj{"deviceSelector": sel, "taint": obj{"key": "example.com/rule", "effect": pick(g, "NoSchedule", "NoExecute")}}}}
		g.st.hit("DeviceTaintRule")
	}
	return w
}
