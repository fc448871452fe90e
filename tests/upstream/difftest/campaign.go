package main

// campaign.go: `difftest run` and `difftest speed`.
//
// Case i of a campaign is drawn from its own generator seeded with (seed, i), so a
// campaign is reproducible whatever the number of workers, and a mismatch is named by
// seed and index. Each worker has its own dralloc processes; upstream runs in this
// process.
//
// What counts as a mismatch:
//   - allocator: the normalised answers differ (oracle.Normalize: shareIDs and
//     quantity spellings only), or dralloc died or printed no answer;
//   - CEL: value, error text, error kind, estimated cost or the too-complex verdict
//     differ, the runtime cost's verdict against the limit differs ("runtime cost
//     verdict"), or the runtime cost differs from cel-go's ActualCost ("runtime
//     cost"; not compared when both are past the limit: cel-go stops at the node
//     that crossed it, dralloc may stop elsewhere, and the verdict is what counts).
// A case upstream panics on (an input the API server would reject that the generator
// let through) is counted and skipped, not compared.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"dralloc.dev/upstream/oracle"
)

func caseGen(seed int64, i int, st stats) *gen {
	return &gen{r: rand.New(rand.NewSource(seed*1_000_003 + int64(i))), st: st}
}

type allocVerdict struct {
	mismatch  bool
	skip      string // why not compared
	oracle    string
	dralloc   string
	satisfied bool
	outcome   string
	errClass  string
	slow      string
}

// errClass is an error's text without names and numbers: what kind of error it was.
func errClass(s string) string {
	if i := strings.Index(s, ": "); i > 0 && strings.HasPrefix(s, "claim ") || strings.HasPrefix(s, "class ") {
		s = s[i+2:]
	}
	s = digits.ReplaceAllString(s, "N")
	if len(s) > 70 {
		s = s[:70]
	}
	return s
}

var digits = regexp.MustCompile(`[0-9]+`)

// slowCase is how long one side may take before the case is reported as slow.
const slowCase = 2 * time.Second

func judgeAlloc(dr *lineProc, raw []byte) allocVerdict {
	t0 := time.Now()
	out, err := oracle.RunCase(context.Background(), raw, 10*time.Second)
	tGo := time.Since(t0)
	if err != nil {
		return allocVerdict{skip: "oracle could not decode: " + err.Error()}
	}
	if out.Panic != "" {
		return allocVerdict{skip: "upstream panicked"}
	}
	if out.Error != "" && strings.Contains(out.Error, "context deadline exceeded") {
		// kube-scheduler gives up on the node after filterTimeout (10 s); what dralloc
		// answers then is an answer upstream has not got: not comparable
		return allocVerdict{skip: "upstream exceeded the 10 s filter timeout"}
	}
	ob, _ := json.Marshal(out)
	on, _ := oracle.Normalize(ob)
	t1 := time.Now()
	db, err := dr.ask(raw)
	tC := time.Since(t1)
	v := allocVerdict{oracle: on, satisfied: out.Error == "" && !out.Unsatisfiable}
	if tGo > slowCase || tC > slowCase {
		v.slow = fmt.Sprintf("upstream %v, dralloc %v", tGo.Round(time.Millisecond), tC.Round(time.Millisecond))
	}
	switch {
	case out.Error != "":
		v.outcome = "error"
		v.errClass = errClass(out.Error)
	case out.Unsatisfiable:
		v.outcome = "unsatisfiable"
	default:
		v.outcome = "allocated"
	}
	if err != nil {
		v.mismatch, v.dralloc = true, "dralloc failed: "+err.Error()
		return v
	}
	dn, derr := oracle.Normalize(db)
	if derr != nil {
		v.mismatch, v.dralloc = true, string(db)
		return v
	}
	v.dralloc = dn
	v.mismatch = dn != on
	return v
}

type celVerdict struct {
	mismatch bool
	why      string
	oracle   string
	dralloc  string
	goCost   uint64
	cCost    uint64
	outcome  string
}

func judgeCEL(dr *lineProc, expr string, dev obj) celVerdict {
	devRaw, _ := json.Marshal(dev)
	d, err := oracle.DecodeDevice(devRaw)
	if err != nil {
		return celVerdict{why: "device: " + err.Error()}
	}
	res := func() (r oracle.CELResult) {
		defer func() {
			if p := recover(); p != nil {
				r = oracle.CELResult{Error: fmt.Sprint("upstream panicked: ", p), ErrorKind: "panic"}
			}
		}()
		return oracle.EvalCEL(context.Background(), expr, d)
	}()
	ob, _ := json.Marshal(res)
	line, _ := json.Marshal(obj{"expr": expr, "device": dev})
	db, err := dr.ask(line)
	v := celVerdict{oracle: string(ob), dralloc: string(db)}
	switch {
	case res.ErrorKind == "panic":
		v.outcome = "upstream panic"
		return v
	case res.ErrorKind != "":
		v.outcome = res.ErrorKind + " error"
	default:
		v.outcome = "value"
	}
	if err != nil {
		v.mismatch, v.why, v.dralloc = true, "dralloc failed", err.Error()
		return v
	}
	var got oracle.CELResult
	if err := json.Unmarshal(db, &got); err != nil {
		v.mismatch, v.why = true, "dralloc answer: "+err.Error()
		return v
	}
	ps := func(p *string) string {
		if p == nil {
			return "<none>"
		}
		return *p
	}
	pu := func(p *uint64) uint64 {
		if p == nil {
			return 0
		}
		return *p
	}
	v.goCost, v.cCost = pu(res.Cost), pu(got.Cost)
	switch {
	case ps(res.Value) != ps(got.Value):
		v.why = "value"
	case res.Error != got.Error:
		v.why = "error text"
	case res.ErrorKind != got.ErrorKind:
		v.why = "error kind"
	case pu(res.EstimatedCost) != pu(got.EstimatedCost):
		v.why = "estimated cost"
	case res.TooComplex != got.TooComplex:
		v.why = "too-complex verdict"
	case (pu(res.Cost) > res.CostLimit) != (pu(got.Cost) > res.CostLimit):
		v.why = "runtime cost verdict"
	case pu(res.Cost) != pu(got.Cost) && pu(res.Cost) <= res.CostLimit:
		v.why = "runtime cost"
	}
	v.mismatch = v.why != ""
	return v
}

type tally struct {
	mu          sync.Mutex
	n, mism     int
	skipped     map[string]int
	outcomes    map[string]int
	whys        map[string]int
	costSame    int
	costCHigher int
	costCLower  int
	written     int
}

func newTally() *tally {
	return &tally{skipped: map[string]int{}, outcomes: map[string]int{}, whys: map[string]int{}}
}

const maxWritten = 50 // shrunk cases written per kind and campaign

func runCampaign(bin string, seed int64, nAlloc, nCEL int, outDir, statsFile string, workers int, tolerate string) int {
	tolerated := map[string]bool{}
	for _, f := range strings.Split(tolerate, ",") {
		if f = strings.TrimSpace(f); f != "" {
			tolerated[f] = true
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 2
	}
	start := time.Now()
	cover := stats{}
	var coverMu sync.Mutex
	at, ct := newTally(), newTally()
	var wg sync.WaitGroup
	next := make(chan [2]int, 256) // kind (0 alloc, 1 cel), index
	go func() {
		for i := 0; i < nAlloc || i < nCEL; i++ {
			if i < nAlloc {
				next <- [2]int{0, i}
			}
			if i < nCEL {
				next <- [2]int{1, i}
			}
		}
		close(next)
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			da := newLineProc(bin, "allocate", "--fixture", "-")
			dc := newLineProc(bin, "cel", "eval", "--stdin")
			defer da.close()
			defer dc.close()
			local := stats{}
			for job := range next {
				g := caseGen(seed, job[1], local)
				if job[0] == 0 {
					w := g.world()
					raw, _ := json.Marshal(w)
					v := judgeAlloc(da, raw)
					if v.slow != "" {
						fmt.Printf("slow: seed %d case %d: %s\n", seed, job[1], v.slow)
					}
					at.mu.Lock()
					at.n++
					if v.skip != "" {
						at.skipped[v.skip]++
					} else {
						at.outcomes[v.outcome]++
						if v.errClass != "" {
							at.whys[v.errClass]++
						}
					}
					write := v.mismatch && at.written < maxWritten
					if v.mismatch {
						at.mism++
						if write {
							at.written++
						}
					}
					at.mu.Unlock()
					if write {
						small := shrinkAlloc(da, w)
						saveAlloc(outDir, seed, job[1], small, da)
					}
				} else {
					e, d := g.celCase()
					v := judgeCEL(dc, e, d)
					ct.mu.Lock()
					ct.n++
					ct.outcomes[v.outcome]++
					if v.outcome == "value" || v.outcome == "runtime error" {
						switch {
						case v.goCost == v.cCost:
							ct.costSame++
						case v.cCost > v.goCost:
							ct.costCHigher++
						default:
							ct.costCLower++
						}
					}
					// every failing mismatch is written; tolerated ones up to the cap
					write := v.mismatch && (ct.written < maxWritten || !tolerated[v.why])
					if v.mismatch {
						ct.mism++
						ct.whys[v.why]++
						if write {
							ct.written++
						}
					}
					ct.mu.Unlock()
					if write {
						e2, d2 := shrinkCEL(dc, e, d)
						v2 := judgeCEL(dc, e2, d2)
						saveCEL(outDir, seed, job[1], e2, d2, v2)
					}
				}
			}
			coverMu.Lock()
			for k, c := range local {
				cover[k] += c
			}
			coverMu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	fmt.Printf("allocator: %d cases in %.1fs; outcomes %v; not compared %v\n", at.n, el.Seconds(), at.outcomes, at.skipped)
	fmt.Printf("allocator errors by kind:")
	for _, k := range topKeys(at.whys, 12) {
		fmt.Printf(" %q=%d;", k, at.whys[k])
	}
	fmt.Println()
	fmt.Printf("CEL: %d cases; outcomes %v; mismatches by field %v; runtime cost equal %d, dralloc higher %d, lower %d\n",
		ct.n, ct.outcomes, ct.whys, ct.costSame, ct.costCHigher, ct.costCLower)
	keys := make([]string, 0, len(cover))
	for k := range cover {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("coverage:")
	for _, k := range keys {
		fmt.Printf(" %s=%d;", k, cover[k])
	}
	fmt.Println()
	if statsFile != "" {
		b, _ := json.MarshalIndent(map[string]any{"seed": seed, "allocatorCases": at.n, "allocatorMismatches": at.mism,
			"allocatorOutcomes": at.outcomes, "notCompared": at.skipped, "celCases": ct.n, "celMismatches": ct.mism,
			"celOutcomes": ct.outcomes, "celMismatchFields": ct.whys, "coverage": cover,
			"runtimeCost": map[string]int{"equal": ct.costSame, "drallocHigher": ct.costCHigher, "drallocLower": ct.costCLower},
			"seconds":     el.Seconds()}, "", "  ")
		_ = os.WriteFile(statsFile, b, 0o644)
	}
	if at.mism+ct.mism > 0 {
		fmt.Printf("shrunk mismatches: %s\n", outDir)
	}
	celFailing, celTolerated := 0, 0
	for why, n := range ct.whys {
		if tolerated[why] {
			celTolerated += n
		} else {
			celFailing += n
		}
	}
	if celTolerated > 0 {
		fmt.Printf("tolerated (open divergences, tests/cel-divergences.md): %d CEL mismatches in %s\n", celTolerated, tolerate)
	}
	fmt.Printf("oracle: %d allocator cases, %d mismatches; %d CEL cases, %d mismatches (seed %d)\n", at.n, at.mism, ct.n, ct.mism, seed)
	if at.mism+celFailing > 0 {
		return 1
	}
	return 0
}

func topKeys(m map[string]int, n int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return m[ks[i]] > m[ks[j]] || m[ks[i]] == m[ks[j]] && ks[i] < ks[j] })
	if len(ks) > n {
		ks = ks[:n]
	}
	return ks
}

func saveAlloc(dir string, seed int64, i int, w obj, dr *lineProc) {
	raw, _ := json.Marshal(w)
	v := judgeAlloc(dr, raw)
	var o any
	_ = json.Unmarshal([]byte(v.oracle), &o)
	w["name"] = fmt.Sprintf("difftest/seed-%d-case-%d", seed, i)
	w["source"] = "tests/upstream difftest, shrunk; expect = k8s.io/dynamic-resource-allocation v0.37.2 (dra-oracle)"
	w["expect"] = o
	w["dralloc"] = v.dralloc
	b, _ := json.MarshalIndent(w, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("alloc-seed%d-%d.json", seed, i)), b, 0o644)
}

func saveCEL(dir string, seed int64, i int, e string, d obj, v celVerdict) {
	var o, c any
	_ = json.Unmarshal([]byte(v.oracle), &o)
	_ = json.Unmarshal([]byte(v.dralloc), &c)
	b, _ := json.MarshalIndent(obj{"expr": e, "device": d, "field": v.why, "oracle": o, "dralloc": c}, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("cel-seed%d-%d.json", seed, i)), b, 0o644)
}

// runSpeed: the same generated inputs through both, one thread each, side by side in
// one run. Both are timed end to end per question, from the case's JSON text to the
// answer: upstream decodes the objects, builds the allocator (NewAllocator) and
// allocates, or compiles and evaluates the expression; dralloc reads the same JSON
// Lines on its stdin (`allocate --fixture -`, `cel eval --stdin`) and answers, fed by
// a writer goroutine so that pipe round trips do not count. Worlds upstream spends
// more than 2 s on (its search, not the input) are left out of both columns.
func runSpeed(bin string, seed int64, nAlloc, nCEL int) int {
	st := stats{}
	var lines [][]byte
	var goAlloc time.Duration
	for i := 0; i < nAlloc; i++ {
		raw, _ := json.Marshal(caseGen(seed, i, st).world())
		t0 := time.Now()
		func() {
			defer func() { _ = recover() }()
			_, _ = oracle.RunCase(context.Background(), raw, 10*time.Second)
		}()
		if d := time.Since(t0); d < 2*time.Second {
			goAlloc += d
			lines = append(lines, raw)
		}
	}
	cAlloc, err := streamTime(bin, []string{"allocate", "--fixture", "-"}, lines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 1
	}
	n := float64(len(lines))
	fmt.Printf("allocator decisions/s (%d random worlds, one thread each): upstream %.0f, dralloc %.0f (dralloc/upstream = %.1f)\n",
		len(lines), n/goAlloc.Seconds(), n/cAlloc.Seconds(), goAlloc.Seconds()/cAlloc.Seconds())
	var celLines [][]byte
	var goCEL time.Duration
	for i := 0; i < nCEL; i++ {
		e, d := caseGen(seed, i, st).celCase()
		devRaw, _ := json.Marshal(d)
		line, _ := json.Marshal(obj{"expr": e, "device": d})
		celLines = append(celLines, line)
		t0 := time.Now()
		func() {
			defer func() { _ = recover() }()
			dev, err := oracle.DecodeDevice(devRaw)
			if err == nil {
				oracle.EvalCEL(context.Background(), e, dev)
			}
		}()
		goCEL += time.Since(t0)
	}
	cCEL, err := streamTime(bin, []string{"cel", "eval", "--stdin"}, celLines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 1
	}
	n = float64(len(celLines))
	fmt.Printf("CEL compile+evaluate/s (%d random expressions and devices, one thread each): upstream %.0f, dralloc %.0f (dralloc/upstream = %.1f)\n",
		len(celLines), n/goCEL.Seconds(), n/cCEL.Seconds(), goCEL.Seconds()/cCEL.Seconds())
	return 0
}

// streamTime feeds lines to one dralloc process and times from the first write to the
// last answer.
func streamTime(bin string, args []string, lines [][]byte) (time.Duration, error) {
	p := newLineProc(bin, args...)
	if err := p.start(); err != nil {
		return 0, err
	}
	defer p.close()
	t0 := time.Now()
	go func() {
		w := bufio.NewWriterSize(p.in, 1<<20)
		for _, l := range lines {
			_, _ = w.Write(l)
			_ = w.WriteByte('\n')
		}
		_ = w.Flush()
	}()
	for range lines {
		if _, err := p.out.ReadBytes('\n'); err != nil {
			return 0, fmt.Errorf("dralloc %v: %v: %s", args, err, p.errb.String())
		}
	}
	return time.Since(t0), nil
}
