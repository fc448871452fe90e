/* yaml.c — YAML text to jansson values, so one decoder (over json_t) serves JSON and
 * YAML input alike. Every document of a multi-document stream becomes one value.
 * Scalars are resolved the way sigs.k8s.io/yaml (go-yaml v2 underneath) resolves
 * them before Kubernetes sees JSON: quoted scalars are strings; plain scalars are
 * null (`~`, `null`, empty), booleans (true/false, yes/no, on/off in any common
 * case), integers (strconv.ParseInt(s, 0, 64) after removing `_`, as go-yaml v2's
 * resolve does: `010` is 8, `0o10` 8, `0x1F` 31, `0b11` 3, `1_000` 1000), floats, or
 * else strings. Anchors and aliases are supported (an alias shares the anchored value
 * by reference count; anchors are found by a hash index, so a document with 100,000
 * anchors loads in linear time).
 *
 * A key repeated in one mapping is an error with its line, as sigs.k8s.io/yaml's
 * strict decoding (kubectl's) reports it ("key \"kind\" already set in map"): a `---`
 * glued to the end of the previous line silently merges two objects otherwise, and
 * the second's kind, name or spec wins. Keys brought in by a merge key (`<<`) may be
 * overridden, as YAML specifies.
 *
 * Hostile input is bounded as go-yaml bounds it: nesting deeper than
 * YAML_MAX_DEPTH is an error (the reader recurses), and so is a document whose
 * aliases expand to far more nodes than it spells out ("document contains excessive
 * aliasing", go-yaml's ratio rule) — a billion-laughs document would otherwise load
 * in microseconds by sharing and then blow up in whoever walks or prints it. */
#include "engine/decode/decode.h"
#include "engine/decode/validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define YAML_MAX_DEPTH 1000

typedef struct anchor {
    char *name;
    json_t *value;
    size_t nodes;            /* nodes in the value with its own aliases expanded */
} anchor;

typedef struct yreader {
    yaml_parser_t parser;
    anchor *anchors;
    size_t nanchors, capanchors;
    json_t *anchor_index;    /* name → index into anchors of its latest definition */
    err *e;
    const char *source;
    int depth;               /* sequences and mappings open */
    /* per document, as go-yaml counts: nodes decoded (aliases expanded) and how many
     * of those came from alias expansion */
    size_t decoded, aliased;
} yreader;

/* go-yaml's allowedAliasRatio: up to 400k decoded nodes 99% may come from aliases,
 * falling linearly to 10% at 4M. */
static bool excessive_aliasing(const yreader *r) {
    if (r->aliased <= 100 || r->decoded <= 1000) return false;
    double d = (double)r->decoded, ratio;
    if (d <= 400000) ratio = 0.99;
    else if (d >= 4000000) ratio = 0.10;
    else ratio = 0.99 - 0.89 * ((d - 400000) / 3600000);
    return (double)r->aliased / d > ratio;
}

static bool yfail(yreader *r, const char *what, size_t line) {
    err_at(r->e, r->source, NULL, "YAML: %s (line %zu)", what, line + 1);
    return false;
}

static void anchor_put(yreader *r, const char *name, json_t *v, size_t nodes) {
    if (!name) return;
    if (r->nanchors == r->capanchors) {
        r->capanchors = r->capanchors ? r->capanchors * 2 : 8;
        r->anchors = xrealloc(r->anchors, r->capanchors * sizeof *r->anchors);
    }
    r->anchors[r->nanchors].name = xstrdup(name);
    r->anchors[r->nanchors].value = json_incref(v);
    r->anchors[r->nanchors].nodes = nodes;
    json_object_set_new(r->anchor_index, name, json_integer((json_int_t)r->nanchors));
    r->nanchors++;
}

/* A redefined anchor names its latest definition, as YAML specifies. */
static json_t *anchor_get(yreader *r, const char *name, size_t *nodes) {
    const json_t *ix = json_object_get(r->anchor_index, name);
    if (!ix) return NULL;
    const anchor *a = &r->anchors[json_integer_value(ix)];
    *nodes = a->nodes;
    return json_incref(a->value);
}

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* Go's strconv.ParseUint(s, 0, 64) on a string without sign or underscores: prefix
 * 0x/0X hex, 0o/0O and a bare leading 0 octal, 0b/0B binary, else decimal. 1 with
 * *out set, 0 when s is not such a number, -1 when it is one out of range. */
static int go_parse_uint(const char *s, uint64_t *out) {
    unsigned base = 10;
    if (s[0] == '0' && s[1]) {
        char p = s[1];
        if (p == 'x' || p == 'X') base = 16, s += 2;
        else if (p == 'o' || p == 'O') base = 8, s += 2;
        else if (p == 'b' || p == 'B') base = 2, s += 2;
        else base = 8, s += 1;
    }
    if (!*s) return 0;
    uint64_t v = 0;
    bool range = false;
    for (; *s; s++) {
        int d = digit_value(*s);
        if (d >= (int)base) return 0;
        if (v > (UINT64_MAX - (uint64_t)d) / base) range = true;
        else v = v * base + (uint64_t)d;
    }
    *out = v;
    return range ? -1 : 1;
}

/* go-yaml v2's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *p) {
    if (*p == '-' || *p == '+') p++;
    size_t n = strspn(p, "0123456789");
    if (n) {
        p += n;
        if (*p == '.') p += 1 + strspn(p + 1, "0123456789");
    } else {
        if (*p != '.') return false;
        n = strspn(p + 1, "0123456789");
        if (!n) return false;
        p += 1 + n;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+') p++;
        n = strspn(p, "0123456789");
        if (!n) return false;
        p += n;
    }
    return !*p;
}

/* go-yaml v2's resolve for a plain scalar starting with a digit or a sign: ParseInt,
 * then ParseUint (values past int64 become JSON numbers, here a double), then the
 * float pattern; NULL when it is none of these (a string). Underscores are removed
 * first. */
static json_t *resolve_number(const char *s, size_t n) {
    char *plain = xmalloc(n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_') plain[m++] = s[i];
    plain[m] = '\0';
    json_t *v = NULL;
    const char *p = plain;
    bool neg = false;
    if (*p == '-' || *p == '+') neg = *p == '-', p++;
    uint64_t u = 0;
    int rc = go_parse_uint(p, &u);
    if (rc == 1 && !neg && u <= (uint64_t)INT64_MAX) v = json_integer((json_int_t)u);
    else if (rc == 1 && neg && u <= (uint64_t)INT64_MAX + 1) v = json_integer(u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)u);
    else if (rc == 1 && !neg && plain[0] != '+') v = json_real((double)u);   /* ParseUint: no sign */
    else if (yaml_style_float(plain)) {
        char *end;
        double d = strtod(plain, &end);
        if (*end == '\0') v = json_real(d);
    }
    free(plain);
    return v;
}

/* Plain-scalar resolution (YAML 1.1 core types as go-yaml v2 reads them). */
static json_t *resolve_plain(const char *s, size_t n) {
    if (n == 0 || (n == 1 && s[0] == '~') || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
        return json_null();
    static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
    static const char *const f[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"};
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        if (!strcmp(s, t[i])) return json_true();
    for (size_t i = 0; i < ARRAY_SIZE(f); i++)
        if (!strcmp(s, f[i])) return json_false();
    /* go-yaml's hint table: only a digit, a sign or '.' may start a number */
    if ((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+' || s[0] == '.') {
        json_t *v = resolve_number(s, n);
        if (v) return v;
    }
    return json_stringn(s, n);
}

static bool parse_node(yreader *r, yaml_event_t *ev, json_t **out);

static bool next_event(yreader *r, yaml_event_t *ev) {
    if (!yaml_parser_parse(&r->parser, ev))
        return yfail(r, r->parser.problem ? r->parser.problem : "parse error", r->parser.problem_mark.line);
    return true;
}

/* Parses the node that begins with *ev (consumed here). */
/* The start of a sequence or a mapping: past YAML_MAX_DEPTH an error; otherwise one
 * level deeper, with the node's anchor (NULL when none) copied into *anc, since the
 * event holding it is consumed here either way. */
static bool enter_collection(yreader *r, yaml_event_t *ev, const yaml_char_t *anchor, char **anc) {
    if (r->depth >= YAML_MAX_DEPTH) {
        size_t line = ev->start_mark.line;
        yaml_event_delete(ev);
        return yfail(r, "nesting deeper than 1000 levels", line);
    }
    r->depth++;
    *anc = anchor ? xstrdup((const char *)anchor) : NULL;
    yaml_event_delete(ev);
    return true;
}

static bool parse_alias(yreader *r, yaml_event_t *ev, json_t **out) {
    size_t nodes = 0;
    json_t *v = anchor_get(r, (const char *)ev->data.alias.anchor, &nodes);
    size_t line = ev->start_mark.line;
    yaml_event_delete(ev);
    if (!v) return yfail(r, "unknown alias", line);
    r->decoded += nodes;
    r->aliased += nodes;
    if (excessive_aliasing(r)) {
        json_decref(v);
        return yfail(r, "document contains excessive aliasing", line);
    }
    *out = v;
    return true;
}

static bool parse_scalar(yreader *r, yaml_event_t *ev, json_t **out) {
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    json_t *v;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag) v = resolve_plain(s, n);
    else v = json_stringn(s, n);
    if (!v) v = json_string("");
    anchor_put(r, (const char *)ev->data.scalar.anchor, v, 1);
    yaml_event_delete(ev);
    *out = v;
    return true;
}

/* A sequence's items up to its end (first: the node count where it began). */
static bool parse_sequence(yreader *r, yaml_event_t *ev, size_t first, json_t **out) {
    char *anc;
    if (!enter_collection(r, ev, ev->data.sequence_start.anchor, &anc)) return false;
    json_t *arr = json_array();
    for (;;) {
        yaml_event_t e2;
        if (!next_event(r, &e2)) goto fail;
        if (e2.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&e2);
            break;
        }
        json_t *item;
        if (!parse_node(r, &e2, &item)) goto fail;
        json_array_append_new(arr, item);
    }
    anchor_put(r, anc, arr, r->decoded - first);
    free(anc);
    r->depth--;
    *out = arr;
    return true;
fail:
    r->depth--;
    free(anc);
    json_decref(arr);
    return false;
}

/* One entry of a mapping into obj (key and val consumed): a merge key's entries not
 * already present, else the key once (a key written twice is an error, as
 * sigs.k8s.io/yaml refuses it); *spelled, once a merge key came, the keys written. */
static bool map_put(yreader *r, json_t *obj, json_t **spelled, json_t *key, json_t *val, size_t line) {
    char kbuf[64];
    const char *ks = NULL;
    if (json_is_string(key)) ks = json_string_value(key);
    else if (json_is_integer(key)) {
        snprintf(kbuf, sizeof kbuf, "%lld", (long long)json_integer_value(key));
        ks = kbuf;
    } else if (json_is_true(key)) ks = "true";
    else if (json_is_false(key)) ks = "false";
    else if (json_is_null(key)) ks = "null";
    if (!ks) {
        json_decref(key);
        json_decref(val);
        return yfail(r, "unsupported mapping key", line);
    }
    if (!strcmp(ks, "<<") && json_is_object(val)) {
        /* merge key: copy entries not already present; from now on the keys
         * written out are told apart from merged ones */
        if (!*spelled) {
            *spelled = json_object();
            const char *sk;
            json_t *sv;
            json_object_foreach(obj, sk, sv) json_object_set_new(*spelled, sk, json_true());
        }
        const char *mk;
        json_t *mv;
        json_object_foreach(val, mk, mv) if (!json_object_get(obj, mk)) json_object_set(obj, mk, mv);
        json_decref(val);
    } else if (*spelled ? json_object_get(*spelled, ks) != NULL : json_object_get(obj, ks) != NULL) {
        char msg[200];
        snprintf(msg, sizeof msg, "key \"%.150s\" already set in map", ks);
        json_decref(key);
        json_decref(val);
        return yfail(r, msg, line);
    } else {
        if (*spelled) json_object_set_new(*spelled, ks, json_true());
        json_object_set_new(obj, ks, val);
    }
    json_decref(key);
    return true;
}

/* A mapping's entries up to its end (first: the node count where it began). */
static bool parse_mapping(yreader *r, yaml_event_t *ev, size_t first, json_t **out) {
    char *anc;
    if (!enter_collection(r, ev, ev->data.mapping_start.anchor, &anc)) return false;
    json_t *obj = json_object();
    json_t *spelled = NULL;   /* keys written in this mapping, once a merge key came */
    for (;;) {
        yaml_event_t ke;
        if (!next_event(r, &ke)) goto fail;
        if (ke.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ke);
            break;
        }
        size_t line = ke.start_mark.line;
        json_t *key;
        if (!parse_node(r, &ke, &key)) goto fail;
        yaml_event_t ve;
        if (!next_event(r, &ve)) {
            json_decref(key);
            goto fail;
        }
        json_t *val;
        if (!parse_node(r, &ve, &val)) {
            json_decref(key);
            goto fail;
        }
        if (!map_put(r, obj, &spelled, key, val, line)) goto fail;
    }
    json_decref(spelled);
    anchor_put(r, anc, obj, r->decoded - first);
    free(anc);
    r->depth--;
    *out = obj;
    return true;
fail:
    json_decref(spelled);
    r->depth--;
    free(anc);
    json_decref(obj);
    return false;
}

static bool parse_node(yreader *r, yaml_event_t *ev, json_t **out) {
    size_t first = r->decoded++;   /* this node's own count, its subtree follows */
    switch (ev->type) {
    case YAML_ALIAS_EVENT: return parse_alias(r, ev, out);
    case YAML_SCALAR_EVENT: return parse_scalar(r, ev, out);
    case YAML_SEQUENCE_START_EVENT: return parse_sequence(r, ev, first, out);
    case YAML_MAPPING_START_EVENT: return parse_mapping(r, ev, first, out);
    default: {
        size_t line = ev->start_mark.line;
        yaml_event_delete(ev);
        return yfail(r, "unexpected event", line);
    }
    }
}

json_t *dra__yaml_load(const char *text, size_t len, const char *source, err *e) {
    return dra__yaml_load_in(text, len, source, NULL, e);
}

json_t *dra__yaml_load_in(const char *text, size_t len, const char *source, const dra_input *in, err *e) {
    yreader r = {.e = e, .source = source, .anchor_index = json_object()};
    yaml_parser_initialize(&r.parser);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    json_t *docs = json_array();
    bool ok = true;
    size_t ndocs = 0;
    for (;;) {
        yaml_event_t ev;
        if (!next_event(&r, &ev)) {
            ok = false;
            break;
        }
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (ev.type == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            r.decoded = r.aliased = 0;
            yaml_event_t body;
            if (!next_event(&r, &body)) {
                ok = false;
                break;
            }
            if (body.type == YAML_DOCUMENT_END_EVENT) {   /* empty document */
                yaml_event_delete(&body);
                continue;
            }
            json_t *v;
            size_t line = body.start_mark.line + 1;
            if (!parse_node(&r, &body, &v)) {
                ok = false;
                break;
            }
            /* a document dralloc would skip is said so: most often a typo */
            if (!dra__input_check_document(in, e, source, ++ndocs, line, v)) {
                json_decref(v);
                ok = false;
                break;
            }
            if (!json_is_null(v)) json_array_append_new(docs, v);
            else json_decref(v);
            continue;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&r.parser);
    for (size_t i = 0; i < r.nanchors; i++) {
        free(r.anchors[i].name);
        json_decref(r.anchors[i].value);
    }
    free(r.anchors);
    json_decref(r.anchor_index);
    if (!ok) {
        json_decref(docs);
        return NULL;
    }
    return docs;
}
