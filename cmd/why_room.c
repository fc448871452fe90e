/* why_room.c — `dralloc why NS/POD --make-room [--allow-pdb-violations] [-o json]`:
 * for a pending pod (its whole PodGroup when it has one), the cheapest set of
 * lower-priority pods whose eviction lets it fit, on the best few nodes, in
 * kube-scheduler's order of preemption candidates (engine/preempt.h). JSON:
 *   {"pod": "ns/name", "fits": false, "candidates": [{"node", "victims": [{"namespace",
 *    "name", "priority"}], "pdbViolations", "devices": [{"request", "driver", "pool",
 *    "device"}]}]}
 * best first. Exit 0: some candidate (or the pod fits as things are); 1: none; 2: an
 * error (the pod not found or not pending, a PriorityClass that does not exist). */
#include "cmd/why_room.h"

#include "base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "extender/kube.h"

static void print_text(FILE *f, const json_t *out) {
    const char *pod = json_string_value(json_object_get(out, "pod"));
    const json_t *cands = json_object_get(out, "candidates");
    const char *group = json_string_value(json_object_get(out, "podGroup"));
    long long prio = (long long)json_integer_value(json_object_get(out, "priority"));
    if (json_is_true(json_object_get(out, "fits"))) {
        fprintf(f, "pod %s (priority %lld) fits without evicting anything, on:", pod, prio);
        size_t i;
        json_t *c;
        json_array_foreach(cands, i, c) fprintf(f, " %s", json_string_value(json_object_get(c, "node")));
        fputc('\n', f);
        return;
    }
    if (!json_array_size(cands)) {
        const char *why = json_string_value(json_object_get(out, "reason"));
        fprintf(f, "pod %s (priority %lld): no room can be made%s%s\n", pod, prio, why ? ": " : "", why ? why : "");
        return;
    }
    if (group) fprintf(f, "pod %s (priority %lld) and its PodGroup %s fit with these evictions, member by member:\n", pod, prio, group);
    else fprintf(f, "pod %s (priority %lld) fits once these pods are evicted (best node first):\n", pod, prio);
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c) {
        const json_t *v = json_object_get(c, "victims");
        const char *member = json_string_value(json_object_get(c, "pod"));
        fprintf(f, "  %s%s%s: %zu victim(s), %lld PDB violation(s)%s\n", member ? member : "", member ? " on " : "",
                json_string_value(json_object_get(c, "node")), json_array_size(v),
                (long long)json_integer_value(json_object_get(c, "pdbViolations")),
                json_is_false(json_object_get(c, "exact")) ? " (search cut short: not proven cheapest)" : "");
        size_t k;
        json_t *x;
        json_array_foreach(v, k, x)
            fprintf(f, "    evict %s/%s (priority %lld)\n", json_string_value(json_object_get(x, "namespace")),
                    json_string_value(json_object_get(x, "name")), (long long)json_integer_value(json_object_get(x, "priority")));
        json_array_foreach(json_object_get(c, "devices"), k, x)
            fprintf(f, "    gets %s/%s/%s (request %s)\n", json_string_value(json_object_get(x, "driver")),
                    json_string_value(json_object_get(x, "pool")), json_string_value(json_object_get(x, "device")),
                    json_string_value(json_object_get(x, "request")));
    }
}

static double secs_since(uint64_t t0) { return (double)(monotonic_ns() - t0) / 1e9; }

bool cmd_room_open(cmd_room *cr, const plan_objects *objs, const dra_features *f, const char *prog) {
    *cr = (cmd_room){0};
    err e;
    err_clear(&e);
    uint64_t t0 = monotonic_ns();
    /* the store takes the objects but the two kinds only the room reads */
    cr->st = plan_store_new(objs, f, &e);
    if (!cr->st) {
        char buf[2048];
        fprintf(stderr, "%s: %s\n", prog, err_format(&e, buf, sizeof buf));
        return false;
    }
    cr->s = dra_store_acquire(cr->st);
    cr->store_s = secs_since(t0);
    t0 = monotonic_ns();
    cr->r = cr->s ? dra_room_new(cr->s, objs->items, &e) : NULL;
    cr->room_s = secs_since(t0);
    if (!cr->r) {
        fprintf(stderr, "%s: %s\n", prog, cr->s ? e.msg : "no objects");
        cmd_room_close(cr);
        return false;
    }
    return true;
}

void cmd_room_close(cmd_room *cr) {
    dra_room_free(cr->r);
    dra_snapshot_release(cr->s);
    dra_store_free(cr->st);
    *cr = (cmd_room){0};
}

int cmd_why_make_room(const plan_objects *objs, const dra_features *f, const char *ns, const char *name,
                      bool allow_pdb, bool as_json, bool timings) {
    cmd_room cr;
    if (!cmd_room_open(&cr, objs, f, "dralloc why")) return 2;
    uint64_t t0 = monotonic_ns();
    err e;
    err_clear(&e);
    int rc = 2;
    dra_room_opts o = {.allow_pdb_violations = allow_pdb};
    dra_room_status status;
    json_t *out = dra_room_make(cr.r, ns, name, &o, &status, &e);
    if (timings)
        fprintf(stderr, "dralloc why: timings: store built %.3f s (the engine's ingest); room read %.3f s (priorities, "
                        "PDBs, reservations); make-room %.3f s (the search)\n", cr.store_s, cr.room_s, secs_since(t0));
    if (!out) {
        fprintf(stderr, "dralloc why: %s\n", e.msg);
    } else {
        if (as_json) {
            json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            fputc('\n', stdout);
        } else {
            print_text(stdout, out);
        }
        rc = status == DRA_ROOM_FOUND ? 0 : 1;
    }
    json_decref(out);
    cmd_room_close(&cr);
    return rc;
}

bool cmd_why_room_fetch(const cmd_kube_flags *kube, plan_objects *objs) {
    static const char *const lists[][2] = {{"/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass"},
                                           {"/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget"}};
    err e;
    err_clear(&e);
    ext_kube *k = ext_kube_new(&kube->o, &e);
    if (!k) {
        fprintf(stderr, "dralloc why: %s\n", e.msg);
        return false;
    }
    bool ok = true;
    for (size_t l = 0; ok && l < 2; l++) {
        ext_kube_resp r = {0};
        ok = ext_kube_request(k, "GET", lists[l][0], NULL, NULL, &r, &e) && (r.status == 200 || r.status == 404);
        if (ok && r.status == 404) {   /* not served: none of them, as kube-scheduler would list none */
            free(r.body);
            continue;
        }
        json_t *doc = ok ? json_loadb(r.body, r.len, 0, NULL) : NULL;
        if (!ok || !json_is_object(doc)) {
            fprintf(stderr, "dralloc why: %s: list %s: %s\n", ext_kube_server(k), lists[l][0],
                    e.msg[0] ? e.msg : "the API server did not answer with a list");
            ok = false;
        }
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(doc, "items"), i, x) {
            /* a list's items leave kind out */
            json_object_set_new(x, "kind", json_string(lists[l][1]));
            json_array_append(objs->items, x);
            json_array_append_new(objs->sources, json_string("(cluster)"));
        }
        json_decref(doc);
        free(r.body);
    }
    ext_kube_free(k);
    return ok;
}
