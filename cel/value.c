/* value.c — construction, equality, ordering, map lookup and printing of CEL
 * runtime values (see value.h). Equality and ordering follow cel-spec: numbers
 * compare by mathematical value across int, uint and double; values of unrelated
 * kinds are simply unequal; NaN is unordered. */
#include "cel/value.h"

#include "base/hash.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cel_value cel__error_fmt(arena *a, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return cel_error_static(arena_strdup(a, buf));
}

cel_value cel__optional_of(arena *a, cel_value v) {
    cel_value *p = arena_alloc(a, sizeof *p);
    *p = v;
    cel_value o = {.kind = CV_OPTIONAL};
    o.u.opt = p;
    return o;
}

cel_value cel__string_copy(arena *a, const char *s, size_t n) {
    return cel_string(arena_strndup(a, s, n), n);
}

cel_list *cel__list_new(arena *a, uint32_t cap) {
    cel_list *l = arena_alloc(a, sizeof *l);
    l->n = 0;
    l->cap = cap;
    l->items = cap ? arena_alloc(a, sizeof(cel_value) * cap) : NULL;
    return l;
}

void cel__list_push(arena *a, cel_list *l, cel_value v) {
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? l->cap * 2 : 4;
        cel_value *ni = arena_alloc(a, sizeof(cel_value) * nc);
        if (l->n) memcpy(ni, l->items, sizeof(cel_value) * l->n);
        l->items = ni;
        l->cap = nc;
    }
    l->items[l->n++] = v;
}

cel_map *cel__map_new(arena *a, uint32_t cap) {
    cel_map *m = arena_alloc(a, sizeof *m);
    m->n = 0;
    m->cap = cap;
    m->keys = cap ? arena_alloc(a, sizeof(cel_value) * cap) : NULL;
    m->vals = cap ? arena_alloc(a, sizeof(cel_value) * cap) : NULL;
    m->slots = NULL;
    m->nslots = 0;
    return m;
}

uint64_t cel__value_hash(const cel_value *v) {
    switch ((cel_kind)v->kind) {
    case CV_INT: return hash_u64((uint64_t)v->u.i);
    case CV_UINT:
        /* a uint equal to some int hashes as that int */
        return v->u.u <= (uint64_t)INT64_MAX ? hash_u64(v->u.u) : hash_u64(v->u.u) ^ 0x9e3779b97f4a7c15u;
    case CV_DOUBLE: {
        double d = v->u.d;
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d)
            return hash_u64((uint64_t)(int64_t)d);
        if (d >= 9223372036854775808.0 && d < 18446744073709551616.0 && d == (double)(uint64_t)d)
            return hash_u64((uint64_t)d) ^ 0x9e3779b97f4a7c15u;
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return hash_u64(bits);
    }
    case CV_BOOL: return hash_u64(v->u.b ? 0x51ED270B27u : 0x2545F4914Fu);
    case CV_STRING:
    case CV_BYTES: return hash_bytes(v->u.s, v->len) ^ v->kind;
    default:
        /* keys of other kinds are not valid CEL map keys; they still work, by equality,
         * in one bucket per kind */
        return hash_u64(v->kind);
    }
}

/* The slot where key k is, or the empty slot where it would go. */
static uint32_t slot_of(const cel_map *m, const cel_value *k, uint64_t h) {
    uint32_t mask = m->nslots - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        uint32_t e = m->slots[i];
        if (!e || cel__value_equal(&m->keys[e - 1], k)) return i;
    }
}

static void index_build(arena *a, cel_map *m, uint32_t nslots) {
    assert((nslots & (nslots - 1)) == 0 && nslots >= 2 * m->n);
    m->slots = arena_zalloc(a, sizeof(uint32_t) * nslots);
    m->nslots = nslots;
    for (uint32_t i = 0; i < m->n; i++) {
        uint32_t s = slot_of(m, &m->keys[i], cel__value_hash(&m->keys[i]));
        /* keys filled in directly should be distinct; if a view ever held the same
         * key twice, the first one wins, as a scan would find it */
        if (!m->slots[s]) m->slots[s] = i + 1;
    }
}

void cel__map_reindex(arena *a, cel_map *m) {
    if (m->n <= CEL_MAP_LINEAR) {
        m->slots = NULL;
        m->nslots = 0;
        return;
    }
    uint32_t ns = 16;
    while (ns < 2 * m->n) ns *= 2;
    index_build(a, m, ns);
}

static int map_index(const cel_map *m, const cel_value *k) {
    if (m->slots) {
        uint32_t e = m->slots[slot_of(m, k, cel__value_hash(k))];
        return e ? (int)e - 1 : -1;
    }
    for (uint32_t i = 0; i < m->n; i++)
        if (cel__value_equal(&m->keys[i], k)) return (int)i;
    return -1;
}

void cel__map_put(arena *a, cel_map *m, cel_value k, cel_value v) {
    int i = map_index(m, &k);
    if (i >= 0) {
        m->vals[i] = v;
        return;
    }
    if (m->n == m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 4;
        cel_value *nk = arena_alloc(a, sizeof(cel_value) * nc);
        cel_value *nv = arena_alloc(a, sizeof(cel_value) * nc);
        if (m->n) {
            memcpy(nk, m->keys, sizeof(cel_value) * m->n);
            memcpy(nv, m->vals, sizeof(cel_value) * m->n);
        }
        m->keys = nk;
        m->vals = nv;
        m->cap = nc;
    }
    m->keys[m->n] = k;
    m->vals[m->n] = v;
    m->n++;
    if (m->n <= CEL_MAP_LINEAR) return;
    if (!m->slots || 2 * m->n > m->nslots) {
        cel__map_reindex(a, m);   /* doubles: amortised O(1) per insert */
        return;
    }
    uint32_t s = slot_of(m, &k, cel__value_hash(&k));
    assert(!m->slots[s]);
    m->slots[s] = m->n;
}

const char *cel__kind_type_name(const cel_value *v) {
    switch ((cel_kind)v->kind) {
    case CV_ERROR: return "error";
    case CV_NULL: return "null_type";
    case CV_BOOL: return "bool";
    case CV_INT: return "int";
    case CV_UINT: return "uint";
    case CV_DOUBLE: return "double";
    case CV_STRING: return "string";
    case CV_BYTES: return "bytes";
    case CV_LIST: return "list";
    case CV_MAP: case CV_DEVMAP: case CV_DEVDOMAIN: return "map";
    case CV_TYPE: return "type";
    case CV_OPTIONAL: return "optional_type";
    case CV_QUANTITY: return "kubernetes.Quantity";
    case CV_SEMVER: return "kubernetes.Semver";
    case CV_DEVICE: return "kubernetes.DRADevice";
    case CV_OPAQUE: return v->u.o->type->name;
    case CV_TIMESTAMP: return "google.protobuf.Timestamp";
    case CV_DURATION: return "google.protobuf.Duration";
    case CV_KIND_COUNT: break;
    }
    return "unknown";
}

/* ---- numbers ---------------------------------------------------------------- */

static bool is_num(uint8_t k) { return k == CV_INT || k == CV_UINT || k == CV_DOUBLE; }

/* -1/0/1, or 2 when unordered (NaN). long double holds every int64, uint64 and
 * double exactly on x86-64, so one comparison covers every mixed pair. */
static int num_cmp(const cel_value *a, const cel_value *b) {
    if (a->kind == b->kind) {
        switch (a->kind) {
        case CV_INT: return (a->u.i > b->u.i) - (a->u.i < b->u.i);
        case CV_UINT: return (a->u.u > b->u.u) - (a->u.u < b->u.u);
        default:
            if (isnan(a->u.d) || isnan(b->u.d)) return 2;
            return (a->u.d > b->u.d) - (a->u.d < b->u.d);
        }
    }
    if (a->kind == CV_INT && b->kind == CV_UINT) return a->u.i < 0 ? -1 : ((uint64_t)a->u.i > b->u.u) - ((uint64_t)a->u.i < b->u.u);
    if (a->kind == CV_UINT && b->kind == CV_INT) return b->u.i < 0 ? 1 : (a->u.u > (uint64_t)b->u.i) - (a->u.u < (uint64_t)b->u.i);
    /* a double against an int or uint: cel-go's compareIntDouble/compareUintDouble —
     * out-of-range doubles order outright, otherwise compare as doubles */
    if (a->kind == CV_DOUBLE) {
        int r = num_cmp(b, a);
        return r == 2 ? 2 : -r;
    }
    double d = b->u.d;
    if (isnan(d)) return 2;
    if (a->kind == CV_INT) {
        if (d < -9223372036854775808.0) return 1;
        if (d > 9223372036854775807.0) return -1;
        double x = (double)a->u.i;
        return (x > d) - (x < d);
    }
    if (d < 0) return 1;
    if (d > 18446744073709551615.0) return -1;
    double x = (double)a->u.u;
    return (x > d) - (x < d);
}

static int bytes_cmp(const cel_value *a, const cel_value *b) {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->u.s, b->u.s, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (a->len > b->len) - (a->len < b->len);
}

static bool devview_equal(const cel_value *a, const cel_value *b);

/* Equality, adding to *w the work it did (bytes compared, 16 per element visited). */
static bool equal_w(const cel_value *a, const cel_value *b, uint64_t *w) {
    if (is_num(a->kind) && is_num(b->kind)) return num_cmp(a, b) == 0;
    bool am = a->kind == CV_MAP || a->kind == CV_DEVMAP || a->kind == CV_DEVDOMAIN;
    bool bm = b->kind == CV_MAP || b->kind == CV_DEVMAP || b->kind == CV_DEVDOMAIN;
    if (am && bm && (a->kind != CV_MAP || b->kind != CV_MAP)) return devview_equal(a, b);
    if (a->kind != b->kind) return false;
    switch ((cel_kind)a->kind) {
    case CV_NULL: return true;
    case CV_BOOL: return a->u.b == b->u.b;
    case CV_STRING:
    case CV_BYTES:
    case CV_TYPE:
        if (a->len != b->len) return false;
        *w += a->len;
        return a->len == 0 || memcmp(a->u.s, b->u.s, a->len) == 0;
    case CV_LIST: {
        const cel_list *x = a->u.list, *y = b->u.list;
        if (x->n != y->n) return false;
        for (uint32_t i = 0; i < x->n; i++) {
            *w += 16;
            if (!equal_w(&x->items[i], &y->items[i], w)) return false;
        }
        return true;
    }
    case CV_MAP: {
        const cel_map *x = a->u.map, *y = b->u.map;
        if (x->n != y->n) return false;
        for (uint32_t i = 0; i < x->n; i++) {
            *w += 16;
            /* a map against itself: every key is there, only values unequal to
             * themselves (NaN) can make it unequal */
            int j = x == y ? (int)i : map_index(y, &x->keys[i]);
            if (j < 0 || !equal_w(&x->vals[i], &y->vals[j], w)) return false;
        }
        return true;
    }
    case CV_OPTIONAL:
        if (!a->u.opt || !b->u.opt) return a->u.opt == b->u.opt;
        return equal_w(a->u.opt, b->u.opt, w);
    case CV_QUANTITY: return quantity_cmp(a->u.q, b->u.q) == 0;
    case CV_SEMVER: return semver_cmp(a->u.v, b->u.v) == 0;
    case CV_DEVICE: return a->u.dev == b->u.dev;
    case CV_TIMESTAMP:
    case CV_DURATION: return a->u.i == b->u.i && a->len == b->len;
    case CV_OPAQUE:
        if (a->u.o->type != b->u.o->type) return false;
        if (!a->u.o->type->cmp) return a->u.o->data == b->u.o->data;
        return a->u.o->type->cmp(a->u.o, b->u.o) == 0;
    default: return false;
    }
}

bool cel__value_equal(const cel_value *a, const cel_value *b) {
    uint64_t w = 0;
    return equal_w(a, b, &w);
}

bool cel__value_equal_work(const cel_value *a, const cel_value *b, uint64_t *work) { return equal_w(a, b, work); }

/* Equality involving the device views (`device.attributes == {...}`) is not
 * something selectors write; a view is equal to itself and, when empty, to an empty
 * map. Comparing contents would need the intern table to spell the keys, which a
 * value does not carry. */
static bool devview_equal(const cel_value *a, const cel_value *b) {
    if (a->kind == b->kind && a->u.dev == b->u.dev && a->aux == b->aux && a->len == b->len) return true;
    if (a->kind == CV_MAP && a->u.map->n == 0) return cel__map_size(b) == 0;
    if (b->kind == CV_MAP && b->u.map->n == 0) return cel__map_size(a) == 0;
    return false;
}

bool cel__value_compare(const cel_value *a, const cel_value *b, int *out) {
    if (is_num(a->kind) && is_num(b->kind)) {
        *out = num_cmp(a, b);
        return true;
    }
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case CV_BOOL: *out = (a->u.b > b->u.b) - (a->u.b < b->u.b); return true;
    case CV_STRING:
    case CV_BYTES: *out = bytes_cmp(a, b); return true;
    case CV_TIMESTAMP:
    case CV_DURATION:
        *out = a->u.i != b->u.i ? (a->u.i > b->u.i) - (a->u.i < b->u.i) : (a->len > b->len) - (a->len < b->len);
        return true;
    default: return false;
    }
}

/* ---- maps and device views --------------------------------------------------- */

static bool domain_present(const cel_device *d, int caps, uint32_t dom) {
    if (caps) {
        for (uint32_t i = 0; i < d->ncaps; i++)
            if (d->caps[i].domain == dom) return true;
    } else {
        for (uint32_t i = 0; i < d->nattrs; i++)
            if (d->attrs[i].domain == dom) return true;
    }
    return false;
}

cel_value cel__attr_value(arena *a, const cel_attr *at) {
    switch ((cel_attr_kind)at->kind) {
    case CEL_ATTR_INT: return cel_int(at->u.i);
    case CEL_ATTR_BOOL: return cel_bool(at->u.b);
    case CEL_ATTR_STRING: return cel_string(at->u.s->s, at->u.s->len);
    case CEL_ATTR_VERSION: return cel_semver_value(at->u.v);
    case CEL_ATTR_INTS: {
        cel_list *l = cel__list_new(a, at->u.list->count);
        for (uint32_t i = 0; i < at->u.list->count; i++) l->items[i] = cel_int(at->u.list->ints[i]);
        l->n = at->u.list->count;
        return cel_list_value(l);
    }
    case CEL_ATTR_BOOLS: {
        cel_list *l = cel__list_new(a, at->u.list->count);
        for (uint32_t i = 0; i < at->u.list->count; i++) l->items[i] = cel_bool(at->u.list->bools[i]);
        l->n = at->u.list->count;
        return cel_list_value(l);
    }
    case CEL_ATTR_STRINGS: {
        cel_list *l = cel__list_new(a, at->u.list->count);
        for (uint32_t i = 0; i < at->u.list->count; i++) l->items[i] = cel_string(at->u.list->strs[i].s, at->u.list->strs[i].len);
        l->n = at->u.list->count;
        return cel_list_value(l);
    }
    case CEL_ATTR_VERSIONS: {
        cel_list *l = cel__list_new(a, at->u.list->count);
        for (uint32_t i = 0; i < at->u.list->count; i++) l->items[i] = cel_semver_value(&at->u.list->vers[i]);
        l->n = at->u.list->count;
        return cel_list_value(l);
    }
    case CEL_ATTR_NONE: break;
    }
    return cel_error_static("unsupported attribute value");
}

bool cel__map_find(arena *a, const intern_table *names, const cel_value *m, const cel_value *key,
                  cel_value *out) {
    switch (m->kind) {
    case CV_MAP: {
        int i = map_index(m->u.map, key);
        if (i < 0) return false;
        *out = m->u.map->vals[i];
        return true;
    }
    case CV_DEVMAP: {
        if (key->kind != CV_STRING) return false;
        uint32_t dom = intern_get(names, key->u.s, key->len);
        if (!dom || !domain_present(m->u.dev, m->aux, dom)) return false;
        cel_value v = {.kind = CV_DEVDOMAIN, .aux = m->aux, .len = dom};
        v.u.dev = m->u.dev;
        *out = v;
        return true;
    }
    case CV_DEVDOMAIN: {
        if (key->kind != CV_STRING || !m->len) return false;
        uint32_t id = intern_get(names, key->u.s, key->len);
        if (!id) return false;
        const cel_device *d = m->u.dev;
        if (m->aux == CEL_DM_CAPS) {
            for (uint32_t i = 0; i < d->ncaps; i++)
                if (d->caps[i].domain == m->len && d->caps[i].name == id) {
                    *out = cel_quantity_value(d->caps[i].value);
                    return true;
                }
        } else {
            for (uint32_t i = 0; i < d->nattrs; i++)
                if (d->attrs[i].domain == m->len && d->attrs[i].name == id) {
                    *out = cel__attr_value(a, &d->attrs[i]);
                    return true;
                }
        }
        return false;
    }
    default: return false;
    }
}

uint32_t cel__map_size(const cel_value *m) {
    switch (m->kind) {
    case CV_MAP: return m->u.map->n;
    case CV_DEVMAP: {
        /* distinct domains */
        const cel_device *d = m->u.dev;
        uint32_t n = 0, total = m->aux == CEL_DM_CAPS ? d->ncaps : d->nattrs;
        for (uint32_t i = 0; i < total; i++) {
            uint32_t dom = m->aux == CEL_DM_CAPS ? d->caps[i].domain : d->attrs[i].domain;
            bool seen = false;
            for (uint32_t j = 0; j < i && !seen; j++)
                seen = (m->aux == CEL_DM_CAPS ? d->caps[j].domain : d->attrs[j].domain) == dom;
            if (!seen) n++;
        }
        return n;
    }
    case CV_DEVDOMAIN: {
        const cel_device *d = m->u.dev;
        uint32_t n = 0;
        if (!m->len) return 0;
        if (m->aux == CEL_DM_CAPS) {
            for (uint32_t i = 0; i < d->ncaps; i++) n += d->caps[i].domain == m->len;
        } else {
            for (uint32_t i = 0; i < d->nattrs; i++) n += d->attrs[i].domain == m->len;
        }
        return n;
    }
    default: return 0;
    }
}

static cel_value interned_string(const intern_table *names, uint32_t id) {
    const char *s = intern_str(names, id);
    return cel_string(s ? s : "", s ? intern_len(names, id) : 0);
}

const cel_map *cel__devmap_materialize(arena *a, const intern_table *names, const cel_value *m) {
    if (m->kind == CV_MAP) return m->u.map;
    const cel_device *d = m->u.dev;
    uint32_t total = m->aux == CEL_DM_CAPS ? d->ncaps : d->nattrs;
    cel_map *out = cel__map_new(a, total ? total : 1);
    for (uint32_t i = 0; i < total; i++) {
        uint32_t dom = m->aux == CEL_DM_CAPS ? d->caps[i].domain : d->attrs[i].domain;
        uint32_t name = m->aux == CEL_DM_CAPS ? d->caps[i].name : d->attrs[i].name;
        if (m->kind == CV_DEVMAP) {
            cel_value k = interned_string(names, dom);
            bool seen = false;
            for (uint32_t j = 0; j < out->n && !seen; j++) seen = cel__value_equal(&out->keys[j], &k);
            if (seen) continue;
            cel_value v = {.kind = CV_DEVDOMAIN, .aux = m->aux, .len = dom};
            v.u.dev = d;
            out->keys[out->n] = k;
            out->vals[out->n] = v;
            out->n++;
        } else {
            if (dom != m->len) continue;
            out->keys[out->n] = interned_string(names, name);
            out->vals[out->n] = m->aux == CEL_DM_CAPS ? cel_quantity_value(d->caps[i].value)
                                                      : cel__attr_value(a, &d->attrs[i]);
            out->n++;
        }
    }
    cel__map_reindex(a, out);
    return out;
}

uint64_t cel__utf8_len_capped(const char *s, size_t n, uint64_t cap) {
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
        if (c > cap) return c;
    }
    return c;
}

uint64_t cel__cost_factor(uint64_t n, double f) {
    double c = ceil((double)n * f);
    return c >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)c;
}

uint64_t cel__value_size(const cel_value *v) {
    switch ((cel_kind)v->kind) {
    case CV_STRING: return cel__utf8_len(v->u.s, v->len);
    case CV_BYTES: return v->len;
    case CV_LIST: return v->u.list->n;
    case CV_MAP:
    case CV_DEVMAP:
    case CV_DEVDOMAIN: return cel__map_size(v);
    default: return 1;
    }
}

size_t cel__utf8_len(const char *s, size_t n) { return cel_utf8_count(s, n); }

cel_str cel_str_of(const char *s, uint32_t n) { return (cel_str){.s = s, .len = n, .runes = (uint32_t)cel_utf8_count(s, n)}; }

/* ---- printing ---------------------------------------------------------------- */

typedef struct out {
    char *buf;
    size_t n, len;
} out;

/* Writes what fits (always NUL-terminated) and counts all of it, like snprintf. */
static void put(out *o, const char *s, size_t n) {
    if (o->len + 1 < o->n) {
        size_t room = o->n - 1 - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
    if (o->n) o->buf[o->len < o->n ? o->len : o->n - 1] = '\0';
}
static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

/* A buffer that is full: the rest is not looked at (a result can be 100 MB, the
 * caller's buffer a line). Only sizing (n == 0) needs the whole length. */
static bool full(const out *o) { return o->n && o->len >= o->n; }

static void put_quoted(out *o, const char *s, size_t n, bool bytes) {
    if (bytes) puts_(o, "b");
    puts_(o, "\"");
    for (size_t i = 0; i < n && !full(o); i++) {
        /* a run that needs no escape goes in one copy (results can be 100 MB long) */
        size_t r = i, lim = n;
        if (o->n && o->n - o->len < n - i) lim = i + (o->n - o->len);   /* no further than fits */
        while (r < lim && (unsigned char)s[r] >= 0x20 && s[r] != '"' && s[r] != '\\' &&
               !(bytes && (unsigned char)s[r] >= 0x7f))
            r++;
        if (r > i) {
            put(o, s + i, r - i);
            i = r - 1;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        char tmp[8];
        switch (c) {
        case '"': puts_(o, "\\\""); break;
        case '\\': puts_(o, "\\\\"); break;
        case '\n': puts_(o, "\\n"); break;
        case '\r': puts_(o, "\\r"); break;
        case '\t': puts_(o, "\\t"); break;
        default:
            if (c < 0x20 || (bytes && c >= 0x7f)) {
                snprintf(tmp, sizeof tmp, "\\x%02x", c);
                puts_(o, tmp);
            } else {
                put(o, (const char *)&c, 1);
            }
        }
    }
    puts_(o, "\"");
}

int cel__shortest_e(double d, char *e, size_t n) {
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(e, n, "%.*e", p - 1, d);
        if (strtod(e, NULL) == d) return p;
    }
    return 17;   /* %.16e reads back exactly: the loop ends there */
}

void cel__format_double(double d, char *buf, size_t n) {
    if (isnan(d)) { snprintf(buf, n, "NaN"); return; }
    if (isinf(d)) { snprintf(buf, n, d > 0 ? "+Inf" : "-Inf"); return; }
    char e[64];
    int p = cel__shortest_e(d, e, sizeof e);
    const char *ep = strchr(e, 'e');
    int exp = ep ? atoi(ep + 1) : 0;
    /* Go's shortest 'g': exponent form when exp < -4 or exp >= 6 (precision 6 decides) */
    if (exp < -4 || exp >= 6) {
        snprintf(buf, n, "%.*e", p - 1, d);
    } else {
        int dec = p - 1 - exp;
        snprintf(buf, n, "%.*f", dec > 0 ? dec : 0, d);
    }
}

static void fmt_value(out *o, const cel_value *v, const intern_table *names) {
    char tmp[128];
    if (full(o)) return;
    switch ((cel_kind)v->kind) {
    case CV_ERROR: puts_(o, "error: "); puts_(o, v->u.s); break;
    case CV_NULL: puts_(o, "null"); break;
    case CV_BOOL: puts_(o, v->u.b ? "true" : "false"); break;
    case CV_INT: snprintf(tmp, sizeof tmp, "%lld", (long long)v->u.i); puts_(o, tmp); break;
    case CV_UINT: snprintf(tmp, sizeof tmp, "%lluu", (unsigned long long)v->u.u); puts_(o, tmp); break;
    case CV_DOUBLE:
        cel__format_double(v->u.d, tmp, sizeof tmp);
        /* keep doubles recognisable in literal text: 1.0, not 1 */
        if (!strpbrk(tmp, ".eIN")) strcat(tmp, ".0");
        puts_(o, tmp);
        break;
    case CV_STRING: put_quoted(o, v->u.s, v->len, false); break;
    case CV_BYTES: put_quoted(o, v->u.s, v->len, true); break;
    case CV_TYPE: put(o, v->u.s, v->len); break;
    case CV_LIST:
        puts_(o, "[");
        for (uint32_t i = 0; i < v->u.list->n && !full(o); i++) {
            if (i) puts_(o, ", ");
            fmt_value(o, &v->u.list->items[i], names);
        }
        puts_(o, "]");
        break;
    case CV_MAP:
    case CV_DEVMAP:
    case CV_DEVDOMAIN: {
        arena a;
        arena_init(&a, 4096);
        const cel_map *m = v->kind == CV_MAP ? v->u.map : cel__devmap_materialize(&a, names, v);
        puts_(o, "{");
        for (uint32_t i = 0; i < m->n && !full(o); i++) {
            if (i) puts_(o, ", ");
            fmt_value(o, &m->keys[i], names);
            puts_(o, ": ");
            fmt_value(o, &m->vals[i], names);
        }
        puts_(o, "}");
        arena_free(&a);
        break;
    }
    case CV_OPTIONAL:
        if (!v->u.opt) {
            puts_(o, "optional.none()");
        } else {
            puts_(o, "optional.of(");
            fmt_value(o, v->u.opt, names);
            puts_(o, ")");
        }
        break;
    case CV_QUANTITY: {
        char q[QUANTITY_STR_MAX];
        quantity_format(v->u.q, q, sizeof q);
        puts_(o, "quantity(\"");
        puts_(o, q);
        puts_(o, "\")");
        break;
    }
    case CV_SEMVER: {
        char s[256];
        semver_format(v->u.v, s, sizeof s);
        puts_(o, "semver(\"");
        puts_(o, s);
        puts_(o, "\")");
        break;
    }
    case CV_DEVICE: puts_(o, "device"); break;
    case CV_TIMESTAMP:
        cel__format_timestamp(v->u.i, v->len, tmp, sizeof tmp);
        puts_(o, "timestamp(\"");
        puts_(o, tmp);
        puts_(o, "\")");
        break;
    case CV_DURATION:
        cel__format_duration(v->u.i, v->len, tmp, sizeof tmp);
        puts_(o, "duration(\"");
        puts_(o, tmp);
        puts_(o, "\")");
        break;
    case CV_OPAQUE:
        if (v->u.o->type->format) {
            char b[512];
            v->u.o->type->format(v->u.o, b, sizeof b);
            puts_(o, b);
        } else {
            puts_(o, v->u.o->type->name);
        }
        break;
    case CV_KIND_COUNT: break;
    }
}

size_t cel__value_format(const cel_value *v, const intern_table *names, char *buf, size_t n) {
    out o = {buf, n, 0};
    if (n) buf[0] = '\0';
    fmt_value(&o, v, names);
    return o.len;
}

cel_value cel__value_clone(arena *a, const intern_table *names, const cel_value *v) {
    cel_value r = *v;
    switch ((cel_kind)v->kind) {
    case CV_ERROR: r.u.s = arena_strdup(a, v->u.s); break;
    case CV_STRING:
    case CV_BYTES:
    case CV_TYPE: r.u.s = arena_strndup(a, v->u.s, v->len); break;
    case CV_LIST: {
        cel_list *l = cel__list_new(a, v->u.list->n);
        for (uint32_t i = 0; i < v->u.list->n; i++) l->items[i] = cel__value_clone(a, names, &v->u.list->items[i]);
        l->n = v->u.list->n;
        l->cap = l->n;
        r.u.list = l;
        break;
    }
    case CV_MAP:
    case CV_DEVMAP:
    case CV_DEVDOMAIN: {
        const cel_map *src = cel__devmap_materialize(a, names, v);
        cel_map *m = cel__map_new(a, src->n);
        for (uint32_t i = 0; i < src->n; i++) {
            m->keys[i] = cel__value_clone(a, names, &src->keys[i]);
            m->vals[i] = cel__value_clone(a, names, &src->vals[i]);
        }
        m->n = src->n;
        cel__map_reindex(a, m);
        r = cel_map_value(m);
        break;
    }
    case CV_OPTIONAL:
        if (v->u.opt) r = cel__optional_of(a, cel__value_clone(a, names, v->u.opt));
        break;
    case CV_QUANTITY: r.u.q = arena_memdup(a, v->u.q, sizeof *v->u.q); break;
    case CV_SEMVER: {
        semver *s = arena_memdup(a, v->u.v, sizeof *v->u.v);
        if (s->pre) s->pre = arena_strndup(a, s->pre, s->pre_len);
        if (s->build) s->build = arena_strndup(a, s->build, s->build_len);
        r.u.v = s;
        break;
    }
    default: break;
    }
    return r;
}
