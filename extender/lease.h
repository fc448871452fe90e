/* lease.h — leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does it, so several `dralloc serve --leader-elect`
 * replicas run with exactly one active (ready, binding):
 *   - a candidate creates the Lease when there is none, renews it while it holds it
 *     (every retry period), and takes it over only when the holder has not renewed
 *     for the lease duration — measured on this process's own clock from when it
 *     last saw the Lease change, so clocks that disagree do not matter;
 *   - every write carries the resourceVersion it read (optimistic concurrency): of
 *     two candidates taking over at once, one gets 409 Conflict and stays standby;
 *   - a leader that cannot renew within the renew deadline stops being leader;
 *   - on a clean stop the leader releases the Lease (holderIdentity emptied), so a
 *     standby takes over at its next try instead of after the lease duration. */
#ifndef DRA_EXTENDER_LEASE_H
#define DRA_EXTENDER_LEASE_H

#include <stdbool.h>
#include <stddef.h>

#include "extender/kube.h"

typedef struct ext_lease ext_lease;

typedef struct ext_lease_opts {
    const char *ns, *name;       /* default kube-system / dralloc-extender */
    const char *identity;        /* default hostname_pid */
    double duration_s;           /* leaseDurationSeconds, default 15 */
    double renew_deadline_s;     /* default 10 */
    double retry_s;              /* default 2 */
    bool quiet;
} ext_lease_opts;

ext_lease *ext_lease_start(ext_kube *k, const ext_lease_opts *o);
bool ext_lease_is_leader(ext_lease *l);
const char *ext_lease_identity(const ext_lease *l);
/* The holder last seen on the Lease (malloc'd), NULL when nobody holds it or it was not
 * read yet: who a standby names as the leader. */
char *ext_lease_holder(ext_lease *l);
/* "namespace/name" of the Lease. */
void ext_lease_name(const ext_lease *l, char *buf, size_t n);
/* Stops the candidate; a leader releases the Lease when `release`. */
void ext_lease_stop(ext_lease *l, bool release);

#endif
