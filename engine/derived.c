/* derived.c — derived attributes (see derived.h; decode_claim.c decodes them):
 * per-claim validation, evaluation per (request, candidate) and the hand-over to the
 * constraint code.
 *
 * State per request variant lives in the allocation arena: the constraint → derived
 * attribute map (computed once per call) and, per candidate, the evaluated values and
 * the text of version values (constraints compare versions as text). Values are
 * computed inside the selector cache step, so each device is evaluated at most once
 * per request and call, and a CEL error is remembered like a selector error: the
 * search reports it when it reaches the device, the pruning passes treat it as
 * "unknown" and never hide it. */
#include "engine/derived.h"

#include "engine/alloc_internal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct dra_derived_state {
    const dra_request_spec *spec;
    int16_t *map;            /* per claim constraint: derived attribute index, -1 none */
    bool *by_driver;         /* per constraint: unqualified name, domain = device driver */
    cel_attr **vals;         /* per candidate: nderived values, set once evaluated
                              * (valid where rd->sel[cand] == 2) */
    dra_attr_text **texts;   /* parallel to vals */
    const cel_program **progs;
} dra_derived_state;

/* ---- validation ------------------------------------------------------------------- */


static bool is_alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* RFC 1123 subdomain: lowercase labels of [a-z0-9-], alphanumeric at both ends,
 * joined by '.', at most 253 characters. */
static const char *dns_subdomain_error(const char *s, size_t n) {
    if (n == 0) return "the domain must not be empty";
    if (n > 253) return "the domain must be no more than 253 characters";
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (label == 0 || s[i - 1] == '-') return "the domain must be a lowercase RFC 1123 subdomain";
            label = 0;
            continue;
        }
        if (!is_alnum_lower(c) && c != '-') return "the domain must be a lowercase RFC 1123 subdomain";
        if (label == 0 && c == '-') return "the domain must be a lowercase RFC 1123 subdomain";
        label++;
    }
    if (label == 0 || s[n - 1] == '-') return "the domain must be a lowercase RFC 1123 subdomain";
    return NULL;
}

/* C identifier, at most 32 characters (as a device attribute's id). */
static const char *c_identifier_error(const char *s) {
    size_t n = strlen(s);
    if (n == 0) return "the identifier after '/' must not be empty";
    if (n > 32) return "the identifier after '/' must be no more than 32 characters";
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
        if (!ok) return "the identifier after '/' must be a C identifier ([A-Za-z_][A-Za-z0-9_]*)";
    }
    return NULL;
}

static const char *name_error(const char *name) {
    const char *slash = strchr(name, '/');
    if (!slash) return "must be a domain and an identifier separated by '/' (for example derived/numa)";
    const char *d = dns_subdomain_error(name, (size_t)(slash - name));
    if (d) return d;
    if (slash - name > 63) return "the domain must be no more than 63 characters";
    return c_identifier_error(slash + 1);
}

/* Field path of the request spec: "spec.devices.requests[i].exactly" or
 * "spec.devices.requests[i].firstAvailable[j]". */
static void spec_path(const dra_claim *cl, const dra_request_spec *spec, char *buf, size_t n) {
    for (uint32_t i = 0; i < cl->nreqs; i++) {
        const dra_request *r = &cl->reqs[i];
        if (spec == &r->exactly) {
            snprintf(buf, n, "spec.devices.requests[%u].exactly", i);
            return;
        }
        if (r->nsubs && spec >= r->subs && spec < r->subs + r->nsubs) {
            snprintf(buf, n, "spec.devices.requests[%u].firstAvailable[%u]", i, (unsigned)(spec - r->subs));
            return;
        }
    }
    snprintf(buf, n, "spec.devices.requests[?]");
}

static const char *constraint_name(const dra_constraint *k) { return k->match_attr ? k->match_attr : k->distinct_attr; }

/* The per-claim limit on the summed estimated cost of all derived attribute
 * expressions (DRA_DERIVED_CLAIM_MAX_COST), checked once every request of the claim
 * has passed its own checks: when `spec` is the claim's last request spec with
 * derived attributes. Expressions that do not compile were reported by their own
 * request already and count nothing. */
static bool claim_cost_ok(dra_alloc_ctx *x, const dra_claim_state *cs, const dra_request_spec *spec) {
    const dra_claim *cl = cs->claim;
    const dra_request_spec *last = NULL;
    for (uint32_t i = 0; i < cl->nreqs; i++) {
        const dra_request *r = &cl->reqs[i];
        if (r->exactly.nderived) last = &r->exactly;
        for (uint32_t j = 0; j < r->nsubs; j++)
            if (r->subs[j].nderived) last = &r->subs[j];
    }
    if (last != spec) return true;
    uint64_t total = 0;
    for (uint32_t i = 0; i < cl->nreqs; i++) {
        const dra_request *r = &cl->reqs[i];
        for (uint32_t j = 0; j <= r->nsubs; j++) {
            const dra_request_spec *s = j < r->nsubs ? &r->subs[j] : &r->exactly;
            for (uint32_t k = 0; k < s->nderived; k++) {
                const cel_program *p = s->derived[k].prog;
                uint64_t c = p ? cel_program_estimated_cost(p) : 0;
                total = c > UINT64_MAX - total ? UINT64_MAX : total + c;
            }
        }
    }
    if (total > DRA_DERIVED_CLAIM_MAX_COST)
        return dra__alloc_fail(x,
                    "ResourceClaim %s: spec.devices.requests: Forbidden: too complex, the total estimated cost of all "
                    "derivedAttributes expressions (%llu) exceeds the limit of %d per claim",
                    dra_claim_obj(x, cs), (unsigned long long)total, DRA_DERIVED_CLAIM_MAX_COST);
    return true;
}

bool dra__derived_prepare(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd) {
    const dra_request_spec *spec = rd->spec;
    rd->derived = NULL;
    if (!x->f->derived_attributes || spec->nderived == 0) return true;
    const dra_claim *cl = cs->claim;
    char path[160];
    spec_path(cl, spec, path, sizeof path);
    if (spec->nderived > DRA_DERIVED_MAX)
        return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes: Too many: %u: must have at most %d items", dra_claim_obj(x, cs), path,
                    spec->nderived, DRA_DERIVED_MAX);
    dra_derived_state *st = ARENA_NEW(&x->a, dra_derived_state);
    st->spec = spec;
    st->progs = ARENA_NEWN(&x->a, const cel_program *, spec->nderived);
    for (uint32_t i = 0; i < spec->nderived; i++) {
        const dra_derived_attr *da = &spec->derived[i];
        const char *ne = name_error(da->name);
        if (ne)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].name: Invalid value: \"%s\": %s", dra_claim_obj(x, cs), path, i,
                        da->name, ne);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(spec->derived[j].name, da->name))
                return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].name: Duplicate value: \"%s\"", dra_claim_obj(x, cs), path, i,
                            da->name);
        size_t len = strlen(da->expression);
        if (len == 0)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: Required value", dra_claim_obj(x, cs), path, i);
        if (len > CEL_MAX_EXPRESSION_LEN)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: Too long: may not be more than %d bytes",
                        dra_claim_obj(x, cs), path, i, CEL_MAX_EXPRESSION_LEN);
        bool used = false;
        for (uint32_t k = 0; k < cl->nconstraints && !used; k++) {
            const char *cn = constraint_name(&cl->constraints[k]);
            used = cn && !strcmp(cn, da->name) && dra__constraint_applies(&cl->constraints[k], rd);
        }
        if (!used)
            return dra__alloc_fail(x,
                        "ResourceClaim %s: %s.derivedAttributes[%u].name: Invalid value: \"%s\": must be used by a "
                        "matchAttribute or distinctAttribute constraint that applies to request %s",
                        dra_claim_obj(x, cs), path, i, da->name, rd->name);
        st->progs[i] = da->prog;
        if (!st->progs[i])
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: Invalid value: \"%s\": compilation failed: %s",
                        dra_claim_obj(x, cs), path, i, da->expression, da->compile_error ? da->compile_error : "");
        if (cel_program_estimated_cost(st->progs[i]) > DRA_DERIVED_MAX_COST)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: %s", dra_claim_obj(x, cs), path, i,
                        CEL_TOO_COMPLEX_MSG);
    }
    if (!claim_cost_ok(x, cs, spec)) return false;
    /* constraint k → the derived attribute that shadows its attribute for this request */
    uint32_t nk = cl->nconstraints;
    st->map = ARENA_NEWN(&x->a, int16_t, nk ? nk : 1);
    st->by_driver = ARENA_NEWN(&x->a, bool, nk ? nk : 1);
    for (uint32_t k = 0; k < nk; k++) {
        st->map[k] = -1;
        const char *cn = constraint_name(&cl->constraints[k]);
        if (!cn) continue;
        const char *slash = strchr(cn, '/');
        for (uint32_t i = 0; i < spec->nderived && st->map[k] < 0; i++) {
            const dra_derived_attr *da = &spec->derived[i];
            if (slash) {
                if (!strcmp(cn, da->name)) st->map[k] = (int16_t)i;
            } else if (da->id == intern_get(x->w->names, cn, strlen(cn))) {
                /* unqualified constraint name: the device's driver is the domain */
                st->map[k] = (int16_t)i;
                st->by_driver[k] = true;
            }
        }
    }
    st->vals = ARENA_NEWN(&x->a, cel_attr *, x->v->ncands ? x->v->ncands : 1);
    st->texts = ARENA_NEWN(&x->a, dra_attr_text *, x->v->ncands ? x->v->ncands : 1);
    rd->derived = st;
    return true;
}

/* ---- evaluation ---------------------------------------------------------------------- */

static const char *version_text(arena *a, const semver *v) {
    char buf[512];
    semver_format(v, buf, sizeof buf);
    return arena_strdup(a, buf);
}

int dra__derived_eval(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand, const char **errmsg) {
    dra_derived_state *st = rd->derived;
    const dra_cand *c = &x->v->cands[cand];
    uint32_t n = st->spec->nderived;
    if (!st->vals[cand]) {
        st->vals[cand] = ARENA_NEWN(&x->a, cel_attr, n);
        st->texts[cand] = ARENA_NEWN(&x->a, dra_attr_text, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        cel_attr *out = &st->vals[cand][i];
        dra_attr_text *t = &st->texts[cand][i];
        err e;
        err_clear(&e);
        if (!cel_eval_attr(st->progs[i], &c->dev->cel, x->cel, x->f->list_type_attributes, &x->a, out, &e)) {
            const char *m = e.msg;
            if (strstr(m, "no such key:"))
                m = arena_printf(&x->a, "%s. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
                                        "check with has() for optional fields",
                                 m);
            *errmsg = arena_printf(&x->a, "claim %s, request %s: derived attribute %s on device %s/%s/%s: CEL runtime error: %s",
                                   dra_claim_obj(x, cs), rd->name, st->spec->derived[i].name, c->slice->driver, c->slice->pool,
                                   c->dev->name, m);
            return -1;
        }
        out->domain = st->spec->derived[i].domain;
        out->name = st->spec->derived[i].id;
        t->key = st->spec->derived[i].name;
        if (out->kind == CEL_ATTR_VERSION) {
            t->ver = version_text(&x->a, out->u.v);
        } else if (out->kind == CEL_ATTR_VERSIONS) {
            const cel_attr_list *l = out->u.list;
            const char **v = ARENA_NEWN(&x->a, const char *, l->count ? l->count : 1);
            for (uint32_t j = 0; j < l->count; j++) v[j] = version_text(&x->a, &l->vers[j]);
            t->vers = v;
        }
    }
    return 1;
}

void dra__derived_bind(const dra_alloc_ctx *x, const dra_req_data *rd, uint32_t k, uint32_t cand, dra_cstate *s) {
    s->dv = NULL;
    s->dv_text = NULL;
    const dra_derived_state *st = rd->derived;
    if (!st || st->map[k] < 0) return;
    uint32_t i = (uint32_t)st->map[k];
    const dra_cand *c = &x->v->cands[cand];
    if (st->by_driver[k] && st->spec->derived[i].domain != c->dev->cel.driver_id) return;
    assert(st->vals[cand]);   /* evaluated when the candidate passed the selectors */
    if (!st->vals[cand]) return;
    s->dv = &st->vals[cand][i];
    s->dv_text = &st->texts[cand][i];
}
