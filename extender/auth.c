/* auth.c — the secure-by-default rule of auth.h: which listeners may change state and
 * which routes do. */
#include "extender/auth.h"

#include <stdio.h>
#include <string.h>

#include "base/base.h"

char *ext_auth_guard(const char *listen, bool loopback, bool client_certs, bool allow_unauthenticated) {
    if (loopback || client_certs || allow_unauthenticated) return NULL;
    char msg[600];
    snprintf(msg, sizeof msg,
             "forbidden: dralloc serve listens on %s beyond loopback without --client-ca-file: /bind and /objects "
             "need a client certificate (--tls-cert-file, --tls-private-key-file, --client-ca-file), a loopback "
             "--listen, or --allow-unauthenticated",
             listen);
    return xstrdup(msg);
}

/* kube-scheduler appends its bindVerb to the urlPrefix, which may carry a path of its
 * own: any path ending in /bind. */
bool ext_auth_changes_state(const char *path) {
    size_t n = strlen(path);
    if (!strcmp(path, "/objects") || !strncmp(path, "/objects/", 9)) return true;
    return n >= 5 && !strcmp(path + n - 5, "/bind");
}
