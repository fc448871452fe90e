/* listen.h — the addresses the server listens on (--listen, --health-listen), as kube
 * components take them: HOST:PORT, [V6]:PORT or :PORT (every interface), the port a
 * number from 0 to 65535 (0: the kernel picks a free one). A port out of range is a
 * usage error, never truncated into another port. Whether the address stays on this
 * machine decides what the server answers without client certificates (auth.h). */
#ifndef DRA_EXTENDER_LISTEN_H
#define DRA_EXTENDER_LISTEN_H

#include <stdbool.h>
#include <sys/socket.h>

#include "base/error.h"

typedef struct ext_addr {
    struct sockaddr_storage sa;
    socklen_t len;
} ext_addr;

/* flag names the option in the error ("--listen 127.0.0.1:99999: port must be ..."). */
bool ext_listen_parse(const char *flag, const char *listen, ext_addr *out, err *e);
/* 127.0.0.0/8, ::1 or ::ffff:127.x: reachable from this machine (this pod) only.
 * 0.0.0.0 and :: listen everywhere: not loopback. */
bool ext_addr_is_loopback(const ext_addr *a);

#endif
