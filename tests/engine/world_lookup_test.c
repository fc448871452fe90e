/* world_lookup_test.c — finding a device's CEL view by name (what `dralloc cel eval
 * --slice` uses): the view evaluates like the allocator's, a slice name narrows the
 * search, unknown names give NULL. */
#include <criterion/criterion.h>
#include <string.h>

#include "cel/cel.h"
#include "engine/engine.h"
#include "tests/engine/helpers.h"

static th_store *load(const char *json) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    cr_assert(th_add_json(ws, json, &e), "%s", e.msg);
    return ws;
}

static const char *two_slices =
    "{\"kind\":\"List\",\"items\":["
    "{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"s1\"},"
    "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n1\",\"pool\":{\"name\":\"p1\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{\"model\":{\"string\":\"A\"}},"
    "\"capacity\":{\"memory\":{\"value\":\"40Gi\"}}}]}},"
    "{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"s2\"},"
    "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"n2\",\"pool\":{\"name\":\"p2\",\"generation\":1,"
    "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{\"model\":{\"string\":\"B\"}}}]}}]}";

static char *eval(const dra_world *w, const cel_device *d, const char *expr, char *buf, size_t n) {
    err e;
    err_clear(&e);
    cel_program *p = cel_compile(dra_world_cel_env(w), expr, strlen(expr), &e);
    cr_assert_not_null(p, "%s", e.msg);
    cel_eval_ctx *x = cel_eval_ctx_new();
    bool ok = cel__eval_format(p, d, x, buf, n, &e);
    cel_eval_ctx_free(x);
    cel_program_free(p);
    if (!ok) snprintf(buf, n, "error: %.200s", e.msg);   /* bounded: -Wformat-truncation in Release */
    return buf;
}

Test(world_lookup, first_slice_wins_and_slice_name_narrows) {
    th_store *ws = load(two_slices);
    const dra_world *w = th_world(ws);
    const char *driver = NULL, *pool = NULL;
    char buf[256];
    const cel_device *d = dra_world_find_device(w, NULL, "gpu-0", &driver, &pool);
    cr_assert_not_null(d);
    cr_assert_str_eq(driver, "gpu.example.com");
    cr_assert_str_eq(pool, "p1");
    cr_assert_str_eq(eval(w, d, "device.attributes[\"gpu.example.com\"].model", buf, sizeof buf), "\"A\"");
    cr_assert_str_eq(eval(w, d, "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"40Gi\")) == 0",
                          buf, sizeof buf), "true");
    d = dra_world_find_device(w, "s2", "gpu-0", NULL, &pool);
    cr_assert_not_null(d);
    cr_assert_str_eq(pool, "p2");
    cr_assert_str_eq(eval(w, d, "device.attributes[\"gpu.example.com\"].model", buf, sizeof buf), "\"B\"");
    cr_assert_str_eq(eval(w, d, "device.capacity[\"gpu.example.com\"].memory", buf, sizeof buf),
                     "error: no such key: memory");
    th_free(ws);
}

Test(world_lookup, unknown_names) {
    th_store *ws = load(two_slices);
    const dra_world *w = th_world(ws);
    cr_assert_null(dra_world_find_device(w, NULL, "gpu-1", NULL, NULL));
    cr_assert_null(dra_world_find_device(w, "s3", "gpu-0", NULL, NULL));
    th_free(ws);
}
