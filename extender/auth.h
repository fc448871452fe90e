/* auth.h — who may change state through the server: /bind (bind mode creates
 * bindings with dralloc's pods/binding right, which skips the scheduler's checks) and
 * the static-mode object API (POST /objects, DELETE /objects/...). Secure by default:
 *   - a client certificate verified against --client-ca-file (tls.h) proves the caller;
 *   - a loopback --listen means the caller is on this machine (in a sidecar: this pod,
 *     kube-scheduler);
 *   - otherwise those routes answer 403 naming the flags, unless the operator said
 *     --allow-unauthenticated (logged loudly at start).
 * The routes that only read (/filter, /prioritize, health, metrics, /debug/cache)
 * stay open: they change nothing and kube-scheduler calls them without credentials. */
#ifndef DRA_EXTENDER_AUTH_H
#define DRA_EXTENDER_AUTH_H

#include <stdbool.h>

/* Why state-changing routes are refused on this listener (malloc'd, for the 403's
 * error), or NULL when they are allowed. */
char *ext_auth_guard(const char *listen, bool loopback, bool client_certs, bool allow_unauthenticated);
/* Whether a request to path changes state (any method: a route is guarded whole). */
bool ext_auth_changes_state(const char *path);

#endif
