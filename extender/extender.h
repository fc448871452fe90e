/* extender.h — the kube-scheduler HTTP extender (`dralloc serve`): /filter,
 * /prioritize, /bind over a list+watch cache of DRA objects, with health,
 * readiness and Prometheus metrics. Not built yet: a later issue delivers it. */
#ifndef DRA_EXTENDER_H
#define DRA_EXTENDER_H
#endif
