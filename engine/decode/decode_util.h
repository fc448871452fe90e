/* decode_util.h — private helpers shared by the decode_*.c files: type-checked field
 * getters that extend the error path as they descend, so every rejection names the
 * object and the exact field. Each getter returns false only on an error (wrong type,
 * bad value); an absent or null field is not an error and yields the "unset" value. */
#ifndef DRA_ENGINE_DECODE_UTIL_H
#define DRA_ENGINE_DECODE_UTIL_H

#include "engine/decode/decode.h"

/* The field path an error names ("spec.devices[3].attributes[\"model\"]"), kept as
 * segments and written out only when an error or a warning reads it: a path is pushed
 * for every field decoded and almost never read, and writing each segment's text was
 * a tenth of decoding a device (perf, `dralloc bench mig_5000nodes`). A segment points
 * at its key, which lives as long as the object decoded (a key of its JSON, or a
 * literal). Past DPATH_SEGS segments (no decoder descends that deep: each follows its
 * kind's schema) the deeper ones are counted but not written, as the text was cut at
 * ERR_PATH_MAX before. */
enum { DPATH_SEGS = 64 };
typedef struct dpath_seg {
    enum { DSEG_KEY, DSEG_IDX, DSEG_MAPKEY } kind;
    const char *key;   /* DSEG_KEY, DSEG_MAPKEY */
    size_t idx;        /* DSEG_IDX */
} dpath_seg;
typedef struct dpath {
    size_t len;   /* segments pushed: what a push returns to pop back to */
    dpath_seg seg[DPATH_SEGS];
    char text[ERR_PATH_MAX];   /* written by dra__dpath_str */
} dpath;

typedef struct dctx {
    const dra_decoder *d;
    err *e;
    dpath p;
    char object[ERR_OBJECT_MAX];
} dctx;

void dra__dctx_init(dctx *c, const dra_decoder *d, err *e, const char *kind, const json_t *obj);
bool dra__dfail(dctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline size_t dra__dpush(dctx *c, dpath_seg seg) {
    if (c->p.len < DPATH_SEGS) c->p.seg[c->p.len] = seg;
    return c->p.len++;
}
static inline size_t dra__dpush_key(dctx *c, const char *key) {
    return dra__dpush(c, (dpath_seg){DSEG_KEY, key, 0});
}
static inline size_t dra__dpush_idx(dctx *c, size_t i) { return dra__dpush(c, (dpath_seg){DSEG_IDX, NULL, i}); }
static inline size_t dra__dpush_mapkey(dctx *c, const char *key) {
    return dra__dpush(c, (dpath_seg){DSEG_MAPKEY, key, 0});
}
static inline void dpop(dctx *c, size_t to) {
    if (to <= c->p.len) c->p.len = to;
}
/* The path as text: keys joined by '.', indexes and map keys in brackets. */
const char *dra__dpath_str(dctx *c);

const char *dra__dstrdup(dctx *c, const char *s);
bool dra__dget_str(dctx *c, const json_t *o, const char *key, const char **out);
/* dra__dval_*: the same readers on member key's value v as found already (NULL when
 * absent) — an object whose members were gathered in one pass (decode_slice.c's
 * devices) is not looked up again. */
bool dra__dval_str(dctx *c, const char *key, const json_t *v, const char **out);
bool dra__dval_obj(dctx *c, const char *key, const json_t *v, const json_t **out);
bool dra__dval_arr(dctx *c, const char *key, const json_t *v, const json_t **out);
bool dra__dget_bool(dctx *c, const json_t *o, const char *key, int8_t *out);
bool dra__dget_int(dctx *c, const json_t *o, const char *key, int64_t *out, bool *has);
bool dra__dget_obj(dctx *c, const json_t *o, const char *key, const json_t **out);
/* o's member key, or NULL: json_object_get, but an object of one or two members (a
 * quantity's {"value": ...}, a counter, a capacity) is read in order rather than
 * through jansson's hash of the key. */
const json_t *dra__dmember(const json_t *o, const char *key);
/* out[i]: o's member keys[i], or NULL, for the n keys at once — found in one pass over
 * o's members, none hashed: a device's or an attribute value's members looked up one
 * by one each hashed its key and read the object's bucket array, a line of the tree
 * read for nothing else (perf, `dralloc bench mig_5000nodes`). Returns how many of
 * o's members are none of keys. */
size_t dra__dmembers(const json_t *o, const char *const *keys, size_t n, const json_t **out);
bool dra__dget_arr(dctx *c, const json_t *o, const char *key, const json_t **out);
bool dra__dget_strs(dctx *c, const json_t *o, const char *key, dra_strs *out);
/* An optional array of objects under key, decoded item by item into a new zeroed
 * arena array (*out, *n; NULL and 0 when absent): the error path names each item, an
 * item that is not an object fails as "expected object", and `each` fills one element
 * (returning false after dra__dfail). DRA_DGET_OBJS takes the element type from out. */
typedef bool (*dra_ditem_fn)(dctx *c, const json_t *item, void *elem, void *ud);
bool dra__dget_objs(dctx *c, const json_t *o, const char *key, size_t size, void *out, uint32_t *n, dra_ditem_fn each,
                   void *ud);
#define DRA_DGET_OBJS(c, o, key, out, n, each, ud) \
    dra__dget_objs((c), (o), (key), sizeof(**(out)), (out), (n), (each), (ud))
bool dra__dval_objs(dctx *c, const char *key, const json_t *v, size_t size, void *out, uint32_t *n, dra_ditem_fn each,
                    void *ud);
#define DRA_DVAL_OBJS(c, key, v, out, n, each, ud) \
    dra__dval_objs((c), (key), (v), sizeof(**(out)), (out), (n), (each), (ud))
/* A Quantity (string, or a number as YAML writes an unquoted `8`). */
bool dra__dqty(dctx *c, const json_t *v, quantity *out);
/* The text dra__dqty parses for v (a number written out in buf), or false when v is no
 * quantity: one reading for the decoder and for decode_take.c's comparison. */
enum { DRA_QTY_BUF = 64 };
bool dra__qty_text(const json_t *v, char buf[DRA_QTY_BUF], const char **out, size_t *len);
/* Compact JSON text of a value; NULL when the decoder skips raw text (no_raw_text). */
const char *dra__djson_text(dctx *c, const json_t *v);
/* The same text whatever no_raw_text says: a part of the object its results carry
 * (an opaque config's parameters, copied into status.allocation.config). */
const char *dra__djson_part(dctx *c, const json_t *v);

/* What the comparisons of one slice's devices remember: quantity texts lately parsed
 * (zeroed before the first device). */
enum { DRA_TAKE_QTY = 4 };
typedef struct dra_take_memo {
    struct {
        char text[15];
        uint8_t len;
        quantity q;
    } qty[DRA_TAKE_QTY];
    unsigned next;
} dra_take_memo;
/* Whether decoding v, a device of a slice of the same driver as the slice that holds o,
 * would give o again, value for value (decode_take.c): conservative, false for any
 * shape it does not compare. */
bool dra__device_unchanged(dra_take_memo *m, const json_t *v, const dra_device *o);

bool dra__ddecode_node_selector(dctx *c, const json_t *v, dra_node_selector **out);
/* metadata.namespace ("" → NULL) and metadata.name. */
bool dra__ddecode_meta(dctx *c, const json_t *obj, const char **ns, const char **name);
/* A hash of a spec's JSON with keys sorted (never 0 for a spec; 0 for none): claims
 * with the same needs share fit answers (podfit.c). */
uint64_t dra__dspec_hash(const json_t *spec);

/* The claim lists a Pod and a PodGroup share (engine/decode/decode_core.c, podgroup.c).
 * One entry of spec.resourceClaims (a dra_ditem_fn for dra_pod_claim; ud unused):
 * its name and the ResourceClaim or template it names, unvalidated (the callers'
 * rules differ). */
bool dra__ddecode_claim_ref(dctx *c, const json_t *pc, void *elem, void *ud);
/* status.resourceClaimStatuses: each entry's resourceClaimName becomes the
 * generated_name of the claim entry (among the n in claims) with the same name. */
bool dra__ddecode_claim_statuses(dctx *c, const json_t *status, dra_pod_claim *claims, uint32_t n);

#endif
