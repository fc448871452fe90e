/* alloc_runner.c — `dralloc-conformance allocator FILE_OR_DIR...`: runs every
 * allocator case through the engine (dra_fixture_run) and compares as Kubernetes'
 * tests do (../shared/conformance/allocator/README.md):
 *   - allocations: ConsistOf over the claims' results; per allocation either the
 *     unordered matcher (results as a multiset, config absent, nodeSelector compared
 *     ignoring the order of terms, requirements and values) or exact deep equality;
 *     shareID compared by presence, quantities by value;
 *   - unsatisfiable: no allocation and no error;
 *   - error: the actual error text contains the expected text.
 * Prints one line per failure, then "N passed, M failed". */
#include "tests/conformance/conformance.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"

static const char *const FIXED_SHARE = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";

static void canon_qty(json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    const char *s = json_string_value(v);
    if (!s) return;
    quantity q;
    err e;
    err_clear(&e);
    if (!quantity_parse(s, strlen(s), &q, &e)) return;
    char buf[QUANTITY_STR_MAX];
    quantity_format(&q, buf, sizeof buf);
    json_object_set_new(obj, key, json_string(buf));
}

/* shareID → fixed value, consumedCapacity quantities → canonical text. */
static void normalize_result(json_t *r) {
    if (json_object_get(r, "shareID")) json_object_set_new(r, "shareID", json_string(FIXED_SHARE));
    json_t *cc = json_object_get(r, "consumedCapacity");
    if (json_is_object(cc)) {
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(cc, tmp, k, v) canon_qty(cc, k);
    }
}

static int cmp_dump(const void *a, const void *b) {
    char *x = json_dumps(*(json_t *const *)a, JSON_COMPACT | JSON_SORT_KEYS);
    char *y = json_dumps(*(json_t *const *)b, JSON_COMPACT | JSON_SORT_KEYS);
    int r = strcmp(x ? x : "", y ? y : "");
    free(x);
    free(y);
    return r;
}

static void sort_array(json_t *arr) {
    size_t n = json_array_size(arr);
    if (n < 2) return;
    json_t **items = malloc(n * sizeof *items);
    for (size_t i = 0; i < n; i++) items[i] = json_incref(json_array_get(arr, i));
    qsort(items, n, sizeof *items, cmp_dump);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, items[i]);
    free(items);
}

static void normalize_selector_unordered(json_t *ns) {
    json_t *terms = json_object_get(ns, "nodeSelectorTerms");
    for (size_t i = 0; i < json_array_size(terms); i++) {
        json_t *t = json_array_get(terms, i);
        static const char *const keys[] = {"matchExpressions", "matchFields"};
        for (int k = 0; k < 2; k++) {
            json_t *reqs = json_object_get(t, keys[k]);
            for (size_t j = 0; j < json_array_size(reqs); j++) sort_array(json_object_get(json_array_get(reqs, j), "values"));
            sort_array(reqs);
        }
    }
    sort_array(terms);
}

static void normalize_alloc(json_t *a, bool unordered) {
    json_t *devs = json_object_get(a, "devices");
    json_t *res = json_object_get(devs, "results");
    for (size_t i = 0; i < json_array_size(res); i++) normalize_result(json_array_get(res, i));
    if (unordered) {
        sort_array(res);
        json_t *ns = json_object_get(a, "nodeSelector");
        if (ns) normalize_selector_unordered(ns);
    }
    json_object_del(a, "allocationTimestamp");
}

static bool alloc_matches(const json_t *expected, const json_t *actual, bool unordered) {
    json_t *e = json_deep_copy(expected), *a = json_deep_copy(actual);
    normalize_alloc(e, unordered);
    normalize_alloc(a, unordered);
    if (unordered) {
        /* the matcher requires config to be absent */
        json_t *ad = json_object_get(a, "devices");
        json_t *cfg = json_object_get(ad, "config");
        if (cfg && json_array_size(cfg) > 0) {
            json_decref(e);
            json_decref(a);
            return false;
        }
        json_object_del(json_object_get(e, "devices"), "config");
        json_object_del(ad, "config");
    }
    bool ok = json_equal(e, a);
    json_decref(e);
    json_decref(a);
    return ok;
}

static bool compare(const json_t *c, const json_t *got, char *why, size_t n) {
    const json_t *exp = json_object_get(c, "expect");
    const json_t *err = json_object_get(got, "error");
    if (json_object_get(exp, "error")) {
        const char *want = json_string_value(json_object_get(exp, "error"));
        if (!err) {
            snprintf(why, n, "want error containing \"%s\", got %s", want,
                     json_object_get(got, "unsatisfiable") ? "unsatisfiable" : "allocations");
            return false;
        }
        if (!strstr(json_string_value(err), want)) {
            snprintf(why, n, "want error containing \"%s\", got \"%s\"", want, json_string_value(err));
            return false;
        }
        return true;
    }
    if (err) {
        snprintf(why, n, "unexpected error: %s", json_string_value(err));
        return false;
    }
    if (json_is_true(json_object_get(exp, "unsatisfiable"))) {
        if (!json_object_get(got, "unsatisfiable")) {
            char *s = json_dumps(json_object_get(got, "allocations"), JSON_COMPACT);
            snprintf(why, n, "want unsatisfiable, got allocations %s", s ? s : "");
            free(s);
            return false;
        }
        return true;
    }
    const json_t *want = json_object_get(exp, "allocations");
    const json_t *have = json_object_get(got, "allocations");
    if (!have) {
        snprintf(why, n, "want allocations, got unsatisfiable");
        return false;
    }
    size_t ne = json_array_size(want), na = json_array_size(have);
    if (ne != na) {
        snprintf(why, n, "want %zu allocations, got %zu", ne, na);
        return false;
    }
    const json_t *flags = json_object_get(json_object_get(c, "compare"), "resultsUnorderedPerAllocation");
    bool *used = calloc(na + 1, 1);
    bool ok = true;
    for (size_t i = 0; i < ne && ok; i++) {
        bool unordered = json_is_true(json_array_get(flags, i));
        size_t j;
        /* claim order first (the allocator keeps it), then any unused one (ConsistOf) */
        if (!used[i] && alloc_matches(json_array_get(want, i), json_array_get(have, i), unordered)) j = i;
        else {
            for (j = 0; j < na; j++)
                if (!used[j] && alloc_matches(json_array_get(want, i), json_array_get(have, j), unordered)) break;
        }
        if (j == na) {
            char *ws = json_dumps(json_array_get(want, i), JSON_COMPACT | JSON_SORT_KEYS);
            char *hs = json_dumps(json_array_get(have, i), JSON_COMPACT | JSON_SORT_KEYS);
            snprintf(why, n, "allocation %zu: want %s, got %s", i, ws ? ws : "", hs ? hs : "");
            free(ws);
            free(hs);
            ok = false;
        } else {
            used[j] = true;
        }
    }
    free(used);
    return ok;
}

typedef struct counts {
    int passed, failed;
} counts;

static void run_file(const char *path, counts *k) {
    json_error_t je;
    json_t *c = json_load_file(path, 0, &je);
    if (!c) {
        printf("%s: cannot load: %s\n", path, je.text);
        k->failed++;
        return;
    }
    const char *name = json_string_value(json_object_get(c, "name"));
    if (!name) name = path;
    err e;
    err_clear(&e);
    json_t *got = dra_fixture_run(c, &e);
    char why[4096];
    if (!got) {
        char buf[2048];
        printf("%s: malformed case: %s\n", name, err_format(&e, buf, sizeof buf));
        k->failed++;
    } else if (!compare(c, got, why, sizeof why)) {
        printf("%s: %s\n", name, why);
        k->failed++;
    } else {
        k->passed++;
    }
    json_decref(got);
    json_decref(c);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_path(const char *path, counts *k) {
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("%s: no such file or directory\n", path);
        k->failed++;
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path, k);
        return;
    }
    DIR *d = opendir(path);
    if (!d) return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l < 5 || strcmp(de->d_name + l - 5, ".json")) continue;
        if (n == cap) names = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
        names[n] = malloc(strlen(path) + l + 2);
        sprintf(names[n++], "%s/%s", path, de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        run_file(names[i], k);
        free(names[i]);
    }
    free(names);
}

int conf_allocator(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dralloc-conformance allocator FILE_OR_DIR...\n");
        return 2;
    }
    counts k = {0, 0};
    for (int i = 1; i < argc; i++) run_path(argv[i], &k);
    printf("%d passed, %d failed\n", k.passed, k.failed);
    return k.failed ? 1 : 0;
}
