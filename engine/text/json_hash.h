/* json_hash.h — a hash of a JSON value that does not depend on the order of object
 * members (private to engine/): how the store tells an object given again unchanged
 * (store.c) and one given twice with different contents. A pure function of the
 * value, so parse_ahead.c computes it on its thread while the store decodes. */
#ifndef DRA_ENGINE_JSON_HASH_H
#define DRA_ENGINE_JSON_HASH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Never 0 (0: no hash). */
uint64_t dra__json_value_hash(const json_t *v);

/* What the store compares to tell an object given again unchanged (never 0). For an
 * object the API server served (served: dra_change.served) with a
 * metadata.resourceVersion, a hash of its resourceVersion and uid: Kubernetes gives
 * every write a new resourceVersion, so equal ones are the same object — the test
 * Kubernetes' own controllers make on an informer's update (pkg/controller/daemon
 * daemon_controller.go updatePod: "Two different versions of the same pod will always
 * have different RVs"). That spares the walk over the value, a third of decoding a
 * MIG-carved slice (bench/README.md). Else, and for an object without a
 * resourceVersion, the value's hash. An object held under one rule and given again
 * under the other compares unequal (short of a 64-bit accident, as between any two
 * values' hashes) and is decoded again, which is only slower. */
uint64_t dra__object_identity(const json_t *obj, bool served);

#endif
