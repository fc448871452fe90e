/* engine.h — the DRA allocator layer: the resource.k8s.io/v1 object model, the
 * JSON/YAML decoder and encoder, the immutable world snapshot (pools, devices,
 * node index) and the allocator that reproduces Kubernetes' structured allocation.
 * (Public contract to be filled in by the allocator work; see DESIGN.md.) */
#ifndef DRA_ENGINE_H
#define DRA_ENGINE_H
#endif
