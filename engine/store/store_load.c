/* store_load.c — JSON documents into the store: any JSON the HTTP API accepts
 * (dra_store_apply_json: an object, an array, a List) and files or directories
 * (dra_store_load_paths), read a document at a time from the engine's document
 * reader (docs.h), each object decoded into the unpublished snapshot as it comes. */

#include "engine/text/docs.h"
#include "engine/text/json_hash.h"
#include "engine/store/store_layout.h"

#include "base/hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON documents to changes ----------------------------------------------------------------- */

typedef struct change_list {
    DRA_VEC(dra_change) v;
    DRA_VEC(json_t *) owned;   /* typed-list items given their kind */
    bool skip_unknown;         /* files: objects of other kinds are skipped, as kubectl apply would not */
    /* when set, each change is given here as it is found instead of kept in v */
    void (*each)(void *arg, const dra_change *c);
    void *arg;
} change_list;

static bool collect(change_list *cl, const json_t *doc, const char *source, err *e);

/* One item of the List doc (kind: the list's, kl its length). */
static bool collect_item(change_list *cl, const json_t *doc, const char *kind, size_t kl, const json_t *it,
                         const char *source, err *e) {
    if (!json_object_get(it, "kind") && strcmp(kind, "List") && json_is_object(it)) {
        /* typed lists print items without kind */
        json_t *copy = json_copy((json_t *)it);
        json_object_set_new(copy, "kind", json_stringn(kind, kl - 4));
        if (!json_object_get(copy, "apiVersion") && json_object_get(doc, "apiVersion"))
            json_object_set(copy, "apiVersion", json_object_get(doc, "apiVersion"));
        DRA_VEC_PUSH(cl->owned, copy);
        it = copy;
    }
    return collect(cl, it, source, e);
}

static bool collect(change_list *cl, const json_t *doc, const char *source, err *e) {
    if (json_is_array(doc)) {
        for (size_t i = 0; i < json_array_size(doc); i++)
            if (!collect(cl, json_array_get(doc, i), source, e)) return false;
        return true;
    }
    /* files: a document that is no object was warned about by the reader ("ignored") */
    if (!json_is_object(doc))
        return cl->skip_unknown || err_set(e, "%s: expected a Kubernetes object", source ? source : "input");
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    size_t kl = kind ? strlen(kind) : 0;
    if (kind && (!strcmp(kind, "List") || (kl > 4 && !strcmp(kind + kl - 4, "List")))) {
        const json_t *items = json_object_get(doc, "items");
        for (size_t i = 0; json_is_array(items) && i < json_array_size(items); i++)
            if (!collect_item(cl, doc, kind, kl, json_array_get(items, i), source, e)) return false;
        return true;
    }
    if (cl->skip_unknown && !dra__kind_of(kind)) return true;
    dra_change c = {.upsert = doc, .source = source};
    if (cl->each) cl->each(cl->arg, &c);
    else DRA_VEC_PUSH(cl->v, c);
    return true;
}

static void change_list_free(change_list *cl) {
    for (size_t i = 0; i < cl->owned.n; i++) json_decref(cl->owned.v[i]);
    free(cl->owned.v);
    free(cl->v.v);
}

uint64_t dra_store_apply_json(dra_store *st, const json_t *doc, err *e) {
    change_list cl = {0};
    uint64_t gen = collect(&cl, doc, NULL, e) ? dra_store_apply(st, cl.v.v, cl.v.n, e) : 0;
    change_list_free(&cl);
    return gen;
}

/* ---- files to one snapshot, a document at a time -------------------------------------------- */

/* The last object seen under a key, for "given twice with different contents". */
typedef struct seen_key {
    char *key;
    uint64_t json_hash;
    const char *source;
} seen_key;

/* One load: each object is decoded into the unpublished snapshot s as its file is read
 * (docs.c), so no file's tree is held whole. The errors are those dra_store_apply
 * gives once every file has been read: a file's own error first (it ends the load), then
 * the first object given twice with different contents, then the first object that does
 * not decode; so after either of the last two, the files are still read and checked,
 * nothing more is decoded. */
typedef struct load_txn {
    dra_store *st;
    dra_snapshot *s;
    change_list cl;
    hmap seen;   /* hash of a key -> index + 1 in keys */
    DRA_VEC(seen_key) keys;
    DRA_VEC(char *) sources;
    bool twice, failed;
    err twice_err, failed_err;
    const dra_snapshot *base;   /* the snapshot s forks, only read (by the parsing thread too) */
    const json_t *doc;   /* the document being read, and its facts when known (else zero) */
    dra_item_facts doc_facts;
    prepared *doc_prepared;   /* ... and it decoded on the parsing thread, until applied */
} load_txn;

/* check_duplicates' rule, one object at a time: the same key as the object before it
 * under that key with another value (compared by json_value_hash: a file's objects are
 * not the API server's, dra_change.served). */
static uint64_t load_check_twice(load_txn *t, const dra_change *c, dra_kind k, const char *name) {
    uint64_t jh = c->upsert == t->doc && t->doc_facts.hash ? t->doc_facts.hash : dra__json_value_hash(c->upsert);
    if (t->twice) return jh;
    char *key = dra__object_key(k, dra__store_meta_str(c->upsert, "namespace"), name);
    uint64_t h = hash_bytes(key, strlen(key)), j;
    if (hmap_get(&t->seen, h, &j) && !strcmp(t->keys.v[j - 1].key, key)) {
        seen_key *sk = &t->keys.v[j - 1];
        if (sk->json_hash != jh) {
            const char *a = sk->source ? sk->source : "(input)", *b = c->source ? c->source : "(input)";
            err_clear(&t->twice_err);
            char kt[512];
            err_set(&t->twice_err, "%s is given twice with different contents: in %s and in %s",
                    dra__store_key_text(key, kt, sizeof kt), a, b);
            t->twice = true;
        }
        sk->json_hash = jh;
        sk->source = c->source;
        free(key);
        return jh;
    }
    DRA_VEC_PUSH(t->keys, ((seen_key){key, jh, c->source}));
    hmap_put(&t->seen, h, t->keys.n);
    return jh;
}

/* The parsing thread's share of a load: a document decoded while it is ahead. */
static void *load_prepare(void *arg, const char *file, const json_t *doc, dra_item_facts facts) {
    load_txn *t = arg;
    prepared *p = xcalloc(1, sizeof *p);
    p->f = facts;
    dra__store_prepare_entry(t->st, t->base, doc, file, p, NULL);
    if (p->en || p->failed) return p;
    free(p);
    return NULL;
}

static void load_discard(void *arg, void *prep) {
    (void)arg;
    prepared *p = prep;
    if (!p) return;
    dra__store_entry_release(p->en);
    free(p);
}

static void load_change(void *arg, const dra_change *c) {
    load_txn *t = arg;
    prepared *ahead = c->upsert == t->doc ? t->doc_prepared : NULL;
    if (ahead) t->doc_prepared = NULL;
    dra_kind k = dra__kind_of(json_string_value(json_object_get(c->upsert, "kind")));
    const char *name = dra__store_meta_str(c->upsert, "name");
    uint64_t jh = k && name ? load_check_twice(t, c, k, name) : 0;
    if (t->twice || t->failed) return load_discard(t, ahead);
    err ae;
    err_clear(&ae);
    prepared p = ahead ? *ahead : (prepared){0};
    p.f = (dra_item_facts){jh, c->upsert == t->doc && t->doc_facts.fields_known};
    free(ahead);
    if (!dra__store_apply_one(t->st, t->s, c, &p, &ae)) {
        t->failed_err = ae;
        t->failed = true;
    }
    dra__store_entry_release(p.en);   /* not taken: apply_one refused before it */
}

static bool load_doc(load_txn *t, const char *file, const json_t *list, json_t *doc, dra_item_facts facts, void *prep,
                     err *e) {
    t->doc = doc;
    t->doc_facts = facts;
    t->doc_prepared = prep;
    const char *src = t->sources.n ? t->sources.v[t->sources.n - 1] : NULL;
    if (!src || strcmp(src, file)) {
        src = xstrdup(file);
        DRA_VEC_PUSH(t->sources, (char *)src);
    }
    const char *kind = json_string_value(json_object_get(list, "kind"));
    bool ok = list ? collect_item(&t->cl, list, kind, strlen(kind), doc, src, e) : collect(&t->cl, doc, src, e);
    for (size_t i = 0; i < t->cl.owned.n; i++) json_decref(t->cl.owned.v[i]);
    t->cl.owned.n = 0;
    load_discard(t, t->doc_prepared);   /* not applied (a kind skipped, a typed list's copy) */
    t->doc_prepared = NULL;
    if (ok && t->st->opts.one_shot && (t->twice || t->failed)) {
        *e = t->twice ? t->twice_err : t->failed_err;   /* the first error met ends the load */
        return false;
    }
    return ok;
}

uint64_t dra_store_load_paths(dra_store *st, const char *const *paths, size_t n, err *e) {
    /* the build's time includes reading the files: objects are decoded as they are read */
    uint64_t t0 = monotonic_ns();
    pthread_mutex_lock(&st->write_lock);
    dra_snapshot *old = dra_store_acquire(st);
    load_txn t = {.st = st, .s = dra__store_snapshot_fork(st, old), .base = old};
    t.cl = (change_list){.skip_unknown = true, .each = load_change, .arg = &t};
    hmap_init(&t.seen);
    bool ok = true;
    const dra_doc_prepare prep = {load_prepare, load_discard, &t};
    for (size_t i = 0; i < n && ok; i++) {
        dra_docs *d = dra__docs_open_prepared(paths[i], &st->input, &prep);
        dra_doc doc;
        dra_item_facts facts;
        void *ahead;
        while (dra__docs_next_item(d, &doc, &facts, &ahead)) {
            err de;
            err_clear(&de);
            if (!load_doc(&t, doc.file, doc.list, doc.doc, facts, ahead, &de)) dra_docs_refuse(d, &de);
        }
        ok = dra_docs_close(d, e);
    }
    if (ok && (t.twice || t.failed)) {
        *e = t.twice ? t.twice_err : t.failed_err;
        ok = false;
    }
    uint64_t gen = dra__store_publish(st, t.s, old, ok, t0, e);
    pthread_mutex_unlock(&st->write_lock);
    change_list_free(&t.cl);
    hmap_free(&t.seen);
    for (size_t i = 0; i < t.keys.n; i++) free(t.keys.v[i].key);
    for (size_t i = 0; i < t.sources.n; i++) free(t.sources.v[i]);
    free(t.keys.v);
    free(t.sources.v);
    return gen;
}

