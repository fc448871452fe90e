package main

// difftest summary STATS.json...: the campaigns of several `run --stats` files added up
// (cases, mismatches, outcomes, coverage counts, not compared), the table
// ../README.md quotes for the "one million" over campaigns. Each file is one
// run's figures as campaign.go writes them; nothing is recomputed.

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

type runStats struct {
	Seed                int64          `json:"seed"`
	AllocatorCases      int            `json:"allocatorCases"`
	AllocatorMismatches int            `json:"allocatorMismatches"`
	AllocatorOutcomes   map[string]int `json:"allocatorOutcomes"`
	CelCases            int            `json:"celCases"`
	CelMismatches       int            `json:"celMismatches"`
	CelMismatchFields   map[string]int `json:"celMismatchFields"`
	CelOutcomes         map[string]int `json:"celOutcomes"`
	Coverage            map[string]int `json:"coverage"`
	NotCompared         map[string]int `json:"notCompared"`
	Seconds             float64        `json:"seconds"`
}

func addAll(dst, src map[string]int) {
	for k, v := range src {
		dst[k] += v
	}
}

func printCounts(title string, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("%s:", title)
	for _, k := range keys {
		fmt.Printf(" %s=%d;", k, m[k])
	}
	fmt.Println()
}

func runSummary(files []string) int {
	if len(files) == 0 {
		fmt.Fprintln(os.Stderr, "usage: difftest summary STATS.json...")
		return 2
	}
	var tot runStats
	tot.AllocatorOutcomes, tot.CelMismatchFields, tot.CelOutcomes = map[string]int{}, map[string]int{}, map[string]int{}
	tot.Coverage, tot.NotCompared = map[string]int{}, map[string]int{}
	seeds := []int64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "difftest summary: %v\n", err)
			return 2
		}
		var r runStats
		if err := json.Unmarshal(b, &r); err != nil {
			fmt.Fprintf(os.Stderr, "difftest summary: %s: %v\n", f, err)
			return 2
		}
		seeds = append(seeds, r.Seed)
		tot.AllocatorCases += r.AllocatorCases
		tot.AllocatorMismatches += r.AllocatorMismatches
		tot.CelCases += r.CelCases
		tot.CelMismatches += r.CelMismatches
		tot.Seconds += r.Seconds
		addAll(tot.AllocatorOutcomes, r.AllocatorOutcomes)
		addAll(tot.CelMismatchFields, r.CelMismatchFields)
		addAll(tot.CelOutcomes, r.CelOutcomes)
		addAll(tot.Coverage, r.Coverage)
		addAll(tot.NotCompared, r.NotCompared)
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	fmt.Printf("runs: %d (seeds %v)\n", len(files), seeds)
	fmt.Printf("allocator: %d cases, %d mismatches\n", tot.AllocatorCases, tot.AllocatorMismatches)
	printCounts("allocator outcomes", tot.AllocatorOutcomes)
	printCounts("not compared", tot.NotCompared)
	fmt.Printf("CEL: %d cases, %d mismatches\n", tot.CelCases, tot.CelMismatches)
	printCounts("CEL outcomes", tot.CelOutcomes)
	printCounts("CEL mismatches by field", tot.CelMismatchFields)
	printCounts("coverage", tot.Coverage)
	fmt.Printf("seconds: %.0f\n", tot.Seconds)
	fmt.Printf("summary: %d allocator cases, %d mismatches; %d CEL cases, %d mismatches\n",
		tot.AllocatorCases, tot.AllocatorMismatches, tot.CelCases, tot.CelMismatches)
	return 0
}
