/* json_warm.h — a jansson tree brought into the cache before it is read (private to
 * engine/: store.c, before an object is validated and decoded).
 *
 * A tree built a while before it is decoded (a page of a LIST, a batch of watch
 * events: tens of MiB of small allocations) is out of the cache, and reading it
 * member after member waits for each line in turn: a device's members are a list,
 * each member's value another allocation, its text a third. This walks the tree
 * breadth first, every object of a level advanced one member per round, so that the
 * lines of one round are fetched side by side rather than one after another; the
 * decoder then reads lines that have arrived. Nothing is written. */
#ifndef DRA_ENGINE_JSON_WARM_H
#define DRA_ENGINE_JSON_WARM_H

#include <jansson.h>

void dra__json_warm(const json_t *root);

#endif
