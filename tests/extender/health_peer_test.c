/* health_peer_test.c — the health listener under a flood from one peer (issue #39): the
 * listener is on the pod's IP, where any pod may open connections; one that opens 100
 * and holds them idle must not take the 64 slots the kubelet's probes need.
 *
 * A per-address limit sees all of 127.0.0.0/8 as distinct addresses, but a test on
 * 127.0.0.1 alone would be one peer both flooding and probing. So the flood binds its
 * sockets to 127.0.0.2 (Linux routes the whole loopback /8 to lo) and the probes come
 * from 127.0.0.1, as another pod and the kubelet would. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "tests/extender/serve_helpers.h"

/* A connection from `from` to 127.0.0.1:port, -1 when refused at connect. */
static int dial_from(const char *from, int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in src = {.sin_family = AF_INET};
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    inet_pton(AF_INET, from, &src.sin_addr);
    if (bind(fd, (struct sockaddr *)&src, sizeof src) || connect(fd, (struct sockaddr *)&dst, sizeof dst)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether the server has closed fd (it refuses past a limit by closing at accept). */
static bool closed_by_server(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c;
    return poll(&p, 1, 0) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

Test(health_peer, a_peer_holding_100_connections_leaves_the_probes_their_slots) {
    srv s;
    int hport = 0;
    const char *args[] = {"--listen", "127.0.0.1:0", "--snapshot", DEMO, "--health-listen", "127.0.0.1:0", NULL};
    srv_start_with(&s, args, NULL, &hport);
    cr_assert(hport > 0, "no health listener port in the log");
    int probe_fd = dial_from("127.0.0.2", hport);
    cr_assert(probe_fd >= 0, "cannot connect from 127.0.0.2 (loopback beyond 127.0.0.1 not routed here?)");
    close(probe_fd);

    enum { FLOOD = 100 };
    int fds[FLOOD];
    for (int i = 0; i < FLOOD; i++) fds[i] = dial_from("127.0.0.2", hport);
    usleep(300000);   /* the server accepts (and closes the refused ones) */
    int held = 0;
    for (int i = 0; i < FLOOD; i++)
        if (fds[i] >= 0 && !closed_by_server(fds[i])) held++;
    /* the flood's connections idle for the listener's 5 s conn timeout: probe well inside it */
    srv hs = {.pid = s.pid, .port = hport};
    CURL *h = curl_easy_init();
    for (int k = 0; k < 6; k++) {
        const char *path = k % 2 ? "/readyz" : "/healthz";
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);   /* the kubelet: a new connection per probe */
        curl_easy_setopt(h, CURLOPT_INTERFACE, "host!127.0.0.1");
        char *out;
        long code = th_http_on(h, &hs, "GET", path, NULL, 0, &out);
        cr_assert_eq(code, 200, "probe %d (%s) from 127.0.0.1 while 127.0.0.2 holds %d connections: %ld %s", k, path,
                     held, code, out);
        free(out);
        usleep(100000);
    }
    curl_easy_cleanup(h);
    cr_assert(held >= 1 && held <= 8, "127.0.0.2 holds %d connections of the health listener: want at most 8", held);
    for (int i = 0; i < FLOOD; i++)
        if (fds[i] >= 0) close(fds[i]);
    cr_assert_eq(srv_stop(&s), 0);
}
