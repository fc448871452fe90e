/* preempt_objects.c — what a room reads from the objects (preempt_internal.h):
 * PriorityClasses (scheduling.k8s.io/v1), PodDisruptionBudgets (policy/v1), every
 * Pod's priority, labels, start time and node, and the pods each allocated
 * ResourceClaim is reserved for. */
#include "engine/room/preempt_internal.h"

#include "base/hash.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct pclass {
    const char *name;
    int32_t value;
    bool global_default, never;
} pclass;
typedef DRA_VEC(pclass) pclass_vec;
typedef DRA_VEC(uint32_t) link_vec;

static const json_t *path(const json_t *o, const char *a, const char *b) {
    return json_object_get(json_object_get(o, a), b);
}
static const char *str(const json_t *o, const char *a, const char *b) { return json_string_value(path(o, a, b)); }

/* An int32 field: false with e set when present and not one. */
static bool int32_field(const json_t *v, const char *what, int32_t *out, err *e) {
    if (!v) return true;
    if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX) {
        err_set(e, "%s: must be a 32-bit integer", what);
        return false;
    }
    *out = (int32_t)json_integer_value(v);
    return true;
}

static bool policy_never(const char *p, const char *what, bool *never, err *e) {
    if (!p) return true;
    if (strcmp(p, "Never") && strcmp(p, "PreemptLowerPriority")) {
        err_set(e, "%s: Unsupported value: \"%s\": supported values: \"Never\", \"PreemptLowerPriority\"", what, p);
        return false;
    }
    *never = !strcmp(p, "Never");
    return true;
}

/* RFC 3339 (metav1.Time) to Unix nanoseconds; INT64_MAX when absent or unreadable:
 * kube-scheduler's GetPodStartTime takes "now" for a pod that has not started. */
static int64_t start_ns(const char *t) {
    if (!t) return INT64_MAX;
    struct tm tm = {0};
    const char *rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest) return INT64_MAX;
    int64_t ns = 0, scale = 100000000;
    if (*rest == '.')
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10) ns += (*rest - '0') * scale;
    int64_t off = 0;
    if (*rest == '+' || *rest == '-') {
        int hh = 0, mm = 0;
        if (sscanf(rest + 1, "%d:%d", &hh, &mm) == 2) off = (*rest == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    }
    return ((int64_t)timegm(&tm) - off) * 1000000000 + ns;
}

static bool read_class(const json_t *o, pclass_vec *v, err *e) {
    pclass c = {.name = str(o, "metadata", "name")};
    if (!c.name || !*c.name) {
        err_set(e, "PriorityClass: metadata.name: Required value");
        return false;
    }
    char what[300];
    snprintf(what, sizeof what, "PriorityClass %.200s: value", c.name);
    if (!json_object_get(o, "value")) {
        err_set(e, "%s: Required value", what);
        return false;
    }
    if (!int32_field(json_object_get(o, "value"), what, &c.value, e)) return false;
    c.global_default = json_is_true(json_object_get(o, "globalDefault"));
    snprintf(what, sizeof what, "PriorityClass %.200s: preemptionPolicy", c.name);
    if (!policy_never(json_string_value(json_object_get(o, "preemptionPolicy")), what, &c.never, e)) return false;
    DRA_VEC_PUSH(*v, c);
    return true;
}

static bool read_pdb(dra_room *r, const json_t *o, err *e) {
    dra__pdb b = {.ns = dra_ns(str(o, "metadata", "namespace")), .name = str(o, "metadata", "name")};
    if (!b.name || !*b.name) {
        err_set(e, "PodDisruptionBudget: metadata.name: Required value");
        return false;
    }
    b.selector = path(o, "spec", "selector");
    b.disrupted = path(o, "status", "disruptedPods");
    char what[600];
    snprintf(what, sizeof what, "PodDisruptionBudget %.200s/%.200s: status.disruptionsAllowed", b.ns, b.name);
    if (!int32_field(path(o, "status", "disruptionsAllowed"), what, &b.allowed, e)) return false;
    DRA_VEC_PUSH(r->pdbs, b);
    return true;
}

/* The class a pod without spec.priority gets (establishPriority): its named class, or
 * the globalDefault one with the lowest value, or none (priority 0). The two system
 * classes exist in every cluster (the API server creates them). */
static bool resolve_class(const pclass *cl, size_t n, const char *name, pclass *out, err *e) {
    static const pclass sys[] = {{"system-node-critical", 2000001000, false, false},
                                 {"system-cluster-critical", 2000000000, false, false}};
    const pclass *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (name && *name ? !strcmp(cl[i].name, name) : cl[i].global_default && (!best || cl[i].value < best->value))
            best = &cl[i];
    }
    for (size_t i = 0; !best && name && *name && i < 2; i++)
        if (!strcmp(sys[i].name, name)) best = &sys[i];
    if (!best && name && *name) {
        err_set(e, "no PriorityClass with name %s was found", name);
        return false;
    }
    *out = best ? *best : (pclass){.value = 0};
    return true;
}

static bool read_pod(dra_room *r, const json_t *o, const pclass *cl, size_t ncl, err *e) {
    dra__rpod p = {.ns = dra_ns(str(o, "metadata", "namespace")), .name = str(o, "metadata", "name"),
                   .uid = str(o, "metadata", "uid"), .obj = o};
    if (!p.name) return true;   /* the store refuses it and says so */
    const char *node = str(o, "spec", "nodeName");
    p.node = node && *node ? node : NULL;
    const char *phase = str(o, "status", "phase");
    p.gone = path(o, "metadata", "deletionTimestamp") || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
    p.group = json_string_value(json_object_get(path(o, "spec", "schedulingGroup"), "podGroupName"));
    p.start_ns = start_ns(str(o, "status", "startTime"));
    pclass c;
    err e2;
    err_clear(&e2);
    /* spec.priority is what admission set from the class: the class is needed only
     * when it is absent (its preemptionPolicy is then the pod's too) */
    bool has_priority = path(o, "spec", "priority") != NULL;
    if (!resolve_class(cl, ncl, str(o, "spec", "priorityClassName"), &c, &e2)) {
        if (!has_priority) {
            err_set(e, "pod %s/%s: %s", p.ns, p.name, e2.msg);
            return false;
        }
        c = (pclass){.value = 0};
    }
    p.priority = c.value;
    p.never = c.never;
    char what[600];
    snprintf(what, sizeof what, "pod %.200s/%.200s: spec.priority", p.ns, p.name);
    if (!int32_field(path(o, "spec", "priority"), what, &p.priority, e)) return false;
    snprintf(what, sizeof what, "pod %.200s/%.200s: spec.preemptionPolicy", p.ns, p.name);
    if (!policy_never(str(o, "spec", "preemptionPolicy"), what, &p.never, e)) return false;
    p.wpod = dra__world_find_pod(r->w, p.ns, p.name);
    DRA_VEC_PUSH(r->pods, p);
    return true;
}

static uint64_t pod_hash(const char *ns, const char *name) {
    return hash_u64(hash_bytes(ns, strlen(ns)) ^ (hash_bytes(name, strlen(name)) * 31));
}

/* The pod ns/name (index), or -1. Names are few per hash: the map keeps the first. */
static long find_pod(const dra_room *r, hmap *idx, const char *ns, const char *name, const char *uid) {
    uint64_t i;
    for (uint64_t probe = pod_hash(ns, name); hmap_get(idx, probe, &i); probe = hash_u64(probe)) {
        const dra__rpod *p = &r->pods.v[i - 1];
        if (!strcmp(p->ns, ns) && !strcmp(p->name, name)) return uid && p->uid && strcmp(uid, p->uid) ? -1 : (long)i - 1;
    }
    return -1;
}

static void read_claim(dra_room *r, hmap *idx, const json_t *o, link_vec *links) {
    const char *ns = dra_ns(str(o, "metadata", "namespace")), *name = str(o, "metadata", "name");
    const json_t *status = json_object_get(o, "status");
    if (!name || !json_object_get(status, "allocation")) return;
    const dra_claim *c = dra_world_find_claim(r->w, ns, name);
    if (!c || !c->allocated) return;
    dra__rclaim rc = {.c = c};
    uint32_t ci = (uint32_t)r->claims.n;
    size_t i;
    const json_t *ref;
    json_array_foreach(json_object_get(status, "reservedFor"), i, ref) {
        const char *res = json_string_value(json_object_get(ref, "resource"));
        const char *group = json_string_value(json_object_get(ref, "apiGroup"));
        long p = res && !strcmp(res, "pods") && (!group || !*group)
                     ? find_pod(r, idx, ns, json_string_value(json_object_get(ref, "name")) ?: "",
                                json_string_value(json_object_get(ref, "uid")))
                     : -1;
        if (p < 0) {
            rc.pinned = true;   /* a PodGroup, or a pod the objects do not have: it stays */
            continue;
        }
        if (r->pods.v[p].gone) continue;   /* its reservation ends anyway */
        rc.nreservers++;
        DRA_VEC_PUSH(*links, (uint32_t)p);
        DRA_VEC_PUSH(*links, ci);
    }
    DRA_VEC_PUSH(r->claims, rc);
}

static void index_nodes(dra_room *r, link_vec *links) {
    /* each pod's claims, from the (pod, claim) pairs */
    for (size_t i = 0; i + 1 < links->n; i += 2) r->pods.v[links->v[i]].nclaims++;
    for (size_t p = 0; p < r->pods.n; p++) {
        r->pods.v[p].claims = ARENA_NEWN(&r->a, uint32_t, r->pods.v[p].nclaims + 1);
        r->pods.v[p].nclaims = 0;
    }
    for (size_t i = 0; i + 1 < links->n; i += 2) {
        dra__rpod *p = &r->pods.v[links->v[i]];
        p->claims[p->nclaims++] = links->v[i + 1];
    }
    for (size_t p = 0; p < r->pods.n; p++) {
        const dra__rpod *rp = &r->pods.v[p];
        if (!rp->node || rp->gone) continue;
        uint64_t probe = hash_bytes(rp->node, strlen(rp->node)), i;
        dra__node_pods *np = NULL;
        for (; hmap_get(&r->pods_by_node, probe, &i); probe = hash_u64(probe))
            if (!strcmp(r->node_pods.v[i - 1].node, rp->node)) np = &r->node_pods.v[i - 1];
        if (!np) {
            dra__node_pods nn = {.node = rp->node};
            DRA_VEC_PUSH(r->node_pods, nn);
            hmap_put(&r->pods_by_node, probe, r->node_pods.n);
            np = &r->node_pods.v[r->node_pods.n - 1];
        }
        DRA_VEC_PUSH(np->v, (uint32_t)p);
    }
}

/* What dra__node_usage counts, for every node of the room's pods at once: the room
 * holds every pod bound to the nodes it covers (all of them, or the extender's
 * candidates), so its pods' world objects are that count's pods. */
static void count_usage(dra_room *r) {
    for (size_t i = 0; i < r->pods.n; i++) {
        const dra_pod *p = r->pods.v[i].wpod;
        if (!p || p->terminated || !p->node_name) continue;
        uint64_t probe = hash_bytes(p->node_name, strlen(p->node_name)), j;
        dra__qnode *q = NULL;
        for (; hmap_get(&r->usage_idx, probe, &j); probe = hash_u64(probe))
            if (!strcmp(r->usage.v[j - 1].node, p->node_name)) q = &r->usage.v[j - 1];
        if (!q) {
            dra__qnode nn = {.node = p->node_name};
            DRA_VEC_PUSH(r->usage, nn);
            hmap_put(&r->usage_idx, probe, r->usage.n);
            q = &r->usage.v[r->usage.n - 1];
        }
        q->d.pods++, q->d.cpu_milli += p->req_cpu_milli, q->d.memory += p->req_memory;
    }
}

const dra_node_usage *dra__room_base(const dra_room *r, const char *node) {
    static const dra_node_usage none;
    uint64_t j;
    for (uint64_t probe = hash_bytes(node, strlen(node)); hmap_get(&r->usage_idx, probe, &j); probe = hash_u64(probe))
        if (!strcmp(r->usage.v[j - 1].node, node)) return &r->usage.v[j - 1].d;
    return &none;
}

bool dra__room_read(dra_room *r, err *e) {
    pclass_vec classes = {0};
    size_t i;
    const json_t *o;
    bool ok = true;
    json_array_foreach(r->items, i, o) {
        const char *k = json_string_value(json_object_get(o, "kind"));
        if (k && !strcmp(k, "PriorityClass")) ok = ok && read_class(o, &classes, e);
        else if (k && !strcmp(k, "PodDisruptionBudget")) ok = ok && read_pdb(r, o, e);
    }
    json_array_foreach(r->items, i, o) {
        const char *k = json_string_value(json_object_get(o, "kind"));
        if (ok && k && !strcmp(k, "Pod")) ok = read_pod(r, o, classes.v, classes.n, e);
    }
    free(classes.v);
    if (!ok) return false;
    count_usage(r);
    hmap idx;
    hmap_init(&idx);
    for (size_t p = 0; p < r->pods.n; p++) {
        uint64_t probe = pod_hash(r->pods.v[p].ns, r->pods.v[p].name), j;
        while (hmap_get(&idx, probe, &j)) probe = hash_u64(probe);
        hmap_put(&idx, probe, p + 1);
    }
    link_vec links = {0};
    json_array_foreach(r->items, i, o) {
        const char *k = json_string_value(json_object_get(o, "kind"));
        if (k && !strcmp(k, "ResourceClaim")) read_claim(r, &idx, o, &links);
    }
    index_nodes(r, &links);
    free(links.v);
    hmap_free(&idx);
    return true;
}

const uint32_t *dra__room_node_pods(const dra_room *r, const char *node, size_t *n) {
    uint64_t i;
    for (uint64_t probe = hash_bytes(node, strlen(node)); hmap_get(&r->pods_by_node, probe, &i); probe = hash_u64(probe))
        if (!strcmp(r->node_pods.v[i - 1].node, node)) {
            *n = r->node_pods.v[i - 1].v.n;
            return r->node_pods.v[i - 1].v.v;
        }
    *n = 0;
    return NULL;
}

/* metav1.LabelSelector against the pod's labels: matchLabels and matchExpressions
 * (In, NotIn, Exists, DoesNotExist), all of them. */
static bool expr_matches(const json_t *x, const json_t *labels) {
    const char *key = json_string_value(json_object_get(x, "key"));
    const char *op = json_string_value(json_object_get(x, "operator"));
    if (!key || !op) return false;
    const char *have = json_string_value(json_object_get(labels, key));
    bool in = false;
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(x, "values"), i, v) in |= have && json_string_value(v) &&
                                                                 !strcmp(have, json_string_value(v));
    if (!strcmp(op, "In")) return in;
    if (!strcmp(op, "NotIn")) return !in;
    if (!strcmp(op, "Exists")) return have != NULL;
    if (!strcmp(op, "DoesNotExist")) return have == NULL;
    return false;
}

bool dra__pdb_selects(const dra__pdb *b, const dra__rpod *p) {
    const json_t *labels = path(p->obj, "metadata", "labels");
    /* FilterVictimsWithPDBViolation: a pod without labels, a nil or empty selector:
     * no match */
    if (!json_object_size(labels) || !json_is_object(b->selector) || strcmp(b->ns, p->ns)) return false;
    const json_t *ml = json_object_get(b->selector, "matchLabels");
    const json_t *mx = json_object_get(b->selector, "matchExpressions");
    if (!json_object_size(ml) && !json_array_size(mx)) return false;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)ml, k, v) {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!have || !json_string_value(v) || strcmp(have, json_string_value(v))) return false;
    }
    size_t i;
    json_array_foreach(mx, i, v) if (!expr_matches(v, labels)) return false;
    return true;
}

bool dra__room_movable(const dra_room *r, uint32_t pi) {
    const dra__rpod *p = &r->pods.v[pi];
    if (p->gone || p->group || !p->wpod || p->evicted) return false;
    for (uint32_t k = 0; k < p->nclaims; k++)
        if (r->claims.v[p->claims[k]].pinned || r->claims.v[p->claims[k]].nreservers != 1) return false;
    return true;
}
