/* main.c — the `dralloc` binary: dispatches to one subcommand per cmd/<name>.c.
 * Exit codes: 0 success, 1 the operation failed (e.g. unsatisfiable, CEL error),
 * 2 usage or input error. */
#include "cmd/commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define DRALLOC_VERSION "0.1.0"

/* jemalloc's compiled-in options (read by jemalloc at start-up; MALLOC_CONF in the
 * environment still overrides them): its own defaults, stated. What dralloc frees is
 * mostly the transient part — the trees of a list's items, request arenas — and it is
 * allocated again within moments, so jemalloc keeps freed pages for 10 s before giving
 * them back. Giving them back within 200 ms instead (this setting until 2026-12-06)
 * cut `bench mig_5000nodes`' peak by ~60 MiB but doubled the service's start-up read of
 * a big cluster, each batch's trees faulted in again after the last one's were given
 * back (a fresh page costs ~10 µs on this VM): `dralloc bench relist` (5,000 MIG-carved
 * nodes from LIST pages) 14.2–16.2 s with 200 ms, 7.3–10.7 s with 10 s (bench/README.md);
 * `bench mig_5000nodes --build-only` 2.69–3.55 s and 560 MiB peak against 2.43–2.74 s
 * and 610–618 MiB; a 10,000-node `plan -f` 5.0–5.2 s against 4.8–4.9 s, 519 MB both.
 * Without jemalloc (the sanitizer builds) the symbol is unused. */
extern const char *malloc_conf;
const char *malloc_conf = "dirty_decay_ms:10000,muzzy_decay_ms:0";

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"version", cmd_version, "print the version"},
    {"allocate", cmd_allocate, "allocate ResourceClaims for a node (or run a conformance --fixture)"},
    {"bench", cmd_bench, "run a benchmark workload (cel: CEL selectors E1..E5; alloc: allocation latency)"},
    {"cel", cmd_cel, "evaluate a CEL expression on a device (cel eval EXPR --slice FILE --device NAME)"},
    {"plan", cmd_plan, "offline capacity planning: place workload replicas on a snapshot (what-ifs, min nodes)"},
    {"capacity", cmd_capacity, "allocated, allocatable now and blocked devices per node, pool, DeviceClass, shape or counter"},
    {"why", cmd_why, "why a pod is pending: the count by cause over every node and the closest nodes' explanation"},
    {"serve", cmd_serve, "run the kube-scheduler HTTP extender (/filter, /prioritize, /metrics, ...)"},
};

static void usage(FILE *f) {
    fprintf(f,
            "dralloc — a fast, exact Kubernetes DRA allocator\n\n"
            "usage: dralloc <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`dralloc <command> --help` describes each command.\n");
}

int cmd_version(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("dralloc %s\n", DRALLOC_VERSION);
    return 0;
}

/* Installed as kubectl-dra, the binary is a kubectl plugin: kubectl runs it with the
 * words after `kubectl dra` (`kubectl dra why POD -n NS` → argv = [kubectl-dra, why,
 * POD, -n, NS]), the same subcommands as dralloc's. */
static bool is_kubectl_plugin(const char *argv0) {
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    return !strcmp(base, "kubectl-dra");
}

#if defined(__SANITIZE_ADDRESS__)
/* In the sanitizer build (build/: what the tests and a developer's `make test` run),
 * ASan's quarantine holds up to 256 MiB of freed memory back to catch a use after
 * free, which a `serve` that runs for a while shows as RSS that only grows (55 KiB a
 * round of create/filter/delete) though nothing leaks: 16 MiB still catches the uses
 * soon after a free the tests exercise, and RSS then follows what the service keeps
 * (0.2 KiB a round), as in the release build. ASAN_OPTIONS overrides it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=16"; }
#endif

/* `kubectl dra`, `kubectl dra --help`: the plugin's help in kubectl's own layout
 * (cobra's: a sentence, Usage, Available Commands, Flags, the closing hint), with the
 * flags kubectl users pass to every command. */
static void plugin_usage(FILE *f) {
    fprintf(f, "Why DRA pods are pending and which devices are allocatable now, from dralloc (the cluster of your\n"
               "kubeconfig, read once).\n\n"
               "Usage:\n  kubectl dra [command]\n\n"
               "Examples:\n"
               "  # why a pending pod does not fit: the count by cause, the closest nodes explained\n"
               "  kubectl dra why my-pod -n ml\n\n"
               "  # every pending pod that uses DRA, in every namespace: one line each\n"
               "  kubectl dra why -A\n\n"
               "  # allocated, allocatable now and blocked devices per DeviceClass\n"
               "  kubectl dra capacity --by class\n\n"
               "Available Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, "serve") && strcmp(commands[i].name, "bench"))
            fprintf(f, "  %-11s %c%s\n", commands[i].name, commands[i].summary[0] & ~0x20, commands[i].summary + 1);
    fprintf(f, "\nFlags:\n"
               "      --context string      The name of the kubeconfig context to use\n"
               "  -h, --help                help for dra\n"
               "      --kubeconfig string   Path to the kubeconfig file to use for CLI requests.\n"
               "  -A, --all-namespaces      why: every pending DRA pod, in every namespace\n"
               "  -n, --namespace string    If present, the namespace scope for this CLI request (why)\n"
               "  -o, --output string       Output format: text|json (why), table|json|csv (capacity)\n\n"
               "Use \"kubectl dra [command] --help\" for more information about a command.\n");
}

int main(int argc, char **argv) {
    if (argc >= 1 && is_kubectl_plugin(argv[0]) &&
        (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
        plugin_usage(stdout);
        return 0;
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "dralloc: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
