/* plan_minnodes.c — `--min-nodes SHAPE`: the fewest copies of a node shape for every
 * replica to be placed (planner.h plan_min_nodes).
 *
 * One store holds the base objects; a probe of k copies adds the copies it lacks
 * (upserts of the copy's Node and slices, made once and kept) or deletes those beyond
 * k, so each probe publishes a snapshot that differs from the last by what changed and
 * costs the simulation only. The count is searched by galloping (1, 2, 4, ...) from the
 * known-too-small 0 to the first count that is enough, then by bisection — monotone as
 * more nodes never take capacity away. A workload that cannot run one replica on an
 * empty copy of the shape is tried once at `max`: still unplaced there, it is named at
 * once (no count of this shape helps it), and nothing is searched. */
#include "planner/planner.h"

#include "engine/causes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct copies {
    dra_store *st;
    const plan_objects *shape;
    plan_objects names;      /* base + every copy made so far: taken names */
    json_t **objs;           /* per copy: its objects (the first: with the shape's other objects) */
    size_t made, cur, cap;
    bool node_local;
} copies;

static const char *kind_of(const json_t *o) { return json_string_value(json_object_get(o, "kind")); }
static const char *name_of(const json_t *o) { return json_string_value(json_object_get(json_object_get(o, "metadata"), "name")); }

/* The store at exactly k copies. */
static bool set_count(copies *c, long k, err *e) {
    while ((long)c->cur < k) {
        if (c->cur == c->made) {
            size_t n0 = json_array_size(c->names.items);
            if (!plan_add_nodes(&c->names, c->shape, 1, (long)c->made, e)) return false;
            json_t *a = json_array();
            for (size_t i = n0; i < json_array_size(c->names.items); i++) json_array_append(a, json_array_get(c->names.items, i));
            if (c->made == c->cap) c->objs = xrealloc(c->objs, (c->cap = c->cap ? c->cap * 2 : 16) * sizeof *c->objs);
            c->objs[c->made++] = a;
        }
        if (!dra_store_apply_json(c->st, c->objs[c->cur], e)) return false;
        c->cur++;
    }
    while ((long)c->cur > k) {
        const json_t *a = c->objs[--c->cur];
        dra_change *ch = xcalloc(json_array_size(a) + 1, sizeof *ch);
        size_t n = 0, i;
        json_t *x;
        /* the copy's Node and slices; the shape's other objects (classes) stay */
        json_array_foreach(a, i, x) {
            const char *k = kind_of(x);
            if (!k || (strcmp(k, "Node") && strcmp(k, "ResourceSlice")) || !name_of(x)) continue;
            if (!strcmp(k, "ResourceSlice") && !json_string_value(json_object_get(json_object_get(x, "spec"), "nodeName")))
                continue;
            ch[n++] = (dra_change){.kind = k, .name = name_of(x)};
        }
        bool ok = !n || dra_store_apply(c->st, ch, n, e);
        free(ch);
        if (!ok) return false;
    }
    return true;
}

/* The plan with k copies (full: with headroom and stranded devices, as printed). */
static json_t *probe(copies *c, const plan_workloads *w, const plan_opts *o, dra_score_mode score, long k, bool full,
                     err *e) {
    if (!set_count(c, k, e)) return NULL;
    plan_opts po = *o;
    po.score = score;
    if (!full) po.headroom_max = 0, po.stranded = false, po.progress = NULL;
    return plan_run_store(c->st, w, &po, c->node_local, e);
}

static json_int_t unplaced_of(const json_t *plan, size_t wi) {
    return json_integer_value(json_object_get(json_array_get(json_object_get(plan, "workloads"), wi), "unplaced"));
}

static bool all_placed(const json_t *plan) {
    return json_integer_value(json_object_get(json_object_get(plan, "summary"), "unplaced")) == 0;
}

/* Fewest copies in (lo, max] with all placed, lo known too small; -1 when max is not
 * enough. NULL plan on error (*err_out). */
static long search(copies *c, const plan_workloads *w, const plan_opts *o, dra_score_mode score, long lo, long max,
                   bool *failed, err *e) {
    long hi = -1;
    for (long k = lo + 1 > max ? max : lo + 1;; k = k * 2 > max ? max : k * 2) {
        json_t *p = probe(c, w, o, score, k, false, e);
        if (!p) return *failed = true, -1;
        bool ok = all_placed(p);
        json_decref(p);
        if (ok) {
            hi = k;
            break;
        }
        lo = k;
        if (k >= max) break;
    }
    while (hi >= 0 && hi - lo > 1) {
        long mid = lo + (hi - lo) / 2;
        json_t *p = probe(c, w, o, score, mid, false, e);
        if (!p) return *failed = true, -1;
        if (all_placed(p)) hi = mid;
        else lo = mid;
        json_decref(p);
    }
    return hi;
}

/* Workloads unplaced at 0 copies that cannot run one replica on an empty copy of the
 * shape: {"workload", "reason"} each (the copy's own answer). The store has 1 copy after. */
static json_t *shape_refusals(copies *c, const plan_workloads *w, const json_t *plan0, err *e) {
    json_t *out = json_array();
    if (!set_count(c, 1, e)) {
        json_decref(out);
        return NULL;
    }
    const char *node = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(c->objs[0], i, x) if (kind_of(x) && !strcmp(kind_of(x), "Node")) node = name_of(x);
    dra_snapshot *s = dra_store_acquire(c->st);
    dra_alloc_ctx *ctx = dra_alloc_ctx_new();
    for (size_t wi = 0; wi < w->n && node; wi++) {
        if (!unplaced_of(plan0, wi)) continue;
        json_t *pod = plan_replica_pod(&w->v[wi], 0);
        err pe;
        err_clear(&pe);
        dra_pod_request *pr = dra_pod_request_new(s, pod, &pe);
        dra_fit f = {.status = DRA_FIT_ERROR};
        if (pr) {
            dra_pod_request_check_node(pr, true);
            const char *fatal = dra_pod_request_error(pr);
            if (fatal) snprintf(f.reason, sizeof f.reason, "%s", fatal);
            else dra_pod_fit(pr, ctx, node, NULL, DRA_SCORE_NONE, 0, &f);
            dra_pod_request_free(pr);
        } else {
            snprintf(f.reason, sizeof f.reason, "%.500s", pe.msg);
        }
        json_decref(pod);
        if (f.status != DRA_FIT_UNRESOLVABLE && f.status != DRA_FIT_ERROR) continue;
        dra_cause k;
        dra_fit_cause(&f, node, &k);
        json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "workload", w->v[wi].name, "cause", k.text, "reason",
                                             f.reason));
    }
    dra_alloc_ctx_free(ctx);
    dra_snapshot_release(s);
    return out;
}

static const char *shape_node(const plan_objects *shape) {
    const char *n = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(shape->items, i, x) if (kind_of(x) && !strcmp(kind_of(x), "Node")) n = name_of(x);
    return n;
}

json_t *plan_min_nodes(const plan_objects *base, const plan_objects *shape, const plan_workloads *w,
                       const plan_opts *o, long max, err *e) {
    if (!shape_node(shape)) return err_set(e, "the node shape has no Node"), NULL;
    copies c = {.shape = shape, .node_local = plan_objects_node_local(base) && plan_objects_node_local(shape)};
    c.st = plan_store_new(base, &o->features, e);
    if (!c.st) return NULL;
    plan_objects_copy(&c.names, base);
    dra_score_mode other = o->score == DRA_SCORE_SPREAD ? DRA_SCORE_BINPACK : DRA_SCORE_SPREAD;
    json_t *out = NULL, *impossible = NULL;
    long count = -1, count_other = -1;
    bool failed = false;
    json_t *p0 = probe(&c, w, o, o->score, 0, false, e);
    if (!p0) goto done;
    if (all_placed(p0)) {
        count = count_other = 0;
    } else {
        json_t *refused = shape_refusals(&c, w, p0, e);
        if (!refused) {
            json_decref(p0);
            goto done;
        }
        if (json_array_size(refused)) {
            /* no count helps them unless others moving to the copies free room: check at max */
            json_t *pm = probe(&c, w, o, o->score, max, false, e);
            if (!pm) {
                json_decref(refused);
                json_decref(p0);
                goto done;
            }
            impossible = json_array();
            size_t i;
            json_t *r;
            json_array_foreach(refused, i, r) {
                const char *wn = json_string_value(json_object_get(r, "workload"));
                for (size_t wi = 0; wi < w->n; wi++)
                    if (!strcmp(w->v[wi].name, wn) && unplaced_of(pm, wi)) json_array_append(impossible, r);
            }
            json_decref(pm);
            if (!json_array_size(impossible)) json_decref(impossible), impossible = NULL;
        }
        json_decref(refused);
        if (!impossible) {
            count = search(&c, w, o, o->score, 0, max, &failed, e);
            if (!failed) count_other = search(&c, w, o, other, 0, max, &failed, e);
        }
    }
    json_decref(p0);
    if (failed) goto done;
    out = probe(&c, w, o, o->score, count >= 0 ? count : max, true, e);
    if (!out) goto done;
    json_t *mn = json_object();
    json_object_set_new(mn, "shape", json_string(shape_node(shape)));
    json_object_set_new(mn, "count", count >= 0 ? json_integer(count) : json_null());
    json_object_set_new(mn, "max", json_integer(max));
    json_object_set_new(mn, "score", json_string(o->score == DRA_SCORE_SPREAD ? "spread" : "binpack"));
    json_t *by = json_object();
    long bin = o->score == DRA_SCORE_SPREAD ? count_other : count, spr = o->score == DRA_SCORE_SPREAD ? count : count_other;
    json_object_set_new(by, "binpack", impossible || bin < 0 ? json_null() : json_integer(bin));
    json_object_set_new(by, "spread", impossible || spr < 0 ? json_null() : json_integer(spr));
    json_object_set_new(mn, "byScore", by);
    if (impossible) json_object_set_new(mn, "impossible", impossible), impossible = NULL;
    json_object_set_new(out, "minNodes", mn);
done:
    json_decref(impossible);
    for (size_t i = 0; i < c.made; i++) json_decref(c.objs[i]);
    free(c.objs);
    plan_objects_free(&c.names);
    dra_store_free(c.st);
    return out;
}
