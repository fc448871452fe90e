package main

// dump.go: `difftest dump --seed N --cases K --out DIR`: the generated worlds as case
// files (to replay one with dralloc or dra-oracle by hand).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func runDump(seed int64, n int, dir string) int {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 2
	}
	for i := 0; i < n; i++ {
		w := caseGen(seed, i, stats{}).world()
		b, _ := json.MarshalIndent(w, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("world-seed%d-%d.json", seed, i)), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "difftest:", err)
			return 2
		}
	}
	return 0
}
