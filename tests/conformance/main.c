/* main.c — dispatch for build/dralloc-conformance. The runners are weak symbols so
 * the binary builds while a corpus' runner does not exist yet; asking for a missing
 * runner is an error, never a silent pass. */
#include "tests/conformance/conformance.h"

#include <stdio.h>
#include <string.h>

static int usage(void) {
    fprintf(stderr,
            "usage: dralloc-conformance allocator FILE_OR_DIR...\n"
            "       dralloc-conformance cel [--tag TAG]... FILE_OR_DIR...\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage();
    int (*run)(int, char **) = NULL;
    if (!strcmp(argv[1], "allocator")) run = conf_allocator;
    else if (!strcmp(argv[1], "cel")) run = conf_cel;
    else return usage();
    if (!run) {
        fprintf(stderr, "dralloc-conformance: the %s runner is not built into this binary\n", argv[1]);
        return 2;
    }
    return run(argc - 1, argv + 1);
}
