/* serve.c — `dralloc serve`: the kube-scheduler HTTP extender (extender/extender.h).
 *
 *   dralloc serve [--snapshot PATH...] [--listen HOST:PORT] [--threads N] [options]
 *
 * Loads the objects under the --snapshot paths (files or directories, YAML or JSON,
 * as `dralloc allocate -f` reads them) into a store, serves /filter, /prioritize,
 * /bind, health, metrics and the static-mode /objects API, and on SIGTERM or SIGINT
 * stops accepting connections, lets requests in flight finish and exits 0. The log
 * (stderr) says "listening on HOST:PORT" once the port is open (and "health on
 * HOST:PORT" for --health-listen). Exit 2 on a usage or input error, 1 when the server
 * cannot start. */
#include "cmd/commands.h"
#include "cmd/flags.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "extender/auth.h"
#include "extender/bind.h"
#include "extender/evict.h"
#include "extender/hold.h"
#include "extender/budget.h"
#include "extender/extender.h"
#include "extender/gates.h"
#include "extender/kube.h"
#include "extender/lease.h"
#include "extender/listen.h"
#include "extender/objcache.h"
#include "extender/pending.h"
#include "extender/requeue.h"
#include "extender/tls.h"
#include "extender/watch.h"
#include "extender/wire.h"

/* Live mode: the feature-gate defaults of the release the kube-apiserver runs
 * (extender/gates.h), --feature-gates (spec, already checked) on top; one log line says
 * which. Its own client with a short timeout: an API server that does not answer
 * delays the start by 5 s, not 30, and leaves the 1.37 defaults. */
static void gates_from_server(const ext_kube_opts *ko, const char *spec, dra_features *feat) {
    ext_kube_opts vo = *ko;
    vo.timeout_s = 5;
    err e;
    err_clear(&e);
    ext_kube *k = ext_kube_new(&vo, &e);
    ext_kube_resp r = {0};
    unsigned minor = 0;
    char git[64] = "", why[sizeof e.msg + 16] = "";
    bool ok = k && ext_kube_request(k, "GET", "/version", NULL, NULL, &r, &e);
    if (ok && r.status != 200) snprintf(why, sizeof why, "HTTP %ld", r.status), ok = false;
    else if (ok) ok = ext_gates_server_minor(r.body, &minor, git, sizeof git, &e);
    if (!ok && !why[0]) snprintf(why, sizeof why, "%s", e.msg);
    free(r.body);
    ext_kube_free(k);
    if (!ok) {
        fprintf(stderr, "dralloc serve: feature gates: the kube-apiserver's /version did not say its release (%s): "
                        "Kubernetes 1.%d defaults%s%s\n", why, EXT_GATES_NEWEST_MINOR, spec ? ", --feature-gates " : "",
                spec ? spec : "");
        return;
    }
    dra_features f;
    char changed[1024];
    ext_gates_for_release(&f, minor, changed, sizeof changed);
    if (spec) {
        err_clear(&e);
        bool parsed = dra_features_parse(&f, spec, &e);   /* checked at the flag */
        (void)parsed;
    }
    *feat = f;
    if (minor > EXT_GATES_NEWEST_MINOR)
        fprintf(stderr, "dralloc serve: feature gates: kube-apiserver %s is newer than the Kubernetes 1.%d gates dralloc "
                        "knows: 1.%d defaults%s%s\n", git, EXT_GATES_NEWEST_MINOR, EXT_GATES_NEWEST_MINOR,
                spec ? ", --feature-gates " : "", spec ? spec : "");
    else
        fprintf(stderr, "dralloc serve: feature gates: kube-apiserver %s: Kubernetes 1.%u defaults (%s%s)%s%s%s\n", git,
                minor, changed[0] ? "differing from 1.37's: " : "the same as 1.37's", changed,
                spec ? ", --feature-gates " : "", spec ? spec : "",
                minor < 34 ? "; dralloc reads resource.k8s.io/v1, served from Kubernetes 1.34 on" : "");
}

/* ---- options: the table (serve_flags), then the checks across flags (serve_check) ---- */

typedef struct serve_opts {
    ext_config cfg;
    ext_server_opts so;
    dra_features feat;
    cmd_list paths;                 /* --snapshot PATH... */
    bool workers_set;
    ext_kube_opts ko;
    double max_staleness_s;
    bool bind_mode, leader_elect, watch_list, allow_unauth, verbose, preempt_verb;
    double bind_timeout_s;
    dra_device_choice choice;       /* --device-choice: the binder's (the allocation it writes is kept) */
    bool preemption;                /* --preemption=evict (bind mode's own preemption, evict.h) */
    double preemption_hold_s;       /* --preemption-hold: a hold's lifetime */
    const char *lease_ns, *lease_name, *health_listen;
    ext_lease_opts lo;
    ext_tls_opts to;
    char gates_buf[1024];           /* every --feature-gates, for live mode's release defaults */
    const char *gates_spec;
    size_t max_inflight;
    ext_addr listen_addr, health_addr;
} serve_opts;

/* An integer flag's range, and the size of its field (unsigned or size_t). */
typedef struct serve_range {
    unsigned long long min, max;
    size_t size;
} serve_range;

static bool parse_uint(const char *opt, const char *s, unsigned long long min, unsigned long long max,
                       unsigned long long *out) {
    char *end;
    errno = 0;
    unsigned long long v = s ? strtoull(s, &end, 10) : 0;
    if (!s || !*s || s[0] == '-' || errno || v < min || v > max) goto bad;
    if (*end) {
        /* sizes: Ki, Mi, Gi (and k, M, G as powers of ten) */
        static const struct {
            const char *suffix;
            unsigned long long mult;
        } sfx[] = {{"Ki", 1ull << 10}, {"Mi", 1ull << 20}, {"Gi", 1ull << 30}, {"k", 1000}, {"M", 1000000},
                   {"G", 1000000000}};
        size_t i = 0;
        while (i < sizeof sfx / sizeof sfx[0] && strcmp(end, sfx[i].suffix)) i++;
        if (i == sizeof sfx / sizeof sfx[0] || !strcmp(opt, "--threads") || v > max / sfx[i].mult) goto bad;
        v *= sfx[i].mult;
        if (v > max) goto bad;
    }
    *out = v;
    return true;
bad:
    fprintf(stderr, "dralloc serve: %s needs an integer between %llu and %llu\n", opt, min, max);
    return false;
}

static int read_uint(const cmd_flag_use *u) {
    const serve_range *r = u->flag->data;
    unsigned long long v;
    if (!parse_uint(u->as, u->value, r->min, r->max, &v)) return CMD_PARSE_ERROR;
    if (r->size == sizeof(unsigned)) *(unsigned *)u->field = (unsigned)v;
    else *(size_t *)u->field = (size_t)v;
    return CMD_PARSE_OK;
}

/* --threads: the HTTP threads, and the workers unless --workers says otherwise */
static int read_threads(const cmd_flag_use *u) {
    serve_opts *o = u->opts;
    if (read_uint(u)) return CMD_PARSE_ERROR;
    if (!o->workers_set) o->cfg.workers = o->so.threads;
    return CMD_PARSE_OK;
}

static int read_workers(const cmd_flag_use *u) {
    ((serve_opts *)u->opts)->workers_set = true;
    return read_uint(u);
}

/* A duration flag: its bound, whether 0 is refused, how it is stored, the message's hint. */
typedef enum { DUR_NS, DUR_CEIL_S, DUR_CEIL_MS, DUR_SECONDS } serve_dur_unit;
typedef struct serve_dur {
    uint64_t max_ns;
    bool nonzero;
    serve_dur_unit unit;
    const char *hint;
} serve_dur;

static int read_duration(const cmd_flag_use *u) {
    const serve_dur *d = u->flag->data;
    uint64_t ns;
    if (!u->value || !ext_duration_parse(u->value, &ns) || (d->nonzero && !ns) || ns > d->max_ns) {
        fprintf(stderr, "dralloc serve: %s needs a Go duration %s\n", u->as, d->hint);
        return CMD_PARSE_ERROR;
    }
    switch (d->unit) {
    case DUR_NS: *(uint64_t *)u->field = ns; break;
    case DUR_CEIL_S: *(unsigned *)u->field = (unsigned)((ns + 999999999) / 1000000000); break;
    case DUR_CEIL_MS: *(unsigned *)u->field = (unsigned)((ns + 999999) / 1000000); break;
    case DUR_SECONDS: *(double *)u->field = (double)ns / 1e9; break;
    }
    return CMD_PARSE_OK;
}

static int read_score(const cmd_flag_use *u) {
    if (u->value && dra_score_mode_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc serve: --score needs binpack, spread or none\n");
    return CMD_PARSE_ERROR;
}

static int read_choice(const cmd_flag_use *u) {
    if (u->value && dra_device_choice_parse(u->value, u->field)) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc serve: --device-choice needs first-fit or best-fit\n");
    return CMD_PARSE_ERROR;
}

/* --preemption off|evict */
static int read_preemption(const cmd_flag_use *u) {
    bool *on = u->field;
    if (u->value && (!strcmp(u->value, "off") || !strcmp(u->value, "evict"))) {
        *on = !strcmp(u->value, "evict");
        return CMD_PARSE_OK;
    }
    fprintf(stderr, "dralloc serve: --preemption: Unsupported value: \"%s\": supported values: \"off\", \"evict\"\n",
            u->value ? u->value : "");
    return CMD_PARSE_ERROR;
}

/* --feature-gates: checked now, and kept (all of them) for live mode's release defaults */
static int read_gates(const cmd_flag_use *u) {
    serve_opts *o = u->opts;
    err e;
    err_clear(&e);
    if (!u->value || !dra_features_parse(&o->feat, u->value, &e)) {
        char buf[1200];
        fprintf(stderr, "dralloc serve: --feature-gates: %s\n",
                u->value ? err_format(&e, buf, sizeof buf) : "needs A=true,B=false");
        return CMD_PARSE_ERROR;
    }
    size_t used = strlen(o->gates_buf);
    snprintf(o->gates_buf + used, sizeof o->gates_buf - used, "%s%s", used ? "," : "", u->value);
    o->gates_spec = o->gates_buf;
    return CMD_PARSE_OK;
}

/* --snapshot PATH...: a path, not the next flag */
static int read_paths(const cmd_flag_use *u) {
    if (u->value && u->value[0] != '-') return CMD_PARSE_OK;
    fprintf(stderr, "dralloc serve: %s needs a path\n", u->as);
    return CMD_PARSE_ERROR;
}

static int read_listen(const cmd_flag_use *u) {
    if (u->value) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc serve: --listen needs HOST:PORT\n");
    return CMD_PARSE_ERROR;
}

/* a name, a file, an address: not empty */
static int read_nonempty(const cmd_flag_use *u) {
    if (u->value && *u->value) return CMD_PARSE_OK;
    fprintf(stderr, "dralloc serve: %s needs a value\n", u->as);
    return CMD_PARSE_ERROR;
}

#define XSTR(x) STR(x)
#define STR(x) #x
#define UINT_ROW(NAME, FIELD, MIN, MAX, T)                                                                      \
    .name = NAME, .kind = CMD_FUNC, .off = offsetof(serve_opts, FIELD), .fn = read_uint, .own_missing = true, \
    .data = &(const serve_range){MIN, MAX, sizeof(T)}
#define DUR_ROW(NAME, FIELD, MAX, NONZERO, UNIT, HINT)                                                              \
    .name = NAME, .kind = CMD_FUNC, .off = offsetof(serve_opts, FIELD), .fn = read_duration, .own_missing = true, \
    .data = &(const serve_dur){MAX, NONZERO, UNIT, HINT}
#define TEXT_ROW(NAME, FIELD) \
    .name = NAME, .kind = CMD_STRING, .off = offsetof(serve_opts, FIELD), .fn = read_nonempty, .own_missing = true

static const cmd_flag serve_flags[] = {
    {.name = "--snapshot", .shorthand = "-f", .kind = CMD_PATHS, .off = offsetof(serve_opts, paths), .fn = read_paths,
     .own_missing = true, .label = "--snapshot PATH...",
     .help = "files or directories of objects (YAML/JSON, Lists), as allocate -f;\n"
             "without it the server starts empty (not ready) until POST /objects"},
    {.name = "--listen", .kind = CMD_STRING, .off = offsetof(serve_opts, so.listen), .fn = read_listen,
     .own_missing = true, .label = "--listen HOST:PORT",
     .help = "address to serve on (default 127.0.0.1:8888; port 0: any free port)"},
    {.name = "--threads", .kind = CMD_FUNC, .off = offsetof(serve_opts, so.threads), .fn = read_threads,
     .own_missing = true, .data = &(const serve_range){1, 1024, sizeof(unsigned)}, .label = "--threads N",
     .help = "HTTP threads and node-deciding workers (default: one per core)"},
    {.name = "--workers", .kind = CMD_FUNC, .off = offsetof(serve_opts, cfg.workers), .fn = read_workers,
     .own_missing = true, .data = &(const serve_range){1, 1024, sizeof(unsigned)}, .label = "--workers N",
     .help = "node-deciding workers only (default: --threads)"},
    {DUR_ROW("--filter-budget", cfg.filter_budget_ns, 86400000000000ull, false, DUR_NS, "(2s, 500ms, 1m) up to 24h"),
     .label = "--filter-budget DUR",
     .help = "time to decide the nodes of one request, Go duration (default 2s);\n"
             "nodes not decided by then fail with \"timed out trying to allocate devices\""},
    {.name = "--score", .kind = CMD_FUNC, .off = offsetof(serve_opts, cfg.score), .fn = read_score, .own_missing = true,
     .label = "--score MODE", .help = "/prioritize scores: binpack (default), spread or none"},
    {.name = "--device-choice", .kind = CMD_FUNC, .off = offsetof(serve_opts, choice), .fn = read_choice,
     .own_missing = true, .label = "--device-choice C",
     .help = "the devices allocated on a node: first-fit (default, as kube-scheduler's\n"
             "DynamicResources plugin) or best-fit (of the allocations that fit, the\n"
             "one leaving the node least fragmented): what /bind writes in bind\n"
             "mode; /filter and /prioritize answer as with first-fit"},
    {.name = "--feature-gates", .kind = CMD_FUNC, .fn = read_gates, .own_missing = true, .label = "--feature-gates SPEC",
     .help = "DRAPrioritizedList=true,... (Kubernetes 1.37 defaults; in live mode the\n"
             "defaults of the kube-apiserver's release, from its /version, these on top)"},
    {UINT_ROW("--max-body", cfg.max_body, 1, 1ull << 32, size_t), .label = "--max-body SIZE",
     .help = "largest request body, bytes or with Ki/Mi suffix (default 16Mi; 413 beyond)"},
    {UINT_ROW("--max-depth", cfg.max_depth, 2, 2000, unsigned), .label = "--max-depth N",
     .help = "JSON nesting limit (default " XSTR(EXT_DEFAULT_MAX_DEPTH) "; 400 beyond)"},
    {UINT_ROW("--max-nodes", cfg.max_nodes, 1, 10000000, size_t), .label = "--max-nodes N",
     .help = "nodes per request (default " XSTR(EXT_DEFAULT_MAX_NODES) "; 400 beyond)"},
    {DUR_ROW("--conn-timeout", so.conn_timeout_s, 86400000000000ull, false, DUR_CEIL_S, "(2s, 500ms, 1m) up to 24h"),
     .label = "--conn-timeout DUR", .help = "close idle connections after this long (default 10s)"},
    {DUR_ROW("--request-timeout", so.request_timeout_ms, 86400000000000ull, false, DUR_CEIL_MS,
             "(2s, 500ms, 1m) up to 24h"),
     .label = "--request-timeout DUR",
     .help = "a request's headers and body must arrive, and its answer be read,\n"
             "within this, counted from the connection's opening or previous answer\n"
             "(default 30s; longer than --conn-timeout; 0: none): late headers or\n"
             "answers are cut, a late body answered 408"},
    {UINT_ROW("--max-connections", so.conn_limit, 1, 100000, unsigned), .label = "--max-connections N",
     .help = "simultaneous connections (default 1000); past it new ones are closed"},
    {UINT_ROW("--max-inflight-bytes", max_inflight, 1, 1ull << 40, size_t), .label = "--max-inflight-bytes SIZE",
     .help = "request bytes held at once across connections (default 128Mi);\n"
             "past it 503 with Retry-After"},
    {TEXT_ROW("--health-listen", health_listen), .label = "--health-listen HOST:PORT",
     .help = "/healthz, /readyz and /metrics on their own listener, thread and\n"
             "connections (plain HTTP, for probes); unaffected by the main listener's load"},
    {.name = "--verbose", .shorthand = "-v", .kind = CMD_BOOL, .off = offsetof(serve_opts, cfg.verbose),
     .label = "-v, --verbose", .help = "log one line per filter/prioritize request"},
    {.name = "--warm-views", .kind = CMD_BOOL, .off = offsetof(serve_opts, cfg.warm_views),
     .label = "--warm-views=false",
     .help = "build node views when a request first meets a node, not ahead (default:\n"
             "--snapshot builds every node's view before listening, and a thread builds\n"
             "those a new snapshot lacks; the memory is what serving every node takes)"},
    {.kind = CMD_SECTION, .help = "\nServing securely\n"},
    {TEXT_ROW("--tls-cert-file", to.cert_file), .label = "--tls-cert-file FILE",
     .help = "serve HTTPS with this PEM certificate (chain), with"},
    {TEXT_ROW("--tls-private-key-file", to.key_file), .label = "--tls-private-key-file FILE",
     .help = "its PEM key; both are loaded again when they change"},
    {TEXT_ROW("--client-ca-file", to.client_ca_file), .label = "--client-ca-file FILE",
     .help = "require client certificates signed by this PEM CA (handshake refused\n"
             "otherwise): kube-scheduler's extender tlsConfig certFile/keyFile"},
    {TEXT_ROW("--client-allowed-names", to.allowed_names), .label = "--client-allowed-names NAME,...",
     .help = "with --client-ca-file: the client certificate's CN or one of\n"
             "its DNS names must be one of these (as kube-apiserver's\n"
             "--requestheader-allowed-names); handshake refused otherwise"},
    {TEXT_ROW("--tls-min-version", to.min_version), .label = "--tls-min-version V",
     .help = "VersionTLS12 (default) or VersionTLS13: the lowest TLS version offered"},
    {.name = "--allow-unauthenticated", .kind = CMD_BOOL, .off = offsetof(serve_opts, allow_unauth),
     .help = "let /bind, POST /objects and DELETE /objects answer on a --listen\n"
             "beyond loopback without --client-ca-file (else 403)"},
    {.kind = CMD_SECTION, .help = "\nLive mode (instead of --snapshot): list+watch a kube-apiserver\n"},
    {TEXT_ROW("--kubeconfig", ko.kubeconfig), .label = "--kubeconfig FILE",
     .help = "kubeconfig (with --context NAME); in a pod the service account is used\n"
             "when KUBERNETES_SERVICE_HOST is set"},
    {TEXT_ROW("--context", ko.context)},
    {TEXT_ROW("--server", ko.server), .label = "--server URL",
     .help = "the API server (http:// for test servers), with --token-file F,\n"
             "--ca-file F, --insecure-skip-tls-verify"},
    {TEXT_ROW("--token-file", ko.token_file)},
    {TEXT_ROW("--ca-file", ko.ca_file)},
    {.name = "--insecure-skip-tls-verify", .kind = CMD_BOOL, .off = offsetof(serve_opts, ko.insecure)},
    {DUR_ROW("--max-staleness", max_staleness_s, UINT64_MAX, true, DUR_SECONDS, "(60s, 2m)"),
     .label = "--max-staleness DUR",
     .help = "/readyz turns 503 once a kind cannot be watched this long (default 60s)"},
    {.name = "--watch-list", .kind = CMD_BOOL, .off = offsetof(serve_opts, watch_list), .label = "--watch-list=false",
     .help = "paged lists only (default: streaming lists, sendInitialEvents, where\n"
             "the server offers them); PodGroups are watched with\n"
             "--feature-gates DRAWorkloadResourceClaims=true"},
    {.name = "--bind", .kind = CMD_BOOL, .off = offsetof(serve_opts, bind_mode),
     .help = "bind mode: /bind allocates, writes the claims' status and binds the pod\n"
             "(for a profile without the DynamicResources plugin: deploy/)"},
    {.name = "--preempt-verb", .kind = CMD_BOOL, .off = offsetof(serve_opts, preempt_verb),
     .help = "serve /preempt (kube-scheduler's preemptVerb): kube-scheduler's victims completed\n"
             "with the pods whose devices the pending pod needs; keeps the objects' text"},
    {.name = "--preemption", .kind = CMD_FUNC, .off = offsetof(serve_opts, preemption), .fn = read_preemption,
     .own_missing = true, .label = "--preemption P",
     .help = "bind mode only: off (default) or evict — a pod /filter leaves with no\n"
             "node gets lower-priority pods evicted (Eviction API: PDBs hold) and\n"
             "their node held for it (label and annotation dralloc.dev/hold)"},
    {DUR_ROW("--preemption-hold", preemption_hold_s, 86400000000000ull, true, DUR_SECONDS, "(5m, 90s) up to 24h"),
     .label = "--preemption-hold DUR",
     .help = "how long a node stays held for a preemptor that does not bind\n"
             "(default 5m: kube-scheduler retries a parked pod within 5 minutes)"},
    {DUR_ROW("--bind-timeout", bind_timeout_s, 3600000000000ull, true, DUR_SECONDS, "(5s, 500ms) up to 1h"),
     .label = "--bind-timeout DUR",
     .help = "kube-scheduler's httpTimeout for the extender (default 5s, as deploy/bind):\n"
             "a /bind not writing by then gives its devices back and answers an error"},
    {UINT_ROW("--bind-threads", so.offload_threads, 1, 1024, unsigned), .label = "--bind-threads N",
     .help = "threads writing binds to the API server (default 64)"},
    {.name = "--leader-elect", .kind = CMD_BOOL, .off = offsetof(serve_opts, leader_elect),
     .help = "one active replica of several (a coordination.k8s.io Lease), with\n"
             "--lease-namespace NS (kube-system) and --lease-name NAME (dralloc-extender);\n"
             "--leader-elect-lease-duration DUR (15s), --leader-elect-renew-deadline DUR\n"
             "(10s), --leader-elect-retry-period DUR (2s); a standby is ready, and its /bind\n"
             "answers an Error naming the leader"},
    {TEXT_ROW("--lease-namespace", lease_ns)},
    {TEXT_ROW("--lease-name", lease_name)},
    {DUR_ROW("--leader-elect-lease-duration", lo.duration_s, 3600000000000ull, true, DUR_SECONDS, "(15s, 2s) up to 1h")},
    {DUR_ROW("--leader-elect-renew-deadline", lo.renew_deadline_s, 3600000000000ull, true, DUR_SECONDS,
             "(15s, 2s) up to 1h")},
    {DUR_ROW("--leader-elect-retry-period", lo.retry_s, 3600000000000ull, true, DUR_SECONDS, "(15s, 2s) up to 1h")},
};

static void usage(FILE *f);

static const cmd_flags serve_spec = {
    .prog = "dralloc serve",
    .flags = serve_flags,
    .nflags = sizeof serve_flags / sizeof serve_flags[0],
    .unknown = "dralloc serve: unexpected argument '%s'\n\n",
    .missing = "dralloc serve: %s needs a value\n",
    .usage = usage,
    .usage_after_unknown = true,
    .help_width = 22,
};

static void usage(FILE *f) {
    fprintf(f, "usage: dralloc serve [--snapshot PATH...] [--listen HOST:PORT] [--threads N] [options]\n\n");
    cmd_flags_help(f, &serve_spec);
    fprintf(f, "\n"
               "Options take their value as --name value or --name=value (as kube components do).\n"
               "Routes: POST /filter /prioritize /bind (kube-scheduler extender verbs; any URL prefix),\n"
               "GET /healthz /readyz /metrics /debug/cache, POST /objects, DELETE /objects/KIND/NAMESPACE/NAME.\n");
}

/* What the flags say together, before anything starts: the addresses, the leader
 * election's periods, TLS's files, the request timeout against the idle one. */
static bool serve_check(serve_opts *o) {
    err le;
    err_clear(&le);
    if (!ext_listen_parse("--listen", o->so.listen, &o->listen_addr, &le) ||
        (o->health_listen && !ext_listen_parse("--health-listen", o->health_listen, &o->health_addr, &le))) {
        fprintf(stderr, "dralloc serve: %s\n", le.msg);
        return false;
    }
    /* as client-go's leaderelection requires: duration > renew deadline > retry period */
    const ext_lease_opts *lo = &o->lo;
    double d = lo->duration_s > 0 ? lo->duration_s : 15, r = lo->renew_deadline_s > 0 ? lo->renew_deadline_s : 10,
           p = lo->retry_s > 0 ? lo->retry_s : 2;
    if (!(d > r && r > p)) {
        fprintf(stderr, "dralloc serve: want --leader-elect-lease-duration (%gs) > --leader-elect-renew-deadline "
                        "(%gs) > --leader-elect-retry-period (%gs)\n", d, r, p);
        return false;
    }
    const ext_tls_opts *to = &o->to;
    if ((to->cert_file || to->key_file || to->client_ca_file || to->min_version || to->allowed_names) &&
        !(to->cert_file && to->key_file)) {
        fprintf(stderr, "dralloc serve: %s needs --tls-cert-file and --tls-private-key-file\n",
                to->client_ca_file  ? "--client-ca-file"
                : to->min_version   ? "--tls-min-version"
                : to->allowed_names ? "--client-allowed-names"
                : to->cert_file     ? "--tls-cert-file"
                                    : "--tls-private-key-file");
        return false;
    }
    const ext_server_opts *so = &o->so;
    if (so->request_timeout_ms && so->conn_timeout_s && so->request_timeout_ms <= so->conn_timeout_s * 1000u) {
        fprintf(stderr, "dralloc serve: --request-timeout must be longer than --conn-timeout (%us): it counts the "
                        "keep-alive wait before a request\n", so->conn_timeout_s);
        return false;
    }
    return true;
}

/* ---- wiring: TLS, the write guard, the source of objects (a kube-apiserver or files) --- */

/* What a running service holds, freed by serve_teardown in the order it was built. */
typedef struct serve_rt {
    bool live;
    ext_tls *tls;
    char *guard;
    ext_budget *budget;
    ext_kube *kube;
    dra_store *st;
    ext_watch *watch;
    ext_lease *lease;
    ext_binder *binder;
    ext_pending *pending;     /* bind mode: claims written vs older versions the watch brings */
    ext_objcache *claims;     /* bind mode: the claims' JSON, so that a write needs no GET first */
    ext_requeue *requeue;     /* bind mode: wakes the pods parked on our "no node" (requeue.h) */
    ext_holds *holds;         /* --preemption=evict: nodes held for preemptors (hold.h) */
    ext_evictor *evictor;     /* --preemption=evict: evicts victims, keeps the holds (evict.h) */
} serve_rt;

static void serve_teardown(serve_rt *rt, bool release_lease) {
    ext_evictor_stop(rt->evictor);
    ext_lease_stop(rt->lease, release_lease);
    ext_watch_stop(rt->watch);
    ext_binder_free(rt->binder);
    ext_requeue_stop(rt->requeue);
    ext_pending_free(rt->pending);
    ext_objcache_free(rt->claims);
    ext_holds_free(rt->holds);
    ext_kube_free(rt->kube);
    dra_store_free(rt->st);
    ext_budget_free(rt->budget);
    ext_tls_free(rt->tls);
    free(rt->guard);
    *rt = (serve_rt){0};
}

/* TLS and who may write (auth.h: secure by default), with their warnings. */
static bool wire_guard(serve_opts *o, serve_rt *rt) {
    if (o->to.cert_file) {
        err te;
        err_clear(&te);
        rt->tls = ext_tls_new(&o->to, &te);
        if (!rt->tls) {
            fprintf(stderr, "dralloc serve: %s\n", te.msg);
            return false;
        }
    }
    bool loopback = ext_addr_is_loopback(&o->listen_addr), verifies = rt->tls && ext_tls_verifies_clients(rt->tls);
    rt->guard = ext_auth_guard(o->so.listen, loopback, verifies, o->allow_unauth);
    if (o->allow_unauth && !loopback && !verifies)
        fprintf(stderr, "dralloc serve: WARNING: --allow-unauthenticated: /bind and /objects on %s answer any client "
                        "that reaches the port, without a client certificate; bind mode binds pods with this "
                        "pod's service account\n", o->so.listen);
    else if (rt->guard)
        fprintf(stderr, "dralloc serve: %s listens beyond loopback without --client-ca-file: /bind and /objects "
                        "answer 403 (give --client-ca-file, or --allow-unauthenticated)\n", o->so.listen);
    rt->budget = ext_budget_new(o->max_inflight);
    o->cfg.write_guard = rt->guard;
    o->cfg.budget = rt->budget;
    o->cfg.tls = rt->tls;
    o->cfg.features = &o->feat;   /* live mode: gates_from_server sets it, before the service starts */
    o->so.tls = rt->tls;
    o->so.budget = rt->budget;
    return true;
}

/* Live mode: the watch feeding the store, the lease, the binder. */
static void wire_live(serve_opts *o, serve_rt *rt) {
    if (o->bind_mode) {
        rt->pending = ext_pending_new(2 * o->max_staleness_s), rt->claims = ext_objcache_new();
        const char *own = ext_kube_namespace(rt->kube);
        rt->requeue = ext_requeue_start(rt->kube, &(ext_requeue_opts){.ns = own ? own : "default"});
    }
    ext_watch_opts wo = {.max_staleness_s = o->max_staleness_s, .no_watch_list = !o->watch_list,
                         .podgroups = o->feat.workload_claims, .verbose = o->cfg.verbose, .pending = rt->pending,
                         .claims = rt->claims, .requeue = rt->requeue};
    rt->watch = ext_watch_start(rt->kube, rt->st, &wo);
    o->cfg.watch = rt->watch;
    if (o->leader_elect) {
        o->lo.ns = o->lease_ns, o->lo.name = o->lease_name;
        rt->lease = ext_lease_start(rt->kube, &o->lo);
        o->cfg.lease = rt->lease;
    }
    if (o->bind_mode) {
        o->cfg.binder = rt->binder = ext_binder_new(rt->kube, rt->st, rt->pending);
        ext_binder_set_device_choice(rt->binder, o->choice);
        ext_binder_set_claims(rt->binder, rt->claims);
        ext_binder_set_timeout(rt->binder, o->bind_timeout_s);
        ext_binder_set_requeue(rt->binder, rt->requeue);
        o->cfg.requeue = rt->requeue;
    }
    if (o->bind_mode && o->preemption) {
        rt->holds = ext_holds_new();
        rt->evictor = ext_evictor_start(rt->kube, rt->st, rt->claims, rt->holds,
                                        &(ext_evictor_opts){.hold_s = o->preemption_hold_s, .lease = rt->lease,
                                                            .requeue = rt->requeue});
        o->cfg.holds = rt->holds;
        o->cfg.evictor = rt->evictor;
    }
    fprintf(stderr, "dralloc serve: following %s%s%s\n", ext_kube_server(rt->kube), o->bind_mode ? " (bind mode)" : "",
            o->leader_elect ? " (leader election)" : "");
}

/* Static mode: the --snapshot paths loaded into the store. */
static bool wire_snapshot(serve_opts *o, serve_rt *rt) {
    err e;
    err_clear(&e);
    uint64_t t0 = dra_monotonic_ns();
    uint64_t gen = dra_store_load_paths(rt->st, o->paths.v, o->paths.n, &e);
    if (!gen) {
        char buf[2048];
        fprintf(stderr, "dralloc serve: %s\n", err_format(&e, buf, sizeof buf));
        return false;
    }
    fprintf(stderr, "dralloc serve: snapshot generation %llu loaded in %.1f ms\n", (unsigned long long)gen,
            (double)(dra_monotonic_ns() - t0) / 1e6);
    return true;
}

/* Everything the service needs, built: false after saying why (exit 2). */
static bool serve_wire(serve_opts *o, serve_rt *rt) {
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    rt->live = o->ko.kubeconfig || o->ko.server || (!o->paths.n && host && *host);
    if (rt->live && o->paths.n) {
        fprintf(stderr, "dralloc serve: --snapshot and a kube-apiserver (--kubeconfig/--server) exclude each other\n");
        return false;
    }
    if (o->preemption && !o->bind_mode) {
        fprintf(stderr, "dralloc serve: --preemption=evict needs --bind: in advisor mode kube-scheduler's DynamicResources "
                        "plugin allocates, and its own preemption (with the preempt verb) decides victims\n");
        return false;
    }
    if (!rt->live && (o->bind_mode || o->leader_elect)) {
        fprintf(stderr, "dralloc serve: %s needs a kube-apiserver (--kubeconfig, --server, or in-cluster)\n",
                o->bind_mode ? "--bind" : "--leader-elect");
        return false;
    }
    if (o->ko.insecure)
        fprintf(stderr, "dralloc serve: WARNING: --insecure-skip-tls-verify: the kube-apiserver's certificate is not "
                        "checked; anyone on the path can answer as the API server\n");
    if (!wire_guard(o, rt)) return false;
    if (rt->live) {
        err ke;
        err_clear(&ke);
        rt->kube = ext_kube_new(&o->ko, &ke);
        if (!rt->kube) {
            fprintf(stderr, "dralloc serve: %s\n", ke.msg);
            return false;
        }
        gates_from_server(&o->ko, o->gates_spec, &o->feat);
    }
    /* the preempt verb reads victims' priorities and claims' reservations from the
     * objects' text: kept only when asked for (it costs the text of every object) */
    rt->st = dra_store_new_with(&o->feat, &(dra_store_opts){.keep_text = o->preempt_verb});
    if (rt->live) wire_live(o, rt);
    else if (o->paths.n) return wire_snapshot(o, rt);
    else fprintf(stderr, "dralloc serve: no --snapshot: not ready until POST /objects\n");
    return true;
}

/* ---- run: the listeners up, then SIGTERM or SIGINT awaited ---------------------------- */

static int serve_run(serve_opts *o, serve_rt *rt, sigset_t *stop) {
    ext_service *svc = ext_service_new(rt->st, &o->cfg);
    if (o->cfg.warm_views && !rt->live) {
        /* static mode: the views built before the first request can come */
        uint64_t t0 = dra_monotonic_ns();
        size_t n = ext_service_warm_views(svc);
        fprintf(stderr, "dralloc serve: %zu node views built in %.1f ms\n", n, (double)(dra_monotonic_ns() - t0) / 1e6);
    }
    char bound[300];
    err e;
    err_clear(&e);
    ext_server *srv = ext_server_start(svc, &o->so, bound, sizeof bound, &e);
    ext_server *health = NULL;
    char hbound[300] = "";
    if (srv && o->health_listen) {
        health = ext_health_start(svc, o->health_listen, hbound, sizeof hbound, &e);
        if (!health) {
            ext_server_stop(srv, 0);
            srv = NULL;
        }
    }
    if (!srv) {
        char buf[2048];
        fprintf(stderr, "dralloc serve: %s\n", err_format(&e, buf, sizeof buf));
        ext_service_free(svc);
        serve_teardown(rt, false);
        return 1;
    }
    if (health) fprintf(stderr, "dralloc serve: health on %s\n", hbound);
    fprintf(stderr, "dralloc serve: listening on %s%s\n", bound,
            rt->tls ? (ext_tls_verifies_clients(rt->tls) ? " (https, client certificates required)" : " (https)") : "");
    fflush(stderr);
    int sig = 0;
    while (sigwait(stop, &sig) != 0) {
    }
    fprintf(stderr, "dralloc serve: %s: finishing requests in flight\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    ext_server_stop(srv, 10000);
    ext_server_stop(health, 0);
    ext_service_free(svc);
    serve_teardown(rt, true);
    fprintf(stderr, "dralloc serve: stopped\n");
    return 0;
}

int cmd_serve(int argc, char **argv) {
    serve_opts o = {.so = {.listen = "127.0.0.1:8888", .conn_timeout_s = EXT_DEFAULT_CONN_TIMEOUT_S,
                           .conn_limit = EXT_DEFAULT_MAX_CONNECTIONS,
                           .request_timeout_ms = EXT_DEFAULT_REQUEST_TIMEOUT_MS},
                    .max_staleness_s = 60, .watch_list = true, .bind_timeout_s = EXT_BIND_TIMEOUT_DEFAULT_S,
                    .choice = DRA_CHOICE_FIRST_FIT, .lease_ns = "kube-system", .lease_name = "dralloc-extender",
                    .max_inflight = EXT_DEFAULT_MAX_INFLIGHT_BYTES};
    ext_config_default(&o.cfg);
    o.cfg.warm_views = true;
    dra_features_default(&o.feat);
    int rc = cmd_flags_parse(&serve_spec, argc, argv, &o);
    if (rc == CMD_PARSE_OK && !serve_check(&o)) rc = 2;
    if (rc == CMD_PARSE_OK) {
        /* the signals go to this thread only: every thread started below inherits the mask */
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGINT);
        pthread_sigmask(SIG_BLOCK, &stop, NULL);
        signal(SIGPIPE, SIG_IGN);
        serve_rt rt = {0};
        if (serve_wire(&o, &rt)) {
            rc = serve_run(&o, &rt, &stop);
        } else {
            serve_teardown(&rt, false);
            rc = 2;
        }
    }
    cmd_flags_free(&serve_spec, &o);
    return rc < 0 ? 0 : rc;
}
