/* constraints.c — claim constraints: matchAttribute and distinctAttribute.
 *
 * Attribute lookup is Kubernetes': the qualified name "domain/id", or the
 * unqualified id when the domain is the device's driver. Scalar matchAttribute:
 * the first device fixes the value, later devices must have the same type and value
 * (versions compare as written). With list-type attributes every value is a set (a
 * scalar is a one-element set): matchAttribute keeps the running intersection, and
 * distinctAttribute requires pairwise disjoint sets.
 *
 * Backtracking restores state exactly: each add pushes (an intersection level, a
 * distinct entry) and each remove pops, so a narrowed intersection is widened again
 * when the device that narrowed it is taken back (the upstream bug kubernetes#140326
 * left it narrowed). */
#include "engine/alloc/alloc_internal.h"

#include <string.h>

void dra__cons_init(dra_cstate *s, const dra_constraint *c, bool list_mode) {
    memset(s, 0, sizeof *s);
    s->c = c;
    s->is_match = c->match_attr != NULL;
    s->list_mode = list_mode;
    /* the name was interned when the claim was decoded (held by the claim) */
    s->domain = c->attr_domain;
    s->id = c->attr_id;
    s->no_slash = !c->attr_domain;
}

static const cel_attr *lookup(const dra_cstate *s, const dra_device *d, const dra_attr_text **text) {
    if (s->dv) {   /* a derived attribute of the request shadows the device's own */
        *text = s->dv_text;
        return s->dv;
    }
    uint32_t dom = s->no_slash ? d->cel.driver_id : s->domain;
    for (uint32_t i = 0; i < d->cel.nattrs; i++)
        if (d->cel.attrs[i].domain == dom && d->cel.attrs[i].name == s->id) {
            *text = d->attr_text ? &d->attr_text[i] : NULL;
            return &d->cel.attrs[i];
        }
    return NULL;
}

static bool str_eq(cel_str a, cel_str b) { return a.len == b.len && !memcmp(a.s, b.s, a.len); }

/* ---- set view of an attribute ---------------------------------------------------- */

/* Kind and element count of the set view; false for an attribute without a usable
 * value (no value, or an empty list — Kubernetes treats both as unknown). */
static bool set_kind(const cel_attr *a, uint8_t *kind, uint32_t *n) {
    switch (a->kind) {
    case CEL_ATTR_INTS: *kind = 0, *n = a->u.list->count; return a->u.list->count > 0;
    case CEL_ATTR_BOOLS: *kind = 1, *n = a->u.list->count; return a->u.list->count > 0;
    case CEL_ATTR_STRINGS: *kind = 2, *n = a->u.list->count; return a->u.list->count > 0;
    case CEL_ATTR_VERSIONS: *kind = 3, *n = a->u.list->count; return a->u.list->count > 0;
    case CEL_ATTR_INT: *kind = 0, *n = 1; return true;
    case CEL_ATTR_BOOL: *kind = 1, *n = 1; return true;
    case CEL_ATTR_STRING: *kind = 2, *n = 1; return true;
    case CEL_ATTR_VERSION: *kind = 3, *n = 1; return true;
    default: return false;
    }
}

/* Element i of the set view. Version elements are compared as their text. */
static dra_velem elem(const cel_attr *a, const dra_attr_text *t, uint32_t i, cel_str *scratch) {
    dra_velem e;
    switch (a->kind) {
    case CEL_ATTR_INTS: e.i = a->u.list->ints[i]; break;
    case CEL_ATTR_BOOLS: e.i = a->u.list->bools[i]; break;
    case CEL_ATTR_STRINGS: e.s = &a->u.list->strs[i]; break;
    case CEL_ATTR_INT: e.i = a->u.i; break;
    case CEL_ATTR_BOOL: e.i = a->u.b; break;
    case CEL_ATTR_STRING: e.s = a->u.s; break;
    case CEL_ATTR_VERSIONS:
        scratch->s = t && t->vers ? t->vers[i] : "";
        scratch->len = (uint32_t)strlen(scratch->s);
        e.s = scratch;
        break;
    case CEL_ATTR_VERSION:
        scratch->s = t && t->ver ? t->ver : "";
        scratch->len = (uint32_t)strlen(scratch->s);
        e.s = scratch;
        break;
    default: e.i = 0;
    }
    return e;
}

static bool elem_eq(uint8_t kind, dra_velem a, dra_velem b) {
    return kind <= 1 ? a.i == b.i : str_eq(*a.s, *b.s);
}

/* Does the attribute's set view contain e? */
static bool attr_has(const cel_attr *a, const dra_attr_text *t, uint8_t kind, dra_velem e) {
    uint8_t k;
    uint32_t n;
    if (!set_kind(a, &k, &n) || k != kind) return false;
    for (uint32_t i = 0; i < n; i++) {
        cel_str sc;
        if (elem_eq(kind, elem(a, t, i, &sc), e)) return true;
    }
    return false;
}

static dra_velem *buf_take(dra_cstate *s, arena *a, size_t n) {
    if (s->buf_used + n > s->buf_cap) {
        size_t cap = s->buf_cap ? s->buf_cap * 2 : 64;
        while (cap < s->buf_used + n) cap *= 2;
        dra_velem *nb = ARENA_NEWN(a, dra_velem, cap);
        if (s->buf_used) memcpy(nb, s->buf, s->buf_used * sizeof *nb);
        /* Levels point into the old buffer: rebase them. */
        for (uint32_t i = 0; i < s->num; i++)
            if (s->stack[i].e) s->stack[i].e = nb + (s->stack[i].e - s->buf);
        s->buf = nb;
        s->buf_cap = cap;
    }
    dra_velem *r = s->buf + s->buf_used;
    s->buf_used += n;
    return r;
}

/* Version text elements need stable storage: the scratch cel_str lives on the
 * stack, so version elements are stored by pointer to persistent text instead. */
static const cel_str *persist(arena *a, const cel_str *sc) {
    cel_str *p = ARENA_NEW(a, cel_str);
    *p = *sc;
    return p;
}

static bool match_list_add(dra_cstate *s, arena *a, const cel_attr *at, const dra_attr_text *t) {
    uint8_t kind;
    uint32_t n;
    if (!set_kind(at, &kind, &n)) return false;
    if (s->num == 0) {
        dra_vset *lv = &s->stack[0];
        lv->kind = kind;
        lv->e = buf_take(s, a, n);
        lv->n = 0;
        for (uint32_t i = 0; i < n; i++) {
            cel_str sc;
            dra_velem e = elem(at, t, i, &sc);
            if (kind == 3) e.s = persist(a, &sc);
            lv->e[lv->n++] = e;
        }
        return true;
    }
    const dra_vset *cur = &s->stack[s->num - 1];
    if (cur->kind != kind) return false;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < cur->n; i++)
        if (attr_has(at, t, kind, cur->e[i])) keep++;
    if (!keep) return false;
    dra_velem *e = buf_take(s, a, keep);
    cur = &s->stack[s->num - 1];   /* buf_take may have rebased */
    uint32_t k = 0;
    for (uint32_t i = 0; i < cur->n; i++)
        if (attr_has(at, t, kind, cur->e[i])) e[k++] = cur->e[i];
    s->stack[s->num] = (dra_vset){.kind = kind, .n = k, .e = e};
    return true;
}

static bool match_scalar_add(dra_cstate *s, const cel_attr *at, const dra_attr_text *t) {
    if (s->num == 0) {
        s->first = at;
        s->first_text = t;
        return true;
    }
    const cel_attr *f = s->first;
    switch (at->kind) {
    case CEL_ATTR_STRING: return f->kind == CEL_ATTR_STRING && str_eq(*f->u.s, *at->u.s);
    case CEL_ATTR_INT: return f->kind == CEL_ATTR_INT && f->u.i == at->u.i;
    case CEL_ATTR_BOOL: return f->kind == CEL_ATTR_BOOL && f->u.b == at->u.b;
    case CEL_ATTR_VERSION:
        return f->kind == CEL_ATTR_VERSION && s->first_text && t && s->first_text->ver && t->ver &&
               !strcmp(s->first_text->ver, t->ver);
    default: return false;
    }
}

/* Scalar distinct: against every earlier device; a value of another type ends the
 * comparison as "distinct" (Kubernetes returns early there). */
static bool distinct_scalar_ok(const dra_cstate *s, const cel_attr *at) {
    if (at->kind < CEL_ATTR_INT || at->kind > CEL_ATTR_VERSION) return false;
    for (uint32_t i = 0; i < s->num; i++) {
        const cel_attr *x = s->dattr[i];
        switch (x->kind) {
        case CEL_ATTR_STRING:
            if (at->kind != CEL_ATTR_STRING) return true;
            if (str_eq(*x->u.s, *at->u.s)) return false;
            break;
        case CEL_ATTR_INT:
            if (at->kind != CEL_ATTR_INT) return true;
            if (x->u.i == at->u.i) return false;
            break;
        case CEL_ATTR_BOOL:
            if (at->kind != CEL_ATTR_BOOL) return true;
            if (x->u.b == at->u.b) return false;
            break;
        case CEL_ATTR_VERSION:
            if (at->kind != CEL_ATTR_VERSION) return true;
            if (semver_cmp(x->u.v, at->u.v) == 0) return false;
            break;
        default: return false;
        }
    }
    return true;
}

static bool distinct_list_ok(const dra_cstate *s, const cel_attr *at, const dra_attr_text *t) {
    uint8_t kind, k2;
    uint32_t n, n2;
    if (!set_kind(at, &kind, &n)) return false;
    for (uint32_t i = 0; i < s->num; i++) {
        const cel_attr *x = s->dattr[i];
        if (!set_kind(x, &k2, &n2) || k2 != kind) continue;
        for (uint32_t j = 0; j < n2; j++) {
            cel_str sc;
            if (attr_has(at, t, kind, elem(x, s->dtext[i], j, &sc))) return false;
        }
    }
    return true;
}

bool dra__cons_add(dra_cstate *s, arena *a, const dra_cand *cand) {
    const dra_attr_text *t = NULL;
    const cel_attr *at = lookup(s, cand->dev, &t);
    if (!at) return false;
    if (s->is_match) {
        bool ok = s->list_mode ? match_list_add(s, a, at, t) : match_scalar_add(s, at, t);
        if (!ok) return false;
    } else {
        if (at->kind == CEL_ATTR_NONE) return false;
        bool ok = s->list_mode ? distinct_list_ok(s, at, t) : distinct_scalar_ok(s, at);
        if (!ok) return false;
        s->dattr[s->num] = at;
        s->dtext[s->num] = t;
    }
    s->num++;
    return true;
}

void dra__cons_remove(dra_cstate *s) {
    s->num--;
    if (s->is_match && s->list_mode) {
        dra_vset *lv = &s->stack[s->num];
        s->buf_used -= lv->n;
        if (s->num == 0) s->buf_used = 0;
        lv->n = 0;
        lv->e = NULL;
    }
}

/* ---- for the search bound (alloc.c) ------------------------------------------------ */

const cel_attr *dra__cons_value(const dra_cstate *s, const dra_cand *cand, const dra_attr_text **text) {
    *text = NULL;
    return lookup(s, cand->dev, text);
}

static bool scalar_eq(const cel_attr *a, const cel_attr *b) {
    switch (a->kind) {
    case CEL_ATTR_STRING: return str_eq(*a->u.s, *b->u.s);
    case CEL_ATTR_INT: return a->u.i == b->u.i;
    case CEL_ATTR_BOOL: return a->u.b == b->u.b;
    case CEL_ATTR_VERSION: return semver_cmp(a->u.v, b->u.v) == 0;   /* as distinct_scalar_ok */
    default: return false;
    }
}

/* Why this bounds what the search can still add: every device added under a
 * distinct constraint must differ from all devices before it. Scalar mode, all
 * values of one type: each added device brings a value no other has, so no more
 * devices than distinct values. With mixed types Kubernetes' loop accepts a device
 * at the first entry of another type without looking further, so equal values can
 * repeat: no count. List mode: sets of one element type must be pairwise disjoint
 * (other types are skipped) and none is empty, so each device owns at least one
 * element of its type: no more devices than distinct (type, element) pairs. */
uint32_t dra__cons_distinct_values(const dra_cstate *s, const cel_attr *const *vals, const dra_attr_text *const *texts,
                                  uint32_t n, uint32_t want) {
    enum { MAXV = DRA_RESULTS_MAX + 2 };
    if (want > MAXV) return UINT32_MAX;
    if (!s->list_mode) {
        uint8_t kind = 0;
        bool have = false;
        for (uint32_t i = 0; i < s->num; i++) {
            if (have && s->dattr[i]->kind != kind) return UINT32_MAX;
            kind = s->dattr[i]->kind, have = true;
        }
        const cel_attr *seen[MAXV];
        uint32_t nseen = 0;
        for (uint32_t i = 0; i < n && nseen < want; i++) {
            const cel_attr *a = vals[i];
            if (a->kind < CEL_ATTR_INT || a->kind > CEL_ATTR_VERSION) continue;   /* rejected anyway */
            if (have && a->kind != kind) return UINT32_MAX;
            kind = a->kind, have = true;
            bool dup = false;
            for (uint32_t j = 0; j < nseen && !dup; j++) dup = scalar_eq(seen[j], a);
            if (!dup) seen[nseen++] = a;
        }
        return nseen;
    }
    struct { uint8_t kind; dra_velem e; } seen[MAXV];
    cel_str store[MAXV];
    uint32_t nseen = 0;
    for (uint32_t i = 0; i < n && nseen < want; i++) {
        uint8_t kind;
        uint32_t m;
        if (!set_kind(vals[i], &kind, &m)) continue;
        for (uint32_t j = 0; j < m && nseen < want; j++) {
            cel_str sc;
            dra_velem e = elem(vals[i], texts[i], j, &sc);
            bool dup = false;
            for (uint32_t k = 0; k < nseen && !dup; k++) dup = seen[k].kind == kind && elem_eq(kind, seen[k].e, e);
            if (dup) continue;
            if (kind == 3) {   /* the scratch text dies with this iteration */
                store[nseen] = sc;
                e.s = &store[nseen];
            }
            seen[nseen].kind = kind;
            seen[nseen].e = e;
            nseen++;
        }
    }
    return nseen;
}
