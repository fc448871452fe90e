/* gates_test.c — feature-gate defaults from the kube-apiserver's release (issue #39,
 * extender/gates.h): the table's 1.37 column is dra_features_default; 1.36 differs in
 * DRADeviceTaintRules only, 1.35 in the gates that went beta in 1.36; /version parsed
 * as providers write it; and `dralloc serve --server` against a server that says
 * v1.36.0 logs the release and runs with its gates (kubernetes_feature_enabled on
 * /metrics), --feature-gates on top. */
#include <microhttpd.h>

#include "extender/gates.h"
#include "tests/extender/serve_helpers.h"

static bool gate(const dra_features *f, const char *name) {
    bool on = false;
    cr_assert(dra_features_get(f, name, &on), "no gate %s", name);
    return on;
}

Test(gates, the_1_37_column_is_the_engine_default_and_newer_releases_get_it) {
    dra_features f, d;
    char changed[1024];
    dra_features_default(&d);
    ext_gates_for_release(&f, 37, changed, sizeof changed);
    cr_assert_str_empty(changed, "the table's 1.37 defaults differ from engine/decode/features.c: %s", changed);
    cr_assert_eq(memcmp(&f, &d, sizeof f), 0);
    ext_gates_for_release(&f, 40, changed, sizeof changed);
    cr_assert_str_empty(changed);
}

Test(gates, a_1_36_server_gets_1_36_defaults) {
    dra_features f;
    char changed[1024];
    ext_gates_for_release(&f, 36, changed, sizeof changed);
    cr_assert_str_eq(changed, "DRADeviceTaintRules=false");
    cr_assert(!gate(&f, "DRADeviceTaintRules"));
    cr_assert(gate(&f, "DRADeviceTaints") && gate(&f, "DRAExtendedResource") && gate(&f, "DRAConsumableCapacity") &&
              gate(&f, "DRAPartitionableDevices") && gate(&f, "DRADeviceBindingConditions") &&
              gate(&f, "DRAResourceClaimGranularStatusAuthorization"));
    cr_assert(!gate(&f, "DRAWorkloadResourceClaims"));
}

Test(gates, a_1_35_server_loses_what_went_beta_in_1_36) {
    dra_features f;
    char changed[1024];
    ext_gates_for_release(&f, 35, changed, sizeof changed);
    const char *off[] = {"DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaintRules", "DRADeviceTaints",
                         "DRAExtendedResource", "DRAPartitionableDevices", "DRAResourceClaimGranularStatusAuthorization",
                         "ResourceHealthStatus"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        cr_assert(!gate(&f, off[i]), "%s on for 1.35", off[i]);
        char want[128];
        snprintf(want, sizeof want, "%s=false", off[i]);
        cr_assert(strstr(changed, want), "%s not in %s", want, changed);
    }
    cr_assert(!f.extended_resource && !f.binding_conditions && !f.partitionable && !f.consumable_capacity);
    cr_assert(gate(&f, "DRAPrioritizedList") && gate(&f, "DRAAdminAccess") && gate(&f, "DRASchedulerFilterTimeout"));
}

Test(gates, version_answers_as_providers_write_them) {
    unsigned minor = 0;
    char git[64];
    err e;
    err_clear(&e);
    cr_assert(ext_gates_server_minor("{\"major\":\"1\",\"minor\":\"36\",\"gitVersion\":\"v1.36.0\"}", &minor, git,
                                     sizeof git, &e));
    cr_assert_eq(minor, 36);
    cr_assert_str_eq(git, "v1.36.0");
    cr_assert(ext_gates_server_minor("{\"gitVersion\":\"v1.35.4-gke.1200\"}", &minor, git, sizeof git, &e));
    cr_assert_eq(minor, 35);
    cr_assert(ext_gates_server_minor("{\"major\":\"1\",\"minor\":\"36+\",\"gitVersion\":\"weird\"}", &minor, git,
                                     sizeof git, &e));
    cr_assert_eq(minor, 36);
    cr_assert_not(ext_gates_server_minor("{\"kind\":\"Status\"}", &minor, git, sizeof git, &e));
    cr_assert(strstr(e.msg, "/version names no Kubernetes 1.x release"), "%s", e.msg);
    cr_assert_not(ext_gates_server_minor("not json", &minor, git, sizeof git, &e));
}

/* ---- end to end: a kube-apiserver that only answers /version ------------------------------ */

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    (void)method, (void)version, (void)upload, (void)upload_size, (void)con_cls;
    const char *git = cls;
    char body[256];
    unsigned status = 200;
    if (!strcmp(url, "/version"))
        snprintf(body, sizeof body, "{\"major\":\"1\",\"minor\":\"36\",\"gitVersion\":\"%s\",\"platform\":\"linux/amd64\"}",
                 git);
    else   /* the lists and watches: the cache stays unready, which this test does not need */
        status = 404, snprintf(body, sizeof body, "{\"kind\":\"Status\",\"code\":404}");
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static char *metrics_of(int hport) {
    srv hs = {.port = hport};
    char *m;
    cr_assert_eq(th_http(&hs, "GET", "/metrics", NULL, &m), 200);
    return m;
}

Test(gates, serve_against_a_1_36_server_runs_with_its_defaults) {
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, answer,
                                            "v1.36.0", MHD_OPTION_END);
    cr_assert(d);
    unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u", port);
    srv s;
    int hport = 0;
    const char *args[] = {"--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0", "--server", url, NULL};
    srv_start_with(&s, args, NULL, &hport);
    char *log = th_read_file(s.log, NULL);
    cr_assert(strstr(log, "feature gates: kube-apiserver v1.36.0: Kubernetes 1.36 defaults (differing from 1.37's: "
                          "DRADeviceTaintRules=false)"),
              "%s", log);
    free(log);
    char *m = metrics_of(hport);
    cr_assert(strstr(m, "kubernetes_feature_enabled{name=\"DRADeviceTaintRules\"} 0\n") &&
                  strstr(m, "kubernetes_feature_enabled{name=\"DRADeviceTaints\"} 1\n"),
              "%s", m);
    free(m);
    cr_assert_eq(srv_stop(&s), 0);

    /* --feature-gates on top of the release's defaults */
    const char *args2[] = {"--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0", "--server", url,
                           "--feature-gates", "DRADeviceTaints=false", NULL};
    srv_start_with(&s, args2, NULL, &hport);
    log = th_read_file(s.log, NULL);
    cr_assert(strstr(log, "Kubernetes 1.36 defaults (differing from 1.37's: DRADeviceTaintRules=false), "
                          "--feature-gates DRADeviceTaints=false"),
              "%s", log);
    free(log);
    m = metrics_of(hport);
    cr_assert(strstr(m, "kubernetes_feature_enabled{name=\"DRADeviceTaintRules\"} 0\n") &&
                  strstr(m, "kubernetes_feature_enabled{name=\"DRADeviceTaints\"} 0\n"),
              "%s", m);
    free(m);
    cr_assert_eq(srv_stop(&s), 0);
    MHD_stop_daemon(d);
}
