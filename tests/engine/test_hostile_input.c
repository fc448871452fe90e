/* test_hostile_input.c — input built to hurt: 10,000-deep JSON and YAML, a YAML
 * billion-laughs document, a 50 MB JSON body. Each gives a clear error naming the file
 * (or loads), in bounded time and memory, instead of a stack overflow or an
 * exponential walk. Found by and shared with the fuzz harnesses (tests/fuzz/). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/decode/decode.h"
#include "engine/engine.h"
#include "tests/engine/helpers.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes text to a temporary file with the given suffix and loads it into w. */
static bool load_text(th_store *ws, const char *text, size_t n, const char *suffix, err *e) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/dralloc-hostile-XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_eq(fwrite(text, 1, n, f), n);
    fclose(f);
    bool ok = th_load(ws, path, e);
    remove(path);
    return ok;
}

static char *repeat(const char *head, const char *open, int n, const char *mid, const char *close, const char *tail) {
    size_t len = strlen(head) + n * (strlen(open) + strlen(close)) + strlen(mid) + strlen(tail) + 1;
    char *s = malloc(len), *p = s;
    p = stpcpy(p, head);
    for (int i = 0; i < n; i++) p = stpcpy(p, open);
    p = stpcpy(p, mid);
    for (int i = 0; i < n; i++) p = stpcpy(p, close);
    stpcpy(p, tail);
    return s;
}

Test(hostile, json_10000_deep_is_an_error) {
    char *s = repeat("{\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"a\"},\"x\":", "[", 10000, "1", "]", "}");
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert_not(load_text(ws, s, strlen(s), ".json", &e));
    cr_assert(strstr(e.msg, "JSON: maximum parsing depth reached"), "%s", e.msg);
    th_free(ws);
    free(s);
}

Test(hostile, yaml_10000_deep_is_an_error) {
    /* flow collections inside a block mapping, and a block mapping nested by indentation */
    char *s = repeat("kind: ResourceClaim\nmetadata: {name: a}\nx: ", "{a: [", 5000, "1", "]}", "\n");
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(s, strlen(s), "deep.yaml", &e);
    cr_assert_null(docs);
    cr_assert_str_eq(e.object, "deep.yaml");
    cr_assert(strstr(e.msg, "YAML: nesting deeper than 1000 levels (line 3)"), "%s", e.msg);
    free(s);

    size_t cap = 10000 * 10000 / 2 + 10000 * 16, n = 0;
    char *b = malloc(cap);
    n += (size_t)sprintf(b, "kind: ResourceClaim\n");
    for (int i = 0; i < 10000; i++) n += (size_t)sprintf(b + n, "%*sa:\n", i, "");
    err_clear(&e);
    docs = dra__yaml_load(b, n, "deep.yaml", &e);
    cr_assert_null(docs);
    cr_assert(strstr(e.msg, "YAML: nesting deeper than 1000 levels"), "%s", e.msg);
    free(b);

    /* 1000 levels is still fine */
    s = repeat("x: ", "[", 999, "1", "]", "\n");
    err_clear(&e);
    docs = dra__yaml_load(s, strlen(s), "ok.yaml", &e);
    cr_assert_not_null(docs, "%s", e.msg);
    json_decref(docs);
    free(s);
}

/* Ten lists of ten aliases, nine levels: 10^9 "lol"s if anyone expands it (printing
 * the claim back did). go-yaml refuses it the same way. */
Test(hostile, yaml_billion_laughs_is_an_error) {
    char text[2048];
    int n = sprintf(text, "kind: ResourceClaim\nmetadata: {name: a, namespace: ns}\n"
                          "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (int i = 1; i < 10; i++) {
        n += sprintf(text + n, "a%d: &a%d [", i, i);
        for (int k = 0; k < 10; k++) n += sprintf(text + n, "%s*a%d", k ? ", " : "", i - 1);
        n += sprintf(text + n, "]\n");
    }
    double t0 = now();
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert_not(load_text(ws, text, (size_t)n, ".yaml", &e));
    cr_assert(strstr(e.msg, "YAML: document contains excessive aliasing (line "), "%s", e.msg);
    cr_assert_lt(now() - t0, 5.0);
    th_free(ws);
}

/* Anchors used as real files use them (a shared selector, merge keys) still load. */
Test(hostile, yaml_aliases_in_moderation_load) {
    const char *text = "kind: List\napiVersion: v1\n"
                       "x: &sel [{cel: {expression: 'device.driver == \"d\"'}}]\n"
                       "base: &base {apiVersion: resource.k8s.io/v1, kind: DeviceClass}\n"
                       "items:\n"
                       "- <<: *base\n  metadata: {name: a}\n  spec: {selectors: *sel}\n"
                       "- <<: *base\n  metadata: {name: b}\n  spec: {selectors: *sel}\n";
    err e;
    err_clear(&e);
    json_t *docs = dra__yaml_load(text, strlen(text), "ok.yaml", &e);
    cr_assert_not_null(docs, "%s", e.msg);
    th_store *ws = th_new(false);
    cr_assert(th_add(ws, docs, &e), "%s", e.msg);
    json_decref(docs);
    th_free(ws);
}

/* 50 MB: loads (or fails with a parse error naming the file) within seconds. */
Test(hostile, json_50mb_body) {
    size_t big = 50u << 20;
    char *s = malloc(big + 256);
    int h = sprintf(s, "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"a\","
                       "\"namespace\":\"ns\",\"annotations\":{\"x\":\"");
    memset(s + h, 'a', big);
    size_t n = (size_t)h + big;
    n += (size_t)sprintf(s + n, "\"}},\"spec\":{}}");
    double t0 = now();
    th_store *ws = th_new(false);
    err e;
    err_clear(&e);
    cr_assert(load_text(ws, s, n, ".json", &e), "%s", e.msg);
    const dra_world *w = th_world(ws);
    cr_assert_not_null(dra_world_find_claim(w, "ns", "a"));
    th_free(ws);

    /* the same body cut short */
    ws = th_new(false);
    err_clear(&e);
    cr_assert_not(load_text(ws, s, n - 5, ".json", &e));
    cr_assert(strstr(e.msg, "JSON: "), "%s", e.msg);
    cr_assert(strstr(e.object, ".json"), "%s", e.object);
    th_free(ws);
    cr_assert_lt(now() - t0, 60.0);
    free(s);
}
