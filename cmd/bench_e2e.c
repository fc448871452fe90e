/* bench_e2e.c — `dralloc bench e2e [options]`: the end-to-end benchmark on a real
 * Kubernetes control plane (issue #39). The workload, the cluster and the two
 * kube-scheduler configurations live in the source tree (bench/e2e/run.sh, the Go load
 * generator bench/e2e and tests/e2e/cluster.sh with the upstream binaries `make
 * e2e-build` makes), so this command only finds that script and runs it in place of
 * itself: its options, output and exit status are the script's (last line
 * `e2e 5000pods_500nodes: in-tree X pods/s, dralloc Y pods/s (Y/X = R)`).
 *
 * Where the script is: $DRALLOC_SOURCE_DIR when set, else the tree the binary was built
 * from (DRALLOC_BUILD_SOURCE_DIR, set by CMake), else ../ of the binary's directory.
 * A binary without its source tree (the container image) says so and exits 2. */
#include "cmd/commands.h"

#include "base/base.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DRALLOC_BUILD_SOURCE_DIR
#define DRALLOC_BUILD_SOURCE_DIR ""
#endif

#define BENCH_E2E_SCRIPT "/bench/e2e/run.sh"

/* Writes DIR/bench/e2e/run.sh into out when that file is executable. */
static bool e2e_script_in(const char *dir, char *out, size_t n) {
    if (!dir || !*dir) return false;
    int w = snprintf(out, n, "%s%s", dir, BENCH_E2E_SCRIPT);
    return w > 0 && (size_t)w < n && access(out, X_OK) == 0;
}

/* The binary's own directory's parent (build-release/dralloc -> the checkout). */
static bool e2e_script_near_binary(char *out, size_t n) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return false;
    exe[len] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash) return false;
        *slash = '\0';
    }
    return e2e_script_in(exe, out, n);
}

int cmd_bench_e2e(int argc, char **argv) {
    char script[PATH_MAX];
    const char *env = getenv("DRALLOC_SOURCE_DIR");
    bool found = env ? e2e_script_in(env, script, sizeof script)
                     : e2e_script_in(DRALLOC_BUILD_SOURCE_DIR, script, sizeof script) ||
                           e2e_script_near_binary(script, sizeof script);
    if (!found) {
        fprintf(stderr,
                "dralloc bench e2e: bench/e2e/run.sh not found (%s%s); the end-to-end benchmark runs from a "
                "source checkout: set DRALLOC_SOURCE_DIR to it\n",
                env ? "DRALLOC_SOURCE_DIR=" : "built from ", env ? env : DRALLOC_BUILD_SOURCE_DIR);
        return 2;
    }
    /* argv[0] is "e2e": the script sees the options only */
    char **args = xcalloc((size_t)argc + 1, sizeof *args);
    if (!args) {
        fprintf(stderr, "dralloc bench e2e: out of memory\n");
        return 1;
    }
    args[0] = script;
    for (int i = 1; i < argc; i++) args[i] = argv[i];
    fflush(NULL);
    execv(script, args);
    perror("dralloc bench e2e: exec bench/e2e/run.sh");
    free(args);
    return 1;
}
