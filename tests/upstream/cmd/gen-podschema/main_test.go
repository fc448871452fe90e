package main

// Two checks of planner/plan_tmpl_schema.c, run by CTest's podschema test when Go is
// installed (tests/CMakeLists.txt):
//   - TestGeneratedFileIsCurrent: the checked-in file is what the generator writes now;
//   - TestDecoderAgrees (with DRALLOC set to a dralloc binary): testdata/plan/templates'
//     realistic template and 200 mutations of it (a key misspelt, a value swapped for
//     one of another JSON type) decoded by the API server's decoder (sigs.k8s.io/json,
//     strict, into a v1.PodTemplateSpec) and read by `dralloc plan --strict`: the same
//     verdict, the decoder's error text inside dralloc's message, the same unknown
//     fields in the same order.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

const root = "../../../.."

func TestGeneratedFileIsCurrent(t *testing.T) {
	have, err := os.ReadFile(filepath.Join(root, "planner/plan_tmpl_schema.c"))
	if err != nil {
		t.Fatal(err)
	}
	if want := generate(); !bytes.Equal(have, want) {
		t.Fatal("planner/plan_tmpl_schema.c differs from what gen-podschema writes; regenerate:\n" +
			"  cd tests/upstream && go run ./cmd/gen-podschema >../../planner/plan_tmpl_schema.c")
	}
}

// realistic: the template of testdata/plan/templates/realistic.yaml, as JSON.
func realistic(t *testing.T) map[string]any {
	raw, err := os.ReadFile(filepath.Join(root, "testdata/plan/templates/realistic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(raw), "\n---\n")
	var doc struct {
		Workloads []struct {
			Template map[string]any `json:"template"`
		} `json:"workloads"`
	}
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Workloads[0].Template
}

type slot struct {
	parent any // map[string]any or []any
	key    string
	index  int
}

// slots: every value's place in v, in a fixed order.
func slots(v any, out []slot) []slot {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, slot{parent: x, key: k})
			out = slots(x[k], out)
		}
	case []any:
		for i := range x {
			out = append(out, slot{parent: x, index: i})
			out = slots(x[i], out)
		}
	}
	return out
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var c any
	_ = json.Unmarshal(b, &c)
	return c
}

// mutate: one key misspelt or one value replaced by another JSON type's.
func mutate(tmpl map[string]any, r *rand.Rand) any {
	c := clone(tmpl)
	all := slots(c, nil)
	s := all[r.IntN(len(all))]
	others := []any{"x", 8.5, 7, true, []any{}, map[string]any{}, []any{"a"}, map[string]any{"k": "v"}, nil, "80"}
	if m, ok := s.parent.(map[string]any); ok {
		if r.IntN(2) == 0 {
			k := []byte(s.key)
			i := r.IntN(len(k))
			k[i] = "abcdefghijklmnopqrstuvwxyz"[r.IntN(26)]
			v := m[s.key]
			delete(m, s.key)
			m[string(k)] = v
		} else {
			m[s.key] = others[r.IntN(len(others))]
		}
	} else {
		s.parent.([]any)[s.index] = others[r.IntN(len(others))]
	}
	return c
}

var unknownRe = regexp.MustCompile(`unknown field "[^"]*"`)

func TestDecoderAgrees(t *testing.T) {
	dralloc := os.Getenv("DRALLOC")
	if dralloc == "" {
		t.Skip("DRALLOC (a dralloc binary) not set")
	}
	base := realistic(t)
	r := rand.New(rand.NewPCG(40, 3))
	cases := []any{base}
	for i := 0; i < 200; i++ {
		cases = append(cases, mutate(base, r))
	}
	dir := t.TempDir()
	cluster := filepath.Join(root, "testdata/plan/gpus/cluster.yaml")
	// dralloc's answers first, two processes at a time
	msgs := make([]string, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				wl, _ := json.Marshal(map[string]any{"workloads": []any{map[string]any{"name": "w", "template": cases[i]}}})
				f := filepath.Join(dir, fmt.Sprintf("case%d.json", i))
				if err := os.WriteFile(f, wl, 0o644); err != nil {
					panic(err)
				}
				var stderr bytes.Buffer
				cmd := exec.Command(dralloc, "plan", "-f", cluster, "--workload", f, "--strict")
				cmd.Stderr = &stderr
				_ = cmd.Run()
				msgs[i] = stderr.String()
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	agreed := map[string]int{}
	for i, c := range cases {
		tj, _ := json.Marshal(c)
		var pts v1.PodTemplateSpec
		strict, derr := sjson.UnmarshalStrict(tj, &pts, sjson.DisallowUnknownFields)
		msg := msgs[i]
		onTemplate := strings.Contains(msg, "workloads[0].template: ")
		switch {
		case derr != nil:
			if !onTemplate || !strings.Contains(msg, derr.Error()) {
				t.Errorf("case %d %s:\n  decoder: %v\n  dralloc: %s", i, tj, derr, msg)
			}
			agreed["wrong type"]++
		case len(strict) > 0:
			var want []string
			for _, e := range strict {
				want = append(want, e.Error())
			}
			got := unknownRe.FindAllString(msg, -1)
			if !onTemplate || !strings.Contains(msg, "(--strict)") || strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("case %d %s:\n  decoder: %v\n  dralloc: %s", i, tj, want, msg)
			}
			agreed["unknown field"]++
		default:
			if onTemplate {
				t.Errorf("case %d %s:\n  decoder: accepted\n  dralloc: %s", i, tj, msg)
			}
			agreed["accepted"]++
		}
	}
	t.Logf("%d templates, same verdict as the API server's decoder: %v", len(cases), agreed)
}
