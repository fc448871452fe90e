/* lib_semver.c — Kubernetes' CEL semver library (apiserver pkg/cel/library/
 * semverlib.go, version 1) over base/semver.h: semver(s[, normalize]),
 * isSemver(s[, normalize]), and the Semver methods isGreaterThan/isLessThan/
 * compareTo/major/minor/patch. Ordering is SemVer 2.0 precedence (build metadata
 * ignored); == and != use the same comparison (value.c). */
#include "cel/functions.h"

static cel_value sv_parse(cel_call *c, const cel_value *a, uint32_t n) {
    semver *v = arena_alloc(c->arena, sizeof *v);
    err e;
    err_clear(&e);
    bool norm = n > 1 && a[1].u.b;
    /* Kubernetes' CallCost: semver/isSemver ceil(0.1 × size) */
    if (!cel_call_cost(c, cel__cost_factor(cel__value_size(&a[0]), CEL_STRING_TRAVERSAL))) return cel__cost_exceeded();
    if (!semver_parse_k8s(a[0].u.s, a[0].len, norm, c->arena, v, &e)) return cel__call_error(c, "%s", e.msg);
    return cel_semver_value(v);
}

static cel_value sv_is(cel_call *c, const cel_value *a, uint32_t n) {
    semver v;
    bool norm = n > 1 && a[1].u.b;
    if (!cel_call_cost(c, cel__cost_factor(cel__value_size(&a[0]), CEL_STRING_TRAVERSAL))) return cel__cost_exceeded();
    return cel_bool(semver_parse_k8s(a[0].u.s, a[0].len, norm, c->arena, &v, NULL));
}

static cel_value sv_gt(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(semver_cmp(a[0].u.v, a[1].u.v) > 0);
}

static cel_value sv_lt(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(semver_cmp(a[0].u.v, a[1].u.v) < 0);
}

static cel_value sv_cmp(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int(semver_cmp(a[0].u.v, a[1].u.v));
}

static cel_value sv_major(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int((int64_t)a[0].u.v->major);
}

static cel_value sv_minor(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int((int64_t)a[0].u.v->minor);
}

static cel_value sv_patch(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int((int64_t)a[0].u.v->patch);
}

#define G CEL_GLOBAL
#define R CEL_RECEIVER
#define F CEL_FN_FOLD

static const cel_overload semver_overloads[] = {
    {"semver", "string_to_semver", G, 1, F, {"string"}, "Semver", sv_parse, 1, NULL, NULL},
    {"semver", "string_bool_to_semver", G, 2, F, {"string", "bool"}, "Semver", sv_parse, 1, NULL, NULL},
    {"isSemver", "is_semver_string", G, 1, F, {"string"}, "bool", sv_is, 1, NULL, NULL},
    {"isSemver", "is_semver_string_bool", G, 2, F, {"string", "bool"}, "bool", sv_is, 1, NULL, NULL},
    {"isGreaterThan", "semver_is_greater_than", R, 2, F, {"Semver", "Semver"}, "bool", sv_gt, 1, NULL, NULL},
    {"isLessThan", "semver_is_less_than", R, 2, F, {"Semver", "Semver"}, "bool", sv_lt, 1, NULL, NULL},
    {"compareTo", "semver_compare_to", R, 2, F, {"Semver", "Semver"}, "int", sv_cmp, 1, NULL, NULL},
    {"major", "semver_major", R, 1, F, {"Semver"}, "int", sv_major, 1, NULL, NULL},
    {"minor", "semver_minor", R, 1, F, {"Semver"}, "int", sv_minor, 1, NULL, NULL},
    {"patch", "semver_patch", R, 1, F, {"Semver"}, "int", sv_patch, 1, NULL, NULL},
};

const cel_library cel_lib_semver = {"semver", semver_overloads, ARRAY_SIZE(semver_overloads)};
