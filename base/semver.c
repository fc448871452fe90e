/* semver.c — semantic versions as github.com/blang/semver/v4 parses and orders
 * them (Parse, Version.Compare, PRVersion.Compare), with blang's error texts word
 * for word (including the strconv.ParseUint ones it passes through), and the
 * Kubernetes CEL normalisation `semver(s, true)` (normalizeAndParse in
 * apiserver's semverlib.go). A version keeps pointers to its pre-release and build
 * text instead of splitting them into lists: identifiers are split again when two
 * versions are compared, which costs nothing when neither has a pre-release. */
#include "base/semver.h"
#include "base/goquote.h"

#include <stdio.h>
#include <string.h>

static inline bool sv_isdigit(char c) { return c >= '0' && c <= '9'; }
static inline bool sv_isalnum(char c) {
    return sv_isdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

static bool sv_only_digits(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!sv_isdigit(s[i])) return false;
    return true;
}

static bool sv_only_alnum(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!sv_isalnum(s[i])) return false;
    return true;
}

static bool sv_leading_zero(const char *s, size_t n) { return n > 1 && s[0] == '0'; }

/* Length of a valid UTF-8 sequence at s (1..4), or 0 when the bytes are not one. */
static size_t sv_utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

/* Go's %q for the short strings that appear in messages: printable text as is,
 * quotes and backslashes escaped, control and invalid bytes as \xNN. Non-ASCII
 * characters that are valid UTF-8 are kept (Go keeps the printable ones). */
static void sv_quote(const char *s, size_t n, char *out, size_t cap) {
    size_t o = 0;
#define SV_PUT(c) do { if (o + 1 < cap) out[o++] = (c); } while (0)
    SV_PUT('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = goquote_escape(c);
        if (esc) {
            for (; *esc; esc++) SV_PUT(*esc);
        } else if (c >= 0x20 && c < 0x7F) {
            SV_PUT((char)c);
        } else if (c >= 0x80) {
            size_t l = sv_utf8_len((const unsigned char *)s + i, n - i);
            if (l) {
                for (size_t k = 0; k < l; k++) SV_PUT(s[i + k]);
                i += l - 1;
            } else {
                char hx[8];
                snprintf(hx, sizeof hx, "\\x%02x", c);
                for (char *p = hx; *p; p++) SV_PUT(*p);
            }
        } else {
            char hx[8];
            snprintf(hx, sizeof hx, "\\x%02x", c);
            for (char *p = hx; *p; p++) SV_PUT(*p);
        }
    }
    SV_PUT('"');
    out[o < cap ? o : cap - 1] = '\0';
#undef SV_PUT
}

/* "<what> %q" into e. */
static bool sv_failq(err *e, const char *what, const char *s, size_t n) {
    if (!e) return false;
    char q[ERR_MSG_MAX / 2];
    sv_quote(s, n, q, sizeof q);
    return err_set(e, "%s %s", what, q);
}

/* strconv.ParseUint(s, 10, 64) with its error texts (digits are already checked). */
static bool sv_parse_uint(const char *s, size_t n, uint64_t *out, err *e) {
    if (n == 0) return err_set(e, "strconv.ParseUint: parsing \"\": invalid syntax");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            if (e) {
                char q[ERR_MSG_MAX / 2];
                sv_quote(s, n, q, sizeof q);
                err_set(e, "strconv.ParseUint: parsing %s: value out of range", q);
            }
            return false;
        }
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* A numeric component: major, minor or patch. */
static bool sv_component(const char *s, size_t n, const char *name, uint64_t *out, err *e) {
    char what[64];
    if (!sv_only_digits(s, n)) {
        snprintf(what, sizeof what, "Invalid character(s) found in %s number", name);
        return sv_failq(e, what, s, n);
    }
    if (sv_leading_zero(s, n)) {
        snprintf(what, sizeof what, "%c%s number must not contain leading zeroes", name[0] - 'a' + 'A', name + 1);
        return sv_failq(e, what, s, n);
    }
    return sv_parse_uint(s, n, out, e);
}

bool semver_parse(const char *s, size_t n, semver *out, err *e) {
    if (n == 0) return err_set(e, "Version string empty");
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', (size_t)(s + n - d1 - 1)) : NULL;
    if (!d2) return err_set(e, "No Major.Minor.Patch elements found");

    semver v = {0};
    if (!sv_component(s, (size_t)(d1 - s), "major", &v.major, e)) return false;
    if (!sv_component(d1 + 1, (size_t)(d2 - d1 - 1), "minor", &v.minor, e)) return false;

    const char *p = d2 + 1, *end = s + n;
    const char *plus = memchr(p, '+', (size_t)(end - p));
    const char *patch_end = plus ? plus : end;
    const char *dash = memchr(p, '-', (size_t)(patch_end - p));
    const char *num_end = dash ? dash : patch_end;
    if (!sv_component(p, (size_t)(num_end - p), "patch", &v.patch, e)) return false;

    if (dash) {
        v.pre = dash + 1;
        v.pre_len = (uint32_t)(patch_end - dash - 1);
        const char *id = v.pre, *pend = patch_end;
        for (;;) {
            const char *dot = memchr(id, '.', (size_t)(pend - id));
            const char *ie = dot ? dot : pend;
            size_t il = (size_t)(ie - id);
            if (il == 0) return err_set(e, "Prerelease is empty");
            if (sv_only_digits(id, il)) {
                if (sv_leading_zero(id, il))
                    return sv_failq(e, "Numeric PreRelease version must not contain leading zeroes", id, il);
                uint64_t dummy;
                if (!sv_parse_uint(id, il, &dummy, e)) return false;
            } else if (!sv_only_alnum(id, il)) {
                return sv_failq(e, "Invalid character(s) found in prerelease", id, il);
            }
            if (!dot) break;
            id = dot + 1;
        }
    }
    if (plus) {
        v.build = plus + 1;
        v.build_len = (uint32_t)(end - plus - 1);
        const char *id = v.build;
        for (;;) {
            const char *dot = memchr(id, '.', (size_t)(end - id));
            const char *ie = dot ? dot : end;
            size_t il = (size_t)(ie - id);
            if (il == 0) return err_set(e, "Build meta data is empty");
            if (!sv_only_alnum(id, il)) return sv_failq(e, "Invalid character(s) found in build meta data", id, il);
            if (!dot) break;
            id = dot + 1;
        }
    }
    *out = v;
    return true;
}

bool semver_parse_k8s(const char *s, size_t n, bool normalize, arena *a, semver *out, err *e) {
    if (!normalize) return semver_parse(s, n, out, e);
    /* normalizeAndParse: strip one "v", split into at most three parts on ".",
     * strip leading zeros of each part longer than one character (keeping one
     * "0" when nothing numeric is left in front), pad short forms with ".0". */
    if (n && s[0] == 'v') { s++; n--; }
    const char *part[3];
    size_t plen[3], np = 0;
    const char *p = s, *end = s + n;
    while (np < 2) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        if (!dot) break;
        part[np] = p;
        plen[np++] = (size_t)(dot - p);
        p = dot + 1;
    }
    part[np] = p;
    plen[np++] = (size_t)(end - p);

    char *buf = arena_alloc(a, n + 8);
    size_t o = 0;
    for (size_t i = 0; i < np; i++) {
        const char *q = part[i];
        size_t l = plen[i];
        if (l > 1) {
            while (l && *q == '0') { q++; l--; }
            if (l == 0 || !sv_isdigit(*q)) buf[o++] = '0';
        }
        memcpy(buf + o, q, l);
        o += l;
        if (i + 1 < np) buf[o++] = '.';
    }
    if (np < 3) {
        if (memchr(part[np - 1], '+', plen[np - 1]) || memchr(part[np - 1], '-', plen[np - 1]))
            return err_set(e, "short version cannot contain PreRelease/Build meta data");
        for (; np < 3; np++) {
            buf[o++] = '.';
            buf[o++] = '0';
        }
    }
    buf[o] = '\0';
    return semver_parse(buf, o, out, e);
}

/* Next dot-separated identifier of [*p, end); false when none is left. */
static bool sv_next_id(const char **p, const char *end, const char **id, size_t *len) {
    if (!*p) return false;
    const char *dot = memchr(*p, '.', (size_t)(end - *p));
    *id = *p;
    *len = (size_t)((dot ? dot : end) - *p);
    *p = dot ? dot + 1 : NULL;
    return true;
}

/* PRVersion.Compare: numeric below alphanumeric, numbers by value, strings bytewise. */
static int sv_cmp_id(const char *a, size_t al, const char *b, size_t bl) {
    bool an = sv_only_digits(a, al), bn = sv_only_digits(b, bl);
    if (an != bn) return an ? -1 : 1;
    if (an) {
        /* canonical numerals (no leading zeros): longer is larger */
        while (al > 1 && *a == '0') { a++; al--; }
        while (bl > 1 && *b == '0') { b++; bl--; }
        if (al != bl) return al < bl ? -1 : 1;
        int c = memcmp(a, b, al);
        return c < 0 ? -1 : c > 0;
    }
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c) return c < 0 ? -1 : 1;
    return al < bl ? -1 : al > bl;
}

int semver_cmp(const semver *a, const semver *b) {
    if (a->major != b->major) return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
    if (a->patch != b->patch) return a->patch < b->patch ? -1 : 1;
    bool ap = a->pre != NULL, bp = b->pre != NULL;
    if (!ap && !bp) return 0;
    if (!ap) return 1; /* a release ranks above its pre-releases */
    if (!bp) return -1;
    const char *pa = a->pre, *pb = b->pre, *ea = a->pre + a->pre_len, *eb = b->pre + b->pre_len;
    for (;;) {
        const char *ia = NULL, *ib = NULL;
        size_t la = 0, lb = 0;
        bool ha = sv_next_id(&pa, ea, &ia, &la), hb = sv_next_id(&pb, eb, &ib, &lb);
        if (!ha || !hb) return ha == hb ? 0 : (ha ? 1 : -1);
        int c = sv_cmp_id(ia, la, ib, lb);
        if (c) return c;
    }
}

size_t semver_format(const semver *v, char *buf, size_t n) {
    int len = snprintf(buf, n, "%llu.%llu.%llu%s%.*s%s%.*s", (unsigned long long)v->major,
                       (unsigned long long)v->minor, (unsigned long long)v->patch, v->pre ? "-" : "",
                       v->pre ? (int)v->pre_len : 0, v->pre ? v->pre : "", v->build ? "+" : "",
                       v->build ? (int)v->build_len : 0, v->build ? v->build : "");
    return len < 0 ? 0 : (size_t)len;
}
