/* tls.c — GnuTLS credentials for the server (tls.h): loaded from files, looked at
 * again when a connection opens (at most once a second), swapped when they changed.
 *
 * libmicrohttpd keeps one credentials object for its whole life; each connection's
 * session is given ours instead (gnutls_credentials_set on the session before its
 * handshake), which is what lets a rotation take effect without a restart. A session
 * uses its credentials until it closes, so each credentials object counts the
 * connections using it; one that is neither current nor used is freed at the next
 * reload or at the end. The versions offered are libmicrohttpd's priority string
 * (ext_tls_priorities); what each handshake does is watched in tls_peer.c. */
#include "extender/tls.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <assert.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/base.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "extender/tls_internal.h"

#define CHECK_EVERY_NS 1000000000ull
#define EXPIRY_WARN_S (30 * 86400)   /* a month's notice before the serving certificate expires */

typedef ext__tls_cred cred;
typedef ext__tls_stamp stamp;
enum { F_CERT = EXT__TLS_CERT, F_KEY = EXT__TLS_KEY, F_CA = EXT__TLS_CA, NFILES = EXT__TLS_NFILES };
static const char *const FLAG[NFILES] = {"--tls-cert-file", "--tls-private-key-file", "--client-ca-file"};

uint64_t ext__tls_mono_ns(void) { return monotonic_ns(); }

static bool stamp_of(const char *path, stamp *s) {
    struct stat st;
    memset(s, 0, sizeof *s);
    if (!path) return true;
    if (stat(path, &st)) return false;
    *s = (stamp){.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim};
    return true;
}

static bool stamp_eq(const stamp *a, const stamp *b) {
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* A PEM file (certificate, key, CA): NULL when it cannot be read; bounded as every
 * named file is (base/file.h). */
static char *slurp(const char *path) {
    strbuf b;
    err e;
    err_clear(&e);
    if (!file_read_all(path, 16u << 20, &b, &e)) return NULL;
    sbuf_addc(&b, '\0');
    return sbuf_take(&b);
}

/* New credentials from the files; NULL with e set. */
static cred *load(const ext_tls *t, err *e) {
    cred *c = xcalloc(1, sizeof *c);
    if (gnutls_certificate_allocate_credentials(&c->c) < 0) {
        free(c);
        err_set(e, "tls: cannot allocate credentials");
        return NULL;
    }
    int rc = gnutls_certificate_set_x509_key_file(c->c, t->file[F_CERT], t->file[F_KEY], GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        err_set(e, "%s %s, %s %s: %s", FLAG[F_CERT], t->file[F_CERT], FLAG[F_KEY], t->file[F_KEY], gnutls_strerror(rc));
        goto fail;
    }
    /* the serving certificate's notAfter (the first of the chain), for the warning and
     * the metric */
    gnutls_datum_t der;
    gnutls_x509_crt_t crt;
    if (gnutls_certificate_get_crt_raw(c->c, 0, 0, &der) >= 0 && gnutls_x509_crt_init(&crt) >= 0) {
        if (gnutls_x509_crt_import(crt, &der, GNUTLS_X509_FMT_DER) >= 0)
            c->not_after = (int64_t)gnutls_x509_crt_get_expiration_time(crt);
        gnutls_x509_crt_deinit(crt);
    }
    if (t->file[F_CA]) {
        rc = gnutls_certificate_set_x509_trust_file(c->c, t->file[F_CA], GNUTLS_X509_FMT_PEM);
        if (rc <= 0) {
            err_set(e, "%s %s: %s", FLAG[F_CA], t->file[F_CA], rc < 0 ? gnutls_strerror(rc) : "no PEM certificate in it");
            goto fail;
        }
    }
    return c;
fail:
    gnutls_certificate_free_credentials(c->c);
    free(c);
    return NULL;
}

void ext__tls_log(const ext_tls *t, const char *fmt, ...) {
    if (t->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("dralloc serve: tls: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Under t->mu or before any connection: c is now the current credentials. Within a
 * month of its notAfter, or past it, a WARNING (at start and at every reload: a renewal
 * that did not happen is seen again with each rotation of the other files). */
static void took_effect(ext_tls *t, const cred *c) {
    atomic_store(&t->not_after, c->not_after);
    if (!c->not_after) return;
    int64_t left = c->not_after - (int64_t)time(NULL);
    if (left >= EXPIRY_WARN_S) return;
    time_t na = (time_t)c->not_after;
    struct tm tm;
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&na, &tm));
    if (t->quiet) return;
    if (left < 0)
        fprintf(stderr, "dralloc serve: WARNING: tls: the serving certificate %s expired %.1f days ago (notAfter %s): "
                        "clients refuse it; renew it (it is loaded again when the file changes)\n",
                t->file[F_CERT], (double)-left / 86400, when);
    else
        fprintf(stderr, "dralloc serve: WARNING: tls: the serving certificate %s expires in %.1f days (notAfter %s): "
                        "renew it (it is loaded again when the file changes)\n",
                t->file[F_CERT], (double)left / 86400, when);
}

/* "VersionTLS12" / "VersionTLS13" as kube-apiserver's --tls-min-version spells them. */
static bool parse_min_version(ext_tls *t, const char *v, err *e) {
    if (!v || !strcmp(v, "VersionTLS12")) {
        t->min_version = 0x0303, t->min_flag = "VersionTLS12";
        snprintf(t->priorities, sizeof t->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
        return true;
    }
    if (!strcmp(v, "VersionTLS13")) {
        t->min_version = 0x0304, t->min_flag = "VersionTLS13";
        snprintf(t->priorities, sizeof t->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
        return true;
    }
    return err_set(e, "--tls-min-version %s: want VersionTLS12 or VersionTLS13 (TLS 1.0 and 1.1 are not offered)", v);
}

/* "a,b,,c" into t->allowed (empty names skipped). */
static bool parse_allowed(ext_tls *t, const char *list, err *e) {
    if (!list || !*list) return true;
    if (!t->file[F_CA]) return err_set(e, "--client-allowed-names needs --client-ca-file (the names are those of "
                                          "verified client certificates)");
    size_t n = 1;
    for (const char *p = list; *p; p++) n += *p == ',';
    t->allowed = xcalloc(n, sizeof *t->allowed);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len) t->allowed[t->nallowed++] = xstrndup(p, len);
        p += len + (p[len] == ',');
    }
    if (!t->nallowed) return err_set(e, "--client-allowed-names %s: no name in it", list);
    return true;
}

ext_tls *ext_tls_new(const ext_tls_opts *o, err *e) {
    if (!o->cert_file || !o->key_file) {
        err_set(e, "--tls-cert-file and --tls-private-key-file go together");
        return NULL;
    }
    ext_tls *t = xcalloc(1, sizeof *t);
    t->file[F_CERT] = xstrdup(o->cert_file);
    t->file[F_KEY] = xstrdup(o->key_file);
    t->file[F_CA] = o->client_ca_file ? xstrdup(o->client_ca_file) : NULL;
    t->quiet = o->quiet;
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->log_mu, NULL);
    if (!parse_min_version(t, o->min_version, e) || !parse_allowed(t, o->allowed_names, e)) goto fail;
    for (int i = 0; i < NFILES; i++)
        if (!stamp_of(t->file[i], &t->seen[i])) {
            err_set(e, "%s %s: cannot read it", FLAG[i], t->file[i]);
            goto fail;
        }
    t->cert_pem = slurp(t->file[F_CERT]);
    t->key_pem = slurp(t->file[F_KEY]);
    if (!t->cert_pem || !t->key_pem) {
        err_set(e, "%s %s: cannot read it", FLAG[t->cert_pem ? F_KEY : F_CERT], t->file[t->cert_pem ? F_KEY : F_CERT]);
        goto fail;
    }
    t->cur = load(t, e);
    if (!t->cur) goto fail;
    took_effect(t, t->cur);
    t->checked_ns = ext__tls_mono_ns();
    return t;
fail:
    ext_tls_free(t);
    return NULL;
}

static void free_unused_retired(ext_tls *t) {
    for (cred **p = &t->retired; *p;) {
        cred *c = *p;
        if (c->refs) {
            p = &c->next;
            continue;
        }
        *p = c->next;
        gnutls_certificate_free_credentials(c->c);
        free(c);
    }
}

void ext_tls_free(ext_tls *t) {
    if (!t) return;
    ext__tls_flush_log(t);
    free_unused_retired(t);
    assert(!t->retired && (!t->cur || !t->cur->refs));   /* the servers stopped first */
    if (t->cur) {
        gnutls_certificate_free_credentials(t->cur->c);
        free(t->cur);
    }
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->log_mu);
    for (size_t i = 0; i < t->nallowed; i++) free(t->allowed[i]);
    free(t->allowed);
    for (int i = 0; i < NFILES; i++) free(t->file[i]);
    free(t->cert_pem);
    free(t->key_pem);
    free(t);
}

bool ext_tls_verifies_clients(const ext_tls *t) { return t->file[F_CA] != NULL; }
const char *ext_tls_cert_pem(const ext_tls *t) { return t->cert_pem; }
const char *ext_tls_key_pem(const ext_tls *t) { return t->key_pem; }
uint64_t ext_tls_reloads(const ext_tls *t) { return atomic_load(&t->reloads); }
uint64_t ext_tls_reload_errors(const ext_tls *t) { return atomic_load(&t->reload_errors); }
const char *ext_tls_priorities(const ext_tls *t) { return t->priorities; }
int64_t ext_tls_expiry_seconds(const ext_tls *t) { return atomic_load(&t->not_after) - (int64_t)time(NULL); }

/* Under t->mu: when a second has passed since the last look and a file changed, new
 * credentials become current. A rotation writes the certificate and the key one
 * after the other: a pair that does not load yet is tried again at the next look
 * (the stamps are kept only once it loads), logged once per change seen. */
static void maybe_reload(ext_tls *t) {
    uint64_t now = ext__tls_mono_ns();
    if (now - t->checked_ns < CHECK_EVERY_NS) return;
    t->checked_ns = now;
    stamp now_st[NFILES];
    bool changed = false;
    for (int i = 0; i < NFILES; i++) {
        if (!stamp_of(t->file[i], &now_st[i])) return;   /* mid-swap: look again later */
        changed |= !stamp_eq(&now_st[i], &t->seen[i]);
    }
    if (!changed) return;
    err e;
    err_clear(&e);
    cred *c = load(t, &e);
    if (!c) {
        /* once per new state of the files, not once a second */
        bool again = true;
        for (int i = 0; i < NFILES; i++) again &= stamp_eq(&t->failed[i], &now_st[i]);
        if (!again) {
            atomic_fetch_add(&t->reload_errors, 1);
            ext__tls_log(t, "the files changed but do not load (%s); still serving the previous certificate", e.msg);
            memcpy(t->failed, now_st, sizeof t->failed);
        }
        return;
    }
    memcpy(t->seen, now_st, sizeof t->seen);
    t->cur->next = t->retired;
    t->retired = t->cur;
    t->cur = c;
    free_unused_retired(t);
    took_effect(t, c);
    atomic_fetch_add(&t->reloads, 1);
    ext__tls_log(t, "loaded the changed %s / %s%s%s", t->file[F_CERT], t->file[F_KEY], t->file[F_CA] ? " / " : "",
         t->file[F_CA] ? t->file[F_CA] : "");
}

void *ext_tls_session_begin(ext_tls *t, void *session, const char *peer) {
    ext__tls_conn *tc = xcalloc(1, sizeof *tc);
    tc->s = session;
    tc->cause = -1;
    snprintf(tc->peer, sizeof tc->peer, "%s", peer ? peer : "?");
    tc->t = t;
    pthread_mutex_lock(&t->mu);
    maybe_reload(t);
    tc->cred = t->cur;
    tc->cred->refs++;
    pthread_mutex_unlock(&t->mu);
    gnutls_credentials_set(tc->s, GNUTLS_CRD_CERTIFICATE, tc->cred->c);
    ext__tls_watch(t, tc);
    return tc;
}

void ext_tls_session_end(ext_tls *t, void *ref) {
    ext__tls_conn *tc = ref;
    if (!tc) return;
    ext__tls_closed(t, tc);   /* a refused handshake is logged (the session is still there) */
    pthread_mutex_lock(&t->mu);
    assert(tc->cred->refs > 0);
    tc->cred->refs--;
    pthread_mutex_unlock(&t->mu);
    free(tc);
}

bool ext_tls_session_verified(const ext_tls *t, void *ref) {
    if (!t->file[F_CA]) return true;
    const ext__tls_conn *tc = ref;
    return tc && tc->verified;
}
