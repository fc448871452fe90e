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
 * certificate, a self-signed one, another CA's), before any HTTP is read. */
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

/* server.c, per connection: `session` is the connection's gnutls_session_t before its
 * handshake. Returns a reference to hand back when the connection closes. */
void *ext_tls_session_begin(ext_tls *t, void *session);
void ext_tls_session_end(ext_tls *t, void *ref);
/* After the handshake: whether the peer's certificate was verified (always true
 * without a client CA). */
bool ext_tls_session_verified(const ext_tls *t, void *session);

/* Counters for metrics: credentials reloaded after a change, reloads that failed. */
uint64_t ext_tls_reloads(const ext_tls *t);
uint64_t ext_tls_reload_errors(const ext_tls *t);

#endif
