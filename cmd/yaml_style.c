/* yaml_style.c — the style of a string in `dralloc allocate -o yaml`, as kubectl's
 * printer (sigs.k8s.io/yaml, which encodes with go-yaml v2) picks it:
 *
 *   1. encode.go stringv: a string that go-yaml's resolve() would read back as another
 *      type when plain — null ("", ~, null), a bool (true, yes, on, y, … in the cases
 *      go-yaml lists), an int (10, 0x1F, 0o17, 017, 1_000), a float (1.5, 1e3, .5, 08),
 *      a timestamp (2006-1-2, 2006-01-02T15:04:05Z) — or a YAML 1.1 base-60 float
 *      (1:20) is double-quoted: "1", "". A string holding "\n" asks for a literal block.
 *      Anything else asks to be plain: 1Mi, 1234e567-89ab-…, gpu-0.
 *   2. the emitter (yaml_emitter_analyze_scalar, select_scalar_style): a plain string
 *      that cannot be plain — an indicator first (- ? : , [ ] { } # & * ! | > ' " % @ `
 *      as YAML defines when each counts), ": " or " #" inside, a space first or last —
 *      is single-quoted: '- x', ' a'; one that cannot be single-quoted either (a
 *      character YAML cannot print, a space before a line break) is double-quoted; a
 *      literal that cannot be a block (a space last, such a character) too.
 *
 * Departures, for strings kubectl would print so that a reader does not read them
 * back: a line break other than "\n" (\r, NEL, U+2028, U+2029) makes the string
 * double-quoted (go-yaml writes it raw inside single quotes, where a reader folds it),
 * as do the few strings go-yaml reads as strings but YAML 1.1 readers such as PyYAML
 * do not ("=", "<<", "2001-12-14 21:59:43", "._5": yaml11_reads_as_other_type). And
 * long strings are not folded at 80 columns as go-yaml folds them (the value read
 * back is the same). */
#include "cmd/yaml_style.h"

#include "base/base.h"

#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- resolve(): what a plain scalar reads back as ------------------------------------ */

/* go-yaml v2's resolveMap: the words read as bool or null, exactly these spellings
 * (plus .inf/.nan, read as floats). */
static bool in_resolve_map(const char *s) {
    static const char *const words[] = {
        "y",    "Y",     "yes",   "Yes",   "YES",   "true", "True",  "TRUE",  "on",    "On",    "ON",
        "n",    "N",     "no",    "No",    "NO",    "false", "False", "FALSE", "off",   "Off",   "OFF",
        "",     "~",     "null",  "Null",  "NULL",  ".nan", ".NaN",  ".NAN",  ".inf",  ".Inf",  ".INF",
        "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(s, words[i])) return true;
    return false;
}

static int digit_in(char c, int base) {
    int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10 : 99;
    return d < base ? d : -1;
}

/* Go's strconv.ParseInt(s, 0, 64) (sign allowed) or ParseUint(s, 0, 64) succeeding:
 * 0x / 0o / 0b prefixes, a leading 0 for octal, in range. */
static bool go_int(const char *s, bool is_signed) {
    bool neg = false;
    if (is_signed && (*s == '+' || *s == '-')) neg = *s++ == '-';
    int base = 10;
    if (s[0] == '0' && s[1]) {
        char p = (char)(s[1] | 0x20);
        base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 8;
        s += p == 'x' || p == 'o' || p == 'b' ? 2 : 1;
    }
    if (!*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        int d = digit_in(*s, base);
        if (d < 0 || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    return !is_signed || v <= (uint64_t)INT64_MAX + (neg ? 1u : 0u);
}

static const char *digits(const char *p) {
    while (*p >= '0' && *p <= '9') p++;
    return p;
}

/* yamlStyleFloat, ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$, and Go's
 * ParseFloat succeeding on it (not beyond float64: 1e400 is a string). */
static bool yaml_float(const char *s) {
    const char *p = s + (*s == '+' || *s == '-');
    if (*p == '.') {
        const char *q = digits(p + 1);
        if (q == p + 1) return false;
        p = q;
    } else {
        const char *q = digits(p);
        if (q == p) return false;
        p = *q == '.' ? digits(q + 1) : q;
    }
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '+' || p[1] == '-');
        const char *q = digits(p);
        if (q == p) return false;
        p = q;
    }
    return !*p && !isinf(strtod(s, NULL));
}

/* n (1 or 2) digits at *p within [lo, hi], as Go's time.Parse reads "1", "2", "15",
 * "4", "5"; two_digits: exactly two (a zone offset). */
static bool num_at(const char **p, int lo, int hi, bool two_digits, int *out) {
    const char *s = *p;
    if (*s < '0' || *s > '9') return false;
    int v = *s++ - '0';
    if (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    else if (two_digits) return false;
    if (v < lo || v > hi) return false;
    *p = s, *out = v;
    return true;
}

static int days_in(int month, int year) {
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : d[month - 1];
}

/* go-yaml v2's parseTimestamp: time.Parse with "2006-1-2T15:4:5.999999999Z07:00",
 * the same with "t", "2006-1-2 15:4:5.999999999" or "2006-1-2". */
static bool yaml_timestamp(const char *s) {
    const char *p = digits(s);
    if (p - s != 4 || *p != '-') return false;
    int year = atoi(s), month, day, v;
    p++;
    if (!num_at(&p, 1, 12, false, &month) || *p++ != '-' || !num_at(&p, 1, 31, false, &day)) return false;
    if (day > days_in(month, year)) return false;
    if (!*p) return true;
    char sep = *p++;
    if (sep != 'T' && sep != 't' && sep != ' ') return false;
    if (!num_at(&p, 0, 23, false, &v) || *p++ != ':' || !num_at(&p, 0, 59, false, &v) || *p++ != ':' ||
        !num_at(&p, 0, 59, false, &v))
        return false;
    if ((*p == '.' || *p == ',') && p[1] >= '0' && p[1] <= '9') p = digits(p + 1);
    if (sep == ' ') return !*p;
    if (*p == 'Z') return !p[1];
    if (*p != '+' && *p != '-') return false;
    p++;
    return num_at(&p, 0, 24, true, &v) && *p++ == ':' && num_at(&p, 0, 60, true, &v) && !*p;
}

/* base60float, ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$: YAML 1.1's
 * sexagesimal numbers, which go-yaml quotes for other readers' sake. */
static bool base60_float(const char *s) {
    const char *p = s + (*s == '+' || *s == '-');
    if (*p < '0' || *p > '9') return false;
    while ((*p >= '0' && *p <= '9') || *p == '_') p++;
    int groups = 0;
    while (*p == ':') {
        const char *q = digits(p + 1);
        if (q == p + 1 || q - (p + 1) > 2 || (q - (p + 1) == 2 && p[1] > '5')) return false;
        p = q, groups++;
    }
    if (!groups) return false;
    if (*p == '.')
        for (p++; (*p >= '0' && *p <= '9') || *p == '_'; p++) {
        }
    return !*p;
}

/* resolve(""-tagged, s) != !!str, or base-60: the strings stringv double-quotes. */
static bool reads_as_other_type(const char *s) {
    if (base60_float(s)) return true;
    char c = s[0];
    if (c == '.') return in_resolve_map(s) || yaml_float(s);
    if (strchr("yYnNtTfFoO~", c) || !c) return in_resolve_map(s);
    if (c != '+' && c != '-' && (c < '0' || c > '9')) return false;   /* no hint: a string */
    if (in_resolve_map(s) || yaml_timestamp(s)) return true;
    char *plain = xmalloc(strlen(s) + 1), *o = plain;
    for (const char *p = s; *p; p++)
        if (*p != '_') *o++ = *p;
    *o = '\0';
    bool other = go_int(plain, true) || go_int(plain, false) || yaml_float(plain);
    free(plain);
    return other;
}

/* PyYAML's implicit resolvers (YAML 1.1 as other readers apply it), where they read
 * a plain scalar as another type that go-yaml reads as a string: "=" (a value key),
 * "<<" (a merge key), a timestamp without a zone or with a space before it, a float
 * such as "._5" or "1_0.5_". Quoting those too keeps the output readable by them. */
static bool yaml11_reads_as_other_type(const char *s) {
    static const char *const patterns[] = {
        "^(=|<<)$",
        "^([-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9_]+([eE][-+][0-9]+)?|"
        "[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*)$",
        "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$",
        "^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
        "(\\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)$",
    };
    static regex_t re[sizeof patterns / sizeof patterns[0]];
    static bool compiled;
    if (!compiled) {
        for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
            if (regcomp(&re[i], patterns[i], REG_EXTENDED | REG_NOSUB)) abort();
        compiled = true;
    }
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        if (!regexec(&re[i], s, 0, NULL, 0)) return true;
    return false;
}

/* ---- the emitter's analysis ------------------------------------------------------------ */

static size_t width(unsigned char c) { return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4; }

static bool is_break(const unsigned char *s) {
    return *s == '\r' || *s == '\n' || (s[0] == 0xc2 && s[1] == 0x85) ||
           (s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9));
}

static bool is_blankz(const unsigned char *s) { return !*s || *s == ' ' || *s == '\t' || is_break(s); }

/* libyaml's is_printable (go-yaml's copy): \n, ASCII 0x20–0x7E, U+00A0–U+D7FF,
 * U+E000–U+FFFD but U+FEFF; nothing beyond U+FFFF. */
static bool is_printable(const unsigned char *s) {
    return s[0] == 0x0a || (s[0] >= 0x20 && s[0] <= 0x7e) || (s[0] == 0xc2 && s[1] >= 0xa0) ||
           (s[0] > 0xc2 && s[0] < 0xed) || (s[0] == 0xed && s[1] < 0xa0) || s[0] == 0xee ||
           (s[0] == 0xef && !(s[1] == 0xbb && s[2] == 0xbf) && !(s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf)));
}

typedef struct analysis {
    bool block_plain, single, block;   /* the styles allowed */
    bool odd_break;                    /* a line break other than \n */
} analysis;

/* yaml_emitter_analyze_scalar, for block context (kubectl's output has no flow
 * collections but empty ones). */
static analysis analyse(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    analysis a = {true, true, true, false};
    if (!*s) return a;
    bool indicators = !strncmp(str, "---", 3) || !strncmp(str, "...", 3);
    bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false;
    bool break_space = false, space_break = false, special = false, line_breaks = false;
    bool preceded_by_ws = true, followed_by_ws = is_blankz(s + width(s[0])), prev_space = false, prev_break = false;
    for (size_t i = 0; s[i];) {
        const unsigned char *c = s + i;
        size_t w = width(*c);
        bool last = !c[w];
        if (i == 0) {
            if (strchr("#,[]{}&*!|>'\"%@`", *c)) indicators = true;
            if ((*c == '?' || *c == ':' || *c == '-') && followed_by_ws) indicators = true;
        } else if ((*c == ':' && followed_by_ws) || (*c == '#' && preceded_by_ws)) {
            indicators = true;
        }
        if (!is_printable(c)) special = true;
        if (*c == ' ') {
            leading_space |= i == 0, trailing_space |= last, break_space |= prev_break;
            prev_space = true, prev_break = false;
        } else if (is_break(c)) {
            line_breaks = true, a.odd_break |= *c != '\n';
            leading_break |= i == 0, trailing_break |= last, space_break |= prev_space;
            prev_break = true, prev_space = false;
        } else {
            prev_space = prev_break = false;
        }
        preceded_by_ws = is_blankz(c);
        i += w;
        if (s[i]) followed_by_ws = is_blankz(s + i + width(s[i]));
    }
    if (leading_space || leading_break || trailing_space || trailing_break) a.block_plain = false;
    if (trailing_space) a.block = false;
    if (break_space) a.block_plain = a.single = false;
    if (space_break || special) a.block_plain = a.single = a.block = false;
    if (line_breaks || indicators) a.block_plain = false;
    return a;
}

dra__yaml_style dra__yaml_style_of(const char *s, bool key) {
    analysis a = analyse(s);
    if (reads_as_other_type(s) || yaml11_reads_as_other_type(s) || a.odd_break) return DRA_YAML_DOUBLE;
    if (strchr(s, '\n')) return a.block && !key ? DRA_YAML_LITERAL : DRA_YAML_DOUBLE;
    if (a.block_plain) return DRA_YAML_PLAIN;
    return a.single ? DRA_YAML_SINGLE : DRA_YAML_DOUBLE;
}

/* ---- writing ------------------------------------------------------------------------------ */

static uint32_t code_point(const unsigned char *s, size_t w) {
    if (w == 1) return s[0];
    uint32_t c = s[0] & (0x7f >> w);
    for (size_t i = 1; i < w; i++) c = (c << 6) | (s[i] & 0x3f);
    return c;
}

/* yaml_emitter_write_double_quoted_scalar's escapes. */
static void write_double(FILE *out, const char *str) {
    fputc('"', out);
    for (const unsigned char *s = (const unsigned char *)str; *s;) {
        size_t w = width(*s);
        if (is_printable(s) && !is_break(s) && *s != '"' && *s != '\\' && !(s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)) {
            fwrite(s, 1, w, out);
            s += w;
            continue;
        }
        uint32_t v = code_point(s, w);
        static const char simple[] = {[0x00] = '0', [0x07] = 'a', [0x08] = 'b', [0x09] = 't', [0x0a] = 'n', [0x0b] = 'v',
                                      [0x0c] = 'f', [0x0d] = 'r', [0x1b] = 'e', ['"'] = '"', ['\\'] = '\\'};
        if (v < sizeof simple && simple[v]) fprintf(out, "\\%c", simple[v]);
        else if (v == 0x85) fputs("\\N", out);
        else if (v == 0xa0) fputs("\\_", out);
        else if (v == 0x2028) fputs("\\L", out);
        else if (v == 0x2029) fputs("\\P", out);
        else if (v <= 0xff) fprintf(out, "\\x%02X", (unsigned)v);
        else if (v <= 0xffff) fprintf(out, "\\u%04X", (unsigned)v);
        else fprintf(out, "\\U%08X", (unsigned)v);
        s += w;
    }
    fputc('"', out);
}

static void write_single(FILE *out, const char *s) {
    fputc('\'', out);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', out);
        fputc(*s, out);
    }
    fputc('\'', out);
}

/* yaml_emitter_write_literal_scalar: "|", an indentation hint when the text starts
 * with a space or a break, "-" without a final break, "+" with more than one; then
 * the lines, empty ones without indentation. Ends the line. */
static void write_literal(FILE *out, const char *s, int indent) {
    size_t n = strlen(s);
    fputc('|', out);
    if (s[0] == ' ' || s[0] == '\n') fputc('2', out);
    if (s[n - 1] != '\n') fputc('-', out);
    else if (n == 1 || s[n - 2] == '\n') fputc('+', out);
    fputc('\n', out);
    bool line_start = true;
    for (; *s; s++) {
        if (*s == '\n') {
            fputc('\n', out);
            line_start = true;
            continue;
        }
        if (line_start) fprintf(out, "%*s", indent + 2, "");
        line_start = false;
        fputc(*s, out);
    }
    if (!line_start) fputc('\n', out);
}

bool dra__yaml_string(FILE *out, const char *s, int indent, bool key) {
    switch (dra__yaml_style_of(s, key)) {
    case DRA_YAML_PLAIN: fputs(s, out); return false;
    case DRA_YAML_SINGLE: write_single(out, s); return false;
    case DRA_YAML_DOUBLE: write_double(out, s); return false;
    case DRA_YAML_LITERAL: write_literal(out, s, indent); return true;
    }
    return false;
}
