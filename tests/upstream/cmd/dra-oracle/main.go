// dra-oracle runs Kubernetes' own DRA allocator and CEL compiler
// (k8s.io/dynamic-resource-allocation v0.37.2) on the inputs dralloc takes, and prints
// what the matching dralloc command prints:
//
//	dra-oracle allocate --fixture CASE.json [--timeout 10s] [--variants auto|LIST]
//	    {"allocations": [...]}, {"unsatisfiable": true} or {"error": "..."}, as
//	    `dralloc allocate --fixture` (exit 0; a malformed case: stderr, exit 2; a
//	    case with a whole pod, which is the scheduler plugin's and not the
//	    allocator's: exit 3). --variants: auto (default) lets NewAllocator pick
//	    among stable, incubating and experimental as kube-scheduler does; a list
//	    ("incubating,experimental") restricts the pick (structured.EnableAllocators)
//	dra-oracle cel eval EXPR --device-json FILE
//	    the keys of `dralloc cel eval -o json` (exit 0 value, 1 error, 2 usage)
//
// Test tooling beside the product: see tests/upstream/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/dynamic-resource-allocation/structured"

	"dralloc.dev/upstream/oracle"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: dra-oracle allocate --fixture CASE.json [--timeout DURATION]\n"+
		"       dra-oracle cel eval EXPR --device-json FILE")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "allocate":
		allocate(os.Args[2:])
	case "cel":
		if len(os.Args) < 3 || os.Args[2] != "eval" {
			usage()
		}
		celEval(os.Args[3:])
	default:
		usage()
	}
}

func allocate(args []string) {
	var fixture string
	timeout := 10 * time.Second // kube-scheduler's filterTimeout
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--fixture" && i+1 < len(args):
			i++
			fixture = args[i]
		case args[i] == "--variants" && i+1 < len(args):
			i++
			if args[i] != "auto" {
				structured.EnableAllocators(strings.Split(args[i], ",")...)
			}
		case args[i] == "--timeout" && i+1 < len(args):
			i++
			d, err := time.ParseDuration(args[i])
			if err != nil {
				fmt.Fprintf(os.Stderr, "dra-oracle: --timeout: %v\n", err)
				os.Exit(2)
			}
			timeout = d
		default:
			usage()
		}
	}
	if fixture == "" {
		usage()
	}
	raw, err := os.ReadFile(fixture)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dra-oracle: %v\n", err)
		os.Exit(2)
	}
	out, err := oracle.RunCase(context.Background(), raw, timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dra-oracle: %s: %v\n", fixture, err)
		if errors.Is(err, oracle.ErrUnsupported) {
			os.Exit(3)
		}
		os.Exit(2)
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

func celEval(args []string) {
	var expr, devFile string
	haveExpr := false
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--" && i+1 < len(args) && !haveExpr:
			i++
			expr, haveExpr = args[i], true
		case args[i] == "--device-json" && i+1 < len(args):
			i++
			devFile = args[i]
		case len(args[i]) > 0 && args[i][0] != '-' && !haveExpr:
			expr, haveExpr = args[i], true
		case args[i] == "-o" && i+1 < len(args) && args[i+1] == "json":
			i++ // the only output there is
		default:
			usage()
		}
	}
	if !haveExpr || devFile == "" {
		usage()
	}
	raw, err := os.ReadFile(devFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dra-oracle: %v\n", err)
		os.Exit(2)
	}
	d, err := oracle.DecodeDevice(raw)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dra-oracle: %s: %v\n", devFile, err)
		os.Exit(2)
	}
	res := oracle.EvalCEL(context.Background(), expr, d)
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	if res.Error != "" {
		os.Exit(1)
	}
}
