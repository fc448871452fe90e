/* conformance.h — the runner of the shared conformance corpora
 * (build/dralloc-conformance, contract in ../shared/conformance/README.md).
 * Each corpus has its own runner file; each prints one line per failure (name and
 * why), then a last line "N passed, M failed", and returns non-zero on failure. */
#ifndef DRA_CONFORMANCE_H
#define DRA_CONFORMANCE_H

/* dralloc-conformance allocator FILE_OR_DIR... (argv[0] is "allocator") */
int conf_allocator(int argc, char **argv) __attribute__((weak));
/* dralloc-conformance cel [--tag TAG]... FILE_OR_DIR... (argv[0] is "cel") */
int conf_cel(int argc, char **argv) __attribute__((weak));

#endif
