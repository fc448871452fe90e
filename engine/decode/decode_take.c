/* decode_take.c — whether a device of a republished ResourceSlice is unchanged from the
 * same position of the slice's previous version, so that decode_slice.c takes the
 * decoded device over instead of decoding it again. A driver republishes a slice when
 * one device's health or version changes; decoding its other 63 devices again was
 * 70 % of a one-slice update at 20,000 MIG-carved nodes (perf, issue #43).
 *
 * The question is answered against the decoded device, not against a hash of its old
 * text: "would decoding this JSON give exactly these values?" — exact, and nothing
 * more is kept per device. It is conservative: only the shape drivers publish (a
 * name, attributes of one scalar value each, capacities without a request policy,
 * counters consumed) is compared, member by member in order; anything else — another
 * member, a list attribute, a request policy, a device that carries a conversion
 * error — answers false, and the device is decoded as before. */
#include "engine/decode/decode_util.h"

#include <string.h>

/* strcmp inline: the keys compared are short, and a call each was a sixth of the
 * comparison (perf) */
static inline bool streq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/* Whether v, read as dra__dqty reads it, has o's fields (the representation, not only
 * the value: base/quantity.h). A text parsed lately is not parsed again: a slice's
 * counters repeat a few values ("1" for every memory slice). */
static bool same_quantity(dra_take_memo *m, const json_t *v, const quantity *o) {
    char buf[DRA_QTY_BUF];
    const char *s;
    size_t n;
    if (!dra__qty_text(v, buf, &s, &n)) return false;
    const quantity *q = NULL;
    for (unsigned i = 0; i < DRA_TAKE_QTY && !q; i++)
        if (m->qty[i].len == n && !memcmp(m->qty[i].text, s, n)) q = &m->qty[i].q;
    if (!q) {
        err qe;
        err_clear(&qe);
        quantity parsed;
        if (!quantity_parse(s, n, &parsed, &qe)) return false;
        if (n < sizeof m->qty[0].text) {   /* remembered when short (len 0: an empty slot) */
            unsigned k = m->next++ % DRA_TAKE_QTY;
            memcpy(m->qty[k].text, s, n);
            m->qty[k].len = (uint8_t)n;
            m->qty[k].q = parsed;
            q = &m->qty[k].q;
        } else {
            return parsed.mant == o->mant && parsed.exp == o->exp && parsed.format == o->format && parsed.big == o->big;
        }
    }
    return q->mant == o->mant && q->exp == o->exp && q->format == o->format && q->big == o->big;
}

/* v is {"value": <quantity>} and nothing else, with o's fields. */
static bool same_value_only(dra_take_memo *m, const json_t *v, const quantity *o) {
    if (!json_is_object(v) || json_object_size(v) != 1) return false;
    void *it = json_object_iter((json_t *)v);
    return streq(json_object_iter_key(it), "value") && same_quantity(m, json_object_iter_value(it), o);
}

/* One attribute value: exactly one member, a scalar of its kind equal to a's. */
static bool same_attr(const json_t *v, const cel_attr *a, const dra_attr_text *t) {
    if (!json_is_object(v) || json_object_size(v) != 1 || t->vers) return false;
    void *it = json_object_iter((json_t *)v);
    const char *k = json_object_iter_key(it);
    const json_t *x = json_object_iter_value(it);
    switch (a->kind) {
    case CEL_ATTR_INT: return streq(k, "int") && json_is_integer(x) && json_integer_value(x) == a->u.i;
    case CEL_ATTR_BOOL: return streq(k, "bool") && json_is_boolean(x) && json_is_true(x) == a->u.b;
    case CEL_ATTR_STRING:
        /* the length as decoded (strlen: a string with a NUL in it differs here and is decoded) */
        return streq(k, "string") && json_is_string(x) && json_string_length(x) == a->u.s->len &&
               !memcmp(json_string_value(x), a->u.s->s, a->u.s->len);
    case CEL_ATTR_VERSION: return streq(k, "version") && json_is_string(x) && t->ver && streq(json_string_value(x), t->ver);
    default: return false;   /* lists: decoded */
    }
}

static bool same_attrs(const json_t *attrs, const dra_device *o) {
    if (!attrs) return !o->cel.attrs && !o->attr_text && !o->cel.nattrs;
    if (!json_is_object(attrs) || !o->cel.nattrs || json_object_size(attrs) != o->cel.nattrs) return false;
    const char *k;
    const json_t *v;
    uint32_t i = 0;
    /* the key text determines domain and name (the driver is the same: the caller
     * checks) */
    json_object_foreach((json_t *)attrs, k, v) {
        if (!streq(k, o->attr_text[i].key) || !same_attr(v, &o->cel.attrs[i], &o->attr_text[i])) return false;
        i++;
    }
    return true;
}

static bool same_caps(dra_take_memo *m, const json_t *caps, const dra_device *o) {
    if (!caps) return !o->caps && !o->cel.caps && !o->cel.ncaps;
    if (!json_is_object(caps) || !o->cel.ncaps || json_object_size(caps) != o->cel.ncaps) return false;
    const char *k;
    const json_t *v;
    uint32_t i = 0;
    json_object_foreach((json_t *)caps, k, v) {
        const dra_capacity *c = &o->caps[i++];
        if (c->policy || !streq(k, c->key) || !same_value_only(m, v, &c->value)) return false;
    }
    return true;
}

/* consumesCounters: each entry {counterSet, counters} and nothing else. */
static bool same_consumes(dra_take_memo *m, const json_t *cons, const dra_device *o) {
    if (!cons) return !o->consumes && !o->nconsumes;
    if (!json_is_array(cons) || !o->nconsumes || json_array_size(cons) != o->nconsumes) return false;
    for (uint32_t j = 0; j < o->nconsumes; j++) {
        const json_t *e = json_array_get(cons, j);
        const dra_counter_set *cs = &o->consumes[j];
        if (!json_is_object(e) || json_object_size(e) != 2) return false;
        const json_t *name = dra__dmember(e, "counterSet"), *ctrs = dra__dmember(e, "counters");
        if (!json_is_string(name) || !streq(json_string_value(name), cs->name)) return false;
        if (!json_is_object(ctrs) || !cs->ncounters || json_object_size(ctrs) != cs->ncounters) return false;
        const char *k;
        const json_t *v;
        uint32_t i = 0;
        json_object_foreach((json_t *)ctrs, k, v) {
            const dra_counter *c = &cs->counters[i++];
            if (!streq(k, c->name) || !same_value_only(m, v, &c->value)) return false;
        }
    }
    return true;
}

static const char *const TAKE_MEMBERS[] = {"name", "attributes", "capacity", "consumesCounters"};

bool dra__device_unchanged(dra_take_memo *m, const json_t *v, const dra_device *o) {
    /* what only other members set, or a conversion error (its text names the
     * attribute): not compared, decoded */
    if (!json_is_object(v) || o->cel.conv_error || o->node_name || o->all_nodes || o->node_selector || o->taints ||
        o->ntaints || o->binding_conditions.v || o->binding_conditions.n || o->binding_failure_conditions.v ||
        o->binding_failure_conditions.n || o->binds_to_node || o->allow_multi || o->cel.allow_multiple_allocations)
        return false;
    const json_t *mem[4];
    if (dra__dmembers(v, TAKE_MEMBERS, 4, mem)) return false;   /* another member: decoded */
    return json_is_string(mem[0]) && streq(json_string_value(mem[0]), o->name) && same_attrs(mem[1], o) &&
           same_caps(m, mem[2], o) && same_consumes(m, mem[3], o);
}
