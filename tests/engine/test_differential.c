/* test_differential.c — the pruned search against the unpruned one (ctx->no_prune,
 * every shortcut off: Kubernetes' plain depth-first search) on random cases from a
 * seeded generator: small nodes (so the unpruned search always finishes) that mix
 * what the bound reasons about — counts, firstAvailable alternatives, All requests,
 * admin access, matchAttribute / distinctAttribute (scalar and list), shared
 * counters, multi-allocatable devices with consumable capacity, taints, devices
 * already allocated, several claims, and selectors that raise CEL errors on some
 * devices. Both searches must give the same outcome: the same devices in the same
 * order, or the same error text, or both unsatisfiable.
 *
 * `make test` runs DIFF_FAST cases; by hand:
 *   DRALLOC_DIFF_CASES=100000 [DRALLOC_DIFF_SEED=n] build/tests/test_engine \
 *       --filter 'differential/ *' (without the space)
 * A mismatch prints the seed and the case. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "tests/engine/search_gen.h"

enum { DIFF_FAST = 3000 };

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {   /* xorshift64*, uniform enough for test inputs */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 33) % n;
}
static bool chance(uint32_t in) { return rnd(in) == 0; }

static const char *const STRS[] = {"x", "y", "z"};

static json_t *selector(bool err_ok) {
    char expr[160];
    switch (rnd(err_ok ? 5 : 4)) {
    case 0: snprintf(expr, sizeof expr, "device.attributes[\"gpu.example.com\"].a == %u", rnd(3)); break;
    case 1: snprintf(expr, sizeof expr, "device.attributes[\"gpu.example.com\"].a != %u", rnd(3)); break;
    case 2: snprintf(expr, sizeof expr, "device.attributes[\"gpu.example.com\"].b != \"%s\"", STRS[rnd(3)]); break;
    case 3: snprintf(expr, sizeof expr, "has(device.attributes[\"gpu.example.com\"].a)"); break;
    default: snprintf(expr, sizeof expr, "device.attributes[\"gpu.example.com\"].e > 0"); break;   /* errors where e is missing */
    }
    return json_pack("[{s:{s:s}}]", "cel", "expression", expr);
}

static json_t *gen_case(void) {
    bool part = chance(2), cc = chance(2), lists = chance(4), admin = chance(3), taints = chance(3);
    bool errs = chance(15);
    char feat[256];
    snprintf(feat, sizeof feat,
             "{\"prioritizedList\":true,\"partitionableDevices\":%s,\"consumableCapacity\":%s,"
             "\"listTypeAttributes\":%s,\"adminAccess\":%s,\"deviceTaints\":%s}",
             part ? "true" : "false", cc ? "true" : "false", lists ? "true" : "false", admin ? "true" : "false",
             taints ? "true" : "false");
    json_t *c = sg_case(feat);
    json_t *allocated = json_array();
    uint32_t npools = 1 + rnd(2);
    for (uint32_t p = 0; p < npools; p++) {
        char pool[16];
        snprintf(pool, sizeof pool, "pool-%u", p);
        bool counters = part && chance(2);
        json_t *devs = sg_slice(c, "gpu", pool);
        if (counters) {
            json_t *slices = json_object_get(c, "slices");
            json_t *spec = json_object_get(json_array_get(slices, json_array_size(slices) - 1), "spec");
            json_object_set_new(json_object_get(spec, "pool"), "resourceSliceCount", json_integer(2));
            char v[8], name[32];
            snprintf(v, sizeof v, "%u", 1 + rnd(4));
            snprintf(name, sizeof name, "%s-counters", pool);
            json_array_append_new(slices, json_pack("{s:{s:s},s:{s:s,s:{s:s,s:i,s:i},s:s,s:[{s:s,s:{s:{s:s}}}]}}",
                                                    "metadata", "name", name, "spec", "driver", "gpu.example.com",
                                                    "pool", "name", pool, "resourceSliceCount", 2, "generation", 1,
                                                    "nodeName", "node-1", "sharedCounters", "name", "cs", "counters",
                                                    "n", "value", v));
        }
        uint32_t ndev = rnd(10);
        for (uint32_t i = 0; i < ndev; i++) {
            char fmt[32];
            snprintf(fmt, sizeof fmt, "%s-d%%d", pool);
            json_t *d = sg_device(devs, fmt, (int)i);
            json_t *at = json_object_get(d, "attributes");
            if (!errs || !chance(8)) sg_attr_int(d, "a", rnd(3));
            json_object_set_new(at, "b", json_pack("{s:s}", "string", STRS[rnd(3)]));
            if (errs && chance(2)) sg_attr_int(d, "e", rnd(2));
            if (lists && chance(2)) {
                json_t *l = json_array();
                for (uint32_t k = 0, n = 1 + rnd(2); k < n; k++) json_array_append_new(l, json_integer(rnd(4)));
                json_object_set_new(at, "l", json_pack("{s:o}", "ints", l));
            } else if (chance(2)) {
                sg_attr_int(d, "l", rnd(4));
            }
            if (counters && !chance(4)) {
                char v[8];
                snprintf(v, sizeof v, "%u", 1 + rnd(2));
                json_object_set_new(d, "consumesCounters",
                                    json_pack("[{s:s,s:{s:{s:s}}}]", "counterSet", "cs", "counters", "n", "value", v));
            }
            if (cc && chance(3)) {
                char v[8];
                snprintf(v, sizeof v, "%u", 4 + rnd(7));
                json_object_set_new(d, "allowMultipleAllocations", json_true());
                json_object_set_new(d, "capacity", json_pack("{s:{s:s}}", "mem", "value", v));
            }
            if (chance(6))
                json_object_set_new(d, "taints", json_pack("[{s:s,s:s,s:s}]", "key", "t", "value", "v", "effect",
                                                           "NoSchedule"));
            if (chance(8)) {
                char id[64];
                snprintf(id, sizeof id, "gpu.example.com/%s/%s", pool, json_string_value(json_object_get(d, "name")));
                json_array_append_new(allocated, json_string(id));
            }
        }
    }
    if (chance(2)) {
        json_t *devs = sg_slice(c, "nic", "nic-pool");
        for (uint32_t i = 0, n = rnd(3); i < n; i++) sg_attr_int(sg_device(devs, "nic-%d", (int)i), "a", rnd(3));
    }
    json_object_set_new(c, "allocatedDevices", allocated);
    uint32_t nclaims = chance(3) ? 1 + rnd(3) : 1;
    for (uint32_t ci = 0; ci < nclaims; ci++) {
        char name[32];
        snprintf(name, sizeof name, "claim-%u", ci);
        json_t *cons;
        json_t *reqs = sg_claim(c, name, &cons);
        uint32_t nreq = 1 + rnd(3);
        for (uint32_t r = 0; r < nreq; r++) {
            char rn[16];
            snprintf(rn, sizeof rn, "r%u", r);
            const char *cls = chance(8) ? "nic" : "gpu";
            if (chance(5)) {   /* firstAvailable */
                json_t *subs = json_array();
                for (uint32_t s = 0, n = 2 + rnd(2); s < n; s++) {
                    char sn[16];
                    snprintf(sn, sizeof sn, "s%u", s);
                    const char *scls = chance(6) ? "nic" : "gpu";
                    json_t *sub = json_pack("{s:s,s:s,s:s,s:i}", "name", sn, "deviceClassName", scls,
                                            "allocationMode", "ExactCount", "count", 1 + rnd(3));
                    if (*scls == 'g' && chance(2)) json_object_set_new(sub, "selectors", selector(errs));
                    if (cc && chance(3))
                        json_object_set_new(sub, "capacity", json_pack("{s:{s:s}}", "requests", "mem", chance(2) ? "2" : "5"));
                    json_array_append_new(subs, sub);
                }
                json_array_append_new(reqs, json_pack("{s:s,s:o}", "name", rn, "firstAvailable", subs));
                continue;
            }
            json_t *ex = sg_request(reqs, rn, cls, chance(10) ? -1 : (int)(1 + rnd(chance(3) ? 4 : 2)));
            if (*cls == 'g' && chance(2)) json_object_set_new(ex, "selectors", selector(errs));
            if (admin && chance(6)) json_object_set_new(ex, "adminAccess", json_true());
            if (taints && chance(3))
                json_object_set_new(ex, "tolerations", json_pack("[{s:s,s:s}]", "key", "t", "operator", "Exists"));
            if (cc && chance(3))
                json_object_set_new(ex, "capacity", json_pack("{s:{s:s}}", "requests", "mem", chance(2) ? "2" : "5"));
        }
        for (uint32_t k = 0, n = chance(2) ? 1 + rnd(2) : 0; k < n; k++) {
            static const char *const attrs[] = {"gpu.example.com/a", "gpu.example.com/b", "gpu.example.com/l"};
            json_t *con = json_pack("{s:s}", chance(2) ? "matchAttribute" : "distinctAttribute", attrs[rnd(3)]);
            if (chance(3)) {
                char rn[16];
                snprintf(rn, sizeof rn, "r%u", rnd(nreq));
                json_object_set_new(con, "requests", json_pack("[s]", rn));
            }
            json_array_append_new(cons, con);
        }
    }
    return c;
}

/* The generator for test_bestfit.c: the case of one seed, as run_cases makes it. */
json_t *diff_gen_case(uint64_t seed);
json_t *diff_gen_case(uint64_t seed) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    return gen_case();
}

static void run_cases(uint64_t first, uint64_t n) {
    /* DRALLOC_DIFF_RECORD=file: one line per case (outcomes and step counts), to
     * compare two builds of the search with diff */
    const char *rec_path = getenv("DRALLOC_DIFF_RECORD");
    FILE *rec = rec_path ? fopen(rec_path, "w") : NULL;
    uint64_t ok = 0, unsat = 0, errors = 0, skipped = 0, steps_pruned = 0, steps_plain = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t seed = first + i;
        rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
        json_t *c = gen_case();
        if (getenv("DRALLOC_DIFF_DUMP")) {
            char *dump = json_dumps(c, JSON_COMPACT);
            fprintf(stderr, "case %llu: %s\n", (unsigned long long)seed, dump);
            free(dump);
        }
        sg_out a, b;
        sg_run(c, false, 0, &a);
        sg_run(c, true, 500, &b);
        if (getenv("DRALLOC_DIFF_SLOW") && (a.ms > 20 || b.ms > 20))
            fprintf(stderr, "slow seed %llu: pruned %.1f ms %llu steps, unpruned %.1f ms %llu steps\n",
                    (unsigned long long)seed, a.ms, (unsigned long long)a.steps, b.ms, (unsigned long long)b.steps);
        if (b.status == DRA_ALLOC_TIMEOUT) {
            skipped++;
        } else {
            if (getenv("DRALLOC_DIFF_ERRORS") && a.status >= DRA_ALLOC_NODE_ERROR) fprintf(stderr, "error: %s\n", a.text);
            if (a.status != b.status || strcmp(a.text, b.text)) {
                char *dump = json_dumps(c, JSON_INDENT(1));
                fprintf(stderr, "seed %llu:\n%s\n", (unsigned long long)seed, dump);
                free(dump);
            }
            cr_assert_eq(a.status, b.status, "seed %llu: pruned %d (%s), unpruned %d (%s)", (unsigned long long)seed,
                         a.status, a.text, b.status, b.text);
            cr_assert_str_eq(a.text, b.text, "seed %llu", (unsigned long long)seed);
            ok += a.status == DRA_ALLOC_OK;
            unsat += a.status == DRA_ALLOC_UNSAT;
            errors += a.status == DRA_ALLOC_ERROR || a.status == DRA_ALLOC_NODE_ERROR;
            steps_pruned += a.steps;
            steps_plain += b.steps;
        }
        if (rec)
            fprintf(rec, "%llu %d %llu %d %llu %s | %s\n", (unsigned long long)seed, a.status,
                    (unsigned long long)a.steps, b.status, (unsigned long long)b.steps, a.text, b.text);
        free(a.text);
        free(b.text);
        json_decref(c);
    }
    if (rec) fclose(rec);
    fprintf(stderr,
            "differential: %llu cases from seed %llu: %llu allocated, %llu unsatisfiable, %llu errors, %llu skipped "
            "(unpruned too slow); steps %llu pruned vs %llu unpruned\n",
            (unsigned long long)n, (unsigned long long)first, (unsigned long long)ok, (unsigned long long)unsat,
            (unsigned long long)errors, (unsigned long long)skipped, (unsigned long long)steps_pruned,
            (unsigned long long)steps_plain);
    cr_assert_leq(skipped * 200, n, "%llu of %llu cases skipped", (unsigned long long)skipped, (unsigned long long)n);
}

Test(differential, pruned_equals_unpruned) {
    const char *n = getenv("DRALLOC_DIFF_CASES"), *s = getenv("DRALLOC_DIFF_SEED");
    run_cases(s ? strtoull(s, NULL, 10) : 1, n ? strtoull(n, NULL, 10) : DIFF_FAST);
}
