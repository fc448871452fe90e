/* value.h — the runtime values of the CEL evaluator (private to cel/ and its tests,
 * and the vocabulary library files in cel/lib_*.c speak).
 *
 * A cel_value is 16 bytes passed by value: a kind tag plus an 8-byte payload.
 * Scalars live inline; strings and bytes are (pointer, length) views that never own
 * their text; lists, maps, quantities, optionals point to data that lives either in
 * the program (constants, built at compile time) or in the evaluation context's
 * arena (reset before every evaluation), or in the device view the engine owns.
 * Nothing here calls malloc: whoever builds a value passes an arena.
 *
 * Errors are values too (CV_ERROR with a message), because CEL's `&&`, `||` and
 * `?:` must be able to hold an error and discard it when the other side decides.
 *
 * The device maps (`device.attributes`, `device.attributes["dom"]`, and the same for
 * capacity) are lazy views over the cel_device (CV_DEVMAP, CV_DEVDOMAIN): a lookup
 * scans the device's interned (domain, name) pairs, and only iteration materialises
 * an ordinary map. */
#ifndef DRA_CEL_VALUE_H
#define DRA_CEL_VALUE_H

#include "base/arena.h"
#include "base/base.h"
#include "cel/cel.h"
#include "cel/civil_time.h"

#include <string.h>

typedef enum cel_kind {
    CV_ERROR = 0,   /* u.s = message (NUL-terminated) */
    CV_NULL,
    CV_BOOL,
    CV_INT,
    CV_UINT,
    CV_DOUBLE,
    CV_STRING,      /* u.s, len bytes of UTF-8 */
    CV_BYTES,       /* u.s, len bytes */
    CV_LIST,        /* u.list */
    CV_MAP,         /* u.map */
    CV_TYPE,        /* u.s = type name ("int", "list", "kubernetes.Quantity", ...), len */
    CV_OPTIONAL,    /* u.opt = the value, NULL for optional.none() */
    CV_QUANTITY,    /* u.q */
    CV_SEMVER,      /* u.v */
    CV_DEVICE,      /* u.dev: the `device` variable */
    CV_DEVMAP,      /* u.dev; aux = CEL_DM_ATTRS or CEL_DM_CAPS: device.attributes / capacity */
    CV_DEVDOMAIN,   /* u.dev; aux = CEL_DM_*; len = interned domain id (0: unknown domain) */
    CV_OPAQUE,      /* u.o: a library-defined value (url, ip, cidr, format, ...) */
    CV_TIMESTAMP,   /* u.i = seconds since the Unix epoch, len = nanoseconds [0, 1e9) */
    CV_DURATION,    /* u.i = seconds (floor), len = nanoseconds [0, 1e9): value = u.i + len / 1e9 */
    CV_KIND_COUNT
} cel_kind;

_Static_assert(CV_KIND_COUNT <= 32, "dispatch keeps accepted kinds in a 32-bit mask");

enum { CEL_DM_ATTRS = 0, CEL_DM_CAPS = 1 };

typedef struct cel_list cel_list;
typedef struct cel_map cel_map;
typedef struct cel_opaque cel_opaque;
typedef struct cel_value cel_value;

struct cel_value {
    uint8_t kind;   /* cel_kind */
    uint8_t aux;    /* kind-specific flag (device map flavour) */
    uint32_t len;   /* byte length of strings/bytes/type names; domain id of a CV_DEVDOMAIN */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
        const cel_list *list;
        const cel_map *map;
        const cel_value *opt;
        const quantity *q;
        const semver *v;
        const cel_device *dev;
        const cel_opaque *o;
    } u;
};

struct cel_list {
    uint32_t n;
    uint32_t cap;          /* > n only for a list a comprehension is still appending to */
    cel_value *items;
};

/* Maps keep insertion order in keys/vals; lookups use CEL key equality, so 1, 1u and
 * 1.0 find the same entry. Small maps (the ones selectors write) are scanned; past
 * CEL_MAP_LINEAR entries a hash index over the entries makes lookups and inserts
 * O(1), so building a map of n entries (transformMap) is O(n) and map equality is
 * linear. The index is kept up to date by cel__map_put; code that fills keys/vals
 * directly must call cel__map_reindex afterwards. Lookups never write to a map, so
 * constant maps of a program may be shared by threads. */
#define CEL_MAP_LINEAR 8
struct cel_map {
    uint32_t n;
    uint32_t cap;
    cel_value *keys;
    cel_value *vals;
    uint32_t *slots;       /* open addressing, entry index + 1 (0: empty); NULL while small */
    uint32_t nslots;       /* power of two, at least twice n */
};

/* A library value: `type` names its CEL type (e.g. "net.IP") and is compared by
 * pointer, so each library defines one static cel_opaque_type per type. */
typedef struct cel_opaque_type {
    const char *name;
    /* 0 when equal; nonzero otherwise. NULL: identity. */
    int (*cmp)(const cel_opaque *a, const cel_opaque *b);
    /* writes a CEL literal form for `dralloc cel eval` */
    void (*format)(const cel_opaque *o, char *buf, size_t n);
} cel_opaque_type;

struct cel_opaque {
    const cel_opaque_type *type;
    const void *data;
};

/* ---- constructors ---------------------------------------------------------- */

static inline cel_value cel_null(void) { cel_value v = {.kind = CV_NULL}; return v; }
static inline cel_value cel_bool(bool b) { cel_value v = {.kind = CV_BOOL}; v.u.b = b; return v; }
static inline cel_value cel_int(int64_t i) { cel_value v = {.kind = CV_INT}; v.u.i = i; return v; }
static inline cel_value cel_uint(uint64_t u) { cel_value v = {.kind = CV_UINT}; v.u.u = u; return v; }
static inline cel_value cel_double(double d) { cel_value v = {.kind = CV_DOUBLE}; v.u.d = d; return v; }
static inline cel_value cel_string(const char *s, size_t n) {
    cel_value v = {.kind = CV_STRING, .len = (uint32_t)n}; v.u.s = s; return v;
}
static inline cel_value cel_bytes(const char *s, size_t n) {
    cel_value v = {.kind = CV_BYTES, .len = (uint32_t)n}; v.u.s = s; return v;
}
static inline cel_value cel_type_value(const char *name) {
    cel_value v = {.kind = CV_TYPE, .len = (uint32_t)strlen(name)}; v.u.s = name; return v;
}
static inline cel_value cel_list_value(const cel_list *l) { cel_value v = {.kind = CV_LIST}; v.u.list = l; return v; }
static inline cel_value cel_map_value(const cel_map *m) { cel_value v = {.kind = CV_MAP}; v.u.map = m; return v; }
static inline cel_value cel_quantity_value(const quantity *q) { cel_value v = {.kind = CV_QUANTITY}; v.u.q = q; return v; }
static inline cel_value cel_semver_value(const semver *s) { cel_value v = {.kind = CV_SEMVER}; v.u.v = s; return v; }
static inline cel_value cel_optional_none(void) { cel_value v = {.kind = CV_OPTIONAL}; v.u.opt = NULL; return v; }
static inline cel_value cel_opaque_value(const cel_opaque *o) { cel_value v = {.kind = CV_OPAQUE}; v.u.o = o; return v; }
static inline bool cel_is_error(cel_value v) { return v.kind == CV_ERROR; }
static inline cel_value cel_timestamp(int64_t sec, uint32_t nanos) {
    cel_value v = {.kind = CV_TIMESTAMP, .len = nanos}; v.u.i = sec; return v;
}
static inline cel_value cel_duration(int64_t sec, uint32_t nanos) {
    cel_value v = {.kind = CV_DURATION, .len = nanos}; v.u.i = sec; return v;
}
/* The text of timestamps and durations: cel__format_timestamp, cel__format_duration
 * (civil_time.h). */

/* An error value whose message is a static string or already arena-owned. */
static inline cel_value cel_error_static(const char *msg) {
    cel_value v = {.kind = CV_ERROR}; v.u.s = msg; return v;
}
/* An error value with a printf-style message copied into `a`. */
cel_value cel__error_fmt(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

cel_value cel__optional_of(arena *a, cel_value v);
cel_value cel__string_copy(arena *a, const char *s, size_t n);
cel_list *cel__list_new(arena *a, uint32_t cap);
void cel__list_push(arena *a, cel_list *l, cel_value v);
cel_map *cel__map_new(arena *a, uint32_t cap);
/* Adds or replaces. */
void cel__map_put(arena *a, cel_map *m, cel_value k, cel_value v);
/* Rebuilds the hash index after keys/vals[0..n) were written directly (keys should be
 * distinct; of equal ones the first is found, as by a scan). */
void cel__map_reindex(arena *a, cel_map *m);
/* CEL key hash: equal keys (cel__value_equal, numbers across int/uint/double) hash alike. */
uint64_t cel__value_hash(const cel_value *v);

/* Byte equality without a libc call and, up to 16 bytes, without a branch on the
 * bytes: attribute values, driver names and constants are short, and a selector's
 * outcome (e.g. "gpu" or "mig") is as good as random from device to device, so a
 * compare that left at the first differing byte cost a mispredicted branch on about
 * every third device (`dralloc bench layout`: E1's lookup 12–13 → 8–9 ns at 100,000
 * devices with this compare). Short lengths are read as two overlapping words
 * (1–3 bytes: first, middle and last), so every byte is compared and none outside
 * [0, n) is read; past 16 bytes the words are compared eight at a time, leaving at
 * the first difference, and the last word overlaps. */
static inline uint64_t cel_load64_(const char *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}
static inline uint32_t cel_load32_(const char *p) {
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}
static inline bool cel_bytes_eq(const char *a, const char *b, size_t n) {
    if (n >= 8) {
        if (n > 16) {
            for (size_t i = 0; i + 8 < n; i += 8)
                if (cel_load64_(a + i) != cel_load64_(b + i)) return false;
            return cel_load64_(a + n - 8) == cel_load64_(b + n - 8);
        }
        return ((cel_load64_(a) ^ cel_load64_(b)) | (cel_load64_(a + n - 8) ^ cel_load64_(b + n - 8))) == 0;
    }
    if (n >= 4) return ((cel_load32_(a) ^ cel_load32_(b)) | (cel_load32_(a + n - 4) ^ cel_load32_(b + n - 4))) == 0;
    if (n == 0) return true;
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    return ((x[0] ^ y[0]) | (x[n >> 1] ^ y[n >> 1]) | (x[n - 1] ^ y[n - 1])) == 0;
}

/* ---- the CEL type of a value ------------------------------------------------ */

/* "int", "uint", "double", "bool", "string", "bytes", "null_type", "list", "map",
 * "type", "optional_type", "kubernetes.Quantity", "kubernetes.Semver",
 * "kubernetes.DRADevice", or an opaque type's name. */
const char *cel__kind_type_name(const cel_value *v);

/* ---- semantics shared by operators and libraries ----------------------------- */

/* CEL equality, heterogeneous across int/uint/double (1 == 1u == 1.0), deep for lists
 * and maps. Returns 1 equal, 0 not equal; never errors (values of different kinds
 * are unequal). */
bool cel__value_equal(const cel_value *a, const cel_value *b);
/* The same, adding to *work the bytes compared and 16 per element visited: the hidden
 * work of deep equality, which cel-go charges by the smaller size only. */
bool cel__value_equal_work(const cel_value *a, const cel_value *b, uint64_t *work);
/* Ordering for `<` & co.: sets *out to -1/0/1 and returns true; false when the two
 * values are not ordered (different non-numeric kinds, NaN involved: *out = 2). */
bool cel__value_compare(const cel_value *a, const cel_value *b, int *out);

/* Map lookup with CEL key semantics (numeric keys match across int/uint/double).
 * Works for CV_MAP and the device views. NULL when absent. `out` receives views
 * materialised on demand in `a`. */
bool cel__map_find(arena *a, const intern_table *names, const cel_value *m, const cel_value *key,
                  cel_value *out);
/* Number of entries, for maps and device views. */
uint32_t cel__map_size(const cel_value *m);
/* A CV_MAP equivalent of a device view (for iteration and printing). */
const cel_map *cel__devmap_materialize(arena *a, const intern_table *names, const cel_value *m);

/* Value of an attribute of the device as CEL sees it. */
cel_value cel__attr_value(arena *a, const cel_attr *at);

/* Number of Unicode code points in a UTF-8 string. */
size_t cel__utf8_len(const char *s, size_t n);
/* cel-go's actualSize: code points of a string, bytes of bytes, entries of a list
 * or map (device views included), 1 for everything else. */
uint64_t cel__value_size(const cel_value *v);
/* Code points of s[0..n), counting stops once more than cap are found: sizes are
 * compared with min() (equality, ordering), and counting all of a long string to
 * learn that it is longer than a short one would be work the cost does not cover. */
uint64_t cel__utf8_len_capped(const char *s, size_t n, uint64_t cap);
/* uint64(math.Ceil(float64(n) * f)), computed in doubles as Go does (for the
 * factors cel-go uses this equals the integer formula, but the doubles are the
 * definition). */
uint64_t cel__cost_factor(uint64_t n, double f);
/* Code points of s[0..n), inline for the selector fast paths: the bytes that are
 * not continuation bytes (10xxxxxx), eight at a time (bit 7 of a byte of `cont` is
 * set when the byte's bit 7 is 1 and bit 6 is 0; the multiply sums those bits). */
static inline size_t cel_utf8_count(const char *s, size_t n) {
    size_t conts = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t cont = (w & ~(w << 1) & 0x8080808080808080u) >> 7;
        conts += (size_t)((cont * 0x0101010101010101u) >> 56);
    }
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (i < n && n >= 8) {
        /* the last 1..7 bytes: one load of the final eight, the ones already counted
         * (the low bytes, little-endian) masked off */
        uint64_t w;
        memcpy(&w, s + n - 8, 8);
        w &= ~(uint64_t)0 << (8 * (8 - (n - i)));
        uint64_t cont = (w & ~(w << 1) & 0x8080808080808080u) >> 7;
        conts += (size_t)((cont * 0x0101010101010101u) >> 56);
        i = n;
    }
#endif
    for (; i < n; i++) conts += ((unsigned char)s[i] & 0xC0) == 0x80;
    return n - conts;
}

/* ceil(0.1 × the code points of a string of n bytes at s), for the fast paths: the
 * integer (k + 9) / 10 equals Go's math.Ceil(float64(k) * 0.1) for every k below
 * 2^53 (0.1 is a hair above 1/10, never enough to round k/10 up to the next
 * integer), and a string of at most 10 bytes costs 1 unless it is empty. */
static inline uint64_t cel_str_tenth_cost(const char *s, size_t n) {
    if (n <= 10) return n != 0;
    return ((uint64_t)cel_utf8_count(s, n) + 9) / 10;
}

/* The same for a view's string: from the code points its builder counted, when it
 * did (cel_str.runes), with no pass over the bytes and no branch on the length. */
static inline uint64_t cel_view_str_tenth_cost(const cel_str *s) {
    return s->runes ? ((uint64_t)s->runes + 9) / 10 : cel_str_tenth_cost(s->s, s->len);
}

/* Deep copy into `a` (for constants folded at compile time and results that must
 * outlive the evaluation arena). Device views are copied as materialised maps. */
cel_value cel__value_clone(arena *a, const intern_table *names, const cel_value *v);

/* Go's strconv.FormatFloat(d, 'g', -1, 64), which CEL's string(double) uses. */
/* d in printf's %e form with the fewest significant digits that read back as d (Go's
 * shortest formatting), into e[0..n); returns how many digits that is. */
int cel__shortest_e(double d, char *e, size_t n);
void cel__format_double(double d, char *buf, size_t n);

/* Writes the value as CEL literal text, truncated to fit buf[0..n) (NUL-terminated
 * when n > 0). With n == 0 returns the full length, so a caller can size a buffer
 * for the whole text; with a buffer, returns the length written, or a figure >= n
 * when it was truncated (the rest of a long value is not walked). */
size_t cel__value_format(const cel_value *v, const intern_table *names, char *buf, size_t n);

#endif
