/* json_parse.c — JSON texts from outside (the kube-apiserver's LIST pages and watch
 * events, the extender's request bodies) read the way the store reads a cluster file
 * (snapshot.h: dra_json_parse, dra_json_list_*): simdjson for the parse (json_simd.cc),
 * a List's items one at a time (json_items.c), jansson for what simdjson would read
 * differently and for the words of an error. jansson reads a byte at a time through a
 * stream callback; `dralloc bench listpage` reads a 500-slice page 8.6 times as fast
 * item by item, and 1.2 times whole (building the page's tree is most of that). */
#include "engine/text/json_fast.h"
#include "engine/text/json_items.h"
#include "engine/snapshot.h"

#include "base/base.h"

#include <assert.h>

/* A List past LIST_MIN is read item by item; any other text up to FAST_MAX by the fast
 * reader whole (simdjson's form of a document, ~14 bytes a byte of text, is held while
 * its tree is built: bounded so), a larger one by jansson. */
enum { LIST_MIN = 64 << 10, FAST_MAX = 4 << 20 };

json_t *dra__json_load_item(const char *text, size_t len, json_error_t *je) {
    json_t *doc = dra__json_fast_load(text, len);
    return doc ? doc : json_loadb(text, len, JSON_DECODE_ANY, je);
}

struct dra_json_list {
    const char *text;
    dra_json_items it;
    size_t next;
};

dra_json_list *dra_json_list_open(const char *text, size_t len, json_t **envelope) {
    *envelope = NULL;
    dra_json_items it;
    if (!dra__json_items_scan(text, len, &it)) return NULL;
    json_t *env = it.top_array ? NULL : dra__json_items_envelope(text, len, &it);
    if (!json_is_array(json_object_get(env, "items"))) {
        json_decref(env);
        dra__json_items_free(&it);
        return NULL;
    }
    dra_json_list *l = xcalloc(1, sizeof *l);
    l->text = text;
    l->it = it;
    *envelope = env;
    return l;
}

json_t *dra_json_list_next(dra_json_list *l, size_t *text_len, bool *failed) {
    *failed = false;
    if (l->next >= l->it.n) return NULL;
    dra_json_span at = l->it.v[l->next++];
    if (text_len) *text_len = at.len;
    json_t *doc = dra__json_load_item(l->text + at.off, at.len, NULL);
    if (!doc) *failed = true, l->next = l->it.n;   /* nothing is read after it */
    return doc;
}

void dra_json_list_close(dra_json_list *l) {
    if (!l) return;
    dra__json_items_free(&l->it);
    free(l);
}

json_t *dra_json_parse(const char *text, size_t len, size_t flags, json_error_t *je) {
    return dra__json_parse(text, len, flags, je, LIST_MIN);
}

json_t *dra__json_parse(const char *text, size_t len, size_t flags, json_error_t *je, size_t list_min) {
    assert(!(flags & ~(size_t)JSON_DECODE_ANY));   /* the only flag read alike both ways */
    json_t *doc, *t;
    dra_json_list *l = len > list_min ? dra_json_list_open(text, len, &doc) : NULL;
    if (l) {
        json_t *items = json_object_get(doc, "items");
        bool failed = false;
        while ((t = dra_json_list_next(l, NULL, &failed))) json_array_append_new(items, t);
        dra_json_list_close(l);
        if (!failed) return doc;
        json_decref(doc);
    } else if (len <= FAST_MAX) {
        doc = dra__json_fast_load(text, len);
        if (doc && ((flags & JSON_DECODE_ANY) || json_is_object(doc) || json_is_array(doc))) return doc;
        json_decref(doc);
    }
    return json_loadb(text, len, flags, je);   /* jansson's reading: the rest, and every error */
}
