/* path_stream.c — the documents of input files one at a time (docs.h dra__path_stream):
 * what dra__path_docs gives whole, a large JSON List parsed item by item, so that
 * loading a fleet never holds the jansson tree of the whole file (a 166 MB file made
 * 1.5 GB of tree, and faulting it in and freeing it was a third of the load; issue 21).
 *
 * The errors are those of reading the file whole, which checks a file completely
 * before its objects are used: a syntax error anywhere in the file (jansson's message
 * and line, from parsing it whole once something does not parse) comes before a
 * missing apiVersion or kind, which comes before what fn says of an object; so after
 * a missing apiVersion, or fn's error, the rest of the file is still parsed, only not
 * given to fn. */
#include "engine/json_items.h"
#include "engine/parse_ahead.h"
#include "engine/validate.h"
#include "engine/decode.h"
#include "engine/docs.h"

#include <string.h>

/* Files smaller than this are parsed on the reading thread: a thread is not worth
 * starting for a few objects. */
enum { PARSE_AHEAD_MIN_BYTES = 1 << 20 };

typedef struct file_read {
    const char *file;
    dra_stream_fn fn;
    const dra_stream_work *work;   /* NULL: none */
    void *arg;
    int level;   /* the error kept: 0 none, 1 fn's, 2 a missing apiVersion or kind */
    err first;
} file_read;

/* One document: kubectl's check (not for a typed list's items, which take the list's
 * kind), then fn, unless an error of the file came before. */
static void one_doc(file_read *r, const json_t *list, json_t *doc, dra_item_facts facts, void *prepared, bool check) {
    if (r->level == 2) goto unused;
    if (check) {
        err ce;
        err_clear(&ce);
        if (!dra__input_check_types(doc, r->file, &ce)) {
            r->first = ce;
            r->level = 2;
            goto unused;
        }
    }
    if (r->level) goto unused;
    err fe;
    err_clear(&fe);
    if (!r->fn(r->arg, r->file, list, doc, facts, prepared, &fe)) {
        r->first = fe;
        r->level = 1;
    }
    return;
unused:
    if (prepared) r->work->discard(r->arg, prepared);
}

/* A document read whole: its elements when it is an array (a YAML stream, a JSON
 * array), else itself. */
static void whole_docs(file_read *r, json_t *docs) {
    if (!json_is_array(docs)) return one_doc(r, NULL, docs, (dra_item_facts){0}, NULL, true);
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d) one_doc(r, NULL, d, (dra_item_facts){0}, NULL, true);
}

static bool is_list_kind(const char *kind) {
    size_t kl = kind ? strlen(kind) : 0;
    return kind && (!strcmp(kind, "List") || (kl > 4 && !strcmp(kind + kl - 4, "List")));
}

/* The parsing thread's side of the reader's work (dra_item_work over dra_stream_work). */
static void *work_prepare(void *arg, const json_t *doc, dra_item_facts facts) {
    const file_read *r = arg;
    return r->work->prepare(r->arg, r->file, doc, facts);
}

static void work_discard(void *arg, void *prepared) {
    const file_read *r = arg;
    r->work->discard(r->arg, prepared);
}

/* Part of the file did not parse: the error is jansson's for the whole file. */
static bool parse_error(const char *text, size_t len, const char *file, const dra_input *in, const json_error_t *je,
                        err *e) {
    json_t *whole = dra_json_load(text, len, file, in, e);
    if (!whole) return false;
    json_decref(whole);   /* an item jansson refuses alone but not in place: not expected */
    return err_at(e, file, NULL, "JSON: %s (item at byte %d)", je->text, je->position);
}

/* The items of a JSON List or array, each parsed, given and freed in turn. false
 * with e set when part of the file does not parse. */
static bool stream_items(file_read *r, const char *text, size_t len, const dra_json_items *it, const dra_input *in,
                         err *e) {
    json_t *env = NULL;
    bool check = true;
    if (!it->top_array) {
        env = dra__json_items_envelope(text, len, it);
        json_error_t je = {0};
        if (!env) return parse_error(text, len, r->file, in, &je, e);
        err ce;
        err_clear(&ce);
        if (!dra__input_check_type(env, r->file, &ce)) r->first = ce, r->level = 2;
        /* a plain List's items are whole objects, checked; a typed list's take its kind */
        check = !strcmp(json_string_value(json_object_get(env, "kind")), "List");
    }
    bool ok = true, failed;
    json_error_t je;
    dra_item_facts facts;
    void *prepared;
    /* the reader's work for the parsing thread, told which file the items are from */
    dra_item_work work = {work_prepare, work_discard, r};
    dra_parse_ahead *pa =
        dra__parse_ahead_start(text, it, len >= PARSE_AHEAD_MIN_BYTES, dra__input_heard(in), r->work ? &work : NULL);
    for (json_t *doc; (doc = dra__parse_ahead_next(pa, &failed, &je, &facts, &prepared));) {
        one_doc(r, env, doc, facts, prepared, check);
        json_decref(doc);
    }
    dra__parse_ahead_free(pa);
    if (failed) ok = parse_error(text, len, r->file, in, &je, e);
    json_decref(env);
    return ok;
}

/* The kind of a List document whose items can be read one by one, else NULL. */
static bool streamable(const char *text, size_t len, dra_json_items *it) {
    if (!dra__json_items_scan(text, len, it)) return false;
    if (it->top_array) return true;
    json_t *env = dra__json_items_envelope(text, len, it);
    /* a List (or typed list) object; any other kind holding "items" is one object */
    bool ok = !env || is_list_kind(json_string_value(json_object_get(env, "kind")));
    json_decref(env);
    if (!ok) dra__json_items_free(it);
    return ok;
}

typedef struct stream_call {
    const dra_input *in;
    dra_stream_fn fn;
    const dra_stream_work *work;
    void *arg;
} stream_call;

static bool stream_file(void *arg, const char *file, err *e) {
    stream_call *sc = arg;
    strbuf sb;
    if (!dra__read_input(file, &sb, e)) return false;
    file_read r = {.file = file, .fn = sc->fn, .work = sc->work, .arg = sc->arg};
    const char *text = sb.buf ? sb.buf : "";
    dra_json_items it;
    bool ok;
    if (dra__input_is_json(&sb) && streamable(text, sb.len, &it)) {
        ok = stream_items(&r, text, sb.len, &it, sc->in, e);
        dra__json_items_free(&it);
    } else {
        json_t *docs = dra__input_is_json(&sb) ? dra_json_load(sb.buf, sb.len, file, sc->in, e)
                                               : dra__yaml_load_in(text, sb.len, file, sc->in, e);
        ok = docs != NULL;
        if (ok) whole_docs(&r, docs);
        json_decref(docs);
    }
    sbuf_free(&sb);
    if (ok && r.level) {
        *e = r.first;
        return false;
    }
    return ok;
}

bool dra__path_stream(const char *path, const dra_input *in, dra_stream_fn fn, const dra_stream_work *work, void *arg,
                      err *e) {
    stream_call sc = {in, fn, work, arg};
    return dra__path_files(path, stream_file, &sc, e);
}
