/* wire.c — decoding ExtenderArgs and encoding ExtenderFilterResult / HostPriorityList
 * exactly as kube-scheduler's Go code does (../shared/reference/extender.md §1): the
 * structs have no JSON tags, so keys are the Go field names, matched case-insensitively
 * on input and written Capitalised on output. Bodies are checked for UTF-8 and depth
 * before they are parsed (dra_json_parse), so hostile input is refused with a message
 * naming what was wrong and never reaches a recursive parser unbounded. */
#include "extender/wire.h"

#include "engine/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- pre-parse check ----------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), 0 if invalid
 * (RFC 3629 table: no overlongs, no surrogates, nothing past U+10FFFF). */
static size_t utf8_seq(const unsigned char *p, size_t n) {
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;   /* bounds of the second byte */
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (n < len || p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 0;
    return len;
}

bool ext_json_check(const char *body, size_t len, unsigned max_depth, err *e) {
    const unsigned char *p = (const unsigned char *)body;
    unsigned depth = 0;
    bool in_str = false, esc = false;
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (c >= 0x80) {
            size_t k = utf8_seq(p + i, len - i);
            if (!k) return err_set(e, "body is not valid UTF-8 (byte %zu)", i);
            i += k;
            esc = false;
            continue;
        }
        i++;
        if (in_str) {
            if (esc) esc = false;
            else if (c == '\\') esc = true;
            else if (c == '"') in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return err_set(e, "JSON nested deeper than %u levels (byte %zu)", max_depth, i - 1);
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return true;
}

json_t *ext_json_parse(const char *body, size_t len, unsigned max_depth, err *e) {
    if (!len) {
        err_set(e, "empty body: expected a JSON object");
        return NULL;
    }
    if (!ext_json_check(body, len, max_depth, e)) return NULL;
    json_error_t je;
    json_t *doc = dra_json_parse(body, len, JSON_DECODE_ANY, &je);
    if (!doc) err_set(e, "invalid JSON: %s (line %d, column %d)", je.text, je.line, je.column);
    return doc;
}

/* ---- Go's key matching -------------------------------------------------------------- */

/* One key character folded the way Go folds it (the smallest rune of its fold set,
 * restricted to what can equal an ASCII letter); advances *p. -1 on anything that can
 * never match an ASCII field name. */
static int fold_next(const unsigned char **p) {
    const unsigned char *s = *p;
    if (s[0] < 0x80) {
        *p = s + 1;
        return (s[0] >= 'a' && s[0] <= 'z') ? s[0] - 'a' + 'A' : s[0];
    }
    if (s[0] == 0xC5 && s[1] == 0xBF) {   /* U+017F LATIN SMALL LETTER LONG S */
        *p = s + 2;
        return 'S';
    }
    if (s[0] == 0xE2 && s[1] == 0x84 && s[2] == 0xAA) {   /* U+212A KELVIN SIGN */
        *p = s + 3;
        return 'K';
    }
    return -1;
}

bool ext_key_matches(const char *key, const char *field) {
    if (!strcmp(key, field)) return true;
    const unsigned char *k = (const unsigned char *)key, *f = (const unsigned char *)field;
    while (*k && *f) {
        int a = fold_next(&k), b = fold_next(&f);
        if (a < 0 || a != b) return false;
    }
    return !*k && !*f;
}

json_t *ext_member(const json_t *obj, const char *field, bool *present) {
    json_t *found = NULL;
    bool any = false;
    const char *k;
    json_t *v;
    /* jansson keeps members in document order; Go assigns each matching key in turn,
     * so the last one wins */
    json_object_foreach((json_t *)obj, k, v) {
        if (ext_key_matches(k, field)) {
            found = v;
            any = true;
        }
    }
    if (present) *present = any;
    return json_is_null(found) ? NULL : found;
}

/* ---- ExtenderArgs ------------------------------------------------------------------- */

static const char *type_name(const json_t *v) {
    if (!v) return "null";   /* absent or null alike */
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static bool fail(ext_args *a, err *e, const char *fmt, const char *what, const json_t *v) {
    err_set(e, fmt, what, type_name(v));
    ext_args_free(a);
    return false;
}

bool ext_args_decode(json_t *doc, size_t max_nodes, ext_args *a, err *e) {
    memset(a, 0, sizeof *a);
    a->doc = doc;
    if (!json_is_object(doc)) return fail(a, e, "%s: expected a JSON object, got %s", "ExtenderArgs", doc);
    bool has_pod, has_nodes, has_names;
    json_t *pod = ext_member(doc, "Pod", &has_pod);
    json_t *nodes = ext_member(doc, "Nodes", &has_nodes);
    json_t *names = ext_member(doc, "NodeNames", &has_names);
    if (!pod) {
        err_set(e, has_pod ? "Pod: is null" : "Pod: missing (ExtenderArgs needs Pod and NodeNames or Nodes)");
        ext_args_free(a);
        return false;
    }
    if (!json_is_object(pod)) return fail(a, e, "%s: expected an object (v1.Pod), got %s", "Pod", pod);
    a->pod = pod;
    if (nodes && names) {
        err_set(e, "both Nodes and NodeNames are set: kube-scheduler sends one of them (nodeCacheCapable)");
        ext_args_free(a);
        return false;
    }
    if (!nodes && !names) {
        err_set(e, "neither NodeNames nor Nodes is set");
        ext_args_free(a);
        return false;
    }
    char what[64];
    if (names) {
        if (!json_is_array(names)) return fail(a, e, "%s: expected an array of strings, got %s", "NodeNames", names);
        a->n = json_array_size(names);
        if (a->n > max_nodes) {
            err_set(e, "NodeNames: %zu nodes, more than the limit of %zu (--max-nodes)", a->n, max_nodes);
            ext_args_free(a);
            return false;
        }
        a->names = xcalloc(a->n + 1, sizeof *a->names);
        for (size_t i = 0; i < a->n; i++) {
            json_t *v = json_array_get(names, i);
            snprintf(what, sizeof what, "NodeNames[%zu]", i);
            if (!json_is_string(v)) return fail(a, e, "%s: expected a string, got %s", what, v);
            a->names[i] = json_string_value(v);
        }
        return true;
    }
    /* a v1.NodeList: its fields are tagged (items, metadata) but Go still matches them
     * case-insensitively */
    if (!json_is_object(nodes)) return fail(a, e, "%s: expected an object (v1.NodeList), got %s", "Nodes", nodes);
    a->node_list = true;
    a->list_meta = ext_member(nodes, "metadata", NULL);
    if (a->list_meta && !json_is_object(a->list_meta))
        return fail(a, e, "%s: expected an object, got %s", "Nodes.metadata", a->list_meta);
    json_t *items = ext_member(nodes, "items", NULL);
    if (items && !json_is_array(items)) return fail(a, e, "%s: expected an array, got %s", "Nodes.items", items);
    a->n = json_array_size(items);
    if (a->n > max_nodes) {
        err_set(e, "Nodes.items: %zu nodes, more than the limit of %zu (--max-nodes)", a->n, max_nodes);
        ext_args_free(a);
        return false;
    }
    a->names = xcalloc(a->n + 1, sizeof *a->names);
    a->nodes = xcalloc(a->n + 1, sizeof *a->nodes);
    for (size_t i = 0; i < a->n; i++) {
        json_t *v = json_array_get(items, i);
        snprintf(what, sizeof what, "Nodes.items[%zu]", i);
        if (!json_is_object(v)) return fail(a, e, "%s: expected an object (v1.Node), got %s", what, v);
        json_t *meta = ext_member(v, "metadata", NULL);
        snprintf(what, sizeof what, "Nodes.items[%zu].metadata", i);
        if (!json_is_object(meta)) return fail(a, e, "%s: expected an object, got %s", what, meta);
        json_t *name = ext_member(meta, "name", NULL);
        snprintf(what, sizeof what, "Nodes.items[%zu].metadata.name", i);
        if (!json_is_string(name)) return fail(a, e, "%s: expected a string, got %s", what, name);
        a->names[i] = json_string_value(name);
        a->nodes[i] = v;
    }
    return true;
}

void ext_args_free(ext_args *a) {
    free(a->names);
    free(a->nodes);
    json_decref(a->doc);
    memset(a, 0, sizeof *a);
}

/* ---- results ---------------------------------------------------------------------- */

/* A JSON string of text that should be UTF-8 but may not be (an engine message cut at a
 * fixed size can end inside a sequence): invalid bytes become '?', so a node is never
 * dropped from FailedNodes for its message. */
static json_t *text(const char *s) {
    json_t *j = json_string(s);
    if (j) return j;
    size_t n = strlen(s);
    char *c = xmalloc(n + 1);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = p[i] < 0x80 ? 1 : utf8_seq(p + i, n - i);
        if (!k) c[i++] = '?';
        else memcpy(c + i, p + i, k), i += k;
    }
    c[n] = '\0';
    j = json_string(c);   /* a NUL-free, valid string now */
    free(c);
    return j ? j : json_string("");
}

static char *dump(json_t *j) {
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s) abort();   /* only on out-of-memory */
    return s;
}

char *ext_filter_result(const ext_args *a, const ext_verdict *verdict, const char *const *reason,
                        const char *error) {
    json_t *pass = json_array(), *failed = json_object(), *unres = json_object();
    for (size_t i = 0; i < a->n && !error; i++) {
        if (verdict[i] == EXT_PASS) {
            json_array_append_new(pass, a->node_list ? json_incref((json_t *)a->nodes[i]) : json_string(a->names[i]));
        } else {
            json_t *m = verdict[i] == EXT_FAIL_UNRESOLVABLE ? unres : failed;
            json_object_set_new(m, a->names[i], text(reason && reason[i] ? reason[i] : ""));
        }
    }
    /* jansson keeps insertion order: the keys come out in Go's field order */
    json_t *r = json_object();
    if (a->node_list) {
        json_t *list = json_object();
        json_object_set_new(list, "metadata", a->list_meta ? json_deep_copy(a->list_meta) : json_object());
        json_object_set_new(list, "items", pass);
        json_object_set_new(r, "Nodes", list);
        json_object_set_new(r, "NodeNames", json_null());
    } else {
        json_object_set_new(r, "Nodes", json_null());
        json_object_set_new(r, "NodeNames", pass);
    }
    json_object_set_new(r, "FailedNodes", failed);
    json_object_set_new(r, "FailedAndUnresolvableNodes", unres);
    json_object_set_new(r, "Error", text(error ? error : ""));
    return dump(r);
}

char *ext_priority_list(const ext_args *a, const int64_t *score) {
    json_t *r = json_array();
    for (size_t i = 0; i < a->n; i++) {
        json_t *h = json_object();
        json_object_set_new(h, "Host", json_string(a->names[i]));
        json_object_set_new(h, "Score", json_integer(score ? score[i] : 0));
        json_array_append_new(r, h);
    }
    return dump(r);
}

char *ext_error_body(const char *msg) {
    return dump(json_pack("{s:o}", "error", text(msg)));
}

/* ---- Go durations ------------------------------------------------------------------- */

bool ext_duration_parse(const char *s, uint64_t *ns) {
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"\xCE\xBCs", 1e3}, {"ms", 1e6},
                 {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
    if (!s || !*s) return false;
    if (*s == '+') s++;
    if (!strcmp(s, "0")) {
        *ns = 0;
        return true;
    }
    double total = 0;
    while (*s) {
        const char *start = s;
        double v = 0, scale = 1;
        bool digits = false;
        while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0'), digits = true;
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') v += (*s++ - '0') * (scale /= 10), digits = true;
        }
        if (!digits || s == start) return false;
        size_t best = 0;
        double mult = 0;
        for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
            size_t l = strlen(units[i].unit);
            /* longest unit first: "ms" before "m" */
            if (l > best && !strncmp(s, units[i].unit, l)) best = l, mult = units[i].ns;
        }
        if (!best) return false;
        s += best;
        total += v * mult;
    }
    if (total >= 9.2e18) return false;
    *ns = (uint64_t)(total + 0.5);
    return true;
}
