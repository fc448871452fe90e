/* parse_ahead.c — a JSON document's items parsed on a second thread, a bounded way
 * ahead of their reader (parse_ahead.h). */
#include "engine/text/parse_ahead.h"
#include "engine/text/json_fast.h"

#include "base/base.h"

#include <pthread.h>

/* Trees parsed ahead at most: enough to ride out an item slower to decode than its
 * neighbours (a slice of 64 devices beside a Node), few enough that memory stays that
 * of a handful of items. */
enum { AHEAD = 64 };

struct dra_parse_ahead {
    const char *text;
    const dra_json_items *it;
    bool threaded;
    bool fields;   /* find fields_known too (dra__item_facts) */
    const dra_item_work *work;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t moved;   /* an item parsed, or taken, or the reader left */
    json_t *ring[AHEAD];
    dra_item_facts facts[AHEAD];   /* each tree's facts (item_facts.h), found here too */
    void *prepared[AHEAD];         /* work's result for it, or NULL */
    size_t parsed, taken;   /* items parsed (into ring[i % AHEAD]) and handed out */
    bool failed, stop;      /* item `parsed` does not parse (je); the reader left */
    json_error_t je;
};

/* Item i: by the fast reader, else (what it does not take, errors too) by jansson. */
static json_t *parse_item(const dra_parse_ahead *pa, size_t i, json_error_t *je) {
    return dra__json_load_item(pa->text + pa->it->v[i].off, pa->it->v[i].len, je);
}

static void *parse_all(void *arg) {
    dra_parse_ahead *pa = arg;
    for (size_t i = 0; i < pa->it->n; i++) {
        pthread_mutex_lock(&pa->lock);
        while (!pa->stop && pa->parsed - pa->taken >= AHEAD) pthread_cond_wait(&pa->moved, &pa->lock);
        bool stop = pa->stop, behind = pa->parsed - pa->taken >= AHEAD / 4;
        pthread_mutex_unlock(&pa->lock);
        if (stop) break;
        json_error_t je;
        json_t *doc = parse_item(pa, i, &je);
        dra_item_facts f = doc ? dra__item_facts(doc, pa->fields, false) : (dra_item_facts){0};
        /* the reader is behind: do its first step of this item here */
        void *prep = doc && behind && pa->work ? pa->work->prepare(pa->work->arg, doc, f) : NULL;
        pthread_mutex_lock(&pa->lock);
        if (doc) {
            pa->ring[i % AHEAD] = doc;
            pa->facts[i % AHEAD] = f;
            pa->prepared[i % AHEAD] = prep;
            pa->parsed++;
        } else {
            pa->je = je;
            pa->failed = true;
        }
        pthread_cond_broadcast(&pa->moved);
        pthread_mutex_unlock(&pa->lock);
        if (!doc) break;
    }
    return NULL;
}

dra_parse_ahead *dra__parse_ahead_start(const char *text, const dra_json_items *it, bool threaded, bool fields,
                                        const dra_item_work *work) {
    dra_parse_ahead *pa = xcalloc(1, sizeof *pa);
    pa->text = text;
    pa->it = it;
    pa->fields = fields;
    pa->work = work;
    if (!threaded) return pa;
    pthread_mutex_init(&pa->lock, NULL);
    pthread_cond_init(&pa->moved, NULL);
    pa->threaded = pthread_create(&pa->thread, NULL, parse_all, pa) == 0;
    if (!pa->threaded) {
        pthread_cond_destroy(&pa->moved);
        pthread_mutex_destroy(&pa->lock);
    }
    return pa;
}

json_t *dra__parse_ahead_next(dra_parse_ahead *pa, bool *failed, json_error_t *je, dra_item_facts *facts,
                              void **prepared) {
    *failed = false;
    *facts = (dra_item_facts){0};
    *prepared = NULL;
    if (!pa->threaded) {
        if (pa->failed || pa->taken >= pa->it->n) return NULL;
        json_t *doc = parse_item(pa, pa->taken, je);
        if (!doc) return pa->failed = *failed = true, NULL;
        pa->taken++;
        return doc;
    }
    pthread_mutex_lock(&pa->lock);
    while (pa->taken == pa->parsed && !pa->failed && pa->parsed < pa->it->n) pthread_cond_wait(&pa->moved, &pa->lock);
    json_t *doc = NULL;
    if (pa->taken < pa->parsed) {
        doc = pa->ring[pa->taken % AHEAD];
        *facts = pa->facts[pa->taken % AHEAD];
        *prepared = pa->prepared[pa->taken % AHEAD];
        pa->taken++;
        pthread_cond_broadcast(&pa->moved);
    } else if (pa->failed) {
        *failed = true;
        *je = pa->je;
    }
    pthread_mutex_unlock(&pa->lock);
    return doc;
}

void dra__parse_ahead_free(dra_parse_ahead *pa) {
    if (!pa) return;
    if (pa->threaded) {
        pthread_mutex_lock(&pa->lock);
        pa->stop = true;
        pthread_cond_broadcast(&pa->moved);
        pthread_mutex_unlock(&pa->lock);
        pthread_join(pa->thread, NULL);
        for (size_t i = pa->taken; i < pa->parsed; i++) {
            json_decref(pa->ring[i % AHEAD]);
            if (pa->prepared[i % AHEAD]) pa->work->discard(pa->work->arg, pa->prepared[i % AHEAD]);
        }
        pthread_cond_destroy(&pa->moved);
        pthread_mutex_destroy(&pa->lock);
    }
    free(pa);
}
