/* deploy_check.c — deploy/ as an operator applies it: `kubectl kustomize` renders each
 * overlay (advisor, bind), and the objects that come out are checked for what the
 * shape promises (deploy/README.md):
 *   - a Deployment of >= 2 replicas spread over nodes, a PodDisruptionBudget for it,
 *     scheduled by the default scheduler (never by itself);
 *   - its pod: the upstream kube-scheduler image with --config from the overlay's
 *     ConfigMap, and `dralloc serve` whose every flag `dralloc serve --help` lists,
 *     on loopback (or with --client-ca-file), probes on --health-listen (/healthz
 *     alive, /readyz ready);
 *   - the KubeSchedulerConfiguration: every key one kubescheduler.config.k8s.io/v1
 *     has (types.go of k8s.io/kube-scheduler/config/v1, component-base's
 *     LeaderElectionConfiguration and ClientConnectionConfiguration), a profile of
 *     its own (never default-scheduler), a Lease of its own in a namespace where the
 *     service account may hold it, the extender at 127.0.0.1 on dralloc's port with
 *     the verbs dralloc serves and an httpTimeout above --filter-budget;
 *   - advisor: DynamicResources on, ignorable, no bindVerb; bind: DynamicResources
 *     disabled but at preEnqueue (its gate), bindVerb bind, dralloc run with --bind;
 *   - RBAC: the service account's roles are the upstream system:kube-scheduler and
 *     system:volume-scheduler, extension-apiserver-authentication-reader in kube-system,
 *     the leader-election Role, and dralloc's own, whose
 *     rules grant exactly the requests of tests/deploy/api_calls.h for the mode;
 *   - NetworkPolicy: the pod's declared ports (health, kube-scheduler's) open to named
 *     peers only, dralloc's --listen port to none (issue #39);
 *   - a MutatingAdmissionPolicy (admissionregistration.k8s.io/v1) matching pod creation,
 *     bound in every namespace, that sets the profile's schedulerName (every DRA pod to
 *     this scheduler: kubernetes#128980);
 *   - memory requests and limits as deploy/README.md "Sizing" gives them, a ResourceQuota
 *     for the critical PriorityClass outside kube-system;
 *   - deploy/kubeadm: kube-scheduler's --config with clientConnection.kubeconfig (it
 *     ignores --kubeconfig then), dralloc reading a kubeconfig its uid can read;
 *   - deploy/plan: an Indexed Job whose shard count is written once, reading the
 *     cluster itself with a read-only role of its own, fsGroup, a TTL, the merge. 
 * Usage: deploy_check DRALLOC SOURCE_DIR. Needs kubectl (its built-in kustomize). */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "engine/engine.h"
#include "tests/deploy/api_calls.h"

static int failures, checks;
static const char *dralloc_bin;   /* argv[1] */
static const char *mode;   /* the overlay being checked */

#define CHECK(cond, ...)                                          \
    do {                                                          \
        checks++;                                                 \
        if (!(cond)) {                                            \
            fprintf(stderr, "deploy_check: %s: FAIL: ", mode);    \
            fprintf(stderr, __VA_ARGS__);                         \
            fputc('\n', stderr);                                  \
            failures++;                                           \
        }                                                         \
    } while (0)

static char *run(const char *cmd, int *rc) {
    FILE *p = popen(cmd, "r");
    strbuf b;
    sbuf_init(&b);
    char buf[8192];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) sbuf_add(&b, buf, n);
    int st = p ? pclose(p) : -1;
    *rc = st == -1 ? -1 : WEXITSTATUS(st);
    sbuf_addc(&b, '\0');
    return sbuf_take(&b);
}

static const char *str(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static const json_t *path(const json_t *o, const char *p) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", p);
    for (char *t = strtok(buf, "."); t && o; t = strtok(NULL, ".")) o = json_object_get(o, t);
    return o;
}

static json_t *find(const json_t *docs, const char *kind, const char *name) {
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d) {
        if (!json_is_object(d) || strcmp(str(d, "kind") ?: "", kind)) continue;
        if (!name || !strcmp(str(json_object_get(d, "metadata"), "name") ?: "", name)) return d;
    }
    return NULL;
}

/* ---- the KubeSchedulerConfiguration v1 schema: the keys each object may have ---- */

typedef struct schema schema;
typedef struct field {
    const char *key;
    const schema *sub;   /* an object (or a list of objects) of this shape; NULL: a value */
} field;
struct schema {
    const char *name;
    const field *fields;
};

#define S(n, ...) static const field n##_F[] = {__VA_ARGS__, {NULL, NULL}}; static const schema n = {#n, n##_F}
S(Plugin, {"name", NULL}, {"weight", NULL});
S(PluginSet, {"enabled", &Plugin}, {"disabled", &Plugin});
S(Plugins, {"preEnqueue", &PluginSet}, {"queueSort", &PluginSet}, {"preFilter", &PluginSet},
  {"filter", &PluginSet}, {"postFilter", &PluginSet}, {"preScore", &PluginSet}, {"score", &PluginSet},
  {"reserve", &PluginSet}, {"permit", &PluginSet}, {"preBind", &PluginSet}, {"bind", &PluginSet},
  {"postBind", &PluginSet}, {"multiPoint", &PluginSet}, {"placementGenerate", &PluginSet},
  {"placementScore", &PluginSet}, {"placementFeasible", &PluginSet}, {"podGroupPostFilter", &PluginSet});
S(DynamicResourcesArgs, {"apiVersion", NULL}, {"kind", NULL}, {"filterTimeout", NULL}, {"bindingTimeout", NULL});
S(PluginConfig, {"name", NULL}, {"args", NULL});
S(KubeSchedulerProfile, {"schedulerName", NULL}, {"percentageOfNodesToScore", NULL}, {"percentageOfPlacementsToScore", NULL},
  {"plugins", &Plugins}, {"pluginConfig", &PluginConfig});
S(ExtenderTLSConfig, {"insecure", NULL}, {"serverName", NULL}, {"certFile", NULL}, {"keyFile", NULL}, {"caFile", NULL},
  {"certData", NULL}, {"keyData", NULL}, {"caData", NULL});
S(ExtenderManagedResource, {"name", NULL}, {"ignoredByScheduler", NULL});
S(Extender, {"urlPrefix", NULL}, {"filterVerb", NULL}, {"preemptVerb", NULL}, {"prioritizeVerb", NULL},
  {"weight", NULL}, {"bindVerb", NULL}, {"enableHTTPS", NULL}, {"tlsConfig", &ExtenderTLSConfig}, {"httpTimeout", NULL},
  {"nodeCacheCapable", NULL}, {"managedResources", &ExtenderManagedResource}, {"ignorable", NULL});
S(LeaderElectionConfiguration, {"leaderElect", NULL}, {"leaseDuration", NULL}, {"renewDeadline", NULL}, {"retryPeriod", NULL},
  {"resourceLock", NULL}, {"resourceName", NULL}, {"resourceNamespace", NULL});
S(ClientConnectionConfiguration, {"kubeconfig", NULL}, {"acceptContentTypes", NULL}, {"contentType", NULL}, {"qps", NULL},
  {"burst", NULL});
S(KubeSchedulerConfiguration, {"apiVersion", NULL}, {"kind", NULL}, {"parallelism", NULL},
  {"leaderElection", &LeaderElectionConfiguration}, {"clientConnection", &ClientConnectionConfiguration}, {"enableProfiling", NULL},
  {"enableContentionProfiling", NULL}, {"percentageOfNodesToScore", NULL}, {"percentageOfPlacementsToScore", NULL},
  {"podInitialBackoffSeconds", NULL}, {"podMaxBackoffSeconds", NULL}, {"profiles", &KubeSchedulerProfile},
  {"extenders", &Extender}, {"delayCacheUntilActive", NULL});

static void check_keys(const json_t *o, const schema *sc, const char *where) {
    if (json_is_array(o)) {
        size_t i;
        json_t *it;
        json_array_foreach(o, i, it) {
            char w[300];
            snprintf(w, sizeof w, "%s[%zu]", where, i);
            check_keys(it, sc, w);
        }
        return;
    }
    CHECK(json_is_object(o), "config %s: expected an object", where);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        const field *f = sc->fields;
        while (f->key && strcmp(f->key, k)) f++;
        CHECK(f->key, "config %s.%s: no such key in kubescheduler.config.k8s.io/v1 %s", where, k, sc->name);
        if (f->key && f->sub) {
            char w[300];
            snprintf(w, sizeof w, "%s.%s", where, k);
            check_keys(v, f->sub, w);
        }
    }
}

/* ---- durations, flags -------------------------------------------------------------- */

static double seconds(const char *d) {
    if (!d) return -1;
    char *end;
    double v = strtod(d, &end);
    if (!strcmp(end, "s")) return v;
    if (!strcmp(end, "ms")) return v / 1000;
    if (!strcmp(end, "m")) return v * 60;
    return -1;
}

/* The value of --name in args (--name=V or --name V), NULL when absent. */
static const char *flag(const json_t *args, const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < json_array_size(args); i++) {
        const char *a = json_string_value(json_array_get(args, i));
        if (!a || strncmp(a, name, n)) continue;
        if (a[n] == '=') return a + n + 1;
        if (!a[n]) return i + 1 < json_array_size(args) ? json_string_value(json_array_get(args, i + 1)) : "";
    }
    return NULL;
}

static int port_of(const char *hostport) {
    const char *c = hostport ? strrchr(hostport, ':') : NULL;
    return c ? atoi(c + 1) : -1;
}

/* The container port a probe names (a number or a port's name). */
static int probe_port(const json_t *ctr, const json_t *probe) {
    const json_t *p = path(probe, "httpGet.port");
    if (json_is_integer(p)) return (int)json_integer_value(p);
    size_t i;
    json_t *cp;
    json_array_foreach(json_object_get(ctr, "ports"), i, cp) if (!strcmp(str(cp, "name") ?: "", json_string_value(p) ?: "-"))
        return (int)json_integer_value(json_object_get(cp, "containerPort"));
    return -1;
}

/* `dralloc serve ARGS --help` exits 0 only when every argument before --help parses as
 * serve takes it (--help answers when it is reached): the container's arguments exactly
 * as written (--name=value or --name value), not only their names. */
static void check_args_accepted(const json_t *args) {
    strbuf cmd;
    sbuf_init(&cmd);
    sbuf_addf(&cmd, "%s", dralloc_bin);
    for (size_t i = 0; i < json_array_size(args); i++) {
        const char *a = json_string_value(json_array_get(args, i)) ?: "";
        sbuf_addc(&cmd, ' ');
        sbuf_addc(&cmd, '\'');
        for (const char *p = a; *p; p++) {
            if (*p == '\'') sbuf_addf(&cmd, "'\\''");
            else sbuf_addc(&cmd, *p);
        }
        sbuf_addc(&cmd, '\'');
    }
    sbuf_addf(&cmd, " --help 2>&1");
    int rc;
    char *out = run(cmd.buf, &rc);
    char first[300];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(out, "\n"), out);
    CHECK(rc == 0, "dralloc's args as written are refused by `dralloc serve` (exit %d): %s", rc, first);
    free(out);
    sbuf_free(&cmd);
}

/* ---- RBAC -------------------------------------------------------------------------- */

static bool binds_sa(const json_t *binding, const char *sa, const char *ns) {
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(binding, "subjects"), i, s) if (!strcmp(str(s, "kind") ?: "", "ServiceAccount") &&
                                                                      !strcmp(str(s, "name") ?: "", sa) &&
                                                                      !strcmp(str(s, "namespace") ?: "", ns)) return true;
    return false;
}

static bool rule_grants(const json_t *rule, const char *group, const char *resource, const char *verb) {
    bool g = false, r = false, v = false;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(rule, "apiGroups"), i, x) g |= !strcmp(json_string_value(x) ?: "-", group);
    json_array_foreach(json_object_get(rule, "resources"), i, x) r |= !strcmp(json_string_value(x) ?: "-", resource);
    json_array_foreach(json_object_get(rule, "verbs"), i, x) v |= !strcmp(json_string_value(x) ?: "-", verb);
    return g && r && v;
}

static void check_rbac(const json_t *docs, const char *sa, const char *ns, const char *lease_ns, bool bind) {
    json_t *granted = json_object();   /* "group|resource|verb" of dralloc's own roles */
    bool lease_ok = false, auth_reader = false;
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d) {
        const char *kind = str(d, "kind") ?: "";
        if (strcmp(kind, "ClusterRoleBinding") && strcmp(kind, "RoleBinding")) continue;
        if (!binds_sa(d, sa, ns)) continue;
        const char *role = str(json_object_get(d, "roleRef"), "name") ?: "";
        const char *rkind = str(json_object_get(d, "roleRef"), "kind") ?: "";
        const json_t *r = find(docs, rkind, role);
        if (!r) {
            /* kube-scheduler's delegated authentication reads the client CA from
             * kube-system/extension-apiserver-authentication, which this Role allows */
            if (!strcmp(kind, "RoleBinding") && !strcmp(rkind, "Role") &&
                !strcmp(role, "extension-apiserver-authentication-reader") &&
                !strcmp(str(json_object_get(d, "metadata"), "namespace") ?: "", "kube-system")) {
                auth_reader = true;
                continue;
            }
            CHECK(!strcmp(role, "system:kube-scheduler") || !strcmp(role, "system:volume-scheduler"),
                  "%s %s binds %s, which deploy/ does not define and is no upstream kube-scheduler role", kind,
                  str(json_object_get(d, "metadata"), "name"), role);
            continue;
        }
        size_t j, a, b, c;
        json_t *rule, *g, *res, *v;
        bool leases_only = true;
        json_array_foreach(json_object_get(r, "rules"), j, rule) json_array_foreach(json_object_get(rule, "resources"), a, res)
            leases_only &= !strcmp(json_string_value(res) ?: "", "leases");
        if (leases_only && !strcmp(rkind, "Role")) {
            /* kube-scheduler's leader election, in the Lease's namespace */
            const char *rns = str(json_object_get(r, "metadata"), "namespace") ?: "";
            bool all = true;
            const char *need[] = {"get", "create", "update"};
            for (int k = 0; k < 3; k++) {
                bool one = false;
                json_array_foreach(json_object_get(r, "rules"), j, rule) one |=
                    rule_grants(rule, "coordination.k8s.io", "leases", need[k]);
                all &= one;
            }
            lease_ok |= all && !strcmp(rns, lease_ns) && !strcmp(str(json_object_get(d, "metadata"), "namespace") ?: "", rns);
            continue;
        }
        CHECK(!strcmp(rkind, "ClusterRole"), "%s %s: dralloc's rights are cluster-wide ClusterRoles", kind, role);
        json_array_foreach(json_object_get(r, "rules"), j, rule) {
            CHECK(!json_object_get(rule, "resourceNames") && !json_object_get(rule, "nonResourceURLs"),
                  "ClusterRole %s: a rule with resourceNames or nonResourceURLs", role);
            json_array_foreach(json_object_get(rule, "apiGroups"), a, g) json_array_foreach(json_object_get(rule, "resources"), b, res)
                json_array_foreach(json_object_get(rule, "verbs"), c, v) {
                char key[300];
                snprintf(key, sizeof key, "%s|%s|%s", json_string_value(g), json_string_value(res), json_string_value(v));
                json_object_set_new(granted, key, json_string(role));
            }
        }
    }
    CHECK(auth_reader, "no RoleBinding in kube-system binds the Role extension-apiserver-authentication-reader: "
                       "kube-scheduler cannot read its client CA (Unable to get configmap/extension-apiserver-authentication)");
    CHECK(lease_ok, "no Role in %s grants the service account get, create and update on leases (kube-scheduler's "
                    "leaderElection.resourceNamespace)", lease_ns);
    /* a 1.36+ API server authorizes each claim status write that changes allocation or
     * reservedFor again as resourceclaims/binding with the same verb: the table must say
     * so, or the roles built from it fail every /bind with 403 */
    for (size_t k = 0; k < sizeof API_CALLS / sizeof API_CALLS[0]; k++)
        if (!strcmp(API_CALLS[k].group, "resource.k8s.io") && !strcmp(API_CALLS[k].resource, "resourceclaims/status"))
            CHECK(api_call_find("resource.k8s.io", "resourceclaims/binding", API_CALLS[k].verb),
                  "api_calls.h: resourceclaims/status %s without resourceclaims/binding %s "
                  "(DRAResourceClaimGranularStatusAuthorization)", API_CALLS[k].verb, API_CALLS[k].verb);
    /* exactly the calls of the mode: each granted, nothing more */
    size_t want = 0;
    for (size_t k = 0; k < sizeof API_CALLS / sizeof API_CALLS[0]; k++) {
        if ((API_CALLS[k].bind && !bind) || API_CALLS[k].public_info) continue;
        want++;
        char key[300];
        snprintf(key, sizeof key, "%s|%s|%s", API_CALLS[k].group, API_CALLS[k].resource, API_CALLS[k].verb);
        CHECK(json_object_get(granted, key), "dralloc's roles do not grant %s (a request dralloc makes)", key);
    }
    const char *key;
    json_t *who;
    json_object_foreach(granted, key, who) {
        char g[100], r[100], v[100];
        sscanf(key, "%99[^|]|%99[^|]|%99s", g, r, v);
        if (key[0] == '|') g[0] = '\0', sscanf(key, "|%99[^|]|%99s", r, v);
        const api_call *c = api_call_find(g, r, v);
        CHECK(c && (bind || !c->bind), "ClusterRole %s grants %s, which dralloc %s never requests", json_string_value(who),
              key, bind ? "in bind mode" : "in advisor mode");
        if (!bind) CHECK(!strcmp(v, "get") || !strcmp(v, "list") || !strcmp(v, "watch"),
                         "advisor: ClusterRole %s grants %s: dralloc must be read-only", json_string_value(who), key);
    }
    CHECK(json_object_size(granted) == want, "dralloc's roles grant %zu (group, resource, verb), it requests %zu",
          json_object_size(granted), want);
    json_decref(granted);
}

/* ---- NetworkPolicy --------------------------------------------------------------------- */

/* The policies that select the pod (labels) in ns: Ingress isolated, and the ports they
 * open, together, are exactly the pod's declared containerPorts (the health listener and
 * kube-scheduler's secure port), each to named peers only (a namespace or pod selector,
 * never "from anywhere" or an ipBlock); dralloc's --listen port stays on loopback. */
static void check_netpol(const json_t *docs, const char *ns, const json_t *labels, const json_t *pod, int listen_port) {
    json_t *open = json_object();   /* port -> policy name */
    size_t i, n = 0;
    json_t *d;
    json_array_foreach(docs, i, d) {
        if (strcmp(str(d, "kind") ?: "", "NetworkPolicy") ||
            strcmp(str(json_object_get(d, "metadata"), "namespace") ?: "", ns))
            continue;
        const char *name = str(json_object_get(d, "metadata"), "name") ?: "";
        const char *k;
        json_t *v;
        bool selects = true;
        json_object_foreach((json_t *)path(d, "spec.podSelector.matchLabels"), k, v) selects &=
            json_equal(v, json_object_get(labels, k));
        if (!selects) continue;
        n++;
        bool ingress = false;
        size_t j, m;
        json_t *t, *pt;
        json_array_foreach(path(d, "spec.policyTypes"), j, t) ingress |= !strcmp(json_string_value(t) ?: "", "Ingress");
        CHECK(ingress, "NetworkPolicy %s: policyTypes without Ingress", name);
        json_array_foreach(path(d, "spec.ingress"), j, t) {
            const json_t *from = json_object_get(t, "from");
            CHECK(json_array_size(from) > 0, "NetworkPolicy %s: ingress rule %zu allows every peer", name, j);
            json_array_foreach(from, m, pt) CHECK(!json_object_get(pt, "ipBlock") &&
                                                      (json_object_get(pt, "namespaceSelector") || json_object_get(pt, "podSelector")),
                                                  "NetworkPolicy %s: ingress rule %zu: a peer that is no namespace or pod selector",
                                                  name, j);
            const json_t *ports = json_object_get(t, "ports");
            CHECK(json_array_size(ports) > 0, "NetworkPolicy %s: ingress rule %zu opens every port", name, j);
            json_array_foreach(ports, m, pt) {
                char key[16];
                snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(pt, "port")));
                json_object_set_new(open, key, json_string(name));
            }
        }
    }
    CHECK(n > 0, "no NetworkPolicy selects the scheduler's pods: any pod may reach the health listener");
    json_t *declared = json_object(), *c, *cp;
    size_t ci, pi;
    json_array_foreach(json_object_get(pod, "containers"), ci, c) json_array_foreach(json_object_get(c, "ports"), pi, cp) {
        char key[16];
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(cp, "containerPort")));
        json_object_set_new(declared, key, json_true());
        CHECK(json_object_get(open, key), "NetworkPolicy: containerPort %s is not opened to anyone (its scraper)", key);
    }
    const char *k;
    json_t *v;
    json_object_foreach(open, k, v) CHECK(json_object_get(declared, k), "NetworkPolicy %s opens port %s, which no "
                                                                         "container declares", json_string_value(v), k);
    char lp[16];
    snprintf(lp, sizeof lp, "%d", listen_port);
    CHECK(!json_object_get(open, lp), "NetworkPolicy %s opens dralloc's --listen port %s (loopback: kube-scheduler only)",
          json_string_value(json_object_get(open, lp)), lp);
    json_decref(declared);
    json_decref(open);
}

/* ---- sizing, priority ------------------------------------------------------------------ */

/* A memory quantity in MiB ("1536Mi", "2Gi", "1G"), -1 when absent or unknown. */
static double mib(const char *q) {
    if (!q) return -1;
    char *end;
    double v = strtod(q, &end);
    if (!strcmp(end, "Mi")) return v;
    if (!strcmp(end, "Gi")) return v * 1024;
    if (!strcmp(end, "Ki")) return v / 1024;
    if (!strcmp(end, "M")) return v * 1e6 / 1048576;
    if (!strcmp(end, "G")) return v * 1e9 / 1048576;
    if (!*end) return v / 1048576;
    return -1;
}

/* The memory figures deploy/README.md "Sizing" gives: dralloc's limit above the 1,104 MiB
 * measured at 10,000 MIG nodes (bench/README.md) with a third to spare, its request at
 * least the ~250 MiB of 2,000 nodes; kube-scheduler's above what a whole-cluster cache
 * needs at 2,000 nodes (~470 MiB, assumed). */
static void check_sizing(const json_t *ks, const json_t *dr) {
    double dl = mib(str(path(dr, "resources.limits"), "memory")), dq = mib(str(path(dr, "resources.requests"), "memory"));
    double kl = mib(str(path(ks, "resources.limits"), "memory")), kq = mib(str(path(ks, "resources.requests"), "memory"));
    CHECK(dl >= 1.33 * 1104, "dralloc's memory limit %.0f MiB: the peak measured at 10,000 MIG nodes is 1,104 MiB", dl);
    CHECK(dq >= 300 && dq <= dl, "dralloc's memory request %.0f MiB: want ~2,000 nodes' worth (>= 300 MiB), <= its limit", dq);
    CHECK(kq >= 470 && kl >= 2 * kq, "kube-scheduler's memory request %.0f / limit %.0f MiB: its caches hold the whole "
                                     "cluster (~470 MiB at 2,000 nodes)", kq, kl);
}

/* A critical PriorityClass outside kube-system is admitted where the platform limits it
 * only with a ResourceQuota in the namespace whose scopeSelector names it. */
static void check_priority_quota(const json_t *docs, const char *ns, const json_t *pod) {
    const char *pc = str(pod, "priorityClassName");
    if (!pc || strncmp(pc, "system-", 7) || !strcmp(ns, "kube-system")) return;
    bool ok = false;
    size_t i, j, k;
    json_t *d, *e, *v;
    json_array_foreach(docs, i, d) {
        if (strcmp(str(d, "kind") ?: "", "ResourceQuota") || strcmp(str(json_object_get(d, "metadata"), "namespace") ?: "", ns))
            continue;
        json_array_foreach(path(d, "spec.scopeSelector.matchExpressions"), j, e) {
            if (strcmp(str(e, "scopeName") ?: "", "PriorityClass") || strcmp(str(e, "operator") ?: "", "In")) continue;
            json_array_foreach(json_object_get(e, "values"), k, v) ok |= !strcmp(json_string_value(v) ?: "", pc);
        }
    }
    CHECK(ok, "priorityClassName %s in %s without a ResourceQuota scoped to it: refused where the platform limits "
              "the class to kube-system", pc, ns);
}

/* base/scheduler-name-policy.yaml: a MutatingAdmissionPolicy, bound in every namespace,
 * that sets this overlay's profile as the schedulerName of the pods using DRA
 * (deploy/README.md, "One scheduler for every DRA pod"; tests/e2e two_schedulers) */
static void check_sched_policy(const json_t *docs, const char *prof) {
    json_t *pol = find(docs, "MutatingAdmissionPolicy", NULL);
    CHECK(pol && !strcmp(str(pol, "apiVersion") ?: "", "admissionregistration.k8s.io/v1"),
          "no admissionregistration.k8s.io/v1 MutatingAdmissionPolicy sending DRA pods to %s", prof);
    if (!pol) return;
    const char *pname = str(json_object_get(pol, "metadata"), "name") ?: "";
    size_t i;
    json_t *d;
    bool bound = false, sets = false, pods = false;
    json_array_foreach(docs, i, d) bound |= !strcmp(str(d, "kind") ?: "", "MutatingAdmissionPolicyBinding") &&
                                            !strcmp(str(json_object_get(d, "spec"), "policyName") ?: "", pname) &&
                                            !path(d, "spec.matchResources");
    CHECK(bound, "no MutatingAdmissionPolicyBinding of %s for every namespace", pname);
    char want[256];
    snprintf(want, sizeof want, "schedulerName: \"%s\"", prof);
    json_array_foreach(path(pol, "spec.mutations"), i, d) sets |=
        strstr(str(json_object_get(d, "applyConfiguration"), "expression") ?: "", want) != NULL;
    CHECK(sets, "the policy %s does not set schedulerName to the profile's %s", pname, prof);
    json_array_foreach(path(pol, "spec.matchConstraints.resourceRules"), i, d) {
        size_t j;
        json_t *r, *o;
        bool res = false, create = false;
        json_array_foreach(json_object_get(d, "resources"), j, r) res |= !strcmp(json_string_value(r) ?: "", "pods");
        json_array_foreach(json_object_get(d, "operations"), j, o) create |= !strcmp(json_string_value(o) ?: "", "CREATE");
        pods |= res && create;
    }
    CHECK(pods, "the policy %s does not match the creation of pods", pname);
}

/* ---- one overlay ------------------------------------------------------------------- */

static void check_overlay(const char *src, const char *help, bool bind) {
    mode = bind ? "bind" : "advisor";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "kubectl kustomize %s/deploy/%s 2>&1", src, mode);
    int rc;
    char *text = run(cmd, &rc);
    CHECK(rc == 0, "kubectl kustomize deploy/%s failed (exit %d):\n%s", mode, rc, text);
    err e;
    err_clear(&e);
    json_t *docs = rc == 0 ? dra_yaml_parse(text, strlen(text), mode, &e) : NULL;
    free(text);
    CHECK(docs, "the rendered objects do not parse: %s", e.msg);
    if (!docs) return;

    /* the Deployment and its pod */
    json_t *dep = find(docs, "Deployment", NULL);
    CHECK(dep && !find(docs, "DaemonSet", NULL) && !find(docs, "StatefulSet", NULL), "want one Deployment");
    if (!dep) goto done;
    const char *ns = str(json_object_get(dep, "metadata"), "namespace") ?: "";
    CHECK(json_integer_value(path(dep, "spec.replicas")) >= 2, "replicas %lld: want >= 2",
          (long long)json_integer_value(path(dep, "spec.replicas")));
    const json_t *pod = path(dep, "spec.template.spec"), *labels = path(dep, "spec.template.metadata.labels");
    bool spread = false;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(pod, "topologySpreadConstraints"), i, t) spread |=
        !strcmp(str(t, "topologyKey") ?: "", "kubernetes.io/hostname") && json_integer_value(json_object_get(t, "maxSkew")) == 1;
    json_array_foreach(path(pod, "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"), i, t) spread |=
        !strcmp(str(t, "topologyKey") ?: "", "kubernetes.io/hostname");
    CHECK(spread, "the replicas are not spread across nodes (kubernetes.io/hostname)");
    json_t *pdb = find(docs, "PodDisruptionBudget", NULL);
    bool pdb_ok = false;
    if (pdb) {
        const char *k;
        json_t *v;
        pdb_ok = !strcmp(str(json_object_get(pdb, "metadata"), "namespace") ?: "", ns) &&
                 (json_integer_value(path(pdb, "spec.minAvailable")) >= 1 || path(pdb, "spec.maxUnavailable"));
        json_object_foreach((json_t *)path(pdb, "spec.selector.matchLabels"), k, v) pdb_ok &=
            json_equal(v, json_object_get(labels, k));
    }
    CHECK(pdb_ok, "no PodDisruptionBudget keeps one replica of the Deployment");
    const char *pod_sched = str(pod, "schedulerName") ?: "default-scheduler";
    const char *sa = str(pod, "serviceAccountName") ?: "default";

    /* the containers */
    const json_t *ks = NULL, *dr = NULL;
    json_t *c;
    json_array_foreach(json_object_get(pod, "containers"), i, c) {
        const char *img = str(c, "image") ?: "";
        if (!strncmp(img, "registry.k8s.io/kube-scheduler:", 31)) ks = c;
        const json_t *args = json_object_get(c, "args");
        if (json_array_size(args) && !strcmp(json_string_value(json_array_get(args, 0)) ?: "", "serve")) dr = c;
    }
    CHECK(ks, "no container runs the upstream image registry.k8s.io/kube-scheduler:<tag>");
    /* the release the project is tested with (its gates: extender/gates.h) */
    CHECK(!ks || !strncmp(str(ks, "image") + 31, "v1.37.", 6), "kube-scheduler image %s: want v1.37.x, the release "
                                                                 "dralloc is tested with", ks ? str(ks, "image") : "");
    CHECK(dr, "no container runs `dralloc serve`");
    CHECK(json_array_size(json_object_get(pod, "containers")) == 2, "want exactly two containers");
    if (!ks || !dr) goto done;
    const char *img = str(dr, "image") ?: "";
    CHECK(strchr(img, ':') && !strstr(img, "kube-scheduler"), "dralloc's image %s has no tag", img);
    const json_t *args = json_object_get(dr, "args");
    for (i = 1; i < json_array_size(args); i++) {
        const char *a = json_string_value(json_array_get(args, i));
        if (!a || strncmp(a, "--", 2)) continue;
        char name[80], want[90];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
        snprintf(want, sizeof want, "  %s", name);
        const char *at = strstr(help, want);
        char after = at ? at[strlen(want)] : 0;
        CHECK(at && (after == ' ' || after == '\n' || after == '[' || after == '='),
              "dralloc arg %s: `dralloc serve --help` lists no %s", a, name);
    }
    check_args_accepted(args);
    const char *listen = flag(args, "--listen"), *health = flag(args, "--health-listen");
    CHECK(listen && (!strncmp(listen, "127.0.0.1:", 10) || !strncmp(listen, "[::1]:", 6) || flag(args, "--client-ca-file")),
          "dralloc --listen %s: beyond loopback without --client-ca-file", listen ? listen : "(default)");
    CHECK(!flag(args, "--allow-unauthenticated"), "dralloc runs with --allow-unauthenticated");
    CHECK(health, "dralloc has no --health-listen: probes would share the request connections");
    CHECK(bind == (flag(args, "--bind") != NULL), "dralloc %s --bind in the %s overlay", bind ? "lacks" : "has", mode);
    const json_t *live = json_object_get(dr, "livenessProbe"), *ready = json_object_get(dr, "readinessProbe");
    CHECK(live && !strcmp(str(json_object_get(live, "httpGet"), "path") ?: "", "/healthz") &&
              probe_port(dr, live) == port_of(health),
          "dralloc's livenessProbe is not GET /healthz on --health-listen %s", health ? health : "");
    CHECK(ready && !strcmp(str(json_object_get(ready, "httpGet"), "path") ?: "", "/readyz") &&
              probe_port(dr, ready) == port_of(health),
          "dralloc's readinessProbe is not GET /readyz on --health-listen %s", health ? health : "");

    check_netpol(docs, ns, labels, pod, port_of(listen));
    check_sizing(ks, dr);
    check_priority_quota(docs, ns, pod);

    /* kube-scheduler's --config: a file of the overlay's ConfigMap */
    const char *cfgpath = NULL;
    const json_t *lists[] = {json_object_get(ks, "command"), json_object_get(ks, "args")};
    for (int l = 0; l < 2 && !cfgpath; l++) cfgpath = flag(lists[l], "--config");
    CHECK(cfgpath, "kube-scheduler has no --config");
    if (!cfgpath) goto done;
    const char *slash = strrchr(cfgpath, '/');
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - cfgpath) : 0, cfgpath);
    const char *vol = NULL;
    json_array_foreach(json_object_get(ks, "volumeMounts"), i, t) if (!strcmp(str(t, "mountPath") ?: "", dir)) vol =
        str(t, "name");
    const char *cmname = NULL;
    json_array_foreach(json_object_get(pod, "volumes"), i, t) if (vol && !strcmp(str(t, "name") ?: "", vol)) cmname =
        str(json_object_get(t, "configMap"), "name");
    json_t *cm = cmname ? find(docs, "ConfigMap", cmname) : NULL;
    const char *cfgtext = cm ? str(json_object_get(cm, "data"), slash ? slash + 1 : cfgpath) : NULL;
    CHECK(cfgtext, "--config=%s is no key of a ConfigMap mounted at %s", cfgpath, dir);
    if (!cfgtext) goto done;
    json_t *cdocs = dra_yaml_parse(cfgtext, strlen(cfgtext), "config", &e);
    const json_t *cfg = json_array_get(cdocs, 0);
    CHECK(cfg && !strcmp(str(cfg, "apiVersion") ?: "", "kubescheduler.config.k8s.io/v1") &&
              !strcmp(str(cfg, "kind") ?: "", "KubeSchedulerConfiguration"),
          "the config is no kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration");
    if (!cfg) {
        json_decref(cdocs);
        goto done;
    }
    check_keys(cfg, &KubeSchedulerConfiguration, "");
    /* its own profile */
    const json_t *profiles = json_object_get(cfg, "profiles");
    CHECK(json_array_size(profiles) >= 1, "no profile");
    json_t *p;
    bool dra_disabled = false, dra_gate = false;
    const char *prof = NULL;
    json_array_foreach(profiles, i, p) {
        const char *name = str(p, "schedulerName") ?: "default-scheduler";
        if (!prof) prof = name;
        CHECK(strcmp(name, "default-scheduler"), "profile %zu is default-scheduler: every pod would go through it", i);
        CHECK(strcmp(name, pod_sched), "dralloc's own pods are scheduled by %s, a profile of theirs", name);
        size_t j;
        json_t *x;
        json_array_foreach(path(p, "plugins.multiPoint.disabled"), j, x) dra_disabled |=
            !strcmp(str(x, "name") ?: "", "DynamicResources");
        json_array_foreach(path(p, "plugins.filter.disabled"), j, x) dra_disabled |=
            !strcmp(str(x, "name") ?: "", "DynamicResources");
        /* bind mode keeps the plugin's PreEnqueue gate (a pod is not tried before the claims
         * of its templates exist, and their creation requeues it: without it a pod tried too
         * early could be parked for podMaxInUnschedulablePodsDuration, tests/e2e/README.md),
         * and nothing else of it: at any other point it would allocate beside dralloc */
        static const char *const points[] = {"preFilter", "filter", "postFilter", "preScore", "score",
                                             "reserve", "permit", "preBind", "bind", "postBind"};
        for (size_t k = 0; k < sizeof points / sizeof *points; k++) {
            char at[64];
            snprintf(at, sizeof at, "plugins.%s.enabled", points[k]);
            json_array_foreach(path(p, at), j, x) CHECK(strcmp(str(x, "name") ?: "", "DynamicResources"),
                                                         "DynamicResources is enabled at %s", points[k]);
        }
        json_array_foreach(path(p, "plugins.preEnqueue.enabled"), j, x) dra_gate |=
            !strcmp(str(x, "name") ?: "", "DynamicResources");
        json_array_foreach(json_object_get(p, "pluginConfig"), j, x) if (!strcmp(str(x, "name") ?: "", "DynamicResources"))
            check_keys(json_object_get(x, "args"), &DynamicResourcesArgs, "pluginConfig.DynamicResources.args");
    }
    CHECK(bind == dra_disabled, "DynamicResources is %s in the %s overlay", dra_disabled ? "disabled" : "on", mode);
    CHECK(!bind || dra_gate, "the bind overlay disables DynamicResources at preEnqueue too: a pod would be tried "
                             "before the claims of its templates exist");
    if (prof) check_sched_policy(docs, prof);
    /* its own Lease */
    const json_t *le = json_object_get(cfg, "leaderElection");
    const char *lease = str(le, "resourceName") ?: "kube-scheduler", *lease_ns = str(le, "resourceNamespace") ?: "kube-system";
    CHECK(json_is_true(json_object_get(le, "leaderElect")), "leaderElection.leaderElect is not true: both replicas "
                                                             "would schedule");
    CHECK(strcmp(lease, "kube-scheduler") || strcmp(lease_ns, "kube-system"),
          "the Lease is the control plane kube-scheduler's (kube-system/kube-scheduler)");
    CHECK(!strcmp(lease_ns, ns), "the Lease is in %s, the scheduler in %s", lease_ns, ns);
    /* the extender: dralloc on loopback */
    const json_t *exts = json_object_get(cfg, "extenders"), *x = json_array_get(exts, 0);
    CHECK(json_array_size(exts) == 1, "want one extender, dralloc");
    char want_url[64];
    snprintf(want_url, sizeof want_url, "http%s://127.0.0.1:%d", json_is_true(json_object_get(x, "enableHTTPS")) ? "s" : "",
             port_of(listen));
    CHECK(x && !strncmp(str(x, "urlPrefix") ?: "", want_url, strlen(want_url)),
          "extender urlPrefix %s: want %s (dralloc's --listen)", x ? str(x, "urlPrefix") : "", want_url);
    CHECK(x && !strcmp(str(x, "filterVerb") ?: "", "filter") && !strcmp(str(x, "prioritizeVerb") ?: "", "prioritize") &&
              json_integer_value(json_object_get(x, "weight")) >= 1,
          "extender verbs: want filter, prioritize with a weight");
    CHECK(x && json_is_true(json_object_get(x, "nodeCacheCapable")), "nodeCacheCapable: dralloc caches the Nodes");
    double budget = seconds(flag(args, "--filter-budget") ?: "2s"), timeout = seconds(str(x, "httpTimeout") ?: "5s");
    CHECK(timeout > budget, "httpTimeout %.3gs is not above dralloc's --filter-budget %.3gs", timeout, budget);
    if (bind) {
        CHECK(x && !strcmp(str(x, "bindVerb") ?: "", "bind"), "bind: bindVerb is not bind");
        /* the preempt verb reads the objects' text, which only --preempt-verb keeps */
        CHECK(x && !strcmp(str(x, "preemptVerb") ?: "", "preempt"), "bind: preemptVerb is not preempt");
        CHECK(flag(args, "--preempt-verb") != NULL, "bind: preemptVerb without dralloc --preempt-verb");
    } else {
        CHECK(x && !json_object_get(x, "preemptVerb"), "advisor: a preemptVerb (dralloc runs without --preempt-verb)");
        CHECK(x && !json_object_get(x, "bindVerb"), "advisor: a bindVerb");
        CHECK(x && json_is_true(json_object_get(x, "ignorable")), "advisor: the extender is not ignorable");
    }
    char lease_ns_copy[256];
    snprintf(lease_ns_copy, sizeof lease_ns_copy, "%s", lease_ns);
    json_decref(cdocs);

    check_rbac(docs, sa, ns, lease_ns_copy, bind);
done:
    json_decref(docs);
}


/* ---- deploy/plan: the Indexed Job ----------------------------------------------------- */

static void check_plan(const char *src, const char *dralloc) {
    mode = "plan";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "kubectl kustomize %s/deploy/plan 2>&1", src);
    int rc;
    char *text = run(cmd, &rc);
    CHECK(rc == 0, "kubectl kustomize deploy/plan failed (exit %d):\n%s", rc, text);
    err e;
    err_clear(&e);
    json_t *docs = rc == 0 ? dra_yaml_parse(text, strlen(text), mode, &e) : NULL;
    free(text);
    json_t *job = docs ? find(docs, "Job", NULL) : NULL;
    CHECK(job, "no Job");
    if (!job) {
        json_decref(docs);
        return;
    }
    const json_t *pod = path(job, "spec.template.spec"), *c = json_array_get(json_object_get(pod, "containers"), 0);
    json_int_t n = json_integer_value(path(job, "spec.completions"));
    const char *shards = NULL;
    size_t i;
    json_t *env;
    json_array_foreach(json_object_get(c, "env"), i, env) if (!strcmp(str(env, "name") ?: "", "SHARDS")) shards =
        str(env, "value");
    CHECK(n > 1 && json_integer_value(path(job, "spec.parallelism")) == n && shards && atoll(shards) == n,
          "completions %lld, parallelism %lld and SHARDS %s differ: the shard count is not in one place", (long long)n,
          (long long)json_integer_value(path(job, "spec.parallelism")), shards ? shards : "(none)");
    CHECK(!strcmp(str(path(job, "spec"), "completionMode") ?: "", "Indexed"), "not an Indexed Job");
    CHECK(json_integer_value(path(pod, "securityContext.fsGroup")) > 0, "no fsGroup: the results volume is root's");
    CHECK(json_integer_value(path(job, "spec.ttlSecondsAfterFinished")) > 0, "no ttlSecondsAfterFinished");
    const char *script = json_string_value(json_array_get(json_object_get(c, "args"), 0)) ?: "";
    CHECK(strstr(script, "--server") && strstr(script, "--token-file") && strstr(script, "--shard") &&
              strstr(script, "plan merge"),
          "the script does not read the cluster itself (--server, --token-file), shard, and merge");
    json_t *v;
    json_array_foreach(json_object_get(pod, "volumes"), i, v) CHECK(!json_object_get(v, "configMap") ||
                                                                       strcmp(str(json_object_get(v, "configMap"), "name") ?: "", "dralloc-snapshot"),
                                                                   "the cluster still comes from a ConfigMap");
    /* the script parses, and plan takes its flags */
    FILE *sh = popen("sh -n", "w");
    fputs(script, sh);
    CHECK(sh && pclose(sh) == 0, "the Job's script is not valid sh");
    snprintf(cmd, sizeof cmd, "%s plan --help 2>&1", dralloc);
    char *help = run(cmd, &rc);
    const char *flags[] = {"--server", "--token-file", "--ca-file", "--scenarios", "--shard", "merge"};
    for (size_t k = 0; k < ARRAY_SIZE(flags); k++)
        CHECK(strstr(help, flags[k]), "`dralloc plan --help` does not list %s", flags[k]);
    free(help);
    /* its own read-only RBAC: list of what ext_kube_snapshot reads */
    const char *sa = str(pod, "serviceAccountName") ?: "default";
    const char *ns = str(json_object_get(job, "metadata"), "namespace") ?: "";
    bool bound = false;
    json_t *d;
    json_array_foreach(docs, i, d) {
        if (strcmp(str(d, "kind") ?: "", "ClusterRoleBinding") || !binds_sa(d, sa, ns)) continue;
        const json_t *role = find(docs, "ClusterRole", str(json_object_get(d, "roleRef"), "name"));
        bound |= role != NULL;
        size_t j, k;
        json_t *rule, *verb;
        json_array_foreach(json_object_get(role, "rules"), j, rule) json_array_foreach(json_object_get(rule, "verbs"), k, verb)
            CHECK(!strcmp(json_string_value(verb) ?: "", "list"), "the plan's role grants %s: want list only",
                  json_string_value(verb));
    }
    CHECK(bound && strcmp(sa, "default"), "the Job has no service account of its own bound to a read-only role");
    json_decref(docs);
}

/* ---- deploy/kubeadm: the sidecar in kubeadm's kube-scheduler static pod ------------------ */

static json_t *read_yaml(const char *file) {
    FILE *fp = fopen(file, "rb");
    CHECK(fp, "cannot read %s", file);
    if (!fp) return NULL;
    strbuf b;
    sbuf_init(&b);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0) sbuf_add(&b, buf, n);
    fclose(fp);
    sbuf_addc(&b, '\0');
    err e;
    err_clear(&e);
    json_t *docs = dra_yaml_parse(b.buf, strlen(b.buf), file, &e);
    CHECK(docs, "%s does not parse: %s", file, e.msg);
    sbuf_free(&b);
    return docs;
}

static const json_t *named(const json_t *list, const char *key, const char *name) {
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) if (!strcmp(str(x, key) ?: "", name)) return x;
    return NULL;
}

/* kubeadm's scheduler.conf: root's, 0600, mounted by kubeadm's manifest at this path. */
#define KUBEADM_SCHEDULER_CONF "/etc/kubernetes/scheduler.conf"
#define DRALLOC_IMAGE_UID 65532   /* the Dockerfile's USER */

/* The patch and the config as deploy/README.md's recipe installs them: kube-scheduler
 * with --config whose clientConnection.kubeconfig is kubeadm's (it ignores --kubeconfig
 * then), the config's directory mounted; dralloc on loopback, reading a copy of the
 * kubeconfig it can read as its uid, which a root init container makes. */
static void check_kubeadm(const char *src, const char *help) {
    mode = "kubeadm";
    char file[1024];
    snprintf(file, sizeof file, "%s/deploy/kubeadm/kube-scheduler+strategic.yaml", src);
    json_t *pdocs = read_yaml(file);
    snprintf(file, sizeof file, "%s/deploy/kubeadm/kube-scheduler-config.yaml", src);
    json_t *cdocs = read_yaml(file);
    const json_t *pod = path(json_array_get(pdocs, 0), "spec"), *cfg = json_array_get(cdocs, 0);
    if (!pod || !cfg) goto done;
    check_keys(cfg, &KubeSchedulerConfiguration, "");
    const json_t *ks = named(json_object_get(pod, "containers"), "name", "kube-scheduler");
    const json_t *dr = named(json_object_get(pod, "containers"), "name", "dralloc");
    CHECK(ks && dr, "the patch lacks the kube-scheduler or the dralloc container");
    if (!ks || !dr) goto done;
    const json_t *cmd = json_object_get(ks, "command");
    const char *config = flag(cmd, "--config");
    CHECK(config, "kube-scheduler has no --config");
    CHECK(!flag(cmd, "--kubeconfig") && !flag(cmd, "--leader-elect"),
          "kube-scheduler keeps --kubeconfig or --leader-elect, which --config makes it ignore");
    CHECK(!strcmp(str(path(cfg, "clientConnection"), "kubeconfig") ?: "", KUBEADM_SCHEDULER_CONF),
          "the config's clientConnection.kubeconfig is not %s: kube-scheduler would have no credentials",
          KUBEADM_SCHEDULER_CONF);
    /* the config file is under a mount of the patch, from the host path the README copies it to */
    bool mounted = false;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(ks, "volumeMounts"), i, m) {
        const char *mp = str(m, "mountPath") ?: "-";
        if (!config || strncmp(config, mp, strlen(mp)) || config[strlen(mp)] != '/') continue;
        const json_t *v = named(json_object_get(pod, "volumes"), "name", str(m, "name") ?: "");
        mounted = v && !strcmp(str(json_object_get(v, "hostPath"), "path") ?: "", "/etc/kubernetes/dralloc");
    }
    CHECK(mounted, "--config=%s is not under a hostPath mount of /etc/kubernetes/dralloc", config ? config : "");
    /* the extender: dralloc on loopback, ignorable, no bind */
    const json_t *args = json_object_get(dr, "args"), *x = json_array_get(json_object_get(cfg, "extenders"), 0);
    check_args_accepted(args);
    const char *listen = flag(args, "--listen"), *health = flag(args, "--health-listen");
    CHECK(listen && !strncmp(listen, "127.0.0.1:", 10) && health && !strncmp(health, "127.0.0.1:", 10),
          "dralloc's --listen/--health-listen not on loopback (the pod is on the host network)");
    char want_url[64];
    snprintf(want_url, sizeof want_url, "http://127.0.0.1:%d", port_of(listen));
    CHECK(x && !strcmp(str(x, "urlPrefix") ?: "", want_url), "extender urlPrefix: want %s", want_url);
    CHECK(x && json_is_true(json_object_get(x, "ignorable")) && !json_object_get(x, "bindVerb"),
          "the default profile's extender must be ignorable and not bind");
    for (i = 1; i < json_array_size(args); i++) {
        const char *a = json_string_value(json_array_get(args, i));
        char name[80], want[90];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(a ?: "", "="), a ?: "");
        snprintf(want, sizeof want, "  %s ", name);
        CHECK(strstr(help, want), "dralloc arg %s: `dralloc serve --help` lists no %s", a, name);
    }
    /* credentials: dralloc runs as the image's uid and reads a copy it owns */
    CHECK(json_integer_value(path(dr, "securityContext.runAsUser")) == DRALLOC_IMAGE_UID,
          "dralloc does not run as %d, the image's user", DRALLOC_IMAGE_UID);
    const char *kc = flag(args, "--kubeconfig");
    CHECK(kc && strcmp(kc, KUBEADM_SCHEDULER_CONF), "dralloc reads %s, root's with mode 0600: uid %d cannot",
          kc ? kc : "(no --kubeconfig)", DRALLOC_IMAGE_UID);
    if (!kc) goto done;
    const char *slash = strrchr(kc, '/');
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - kc) : 0, kc);
    const json_t *dm = named(json_object_get(dr, "volumeMounts"), "mountPath", dir);
    const json_t *vol = dm ? named(json_object_get(pod, "volumes"), "name", str(dm, "name") ?: "") : NULL;
    CHECK(vol && json_object_get(vol, "emptyDir"), "dralloc's --kubeconfig %s is not in an emptyDir of the pod", kc);
    bool copied = false;
    json_t *ic;
    json_array_foreach(json_object_get(pod, "initContainers"), i, ic) {
        const json_t *into = dm ? named(json_object_get(ic, "volumeMounts"), "name", str(dm, "name") ?: "") : NULL;
        const json_t *from = named(json_object_get(ic, "volumeMounts"), "mountPath", KUBEADM_SCHEDULER_CONF);
        char script[1024] = "";
        size_t j;
        json_t *w;
        json_array_foreach(json_object_get(ic, "command"), j, w) {
            size_t u = strlen(script);
            snprintf(script + u, sizeof script - u, "%s ", json_string_value(w) ?: "");
        }
        char owner[32], dest[300];
        snprintf(owner, sizeof owner, "-o %d", DRALLOC_IMAGE_UID);
        snprintf(dest, sizeof dest, "%s/%s", into ? str(into, "mountPath") : "-", slash + 1);
        copied |= into && from && json_integer_value(path(ic, "securityContext.runAsUser")) == 0 && strstr(script, owner) &&
                  strstr(script, KUBEADM_SCHEDULER_CONF) && strstr(script, dest);
    }
    CHECK(copied, "no init container (as root) copies %s to %s owned by %d", KUBEADM_SCHEDULER_CONF, kc, DRALLOC_IMAGE_UID);
done:
    json_decref(pdocs);
    json_decref(cdocs);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: deploy_check DRALLOC SOURCE_DIR\n");
        return 2;
    }
    mode = "setup";
    dralloc_bin = argv[1];
    int rc;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s serve --help", argv[1]);
    char *help = run(cmd, &rc);
    CHECK(rc == 0 && strstr(help, "--listen"), "`dralloc serve --help` failed (exit %d)", rc);
    char *kv = run("kubectl version --client 2>&1", &rc);
    CHECK(rc == 0, "kubectl is not on the PATH (it renders deploy/ with its kustomize): %s", kv);
    free(kv);
    if (!failures) {
        check_overlay(argv[2], help, false);
        check_overlay(argv[2], help, true);
        check_plan(argv[2], argv[1]);
        check_kubeadm(argv[2], help);
    }
    free(help);
    printf("deploy_check: %d checks, %d failed\n%d passed, %d failed\n", checks, failures, checks - failures, failures);
    return failures ? 1 : 0;
}
