/* derived.c — derived attributes (see derived.h; decode_claim.c decodes them): the
 * gate check, the checks of Kubernetes' API validation (for claims the API server
 * would not have accepted), evaluation per (request, candidate) and the hand-over to
 * the constraint code.
 *
 * Kubernetes' allocator (dynamic-resource-allocation v0.37.2,
 * structured/internal/experimental/allocator_experimental.go lookupAttribute) looks a
 * derived attribute up only when a matchAttribute / distinctAttribute constraint
 * whose attribute name equals the derived attribute's name (exactly) adds a device of
 * a request the constraint applies to; compilation and evaluation errors surface
 * there and abort the allocation, and nowhere else. Here the values are computed in
 * the selector cache step (each device at most once per request and call) for the
 * derived attributes some applicable constraint names; an evaluation error is kept
 * and reported by dra__derived_bind when allocate_device reaches that constraint for
 * that device — the moment Kubernetes would evaluate. Until then the candidate counts
 * as "may raise an error" for the pruning passes (alloc.c matches: state 4), which
 * therefore never skip a subtree where Kubernetes would stop with the error. */
#include "engine/alloc/derived.h"

#include "engine/alloc/alloc_internal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dra_derived_state {
    const dra_request_spec *spec;
    int16_t *map;            /* per claim constraint: derived attribute index, -1 none */
    bool *used;              /* per derived attribute: named by an applicable constraint */
    cel_attr **vals;         /* per candidate: nderived values, set once evaluated
                              * (valid where rd->sel[cand] is SEL_YES or SEL_YES_DERIVED_ERROR) */
    dra_attr_text **texts;   /* parallel to vals */
    const char ***errs;      /* per candidate: per derived attribute its evaluation error
                              * (Kubernetes' text), NULL when there is none */
} dra_derived_state;

/* ---- API validation -----------------------------------------------------------------
 *
 * What k8s.io/kubernetes v1.37.2 pkg/apis/resource/validation (validateDeviceDerivedAttribute,
 * validateCELExpression, validateDeviceClaim) and the declarative rules of
 * DeviceDerivedAttribute (maxItems 32, name: required + ResourceFullyQualifiedName,
 * expression: required) reject. The allocator never sees such a claim; dralloc reports
 * the API server's field error for the first violation. */

static const char cid_msg[] =
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    "'[A-Za-z_][A-Za-z0-9_]*')";
static const char subdomain_msg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

static bool alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* The regex of IsDNS1123Subdomain (labels are not limited to 63 there). */
static bool is_subdomain(const char *s, size_t n) {
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (label == 0 || !alnum_lower(s[i - 1])) return false;
            label = 0;
            continue;
        }
        if (!alnum_lower(c) && (c != '-' || label == 0)) return false;
        label++;
    }
    return label > 0 && alnum_lower(s[n - 1]);
}

static bool is_c_identifier(const char *s, size_t n) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

/* validateCIdentifier(id, 32): the field error body, NULL when valid. */
static const char *c_identifier_error(arena *a, const char *s, size_t n) {
    if (n > 32) return "Too long: may not be more than 32 bytes";
    if (!is_c_identifier(s, n)) return arena_printf(a, "Invalid value: \"%.*s\": %s", (int)n, s, cid_msg);
    return NULL;
}

/* validate.ResourceFullyQualifiedName (apimachinery v0.37.2 pkg/api/validate/strfmt.go):
 * the first error body, NULL when valid. Like Kubernetes, a name with more than one
 * '/' is not looked at further. */
static const char *name_error(arena *a, const char *name) {
    size_t n = strlen(name);
    if (n == 0) return "Required value";
    const char *slash = strchr(name, '/');
    if (!slash) {
        const char *e = c_identifier_error(a, name, n);
        if (e) return e;
        return arena_printf(a, "Invalid value: \"%s\": a fully qualified name must be a domain and a name separated by a slash",
                            name);
    }
    if (strchr(slash + 1, '/')) return NULL;
    size_t pn = (size_t)(slash - name);
    if (pn == 0) return "Invalid value: \"\": prefix must not be empty";
    if (pn > 63) return "Too long: may not be more than 63 bytes";
    if (!is_subdomain(name, pn)) return arena_printf(a, "Invalid value: \"%.*s\": prefix: %s", (int)pn, name, subdomain_msg);
    if (!slash[1]) return "Invalid value: \"\": name must not be empty";
    return c_identifier_error(a, slash + 1, strlen(slash + 1));
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

/* validateDeviceClaim's total: the estimated costs of all derived attribute expressions
 * of the claim that compile, summed, at most DRA_DERIVED_CLAIM_MAX_COST. Checked when
 * `spec` is the claim's last request spec with derived attributes (every request
 * before it passed its own checks). */
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
                               "ResourceClaim %s: spec.devices: Forbidden: too complex, total cost of derived attribute CEL "
                               "expressions in the claim exceeds cost limit",
                               dra_claim_obj(x, cs));
    return true;
}

static bool api_valid(dra_alloc_ctx *x, dra_claim_state *cs, const dra_req_data *rd) {
    const dra_request_spec *spec = rd->spec;
    const dra_claim *cl = cs->claim;
    char path[160];
    spec_path(cl, spec, path, sizeof path);
    if (spec->nderived > DRA_DERIVED_MAX)
        return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes: Too many: %u: must have at most %d items",
                               dra_claim_obj(x, cs), path, spec->nderived, DRA_DERIVED_MAX);
    for (uint32_t i = 0; i < spec->nderived; i++) {
        const dra_derived_attr *da = &spec->derived[i];
        const char *ne = name_error(&x->a, da->name);
        if (ne)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].name: %s", dra_claim_obj(x, cs), path, i, ne);
        bool used = false;
        for (uint32_t k = 0; k < cl->nconstraints && !used; k++) {
            const char *cn = constraint_name(&cl->constraints[k]);
            used = cn && !strcmp(cn, da->name) && dra__constraint_applies(&cl->constraints[k], rd);
        }
        if (!used)
            return dra__alloc_fail(x,
                                   "ResourceClaim %s: %s.derivedAttributes[%u].name: Invalid value: \"%s\": must be referenced "
                                   "by at least one matchAttribute or distinctAttribute constraint targeting this request",
                                   dra_claim_obj(x, cs), path, i, da->name);
        size_t len = strlen(da->expression);
        if (len == 0)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: Required value", dra_claim_obj(x, cs),
                                   path, i);
        if (len > CEL_MAX_EXPRESSION_LEN)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: Too long: may not be more than %d bytes",
                                   dra_claim_obj(x, cs), path, i, CEL_MAX_EXPRESSION_LEN);
        if (!da->prog) {
            const char *ce = da->compile_error ? da->compile_error : "";
            const char *pre = strncmp(ce, "ERROR:", 6) ? "" : "compilation failed: ";
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: Invalid value: \"%s\": %s%s",
                                   dra_claim_obj(x, cs), path, i, da->expression, pre, ce);
        }
        if (cel_program_estimated_cost(da->prog) > DRA_DERIVED_MAX_COST)
            return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u].expression: %s", dra_claim_obj(x, cs), path, i,
                                   CEL_TOO_COMPLEX_MSG);
    }
    for (uint32_t i = 1; i < spec->nderived; i++)
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(spec->derived[j].name, spec->derived[i].name))
                return dra__alloc_fail(x, "ResourceClaim %s: %s.derivedAttributes[%u]: Duplicate value: \"%s\"", dra_claim_obj(x, cs),
                                       path, i, spec->derived[i].name);
    return claim_cost_ok(x, cs, spec);
}

/* ---- prepare ------------------------------------------------------------------------- */

bool dra__derived_prepare(dra_alloc_ctx *x, dra_claim_state *cs, dra_req_data *rd) {
    const dra_request_spec *spec = rd->spec;
    rd->derived = NULL;
    if (spec->nderived == 0) return true;
    /* validateDeviceRequest, before anything else it checks: the scheduler refuses
     * rather than ignore constraints that name derived attributes */
    if (!x->f->derived_attributes)
        return dra__alloc_fail(x, "claim %s, request %s: cannot handle request with derived attributes, the feature is disabled",
                               dra_claim_obj(x, cs), spec->name);
    if (!api_valid(x, cs, rd)) return false;
    const dra_claim *cl = cs->claim;
    dra_derived_state *st = ARENA_NEW(&x->a, dra_derived_state);
    st->spec = spec;
    st->used = ARENA_NEWN(&x->a, bool, spec->nderived);
    /* constraint k → the derived attribute its name equals (requestData.derivedAttributes
     * is a map by name: the last of equal names; API validation forbids equal names) */
    uint32_t nk = cl->nconstraints;
    st->map = ARENA_NEWN(&x->a, int16_t, nk ? nk : 1);
    for (uint32_t k = 0; k < nk; k++) {
        st->map[k] = -1;
        const char *cn = constraint_name(&cl->constraints[k]);
        if (!cn || !dra__constraint_applies(&cl->constraints[k], rd)) continue;
        for (uint32_t i = 0; i < spec->nderived; i++)
            if (!strcmp(cn, spec->derived[i].name)) st->map[k] = (int16_t)i;
        if (st->map[k] >= 0) st->used[st->map[k]] = true;
    }
    uint32_t nc = x->v->ncands ? x->v->ncands : 1;
    st->vals = ARENA_NEWN(&x->a, cel_attr *, nc);
    st->texts = ARENA_NEWN(&x->a, dra_attr_text *, nc);
    st->errs = ARENA_NEWN(&x->a, const char **, nc);
    rd->derived = st;
    return true;
}

/* ---- evaluation ---------------------------------------------------------------------- */

static const char *version_text(arena *a, const semver *v) {
    char buf[512];
    semver_format(v, buf, sizeof buf);
    return arena_strdup(a, buf);
}

/* EvaluateDerivedAttribute (cel/compile.go valToDeviceAttribute): a scalar, or a list
 * of one scalar kind whatever the list-type gate says (the constraints then treat a
 * list as Kubernetes does in scalar mode); an empty list is an empty string list. */
static bool eval_one(dra_alloc_ctx *x, const cel_program *p, const dra_cand *c, cel_attr *out, err *e) {
    if (cel_eval_attr(p, &c->dev->cel, x->cel, true, &x->a, out, e)) return true;
    if (!strcmp(e->msg, "CEL result of type list cannot be used as an attribute value")) {
        err e2;
        err_clear(&e2);
        char *text = cel_eval_format_alloc(p, &c->dev->cel, x->cel, &e2);
        bool empty = text && !strcmp(text, "[]");
        free(text);
        if (empty) {
            memset(out, 0, sizeof *out);
            cel_attr_list *l = ARENA_NEW(&x->a, cel_attr_list);
            out->kind = CEL_ATTR_STRINGS;
            out->u.list = l;
            return true;
        }
    }
    /* valToDeviceAttribute's words for a scalar of another type: Go's %T of the value */
    static const char *const go_type[][2] = {
        {"double", "float64"}, {"uint", "uint64"}, {"bytes", "[]uint8"},
        {"google.protobuf.Duration", "time.Duration"}, {"google.protobuf.Timestamp", "time.Time"},
    };
    for (size_t i = 0; i < sizeof go_type / sizeof *go_type; i++) {
        char want[96];
        snprintf(want, sizeof want, "CEL result of type %s cannot be used as an attribute value", go_type[i][0]);
        if (!strcmp(e->msg, want)) {
            err_set(e, "unsupported CEL return type: %s", go_type[i][1]);
            break;
        }
    }
    return false;
}

int dra__derived_eval(dra_alloc_ctx *x, const dra_claim_state *cs, dra_req_data *rd, uint32_t cand, const char **errmsg) {
    (void)cs;
    (void)errmsg;
    dra_derived_state *st = rd->derived;
    const dra_cand *c = &x->v->cands[cand];
    uint32_t n = st->spec->nderived;
    if (!st->vals[cand]) {
        st->vals[cand] = ARENA_NEWN(&x->a, cel_attr, n);
        st->texts[cand] = ARENA_NEWN(&x->a, dra_attr_text, n);
    }
    int r = 1;
    for (uint32_t i = 0; i < n; i++) {
        if (!st->used[i]) continue;   /* never looked up: never evaluated */
        const dra_derived_attr *da = &st->spec->derived[i];
        cel_attr *out = &st->vals[cand][i];
        dra_attr_text *t = &st->texts[cand][i];
        err e;
        err_clear(&e);
        if (!eval_one(x, da->prog, c, out, &e)) {
            if (!st->errs[cand]) st->errs[cand] = ARENA_NEWN(&x->a, const char *, n);
            st->errs[cand][i] = arena_printf(&x->a, "evaluate derived attribute %s on device %s/%s/%s failed: %s", da->name,
                                             c->slice->driver, c->slice->pool, c->dev->name, e.msg);
            r = 2;
            continue;
        }
        out->domain = da->domain;
        out->name = da->id;
        t->key = da->name;
        if (out->kind == CEL_ATTR_VERSION) {
            t->ver = version_text(&x->a, out->u.v);
        } else if (out->kind == CEL_ATTR_VERSIONS) {
            const cel_attr_list *l = out->u.list;
            const char **v = ARENA_NEWN(&x->a, const char *, l->count ? l->count : 1);
            for (uint32_t j = 0; j < l->count; j++) v[j] = version_text(&x->a, &l->vers[j]);
            t->vers = v;
        }
    }
    return r;
}

bool dra__derived_bind(dra_alloc_ctx *x, const dra_req_data *rd, uint32_t k, uint32_t cand, dra_cstate *s) {
    s->dv = NULL;
    s->dv_text = NULL;
    const dra_derived_state *st = rd->derived;
    if (!st || st->map[k] < 0) return true;
    uint32_t i = (uint32_t)st->map[k];
    assert(st->vals[cand]);   /* evaluated when the candidate passed the selectors */
    if (!st->vals[cand]) return true;
    if (st->errs[cand] && st->errs[cand][i]) return dra__alloc_fail(x, "%s", st->errs[cand][i]);
    s->dv = &st->vals[cand][i];
    s->dv_text = &st->texts[cand][i];
    return true;
}
