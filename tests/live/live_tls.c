/* live_tls.c — the kube-apiserver client over https with client certificates
 * (extender/kube.c), against the fake served with TLS and a trusted CA (libmicrohttpd
 * with GnuTLS; every request must present a client certificate that CA signed, as
 * the kube-apiserver's x509 authenticator wants). A CA, the server's certificate
 * (SAN IP:127.0.0.1) and a client certificate are made with the openssl CLI in a
 * temporary folder, and kubeconfigs carry them inline:
 *   - certificate-authority-data + client-certificate-data + client-key-data: the
 *     cache lists and turns ready;
 *   - a certificate-authority-data of another CA: never ready, and the kind's error
 *     says the server's certificate is not signed by the configured CA;
 *   - no client certificate: never ready, the error says 401 Unauthorized. */
#include "tests/live/live.h"

#include "engine/engine.h"
#include "extender/watch.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *dir, const char *file) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, fp);
    s[got] = '\0';
    fclose(fp);
    return s;
}

static char *b64(const char *s) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    char *out = malloc(n / 3 * 4 + 8);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16 | (i + 1 < n ? (unsigned char)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? (unsigned char)s[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static void kubeconfig(const char *path, int port, const char *ca, const char *cert, const char *key) {
    FILE *fp = fopen(path, "w");
    char *ca64 = b64(ca);
    fprintf(fp,
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n"
            "    server: https://127.0.0.1:%d\n    certificate-authority-data: %s\ncontexts:\n- name: fake\n"
            "  context:\n    cluster: fake\n    user: u\nusers:\n- name: u\n  user:",
            port, ca64);
    if (cert) {
        char *c64 = b64(cert), *k64 = b64(key);
        fprintf(fp, "\n    client-certificate-data: %s\n    client-key-data: %s\n", c64, k64);
        free(c64);
        free(k64);
    } else {
        fprintf(fp, " {}\n");
    }
    free(ca64);
    fclose(fp);
}

typedef struct probe {
    ext_watch *w;
    dra_store *st;
    const char *want;    /* in a kind's lastError */
} probe;

static bool listed_node(void *arg) {
    probe *p = arg;
    dra_snapshot *s = dra_store_acquire(p->st);
    bool ok = ext_watch_ready(p->w) && s && dra_snapshot_count(s, "Node") == 1;
    dra_snapshot_release(s);
    return ok;
}

static bool error_says(void *arg) {
    probe *p = arg;
    json_t *st = ext_watch_status_json(p->w);
    const char *e = json_string_value(json_object_get(json_object_get(st, "Node"), "lastError"));
    bool ok = e && strstr(e, p->want);
    json_decref(st);
    return ok;
}

/* One kubeconfig: the watch's verdict. want_err NULL: ready; else never ready and
 * the Node kind's lastError contains want_err. */
static void try_config(const char *path, const char *what, const char *want_err) {
    err e;
    err_clear(&e);
    ext_kube_opts ko = {.kubeconfig = path};
    ext_kube *k = ext_kube_new(&ko, &e);
    CHECK(k, "tls %s: %s", what, e.msg);
    if (!k) return;
    dra_features feat;
    dra_features_default(&feat);
    dra_store *st = dra_store_new(&feat);
    ext_watch_opts wo = {.max_staleness_s = 1, .idle_s = 2, .watch_timeout_s = 4, .backoff_max_s = 0.3,
                         .quiet = live_quiet()};
    ext_watch *w = ext_watch_start(k, st, &wo);
    probe p = {w, st, want_err};
    if (!want_err) {
        CHECK(live_wait(10, listed_node, &p), "tls %s: not ready over https with a client certificate", what);
    } else {
        bool said = live_wait(10, error_says, &p);
        json_t *sj = ext_watch_status_json(w);
        char *txt = json_dumps(json_object_get(sj, "Node"), JSON_COMPACT);
        CHECK(said, "tls %s: want an error saying \"%s\", the Node watch says %s", what, want_err, txt);
        CHECK(!ext_watch_ready(w), "tls %s: ready, but it should not be", what);
        free(txt);
        json_decref(sj);
    }
    ext_watch_stop(w);
    dra_store_free(st);
    ext_kube_free(k);
}

void live_tls(void) {
    if (system("openssl version >/dev/null 2>&1") != 0) {
        CHECK(false, "tls: the openssl CLI is missing (scripts/deps.sh installs it)");
        return;
    }
    char dir[] = "/tmp/dralloc-tls-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(false, "tls: mkdtemp");
        return;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "(set -e; cd %s; K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';"
             "openssl req -x509 $K -keyout ca.key -out ca.crt -days 2 -subj /CN=fake-ca;"
             "openssl req -x509 $K -keyout other.key -out other.crt -days 2 -subj /CN=other-ca;"
             "openssl req $K -keyout server.key -out server.csr -subj /CN=kube-apiserver;"
             "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' >server.ext;"
             "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext "
             "-out server.crt;"
             "openssl req $K -keyout client.key -out client.csr -subj /O=system:masters/CN=dralloc;"
             "printf 'extendedKeyUsage=clientAuth\\n' >client.ext;"
             "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext "
             "-out client.crt) >/dev/null 2>&1",
             dir);
    CHECK(system(cmd) == 0, "tls: openssl could not make the certificates");
    char *ca = slurp(dir, "ca.crt"), *other = slurp(dir, "other.crt"), *skey = slurp(dir, "server.key"),
         *scert = slurp(dir, "server.crt"), *ckey = slurp(dir, "client.key"), *ccert = slurp(dir, "client.crt");
    if (ca && other && skey && scert && ckey && ccert) {
        fake_tls tls = {.key_pem = skey, .cert_pem = scert, .trust_pem = ca};
        fake_api *f = fake_start_tls(&tls);
        fake_put(f, "nodes", json_pack("{s:{s:s}}", "metadata", "name", "tls-node"));
        char path[600];
        snprintf(path, sizeof path, "%s/kubeconfig", dir);
        kubeconfig(path, fake_port(f), ca, ccert, ckey);
        try_config(path, "client certificate", NULL);
        kubeconfig(path, fake_port(f), other, ccert, ckey);
        try_config(path, "another CA", "not signed by the configured certificate-authority");
        kubeconfig(path, fake_port(f), ca, NULL, NULL);
        try_config(path, "no client certificate", "401");
        fake_stop(f);
    }
    free(ca);
    free(other);
    free(skey);
    free(scert);
    free(ckey);
    free(ccert);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "live_test: could not remove %s\n", dir);
}
