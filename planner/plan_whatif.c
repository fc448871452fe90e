/* plan_whatif.c — editing the cluster before planning, and joining sharded runs:
 * nodes added as copies of a shape (`--add-nodes`), nodes removed by label
 * (`--remove-nodes`), the fewest copies of a shape for everything to fit
 * (`--min-nodes`), shard selection and `plan merge`. Edits work on the JSON
 * objects (plan_objects), so each probe builds a fresh store from them. */
#include "planner/planner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_of(const json_t *o) { return json_string_value(json_object_get(o, "kind")); }
static const char *name_of(const json_t *o) { return json_string_value(json_object_get(json_object_get(o, "metadata"), "name")); }

/* s with the first `from` replaced by `to`, or s + "-" + suffix when it has none. */
static json_t *rename_str(const char *s, const char *from, const char *to, const char *suffix) {
    const char *p = strstr(s, from);
    size_t n = strlen(s) + strlen(to) + strlen(suffix) + 2;
    char *b = xmalloc(n);
    if (p) snprintf(b, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
    else snprintf(b, n, "%s-%s", s, suffix);
    json_t *j = json_string(b);
    free(b);
    return j;
}

static bool has_object(const plan_objects *o, const char *kind, const json_t *meta) {
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    size_t i;
    json_t *x;
    json_array_foreach(o->items, i, x) {
        const char *k = kind_of(x), *n = name_of(x);
        const char *xns = json_string_value(json_object_get(json_object_get(x, "metadata"), "namespace"));
        if (k && n && name && !strcmp(k, kind) && !strcmp(n, name) && !strcmp(xns ? xns : "", ns ? ns : "")) return true;
    }
    return false;
}

bool plan_add_nodes(plan_objects *o, const plan_objects *shape, long count, long first, err *e) {
    const json_t *node = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(shape->items, i, x) {
        if (kind_of(x) && !strcmp(kind_of(x), "Node")) {
            if (node) return err_set(e, "the node shape has more than one Node"), false;
            node = x;
        }
    }
    if (!node || !name_of(node)) return err_set(e, "the node shape has no Node"), false;
    const char *base = name_of(node);
    /* the shape's other objects (DeviceClasses, ...) once, unless already there */
    json_array_foreach(shape->items, i, x) {
        const char *k = kind_of(x);
        if (x == node || !k) continue;
        if (!strcmp(k, "ResourceSlice")) {
            const char *nn = json_string_value(json_object_get(json_object_get(x, "spec"), "nodeName"));
            if (nn && !strcmp(nn, base)) continue;
        }
        if (!has_object(o, k, json_object_get(x, "metadata"))) plan_objects_add_doc(o, x, json_string_value(json_array_get(shape->sources, i)));
    }
    json_t *node_meta = json_object();
    for (long c = 0, idx = first; c < count; c++, idx++) {
        char name[512], suffix[64];
        /* the same shape added twice continues the numbering instead of colliding */
        for (;; idx++) {
            snprintf(suffix, sizeof suffix, "whatif-%ld", idx);
            snprintf(name, sizeof name, "%s-%s", base, suffix);
            json_object_set_new(node_meta, "name", json_string(name));
            if (!has_object(o, "Node", node_meta)) break;
        }
        json_array_foreach(shape->items, i, x) {
            const char *k = kind_of(x);
            const char *src = json_string_value(json_array_get(shape->sources, i));
            if (x == node) {
                json_t *n = json_deep_copy(x);
                json_t *meta = json_object_get(n, "metadata");
                json_object_set_new(meta, "name", json_string(name));
                json_object_del(meta, "uid");
                json_t *labels = json_object_get(meta, "labels");
                const char *hn = json_string_value(json_object_get(labels, "kubernetes.io/hostname"));
                if (hn && !strcmp(hn, base)) json_object_set_new(labels, "kubernetes.io/hostname", json_string(name));
                plan_objects_add_doc(o, n, src);
                json_decref(n);
                continue;
            }
            if (!k || strcmp(k, "ResourceSlice")) continue;
            const json_t *spec = json_object_get(x, "spec");
            const char *nn = json_string_value(json_object_get(spec, "nodeName"));
            if (!nn || strcmp(nn, base)) continue;
            json_t *sl = json_deep_copy(x);
            json_t *meta = json_object_get(sl, "metadata"), *sp = json_object_get(sl, "spec");
            if (name_of(sl)) json_object_set_new(meta, "name", rename_str(name_of(sl), base, name, suffix));
            json_object_del(meta, "uid");
            json_object_set_new(sp, "nodeName", json_string(name));
            json_t *pool = json_object_get(sp, "pool");
            const char *pn = json_string_value(json_object_get(pool, "name"));
            if (pn) json_object_set_new(pool, "name", rename_str(pn, base, name, suffix));
            plan_objects_add_doc(o, sl, src);
            json_decref(sl);
        }
    }
    json_decref(node_meta);
    return true;
}

typedef struct kv {
    char k[256], v[256];
} kv;

long plan_remove_nodes(plan_objects *o, const char *selector, err *e) {
    kv sel[32];
    size_t nsel = 0;
    for (const char *p = selector; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || eq == p || nsel == ARRAY_SIZE(sel) || (size_t)(eq - p) >= 256 || len - (size_t)(eq - p) - 1 >= 256) {
            err_set(e, "--remove-nodes %s: want key=value[,key=value]", selector);
            return -1;
        }
        snprintf(sel[nsel].k, sizeof sel[nsel].k, "%.*s", (int)(eq - p), p);
        snprintf(sel[nsel].v, sizeof sel[nsel].v, "%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
        nsel++;
        p += len;
        if (*p == ',') p++;
    }
    if (!nsel) {
        err_set(e, "--remove-nodes: empty selector");
        return -1;
    }
    json_t *gone = json_object();   /* names of removed nodes */
    size_t i;
    json_t *x;
    json_array_foreach(o->items, i, x) {
        if (!kind_of(x) || strcmp(kind_of(x), "Node") || !name_of(x)) continue;
        const json_t *labels = json_object_get(json_object_get(x, "metadata"), "labels");
        bool match = true;
        for (size_t k = 0; k < nsel && match; k++) {
            const char *v = json_string_value(json_object_get(labels, sel[k].k));
            match = v && !strcmp(v, sel[k].v);
        }
        if (match) json_object_set_new(gone, name_of(x), json_true());
    }
    long removed = (long)json_object_size(gone);
    plan_objects keep;
    plan_objects_init(&keep);
    json_array_foreach(o->items, i, x) {
        const char *k = kind_of(x);
        const char *nn = NULL;
        if (k && !strcmp(k, "Node")) nn = name_of(x);
        else if (k && !strcmp(k, "ResourceSlice")) nn = json_string_value(json_object_get(json_object_get(x, "spec"), "nodeName"));
        if (nn && json_object_get(gone, nn)) continue;
        json_array_append(keep.items, x);
        json_array_append(keep.sources, json_array_get(o->sources, i));
    }
    json_decref(gone);
    plan_objects_free(o);
    *o = keep;
    return removed;
}

static bool all_placed(const json_t *plan) {
    return json_integer_value(json_object_get(json_object_get(plan, "summary"), "unplaced")) == 0;
}

/* The plan with `count` copies of the shape added (headroom and stranded left out:
 * a probe only needs the unplaced count). */
static json_t *probe(const plan_objects *base, const plan_objects *shape, const plan_workloads *w, const plan_opts *o,
                     long count, bool full, err *e) {
    plan_objects objs;
    plan_objects_copy(&objs, base);
    json_t *out = NULL;
    if (plan_add_nodes(&objs, shape, count, 0, e)) {
        plan_opts po = *o;
        if (!full) po.headroom_max = 0, po.stranded = false, po.progress = NULL;
        out = plan_run(&objs, w, &po, e);
    }
    plan_objects_free(&objs);
    return out;
}

json_t *plan_min_nodes(const plan_objects *base, const plan_objects *shape, const plan_workloads *w,
                       const plan_opts *o, long max, err *e) {
    long lo = -1, hi = -1;   /* lo: a count known too small; hi: one known enough */
    for (long k = 0;; k = k ? k * 2 : 1) {
        if (k > max) k = max;
        json_t *p = probe(base, shape, w, o, k, false, e);
        if (!p) return NULL;
        bool ok = all_placed(p);
        json_decref(p);
        if (ok) {
            hi = k;
            break;
        }
        lo = k;
        if (k == max) break;
    }
    while (hi >= 0 && hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        json_t *p = probe(base, shape, w, o, mid, false, e);
        if (!p) return NULL;
        if (all_placed(p)) hi = mid;
        else lo = mid;
        json_decref(p);
    }
    json_t *out = probe(base, shape, w, o, hi >= 0 ? hi : max, true, e);
    if (!out) return NULL;
    json_t *mn = json_object();
    const char *shape_node = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(shape->items, i, x) if (kind_of(x) && !strcmp(kind_of(x), "Node")) shape_node = name_of(x);
    json_object_set_new(mn, "shape", json_string(shape_node ? shape_node : ""));
    json_object_set_new(mn, "count", hi >= 0 ? json_integer(hi) : json_null());
    json_object_set_new(mn, "max", json_integer(max));
    json_object_set_new(out, "minNodes", mn);
    return out;
}

bool plan_shard_parse(const char *s, unsigned *i, unsigned *n) {
    char *end;
    errno = 0;
    unsigned long a = strtoul(s, &end, 10);
    if (end == s || *end != '/' || errno || s[0] == '-') return false;
    const char *t = end + 1;
    unsigned long b = strtoul(t, &end, 10);
    if (end == t || *end || errno || t[0] == '-' || b == 0 || a >= b || b > 1000000) return false;
    *i = (unsigned)a;
    *n = (unsigned)b;
    return true;
}

static int cmp_index(const void *a, const void *b) {
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "index"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "index"));
    return (x > y) - (x < y);
}

json_t *plan_merge(json_t *const *docs, size_t n, err *e) {
    size_t cap = 16, cnt = 0;
    json_t **all = xmalloc(cap * sizeof *all);
    for (size_t d = 0; d < n; d++) {
        const json_t *sc = json_object_get(docs[d], "scenarios");
        if (!json_is_object(docs[d]) || (sc && !json_is_array(sc))) {
            for (size_t k = 0; k < cnt; k++) json_decref(all[k]);
            free(all);
            err_set(e, "input %zu is not a plan output", d + 1);
            return NULL;
        }
        size_t i, m = sc ? json_array_size(sc) : 1;
        for (i = 0; i < m; i++) {
            json_t *s = sc ? json_array_get(sc, i) : docs[d];
            if (cnt == cap) all = xrealloc(all, (cap *= 2) * sizeof *all);
            all[cnt++] = json_incref(s);
        }
    }
    /* stable for equal indexes: merge sort semantics are not needed, inputs carry distinct indexes */
    qsort(all, cnt, sizeof *all, cmp_index);
    json_t *out = json_object(), *arr = json_array();
    for (size_t k = 0; k < cnt; k++) {
        if (k && json_object_get(all[k], "index") &&
            json_integer_value(json_object_get(all[k], "index")) == json_integer_value(json_object_get(all[k - 1], "index")))
            fprintf(stderr, "dralloc plan merge: warning: scenario index %lld appears twice\n",
                    (long long)json_integer_value(json_object_get(all[k], "index")));
        json_array_append_new(arr, all[k]);
    }
    free(all);
    json_object_set_new(out, "scenarios", arr);
    return out;
}
