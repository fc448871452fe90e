/* tls.h — the server's TLS (--tls-cert-file, --tls-private-key-file, --client-ca-file,
 * kube components' flag names): GnuTLS credentials for libmicrohttpd's https.
 *
 * Certificates are files that rotate (cert-manager renews them in place, a Secret
 * volume swaps them atomically), so the files are looked at again, at most once a
 * second, when a connection opens: changed files are loaded into new credentials and
 * every new connection gets those; the connections already open keep the credentials
 * they began with (counted references; the old ones are freed once unused). New files
 * that do not load (half written, key and certificate not matching) are logged and the
 * previous credentials stay.
 *
 * With a client CA, every connection must present a certificate that CA signed, valid
 * now and usable for client authentication: the handshake fails otherwise (no
 * certificate, a self-signed one, another CA's), before any HTTP is read. With allowed
 * names too (--client-allowed-names, as kube-apiserver's --requestheader-allowed-names),
 * the certificate's CN or one of its DNS names must be in the list.
 *
 * TLS 1.2 is the lowest version offered (--tls-min-version VersionTLS12|VersionTLS13,
 * kube components' spelling). A handshake refused is logged with its cause ("unknown
 * CA", "certificate expired", "protocol version", "name not allowed", ...) and the
 * peer, at most one line per cause every 10 s with the count of those not shown
 * (tls_peer.c). The serving certificate's notAfter is read at start and at every
 * reload: within 30 days of it, or past it, a WARNING says so. */
#ifndef DRA_EXTENDER_TLS_H
#define DRA_EXTENDER_TLS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

typedef struct ext_tls ext_tls;

typedef struct ext_tls_opts {
    const char *cert_file;       /* PEM certificate (chain) */
    const char *key_file;        /* PEM private key */
    const char *client_ca_file;  /* PEM CA bundle; NULL: no client certificates asked for */
    const char *min_version;     /* "VersionTLS12" (NULL: the same) or "VersionTLS13" */
    const char *allowed_names;   /* "NAME,NAME": client certificates' CN or DNS SAN must be one
                                  * (needs client_ca_file); NULL or "": any the CA signed */
    bool quiet;                  /* no log lines (tests) */
} ext_tls_opts;

/* Loads the files; NULL with e naming the file and the reason. */
ext_tls *ext_tls_new(const ext_tls_opts *o, err *e);
/* After the servers using it have stopped. */
void ext_tls_free(ext_tls *t);
bool ext_tls_verifies_clients(const ext_tls *t);
/* The PEM texts loaded at start, for libmicrohttpd's own (unused) credentials. */
const char *ext_tls_cert_pem(const ext_tls *t);
const char *ext_tls_key_pem(const ext_tls *t);
/* The GnuTLS priority string of the versions offered (libmicrohttpd's HTTPS_PRIORITIES). */
const char *ext_tls_priorities(const ext_tls *t);

/* server.c, per connection: `session` is the connection's gnutls_session_t before its
 * handshake, `peer` its "ADDR:PORT" for the log. Returns a reference to hand back when
 * the connection closes; a handshake that failed is logged then, with its cause. */
void *ext_tls_session_begin(ext_tls *t, void *session, const char *peer);
void ext_tls_session_end(ext_tls *t, void *ref);
/* After the handshake: whether the peer's certificate was verified, its name allowed
 * (always true without a client CA). */
bool ext_tls_session_verified(const ext_tls *t, void *ref);

/* Counters for metrics: credentials reloaded after a change, reloads that failed. */
uint64_t ext_tls_reloads(const ext_tls *t);
uint64_t ext_tls_reload_errors(const ext_tls *t);
/* Seconds from now to the serving certificate's notAfter (negative: expired). */
int64_t ext_tls_expiry_seconds(const ext_tls *t);

/* Why handshakes are refused: the metric's label and the log's words. */
typedef enum {
    EXT_TLS_VERSION,        /* "protocol version": the client offers nothing >= the minimum */
    EXT_TLS_NO_CERT,        /* "no client certificate" */
    EXT_TLS_UNKNOWN_CA,     /* "unknown CA": not signed by --client-ca-file */
    EXT_TLS_EXPIRED,        /* "certificate expired" */
    EXT_TLS_NOT_YET_VALID,  /* "certificate not yet valid" */
    EXT_TLS_BAD_USAGE,      /* "certificate not for client authentication" */
    EXT_TLS_INVALID,        /* "certificate invalid": any other verification failure */
    EXT_TLS_NAME,           /* "name not allowed": --client-allowed-names */
    EXT_TLS_ABORTED,        /* "aborted by the client": it closed or sent an alert mid-handshake */
    EXT_TLS_NCAUSES
} ext_tls_cause;
const char *ext_tls_cause_label(ext_tls_cause c);   /* "unknown_ca" */
uint64_t ext_tls_refused(const ext_tls *t, ext_tls_cause c);

#endif
