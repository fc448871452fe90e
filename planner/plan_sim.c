/* plan_sim.c — the simulation behind `dralloc plan`: replicas placed one at a time
 * as kube-scheduler places pods. For each replica the pod is resolved against the
 * snapshot (templates instantiated per pod, whole-pod node checks on), every node
 * is tried on the overlay without committing, the best score wins (binpack or
 * spread; ties by node name, or by a seeded shuffle), and the winner is committed.
 *
 * Every committed placement's node is logged, for the placements per node. A gang that does not fit entirely is undone by going back to
 * a copy of the overlay taken before it (dra_overlay_copy: copy-on-write, so it costs
 * what the gang changes), and the headroom search counts on a throwaway copy.
 *
 * Identical replicas see identical state, so once a replica fits nowhere the rest
 * of its workload cannot fit either: they are counted unplaced without trying.
 * For the same reason, when every device is node-local (each ResourceSlice has
 * spec.nodeName) and the pod shares no claim with other pods, a commit changes
 * only the node it lands on: the other nodes' fit and score for the next replica
 * are those of the previous one, so only that node is fitted again (the fit cache;
 * O(1) fits per replica instead of one per node). */
#include "planner/planner.h"

#include "engine/causes.h"
#include "planner/plan_fitmemo.h"
#include "planner/plan_rank.h"
#include "planner/plan_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim {
    dra_snapshot *s;
    dra_overlay *ov;
    dra_alloc_ctx *x;
    const plan_opts *o;
    const plan_workloads *wl;
    size_t nnodes;
    const char **nodes;      /* name order (the snapshot's) */
    uint64_t *tie;           /* per node: smaller wins a score tie */
    uint32_t *log;           /* the node of each committed placement, in order */
    size_t nlog, caplog;
    size_t done, total;      /* replicas decided, for progress */
    bool cacheable;          /* every device node-local: the fit cache may be used */
    bool cache_on;           /* ... and it is, for the current workload */
    plan_rank *rank;         /* the fit cache: the current workload's pods' fit per node */
    size_t *scan_idx;        /* per node: the nodes one scan decides, and their answers */
    plan_scan_answer *scan_out;
    plan_scan_cost scan_cost;   /* what its scans measured: one thread or two */
    plan_fitmemo *memo;      /* o->memo while it may be used: NULL once a commit may have
                              * reached past its node (a workload outside the fit cache) */
    uint64_t *node_key;      /* with memo: per node, its name as the memo's key */
    uint64_t *hist;          /* with memo: per node, the workloads committed to it, in order */
    uint64_t wkey;           /* with memo: the current workload's key */
} sim;

static uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Keyed by the node's name, not its index, so adding nodes does not reshuffle the
 * ties among the others. */
static uint64_t name_key(const char *s, uint64_t seed) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return mix64(h ^ mix64(seed));
}

void plan_opts_default(plan_opts *o) {
    memset(o, 0, sizeof *o);
    dra_features_default(&o->features);
    o->score = DRA_SCORE_BINPACK;
    o->headroom_max = 1000;
    o->stranded = true;
}

json_t *plan_replica_pod(const plan_workload *w, long rep) {
    json_t *pod = json_object();
    json_object_set_new(pod, "apiVersion", json_string("v1"));
    json_object_set_new(pod, "kind", json_string("Pod"));
    const json_t *tm = json_object_get(w->tmpl, "metadata");
    json_t *meta = json_is_object(tm) ? json_deep_copy(tm) : json_object();
    char name[512];
    snprintf(name, sizeof name, "%s-%ld", w->name, rep);
    json_object_set_new(meta, "name", json_string(name));
    json_object_del(meta, "generateName");
    if (!json_string_value(json_object_get(meta, "namespace"))) json_object_set_new(meta, "namespace", json_string("default"));
    char uid[600];
    snprintf(uid, sizeof uid, "plan-%s-%s", json_string_value(json_object_get(meta, "namespace")), name);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(pod, "metadata", meta);
    /* the spec is shared, not copied: nothing edits it */
    json_object_set(pod, "spec", json_object_get(w->tmpl, "spec"));
    return pod;
}

/* A replica's pod request with whole-pod checks on; NULL with the reason in buf
 * when the pod cannot be scheduled anywhere. *pod_out keeps the JSON alive as long
 * as the request. */
static dra_pod_request *replica_request(sim *m, size_t wi, long rep, json_t **pod_out, char *buf, size_t n) {
    json_t *pod = plan_replica_pod(&m->wl->v[wi], rep);
    err e;
    err_clear(&e);
    dra_pod_request *pr = dra_pod_request_new(m->s, pod, &e);
    if (!pr) {
        char eb[1500];
        snprintf(buf, n, "pod %s-%ld is invalid: %s", m->wl->v[wi].name, rep, err_format(&e, eb, sizeof eb));
        json_decref(pod);
        return NULL;
    }
    const char *fatal = dra_pod_request_error(pr);
    if (fatal) {
        snprintf(buf, n, "%s", fatal);
        dra_pod_request_free(pr);
        json_decref(pod);
        return NULL;
    }
    dra_pod_request_check_node(pr, true);
    *pod_out = pod;
    return pr;
}

/* Why a replica fits nowhere. */
typedef struct why {
    dra_causes *causes;
    size_t count[DRA_FIT_ERROR + 1];   /* nodes by status */
    bool unfittable;                   /* no node could take one even with nothing in use */
} why;

enum { CLOSEST_SHOWN = 3 };

/* Every node decided again for the explanation (a node the fit cache skipped carries
 * no reason; the overlay's memo answers most of them). */
static void explain_nowhere(sim *m, dra_pod_request *pr, why *y) {
    y->causes = dra_causes_new();
    dra_fit f;
    /* nodes where no device matches the pod's requests: matching does not depend on
     * what is allocated, so they cannot take one even empty */
    uint8_t *maybe = xcalloc(m->nnodes ? m->nnodes : 1, 1);
    for (size_t i = 0; i < m->nnodes; i++) {
        dra_pod_fit_overlay(pr, m->ov, m->x, m->nodes[i], m->o->score, 0, false, &f);
        if (f.status == DRA_FIT_OK) continue;   /* not expected: the caller found no node */
        y->count[f.status <= DRA_FIT_ERROR ? f.status : DRA_FIT_ERROR]++;
        dra_causes_add(y->causes, m->nodes[i], &f);
        dra_cause k;
        dra_fit_cause(&f, m->nodes[i], &k);
        maybe[i] = k.matching != 0 && f.status != DRA_FIT_ERROR;
    }
    /* even empty? The snapshot's fit tells unresolvable (fails with nothing in use and
     * no pod bound) from unschedulable; one node that is not settles it */
    y->unfittable = true;
    for (size_t i = 0; i < m->nnodes && y->unfittable; i++) {
        if (!maybe[i]) continue;
        dra_pod_fit(pr, m->x, m->nodes[i], NULL, DRA_SCORE_NONE, 0, &f);
        y->unfittable = f.status == DRA_FIT_UNRESOLVABLE || f.status == DRA_FIT_ERROR;
    }
    free(maybe);
}

/* kube-scheduler's count by cause, then the closest nodes' own reasons:
 * "0/4 nodes are available: 4 devices of class X held by claims. Closest: node-0 (2
 * devices missing): cannot allocate all claims: ..." */
static void why_format(const why *y, size_t nnodes, char *buf, size_t n) {
    size_t len = dra_causes_summary(y->causes, nnodes, buf, n);
    if (!nnodes && len < n) len += (size_t)snprintf(buf + len, n - len, " (no nodes)");
    json_t *cl = dra_causes_closest(y->causes, CLOSEST_SHOWN);
    size_t i;
    json_t *c;
    json_array_foreach(cl, i, c) {
        if (len >= n) break;
        json_int_t miss = json_integer_value(json_object_get(c, "missing"));
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "; " : " Closest: ",
                                json_string_value(json_object_get(c, "node")));
        if (len < n && json_object_get(c, "missing"))
            len += (size_t)snprintf(buf + len, n - len, " (%lld device%s missing)", (long long)miss, miss == 1 ? "" : "s");
        if (len < n) len += (size_t)snprintf(buf + len, n - len, ": %s", json_string_value(json_object_get(c, "reason")));
    }
    json_decref(cl);
}

/* A gang that did not fit, explained on the state before it (its own tentative
 * replicas undone): the nodes that could take one of its replicas (what the gang can
 * use, *fit) and, for the others, the count by cause — the devices the gang itself
 * held are not a cause of its shortfall. False when the replica is not a request
 * (the caller keeps its own reason). */
static bool gang_shortfall(sim *m, size_t wi, long rep, size_t *fit, dra_causes **causes) {
    char buf[512];
    json_t *pod = NULL;
    dra_pod_request *pr = replica_request(m, wi, rep, &pod, buf, sizeof buf);
    if (!pr) return false;
    *causes = dra_causes_new();
    *fit = 0;
    dra_fit f;
    for (size_t i = 0; i < m->nnodes; i++) {
        dra_pod_fit_overlay(pr, m->ov, m->x, m->nodes[i], m->o->score, 0, false, &f);
        if (f.status == DRA_FIT_OK) (*fit)++;
        else dra_causes_add(*causes, m->nodes[i], &f);
    }
    dra_pod_request_free(pr);
    json_decref(pod);
    return true;
}

static void log_push(sim *m, size_t node) {
    if (m->nlog == m->caplog) m->log = xrealloc(m->log, (m->caplog = m->caplog ? m->caplog * 2 : 256) * sizeof *m->log);
    m->log[m->nlog++] = (uint32_t)node;
}

/* Places one replica on the best node and commits it. Returns the node index, or -1
 * with the reason in buf (*fatal: no node can ever take this pod). */
static long place_replica(sim *m, size_t wi, long rep, char *buf, size_t n, bool *fatal, json_t *detail) {
    json_t *pod = NULL;
    *fatal = false;
    dra_pod_request *pr = replica_request(m, wi, rep, &pod, buf, n);
    if (!pr) {
        *fatal = true;
        json_object_set_new(detail, "unfittable", json_true());
        return -1;
    }
    long best = -1;
    dra_fit f;
    bool cache = m->cache_on;
    if (cache) {
        size_t i, k = 0;
        while (plan_rank_take_unknown(m->rank, &i)) {
            bool fits;
            int64_t score;
            if (m->memo && plan_fitmemo_get(m->memo, m->wkey, (int)m->o->score, m->node_key[i], m->hist[i], &fits, &score))
                plan_rank_set(m->rank, i, fits, score);   /* decided in an earlier run, same node state */
            else
                m->scan_idx[k++] = i;
        }
        plan_scan(pr, m->ov, m->x, m->o->score, m->nodes, m->scan_idx, k, m->o->one_thread, m->scan_out, &m->scan_cost);
        for (size_t j = 0; j < k; j++) {
            size_t nd = m->scan_idx[j];
            plan_rank_set(m->rank, nd, m->scan_out[j].fits, m->scan_out[j].score);
            if (m->memo)
                plan_fitmemo_put(m->memo, m->wkey, (int)m->o->score, m->node_key[nd], m->hist[nd], m->scan_out[j].fits,
                                 m->scan_out[j].score);
        }
        best = plan_rank_best(m->rank);
    } else {
        for (size_t i = 0; i < m->nnodes; i++) m->scan_idx[i] = i;
        plan_scan(pr, m->ov, m->x, m->o->score, m->nodes, m->scan_idx, m->nnodes, m->o->one_thread, m->scan_out, &m->scan_cost);
        int64_t best_score = 0;
        for (size_t i = 0; i < m->nnodes; i++) {
            const plan_scan_answer *a = &m->scan_out[i];
            if (!a->fits) continue;
            if (best < 0 || a->score > best_score || (a->score == best_score && m->tie[i] < m->tie[best])) {
                best = (long)i;
                best_score = a->score;
            }
        }
    }
    if (best >= 0) {
        dra_pod_fit_overlay(pr, m->ov, m->x, m->nodes[best], m->o->score, 0, true, &f);
        if (cache) plan_rank_forget(m->rank, (size_t)best);   /* the one node whose state changed */
        if (f.status == DRA_FIT_OK) {
            log_push(m, (size_t)best);
            if (m->memo && !cache) m->memo = NULL;   /* its commit may reach other nodes' state */
            if (m->memo) m->hist[best] = plan_fitmemo_history(m->hist[best], m->wkey);
        } else {   /* the engine contradicted itself; say so rather than place it */
            snprintf(buf, n, "node %s: fit without commit, then %s on commit: %s", m->nodes[best],
                     dra_fit_status_name(f.status), f.reason);
            best = -1;
        }
    } else if (m->o->probe) {
        snprintf(buf, n, "fits no node");   /* a probe asks only whether all fit */
    } else {
        why y;
        memset(&y, 0, sizeof y);
        explain_nowhere(m, pr, &y);
        why_format(&y, m->nnodes, buf, n);
        *fatal = !y.count[DRA_FIT_UNSCHEDULABLE] && !y.count[DRA_FIT_TIMEOUT];
        json_object_set_new(detail, "causes", dra_causes_json(y.causes));
        json_object_set_new(detail, "closest", dra_causes_closest(y.causes, CLOSEST_SHOWN));
        json_object_set_new(detail, "unfittable", json_boolean(y.unfittable));
        dra_causes_free(y.causes);
    }
    dra_pod_request_free(pr);
    json_decref(pod);
    return best;
}

static void progress(sim *m, size_t k) {
    m->done += k;
    if (m->o->progress) m->o->progress(m->o->progress_arg, m->done, m->total);
}

/* A reason as a JSON string. snprintf may have cut a multi-byte character in half
 * and jansson refuses invalid UTF-8: then the non-ASCII bytes become '?'. */
static json_t *text_json(char *s) {
    json_t *j = json_string(s);
    if (j) return j;
    for (char *p = s; *p; p++)
        if ((unsigned char)*p >= 0x80) *p = '?';
    return json_string(s);
}

/* True when the pod template names an existing claim (shared with other pods: its
 * allocation pins every user, so one commit changes what fits on other nodes) or
 * belongs to a PodGroup (claims shared through the group). */
static bool shares_claims(const plan_workload *w) {
    const json_t *spec = json_object_get(w->tmpl, "spec");
    if (json_object_get(spec, "workloadRef")) return true;
    size_t i;
    json_t *rc;
    json_array_foreach(json_object_get(spec, "resourceClaims"), i, rc) if (json_object_get(rc, "resourceClaimName")) return true;
    return false;
}

/* One workload: its replicas in order. Returns its result object (headroom later). */
static json_t *run_workload(sim *m, size_t wi, size_t *counts) {
    const plan_workload *w = &m->wl->v[wi];
    size_t start = m->nlog;
    m->cache_on = m->cacheable && !shares_claims(w);
    /* a gang is all or nothing: the state before it, to go back to */
    dra_overlay *before = w->gang ? dra_overlay_copy(m->ov) : NULL;
    uint64_t *hist_before = NULL;
    if (m->memo) {
        m->wkey = plan_fitmemo_workload_key(w);
        if (w->gang) {
            hist_before = xmalloc((m->nnodes ? m->nnodes : 1) * sizeof *m->hist);
            memcpy(hist_before, m->hist, m->nnodes * sizeof *m->hist);
        }
    }
    if (m->cache_on) plan_rank_reset(m->rank);
    long placed = 0;
    char reason[8192];
    reason[0] = '\0';
    bool fatal = false, failed = false;
    json_t *detail = json_object();   /* causes, closest, unfittable of the replica that fit nowhere */
    for (long r = 0; r < w->replicas; r++) {
        if (place_replica(m, wi, r, reason, sizeof reason, &fatal, detail) < 0) {
            failed = true;
            progress(m, (size_t)(w->replicas - r));
            break;
        }
        placed++;
        progress(m, 1);
    }
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(w->name));
    json_object_set_new(o, "replicas", json_integer(w->replicas));
    if (w->gang) json_object_set_new(o, "gang", json_true());
    char msg[sizeof reason + 512];
    msg[0] = '\0';
    if (failed && w->gang) {
        /* all or nothing: forget this workload's placements */
        long fitted = placed;
        snprintf(msg, sizeof msg, "%s (gang: replica %s-%ld does not fit; %ld of %ld fitted, none placed)", reason,
                 w->name, placed, placed, w->replicas);
        if (placed) {
            m->nlog = start;
            dra_overlay_free(m->ov);
            m->ov = before;
            before = NULL;
            placed = 0;
            if (m->memo && hist_before) memcpy(m->hist, hist_before, m->nnodes * sizeof *m->hist);
        }
        /* the shortfall, stated: replicas short, and the causes on the state without
         * the gang's own tentative replicas (they held the devices the last one lacked) */
        long short_by = w->replicas - fitted;
        json_object_set_new(o, "short", json_pack("{s:I, s:I}", "replicas", (json_int_t)short_by, "fitted",
                                                  (json_int_t)fitted));
        size_t nfit = 0;
        dra_causes *gc = NULL;
        if (fitted > 0 && !fatal && gang_shortfall(m, wi, fitted, &nfit, &gc)) {
            char sum[4096] = "";
            if (nfit < m->nnodes) {
                size_t l = (size_t)snprintf(sum, sizeof sum, "; without the gang's own replicas, ");
                dra_causes_summary_others(gc, nfit, m->nnodes, sum + l, sizeof sum - l);
            }
            snprintf(msg, sizeof msg, "gang %ld replica%s short: %ld of %ld fit, none placed (all or nothing)%s", short_by,
                     short_by == 1 ? "" : "s", fitted, w->replicas, sum);
            json_object_set_new(detail, "causes", dra_causes_json(gc));
            json_object_set_new(detail, "closest", dra_causes_closest(gc, CLOSEST_SHOWN));
            dra_causes_free(gc);
        } else {
            char head[160];
            snprintf(head, sizeof head, "gang %ld replica%s short: ", short_by, short_by == 1 ? "" : "s");
            size_t hl = strlen(head);
            if (hl + strlen(msg) < sizeof msg) {
                memmove(msg + hl, msg, strlen(msg) + 1);
                memcpy(msg, head, hl);
            }
        }
    } else if (failed) {
        snprintf(msg, sizeof msg, "%s (replica %s-%ld)", reason, w->name, placed);
    }
    dra_overlay_free(before);
    free(hist_before);
    json_object_set_new(o, "placed", json_integer(placed));
    json_object_set_new(o, "unplaced", json_integer(w->replicas - placed));
    if (failed) {
        json_object_set_new(o, "reason", text_json(msg));
        json_object_update(o, detail);
    }
    json_decref(detail);
    if (fatal) json_object_set_new(o, "fatal", json_true());
    /* placements per node, nodes in the order they were first used */
    json_t *pl = json_array();
    for (size_t i = start; i < m->nlog; i++) counts[m->log[i]]++;
    for (size_t i = start; i < m->nlog; i++) {
        size_t nd = m->log[i];
        if (!counts[nd]) continue;
        json_t *p = json_object();
        json_object_set_new(p, "node", json_string(m->nodes[nd]));
        json_object_set_new(p, "replicas", json_integer((json_int_t)counts[nd]));
        json_array_append_new(pl, p);
        counts[nd] = 0;
    }
    json_object_set_new(o, "placements", pl);
    return o;
}

/* How many more replicas of workload wi fit after everything was placed: a
 * throwaway copy of the plan's overlay, then node by node (name order) as many
 * as each takes, at most o->headroom_max. First-fit rather than scored: the count is
 * what matters, and it costs one failed fit per node instead of one per node per
 * replica. */
/* A workload with a replica that fit nowhere has no headroom: the plan only added
 * allocations after it (a gang that did not fit is undone), so no node has more room. */
static bool headroom_known_zero(const json_t *res) {
    return json_is_true(json_object_get(res, "fatal")) || json_integer_value(json_object_get(res, "unplaced")) > 0;
}

static void headroom(sim *m, size_t wi, json_t *res, bool last) {
    const plan_workload *w = &m->wl->v[wi];
    if (headroom_known_zero(res)) {
        json_object_set_new(res, "headroom", json_integer(0));
        return;
    }
    /* the last search may use up the plan's own overlay: nothing reads it after */
    dra_overlay *ov = last ? m->ov : dra_overlay_copy(m->ov);
    long more = 0, rep = w->replicas;
    char buf[512];
    for (size_t i = 0; i < m->nnodes && more < m->o->headroom_max; i++) {
        while (more < m->o->headroom_max) {
            json_t *pod = NULL;
            dra_pod_request *pr = replica_request(m, wi, rep, &pod, buf, sizeof buf);
            if (!pr) break;
            dra_fit f;
            dra_pod_fit_overlay(pr, ov, m->x, m->nodes[i], m->o->score, 0, true, &f);
            dra_pod_request_free(pr);
            json_decref(pod);
            if (f.status != DRA_FIT_OK) break;
            more++, rep++;
        }
    }
    if (!last) dra_overlay_free(ov);
    json_object_set_new(res, "headroom", json_integer(more));
    if (more >= m->o->headroom_max) json_object_set_new(res, "headroomCapped", json_true());
}

static json_int_t jint(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* Stranded devices: free (allocatable now) devices no replica of any workload could
 * use. On a node where not one more replica of any workload fits, all its free devices;
 * elsewhere, the free devices of DeviceClasses none of the workloads that fit there asks
 * for (a NIC nobody requests beside the GPUs a replica takes). By class counts: exact
 * when a node's classes do not overlap; where a device matches two classes it counts
 * as usable (never stranded twice). A request's selectors beyond its class are not
 * looked at: a device of the class counts as usable. */
static void stranded(sim *m, json_t *nodes_json, json_int_t *total) {
    size_t nw = m->wl->n;
    dra_pod_request **prs = xcalloc(nw ? nw : 1, sizeof *prs);
    json_t **pods = xcalloc(nw ? nw : 1, sizeof *pods), **wants = xcalloc(nw ? nw : 1, sizeof *wants);
    char buf[512];
    for (size_t wi = 0; wi < nw; wi++) {
        prs[wi] = replica_request(m, wi, m->wl->v[wi].replicas, &pods[wi], buf, sizeof buf);
        wants[wi] = prs[wi] ? dra_pod_request_classes(prs[wi]) : json_object();
    }
    size_t i;
    json_t *nj;
    *total = 0;
    /* every workload's fit on each node with free devices, a scan per workload */
    size_t nrows = json_array_size(nodes_json), nidx = 0;
    const char **names = xcalloc(nrows ? nrows : 1, sizeof *names);
    size_t *idx = xcalloc(nrows ? nrows : 1, sizeof *idx);
    json_array_foreach(nodes_json, i, nj) {
        names[i] = json_string_value(json_object_get(nj, "name"));
        if (names[i] && jint(nj, "free") > 0) idx[nidx++] = i;
    }
    size_t nfit = nw * nidx;
    plan_scan_answer *fit = xcalloc(nfit ? nfit : 1, sizeof *fit);
    for (size_t wi = 0; wi < nw; wi++)
        if (prs[wi]) plan_scan(prs[wi], m->ov, m->x, m->o->score, names, idx, nidx, m->o->one_thread, fit + wi * nidx,
                                  &m->scan_cost);
    json_t *usable_classes = json_object();
    for (size_t k = 0; k < nidx; k++) {
        nj = json_array_get(nodes_json, idx[k]);
        json_int_t free_devs = jint(nj, "free");
        bool fits = false;
        json_object_clear(usable_classes);
        for (size_t wi = 0; wi < nw; wi++) {
            if (!prs[wi] || !fit[wi * nidx + k].fits) continue;
            fits = true;
            json_object_update(usable_classes, wants[wi]);
        }
        json_int_t usable = 0;
        if (fits) {
            size_t k;
            json_t *c;
            json_array_foreach(json_object_get(nj, "classes"), k, c)
                if (json_object_get(usable_classes, json_string_value(json_object_get(c, "name")))) usable += jint(c, "free");
        }
        json_int_t st = free_devs - (usable < free_devs ? usable : free_devs);
        json_object_set_new(nj, "stranded", json_integer(st));
        *total += st;
    }
    /* the rows not scanned: no free device (or no name) — nothing fits there */
    json_array_foreach(nodes_json, i, nj) {
        if (json_object_get(nj, "stranded")) continue;
        json_object_set_new(nj, "stranded", json_integer(jint(nj, "free")));
        *total += jint(nj, "free");
    }
    free(fit);
    free(idx);
    free(names);
    json_decref(usable_classes);
    for (size_t wi = 0; wi < nw; wi++) {
        if (prs[wi]) dra_pod_request_free(prs[wi]);
        json_decref(pods[wi]);
        json_decref(wants[wi]);
    }
    free(prs);
    free(pods);
    free(wants);
}

static void sim_free(sim *m) {
    free(m->node_key);
    free(m->hist);
    free(m->log);
    free(m->tie);
    plan_rank_free(m->rank);
    free(m->scan_idx);
    free(m->scan_out);
    free(m->nodes);
    dra_alloc_ctx_free(m->x);
    dra_overlay_free(m->ov);
    dra_snapshot_release(m->s);
}

static json_t *run_store(dra_store *st, const plan_workloads *w, const plan_opts *o, bool node_local, err *e) {
    sim m = {.o = o, .wl = w, .cacheable = node_local};
    m.s = dra_store_acquire(st);
    if (!m.s) {
        err_set(e, "the store has no snapshot");
        return NULL;
    }
    m.ov = dra_overlay_new(m.s);
    m.x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(m.x, o->device_choice);
    m.nnodes = dra_snapshot_nnodes(m.s);
    m.nodes = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *m.nodes);
    m.tie = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *m.tie);
    for (size_t i = 0; i < m.nnodes; i++) {
        m.nodes[i] = dra_snapshot_node_name(m.s, i);
        m.tie[i] = o->seeded ? name_key(m.nodes[i], o->seed) : i;
    }
    m.rank = plan_rank_new(m.nnodes, m.tie);
    if (o->memo && node_local) {
        m.memo = o->memo;
        m.node_key = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *m.node_key);
        m.hist = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *m.hist);
        for (size_t i = 0; i < m.nnodes; i++) m.node_key[i] = plan_fitmemo_node_key(m.nodes[i]);
    }
    m.scan_idx = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *m.scan_idx);
    m.scan_out = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *m.scan_out);
    for (size_t i = 0; i < w->n; i++) m.total += (size_t)w->v[i].replicas;
    size_t *counts = xcalloc(m.nnodes ? m.nnodes : 1, sizeof *counts);

    uint64_t t0 = dra_monotonic_ns();
    json_t *results = json_array();
    json_int_t placed = 0, unplaced = 0, replicas = 0;
    for (size_t i = 0; i < w->n; i++) {
        json_t *r = unplaced && o->probe && !o->probe_all ? json_pack("{s:s, s:I, s:I, s:I}", "name", w->v[i].name, "replicas",
                                                     (json_int_t)w->v[i].replicas, "placed", (json_int_t)0, "unplaced",
                                                     (json_int_t)w->v[i].replicas)
                                         : run_workload(&m, i, counts);
        placed += jint(r, "placed");
        unplaced += jint(r, "unplaced");
        replicas += jint(r, "replicas");
        json_array_append_new(results, r);
    }
    size_t i;
    json_t *r;
    uint64_t t1 = dra_monotonic_ns();
    if (o->probe) {   /* the answer is the counts: nothing else is read */
        json_t *out = json_pack("{s:o, s:{s:I, s:I, s:I}}", "workloads", results, "summary", "replicas", replicas,
                                "placed", placed, "unplaced", unplaced);
        if (o->timings) o->timings->place_ns += t1 - t0;
        free(counts);
        sim_free(&m);
        return out;
    }
    json_t *cap = dra_capacity_json_parts(m.s, m.ov, o->no_counters ? 0 : DRA_CAPACITY_ALL);
    json_t *out = json_object();
    json_object_set_new(out, "workloads", results);
    static const char *const parts[] = {"nodes", "pools", "classes", "shapes", "counters"};
    for (size_t k = 0; k < ARRAY_SIZE(parts); k++) {
        json_t *v = json_object_get(cap, parts[k]);
        if (v) json_object_set(out, parts[k], v);
    }
    json_int_t strand = 0;
    /* with no workload there is nothing to strand devices against */
    if (o->stranded && w->n) stranded(&m, json_object_get(out, "nodes"), &strand);
    json_t *sum = json_object();
    /* every device once: pools (a device of a pool seen by several nodes is in no node's row) */
    json_int_t devs = 0, alloc = 0, fr = 0, bc = 0, bt = 0, unus = 0;
    json_t *nj;
    json_array_foreach(json_object_get(out, "pools"), i, nj) {
        devs += jint(nj, "devices");
        alloc += jint(nj, "allocated");
        fr += jint(nj, "free");
        bc += jint(json_object_get(nj, "blocked"), "counters");
        bt += jint(json_object_get(nj, "blocked"), "taints");
        unus += jint(nj, "unusable");
    }
    json_object_set_new(sum, "nodes", json_integer((json_int_t)m.nnodes));
    json_object_set_new(sum, "score", json_string(o->score == DRA_SCORE_SPREAD ? "spread" : "binpack"));
    if (o->device_choice != DRA_CHOICE_FIRST_FIT)   /* first-fit plans print as they always did */
        json_object_set_new(sum, "deviceChoice", json_string(dra_device_choice_name(o->device_choice)));
    json_object_set_new(sum, "replicas", json_integer(replicas));
    json_object_set_new(sum, "placed", json_integer(placed));
    json_object_set_new(sum, "unplaced", json_integer(unplaced));
    json_object_set_new(sum, "devices", json_integer(devs));
    json_object_set_new(sum, "allocated", json_integer(alloc));
    json_object_set_new(sum, "free", json_integer(fr));
    json_object_set_new(sum, "blocked", json_pack("{s:I, s:I}", "counters", bc, "taints", bt));
    if (unus) json_object_set_new(sum, "unusable", json_integer(unus));
    if (o->stranded && w->n) json_object_set_new(sum, "stranded", json_integer(strand));
    json_object_set_new(out, "summary", sum);
    json_decref(cap);
    /* after the capacity view and stranded devices, which read the plan's overlay */
    if (o->headroom_max > 0) {
        /* the last search may use the plan's own overlay: the last one that searches */
        size_t last = 0;
        json_array_foreach(results, i, r) if (!headroom_known_zero(r)) last = i;
        json_array_foreach(results, i, r) headroom(&m, i, r, i == last);
    }
    json_array_foreach(results, i, r) json_object_del(r, "fatal");
    if (o->timings) o->timings->place_ns += t1 - t0, o->timings->account_ns += dra_monotonic_ns() - t1;

    free(counts);
    sim_free(&m);
    return out;
}

json_t *plan_run_store(dra_store *st, const plan_workloads *w, const plan_opts *o, bool node_local, err *e) {
    return run_store(st, w, o, node_local && !o->no_fit_cache, e);
}

/* Every ResourceSlice bound to one node (spec.nodeName): no device is visible from
 * two nodes, so a commit cannot change what fits elsewhere. */
bool plan_objects_node_local(const plan_objects *objects) {
    size_t i;
    json_t *x;
    json_array_foreach(objects->items, i, x) {
        const char *k = json_string_value(json_object_get(x, "kind"));
        if (!k || strcmp(k, "ResourceSlice")) continue;
        const char *nn = json_string_value(json_object_get(json_object_get(x, "spec"), "nodeName"));
        if (!nn || !*nn) return false;
    }
    return true;
}

json_t *plan_run(const plan_objects *objects, const plan_workloads *w, const plan_opts *o, err *e) {
    uint64_t t0 = dra_monotonic_ns();
    dra_store *st = plan_store_new(objects, &o->features, e);
    if (o->timings) o->timings->store_ns += dra_monotonic_ns() - t0;
    if (!st) return NULL;
    json_t *out = run_store(st, w, o, plan_objects_node_local(objects) && !o->no_fit_cache, e);
    dra_store_free(st);
    return out;
}
