/* tls_peer.c — what each TLS handshake did, and why one was refused (tls.h).
 *
 * libmicrohttpd runs the handshake and, when it fails, only logs "received handshake
 * message out of context" and closes: GnuTLS's error never reaches us. So each session
 * is watched from the inside: a handshake hook reads the versions the ClientHello
 * offers, whether the client's Certificate message was empty, and whether its Finished
 * came (the handshake succeeded); with a client CA, the session's verify function
 * checks the client certificate itself (chain, validity, purpose, then the allowed
 * names) and records the cause when it refuses. When the connection closes without a
 * finished handshake, the cause is logged with the peer: at most one line per cause
 * every 10 s (a client retrying with a bad certificate would otherwise write a line
 * per attempt), the next line saying how many were not shown, the rest when the
 * server stops. A connection closed before any ClientHello (a TCP probe, a port scan)
 * is no handshake and is not logged. */
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "extender/tls_internal.h"

#define LOG_EVERY_NS (10 * 1000000000ull)

/* Client certificates must be usable for client authentication (when they say what
 * they are for at all). */
static const gnutls_typed_vdata_st CLIENT_PURPOSE[] = {
    {.type = GNUTLS_DT_KEY_PURPOSE_OID, .data = (void *)GNUTLS_KP_TLS_WWW_CLIENT},
};

static const struct {
    const char *label, *words;
} CAUSE[EXT_TLS_NCAUSES] = {
    [EXT_TLS_VERSION] = {"protocol_version", "protocol version"},
    [EXT_TLS_NO_CERT] = {"no_certificate", "no client certificate"},
    [EXT_TLS_UNKNOWN_CA] = {"unknown_ca", "unknown CA"},
    [EXT_TLS_EXPIRED] = {"certificate_expired", "certificate expired"},
    [EXT_TLS_NOT_YET_VALID] = {"certificate_not_yet_valid", "certificate not yet valid"},
    [EXT_TLS_BAD_USAGE] = {"certificate_bad_usage", "certificate not for client authentication"},
    [EXT_TLS_INVALID] = {"certificate_invalid", "certificate invalid"},
    [EXT_TLS_NAME] = {"name_not_allowed", "name not allowed"},
    [EXT_TLS_ABORTED] = {"aborted_by_client", "aborted by the client"},
};

const char *ext_tls_cause_label(ext_tls_cause c) { return c < EXT_TLS_NCAUSES ? CAUSE[c].label : "?"; }
uint64_t ext_tls_refused(const ext_tls *t, ext_tls_cause c) { return atomic_load(&t->refused[c]); }

/* Every watched connection, of every ext_tls: the hooks find theirs by its session.
 * A list: one lookup per hooked message, a few per handshake, over the open connections. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static ext__tls_conn *reg;

static ext__tls_conn *conn_of(gnutls_session_t s) {
    pthread_mutex_lock(&reg_mu);
    ext__tls_conn *tc = reg;
    while (tc && tc->s != s) tc = tc->next;
    pthread_mutex_unlock(&reg_mu);
    return tc;   /* only its own MHD thread uses or frees it */
}

static const char *version_name(unsigned v) {
    switch (v) {
    case 0x0300: return "SSL 3.0";
    case 0x0301: return "TLS 1.0";
    case 0x0302: return "TLS 1.1";
    case 0x0303: return "TLS 1.2";
    case 0x0304: return "TLS 1.3";
    default: return "an unknown version";
    }
}

/* ---- the handshake hook ------------------------------------------------------------------ */

/* supported_versions (43) of a ClientHello: a length byte, then two bytes a version. */
static int on_hello_ext(void *ctx, unsigned tls_id, const unsigned char *data, unsigned len) {
    unsigned *best = ctx;
    if (tls_id != 43 || len < 1) return 0;
    for (unsigned i = 1; i + 1 < len && i + 1 <= data[0]; i += 2) {
        unsigned v = (unsigned)data[i] << 8 | data[i + 1];
        if ((v & 0x0f0f) == 0x0a0a) continue;   /* GREASE */
        if (v > *best && v <= 0x0304) *best = v;
    }
    return 0;
}

/* The client's messages: its ClientHello (the versions it offers), its Certificate
 * (empty or not), its Finished (the handshake went through). */
static int on_handshake(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                        const gnutls_datum_t *msg) {
    if (!incoming) return 0;
    bool hello = htype == GNUTLS_HANDSHAKE_CLIENT_HELLO && when == GNUTLS_HOOK_PRE;
    bool cert = htype == GNUTLS_HANDSHAKE_CERTIFICATE_PKT && when == GNUTLS_HOOK_PRE;
    bool fin = htype == GNUTLS_HANDSHAKE_FINISHED && when == GNUTLS_HOOK_POST;
    if (!hello && !cert && !fin) return 0;
    ext__tls_conn *tc = conn_of(s);
    if (!tc) return 0;
    if (hello && msg->size >= 2) {
        /* legacy_version, then supported_versions when there is one (TLS 1.3 clients) */
        unsigned best = (unsigned)msg->data[0] << 8 | msg->data[1];
        gnutls_ext_raw_parse(&best, on_hello_ext, msg, GNUTLS_EXT_RAW_FLAG_TLS_CLIENT_HELLO);
        tc->offered = best;
    } else if (cert) {
        /* TLS 1.3: a request context (length byte + bytes) first; then the list's 3-byte length */
        size_t at = gnutls_protocol_get_version(s) == GNUTLS_TLS1_3 && msg->size ? 1u + msg->data[0] : 0;
        tc->cert_msg = true;
        tc->no_cert = msg->size >= at + 3 && !(msg->data[at] | msg->data[at + 1] | msg->data[at + 2]);
    } else {
        tc->done = true;
    }
    return 0;
}

/* ---- the verify function ----------------------------------------------------------------- */

static bool allowed(const ext_tls *t, const char *name) {
    for (size_t i = 0; i < t->nallowed; i++)
        if (!strcmp(t->allowed[i], name)) return true;
    return false;
}

/* The certificate's CN and DNS names allowed? detail gets them when not. */
static bool name_allowed(const ext_tls *t, gnutls_x509_crt_t crt, char *detail, size_t nd) {
    char cn[256] = "";
    size_t n = sizeof cn;
    if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &n) < 0) cn[0] = '\0';
    if (cn[0] && allowed(t, cn)) return true;
    char dns[512] = "";
    size_t used = 0;
    for (unsigned i = 0;; i++) {
        char name[256];
        size_t nn = sizeof name;
        int type = gnutls_x509_crt_get_subject_alt_name(crt, i, name, &nn, NULL);
        if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) break;
        if (type != GNUTLS_SAN_DNSNAME) continue;
        if (allowed(t, name)) return true;
        if (used < sizeof dns) used += (size_t)snprintf(dns + used, sizeof dns - used, "%s%s", used ? ", " : "", name);
    }
    snprintf(detail, nd, "CN=%s%s%s: not in --client-allowed-names", cn[0] ? cn : "(none)", dns[0] ? ", DNS names " : "",
             dns);
    return false;
}

/* The CN of the peer's first certificate into buf ("" when none), for the log. */
static void peer_cn(gnutls_session_t s, char *buf, size_t n) {
    buf[0] = '\0';
    unsigned count = 0;
    const gnutls_datum_t *certs = gnutls_certificate_get_peers(s, &count);
    gnutls_x509_crt_t crt;
    if (!certs || !count || gnutls_x509_crt_init(&crt) < 0) return;
    if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) >= 0) {
        size_t sz = n;
        if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf, &sz) < 0) buf[0] = '\0';
    }
    gnutls_x509_crt_deinit(crt);
}

static ext_tls_cause cause_of_status(unsigned st) {
    if (st & GNUTLS_CERT_EXPIRED) return EXT_TLS_EXPIRED;
    if (st & GNUTLS_CERT_NOT_ACTIVATED) return EXT_TLS_NOT_YET_VALID;
    if (st & (GNUTLS_CERT_SIGNER_NOT_FOUND | GNUTLS_CERT_SIGNER_NOT_CA)) return EXT_TLS_UNKNOWN_CA;
    if (st & GNUTLS_CERT_PURPOSE_MISMATCH) return EXT_TLS_BAD_USAGE;
    return EXT_TLS_INVALID;
}

/* The client certificate: chain against --client-ca-file, valid now, for client
 * authentication; then the allowed names. Refusing fails the handshake (an alert to the
 * client); the cause stays on the connection for the log at its close. */
static int on_verify(gnutls_session_t s) {
    ext__tls_conn *tc = conn_of(s);
    if (!tc) return -1;
    const ext_tls *t = tc->t;
    unsigned count = 0;
    const gnutls_datum_t *certs = gnutls_certificate_get_peers(s, &count);
    if (!certs || !count) {
        tc->cause = EXT_TLS_NO_CERT;
        return -1;
    }
    unsigned st = 0;
    int rc = gnutls_certificate_verify_peers(s, (gnutls_typed_vdata_st *)CLIENT_PURPOSE, ARRAY_SIZE(CLIENT_PURPOSE), &st);
    char cn[128];
    peer_cn(s, cn, sizeof cn);
    if (rc < 0 || st) {
        tc->cause = rc < 0 ? EXT_TLS_INVALID : (int)cause_of_status(st);
        gnutls_datum_t out = {0};
        if (rc >= 0 && gnutls_certificate_verification_status_print(st, GNUTLS_CRT_X509, &out, 0) >= 0) {
            snprintf(tc->detail, sizeof tc->detail, "CN=%s: %s", cn[0] ? cn : "(none)", (const char *)out.data);
            gnutls_free(out.data);
            for (size_t n = strlen(tc->detail); n && tc->detail[n - 1] == ' '; n--) tc->detail[n - 1] = '\0';
        } else {
            snprintf(tc->detail, sizeof tc->detail, "CN=%s: %s", cn[0] ? cn : "(none)", gnutls_strerror(rc));
        }
        return -1;
    }
    if (t->nallowed) {
        gnutls_x509_crt_t crt;
        bool ok = false;
        if (gnutls_x509_crt_init(&crt) >= 0) {
            if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) >= 0)
                ok = name_allowed(t, crt, tc->detail, sizeof tc->detail);
            gnutls_x509_crt_deinit(crt);
        }
        if (!ok) {
            tc->cause = EXT_TLS_NAME;
            return -1;
        }
    }
    tc->verified = true;
    return 0;
}

void ext__tls_watch(ext_tls *t, ext__tls_conn *tc) {
    pthread_mutex_lock(&reg_mu);
    tc->next = reg;
    if (reg) reg->prev = tc;
    reg = tc;
    pthread_mutex_unlock(&reg_mu);
    gnutls_handshake_set_hook_function(tc->s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_BOTH, on_handshake);
    if (t->file[EXT__TLS_CA]) {
        /* no certificate, or one on_verify refuses: the handshake fails */
        gnutls_certificate_server_set_request(tc->s, GNUTLS_CERT_REQUIRE);
        gnutls_session_set_verify_function(tc->s, on_verify);
    }
}

/* ---- the log ----------------------------------------------------------------------------- */

static void refused(ext_tls *t, ext_tls_cause c, const char *peer, const char *detail) {
    atomic_fetch_add(&t->refused[c], 1);
    pthread_mutex_lock(&t->log_mu);
    uint64_t now = ext__tls_mono_ns();
    if (t->logged[c].at_ns && now - t->logged[c].at_ns < LOG_EVERY_NS) {
        t->logged[c].suppressed++;
    } else {
        unsigned more = t->logged[c].suppressed;
        char also[96] = "";
        if (more) snprintf(also, sizeof also, " (and %u more for this cause in the previous 10 s, not shown)", more);
        ext__tls_log(t, "refused a handshake from %s: %s%s%s%s", peer, CAUSE[c].words, detail[0] ? ": " : "", detail,
                     also);
        t->logged[c].at_ns = now;
        t->logged[c].suppressed = 0;
    }
    pthread_mutex_unlock(&t->log_mu);
}

void ext__tls_closed(ext_tls *t, ext__tls_conn *tc) {
    pthread_mutex_lock(&reg_mu);
    if (tc->prev) tc->prev->next = tc->next;
    else reg = tc->next;
    if (tc->next) tc->next->prev = tc->prev;
    pthread_mutex_unlock(&reg_mu);
    if (tc->done || !tc->offered) return;   /* a handshake that went through, or none at all */
    char detail[300];
    if (tc->offered < t->min_version) {
        snprintf(detail, sizeof detail, "the client offers at most %s, --tls-min-version is %s", version_name(tc->offered),
                 t->min_flag);
        refused(t, EXT_TLS_VERSION, tc->peer, detail);
    } else if (tc->cause >= 0) {
        refused(t, (ext_tls_cause)tc->cause, tc->peer, tc->detail);
    } else if (tc->no_cert) {
        refused(t, EXT_TLS_NO_CERT, tc->peer, "--client-ca-file requires one");
    } else {
        /* the client gave up: most often it does not trust our certificate (its alert says) */
        gnutls_alert_description_t a = gnutls_alert_get(tc->s);
        const char *name = a != GNUTLS_A_CLOSE_NOTIFY ? gnutls_alert_get_name(a) : NULL;
        snprintf(detail, sizeof detail, "%s%s", name ? "its alert: " : "closed during the handshake (as a client "
                                                                        "that does not trust this server's certificate does)",
                 name ? name : "");
        refused(t, EXT_TLS_ABORTED, tc->peer, detail);
    }
}

void ext__tls_flush_log(ext_tls *t) {
    pthread_mutex_lock(&t->log_mu);
    for (int c = 0; c < EXT_TLS_NCAUSES; c++)
        if (t->logged[c].suppressed)
            ext__tls_log(t, "%u more handshakes refused for %s in the last 10 s, not shown", t->logged[c].suppressed,
                         CAUSE[c].words);
    pthread_mutex_unlock(&t->log_mu);
}
