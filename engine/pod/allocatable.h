/* allocatable.h — private to engine/: what is allocatable now, device by device — the
 * one accounting behind the capacity view (capacity.c), and so behind `dralloc
 * capacity`, `dralloc plan`, the plan report and `dralloc serve`'s status page.
 *
 * Each pool is read at its newest generation. A device is, in this order of precedence:
 *   allocated   a claim holds it (exclusively, or with a share of a multi-allocatable
 *               device; `shared_left` then says whether a request of its default
 *               amounts could take one more share);
 *   unusable    its pool is incomplete (fewer slices of that generation than
 *               resourceSliceCount), or it needs a feature gate that is off
 *               (consumesCounters without DRAPartitionableDevices, bindingConditions
 *               without DRADeviceBindingConditions);
 *   taints      a NoSchedule or NoExecute taint — its own or a DeviceTaintRule's —
 *               that a request without tolerations does not tolerate (DRADeviceTaints);
 *   counters    taking it would overdraw a shared counter of its pool, given what the
 *               allocated devices consume (the allocator's rule: every counter of the
 *               pool stays covered);
 *   free        none of the above: a request with no tolerations could take it now.
 * These are the allocator's own checks (alloc.c allocate_device) in the order explain.c
 * reports them, without a request's selectors.
 *
 * Counter sets are also read as what each can still carve: the devices consuming from
 * a set are grouped into profiles (equal capacity on the capacity names every device of
 * the set has — a MIG profile's placements differ only in which memory slices they
 * use — and, where devices of equal capacity are named apart, by name: a whole GPU and
 * its 7g.80gb partition consume alike but are two profiles), and for each profile the
 * number of its devices that could be allocated one after another now (`fit`: carved
 * together) and with nothing allocated (`fit_empty`), taking them in the driver's
 * order: exact when a profile's devices draw disjoint counters (MIG placements do), a
 * lower bound otherwise; `free` counts those allocatable now each on its own, which
 * need not coexist. */
#ifndef DRA_ENGINE_ALLOCATABLE_H
#define DRA_ENGINE_ALLOCATABLE_H

#include "engine/world/world.h"

enum { DRA_AV_FREE = 0, DRA_AV_ALLOCATED, DRA_AV_UNUSABLE, DRA_AV_TAINTS, DRA_AV_COUNTERS };

typedef struct dra_av_counter {
    const char *set, *name;
    uint32_t set_id, name_id;
    quantity cap, used;          /* used: what allocated devices consume */
} dra_av_counter;

typedef struct dra_av_device {
    const dra_slice *slice;
    const dra_device *dev;
    uint8_t state;               /* DRA_AV_* */
    bool shared_left;            /* allocated by shares, with room for one more */
    uint32_t ncons;
    uint32_t *cons_idx;          /* per consumed counter: index into the pool's counters */
    const quantity **cons_val;
} dra_av_device;

/* One profile of a counter set (see above). */
typedef struct dra_av_profile {
    const char *label;           /* from the devices' names, without the set's own part */
    uint32_t devices, allocated, fit, fit_empty;
    uint32_t free;               /* allocatable now one at a time (each alone); fit: together */
} dra_av_profile;

typedef struct dra_av_set {
    const char *name;
    dra_av_profile *profiles;    /* fewest carvable when empty first */
    uint32_t nprofiles;
} dra_av_set;

typedef struct dra_av_pool {
    const dra_slice *first;      /* driver and pool name */
    const char *node;            /* every slice's nodeName, or NULL */
    bool incomplete;
    dra_av_device *devs;
    uint32_t ndevs;
    dra_av_counter *counters;
    uint32_t ncounters;
    dra_av_set *sets;
    uint32_t nsets;
} dra_av_pool;

/* Classifies the devices of every pool of the snapshot's world against in-use state
 * st (the snapshot's or an overlay's) and calls fn once per pool, by driver then pool
 * name. The pool and everything it points to is valid only during the call (one pool's
 * memory at a time, whatever the cluster's size). */
void dra__av_each_pool(dra_snapshot *s, const dra_allocated *st, void (*fn)(void *arg, const dra_av_pool *p),
                       void *arg);

#endif
