/* causes.c — a fit's cause and the count by cause over nodes (causes.h).
 *
 * The cause is read from the reason the engine itself wrote: the node checks'
 * kube-scheduler texts (nodefit.c) are causes already; a failed allocation's reason is
 * "cannot allocate all claims: " and explain.c's short form, "; "-separated parts,
 *   claim NS/NAME request R: wants N, M match CLASS, F free[: <n> <cause>, <n> <cause>[, ...] | , but <constraint>]
 * then constraints over several requests ("claim NS/NAME: ...") or why the requests
 * fail together. tests/planner/causes_test.c runs real fits through it, so a change of
 * that grammar fails there. */
#include "engine/causes.h"

#include "base/base.h"
#include "base/hash.h"
#include "base/hmap.h"
#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNSAT_PREFIX "cannot allocate all claims: "

static bool starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* Copies s[0..n) into out, the node's name replaced by "the node". */
static void without_node(const char *s, size_t n, const char *node, char *out, size_t cap) {
    size_t o = 0, nl = node ? strlen(node) : 0;
    for (size_t i = 0; i < n && o + 1 < cap;) {
        if (nl && i + nl <= n && !strncmp(s + i, node, nl)) {
            int w = snprintf(out + o, cap - o, "the node");
            o += w > 0 ? (size_t)w : 0;
            i += nl;
            continue;
        }
        out[o++] = s[i++];
    }
    out[o < cap ? o : cap - 1] = '\0';
}

/* The cause of the first listed cause of a request ("8 held by claim ml/x", ...). */
static void device_cause(const char *c, size_t n, const char *cls, char *out, size_t cap) {
    char one[400];
    snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one - 1 ? n : sizeof one - 1), c);
    const char *t;
    if (strstr(one, "held by claim") || strstr(one, "already allocated"))
        snprintf(out, cap, "devices of class %s held by claims", cls);
    else if ((t = strstr(one, "taint ")) && strstr(t, " not tolerated"))
        snprintf(out, cap, "untolerated taint %.*s", (int)(strstr(t, " not tolerated") - (t + 6)), t + 6);
    else if (strstr(one, " of counter "))
        snprintf(out, cap, "devices of class %s blocked by shared counters in use", cls);
    else if (strstr(one, "in pool "))
        snprintf(out, cap, "devices of class %s in incomplete or invalid pools", cls);
    else if (strstr(one, "bindingConditions"))
        snprintf(out, cap, "devices of class %s need DRADeviceBindingConditions", cls);
    else if (strstr(one, "consume counters"))
        snprintf(out, cap, "devices of class %s need DRAPartitionableDevices", cls);
    else if (strstr(one, " left, the request needs"))
        snprintf(out, cap, "devices of class %s have too little capacity left", cls);
    else if (strstr(one, "lack capacity") || strstr(one, "requestPolicy") || strstr(one, "the request needs"))
        snprintf(out, cap, "devices of class %s lack the requested capacity", cls);
    else if (strstr(one, "more in slice"))
        snprintf(out, cap, "devices of class %s in slices ignored with a feature gate off", cls);
    else
        snprintf(out, cap, "too few free devices of class %s", cls);
}

/* A failed allocation's short explanation (after UNSAT_PREFIX). */
static void unsat_cause(const char *s, dra_cause *out) {
    bool have = false;
    int64_t missing = 0, matching = 0;
    while (*s) {
        const char *end = strstr(s, "; ");
        size_t len = end ? (size_t)(end - s) : strlen(s);
        /* the part's first ": wants " (a strncmp at every byte was a tenth of a memo-hit /filter) */
        const char *w = memmem(s, len, ": wants ", 8);
        if (w) w += 8;
        if (starts(s, "claim ") && w) {
            long long want = 0, m = 0, fr = 0;
            char cls[256] = "";
            int k = 0;
            const char *q = w;
            if (starts(q, "all (")) q += 5;
            if (sscanf(q, "%lld", &want) != 1) want = 0;
            const char *mp = strstr(q, ", ");
            if (mp && mp < s + len && sscanf(mp + 2, "%lld match %255[^,]%n", &m, cls, &k) >= 2) {
                const char *fp = mp + 2 + k;
                if (starts(fp, ", ") && sscanf(fp + 2, "%lld free", &fr) == 1) {
                    const char *after = strstr(fp + 2, " free") + 5;
                    missing += want > fr ? want - fr : 0;
                    matching += m;
                    if (!have) {
                        have = true;
                        if (m == 0) snprintf(out->text, sizeof out->text, "no device matches class %s and the selectors", cls);
                        else if (starts(after, ", but ")) snprintf(out->text, sizeof out->text,
                                                                   "free devices of class %s do not meet the claim's constraints", cls);
                        else if (starts(after, ": ")) {
                            const char *c = after + 2, *ce = c;
                            while (ce < s + len && !starts(ce, ", ")) ce++;
                            device_cause(c, (size_t)(ce - c), cls, out->text, sizeof out->text);
                        } else snprintf(out->text, sizeof out->text, "too few free devices of class %s", cls);
                    }
                }
            }
        } else if (!have) {
            have = true;
            if (starts(s, "claim ")) snprintf(out->text, sizeof out->text, "claim constraints not met by the free devices");
            else if (starts(s, "the requests want "))
                snprintf(out->text, sizeof out->text, "the requests together want more devices than are free");
            else snprintf(out->text, sizeof out->text, "%.*s", (int)(len < 300 ? len : 300), s);
        }
        if (!end) break;
        s = end + 2;
    }
    if (!have) snprintf(out->text, sizeof out->text, "cannot allocate all claims");
    out->missing = missing;
    out->matching = matching;
}

void dra_fit_cause(const dra_fit *f, const char *node, dra_cause *out) {
    memset(out, 0, sizeof *out);
    out->missing = out->matching = -1;
    const char *r = f->reason;
    if (f->status == DRA_FIT_OK) return;
    if (f->status == DRA_FIT_TIMEOUT) {
        snprintf(out->text, sizeof out->text, "timed out trying to allocate devices");
        return;
    }
    if (starts(r, UNSAT_PREFIX)) {
        unsat_cause(r + strlen(UNSAT_PREFIX), out);
        return;
    }
    /* kube-scheduler's DynamicResources text for a claim allocated elsewhere, with the
     * claim (the same on every node) */
    const char *other = strstr(r, " is allocated for other nodes than ");
    if (starts(r, "ResourceClaim ") && other) {
        snprintf(out->text, sizeof out->text, "resourceclaim %.*s not available on the node", (int)(other - r - 14), r + 14);
        return;
    }
    /* "Insufficient R: node N has ..." → NodeResourcesFit's "Insufficient R" */
    if (starts(r, "Insufficient ")) {
        const char *c = strchr(r, ':');
        snprintf(out->text, sizeof out->text, "%.*s", (int)(c ? (size_t)(c - r) : strlen(r)), r);
        return;
    }
    without_node(r, strlen(r), node, out->text, sizeof out->text);
}

/* ---- counting ------------------------------------------------------------------------------ */

typedef struct entry {
    char *text;
    size_t count;
    /* the closest node of this cause so far */
    char *node, *reason;
    int rank;                    /* 0: devices short, something matches; 1: not a device shortage; 2: nothing matches */
    int64_t missing, matching;
    size_t seq;
} entry;

struct dra_causes {
    VEC(entry) v;
    hmap at;                     /* hash of text → index + 1 (probe chain) */
    size_t nodes;
};

dra_causes *dra_causes_new(void) {
    dra_causes *c = xcalloc(1, sizeof *c);
    hmap_init(&c->at);
    return c;
}

void dra_causes_free(dra_causes *c) {
    if (!c) return;
    for (size_t i = 0; i < c->v.n; i++) {
        free(c->v.v[i].text);
        free(c->v.v[i].node);
        free(c->v.v[i].reason);
    }
    free(c->v.v);
    hmap_free(&c->at);
    free(c);
}

static int rank_of(const dra_cause *k) { return k->missing < 0 ? 1 : k->matching == 0 ? 2 : 0; }

/* Is (rank, missing, matching) closer than entry e's? */
static bool closer(int rank, int64_t missing, int64_t matching, const entry *e) {
    if (rank != e->rank) return rank < e->rank;
    if (missing != e->missing) return missing < e->missing;
    return matching > e->matching;
}

void dra_causes_add(dra_causes *c, const char *node, const dra_fit *f) {
    dra_cause k;
    dra_fit_cause(f, node, &k);
    dra_causes_add_cause(c, node, f, &k);
}

void dra_causes_add_cause(dra_causes *c, const char *node, const dra_fit *f, const dra_cause *k) {
    c->nodes++;
    uint64_t probe = hash_bytes(k->text, strlen(k->text)), i;
    entry *e = NULL;
    for (; hmap_get(&c->at, probe, &i); probe = hash_u64(probe))
        if (!strcmp(c->v.v[i - 1].text, k->text)) {
            e = &c->v.v[i - 1];
            break;
        }
    int rank = rank_of(k);
    if (!e) {
        entry z = {.text = xstrdup(k->text), .node = xstrdup(node), .reason = xstrdup(f->reason), .rank = rank,
                   .missing = k->missing, .matching = k->matching, .seq = c->v.n};
        VEC_PUSH(c->v, z);
        hmap_put(&c->at, probe, c->v.n);
        e = &c->v.v[c->v.n - 1];
    } else if (closer(rank, k->missing, k->matching, e)) {
        free(e->node);
        free(e->reason);
        e->node = xstrdup(node);
        e->reason = xstrdup(f->reason);
        e->rank = rank, e->missing = k->missing, e->matching = k->matching;
    }
    e->count++;
}

size_t dra_causes_nodes(const dra_causes *c) { return c->nodes; }

typedef struct line {
    char *text;
    size_t idx;
} line;

static int cmp_line(const void *a, const void *b) { return strcmp(((const line *)a)->text, ((const line *)b)->text); }

/* "<count> <cause>" for every cause, in kube-scheduler's order (sort.Strings). */
static line *sorted_lines(const dra_causes *c) {
    line *l = xcalloc(c->v.n + 1, sizeof *l);
    for (size_t i = 0; i < c->v.n; i++) {
        size_t n = strlen(c->v.v[i].text) + 32;
        l[i].text = xmalloc(n);
        snprintf(l[i].text, n, "%zu %s", c->v.v[i].count, c->v.v[i].text);
        l[i].idx = i;
    }
    if (c->v.n) qsort(l, c->v.n, sizeof *l, cmp_line);
    return l;
}

static void free_lines(line *l, size_t n) {
    for (size_t i = 0; i < n; i++) free(l[i].text);
    free(l);
}

/* The counts by cause after a head the caller wrote (len characters of buf). */
static size_t causes_after(const dra_causes *c, char *buf, size_t n, size_t len) {
    line *l = sorted_lines(c);
    for (size_t i = 0; i < c->v.n && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : ": ", l[i].text);
    if (len < n) len += (size_t)snprintf(buf + len, n - len, ".");
    free_lines(l, c->v.n);
    return len < n ? len : n - 1;
}

size_t dra_causes_summary(const dra_causes *c, size_t nnodes, char *buf, size_t n) {
    if (!n) return 0;
    return causes_after(c, buf, n, (size_t)snprintf(buf, n, "0/%zu nodes are available", nnodes));
}

size_t dra_causes_summary_others(const dra_causes *c, size_t nfit, size_t nnodes, char *buf, size_t n) {
    if (!n) return 0;
    if (!nfit) return dra_causes_summary(c, nnodes, buf, n);
    return causes_after(c, buf, n, (size_t)snprintf(buf, n, "%zu/%zu nodes do not fit it", nnodes - nfit, nnodes));
}

json_t *dra_causes_json(const dra_causes *c) {
    json_t *a = json_array();
    line *l = sorted_lines(c);
    for (size_t i = 0; i < c->v.n; i++) {
        const entry *e = &c->v.v[l[i].idx];
        json_array_append_new(a, json_pack("{s:s, s:I}", "cause", e->text, "nodes", (json_int_t)e->count));
    }
    free_lines(l, c->v.n);
    return a;
}

static int cmp_closest(const void *a, const void *b) {
    const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
    if (closer(x->rank, x->missing, x->matching, y)) return -1;
    if (closer(y->rank, y->missing, y->matching, x)) return 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

json_t *dra_causes_closest(const dra_causes *c, size_t max) {
    const entry **v = xcalloc(c->v.n + 1, sizeof *v);
    for (size_t i = 0; i < c->v.n; i++) v[i] = &c->v.v[i];
    if (c->v.n) qsort(v, c->v.n, sizeof *v, cmp_closest);
    json_t *a = json_array();
    for (size_t i = 0; i < c->v.n && json_array_size(a) < max; i++) {
        /* nodes where nothing matches say nothing while a node where something does exists */
        if (v[i]->rank == 2 && v[0]->rank < 2) break;
        json_t *o = json_pack("{s:s, s:s}", "node", v[i]->node, "cause", v[i]->text);
        if (v[i]->missing >= 0) json_object_set_new(o, "missing", json_integer(v[i]->missing));
        if (v[i]->matching >= 0) json_object_set_new(o, "matching", json_integer(v[i]->matching));
        json_object_set_new(o, "reason", json_string(v[i]->reason));
        if (!json_object_get(o, "reason")) json_object_set_new(o, "reason", json_string("(not UTF-8)"));
        json_array_append_new(a, o);
    }
    free(v);
    return a;
}
