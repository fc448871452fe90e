/* list_writer.h — the items of a Kubernetes List written one object at a time, for the
 * fleet generators' --dump (bench/fleet.c, bench/fleet_scale.c): the caller opens the
 * file and writes the List's head and tail, bench_list_put writes each item (the
 * separator before it, the object compact) and takes the reference it is given, so a
 * generator hands over each object as it makes it and no fleet is held whole. */
#ifndef DRA_BENCH_LIST_WRITER_H
#define DRA_BENCH_LIST_WRITER_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

typedef struct bench_list_writer {
    FILE *f;
    size_t n;   /* items written so far */
} bench_list_writer;

/* arg: a bench_list_writer; obj: stolen. The shape of the generators' callbacks. */
void bench_list_put(void *arg, json_t *obj);

#endif
