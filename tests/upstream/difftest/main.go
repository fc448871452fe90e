// difftest compares dralloc with Kubernetes' own DRA allocator and CEL compiler
// (k8s.io/dynamic-resource-allocation v0.37.2, through package oracle):
//
//	difftest cases [--dralloc BIN] DIR_OR_FILE...
//	    every conformance case through both: the oracle against the case's
//	    expectation, dralloc against the oracle (exactly)
//	difftest run [--dralloc BIN] [--seed N] [--cases K] [--cel-cases K] [--out DIR]
//	    a random campaign: K allocator worlds and K CEL questions, each mismatch
//	    shrunk and written to DIR; last line
//	    "oracle: K allocator cases, M mismatches; K CEL cases, M mismatches (seed N)";
//	    --tolerate FIELDS: CEL mismatches in those fields (open, documented
//	    divergences) are reported on a line of their own and do not fail the run
//	difftest speed [--dralloc BIN] [--seed N] [--cases K]
//	    the same generated inputs through both, timed: decisions and evaluations a second
//	difftest summary STATS.json...
//	    several campaigns' --stats files added up (summary.go)
//
// See ../README.md for what the generator covers.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/dynamic-resource-allocation/structured"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: difftest cases|run|dump|speed|summary [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	bin := fs.String("dralloc", "build/dralloc", "the dralloc binary")
	seed := fs.Int64("seed", 1, "random seed")
	cases := fs.Int("cases", 1000, "allocator cases")
	celCases := fs.Int("cel-cases", -1, "CEL cases (default: --cases)")
	out := fs.String("out", "build-upstream/mismatches", "where shrunk mismatches are written")
	stats := fs.String("stats", "", "write the generator's coverage counts (JSON) here")
	workers := fs.Int("workers", 2, "parallel dralloc processes")
	tolerate := fs.String("tolerate", "", "CEL mismatch fields counted but not failing the run (comma-separated: \"error text,estimated cost\"); each is listed in tests/cel-divergences.md")
	variants := fs.String("variants", "incubating,experimental", "allocator variants NewAllocator may pick (auto: all; see ../README.md)")
	_ = fs.Parse(os.Args[2:])
	if *variants != "auto" {
		structured.EnableAllocators(strings.Split(*variants, ",")...)
	}
	if *celCases < 0 {
		*celCases = *cases
	}
	var rc int
	switch os.Args[1] {
	case "cases":
		rc = runCases(*bin, fs.Args())
	case "run":
		rc = runCampaign(*bin, *seed, *cases, *celCases, *out, *stats, *workers, *tolerate)
	case "dump":
		rc = runDump(*seed, *cases, *out)
	case "speed":
		rc = runSpeed(*bin, *seed, *cases, *celCases)
	case "summary":
		rc = runSummary(fs.Args())
	default:
		fmt.Fprintln(os.Stderr, "usage: difftest cases|run|dump|speed|summary [flags]")
		rc = 2
	}
	os.Exit(rc)
}
