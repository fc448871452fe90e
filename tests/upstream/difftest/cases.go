package main

// cases.go: `difftest cases`: conformance cases through the oracle and dralloc.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"dralloc.dev/upstream/oracle"
)

func caseFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		m, _ := filepath.Glob(filepath.Join(a, "*.json"))
		sort.Strings(m)
		files = append(files, m...)
	}
	return files, nil
}

func runCases(bin string, args []string) int {
	files, err := caseFiles(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		return 2
	}
	dr := newLineProc(bin, "allocate", "--fixture", "-")
	defer dr.close()
	var nOK, nOracleExp, nDiff, nSkip, nInvalid int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "difftest:", err)
			return 2
		}
		var c oracle.Case
		var meta struct {
			Compare    json.RawMessage `json:"compare"`
			APIInvalid string          `json:"apiInvalid"`
		}
		if json.Unmarshal(raw, &c) != nil || json.Unmarshal(raw, &meta) != nil {
			fmt.Printf("%s: not a case\n", f)
			nSkip++
			continue
		}
		if meta.APIInvalid != "" {
			// the API server rejects this claim (the case says with which error):
			// upstream's allocator never sees it, so there is nothing to compare
			nInvalid++
			continue
		}
		got, err := oracle.RunCase(context.Background(), raw, 10*time.Second)
		if errors.Is(err, oracle.ErrUnsupported) {
			nSkip++
			continue
		}
		if err != nil {
			fmt.Printf("%s: oracle: %v\n", filepath.Base(f), err)
			nOracleExp++
			continue
		}
		ob, _ := json.Marshal(got)
		bad := false
		if len(c.Expect) > 0 {
			if why := oracle.MatchExpect(c.Expect, meta.Compare, ob); why != "" {
				fmt.Printf("%s: oracle vs expectation: %s\n", filepath.Base(f), why)
				nOracleExp++
				bad = true
			}
		}
		var line bytes.Buffer
		_ = json.Compact(&line, raw)
		db, err := dr.ask(line.Bytes())
		if err != nil {
			fmt.Printf("%s: dralloc: %v\n", filepath.Base(f), err)
			nDiff++
			continue
		}
		on, _ := oracle.Normalize(ob)
		dn, derr := oracle.Normalize(db)
		if derr != nil || on != dn {
			fmt.Printf("%s: dralloc vs oracle:\n  oracle:  %s\n  dralloc: %s\n", filepath.Base(f), truncateStr(on, 1500), truncateStr(dn, 1500))
			nDiff++
			bad = true
		}
		if !bad {
			nOK++
		}
	}
	fmt.Printf("cases: %d, oracle = expectation and dralloc = oracle on %d; oracle ≠ expectation %d; dralloc ≠ oracle %d; "+
		"not for the oracle (whole pods, older API versions) %d; invalid for the API server %d\n",
		len(files), nOK, nOracleExp, nDiff, nSkip, nInvalid)
	if nOracleExp+nDiff > 0 {
		return 1
	}
	return 0
}

var _ = strings.Contains
