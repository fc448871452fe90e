/* serve_helpers.h — running `dralloc serve` as a child process for the process-level
 * tests: start it on a free port (port 0, the port read back from its log line
 * "listening on HOST:PORT"), talk HTTP to it with libcurl, stop it with SIGTERM and
 * return its exit status (the sanitizer build exits non-zero on any ASan/UBSan/LSan
 * report, so "exit 0" also means "clean"). Header-only, like tests/engine/helpers.h. */
#ifndef DRALLOC_TESTS_EXTENDER_SERVE_HELPERS_H
#define DRALLOC_TESTS_EXTENDER_SERVE_HELPERS_H

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"

typedef struct srv {
    pid_t pid;
    int port;
    char log[256];   /* the child's stderr, a temporary file */
} srv;

#define DEMO DRALLOC_SOURCE_DIR "/testdata/demo"
#define REQ DEMO "/requests/"

static inline char *th_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    strbuf b;
    sbuf_init(&b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sbuf_add(&b, buf, n);
    fclose(f);
    if (len) *len = b.len;
    if (!b.buf) sbuf_addc(&b, 0), b.len = 0;
    return sbuf_take(&b);
}

/* The port of the log's "<what> HOST:PORT" line (any host: "listening on 0.0.0.0:PORT"),
 * 0 when there is none yet. */
static inline int th_logged_port(const char *log, const char *what) {
    const char *p = strstr(log, what);
    if (!p) return 0;
    p += strlen(what);
    const char *end = p + strcspn(p, " \n");
    while (end > p && end[-1] != ':') end--;
    return end > p ? atoi(end) : 0;
}

/* Starts `dralloc serve ARGS...` (NULL-terminated; the listen address among them), with
 * env ("NAME=VALUE"..., NULL-terminated, may be NULL) added to its environment; the
 * port comes from its log, and *health_port (when not NULL) from its "health on" line. */
static inline void srv_start_with(srv *s, const char *const *args, const char *const *env, int *health_port) {
    snprintf(s->log, sizeof s->log, "/tmp/dralloc-serve-test-XXXXXX");
    int fd = mkstemp(s->log);
    cr_assert(fd >= 0);
    const char *argv[64] = {DRALLOC_BIN, "serve"};
    size_t n = 2;
    for (size_t i = 0; args && args[i] && n < 62; i++) argv[n++] = args[i];
    argv[n] = NULL;
    s->pid = fork();
    cr_assert(s->pid >= 0);
    if (!s->pid) {
        /* a failed assertion ends the test process: the server must not outlive it
         * (it would hold CTest's output pipe open) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(fd, 2);
        /* nothing of Criterion's (its IPC sockets) may leak into the server */
        for (int f = 3; f < 1024; f++) close(f);
        for (size_t i = 0; env && env[i]; i++) putenv((char *)env[i]);
        execv(DRALLOC_BIN, (char *const *)argv);
        _exit(127);
    }
    close(fd);
    s->port = 0;
    for (int tries = 0; tries < 3000 && !s->port; tries++) {   /* up to 30 s (a slow sanitizer build) */
        char *log = th_read_file(s->log, NULL);
        s->port = th_logged_port(log, "listening on ");
        if (health_port) *health_port = th_logged_port(log, "health on ");
        int status;
        if (!s->port && waitpid(s->pid, &status, WNOHANG) == s->pid)
            cr_assert_fail("dralloc serve exited before listening:\n%s", log);
        free(log);
        if (!s->port) usleep(10000);
    }
    cr_assert(s->port > 0, "dralloc serve did not say it was listening");
}

/* Starts `dralloc serve --listen 127.0.0.1:0 ARGS...` (NULL-terminated args). */
static inline void srv_start(srv *s, const char *const *args) {
    const char *all[64] = {"--listen", "127.0.0.1:0"};
    size_t n = 2;
    for (size_t i = 0; args && args[i] && n < 62; i++) all[n++] = args[i];
    all[n] = NULL;
    srv_start_with(s, all, NULL, NULL);
}

/* SIGTERM, wait; the exit status (or 128+signal). The log is printed when not 0. */
static inline int srv_stop(srv *s) {
    kill(s->pid, SIGTERM);
    int status = 0;
    /* bounded: a server that ignores SIGTERM is killed after 20 s and reported (no
     * Criterion .timeout: its watchdog leaks when timed tests run in parallel) */
    for (int i = 0; waitpid(s->pid, &status, WNOHANG) == 0; i++) {
        if (i == 2000) kill(s->pid, SIGKILL);
        usleep(10000);
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char *log = th_read_file(s->log, NULL);
    if (rc) fprintf(stderr, "dralloc serve log (exit %d):\n%s\n", rc, log);
    free(log);
    unlink(s->log);
    return rc;
}

static size_t th_collect(char *p, size_t size, size_t n, void *ud) {
    sbuf_add(ud, p, size * n);
    return size * n;
}

/* One HTTP request on handle h (NULL: a fresh one); the status, or -1 when the
 * transfer failed (connection refused/reset). *out receives the body (may be NULL). */
static inline long th_http_on(CURL *h, const srv *s, const char *method, const char *path, const char *body,
                              size_t len, char **out) {
    bool own = !h;
    if (own) h = curl_easy_init();
    char url[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, path);
    strbuf b;
    sbuf_init(&b);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, th_collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    long code = -1;
    if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (own) curl_easy_cleanup(h);
    if (!b.buf) sbuf_addc(&b, 0), b.len = 0;
    if (out) *out = sbuf_take(&b);
    else sbuf_free(&b);
    return code;
}

static inline long th_http(const srv *s, const char *method, const char *path, const char *body, char **out) {
    return th_http_on(NULL, s, method, path, body, body ? strlen(body) : 0, out);
}

static inline json_t *th_json(const char *text) {
    json_error_t je;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
    cr_assert_not_null(j, "not JSON (%s): %.300s", je.text, text);
    return j;
}

/* The keys of an object, sorted, comma-separated ("a,b"), for comparing node sets. */
static int th_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static inline char *th_keys(const json_t *o) {
    const char *k[512];
    size_t n = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) if (n < 512) k[n++] = key;
    qsort(k, n, sizeof *k, th_cmp);
    strbuf b;
    sbuf_init(&b);
    for (size_t i = 0; i < n; i++) sbuf_addf(&b, "%s%s", i ? "," : "", k[i]);
    if (!b.buf) sbuf_addc(&b, 0);
    return sbuf_take(&b);
}
/* Strings of an array (or each item's metadata.name or Host), comma-separated, in order. */
static inline char *th_names(const json_t *a) {
    strbuf b;
    sbuf_init(&b);
    size_t i;
    json_t *v;
    json_array_foreach((json_t *)a, i, v) {
        const char *s = json_is_string(v)                 ? json_string_value(v)
                        : json_object_get(v, "Host") ? json_string_value(json_object_get(v, "Host"))
                                                     : json_string_value(json_object_get(json_object_get(v, "metadata"), "name"));
        sbuf_addf(&b, "%s%s", i ? "," : "", s ? s : "?");
    }
    if (!b.buf) sbuf_addc(&b, 0);
    return sbuf_take(&b);
}

#endif
