/* kube.c — the kube-apiserver client of kube.h: configuration (kubeconfig contexts,
 * in-cluster, flags), authentication, and requests over libcurl. Each request has its
 * own easy handle, but the handles share one connection cache (and TLS sessions, DNS)
 * through a curl share: a request reuses an idle keep-alive connection to the server
 * instead of a new TCP connection and TLS handshake each time — bind mode makes ~4
 * requests a pod, and on a busy control plane the handshakes were a good part of
 * them. */
#include "extender/kube.h"

#include "base/base.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "engine/context.h"
#include "engine/snapshot.h"

#include <curl/curl.h>
#include <libgen.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

struct ext_kube {
    char *server;                /* no trailing '/' */
    char *token;                 /* inline token (kubeconfig `token`) */
    char *token_file;
    char *ca_file;
    struct curl_blob ca_blob, cert_blob, key_blob;   /* inline *-data, decoded */
    char *cert_file, *key_file;
    bool insecure;
    long timeout_s;
    char *ns;                    /* the context's namespace (kubectl's default -n); NULL: none */
    CURLSH *share;               /* connections, TLS sessions, DNS: shared by every request */
    pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *c, curl_lock_data d, curl_lock_access a, void *arg) {
    (void)c, (void)a;
    pthread_mutex_lock(&((ext_kube *)arg)->share_mu[d]);
}

static void share_unlock(CURL *c, curl_lock_data d, void *arg) {
    (void)c;
    pthread_mutex_unlock(&((ext_kube *)arg)->share_mu[d]);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* ---- configuration ---------------------------------------------------------------------------- */

/* A kubeconfig, a token or a CA bundle: NULL when it cannot be read. Small files;
 * the bound keeps a mistaken path (/dev/zero, a FIFO) from eating memory. */
static char *read_file(const char *path, size_t *len) {
    strbuf sb;
    err e;
    err_clear(&e);
    if (!file_read_all(path, 16u << 20, &sb, &e)) return NULL;
    sbuf_addc(&sb, '\0');
    if (len) *len = sb.len - 1;
    return sbuf_take(&sb);
}

/* Standard base64 (kubeconfig *-data fields); a 30-line decoder rather than a new
 * library dependency for one use. NULL on invalid input. */
static unsigned char *b64_decode(const char *s, size_t *out_len) {
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    unsigned char *out = xmalloc(n / 4 * 3 + 3);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
        const char *p = strchr(tbl, c);
        if (!p || !c) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (uint32_t)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    *out_len = o;
    return out;
}

static bool set_blob(struct curl_blob *b, const char *b64, const char *what, err *e) {
    size_t n;
    unsigned char *d = b64_decode(b64, &n);
    if (!d) return err_set(e, "kubeconfig: %s is not valid base64", what);
    b->data = d;
    b->len = n;
    b->flags = CURL_BLOB_COPY;
    return true;
}

/* A kubeconfig path relative to the kubeconfig file's folder. */
static char *rel_path(const char *kubeconfig, const char *p) {
    if (!p) return NULL;
    if (p[0] == '/') return xstrdup(p);
    char *dup = xstrdup(kubeconfig);
    const char *dir = dirname(dup);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *out = xmalloc(n);
    snprintf(out, n, "%s/%s", dir, p);
    free(dup);
    return out;
}

static const json_t *named(const json_t *list, const char *name, const char *field) {
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *it = json_array_get(list, i);
        const char *n = json_string_value(json_object_get(it, "name"));
        if (n && !strcmp(n, name)) return json_object_get(it, field);
    }
    return NULL;
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static bool load_kubeconfig(ext_kube *k, const char *path, const char *context, err *e) {
    size_t len;
    char *text = read_file(path, &len);
    if (!text) return err_set(e, "kubeconfig %s: cannot read it", path);
    json_t *docs = dra_yaml_parse(text, len, path, e);
    free(text);
    if (!docs) return false;
    const json_t *cfg = json_array_get(docs, 0);
    bool ok = false;
    const char *ctx_name = context ? context : jstr(cfg, "current-context");
    if (!ctx_name || !*ctx_name) {
        err_set(e, "kubeconfig %s: no current-context (use --context)", path);
        goto done;
    }
    const json_t *ctx = named(json_object_get(cfg, "contexts"), ctx_name, "context");
    if (!ctx) {
        err_set(e, "kubeconfig %s: context \"%s\" not found", path, ctx_name);
        goto done;
    }
    const char *cl_name = jstr(ctx, "cluster"), *user_name = jstr(ctx, "user");
    if (jstr(ctx, "namespace") && *jstr(ctx, "namespace")) k->ns = xstrdup(jstr(ctx, "namespace"));
    const json_t *cl = cl_name ? named(json_object_get(cfg, "clusters"), cl_name, "cluster") : NULL;
    if (!cl) {
        err_set(e, "kubeconfig %s: cluster \"%s\" of context \"%s\" not found", path, cl_name ? cl_name : "",
                ctx_name);
        goto done;
    }
    const json_t *user = user_name ? named(json_object_get(cfg, "users"), user_name, "user") : NULL;
    if (!k->server && jstr(cl, "server")) k->server = xstrdup(jstr(cl, "server"));
    if (json_is_true(json_object_get(cl, "insecure-skip-tls-verify"))) k->insecure = true;
    if (!k->ca_file && jstr(cl, "certificate-authority")) k->ca_file = rel_path(path, jstr(cl, "certificate-authority"));
    if (jstr(cl, "certificate-authority-data") &&
        !set_blob(&k->ca_blob, jstr(cl, "certificate-authority-data"), "certificate-authority-data", e))
        goto done;
    if (user) {
        if (json_object_get(user, "exec"))
            return err_set(e, "kubeconfig %s: user \"%s\" uses an exec credential plugin, which dralloc does not run; "
                              "use a token, a token file or a client certificate",
                           path, user_name), json_decref(docs), false;
        if (json_object_get(user, "auth-provider"))
            return err_set(e, "kubeconfig %s: user \"%s\" uses an auth-provider plugin, which dralloc does not run; "
                              "use a token, a token file or a client certificate",
                           path, user_name), json_decref(docs), false;
        if (jstr(user, "token")) k->token = xstrdup(jstr(user, "token"));
        if (!k->token_file && jstr(user, "tokenFile")) k->token_file = rel_path(path, jstr(user, "tokenFile"));
        if (jstr(user, "client-certificate")) k->cert_file = rel_path(path, jstr(user, "client-certificate"));
        if (jstr(user, "client-key")) k->key_file = rel_path(path, jstr(user, "client-key"));
        if (jstr(user, "client-certificate-data") &&
            !set_blob(&k->cert_blob, jstr(user, "client-certificate-data"), "client-certificate-data", e))
            goto done;
        if (jstr(user, "client-key-data") && !set_blob(&k->key_blob, jstr(user, "client-key-data"), "client-key-data", e))
            goto done;
    }
    ok = true;
done:
    json_decref(docs);
    return ok;
}

ext_kube *ext_kube_new(const ext_kube_opts *o, err *e) {
    pthread_once(&curl_once, curl_init);
    ext_kube *k = xcalloc(1, sizeof *k);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&k->share_mu[i], NULL);
    k->share = curl_share_init();
    if (k->share) {
        curl_share_setopt(k->share, CURLSHOPT_LOCKFUNC, share_lock);
        curl_share_setopt(k->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
        curl_share_setopt(k->share, CURLSHOPT_USERDATA, k);
        curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
        curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
        curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    }
    k->timeout_s = o->timeout_s > 0 ? o->timeout_s : 30;
    k->insecure = o->insecure;
    if (o->server) k->server = xstrdup(o->server);
    if (o->token_file) k->token_file = xstrdup(o->token_file);
    if (o->ca_file) k->ca_file = xstrdup(o->ca_file);
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (o->kubeconfig) {
        if (!load_kubeconfig(k, o->kubeconfig, o->context, e)) goto fail;
    } else if (!o->server && host && *host) {
        /* in-cluster: the service account's token and CA, the service's address */
        char url[300];
        snprintf(url, sizeof url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port && *port ? port : "443");
        k->server = xstrdup(url);
        if (!k->token_file) k->token_file = xstrdup(SA_DIR "/token");
        if (!k->ca_file) k->ca_file = xstrdup(SA_DIR "/ca.crt");
        /* kubectl in a pod defaults to the pod's own namespace */
        char *pod_ns = read_file(SA_DIR "/namespace", NULL);
        if (pod_ns) {
            pod_ns[strcspn(pod_ns, "\r\n")] = '\0';
            if (*pod_ns) k->ns = pod_ns;
            else free(pod_ns);
        }
    }
    if (!k->server || !*k->server) {
        err_set(e, "no kube-apiserver: give --kubeconfig, --server, or run in a cluster (KUBERNETES_SERVICE_HOST)");
        goto fail;
    }
    if (strncmp(k->server, "https://", 8) && strncmp(k->server, "http://", 7)) {
        err_set(e, "server %s: want an http:// or https:// URL", k->server);
        goto fail;
    }
    size_t n = strlen(k->server);
    while (n && k->server[n - 1] == '/') k->server[--n] = '\0';
    if (k->token_file) {
        char *t = read_file(k->token_file, NULL);
        if (!t) {
            err_set(e, "token file %s: cannot read it", k->token_file);
            goto fail;
        }
        free(t);
    }
    return k;
fail:
    ext_kube_free(k);
    return NULL;
}

void ext_kube_free(ext_kube *k) {
    if (!k) return;
    if (k->share) curl_share_cleanup(k->share);   /* every request is over: it closes the idle connections */
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&k->share_mu[i]);
    free(k->server);
    free(k->token);
    free(k->token_file);
    free(k->ca_file);
    free(k->cert_file);
    free(k->key_file);
    free(k->ca_blob.data);
    free(k->cert_blob.data);
    free(k->key_blob.data);
    free(k->ns);
    free(k);
}

const char *ext_kube_server(const ext_kube *k) { return k->server; }
const char *ext_kube_namespace(const ext_kube *k) { return k->ns; }

/* ---- requests --------------------------------------------------------------------------------- */

/* The bearer token now: the file is read every time (tokens rotate). */
static char *current_token(const ext_kube *k) {
    if (k->token_file) {
        char *t = read_file(k->token_file, NULL);
        if (t) {
            size_t n = strlen(t);
            while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ')) t[--n] = '\0';
            return t;
        }
    }
    return k->token ? xstrdup(k->token) : NULL;
}

typedef struct xfer {
    CURL *c;
    strbuf body;
    bool (*fn)(void *arg, const char *data, size_t n);
    void *arg;
    bool stopped;
    const _Atomic bool *stop;
    long retry_after_s;
    time_t last_data;
    long idle_s;
} xfer;

static size_t on_body(char *p, size_t sz, size_t nm, void *arg) {
    xfer *x = arg;
    size_t n = sz * nm;
    x->last_data = time(NULL);
    long code = 0;
    curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &code);
    if (x->fn && code == 200) {
        if (!x->fn(x->arg, p, n)) {
            x->stopped = true;
            return 0;   /* aborts the transfer */
        }
        return n;
    }
    sbuf_add(&x->body, p, n);
    return n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *arg) {
    xfer *x = arg;
    size_t n = sz * nm;
    if (n > 12 && !strncasecmp(p, "Retry-After:", 12)) x->retry_after_s = strtol(p + 12, NULL, 10);
    return n;
}

/* libcurl's progress callback, about once a second even when nothing arrives: the
 * stop flag and the stall detector. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    (void)dt, (void)dn, (void)ut, (void)un;
    xfer *x = arg;
    if (x->stop && atomic_load(x->stop)) return 1;
    if (x->idle_s > 0 && time(NULL) - x->last_data > x->idle_s) return 1;
    return 0;
}

/* What to check when TLS fails, in kubeconfig terms. */
static const char *tls_hint(const ext_kube *k, CURLcode rc) {
    switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
        return k->ca_file || k->ca_blob.data
                   ? ": the server's certificate is not signed by the configured certificate-authority"
                   : ": the server's certificate is not trusted; give its CA (certificate-authority(-data), --ca-file)";
    case CURLE_SSL_CERTPROBLEM:
        return ": the client certificate (client-certificate(-data)) cannot be used";
    case CURLE_SSL_CACERT_BADFILE:
        return ": the certificate-authority cannot be read";
    default:
        return "";
    }
}

static CURL *easy(const ext_kube *k, const char *method, const char *path, struct curl_slist **hdrs, const char *token) {
    CURL *c = curl_easy_init();
    if (k->share) curl_easy_setopt(c, CURLOPT_SHARE, k->share);
    size_t n = strlen(k->server) + strlen(path) + 1;
    char *url = xmalloc(n);
    snprintf(url, n, "%s%s", k->server, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    free(url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    if (k->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (k->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
    if (k->ca_blob.data) curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &k->ca_blob);
    if (k->cert_file) curl_easy_setopt(c, CURLOPT_SSLCERT, k->cert_file);
    if (k->key_file) curl_easy_setopt(c, CURLOPT_SSLKEY, k->key_file);
    if (k->cert_blob.data) curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &k->cert_blob);
    if (k->key_blob.data) curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &k->key_blob);
    *hdrs = curl_slist_append(*hdrs, "Accept: application/json");
    *hdrs = curl_slist_append(*hdrs, "User-Agent: dralloc");
    if (token) {
        size_t tn = strlen(token) + 32;
        char *h = xmalloc(tn);
        snprintf(h, tn, "Authorization: Bearer %s", token);
        *hdrs = curl_slist_append(*hdrs, h);
        free(h);
    }
    return c;
}

/* One attempt; *status 401 makes the caller retry once with a fresh token. */
static bool attempt(ext_kube *k, const char *method, const char *path, const char *body, const char *ctype, xfer *x,
                    long timeout_s, long *status, err *e) {
    char *token = current_token(k);
    struct curl_slist *hdrs = NULL;
    CURL *c = easy(k, method, path, &hdrs, token);
    x->c = c;
    free(token);
    if (body) {
        char h[160];
        snprintf(h, sizeof h, "Content-Type: %s", ctype ? ctype : "application/json");
        hdrs = curl_slist_append(hdrs, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    if (timeout_s > 0) curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    x->last_data = time(NULL);
    x->retry_after_s = -1;
    char detail[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
    CURLcode rc = curl_easy_perform(c);
    *status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(c);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK && !x->stopped && *status == 0)
        return err_set(e, "%s %s%s: %s%s%s%s%s", method, k->server, path, curl_easy_strerror(rc), detail[0] ? " (" : "",
                       detail, detail[0] ? ")" : "", tls_hint(k, rc));
    return true;
}

bool ext_kube_request(ext_kube *k, const char *method, const char *path, const char *body, const char *content_type,
                      ext_kube_resp *out, err *e) {
    memset(out, 0, sizeof *out);
    for (int tries = 0; tries < 2; tries++) {
        xfer x = {0};
        sbuf_init(&x.body);
        long status;
        bool ok = attempt(k, method, path, body, content_type, &x, k->timeout_s, &status, e);
        if (!ok) {
            sbuf_free(&x.body);
            return false;
        }
        if (status == 401 && tries == 0) {   /* the token may have rotated under us */
            sbuf_free(&x.body);
            continue;
        }
        sbuf_add(&x.body, "", 1);
        out->status = status;
        out->body = x.body.buf;
        out->len = x.body.len - 1;
        out->retry_after_s = x.retry_after_s;
        return true;
    }
    return false;
}

bool ext_kube_stream(ext_kube *k, const char *path, bool (*fn)(void *arg, const char *data, size_t n), void *arg,
                     const _Atomic bool *stop, long idle_s, long *status, long *retry_after_s, err *e) {
    for (int tries = 0; tries < 2; tries++) {
        xfer x = {.fn = fn, .arg = arg, .stop = stop, .idle_s = idle_s};
        sbuf_init(&x.body);
        bool ok = attempt(k, "GET", path, NULL, NULL, &x, 0, status, e);
        sbuf_free(&x.body);   /* a non-200 answer's Status: the status code says enough */
        if (!ok) return false;
        if (retry_after_s) *retry_after_s = x.retry_after_s;
        if (*status == 401 && tries == 0) continue;
        return true;
    }
    return true;
}

/* ---- one-shot snapshot ------------------------------------------------------------------ */

/* resource.k8s.io's versions, newest first: the order a kind is looked for in. */
static const char *const kube__dra_versions[] = {"v1", "v1beta2", "v1beta1", "v1alpha3"};
enum { KUBE__NVERSIONS = sizeof kube__dra_versions / sizeof kube__dra_versions[0] };

/* What the snapshot reads: group "" is the core API (always v1). */
typedef struct kube__kind {
    const char *kind, *group, *resource, *missing;   /* missing: what a kind not served means */
} kube__kind;

static const kube__kind kube__kinds[] = {
    {"DeviceClass", "resource.k8s.io", "deviceclasses", "no device can be allocated"},
    {"ResourceSlice", "resource.k8s.io", "resourceslices", "no devices are known"},
    {"ResourceClaim", "resource.k8s.io", "resourceclaims", "no device counts as allocated"},
    {"ResourceClaimTemplate", "resource.k8s.io", "resourceclaimtemplates", "pods' claim templates are unknown"},
    {"DeviceTaintRule", "resource.k8s.io", "devicetaintrules",
     "devices are read without the taints such rules would put on them"},
    {"Node", "", "nodes", NULL},
    {"Pod", "", "pods", NULL},
};
enum { KUBE__NKINDS = sizeof kube__kinds / sizeof kube__kinds[0] };

static void kube__note(json_t *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kube__note(json_t *notes, const char *fmt, ...) {
    if (!notes) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(notes, json_string(buf));
}

/* GET path as JSON: the document on 200, NULL otherwise (*status says which). */
static json_t *kube__get_json(ext_kube *k, const char *path, long *status, err *e) {
    ext_kube_resp r;
    *status = 0;
    if (!ext_kube_request(k, "GET", path, NULL, NULL, &r, e)) return NULL;
    *status = r.status;
    json_t *doc = r.status == 200 ? dra_json_parse(r.body, r.len, 0, NULL) : NULL;
    free(r.body);
    return doc;
}

/* Discovery: for each resource.k8s.io kind, the newest version serving it (into
 * version[], NULL: none). False when discovery itself could not be read: the caller
 * then reads v1, as before discovery. */
static bool kube__discover(ext_kube *k, const char *version[KUBE__NKINDS], char *why, size_t whylen) {
    err e;
    err_clear(&e);
    long status;
    json_t *group = kube__get_json(k, "/apis/resource.k8s.io", &status, &e);
    if (!group) {
        if (status == 404) return true;   /* the group is not served at all: every version[] NULL */
        if (status) snprintf(why, whylen, "HTTP %ld", status);
        else snprintf(why, whylen, "%.200s", e.msg);
        return false;
    }
    bool served[KUBE__NVERSIONS] = {false};
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(group, "versions"), i, v) {
        const char *name = json_string_value(json_object_get(v, "version"));
        for (size_t n = 0; name && n < KUBE__NVERSIONS; n++)
            if (!strcmp(name, kube__dra_versions[n])) served[n] = true;
    }
    json_decref(group);
    for (size_t n = 0; n < KUBE__NVERSIONS; n++) {
        if (!served[n]) continue;
        char path[128];
        snprintf(path, sizeof path, "/apis/resource.k8s.io/%s", kube__dra_versions[n]);
        json_t *list = kube__get_json(k, path, &status, &e);
        json_t *r;
        json_array_foreach(json_object_get(list, "resources"), i, r) {
            const char *name = json_string_value(json_object_get(r, "name"));
            for (size_t x = 0; name && x < KUBE__NKINDS; x++)
                if (!version[x] && !strcmp(kube__kinds[x].resource, name) && *kube__kinds[x].group)
                    version[x] = kube__dra_versions[n];
        }
        json_decref(list);
    }
    return true;
}

json_t *ext_kube_snapshot(ext_kube *k, json_t *notes, err *e) {
    const char *version[KUBE__NKINDS] = {NULL};
    char why[256] = "";
    bool discovered = kube__discover(k, version, why, sizeof why);
    if (!discovered) {
        kube__note(notes, "could not read the API server's discovery of resource.k8s.io (%s): reading resource.k8s.io/v1", why);
        for (size_t x = 0; x < KUBE__NKINDS; x++)
            if (*kube__kinds[x].group) version[x] = "v1";
    }
    json_t *all = json_array();
    for (size_t i = 0; i < KUBE__NKINDS; i++) {
        const kube__kind *kd = &kube__kinds[i];
        char base[160], api_version[64];
        if (!*kd->group) {
            snprintf(base, sizeof base, "/api/v1/%s", kd->resource);
            snprintf(api_version, sizeof api_version, "v1");
        } else if (!version[i]) {
            kube__note(notes, "%s: not served by this API server at any resource.k8s.io version (%s); %s", kd->kind,
                       "v1, v1beta2, v1beta1, v1alpha3", kd->missing);
            continue;
        } else {
            snprintf(base, sizeof base, "/apis/%s/%s/%s", kd->group, version[i], kd->resource);
            snprintf(api_version, sizeof api_version, "%s/%s", kd->group, version[i]);
            if (strcmp(version[i], "v1"))
                kube__note(notes, "%s: read at %s, the newest version this API server serves it at", kd->kind, api_version);
        }
        char *cont = NULL;
        for (;;) {
            char path[4096];
            int n = snprintf(path, sizeof path, "%s?limit=500", base);
            if (cont) {
                /* continue tokens are base64: escape what a query cannot hold */
                CURL *c = curl_easy_init();
                char *esc = curl_easy_escape(c, cont, 0);
                snprintf(path + n, sizeof path - (size_t)n, "&continue=%s", esc ? esc : "");
                curl_free(esc);
                curl_easy_cleanup(c);
            }
            ext_kube_resp r;
            if (!ext_kube_request(k, "GET", path, NULL, NULL, &r, e)) goto fail;
            if (r.status == 404) {
                free(r.body);
                if (*kd->group && discovered)
                    kube__note(notes, "%s: listed by discovery at %s but the list answered 404; %s", kd->kind, api_version,
                               kd->missing);
                break;
            }
            json_t *doc = r.status == 200 ? dra_json_parse(r.body, r.len, 0, NULL) : NULL;
            free(r.body);
            if (!doc) {
                err_set(e, "list %s: HTTP %ld", base, r.status);
                goto fail;
            }
            size_t j;
            json_t *it;
            json_array_foreach(json_object_get(doc, "items"), j, it) {
                /* a list's items carry neither (the List has them): each item as its own object */
                if (!json_object_get(it, "kind")) json_object_set_new(it, "kind", json_string(kd->kind));
                if (!json_object_get(it, "apiVersion")) json_object_set_new(it, "apiVersion", json_string(api_version));
                json_array_append(all, it);
            }
            const char *next = json_string_value(json_object_get(json_object_get(doc, "metadata"), "continue"));
            free(cont);
            cont = next && *next ? xstrdup(next) : NULL;
            json_decref(doc);
            if (!cont) break;
        }
        continue;
    fail:
        free(cont);
        json_decref(all);
        return NULL;
    }
    return all;
}
