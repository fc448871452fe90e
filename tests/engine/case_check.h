/* case_check.h — shared by test_derived.c, test_extres.c, test_podgroup.c and
 * test_explain.c: run every case of a testdata/ folder through dra_fixture_run and
 * check the outcome against "expect" — error (substring), unsatisfiable (+ "reason"
 * substring), for either an "explanation" substring or list of substrings,
 * allocations (per claim, the results as a multiset of request/driver/pool/device,
 * and the nodeSelector when expected), and for pod cases the names of the claims
 * allocated ("claims"), the claims reused ("reused") and the device-plugin counts
 * ("devicePlugin"). Every failing case is reported, then the test fails. */
#ifndef DRALLOC_TESTS_CASE_CHECK_H
#define DRALLOC_TESTS_CASE_CHECK_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/engine/helpers.h"

static inline char *cc_result_key(const json_t *r) {
    char *s = malloc(1024);
    snprintf(s, 1024, "%s|%s|%s|%s", json_string_value(json_object_get(r, "request")),
             json_string_value(json_object_get(r, "driver")), json_string_value(json_object_get(r, "pool")),
             json_string_value(json_object_get(r, "device")));
    return s;
}

static inline int cc_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The results of an AllocationResult as one sorted, '\n'-joined string. */
static inline char *cc_results(const json_t *alloc) {
    const json_t *res = json_object_get(json_object_get(alloc, "devices"), "results");
    size_t n = json_array_size(res);
    char **keys = calloc(n + 1, sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i] = cc_result_key(json_array_get(res, i));
    qsort(keys, n, sizeof *keys, cc_cmp);
    char *out = calloc(1, n * 1024 + 1);
    for (size_t i = 0; i < n; i++) {
        strcat(out, keys[i]);
        strcat(out, "\n");
        free(keys[i]);
    }
    free(keys);
    return out;
}

static inline bool cc_claim_names_match(const json_t *want, const json_t *claims, char *why, size_t n) {
    if (json_array_size(want) != json_array_size(claims)) {
        snprintf(why, n, "want %zu claims, got %zu", json_array_size(want), json_array_size(claims));
        return false;
    }
    for (size_t i = 0; i < json_array_size(want); i++) {
        const json_t *m = json_object_get(json_array_get(claims, i), "metadata");
        /* a generated name (random suffix) is compared by its GenerateName, less the hyphen */
        const char *gen = json_string_value(json_object_get(m, "generateName"));
        size_t glen = gen ? strlen(gen) : 0;
        char got[512];
        if (gen) snprintf(got, sizeof got, "%s/%.*s", json_string_value(json_object_get(m, "namespace")) ?: "default",
                          (int)(glen && gen[glen - 1] == '-' ? glen - 1 : glen), gen);
        else snprintf(got, sizeof got, "%s/%s", json_string_value(json_object_get(m, "namespace")) ?: "default",
                      json_string_value(json_object_get(m, "name")));
        if (strcmp(got, json_string_value(json_array_get(want, i)))) {
            snprintf(why, n, "claim %zu: want %s, got %s", i, json_string_value(json_array_get(want, i)), got);
            return false;
        }
    }
    return true;
}

/* "explanation": one substring or a list of them, each in the outcome's explanation. */
static inline bool cc_explanation(const json_t *exp, const json_t *got, char *why, size_t n) {
    const json_t *want = json_object_get(exp, "explanation");
    const char *have = json_string_value(json_object_get(got, "explanation"));
    for (size_t i = 0; want && i < (json_is_array(want) ? json_array_size(want) : 1); i++) {
        const char *w = json_string_value(json_is_array(want) ? json_array_get(want, i) : want);
        if (w && (!have || !strstr(have, w))) {
            snprintf(why, n, "want explanation containing \"%s\", got \"%s\"", w, have ? have : "");
            return false;
        }
    }
    return true;
}

static inline bool cc_check(const json_t *c, const json_t *got, char *why, size_t n) {
    const json_t *exp = json_object_get(c, "expect");
    const char *err = json_string_value(json_object_get(got, "error"));
    const char *want_err = json_string_value(json_object_get(exp, "error"));
    if (want_err) {
        if (!err || !strstr(err, want_err)) {
            snprintf(why, n, "want error containing \"%s\", got %s", want_err, err ? err : "no error");
            return false;
        }
        return cc_explanation(exp, got, why, n);
    }
    if (err) {
        snprintf(why, n, "unexpected error: %s", err);
        return false;
    }
    if (json_is_true(json_object_get(exp, "unsatisfiable"))) {
        if (!json_is_true(json_object_get(got, "unsatisfiable"))) {
            snprintf(why, n, "want unsatisfiable");
            return false;
        }
        const char *reason = json_string_value(json_object_get(exp, "reason"));
        const char *have = json_string_value(json_object_get(got, "reason"));
        if (reason && (!have || !strstr(have, reason))) {
            snprintf(why, n, "want reason containing \"%s\", got \"%s\"", reason, have ? have : "");
            return false;
        }
        return cc_explanation(exp, got, why, n);
    }
    const json_t *want = json_object_get(exp, "allocations"), *have = json_object_get(got, "allocations");
    if (!have) {
        snprintf(why, n, "want allocations, got %s", json_object_get(got, "reason") ? json_string_value(json_object_get(got, "reason")) : "unsatisfiable");
        return false;
    }
    if (json_array_size(want) != json_array_size(have)) {
        snprintf(why, n, "want %zu allocations, got %zu", json_array_size(want), json_array_size(have));
        return false;
    }
    for (size_t i = 0; i < json_array_size(want); i++) {
        char *a = cc_results(json_array_get(want, i)), *b = cc_results(json_array_get(have, i));
        bool same = !strcmp(a, b);
        if (!same) snprintf(why, n, "allocation %zu: want\n%sgot\n%s", i, a, b);
        free(a);
        free(b);
        if (!same) return false;
        const json_t *ns = json_object_get(json_array_get(want, i), "nodeSelector");
        if (ns && !json_equal((json_t *)ns, json_object_get(json_array_get(have, i), "nodeSelector"))) {
            snprintf(why, n, "allocation %zu: nodeSelector differs", i);
            return false;
        }
    }
    const json_t *claims = json_object_get(exp, "claims");
    if (claims && !cc_claim_names_match(claims, json_object_get(got, "claims"), why, n)) return false;
    const json_t *reused = json_object_get(exp, "reused");
    if (reused && !json_equal((json_t *)reused, json_object_get(got, "reused"))) {
        snprintf(why, n, "reused claims differ");
        return false;
    }
    const json_t *dp = json_object_get(exp, "devicePlugin");
    if (dp && !json_equal((json_t *)dp, json_object_get(got, "devicePlugin"))) {
        char *s = json_dumps(json_object_get(got, "devicePlugin"), JSON_COMPACT | JSON_SORT_KEYS);
        snprintf(why, n, "devicePlugin differs: got %s", s ? s : "null");
        free(s);
        return false;
    }
    return true;
}

/* Runs every *.json case of testdata/<dir>; returns the number of cases (failures
 * are reported with cr_log_error and counted into *failed). */
static inline int cc_run_dir(const char *dir, int *failed) {
    char path[1024];
    snprintf(path, sizeof path, "%s/testdata/%s", DRALLOC_SOURCE_DIR, dir);
    DIR *d = opendir(path);
    cr_assert_not_null(d, "cannot open %s", path);
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 5, ".json")) continue;
        char file[2048];
        snprintf(file, sizeof file, "%s/%s", path, de->d_name);
        json_error_t je;
        json_t *c = json_load_file(file, 0, &je);
        cr_assert_not_null(c, "%s: %s", file, je.text);
        err e;
        err_clear(&e);
        json_t *got = dra_fixture_run(c, &e);
        char why[4096];
        count++;
        if (!got) {
            cr_log_error("%s: malformed case: %s", de->d_name, e.msg);
            (*failed)++;
        } else if (!cc_check(c, got, why, sizeof why)) {
            cr_log_error("%s: %s", de->d_name, why);
            (*failed)++;
        }
        json_decref(got);
        json_decref(c);
    }
    closedir(d);
    return count;
}

/* The testdata_cases test of each folder: at least min_cases cases (so a folder
 * that loses its files does not pass quietly), none failing. */
static inline void cc_check_dir(const char *dir, int min_cases) {
    int failed = 0;
    int n = cc_run_dir(dir, &failed);
    cr_expect_geq(n, min_cases, "testdata/%s: %d cases", dir, n);
    cr_assert_eq(failed, 0, "%d of %d testdata/%s cases failed", failed, n, dir);
}

/* Loads one case file of testdata/<dir> and runs it. */
static inline json_t *cc_run_case(const char *dir, const char *name) {
    json_t *c = th_load_case(dir, name);
    json_t *out = th_run(c);
    json_decref(c);
    return out;
}

#endif
