/* allocate.c — `dralloc allocate`: run the allocator.
 *
 *   dralloc allocate --fixture CASE.json
 *       one allocator conformance case → one JSON object on stdout, exit 0
 *       ({"allocations": [...]}, {"unsatisfiable": true} or {"error": "..."});
 *       a malformed case is a usage error (stderr, exit 2).
 *   dralloc allocate -f FILE_OR_DIR... --node NAME [--claim NS/NAME] [-o yaml|json]
 *                    [--feature-gates A=true,B=false]
 *       reads kubectl-style files (YAML or JSON, multi-document, lists), allocates
 *       the pending claims for the node — the named claim, or every claim without an
 *       allocation, each pod's claims together (template claims generated), claim
 *       after claim so later ones see earlier allocations — and prints the
 *       ResourceClaims with status.allocation filled; a claim that cannot be
 *       allocated is reported on stderr with the reason (exit 1).
 *   dralloc allocate -f FILE_OR_DIR... --node NAME --pod NS/NAME [-o yaml|json]
 *       everything one pod needs on the node (engine/extres.h): its claims (by name,
 *       from templates, or its PodGroup's), the implicit extended-resource claim, or
 *       the device-plugin count; prints the claims it allocates, notes reused claims
 *       and device-plugin fits on stderr; exit 1 when the pod does not fit. */
#include "cmd/commands.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/engine.h"

static int usage(FILE *f) {
    fprintf(f,
            "usage: dralloc allocate --fixture CASE.json\n"
            "       dralloc allocate -f FILE_OR_DIR... --node NAME [--claim NS/NAME] [-o yaml|json]\n"
            "                        [--feature-gates DRAPrioritizedList=true,...]\n"
            "       dralloc allocate -f FILE_OR_DIR... --node NAME --pod NS/NAME [-o yaml|json]\n"
            "                        [--feature-gates ...]   (the pod's claims, PodGroup claims and\n"
            "                        extended resources on the node)\n");
    return f == stdout ? 0 : 2;
}

static int run_fixture(const char *path) {
    json_error_t je;
    json_t *c = json_load_file(path, 0, &je);
    if (!c) {
        fprintf(stderr, "dralloc allocate: %s: %s (line %d)\n", path, je.text, je.line);
        return 2;
    }
    err e;
    err_clear(&e);
    json_t *out = dra_fixture_run(c, &e);
    json_decref(c);
    if (!out) {
        char buf[2048];
        fprintf(stderr, "dralloc allocate: %s: %s\n", path, err_format(&e, buf, sizeof buf));
        return 2;
    }
    char *s = json_dumps(out, JSON_COMPACT);
    printf("%s\n", s);
    free(s);
    json_decref(out);
    return 0;
}

/* ---- YAML output ----------------------------------------------------------------- */

static bool needs_quotes(const char *s) {
    if (!*s) return true;
    static const char *const special[] = {"true", "false", "null", "yes", "no", "on", "off", "~", "y", "n",
                                          "True", "False", "Null", "Yes", "No", "On", "Off", "Y", "N"};
    for (size_t i = 0; i < ARRAY_SIZE(special); i++)
        if (!strcmp(s, special[i])) return true;
    if (strchr("-?:,[]{}#&*!|>'\"%@` ", s[0])) return true;
    if ((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == '+') return true;
    for (const char *p = s; *p; p++) {
        if (*p == '\n' || *p == '\t' || (unsigned char)*p < 0x20) return true;
        if (*p == ':' && (p[1] == ' ' || !p[1])) return true;
        if (*p == ' ' && p[1] == '#') return true;
    }
    return s[strlen(s) - 1] == ' ';
}

static void yaml_scalar(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_STRING: {
        const char *s = json_string_value(v);
        if (needs_quotes(s)) {
            char *q = json_dumps(v, JSON_ENCODE_ANY);
            fputs(q, stdout);
            free(q);
        } else {
            fputs(s, stdout);
        }
        break;
    }
    case JSON_INTEGER: printf("%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: printf("%.17g", json_real_value(v)); break;
    case JSON_TRUE: fputs("true", stdout); break;
    case JSON_FALSE: fputs("false", stdout); break;
    default: fputs("null", stdout);
    }
}

static bool is_empty_coll(const json_t *v) {
    return (json_is_object(v) && json_object_size(v) == 0) || (json_is_array(v) && json_array_size(v) == 0);
}

static void yaml_node(const json_t *v, int indent, bool in_seq);

static void yaml_value_after_key(const json_t *v, int indent) {
    if (is_empty_coll(v)) {
        printf(" %s\n", json_is_object(v) ? "{}" : "[]");
    } else if (json_is_object(v)) {
        printf("\n");
        yaml_node(v, indent + 2, false);
    } else if (json_is_array(v)) {
        printf("\n");
        yaml_node(v, indent, false);
    } else {
        printf(" ");
        yaml_scalar(v);
        printf("\n");
    }
}

/* in_seq: the first line is already indented by the "- " of a sequence item. */
static void yaml_node(const json_t *v, int indent, bool in_seq) {
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)v, k, x) {
            if (!(in_seq && first)) printf("%*s", indent, "");
            first = false;
            json_t *ks = json_string(k);
            yaml_scalar(ks);
            json_decref(ks);
            printf(":");
            yaml_value_after_key(x, indent);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *x = json_array_get(v, i);
            printf("%*s- ", indent, "");
            if (json_is_object(x) && json_object_size(x)) yaml_node(x, indent + 2, true);
            else if (json_is_array(x) && json_array_size(x)) {
                printf("\n");
                yaml_node(x, indent + 2, false);
            } else {
                if (is_empty_coll(x)) printf("%s", json_is_object(x) ? "{}" : "[]");
                else yaml_scalar(x);
                printf("\n");
            }
        }
    } else {
        printf("%*s", indent, "");
        yaml_scalar(v);
        printf("\n");
    }
}

/* ---- file mode ----------------------------------------------------------------------- */

typedef struct job {
    const dra_claim *claims[64];
    size_t n;
    const char *what;   /* "pod ns/name" or "claim ns/name" */
} job;

static const char *obj_name(const dra_claim *c, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", c->ns ? c->ns : "default", c->name);
    return buf;
}

static json_t *claim_json(const dra_claim *c, const dra_alloc_result *r) {
    json_t *o;
    if (c->raw_json && !c->from_template) {
        o = json_loads(c->raw_json, 0, NULL);
    } else {
        o = dra_claim_json_new(c, NULL);
        json_t *spec = c->raw_json ? json_loads(c->raw_json, 0, NULL) : NULL;
        json_object_set_new(o, "spec", spec ? spec : json_object());
    }
    dra_claim_json_set_allocation(o, r);
    return o;
}

static bool claim_listed(const job *jobs, size_t njobs, const dra_claim *c) {
    for (size_t i = 0; i < njobs; i++)
        for (size_t j = 0; j < jobs[i].n; j++)
            if (jobs[i].claims[j] == c) return true;
    return false;
}

/* The start both modes share: the feature gates (defaults, then --feature-gates),
 * then every input path loaded into one frozen world. NULL, with the reason on
 * stderr, when either fails. */
static dra_world *load_world(char **paths, int npaths, const char *gates, dra_features *f) {
    dra_features_default(f);
    err e;
    err_clear(&e);
    if (gates && !dra_features_parse(f, gates, &e)) {
        fprintf(stderr, "dralloc allocate: --feature-gates: %s\n", e.msg);
        return NULL;
    }
    dra_world *w = dra_world_new(true);
    for (int i = 0; i < npaths; i++)
        if (!dra_world_load_path(w, paths[i], &e)) {
            char buf[2048];
            fprintf(stderr, "dralloc allocate: %s\n", err_format(&e, buf, sizeof buf));
            dra_world_free(w);
            return NULL;
        }
    dra_world_freeze(w);
    return w;
}

static int run_files(char **paths, int npaths, const char *node_name, const char *claim_ref, bool yaml,
                     const char *gates) {
    dra_features f;
    dra_world *w = load_world(paths, npaths, gates, &f);
    if (!w) return 2;
    err e;
    err_clear(&e);
    char buf[2048];
    const dra_node *node = dra_world_find_node(w, node_name);
    if (!node) {
        /* Without the Node object its labels are unknown: node selectors on labels
         * will not match. Say so, since the result depends on it. */
        fprintf(stderr, "dralloc allocate: note: Node %s is not in the input; assuming it has no labels\n", node_name);
        node = dra_world_add_node(w, node_name, NULL, 0);
    }

    dra_allocated *st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), f.consumable_capacity);

    /* What to allocate. */
    size_t cap = dra_world_nclaims(w) + dra_world_npods(w) + dra_world_ntemplates(w) + 8;
    job *jobs = xcalloc(cap, sizeof *jobs);
    size_t njobs = 0;
    int rc = 0;
    {
        for (size_t p = 0; p < dra_world_npods(w); p++) {
            const dra_pod *pod = dra_world_pod(w, p);
            if (pod->node_name && *pod->node_name && strcmp(pod->node_name, node_name)) continue;
            job *j = &jobs[njobs];
            for (uint32_t k = 0; k < pod->nclaims && j->n < ARRAY_SIZE(j->claims); k++) {
                const dra_pod_claim *pc = &pod->claims[k];
                const dra_claim *c = dra_extres_pod_claim(w, pod, pc);
                if (!c) {
                    fprintf(stderr, "dralloc allocate: pod %s/%s: claim %s not found in the input\n",
                            pod->ns ? pod->ns : "default", pod->name, pc->name ? pc->name : "?");
                    continue;
                }
                /* a claim shared by several pods is allocated once, with the first pod */
                if (!c->allocated && !claim_listed(jobs, njobs + 1, c)) j->claims[j->n++] = c;
            }
            if (j->n) njobs++;
        }
        for (size_t i = 0; i < dra_world_nclaims(w); i++) {
            const dra_claim *c = dra_world_claim(w, i);
            if (c->allocated || claim_listed(jobs, njobs, c)) continue;
            jobs[njobs].claims[jobs[njobs].n++] = c;
            njobs++;
        }
        /* Templates no pod uses: try one claim from each, so a template file alone shows something. */
        if (!dra_world_npods(w)) {
            for (size_t i = 0; i < dra_world_ntemplates(w) && njobs < cap; i++) {
                const dra_claim_template *t = dra_world_template(w, i);
                char nm[512];
                snprintf(nm, sizeof nm, "%s-claim", t->name);
                jobs[njobs].claims[jobs[njobs].n++] = dra_world_claim_from_template(w, t, t->ns, nm);
                njobs++;
            }
        }
    }
    if (claim_ref) {
        /* Only the named claim: a pending claim (also one generated for a pod from a
         * template), or an allocated one, which is printed as it is. */
        const char *sl = strchr(claim_ref, '/');
        char ns[256] = "default";
        const char *name = claim_ref;
        if (sl) {
            snprintf(ns, sizeof ns, "%.*s", (int)(sl - claim_ref), claim_ref);
            name = sl + 1;
        }
        const dra_claim *found = NULL;
        for (size_t i = 0; i < njobs && !found; i++)
            for (size_t k = 0; k < jobs[i].n; k++) {
                const dra_claim *c = jobs[i].claims[k];
                if (!strcmp(c->name, name) && !strcmp(c->ns && *c->ns ? c->ns : "default", ns)) found = c;
            }
        if (!found) {
            const dra_claim *c = dra_world_find_claim(w, ns, name);
            if (!c) {
                fprintf(stderr, "dralloc allocate: ResourceClaim %s/%s not found in the input\n", ns, name);
                rc = 2;
                goto out;
            }
            fprintf(stderr, "ResourceClaim %s/%s is already allocated; printed as it is\n", ns, name);
            json_t *o = json_loads(c->raw_json, 0, NULL);
            if (o) {
                if (yaml) yaml_node(o, 0, false);
                else {
                    char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                    printf("%s\n", t);
                    free(t);
                }
                json_decref(o);
            }
            goto out;
        }
        memset(jobs, 0, sizeof *jobs);
        jobs[0].claims[0] = found;
        jobs[0].n = 1;
        njobs = 1;
    }
    if (!njobs) {
        fprintf(stderr, "dralloc allocate: nothing to allocate (no pending ResourceClaims, pods or templates)\n");
        goto out;
    }

    dra_nodeview *v = dra_nodeview_new(w, node, &f, &e);
    if (!v) {
        fprintf(stderr, "dralloc allocate: %s\n", e.msg);
        rc = 1;
        goto out;
    }
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    json_t *items = json_array();
    for (size_t i = 0; i < njobs; i++) {
        dra_alloc_result *res;
        err ae;
        err_clear(&ae);
        dra_alloc_status s = dra_allocate(x, v, st, jobs[i].claims, jobs[i].n, &res, &ae);
        if (s == DRA_ALLOC_OK) {
            for (size_t k = 0; k < jobs[i].n; k++) {
                json_array_append_new(items, claim_json(jobs[i].claims[k], &res[k]));
                dra_allocated_add_result(st, &res[k], f.consumable_capacity);
            }
            continue;
        }
        rc = 1;
        char why[4096];
        why[0] = '\0';
        if (s == DRA_ALLOC_UNSAT) dra_alloc_explain(x, why, sizeof why);
        for (size_t k = 0; k < jobs[i].n; k++) {
            obj_name(jobs[i].claims[k], buf, sizeof buf);
            if (s == DRA_ALLOC_UNSAT)
                fprintf(stderr,
                        "ResourceClaim %s: cannot be allocated on node %s: no combination of available devices "
                        "satisfies the requests, selectors and constraints%s\n",
                        buf, node_name, jobs[i].n > 1 ? " (allocated together with the pod's other claims)" : "");
        if (why[0]) fputs(why, stderr);
            else
                fprintf(stderr, "ResourceClaim %s: cannot be allocated on node %s: %s\n", buf, node_name, ae.msg);
        }
    }
    json_t *list = json_object();
    json_object_set_new(list, "apiVersion", json_string("v1"));
    json_object_set_new(list, "kind", json_string("List"));
    json_object_set_new(list, "items", items);
    if (json_array_size(items)) {
        if (yaml) {
            yaml_node(list, 0, false);
        } else {
            char *s = json_dumps(list, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            printf("%s\n", s);
            free(s);
        }
    }
    json_decref(list);
    dra_alloc_ctx_free(x);
    dra_nodeview_free(v);
out:
    free(jobs);
    dra_allocated_free(st);
    dra_world_free(w);
    return rc;
}

/* ---- --pod: one pod on one node (engine/extres.h) --------------------------------------- */

static void print_doc(const json_t *o, bool yaml) {
    if (yaml) {
        yaml_node(o, 0, false);
    } else {
        char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("%s\n", t);
        free(t);
    }
}

static int run_pod(char **paths, int npaths, const char *node_name, const char *pod_ref, bool yaml, const char *gates) {
    dra_features f;
    dra_world *w = load_world(paths, npaths, gates, &f);
    if (!w) return 2;
    char ns[256] = "default";
    const char *name = pod_ref, *sl = strchr(pod_ref, '/');
    if (sl) {
        snprintf(ns, sizeof ns, "%.*s", (int)(sl - pod_ref), pod_ref);
        name = sl + 1;
    }
    const dra_pod *pod = dra_extres_find_pod(w, ns, name);
    if (!pod) {
        fprintf(stderr, "dralloc allocate: Pod %s/%s not found in the input\n", ns, name);
        dra_world_free(w);
        return 2;
    }
    const dra_node *node = dra_world_find_node(w, node_name);
    if (!node) node = dra_world_add_node(w, node_name, NULL, 0);
    dra_allocated *st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), f.consumable_capacity);
    json_t *out = dra_pod_allocate(w, pod, node, &f, st);
    int rc = 0;
    const json_t *v;
    size_t i;
    if ((v = json_object_get(out, "error"))) {
        fprintf(stderr, "Pod %s/%s: cannot be scheduled: %s\n", ns, name, json_string_value(v));
        rc = 1;
    } else if (json_object_get(out, "unsatisfiable")) {
        fprintf(stderr, "Pod %s/%s: does not fit node %s: %s\n", ns, name, node_name,
                json_string_value(json_object_get(out, "reason")));
        rc = 1;
    } else {
        json_array_foreach(json_object_get(out, "reused"), i, v)
            fprintf(stderr, "Pod %s/%s: ResourceClaim %s is already allocated; reused\n", ns, name, json_string_value(v));
        const char *res;
        json_object_foreach(json_object_get(out, "devicePlugin"), res, v)
            fprintf(stderr, "Pod %s/%s: fits node %s by device plugin: %s %lld requested, %lld allocatable, %lld in use\n", ns,
                    name, node_name, res, (long long)json_integer_value(json_object_get(v, "requested")),
                    (long long)json_integer_value(json_object_get(v, "allocatable")),
                    (long long)json_integer_value(json_object_get(v, "inUse")));
        const json_t *claims = json_object_get(out, "claims");
        if (json_array_size(claims)) {
            json_t *list = json_object();
            json_object_set_new(list, "apiVersion", json_string("v1"));
            json_object_set_new(list, "kind", json_string("List"));
            json_object_set(list, "items", (json_t *)claims);
            print_doc(list, yaml);
            json_decref(list);
        } else {
            fprintf(stderr, "Pod %s/%s: fits node %s; no ResourceClaim to allocate\n", ns, name, node_name);
        }
    }
    json_decref(out);
    dra_allocated_free(st);
    dra_world_free(w);
    return rc;
}

int cmd_allocate(int argc, char **argv) {
    const char *fixture = NULL, *node = NULL, *claim = NULL, *gates = NULL, *pod = NULL;
    bool yaml = true;
    char **files = xcalloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0;
    int rc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            free(files);
            return usage(stdout);
        } else if (!strcmp(a, "--fixture") && val) {
            fixture = val, i++;
        } else if ((!strcmp(a, "-f") || !strcmp(a, "--filename")) && val) {
            files[nfiles++] = argv[++i];
            /* -f A B C: following non-option words are files too */
            while (i + 1 < argc && argv[i + 1][0] != '-') files[nfiles++] = argv[++i];
        } else if (!strcmp(a, "--node") && val) {
            node = val, i++;
        } else if (!strcmp(a, "--pod") && val) {
            pod = val, i++;
        } else if (!strcmp(a, "--claim") && val) {
            claim = val, i++;
        } else if (!strcmp(a, "-o") && val) {
            if (!strcmp(val, "json")) yaml = false;
            else if (!strcmp(val, "yaml")) yaml = true;
            else {
                fprintf(stderr, "dralloc allocate: -o %s: want yaml or json\n", val);
                free(files);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--feature-gates") && val) {
            gates = val, i++;
        } else if (!strncmp(a, "--feature-gates=", 16)) {
            gates = a + 16;
        } else {
            fprintf(stderr, "dralloc allocate: unexpected argument %s\n", a);
            free(files);
            return usage(stderr);
        }
    }
    if (fixture) rc = run_fixture(fixture);
    else if (nfiles && node && pod) rc = run_pod(files, nfiles, node, pod, yaml, gates);
    else if (nfiles && node) rc = run_files(files, nfiles, node, claim, yaml, gates);
    else rc = usage(stderr);
    free(files);
    return rc;
}
