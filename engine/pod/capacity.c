/* capacity.c — the capacity view (dra_capacity_json, snapshot.h): devices, allocated,
 * allocatable now (`free`) and what blocks the rest, per node, pool, DeviceClass, node
 * shape and counter, like kubectl-view-allocations does for CPU and memory, but for DRA
 * devices and counting what a request could really take (allocatable.c decides each
 * device). A DeviceClass counts the devices its selectors accept (CEL, each program
 * looked up once per view); a selector error leaves the device out.
 *
 * Node shapes group nodes a planner buys alike: the well-known instance-type label
 * (node.kubernetes.io/instance-type, else the beta one) and the node's device inventory
 * (devices per DeviceClass), so two instance types never merge and one type whose nodes
 * differ in devices (a GPU missing) shows as two shapes. */
#include "engine/snapshot.h"

#include "engine/pod/allocatable.h"
#include "engine/store/store_internal.h"
#include "engine/world/world.h"

#include "base/hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const dra_allocated *dra__overlay_allocated(const dra_overlay *ov);

/* Devices by state, the same fields on every row. */
typedef struct tally {
    int64_t devices, allocated, free, counters, taints, nodes, unusable, shared;
} tally;

/* node_down: the device's node takes no pods now (node_unavailable): a free device
 * there is blocked "nodes", not free. */
static void tally_add(tally *t, const dra_av_device *d, bool node_down) {
    t->devices++;
    switch (d->state) {
    case DRA_AV_ALLOCATED: t->allocated++, t->shared += d->shared_left; break;
    case DRA_AV_FREE: node_down ? t->nodes++ : t->free++; break;
    case DRA_AV_COUNTERS: t->counters++; break;
    case DRA_AV_TAINTS: t->taints++; break;
    default: t->unusable++;
    }
}

static void tally_sum(tally *t, const tally *u) {
    t->devices += u->devices, t->allocated += u->allocated, t->free += u->free, t->counters += u->counters;
    t->taints += u->taints, t->nodes += u->nodes, t->unusable += u->unusable, t->shared += u->shared;
}

/* "devices", "allocated", "free", "blocked": {"counters", "taints", "nodes"}, then
 * "unusable" and "shared" when there are any. */
static void tally_json(json_t *o, const tally *t) {
    json_object_set_new(o, "devices", json_integer(t->devices));
    json_object_set_new(o, "allocated", json_integer(t->allocated));
    json_object_set_new(o, "free", json_integer(t->free));
    json_t *b = json_object();
    json_object_set_new(b, "counters", json_integer(t->counters));
    json_object_set_new(b, "taints", json_integer(t->taints));
    json_object_set_new(b, "nodes", json_integer(t->nodes));
    json_object_set_new(o, "blocked", b);
    if (t->unusable) json_object_set_new(o, "unusable", json_integer(t->unusable));
    if (t->shared) json_object_set_new(o, "shared", json_integer(t->shared));
}

static json_t *qty_json(const quantity *q) {
    char buf[128];
    quantity_format(q, buf, sizeof buf);
    return json_string(buf);
}

/* A carve profile summed over counter sets (of a node or a shape). */
typedef struct carve_sum {
    char *label;
    int64_t sets, devices, allocated, fit, fit_empty, free;
} carve_sum;

typedef DRA_VEC(carve_sum) carve_vec;

static void carve_add(carve_vec *v, const char *label, int64_t sets, int64_t devices, int64_t allocated, int64_t fit,
                      int64_t fit_empty, int64_t free_) {
    carve_sum *c = NULL;
    for (size_t i = 0; i < v->n && !c; i++)
        if (!strcmp(v->v[i].label, label)) c = &v->v[i];
    if (!c) {
        carve_sum z = {.label = xstrdup(label)};
        DRA_VEC_PUSH(*v, z);
        c = &v->v[v->n - 1];
    }
    c->sets += sets, c->devices += devices, c->allocated += allocated, c->fit += fit, c->fit_empty += fit_empty;
    c->free += free_;
}

static json_t *carve_json(const carve_vec *v) {
    json_t *a = json_array();
    for (size_t i = 0; i < v->n; i++)
        json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "profile", v->v[i].label, "counterSets",
                                           (json_int_t)v->v[i].sets, "devices", (json_int_t)v->v[i].devices,
                                           "allocated", (json_int_t)v->v[i].allocated, "fit", (json_int_t)v->v[i].fit,
                                           "fitEmpty", (json_int_t)v->v[i].fit_empty, "free", (json_int_t)v->v[i].free));
    return a;
}

static void carve_free(carve_vec *v) {
    for (size_t i = 0; i < v->n; i++) free(v->v[i].label);
    free(v->v);
}

/* ---- utilisation by capacity ------------------------------------------------------------- */

/* A counter family: counters of one name but for a trailing number (memorySlice0..7 are
 * "memorySlice"), summed over the counter sets of a row. A MIG-carved GPU is used by
 * its counters — memory, memory slices, multiprocessors — not by how many of its
 * overlapping partition devices are allocated (one 7g partition of fifteen devices
 * uses all of it). */
typedef struct fam {
    char *name;
    double used, cap;
} fam;
typedef DRA_VEC(fam) fam_vec;

static void fam_add(fam_vec *v, const char *counter, double used, double cap) {
    size_t n = strlen(counter);
    while (n > 1 && counter[n - 1] >= '0' && counter[n - 1] <= '9') n--;
    fam *f = NULL;
    for (size_t i = 0; i < v->n && !f; i++)
        if (strlen(v->v[i].name) == n && !strncmp(v->v[i].name, counter, n)) f = &v->v[i];
    if (!f) {
        fam z = {.name = xmalloc(n + 1)};
        memcpy(z.name, counter, n);
        z.name[n] = '\0';
        DRA_VEC_PUSH(*v, z);
        f = &v->v[v->n - 1];
    }
    f->used += used, f->cap += cap;
}

static void fam_sum(fam_vec *v, const fam_vec *u) {
    for (size_t i = 0; i < u->n; i++) fam_add(v, u->v[i].name, u->v[i].used, u->v[i].cap);
}

static double pct(double used, double cap) { return cap > 0 ? (double)llround(1000.0 * used / cap) / 10.0 : 0.0; }

/* "capacityUtil": {"<family>": percent} when the row has counters, and "util": the
 * highest of them (the counter that runs out first), else allocated / devices. */
static void util_json(json_t *o, const fam_vec *v, int64_t devices, int64_t allocated) {
    double hi = -1;
    json_t *cu = json_object();
    for (size_t i = 0; i < v->n; i++) {
        if (v->v[i].cap <= 0) continue;
        double p = pct(v->v[i].used, v->v[i].cap);
        json_object_set_new(cu, v->v[i].name, json_real(p));
        if (p > hi) hi = p;
    }
    if (hi >= 0) {
        json_object_set_new(o, "capacityUtil", cu);
        json_object_set_new(o, "util", json_real(hi));
    } else {
        json_decref(cu);
        json_object_set_new(o, "util", json_real(pct((double)allocated, (double)devices)));
    }
}

static void fam_free(fam_vec *v) {
    for (size_t i = 0; i < v->n; i++) free(v->v[i].name);
    free(v->v);
    *v = (fam_vec){0};
}

typedef struct node_row {
    const char *name;
    char *unavailable;       /* why no pod can be scheduled to the node now (node_unavailable); NULL: it can */
    tally t;
    tally *cls;              /* per DeviceClass */
    json_t *pools;           /* "driver/pool" names */
    carve_vec carve;
    fam_vec fams;
} node_row;

typedef struct view {
    const dra_world *w;
    cel_eval_ctx *cx;
    size_t ncls;
    const cel_program ***progs;   /* per class: its selectors' programs (NULL: does not compile) */
    uint32_t *nprogs;
    tally *cls;
    fam_vec *cls_fams;       /* per DeviceClass: the counter sets its devices draw on */
    DRA_VEC(node_row) nodes;
    hmap node_at;            /* hash of the name → index + 1 (probe chain on collisions) */
    json_t *jpools, *jcounters;
    bool counters;           /* DRA_CAPACITY_COUNTERS */
    bool count_unavailable;  /* DRA_CAPACITY_COUNT_UNAVAILABLE_NODES */
} view;

/* Why kube-scheduler would place no pod on n now, or NULL: cordoned (the
 * NodeUnschedulable filter), NotReady (its Ready condition; the node lifecycle
 * controller also taints it not-ready), or the first NoSchedule/NoExecute taint (the
 * TaintToleration filter; "allocatable now" is for a pod without tolerations, as for
 * device taints). Malloc'd. */
static char *node_unavailable(const dra_node *n) {
    if (!n) return NULL;
    if (n->unschedulable) return xstrdup("cordoned");
    if (n->not_ready) return xstrdup("NotReady");
    for (uint32_t i = 0; i < n->ntaints; i++) {
        const dra_taint *t = &n->taints[i];
        if (!t->effect || (strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "NoExecute"))) continue;
        size_t len = strlen(t->key) + (t->value ? strlen(t->value) : 0) + strlen(t->effect) + 16;
        char *why = xmalloc(len);
        snprintf(why, len, "taint %s%s%s:%s", t->key, t->value ? "=" : "", t->value ? t->value : "", t->effect);
        return why;
    }
    return NULL;
}

static node_row *node_of(view *v, const char *name, bool create) {
    uint64_t probe = hash_bytes(name, strlen(name)), i;
    for (; hmap_get(&v->node_at, probe, &i); probe = hash_u64(probe))
        if (!strcmp(v->nodes.v[i - 1].name, name)) return &v->nodes.v[i - 1];
    if (!create) return NULL;
    node_row r = {.name = name, .cls = xcalloc(v->ncls ? v->ncls : 1, sizeof(tally)), .pools = json_array()};
    if (!v->count_unavailable) r.unavailable = node_unavailable(dra_world_find_node(v->w, name));
    DRA_VEC_PUSH(v->nodes, r);
    hmap_put(&v->node_at, probe, v->nodes.n);
    return &v->nodes.v[v->nodes.n - 1];
}

static bool class_matches(view *v, size_t c, const dra_device *d) {
    const dra_class *cl = v->w->classes.v[c];
    for (uint32_t q = 0; q < cl->nselectors; q++) {
        err e;
        err_clear(&e);
        if (!v->progs[c][q] || cel_eval_bool(v->progs[c][q], &d->cel, v->cx, &e) != CEL_TRUE) return false;
    }
    return true;
}

static void on_pool(void *arg, const dra_av_pool *p) {
    view *v = arg;
    tally pt = {0};
    node_row *nr = p->node ? node_of(v, p->node, true) : NULL;
    bool down = nr && nr->unavailable;
    /* per class, the pool's counters its matching devices draw on (each counted once) */
    bool *drawn = xcalloc((v->ncls ? v->ncls : 1) * (p->ncounters ? p->ncounters : 1), sizeof *drawn);
    for (uint32_t i = 0; i < p->ndevs; i++) {
        const dra_av_device *d = &p->devs[i];
        tally_add(&pt, d, down);
        for (size_t c = 0; c < v->ncls; c++)
            if (class_matches(v, c, d->dev)) {
                tally_add(&v->cls[c], d, down);
                if (nr) tally_add(&nr->cls[c], d, down);
                for (uint32_t j = 0; j < d->ncons; j++) {
                    /* every counter of the sets it draws on */
                    const char *set = p->counters[d->cons_idx[j]].set;
                    for (uint32_t k = 0; k < p->ncounters; k++)
                        if (!strcmp(p->counters[k].set, set)) drawn[c * p->ncounters + k] = true;
                }
            }
    }
    fam_vec pf = {0};
    for (uint32_t k = 0; k < p->ncounters; k++) {
        double used = quantity_to_double(&p->counters[k].used), cap = quantity_to_double(&p->counters[k].cap);
        fam_add(&pf, p->counters[k].name, used, cap);
        for (size_t c = 0; c < v->ncls; c++)
            if (drawn[c * p->ncounters + k]) fam_add(&v->cls_fams[c], p->counters[k].name, used, cap);
    }
    free(drawn);
    const char *driver = p->first->driver, *pool = p->first->pool;
    json_t *jp = json_object();
    json_object_set_new(jp, "driver", json_string(driver));
    json_object_set_new(jp, "pool", json_string(pool));
    tally_json(jp, &pt);
    util_json(jp, &pf, pt.devices, pt.allocated);
    if (nr) fam_sum(&nr->fams, &pf);
    fam_free(&pf);
    if (p->node) json_object_set_new(jp, "node", json_string(p->node));
    if (p->incomplete) json_object_set_new(jp, "incomplete", json_true());
    json_t *jsets = json_array();
    json_t *jdriver = json_string(driver), *jpool = json_string(pool);
    for (uint32_t s = 0; s < p->nsets; s++) {
        const dra_av_set *set = &p->sets[s];
        json_t *ctr = json_object(), *carve = json_array(), *jset = json_string(set->name);
        for (uint32_t i = 0; i < p->ncounters && v->counters; i++) {
            const dra_av_counter *c = &p->counters[i];
            if (strcmp(c->set, set->name)) continue;
            quantity fr;
            quantity_sub(&c->cap, &c->used, &fr);
            /* each quantity printed once, its string shared by the pool's row and the
             * flat counters row (a fleet has hundreds of thousands of counters) */
            json_t *cap = qty_json(&c->cap), *used = qty_json(&c->used), *free_ = qty_json(&fr);
            json_t *one = json_object();
            json_object_set(one, "capacity", cap);
            json_object_set(one, "allocated", used);
            json_object_set(one, "free", free_);
            json_object_set_new(ctr, c->name, one);
            json_t *row = json_object();
            json_object_set(row, "driver", jdriver);
            json_object_set(row, "pool", jpool);
            json_object_set(row, "counterSet", jset);
            json_object_set_new(row, "counter", json_string(c->name));
            json_object_set_new(row, "capacity", cap);
            json_object_set_new(row, "allocated", used);
            json_object_set_new(row, "free", free_);
            json_array_append_new(v->jcounters, row);
        }
        for (uint32_t g = 0; g < set->nprofiles; g++) {
            const dra_av_profile *pr = &set->profiles[g];
            json_array_append_new(carve, json_pack("{s:s, s:i, s:i, s:i, s:i, s:i}", "profile", pr->label, "devices",
                                                   (int)pr->devices, "allocated", (int)pr->allocated, "fit",
                                                   (int)pr->fit, "fitEmpty", (int)pr->fit_empty, "free", (int)pr->free));
            if (nr) carve_add(&nr->carve, pr->label, 1, pr->devices, pr->allocated, pr->fit, pr->fit_empty, pr->free);
        }
        json_t *js = json_object();
        json_object_set_new(js, "name", jset);
        if (v->counters) json_object_set_new(js, "counters", ctr);
        else json_decref(ctr);
        if (set->nprofiles) json_object_set_new(js, "carve", carve);
        else json_decref(carve);
        json_array_append_new(jsets, js);
    }
    json_decref(jdriver);
    json_decref(jpool);
    json_object_set_new(jp, "counterSets", jsets);
    json_array_append_new(v->jpools, jp);
    if (nr) {
        tally_sum(&nr->t, &pt);
        json_array_append_new(nr->pools, json_sprintf("%s/%s", driver, pool));
    }
}

static int cmp_row(const void *a, const void *b) { return strcmp(((const node_row *)a)->name, ((const node_row *)b)->name); }

static const char *node_label(const dra_node *n, const char *key) {
    for (uint32_t i = 0; n && i < n->nlabels; i++)
        if (!strcmp(n->labels[i].key, key)) return n->labels[i].value;
    return NULL;
}

/* ---- shapes --------------------------------------------------------------------------------- */

typedef struct shape_row {
    char *name;
    const char *instance_type;
    int64_t nodes;
    tally t;
    tally *cls;
    carve_vec carve;
    fam_vec fams;
} shape_row;

/* "p5.48xlarge: 8 gpu.nvidia.com, 4 rdma.dra.net" (devices per class on the node). */
static char *shape_name(const view *v, const node_row *r, const char *itype) {
    size_t cap = 256, len = 0;
    char *b = xmalloc(cap);
    len = (size_t)snprintf(b, cap, "%s%s", itype ? itype : "", itype ? ": " : "");
    bool any = false;
    for (size_t c = 0; c < v->ncls; c++) {
        if (!r->cls[c].devices) continue;
        const char *cn = v->w->classes.v[c]->name;
        size_t need = len + strlen(cn) + 32;
        if (need > cap) b = xrealloc(b, cap = need * 2);
        len += (size_t)snprintf(b + len, cap - len, "%s%lld %s", any ? ", " : "", (long long)r->cls[c].devices, cn);
        any = true;
    }
    if (!any) {
        size_t need = len + 48;
        if (need > cap) b = xrealloc(b, cap = need);
        snprintf(b + len, cap - len, r->t.devices ? "%lld devices of no DeviceClass" : "no devices",
                 (long long)r->t.devices);
    }
    return b;
}

/* fams: per class, its counter families (NULL: by devices only, as within a node or
 * shape, where a class's share of a counter set is not told apart). */
static json_t *class_rows(const view *v, const tally *t, const fam_vec *fams, bool skip_empty) {
    json_t *a = json_array();
    static const fam_vec none = {0};
    for (size_t c = 0; c < v->ncls; c++) {
        if (skip_empty && !t[c].devices) continue;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(v->w->classes.v[c]->name));
        tally_json(o, &t[c]);
        util_json(o, fams ? &fams[c] : &none, t[c].devices, t[c].allocated);
        json_array_append_new(a, o);
    }
    return a;
}

json_t *dra_capacity_json(dra_snapshot *s, const dra_overlay *ov) {
    return dra_capacity_json_parts(s, ov, DRA_CAPACITY_ALL);
}

json_t *dra_capacity_json_parts(dra_snapshot *s, const dra_overlay *ov, unsigned parts) {
    view v = {.w = dra__snapshot_world(s),
              .counters = parts & DRA_CAPACITY_COUNTERS,
              .count_unavailable = parts & DRA_CAPACITY_COUNT_UNAVAILABLE_NODES};
    const dra_allocated *st = ov ? dra__overlay_allocated(ov) : dra__snapshot_allocated(s);
    v.cx = cel_eval_ctx_new();
    v.ncls = v.w->classes.n;
    v.progs = xcalloc(v.ncls ? v.ncls : 1, sizeof *v.progs);
    v.nprogs = xcalloc(v.ncls ? v.ncls : 1, sizeof *v.nprogs);
    v.cls = xcalloc(v.ncls ? v.ncls : 1, sizeof *v.cls);
    v.cls_fams = xcalloc(v.ncls ? v.ncls : 1, sizeof *v.cls_fams);
    for (size_t c = 0; c < v.ncls; c++) {
        const dra_class *cl = v.w->classes.v[c];
        v.progs[c] = xcalloc(cl->nselectors ? cl->nselectors : 1, sizeof **v.progs);
        for (uint32_t q = 0; q < cl->nselectors; q++) v.progs[c][q] = cl->selectors[q].prog;   /* compiled with the class */
    }
    hmap_init(&v.node_at);
    v.jpools = json_array();
    v.jcounters = json_array();
    /* every Node appears, with devices or not */
    for (size_t i = 0; i < dra_snapshot_nnodes(s); i++) node_of(&v, dra_snapshot_node_name(s, i), true);
    dra__av_each_pool(s, st, on_pool, &v);
    if (v.nodes.n) qsort(v.nodes.v, v.nodes.n, sizeof *v.nodes.v, cmp_row);

    /* nodes, and their shapes */
    DRA_VEC(shape_row) shapes = {0};
    hmap shape_at;
    hmap_init(&shape_at);
    json_t *jnodes = json_array();
    for (size_t i = 0; i < v.nodes.n; i++) {
        node_row *r = &v.nodes.v[i];
        const dra_node *dn = dra_world_find_node(v.w, r->name);
        const char *itype = node_label(dn, "node.kubernetes.io/instance-type");
        if (!itype) itype = node_label(dn, "beta.kubernetes.io/instance-type");
        char *sn = shape_name(&v, r, itype);
        uint64_t probe = hash_bytes(sn, strlen(sn)), k;
        shape_row *sh = NULL;
        for (; hmap_get(&shape_at, probe, &k); probe = hash_u64(probe))
            if (!strcmp(shapes.v[k - 1].name, sn)) {
                sh = &shapes.v[k - 1];
                break;
            }
        if (!sh) {
            shape_row z = {.name = sn, .instance_type = itype, .cls = xcalloc(v.ncls ? v.ncls : 1, sizeof(tally))};
            DRA_VEC_PUSH(shapes, z);
            hmap_put(&shape_at, probe, shapes.n);
            sh = &shapes.v[shapes.n - 1];
        } else {
            free(sn);
        }
        sh->nodes++;
        tally_sum(&sh->t, &r->t);
        for (size_t c = 0; c < v.ncls; c++) tally_sum(&sh->cls[c], &r->cls[c]);
        for (size_t c = 0; c < r->carve.n; c++)
            carve_add(&sh->carve, r->carve.v[c].label, r->carve.v[c].sets, r->carve.v[c].devices, r->carve.v[c].allocated,
                      r->carve.v[c].fit, r->carve.v[c].fit_empty, r->carve.v[c].free);
        json_t *jn = json_object();
        json_object_set_new(jn, "name", json_string(r->name));
        json_object_set_new(jn, "shape", json_string(sh->name));
        if (r->unavailable) json_object_set_new(jn, "unavailable", json_string(r->unavailable));
        tally_json(jn, &r->t);
        json_object_set_new(jn, "pools", r->pools);
        util_json(jn, &r->fams, r->t.devices, r->t.allocated);
        fam_sum(&sh->fams, &r->fams);
        fam_free(&r->fams);
        json_object_set_new(jn, "classes", class_rows(&v, r->cls, NULL, true));
        if (r->carve.n) json_object_set_new(jn, "carve", carve_json(&r->carve));
        json_array_append_new(jnodes, jn);
        free(r->cls);
        free(r->unavailable);
        carve_free(&r->carve);
    }
    json_t *jshapes = json_array();
    for (size_t i = 0; i < shapes.n; i++) {
        shape_row *sh = &shapes.v[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(sh->name));
        if (sh->instance_type) json_object_set_new(o, "instanceType", json_string(sh->instance_type));
        json_object_set_new(o, "nodes", json_integer(sh->nodes));
        tally_json(o, &sh->t);
        util_json(o, &sh->fams, sh->t.devices, sh->t.allocated);
        fam_free(&sh->fams);
        json_object_set_new(o, "classes", class_rows(&v, sh->cls, NULL, true));
        if (sh->carve.n) json_object_set_new(o, "carve", carve_json(&sh->carve));
        json_array_append_new(jshapes, o);
        free(sh->name);
        free(sh->cls);
        carve_free(&sh->carve);
    }
    free(shapes.v);
    hmap_free(&shape_at);
    json_t *jclasses = class_rows(&v, v.cls, v.cls_fams, false);
    for (size_t c = 0; c < v.ncls; c++) fam_free(&v.cls_fams[c]);
    free(v.cls_fams);
    for (size_t c = 0; c < v.ncls; c++) free(v.progs[c]);
    free(v.progs);
    free(v.nprogs);
    free(v.cls);
    free(v.nodes.v);
    hmap_free(&v.node_at);
    cel_eval_ctx_free(v.cx);
    json_t *out = json_pack("{s:o, s:o, s:o, s:o}", "nodes", jnodes, "pools", v.jpools, "classes", jclasses, "shapes",
                            jshapes);
    if (v.counters) json_object_set_new(out, "counters", v.jcounters);
    else json_decref(v.jcounters);
    return out;
}
