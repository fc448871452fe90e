/* list_writer.c — a List's items one object at a time (list_writer.h). */
#include "bench/list_writer.h"

void bench_list_put(void *arg, json_t *obj) {
    bench_list_writer *w = arg;
    fputs(w->n++ ? ",\n" : "\n", w->f);
    json_dumpf(obj, w->f, JSON_COMPACT);
    json_decref(obj);
}
