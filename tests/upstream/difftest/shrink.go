package main

// shrink.go: a mismatching case made small. Greedy: every array element and every
// removable object member of the case is tried for removal, one at a time; a removal
// is kept when the two still disagree (and upstream neither panicked nor refused the
// case). Repeated until nothing more can go, or the budget of trials runs out.

import (
	"bytes"
	"encoding/json"
	"strings"
)

// members a removal must not touch: without them an object is not one
var keep = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "name": true, "driver": true,
	"pool": true, "spec": true, "node": true, "devices": true, "deviceClassName": true, "generation": true,
	"resourceSliceCount": true, "taint": true, "key": true, "effect": true, "counterSet": true, "counters": true,
	"allocationMode": true, "exactly": true, "allocatedDevices": true, "value": true, "operator": true,
	"expression": true, "cel": true}

type path []any // string keys, int indexes

// deepCopy through JSON, numbers kept as json.Number: through float64, an int attribute
// of ±2^63 would come back as 9223372036854776000, which neither side can read as an
// int64 (seed 4000's shrunk cases said "cannot unmarshal number" instead of their class).
func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&out)
	return out
}

// removable lists the paths of every element and member a removal may try, deepest
// first (small removals after big ones would be slower: big first).
func removable(v any, at path, out *[]path) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := append(append(path{}, at...), k)
			if !keep[k] && !(len(at) == 0 && k != "claims" && k != "slices" && k != "classes" && k != "deviceTaintRules" && k != "features" && k != "allocatedDevices") {
				*out = append(*out, p)
			}
			removable(c, p, out)
		}
	case []any:
		for i, c := range x {
			p := append(append(path{}, at...), i)
			*out = append(*out, p)
			removable(c, p, out)
		}
	}
}

// parentOf walks p but its last step.
func parentOf(root any, p path) any {
	parent := root
	for _, k := range p[:len(p)-1] {
		switch x := parent.(type) {
		case map[string]any:
			parent = x[k.(string)]
		case []any:
			parent = x[k.(int)]
		}
	}
	return parent
}

func removeAt(root any, p path) any {
	root = deepCopy(root)
	last := p[len(p)-1]
	switch x := parentOf(root, p).(type) {
	case map[string]any:
		delete(x, last.(string))
	case []any:
		i := last.(int)
		nx := append(append([]any{}, x[:i]...), x[i+1:]...)
		// put the shorter array back into its parent
		if len(p) == 1 {
			return nx
		}
		setAt(root, p[:len(p)-1], nx)
	}
	return root
}

func setAt(root any, p path, v any) {
	switch x := parentOf(root, p).(type) {
	case map[string]any:
		x[p[len(p)-1].(string)] = v
	case []any:
		x[p[len(p)-1].(int)] = v
	}
}

func shrinkAlloc(dr *lineProc, w obj) obj {
	var cur any = deepCopy(w)
	raw0, _ := json.Marshal(w)
	first := judgeAlloc(dr, raw0)
	budget := 3000
	for changed := true; changed && budget > 0; {
		changed = false
		var ps []path
		removable(cur, nil, &ps)
		for _, p := range ps {
			if budget--; budget <= 0 {
				break
			}
			cand := removeAt(cur, p)
			raw, _ := json.Marshal(cand)
			// the same disagreement: upstream's outcome and kind of error unchanged
			if v := judgeAlloc(dr, raw); v.skip == "" && v.mismatch && v.outcome == first.outcome && v.errClass == first.errClass &&
				!strings.HasPrefix(v.dralloc, `{"caseError"`) {
				cur = cand
				changed = true
				break // the paths changed: list them again
			}
		}
	}
	return cur.(map[string]any)
}

// shrinkCEL shrinks the device only (attributes and capacities one by one); the
// expression is kept as drawn, which is short by construction. The mismatch must
// stay of the same field (a runtime cost one must not become a value one).
func shrinkCEL(dr *lineProc, e string, d obj) (string, obj) {
	cur := deepCopy(d).(map[string]any)
	first := judgeCEL(dr, e, cur)
	for _, field := range []string{"attributes", "capacity"} {
		m, _ := cur[field].(map[string]any)
		for k := range m {
			cand := deepCopy(cur).(map[string]any)
			delete(cand[field].(map[string]any), k)
			if v := judgeCEL(dr, e, cand); v.mismatch && v.why == first.why {
				cur = cand
			}
		}
	}
	return e, cur
}
