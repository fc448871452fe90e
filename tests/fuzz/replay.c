/* replay.c — runs saved inputs through a fuzz harness without libFuzzer: CTest's
 * regression check over tests/fuzz/regressions/<target>/, and a way to reproduce one
 * crash under gdb or valgrind.
 *   fuzz-replay <target> <file-or-directory>...     (target: cel, decode_json, ...)
 * Exits non-zero when a target is unknown or a path cannot be read; a bad input
 * aborts in the harness or a sanitizer. */
#include "tests/fuzz/fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef int (*fuzz_fn)(const uint8_t *, size_t);

static const struct {
    const char *name;
    fuzz_fn fn;
} targets[] = {
    {"cel", fuzz_cel_one},
    {"decode_json", fuzz_decode_json_one},
    {"decode_yaml", fuzz_decode_yaml_one},
    {"fixture", fuzz_fixture_one},
    {"extender", fuzz_extender_one},
    {"watch", fuzz_watch_one},
    {"ingest", fuzz_ingest_one},
};

static int run_file(fuzz_fn fn, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz-replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    double t0 = fuzz_now();
    fn(buf, n);
    fprintf(stderr, "fuzz-replay: %s (%zu bytes) ok in %.3fs\n", path, n, fuzz_now() - t0);
    free(buf);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_path(fuzz_fn fn, const char *path, int *count) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz-replay: no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ++*count;
        return run_file(fn, path);
    }
    DIR *d = opendir(path);
    if (!d) return 1;
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
        sprintf(names[n++], "%s/%s", path, de->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= run_path(fn, names[i], count);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz-replay <cel|decode_json|decode_yaml|fixture|extender|watch> <file-or-dir>...\n");
        return 2;
    }
    fuzz_fn fn = NULL;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (!strcmp(argv[1], targets[i].name)) fn = targets[i].fn;
    if (!fn) {
        fprintf(stderr, "fuzz-replay: unknown target %s\n", argv[1]);
        return 2;
    }
    int rc = 0, count = 0;
    for (int i = 2; i < argc; i++) rc |= run_path(fn, argv[i], &count);
    fprintf(stderr, "fuzz-replay: %s: %d inputs\n", argv[1], count);
    return rc;
}
