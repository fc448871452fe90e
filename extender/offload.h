/* offload.h — a few threads for the requests that wait on another server: bind mode's
 * /bind spends ~100 ms on kube-apiserver round trips. Run on an MHD thread, such a
 * request would stall every other connection that thread serves — the /filter and
 * /prioritize calls kube-scheduler is waiting for — since each MHD thread runs one
 * event loop. The server instead suspends the connection, hands the request here and
 * resumes the connection with the answer (server.c).
 *
 * Why a pool of its own and not more MHD threads (or thread-per-connection): the
 * scheduler keeps a few keep-alive connections and sends filters and binds down the
 * same ones, so however many MHD threads there are, a bind on a connection blocks the
 * thread that owns it. A fixed pool bounds the writes in flight at the API server too;
 * past it binds queue here, still without holding an MHD thread.
 *
 * Jobs run in the order given. ext_offload_close refuses new jobs (the caller then
 * runs them itself) and waits for the ones given to end. */
#ifndef DRA_EXTENDER_OFFLOAD_H
#define DRA_EXTENDER_OFFLOAD_H

#include <stdbool.h>

typedef struct ext_offload ext_offload;

ext_offload *ext_offload_new(unsigned nthreads);
/* fn(arg) on a pool thread; false (nothing done) once the pool is closed. */
bool ext_offload_run(ext_offload *o, void (*fn)(void *arg), void *arg);
/* No new jobs; returns when every job given has run. */
void ext_offload_close(ext_offload *o);
void ext_offload_free(ext_offload *o);   /* closes first; NULL: nothing */

#endif
