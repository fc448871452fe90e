/* fuzz.h — the entry points of the fuzz harnesses (tests/fuzz/fuzz_*.c). Each body is a
 * plain function, fuzz_<target>_one(data, size), so the same code runs under libFuzzer
 * (LLVMFuzzerTestOneInput, when built with DRALLOC_LIBFUZZER) and from the plain
 * replay program (replay.c) that CTest runs over tests/fuzz/regressions/<target>/. A
 * harness aborts on what must never happen (a crash is caught by the sanitizers; a
 * slow evaluation or an error without text by the harness itself). */
#ifndef DRA_TESTS_FUZZ_H
#define DRA_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int fuzz_cel_one(const uint8_t *data, size_t size);
int fuzz_decode_json_one(const uint8_t *data, size_t size);
int fuzz_decode_yaml_one(const uint8_t *data, size_t size);
int fuzz_fixture_one(const uint8_t *data, size_t size);
int fuzz_extender_one(const uint8_t *data, size_t size);
int fuzz_watch_one(const uint8_t *data, size_t size);
int fuzz_ingest_one(const uint8_t *data, size_t size);

/* libFuzzer's entry, one per harness binary. */
#ifdef DRALLOC_LIBFUZZER
#define FUZZ_ENTRY(fn)                                                          \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);               \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fn(data, size); }
#else
#define FUZZ_ENTRY(fn)
#endif

#include <time.h>
/* Seconds for the harnesses' time bounds: CPU time of the whole process (the
 * extender's worker threads included), not wall time. The limits are about work
 * done; on a loaded machine a niced fuzzer waits for the CPU for seconds (a 75 ms
 * evaluation took 3 s of wall time at load 15). */
static inline double fuzz_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* fuzz_world.c: decoded documents (a JSON array or object) into a fresh world, frozen,
 * a node view for node "node-1" (or the first node), every pending claim allocated
 * alone and then all together, results encoded. Takes ownership of nothing. */
struct json_t;
void fuzz_world_run(const struct json_t *docs);

#endif
