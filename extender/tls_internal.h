/* tls_internal.h — private to extender/tls.c and extender/tls_peer.c: the state of the
 * server's TLS (tls.h) that both halves read. tls.c loads and rotates the credentials;
 * tls_peer.c watches each connection's handshake (the version the client offers, its
 * certificate, the allowed names) and logs why one was refused. */
#ifndef DRA_EXTENDER_TLS_INTERNAL_H
#define DRA_EXTENDER_TLS_INTERNAL_H

#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "extender/tls.h"

typedef struct ext__tls_cred {
    gnutls_certificate_credentials_t c;
    unsigned refs;                  /* connections using it (under ext_tls.mu) */
    int64_t not_after;              /* of its serving certificate (Unix seconds; 0: unknown) */
    struct ext__tls_cred *next;     /* retired list */
} ext__tls_cred;

/* What a file looked like when it was loaded: a rotation changes one of these. */
typedef struct ext__tls_stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} ext__tls_stamp;

/* One TLS connection, from before its handshake to its close (the reference
 * ext_tls_session_begin returns). GnuTLS's hooks get only the session (its user
 * pointer is libmicrohttpd's): they find this by it, in tls_peer.c's registry. */
typedef struct ext__tls_conn {
    struct ext__tls_conn *prev, *next;   /* the registry, under its lock */
    ext_tls *t;
    gnutls_session_t s;
    ext__tls_cred *cred;
    char peer[64];                       /* "ADDR:PORT" */
    unsigned offered;                    /* highest version in its ClientHello (0x0303: TLS 1.2); 0: none yet */
    bool cert_msg, no_cert;              /* its Certificate message came; it was empty */
    bool done;                           /* its Finished came: the handshake succeeded */
    bool verified;                       /* its certificate verified and its name allowed */
    int cause;                           /* ext_tls_cause the verify function found; -1: none */
    char detail[200];                    /* what the log line adds to the cause */
} ext__tls_conn;

enum { EXT__TLS_CERT, EXT__TLS_KEY, EXT__TLS_CA, EXT__TLS_NFILES };

struct ext_tls {
    char *file[EXT__TLS_NFILES];   /* CA NULL without client certificates */
    char *cert_pem, *key_pem;      /* as loaded at start */
    bool quiet;
    unsigned min_version;          /* 0x0303 (TLS 1.2) or 0x0304 (TLS 1.3) */
    const char *min_flag;          /* its --tls-min-version spelling, for the log */
    char priorities[96];           /* GnuTLS priority string offering min_version and up */
    char **allowed;                /* --client-allowed-names; NULL: any name */
    size_t nallowed;
    pthread_mutex_t mu;            /* cur, retired, refs, seen, checked_ns */
    ext__tls_cred *cur, *retired;
    ext__tls_stamp seen[EXT__TLS_NFILES];     /* of the files cur was loaded from */
    ext__tls_stamp failed[EXT__TLS_NFILES];   /* of the last files that did not load (logged once) */
    uint64_t checked_ns;
    _Atomic uint64_t reloads, reload_errors;
    _Atomic int64_t not_after;     /* cur's */
    _Atomic uint64_t refused[EXT_TLS_NCAUSES];
    pthread_mutex_t log_mu;        /* logged */
    struct {
        uint64_t at_ns;            /* the cause's last line; 0: never */
        unsigned suppressed;       /* refusals since, not shown */
    } logged[EXT_TLS_NCAUSES];
};

void ext__tls_log(const ext_tls *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t ext__tls_mono_ns(void);
/* tls_peer.c: the hooks on a new session (verify function, handshake hook), tc
 * registered; a closed connection's refusal logged, tc unregistered; the counts not
 * shown yet, at the end. */
void ext__tls_watch(ext_tls *t, ext__tls_conn *tc);
void ext__tls_closed(ext_tls *t, ext__tls_conn *tc);
void ext__tls_flush_log(ext_tls *t);

#endif
