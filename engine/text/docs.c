/* docs.c — the documents of a path one at a time (json.h dra_docs_open / next /
 * close): each file of the path in turn (input_files.c), a large JSON List or array
 * parsed item by item, so that loading a fleet never holds the jansson tree of the
 * whole file (a 166 MB file made 1.5 GB of tree, and faulting it in and freeing it was
 * a third of the load; issue 21), any other file read whole and its documents given
 * in order.
 *
 * The errors are those of reading the file whole, which checks a file completely
 * before its objects are used: a syntax error anywhere in the file (jansson's message
 * and line, from parsing it whole once something does not parse) comes before a
 * missing apiVersion or kind, which comes before what the caller said of a document
 * (dra_docs_refuse); so after a missing apiVersion, or the caller's error, the rest of
 * the file is still parsed, only not given. The first file with an error ends the
 * read. */
#include "engine/decode/decode.h"
#include "engine/text/docs.h"
#include "engine/text/json_items.h"
#include "engine/text/parse_ahead.h"
#include "engine/decode/validate.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Files smaller than this are parsed on the reading thread: a thread is not worth
 * starting for a few objects. */
enum { PARSE_AHEAD_MIN_BYTES = 1 << 20 };

/* The error kept for the file being read, by precedence. */
enum { KEPT_NONE, KEPT_CALLER, KEPT_TYPE };

struct dra_docs {
    const dra_input *in;
    dra_doc_prepare prep;        /* prep.prepare NULL: none */
    char **files;                /* the path's files, in order */
    size_t nfiles, next_file;
    bool failed;                 /* the read ended with `fail` */
    err fail;
    /* the file being read (file NULL: none) */
    const char *file;
    int kept;                    /* KEPT_*: the file's error kept, given at its end */
    err first;
    strbuf sb;
    json_t *whole;               /* read whole: its documents (an array, or one) */
    size_t wi;
    bool streaming;              /* read item by item */
    dra_json_items it;
    json_t *env;                 /* the List without its items (NULL: a top-level array) */
    bool check;                  /* kubectl's check on each item (not a typed list's) */
    dra_item_work work;
    dra_parse_ahead *pa;
    json_t *given;               /* a streamed document given last, freed at the next call */
};

/* The parsing thread's side of the caller's prepare step, told which file. */
static void *work_prepare(void *arg, const json_t *doc, dra_item_facts facts) {
    const dra_docs *d = arg;
    return d->prep.prepare(d->prep.arg, d->file, doc, facts);
}

static void work_discard(void *arg, void *prepared) {
    const dra_docs *d = arg;
    d->prep.discard(d->prep.arg, prepared);
}

static void discard(const dra_docs *d, void *prepared) {
    if (prepared) d->prep.discard(d->prep.arg, prepared);
}

static bool is_list_kind(const char *kind) {
    size_t kl = kind ? strlen(kind) : 0;
    return kind && (!strcmp(kind, "List") || (kl > 4 && !strcmp(kind + kl - 4, "List")));
}

/* Whether text is a List document (or a top-level array) whose items can be read one
 * by one; it then holds them. */
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

/* Part of the file did not parse: the error is jansson's for the whole file. */
static void parse_error(dra_docs *d, const json_error_t *je) {
    json_t *whole = dra_json_load(d->sb.buf ? d->sb.buf : "", d->sb.len, d->file, d->in, &d->fail);
    if (whole) {   /* an item jansson refuses alone but not in place: not expected */
        json_decref(whole);
        err_at(&d->fail, d->file, NULL, "JSON: %s (item at byte %d)", je->text, je->position);
    }
    d->failed = true;
}

/* Starts reading d->files[i]: false with d->fail set when it cannot be read. */
static bool file_open(dra_docs *d, const char *file) {
    d->file = file;
    d->kept = KEPT_NONE;
    d->check = true;
    sbuf_init(&d->sb);
    if (!dra__read_input(file, &d->sb, &d->fail)) return !(d->failed = true);
    const char *text = d->sb.buf ? d->sb.buf : "";
    if (dra__input_is_json(&d->sb) && streamable(text, d->sb.len, &d->it)) {
        d->streaming = true;
        if (!d->it.top_array) {
            d->env = dra__json_items_envelope(text, d->sb.len, &d->it);
            if (!d->env) {
                json_error_t je = {0};
                parse_error(d, &je);
                return false;
            }
            err ce;
            err_clear(&ce);
            if (!dra__input_check_type(d->env, file, &ce)) d->first = ce, d->kept = KEPT_TYPE;
            /* a plain List's items are whole objects, checked; a typed list's take its kind */
            d->check = !strcmp(json_string_value(json_object_get(d->env, "kind")), "List");
        }
        d->work = (dra_item_work){work_prepare, work_discard, d};
        d->pa = dra__parse_ahead_start(text, &d->it, d->sb.len >= PARSE_AHEAD_MIN_BYTES, dra__input_heard(d->in),
                                       d->prep.prepare ? &d->work : NULL);
        return true;
    }
    d->whole = dra__input_is_json(&d->sb) ? dra_json_load(d->sb.buf, d->sb.len, file, d->in, &d->fail)
                                          : dra__yaml_load_in(text, d->sb.len, file, d->in, &d->fail);
    d->wi = 0;
    if (!d->whole) d->failed = true;
    return d->whole != NULL;
}

static void file_close(dra_docs *d) {
    if (d->streaming) {
        dra__parse_ahead_free(d->pa);
        dra__json_items_free(&d->it);
        json_decref(d->env);
    }
    json_decref(d->whole);
    sbuf_free(&d->sb);
    d->pa = NULL, d->env = d->whole = NULL, d->streaming = false, d->file = NULL;
}

/* Whether a document of the file is given: kubectl's check when due (not for a typed
 * list's items, which take the list's kind), and no error of the file before it. */
static bool to_give(dra_docs *d, const json_t *doc, bool check) {
    if (d->kept == KEPT_TYPE) return false;
    if (check) {
        err ce;
        err_clear(&ce);
        if (!dra__input_check_types(doc, d->file, &ce)) {
            d->first = ce;
            d->kept = KEPT_TYPE;
            return false;
        }
    }
    return d->kept == KEPT_NONE;
}

/* The file's next document to give, or NULL at its end (d->failed when it ends in a
 * syntax error). */
static json_t *file_next(dra_docs *d, dra_item_facts *facts, void **prepared) {
    *facts = (dra_item_facts){0};
    *prepared = NULL;
    if (!d->streaming) {
        size_t n = json_is_array(d->whole) ? json_array_size(d->whole) : 1;
        while (d->wi < n) {
            json_t *doc = json_is_array(d->whole) ? json_array_get(d->whole, d->wi) : d->whole;
            d->wi++;
            if (to_give(d, doc, true)) return doc;
        }
        return NULL;
    }
    bool failed;
    json_error_t je;
    for (json_t *doc; (doc = dra__parse_ahead_next(d->pa, &failed, &je, facts, prepared));) {
        if (to_give(d, doc, d->check)) return d->given = doc;
        discard(d, *prepared);
        json_decref(doc);
    }
    *prepared = NULL;
    if (failed) parse_error(d, &je);
    return NULL;
}

dra_docs *dra__docs_open_prepared(const char *path, const dra_input *in, const dra_doc_prepare *prep) {
    dra_docs *d = xcalloc(1, sizeof *d);
    d->in = in;
    if (prep) d->prep = *prep;
    err_clear(&d->fail);
    d->files = dra__path_files(path, &d->nfiles, &d->fail);
    d->failed = !d->files;
    return d;
}

dra_docs *dra_docs_open(const char *path, const dra_input *in) { return dra__docs_open_prepared(path, in, NULL); }

bool dra__docs_next_item(dra_docs *d, dra_doc *out, dra_item_facts *facts, void **prepared) {
    json_decref(d->given);
    d->given = NULL;
    while (!d->failed) {
        if (!d->file) {
            if (d->next_file == d->nfiles) return false;
            if (!file_open(d, d->files[d->next_file++])) break;
        }
        json_t *doc = file_next(d, facts, prepared);
        if (doc) {
            *out = (dra_doc){d->file, d->env, doc};
            return true;
        }
        if (d->failed) break;
        if (d->kept) {
            d->fail = d->first;
            d->failed = true;
            break;
        }
        file_close(d);
    }
    if (d->file) file_close(d);
    return false;
}

bool dra_docs_next(dra_docs *d, dra_doc *out) {
    dra_item_facts facts;
    void *prepared;
    bool ok = dra__docs_next_item(d, out, &facts, &prepared);
    if (ok) discard(d, prepared);
    return ok;
}

void dra_docs_refuse(dra_docs *d, const err *why) {
    assert(d->file && "refused a document after the read ended");
    if (d->kept == KEPT_NONE) {
        d->first = *why;
        d->kept = KEPT_CALLER;
    }
}

bool dra_docs_close(dra_docs *d, err *e) {
    if (!d) return true;
    json_decref(d->given);
    if (d->file) file_close(d);
    bool ok = !d->failed;
    if (!ok && e) *e = d->fail;
    for (size_t i = 0; i < d->nfiles; i++) free(d->files[i]);
    free(d->files);
    free(d);
    return ok;
}
