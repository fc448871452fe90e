/* plan_yaml.c — YAML documents to jansson values for planner inputs (plan_yaml.h).
 * A recursive reader over libyaml's event stream: mappings become objects,
 * sequences arrays, scalars resolved as go-yaml v2 resolves them (so a workload
 * file means the same as it would to kubectl). Anchors are kept per document;
 * an alias shares the anchored value. Nesting beyond PLAN_YAML_MAX_DEPTH and
 * aliases expanding past PLAN_YAML_MAX_ALIASES are errors, so hostile input
 * cannot exhaust the stack or memory. */
#include "planner/plan_yaml.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define PLAN_YAML_MAX_DEPTH 512
#define PLAN_YAML_MAX_ALIASES 10000

typedef struct yreader {
    yaml_parser_t parser;
    const char *source;
    err *e;
    json_t *anchors;     /* anchor name → value, per document */
    size_t aliases;
    int depth;
} yreader;

static bool yfail(yreader *r, const char *what, size_t line) {
    err_set(r->e, "%s: line %zu: %s", r->source ? r->source : "<yaml>", line + 1, what);
    return false;
}

static bool digits(const char *s, size_t n) {
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static json_t *resolve_plain(const char *s, size_t n) {
    if (n == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")) return json_null();
    static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
    static const char *const f[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"};
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        if (!strcmp(s, t[i])) return json_true();
    for (size_t i = 0; i < ARRAY_SIZE(f); i++)
        if (!strcmp(s, f[i])) return json_false();
    const char *p = s;
    size_t m = n;
    if (*p == '-' || *p == '+') p++, m--;
    char *end;
    if (digits(p, m)) {
        errno = 0;
        long long v = strtoll(s, &end, 10);
        return !errno && !*end ? json_integer(v) : json_stringn(s, n);
    }
    if (m > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {   /* 0x1F: an integer to go-yaml */
        errno = 0;
        long long v = strtoll(s, &end, 16);
        if (!errno && !*end) return json_integer(v);
    }
    bool digit = false, dot = false, bad = false;
    size_t i = 0;
    for (; i < m && !bad; i++) {
        char c = p[i];
        if (c >= '0' && c <= '9') digit = true;
        else if (c == '.' && !dot) dot = true;
        else if ((c == 'e' || c == 'E') && digit) break;
        else bad = true;
    }
    if (!bad && digit) {
        if (i < m) {
            i++;
            if (i < m && (p[i] == '+' || p[i] == '-')) i++;
            if (!digits(p + i, m - i)) return json_stringn(s, n);
        }
        double v = strtod(s, &end);
        if (!*end) return json_real(v);
    }
    return json_stringn(s, n);
}

static bool parse_node(yreader *r, yaml_event_t *ev, json_t **out);

static bool next_event(yreader *r, yaml_event_t *ev) {
    if (!yaml_parser_parse(&r->parser, ev))
        return yfail(r, r->parser.problem ? r->parser.problem : "parse error", r->parser.problem_mark.line);
    return true;
}

static void remember(yreader *r, const yaml_char_t *anchor, json_t *v) {
    if (anchor) json_object_set(r->anchors, (const char *)anchor, v);
}

static bool parse_collection(yreader *r, yaml_event_t *start, json_t **out) {
    bool mapping = start->type == YAML_MAPPING_START_EVENT;
    size_t line = start->start_mark.line;
    if (++r->depth > PLAN_YAML_MAX_DEPTH) return yfail(r, "nesting too deep", line);
    json_t *v = mapping ? json_object() : json_array();
    remember(r, mapping ? start->data.mapping_start.anchor : start->data.sequence_start.anchor, v);
    for (;;) {
        yaml_event_t ev;
        if (!next_event(r, &ev)) goto fail;
        if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        json_t *item;
        if (!parse_node(r, &ev, &item)) goto fail;
        if (!mapping) {
            json_array_append_new(v, item);
            continue;
        }
        char keybuf[64];
        const char *key;
        if (json_is_string(item)) key = json_string_value(item);
        else if (json_is_integer(item)) snprintf(keybuf, sizeof keybuf, "%lld", (long long)json_integer_value(item)), key = keybuf;
        else if (json_is_true(item)) key = "true";
        else if (json_is_false(item)) key = "false";
        else if (json_is_null(item)) key = "null";
        else {
            json_decref(item);
            yfail(r, "mapping keys must be scalars", line);
            goto fail;
        }
        yaml_event_t vev;
        json_t *val;
        if (!next_event(r, &vev) || !parse_node(r, &vev, &val)) {
            json_decref(item);
            goto fail;
        }
        if (!strcmp(key, "<<") && json_is_object(val)) {   /* merge key: fill what is not set */
            const char *k;
            json_t *x;
            json_object_foreach(val, k, x) if (!json_object_get(v, k)) json_object_set(v, k, x);
            json_decref(val);
        } else {
            json_object_set_new(v, key, val);
        }
        json_decref(item);
    }
    r->depth--;
    *out = v;
    return true;
fail:
    json_decref(v);
    return false;
}

/* ev is consumed (deleted) here. */
static bool parse_node(yreader *r, yaml_event_t *ev, json_t **out) {
    bool ok = true;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        const char *s = (const char *)ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        *out = ev->data.scalar.plain_implicit && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? resolve_plain(s, n)
                                                                                               : json_stringn(s, n);
        if (!*out) *out = json_string("");   /* invalid UTF-8: keep a placeholder rather than crash */
        remember(r, ev->data.scalar.anchor, *out);
        break;
    }
    case YAML_ALIAS_EVENT: {
        json_t *v = json_object_get(r->anchors, (const char *)ev->data.alias.anchor);
        if (!v) ok = yfail(r, "unknown alias", ev->start_mark.line);
        else if (++r->aliases > PLAN_YAML_MAX_ALIASES) ok = yfail(r, "document contains excessive aliasing", ev->start_mark.line);
        else *out = json_incref(v);
        break;
    }
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: ok = parse_collection(r, ev, out); break;
    default: ok = yfail(r, "unexpected YAML event", ev->start_mark.line);
    }
    yaml_event_delete(ev);
    return ok;
}

json_t *plan_yaml_load(const char *text, size_t len, const char *source, err *e) {
    yreader r = {.source = source, .e = e};
    yaml_parser_initialize(&r.parser);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    json_t *docs = json_array();
    bool ok = true;
    for (bool done = false; ok && !done;) {
        yaml_event_t ev;
        if (!(ok = next_event(&r, &ev))) break;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            r.anchors = json_object();
            r.aliases = 0;
            break;
        case YAML_DOCUMENT_END_EVENT:
            json_decref(r.anchors);
            r.anchors = NULL;
            break;
        case YAML_STREAM_START_EVENT: break;
        default: {
            json_t *v;
            yaml_event_t copy = ev;
            ev.type = YAML_NO_EVENT;   /* parse_node deletes the event it is given */
            if ((ok = parse_node(&r, &copy, &v))) {
                if (json_is_null(v)) json_decref(v);
                else json_array_append_new(docs, v);
            }
        }
        }
        yaml_event_delete(&ev);
    }
    json_decref(r.anchors);
    yaml_parser_delete(&r.parser);
    if (!ok) {
        json_decref(docs);
        return NULL;
    }
    return docs;
}
