/* lib_url.c — Kubernetes' URL library: the opaque type `kubernetes.URL`, built by
 * url(s) when Go's url.ParseRequestURI accepts s (an absolute URI or an absolute
 * path), then parsed again with url.Parse (which splits off the #fragment), and
 * its accessors getScheme, getHost, getHostname, getPort, getEscapedPath and
 * getQuery; isURL(s) is "ParseRequestURI accepts s".
 *
 * The parser is a port of the parts of Go's net/url these functions observe: the
 * scheme scan, the `?` split (a lone trailing `?` forces an empty query), opaque
 * URIs, authority parsing (userinfo validation, host with optional port, bracketed
 * IPv6 literals with %25 zones, percent-escape rules per component), path
 * unescaping and EscapedPath's choice between the raw and the re-escaped path,
 * and ParseQuery (`&`-separated, `;` rejected, `+` is a space, bad pairs dropped).
 * Error texts are Go's (`parse "https://a:b:c/": invalid port ":c" after host`),
 * prefixed as Kubernetes prefixes them.
 *
 * Not ported: Go's newer checks on the inside of bracketed hosts, URL.String()
 * (equality compares the parsed components instead). */
#include "base/goquote.h"
#include "cel/lib_support.h"

/* ---- percent-encoding rules (net/url) --------------------------------------------- */

typedef enum { ENC_PATH, ENC_HOST, ENC_ZONE, ENC_USER, ENC_QUERY, ENC_FRAGMENT } enc_mode;

static bool should_escape(unsigned char c, enc_mode mode) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return false;
    if (mode == ENC_HOST || mode == ENC_ZONE) {
        switch (c) {
        case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';':
        case '=': case ':': case '[': case ']': case '<': case '>': case '"':
            return false;
        default: break;
        }
    }
    switch (c) {
    case '-': case '_': case '.': case '~': return false;
    case '$': case '&': case '+': case ',': case '/': case ':': case ';': case '=': case '?': case '@':
        switch (mode) {
        case ENC_PATH: return c == '?';
        case ENC_USER: return c == '@' || c == '/' || c == '?' || c == ':';
        case ENC_QUERY: return true;
        case ENC_FRAGMENT: return false;
        default: break;
        }
        break;
    default: break;
    }
    if (mode == ENC_FRAGMENT && (c == '!' || c == '(' || c == ')' || c == '*')) return false;
    return true;
}

static int unhex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Go's strconv.Quote for the ASCII-ish text of URLs (see lib_net.c for the full
 * rules; bytes >= 0x80 are kept when valid UTF-8, else \xNN). */
static void quote(abuf *b, const char *s, size_t n) {
    abuf_addc(b, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            uint32_t r;
            size_t w = lib_utf8_decode(s + i, n - i, &r);
            if (r == CEL_RUNE_ERROR && w == 1) abuf_addf(b, "\\x%02x", c);
            else if (r < 0xA0) abuf_addf(b, "\\u%04x", r);
            else abuf_add(b, s + i, w);
            i += w;
            continue;
        }
        const char *esc = goquote_escape(c);
        if (esc) abuf_adds(b, esc);
        else if (c < 0x20 || c == 0x7F) abuf_addf(b, "\\x%02x", c);
        else abuf_addc(b, (char)c);
        i++;
    }
    abuf_addc(b, '"');
}

typedef struct url_ctx {
    arena *a;
    const char *err;   /* Go's error text (without the `parse "..."` wrapper) */
} url_ctx;

static bool fail(url_ctx *u, const char *msg) {
    u->err = msg;
    return false;
}

/* net/url unescape: validates and decodes s[0..n) into *out (arena). */
static bool unescape(url_ctx *u, const char *s, size_t n, enc_mode mode, cel_str *out) {
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0) {
                abuf b;
                abuf_init(&b, u->a, 32);
                abuf_adds(&b, "invalid URL escape ");
                quote(&b, s + i, n - i > 3 ? 3 : n - i);
                return fail(u, abuf_string(&b).u.s);
            }
            int v = unhex(s[i + 1]) << 4 | unhex(s[i + 2]);
            bool pct25 = s[i + 1] == '2' && s[i + 2] == '5';
            if ((mode == ENC_HOST && unhex(s[i + 1]) < 8 && !pct25) ||
                (mode == ENC_ZONE && !pct25 && v != ' ' && should_escape((unsigned char)v, ENC_HOST))) {
                abuf b;
                abuf_init(&b, u->a, 32);
                abuf_adds(&b, "invalid URL escape ");
                quote(&b, s + i, 3);
                return fail(u, abuf_string(&b).u.s);
            }
            i += 3;
            continue;
        }
        if ((mode == ENC_HOST || mode == ENC_ZONE) && c < 0x80 && c != '+' && should_escape(c, mode)) {
            abuf b;
            abuf_init(&b, u->a, 40);
            abuf_adds(&b, "invalid character ");
            quote(&b, s + i, 1);
            abuf_adds(&b, " in host name");
            return fail(u, abuf_string(&b).u.s);
        }
        i++;
    }
    if (!out) return true;
    char *d = arena_alloc(u->a, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '%') {
            d[k++] = (char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
            i += 3;
        } else {
            d[k++] = (mode == ENC_QUERY && s[i] == '+') ? ' ' : s[i];
            i++;
        }
    }
    d[k] = '\0';
    out->s = d;
    out->len = (uint32_t)k;
    return true;
}

static bool valid_encoded(const char *s, size_t n, enc_mode mode) {
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';':
        case '=': case ':': case '@': case '[': case ']': case '%':
            break;
        default:
            if (should_escape((unsigned char)s[i], mode)) return false;
        }
    }
    return true;
}

static cel_str escape(arena *a, const char *s, size_t n, enc_mode mode) {
    char *d = arena_alloc(a, 3 * n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (should_escape(c, mode)) {
            d[k++] = '%';
            d[k++] = "0123456789ABCDEF"[c >> 4];
            d[k++] = "0123456789ABCDEF"[c & 15];
        } else {
            d[k++] = (char)c;
        }
    }
    d[k] = '\0';
    return (cel_str){.s = d, .len = (uint32_t)k};
}

/* ---- parsing ------------------------------------------------------------------------- */

typedef struct url_val {
    cel_str scheme;       /* lower-cased */
    cel_str opaque;
    cel_str host;         /* decoded, with port */
    cel_str escaped_path; /* EscapedPath() */
    cel_str raw_query;
    cel_str fragment;     /* decoded */
    bool force_query;
} url_val;

static bool valid_optional_port(const char *p, size_t n) {
    if (n == 0) return true;
    if (p[0] != ':') return false;
    for (size_t i = 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9') return false;
    return true;
}

static bool invalid_port(url_ctx *u, const char *p, size_t n) {
    abuf b;
    abuf_init(&b, u->a, 40);
    abuf_adds(&b, "invalid port ");
    quote(&b, p, n);
    abuf_adds(&b, " after host");
    return fail(u, abuf_string(&b).u.s);
}

static const char *last_of(const char *s, size_t n, char c) {
    for (size_t i = n; i-- > 0;)
        if (s[i] == c) return s + i;
    return NULL;
}

static bool parse_host(url_ctx *u, const char *h, size_t n, cel_str *out) {
    if (n > 0 && h[0] == '[') {
        const char *rb = last_of(h, n, ']');
        if (!rb) return fail(u, "missing ']' in host");
        size_t i = (size_t)(rb - h);
        if (!valid_optional_port(h + i + 1, n - i - 1)) return invalid_port(u, h + i + 1, n - i - 1);
        const char *z = memmem(h, i, "%25", 3);
        if (z) {
            size_t zi = (size_t)(z - h);
            cel_str p1, p2, p3;
            if (!unescape(u, h, zi, ENC_HOST, &p1)) return false;
            if (!unescape(u, h + zi, i - zi, ENC_ZONE, &p2)) return false;
            if (!unescape(u, h + i, n - i, ENC_HOST, &p3)) return false;
            abuf b;
            abuf_init(&b, u->a, n + 1);
            abuf_add(&b, p1.s, p1.len);
            abuf_add(&b, p2.s, p2.len);
            abuf_add(&b, p3.s, p3.len);
            cel_value v = abuf_string(&b);
            *out = (cel_str){.s = v.u.s, .len = v.len};
            return true;
        }
    } else {
        const char *colon = last_of(h, n, ':');
        if (colon && !valid_optional_port(colon, n - (size_t)(colon - h)))
            return invalid_port(u, colon, n - (size_t)(colon - h));
    }
    return unescape(u, h, n, ENC_HOST, out);
}

static bool valid_userinfo(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) continue;
        switch (c) {
        case '-': case '.': case '_': case ':': case '~': case '!': case '$': case '&': case '\'': case '(':
        case ')': case '*': case '+': case ',': case ';': case '=': case '%': case '@':
            continue;
        default: return false;   /* includes every non-ASCII rune */
        }
    }
    return true;
}

static bool parse_authority(url_ctx *u, const char *s, size_t n, url_val *v) {
    const char *at = last_of(s, n, '@');
    size_t hs = at ? (size_t)(at - s) + 1 : 0;
    if (!parse_host(u, s + hs, n - hs, &v->host)) return false;
    if (!at) return true;
    size_t un = (size_t)(at - s);
    if (!valid_userinfo(s, un)) return fail(u, "net/url: invalid userinfo");
    const char *colon = memchr(s, ':', un);
    if (!colon) return unescape(u, s, un, ENC_USER, NULL);
    size_t cn = (size_t)(colon - s);
    if (!unescape(u, s, cn, ENC_USER, NULL)) return false;
    return unescape(u, colon + 1, un - cn - 1, ENC_USER, NULL);
}

/* net/url parse(rawURL, viaRequest) */
static bool parse(url_ctx *u, const char *s, size_t n, bool via_request, url_val *v) {
    memset(v, 0, sizeof *v);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F) return fail(u, "net/url: invalid control character in URL");
    if (n == 0 && via_request) return fail(u, "empty url");
    if (n == 1 && s[0] == '*') {
        v->escaped_path = (cel_str){.s = "*", .len = 1};
        return true;
    }
    /* scheme */
    const char *rest = s;
    size_t rn = n;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
        if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
            if (i == 0) break;
            continue;
        }
        if (c == ':') {
            if (i == 0) return fail(u, "missing protocol scheme");
            char *sc = arena_alloc(u->a, i + 1);
            for (size_t k = 0; k < i; k++) sc[k] = (char)((s[k] >= 'A' && s[k] <= 'Z') ? s[k] + 32 : s[k]);
            sc[i] = '\0';
            v->scheme = (cel_str){.s = sc, .len = (uint32_t)i};
            rest = s + i + 1;
            rn = n - i - 1;
        }
        break;
    }
    /* query */
    size_t nq = 0;
    for (size_t i = 0; i < rn; i++) nq += rest[i] == '?';
    if (rn > 0 && rest[rn - 1] == '?' && nq == 1) {
        v->force_query = true;
        rn--;
    } else {
        const char *q = memchr(rest, '?', rn);
        if (q) {
            v->raw_query = (cel_str){.s = q + 1, .len = (uint32_t)(rn - (size_t)(q - rest) - 1)};
            rn = (size_t)(q - rest);
        }
    }
    bool slash = rn > 0 && rest[0] == '/';
    if (!slash) {
        if (v->scheme.len) {
            v->opaque = (cel_str){.s = rest, .len = (uint32_t)rn};
            return true;
        }
        if (via_request) return fail(u, "invalid URI for request");
        const char *sl = memchr(rest, '/', rn);
        size_t seg = sl ? (size_t)(sl - rest) : rn;
        if (memchr(rest, ':', seg)) return fail(u, "first path segment in URL cannot contain colon");
    }
    bool dslash = rn >= 2 && rest[0] == '/' && rest[1] == '/';
    bool tslash = rn >= 3 && dslash && rest[2] == '/';
    if ((v->scheme.len || (!via_request && !tslash)) && dslash) {
        const char *auth = rest + 2;
        size_t an = rn - 2;
        const char *sl = memchr(auth, '/', an);
        size_t alen = sl ? (size_t)(sl - auth) : an;
        if (!parse_authority(u, auth, alen, v)) return false;
        rest = auth + alen;
        rn = an - alen;
    }
    /* path: validate, then EscapedPath = the raw text when it is validly encoded,
     * else the re-escaped decoded path */
    cel_str path;
    if (!unescape(u, rest, rn, ENC_PATH, &path)) return false;
    if (valid_encoded(rest, rn, ENC_PATH)) v->escaped_path = (cel_str){.s = rest, .len = (uint32_t)rn};
    else v->escaped_path = escape(u->a, path.s, path.len, ENC_PATH);
    return true;
}

/* `parse "<raw>": <err>` (url.Error) */
static const char *url_error(url_ctx *u, const char *raw, size_t n) {
    abuf b;
    abuf_init(&b, u->a, n + 64);
    abuf_adds(&b, "parse ");
    quote(&b, raw, n);
    abuf_adds(&b, ": ");
    abuf_adds(&b, u->err);
    return abuf_string(&b).u.s;
}

static bool parse_request_uri(url_ctx *u, const char *s, size_t n, url_val *v) {
    if (parse(u, s, n, true, v)) return true;
    u->err = url_error(u, s, n);
    return false;
}

/* url.Parse: the fragment first, then parse(…, false) */
static bool parse_url(url_ctx *u, const char *s, size_t n, url_val *v) {
    const char *h = memchr(s, '#', n);
    size_t un = h ? (size_t)(h - s) : n;
    if (!parse(u, s, un, false, v)) {
        u->err = url_error(u, s, un);
        return false;
    }
    if (h && h + 1 < s + n) {
        if (!unescape(u, h + 1, n - un - 1, ENC_FRAGMENT, &v->fragment)) {
            u->err = url_error(u, s, n);
            return false;
        }
    }
    return true;
}

const char *cel__lib_url_request_uri_error(arena *a, const char *s, size_t n) {
    url_ctx u = {a, NULL};
    url_val v;
    return parse_request_uri(&u, s, n, &v) ? NULL : u.err;
}

/* ---- the opaque type ------------------------------------------------------------------ */

static bool str_eq(cel_str a, cel_str b) { return a.len == b.len && (a.len == 0 || !memcmp(a.s, b.s, a.len)); }

static int url_cmp(const cel_opaque *x, const cel_opaque *y) {
    const url_val *a = x->data, *b = y->data;
    return !(str_eq(a->scheme, b->scheme) && str_eq(a->opaque, b->opaque) && str_eq(a->host, b->host) &&
             str_eq(a->escaped_path, b->escaped_path) && str_eq(a->raw_query, b->raw_query) &&
             str_eq(a->fragment, b->fragment) && a->force_query == b->force_query);
}

static void url_format(const cel_opaque *o, char *buf, size_t n) {
    const url_val *v = o->data;
    snprintf(buf, n, "url(\"%.*s%s%s%.*s%.*s%s%.*s\")", (int)v->scheme.len, v->scheme.s, v->scheme.len ? ":" : "",
             v->host.len ? "//" : "", (int)v->host.len, v->host.s, (int)v->escaped_path.len, v->escaped_path.s,
             v->raw_query.len ? "?" : "", (int)v->raw_query.len, v->raw_query.s);
}

static const cel_opaque_type url_type = {"kubernetes.URL", url_cmp, url_format};

static const url_val *url_of(const cel_value *v) { return v->u.o->data; }

static cel_value str_value(cel_str s) { return cel_string(s.s ? s.s : "", s.len); }

/* ---- functions ----------------------------------------------------------------------- */

/* url() and isURL(): Kubernetes charges "url" ceil(0.1 × size); isURL has no rule,
 * so cel-go's default 1, the parse being hidden work. Accessors 1. */
static cel_value fn_url(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    url_ctx u = {c->arena, NULL};
    url_val v;
    if (!parse_request_uri(&u, a[0].u.s, a[0].len, &v) || !parse_url(&u, a[0].u.s, a[0].len, &v))
        return cel__call_error(c, "URL parse error during conversion from string: %s", u.err);
    url_val *d = arena_memdup(c->arena, &v, sizeof v);
    cel_opaque *o = arena_alloc(c->arena, sizeof *o);
    o->type = &url_type;
    o->data = d;
    return cel_opaque_value(o);
}

static cel_value fn_is_url(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!cel_call_work(c, a[0].len)) return cel__cost_exceeded();
    url_ctx u = {c->arena, NULL};
    url_val v;
    return cel_bool(parse_request_uri(&u, a[0].u.s, a[0].len, &v));
}

static cel_value fn_scheme(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return str_value(url_of(&a[0])->scheme);
}

static cel_value fn_host(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return str_value(url_of(&a[0])->host);
}

/* net/url splitHostPort: the port is after the last colon when it is all digits;
 * brackets around the host are dropped. */
static void split_host_port(cel_str hp, cel_str *host, cel_str *port) {
    *host = hp;
    *port = (cel_str){.s = "", .len = 0};
    const char *colon = hp.len ? last_of(hp.s, hp.len, ':') : NULL;
    if (colon && valid_optional_port(colon, hp.len - (size_t)(colon - hp.s))) {
        host->len = (uint32_t)(colon - hp.s);
        *port = (cel_str){.s = colon + 1, .len = (uint32_t)(hp.len - host->len - 1)};
    }
    if (host->len >= 2 && host->s[0] == '[' && host->s[host->len - 1] == ']') {
        host->s++;
        host->len -= 2;
    }
}

static cel_value fn_hostname(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    cel_str h, p;
    split_host_port(url_of(&a[0])->host, &h, &p);
    return str_value(h);
}

static cel_value fn_port(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    cel_str h, p;
    split_host_port(url_of(&a[0])->host, &h, &p);
    return str_value(p);
}

static cel_value fn_escaped_path(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return str_value(url_of(&a[0])->escaped_path);
}

/* url.ParseQuery, errors ignored as URL.Query() ignores them. */
static cel_value fn_query(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    cel_str q = url_of(&a[0])->raw_query;
    if (!cel_call_work(c, q.len)) return cel__cost_exceeded();   /* getQuery costs 1 */
    cel_map *m = cel__map_new(c->arena, 4);
    url_ctx u = {c->arena, NULL};
    const char *s = q.s;
    size_t rem = q.len;
    while (rem > 0) {
        const char *amp = memchr(s, '&', rem);
        size_t kn = amp ? (size_t)(amp - s) : rem;
        const char *pair = s;
        s += kn + (amp ? 1 : 0);
        rem -= kn + (amp ? 1 : 0);
        if (kn == 0 || memchr(pair, ';', kn)) continue;
        const char *eq = memchr(pair, '=', kn);
        size_t keyn = eq ? (size_t)(eq - pair) : kn;
        cel_str key, val;
        if (!unescape(&u, pair, keyn, ENC_QUERY, &key)) continue;
        if (!unescape(&u, eq ? eq + 1 : "", eq ? kn - keyn - 1 : 0, ENC_QUERY, &val)) continue;
        cel_value kv = cel_string(key.s, key.len);
        cel_value existing;
        if (cel__map_find(c->arena, c->names, &(cel_value){.kind = CV_MAP, .u.map = m}, &kv, &existing)) {
            cel__list_push(c->arena, (cel_list *)existing.u.list, cel_string(val.s, val.len));
        } else {
            cel_list *l = cel__list_new(c->arena, 2);
            cel__list_push(c->arena, l, cel_string(val.s, val.len));
            cel__map_put(c->arena, m, kv, cel_list_value(l));
        }
    }
    return cel_map_value(m);
}

#define R CEL_RECEIVER
#define G CEL_GLOBAL

static const cel_overload url_overloads[] = {
    {"url", "string_to_url", G, 1, 0, {"string"}, "kubernetes.URL", fn_url, 1, NULL, NULL},
    {"isURL", "is_url_string", G, 1, CEL_FN_FOLD, {"string"}, "bool", fn_is_url, 1, NULL, NULL},
    {"getScheme", "url_get_scheme", R, 1, 0, {"kubernetes.URL"}, "string", fn_scheme, 1, NULL, NULL},
    {"getHost", "url_get_host", R, 1, 0, {"kubernetes.URL"}, "string", fn_host, 1, NULL, NULL},
    {"getHostname", "url_get_hostname", R, 1, 0, {"kubernetes.URL"}, "string", fn_hostname, 1, NULL, NULL},
    {"getPort", "url_get_port", R, 1, 0, {"kubernetes.URL"}, "string", fn_port, 1, NULL, NULL},
    {"getEscapedPath", "url_get_escaped_path", R, 1, 0, {"kubernetes.URL"}, "string", fn_escaped_path, 1, NULL, NULL},
    {"getQuery", "url_get_query", R, 1, 0, {"kubernetes.URL"}, "map(string, list(string))", fn_query, 1, NULL, NULL},
};

const cel_library cel_lib_url = {"url", url_overloads, ARRAY_SIZE(url_overloads)};
