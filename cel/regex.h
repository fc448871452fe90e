/* regex.h — regular expressions for CEL (private to cel/): a C interface over RE2
 * (cel/regex_re2.cc).
 *
 * CEL specifies RE2 syntax for `matches`, and Kubernetes' find/findAll run Go's
 * regexp, which is RE2's semantics too (leftmost-first, UTF-8, no backreferences).
 * RE2 matches in time linear in the text, so a selector's regex cost is bounded by
 * construction. A compiled cel_regex is immutable and may be shared by threads; it
 * is allocated with malloc because it lives with the compiled program (built at
 * compile time from a constant pattern, freed with the program) — or, for a pattern
 * only known at evaluation time, for the duration of one call.
 *
 * Compile errors are reported as Go's regexp reports them
 * ("error parsing regexp: missing closing ): `(`"), the text Kubernetes users see. */
#ifndef DRA_CEL_REGEX_H
#define DRA_CEL_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cel_regex cel_regex;   /* opaque, immutable */

/* RE2 program memory budget per pattern (RE2's default); a pattern that needs more
 * fails to compile with "expression too large". */
#define CEL_REGEX_MAX_MEM (8 << 20)

/* Compiles pattern[0..n). NULL on error, with Go's error text in errbuf. */
cel_regex *cel__regex_compile(const char *pattern, size_t n, char *errbuf, size_t errlen);
void cel__regex_free(cel_regex *re);

/* Does the whole text match? */
bool cel__regex_full_match(const cel_regex *re, const char *text, size_t n);
/* Does some substring match (CEL `matches`)? */
bool cel__regex_partial_match(const cel_regex *re, const char *text, size_t n);
/* The leftmost-first match starting at or after byte `pos`, with the whole text as
 * context (so `^` and `\b` see what precedes pos). False when there is none. */
bool cel__regex_find(const cel_regex *re, const char *text, size_t n, size_t pos, size_t *start, size_t *end);

/* Go's FindAllString(text, limit): successive non-overlapping matches, an empty
 * match right after a previous match skipped; limit < 0 means all. Calls
 * emit(ctx, start, end) for each; emit returns false to stop early. Returns the
 * number of matches emitted. */
typedef bool (*cel_regex_emit)(void *ctx, size_t start, size_t end);
size_t cel__regex_find_all(const cel_regex *re, const char *text, size_t n, int64_t limit, cel_regex_emit emit,
                          void *ctx);

#ifdef __cplusplus
}
#endif

#endif
