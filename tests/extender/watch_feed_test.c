/* watch_feed_test.c — the watch-stream decoder (ext_watch_feed): an event split
 * across two chunks reads as if it came whole, a DELETED removes what ADDED put, a
 * line cut at the end is left alone, and an ERROR 410 asks for a relist and drops
 * the rest of the stream. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine.h"
#include "extender/watch.h"

static const char ev_add[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\","
    "\"resourceVersion\":\"5\"}}}\n";
static const char ev_del[] = "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"6\"}}}\n";
static const char ev_410[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n";

static size_t nodes(dra_store *st) {
    dra_snapshot *s = dra_store_acquire(st);
    size_t n = s ? dra_snapshot_count(s, "Node") : 0;
    dra_snapshot_release(s);
    return n;
}

static dra_store *store(void) {
    dra_features f;
    dra_features_default(&f);
    return dra_store_new(&f);
}

Test(watch_feed, split_line_reads_whole) {
    for (size_t cut = 1; cut < sizeof ev_add - 1; cut += 7) {
        dra_store *st = store();
        const char *chunks[2] = {ev_add, ev_add + cut};
        size_t lens[2] = {cut, sizeof ev_add - 1 - cut};
        bool relist = false;
        cr_assert(ext_watch_feed(st, "Node", chunks, lens, 2, &relist));
        cr_assert_eq(nodes(st), 1, "cut at %zu", cut);
        cr_assert_not(relist);
        dra_store_free(st);
    }
}

Test(watch_feed, delete_cut_and_relist) {
    dra_store *st = store();
    bool relist = false;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", ev_add, ev_del);
    const char *one[1] = {buf};
    size_t len[1] = {strlen(buf)};
    cr_assert(ext_watch_feed(st, "Node", one, len, 1, &relist));
    cr_assert_eq(nodes(st), 0);
    /* a line cut at the end of the stream is not applied */
    size_t half = (sizeof ev_add - 1) / 2;
    const char *cut[1] = {ev_add};
    size_t clen[1] = {half};
    cr_assert(ext_watch_feed(st, "Node", cut, clen, 1, &relist));
    cr_assert_eq(nodes(st), 0);
    /* 410: relist, and what follows in the stream is dropped */
    snprintf(buf, sizeof buf, "%s%s", ev_410, ev_add);
    const char *gone[2] = {buf, ev_add};
    size_t glen[2] = {strlen(buf), sizeof ev_add - 1};
    cr_assert(ext_watch_feed(st, "Node", gone, glen, 2, &relist));
    cr_assert(relist);
    cr_assert_eq(nodes(st), 0);
    cr_assert_not(ext_watch_feed(st, "Pod", one, len, 1, &relist), "pods are not watched");
    dra_store_free(st);
}
