/* result_encode.c — AllocationResult (resource.k8s.io/v1 `status.allocation`) as
 * jansson values, field names and omission rules as the Go types serialise them:
 * adminAccess only when true, tolerations/bindingConditions/shareID/consumedCapacity
 * only when present, config and nodeSelector omitted when empty; map keys
 * (consumedCapacity) sorted as encoding/json sorts a Go map's. Quantities print in
 * Kubernetes' canonical form. Also the ResourceClaim object around an allocation,
 * as both printers of allocated claims build it, and what the control plane writes
 * around it before `kubectl get resourceclaim -o yaml` shows it:
 *   - the ResourceClaim controller (pkg/controller/resourceclaim, handleClaim) creates
 *     a template's claim with GenerateName "<pod>-<entry>-" (both cut in proportion
 *     when longer than 57 bytes), the pod as controlling owner, the template's labels
 *     and annotations plus resource.kubernetes.io/pod-claim-name, and records the name
 *     in the pod's status.resourceClaimStatuses;
 *   - the API server turns a GenerateName into a name (names.SimpleNameGenerator: cut
 *     to 58 bytes, 5 characters of apimachinery's rand alphabet appended);
 *   - kube-scheduler's PreBind (dynamicresources.go, bindClaim) adds the
 *     resource.kubernetes.io/delete-protection finalizer before it writes an
 *     allocation, appends the pod to status.reservedFor, and sets
 *     status.allocation.allocationTimestamp when DRADeviceBindingConditions and
 *     DRAResourceClaimDeviceStatus are both on and it is unset;
 *   - the object then reads back from etcd as Go encodes it: omitempty fields that
 *     are empty are absent, non-omitempty slices that are empty are null, struct
 *     fields are always there, defaults filled in (dra_claim_json_normalize). */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static json_t *strs_json(const dra_strs *s) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < s->n; i++) json_array_append_new(a, json_string(s->v[i]));
    return a;
}

static json_t *qty_json(const quantity *q) {
    char buf[QUANTITY_STR_MAX];
    quantity_format(q, buf, sizeof buf);
    return json_string(buf);
}

static json_t *reqs_json(const dra_ns_req *r, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "key", json_string(r[i].key));
        json_object_set_new(o, "operator", json_string(r[i].op_text ? r[i].op_text : ""));
        if (r[i].values.n) json_object_set_new(o, "values", strs_json(&r[i].values));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *dra_node_selector_to_json(const dra_node_selector *ns) {
    json_t *o = json_object();
    json_t *terms = json_array();
    for (uint32_t i = 0; i < ns->nterms; i++) {
        json_t *t = json_object();
        if (ns->terms[i].nexprs) json_object_set_new(t, "matchExpressions", reqs_json(ns->terms[i].exprs, ns->terms[i].nexprs));
        if (ns->terms[i].nfields) json_object_set_new(t, "matchFields", reqs_json(ns->terms[i].fields, ns->terms[i].nfields));
        json_array_append_new(terms, t);
    }
    json_object_set_new(o, "nodeSelectorTerms", terms);
    return o;
}

static json_t *tols_json(const dra_toleration *t, uint32_t n) {
    json_t *a = json_array();
    for (uint32_t i = 0; i < n; i++) {
        json_t *o = json_object();
        if (t[i].key) json_object_set_new(o, "key", json_string(t[i].key));
        if (t[i].op) json_object_set_new(o, "operator", json_string(t[i].op));
        if (t[i].value) json_object_set_new(o, "value", json_string(t[i].value));
        if (t[i].effect) json_object_set_new(o, "effect", json_string(t[i].effect));
        if (t[i].has_seconds) json_object_set_new(o, "tolerationSeconds", json_integer(t[i].seconds));
        json_array_append_new(a, o);
    }
    return a;
}

static int cmp_cap_key(const void *a, const void *b) {
    return strcmp((*(const dra_cap_value *const *)a)->key, (*(const dra_cap_value *const *)b)->key);
}

/* consumedCapacity is a Go map: encoding/json writes its keys sorted. */
static json_t *consumed_json(const dra_cap_value *v, uint32_t n) {
    const dra_cap_value **order = xmalloc(n * sizeof *order);
    for (uint32_t i = 0; i < n; i++) order[i] = &v[i];
    qsort(order, n, sizeof *order, cmp_cap_key);
    json_t *cc = json_object();
    for (uint32_t i = 0; i < n; i++) json_object_set_new(cc, order[i]->key, qty_json(&order[i]->value));
    free(order);
    return cc;
}

/* A result's first members, in the API server's order (DeviceRequestAllocationResult:
 * Request, Driver, Pool, Device): the rest is the caller's. */
static json_t *result_names_json(const char *request, const char *driver, const char *pool, const char *device) {
    json_t *x = json_object();
    json_object_set_new(x, "request", json_string(request));
    json_object_set_new(x, "driver", json_string(driver));
    json_object_set_new(x, "pool", json_string(pool));
    json_object_set_new(x, "device", json_string(device));
    return x;
}

json_t *dra_alloc_result_to_json(const dra_alloc_result *r) {
    json_t *o = json_object();
    json_t *devs = json_object();
    json_t *res = json_array();
    for (uint32_t i = 0; i < r->nresults; i++) {
        const dra_device_result *d = &r->results[i];
        json_t *x = result_names_json(d->request, d->driver, d->pool, d->device);
        if (d->admin_access == 1) json_object_set_new(x, "adminAccess", json_true());
        if (d->ntols) json_object_set_new(x, "tolerations", tols_json(d->tols, d->ntols));
        if (d->binding_conditions.n) json_object_set_new(x, "bindingConditions", strs_json(&d->binding_conditions));
        if (d->binding_failure_conditions.n)
            json_object_set_new(x, "bindingFailureConditions", strs_json(&d->binding_failure_conditions));
        if (d->share_id) json_object_set_new(x, "shareID", json_string(d->share_id));
        if (d->nconsumed) json_object_set_new(x, "consumedCapacity", consumed_json(d->consumed, d->nconsumed));
        json_array_append_new(res, x);
    }
    /* Go's `json:"results,omitempty"`: a claim without requests is allocated as
     * devices: {} (found by tests/upstream's differential test) */
    if (r->nresults) json_object_set_new(devs, "results", res);
    else json_decref(res);
    if (r->nconfigs) {
        json_t *cfg = json_array();
        for (uint32_t i = 0; i < r->nconfigs; i++) {
            const dra_config *c = &r->configs[i];
            json_t *x = json_object();
            json_object_set_new(x, "source", json_string(c->source ? c->source : ""));
            if (c->requests.n) json_object_set_new(x, "requests", strs_json(&c->requests));
            if (c->has_opaque) {
                json_t *op = json_object();
                json_object_set_new(op, "driver", json_string(c->driver ? c->driver : ""));
                if (c->params_json) {
                    json_t *p = json_loads(c->params_json, JSON_DECODE_ANY, NULL);
                    if (p) json_object_set_new(op, "parameters", p);
                }
                json_object_set_new(x, "opaque", op);
            }
            json_array_append_new(cfg, x);
        }
        json_object_set_new(devs, "config", cfg);
    }
    json_object_set_new(o, "devices", devs);
    if (r->node_selector) json_object_set_new(o, "nodeSelector", dra_node_selector_to_json(r->node_selector));
    return o;
}

json_t *dra_claim_object(const dra_claim *c) {
    if (!c || !c->raw_json || c->from_template) return NULL;
    /* the text is json_dumps' (decode_util.c), which writes a NUL in a string as \u0000 */
    json_t *o = json_loads(c->raw_json, JSON_ALLOW_NUL, NULL);
    if (!o || !c->raw_results_elided) return o;
    json_t *devs = json_object_get(json_object_get(json_object_get(o, "status"), "allocation"), "devices");
    json_t *res = json_array();
    for (uint32_t i = 0; i < c->nalloc_results; i++) {
        const dra_claim_result *r = &c->alloc_results[i];
        /* the keys in decode_claim.c's ELIDE_KEYS order: what results_elidable let through */
        json_t *x = result_names_json(r->request, r->driver, r->pool, r->device);
        if (r->admin_access >= 0) json_object_set_new(x, "adminAccess", json_boolean(r->admin_access == 1));
        if (r->share_id) json_object_set_new(x, "shareID", json_string(r->share_id));
        json_array_append_new(res, x);
    }
    json_object_set_new(devs, "results", res);
    return o;
}

json_t *dra_claim_json_new(const dra_claim *c, json_t **meta) {
    json_t *o = json_object();
    json_object_set_new(o, "apiVersion", json_string("resource.k8s.io/v1"));
    json_object_set_new(o, "kind", json_string("ResourceClaim"));
    json_t *m = json_object();
    json_object_set_new(m, "name", json_string(c->name));
    /* ResourceClaims are namespaced: the API server always fills it in */
    json_object_set_new(m, "namespace", json_string(dra_ns(c->ns)));
    json_object_set_new(o, "metadata", m);
    if (meta) *meta = m;
    return o;
}

void dra_claim_json_set_allocation(json_t *claim, const dra_alloc_result *r) {
    json_t *st = json_object_get(claim, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(claim, "status", st);
    }
    json_object_set_new(st, "allocation", dra_alloc_result_to_json(r));
}

/* ---- what the control plane writes around an allocation ------------------------------- */

/* k8s.io/apimachinery/pkg/util/rand's alphabet: no vowels (no words), no 0, 1, 3
 * (no look-alikes). */
static const char rand_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

/* names.SimpleNameGenerator: maxNameLength 63 less 5 random characters. */
enum { GENERATED_BASE_MAX = 58, GENERATED_RANDOM = 5 };

/* 5 characters of the alphabet from x, as utilrand.String draws them: 5 bits at a
 * time, values past the alphabet skipped. */
static void random_suffix(dra_alloc_ctx *x, char out[GENERATED_RANDOM + 1]) {
    uint64_t bits = 0;
    int left = 0;
    for (int i = 0; i < GENERATED_RANDOM;) {
        if (left < 5) bits = dra_alloc_ctx_random(x), left = 64;
        unsigned idx = (unsigned)(bits & 31);
        bits >>= 5;
        left -= 5;
        if (idx < sizeof rand_alphabet - 1) out[i++] = rand_alphabet[idx];
    }
    out[GENERATED_RANDOM] = '\0';
}

void dra_pod_claim_generate_name(const char *pod, const char *entry, char *out, size_t n) {
    size_t lp = strlen(pod), le = strlen(entry), total = lp + le + 2;
    /* 57 leaves room for a hyphen and 5 random characters in 63; a longer base is cut
     * in proportion (and, as the controller does it, loses its trailing hyphen) */
    if (total <= 57) snprintf(out, n, "%s-%s-", pod, entry);
    else snprintf(out, n, "%.*s-%.*s", (int)(lp * 57 / total), pod, (int)(le * 57 / total), entry);
}

const char *dra_rfc3339_utc(int64_t unix_seconds, char buf[32]) {
    time_t t = unix_seconds < 0 ? time(NULL) : (time_t)unix_seconds;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm)) snprintf(buf, 32, "1970-01-01T00:00:00Z");
    return buf;
}

/* ---- one pod's binding ---- */

static void claim_key(const char *ns, const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", dra_ns(ns), name);
}

void dra_pod_binding_init(dra_pod_binding *b, const dra_world *w, const dra_pod *pod, dra_alloc_ctx *x, const char *now,
                          json_t *names) {
    memset(b, 0, sizeof *b);
    b->w = w;
    b->x = x;
    b->pod = pod;
    b->ns = dra_ns(pod->ns);
    b->now = now;
    b->names = names ? json_incref(names) : json_object();
    json_t *pj = pod->raw_json ? json_loads(pod->raw_json, 0, NULL) : NULL;
    const char *uid = json_string_value(json_object_get(json_object_get(pj, "metadata"), "uid"));
    /* the API server gives every pod a UID; a pod written by hand has none yet */
    if (uid && *uid) snprintf(b->uid, sizeof b->uid, "%s", uid);
    else dra_alloc_ctx_uuid(x, b->uid), b->uid_made = true;
    b->claim_statuses = json_array();
    json_t *old = json_object_get(json_object_get(pj, "status"), "resourceClaimStatuses");
    for (size_t i = 0; i < json_array_size(old); i++) json_array_append(b->claim_statuses, json_array_get(old, i));
    json_decref(pj);
}

void dra_pod_binding_free(dra_pod_binding *b) {
    json_decref(b->names);
    json_decref(b->claim_statuses);
    b->names = b->claim_statuses = NULL;
}

static bool name_taken(const dra_pod_binding *b, const char *name) {
    char key[600];
    claim_key(b->ns, name, key, sizeof key);
    return json_object_get(b->names, key) || dra_world_find_claim(b->w, b->ns, name);
}

/* The API server's name for GenerateName base in the pod's namespace: not one of the
 * input's claims nor one made earlier in this run. */
static void generate_name(dra_pod_binding *b, const char *base, char out[64]) {
    char suffix[GENERATED_RANDOM + 1];
    /* 14 million names per base: a clash is rare, and the API server's AlreadyExists
     * makes the controller try again just as this loop does */
    int tries = 0;
    do {
        random_suffix(b->x, suffix);
        snprintf(out, 64, "%.*s%s", GENERATED_BASE_MAX, base, suffix);
    } while (name_taken(b, out) && ++tries < 1000);
    char key[600];
    claim_key(b->ns, out, key, sizeof key);
    json_object_set_new(b->names, key, json_true());
}

static json_t *meta_of(json_t *claim) {
    json_t *m = json_object_get(claim, "metadata");
    if (!json_is_object(m)) json_object_set_new(claim, "metadata", m = json_object());
    return m;
}

/* metadata.ownerReferences: [the pod] (metav1.OwnerReference). */
static void set_pod_owner(const dra_pod_binding *b, json_t *meta, bool block_owner_deletion) {
    json_t *ref = json_pack("{s:s, s:s, s:s, s:s, s:b}", "apiVersion", "v1", "kind", "Pod", "name", b->pod->name, "uid",
                            b->uid, "controller", 1);
    if (block_owner_deletion) json_object_set_new(ref, "blockOwnerDeletion", json_true());
    json_t *refs = json_array();
    json_array_append_new(refs, ref);
    json_object_set_new(meta, "ownerReferences", refs);
}

const char *dra_pod_binding_generated(dra_pod_binding *b, json_t *claim, const char *entry,
                                      const dra_claim_template *t) {
    json_t *meta = meta_of(claim);
    char base[600], name[64];
    dra_pod_claim_generate_name(b->pod->name, entry, base, sizeof base);
    generate_name(b, base, name);
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "generateName", json_string(base));
    json_object_set_new(meta, "namespace", json_string(b->ns));
    /* the template's labels and annotations, then the entry's name */
    json_t *tm = t && t->meta_json ? json_loads(t->meta_json, 0, NULL) : NULL;
    json_t *labels = json_object_get(tm, "labels"), *ann = json_object_get(tm, "annotations");
    if (json_is_object(labels) && json_object_size(labels)) json_object_set(meta, "labels", labels);
    json_t *a = json_is_object(ann) ? json_copy(ann) : json_object();
    json_object_set_new(a, DRA_POD_CLAIM_NAME_ANNOTATION, json_string(entry));
    json_object_set_new(meta, "annotations", a);
    json_decref(tm);
    set_pod_owner(b, meta, true);
    /* pod status.resourceClaimStatuses: a map keyed by the entry's name */
    json_t *st = NULL;
    size_t i;
    json_t *v;
    json_array_foreach(b->claim_statuses, i, v) {
        if (!strcmp(json_string_value(json_object_get(v, "name")) ?: "", entry)) st = v;
    }
    if (!st) json_array_append_new(b->claim_statuses, st = json_pack("{s:s}", "name", entry));
    json_object_set_new(st, "resourceClaimName", json_string(name));
    b->generated = true;
    return json_string_value(json_object_get(meta, "name"));
}

const char *dra_pod_binding_implicit(dra_pod_binding *b, json_t *claim) {
    /* the scheduler creates it (createExtendedResourceClaimInAPI) with GenerateName
     * "<pod>-extended-resources-" and the pod as controller, without blockOwnerDeletion */
    json_t *meta = meta_of(claim);
    char base[600], name[64];
    snprintf(base, sizeof base, "%s-extended-resources-", b->pod->name);
    generate_name(b, base, name);
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "generateName", json_string(base));
    json_object_set_new(meta, "namespace", json_string(b->ns));
    set_pod_owner(b, meta, false);
    return json_string_value(json_object_get(meta, "name"));
}

/* resourceclaim.IsReservedForPod: an entry with the consumer's UID. */
static bool reserved_for(const json_t *status, const char *uid) {
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(status, "reservedFor"), i, v) {
        const char *u = json_string_value(json_object_get(v, "uid"));
        if (u && !strcmp(u, uid)) return true;
    }
    return false;
}

bool dra_claim_prebind_finalizer(json_t *claim) {
    json_t *meta = meta_of(claim);
    json_t *fin = json_object_get(meta, "finalizers");
    if (!json_is_array(fin)) json_object_set_new(meta, "finalizers", fin = json_array());
    size_t i;
    json_t *v;
    json_array_foreach(fin, i, v) if (!strcmp(json_string_value(v) ?: "", DRA_CLAIM_FINALIZER)) return false;
    json_array_append_new(fin, json_string(DRA_CLAIM_FINALIZER));
    return true;
}

void dra_claim_prebind_status(json_t *claim, const json_t *alloc, const json_t *consumer) {
    json_t *st = json_object_get(claim, "status");
    if (!json_is_object(st)) json_object_set_new(claim, "status", st = json_object());
    if (alloc && !json_object_get(st, "allocation")) json_object_set(st, "allocation", (json_t *)alloc);
    if (consumer) {
        json_t *rf = json_object_get(st, "reservedFor");
        if (!json_is_array(rf)) json_object_set_new(st, "reservedFor", rf = json_array());
        json_array_append_new(rf, json_deep_copy(consumer));
    }
}

bool dra_pod_binding_reserve(dra_pod_binding *b, json_t *claim, bool allocated_now) {
    json_t *pod = json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", b->pod->name, "uid", b->uid);
    bool done = dra_pod_binding_reserve_for(b, claim, allocated_now, pod);
    json_decref(pod);
    return done;
}

bool dra_pod_binding_reserve_for(dra_pod_binding *b, json_t *claim, bool allocated_now, const json_t *consumer) {
    json_t *st = json_object_get(claim, "status");
    if (!json_is_object(st)) json_object_set_new(claim, "status", st = json_object());
    /* PreBind calls bindClaim only for claims not reserved for the pod yet */
    if (reserved_for(st, json_string_value(json_object_get(consumer, "uid")) ?: "")) return false;
    /* the finalizer goes in (a plain update) before the allocation is written */
    if (allocated_now) dra_claim_prebind_finalizer(claim);
    dra_claim_prebind_status(claim, NULL, consumer);
    json_t *alloc = json_object_get(st, "allocation");
    if (b->now && json_is_object(alloc) && json_is_null(json_object_get(alloc, "allocationTimestamp") ?: json_null()))
        json_object_set_new(alloc, "allocationTimestamp", json_string(b->now));
    return true;
}

json_t *dra_pod_binding_pod(const dra_pod_binding *b, const json_t *extended_status) {
    json_t *st = json_object();
    if (json_array_size(b->claim_statuses)) json_object_set(st, "resourceClaimStatuses", b->claim_statuses);
    if (extended_status) json_object_set(st, "extendedResourceClaimStatus", (json_t *)extended_status);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", "name",
                     b->pod->name, "namespace", b->ns, "uid", b->uid, "status", st);
}

/* ---- Go's encoding of a ResourceClaim --------------------------------------------------- */

/* A struct field of the resource.k8s.io/v1 and meta/v1 types a claim holds, as
 * encoding/json sees it. `type` decides what is empty for omitempty: */
typedef enum {
    GO_SCALAR,   /* string, integer or bool by value: "", 0, false */
    GO_PTR,      /* a pointer (or RawExtension, Time): only null */
    GO_SLICE,    /* a slice: null or []; without omitempty an empty one reads back null */
    GO_MAP,      /* a map: null or {}; likewise */
    GO_STRUCT,   /* a struct by value: never omitted, {} when absent */
} go_kind;

typedef struct go_field {
    const char *name;
    go_kind kind;
    bool omitempty;
    const struct go_field *of;   /* the fields of the struct it holds (or its elements hold) */
} go_field;

#define END {NULL, GO_SCALAR, false, NULL}

static const go_field F_OWNER[] = {{"apiVersion", GO_SCALAR, false, NULL}, {"kind", GO_SCALAR, false, NULL},
                                   {"name", GO_SCALAR, false, NULL},       {"uid", GO_SCALAR, false, NULL},
                                   {"controller", GO_PTR, true, NULL},     {"blockOwnerDeletion", GO_PTR, true, NULL},
                                   END};
static const go_field F_META[] = {{"name", GO_SCALAR, true, NULL},
                                  {"generateName", GO_SCALAR, true, NULL},
                                  {"namespace", GO_SCALAR, true, NULL},
                                  {"selfLink", GO_SCALAR, true, NULL},
                                  {"uid", GO_SCALAR, true, NULL},
                                  {"resourceVersion", GO_SCALAR, true, NULL},
                                  {"generation", GO_SCALAR, true, NULL},
                                  {"deletionTimestamp", GO_PTR, true, NULL},
                                  {"deletionGracePeriodSeconds", GO_PTR, true, NULL},
                                  {"labels", GO_MAP, true, NULL},
                                  {"annotations", GO_MAP, true, NULL},
                                  {"ownerReferences", GO_SLICE, true, F_OWNER},
                                  {"finalizers", GO_SLICE, true, NULL},
                                  {"managedFields", GO_SLICE, true, NULL},
                                  END};
static const go_field F_CEL[] = {{"expression", GO_SCALAR, false, NULL}, END};
static const go_field F_SELECTOR[] = {{"cel", GO_PTR, true, F_CEL}, END};
static const go_field F_TOLERATION[] = {{"key", GO_SCALAR, true, NULL},    {"operator", GO_SCALAR, true, NULL},
                                        {"value", GO_SCALAR, true, NULL},  {"effect", GO_SCALAR, true, NULL},
                                        {"tolerationSeconds", GO_PTR, true, NULL}, END};
static const go_field F_CAPREQ[] = {{"requests", GO_MAP, true, NULL}, END};
static const go_field F_DERIVED[] = {{"name", GO_SCALAR, false, NULL}, {"expression", GO_SCALAR, false, NULL}, END};
static const go_field F_EXACT[] = {{"deviceClassName", GO_SCALAR, false, NULL},
                                   {"selectors", GO_SLICE, true, F_SELECTOR},
                                   {"allocationMode", GO_SCALAR, true, NULL},
                                   {"count", GO_SCALAR, true, NULL},
                                   {"adminAccess", GO_PTR, true, NULL},
                                   {"tolerations", GO_SLICE, true, F_TOLERATION},
                                   {"capacity", GO_PTR, true, F_CAPREQ},
                                   {"derivedAttributes", GO_SLICE, true, F_DERIVED},
                                   END};
static const go_field F_SUBREQ[] = {{"name", GO_SCALAR, false, NULL},
                                    {"deviceClassName", GO_SCALAR, false, NULL},
                                    {"selectors", GO_SLICE, true, F_SELECTOR},
                                    {"allocationMode", GO_SCALAR, true, NULL},
                                    {"count", GO_SCALAR, true, NULL},
                                    {"tolerations", GO_SLICE, true, F_TOLERATION},
                                    {"capacity", GO_PTR, true, F_CAPREQ},
                                    END};
static const go_field F_REQUEST[] = {{"name", GO_SCALAR, false, NULL},
                                     {"exactly", GO_PTR, true, F_EXACT},
                                     {"firstAvailable", GO_SLICE, true, F_SUBREQ},
                                     END};
static const go_field F_CONSTRAINT[] = {{"requests", GO_SLICE, true, NULL},
                                        {"matchAttribute", GO_PTR, true, NULL},
                                        {"distinctAttribute", GO_PTR, true, NULL},
                                        END};
static const go_field F_OPAQUE[] = {{"driver", GO_SCALAR, false, NULL}, {"parameters", GO_PTR, false, NULL}, END};
static const go_field F_CLAIMCFG[] = {{"requests", GO_SLICE, true, NULL}, {"opaque", GO_PTR, true, F_OPAQUE}, END};
static const go_field F_DEVICECLAIM[] = {{"requests", GO_SLICE, false, F_REQUEST},
                                        {"constraints", GO_SLICE, true, F_CONSTRAINT},
                                        {"config", GO_SLICE, true, F_CLAIMCFG},
                                        END};
static const go_field F_SPEC[] = {{"devices", GO_STRUCT, false, F_DEVICECLAIM}, END};
static const go_field F_NSREQ[] = {{"key", GO_SCALAR, false, NULL},
                                   {"operator", GO_SCALAR, false, NULL},
                                   {"values", GO_SLICE, true, NULL},
                                   END};
static const go_field F_NSTERM[] = {{"matchExpressions", GO_SLICE, true, F_NSREQ},
                                    {"matchFields", GO_SLICE, true, F_NSREQ},
                                    END};
static const go_field F_NODESEL[] = {{"nodeSelectorTerms", GO_SLICE, false, F_NSTERM}, END};
static const go_field F_RESULT[] = {{"request", GO_SCALAR, false, NULL},
                                    {"driver", GO_SCALAR, false, NULL},
                                    {"pool", GO_SCALAR, false, NULL},
                                    {"device", GO_SCALAR, false, NULL},
                                    {"adminAccess", GO_PTR, true, NULL},
                                    {"tolerations", GO_SLICE, true, F_TOLERATION},
                                    {"bindingConditions", GO_SLICE, true, NULL},
                                    {"bindingFailureConditions", GO_SLICE, true, NULL},
                                    {"shareID", GO_PTR, true, NULL},
                                    {"consumedCapacity", GO_MAP, true, NULL},
                                    {"skipNodeOperations", GO_SLICE, true, NULL},
                                    END};
static const go_field F_ALLOCCFG[] = {{"source", GO_SCALAR, false, NULL},
                                      {"requests", GO_SLICE, true, NULL},
                                      {"opaque", GO_PTR, true, F_OPAQUE},
                                      END};
static const go_field F_DEVALLOC[] = {{"results", GO_SLICE, true, F_RESULT},
                                      {"config", GO_SLICE, true, F_ALLOCCFG},
                                      END};
static const go_field F_ALLOC[] = {{"devices", GO_STRUCT, true, F_DEVALLOC},
                                   {"nodeSelector", GO_PTR, true, F_NODESEL},
                                   {"allocationTimestamp", GO_PTR, true, NULL},
                                   END};
static const go_field F_CONSUMER[] = {{"apiGroup", GO_SCALAR, true, NULL},
                                      {"resource", GO_SCALAR, false, NULL},
                                      {"name", GO_SCALAR, false, NULL},
                                      {"uid", GO_SCALAR, false, NULL},
                                      END};
static const go_field F_NETDATA[] = {{"interfaceName", GO_SCALAR, true, NULL},
                                     {"ips", GO_SLICE, true, NULL},
                                     {"hardwareAddress", GO_SCALAR, true, NULL},
                                     END};
static const go_field F_DEVSTATUS[] = {{"driver", GO_SCALAR, false, NULL},     {"pool", GO_SCALAR, false, NULL},
                                       {"device", GO_SCALAR, false, NULL},     {"shareID", GO_PTR, true, NULL},
                                       {"conditions", GO_SLICE, false, NULL},  {"data", GO_PTR, true, NULL},
                                       {"networkData", GO_PTR, true, F_NETDATA}, END};
static const go_field F_STATUS[] = {{"allocation", GO_PTR, true, F_ALLOC},
                                    {"reservedFor", GO_SLICE, true, F_CONSUMER},
                                    {"devices", GO_SLICE, true, F_DEVSTATUS},
                                    END};
static const go_field F_CLAIM[] = {{"apiVersion", GO_SCALAR, true, NULL}, {"kind", GO_SCALAR, true, NULL},
                                   {"metadata", GO_STRUCT, true, F_META},   {"spec", GO_STRUCT, false, F_SPEC},
                                   {"status", GO_STRUCT, true, F_STATUS},   END};

/* Whether Go would hold the zero value (an absent field included). */
static bool go_empty(const json_t *v, go_kind k) {
    if (!v || json_is_null(v)) return true;
    switch (k) {
    case GO_SCALAR:
        return (json_is_string(v) && !json_string_length(v)) || (json_is_integer(v) && !json_integer_value(v)) ||
               (json_is_real(v) && json_real_value(v) == 0) || json_is_false(v);
    case GO_SLICE: return json_is_array(v) && !json_array_size(v);
    case GO_MAP: return json_is_object(v) && !json_object_size(v);
    case GO_PTR:
    case GO_STRUCT: return false;
    }
    return false;
}

static void go_normalize(json_t *o, const go_field *fs) {
    if (!json_is_object(o)) return;
    for (const go_field *f = fs; f->name; f++) {
        json_t *v = json_object_get(o, f->name);
        if (f->kind == GO_STRUCT && (!v || json_is_null(v))) json_object_set_new(o, f->name, v = json_object());
        if (!v) {
            /* a nil slice or map without omitempty encodes as null */
            if ((f->kind == GO_SLICE || f->kind == GO_MAP) && !f->omitempty)
                json_object_set_new(o, f->name, json_null());
            continue;
        }
        if (f->omitempty && go_empty(v, f->kind)) {
            json_object_del(o, f->name);
            continue;
        }
        /* protobuf in etcd keeps no difference between an empty and a nil slice */
        if (!f->omitempty && (f->kind == GO_SLICE || f->kind == GO_MAP) && go_empty(v, f->kind)) {
            json_object_set_new(o, f->name, json_null());
            continue;
        }
        if (!f->of) continue;
        if (json_is_array(v)) {
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) go_normalize(e, f->of);
        } else {
            go_normalize(v, f->of);
        }
    }
}

/* pkg/apis/resource/v1/defaults.go: allocationMode ExactCount, then count 1 for
 * ExactCount; DeviceToleration's operator "Equal" (its +default marker). */
static void default_tolerations(json_t *tols) {
    size_t i;
    json_t *t;
    json_array_foreach(tols, i, t) if (json_is_object(t) && go_empty(json_object_get(t, "operator"), GO_SCALAR))
        json_object_set_new(t, "operator", json_string("Equal"));
}

static void default_request(json_t *r) {
    if (!json_is_object(r)) return;
    if (go_empty(json_object_get(r, "allocationMode"), GO_SCALAR))
        json_object_set_new(r, "allocationMode", json_string("ExactCount"));
    const char *mode = json_string_value(json_object_get(r, "allocationMode"));
    if (mode && !strcmp(mode, "ExactCount") && go_empty(json_object_get(r, "count"), GO_SCALAR))
        json_object_set_new(r, "count", json_integer(1));
    default_tolerations(json_object_get(r, "tolerations"));
}

void dra_claim_json_normalize(json_t *claim) {
    size_t i, j;
    json_t *r, *sub;
    json_array_foreach(json_object_get(json_object_get(json_object_get(claim, "spec"), "devices"), "requests"), i, r) {
        default_request(json_object_get(r, "exactly"));
        json_array_foreach(json_object_get(r, "firstAvailable"), j, sub) default_request(sub);
    }
    json_t *alloc = json_object_get(json_object_get(claim, "status"), "allocation");
    json_array_foreach(json_object_get(json_object_get(alloc, "devices"), "results"), i, r)
        default_tolerations(json_object_get(r, "tolerations"));
    go_normalize(claim, F_CLAIM);
}
