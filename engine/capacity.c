/* capacity.c — the free-capacity view (dra_capacity_json, snapshot.h): what is
 * allocatable, allocated and free per node, pool, DeviceClass and counter, like
 * kubectl-view-allocations does for CPU and memory, but for DRA devices.
 *
 * A pool is counted from its slices of the newest generation (older ones are being
 * replaced). A device is allocated when a claim holds it, exclusively or with a
 * share. Counters (partitionable devices): capacity is the pool's sharedCounters,
 * allocated what its allocated devices consume, free what is still carvable. A
 * DeviceClass counts the devices its selectors accept (CEL, through the catalog's
 * programs); a selector error leaves the device out. */
#include "engine/snapshot.h"

#include "engine/world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const dra_allocated *dra__overlay_allocated(const dra_overlay *ov);

static bool in_use(const dra_allocated *st, uint64_t key) {
    uint64_t v;
    return st && (cmap_get(&st->devices, key, &v) || cmap_get(&st->shared, key, &v));
}

static json_t *qty_json(const quantity *q) {
    char buf[128];
    quantity_format(q, buf, sizeof buf);
    return json_string(buf);
}

typedef struct counter_acc {
    const char *set, *name;
    quantity cap, used;
} counter_acc;

typedef struct pool_acc {
    const dra_slice **slices;
    uint32_t nslices;
    int64_t gen;
    const char *node;        /* every slice's node, or NULL */
    bool mixed_node;
} pool_acc;

static int cmp_pool(const void *a, const void *b) {
    const dra_slice *x = ((const pool_acc *)a)->slices[0], *y = ((const pool_acc *)b)->slices[0];
    int c = strcmp(x->driver, y->driver);
    return c ? c : strcmp(x->pool, y->pool);
}

static int cmp_node(const void *a, const void *b) {
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")),
                  json_string_value(json_object_get(*(json_t *const *)b, "name")));
}

json_t *dra_capacity_json(dra_snapshot *s, const dra_overlay *ov) {
    const dra_world *w = dra__snapshot_world(s);
    const dra_allocated *st = ov ? dra__overlay_allocated(ov) : dra__snapshot_allocated(s);
    /* pools: slices grouped by pool key, newest generation */
    hmap by_pool;
    hmap_init(&by_pool);
    DRA_VEC(pool_acc) pools = {0};
    size_t nsl;
    const dra_slice *const *sls = dra__world_all_slices((dra_world *)w, &nsl);
    for (size_t i = 0; i < nsl; i++) {
        const dra_slice *sl = sls[i];
        uint64_t idx;
        if (!hmap_get(&by_pool, sl->pool_key, &idx)) {
            pool_acc p = {.gen = sl->generation};
            DRA_VEC_PUSH(pools, p);
            idx = pools.n;
            hmap_put(&by_pool, sl->pool_key, idx);
        }
        pool_acc *p = &pools.v[idx - 1];
        if (sl->generation > p->gen) {
            p->gen = sl->generation;
            p->nslices = 0;
        }
        if (sl->generation < p->gen) continue;
        p->slices = xrealloc(p->slices, (p->nslices + 1) * sizeof *p->slices);
        p->slices[p->nslices++] = sl;
    }
    for (size_t i = 0; i < pools.n; i++) {
        pool_acc *p = &pools.v[i];
        for (uint32_t k = 0; k < p->nslices; k++) {
            const char *nn = p->slices[k]->node_name && *p->slices[k]->node_name ? p->slices[k]->node_name : NULL;
            if (k == 0) p->node = nn;
            else if (!nn || !p->node || strcmp(nn, p->node)) p->mixed_node = true;
        }
        if (p->mixed_node) p->node = NULL;
    }
    if (pools.n) qsort(pools.v, pools.n, sizeof *pools.v, cmp_pool);
    json_t *jpools = json_array(), *jcounters = json_array(), *jnodes = json_array(), *jclasses = json_array();
    json_t *node_map = json_object();   /* node → its JSON object */
    cel_eval_ctx *cx = cel_eval_ctx_new();
    size_t ncls = w->classes.n;
    int64_t *cls_dev = calloc(ncls ? ncls : 1, sizeof *cls_dev), *cls_used = calloc(ncls ? ncls : 1, sizeof *cls_used);
    for (size_t i = 0; i < pools.n; i++) {
        pool_acc *p = &pools.v[i];
        const dra_slice *first = p->slices[0];
        int64_t ndev = 0, nused = 0;
        DRA_VEC(counter_acc) ctrs = {0};
        for (uint32_t k = 0; k < p->nslices; k++)
            for (uint32_t c = 0; c < p->slices[k]->nshared; c++) {
                const dra_counter_set *cs = &p->slices[k]->shared_counters[c];
                for (uint32_t m = 0; m < cs->ncounters; m++) {
                    counter_acc a = {.set = cs->name, .name = cs->counters[m].name, .cap = cs->counters[m].value};
                    DRA_VEC_PUSH(ctrs, a);
                }
            }
        for (uint32_t k = 0; k < p->nslices; k++) {
            const dra_slice *sl = p->slices[k];
            for (uint32_t d = 0; d < sl->ndevices; d++) {
                const dra_device *dev = &sl->devices[d];
                bool used = in_use(st, dra_device_key(sl->pool_key, dev->name_id));
                ndev++;
                nused += used;
                for (size_t c = 0; c < ncls; c++) {
                    const dra_class *cl = w->classes.v[c];
                    bool all = true;
                    for (uint32_t q = 0; q < cl->nselectors && all; q++) {
                        err e;
                        err_clear(&e);
                        const cel_program *pg = cl->selectors[q].prog;   /* compiled with the class */
                        all = pg && cel_eval_bool(pg, &dev->cel, cx, &e) == CEL_TRUE;
                    }
                    if (!all) continue;
                    cls_dev[c]++;
                    cls_used[c] += used;
                }
                if (!used) continue;
                for (uint32_t c = 0; c < dev->nconsumes; c++) {
                    const dra_counter_set *cs = &dev->consumes[c];
                    for (uint32_t m = 0; m < cs->ncounters; m++)
                        for (size_t a = 0; a < ctrs.n; a++)
                            if (!strcmp(ctrs.v[a].set, cs->name) && !strcmp(ctrs.v[a].name, cs->counters[m].name))
                                quantity_add(&ctrs.v[a].used, &cs->counters[m].value, &ctrs.v[a].used);
                }
            }
        }
        json_t *jp = json_pack("{s:s, s:s, s:I, s:I, s:I}", "driver", first->driver, "pool", first->pool, "devices",
                               (json_int_t)ndev, "allocated", (json_int_t)nused, "free", (json_int_t)(ndev - nused));
        if (p->node) json_object_set_new(jp, "node", json_string(p->node));
        json_t *jsets = json_array();
        for (size_t a = 0; a < ctrs.n; a++) {
            counter_acc *c = &ctrs.v[a];
            quantity fr;
            quantity_sub(&c->cap, &c->used, &fr);
            json_t *set = NULL;
            for (size_t z = 0; z < json_array_size(jsets) && !set; z++)
                if (!strcmp(json_string_value(json_object_get(json_array_get(jsets, z), "name")), c->set))
                    set = json_array_get(jsets, z);
            if (!set) {
                set = json_pack("{s:s, s:{}}", "name", c->set, "counters");
                json_array_append_new(jsets, set);
            }
            json_object_set_new(json_object_get(set, "counters"), c->name,
                                json_pack("{s:o, s:o, s:o}", "capacity", qty_json(&c->cap), "allocated",
                                          qty_json(&c->used), "free", qty_json(&fr)));
            json_array_append_new(jcounters, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "driver", first->driver,
                                                       "pool", first->pool, "counterSet", c->set, "counter", c->name,
                                                       "capacity", qty_json(&c->cap), "allocated", qty_json(&c->used),
                                                       "free", qty_json(&fr)));
        }
        json_object_set_new(jp, "counterSets", jsets);
        json_array_append(jpools, jp);
        if (p->node) {
            json_t *jn = json_object_get(node_map, p->node);
            if (!jn) {
                jn = json_pack("{s:s, s:I, s:I, s:I, s:[]}", "name", p->node, "devices", (json_int_t)0, "allocated",
                               (json_int_t)0, "free", (json_int_t)0, "pools");
                json_object_set_new(node_map, p->node, jn);
            }
            const char *f3[3] = {"devices", "allocated", "free"};
            int64_t v3[3] = {ndev, nused, ndev - nused};
            for (int z = 0; z < 3; z++)
                json_object_set_new(jn, f3[z], json_integer(json_integer_value(json_object_get(jn, f3[z])) + v3[z]));
            json_array_append_new(json_object_get(jn, "pools"), json_sprintf("%s/%s", first->driver, first->pool));
        }
        json_decref(jp);
        free(ctrs.v);
    }
    /* nodes without a node-local pool still appear (Node objects) */
    for (size_t i = 0; i < dra_snapshot_nnodes(s); i++) {
        const char *nn = dra_snapshot_node_name(s, i);
        if (!json_object_get(node_map, nn))
            json_object_set_new(node_map, nn, json_pack("{s:s, s:I, s:I, s:I, s:[]}", "name", nn, "devices", (json_int_t)0,
                                                        "allocated", (json_int_t)0, "free", (json_int_t)0, "pools"));
    }
    const char *k;
    json_t *v;
    json_object_foreach(node_map, k, v) json_array_append(jnodes, v);
    /* jansson arrays cannot be sorted in place: rebuild in name order */
    size_t nn = json_array_size(jnodes);
    json_t **tmp = xmalloc((nn ? nn : 1) * sizeof *tmp);
    for (size_t i = 0; i < nn; i++) tmp[i] = json_incref(json_array_get(jnodes, i));
    qsort(tmp, nn, sizeof *tmp, cmp_node);
    json_array_clear(jnodes);
    for (size_t i = 0; i < nn; i++) json_array_append_new(jnodes, tmp[i]);
    free(tmp);
    for (size_t c = 0; c < ncls; c++)
        json_array_append_new(jclasses, json_pack("{s:s, s:I, s:I, s:I}", "name", w->classes.v[c]->name, "devices",
                                                  (json_int_t)cls_dev[c], "allocated", (json_int_t)cls_used[c], "free",
                                                  (json_int_t)(cls_dev[c] - cls_used[c])));
    free(cls_dev);
    free(cls_used);
    cel_eval_ctx_free(cx);
    for (size_t i = 0; i < pools.n; i++) free(pools.v[i].slices);
    free(pools.v);
    hmap_free(&by_pool);
    json_decref(node_map);
    return json_pack("{s:o, s:o, s:o, s:o}", "nodes", jnodes, "pools", jpools, "classes", jclasses, "counters",
                     jcounters);
}
