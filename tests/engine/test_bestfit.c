/* test_bestfit.c — best-fit device choice (engine/alloc/bestfit.c).
 *
 *   default      a new context is first-fit; the conformance corpus gives the same
 *                outcome kind (and error text) under best-fit.
 *   random       test_differential.c's generator (plus pcieRoot / NUMA attributes):
 *                best-fit allocates exactly when first-fit does, with the same error
 *                or unsatisfiable outcome otherwise, and what it returns is an
 *                allocation Kubernetes' search accepts: the case reduced to exactly
 *                the chosen devices per request (a first selector on a per-request
 *                attribute the chosen devices get) allocates, first-fit, the same
 *                results.
 *   placement    the MIG node of testdata/bestfit (a 1g, then a whole GPU), the
 *                fullest counter set, pcieRoot and NUMA groups, a shared device with
 *                consumable capacity, a pod's two claims, firstAvailable order.
 *   bounds       a flat node costs nothing extra; a pathological enumeration stays
 *                within its step budget and a few ms; a cancelled call times out.
 *   cli          `dralloc allocate --device-choice`.
 *   snapshot     dra_pod_fit_allocation (what /bind writes) chooses; dra_pod_fit
 *                (/filter, /prioritize) answers and scores as first-fit.
 *
 * By hand: DRALLOC_BESTFIT_CASES=50000 build/tests/test_engine --filter 'bestfit/ *'
 * (without the space). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <libgen.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/engine/helpers.h"
#include "tests/engine/search_gen.h"

/* test_differential.c's generator: the case of one seed. */
json_t *diff_gen_case(uint64_t seed);

enum { BESTFIT_FAST = 2000 };

/* sg_run under a device choice. */
static void run_choice(const json_t *c, dra_device_choice ch, sg_out *o) { sg_run_choice(c, false, 0, ch, o); }

/* ---- default ---------------------------------------------------------------------- */

Test(bestfit, default_is_first_fit) {
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    cr_assert_eq(dra_alloc_ctx_device_choice(x), DRA_CHOICE_FIRST_FIT);
    dra_alloc_ctx_set_device_choice(x, DRA_CHOICE_BEST_FIT);
    cr_assert_eq(dra_alloc_ctx_device_choice(x), DRA_CHOICE_BEST_FIT);
    dra_alloc_ctx_free(x);
    dra_device_choice c;
    cr_assert(dra_device_choice_parse("best-fit", &c) && c == DRA_CHOICE_BEST_FIT);
    cr_assert(dra_device_choice_parse("first-fit", &c) && c == DRA_CHOICE_FIRST_FIT);
    cr_assert(!dra_device_choice_parse("worst-fit", &c));
    cr_assert_str_eq(dra_device_choice_name(DRA_CHOICE_BEST_FIT), "best-fit");
}

static const char *outcome_kind(const json_t *o) {
    return json_object_get(o, "allocations") ? "allocations" : json_object_get(o, "unsatisfiable") ? "unsatisfiable" : "error";
}

/* The shared corpus when present, and always the upstream cases this repository
 * carries (testdata/upstream): a clone without ../shared still checks 73 cases. */
Test(bestfit, conformance_corpus_same_outcome_kind) {
    const char *const dirs[] = {"../shared/conformance/allocator/cases", "testdata/upstream"};
    int n = 0, differ = 0;
    for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", DRALLOC_SOURCE_DIR, dirs[k]);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strstr(de->d_name, ".json")) continue;
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            json_error_t je;
            json_t *c = json_load_file(path, 0, &je);
            cr_assert_not_null(c, "%s: %s", path, je.text);
            err e;
            err_clear(&e);
            json_t *first = dra_fixture_run(c, &e);
            json_t *best = dra_fixture_run_choice(c, DRA_CHOICE_BEST_FIT, &e);
            if (first && best) {
                cr_assert_str_eq(outcome_kind(first), outcome_kind(best), "%s", de->d_name);
                if (!strcmp(outcome_kind(first), "error"))
                    cr_assert_str_eq(json_string_value(json_object_get(first, "error")),
                                     json_string_value(json_object_get(best, "error")), "%s", de->d_name);
                differ += !json_equal(first, best);
                n++;
            } else {
                cr_assert(!first && !best, "%s: malformed under one choice only", de->d_name);
            }
            json_decref(first);
            json_decref(best);
            json_decref(c);
        }
        closedir(d);
    }
    cr_log_info("conformance: %d cases, best-fit chose other devices in %d", n, differ);
    cr_assert_geq(n, 70);
}

/* ---- random cases ------------------------------------------------------------------ */

static uint64_t aug_state;
static uint32_t aug_rnd(uint32_t n) {
    aug_state ^= aug_state >> 12;
    aug_state ^= aug_state << 25;
    aug_state ^= aug_state >> 27;
    return (uint32_t)((aug_state * 0x2545F4914F6CDD1Dull) >> 33) % n;
}

/* Topology for best-fit to see: pcieRoot on some GPUs, a numa attribute on some. */
static void add_topology(json_t *c, uint64_t seed) {
    aug_state = seed * 0xD1B54A32D192ED03ull + 7;
    json_t *slices = json_object_get(c, "slices"), *s;
    size_t i, j;
    json_array_foreach(slices, i, s) {
        json_t *dev;
        json_array_foreach(json_object_get(json_object_get(s, "spec"), "devices"), j, dev) {
            json_t *at = json_object_get(dev, "attributes");
            if (aug_rnd(3)) {
                char root[32];
                snprintf(root, sizeof root, "pci000%u:00", aug_rnd(2));
                json_object_set_new(at, "resource.kubernetes.io/pcieRoot", json_pack("{s:s}", "string", root));
            }
            if (!aug_rnd(3)) json_object_set_new(at, "numa", json_pack("{s:i}", "int", (int)aug_rnd(2)));
        }
    }
}

static json_t *find_device(json_t *c, const char *driver, const char *pool, const char *name) {
    json_t *s, *d;
    size_t i, j;
    json_array_foreach(json_object_get(c, "slices"), i, s) {
        const json_t *spec = json_object_get(s, "spec");
        if (strcmp(json_string_value(json_object_get(spec, "driver")), driver) ||
            strcmp(json_string_value(json_object_get(json_object_get(spec, "pool"), "name")), pool))
            continue;
        json_array_foreach(json_object_get(spec, "devices"), j, d)
            if (!strcmp(json_string_value(json_object_get(d, "name")), name)) return d;
    }
    return NULL;
}

static void prepend_selector(json_t *spec, const char *expr) {
    json_t *sels = json_object_get(spec, "selectors");
    if (!sels) json_object_set_new(spec, "selectors", sels = json_array());
    json_array_insert_new(sels, 0, json_pack("{s:{s:s}}", "cel", "expression", expr));
}

/* The case with every request restricted to the devices the allocation gave it:
 * each chosen device gets a bool attribute pick_<claim>_<request>, each request a
 * first selector asking for it (the other subrequests of a firstAvailable request:
 * `false`), so nothing else is selectable and no other selector is evaluated on a
 * device not chosen. */
static json_t *reduce_to(const json_t *c0, const char *alloc_text) {
    json_t *c = json_deep_copy(c0);
    json_t *allocs = json_loads(alloc_text, 0, NULL);
    cr_assert_not_null(allocs);
    json_t *claims = json_object_get(c, "claims");
    for (size_t ci = 0; ci < json_array_size(allocs); ci++) {
        json_t *res = json_object_get(json_object_get(json_array_get(allocs, ci), "devices"), "results"), *r;
        json_t *chosen_sub = json_object();   /* request → subrequest */
        size_t i;
        json_array_foreach(res, i, r) {
            char req[128], attr[160];
            snprintf(req, sizeof req, "%s", json_string_value(json_object_get(r, "request")));
            char *sl = strchr(req, '/');
            if (sl) {
                *sl = '\0';
                json_object_set_new(chosen_sub, req, json_string(sl + 1));
            }
            snprintf(attr, sizeof attr, "pick_%zu_%s", ci, req);
            json_t *d = find_device(c, json_string_value(json_object_get(r, "driver")),
                                    json_string_value(json_object_get(r, "pool")),
                                    json_string_value(json_object_get(r, "device")));
            cr_assert_not_null(d, "result device %s not in the case", json_string_value(json_object_get(r, "device")));
            json_object_set_new(json_object_get(d, "attributes"), attr, json_pack("{s:b}", "bool", 1));
        }
        json_t *reqs = json_object_get(json_object_get(json_object_get(json_array_get(claims, ci), "spec"), "devices"),
                                       "requests");
        json_array_foreach(reqs, i, r) {
            const char *name = json_string_value(json_object_get(r, "name"));
            char expr[200];
            snprintf(expr, sizeof expr, "has(device.attributes[device.driver].pick_%zu_%s)", ci, name);
            json_t *ex = json_object_get(r, "exactly"), *sub;
            if (ex) {
                prepend_selector(ex, expr);
                continue;
            }
            const char *want = json_string_value(json_object_get(chosen_sub, name));
            size_t k;
            json_array_foreach(json_object_get(r, "firstAvailable"), k, sub)
                prepend_selector(sub, want && !strcmp(json_string_value(json_object_get(sub, "name")), want) ? expr : "false");
        }
        json_decref(chosen_sub);
    }
    json_decref(allocs);
    return c;
}

Test(bestfit, random_cases_valid_and_same_satisfiability, .timeout = 600) {
    const char *n_env = getenv("DRALLOC_BESTFIT_CASES"), *s_env = getenv("DRALLOC_BESTFIT_SEED");
    uint64_t n = n_env ? strtoull(n_env, NULL, 10) : BESTFIT_FAST, first = s_env ? strtoull(s_env, NULL, 10) : 1;
    uint64_t ok = 0, unsat = 0, errors = 0, differ = 0, timeouts = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t seed = first + i;
        json_t *c = diff_gen_case(seed);
        add_topology(c, seed);
        sg_out ff, bf;
        run_choice(c, DRA_CHOICE_FIRST_FIT, &ff);
        run_choice(c, DRA_CHOICE_BEST_FIT, &bf);
        if (ff.status != bf.status || (ff.status != DRA_ALLOC_OK && strcmp(ff.text, bf.text))) {
            char *dump = json_dumps(c, JSON_INDENT(1));
            fprintf(stderr, "seed %llu:\n%s\n", (unsigned long long)seed, dump);
            free(dump);
        }
        cr_assert_eq(ff.status, bf.status, "seed %llu: first-fit %d (%s), best-fit %d (%s)", (unsigned long long)seed,
                     ff.status, ff.text, bf.status, bf.text);
        if (ff.status == DRA_ALLOC_OK) {
            ok++;
            differ += strcmp(ff.text, bf.text) != 0;
            json_t *red = reduce_to(c, bf.text);
            sg_out rr;
            run_choice(red, DRA_CHOICE_FIRST_FIT, &rr);
            if (rr.status != DRA_ALLOC_OK || strcmp(rr.text, bf.text)) {
                char *dump = json_dumps(red, JSON_INDENT(1));
                fprintf(stderr, "seed %llu, reduced:\n%s\nbest-fit: %s\nreduced: %s\n", (unsigned long long)seed, dump,
                        bf.text, rr.text);
                free(dump);
            }
            cr_assert_eq(rr.status, DRA_ALLOC_OK, "seed %llu: best-fit's allocation is not accepted: %s",
                         (unsigned long long)seed, rr.text);
            cr_assert_str_eq(rr.text, bf.text, "seed %llu", (unsigned long long)seed);
            free(rr.text);
            json_decref(red);
        } else {
            cr_assert_str_eq(ff.text, bf.text, "seed %llu", (unsigned long long)seed);
            unsat += ff.status == DRA_ALLOC_UNSAT;
            errors += ff.status == DRA_ALLOC_ERROR || ff.status == DRA_ALLOC_NODE_ERROR;
            timeouts += ff.status == DRA_ALLOC_TIMEOUT;
        }
        free(ff.text);
        free(bf.text);
        json_decref(c);
    }
    fprintf(stderr,
            "bestfit: %llu cases from seed %llu: %llu allocated (best-fit chose other devices in %llu), %llu "
            "unsatisfiable, %llu errors\n",
            (unsigned long long)n, (unsigned long long)first, (unsigned long long)ok, (unsigned long long)differ,
            (unsigned long long)unsat, (unsigned long long)errors);
    cr_assert_eq(timeouts, 0);
    /* the generator must exercise the choice, not only satisfiability */
    cr_assert_geq(differ * 50, ok, "best-fit differed in only %llu of %llu", (unsigned long long)differ,
                  (unsigned long long)ok);
}

/* ---- placement on the MIG node ------------------------------------------------------------ */

static const char claim_fmt[] =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
    "\"default\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"mig\",\"exactly\":{\"deviceClassName\":\"mig.example."
    "com\",\"selectors\":[{\"cel\":{\"expression\":\"device.attributes[\\\"gpu.example.com\\\"].profile == \\\"%s\\\"\"}}]}}]}}}";

typedef struct mig {
    th_store *ws;
    const dra_world *w;
    dra_allocated *st;
    dra_nodeview *v;
    dra_alloc_ctx *x;
} mig;

/* The MIG node with in-use.yaml (or not), the claims name:profile, and in-use devices. */
static void mig_open(mig *m, bool in_use, const char *const *claims, size_t nclaims, const char *const *used,
                     dra_device_choice ch) {
    m->ws = th_new(true);
    err e;
    err_clear(&e);
    char path[1024];
    snprintf(path, sizeof path, "%s/testdata/bestfit/mig-node.yaml", DRALLOC_SOURCE_DIR);
    cr_assert(th_load(m->ws, path, &e), "%s", e.msg);
    if (in_use) {
        snprintf(path, sizeof path, "%s/testdata/bestfit/in-use.yaml", DRALLOC_SOURCE_DIR);
        cr_assert(th_load(m->ws, path, &e), "%s", e.msg);
    }
    for (size_t i = 0; i < nclaims; i++) {
        char name[64], text[2048];
        const char *colon = strchr(claims[i], ':');
        snprintf(name, sizeof name, "%.*s", (int)(colon - claims[i]), claims[i]);
        snprintf(text, sizeof text, claim_fmt, name, colon + 1);
        cr_assert(th_add_json(m->ws, text, &e), "%s", e.msg);
    }
    m->w = th_world(m->ws);
    m->st = dra_allocated_new(m->w);
    for (size_t i = 0; i < dra_world_nclaims(m->w); i++) dra_allocated_add_claim(m->st, dra_world_claim(m->w, i), false);
    for (size_t i = 0; used && used[i]; i++) cr_assert(dra_allocated_add_device(m->st, used[i], &e), "%s", e.msg);
    dra_features f;
    dra_features_default(&f);
    m->v = dra_nodeview_new(m->w, dra_world_find_node(m->w, "mig-node"), &f, &e);
    cr_assert_not_null(m->v, "%s", e.msg);
    m->x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(m->x, ch);
}

static void mig_close(mig *m) {
    dra_alloc_ctx_free(m->x);
    dra_nodeview_free(m->v);
    dra_allocated_free(m->st);
    th_free(m->ws);
}

/* Allocates the named claims together; on success their devices, space-separated,
 * are recorded as allocated and written to buf. */
static dra_alloc_status mig_alloc(mig *m, const char *const *names, size_t n, char *buf, size_t cap) {
    const dra_claim *cl[8];
    for (size_t i = 0; i < n; i++) {
        cl[i] = dra_world_find_claim(m->w, "default", names[i]);
        cr_assert_not_null(cl[i]);
    }
    dra_alloc_result *res;
    err e;
    err_clear(&e);
    dra_alloc_status s = dra_allocate(m->x, m->v, m->st, cl, n, &res, &e);
    buf[0] = '\0';
    if (s != DRA_ALLOC_OK) return s;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < res[i].nresults; k++)
            off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? " " : "", res[i].results[k].device);
        dra_allocated_add_result(m->st, &res[i], false);
    }
    return s;
}

/* A 3g runs on GPU 1. First-fit gives the next 1g GPU 0, the last whole GPU, and a
 * whole-GPU (7g) claim after it finds none; best-fit fills GPU 1 and the 7g fits. */
Test(bestfit, mig_small_then_whole_gpu) {
    static const char *const claims[] = {"small:1g", "whole:7g"};
    char dev[256];
    mig m;
    mig_open(&m, true, claims, 2, NULL, DRA_CHOICE_FIRST_FIT);
    cr_assert_eq(mig_alloc(&m, (const char *[]){"small"}, 1, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-0-1g-0");
    cr_assert_eq(mig_alloc(&m, (const char *[]){"whole"}, 1, dev, sizeof dev), DRA_ALLOC_UNSAT);
    mig_close(&m);

    mig_open(&m, true, claims, 2, NULL, DRA_CHOICE_BEST_FIT);
    cr_assert_eq(mig_alloc(&m, (const char *[]){"small"}, 1, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-1-1g-3");
    cr_assert_eq(mig_alloc(&m, (const char *[]){"whole"}, 1, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-0-7g");
    mig_close(&m);
}

/* Both GPUs partly used (3 of 7 and 5 of 7 compute): a 1g goes to the fuller one. */
Test(bestfit, mig_fullest_counter_set) {
    static const char *const claims[] = {"small:1g"};
    static const char *const used[] = {"gpu.example.com/mig-node/gpu-0-3g-0", "gpu.example.com/mig-node/gpu-1-3g-0",
                                       "gpu.example.com/mig-node/gpu-1-2g-4", NULL};
    char dev[256];
    mig m;
    mig_open(&m, false, claims, 1, used, DRA_CHOICE_FIRST_FIT);
    cr_assert_eq(mig_alloc(&m, (const char *[]){"small"}, 1, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-0-1g-3");
    mig_close(&m);
    mig_open(&m, false, claims, 1, used, DRA_CHOICE_BEST_FIT);
    cr_assert_eq(mig_alloc(&m, (const char *[]){"small"}, 1, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-1-1g-3");
    mig_close(&m);
}

/* A pod's two claims are one search: best-fit places both on the used GPU. */
Test(bestfit, mig_pod_of_two_claims) {
    static const char *const claims[] = {"a:1g", "b:1g"};
    static const char *const both[] = {"a", "b"};
    char dev[256];
    mig m;
    mig_open(&m, true, claims, 2, NULL, DRA_CHOICE_FIRST_FIT);
    cr_assert_eq(mig_alloc(&m, both, 2, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-0-1g-0 gpu-0-1g-1");
    mig_close(&m);
    mig_open(&m, true, claims, 2, NULL, DRA_CHOICE_BEST_FIT);
    cr_assert_eq(mig_alloc(&m, both, 2, dev, sizeof dev), DRA_ALLOC_OK);
    cr_assert_str_eq(dev, "gpu-1-1g-3 gpu-1-1g-4");
    mig_close(&m);
}

/* firstAvailable order comes before fragmentation: a claim preferring a whole GPU
 * gets it even though a 1g would keep GPU 0 whole. */
Test(bestfit, first_available_order_kept) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    char path[1024];
    snprintf(path, sizeof path, "%s/testdata/bestfit/mig-node.yaml", DRALLOC_SOURCE_DIR);
    cr_assert(th_load(ws, path, &e), "%s", e.msg);
    snprintf(path, sizeof path, "%s/testdata/bestfit/in-use.yaml", DRALLOC_SOURCE_DIR);
    cr_assert(th_load(ws, path, &e), "%s", e.msg);
    cr_assert(th_add_json(ws,
                          "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"pref\","
                          "\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"mig\",\"firstAvailable\":["
                          "{\"name\":\"big\",\"deviceClassName\":\"mig.example.com\",\"selectors\":[{\"cel\":{\"expression\":"
                          "\"device.attributes[\\\"gpu.example.com\\\"].profile == \\\"7g\\\"\"}}]},"
                          "{\"name\":\"small\",\"deviceClassName\":\"mig.example.com\",\"selectors\":[{\"cel\":{\"expression\":"
                          "\"device.attributes[\\\"gpu.example.com\\\"].profile == \\\"1g\\\"\"}}]}]}]}}}",
                          &e),
              "%s", e.msg);
    const dra_world *w = th_world(ws);
    dra_allocated *st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), false);
    dra_features f;
    dra_features_default(&f);
    dra_nodeview *v = dra_nodeview_new(w, dra_world_find_node(w, "mig-node"), &f, &e);
    dra_alloc_ctx *x = dra_alloc_ctx_new();
    dra_alloc_ctx_set_device_choice(x, DRA_CHOICE_BEST_FIT);
    const dra_claim *cl = dra_world_find_claim(w, "default", "pref");
    dra_alloc_result *res;
    cr_assert_eq(dra_allocate(x, v, st, &cl, 1, &res, &e), DRA_ALLOC_OK);
    cr_assert_str_eq(res[0].results[0].request, "mig/big");
    cr_assert_str_eq(res[0].results[0].device, "gpu-0-7g");
    dra_alloc_ctx_free(x);
    dra_nodeview_free(v);
    dra_allocated_free(st);
    th_free(ws);
}

/* ---- topology and shared devices (sg_ cases) ------------------------------------------------ */

static json_t *four_gpus(const char *attr, bool string, const int *group) {
    json_t *c = sg_case("{}");
    json_t *devs = sg_slice(c, "gpu", "pool-0");
    for (int i = 0; i < 4; i++) {
        json_t *d = sg_device(devs, "gpu-%d", i);
        json_t *v = string ? json_pack("{s:s}", "string", group[i] ? "pci0000:80" : "pci0000:00")
                           : json_pack("{s:i}", "int", group[i]);
        json_object_set_new(json_object_get(d, "attributes"), attr, v);
    }
    sg_request(sg_claim(c, "one", NULL), "gpu", "gpu", 1);
    return c;
}

static void check_choice(const json_t *c, const char *want_first, const char *want_best) {
    sg_out o;
    char dev[256];
    run_choice(c, DRA_CHOICE_FIRST_FIT, &o);
    cr_assert_eq(o.status, DRA_ALLOC_OK, "%s", o.text);
    sg_devices(&o, 0, dev, sizeof dev);
    cr_assert_str_eq(dev, want_first);
    free(o.text);
    run_choice(c, DRA_CHOICE_BEST_FIT, &o);
    cr_assert_eq(o.status, DRA_ALLOC_OK, "%s", o.text);
    sg_devices(&o, 0, dev, sizeof dev);
    cr_assert_str_eq(dev, want_best);
    free(o.text);
}

/* gpu-0,1 on one PCIe root, gpu-2,3 on another with gpu-2 in use: best-fit keeps the
 * first root whole. */
Test(bestfit, pcie_root_kept_whole) {
    json_t *c = four_gpus("resource.kubernetes.io/pcieRoot", true, (const int[]){0, 0, 1, 1});
    json_object_set_new(c, "allocatedDevices", json_pack("[s]", "gpu.example.com/pool-0/gpu-2"));
    check_choice(c, "gpu-0", "gpu-3");
    json_decref(c);
}

Test(bestfit, numa_node_kept_whole) {
    json_t *c = four_gpus("numaNode", false, (const int[]){0, 0, 1, 1});
    json_object_set_new(c, "allocatedDevices", json_pack("[s]", "gpu.example.com/pool-0/gpu-3"));
    check_choice(c, "gpu-0", "gpu-2");
    json_decref(c);
}

/* Two multi-allocatable devices, dev-1 already shared (4 of 10 used): a 2-unit share
 * goes to dev-1, dev-0 stays unused. */
Test(bestfit, consumable_capacity_shared_device_first) {
    th_store *ws = th_new(true);
    err e;
    err_clear(&e);
    cr_assert(th_add_json(ws, "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-1\"}}", &e));
    cr_assert(th_add_json(ws,
                          "{\"kind\":\"DeviceClass\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"nic\"},"
                          "\"spec\":{\"selectors\":[{\"cel\":{\"expression\":\"device.driver == 'nic.example.com'\"}}]}}",
                          &e),
              "%s", e.msg);
    cr_assert(th_add_json(ws,
                          "{\"kind\":\"ResourceSlice\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"nics\"},"
                          "\"spec\":{\"driver\":\"nic.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"p\","
                          "\"generation\":1,\"resourceSliceCount\":1},\"devices\":["
                          "{\"name\":\"dev-0\",\"allowMultipleAllocations\":true,\"capacity\":{\"bw\":{\"value\":\"10\"}}},"
                          "{\"name\":\"dev-1\",\"allowMultipleAllocations\":true,\"capacity\":{\"bw\":{\"value\":\"10\"}}}]}}",
                          &e),
              "%s", e.msg);
    cr_assert(th_add_json(ws,
                          "{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"old\","
                          "\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
                          "\"deviceClassName\":\"nic\",\"capacity\":{\"requests\":{\"bw\":\"4\"}}}}]}},\"status\":{\"allocation\":"
                          "{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"nic.example.com\",\"pool\":\"p\",\"device\":"
                          "\"dev-1\",\"shareID\":\"6f1c2f1e-8b8a-4c5e-9a51-0d6c1b0e7a11\",\"consumedCapacity\":{\"bw\":\"4\"}}]}}}}",
                          &e),
              "%s", e.msg);
    cr_assert(th_add_json(ws,
                          "{\"kind\":\"ResourceClaim\",\"apiVersion\":\"resource.k8s.io/v1\",\"metadata\":{\"name\":\"new\","
                          "\"namespace\":\"default\"},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
                          "\"deviceClassName\":\"nic\",\"capacity\":{\"requests\":{\"bw\":\"2\"}}}}]}}}",
                          &e),
              "%s", e.msg);
    const dra_world *w = th_world(ws);
    dra_features f;
    dra_features_default(&f);
    f.consumable_capacity = true;
    dra_allocated *st = dra_allocated_new(w);
    for (size_t i = 0; i < dra_world_nclaims(w); i++) dra_allocated_add_claim(st, dra_world_claim(w, i), true);
    dra_nodeview *v = dra_nodeview_new(w, dra_world_find_node(w, "node-1"), &f, &e);
    cr_assert_not_null(v, "%s", e.msg);
    const dra_claim *cl = dra_world_find_claim(w, "default", "new");
    const char *want[] = {"dev-0", "dev-1"};
    for (int ch = 0; ch < 2; ch++) {
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        dra_alloc_ctx_set_device_choice(x, (dra_device_choice)ch);
        dra_alloc_result *res;
        cr_assert_eq(dra_allocate(x, v, st, &cl, 1, &res, &e), DRA_ALLOC_OK, "%s", e.msg);
        cr_assert_str_eq(res[0].results[0].device, want[ch]);
        dra_alloc_ctx_free(x);
    }
    dra_nodeview_free(v);
    dra_allocated_free(st);
    th_free(ws);
}

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- bounds -------------------------------------------------------------------------------- */

/* Nothing on the node scores differently: best-fit stops at the first solution. */
Test(bestfit, flat_node_no_enumeration) {
    json_t *c = sg_case("{}");
    json_t *devs = sg_slice(c, "gpu", "pool-0");
    for (int i = 0; i < 50; i++) sg_device(devs, "gpu-%d", i);
    sg_request(sg_claim(c, "two", NULL), "gpu", "gpu", 2);
    sg_out ff, bf;
    run_choice(c, DRA_CHOICE_FIRST_FIT, &ff);
    run_choice(c, DRA_CHOICE_BEST_FIT, &bf);
    cr_assert_str_eq(ff.text, bf.text);
    cr_assert_eq(ff.steps, bf.steps);
    free(ff.text);
    free(bf.text);
    json_decref(c);
}

/* Groups of four matching devices among 3,000, each group across four PCIe roots:
 * every solution fragments alike, there are thousands, and the enumeration walks
 * on through them; it stops within its step budget and a few ms of first-fit. */
Test(bestfit, pathological_enumeration_bounded) {
    json_t *c = sg_case("{}");
    json_t *devs = sg_slice(c, "gpu", "pool-0");
    for (int i = 0; i < 3000; i++) {
        json_t *d = sg_device(devs, "gpu-%d", i);
        sg_attr_int(d, "m", i / 4);
        char root[32];
        snprintf(root, sizeof root, "pci%04d:00", i % 7);
        json_object_set_new(json_object_get(d, "attributes"), "resource.kubernetes.io/pcieRoot",
                            json_pack("{s:s}", "string", root));
    }
    json_t *cons;
    json_t *reqs = sg_claim(c, "pair", &cons);
    sg_request(reqs, "a", "gpu", 1);
    sg_request(reqs, "b", "gpu", 1);
    sg_request(reqs, "c", "gpu", 2);
    sg_constraint(cons, true, "gpu.example.com/m");
    sg_out ff, bf;
    /* CPU time (the machine running the tests may be busy): world building included,
     * the same for both */
    double t0 = cpu_ms();
    run_choice(c, DRA_CHOICE_FIRST_FIT, &ff);
    double t1 = cpu_ms();
    run_choice(c, DRA_CHOICE_BEST_FIT, &bf);
    double t2 = cpu_ms(), ff_ms = t1 - t0, bf_ms = t2 - t1;
    cr_log_info("pathological: first-fit %.2f ms CPU %llu steps, best-fit %.2f ms CPU %llu steps", ff_ms,
                (unsigned long long)ff.steps, bf_ms, (unsigned long long)bf.steps);
    cr_assert_eq(ff.status, bf.status);
    cr_assert_leq(bf.steps, ff.steps + DRA_BESTFIT_MAX_STEPS + DRA_DEADLINE_EVERY);
    /* 2 ms of enumeration at most, plus unwinding and slack for ASan */
    cr_assert_leq(bf_ms, ff_ms + 15, "first-fit %.2f ms, best-fit %.2f ms", ff_ms, bf_ms);
    free(ff.text);
    free(bf.text);
    json_decref(c);
}

Test(bestfit, cancelled_call_times_out) {
    static const char *const claims[] = {"small:1g"};
    mig m;
    mig_open(&m, true, claims, 1, NULL, DRA_CHOICE_BEST_FIT);
    _Atomic bool cancel = true;
    dra_alloc_ctx_set_deadline(m.x, 0, &cancel);
    const dra_claim *cl = dra_world_find_claim(m.w, "default", "small");
    dra_alloc_result *res;
    err e;
    err_clear(&e);
    cr_assert_eq(dra_allocate(m.x, m.v, m.st, &cl, 1, &res, &e), DRA_ALLOC_TIMEOUT);
    cr_assert_str_eq(e.msg, "timed out trying to allocate devices");
    /* the caller's deadline is still the caller's after a best-fit call */
    cancel = false;
    dra_alloc_ctx_set_deadline(m.x, dra_monotonic_ns() + 60000000000ull, &cancel);
    err_clear(&e);
    cr_assert_eq(dra_allocate(m.x, m.v, m.st, &cl, 1, &res, &e), DRA_ALLOC_OK);
    cr_assert_str_eq(res[0].results[0].device, "gpu-1-1g-3");
    cr_assert_gt(m.x->deadline_ns, dra_monotonic_ns() + 50000000000ull);
    mig_close(&m);
}

/* ---- the CLI --------------------------------------------------------------------------------- */

static char cli_bin[1024];
static char cli_out[] = "/tmp/dralloc-bf-out-XXXXXX", cli_err[] = "/tmp/dralloc-bf-err-XXXXXX";

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    b[fread(b, 1, (size_t)n, f)] = '\0';
    fclose(f);
    return b;
}

/* `dralloc allocate ARGS` with stdout and stderr into *out and *errt (malloc'd). */
static int cli(const char *args, char **out, char **errt) {
    if (!cli_bin[0]) {
        char self[1024];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        cr_assert(n > 0);
        self[n] = '\0';
        snprintf(cli_bin, sizeof cli_bin, "%s/../dralloc", dirname(self));
        cr_assert(access(cli_bin, X_OK) == 0, "%s not built", cli_bin);
        close(mkstemp(cli_out));
        close(mkstemp(cli_err));
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd %s/testdata/bestfit && ASAN_OPTIONS=detect_leaks=0 %s allocate %s >%s 2>%s",
             DRALLOC_SOURCE_DIR, cli_bin, args, cli_out, cli_err);
    int st = system(cmd);
    *out = slurp(cli_out);
    *errt = slurp(cli_err);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(bestfit, cli_device_choice) {
    static const char files[] = "-f mig-node.yaml in-use.yaml claim-1g.yaml --node mig-node -o json";
    char args[512], *out, *errt;
    cr_assert_eq(cli(files, &out, &errt), 0, "%s", errt);
    cr_assert(strstr(out, "\"gpu-0-1g-0\""), "%s", out);
    char *first = out;
    free(errt);
    snprintf(args, sizeof args, "%s --device-choice first-fit", files);
    cr_assert_eq(cli(args, &out, &errt), 0, "%s", errt);
    cr_assert_str_eq(out, first);
    free(out);
    free(errt);
    snprintf(args, sizeof args, "%s --device-choice=best-fit", files);
    cr_assert_eq(cli(args, &out, &errt), 0, "%s", errt);
    cr_assert(strstr(out, "\"gpu-1-1g-3\""), "%s", out);
    cr_assert(!strstr(out, "gpu-0-1g-0"), "%s", out);
    free(out);
    free(errt);
    free(first);
    snprintf(args, sizeof args, "%s --device-choice worst-fit", files);
    cr_assert_eq(cli(args, &out, &errt), 2);
    cr_assert_str_eq(errt, "dralloc allocate: --device-choice worst-fit: want first-fit or best-fit\n");
    cr_assert_str_eq(out, "");
    free(out);
    free(errt);
    cr_assert_eq(cli("--device-choice", &out, &errt), 2);
    cr_assert(strstr(errt, "flag needs an argument: --device-choice"), "%s", errt);
    free(out);
    free(errt);
}

/* ---- the snapshot API: what /bind writes, what /filter answers ---------------------------------- */

Test(bestfit, bind_allocation_is_best_fit_filter_unchanged) {
    dra_features f;
    dra_features_default(&f);
    dra_store *store = dra_store_new(&f);
    const char *paths[] = {DRALLOC_SOURCE_DIR "/testdata/bestfit/mig-node.yaml",
                           DRALLOC_SOURCE_DIR "/testdata/bestfit/in-use.yaml",
                           DRALLOC_SOURCE_DIR "/testdata/bestfit/claim-1g.yaml"};
    err e;
    err_clear(&e);
    cr_assert(dra_store_load_paths(store, paths, 3, &e), "%s", e.msg);
    dra_snapshot *s = dra_store_acquire(store);
    json_t *pod = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},"
                             "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}],"
                             "\"resourceClaims\":[{\"name\":\"mig\",\"resourceClaimName\":\"small\"}]}}",
                             0, NULL);
    dra_pod_request *pr = dra_pod_request_new(s, pod, &e);
    cr_assert_not_null(pr, "%s", e.msg);
    const char *want[] = {"gpu-0-1g-0", "gpu-1-1g-3"};
    dra_fit fits[2];
    for (int ch = 0; ch < 2; ch++) {
        dra_alloc_ctx *x = dra_alloc_ctx_new();
        dra_alloc_ctx_set_device_choice(x, (dra_device_choice)ch);
        dra_pod_fit(pr, x, "mig-node", NULL, DRA_SCORE_BINPACK, 0, &fits[ch]);
        dra_fit f2;
        json_t *plan = dra_pod_fit_allocation(pr, x, "mig-node", 0, &f2);
        cr_assert_not_null(plan, "%s", f2.reason);
        const json_t *res = json_object_get(json_object_get(json_object_get(json_array_get(plan, 0), "allocation"), "devices"),
                                            "results");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 0), "device")), want[ch]);
        cr_assert_eq(dra_alloc_ctx_device_choice(x), (dra_device_choice)ch);   /* the fit left the choice as it was */
        json_decref(plan);
        dra_alloc_ctx_free(x);
    }
    /* /filter and /prioritize: the same answer and score either way */
    cr_assert_eq(fits[0].status, DRA_FIT_OK);
    cr_assert_eq(fits[1].status, DRA_FIT_OK);
    cr_assert_eq(fits[0].score, fits[1].score);
    dra_pod_request_free(pr);
    json_decref(pod);
    dra_snapshot_release(s);
    dra_store_free(store);
}
