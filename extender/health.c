/* health.c — the health listener (--health-listen, extender.h): the probes' own
 * server. The kubelet restarts a pod whose liveness probe fails and takes it out of
 * service when readiness does; on the main listener a probe waits behind whatever
 * that listener carries (up to --max-connections slow clients, each holding a slot
 * until --request-timeout), so a flood there would restart a healthy pod. Here: one
 * thread of its own, a connection limit of its own, short timeouts, small bodies, and
 * only the three routes a probe or a scraper asks for — nothing that changes state.
 *
 * The listener is on the pod's IP (the kubelet probes it from the node), so any pod
 * that may reach the port could hold all 64 connections and starve the probes: each
 * peer address gets at most HEALTH_PER_PEER of them. The kubelet (the node's address)
 * and each Prometheus (its pod's) are peers of their own; deploy/base's NetworkPolicy
 * keeps the rest of the cluster off the port where the CNI enforces it. */
#include "extender/extender.h"

static const char *const HEALTH_ROUTES[] = {"/healthz", "/readyz", "/metrics", NULL};

enum {
    HEALTH_CONNECTIONS = 64,      /* a kubelet and a Prometheus or two */
    HEALTH_PER_PEER = 8,          /* the kubelet's liveness and readiness probes (a new
                                   * connection each) with room to spare, a scraper's one */
    HEALTH_CONN_TIMEOUT_S = 5,
    HEALTH_REQUEST_TIMEOUT_MS = 10000,
    HEALTH_MAX_BODY = 4096,       /* GET requests: no body worth the name */
};

ext_server *ext_health_start(ext_service *svc, const char *listen, char *bound, size_t nbound, err *e) {
    ext_server_opts o = {.listen = listen,
                         .threads = 1,
                         .conn_timeout_s = HEALTH_CONN_TIMEOUT_S,
                         .conn_limit = HEALTH_CONNECTIONS,
                         .per_ip_limit = HEALTH_PER_PEER,
                         .request_timeout_ms = HEALTH_REQUEST_TIMEOUT_MS,
                         .routes = HEALTH_ROUTES,
                         .max_body = HEALTH_MAX_BODY,
                         .name = "--health-listen"};
    return ext_server_start(svc, &o, bound, nbound, e);
}
