/* plan_minnodes.c — `--min-nodes SHAPE...`: the fewest copies of each node shape for
 * each workload on its own and for the whole file without the workloads no count
 * helps, under binpack and spread scoring, and with prices the cheapest mix of shapes
 * (plan_buy.c). planner.h plan_min_nodes says what comes back.
 *
 * The search runs on one store that copies are added to and taken from
 * (plan_copies.c: a setting publishes one snapshot that differs by the copies), and
 * each probe is a simulation that only answers whether everything fits (plan_opts
 * .probe: it stops at the first replica that fits nowhere, and computes no capacity
 * view). Counts are found from below: each workload on its own gives its count from
 * two measurements (plan_minnodes.h says why that is exact), and their largest is
 * where the search for the whole file starts — one probe there and one below it
 * settle it when the workloads do not crowd each other out. Only the answer is
 * simulated in full: the plan printed is the cluster with the copies the answer adds
 * (the buy list's mix, or the one shape's count), or the cluster as given when there
 * is no answer — never a probe fleet. */
#include "planner/plan_minnodes.h"

#include "engine/causes.h"
#include "planner/plan_fitmemo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- probes ------------------------------------------------------------------------------ */

/* The workloads with include[i] (gangs as plain workloads when !gangs): a view sharing
 * their names and templates. */
static plan_workloads subset(const mn_search *m, const bool *include, bool gangs) {
    plan_workloads sub = {0};
    sub.v = xcalloc(m->nw ? m->nw : 1, sizeof *sub.v);
    for (size_t i = 0; i < m->nw; i++) {
        if (!include[i]) continue;
        sub.v[sub.n] = m->w->v[i];
        if (!gangs) sub.v[sub.n].gang = false;
        sub.n++;
    }
    return sub;
}

static plan_opts probe_opts(const mn_search *m, dra_score_mode score) {
    plan_opts po = *m->o;
    po.score = score;
    po.probe = true;
    po.headroom_max = 0;
    po.stranded = false;
    po.progress = NULL;
    po.no_counters = true;
    po.memo = m->memo;
    return po;
}

/* A probe's result (NULL with m->failed). */
static json_t *run_probe(mn_search *m, const long *counts, const plan_workloads *sub, dra_score_mode score) {
    if (m->failed) return NULL;
    if (!plan_copies_set(m->pc, counts, m->e)) {
        m->failed = true;
        return NULL;
    }
    plan_opts po = probe_opts(m, score);
    po.probe_all = m->all_round;
    m->probes++;
    json_t *r = plan_run_store(m->st, sub, &po, m->node_local, m->e);
    if (!r) m->failed = true;
    return r;
}

bool mn_fits(mn_search *m, const long *counts, const bool *include, dra_score_mode score) {
    plan_workloads sub = subset(m, include, true);
    bool ok = true;
    if (sub.n) {
        json_t *r = run_probe(m, counts, &sub, score);
        ok = r && json_integer_value(json_object_get(json_object_get(r, "summary"), "unplaced")) == 0;
        json_decref(r);
    }
    free(sub.v);
    return ok && !m->failed;
}

long mn_least(mn_search *m, long *counts, size_t s, const bool *include, dra_score_mode score, long lo, long hint,
              long hi, long max) {
    /* bad < answer <= good: bad fails (or is below lo), good fits; -1 good: none known */
    long bad = lo - 1, good = hi >= 0 && hi <= max ? hi : -1;
    if (hint < lo) hint = lo;
    if (good >= 0 && hint > good) hint = good;
    if (hint > max) return -1;
#define PROBE(k) (counts[s] = (k), mn_fits(m, counts, include, score))
    if (good == hint || PROBE(hint)) {
        /* the count just below first: where the workloads do not crowd each other out
         * the hint was the answer, and this settles it */
        good = hint;
        if (good - 1 > bad) {
            if (!PROBE(good - 1)) return m->failed ? -1 : good;
            good--;
        }
    } else {
        if (m->failed) return -1;
        bad = hint;
        /* max next: when no count works (spread scoring spreads a workload over every
         * copy, leaving none empty for whole-node replicas) one probe says so instead
         * of a gallop to max */
        if (good < 0) {
            if (max <= bad || !PROBE(max)) return -1;
            good = max;
        }
        /* then up from the hint: bad + 1, + 2, + 4, ... */
        for (long step = 1; bad + step < good && !m->failed; step *= 2) {
            if (PROBE(bad + step)) {
                good = bad + step;
                break;
            }
            bad += step;
        }
    }
    while (good - bad > 1 && !m->failed) {
        long mid = bad + (good - bad) / 2;
        if (PROBE(mid)) good = mid;
        else bad = mid;
    }
#undef PROBE
    return m->failed ? -1 : good;
}

/* ---- each workload on its own ----------------------------------------------------------- */

/* True when the pod template names an existing claim or belongs to a PodGroup: its
 * replicas reach other nodes (plan_sim.c, shares_claims). */
static bool shares_claims(const plan_workload *w) {
    const json_t *spec = json_object_get(w->tmpl, "spec");
    if (json_object_get(spec, "workloadRef")) return true;
    size_t i;
    json_t *rc;
    json_array_foreach(json_object_get(spec, "resourceClaims"), i, rc) if (json_object_get(rc, "resourceClaimName")) return true;
    return false;
}

/* alone0: each workload on its own on the base (a gang as a plain workload: what
 * matters is how many fit). */
static void measure_base(mn_search *m) {
    long *zero = xcalloc(m->ns ? m->ns : 1, sizeof *zero);
    bool *inc = xcalloc(m->nw ? m->nw : 1, sizeof *inc);
    for (size_t i = 0; i < m->nw && !m->failed; i++) {
        memset(inc, 0, m->nw * sizeof *inc);
        inc[i] = true;
        plan_workloads sub = subset(m, inc, false);
        json_t *r = run_probe(m, zero, &sub, m->o->score);
        free(sub.v);
        m->alone0[i] = r ? (long)json_integer_value(json_object_get(json_object_get(r, "summary"), "placed")) : 0;
        json_decref(r);
    }
    free(inc);
    free(zero);
}

/* cap and the causes: one copy of every shape, each workload's replicas committed on
 * each copy until one does not fit (at most the replicas left). */
static void measure_copies(mn_search *m) {
    long *ones = xcalloc(m->ns ? m->ns : 1, sizeof *ones);
    for (size_t s = 0; s < m->ns; s++) ones[s] = 1;
    if (!plan_copies_set(m->pc, ones, m->e)) {
        m->failed = true;
        free(ones);
        return;
    }
    free(ones);
    m->node_local = plan_copies_node_local(m->pc);
    dra_snapshot *snap = dra_store_acquire(m->st);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(x, m->o->device_choice);
    for (size_t i = 0; i < m->nw; i++) {
        const plan_workload *w = &m->w->v[i];
        m->exact[i] = m->node_local && !shares_claims(w) && !m->o->no_fit_cache;
        /* a pod no node can ever run: the same answer on every shape */
        json_t *pod = plan_replica_pod(w, 0);
        err pe;
        err_clear(&pe);
        dra_pod_request *pr = dra_pod_request_new(snap, pod, &pe);
        char buf[1024];
        if (!pr) snprintf(buf, sizeof buf, "the pod is invalid: %.900s", pe.msg);
        else if (dra_pod_request_error(pr)) snprintf(buf, sizeof buf, "%.1000s", dra_pod_request_error(pr));
        if (!pr || dra_pod_request_error(pr)) m->invalid[i] = xstrdup(buf);
        if (pr) dra_pod_request_free(pr);
        json_decref(pod);
        if (m->invalid[i]) continue;
        for (size_t s = 0; s < m->ns; s++) {
            const char *node = plan_copies_node(m->pc, s, 0);
            dra_overlay *ov = dra_overlay_new(snap);
            long placed = 0;
            dra_fit f = {.status = DRA_FIT_OK};
            /* up to every replica: the whole file's estimate (all_estimate) asks how
             * many a copy takes of a workload the base holds on its own too */
            for (long r = 0; r < w->replicas; r++) {
                pod = plan_replica_pod(w, r);
                err_clear(&pe);
                pr = dra_pod_request_new(snap, pod, &pe);
                if (!pr) {
                    json_decref(pod);
                    break;
                }
                dra_pod_request_check_node(pr, true);
                dra_pod_fit_overlay(pr, ov, x, node, m->o->score, 0, true, &f);
                dra_pod_request_free(pr);
                json_decref(pod);
                if (f.status != DRA_FIT_OK) break;
                placed++;
            }
            dra_overlay_free(ov);
            size_t at = mn_at(m, s, i);
            m->cap[at] = placed;
            if (!placed && mn_left(m, i) > 0) {
                dra_cause k;
                dra_fit_cause(&f, node, &k);
                m->cause[at] = xstrdup(k.text[0] ? k.text : "does not fit");
                m->reason[at] = xstrdup(f.reason);
            }
        }
    }
    dra_alloc_ctx_free(x);
    dra_snapshot_release(snap);
}

/* need and impossible, per shape and workload. */
static void per_workload(mn_search *m) {
    long *counts = xcalloc(m->ns ? m->ns : 1, sizeof *counts);
    bool *inc = xcalloc(m->nw ? m->nw : 1, sizeof *inc);
    for (size_t s = 0; s < m->ns && !m->failed; s++) {
        for (size_t i = 0; i < m->nw && !m->failed; i++) {
            size_t at = mn_at(m, s, i);
            long left = mn_left(m, i);
            if (m->invalid[i] || (left > 0 && !m->cap[at])) {
                m->impossible[at] = true;
                m->need[at] = m->need[m->ns * m->nw + at] = -1;
                continue;
            }
            if (left <= 0) {
                m->need[at] = m->need[m->ns * m->nw + at] = 0;
                continue;
            }
            long k = (left + m->cap[at] - 1) / m->cap[at];
            if (m->exact[i]) {
                m->need[at] = m->need[m->ns * m->nw + at] = k <= m->max ? k : -1;
                continue;
            }
            /* replicas that reach other nodes: searched, k only a first guess */
            memset(inc, 0, m->nw * sizeof *inc);
            inc[i] = true;
            for (int sc = 0; sc < 2; sc++) {
                memset(counts, 0, m->ns * sizeof *counts);
                m->need[sc * m->ns * m->nw + at] =
                    mn_least(m, counts, s, inc, sc ? DRA_SCORE_SPREAD : DRA_SCORE_BINPACK, 1, k, -1, m->max);
            }
        }
    }
    free(inc);
    free(counts);
}

/* ---- the whole file ----------------------------------------------------------------------- */

/* Where the whole file's search starts for shape s: the workloads together on the
 * base (gangs as plain workloads: how many fit is what counts), and for each the
 * copies its replicas left over take at cap each, added up — as if no two shared a
 * copy; at least the largest count on its own. The probes settle it. */
static long all_estimate(mn_search *m, size_t s, const bool *include, const json_t *together) {
    long lb = 0, sum = 0;
    for (size_t i = 0, k = 0; i < m->nw; i++) {
        if (!include[i]) continue;
        long n = m->need[mn_at(m, s, i)];
        if (n < 0) return m->max;   /* one of them needs more than max on its own */
        if (n > lb) lb = n;
        long cap = m->cap[mn_at(m, s, i)];
        json_int_t un = json_integer_value(json_object_get(json_array_get(json_object_get(together, "workloads"), k++), "unplaced"));
        if (un > 0 && cap > 0) sum += ((long)un + cap - 1) / cap;
    }
    long est = sum > lb ? sum : lb;
    return est < m->max ? est : m->max;
}

/* The fewest copies of shape s for the workloads it can help (include), under score. */
static long all_count(mn_search *m, size_t s, const bool *include, int sc, long hint, long known) {
    bool any = false;
    for (size_t i = 0; i < m->nw; i++) any |= include[i];
    if (!any) return 0;
    long *counts = xcalloc(m->ns ? m->ns : 1, sizeof *counts);
    long k = mn_least(m, counts, s, include, sc ? DRA_SCORE_SPREAD : DRA_SCORE_BINPACK, 0, hint, known, m->max);
    free(counts);
    return k;
}

static json_t *count_json(long n) { return n >= 0 ? json_integer(n) : json_null(); }

static json_t *impossible_json(const mn_search *m, size_t s, size_t i) {
    size_t at = mn_at(m, s, i);
    if (m->invalid[i]) return json_pack("{s:s}", "impossible", m->invalid[i]);
    return json_pack("{s:s, s:s}", "impossible", m->cause[at], "reason", m->reason[at]);
}

/* minNodes[shape] for shape s, and into all_bin[s] the binpack count of the whole file. */
static json_t *shape_json(mn_search *m, size_t s, long *all_bin, long *all_own) {
    bool *inc = xcalloc(m->nw ? m->nw : 1, sizeof *inc);
    json_t *excluded = json_array(), *per = json_object();
    for (size_t i = 0; i < m->nw; i++) {
        size_t at = mn_at(m, s, i);
        inc[i] = !m->impossible[at];
        if (m->impossible[at]) {
            json_array_append_new(excluded, json_string(m->w->v[i].name));
            json_object_set_new(per, m->w->v[i].name, impossible_json(m, s, i));
        } else {
            json_object_set_new(per, m->w->v[i].name,
                                json_pack("{s:o, s:o}", "binpack", count_json(m->need[at]), "spread",
                                          count_json(m->need[m->ns * m->nw + at])));
        }
    }
    long hint = 0, known = -1, one = -1, n = 0;
    for (size_t i = 0; i < m->nw; i++)
        if (inc[i]) n++, one = (long)i;
    long bin, spr;
    if (n == 1 && m->exact[one]) {
        /* one workload: the whole file is that workload on its own */
        bin = m->need[mn_at(m, s, (size_t)one)];
        spr = m->need[m->ns * m->nw + mn_at(m, s, (size_t)one)];
    } else {
        if (n) {
            long *zero = xcalloc(m->ns, sizeof *zero);
            plan_workloads sub = subset(m, inc, false);
            m->all_round = true;
            json_t *together = run_probe(m, zero, &sub, DRA_SCORE_BINPACK);
            m->all_round = false;
            if (together) hint = all_estimate(m, s, inc, together);
            /* everything placed, gangs as plain workloads: with them as gangs too (the
             * same sequence, nothing undone) — 0 under binpack, known */
            if (together && !json_integer_value(json_object_get(json_object_get(together, "summary"), "unplaced"))) known = 0;
            json_decref(together);
            free(sub.v);
            free(zero);
        }
        bin = m->failed ? -1 : all_count(m, s, inc, 0, hint, known);
        spr = m->failed ? -1 : all_count(m, s, inc, 1, hint, -1);
    }
    *all_bin = bin;
    *all_own = m->o->score == DRA_SCORE_SPREAD ? spr : bin;
    free(inc);
    return json_pack("{s:{s:o, s:o, s:o}, s:o, s:I}", "all", "binpack", count_json(bin), "spread", count_json(spr),
                     "excluded", excluded, "perWorkload", per, "max", (json_int_t)m->max);
}

/* ---- the buy list's breakdown ---------------------------------------------------------- */

/* Per workload of a plan: replicas on the existing nodes and on each shape's copies. */
static json_t *breakdown(const mn_search *m, const json_t *plan, const bool *include, size_t shape_for_excluded) {
    json_t *per = json_object();
    size_t i;
    json_t *wr;
    json_array_foreach(json_object_get(plan, "workloads"), i, wr) {
        const char *name = json_string_value(json_object_get(wr, "name"));
        size_t wi = 0;
        while (wi < m->nw && strcmp(m->w->v[wi].name, name)) wi++;
        if (wi == m->nw) continue;
        if (!include[wi]) {
            json_object_set_new(per, name, impossible_json(m, shape_for_excluded, wi));
            continue;
        }
        json_t *row = json_object();
        json_object_set_new(row, "existing", json_integer(0));
        for (size_t s = 0; s < m->ns; s++) json_object_set_new(row, plan_copies_shape_name(m->pc, s), json_integer(0));
        size_t k;
        json_t *p;
        json_array_foreach(json_object_get(wr, "placements"), k, p) {
            long s = plan_copies_shape_of(m->pc, json_string_value(json_object_get(p, "node")));
            const char *key = s < 0 ? "existing" : plan_copies_shape_name(m->pc, (size_t)s);
            json_object_set_new(row, key, json_integer(json_integer_value(json_object_get(row, key)) +
                                                       json_integer_value(json_object_get(p, "replicas"))));
        }
        json_object_set_new(row, "unplaced", json_incref(json_object_get(wr, "unplaced")));
        json_object_set_new(per, name, row);
    }
    return per;
}

/* ---- the whole answer ----------------------------------------------------------------------- */

json_t *plan_min_nodes(dra_store *st, const plan_objects *shapes, size_t nshapes, const double *prices,
                       const plan_workloads *w, const plan_opts *o, long max, err *e) {
    if (!nshapes) return err_set(e, "--min-nodes: no node shape"), NULL;
    mn_search m = {.st = st, .ns = nshapes, .nw = w->n, .w = w, .o = o, .max = max, .e = e};
    m.pc = plan_copies_new(st, shapes, nshapes, e);
    if (!m.pc) return NULL;
    size_t nw1 = w->n ? w->n : 1, nsw = nshapes * nw1;
    m.alone0 = xcalloc(nw1, sizeof *m.alone0);
    m.exact = xcalloc(nw1, sizeof *m.exact);
    m.invalid = xcalloc(nw1, sizeof *m.invalid);
    m.cap = xcalloc(nsw, sizeof *m.cap);
    m.cause = xcalloc(nsw, sizeof *m.cause);
    m.reason = xcalloc(nsw, sizeof *m.reason);
    m.need = xcalloc(2 * nsw, sizeof *m.need);
    m.impossible = xcalloc(nsw, sizeof *m.impossible);
    long *all_bin = xcalloc(nshapes, sizeof *all_bin), *all_own = xcalloc(nshapes, sizeof *all_own);
    long *final = xcalloc(nshapes, sizeof *final);
    bool *buy_inc = xcalloc(nw1, sizeof *buy_inc);
    json_t *out = NULL, *mn = json_object(), *buy = NULL;

    m.memo = plan_fitmemo_new();
    m.node_local = plan_copies_node_local(m.pc);
    measure_base(&m);
    if (!m.failed) measure_copies(&m);
    if (!m.failed) per_workload(&m);
    for (size_t s = 0; s < nshapes && !m.failed; s++)
        json_object_set_new(mn, plan_copies_shape_name(m.pc, s), shape_json(&m, s, &all_bin[s], &all_own[s]));
    if (m.failed) goto done;

    /* the buy list: every workload some shape helps (or the base holds) */
    json_t *excluded = json_array();
    for (size_t i = 0; i < w->n; i++) {
        for (size_t s = 0; s < nshapes; s++) buy_inc[i] |= !m.impossible[mn_at(&m, s, i)];
        if (!buy_inc[i]) json_array_append_new(excluded, json_string(w->v[i].name));
    }
    bool bought = false;
    double total = 0;
    if (prices) {
        /* a shape's own count is a mix when it leaves out no more than the buy list */
        long *single = xcalloc(nshapes, sizeof *single);
        for (size_t s = 0; s < nshapes; s++) {
            single[s] = all_bin[s];
            for (size_t i = 0; i < w->n; i++)
                if (buy_inc[i] && m.impossible[mn_at(&m, s, i)]) single[s] = -1;
        }
        bought = mn_buy(&m, prices, buy_inc, single, final, &total);
        free(single);
        if (m.failed) {
            json_decref(excluded);
            goto done;
        }
        json_t *nodes = json_object(), *pr = json_object();
        for (size_t s = 0; s < nshapes; s++) {
            if (bought) json_object_set_new(nodes, plan_copies_shape_name(m.pc, s), json_integer(final[s]));
            json_object_set_new(pr, plan_copies_shape_name(m.pc, s), json_real(prices[s]));
        }
        buy = json_pack("{s:o, s:o, s:s, s:o, s:o}", "total", bought ? json_real(total) : json_null(), "nodes", nodes,
                        "score", "binpack", "prices", pr, "excluded", excluded);
        if (!bought)
            json_object_set_new(buy, "reason", json_sprintf("no mix of at most %ld nodes of each shape places them", max));
    } else {
        json_decref(excluded);
        memset(final, 0, nshapes * sizeof *final);
        if (nshapes == 1 && all_own[0] > 0) final[0] = all_own[0];
    }

    /* the plan printed: the cluster with the answer's copies */
    if (!plan_copies_set(m.pc, final, e)) goto done;
    m.node_local = plan_copies_node_local(m.pc);
    plan_opts fo = *o;
    fo.memo = m.memo;
    out = plan_run_store(st, w, &fo, m.node_local, e);
    if (!out) goto done;
    if (buy && bought) {
        json_t *per;
        if (o->score == DRA_SCORE_BINPACK) {
            per = breakdown(&m, out, buy_inc, 0);
        } else {   /* the buy list is binpack's: its breakdown too */
            bool *every = xcalloc(nw1, sizeof *every);
            for (size_t i = 0; i < w->n; i++) every[i] = true;
            plan_workloads sub = subset(&m, every, true);
            json_t *r = run_probe(&m, final, &sub, DRA_SCORE_BINPACK);
            per = r ? breakdown(&m, r, buy_inc, 0) : json_object();
            json_decref(r);
            free(sub.v);
            free(every);
        }
        json_object_set_new(buy, "perWorkload", per);
    }
    json_t *added = json_object();
    for (size_t s = 0; s < nshapes; s++)
        if (final[s]) json_object_set_new(added, plan_copies_shape_name(m.pc, s), json_integer(final[s]));
    json_object_set_new(out, "addedNodes", added);
    json_object_set(out, "minNodes", mn);
    if (buy) json_object_set(out, "buy", buy);
    if (o->timings) o->timings->probes += m.probes;
done:
    json_decref(mn);
    json_decref(buy);
    for (size_t i = 0; i < nsw; i++) free(m.cause[i]), free(m.reason[i]);
    for (size_t i = 0; i < nw1; i++) free(m.invalid[i]);
    free(m.alone0);
    free(m.exact);
    free(m.invalid);
    free(m.cap);
    free(m.cause);
    free(m.reason);
    free(m.need);
    free(m.impossible);
    free(all_bin);
    free(all_own);
    free(final);
    free(buy_inc);
    plan_copies_free(m.pc);
    plan_fitmemo_free(m.memo);
    return out;
}
