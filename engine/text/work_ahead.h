/* work_ahead.h — the items of a batch prepared by a second thread while the caller
 * takes them in order (private to engine/; store.c dra_store_apply). Preparing an
 * item (its facts, item_facts.h, and its decoding into a store entry) needs nothing
 * from the items before it; applying it does, so the caller applies them in order,
 * each once prepared. Both threads prepare: the second one the next item nobody has
 * taken, the caller an item it needs that the second one has not reached — so the two
 * share the work whatever each item costs, and a batch's errors are met in order. */
#ifndef DRA_ENGINE_WORK_AHEAD_H
#define DRA_ENGINE_WORK_AHEAD_H

#include <stddef.h>

typedef struct dra_work_ahead dra_work_ahead;

/* A batch smaller than this is prepared by the caller alone: a thread's start costs
 * about what a few dozen small objects take to decode. */
enum { DRA_WORK_AHEAD_MIN = 64 };

/* Prepares item i (into the caller's slot for it); called once per item, on either
 * thread, items in any order. lane says which thread: DRA_LANE_CALLER or
 * DRA_LANE_AHEAD (state kept per lane is only ever touched by one thread at a time). */
enum { DRA_LANE_CALLER, DRA_LANE_AHEAD, DRA_LANES };
typedef void (*dra_prepare_fn)(void *arg, size_t i, unsigned lane);

/* Starts on items [0, n); NULL when the batch is too small for a thread to pay, or
 * none can be started (the caller prepares each item itself). */
dra_work_ahead *dra__work_ahead_start(size_t n, dra_prepare_fn fn, void *arg);
/* Item i prepared: by this thread now, unless the other one has taken it (then its
 * result is waited for). */
void dra__work_ahead_need(dra_work_ahead *wa, size_t i);
/* Stops the thread (it finishes the item it is on) and frees wa: items not needed
 * may be prepared or not. */
void dra__work_ahead_free(dra_work_ahead *wa);

#endif
