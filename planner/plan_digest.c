/* plan_digest.c — digests of what a plan was made from (planner.h plan_digest_*), so
 * `plan merge` can tell shards of one run from shards of another: the bytes of every
 * input file (a directory's *.yaml, *.yml, *.json in name order, as they are loaded),
 * and any text (options, live objects) folded in, each with its length so that moving
 * bytes between two parts changes the digest. 64 bits of xxHash per part, chained. */
#include "planner/planner.h"

#include "base/hash.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t plan_digest_text(uint64_t h, const char *s, size_t n) {
    return hash_u64(h ^ hash_u64(n + 0x9E3779B97F4A7C15ull) ^ hash_bytes(s, n));
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool plan_digest_path(uint64_t *h, const char *path, err *e) {
    struct stat sb;
    if (stat(path, &sb)) return err_set(e, "%s: no such file or directory", path);
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return err_set(e, "%s: cannot read the directory", path);
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *de; (de = readdir(d));) {
            if (!has_suffix(de->d_name, ".yaml") && !has_suffix(de->d_name, ".yml") && !has_suffix(de->d_name, ".json"))
                continue;
            names = xrealloc(names, (n + 1) * sizeof *names);
            size_t len = strlen(path) + strlen(de->d_name) + 2;
            names[n] = xmalloc(len);
            snprintf(names[n++], len, "%s/%s", path, de->d_name);
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp_str);
        bool ok = true;
        for (size_t i = 0; i < n; i++) {
            if (ok) ok = plan_digest_path(h, names[i], e);
            free(names[i]);
        }
        free(names);
        return ok;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, "%s: cannot open", path);
    char *buf = xmalloc(1 << 20);
    uint64_t part = 0x6469676573740000ull;
    size_t total = 0;
    for (size_t r; (r = fread(buf, 1, 1 << 20, f)) > 0; total += r) part = hash_u64(part ^ hash_bytes(buf, r));
    bool bad = ferror(f);
    fclose(f);
    free(buf);
    if (bad) return err_set(e, "%s: read error", path);
    *h = hash_u64(*h ^ part ^ hash_u64(total));
    return true;
}
