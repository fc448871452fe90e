/* goquote.h — the one table of Go's backslash escapes, as strconv.Quote (and so
 * %q) writes them: `"` and `\` escaped, and the seven C control escapes \a \b \f
 * \n \r \t \v. Several quoters (semver messages, CEL's strings.quote, the net and
 * url error texts) differ in how they treat other bytes and runes but agree on
 * these; sharing the table keeps them from drifting apart. */
#ifndef DRA_GOQUOTE_H
#define DRA_GOQUOTE_H

#include <stddef.h>
#include <stdint.h>

/* The escape Go writes for code point c, or NULL when c has no short escape. */
static inline const char *goquote_escape(uint32_t c) {
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\a': return "\\a";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\v': return "\\v";
    default: return NULL;
    }
}

#endif
