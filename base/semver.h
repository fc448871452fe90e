/* semver.h — semantic versions per semver.org 2.0.0 as blang/semver v4 implements
 * them (the library behind Kubernetes' CEL `semver()` and ResourceSlice `version`
 * attributes): strict parse, SemVer precedence (pre-release lower than release,
 * identifiers compared numerically or in ASCII order, build metadata ignored),
 * plus Kubernetes' CEL `semver(s, true)` normalisation (strip one leading `v`,
 * leading zeros of major/minor/patch, pad "1" and "1.2" to three parts).
 *
 * A semver value does not own its text: `pre` and `build` point into the parsed
 * string (strict parse) or into arena memory (normalising parse). */
#ifndef DRA_SEMVER_H
#define DRA_SEMVER_H

#include "base/arena.h"
#include "base/base.h"
#include "base/error.h"

typedef struct semver {
    uint64_t major, minor, patch;
    const char *pre;      /* pre-release identifiers without the '-', NULL when none */
    const char *build;    /* build metadata without the '+', NULL when none */
    uint32_t pre_len, build_len;
} semver;

/* blang's semver.Parse on s[0..n); pre/build point into s. Error texts are blang's
 * (e.g. "No Major.Minor.Patch elements found", "Invalid character(s) found in major number \"v1\""). */
bool semver_parse(const char *s, size_t n, semver *out, err *e);
/* Kubernetes CEL semver(s, normalize): with normalize, the normalised text is built in
 * arena `a` first (error "short version cannot contain PreRelease/Build meta data"). */
bool semver_parse_k8s(const char *s, size_t n, bool normalize, arena *a, semver *out, err *e);

int semver_cmp(const semver *a, const semver *b);   /* -1, 0, 1; build metadata ignored */
size_t semver_format(const semver *v, char *buf, size_t n);   /* "1.2.3-rc.1+build" */

#endif
