/* decode_slice.c — ResourceSlice (resource.k8s.io/v1; v1beta1's `basic:` devices are
 * converted first, engine/decode/convert.c) into dra_slice: pool identity,
 * node access, shared counters and devices. Each device gets its `cel_device` view
 * here, once: attribute names split and interned (unqualified names belong to the
 * driver's domain), versions pre-parsed, capacities parsed. Problems that Kubernetes
 * reports only when CEL runs on the device (an attribute without a value, a version
 * that does not parse) are not decode errors: they are recorded as the device's
 * `conv_error` and surface, lazily, as CEL runtime errors. */
#include "engine/decode/decode_util.h"
#include "engine/decode/validate.h"
#include "base/hash.h"

#include <assert.h>
#include <string.h>

/* The CEL view refers to string, version and quantity values instead of holding
 * them (that keeps cel_attr and cel_capacity at 16 bytes, see cel/cel.h).
 * Devices of one slice mostly repeat the same few values (a model name, a
 * driverVersion, "80Gi"), so the last few distinct ones are remembered and shared:
 * fewer bytes, and the shared values stay cached while selectors run over many
 * devices. */
#define VIEW_SHARED 8
/* Strings and counters maps are remembered in a small set-associative table (a set by
 * the value's hash) rather than the ring: a MIG-carved GPU's 19 devices each consume
 * a different map, repeated on the next GPU of the slice 19 devices later, and every
 * device brings a UUID no other has, which would push the shared model name out of a
 * ring of 8. A value met again is kept over one never met again: a miss replaces, in
 * its set, the entry with the fewest hits, the oldest of those. 16 sets of 4 hold a
 * slice's distinct maps (at most 64 devices a slice with counters); a miss only costs
 * a copy. */
#define VIEW_SETS 16
#define VIEW_WAYS 4
typedef struct view_slot {
    const void *p;   /* a cel_str, or a dra_counter array of n */
    uint32_t n, hits, at;
} view_slot;

/* The slot of v's set holding a value that `same` finds equal to v, or NULL; a hit
 * counts. */
static view_slot *view_find(view_slot *set, bool (*same)(const void *p, uint32_t n, const void *v, uint32_t vn),
                            const void *v, uint32_t vn) {
    for (unsigned i = 0; i < VIEW_WAYS; i++)
        if (set[i].p && same(set[i].p, set[i].n, v, vn)) {
            set[i].hits++;
            return &set[i];
        }
    return NULL;
}

/* p (of n) remembered in its set, over the entry with the fewest hits, oldest first. */
static void view_keep(view_slot *set, unsigned *tick, const void *p, uint32_t n) {
    view_slot *victim = &set[0];
    for (unsigned i = 1; i < VIEW_WAYS; i++)
        if (set[i].hits < victim->hits || (set[i].hits == victim->hits && set[i].at < victim->at)) victim = &set[i];
    *victim = (view_slot){p, n, 0, ++*tick};
}

enum { SHARE_MAX = 16 };   /* arrays up to this long are decoded on the stack, then shared or copied */

/* The key at one position of the previous device's attributes (or capacity), as
 * decoded: every device of a slice lists the same keys in the same order, so a key
 * equal to the one at its position last time takes that one's domain, name and ids
 * without splitting, hashing and looking them up again (the entry holds them
 * already). k points into the slice's tree, which outlives the slice's decoding. */
typedef struct key_memo {
    const char *k;
    const char *text;   /* the key as the device keeps it (unqualified_key) */
    uint32_t domain, name, key_id;
} key_memo;

typedef struct view_shared {
    view_slot str[VIEW_SETS][VIEW_WAYS];
    view_slot ctr[VIEW_SETS][VIEW_WAYS];
    unsigned tick;
    const char *ver_text[VIEW_SHARED];
    const semver *ver[VIEW_SHARED];
    const quantity *qty[VIEW_SHARED];
    unsigned nver, nqty;   /* next slot, round robin */
    /* whole attribute-key and capacity arrays: every device of one profile has the
     * same keys in the same order, and the same capacities (a fifth of a MIG-carved
     * fleet's decoded bytes before) */
    const dra_attr_text *atext[VIEW_SHARED];
    uint32_t natext[VIEW_SHARED];
    unsigned next_atext;
    const dra_capacity *caps[VIEW_SHARED];
    const cel_capacity *ccaps[VIEW_SHARED];
    uint32_t ncaps[VIEW_SHARED];
    unsigned next_caps;
    key_memo akeys[SHARE_MAX], ckeys[SHARE_MAX], counter_keys[SHARE_MAX];
} view_shared;

static bool same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static bool same_atext(const dra_attr_text *a, const dra_attr_text *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!same_str(a[i].key, b[i].key) || !same_str(a[i].ver, b[i].ver) || a[i].vers || b[i].vers) return false;
    return true;
}

/* t[0..n) (on the stack) as a shared array equal to it, or copied into the arena and
 * remembered. A version list is never shared (its texts are per device). */
static dra_attr_text *share_atext(arena *ar, view_shared *vs, const dra_attr_text *t, uint32_t n) {
    for (unsigned i = 0; i < VIEW_SHARED; i++)
        if (vs->atext[i] && vs->natext[i] == n && same_atext(vs->atext[i], t, n)) return (dra_attr_text *)vs->atext[i];
    dra_attr_text *out = arena_memdup(ar, t, sizeof *t * (n ? n : 1));
    unsigned slot = vs->next_atext++ % VIEW_SHARED;
    vs->atext[slot] = out;
    vs->natext[slot] = n;
    return out;
}

static bool same_caps(const dra_capacity *a, const cel_capacity *ca, const dra_capacity *b, const cel_capacity *cb,
                      uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i].key_id != b[i].key_id || !same_str(a[i].key, b[i].key) || a[i].policy || b[i].policy ||
            a[i].value.mant != b[i].value.mant || a[i].value.exp != b[i].value.exp ||
            a[i].value.format != b[i].value.format || a[i].value.big != b[i].value.big || ca[i].domain != cb[i].domain ||
            ca[i].name != cb[i].name)
            return false;
    return true;
}

static bool same_counters_slot(const void *p, uint32_t n, const void *v, uint32_t vn) {
    const dra_counter *a = p, *b = v;
    if (n != vn) return false;
    for (uint32_t i = 0; i < n; i++)
        if (a[i].name_id != b[i].name_id || a[i].value.mant != b[i].value.mant || a[i].value.exp != b[i].value.exp ||
            a[i].value.format != b[i].value.format || a[i].value.big != b[i].value.big)
            return false;
    return true;
}

/* A counters map. With vs, an array equal to one remembered is shared (decoded
 * counters are never written after decoding): MIG-style slices hold
 * mostly repeats, 24 % of a 760,000-device cluster's decoded bytes before. */
static bool decode_counters(dctx *c, view_shared *vs, const json_t *obj, const char *key, dra_counter **out,
                            uint32_t *n) {
    *out = NULL;
    *n = 0;
    const json_t *m;
    if (!dra__dval_obj(c, key, dra__dmember(obj, key), &m)) return false;   /* a counter set: two members */
    if (!m) return true;
    size_t cnt = json_object_size(m);
    enum { ON_STACK = 16 };
    dra_counter stack[ON_STACK];
    dra_counter *tmp = vs && cnt <= ON_STACK ? stack : ARENA_NEWN(c->d->a, dra_counter, cnt ? cnt : 1);
    memset(tmp, 0, sizeof(dra_counter) * (cnt ? cnt : 1));
    size_t mk = dra__dpush_key(c, key);
    const char *k;
    const json_t *v;
    uint32_t got = 0;
    json_object_foreach((json_t *)m, k, v) {
        size_t m2 = dra__dpush_mapkey(c, k);
        key_memo *km = vs && got < SHARE_MAX ? &vs->counter_keys[got] : NULL;
        dra_counter *ct = &tmp[got++];
        /* names repeat on every device: the interned text, not a copy each */
        if (km && km->k && !strcmp(km->k, k)) {
            ct->name_id = km->key_id;
            ct->name = km->text;
        } else {
            ct->name_id = dra_dec_intern_cstr(c->d, k);
            ct->name = intern_str(c->d->cat->names, ct->name_id);
            if (km) *km = (key_memo){.k = k, .text = ct->name, .key_id = ct->name_id};
        }
        if (!json_is_object(v)) return dra__dfail(c, "expected object");
        size_t m3 = dra__dpush_key(c, "value");
        if (!dra__dqty(c, dra__dmember(v, "value"), &ct->value)) return false;
        dpop(c, m3);
        dpop(c, m2);
    }
    dpop(c, mk);
    *n = got;
    if (tmp != stack) {
        *out = tmp;
        return true;
    }
    uint64_t h = got;
    for (uint32_t i = 0; i < got; i++)
        h = hash_u64(h ^ hash_u64(((uint64_t)tmp[i].name_id << 40) ^ ((uint64_t)tmp[i].value.exp << 16) ^
                                  ((uint64_t)tmp[i].value.format << 8) ^ tmp[i].value.big) ^
                     (uint64_t)tmp[i].value.mant ^ (uint64_t)(tmp[i].value.mant >> 64));
    view_slot *set = vs->ctr[h % VIEW_SETS], *hit = view_find(set, same_counters_slot, tmp, got);
    if (hit) {
        *out = (dra_counter *)hit->p;
        return true;
    }
    *out = ARENA_NEWN(c->d->a, dra_counter, got ? got : 1);
    memcpy(*out, tmp, sizeof(dra_counter) * got);
    view_keep(set, &vs->tick, *out, got);
    return true;
}

struct counter_set_ud {
    view_shared *vs;
    const char *name_key;
};

static bool decode_counter_set(dctx *c, const json_t *s, void *elem, void *ud) {
    const struct counter_set_ud *u = ud;
    dra_counter_set *cs = elem;
    /* interned (the entry holds it): the catalog's text, not a copy */
    const json_t *nv = dra__dmember(s, u->name_key);   /* {counterSet, counters}: two members */
    if (json_is_string(nv)) cs->name = json_string_value(nv);
    else if (!dra__dget_str(c, s, u->name_key, &cs->name)) return false;
    if (!cs->name) cs->name = "";
    cs->name_id = dra_dec_intern_cstr(c->d, cs->name);
    cs->name = intern_str(c->d->cat->names, cs->name_id);
    return decode_counters(c, u->vs, s, "counters", &cs->counters, &cs->ncounters);
}

/* The counter sets under key, whose value v is (NULL: absent). */
static bool decode_counter_sets(dctx *c, view_shared *vs, const json_t *v, const char *key, const char *name_key,
                                dra_counter_set **out, uint32_t *n) {
    struct counter_set_ud u = {vs, name_key};
    return DRA_DVAL_OBJS(c, key, v, out, n, decode_counter_set, &u);
}

static bool same_string_slot(const void *p, uint32_t n, const void *v, uint32_t vn) {
    const cel_str *o = p;
    return n == vn && !memcmp(o->s, v, n);
}

/* A cel_str for s, shared with an earlier equal string when remembered, else a copy
 * of s in the arena. */
static const cel_str *shared_string(arena *ar, view_shared *vs, const char *s) {
    size_t len = strlen(s);
    view_slot *set = vs->str[hash_bytes(s, len) % VIEW_SETS], *hit = view_find(set, same_string_slot, s, (uint32_t)len);
    if (hit) return hit->p;
    cel_str *n = ARENA_NEW(ar, cel_str);
    *n = cel_str_of(arena_strndup(ar, s, len), (uint32_t)len);
    view_keep(set, &vs->tick, n, (uint32_t)len);
    return n;
}

/* *out = the parse of version text s, and *text a copy of s that lives with the
 * arena: both shared with an earlier equal text when remembered; false with ve set
 * when s does not parse (then nothing is remembered). */
static bool shared_version(arena *ar, view_shared *vs, const char *s, const char **text, const semver **out, err *ve) {
    for (unsigned i = 0; i < VIEW_SHARED; i++)
        if (vs->ver_text[i] && !strcmp(vs->ver_text[i], s)) return *text = vs->ver_text[i], *out = vs->ver[i], true;
    size_t len = strlen(s);
    *text = s = arena_strndup(ar, s, len);
    semver *v = ARENA_NEW(ar, semver);
    *out = v;
    if (!semver_parse(s, len, v, ve)) return false;
    unsigned k = vs->nver++ % VIEW_SHARED;
    vs->ver_text[k] = s;
    vs->ver[k] = v;
    return true;
}

/* q itself or an earlier quantity with identical fields (not just an equal value:
 * the representation is observable, see base/quantity.h). */
static const quantity *shared_quantity(view_shared *vs, const quantity *q) {
    for (unsigned i = 0; i < VIEW_SHARED; i++) {
        const quantity *o = vs->qty[i];
        if (o && o->mant == q->mant && o->exp == q->exp && o->format == q->format && o->big == q->big) return o;
    }
    vs->qty[vs->nqty++ % VIEW_SHARED] = q;
    return q;
}

/* One attribute value; returns false only on a decode error. */
/* An attribute value's members, by name: "int", "bool", "string", "version", then
 * the lists. */
static const char *const ATTR_MEMBERS[] = {"int", "bool", "string", "version", "ints", "bools", "strings", "versions"};
enum { ATTR_INT, ATTR_BOOL, ATTR_STRING, ATTR_VERSION, ATTR_LISTS, ATTR_MEMBERS_N = 8 };

static bool decode_attr(dctx *c, view_shared *vs, const json_t *v, const char *key, cel_attr *a, dra_attr_text *t,
                        const char **conv_error) {
    arena *ar = c->d->a;
    if (!json_is_object(v)) return dra__dfail(c, "expected object");
    /* one member where v is valid: looking each of the eight up was a tenth of decoding
     * a device (perf) */
    const json_t *x, *m[ATTR_MEMBERS_N];
    dra__dmembers(v, ATTR_MEMBERS, ATTR_MEMBERS_N, m);
    int kinds = 0;
    a->kind = CEL_ATTR_NONE;
    /* the member found is read as is when of its type; anything else as
     * the dra__dget_ reader reads it (YAML's 1e3), or its error — not looked up again */
    if ((x = m[ATTR_INT]) && !json_is_null(x)) {
        int64_t iv;
        if (json_is_integer(x)) iv = json_integer_value(x);
        else if (!dra__dget_int(c, v, "int", &iv, NULL)) return false;
        a->kind = CEL_ATTR_INT, a->u.i = iv, kinds++;
    }
    if ((x = m[ATTR_BOOL]) && !json_is_null(x)) {
        int8_t b;
        if (json_is_boolean(x)) b = json_is_true(x);
        else if (!dra__dget_bool(c, v, "bool", &b)) return false;
        a->kind = CEL_ATTR_BOOL, a->u.b = b == 1, kinds++;
    }
    if ((x = m[ATTR_STRING]) && !json_is_null(x)) {
        /* a string is copied only when not shared; other JSON (an unquoted YAML
         * number) as dra__dget_str reads it, or its error */
        const char *s = json_string_value(x);
        if (!s && !dra__dget_str(c, v, "string", &s)) return false;
        a->kind = CEL_ATTR_STRING, a->u.s = shared_string(ar, vs, s), kinds++;
    }
    if ((x = m[ATTR_VERSION]) && !json_is_null(x)) {
        /* copied only when not shared, like a string */
        const char *s = json_string_value(x);
        if (!s && !dra__dget_str(c, v, "version", &s)) return false;
        a->kind = CEL_ATTR_VERSION, kinds++;
        err ve;
        err_clear(&ve);
        if (!shared_version(ar, vs, s, &t->ver, &a->u.v, &ve) && !*conv_error)
            *conv_error = arena_printf(ar, "attribute %s: parse semantic version: %s", key, ve.msg);
    }
    const char *const *lists = ATTR_MEMBERS + ATTR_LISTS;
    for (int li = 0; li < 4; li++) {
        const json_t *arr;
        if (!m[ATTR_LISTS + li]) continue;
        if (!dra__dget_arr(c, v, lists[li], &arr)) return false;
        if (!arr) continue;
        kinds++;
        size_t n = json_array_size(arr);
        size_t mk = dra__dpush_key(c, lists[li]);
        cel_attr_list *list = ARENA_NEW(ar, cel_attr_list);
        list->count = (uint32_t)n;
        a->u.list = list;
        switch (li) {
        case 0: {
            int64_t *iv = ARENA_NEWN(ar, int64_t, n ? n : 1);
            for (size_t i = 0; i < n; i++) {
                const json_t *e = json_array_get(arr, i);
                if (!json_is_integer(e)) {
                    dra__dpush_idx(c, i);
                    return dra__dfail(c, "expected integer");
                }
                iv[i] = json_integer_value(e);
            }
            a->kind = CEL_ATTR_INTS, list->ints = iv;
            break;
        }
        case 1: {
            bool *bv = ARENA_NEWN(ar, bool, n ? n : 1);
            for (size_t i = 0; i < n; i++) {
                const json_t *e = json_array_get(arr, i);
                if (!json_is_boolean(e)) {
                    dra__dpush_idx(c, i);
                    return dra__dfail(c, "expected boolean");
                }
                bv[i] = json_is_true(e);
            }
            a->kind = CEL_ATTR_BOOLS, list->bools = bv;
            break;
        }
        default: {
            cel_str *sv = ARENA_NEWN(ar, cel_str, n ? n : 1);
            semver *vv = li == 3 ? ARENA_NEWN(ar, semver, n ? n : 1) : NULL;
            const char **vt = li == 3 ? ARENA_NEWN(ar, const char *, n ? n : 1) : NULL;
            for (size_t i = 0; i < n; i++) {
                const json_t *e = json_array_get(arr, i);
                if (!json_is_string(e)) {
                    dra__dpush_idx(c, i);
                    return dra__dfail(c, "expected string");
                }
                const char *s = arena_strndup(ar, json_string_value(e), json_string_length(e));
                sv[i] = (cel_str){.s = s, .len = (uint32_t)json_string_length(e)};
                if (vv) {
                    vt[i] = s;
                    err ve;
                    err_clear(&ve);
                    if (!semver_parse(s, sv[i].len, &vv[i], &ve) && !*conv_error)
                        *conv_error = arena_printf(ar, "attribute %s: parse semantic version: %s", key, ve.msg);
                }
            }
            if (li == 2) a->kind = CEL_ATTR_STRINGS, list->strs = sv;
            else a->kind = CEL_ATTR_VERSIONS, list->vers = vv, t->vers = vt;
            break;
        }
        }
        dpop(c, mk);
    }
    if (kinds > 1) return dra__dfail(c, "exactly one value must be set, got %d", kinds);
    if (kinds == 0 && !*conv_error) *conv_error = arena_printf(ar, "attribute %s: unsupported attribute value", key);
    return true;
}

static bool decode_capacity(dctx *c, const json_t *v, dra_capacity *cap) {
    if (!json_is_object(v)) return dra__dfail(c, "expected object");
    size_t m = dra__dpush_key(c, "value");
    if (!dra__dqty(c, dra__dmember(v, "value"), &cap->value)) return false;
    dpop(c, m);
    if (json_object_size(v) == 1) return true;   /* the value only (most capacities): no policy */
    const json_t *pol;
    if (!dra__dget_obj(c, v, "requestPolicy", &pol)) return false;
    if (!pol) return true;
    dra_cap_policy *pp = ARENA_NEW(c->d->a, dra_cap_policy);
    cap->policy = pp;
    m = dra__dpush_key(c, "requestPolicy");
    const json_t *x = json_object_get(pol, "default");
    if (x && !json_is_null(x)) {
        size_t m2 = dra__dpush_key(c, "default");
        if (!dra__dqty(c, x, &pp->dflt)) return false;
        pp->has_default = true;
        dpop(c, m2);
    }
    const json_t *vals;
    if (!dra__dget_arr(c, pol, "validValues", &vals)) return false;
    if (vals) {
        size_t n = json_array_size(vals);
        pp->valid_values = ARENA_NEWN(c->d->a, quantity, n ? n : 1);
        size_t m2 = dra__dpush_key(c, "validValues");
        for (size_t i = 0; i < n; i++) {
            size_t m3 = dra__dpush_idx(c, i);
            if (!dra__dqty(c, json_array_get(vals, i), &pp->valid_values[i])) return false;
            dpop(c, m3);
        }
        pp->nvalid = (uint32_t)n;
        dpop(c, m2);
    }
    const json_t *rng;
    if (!dra__dget_obj(c, pol, "validRange", &rng)) return false;
    if (rng) {
        pp->has_range = true;
        size_t m2 = dra__dpush_key(c, "validRange");
        static const char *const keys[] = {"min", "max", "step"};
        quantity *dst[] = {&pp->rmin, &pp->rmax, &pp->step};
        bool *has[] = {&pp->has_min, &pp->has_max, &pp->has_step};
        for (int i = 0; i < 3; i++) {
            const json_t *q = json_object_get(rng, keys[i]);
            if (!q || json_is_null(q)) continue;
            size_t m3 = dra__dpush_key(c, keys[i]);
            if (!dra__dqty(c, q, dst[i])) return false;
            *has[i] = true;
            dpop(c, m3);
        }
        dpop(c, m2);
    }
    dpop(c, m);
    return true;
}

static bool decode_taint(dctx *c, const json_t *t, void *elem, void *ud) {
    (void)ud;
    dra_taint *tt = elem;
    return dra__dget_str(c, t, "key", &tt->key) && dra__dget_str(c, t, "value", &tt->value) &&
           dra__dget_str(c, t, "effect", &tt->effect) && dra__dget_str(c, t, "timeAdded", &tt->time_added);
}

/* An attribute or capacity key as written: without a domain it is its interned name
 * (id), shared by every device that has it, else a copy. */
static const char *unqualified_key(dctx *c, const char *k, uint32_t id) {
    return strchr(k, '/') ? dra__dstrdup(c, k) : intern_str(c->d->cat->names, id);
}

/* Attribute or capacity key k as decoded — domain, name, kept text and, with with_id,
 * the interned id of that text: km's when k is the key km holds (the previous device's
 * at this position), else worked out and remembered in km (NULL: not remembered). */
static key_memo device_key(dctx *c, key_memo *km, const char *k, uint32_t driver_id, bool with_id) {
    if (km && km->k && !strcmp(km->k, k)) return *km;
    key_memo r = {.k = k};
    dra__split_qualified(c->d, k, driver_id, &r.domain, &r.name);
    r.text = unqualified_key(c, k, r.name);
    if (with_id) r.key_id = dra_dec_intern_cstr(c->d, r.text);
    if (km) *km = r;
    return r;
}

/* The members every device of a MIG-carved GPU has (dra__dmembers). */
static const char *const DEVICE_MEMBERS[] = {"name", "attributes", "capacity", "consumesCounters"};
enum { DEV_NAME, DEV_ATTRS, DEV_CAPS, DEV_CONSUMES, DEVICE_MEMBERS_N };

/* A device's attributes (the object attrs) into d's CEL view and texts, their keys
 * and short texts shared with the slice's other devices where equal (vs). */
static bool decode_device_attrs(dctx *c, view_shared *vs, const json_t *attrs, const dra_slice *s, dra_device *d) {
    arena *ar = c->d->a;
    size_t n = json_object_size(attrs);
    cel_attr *ca = ARENA_NEWN(ar, cel_attr, n ? n : 1);
    dra_attr_text stack_text[SHARE_MAX];
    d->attr_text = n <= SHARE_MAX ? memset(stack_text, 0, sizeof stack_text) : ARENA_NEWN(ar, dra_attr_text, n ? n : 1);
    size_t m = dra__dpush_key(c, "attributes");
    const char *k;
    const json_t *av;
    size_t i = 0;
    const char *conv = NULL;
    json_object_foreach((json_t *)attrs, k, av) {
        size_t m2 = dra__dpush_mapkey(c, k);
        key_memo key = device_key(c, i < SHARE_MAX ? &vs->akeys[i] : NULL, k, s->driver_id, false);
        if (key.name > CEL_ATTR_NAME_MAX)
            return dra__dfail(c, "the attribute name is past the %u distinct names a device view holds",
                             CEL_ATTR_NAME_MAX + 1u);
        ca[i].domain = key.domain;
        ca[i].name = key.name;
        d->attr_text[i].key = key.text;
        if (!decode_attr(c, vs, av, d->attr_text[i].key, &ca[i], &d->attr_text[i], &conv)) return false;
        dpop(c, m2);
        i++;
    }
    if (d->attr_text == stack_text) d->attr_text = share_atext(ar, vs, stack_text, (uint32_t)n);
    d->cel.attrs = ca;
    d->cel.nattrs = (uint32_t)n;
    d->cel.conv_error = conv;
    dpop(c, m);
    return true;
}

/* A device's capacity (the object caps) into d and its CEL view: decoded on the stack
 * when short, then shared with an equal earlier device's arrays (vs), else copied. */
static bool decode_device_caps(dctx *c, view_shared *vs, const json_t *caps, const dra_slice *s, dra_device *d) {
    arena *ar = c->d->a;
    size_t n = json_object_size(caps);
    /* decoded on the stack when short, then an equal pair of arrays shared, else
     * copied: cel's values point into the copy (shared_quantity) */
    dra_capacity stack_caps[SHARE_MAX];
    cel_capacity stack_cc[SHARE_MAX];
    bool on_stack = n <= SHARE_MAX;
    cel_capacity *cc = on_stack ? stack_cc : ARENA_NEWN(ar, cel_capacity, n ? n : 1);
    d->caps = on_stack ? stack_caps : ARENA_NEWN(ar, dra_capacity, n ? n : 1);
    size_t m = dra__dpush_key(c, "capacity");
    const char *k;
    const json_t *cv;
    size_t i = 0;
    json_object_foreach((json_t *)caps, k, cv) {
        size_t m2 = dra__dpush_mapkey(c, k);
        memset(&d->caps[i], 0, sizeof d->caps[i]);
        key_memo key = device_key(c, i < SHARE_MAX ? &vs->ckeys[i] : NULL, k, s->driver_id, true);
        cc[i].domain = key.domain;
        cc[i].name = key.name;
        d->caps[i].key = key.text;
        d->caps[i].key_id = key.key_id;
        if (!decode_capacity(c, cv, &d->caps[i])) return false;
        if (!on_stack) cc[i].value = shared_quantity(vs, &d->caps[i].value);
        dpop(c, m2);
        i++;
    }
    if (on_stack) {
        const dra_capacity *sh = NULL;
        const cel_capacity *shc = NULL;
        for (unsigned j = 0; j < VIEW_SHARED && !sh; j++)
            if (vs->caps[j] && vs->ncaps[j] == n && same_caps(vs->caps[j], vs->ccaps[j], stack_caps, stack_cc, (uint32_t)n))
                sh = vs->caps[j], shc = vs->ccaps[j];
        if (sh) {
            d->caps = (dra_capacity *)sh;
            cc = (cel_capacity *)shc;
        } else {
            d->caps = arena_memdup(ar, stack_caps, sizeof *stack_caps * (n ? n : 1));
            cc = arena_memdup(ar, stack_cc, sizeof *stack_cc * (n ? n : 1));
            for (size_t j = 0; j < n; j++) cc[j].value = shared_quantity(vs, &d->caps[j].value);
            unsigned slot = vs->next_caps++ % VIEW_SHARED;
            vs->caps[slot] = d->caps;
            vs->ccaps[slot] = cc;
            vs->ncaps[slot] = (uint32_t)n;
        }
    }
    d->cel.caps = cc;
    d->cel.ncaps = (uint32_t)n;
    dpop(c, m);
    return true;
}

static bool decode_device(dctx *c, view_shared *vs, const json_t *v, const dra_slice *s, dra_device *d) {
    if (!json_is_object(v)) return dra__dfail(c, "expected object");
    const json_t *mem[DEVICE_MEMBERS_N];
    size_t others = dra__dmembers(v, DEVICE_MEMBERS, DEVICE_MEMBERS_N, mem);
    /* the name is interned (the entry holds it): its text is the catalog's, no copy */
    const json_t *nv = mem[DEV_NAME];
    if (json_is_string(nv)) d->name = json_string_value(nv);
    else if (!dra__dval_str(c, "name", nv, &d->name)) return false;
    if (!d->name || !*d->name) {
        dra__dpush_key(c, "name");
        return dra__dfail(c, "required value");
    }
    d->name_id = dra_dec_intern_cstr(c->d, d->name);
    d->name = intern_str(c->d->cat->names, d->name_id);
    d->cel.driver = (cel_str){.s = s->driver, .len = (uint32_t)strlen(s->driver)};
    d->cel.driver_id = s->driver_id;

    const json_t *attrs, *caps;
    if (!dra__dval_obj(c, "attributes", mem[DEV_ATTRS], &attrs)) return false;
    if (attrs && !decode_device_attrs(c, vs, attrs, s, d)) return false;
    if (!dra__dval_obj(c, "capacity", mem[DEV_CAPS], &caps)) return false;
    if (caps && !decode_device_caps(c, vs, caps, s, d)) return false;
    if (!decode_counter_sets(c, vs, mem[DEV_CONSUMES], "consumesCounters", "counterSet", &d->consumes, &d->nconsumes))
        return false;
    /* no other member (a GPU's device is name, attributes, capacity and counters):
     * absent leaves d's zeroes (eight lookups a device spared) */
    if (!others) return true;
    int8_t b;
    if (!dra__dget_str(c, v, "nodeName", &d->node_name)) return false;
    if (!dra__dget_bool(c, v, "allNodes", &b)) return false;
    d->all_nodes = b == 1;
    {
        size_t m = dra__dpush_key(c, "nodeSelector");
        if (!dra__ddecode_node_selector(c, json_object_get(v, "nodeSelector"), &d->node_selector)) return false;
        dpop(c, m);
    }
    if (!dra__dget_bool(c, v, "allowMultipleAllocations", &b)) return false;
    d->allow_multi = b == 1;
    d->cel.allow_multiple_allocations = d->allow_multi;
    if (!DRA_DGET_OBJS(c, v, "taints", &d->taints, &d->ntaints, decode_taint, NULL)) return false;
    if (!dra__dget_strs(c, v, "bindingConditions", &d->binding_conditions) ||
        !dra__dget_strs(c, v, "bindingFailureConditions", &d->binding_failure_conditions))
        return false;
    if (!dra__dget_bool(c, v, "bindsToNode", &b)) return false;
    d->binds_to_node = b == 1;
    return true;
}

static bool decode_slice_v1(const dra_decoder *d, const json_t *obj, void *out, err *e) {
    dra_slice *s = out;
    dctx c;
    dra__dctx_init(&c, d, e, "ResourceSlice", obj);
    memset(s, 0, sizeof *s);
    const json_t *meta, *spec, *pool;
    if (!dra__dget_obj(&c, obj, "metadata", &meta)) return false;
    if (meta && !dra__dget_str(&c, meta, "name", &s->name)) return false;
    if (!s->name) s->name = "";
    if (!dra__dget_obj(&c, obj, "spec", &spec)) return false;
    if (!spec) {
        dra__dpush_key(&c, "spec");
        return dra__dfail(&c, "required value");
    }
    dra__dpush_key(&c, "spec");
    if (!dra__dget_str(&c, spec, "driver", &s->driver)) return false;
    if (!s->driver || !*s->driver) {
        dra__dpush_key(&c, "driver");
        return dra__dfail(&c, "required value");
    }
    s->driver_id = dra_dec_intern_cstr(d, s->driver);
    if (!dra__dget_obj(&c, spec, "pool", &pool)) return false;
    if (!pool) {
        dra__dpush_key(&c, "pool");
        return dra__dfail(&c, "required value");
    }
    size_t m = dra__dpush_key(&c, "pool");
    if (!dra__dget_str(&c, pool, "name", &s->pool)) return false;
    if (!s->pool) s->pool = "";
    if (!dra__dget_int(&c, pool, "generation", &s->generation, NULL) ||
        !dra__dget_int(&c, pool, "resourceSliceCount", &s->slice_count, NULL))
        return false;
    dpop(&c, m);
    s->pool_id = dra_dec_intern_cstr(d, s->pool);
    char *key = arena_printf(d->a, "%s/%s", s->driver, s->pool);
    s->pool_key = dra_dec_intern_cstr(d, key);
    int8_t b;
    if (!dra__dget_str(&c, spec, "nodeName", &s->node_name)) return false;
    if (s->node_name && *s->node_name) s->node_id = dra_dec_intern_cstr(d, s->node_name);
    if (!dra__dget_bool(&c, spec, "allNodes", &b)) return false;
    s->all_nodes = b == 1;
    m = dra__dpush_key(&c, "nodeSelector");
    if (!dra__ddecode_node_selector(&c, json_object_get(spec, "nodeSelector"), &s->node_selector)) return false;
    dpop(&c, m);
    if (!dra__dget_bool(&c, spec, "perDeviceNodeSelection", &s->per_device_node_selection)) return false;
    if (!decode_counter_sets(&c, NULL, json_object_get(spec, "sharedCounters"), "sharedCounters", "name",
                             &s->shared_counters, &s->nshared))
        return false;
    const json_t *devs;
    if (!dra__dget_arr(&c, spec, "devices", &devs)) return false;
    if (devs) {
        size_t n = json_array_size(devs);
        s->devices = ARENA_NEWN(d->a, dra_device, n ? n : 1);
        m = dra__dpush_key(&c, "devices");
        view_shared vs = {0};
        /* the previous version's devices, by position, where the driver is the same (an
         * unqualified attribute's domain is the driver's) */
        const dra_slice *prev = d->prev && d->prev->driver_id == s->driver_id ? d->prev : NULL;
        dra_take_memo tm = {0};
        uint32_t taken = 0, changed = 0, driver_len = (uint32_t)strlen(s->driver);
        uint8_t took_stack[128], *took = NULL;   /* which devices were taken over */
        if (prev) took = n <= sizeof took_stack ? memset(took_stack, 0, n) : xcalloc(n, 1);
        for (size_t i = 0; i < n; i++) {
            const json_t *dv = json_array_get(devs, i);
            if (prev && i + 1 < prev->ndevices) {
                /* the previous version left the cache long ago: the next device's
                 * arrays fetched while this one is compared */
                const dra_device *next = &prev->devices[i + 1];
                __builtin_prefetch(next->cel.attrs);
                __builtin_prefetch((const char *)next->cel.attrs + 64);
                __builtin_prefetch(next->consumes);
            }
            if (prev && i < prev->ndevices && dra__device_unchanged(&tm, dv, &prev->devices[i])) {
                s->devices[i] = prev->devices[i];
                s->devices[i].cel.driver = (cel_str){.s = s->driver, .len = driver_len};
                took[i] = 1;
                taken++;
                continue;
            }
            /* a slice republished with every device changed (a driver upgrade): no
             * more comparing once the first two changed, or once so many changed that
             * nothing would be taken over (below) */
            if (prev && (++changed * 4 > n || (changed == 2 && !taken))) prev = NULL;
            size_t m2 = dra__dpush_idx(&c, i);
            if (!decode_device(&c, &vs, dv, s, &s->devices[i])) {
                if (took != took_stack) free(took);
                return false;
            }
            dpop(&c, m2);
        }
        /* Taken over, a device keeps the previous version whole in memory (the caller
         * holds it): worth it when most of the slice is unchanged, not for one device
         * of a slice republished with new values — then the taken ones are decoded
         * too, and the previous version goes when nothing else holds it. */
        if (taken && (uint64_t)taken * 4 < (uint64_t)n * 3) {
            for (size_t i = 0; i < n; i++) {
                if (!took[i]) continue;
                size_t m2 = dra__dpush_idx(&c, i);
                memset(&s->devices[i], 0, sizeof s->devices[i]);
                if (!decode_device(&c, &vs, json_array_get(devs, i), s, &s->devices[i])) {
                    assert(!"a device taken over decodes");   /* it decoded to what it has */
                    if (took != took_stack) free(took);
                    return false;
                }
                dpop(&c, m2);
            }
            taken = 0;
        }
        if (took != took_stack) free(took);
        if (d->taken) *d->taken = taken;
        s->ndevices = (uint32_t)n;
        dpop(&c, m);
    }
    return true;
}

bool dra__decode_slice(const dra_decoder *d, const json_t *obj, dra_slice *out, err *e) {
    return dra__input_decode(d, "ResourceSlice", obj, decode_slice_v1, out, e);
}
