/* preempt_extend.c — the extender's preempt verb (preempt.h, dra_room_extend): a room
 * over the candidate nodes only, and per node kube-scheduler's victims completed with
 * the ones DRA needs. */
#include "engine/room/preempt_internal.h"

#include "base/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* preempt.h; the room reads a victim's claims through the same names. */
void dra_room_pod_claim_names(const json_t *pod, json_t *names) {
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "resourceClaims"), i, x)
        if (json_string_value(json_object_get(x, "resourceClaimName"))) json_array_append(names, json_object_get(x, "resourceClaimName"));
    const json_t *status = json_object_get(pod, "status");
    json_array_foreach(json_object_get(status, "resourceClaimStatuses"), i, x)
        if (json_string_value(json_object_get(x, "resourceClaimName"))) json_array_append(names, json_object_get(x, "resourceClaimName"));
    const json_t *ext = json_object_get(json_object_get(status, "extendedResourceClaimStatus"), "resourceClaimName");
    if (json_string_value(ext)) json_array_append(names, (json_t *)ext);
}

static json_t *parse(const char *text) { return text ? json_loads(text, 0, NULL) : NULL; }

dra_room *dra_room_new_nodes(dra_snapshot *s, const json_t *pod, const char *const *nodes, size_t n, err *e) {
    const dra_world *w = dra__snapshot_world(s);
    hmap want;
    hmap_init(&want);
    for (size_t i = 0; i < n; i++) hmap_put(&want, hash_bytes(nodes[i], strlen(nodes[i])), i + 1);
    json_t *items = json_array(), *seen = json_object();
    json_array_append(items, (json_t *)pod);
    bool ok = true;
    for (size_t i = 0; ok && i < dra_world_npods(w); i++) {
        const dra_pod *p = dra_world_pod(w, i);
        uint64_t k;
        if (!p->node_name || !hmap_get(&want, hash_bytes(p->node_name, strlen(p->node_name)), &k) ||
            strcmp(nodes[k - 1], p->node_name))
            continue;
        json_t *obj = parse(p->raw_json);
        if (!obj) {
            err_set(e, "pod %s/%s: the store keeps no object text to read priorities from (serve --preempt-verb keeps it)",
                    dra_ns(p->ns), p->name);
            ok = false;
            break;
        }
        json_t *names = json_array();
        dra_room_pod_claim_names(obj, names);
        size_t j;
        json_t *nm;
        json_array_foreach(names, j, nm) {
            char key[600];
            snprintf(key, sizeof key, "%s/%s", dra_ns(p->ns), json_string_value(nm));
            if (json_object_get(seen, key)) continue;
            json_object_set_new(seen, key, json_true());
            const dra_claim *c = dra_world_find_claim(w, dra_ns(p->ns), json_string_value(nm));
            json_t *cobj = dra_claim_object(c);
            if (cobj) {
                if (!json_object_get(cobj, "kind")) json_object_set_new(cobj, "kind", json_string("ResourceClaim"));
                json_array_append_new(items, cobj);
            }
        }
        json_decref(names);
        if (!json_object_get(obj, "kind")) json_object_set_new(obj, "kind", json_string("Pod"));
        json_array_append_new(items, obj);
    }
    hmap_free(&want);
    json_decref(seen);
    dra_room *r = ok ? dra_room_new(s, items, e) : NULL;
    json_decref(items);
    return r;
}

bool dra_room_claim_allocated(dra_snapshot *s, const char *ns, const char *name, const char **uid, json_t **obj) {
    const dra_claim *c = dra_world_find_claim(dra__snapshot_world(s), ns, name);
    *uid = c ? c->uid : NULL;
    *obj = c && c->allocated ? dra_claim_object(c) : NULL;
    return c && c->allocated;
}

static long by_uid(const dra_room *r, const char *node, const char *uid) {
    size_t n;
    const uint32_t *pods = dra__room_node_pods(r, node, &n);
    for (size_t i = 0; uid && i < n; i++)
        if (r->pods.v[pods[i]].uid && !strcmp(r->pods.v[pods[i]].uid, uid)) return pods[i];
    return -1;
}

/* One node: kube-scheduler's victims (uids), and the ones more DRA needs; NULL when no set works. */
static json_t *one_node(dra_room *r, const dra_pod_request *pr, int32_t prio, const char *node, const json_t *mv,
                        arena *a) {
    const json_t *kpods = json_object_get(mv, "Pods");
    size_t nk = json_array_size(kpods), i;
    long *forced = ARENA_NEWN(a, long, nk + 1);
    dra_node_usage d = {0};
    for (i = 0; i < nk; i++) {
        forced[i] = by_uid(r, node, json_string_value(json_object_get(json_array_get(kpods, i), "UID")));
        if (forced[i] < 0 || r->pods.v[forced[i]].evicted) continue;
        dra__room_remove(r, (uint32_t)forced[i], &d);
        r->pods.v[forced[i]].evicted = true;
    }
    json_t *out = json_pack("{s:o, s:I}", "Pods", json_is_array(kpods) ? json_deep_copy(kpods) : json_array(),
                            "NumPDBViolations", (json_int_t)json_integer_value(json_object_get(mv, "NumPDBViolations")));
    arena fa;
    arena_init(&fa, 4096);
    dra_fit f;
    dra__pod_fit_state(pr, r->st, dra__room_base(r, node), &d, r->x, &fa, node, false, &f, NULL);
    arena_free(&fa);
    if (f.status != DRA_FIT_OK) {
        dra_room_opts o = {.allow_pdb_violations = true};   /* kube-scheduler weighs violations; it does not refuse them */
        dra__cand c;
        if (dra__room_node_search(r, pr, prio, node, &d, &o, a, &c)) {
            json_t *pods = json_object_get(out, "Pods");
            for (size_t k = 0; k < c.n; k++)
                json_array_append_new(pods, json_pack("{s:s}", "UID", r->pods.v[c.victims[k]].uid ? r->pods.v[c.victims[k]].uid : ""));
            json_object_set_new(out, "NumPDBViolations",
                                json_integer(json_integer_value(json_object_get(out, "NumPDBViolations")) + c.pdb));
            json_decref(c.devices);
        } else {
            json_decref(out);
            out = NULL;
        }
    }
    for (i = nk; i-- > 0;) {
        if (forced[i] < 0 || !r->pods.v[forced[i]].evicted) continue;
        r->pods.v[forced[i]].evicted = false;
        dra__room_restore(r, (uint32_t)forced[i], &d);
    }
    return out;
}

json_t *dra_room_extend(dra_room *r, const char *ns, const char *name, const json_t *victims, err *e) {
    long p = -1;
    for (size_t i = 0; i < r->pods.n && p < 0; i++)
        if (!strcmp(r->pods.v[i].ns, dra_ns(ns)) && !strcmp(r->pods.v[i].name, name)) p = (long)i;
    if (p < 0) {
        err_set(e, "pod %s/%s not found", dra_ns(ns), name);
        return NULL;
    }
    dra_pod_request *pr = dra_pod_request_new(r->s, r->pods.v[p].obj, e);
    if (!pr) return NULL;
    dra__room_fresh(r);
    arena a;
    arena_init(&a, 8192);
    json_t *out = json_object();
    const char *node;
    const json_t *mv;
    json_object_foreach((json_t *)victims, node, mv) {
        json_t *v = dra_pod_request_needs_dra(pr) ? one_node(r, pr, r->pods.v[p].priority, node, mv, &a) : json_deep_copy(mv);
        if (v) json_object_set_new(out, node, v);
    }
    arena_free(&a);
    dra_pod_request_free(pr);
    return json_pack("{s:o}", "NodeNameToMetaVictims", out);
}
