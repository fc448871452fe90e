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

long plan_remove_nodes(plan_objects *o, const char *selector, err *e) {
    plan_selector *sel = plan_selector_parse(selector, e);
    if (!sel) return -1;
    json_t *gone = json_object();   /* names of removed nodes */
    size_t i;
    json_t *x;
    json_array_foreach(o->items, i, x) {
        if (!kind_of(x) || strcmp(kind_of(x), "Node") || !name_of(x)) continue;
        const json_t *labels = json_object_get(json_object_get(x, "metadata"), "labels");
        if (plan_selector_matches(sel, labels)) json_object_set_new(gone, name_of(x), json_true());
    }
    plan_selector_free(sel);
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

json_t *plan_merge(json_t *const *docs, const char *const *names, size_t n, err *e) {
    if (!n) return err_set(e, "no inputs"), NULL;
    const char *snap = NULL, *set = NULL;
    unsigned total = 0;
    const char **by_shard = NULL;   /* input name per shard index */
    size_t cap = 16, cnt = 0;
    json_t **all = xmalloc(cap * sizeof *all);
    bool ok = true;
    for (size_t d = 0; d < n && ok; d++) {
        const json_t *sc = json_object_get(docs[d], "scenarios");
        const char *ds = json_string_value(json_object_get(docs[d], "snapshot"));
        const char *dt = json_string_value(json_object_get(docs[d], "scenarioSet"));
        const char *sh = json_string_value(json_object_get(docs[d], "shard"));
        unsigned i, m;
        if (!json_is_object(docs[d]) || !json_is_array(sc) || !ds || !dt || !sh || !plan_shard_parse(sh, &i, &m)) {
            ok = err_set(e, "%s is not the output of dralloc plan --scenarios (no snapshot and scenarioSet digests, no shard i/N)",
                         names[d]);
            break;
        }
        if (!d) {
            snap = ds, set = dt, total = m;
            by_shard = xcalloc(m, sizeof *by_shard);
        } else if (strcmp(ds, snap)) {
            ok = err_set(e, "%s was planned on another snapshot (digest %s) than %s (%s)", names[d], ds, names[0], snap);
        } else if (strcmp(dt, set)) {
            ok = err_set(e, "%s holds another scenario set or other options (digest %s) than %s (%s)", names[d], dt,
                         names[0], set);
        } else if (m != total) {
            ok = err_set(e, "%s is shard %s, %s is one of %u", names[d], sh, names[0], total);
        }
        if (!ok) break;
        if (by_shard[i]) {
            ok = err_set(e, "shard %u/%u is given twice: %s and %s", i, total, by_shard[i], names[d]);
            break;
        }
        by_shard[i] = names[d];
        size_t k;
        json_t *s;
        json_array_foreach(sc, k, s) {
            if (cnt == cap) all = xrealloc(all, (cap *= 2) * sizeof *all);
            all[cnt++] = json_incref(s);
        }
    }
    for (unsigned i = 0; ok && i < total; i++)
        if (!by_shard[i]) ok = err_set(e, "shard %u/%u is missing (%zu of %u shards given)", i, total, n, total);
    json_t *out = NULL;
    if (ok) {
        qsort(all, cnt, sizeof *all, cmp_index);
        json_t *arr = json_array();
        for (size_t k = 0; k < cnt; k++) json_array_append(arr, all[k]);
        out = json_pack("{s:s, s:s, s:o}", "snapshot", snap, "scenarioSet", set, "scenarios", arr);
    }
    for (size_t k = 0; k < cnt; k++) json_decref(all[k]);
    free(all);
    free(by_shard);
    return out;
}
