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

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "extender/auth.h"
#include "extender/bind.h"
#include "extender/budget.h"
#include "extender/extender.h"
#include "extender/gates.h"
#include "extender/kube.h"
#include "extender/lease.h"
#include "extender/listen.h"
#include "extender/objcache.h"
#include "extender/pending.h"
#include "extender/tls.h"
#include "extender/watch.h"
#include "extender/wire.h"

static int usage(FILE *f) {
    fprintf(f,
            "usage: dralloc serve [--snapshot PATH...] [--listen HOST:PORT] [--threads N] [options]\n\n"
            "  --snapshot PATH...     files or directories of objects (YAML/JSON, Lists), as allocate -f;\n"
            "                         without it the server starts empty (not ready) until POST /objects\n"
            "  --listen HOST:PORT     address to serve on (default 127.0.0.1:8888; port 0: any free port)\n"
            "  --threads N            HTTP threads and node-deciding workers (default: one per core)\n"
            "  --workers N            node-deciding workers only (default: --threads)\n"
            "  --filter-budget DUR    time to decide the nodes of one request, Go duration (default 2s);\n"
            "                         nodes not decided by then fail with \"timed out trying to allocate devices\"\n"
            "  --score MODE           /prioritize scores: binpack (default), spread or none\n"
            "  --device-choice C      the devices allocated on a node: first-fit (default, as kube-scheduler's\n"
            "                         DynamicResources plugin) or best-fit (of the allocations that fit, the\n"
            "                         one leaving the node least fragmented): what /bind writes in bind\n"
            "                         mode; /filter and /prioritize answer as with first-fit\n"
            "  --feature-gates SPEC   DRAPrioritizedList=true,... (Kubernetes 1.37 defaults; in live mode the\n"
            "                         defaults of the kube-apiserver's release, from its /version, these on top)\n"
            "  --max-body SIZE        largest request body, bytes or with Ki/Mi suffix (default 16Mi; 413 beyond)\n"
            "  --max-depth N          JSON nesting limit (default %d; 400 beyond)\n"
            "  --max-nodes N          nodes per request (default %d; 400 beyond)\n"
            "  --conn-timeout DUR     close idle connections after this long (default 10s)\n"
            "  --request-timeout DUR  a request's headers and body must arrive, and its answer be read,\n"
            "                         within this, counted from the connection's opening or previous answer\n"
            "                         (default 30s; longer than --conn-timeout; 0: none): late headers or\n"
            "                         answers are cut, a late body answered 408\n"
            "  --max-connections N    simultaneous connections (default 1000); past it new ones are closed\n"
            "  --max-inflight-bytes SIZE  request bytes held at once across connections (default 128Mi);\n"
            "                         past it 503 with Retry-After\n"
            "  --health-listen HOST:PORT  /healthz, /readyz and /metrics on their own listener, thread and\n"
            "                         connections (plain HTTP, for probes); unaffected by the main listener's load\n"
            "  -v, --verbose          log one line per filter/prioritize request\n\n"
            "Serving securely\n"
            "  --tls-cert-file FILE   serve HTTPS with this PEM certificate (chain), with\n"
            "  --tls-private-key-file FILE  its PEM key; both are loaded again when they change\n"
            "  --client-ca-file FILE  require client certificates signed by this PEM CA (handshake refused\n"
            "                         otherwise): kube-scheduler's extender tlsConfig certFile/keyFile\n"
            "  --client-allowed-names NAME,...  with --client-ca-file: the client certificate's CN or one of\n"
            "                         its DNS names must be one of these (as kube-apiserver's\n"
            "                         --requestheader-allowed-names); handshake refused otherwise\n"
            "  --tls-min-version V    VersionTLS12 (default) or VersionTLS13: the lowest TLS version offered\n"
            "  --allow-unauthenticated  let /bind, POST /objects and DELETE /objects answer on a --listen\n"
            "                         beyond loopback without --client-ca-file (else 403)\n\n"
            "Live mode (instead of --snapshot): list+watch a kube-apiserver\n"
            "  --kubeconfig FILE      kubeconfig (with --context NAME); in a pod the service account is used\n"
            "                         when KUBERNETES_SERVICE_HOST is set\n"
            "  --server URL           the API server (http:// for test servers), with --token-file F,\n"
            "                         --ca-file F, --insecure-skip-tls-verify\n"
            "  --max-staleness DUR    /readyz turns 503 once a kind cannot be watched this long (default 60s)\n"
            "  --watch-list=false     paged lists only (default: streaming lists, sendInitialEvents, where\n"
            "                         the server offers them); PodGroups are watched with\n"
            "                         --feature-gates DRAWorkloadResourceClaims=true\n"
            "  --bind                 bind mode: /bind allocates, writes the claims' status and binds the pod\n"
            "  --preempt-verb         serve /preempt (kube-scheduler's preemptVerb): kube-scheduler's victims completed\n"
            "                         with the pods whose devices the pending pod needs; keeps the objects' text\n"
            "                         (for a profile without the DynamicResources plugin: deploy/)\n"
            "  --bind-timeout DUR     kube-scheduler's httpTimeout for the extender (default 5s, as deploy/bind):\n"
            "                         a /bind not writing by then gives its devices back and answers an error\n"
            "  --bind-threads N       threads writing binds to the API server (default 64)\n"
            "  --leader-elect         one active replica of several (a coordination.k8s.io Lease), with\n"
            "                         --lease-namespace NS (kube-system) and --lease-name NAME (dralloc-extender);\n"
            "                         --leader-elect-lease-duration DUR (15s), --leader-elect-renew-deadline DUR\n"
            "                         (10s), --leader-elect-retry-period DUR (2s); a standby is ready, and its /bind\n"
            "                         answers an Error naming the leader\n\n"
            "Options take their value as --name value or --name=value (as kube components do).\n"
            "Routes: POST /filter /prioritize /bind (kube-scheduler extender verbs; any URL prefix),\n"
            "GET /healthz /readyz /metrics /debug/cache, POST /objects, DELETE /objects/KIND/NAMESPACE/NAME.\n",
            EXT_DEFAULT_MAX_DEPTH, EXT_DEFAULT_MAX_NODES);
    return f == stdout ? 0 : 2;
}

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

static int serve_main(int argc, char **argv) {
    ext_config cfg;
    ext_config_default(&cfg);
    ext_server_opts so = {.listen = "127.0.0.1:8888", .conn_timeout_s = EXT_DEFAULT_CONN_TIMEOUT_S,
                          .conn_limit = EXT_DEFAULT_MAX_CONNECTIONS, .request_timeout_ms = EXT_DEFAULT_REQUEST_TIMEOUT_MS};
    dra_features feat;
    dra_features_default(&feat);
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    size_t npaths = 0;
    unsigned long long v;
    bool workers_set = false;
    ext_kube_opts ko = {0};
    double max_staleness_s = 60;
    bool bind_mode = false, leader_elect = false, watch_list = true, preempt_verb = false;
    double bind_timeout_s = EXT_BIND_TIMEOUT_DEFAULT_S;
    dra_device_choice choice = DRA_CHOICE_FIRST_FIT;   /* --device-choice */
    const char *lease_ns = "kube-system", *lease_name = "dralloc-extender";
    const char *health_listen = NULL;
    ext_lease_opts lo = {0};
    ext_tls_opts to = {0};
    bool allow_unauth = false;
    char gates_buf[1024] = "";       /* every --feature-gates, for live mode's release defaults */
    const char *gates_spec = NULL;
    size_t max_inflight = EXT_DEFAULT_MAX_INFLIGHT_BYTES;
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            free(paths);
            return usage(stdout);
        } else if (!strcmp(a, "--snapshot") || !strcmp(a, "-f")) {
            if (!val || val[0] == '-') {
                fprintf(stderr, "dralloc serve: %s needs a path\n", a);
                goto out;
            }
            /* PATH... : every following argument up to the next option */
            while (i + 1 < argc && argv[i + 1][0] != '-') paths[npaths++] = argv[++i];
        } else if (!strcmp(a, "--listen")) {
            if (!val) {
                fprintf(stderr, "dralloc serve: --listen needs HOST:PORT\n");
                goto out;
            }
            so.listen = val, i++;
        } else if (!strcmp(a, "--threads")) {
            if (!parse_uint(a, val, 1, 1024, &v)) goto out;
            so.threads = (unsigned)v, i++;
            if (!workers_set) cfg.workers = (unsigned)v;
        } else if (!strcmp(a, "--workers")) {
            if (!parse_uint(a, val, 1, 1024, &v)) goto out;
            cfg.workers = (unsigned)v, workers_set = true, i++;
        } else if (!strcmp(a, "--max-body")) {
            if (!parse_uint(a, val, 1, 1ull << 32, &v)) goto out;
            cfg.max_body = (size_t)v, i++;
        } else if (!strcmp(a, "--max-depth")) {
            if (!parse_uint(a, val, 2, 2000, &v)) goto out;
            cfg.max_depth = (unsigned)v, i++;
        } else if (!strcmp(a, "--max-nodes")) {
            if (!parse_uint(a, val, 1, 10000000, &v)) goto out;
            cfg.max_nodes = (size_t)v, i++;
        } else if (!strcmp(a, "--max-inflight-bytes")) {
            if (!parse_uint(a, val, 1, 1ull << 40, &v)) goto out;
            max_inflight = (size_t)v, i++;
        } else if (!strcmp(a, "--max-connections")) {
            if (!parse_uint(a, val, 1, 100000, &v)) goto out;
            so.conn_limit = (unsigned)v, i++;
        } else if (!strcmp(a, "--filter-budget") || !strcmp(a, "--conn-timeout") || !strcmp(a, "--request-timeout")) {
            uint64_t ns;
            if (!val || !ext_duration_parse(val, &ns) || ns > 86400000000000ull) {
                fprintf(stderr, "dralloc serve: %s needs a Go duration (2s, 500ms, 1m) up to 24h\n", a);
                goto out;
            }
            if (!strcmp(a, "--filter-budget")) cfg.filter_budget_ns = ns;
            else if (!strcmp(a, "--conn-timeout")) so.conn_timeout_s = (unsigned)((ns + 999999999) / 1000000000);
            else so.request_timeout_ms = (unsigned)((ns + 999999) / 1000000);
            i++;
        } else if (!strcmp(a, "--score")) {
            if (!val || !dra_score_mode_parse(val, &cfg.score)) {
                fprintf(stderr, "dralloc serve: --score needs binpack, spread or none\n");
                goto out;
            }
            i++;
        } else if (!strcmp(a, "--device-choice")) {
            dra_device_choice dc;
            if (!val || !dra_device_choice_parse(val, &dc)) {
                fprintf(stderr, "dralloc serve: --device-choice needs first-fit or best-fit\n");
                goto out;
            }
            choice = dc;   /* the binder's: the allocation it writes is the one kept */
            i++;
        } else if (!strcmp(a, "--feature-gates")) {
            err e;
            err_clear(&e);
            if (!val || !dra_features_parse(&feat, val, &e)) {
                char buf[1200];
                fprintf(stderr, "dralloc serve: --feature-gates: %s\n", val ? err_format(&e, buf, sizeof buf) : "needs A=true,B=false");
                goto out;
            }
            size_t used = strlen(gates_buf);
            snprintf(gates_buf + used, sizeof gates_buf - used, "%s%s", used ? "," : "", val);
            gates_spec = gates_buf;
            i++;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            cfg.verbose = true;
        } else if (!strcmp(a, "--kubeconfig") || !strcmp(a, "--context") || !strcmp(a, "--server") ||
                   !strcmp(a, "--token-file") || !strcmp(a, "--ca-file") || !strcmp(a, "--lease-namespace") ||
                   !strcmp(a, "--lease-name") || !strcmp(a, "--tls-cert-file") ||
                   !strcmp(a, "--tls-private-key-file") || !strcmp(a, "--client-ca-file") ||
                   !strcmp(a, "--health-listen") || !strcmp(a, "--tls-min-version") ||
                   !strcmp(a, "--client-allowed-names")) {
            if (!val || !*val) {
                fprintf(stderr, "dralloc serve: %s needs a value\n", a);
                goto out;
            }
            if (!strcmp(a, "--kubeconfig")) ko.kubeconfig = val;
            else if (!strcmp(a, "--context")) ko.context = val;
            else if (!strcmp(a, "--server")) ko.server = val;
            else if (!strcmp(a, "--token-file")) ko.token_file = val;
            else if (!strcmp(a, "--ca-file")) ko.ca_file = val;
            else if (!strcmp(a, "--lease-namespace")) lease_ns = val;
            else if (!strcmp(a, "--tls-cert-file")) to.cert_file = val;
            else if (!strcmp(a, "--tls-private-key-file")) to.key_file = val;
            else if (!strcmp(a, "--client-ca-file")) to.client_ca_file = val;
            else if (!strcmp(a, "--health-listen")) health_listen = val;
            else if (!strcmp(a, "--tls-min-version")) to.min_version = val;
            else if (!strcmp(a, "--client-allowed-names")) to.allowed_names = val;
            else lease_name = val;
            i++;
        } else if (!strcmp(a, "--insecure-skip-tls-verify")) {
            ko.insecure = true;
        } else if (!strcmp(a, "--leader-elect-lease-duration") || !strcmp(a, "--leader-elect-renew-deadline") ||
                   !strcmp(a, "--leader-elect-retry-period")) {
            uint64_t ns;
            if (!val || !ext_duration_parse(val, &ns) || !ns || ns > 3600000000000ull) {
                fprintf(stderr, "dralloc serve: %s needs a Go duration (15s, 2s) up to 1h\n", a);
                goto out;
            }
            double sec = (double)ns / 1e9;
            if (!strcmp(a, "--leader-elect-lease-duration")) lo.duration_s = sec;
            else if (!strcmp(a, "--leader-elect-renew-deadline")) lo.renew_deadline_s = sec;
            else lo.retry_s = sec;
            i++;
        } else if (!strcmp(a, "--max-staleness")) {
            uint64_t ns;
            if (!val || !ext_duration_parse(val, &ns) || !ns) {
                fprintf(stderr, "dralloc serve: --max-staleness needs a Go duration (60s, 2m)\n");
                goto out;
            }
            max_staleness_s = (double)ns / 1e9;
            i++;
        } else if (!strcmp(a, "--watch-list") || !strcmp(a, "--watch-list=true") || !strcmp(a, "--watch-list=false")) {
            watch_list = strcmp(a, "--watch-list=false") != 0;
        } else if (!strcmp(a, "--allow-unauthenticated")) {
            allow_unauth = true;
        } else if (!strcmp(a, "--bind-timeout")) {
            uint64_t ns;
            if (!val || !ext_duration_parse(val, &ns) || !ns || ns > 3600000000000ull) {
                fprintf(stderr, "dralloc serve: --bind-timeout needs a Go duration (5s, 500ms) up to 1h\n");
                goto out;
            }
            bind_timeout_s = (double)ns / 1e9;
            i++;
        } else if (!strcmp(a, "--bind-threads")) {
            if (!parse_uint(a, val, 1, 1024, &v)) goto out;
            so.offload_threads = (unsigned)v, i++;
        } else if (!strcmp(a, "--bind")) {
            bind_mode = true;
        } else if (!strcmp(a, "--preempt-verb")) {
            preempt_verb = true;
        } else if (!strcmp(a, "--leader-elect")) {
            leader_elect = true;
        } else {
            fprintf(stderr, "dralloc serve: unexpected argument '%s'\n\n", a);
            usage(stderr);
            goto out;
        }
    }

    /* the addresses now: a bad one is a usage error, before anything starts */
    ext_addr listen_addr, health_addr;
    err le;
    err_clear(&le);
    if (!ext_listen_parse("--listen", so.listen, &listen_addr, &le) ||
        (health_listen && !ext_listen_parse("--health-listen", health_listen, &health_addr, &le))) {
        fprintf(stderr, "dralloc serve: %s\n", le.msg);
        goto out;
    }
    {
        /* as client-go's leaderelection requires: duration > renew deadline > retry period */
        double d = lo.duration_s > 0 ? lo.duration_s : 15, r = lo.renew_deadline_s > 0 ? lo.renew_deadline_s : 10,
               p = lo.retry_s > 0 ? lo.retry_s : 2;
        if (!(d > r && r > p)) {
            fprintf(stderr, "dralloc serve: want --leader-elect-lease-duration (%gs) > --leader-elect-renew-deadline "
                            "(%gs) > --leader-elect-retry-period (%gs)\n", d, r, p);
            goto out;
        }
    }
    if ((to.cert_file || to.key_file || to.client_ca_file || to.min_version || to.allowed_names) &&
        !(to.cert_file && to.key_file)) {
        fprintf(stderr, "dralloc serve: %s needs --tls-cert-file and --tls-private-key-file\n",
                to.client_ca_file  ? "--client-ca-file"
                : to.min_version   ? "--tls-min-version"
                : to.allowed_names ? "--client-allowed-names"
                : to.cert_file     ? "--tls-cert-file"
                                   : "--tls-private-key-file");
        goto out;
    }
    if (so.request_timeout_ms && so.conn_timeout_s && so.request_timeout_ms <= so.conn_timeout_s * 1000u) {
        fprintf(stderr, "dralloc serve: --request-timeout must be longer than --conn-timeout (%us): it counts the "
                        "keep-alive wait before a request\n", so.conn_timeout_s);
        goto out;
    }

    /* the signals go to this thread only: every thread started below inherits the mask */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    bool live = ko.kubeconfig || ko.server || (!npaths && host && *host);
    if (live && npaths) {
        fprintf(stderr, "dralloc serve: --snapshot and a kube-apiserver (--kubeconfig/--server) exclude each other\n");
        goto out;
    }
    if (!live && (bind_mode || leader_elect)) {
        fprintf(stderr, "dralloc serve: %s needs a kube-apiserver (--kubeconfig, --server, or in-cluster)\n",
                bind_mode ? "--bind" : "--leader-elect");
        goto out;
    }
    if (ko.insecure)
        fprintf(stderr, "dralloc serve: WARNING: --insecure-skip-tls-verify: the kube-apiserver's certificate is not "
                        "checked; anyone on the path can answer as the API server\n");
    ext_tls *tls = NULL;
    if (to.cert_file) {
        err te;
        err_clear(&te);
        tls = ext_tls_new(&to, &te);
        if (!tls) {
            fprintf(stderr, "dralloc serve: %s\n", te.msg);
            goto out;
        }
    }
    /* secure by default (auth.h): who may bind and write objects */
    char *guard = ext_auth_guard(so.listen, ext_addr_is_loopback(&listen_addr), tls && ext_tls_verifies_clients(tls),
                                 allow_unauth);
    if (allow_unauth && !ext_addr_is_loopback(&listen_addr) && !(tls && ext_tls_verifies_clients(tls)))
        fprintf(stderr, "dralloc serve: WARNING: --allow-unauthenticated: /bind and /objects on %s answer any client "
                        "that reaches the port, without a client certificate; bind mode binds pods with this "
                        "pod's service account\n", so.listen);
    else if (guard)
        fprintf(stderr, "dralloc serve: %s listens beyond loopback without --client-ca-file: /bind and /objects "
                        "answer 403 (give --client-ca-file, or --allow-unauthenticated)\n", so.listen);
    ext_budget *budget = ext_budget_new(max_inflight);
    cfg.write_guard = guard;
    cfg.budget = budget;
    cfg.tls = tls;
    cfg.features = &feat;   /* live mode: gates_from_server sets it below, before the service starts */
    so.tls = tls;
    so.budget = budget;
    ext_kube *kube = NULL;
    if (live) {
        err ke;
        err_clear(&ke);
        kube = ext_kube_new(&ko, &ke);
        if (!kube) {
            fprintf(stderr, "dralloc serve: %s\n", ke.msg);
            goto out_serving;
        }
    }
    if (live) gates_from_server(&ko, gates_spec, &feat);
    /* the preempt verb reads victims' priorities and claims' reservations from the
     * objects' text: kept only when asked for (it costs the text of every object) */
    dra_store *st = dra_store_new_with(&feat, &(dra_store_opts){.keep_text = preempt_verb});
    ext_watch *watch = NULL;
    ext_lease *lease = NULL;
    ext_binder *binder = NULL;
    ext_pending *pending = NULL;   /* bind mode: claims written vs older versions the watch brings */
    ext_objcache *claims = NULL;   /* bind mode: the claims' JSON, so that a write needs no GET first */
    if (live) {
        if (bind_mode) pending = ext_pending_new(2 * max_staleness_s), claims = ext_objcache_new();
        ext_watch_opts wo = {.max_staleness_s = max_staleness_s, .no_watch_list = !watch_list,
                             .podgroups = feat.workload_claims, .verbose = cfg.verbose, .pending = pending,
                             .claims = claims};
        watch = ext_watch_start(kube, st, &wo);
        cfg.watch = watch;
        if (leader_elect) {
            lo.ns = lease_ns, lo.name = lease_name;
            lease = ext_lease_start(kube, &lo);
            cfg.lease = lease;
        }
        if (bind_mode) {
            cfg.binder = binder = ext_binder_new(kube, st, pending);
            ext_binder_set_device_choice(binder, choice);
            ext_binder_set_claims(binder, claims);
            ext_binder_set_timeout(binder, bind_timeout_s);
        }
        fprintf(stderr, "dralloc serve: following %s%s%s\n", ext_kube_server(kube), bind_mode ? " (bind mode)" : "",
                leader_elect ? " (leader election)" : "");
    } else if (npaths) {
        err e;
        err_clear(&e);
        uint64_t t0 = dra_monotonic_ns();
        uint64_t gen = dra_store_load_paths(st, paths, npaths, &e);
        if (!gen) {
            char buf[2048];
            fprintf(stderr, "dralloc serve: %s\n", err_format(&e, buf, sizeof buf));
            dra_store_free(st);
            goto out_serving;
        }
        fprintf(stderr, "dralloc serve: snapshot generation %llu loaded in %.1f ms\n", (unsigned long long)gen,
                (double)(dra_monotonic_ns() - t0) / 1e6);
    } else {
        fprintf(stderr, "dralloc serve: no --snapshot: not ready until POST /objects\n");
    }
    ext_service *svc = ext_service_new(st, &cfg);
    char bound[300];
    err e;
    err_clear(&e);
    ext_server *srv = ext_server_start(svc, &so, bound, sizeof bound, &e);
    ext_server *health = NULL;
    char hbound[300] = "";
    if (srv && health_listen) {
        health = ext_health_start(svc, health_listen, hbound, sizeof hbound, &e);
        if (!health) {
            ext_server_stop(srv, 0);
            srv = NULL;
        }
    }
    if (!srv) {
        char buf[2048];
        fprintf(stderr, "dralloc serve: %s\n", err_format(&e, buf, sizeof buf));
        ext_service_free(svc);
        ext_lease_stop(lease, false);
        ext_watch_stop(watch);
        ext_binder_free(binder);
        ext_pending_free(pending);
        ext_objcache_free(claims);
        ext_kube_free(kube);
        dra_store_free(st);
        rc = 1;
        goto out_serving;
    }
    if (health) fprintf(stderr, "dralloc serve: health on %s\n", hbound);
    fprintf(stderr, "dralloc serve: listening on %s%s\n", bound,
            tls ? (ext_tls_verifies_clients(tls) ? " (https, client certificates required)" : " (https)") : "");
    fflush(stderr);
    int sig = 0;
    while (sigwait(&stop, &sig) != 0) {
    }
    fprintf(stderr, "dralloc serve: %s: finishing requests in flight\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    ext_server_stop(srv, 10000);
    ext_server_stop(health, 0);
    ext_service_free(svc);
    ext_lease_stop(lease, true);
    ext_watch_stop(watch);
    ext_binder_free(binder);
    ext_pending_free(pending);
    ext_objcache_free(claims);
    ext_kube_free(kube);
    dra_store_free(st);
    fprintf(stderr, "dralloc serve: stopped\n");
    rc = 0;
out_serving:
    ext_budget_free(budget);
    ext_tls_free(tls);
    free(guard);
out:
    free(paths);
    return rc;
}

/* kube components take --name=value as well as --name value (pflag), and deploy/ writes
 * the first: each "--name=value" becomes "--name" "value" before the options are read.
 * --watch-list=false stays whole (a boolean, read as written). */
int cmd_serve(int argc, char **argv) {
    char **args = calloc(2 * (size_t)argc + 1, sizeof *args), **copies = calloc((size_t)argc + 1, sizeof *copies);
    if (!args || !copies) {
        free(args);
        free(copies);
        fprintf(stderr, "dralloc serve: out of memory\n");
        return 1;
    }
    int n = 0, nc = 0;
    for (int i = 0; i < argc; i++) {
        const char *eq = i > 0 && !strncmp(argv[i], "--", 2) ? strchr(argv[i], '=') : NULL;
        if (!eq || !strncmp(argv[i], "--watch-list=", 13)) {
            args[n++] = argv[i];
            continue;
        }
        char *c = copies[nc++] = strdup(argv[i]);
        if (!c) break;
        c[eq - argv[i]] = '\0';
        args[n++] = c;
        args[n++] = c + (eq - argv[i]) + 1;
    }
    int rc = serve_main(n, args);
    for (int i = 0; i < nc; i++) free(copies[i]);
    free(copies);
    free(args);
    return rc;
}
