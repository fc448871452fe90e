package oracle

// compare.go: the two comparisons the differential test makes.
//
//   - Exact (Normalize): dralloc's answer and upstream's must be the same JSON after
//     the only normalisations the issue allows: a shareID's value (a random UID
//     upstream generates) becomes a fixed one, quantities are compared by value (Go
//     prints a Quantity in canonical form, dralloc as written), and dralloc's
//     explanation of an unsatisfiable or failed node ("reason", "explanation"), which
//     upstream has no counterpart for, is dropped. Everything else — device choice and
//     order, pools, requests, tolerations, consumed capacity, error texts — must match.
//   - Expectation (MatchExpect): a conformance case's "expect" as the Go test compares
//     it (../shared/conformance/allocator/README.md: ConsistOf, unordered results where
//     the case says so, nodeSelector terms in any order, error by substring).

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

const fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

// Normalize returns the canonical JSON text of an answer (see above).
func Normalize(raw []byte) (string, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("answer is not a JSON object: %w: %q", err, truncate(string(raw), 200))
	}
	delete(v, "reason")
	delete(v, "explanation")
	if allocs, ok := v["allocations"].([]any); ok {
		for _, a := range allocs {
			normalizeAllocation(a)
		}
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b), nil
}

func normalizeAllocation(a any) {
	m, _ := a.(map[string]any)
	devs, _ := m["devices"].(map[string]any)
	results, _ := devs["results"].([]any)
	for _, r := range results {
		rm, _ := r.(map[string]any)
		if rm == nil {
			continue
		}
		if _, ok := rm["shareID"]; ok {
			rm["shareID"] = fixedShareID
		}
		if cc, ok := rm["consumedCapacity"].(map[string]any); ok {
			for k, q := range cc {
				if s, ok := q.(string); ok {
					if qq, err := resource.ParseQuantity(s); err == nil {
						cc[k] = qq.String()
					}
				}
			}
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// MatchExpect compares an answer with a case's expectation as the Go test does.
// It returns "" when they match, else why not.
func MatchExpect(expectRaw, compareRaw, answer []byte) string {
	var exp struct {
		Allocations   []json.RawMessage `json:"allocations"`
		Unsatisfiable bool              `json:"unsatisfiable"`
		Error         string            `json:"error"`
		ErrorMatch    string            `json:"errorMatch"`
	}
	if err := json.Unmarshal(expectRaw, &exp); err != nil {
		return "case expect: " + err.Error()
	}
	var cmp struct {
		Unordered []bool `json:"resultsUnorderedPerAllocation"`
	}
	if len(compareRaw) > 0 {
		_ = json.Unmarshal(compareRaw, &cmp)
	}
	var got struct {
		Allocations   []json.RawMessage `json:"allocations"`
		Unsatisfiable bool              `json:"unsatisfiable"`
		Error         *string           `json:"error"`
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		return "answer: " + err.Error()
	}
	switch {
	case exp.Error != "" || exp.ErrorMatch != "":
		want := exp.Error // errorMatch names the match ("substring"), not the text
		if got.Error == nil {
			return fmt.Sprintf("want an error containing %q, got %s", want, truncate(string(answer), 300))
		}
		if !strings.Contains(*got.Error, want) {
			return fmt.Sprintf("want an error containing %q, got %q", want, *got.Error)
		}
		return ""
	case exp.Unsatisfiable:
		if !got.Unsatisfiable {
			return "want unsatisfiable, got " + truncate(string(answer), 300)
		}
		return ""
	}
	if got.Error != nil || got.Unsatisfiable || got.Allocations == nil {
		return "want allocations, got " + truncate(string(answer), 300)
	}
	if len(got.Allocations) != len(exp.Allocations) {
		return fmt.Sprintf("want %d allocations, got %d", len(exp.Allocations), len(got.Allocations))
	}
	for i := range exp.Allocations {
		unordered := i < len(cmp.Unordered) && cmp.Unordered[i]
		e := canonAllocation(exp.Allocations[i], unordered)
		g := canonAllocation(got.Allocations[i], unordered)
		if !reflect.DeepEqual(e, g) {
			eb, _ := json.Marshal(e)
			gb, _ := json.Marshal(g)
			return fmt.Sprintf("allocation %d: want %s, got %s", i, eb, gb)
		}
	}
	return ""
}

// canonAllocation: shareIDs fixed, quantities canonical, and when unordered the
// results sorted, no allocationTimestamp, nodeSelector terms/requirements/values sorted.
func canonAllocation(raw json.RawMessage, unordered bool) any {
	var a map[string]any
	_ = json.Unmarshal(raw, &a)
	normalizeAllocation(a)
	if !unordered {
		return a
	}
	delete(a, "allocationTimestamp")
	if devs, ok := a["devices"].(map[string]any); ok {
		if rs, ok := devs["results"].([]any); ok {
			sortByJSON(rs)
		}
	}
	if ns, ok := a["nodeSelector"].(map[string]any); ok {
		if terms, ok := ns["nodeSelectorTerms"].([]any); ok {
			for _, t := range terms {
				tm, _ := t.(map[string]any)
				for _, k := range []string{"matchExpressions", "matchFields"} {
					if reqs, ok := tm[k].([]any); ok {
						for _, r := range reqs {
							if rm, ok := r.(map[string]any); ok {
								if vs, ok := rm["values"].([]any); ok {
									sortByJSON(vs)
								}
							}
						}
						sortByJSON(reqs)
					}
				}
			}
			sortByJSON(terms)
		}
	}
	return a
}

func sortByJSON(xs []any) {
	sort.Slice(xs, func(i, j int) bool {
		a, _ := json.Marshal(xs[i])
		b, _ := json.Marshal(xs[j])
		return string(a) < string(b)
	})
}
