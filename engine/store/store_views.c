/* store_views.c — what a snapshot answers per node, built at first use and handed on
 * to later snapshots while their inputs stay (store.c says when they go): the node
 * views (dra__snapshot_view) and the fit memo (dra__memo_get/put, reasons kept as
 * templates over the pod's names). */

#include "engine/store/store_layout.h"

#include "base/hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- node views ------------------------------------------------------------------------------ */

/* The slot of a node in s's table, or NULL: without a lock (view_table). */
static view_slot *slot_of(const dra_snapshot *s, const char *name, uint64_t h) {
    const view_table *t = atomic_load_explicit(&((dra_snapshot *)s)->vtab, memory_order_acquire);
    if (!t) return NULL;
    for (uint32_t mask = t->cap - 1, i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        view_slot *v = atomic_load_explicit((_Atomic(view_slot *) *)&t->at[i], memory_order_acquire);
        if (!v) return NULL;
        if (v->hash == h && !strcmp(v->cell->name, name)) return v;
    }
}

/* v placed in t's first empty place from its hash (t has room). Under views_lock. */
static void table_place(view_table *t, view_slot *v) {
    uint32_t mask = t->cap - 1, i = (uint32_t)v->hash & mask;
    while (atomic_load_explicit(&t->at[i], memory_order_relaxed)) i = (i + 1) & mask;
    atomic_store_explicit(&t->at[i], v, memory_order_release);
    t->n++;
}

/* s's table with room for one more slot: itself, or a table twice its size with its
 * slots, published in its place (the old one retired). Under views_lock. */
static view_table *table_room(dra_snapshot *s) {
    view_table *t = atomic_load_explicit(&s->vtab, memory_order_relaxed);
    if (t && (t->n + 1) * 2 <= t->cap) return t;
    uint32_t cap = t ? t->cap * 2 : 64;
    view_table *g = xcalloc(1, sizeof *g + cap * sizeof g->at[0]);
    g->cap = cap;
    for (uint32_t i = 0; t && i < t->cap; i++) {
        view_slot *v = atomic_load_explicit(&t->at[i], memory_order_relaxed);
        if (v) table_place(g, v);
    }
    g->retired = t;
    atomic_store_explicit(&s->vtab, g, memory_order_release);
    return g;
}

/* A slot for cell in s's table (another thread may have put one first: that one
 * wins, and a cell made here for nothing is released). Under views_lock. */
static view_slot *slot_add(dra_snapshot *s, uint64_t h, vcell *cell, bool made_here) {
    view_slot *v = slot_of(s, cell->name, h);
    if (v) {
        if (made_here) dra__store_vcell_release(cell);
        return v;
    }
    v = ARENA_NEW(&s->vmem, view_slot);
    v->cell = cell;
    v->hash = h;
    v->made_here = made_here;
    if (made_here && cell->bare) s->nbare++;
    v->node = cell->bare ? cell->bare : dra_world_find_node(s->w, cell->name);
    if (!cell->view) v->view = NULL;
    else if (made_here) v->view = cell->view;
    else {
        /* the view's pools and candidates, seen from this snapshot's world and node */
        dra_nodeview *h2 = arena_memdup(&s->vmem, cell->view, sizeof *cell->view);
        h2->base = cell->view;
        h2->w = s->w;
        h2->node = v->node;
        v->view = h2;
    }
    DRA_VEC_PUSH(s->vslots, v);
    table_place(table_room(s), v);   /* published last: the slot is whole before */
    return v;
}

size_t dra_snapshot_cached_views(dra_snapshot *s, size_t *bare) {
    pthread_mutex_lock(&s->views_lock);
    size_t n = s->vslots.n;
    if (bare) *bare = s->nbare;
    pthread_mutex_unlock(&s->views_lock);
    return n;
}

/* The view of a node (by name; a node without a Node object is seen bare): this
 * snapshot's, an earlier snapshot's still valid here, or built now. *errmsg is set
 * when gathering pools failed. Past BARE_VIEWS_MAX, a bare node's view is built in
 * *owned for the caller to free (its node and message in a). */
const dra_nodeview *dra__snapshot_view(dra_snapshot *s, const char *name, const dra_node **node, const char **errmsg,
                                       arena *a, dra_nodeview **owned) {
    uint64_t h = hash_bytes(name, strlen(name));
    *owned = NULL;
    /* a node decided before on this snapshot: found without a lock, nothing written */
    view_slot *v = slot_of(s, name, h);
    if (v) {
        *errmsg = v->cell->err;
        *node = v->node;
        return v->view;
    }
    pthread_mutex_lock(&s->views_lock);
    v = slot_of(s, name, h);   /* added by another thread meanwhile */
    if (!v) {
        /* the inherited map is read-only once published: looked up under the lock only
         * because the slot is added under it */
        vcell *c = pmap_get(&s->inherited, h, vcell_is, name);
        if (c) v = slot_add(s, h, c, false);
    }
    bool full = s->nbare >= BARE_VIEWS_MAX;
    pthread_mutex_unlock(&s->views_lock);
    if (!v && full && !dra_world_find_node(s->w, name)) {
        dra_node *bare = ARENA_NEW(a, dra_node);
        bare->name = arena_strdup(a, name);
        err e;
        err_clear(&e);
        *owned = dra_nodeview_new(s->w, bare, &s->f, &e);
        *errmsg = *owned ? NULL : arena_strdup(a, e.msg);
        *node = bare;
        return *owned;
    }
    if (!v) {
        /* build outside the lock: other nodes' requests go on meanwhile */
        vcell *c = xcalloc(1, sizeof *c);
        atomic_init(&c->refs, 1);
        c->name = xstrdup(name);
        const dra_node *n = dra_world_find_node(s->w, name);
        if (!n) {
            c->bare = xcalloc(1, sizeof *c->bare);
            c->bare->name = c->name;
            n = c->bare;
        }
        err e;
        err_clear(&e);
        c->view = dra_nodeview_new(s->w, n, &s->f, &e);
        if (!c->view) c->err = xstrdup(e.msg);
        pthread_mutex_lock(&s->views_lock);
        v = slot_add(s, h, c, true);
        pthread_mutex_unlock(&s->views_lock);
    }
    *errmsg = v->cell->err;
    *node = v->node;
    return v->view;
}

/* Views are built where a request first meets a node: at 100,000 nodes the first
 * /filter of 5,000 names spent half its time building them (bench/README.md, "Views
 * built ahead"). A fleet under kube-scheduler's rotating names has every view built
 * within a few dozen requests anyway, so building them ahead costs no memory that
 * serving would not, only earlier. */
size_t dra_snapshot_warm_views(dra_snapshot *s, size_t lane, size_t nlanes) {
    assert(nlanes > 0 && lane < nlanes);
    size_t built = 0, n = dra_snapshot_nnodes(s);
    arena a;   /* dra__snapshot_view uses it for views it does not keep: none here */
    arena_init(&a, 256);
    for (size_t i = lane; i < n; i += nlanes) {
        const char *name = dra_snapshot_node_name(s, i);
        uint64_t h = hash_bytes(name, strlen(name));
        /* made here or handed on (the inherited map is read-only once published):
         * a header over an inherited view is made when a request needs it, not here */
        if (slot_of(s, name, h) || pmap_get(&s->inherited, h, vcell_is, name)) continue;
        const dra_node *node;
        const char *errmsg;
        dra_nodeview *owned;
        dra__snapshot_view(s, name, &node, &errmsg, &a, &owned);
        assert(!owned);   /* a Node object's view is always kept */
        dra_nodeview_free(owned);
        built++;
    }
    arena_free(&a);
    return built;
}

size_t dra_snapshot_views_missing(dra_snapshot *s) {
    size_t known = pmap_len(&s->inherited);
    pthread_mutex_lock(&s->views_lock);
    for (size_t i = 0; i < s->vslots.n; i++) known += s->vslots.v[i]->made_here && !s->vslots.v[i]->cell->bare;
    pthread_mutex_unlock(&s->views_lock);
    size_t n = dra_snapshot_nnodes(s);
    return known < n ? n - known : 0;
}

/* ---- the fit memo ------------------------------------------------------------------------- */

/* A character of an object name ("ns/name": lowercase RFC 1123 parts and '/'). */
static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '/' || c == '_';
}

char *dra__reason_template(const char *reason, const char *const *names, size_t nnames) {
    /* each name (longest first, so a claim named after its pod is not split) becomes
     * \x01<index+1> where it stands as a whole name: another object whose name merely
     * begins with one of them (a claim holding the devices, "ml/train-10-gpus" beside
     * the pod "ml/train-1") keeps its name. A stray \x01 in the text becomes '?'. */
    size_t rl = strlen(reason);
    char *t = xmalloc(rl * 2 + 1);
    size_t o = 0;
    for (size_t i = 0; i < rl;) {
        size_t best = 0, bk = 0;
        for (size_t k = 0; k < nnames && k < 200 && (i == 0 || !name_char(reason[i - 1])); k++) {
            if (reason[i] != names[k][0]) continue;   /* most places: no name starts here */
            size_t l = strlen(names[k]);
            if (l > best && !strncmp(reason + i, names[k], l) && !name_char(reason[i + l])) best = l, bk = k;
        }
        if (best) {
            t[o++] = '\x01';
            t[o++] = (char)(bk + 1);
            i += best;
        } else {
            t[o++] = reason[i++] == '\x01' ? '?' : reason[i - 1];
        }
    }
    t[o] = '\0';
    return t;
}

/* Copies the runs between name marks whole: a memo hit expands one per node, and
 * byte by byte that was 14 % of a 500-node filter once the rest was cheap. */
void dra__reason_expand(const char *tmpl, char *reason, size_t n, const char *const *names, size_t nnames) {
    if (!n) return;
    size_t o = 0;
    const char *p = tmpl;
    while (*p && o + 1 < n) {
        const char *mark = strchr(p, '\x01');
        size_t run = mark ? (size_t)(mark - p) : strlen(p);
        if (run > n - 1 - o) run = n - 1 - o;
        memcpy(reason + o, p, run);
        o += run;
        p += run;
        if (!mark || p != mark) break;   /* the end, or out of room */
        if (!p[1]) {                     /* a mark without its index: kept as a byte, as before */
            reason[o++] = *p;
            break;
        }
        size_t k = (size_t)(unsigned char)p[1] - 1;
        const char *nm = k < nnames ? names[k] : "?";
        size_t len = strlen(nm);
        if (len > n - 1 - o) len = n - 1 - o;
        memcpy(reason + o, nm, len);
        o += len;
        p += 2;
    }
    reason[o] = '\0';
}

/* Bounds on memory, not on correctness: past them, answers are computed, not kept.
 * Only nodes with a Node object keep answers (requests may name nodes the cluster does
 * not have, new ones each time: kept, they would be handed on forever, as no change of
 * theirs drops them); their entries go with the Node (memo_carry). A fleet larger
 * than MEMO_NODES_MAX keeps answers for every node it has: kube-scheduler's rotating
 * names visit each in turn, and past 65,536 of 100,000 nodes a third of every
 * request was decided again, unchanged (about 0.6 KB a node and pod shape). */
enum { MEMO_NODES_MAX = 1 << 16, MEMO_PER_NODE = 64 };

bool dra__memo_get(dra_snapshot *s, const char *node, uint64_t sig, int *status, int64_t *score, char *reason,
                   size_t n, const char *const *names, size_t nnames) {
    bool hit = false;
    pthread_mutex_lock(&s->memo_lock);
    mnode *m = pmap_get(&s->memo, hash_bytes(node, strlen(node)), mnode_is, node);
    if (m) {
        pthread_mutex_lock(&m->lock);
        for (size_t i = 0; i < m->ents.n && !hit; i++) {
            const struct memo *e = &m->ents.v[i];
            if (e->sig != sig) continue;
            hit = true;
            *status = e->status;
            *score = e->score;
            dra__reason_expand(e->reason, reason, n, names, nnames);
        }
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_unlock(&s->memo_lock);
    return hit;
}

void dra__memo_put(dra_snapshot *s, const char *node, uint64_t sig, int status, int64_t score, const char *reason,
                   const char *const *names, size_t nnames) {
    if (nnames > 200) return;
    uint64_t h = hash_bytes(node, strlen(node));
    /* a Node object? The view's slot says so without a miss: the decision just read it
     * (looking the Node up again was 8 % of a cold /filter at 100,000 nodes) */
    const view_slot *v = slot_of(s, node, h);
    if (v ? v->cell->bare != NULL : !dra_world_find_node(s->w, node)) return;
    char *t = dra__reason_template(reason, names, nnames);
    pthread_mutex_lock(&s->memo_lock);
    mnode *m = pmap_get(&s->memo, h, mnode_is, node);
    size_t nodes = dra_snapshot_nnodes(s);
    if (!m && pmap_len(&s->memo) < (nodes > MEMO_NODES_MAX ? nodes : MEMO_NODES_MAX)) {
        m = xcalloc(1, sizeof *m);
        atomic_init(&m->refs, 1);
        m->name = xstrdup(node);
        pthread_mutex_init(&m->lock, NULL);
        pmap_put(&s->memo, h, m, mnode_is, node);
    }
    if (m) {
        pthread_mutex_lock(&m->lock);
        bool known = false;
        for (size_t i = 0; i < m->ents.n && !known; i++) known = m->ents.v[i].sig == sig;
        if (!known && m->ents.n < MEMO_PER_NODE) {
            struct memo e = {.sig = sig, .status = status, .score = score, .reason = t};
            t = NULL;
            DRA_VEC_PUSH(m->ents, e);
        }
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_unlock(&s->memo_lock);
    free(t);
}

