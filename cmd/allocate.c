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
 *       everything one pod needs on the node (engine/podplan.h): its claims (by name,
 *       from templates, or its PodGroup's), the implicit extended-resource claim, or
 *       the device-plugin count; prints the claims it allocates and the allocated
 *       ones it shares, notes reused claims and device-plugin fits on stderr; exit 1
 *       when the pod does not fit.
 *
 * Claims print as `kubectl get resourceclaim -o yaml|json` shows them once the pod is
 * bound (engine/result_encode.c): a template's claim named by GenerateName
 * "<pod>-<entry>-" and 5 random characters (from --seed when given), owned by the pod,
 * with the resource.kubernetes.io/pod-claim-name annotation; every claim of a pod
 * with the delete-protection finalizer (when allocated now), the pod appended to
 * status.reservedFor, allocationTimestamp when both binding gates are on (the clock,
 * or SOURCE_DATE_EPOCH); the pod's status.resourceClaimStatuses with --pod; Go's
 * omitempty and API defaults; keys sorted as kubectl's printers sort them.
 *
 * Flags follow kubectl's habits: `--node=X` as well as `--node X`, `-f -` for stdin,
 * `-n NS` (the namespace of --claim/--pod names without one, and the only namespace
 * whose pending claims and pods are allocated), `-o yaml|json`. `--strict` makes
 * kubectl's warnings (unknown fields, documents without kind) errors; `--timeout
 * 2s` bounds each allocation (Go duration syntax); `--device-choice best-fit` picks,
 * among the allocations that fit, the least fragmenting one (engine.h). Exit codes:
 * 0 allocated, 1 not satisfiable (or timed out), 2 usage or input error. */
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/jsonl.h"
#include "cmd/yaml_style.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"

/* The options as given, and what they come to once checked (alloc_check). */
typedef struct alloc_args {
    const char *fixture, *node, *claim, *gates, *pod, *ns, *output, *timeout, *seed_text, *choice;
    cmd_list files;
    bool strict;
    bool yaml;                  /* -o yaml (the default) */
    int64_t timeout_ns;         /* -1: kube-scheduler's default (filter_timeout_default) */
    uint64_t seed;
    const uint64_t *seedp;      /* &seed with --seed, else NULL */
    dra_device_choice dc;
    const dra_input *input;
    char now[32];               /* allocationTimestamp's clock */
} alloc_args;

static void usage(FILE *f);

static const cmd_flag alloc_flags[] = {
    {.name = "--fixture", .kind = CMD_STRING, .off = offsetof(alloc_args, fixture)},
    {.name = "--filename", .shorthand = "-f", .kind = CMD_PATHS, .off = offsetof(alloc_args, files),
     .label = "-f, --filename F", .help = "YAML/JSON file or directory; repeatable; - reads stdin"},
    {.name = "--node", .kind = CMD_STRING, .off = offsetof(alloc_args, node), .label = "--node N",
     .help = "the node to allocate on (required)"},
    {.name = "--pod", .kind = CMD_STRING, .off = offsetof(alloc_args, pod)},
    {.name = "--claim", .kind = CMD_STRING, .off = offsetof(alloc_args, claim)},
    {.name = "--namespace", .shorthand = "-n", .kind = CMD_STRING, .off = offsetof(alloc_args, ns),
     .label = "-n, --namespace NS", .help = "namespace of --claim/--pod names without one; only claims and\n"
                                             "pods of NS are allocated"},
    {.name = "--output", .shorthand = "-o", .kind = CMD_STRING, .off = offsetof(alloc_args, output),
     .label = "-o, --output FMT", .help = "yaml (default) or json"},
    {.name = "--feature-gates", .kind = CMD_STRING, .off = offsetof(alloc_args, gates)},
    {.name = "--timeout", .kind = CMD_STRING, .off = offsetof(alloc_args, timeout), .label = "--timeout D",
     .help = "give up each allocation after D (Go duration: 500ms, 2s, 1m30s; 0: never);\n"
             "default 10s, kube-scheduler's filterTimeout (none with\n"
             "--feature-gates DRASchedulerFilterTimeout=false)"},
    {.name = "--strict", .kind = CMD_BOOL, .off = offsetof(alloc_args, strict),
     .help = "unknown fields and documents without kind are errors, not warnings"},
    {.name = "--seed", .kind = CMD_STRING, .off = offsetof(alloc_args, seed_text)},
    {.name = "--device-choice", .kind = CMD_STRING, .off = offsetof(alloc_args, choice), .label = "--device-choice C",
     .help = "first-fit (default: the devices kube-scheduler picks) or best-fit (of the\n"
             "allocations that fit, the one leaving the node least fragmented: whole\n"
             "GPUs / counter sets, pcieRoot and NUMA groups kept free; also with\n"
             "--fixture and --pod)"},
    {.kind = CMD_SECTION, .help = "  Flags take their value as --flag VALUE or --flag=VALUE.\n"},
};

static const cmd_flags alloc_spec = {
    .prog = "dralloc allocate",
    .flags = alloc_flags,
    .nflags = sizeof alloc_flags / sizeof alloc_flags[0],
    .unknown = "dralloc allocate: unknown flag or argument: %s\n",
    .missing = "dralloc allocate: flag needs an argument: %s\n",
    .usage = usage,
    .help_width = 18,
};

static void usage(FILE *f) {
    fprintf(f,
            "usage: dralloc allocate --fixture CASE.json   (-: JSON Lines of cases on stdin, an answer line each)\n"
            "       dralloc allocate -f FILE_OR_DIR... --node NAME [--claim [NS/]NAME] [-n NS] [-o yaml|json]\n"
            "                        [--feature-gates DRAPrioritizedList=true,...] [--timeout 2s] [--strict]\n"
            "                        [--seed N]   (shareIDs, generated names and UIDs from N instead of\n"
            "                        random: reproducible output; SOURCE_DATE_EPOCH fixes allocationTimestamp)\n"
            "                        [--device-choice first-fit|best-fit]\n"
            "       dralloc allocate -f FILE_OR_DIR... --node NAME --pod [NS/]NAME [-n NS] [-o yaml|json]\n"
            "                        [--feature-gates ...]   (the pod's claims, PodGroup claims and\n"
            "                        extended resources on the node)\n"
            "\n");
    cmd_flags_help(f, &alloc_spec);
    fprintf(f, "\n"
               "exit status: 0 allocated (or nothing to allocate), 1 a claim or pod cannot be\n"
               "allocated on the node (unsatisfiable, timed out), 2 usage or input error\n");
}

/* Go's time.ParseDuration: a sequence of decimal numbers with units ns, us (µs),
 * ms, s, m, h, optionally signed; "0" alone is zero. Messages as Go's. */
static bool parse_go_duration(const char *s, int64_t *ns, char *msg, size_t n) {
    const char *orig = s;
    bool neg = false;
    if (*s == '-' || *s == '+') neg = *s++ == '-';
    if (!strcmp(s, "0")) return *ns = 0, true;
    if (!*s) return snprintf(msg, n, "time: invalid duration \"%s\"", orig), false;
    double total = 0;
    while (*s) {
        if (!((*s >= '0' && *s <= '9') || *s == '.')) return snprintf(msg, n, "time: invalid duration \"%s\"", orig), false;
        char *end;
        double v = strtod(s, &end);
        if (end == s) return snprintf(msg, n, "time: invalid duration \"%s\"", orig), false;
        s = end;
        const char *u = s;
        while (*s && !((*s >= '0' && *s <= '9') || *s == '.')) s++;
        size_t ul = (size_t)(s - u);
        static const struct { const char *name; double ns; } units[] = {
            {"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
        if (!ul) return snprintf(msg, n, "time: missing unit in duration \"%s\"", orig), false;
        double mul = 0;
        for (size_t i = 0; i < ARRAY_SIZE(units); i++)
            if (strlen(units[i].name) == ul && !strncmp(units[i].name, u, ul)) mul = units[i].ns;
        if (!mul) return snprintf(msg, n, "time: unknown unit \"%.*s\" in duration \"%s\"", (int)ul, u, orig), false;
        total += v * mul;
    }
    if (total > 9.2e18) return snprintf(msg, n, "time: invalid duration \"%s\"", orig), false;
    *ns = (int64_t)(neg ? -total : total);
    return true;
}

/* --fixture -: JSON Lines of cases on stdin, one answer line each (a line that is not a
 * case gets {"caseError": "..."}; cmd/jsonl.h). */
static json_t *fixture_line(json_t *c, const char *where, char *msg, size_t nmsg, void *ud) {
    err e;
    err_clear(&e);
    json_t *out = dra_fixture_run_choice(c, *(const dra_device_choice *)ud, &e);
    char buf[1024];
    if (!out) snprintf(msg, nmsg, "%s: %s", where, err_format(&e, buf, sizeof buf));
    return out;
}

static int run_fixture(const char *path, dra_device_choice choice) {
    if (!strcmp(path, "-")) return cmd_jsonl_answer(fixture_line, &choice, "caseError", NULL);
    json_error_t je;
    json_t *c = json_load_file(path, 0, &je);
    if (!c) {
        fprintf(stderr, "dralloc allocate: %s: %s (line %d)\n", path, je.text, je.line);
        return 2;
    }
    err e;
    err_clear(&e);
    json_t *out = dra_fixture_run_choice(c, choice, &e);
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

/* Inputs read into memory files are loaded as /proc/self/fd/N; messages name them
 * as the user did ("<stdin>", "/dev/stdin"). */
static struct {
    const char *load, *shown;
} aliases[16];
static size_t naliases;

static void alias_add(const char *load, const char *shown) {
    if (naliases < ARRAY_SIZE(aliases)) aliases[naliases].load = load, aliases[naliases++].shown = shown;
}

/* msg with every alias replaced, into buf. */
static const char *unalias(const char *msg, char *buf, size_t n) {
    size_t o = 0;
    while (*msg && o + 1 < n) {
        size_t k = 0;
        for (; k < naliases; k++)
            if (!strncmp(msg, aliases[k].load, strlen(aliases[k].load))) break;
        if (k < naliases) {
            o += (size_t)snprintf(buf + o, n - o, "%s", aliases[k].shown);
            if (o >= n) o = n - 1;
            msg += strlen(aliases[k].load);
        } else {
            buf[o++] = *msg++;
        }
    }
    buf[o] = '\0';
    return buf;
}


/* ---- YAML output ----------------------------------------------------------------- */

/* A scalar; a string as kubectl's printer writes it (cmd/yaml_style.c: plain unless
 * plain would read back as another type or be invalid). key: a mapping key; indent:
 * the column of the key or the "- " the value belongs to (a literal block's lines go
 * two deeper). True when it ended the line (a literal block). */
static bool yaml_scalar(const json_t *v, int indent, bool key) {
    switch (json_typeof(v)) {
    case JSON_STRING: return dra__yaml_string(stdout, json_string_value(v), indent, key);
    case JSON_INTEGER: printf("%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: printf("%.17g", json_real_value(v)); break;
    case JSON_TRUE: fputs("true", stdout); break;
    case JSON_FALSE: fputs("false", stdout); break;
    default: fputs("null", stdout);
    }
    return false;
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
        if (!yaml_scalar(v, indent, false)) printf("\n");
    }
}

/* The next code point of UTF-8 text (valid: jansson checks it), advancing *p. */
static uint32_t utf8_next(const unsigned char **p) {
    const unsigned char *s = *p;
    uint32_t c = *s++;
    int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (more) c &= 0x3f >> more;
    while (more-- && (*s & 0xc0) == 0x80) c = (c << 6) | (*s++ & 0x3f);
    *p = s;
    return c;
}

static bool rune_digit(uint32_t c) { return c >= '0' && c <= '9'; }

/* unicode.IsLetter, for the ASCII that names hold; beyond ASCII every code point
 * outside Latin-1's symbols and the general punctuation block counts as a letter. */
static bool rune_letter(uint32_t c) {
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return c >= 0xc0 && c != 0xd7 && c != 0xf7 && !(c >= 0x2000 && c <= 0x206f);
}

/* go-yaml v2's map key order (sorter.go keyList.Less), which kubectl's YAML printer
 * applies to every object: code points compared, but digit runs as numbers, and at
 * the first difference a non-letter before a letter unless a digit came before. */
static bool yaml_key_less(const char *a, const char *b) {
    uint32_t ar[256], br[256];
    size_t na = 0, nb = 0;
    for (const unsigned char *p = (const unsigned char *)a; *p && na < ARRAY_SIZE(ar);) ar[na++] = utf8_next(&p);
    for (const unsigned char *p = (const unsigned char *)b; *p && nb < ARRAY_SIZE(br);) br[nb++] = utf8_next(&p);
    bool digits = false;
    for (size_t i = 0; i < na && i < nb; i++) {
        if (ar[i] == br[i]) {
            digits = rune_digit(ar[i]);
            continue;
        }
        bool al = rune_letter(ar[i]), bl = rune_letter(br[i]);
        if (al && bl) return ar[i] < br[i];
        if (al || bl) return digits ? al : bl;
        int64_t an = 0, bn = 0;
        if (ar[i] == '0' || br[i] == '0')
            for (size_t j = i; j-- > 0 && rune_digit(ar[j]);)
                if (ar[j] != '0') {
                    an = bn = 1;
                    break;
                }
        size_t ai = i, bi = i;
        for (; ai < na && rune_digit(ar[ai]); ai++) an = an * 10 + (int64_t)(ar[ai] - '0');
        for (; bi < nb && rune_digit(br[bi]); bi++) bn = bn * 10 + (int64_t)(br[bi] - '0');
        if (an != bn) return an < bn;
        if (ai != bi) return ai < bi;
        return ar[i] < br[i];
    }
    return na < nb;
}

static int cmp_yaml_keys(const void *x, const void *y) {
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    return yaml_key_less(a, b) ? -1 : yaml_key_less(b, a) ? 1 : strcmp(a, b);
}

/* in_seq: the first line is already indented by the "- " of a sequence item. */
static void yaml_node(const json_t *v, int indent, bool in_seq) {
    if (json_is_object(v)) {
        size_t n = json_object_size(v), m = 0;
        const char **keys = xmalloc((n ? n : 1) * sizeof *keys);
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) keys[m++] = k;
        qsort(keys, m, sizeof *keys, cmp_yaml_keys);
        for (size_t i = 0; i < m; i++) {
            if (!(in_seq && i == 0)) printf("%*s", indent, "");
            json_t *ks = json_string(keys[i]);
            yaml_scalar(ks, indent, true);
            json_decref(ks);
            printf(":");
            yaml_value_after_key(json_object_get(v, keys[i]), indent);
        }
        free(keys);
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *x = json_array_get(v, i);
            printf("%*s- ", indent, "");
            if (json_is_object(x) && json_object_size(x)) yaml_node(x, indent + 2, true);
            else if (json_is_array(x) && json_array_size(x)) {
                printf("\n");
                yaml_node(x, indent + 2, false);
            } else if (is_empty_coll(x)) {
                printf("%s\n", json_is_object(x) ? "{}" : "[]");
            } else if (!yaml_scalar(x, indent, false)) {
                printf("\n");
            }
        }
    } else {
        printf("%*s", indent, "");
        if (!yaml_scalar(v, indent, false)) printf("\n");
    }
}

/* One document: YAML as kubectl's printer writes it, JSON as `kubectl get -o json`
 * does (four-space indent, keys sorted: kubectl prints unstructured objects). */
static void print_doc(const json_t *o, bool yaml) {
    if (yaml) {
        yaml_node(o, 0, false);
    } else {
        char *t = json_dumps(o, JSON_INDENT(4) | JSON_SORT_KEYS);
        printf("%s\n", t);
        free(t);
    }
}

/* kubectl prints a namespaced object's namespace always, "default" included. */
static void ensure_namespace(json_t *claim) {
    json_t *m = json_object_get(claim, "metadata");
    if (!json_is_object(m)) json_object_set_new(claim, "metadata", m = json_object());
    const json_t *ns = json_object_get(m, "namespace");
    if (!json_is_string(ns) || !*json_string_value(ns)) json_object_set_new(m, "namespace", json_string("default"));
}

/* `kubectl get` of several objects: a v1 List; ResourceClaims as the API server
 * returns them (namespace filled in, Go's omitempty: engine/result_encode.c). */
static void print_list(json_t *items, bool yaml) {
    size_t i;
    json_t *o;
    json_array_foreach(items, i, o) if (!strcmp(json_string_value(json_object_get(o, "kind")) ?: "", "ResourceClaim")) {
        ensure_namespace(o);
        dra_claim_json_normalize(o);
    }
    json_t *list = json_pack("{s:s, s:O, s:s, s:{s:s}}", "apiVersion", "v1", "items", items, "kind", "List", "metadata",
                             "resourceVersion", "");
    print_doc(list, yaml);
    json_decref(list);
}

/* ---- file mode ----------------------------------------------------------------------- */

/* The claims allocated together: one pod's (any number), or one claim. */
typedef struct job {
    const dra_claim **claims;
    const char **entries;    /* per claim: the pod's claim entry it stands for (pod jobs) */
    json_t **objs;           /* per claim: its printed object (the run's allocated claims) */
    size_t n, cap;
    const dra_pod *pod;      /* whose claims these are; NULL for a claim of no pod */
} job;

static void job_add_entry(job *j, const dra_claim *c, const char *entry, json_t *obj) {
    if (j->n == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 4;
        j->claims = xrealloc(j->claims, j->cap * sizeof *j->claims);
        j->entries = xrealloc(j->entries, j->cap * sizeof *j->entries);
        j->objs = xrealloc(j->objs, j->cap * sizeof *j->objs);
    }
    j->entries[j->n] = entry;
    j->objs[j->n] = obj;
    j->claims[j->n++] = c;
}

static void job_add(job *j, const dra_claim *c) {
    job_add_entry(j, c, NULL, NULL);
}

static void job_free(job *j) {
    free(j->claims);
    free(j->entries);
    free(j->objs);
}

static bool in_namespace(const char *want, const char *ns) {
    return !want || !strcmp(want, dra_ns(ns));
}

static const char *obj_name(const dra_claim *c, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", dra_ns(c->ns), c->name);
    return buf;
}

static json_t *claim_json(const dra_claim *c, const dra_alloc_result *r) {
    json_t *o;
    if (c->raw_json && !c->from_template) {
        o = dra_claim_object(c);
    } else {
        o = dra_claim_json_new(c, NULL);
        json_t *spec = c->raw_json ? json_loads(c->raw_json, 0, NULL) : NULL;
        json_object_set_new(o, "spec", spec ? spec : json_object());
    }
    dra_claim_json_set_allocation(o, r);
    return o;
}

/* The template of the pod's claim entry (NULL when it names none or it is missing). */
static const dra_claim_template *entry_template(const dra_world *w, const dra_pod *pod, const char *entry) {
    for (uint32_t k = 0; k < pod->nclaims; k++)
        if (pod->claims[k].name && !strcmp(pod->claims[k].name, entry) && pod->claims[k].template_name)
            return dra_world_find_template(w, pod->ns, pod->claims[k].template_name);
    return NULL;
}

static bool claim_listed(const job *jobs, size_t njobs, const dra_claim *c) {
    for (size_t i = 0; i < njobs; i++)
        for (size_t j = 0; j < jobs[i].n; j++)
            if (jobs[i].claims[j] == c) return true;
    return false;
}

/* The start both modes share: the feature gates (defaults, then --feature-gates),
 * then every input path loaded into one store (one object per kind/namespace/name,
 * the claims' text kept for printing them back). False, with the reason on stderr,
 * when either fails. */
static bool load_world(char **paths, int npaths, const char *gates, const dra_input *in, dra_features *f,
                       dra_oneshot *l) {
    dra_features_default(f);
    err e;
    err_clear(&e);
    if (gates && !dra_features_parse(f, gates, &e)) {
        fprintf(stderr, "dralloc allocate: --feature-gates: %s\n", e.msg);
        return false;
    }
    dra_oneshot_init(l, f, &(dra_store_opts){.keep_text = true, .one_shot = true, .input = in});
    if (!dra_store_load_paths(l->st, (const char *const *)paths, (size_t)npaths, &e)) {
        char buf[2048], shown[4096];
        fprintf(stderr, "dralloc allocate: %s\n", unalias(err_format(&e, buf, sizeof buf), shown, sizeof shown));
        dra_oneshot_free(l);
        return false;
    }
    dra_oneshot_publish(l);
    return true;
}

/* Without --timeout, kube-scheduler's: filterTimeout's 10 s default with the
 * DRASchedulerFilterTimeout gate on (its default), no limit with it off. */
static int64_t filter_timeout_default(const dra_features *f) { return f->filter_timeout ? DRA_FILTER_TIMEOUT_DEFAULT_NS : 0; }

/* What to allocate, in jobs[] (cap of them; returns how many): each pod's pending claims
 * together (pods bound elsewhere and of other namespaces left out), then every other
 * pending claim alone, then, when there is no pod, one claim of each template. */
static size_t collect_jobs(const dra_world *w, arena *mem, const char *node_name, const char *only_ns, job *jobs,
                           size_t cap) {
    size_t njobs = 0;
    for (size_t p = 0; p < dra_world_npods(w); p++) {
        const dra_pod *pod = dra_world_pod(w, p);
        if (pod->node_name && *pod->node_name && strcmp(pod->node_name, node_name)) continue;
        if (!in_namespace(only_ns, pod->ns)) continue;
        job *j = &jobs[njobs];
        for (uint32_t k = 0; k < pod->nclaims; k++) {
            const dra_pod_claim *pc = &pod->claims[k];
            const dra_claim *c = dra_extres_pod_claim(w, mem, pod, pc);
            if (!c) {
                fprintf(stderr, "dralloc allocate: pod %s/%s: claim %s: %s (in the input)\n", dra_ns(pod->ns), pod->name,
                        pc->name ? pc->name : "?", dra_extres_pod_claim_missing(w, mem, pod, pc));
                continue;
            }
            /* a claim shared by several pods is in each pod's job and allocated once,
             * with the first pod that fits (kube-scheduler schedules pods one by
             * one: a pod that fails leaves the claim to the next) */
            if (!c->allocated && !claim_listed(j, 1, c)) job_add_entry(j, c, pc->name, NULL);
        }
        if (j->n) j->pod = pod, njobs++;
    }
    for (size_t i = 0; i < dra_world_nclaims(w); i++) {
        const dra_claim *c = dra_world_claim(w, i);
        if (c->allocated || !in_namespace(only_ns, c->ns) || claim_listed(jobs, njobs, c)) continue;
        job_add(&jobs[njobs], c);
        njobs++;
    }
    /* Templates no pod uses: try one claim from each, so a template file alone shows something. */
    if (!dra_world_npods(w)) {
        for (size_t i = 0; i < dra_world_ntemplates(w) && njobs < cap; i++) {
            const dra_claim_template *t = dra_world_template(w, i);
            char nm[512];
            snprintf(nm, sizeof nm, "%s-claim", t->name);
            if (!in_namespace(only_ns, t->ns)) continue;
            job_add(&jobs[njobs], dra_claim_from_template(mem, t, t->ns, nm));
            njobs++;
        }
    }
    return njobs;
}

/* --claim: only the named claim, a pending one (also one generated for a pod from a
 * template) left as the one job (returns 1), or an allocated one, printed as it is
 * (returns 0; *rc 2 when there is none by the name). */
static size_t pick_claim(const dra_world *w, const alloc_args *a, job *jobs, size_t njobs, int *rc) {
    const char *claim_ref = a->claim, *sl = strchr(claim_ref, '/');
    char ns[256];
    snprintf(ns, sizeof ns, "%s", a->ns ? a->ns : "default");
    const char *name = claim_ref;
    if (sl) {
        snprintf(ns, sizeof ns, "%.*s", (int)(sl - claim_ref), claim_ref);
        name = sl + 1;
    }
    const dra_claim *found = NULL;
    const dra_pod *found_pod = NULL;
    const char *found_entry = NULL;
    for (size_t i = 0; i < njobs && !found; i++)
        for (size_t k = 0; k < jobs[i].n && !found; k++) {
            const dra_claim *c = jobs[i].claims[k];
            if (!strcmp(c->name, name) && !strcmp(dra_ns(c->ns), ns))
                found = c, found_pod = jobs[i].pod, found_entry = jobs[i].entries[k];
        }
    if (!found) {
        const dra_claim *c = dra_world_find_claim(w, ns, name);
        if (!c) {
            fprintf(stderr, "dralloc allocate: ResourceClaim %s/%s not found in the input\n", ns, name);
            *rc = 2;
            return 0;
        }
        fprintf(stderr, "ResourceClaim %s/%s is already allocated; printed as it is\n", ns, name);
        json_t *o = dra_claim_object(c);
        if (o) {
            ensure_namespace(o);
            dra_claim_json_normalize(o);
            print_doc(o, a->yaml);
            json_decref(o);
        }
        return 0;
    }
    for (size_t i = 1; i < njobs; i++) jobs[i].n = 0;
    jobs[0].n = 0;
    job_add_entry(&jobs[0], found, found_entry, NULL);
    jobs[0].pod = found_pod;
    return 1;
}

/* Why job j's claims cannot be allocated on the node, one message a claim. */
static void report_unallocated(dra_alloc_ctx *x, const job *j, dra_alloc_status s, const err *ae, const char *node_name) {
    char why[4096], buf[2048];
    why[0] = '\0';
    if (s == DRA_ALLOC_UNSAT || s == DRA_ALLOC_NODE_ERROR) dra_alloc_explain(x, why, sizeof why);
    for (size_t k = 0; k < j->n; k++) {
        obj_name(j->claims[k], buf, sizeof buf);
        if (s == DRA_ALLOC_UNSAT) {
            fprintf(stderr,
                    "ResourceClaim %s: cannot be allocated on node %s: no combination of available devices "
                    "satisfies the requests, selectors and constraints%s\n",
                    buf, node_name, j->n > 1 ? " (allocated together with the pod's other claims)" : "");
        } else {
            /* DRA_ALLOC_TIMEOUT: ae says "timed out trying to allocate devices"; the
             * node error is explained (which pool is invalid, and why) */
            fprintf(stderr, "ResourceClaim %s: cannot be allocated on node %s: %s\n", buf, node_name, ae->msg);
        }
        if (why[0]) fputs(why, stderr);
    }
}

/* One run of the jobs on the node: what allocates is printed (the claims as the control
 * plane leaves them once their pod is bound) and counted in st for the next jobs. */
typedef struct alloc_run {
    const dra_world *w;
    const dra_features *f;
    dra_nodeview *v;
    dra_allocated *st;
    dra_alloc_ctx *x;
    const char *now;          /* allocationTimestamp, NULL: none */
    int64_t timeout_ns;
    json_t *items, *names;    /* the claims printed; the claim names generated in this run */
    job done;                 /* claims allocated by an earlier job of this run, with their objects */
} alloc_run;

/* The allocated claims of job j, printed into r->items; the claims it shares with an
 * earlier job's pod (shared) reserved for its pod too. */
static void record_job(alloc_run *r, const job *j, const dra_alloc_result *res, const job *shared) {
    dra_pod_binding b;
    if (j->pod) dra_pod_binding_init(&b, r->w, j->pod, r->x, r->now, r->names);
    for (size_t k = 0; k < j->n; k++) {
        const dra_claim *c = j->claims[k];
        json_t *o = claim_json(c, &res[k]);
        ensure_namespace(o);
        if (j->pod) {
            const char *entry = j->entries[k] ? j->entries[k] : "";
            if (c->from_template) dra_pod_binding_generated(&b, o, entry, entry_template(r->w, j->pod, entry));
            dra_pod_binding_reserve(&b, o, true);
        }
        json_array_append_new(r->items, o);
        dra_allocated_add_result_of(r->st, &res[k], c, r->f->consumable_capacity);
        job_add_entry(&r->done, c, NULL, o);
    }
    for (size_t k = 0; k < shared->n && j->pod; k++) dra_pod_binding_reserve(&b, shared->objs[k], false);
    if (j->pod) dra_pod_binding_free(&b);
}

/* Job j allocated: 0, or 1 after saying why not. */
static int run_job(alloc_run *r, job *j, const char *node_name) {
    dra_alloc_result *res = NULL;
    err ae;
    err_clear(&ae);
    /* claims an earlier pod's job allocated: this pod shares them (reserved below) */
    job shared = {0};
    size_t keep = 0;
    for (size_t k = 0; k < j->n; k++) {
        const dra_claim *c = j->claims[k];
        size_t d = 0;
        while (d < r->done.n && r->done.claims[d] != c) d++;
        if (d < r->done.n) job_add_entry(&shared, c, NULL, r->done.objs[d]);
        else j->entries[keep] = j->entries[k], j->claims[keep++] = c;
    }
    j->n = keep;
    dra_alloc_status s = DRA_ALLOC_OK;
    if (keep) {
        /* --timeout bounds each allocation, as the scheduler's per-pod budget does */
        uint64_t deadline = r->timeout_ns > 0 ? dra_monotonic_ns() + (uint64_t)r->timeout_ns : 0;
        dra_alloc_ctx_set_deadline(r->x, deadline, NULL);
        s = dra_allocate(r->x, r->v, r->st, j->claims, j->n, &res, &ae);
    }
    if (s == DRA_ALLOC_OK) record_job(r, j, res, &shared);
    job_free(&shared);
    if (s == DRA_ALLOC_OK) return 0;
    report_unallocated(r->x, j, s, &ae, node_name);
    return 1;
}

/* The jobs on the node, one after another (later ones see earlier allocations). */
static int run_jobs(const dra_world *w, const dra_features *f, const dra_node *node, dra_allocated *st, job *jobs,
                    size_t njobs, const alloc_args *a, int64_t timeout_ns) {
    err e;
    err_clear(&e);
    alloc_run r = {.w = w, .f = f, .st = st, .timeout_ns = timeout_ns};
    r.v = dra_nodeview_new(w, node, f, &e);
    if (!r.v) {
        fprintf(stderr, "dralloc allocate: %s\n", e.msg);
        return 1;
    }
    r.x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(r.x, a->dc);
    if (a->seedp) dra_alloc_ctx_set_seed(r.x, *a->seedp);   /* reproducible shareIDs and generated names */
    /* kube-scheduler sets allocationTimestamp only with both binding gates on */
    r.now = f->binding_conditions ? a->now : NULL;
    r.items = json_array();
    r.names = json_object();
    int rc = 0;
    for (size_t i = 0; i < njobs; i++)
        if (run_job(&r, &jobs[i], a->node)) rc = 1;
    json_decref(r.names);
    if (json_array_size(r.items)) print_list(r.items, a->yaml);
    json_decref(r.items);
    job_free(&r.done);
    dra_alloc_ctx_free(r.x);
    dra_nodeview_free(r.v);
    return rc;
}

/* File mode: the pending claims of the input (or --claim's) on the node. */
static int run_files(char **paths, int npaths, const alloc_args *a) {
    dra_features f;
    dra_oneshot l;
    if (!load_world(paths, npaths, a->gates, a->input, &f, &l)) return 2;
    const dra_world *w = l.w;
    int64_t timeout_ns = a->timeout_ns < 0 ? filter_timeout_default(&f) : a->timeout_ns;
    const dra_node *node = dra_world_find_node(w, a->node);
    if (!node) {
        /* Without the Node object its labels are unknown: node selectors on labels
         * will not match. Say so, since the result depends on it. */
        fprintf(stderr, "dralloc allocate: note: Node %s is not in the input; assuming it has no labels\n", a->node);
        node = dra_node_named(&l.mem, a->node);
    }
    dra_allocated *st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), f.consumable_capacity);
    size_t cap = dra_world_nclaims(w) + dra_world_npods(w) + dra_world_ntemplates(w) + 8;
    job *jobs = xcalloc(cap, sizeof *jobs);
    int rc = 0;
    size_t njobs = collect_jobs(w, &l.mem, a->node, a->ns, jobs, cap);
    if (a->claim) njobs = pick_claim(w, a, jobs, njobs, &rc);
    if (!a->claim && !njobs)
        fprintf(stderr, "dralloc allocate: nothing to allocate (no pending ResourceClaims, pods or templates)\n");
    if (njobs) rc = run_jobs(w, &f, node, st, jobs, njobs, a, timeout_ns);
    for (size_t i = 0; i < cap; i++) job_free(&jobs[i]);
    free(jobs);
    dra_allocated_free(st);
    dra_oneshot_free(&l);
    return rc;
}

/* ---- --pod: one pod on one node (engine/podplan.h) --------------------------------------- */

static int run_pod(char **paths, int npaths, const alloc_args *a) {
    const char *node_name = a->node, *pod_ref = a->pod, *only_ns = a->ns, *now = a->now;
    const uint64_t *seed = a->seedp;
    int64_t timeout_ns = a->timeout_ns;
    bool yaml = a->yaml;
    dra_device_choice choice = a->dc;
    dra_features f;
    dra_oneshot l;
    if (!load_world(paths, npaths, a->gates, a->input, &f, &l)) return 2;
    const dra_world *w = l.w;
    if (timeout_ns < 0) timeout_ns = filter_timeout_default(&f);
    char ns[256];
    snprintf(ns, sizeof ns, "%s", only_ns ? only_ns : "default");
    const char *name = pod_ref, *sl = strchr(pod_ref, '/');
    if (sl) {
        snprintf(ns, sizeof ns, "%.*s", (int)(sl - pod_ref), pod_ref);
        name = sl + 1;
    }
    const dra_pod *pod = dra_extres_find_pod(w, ns, name);
    if (!pod) {
        fprintf(stderr, "dralloc allocate: Pod %s/%s not found in the input\n", ns, name);
        dra_oneshot_free(&l);
        return 2;
    }
    const dra_node *node = dra_world_find_node(w, node_name);
    if (!node) node = dra_node_named(&l.mem, node_name);
    dra_allocated *st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), f.consumable_capacity);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(x, choice);
    if (seed) dra_alloc_ctx_set_seed(x, *seed);   /* reproducible shareIDs and generated names */
    /* the pod's allocation on the node, bounded as kube-scheduler bounds its Filter */
    dra_alloc_ctx_set_deadline(x, timeout_ns > 0 ? dra_monotonic_ns() + (uint64_t)timeout_ns : 0, NULL);
    json_t *out = dra_pod_allocate(w, pod, node, &f, st, x, now);
    dra_alloc_ctx_free(x);
    int rc = 0;
    const json_t *v;
    size_t i;
    if ((v = json_object_get(out, "error"))) {
        fprintf(stderr, "Pod %s/%s: cannot be scheduled: %s\n", ns, name, json_string_value(v));
        rc = 1;
    } else if (json_object_get(out, "unsatisfiable")) {
        fprintf(stderr, "Pod %s/%s: does not fit node %s: %s\n", ns, name, node_name,
                json_string_value(json_object_get(out, "reason")));
        /* the per-request reasons, each claim once (the reason above names the pod) */
        const char *why = json_string_value(json_object_get(out, "explanation"));
        if (why) fputs(why, stderr);
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
        /* the claims it allocated, the allocated ones it shares (the pod appended to
         * their reservedFor), and the pod when the control plane wrote its status */
        const json_t *claims = json_object_get(out, "claims"), *reused = json_object_get(out, "reusedClaims");
        json_t *items = json_array();
        json_array_extend(items, (json_t *)claims);
        json_array_extend(items, (json_t *)reused);
        const json_t *p = json_object_get(out, "pod");
        if (p && json_array_size(items)) json_array_append(items, (json_t *)p);
        if (json_array_size(items)) print_list(items, yaml);
        json_decref(items);
        if (!json_array_size(claims))
            fprintf(stderr, "Pod %s/%s: fits node %s; no ResourceClaim to allocate\n", ns, name, node_name);
    }
    json_decref(out);
    dra_allocated_free(st);
    dra_oneshot_free(&l);
    return rc;
}

/* ---- inputs ------------------------------------------------------------------------------ */

/* A path that is not a regular file or a directory (stdin as `-`, a pipe, a device
 * such as /dev/zero) is read here, at most DRA_INPUT_MAX_BYTES, into a memory file
 * the world loads by its /proc path (written to load, *fd_out its descriptor);
 * regular files are checked by size and loaded by their name (load left empty).
 * False with the reason printed. */
static bool prepare_input(const char *path, char *load, size_t n, int *fd_out) {
    load[0] = '\0';
    *fd_out = -1;
    const char *shown = strcmp(path, "-") ? path : "<stdin>";
    struct stat st;
    if (strcmp(path, "-") && stat(path, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        if (S_ISREG(st.st_mode) && (size_t)st.st_size > DRA_INPUT_MAX_BYTES) {
            fprintf(stderr, "dralloc allocate: %s: larger than %zu MiB, refused\n", shown, DRA_INPUT_MAX_BYTES >> 20);
            return false;
        }
        return true;   /* loaded by its own name */
    }
    FILE *in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!in) {
        fprintf(stderr, "dralloc allocate: %s: %s\n", shown, strerror(errno));
        return false;
    }
    int fd = memfd_create("dralloc-input", MFD_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "dralloc allocate: %s: memfd_create: %s\n", shown, strerror(errno));
        if (in != stdin) fclose(in);
        return false;
    }
    char buf[65536];
    size_t total = 0, got;
    bool ok = true;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) {
        total += got;
        if (total > DRA_INPUT_MAX_BYTES) {
            fprintf(stderr, "dralloc allocate: %s: more than %zu MiB of input, refused\n", shown, DRA_INPUT_MAX_BYTES >> 20);
            ok = false;
            break;
        }
        if (write(fd, buf, got) != (ssize_t)got) {
            fprintf(stderr, "dralloc allocate: %s: %s\n", shown, strerror(errno));
            ok = false;
            break;
        }
    }
    if (in != stdin) fclose(in);
    if (!ok) {
        close(fd);
        return false;
    }
    /* a YAML/JSON sniff happens in the world by content, so the name needs no suffix */
    snprintf(load, n, "/proc/self/fd/%d", fd);
    *fd_out = fd;
    return true;
}

static void warn_stderr(void *ud, const char *msg) {
    (void)ud;
    char buf[4096];
    fprintf(stderr, "Warning: %s\n", unalias(msg, buf, sizeof buf));
}

/* The options checked, in the order their messages come: -o, --device-choice, --seed,
 * --timeout. False after saying why. */
static bool alloc_check(alloc_args *a) {
    if (a->output && strcmp(a->output, "yaml") && strcmp(a->output, "json")) {
        fprintf(stderr, "dralloc allocate: -o %s: want yaml or json\n", a->output);
        return false;
    }
    a->yaml = !a->output || !strcmp(a->output, "yaml");
    a->dc = DRA_CHOICE_FIRST_FIT;
    if (a->choice && !dra_device_choice_parse(a->choice, &a->dc)) {
        fprintf(stderr, "dralloc allocate: --device-choice %s: want first-fit or best-fit\n", a->choice);
        return false;
    }
    if (a->seed_text) {
        char *end;
        errno = 0;
        a->seed = strtoull(a->seed_text, &end, 10);
        if (!*a->seed_text || *end || errno || a->seed_text[0] == '-') {
            fprintf(stderr, "dralloc allocate: --seed needs a non-negative integer\n");
            return false;
        }
        a->seedp = &a->seed;
    }
    a->timeout_ns = -1;   /* kube-scheduler's default (filter_timeout_default) */
    if (a->timeout) {
        char msg[256];
        bool parsed = parse_go_duration(a->timeout, &a->timeout_ns, msg, sizeof msg);
        if (!parsed || a->timeout_ns < 0) {
            fprintf(stderr, "dralloc allocate: --timeout: %s\n", parsed ? "must not be negative" : msg);
            return false;
        }
    }
    return true;
}

/* -f and --node given: the inputs read (stdin and pipes into memory files), the clock
 * read, then the pod or the files allocated. */
static int alloc_inputs(alloc_args *a) {
    if (!a->files.n || !a->node) {
        fprintf(stderr, "dralloc allocate: required flag(s) %s%s%s not set\nRun 'dralloc allocate --help' for usage.\n",
                a->files.n ? "" : "\"filename\"", !a->files.n && !a->node ? ", " : "", a->node ? "" : "\"node\"");
        return 2;
    }
    const dra_input input = {.warn = warn_stderr, .strict = a->strict};
    a->input = &input;
    int nfiles = (int)a->files.n, rc = 2;
    int *fds = xcalloc((size_t)nfiles, sizeof *fds);
    char **load = xcalloc((size_t)nfiles, sizeof *load);
    bool inputs_ok = true;
    for (int i = 0; i < nfiles && inputs_ok; i++) {
        const char *file = a->files.v[i];
        char path[64];
        if (!prepare_input(file, path, sizeof path, &fds[i])) inputs_ok = false;
        else if (fds[i] >= 0) {
            load[i] = xstrdup(path);
            alias_add(load[i], strcmp(file, "-") ? file : "<stdin>");
        } else load[i] = (char *)file;
    }
    if (inputs_ok) {
        /* allocationTimestamp: the clock, or SOURCE_DATE_EPOCH for reproducible output */
        const char *sde = getenv("SOURCE_DATE_EPOCH");
        char *end = NULL;
        long long t = sde && *sde ? strtoll(sde, &end, 10) : -1;
        dra_rfc3339_utc(end && !*end && t >= 0 ? t : -1, a->now);
        rc = a->pod ? run_pod(load, nfiles, a) : run_files(load, nfiles, a);
    }
    for (int i = 0; i < nfiles; i++)
        if (fds[i] >= 0) {
            free(load[i]);
            close(fds[i]);
        }
    free(load);
    free(fds);
    naliases = 0;
    a->input = NULL;
    return rc;
}

int cmd_allocate(int argc, char **argv) {
    alloc_args a = {0};
    int rc = cmd_flags_parse(&alloc_spec, argc, argv, &a);
    if (rc == CMD_PARSE_HELP) {
        rc = 0;
    } else if (rc == CMD_PARSE_OK) {
        if (!alloc_check(&a)) rc = 2;
        else if (a.fixture) rc = run_fixture(a.fixture, a.dc);
        else if (argc <= 1) usage(stderr), rc = 2;
        else rc = alloc_inputs(&a);
    }
    cmd_flags_free(&alloc_spec, &a);
    return rc;
}
