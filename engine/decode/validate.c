/* validate.c — apiVersion, conversion, unknown fields and the API server's validation
 * for the decoders (see validate.h). Validation messages and field paths are those of
 * pkg/apis/resource/validation/validation.go and apimachinery's field.Error:
 *   "<path>: Invalid value: <value>: <detail>", "<path>: Required value[: detail]",
 *   "<path>: Too many: <n>: must have at most <max> items",
 *   "<path>: Duplicate value: <value>", "<path>: Unsupported value: ...".
 * Every violation of an object is reported, joined as the API server joins them
 * (errors.NewInvalid: "... is invalid: [a, b]"), each text once. */
#include "engine/decode/decode_util.h"
#include "engine/snapshot.h"
#include "engine/decode/validate.h"

#include "base/base.h"
#include "base/hash.h"
#include "base/hmap.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- warnings --------------------------------------------------------------------------- */

/* One warning about `what` (an object or a source) under settings in. */
static bool warn(const dra_input *in, err *e, const char *what, const char *msg) {
    if (in && in->strict) return err_at(e, what, NULL, "%s (strict)", msg);
    if (in && in->warn) {
        char line[ERR_OBJECT_MAX + ERR_MSG_MAX + 4];
        snprintf(line, sizeof line, "%s: %s", what, msg);
        in->warn(in->ud, line);
    }
    return true;
}

bool dra__input_warn(dctx *c, const char *fmt, ...) {
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return warn(c->d->input, c->e, c->object, msg);
}

bool dra__input_warn_source(const dra_input *in, err *e, const char *source, const char *fmt, ...) {
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return warn(in, e, source, msg);
}

static const char *json_type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_ARRAY: return "list";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "object";
    }
}

bool dra__input_check_document(const dra_input *in, err *e, const char *source, size_t n, size_t line, const json_t *doc) {
    char where[64];
    if (line) snprintf(where, sizeof where, "document %zu (line %zu)", n, line);
    else snprintf(where, sizeof where, "document %zu", n);
    if (json_is_null(doc)) return true;
    if (!json_is_object(doc)) {
        /* a JSON file's top-level list is a list of objects, which the world accepts */
        if (json_is_array(doc) && !line) return true;
        return dra__input_warn_source(in, e, source, "%s is a %s, not a Kubernetes object; ignored", where,
                                     json_type_name(doc));
    }
    return true;   /* an object without apiVersion or kind is refused where objects are read */
}

bool dra__input_decode(const dra_decoder *d, const char *kind, const json_t *obj, dra_decode_v1 v1, void *out,
                      err *e) {
    dctx c;
    dra__dctx_init(&c, d, e, kind, obj);
    json_t *owned;
    if (!dra__input_prepare(&c, kind, &obj, &owned)) return false;
    bool ok = v1(d, obj, out, e);
    json_decref(owned);
    return ok;
}

bool dra__input_check_types(const json_t *docs, const char *source, err *e) {
    if (json_is_array(docs)) {
        size_t i;
        const json_t *d;
        json_array_foreach(docs, i, d) if (!dra__input_check_types(d, source, e)) return false;
        return true;
    }
    if (!json_is_object(docs)) return true;   /* scalars: dra__input_check_document warns */
    if (!dra__input_check_type(docs, source, e)) return false;
    /* a plain List holds whole objects; a typed list's items take the list's kind */
    if (strcmp(json_string_value(json_object_get(docs, "kind")), "List")) return true;
    return dra__input_check_types(json_object_get(docs, "items"), source, e);
}

bool dra__input_check_type(const json_t *obj, const char *source, err *e) {
    const json_t *av = json_object_get(obj, "apiVersion"), *k = json_object_get(obj, "kind");
    bool no_av = !json_is_string(av) || !*json_string_value(av), no_k = !json_is_string(k) || !*json_string_value(k);
    if (!no_av && !no_k) return true;
    const char *what = no_av && no_k ? "[apiVersion not set, kind not set]" : no_av ? "apiVersion not set" : "kind not set";
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    char named[300] = "";
    if (name) snprintf(named, sizeof named, " (object %.250s)", name);
    if (source) return err_set(e, "error validating \"%s\": error validating data: %s%s", source, what, named);
    return err_set(e, "error validating data: %s%s", what, named);
}

/* ---- JSON with integers beyond int64 ------------------------------------------------------ */

json_t *dra_json_load(const char *text, size_t len, const char *source, const dra_input *in, err *e) {
    json_error_t je;
    json_t *v = dra_json_parse(text, len, 0, &je);   /* json_loadb's tree and error, faster */
    if (v) {
        if (!dra__input_check_document(in, e, source, 1, 0, v)) return json_decref(v), NULL;
        return v;
    }
    /* jansson refuses an integer it cannot hold; encoding/json (into interface{})
     * makes it a float64. JSON is YAML's flow style, and the YAML reader resolves
     * such integers to doubles, so the text is read again that way. */
    if (strstr(je.text, "too big")) {
        err ye;
        err_clear(&ye);
        json_t *docs = dra__yaml_load_in(text, len, source, NULL, &ye);
        if (docs && json_array_size(docs) == 1) {
            json_t *one = json_incref(json_array_get(docs, 0));
            json_decref(docs);
            if (!dra__input_check_document(in, e, source, 1, 0, one)) return json_decref(one), NULL;
            return one;
        }
        json_decref(docs);
    }
    err_at(e, source, NULL, "JSON: %s (line %d)", je.text, je.line);
    return NULL;
}

/* ---- apiVersion ------------------------------------------------------------------------- */

typedef struct served {
    const char *kind;
    const char *group;   /* "" for core */
    const char *versions[4];
} served;

static const served served_kinds[] = {
    {"ResourceSlice", "resource.k8s.io", {"v1", "v1beta1", "v1beta2"}},
    {"ResourceClaim", "resource.k8s.io", {"v1", "v1beta1", "v1beta2"}},
    {"ResourceClaimTemplate", "resource.k8s.io", {"v1", "v1beta1", "v1beta2"}},
    {"DeviceClass", "resource.k8s.io", {"v1", "v1beta1", "v1beta2"}},
    {"DeviceTaintRule", "resource.k8s.io", {"v1", "v1alpha3", "v1beta2"}},
    {"Pod", "", {"v1"}},
    {"Node", "", {"v1"}},
};

/* *version = the version part when obj's apiVersion is served for kind (NULL when
 * absent); false with the error set otherwise. */
static bool check_api_version(dctx *c, const char *kind, const json_t *obj, const char **version) {
    *version = NULL;
    const json_t *av = json_object_get(obj, "apiVersion");
    if (!av || json_is_null(av)) return true;
    if (!json_is_string(av)) {
        dra__dpush_key(c, "apiVersion");
        return dra__dfail(c, "expected string");
    }
    const char *s = json_string_value(av);
    const served *sv = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(served_kinds) && !sv; i++)
        if (!strcmp(served_kinds[i].kind, kind)) sv = &served_kinds[i];
    if (!sv) return true;
    const char *slash = strchr(s, '/');
    size_t gl = slash ? (size_t)(slash - s) : 0;
    const char *ver = slash ? slash + 1 : s;
    if (strlen(sv->group) == gl && !strncmp(s, sv->group, gl))
        for (size_t i = 0; i < ARRAY_SIZE(sv->versions) && sv->versions[i]; i++)
            if (!strcmp(ver, sv->versions[i])) return *version = sv->versions[i], true;
    char want[128] = "";
    for (size_t i = 0; i < ARRAY_SIZE(sv->versions) && sv->versions[i]; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s%s%s", i ? ", " : "", sv->group,
                 *sv->group ? "/" : "", sv->versions[i]);
    return dra__dfail(c, "no matches for kind \"%s\" in version \"%s\" (Kubernetes serves %s)", kind, s, want);
}

/* ---- unknown fields -------------------------------------------------------------------- */

typedef struct shape shape;
typedef struct fieldspec {
    const char *name;
    const shape *s;   /* NULL: any value */
} fieldspec;
enum { S_OBJ, S_MAP, S_ARR };
struct shape {
    int t;
    const fieldspec *f;   /* S_OBJ: NULL-terminated */
    const shape *elem;    /* S_MAP, S_ARR */
};

#define OBJ(name, ...)                                                   \
    static const fieldspec name##_f[] = {__VA_ARGS__, {NULL, NULL}};     \
    static const shape name = {S_OBJ, name##_f, NULL}
#define ARR(name, of) static const shape name = {S_ARR, NULL, &(of)}
#define MAP(name, of) static const shape name = {S_MAP, NULL, &(of)}

OBJ(meta, {"name", NULL}, {"generateName", NULL}, {"namespace", NULL}, {"selfLink", NULL}, {"uid", NULL},
    {"resourceVersion", NULL}, {"generation", NULL}, {"creationTimestamp", NULL}, {"deletionTimestamp", NULL},
    {"deletionGracePeriodSeconds", NULL}, {"labels", NULL}, {"annotations", NULL}, {"ownerReferences", NULL},
    {"finalizers", NULL}, {"managedFields", NULL});

OBJ(cel_sel, {"expression", NULL});
OBJ(selector, {"cel", &cel_sel});
ARR(selectors, selector);
OBJ(toleration, {"key", NULL}, {"operator", NULL}, {"value", NULL}, {"effect", NULL}, {"tolerationSeconds", NULL});
ARR(tolerations, toleration);
OBJ(cap_req, {"requests", NULL});
OBJ(derived_attr, {"name", NULL}, {"expression", NULL});
ARR(derived_attrs, derived_attr);
OBJ(exact_req, {"deviceClassName", NULL}, {"selectors", &selectors}, {"allocationMode", NULL}, {"count", NULL},
    {"adminAccess", NULL}, {"tolerations", &tolerations}, {"capacity", &cap_req}, {"derivedAttributes", &derived_attrs});
OBJ(sub_req, {"name", NULL}, {"deviceClassName", NULL}, {"selectors", &selectors}, {"allocationMode", NULL},
    {"count", NULL}, {"tolerations", &tolerations}, {"capacity", &cap_req}, {"derivedAttributes", &derived_attrs});
ARR(sub_reqs, sub_req);
OBJ(request, {"name", NULL}, {"exactly", &exact_req}, {"firstAvailable", &sub_reqs});
ARR(requests, request);
OBJ(constraint, {"requests", NULL}, {"matchAttribute", NULL}, {"distinctAttribute", NULL});
ARR(constraints, constraint);
OBJ(opaque, {"driver", NULL}, {"parameters", NULL});
OBJ(claim_config, {"requests", NULL}, {"opaque", &opaque});
ARR(claim_configs, claim_config);
OBJ(device_claim, {"requests", &requests}, {"constraints", &constraints}, {"config", &claim_configs});
OBJ(claim_spec, {"devices", &device_claim});
OBJ(claim, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &claim_spec}, {"status", NULL});
OBJ(template_spec, {"metadata", &meta}, {"spec", &claim_spec});
OBJ(claim_template, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &template_spec});

OBJ(class_config, {"opaque", &opaque});
ARR(class_configs, class_config);
OBJ(class_spec, {"selectors", &selectors}, {"config", &class_configs}, {"extendedResourceName", NULL});
OBJ(device_class, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &class_spec});

OBJ(counter, {"value", NULL});
MAP(counters, counter);
OBJ(counter_set, {"name", NULL}, {"counters", &counters});
ARR(counter_sets, counter_set);
OBJ(counter_use, {"counterSet", NULL}, {"counters", &counters});
ARR(counter_uses, counter_use);
OBJ(attr, {"int", NULL}, {"bool", NULL}, {"string", NULL}, {"version", NULL}, {"ints", NULL}, {"bools", NULL},
    {"strings", NULL}, {"versions", NULL});
MAP(attrs, attr);
OBJ(range, {"min", NULL}, {"max", NULL}, {"step", NULL});
OBJ(req_policy, {"default", NULL}, {"validValues", NULL}, {"validRange", &range});
OBJ(capacity, {"value", NULL}, {"requestPolicy", &req_policy});
MAP(capacities, capacity);
OBJ(taint, {"key", NULL}, {"value", NULL}, {"effect", NULL}, {"timeAdded", NULL});
ARR(taints, taint);
OBJ(device, {"name", NULL}, {"attributes", &attrs}, {"capacity", &capacities}, {"consumesCounters", &counter_uses},
    {"nodeName", NULL}, {"nodeSelector", NULL}, {"allNodes", NULL}, {"taints", &taints}, {"bindsToNode", NULL},
    {"bindingConditions", NULL}, {"bindingFailureConditions", NULL}, {"allowMultipleAllocations", NULL},
    {"nodeAllocatableResources", NULL});
ARR(devices, device);
OBJ(pool, {"name", NULL}, {"generation", NULL}, {"resourceSliceCount", NULL});
OBJ(slice_spec, {"driver", NULL}, {"pool", &pool}, {"nodeName", NULL}, {"nodeSelector", NULL}, {"allNodes", NULL},
    {"devices", &devices}, {"perDeviceNodeSelection", NULL}, {"sharedCounters", &counter_sets},
    {"partitionTypeAttribute", NULL}, {"skipNodeOperations", NULL});
OBJ(slice, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &slice_spec});

OBJ(taint_selector, {"driver", NULL}, {"pool", NULL}, {"device", NULL});
OBJ(rule_spec, {"deviceSelector", &taint_selector}, {"taint", &taint});
OBJ(taint_rule, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &rule_spec}, {"status", NULL});

/* core/v1 Pod and Node: every field of the types, nested where dralloc or a typo
 * matters (spec, containers, resources, affinity, tolerations, claims, status), any
 * value deeper in parts the allocator never reads (volumes, probes, securityContext). */
OBJ(pod_claim, {"name", NULL}, {"resourceClaimName", NULL}, {"resourceClaimTemplateName", NULL});
ARR(pod_claims, pod_claim);
OBJ(res_claim, {"name", NULL}, {"request", NULL});
ARR(res_claims, res_claim);
OBJ(res_reqs, {"limits", NULL}, {"requests", NULL}, {"claims", &res_claims});
OBJ(container, {"name", NULL}, {"image", NULL}, {"command", NULL}, {"args", NULL}, {"workingDir", NULL},
    {"ports", NULL}, {"envFrom", NULL}, {"env", NULL}, {"resources", &res_reqs}, {"resizePolicy", NULL},
    {"restartPolicy", NULL}, {"restartPolicyRules", NULL}, {"volumeMounts", NULL}, {"volumeDevices", NULL},
    {"livenessProbe", NULL}, {"readinessProbe", NULL}, {"startupProbe", NULL}, {"lifecycle", NULL},
    {"terminationMessagePath", NULL}, {"terminationMessagePolicy", NULL}, {"imagePullPolicy", NULL},
    {"securityContext", NULL}, {"stdin", NULL}, {"stdinOnce", NULL}, {"tty", NULL}, {"targetContainerName", NULL});
ARR(containers, container);
OBJ(ns_req, {"key", NULL}, {"operator", NULL}, {"values", NULL});
ARR(ns_reqs, ns_req);
OBJ(ns_term, {"matchExpressions", &ns_reqs}, {"matchFields", &ns_reqs});
ARR(ns_terms, ns_term);
OBJ(node_selector, {"nodeSelectorTerms", &ns_terms});
OBJ(node_affinity, {"requiredDuringSchedulingIgnoredDuringExecution", &node_selector},
    {"preferredDuringSchedulingIgnoredDuringExecution", NULL});
OBJ(affinity, {"nodeAffinity", &node_affinity}, {"podAffinity", NULL}, {"podAntiAffinity", NULL});
OBJ(scheduling_group, {"podGroupName", NULL});
OBJ(pod_spec, {"volumes", NULL}, {"initContainers", &containers}, {"containers", &containers},
    {"ephemeralContainers", &containers}, {"restartPolicy", NULL}, {"terminationGracePeriodSeconds", NULL},
    {"activeDeadlineSeconds", NULL}, {"dnsPolicy", NULL}, {"nodeSelector", NULL}, {"serviceAccountName", NULL},
    {"serviceAccount", NULL}, {"automountServiceAccountToken", NULL}, {"nodeName", NULL}, {"hostNetwork", NULL},
    {"hostPID", NULL}, {"hostIPC", NULL}, {"shareProcessNamespace", NULL}, {"securityContext", NULL},
    {"imagePullSecrets", NULL}, {"hostname", NULL}, {"subdomain", NULL}, {"affinity", &affinity},
    {"schedulerName", NULL}, {"tolerations", &tolerations}, {"hostAliases", NULL}, {"priorityClassName", NULL},
    {"priority", NULL}, {"dnsConfig", NULL}, {"readinessGates", NULL}, {"runtimeClassName", NULL},
    {"enableServiceLinks", NULL}, {"preemptionPolicy", NULL}, {"overhead", NULL},
    {"topologySpreadConstraints", NULL}, {"setHostnameAsFQDN", NULL}, {"os", NULL}, {"hostUsers", NULL},
    {"schedulingGates", NULL}, {"resourceClaims", &pod_claims}, {"resources", &res_reqs},
    {"hostnameOverride", NULL}, {"schedulingGroup", &scheduling_group}, {"workloadRef", NULL});
OBJ(claim_status, {"name", NULL}, {"resourceClaimName", NULL});
ARR(claim_statuses, claim_status);
OBJ(pod_status, {"observedGeneration", NULL}, {"phase", NULL}, {"conditions", NULL}, {"message", NULL},
    {"reason", NULL}, {"nominatedNodeName", NULL}, {"hostIP", NULL}, {"hostIPs", NULL}, {"podIP", NULL},
    {"podIPs", NULL}, {"startTime", NULL}, {"initContainerStatuses", NULL}, {"containerStatuses", NULL},
    {"qosClass", NULL}, {"ephemeralContainerStatuses", NULL}, {"resize", NULL},
    {"resourceClaimStatuses", &claim_statuses}, {"extendedResourceClaimStatus", NULL}, {"allocatedResources", NULL},
    {"resources", NULL});
OBJ(pod, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &pod_spec}, {"status", &pod_status});

OBJ(node_spec, {"podCIDR", NULL}, {"podCIDRs", NULL}, {"providerID", NULL}, {"unschedulable", NULL},
    {"taints", &taints}, {"configSource", NULL}, {"externalID", NULL});
OBJ(node_status, {"capacity", NULL}, {"allocatable", NULL}, {"phase", NULL}, {"conditions", NULL},
    {"addresses", NULL}, {"daemonEndpoints", NULL}, {"nodeInfo", NULL}, {"images", NULL}, {"volumesInUse", NULL},
    {"volumesAttached", NULL}, {"config", NULL}, {"runtimeHandlers", NULL}, {"features", NULL},
    {"declaredFeatures", NULL});
OBJ(node, {"apiVersion", NULL}, {"kind", NULL}, {"metadata", &meta}, {"spec", &node_spec}, {"status", &node_status});

static const shape *shape_of(const char *kind) {
    if (!strcmp(kind, "ResourceClaim")) return &claim;
    if (!strcmp(kind, "ResourceClaimTemplate")) return &claim_template;
    if (!strcmp(kind, "ResourceSlice")) return &slice;
    if (!strcmp(kind, "DeviceClass")) return &device_class;
    if (!strcmp(kind, "DeviceTaintRule")) return &taint_rule;
    if (!strcmp(kind, "Pod")) return &pod;
    if (!strcmp(kind, "Node")) return &node;
    return NULL;
}

/* Where walk_unknown is: a chain of segments on the stack, written into the error
 * path only when an unknown field is found (pushed for every field, the path was a
 * tenth of ingesting a large cluster: perf, `dralloc bench mig_5000nodes`). */
typedef struct upath {
    const struct upath *up;
    enum { UP_KEY, UP_IDX, UP_MAPKEY } kind;
    const char *key;
    size_t idx;
} upath;

static void upath_write(dctx *c, const upath *at) {
    if (!at) return;
    upath_write(c, at->up);
    if (at->kind == UP_KEY) dra__dpush_key(c, at->key);
    else if (at->kind == UP_IDX) dra__dpush_idx(c, at->idx);
    else dra__dpush_mapkey(c, at->key);
}

/* The field named k of an object shape, or NULL. */
static const fieldspec *field_of(const shape *s, const char *k) {
    const fieldspec *f = s->f;
    while (f->name && (f->name[0] != k[0] || strcmp(f->name, k))) f++;
    return f->name ? f : NULL;
}

/* kubectl: 'unknown field "spec.devices[0].foo"', warned under c (*n counts those under
 * spec); false when the warning is an error (strict). With c NULL nothing is warned:
 * false at the first unknown field (dra__input_fields_known). */
static bool walk_unknown(dctx *c, const shape *s, const json_t *v, const upath *at, unsigned *n) {
    if (!s) return true;
    if (s->t == S_ARR && json_is_array(v)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) {
            upath here = {at, UP_IDX, NULL, i};
            if (!walk_unknown(c, s->elem, x, &here, n)) return false;
        }
    } else if (s->t == S_MAP && json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            upath here = {at, UP_MAPKEY, k, 0};
            if (!walk_unknown(c, s->elem, x, &here, n)) return false;
        }
    } else if (s->t == S_OBJ && json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            const fieldspec *f = field_of(s, k);
            upath here = {at, UP_KEY, k, 0};
            if (f) {
                if (!walk_unknown(c, f->s, x, &here, n)) return false;
                continue;
            }
            if (!c) return false;
            size_t m = c->p.len;
            upath_write(c, &here);
            const char *path = dra__dpath_str(c);
            if (!strncmp(path, "spec.", 5)) (*n)++;
            if (!dra__input_warn(c, "unknown field \"%s\"", path)) return false;
            dpop(c, m);
        }
    }
    return true;
}

bool dra__input_fields_known(const json_t *obj) {
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const shape *s = kind ? shape_of(kind) : NULL;
    if (!s || !av) return false;
    /* only the version walked as given (older ones are converted first) */
    bool core = !strcmp(kind, "Pod") || !strcmp(kind, "Node");
    if (strcmp(av, core ? "v1" : "resource.k8s.io/v1")) return false;
    unsigned n = 0;
    return walk_unknown(NULL, s, obj, NULL, &n);
}

/* ---- validation helpers ------------------------------------------------------------------ */

static const char *str_at(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The violations of one object, gathered as the API server's field.ErrorList is:
 * validation goes on past a violation (except past a list longer than its maximum,
 * which Kubernetes does not look into), and the object is refused with all of them
 * (vdone). The path is the decoder's (c->p). */
typedef struct vctx {
    dctx *c;
    unsigned n;                          /* distinct violations */
    char first_path[ERR_PATH_MAX];
    char first_msg[ERR_MSG_MAX];
    char list[ERR_MSG_MAX * 2];          /* "path: message" entries, each '\0'-terminated */
    size_t len;
} vctx;

/* One violation at the current path. Always false (the check failed). */
static bool vfail(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool vfail(vctx *v, const char *fmt, ...) {
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *path = dra__dpath_str(v->c);
    char entry[ERR_PATH_MAX + ERR_MSG_MAX + 4];
    int el = snprintf(entry, sizeof entry, "%s: %s", path, msg);
    /* ErrorList.ToAggregate: the same text once */
    for (size_t o = 0; o < v->len; o += strlen(v->list + o) + 1)
        if (!strcmp(v->list + o, entry)) return false;
    if (!v->n++) {
        snprintf(v->first_path, sizeof v->first_path, "%s", path);
        snprintf(v->first_msg, sizeof v->first_msg, "%s", msg);
    }
    if (el > 0 && v->len + (size_t)el + 1 <= sizeof v->list) {
        memcpy(v->list + v->len, entry, (size_t)el + 1);
        v->len += (size_t)el + 1;
    }
    return false;
}

/* vfail at child `key` of the current path. */
static bool vfail_key(vctx *v, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool vfail_key(vctx *v, const char *key, const char *fmt, ...) {
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t m = dra__dpush_key(v->c, key);
    vfail(v, "%s", msg);
    dpop(v->c, m);
    return false;
}

/* The object's verdict: one violation as "Kind ns/name: path: message" (the decoder's
 * form for every error), several as the API server joins them (apimachinery
 * errors.NewInvalid over ErrorList.ToAggregate): "Kind ns/name is invalid: [path:
 * message, path: message]". */
static bool vdone(vctx *v) {
    if (!v->n) return true;
    if (v->n == 1) return err_at(v->c->e, v->c->object, v->first_path, "%s", v->first_msg);
    char all[ERR_MSG_MAX];
    size_t o = 0;
    for (size_t i = 0; i < v->len && o + 1 < sizeof all; i += strlen(v->list + i) + 1) {
        int w = snprintf(all + o, sizeof all - o, "%s%s", i ? ", " : "", v->list + i);
        if (w < 0) break;
        o += (size_t)w;
    }
    char object[ERR_OBJECT_MAX];
    snprintf(object, sizeof object, "%.*s is invalid", (int)(sizeof object - 12), v->c->object);
    return err_at(v->c->e, object, NULL, "[%s]", all);
}

static bool alnum_lower(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); }

static bool is_label(const char *s, size_t n) {
    if (!n || n > 63 || !alnum_lower(s[0]) || !alnum_lower(s[n - 1])) return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum_lower(s[i]) && s[i] != '-') return false;
    return true;
}

static bool is_subdomain(const char *s) {
    size_t n = strlen(s);
    if (!n || n > 253) return false;
    const char *p = s;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t l = dot ? (size_t)(dot - p) : strlen(p);
        if (!is_label(p, l)) return false;
        if (!dot) return true;
        p = dot + 1;
    }
}

static const char dns_label_msg[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
static const char dns_subdomain_msg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/* corevalidation.ValidateDNS1123Label on the string at key (path pushed by the caller). */
static bool check_label(vctx *v, const char *s) {
    size_t n = strlen(s);
    if (n > 63) return vfail(v, "Invalid value: \"%s\": must be no more than 63 characters", s);
    if (!is_label(s, n)) return vfail(v, "Invalid value: \"%s\": %s", s, dns_label_msg);
    return true;
}

static bool check_subdomain(vctx *v, const char *s) {
    if (strlen(s) > 253) return vfail(v, "Invalid value: \"%s\": must be no more than 253 characters", s);
    if (!is_subdomain(s)) return vfail(v, "Invalid value: \"%s\": %s", s, dns_subdomain_msg);
    return true;
}

/* validateSlice's size check: field.TooMany; false means "do not look at the items"
 * (Kubernetes short-circuits there). */
static bool check_max(vctx *v, const char *key, const json_t *arr, size_t max) {
    if (!json_is_array(arr) || json_array_size(arr) <= max) return true;
    return vfail_key(v, key, "Too many: %zu: must have at most %zu items", json_array_size(arr), max);
}

/* validateSet's uniqueness: each later item whose name (key `field`) an earlier item
 * has, after the items' own violations. The names seen are kept by hash: comparing
 * each item with every earlier one was a tenth of decoding a 57-device slice (perf,
 * `dralloc bench mig_5000nodes`). Two names with the same hash are told apart by a
 * scan, as before. */
static void check_unique_names(vctx *v, const char *const *names, size_t n);

static void check_unique(vctx *v, const json_t *arr, const char *field) {
    size_t n = json_array_size(arr);
    if (n < 2) return;
    const char *stack[128], **names = n <= 128 ? stack : xmalloc(n * sizeof *names);
    for (size_t i = 0; i < n; i++) names[i] = str_at(json_array_get(arr, i), field);
    check_unique_names(v, names, n);
    if (names != stack) free(names);
}

/* check_unique on the items' names as found already (NULL: an item without one). */
static void check_unique_names(vctx *v, const char *const *names, size_t n) {
    if (n < 2) return;
    hmap seen;   /* hash of a name -> index + 1 of the first item with it */
    hmap_init(&seen);
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        if (!name) continue;
        uint64_t h = hash_bytes(name, strlen(name)), j;
        bool twice = false;
        if (hmap_get(&seen, h, &j)) {
            twice = !strcmp(names[j - 1], name);
            for (size_t k = 0; k < i && !twice; k++) twice = names[k] && !strcmp(names[k], name);
        } else {
            hmap_put(&seen, h, i + 1);
        }
        if (!twice) continue;
        size_t m = dra__dpush_idx(v->c, i);
        vfail(v, "Duplicate value: \"%s\"", name);
        dpop(v->c, m);
    }
    hmap_free(&seen);
}

/* ObjectMeta: name required (no generateName in files), DNS subdomain. */
static void check_meta_name(vctx *v, const json_t *obj) {
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = str_at(meta, "name");
    size_t m = dra__dpush_key(v->c, "metadata");
    dra__dpush_key(v->c, "name");
    if (!name || !*name) {
        if (!str_at(meta, "generateName")) vfail(v, "Required value: name or generateName is required");
    } else {
        check_subdomain(v, name);
    }
    dpop(v->c, m);
}

/* ---- ResourceClaim spec ---------------------------------------------------------------- */

enum { MAX_REQUESTS = 32, MAX_CONSTRAINTS = 32, MAX_CONFIGS = 32, MAX_SELECTORS = 32, MAX_SUBREQUESTS = 8 };

/* gatherRequestNames + requestNames.Has: "req" or "req/sub". */
static bool request_known(const json_t *reqs, const char *ref) {
    const char *sl = strchr(ref, '/');
    size_t rl = sl ? (size_t)(sl - ref) : strlen(ref);
    size_t i;
    const json_t *r;
    json_array_foreach(reqs, i, r) {
        const char *name = str_at(r, "name");
        if (!name || strlen(name) != rl || strncmp(name, ref, rl)) continue;
        const json_t *fa = json_object_get(r, "firstAvailable");
        if (!sl) return true;
        size_t j;
        const json_t *s;
        json_array_foreach(fa, j, s) {
            const char *sn = str_at(s, "name");
            if (sn && !strcmp(sn, sl + 1)) return true;
        }
        return false;
    }
    return false;
}

/* validateRequestNameRef for each entry of o[key] (constraints and config). */
static void check_request_refs(vctx *v, const json_t *o, const json_t *reqs) {
    const json_t *refs = json_object_get(o, "requests");
    if (!json_is_array(refs) || !check_max(v, "requests", refs, MAX_REQUESTS)) return;
    size_t mk = dra__dpush_key(v->c, "requests");
    size_t i;
    const json_t *x;
    json_array_foreach(refs, i, x) {
        if (!json_is_string(x)) continue;
        const char *ref = json_string_value(x);
        size_t m = dra__dpush_idx(v->c, i);
        const char *sl = strchr(ref, '/');
        if ((sl && strchr(sl + 1, '/')) || !request_known(reqs, ref))
            vfail(v,
                  "Invalid value: \"%s\": must be the name of a request in the claim or the name of a request and a "
                  "subrequest separated by '/'",
                  ref);
        for (size_t j = i; j-- > 0;)
            if (json_equal(json_array_get(refs, j), x)) {
                vfail(v, "Duplicate value: \"%s\"", ref);
                break;
            }
        dpop(v->c, m);
    }
    dpop(v->c, mk);
}

/* validateDeviceAllocationMode after the API server's defaulting (allocationMode
 * ExactCount, count 1 when it is 0 — an explicit `count: 0` included). */
static void check_mode_count(vctx *v, const json_t *r) {
    const char *mode = str_at(r, "allocationMode");
    const json_t *cv = json_object_get(r, "count");
    json_int_t count = json_is_integer(cv) ? json_integer_value(cv) : 0;
    if (!mode || !*mode) mode = "ExactCount";
    if (!strcmp(mode, "All")) {
        if (count != 0)
            vfail_key(v, "count", "Invalid value: %lld: must not be specified when allocationMode is 'All'", (long long)count);
    } else if (!strcmp(mode, "ExactCount")) {
        if (count < 0) vfail_key(v, "count", "Invalid value: %lld: must be greater than zero", (long long)count);
    } else {
        vfail_key(v, "allocationMode", "Unsupported value: \"%s\": supported values: \"All\", \"ExactCount\"", mode);
    }
}

/* validDeviceTaintEffects; "" is left to the caller (required in a taint, optional
 * in a toleration). */
static void check_effect(vctx *v, const json_t *o) {
    const char *eff = str_at(o, "effect");
    if (!eff || !*eff || !strcmp(eff, "NoSchedule") || !strcmp(eff, "NoExecute") || !strcmp(eff, "None")) return;
    vfail_key(v, "effect", "Unsupported value: \"%s\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"", eff);
}

/* validateDeviceToleration (operator defaulted to Equal when empty). */
static void check_tolerations(vctx *v, const json_t *r) {
    size_t mk = dra__dpush_key(v->c, "tolerations");
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(r, "tolerations"), i, t) {
        size_t m = dra__dpush_idx(v->c, i);
        const char *op = str_at(t, "operator"), *val = str_at(t, "value");
        if (op && !strcmp(op, "Exists")) {
            if (val && *val) vfail_key(v, "value", "Invalid value: \"%s\": must be empty for operator `Exists`", val);
        } else if (op && *op && strcmp(op, "Equal")) {
            vfail_key(v, "operator", "Unsupported value: \"%s\": supported values: \"Equal\", \"Exists\"", op);
        }
        check_effect(v, t);
        dpop(v->c, m);
    }
    dpop(v->c, mk);
}

/* validateSelector → validateCELSelector: each selector's expression compiles (with
 * the allocator's environment: kube-scheduler compiles what the API server stored
 * with StoredExpressions) within CELSelectorExpressionMaxCost. The program goes to
 * the object's holds (catalog.h): decoding it next finds it compiled. */
static void check_selectors(vctx *v, const json_t *sels) {
    if (!check_max(v, "selectors", sels, MAX_SELECTORS)) return;
    size_t i;
    const json_t *s;
    size_t m = dra__dpush_key(v->c, "selectors");
    json_array_foreach(sels, i, s) {
        const json_t *cel = json_object_get(s, "cel");
        size_t m2 = dra__dpush_idx(v->c, i);
        if (!cel || json_is_null(cel)) {
            vfail_key(v, "cel", "Required value");
        } else {
            size_t m3 = dra__dpush_key(v->c, "cel");
            const char *expr = str_at(cel, "expression");
            size_t len = expr ? strlen(expr) : 0;
            err ce;
            err_clear(&ce);
            const cel_program *p = NULL;
            if (!expr || !len) vfail_key(v, "expression", "Required value");
            else if (len > CEL_MAX_EXPRESSION_LEN)
                vfail_key(v, "expression", "Too long: may not be more than %d bytes", CEL_MAX_EXPRESSION_LEN);
            else if (!(p = dra__cat_compile(v->c->d->cat, v->c->d->holds, false, expr, len, &ce, NULL)))
                vfail_key(v, "expression", "Invalid value: \"%s\": %s%s", expr, strncmp(ce.msg, "ERROR:", 6) ? "" : "compilation failed: ",
                          ce.msg);
            else if (cel_program_estimated_cost(p) > CEL_MAX_COST)
                vfail_key(v, "expression", "%s", CEL_TOO_COMPLEX_MSG);
            if (p && !v->c->d->holds) cel_cache_release(v->c->d->cat->cel, p);
            dpop(v->c, m3);
        }
        dpop(v->c, m2);
    }
    dpop(v->c, m);
}

/* validateExactDeviceRequest / validateDeviceSubRequest (the shared part). */
static void check_request_body(vctx *v, const json_t *r) {
    const char *cls = str_at(r, "deviceClassName");
    size_t m = dra__dpush_key(v->c, "deviceClassName");
    if (!cls || !*cls) vfail(v, "Required value");
    else check_subdomain(v, cls);
    dpop(v->c, m);
    check_selectors(v, json_object_get(r, "selectors"));
    check_mode_count(v, r);
    check_tolerations(v, r);
}

/* validateDeviceRequest: name, then exactly one of exactly / firstAvailable. */
static void check_request(vctx *v, const json_t *r) {
    const char *name = str_at(r, "name");
    size_t m = dra__dpush_key(v->c, "name");
    check_label(v, name ? name : "");
    dpop(v->c, m);
    const json_t *ex = json_object_get(r, "exactly"), *fa = json_object_get(r, "firstAvailable");
    bool has_ex = ex && !json_is_null(ex), has_fa = json_array_size(fa) > 0;
    if (!has_ex && !has_fa) {
        vfail(v, "Required value: exactly one of `exactly` or `firstAvailable` is required");
    } else if (has_ex && has_fa) {
        vfail(v, "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields "
                 "are set");
    } else if (has_ex) {
        m = dra__dpush_key(v->c, "exactly");
        if (json_is_object(ex)) check_request_body(v, ex);
        dpop(v->c, m);
    } else if (check_max(v, "firstAvailable", fa, MAX_SUBREQUESTS)) {
        m = dra__dpush_key(v->c, "firstAvailable");
        size_t j;
        const json_t *s;
        json_array_foreach(fa, j, s) {
            if (!json_is_object(s)) continue;
            size_t m3 = dra__dpush_idx(v->c, j);
            const char *sn = str_at(s, "name");
            size_t m4 = dra__dpush_key(v->c, "name");
            check_label(v, sn ? sn : "");
            dpop(v->c, m4);
            check_request_body(v, s);
            dpop(v->c, m3);
        }
        check_unique(v, fa, "name");
        dpop(v->c, m);
    }
}

/* validateDeviceClaim: spec.devices of a claim or a template's spec.spec. */
static void check_device_claim(vctx *v, const json_t *spec) {
    const json_t *devs = json_object_get(spec, "devices");
    if (!json_is_object(devs)) return;
    size_t m0 = dra__dpush_key(v->c, "devices");
    const json_t *reqs = json_object_get(devs, "requests");
    if (check_max(v, "requests", reqs, MAX_REQUESTS)) {
        size_t mk = dra__dpush_key(v->c, "requests");
        size_t i;
        const json_t *r;
        json_array_foreach(reqs, i, r) {
            if (!json_is_object(r)) continue;
            size_t m = dra__dpush_idx(v->c, i);
            check_request(v, r);
            dpop(v->c, m);
        }
        check_unique(v, reqs, "name");
        dpop(v->c, mk);
    }
    static const char *const lists[] = {"constraints", "config"};
    static const size_t maxes[] = {MAX_CONSTRAINTS, MAX_CONFIGS};
    for (int l = 0; l < 2; l++) {
        const json_t *arr = json_object_get(devs, lists[l]);
        if (!check_max(v, lists[l], arr, maxes[l])) continue;
        size_t mk = dra__dpush_key(v->c, lists[l]);
        size_t i;
        const json_t *r;
        json_array_foreach(arr, i, r) {
            if (!json_is_object(r)) continue;
            size_t m = dra__dpush_idx(v->c, i);
            check_request_refs(v, r, reqs);
            if (l == 1) {
                const json_t *op = json_object_get(r, "opaque");
                if (!op || json_is_null(op)) vfail_key(v, "opaque", "Required value");
            }
            dpop(v->c, m);
        }
        dpop(v->c, mk);
    }
    dpop(v->c, m0);
}

/* ---- ResourceSlice -------------------------------------------------------------------------- */

enum { MAX_DEVICES = 128, MAX_DEVICES_ADVANCED = 64 };

/* haveDeviceTaints || haveConsumesCounters || haveListAttributes */
static bool slice_advanced(const json_t *devs) {
    size_t i;
    const json_t *d;
    json_array_foreach(devs, i, d) {
        if (json_array_size(json_object_get(d, "taints")) || json_array_size(json_object_get(d, "consumesCounters")))
            return true;
        const char *k;
        const json_t *a;
        json_object_foreach((json_t *)json_object_get(d, "attributes"), k, a) {
            static const char *const lists[] = {"ints", "bools", "strings", "versions"};
            for (size_t l = 0; l < ARRAY_SIZE(lists); l++)
                if (json_object_get(a, lists[l]) && !json_is_null(json_object_get(a, lists[l]))) return true;
        }
    }
    return false;
}

/* validatePoolName: required, at most 253 bytes, each '/'-separated part a DNS subdomain. */
static void check_pool(vctx *v, const json_t *pool) {
    const char *pn = str_at(pool, "name");
    size_t m = dra__dpush_key(v->c, "name");
    if (!pn || !*pn) {
        vfail(v, "Required value");
    } else {
        if (strlen(pn) > 253) vfail(v, "Too long: may not be more than 253 bytes");
        for (const char *part = pn;;) {
            const char *sl = strchr(part, '/');
            char buf[256];
            snprintf(buf, sizeof buf, "%.*s", (int)(sl ? (size_t)(sl - part) : strlen(part)), part);
            if (!is_subdomain(buf)) vfail(v, "Invalid value: \"%s\": %s", buf, dns_subdomain_msg);
            if (!sl) break;
            part = sl + 1;
        }
    }
    dpop(v->c, m);
    const json_t *n = json_object_get(pool, "resourceSliceCount");
    json_int_t cnt = json_is_integer(n) ? json_integer_value(n) : 0;
    if (cnt <= 0) vfail_key(v, "resourceSliceCount", "Invalid value: %lld: must be greater than zero", (long long)cnt);
    n = json_object_get(pool, "generation");
    if (json_is_integer(n) && json_integer_value(n) < 0)
        vfail_key(v, "generation", "Invalid value: %lld: must be greater than or equal to zero",
                  (long long)json_integer_value(n));
}

/* A device's name (non-empty) and its taints (NULL: none). */
static void check_device(vctx *v, const char *name, const json_t *taints) {
    size_t m = dra__dpush_key(v->c, "name");
    check_label(v, name);
    dpop(v->c, m);
    m = dra__dpush_key(v->c, "taints");
    size_t k;
    const json_t *t;
    json_array_foreach(taints, k, t) {
        size_t m3 = dra__dpush_idx(v->c, k);
        const char *eff = str_at(t, "effect");
        if (!eff || !*eff) vfail_key(v, "effect", "Required value");
        else check_effect(v, t);
        dpop(v->c, m3);
    }
    dpop(v->c, m);
}

static void check_slice(vctx *v, const json_t *obj) {
    check_meta_name(v, obj);
    const json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) return;   /* the decoder says "spec: required value" */
    size_t m0 = dra__dpush_key(v->c, "spec");
    /* corevalidation.ValidateCSIDriverName (an absent driver: the decoder's error) */
    const char *driver = str_at(spec, "driver");
    if (driver && *driver) {
        size_t m = dra__dpush_key(v->c, "driver");
        char lower[256];
        size_t i = 0;
        for (; driver[i] && i + 1 < sizeof lower; i++) lower[i] = (char)tolower((unsigned char)driver[i]);
        lower[i] = '\0';
        if (strlen(driver) > 63) vfail(v, "Too long: may not be more than 63 bytes");
        else if (!is_subdomain(lower)) vfail(v, "Invalid value: \"%s\": %s", driver, dns_subdomain_msg);
        dpop(v->c, m);
    }
    const json_t *pool = json_object_get(spec, "pool");
    if (json_is_object(pool)) {
        size_t m = dra__dpush_key(v->c, "pool");
        check_pool(v, pool);
        dpop(v->c, m);
    }
    /* exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection */
    char set[128] = "";
    int nset = 0;
    const char *nn = str_at(spec, "nodeName");
    if (nn && *nn) snprintf(set + strlen(set), sizeof set - strlen(set), "%s`nodeName`", nset++ ? ", " : "");
    const json_t *ns = json_object_get(spec, "nodeSelector");
    if (ns && !json_is_null(ns)) snprintf(set + strlen(set), sizeof set - strlen(set), "%s`nodeSelector`", nset++ ? ", " : "");
    static const char *const flags[] = {"allNodes", "perDeviceNodeSelection"};
    for (int i = 0; i < 2; i++) {
        const json_t *b = json_object_get(spec, flags[i]);
        if (json_is_true(b)) snprintf(set + strlen(set), sizeof set - strlen(set), "%s`%s`", nset++ ? ", " : "", flags[i]);
        else if (json_is_false(b)) vfail_key(v, flags[i], "Invalid value: false: must be either unset or set to true");
    }
    if (nset == 0)
        vfail(v, "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
                 "required");
    if (nset > 1)
        vfail(v, "Invalid value: \"{%s}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                 "`perDeviceNodeSelection` is required, but multiple fields are set",
              set);
    const json_t *devs = json_object_get(spec, "devices"), *sc = json_object_get(spec, "sharedCounters");
    if (devs && !json_is_null(devs) && sc && !json_is_null(sc))
        vfail(v, "Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed");
    /* the smaller maximum holds whatever the devices are: only a longer list is looked
     * through for what makes it the smaller one's */
    size_t ndevs = json_array_size(devs);
    size_t max = ndevs <= MAX_DEVICES_ADVANCED || !slice_advanced(devs) ? MAX_DEVICES : MAX_DEVICES_ADVANCED;
    if (check_max(v, "devices", devs, max)) {
        size_t mk = dra__dpush_key(v->c, "devices");
        const char *stack[128], **names = ndevs <= 128 ? stack : xmalloc(ndevs * sizeof *names);
        for (size_t i = 0; i < ndevs; i++) {
            static const char *const keys[] = {"name", "taints"};
            const json_t *mem[2];   /* in one pass over the device (dra__dmembers) */
            dra__dmembers(json_array_get(devs, i), keys, 2, mem);
            const char *name = names[i] = json_is_string(mem[0]) ? json_string_value(mem[0]) : NULL;
            if (!name || !*name) continue;   /* the decoder says "name: required value" */
            size_t m = dra__dpush_idx(v->c, i);
            check_device(v, name, mem[1]);
            dpop(v->c, m);
        }
        check_unique_names(v, names, ndevs);
        if (names != stack) free(names);
        dpop(v->c, mk);
    }
    dpop(v->c, m0);
}

/* Without apiVersion (items of a typed list such as the API's ResourceSliceList
 * carry none): v1beta1 when the object has v1beta1's shape — a device under
 * `basic:`, or a request with deviceClassName but neither `exactly` nor
 * `firstAvailable` — so its fields are not silently lost as unknown ones. */
static const char *guess_version(const char *kind, const json_t *obj) {
    const json_t *spec = json_object_get(obj, "spec");
    size_t i;
    const json_t *x;
    if (!strcmp(kind, "ResourceSlice")) {
        json_array_foreach(json_object_get(spec, "devices"), i, x) if (json_object_get(x, "basic")) return "v1beta1";
        return NULL;
    }
    if (!strcmp(kind, "ResourceClaimTemplate")) spec = json_object_get(spec, "spec");
    else if (strcmp(kind, "ResourceClaim")) return NULL;
    json_array_foreach(json_object_get(json_object_get(spec, "devices"), "requests"), i, x) {
        if (json_object_get(x, "deviceClassName") && !json_object_get(x, "exactly") && !json_object_get(x, "firstAvailable"))
            return "v1beta1";
    }
    return NULL;
}

/* ---- entry point ------------------------------------------------------------------------------ */

static bool input_prepare(dctx *c, const char *kind, const json_t **obj, json_t **owned);

/* On failure nothing is left owned: the converted copy is freed here, since every
 * caller returns at once (a rejected v1beta1 object leaked its copy: fuzz_decode_yaml,
 * regressions/decode_yaml/v1beta1-slice-rejected.yaml). */
bool dra__input_prepare(dctx *c, const char *kind, const json_t **obj, json_t **owned) {
    if (input_prepare(c, kind, obj, owned)) return true;
    json_decref(*owned);
    *owned = NULL;
    return false;
}

static bool input_prepare(dctx *c, const char *kind, const json_t **obj, json_t **owned) {
    *owned = NULL;
    const char *version;
    if (!check_api_version(c, kind, *obj, &version)) return false;
    if (!version) version = guess_version(kind, *obj);
    if (version && strncmp(kind, "Pod", 3) && strcmp(kind, "Node")) {
        *owned = dra__convert_to_v1(kind, version, *obj);
        if (*owned) *obj = *owned;
    }
    unsigned unknown = 0;   /* in spec */
    /* the walk finds nothing where a thread ahead found every field known (the
     * object as given, of this kind: dra__input_fields_known); it tells nothing where
     * nobody hears of what it finds, but for a claim's requests (below). A store
     * without a warning sink (the service's) skips it: it was a sixth of building
     * `dralloc bench mig_5000nodes`, each device's tree walked once more. */
    bool claimish = !strcmp(kind, "ResourceClaim") || !strcmp(kind, "ResourceClaimTemplate");
    bool known = c->d->fields_known && !*owned && !strcmp(kind, json_string_value(json_object_get(*obj, "kind")) ?: "");
    bool walk = !known && (claimish || dra__input_heard(c->d->input));
    if (walk && !walk_unknown(c, shape_of(kind), *obj, NULL, &unknown)) return false;
    /* A claim whose requests sit in the wrong place asks for nothing: allocating it
     * "successfully" with no devices would hide the typo. */
    if (unknown && claimish) {
        const json_t *spec = json_object_get(*obj, "spec");
        if (!strcmp(kind, "ResourceClaimTemplate")) spec = json_object_get(spec, "spec");
        if (!json_array_size(json_object_get(json_object_get(spec, "devices"), "requests")))
            return dra__dfail(c, "no spec.devices.requests, but unknown fields (see the warnings above): the claim "
                                "would ask for no device");
    }
    if (!c->d->apply_defaults) return true;
    vctx v = {.c = c};
    size_t m0 = c->p.len;
    if (!strcmp(kind, "ResourceClaim")) {
        check_meta_name(&v, *obj);
        size_t m = dra__dpush_key(c, "spec");
        check_device_claim(&v, json_object_get(*obj, "spec"));
        dpop(c, m);
    } else if (!strcmp(kind, "ResourceClaimTemplate")) {
        check_meta_name(&v, *obj);
        size_t m = dra__dpush_key(c, "spec");
        dra__dpush_key(c, "spec");
        check_device_claim(&v, json_object_get(json_object_get(*obj, "spec"), "spec"));
        dpop(c, m);
    } else if (!strcmp(kind, "ResourceSlice")) {
        check_slice(&v, *obj);
    } else if (!strcmp(kind, "DeviceClass")) {
        check_meta_name(&v, *obj);
        size_t m = dra__dpush_key(c, "spec");
        check_selectors(&v, json_object_get(json_object_get(*obj, "spec"), "selectors"));
        dpop(c, m);
    } else if (!strcmp(kind, "DeviceTaintRule")) {
        check_meta_name(&v, *obj);
        const json_t *taint = json_object_get(json_object_get(*obj, "spec"), "taint");
        size_t m = dra__dpush_key(c, "spec");
        dra__dpush_key(c, "taint");
        check_effect(&v, taint);
        dpop(c, m);
    }
    assert(c->p.len == m0);   /* every push popped: later errors name the right field */
    (void)m0;
    return vdone(&v);
}
