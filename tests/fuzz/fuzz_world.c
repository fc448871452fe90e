/* fuzz_world.c — the part the JSON and YAML decode harnesses share: documents into a
 * store of their own, its snapshot's world, a node view, allocation of every pending claim (alone, then all
 * together), and encoding of the results. Every failure must come with an error text;
 * nothing may crash, leak or take more than a few seconds (libFuzzer's -timeout). */
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"

static void need_msg(const err *e, const char *what) {
    if (!e->msg[0]) {
        fprintf(stderr, "fuzz_world: %s failed without an error message\n", what);
        abort();
    }
}

static void encode(const dra_alloc_result *r) {
    json_t *j = dra_alloc_result_to_json(r);
    if (!j) abort();
    char *s = json_dumps(j, JSON_COMPACT);
    free(s);
    json_decref(j);
}

void fuzz_world_run(const struct json_t *docs) {
    dra_features f;
    dra_features_default(&f);
    /* objects as given (no defaults) for half the inputs */
    dra_store_opts o = {.as_given = json_is_array(docs) && json_array_size(docs) % 2, .keep_text = true, .one_shot = true};
    dra_store *store = dra_store_new_with(&f, &o);
    err e;
    err_clear(&e);
    if (!dra_store_apply_json(store, docs, &e)) {
        need_msg(&e, "dra_store_apply_json");
        dra_store_free(store);
        return;
    }
    dra_snapshot *snap = dra_store_acquire(store);
    const dra_world *w = dra_snapshot_world(snap);
    arena mem;
    arena_init(&mem, 0);
    /* every gate on: the most code to reach (the defaults are what `dralloc` runs) */
    f = (dra_features){.admin_access = true, .prioritized_list = true, .partitionable = true, .device_taints = true,
                       .binding_conditions = true, .consumable_capacity = true, .list_type_attributes = true,
                       .derived_attributes = true, .extended_resource = true, .workload_claims = true,
                       .filter_timeout = true, .gate_binding_conditions = true, .gate_device_status = true};
    const dra_node *node = dra_world_find_node(w, "node-1");
    if (!node && dra_world_nnodes(w)) node = dra_world_node(w, 0);
    if (!node) node = dra_node_named(&mem, "node-1");
    dra_allocated *st = dra_allocated_new(w);
    size_t nc = dra_world_nclaims(w);
    const dra_claim **pending = calloc(nc + 1, sizeof *pending);
    size_t np = 0;
    for (size_t i = 0; i < nc; i++) {
        const dra_claim *c = dra_world_claim(w, i);
        dra_allocated_add_claim(st, c, f.consumable_capacity);
        if (!c->allocated) pending[np++] = c;
    }
    err_clear(&e);
    dra_nodeview *v = dra_nodeview_new(w, node, &f, &e);
    if (!v) {
        need_msg(&e, "dra_nodeview_new");
    } else {
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        char why[1024];
        for (size_t i = 0; i <= np && np; i++) {
            /* i < np: claim i alone; i == np: all together */
            const dra_claim *const *cs = i < np ? &pending[i] : pending;
            size_t n = i < np ? 1 : np;
            dra_alloc_result *res = NULL;
            err_clear(&e);
            dra_alloc_status s = dra_allocate(x, v, st, cs, n, &res, &e);
            if (s == DRA_ALLOC_OK) {
                for (size_t k = 0; k < n; k++) encode(&res[k]);
            } else if (s == DRA_ALLOC_UNSAT) {
                dra_alloc_explain(x, why, sizeof why);
            } else {
                need_msg(&e, "dra_allocate");
            }
        }
        dra_alloc_ctx_free(x);
        dra_nodeview_free(v);
    }
    free(pending);
    dra_allocated_free(st);
    arena_free(&mem);
    dra_snapshot_release(snap);
    dra_store_free(store);
}
