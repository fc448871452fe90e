/* listen.c — HOST:PORT into a socket address (listen.h). getaddrinfo takes a service
 * name or any number and wraps ports above 65535 modulo 2^16, so the port is checked
 * here first: "127.0.0.1:99999" must fail, not listen on 34463. */
#include "extender/listen.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

bool ext_listen_parse(const char *flag, const char *listen, ext_addr *out, err *e) {
    char host[256];
    const char *colon = listen ? strrchr(listen, ':') : NULL;
    if (!colon || !colon[1] || (size_t)(colon - listen) >= sizeof host)
        return err_set(e, "%s %s: expected HOST:PORT ([V6]:PORT, :PORT for every interface)", flag,
                       listen ? listen : "");
    const char *port = colon + 1;
    size_t np = strlen(port);
    for (const char *p = port; *p; p++)
        if (*p < '0' || *p > '9') return err_set(e, "%s %s: the port must be a number", flag, listen);
    if (np > 5 || strtoul(port, NULL, 10) > 65535)
        return err_set(e, "%s %s: the port must be between 0 and 65535", flag, listen);
    size_t hl = (size_t)(colon - listen);
    const char *h = listen;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') h++, hl -= 2;
    else if (memchr(h, ':', hl))
        return err_set(e, "%s %s: an IPv6 address goes in brackets ([::1]:8888)", flag, listen);
    memcpy(host, h, hl);
    host[hl] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
    int rc = getaddrinfo(hl ? host : NULL, port, &hints, &res);
    if (rc) return err_set(e, "%s %s: %s", flag, listen, gai_strerror(rc));
    memset(out, 0, sizeof *out);
    memcpy(&out->sa, res->ai_addr, res->ai_addrlen);
    out->len = res->ai_addrlen;
    freeaddrinfo(res);
    return true;
}

bool ext_addr_is_loopback(const ext_addr *a) {
    if (a->sa.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&a->sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (a->sa.ss_family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)&a->sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(in6)) return true;
        return IN6_IS_ADDR_V4MAPPED(in6) && in6->s6_addr[12] == 127;
    }
    return false;
}
