/* tls.c — GnuTLS credentials for the server (tls.h): loaded from files, looked at
 * again when a connection opens (at most once a second), swapped when they changed.
 *
 * libmicrohttpd keeps one credentials object for its whole life; each connection's
 * session is given ours instead (gnutls_credentials_set on the session before its
 * handshake), which is what lets a rotation take effect without a restart. A session
 * uses its credentials until it closes, so each credentials object counts the
 * connections using it; one that is neither current nor used is freed at the next
 * reload or at the end. */
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
#include "base/strbuf.h"

#define CHECK_EVERY_NS 1000000000ull

typedef struct cred {
    gnutls_certificate_credentials_t c;
    unsigned refs;               /* connections using it (under ext_tls.mu) */
    struct cred *next;           /* retired list */
} cred;

/* What a file looked like when it was loaded: a rotation changes one of these. */
typedef struct stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} stamp;

enum { F_CERT, F_KEY, F_CA, NFILES };
static const char *const FLAG[NFILES] = {"--tls-cert-file", "--tls-private-key-file", "--client-ca-file"};

struct ext_tls {
    char *file[NFILES];          /* F_CA NULL without client certificates */
    char *cert_pem, *key_pem;    /* as loaded at start */
    bool quiet;
    pthread_mutex_t mu;          /* cur, retired, refs, seen, checked_ns */
    cred *cur, *retired;
    stamp seen[NFILES];          /* of the files cur was loaded from */
    stamp failed[NFILES];        /* of the last files that did not load (logged once) */
    uint64_t checked_ns;
    _Atomic uint64_t reloads, reload_errors;
};

/* Client certificates must be usable for client authentication (when they say what
 * they are for at all). */
static const gnutls_typed_vdata_st CLIENT_PURPOSE[] = {
    {.type = GNUTLS_DT_KEY_PURPOSE_OID, .data = (void *)GNUTLS_KP_TLS_WWW_CLIENT},
};

static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

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

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    strbuf b;
    sbuf_init(&b);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sbuf_add(&b, buf, n);
    fclose(f);
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

static void tlog(const ext_tls *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tlog(const ext_tls *t, const char *fmt, ...) {
    if (t->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("dralloc serve: tls: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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
    t->checked_ns = mono_ns();
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
    free_unused_retired(t);
    assert(!t->retired && (!t->cur || !t->cur->refs));   /* the servers stopped first */
    if (t->cur) {
        gnutls_certificate_free_credentials(t->cur->c);
        free(t->cur);
    }
    pthread_mutex_destroy(&t->mu);
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

/* Under t->mu: when a second has passed since the last look and a file changed, new
 * credentials become current. A rotation writes the certificate and the key one
 * after the other: a pair that does not load yet is tried again at the next look
 * (the stamps are kept only once it loads), logged once per change seen. */
static void maybe_reload(ext_tls *t) {
    uint64_t now = mono_ns();
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
            tlog(t, "the files changed but do not load (%s); still serving the previous certificate", e.msg);
            memcpy(t->failed, now_st, sizeof t->failed);
        }
        return;
    }
    memcpy(t->seen, now_st, sizeof t->seen);
    t->cur->next = t->retired;
    t->retired = t->cur;
    t->cur = c;
    free_unused_retired(t);
    atomic_fetch_add(&t->reloads, 1);
    tlog(t, "loaded the changed %s / %s%s%s", t->file[F_CERT], t->file[F_KEY], t->file[F_CA] ? " / " : "",
         t->file[F_CA] ? t->file[F_CA] : "");
}

void *ext_tls_session_begin(ext_tls *t, void *session) {
    gnutls_session_t s = session;
    pthread_mutex_lock(&t->mu);
    maybe_reload(t);
    cred *c = t->cur;
    c->refs++;
    pthread_mutex_unlock(&t->mu);
    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, c->c);
    if (t->file[F_CA]) {
        /* no certificate: the handshake fails; one that does not verify against the
         * CA list of c (or is not for client authentication): it fails too */
        gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
        gnutls_session_set_verify_cert2(s, (gnutls_typed_vdata_st *)CLIENT_PURPOSE, ARRAY_SIZE(CLIENT_PURPOSE), 0);
    }
    return c;
}

void ext_tls_session_end(ext_tls *t, void *ref) {
    cred *c = ref;
    if (!c) return;
    pthread_mutex_lock(&t->mu);
    assert(c->refs > 0);
    c->refs--;
    pthread_mutex_unlock(&t->mu);
}

bool ext_tls_session_verified(const ext_tls *t, void *session) {
    if (!t->file[F_CA]) return true;
    return session && gnutls_session_get_verify_cert_status((gnutls_session_t)session) == 0;
}
