/* test_preempt_brute.c — the make-room search against brute force: 200 random small
 * fleets (at most 8 nodes and 40 pods: whole-GPU nodes and MIG-like nodes whose
 * slices share counters, claims shared by two pods, PodDisruptionBudgets, a pending
 * pod alone or with a second member of its PodGroup). For every node, every subset
 * of the pods that may go is tried (dra_room_fits_without decides each afresh), the
 * best is taken under pickOneNodeForPreemption's order with the reprieve order as the
 * last tie (preempt.h), and the candidates, nodes and victims, must be the room's,
 * every time. The rules are re-stated here from kube-scheduler 1.37's code
 * (preemption/util.go MoreImportantVictim and FilterVictimsWithPDBViolation,
 * preemption/preemption.go pickOneNodeForPreemption), not taken from the room.
 * BRUTE_GREEDY=1 stops the room at kube-scheduler's greedy answer: the check then
 * fails (seed 23, node n0: the greedy reprieve evicts more than it must). */
#include "tests/engine/room_fleet.h"

#include <limits.h>

typedef struct rng {
    uint64_t s;
} rng;
static uint32_t rnd(rng *r, uint32_t n) {
    r->s ^= r->s << 13, r->s ^= r->s >> 7, r->s ^= r->s << 17;
    return (uint32_t)(r->s % n);
}

enum { MAXP = 48 };
typedef struct bpod {
    char name[32], node[16];
    int prio, start;
    const char *label;
    int shared;          /* index of the claim it shares, -1: its own */
} bpod;

typedef struct fleet {
    json_t *items;
    bpod pods[MAXP];
    int npods, nnodes;
    const char *pdb_label[2];
    int pdb_allowed[2], npdbs;
    bool gang;
} fleet;

static const int prios[] = {0, 5, 10, 50, 200};
static const char *labels[] = {NULL, "a", "b"};

static void add_bound(fleet *f, rng *r, const char *node, const char *cls, const char *const *devs, int n) {
    bpod *p = &f->pods[f->npods];
    snprintf(p->name, sizeof p->name, "p%d", f->npods);
    snprintf(p->node, sizeof p->node, "%s", node);
    p->prio = prios[rnd(r, 5)];
    p->start = (int)rnd(r, 50);   /* ties on purpose */
    p->label = labels[rnd(r, 3)];
    p->shared = -1;
    f->npods++;
    /* now and then a claim reserved by this pod and a second one on the node */
    if (f->npods < MAXP && rnd(r, 6) == 0) {
        bpod *q = &f->pods[f->npods++];
        *q = *p;
        snprintf(q->name, sizeof q->name, "p%d", f->npods - 1);
        q->prio = prios[rnd(r, 5)];
        q->start = (int)rnd(r, 50);
        char claim[48];
        snprintf(claim, sizeof claim, "shared-%s", p->name);
        rf_add(f->items, rf_pod("ml", p->name, node, p->prio, p->label, p->start, claim));
        rf_add(f->items, rf_pod("ml", q->name, node, q->prio, q->label, q->start, claim));
        rf_add(f->items, rf_claim("ml", claim, cls, n, node, devs, n, (const char *[]){p->name, q->name}, 2));
        p->shared = q->shared = 1;
        return;
    }
    rf_bound(f->items, "ml", p->name, node, p->prio, p->label, p->start, cls, devs, n);
}

static void gen(fleet *f, rng *r) {
    memset(f, 0, sizeof *f);
    f->items = json_array();
    rf_classes(f->items);
    f->nnodes = 1 + (int)rnd(r, 6);
    for (int n = 0; n < f->nnodes && f->npods < 40; n++) {
        char node[16];
        snprintf(node, sizeof node, "n%d", n);
        if (rnd(r, 3) == 0) {
            rf_node_mig(f->items, node, 1);
            if (rnd(r, 4) == 0) {
                add_bound(f, r, node, "mig-7g", (const char *[]){"gpu-0-7g"}, 1);
                continue;
            }
            for (int j = 0; j < 7 && f->npods < 40; j++) {
                if (rnd(r, 10) == 0) continue;   /* a free slice */
                char d[24];
                snprintf(d, sizeof d, "gpu-0-1g-%d", j);
                add_bound(f, r, node, "mig-1g", (const char *[]){d}, 1);
            }
        } else {
            int g = 2 + (int)rnd(r, 5);
            rf_node(f->items, node, g);
            for (int i = 0; i < g && f->npods < 40;) {
                int w = rnd(r, 3) == 0 && i + 1 < g ? 2 : 1;
                if (rnd(r, 10) == 0) {   /* a free GPU */
                    i++;
                    continue;
                }
                char a[16], b[16];
                snprintf(a, sizeof a, "gpu-%d", i);
                snprintf(b, sizeof b, "gpu-%d", i + 1);
                add_bound(f, r, node, "gpu", (const char *[]){a, b}, w);
                i += w;
            }
        }
    }
    f->npdbs = (int)rnd(r, 3);
    for (int i = 0; i < f->npdbs; i++) {
        f->pdb_label[i] = labels[1 + i];
        f->pdb_allowed[i] = (int)rnd(r, 3);
        rf_pdb(f->items, "ml", i ? "pdb-b" : "pdb-a", f->pdb_label[i], f->pdb_allowed[i]);
    }
    static const char *want[][2] = {{"gpu", "1"}, {"gpu", "2"}, {"gpu", "3"}, {"mig-7g", "1"}, {"mig-1g", "2"}};
    int k = (int)rnd(r, 5);
    f->gang = rnd(r, 5) == 0;
    for (int m = 0; m < (f->gang ? 2 : 1); m++) {
        rf_pending(f->items, "ml", m ? "pending-1" : "pending", 100, want[k][0], atoi(want[k][1]));
        if (f->gang)
            json_object_set_new(json_object_get(json_array_get(f->items, json_array_size(f->items) - 2), "spec"),
                                "schedulingGroup", json_pack("{s:s}", "podGroupName", "g"));
    }
}

/* A candidate as the brute force sees it. */
typedef struct bcand {
    int node;
    int victims[MAXP], n;    /* pod indexes, most important first */
    long long pdb, maxprio, sum, start;
} bcand;

static bool more_important(const fleet *f, int a, int b) {
    if (f->pods[a].prio != f->pods[b].prio) return f->pods[a].prio > f->pods[b].prio;
    if (f->pods[a].start != f->pods[b].start) return f->pods[a].start < f->pods[b].start;
    return a < b;
}

static int cmp(const bcand *a, const bcand *b) {
    long long x[] = {a->pdb, a->maxprio, a->sum, a->n, -a->start}, y[] = {b->pdb, b->maxprio, b->sum, b->n, -b->start};
    for (int i = 0; i < 5; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* The best set on node n by trying every subset, in the reprieve order's
 * lexicographic order (reprieve before evict), keeping the first of the best. */
static bool best_on(rf_room *x, const fleet *f, int n, bool allow, bcand *out) {
    char node[16];
    snprintf(node, sizeof node, "n%d", n);
    int pot[MAXP], np = 0;
    for (int i = 0; i < f->npods; i++)
        if (!strcmp(f->pods[i].node, node) && f->pods[i].prio < 100) pot[np++] = i;
    for (int i = 1; i < np; i++)
        for (int j = i; j > 0 && more_important(f, pot[j], pot[j - 1]); j--) {
            int t = pot[j];
            pot[j] = pot[j - 1];
            pot[j - 1] = t;
        }
    bool viol[MAXP];
    int allowed[2] = {f->pdb_allowed[0], f->pdb_allowed[1]};
    for (int i = 0; i < np; i++) {
        viol[i] = false;
        for (int b = 0; b < f->npdbs && !viol[i]; b++)
            if (f->pods[pot[i]].label && !strcmp(f->pods[pot[i]].label, f->pdb_label[b])) viol[i] = --allowed[b] < 0;
    }
    int order[MAXP], no = 0;
    bool ov[MAXP];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < np; i++)
            if (viol[i] == (pass == 0) && (!viol[i] || allow)) ov[no] = viol[i], order[no++] = pot[i];
    bool found = false;
    cr_assert_lt(no, 16, "a fleet small enough to enumerate");
    for (uint32_t rank = 0; rank < (1u << no); rank++) {
        /* rank's bits from the top are the choices in order: 0 reprieve, 1 evict */
        json_t *v = json_array();
        bcand c = {.node = n, .maxprio = LLONG_MIN, .start = LLONG_MAX};
        for (int i = 0; i < no; i++) {
            if (!(rank >> (no - 1 - i) & 1)) continue;
            const bpod *p = &f->pods[order[i]];
            json_array_append_new(v, json_pack("{s:s, s:s}", "namespace", "ml", "name", p->name));
            c.victims[c.n++] = order[i];
            c.pdb += ov[i];
            if (p->prio > c.maxprio) c.maxprio = p->prio;
            c.sum += (long long)p->prio + 2147483648LL;
        }
        for (int i = 0; i < c.n; i++)
            if (f->pods[c.victims[i]].prio == c.maxprio && f->pods[c.victims[i]].start < c.start) c.start = f->pods[c.victims[i]].start;
        if (c.n && (!found || cmp(&c, out) < 0)) {
            err e;
            err_clear(&e);
            if (dra_room_fits_without(x->r, "ml", "pending", node, v, &e)) {
                found = true;
                *out = c;
            }
            cr_assert_str_eq(e.msg, "");
        }
        json_decref(v);
    }
    for (int i = 1; found && i < out->n; i++)
        for (int j = i; j > 0 && more_important(f, out->victims[j], out->victims[j - 1]); j--) {
            int t = out->victims[j];
            out->victims[j] = out->victims[j - 1];
            out->victims[j - 1] = t;
        }
    return found;
}

/* The room's candidates against the brute force's; returns how many there were. */
static int check(const fleet *f, uint64_t seed, bool allow) {
    /* BRUTE_DUMP=DIR keeps each fleet as DIR/fleet-<seed>.json, for `dralloc why --make-room` */
    if (getenv("BRUTE_DUMP")) {
        char path[512];
        snprintf(path, sizeof path, "%s/fleet-%llu.json", getenv("BRUTE_DUMP"), (unsigned long long)seed);
        json_dump_file(f->items, path, JSON_INDENT(1));
    }
    rf_room x = rf_open(f->items);
    err e;
    err_clear(&e);
    json_t *none = json_array();
    bool fits_now = false;
    for (int n = 0; n < f->nnodes; n++) {
        char node[16];
        snprintf(node, sizeof node, "n%d", n);
        fits_now |= dra_room_fits_without(x.r, "ml", "pending", node, none, &e);
    }
    json_decref(none);
    bcand want[8];
    int nw = 0;
    for (int n = 0; !fits_now && n < f->nnodes; n++)
        if (best_on(&x, f, n, allow, &want[nw])) nw++;
    for (int i = 1; i < nw; i++)   /* stable: the node order breaks the last tie */
        for (int j = i; j > 0 && cmp(&want[j], &want[j - 1]) < 0; j--) {
            bcand t = want[j];
            want[j] = want[j - 1];
            want[j - 1] = t;
        }
    dra_room_opts o = {.allow_pdb_violations = allow, .list = UINT32_MAX, .max_steps = getenv("BRUTE_GREEDY") ? 1 : UINT32_MAX, .all_nodes = true};
    dra_room_status st;
    json_t *out = dra_room_make(x.r, "ml", "pending", &o, &st, &e);
    cr_assert_not_null(out, "seed %llu: %s", (unsigned long long)seed, e.msg);
    const json_t *got = json_object_get(out, "candidates");
    if (f->gang) {
        /* the first member is placed on its best candidate (no victims when it fits as
         * things are); the group may still find no room for the second */
        if (json_array_size(got) && fits_now)
            cr_assert_eq(json_array_size(json_object_get(json_array_get(got, 0), "victims")), 0, "seed %llu", (unsigned long long)seed);
        if (json_array_size(got) && !fits_now) {
            cr_assert_gt(nw, 0, "seed %llu", (unsigned long long)seed);
            nw = 1;
        } else {
            nw = 0;
        }
        fits_now = false;
    } else {
        cr_assert_eq(json_is_true(json_object_get(out, "fits")), fits_now, "seed %llu", (unsigned long long)seed);
    }
    if (fits_now) nw = 0;
    if (!f->gang)
        cr_assert_eq(fits_now ? 0 : (int)json_array_size(got), nw, "seed %llu allow %d: %zu candidates, brute force %d",
                 (unsigned long long)seed, allow, json_array_size(got), nw);
    for (int i = 0; i < nw; i++) {
        const json_t *c = json_array_get(got, (size_t)i);
        char node[16];
        snprintf(node, sizeof node, "n%d", want[i].node);
        cr_assert_str_eq(json_string_value(json_object_get(c, "node")), node, "seed %llu allow %d candidate %d",
                         (unsigned long long)seed, allow, i);
        cr_assert(getenv("BRUTE_GREEDY") || json_is_true(json_object_get(c, "exact")));
        cr_assert_eq(json_integer_value(json_object_get(c, "pdbViolations")), want[i].pdb);
        const json_t *v = json_object_get(c, "victims");
        cr_assert_eq((int)json_array_size(v), want[i].n, "seed %llu node %s", (unsigned long long)seed, node);
        for (int k = 0; k < want[i].n; k++)
            cr_assert_str_eq(json_string_value(json_object_get(json_array_get(v, (size_t)k), "name")),
                             f->pods[want[i].victims[k]].name, "seed %llu node %s victim %d", (unsigned long long)seed, node, k);
    }
    json_decref(out);
    rf_close(&x);
    return nw;
}

Test(preempt_brute, two_hundred_fleets_equal_the_exhaustive_optimum, .timeout = 600) {
    int with = 0, multi = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        rng r = {seed * 0x9E3779B97F4A7C15ull};
        fleet f;
        gen(&f, &r);
        int a = check(&f, seed, false);
        int b = check(&f, seed, true);
        with += a > 0 || b > 0;
        multi += a > 1 || b > 1;
        json_decref(f.items);
    }
    fprintf(stderr, "preempt_brute: %d of 200 fleets with a candidate, %d with several\n", with, multi);
    /* the fleets exercise the search: most have room to make, many on several nodes */
    cr_assert_gt(with, 100, "%d of 200 fleets had a candidate", with);
    cr_assert_gt(multi, 30, "%d of 200 fleets had several candidates", multi);
}
