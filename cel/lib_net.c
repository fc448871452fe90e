/* lib_net.c — Kubernetes' IP and CIDR libraries: the opaque types `net.IP` and
 * `net.CIDR`, built by ip()/cidr() from strings with Go's net/netip parsing as
 * Kubernetes applies it (IPv4-mapped IPv6 addresses and zones rejected, leading
 * zeros in IPv4 octets rejected, host bits after a CIDR mask kept), and their
 * accessors and predicates.
 *
 *   ip(s) isIP(s) ip.isCanonical(s) string(ip) ip.family()
 *   ip.isUnspecified() .isLoopback() .isLinkLocalMulticast() .isLinkLocalUnicast()
 *   .isGlobalUnicast()
 *   cidr(s) isCIDR(s) string(cidr) cidr.containsIP(ip|s) .containsCIDR(cidr|s)
 *   .ip() .prefixLength() .masked()
 *
 * Texts are Go's: errors embed netip's messages (`ParseAddr("1.2.3"): IPv4 address
 * too short`), doubly wrapped for cidr() exactly as Kubernetes wraps them, and
 * string() prints netip's canonical form (RFC 5952 for IPv6). Two Kubernetes
 * behaviours are kept on purpose because selectors evaluated by the scheduler see
 * them: containsCIDR compares the other prefix's *address* with this prefix's
 * masked address (so '10.0.0.0/8' contains '10.0.0.0/16' but not '10.1.0.0/16'),
 * and containsIP with an unparsable string is "no such overload" where
 * containsCIDR with one returns the parse error.
 *
 * Values live in the evaluation arena; these constructors are not folded at
 * compile time because a folded constant must be deep-copied into the program and
 * opaque values carry no copy hook. */
#include "base/goquote.h"
#include "cel/lib_support.h"

#include <inttypes.h>

/* ---- Go's strconv.Quote ----------------------------------------------------------- */

/* Appends s quoted as Go's %q / strconv.Quote does it for the strings these
 * libraries see: printable text kept, \" \\ and the C escapes, other control bytes
 * as \xNN, invalid UTF-8 as \xNN, non-printable code points as \uNNNN. */
static void go_quote(abuf *b, const char *s, size_t n) {
    abuf_addc(b, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            const char *esc = goquote_escape(c);
            if (esc) abuf_adds(b, esc);
            else if (c < 0x20 || c == 0x7F) abuf_addf(b, "\\x%02x", c);
            else abuf_addc(b, (char)c);
            i++;
            continue;
        }
        uint32_t r;
        size_t w = lib_utf8_decode(s + i, n - i, &r);
        if (r == CEL_RUNE_ERROR && w == 1) abuf_addf(b, "\\x%02x", c);
        else if (r < 0xA0 || r == 0xAD || (r >= 0x2028 && r <= 0x2029) || r == 0xFEFF) abuf_addf(b, "\\u%04x", r);
        else abuf_add(b, s + i, w);
        i += w;
    }
    abuf_addc(b, '"');
}

/* ---- netip.Addr -------------------------------------------------------------------- */

typedef struct net_addr {
    uint8_t b[16];    /* IPv4 in b[0..4) */
    bool v4;
    bool zone;        /* an IPv6 zone was given (Kubernetes rejects it) */
} net_addr;

typedef struct net_prefix {
    net_addr a;
    int bits;
} net_prefix;

/* A parse failure: netip's message and the optional unparsed remainder ("at"). */
typedef struct parse_err {
    const char *msg;
    const char *at;
    size_t at_len;
} parse_err;

static bool perr(parse_err *e, const char *msg, const char *at, size_t at_len) {
    e->msg = msg;
    e->at = at;
    e->at_len = at_len;
    return false;
}

/* netip parseIPv4Fields over s[0..n) */
static bool parse_v4_fields(const char *s, size_t n, uint8_t *out, parse_err *e) {
    int val = 0, pos = 0, dig = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            if (dig == 1 && val == 0) return perr(e, "IPv4 field has octet with leading zero", NULL, 0);
            val = val * 10 + (c - '0');
            dig++;
            if (val > 255) return perr(e, "IPv4 field has value >255", NULL, 0);
        } else if (c == '.') {
            if (i == 0 || i == n - 1 || s[i - 1] == '.')
                return perr(e, "IPv4 field must have at least one digit", s + i, n - i);
            if (pos == 3) return perr(e, "IPv4 address too long", NULL, 0);
            out[pos++] = (uint8_t)val;
            val = 0;
            dig = 0;
        } else {
            return perr(e, "unexpected character", s + i, n - i);
        }
    }
    if (pos < 3) return perr(e, "IPv4 address too short", NULL, 0);
    out[3] = (uint8_t)val;
    return true;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* netip parseIPv6 */
static bool parse_v6(const char *in, size_t inlen, net_addr *a, parse_err *e) {
    const char *s = in;
    size_t n = inlen;
    const char *pct = memchr(in, '%', inlen);
    size_t zone_len = 0;
    if (pct) {
        n = (size_t)(pct - in);
        zone_len = inlen - n - 1;
        if (zone_len == 0) return perr(e, "zone must be a non-empty string", NULL, 0);
        a->zone = true;
    }
    memset(a->b, 0, 16);
    a->v4 = false;
    int ellipsis = -1;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        ellipsis = 0;
        s += 2;
        n -= 2;
        if (n == 0) return true;
    }
    int i = 0;
    while (i < 16) {
        size_t off = 0;
        uint32_t acc = 0;
        for (; off < n; off++) {
            int h = hexval(s[off]);
            if (h < 0) break;
            acc = (acc << 4) + (uint32_t)h;
            if (off > 3) return perr(e, "each colon-separated field must have at most 4 hex digits", s, n);
            if (acc > 0xFFFF) return perr(e, "IPv6 field has value >=2^16", s, n);
        }
        if (off == 0) return perr(e, "each colon-separated field must have at least one digit", s, n);
        if (off < n && s[off] == '.') {
            if (ellipsis < 0 && i != 12)
                return perr(e, "embedded IPv4 address must replace the final 2 fields of the address", s, n);
            if (i + 4 > 16)
                return perr(e, "too many hex fields to fit an embedded IPv4 at the end of the address", s, n);
            if (!parse_v4_fields(s, n, a->b + i, e)) return false;
            n = 0;
            i += 4;
            break;
        }
        a->b[i] = (uint8_t)(acc >> 8);
        a->b[i + 1] = (uint8_t)acc;
        i += 2;
        s += off;
        n -= off;
        if (n == 0) break;
        if (s[0] != ':') return perr(e, "unexpected character, want colon", s, n);
        if (n == 1) return perr(e, "colon must be followed by more characters", s, n);
        s++;
        n--;
        if (s[0] == ':') {
            if (ellipsis >= 0) return perr(e, "multiple :: in address", s, n);
            ellipsis = i;
            s++;
            n--;
            if (n == 0) break;
        }
    }
    if (n != 0) return perr(e, "trailing garbage after address", s, n);
    if (i < 16) {
        if (ellipsis < 0) return perr(e, "address string too short", NULL, 0);
        int k = 16 - i;
        for (int j = i - 1; j >= ellipsis; j--) a->b[j + k] = a->b[j];
        memset(a->b + ellipsis, 0, (size_t)k);
    } else if (ellipsis >= 0) {
        return perr(e, "the :: must expand to at least one field of zeros", s, n);
    }
    return true;
}

/* netip.ParseAddr */
static bool parse_addr(const char *s, size_t n, net_addr *a, parse_err *e) {
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '.':
            a->v4 = true;
            return parse_v4_fields(s, n, a->b, e);
        case ':': return parse_v6(s, n, a, e);
        case '%': return perr(e, "missing IPv6 address", NULL, 0);
        default: break;
        }
    }
    return perr(e, "unable to parse IP", NULL, 0);
}

static bool is_4in6(const net_addr *a) {
    if (a->v4) return false;
    for (int i = 0; i < 10; i++)
        if (a->b[i]) return false;
    return a->b[10] == 0xFF && a->b[11] == 0xFF;
}

/* netip.Addr.String (no zones, no 4-in-6: both are rejected before) */
static void addr_string(abuf *b, const net_addr *a) {
    if (a->v4) {
        abuf_addf(b, "%u.%u.%u.%u", a->b[0], a->b[1], a->b[2], a->b[3]);
        return;
    }
    uint16_t w[8];
    for (int i = 0; i < 8; i++) w[i] = (uint16_t)(a->b[2 * i] << 8 | a->b[2 * i + 1]);
    int zs = 255, ze = 255;
    for (int i = 0; i < 8; i++) {
        int j = i;
        while (j < 8 && w[j] == 0) j++;
        int l = j - i;
        if (l >= 2 && l > ze - zs) {
            zs = i;
            ze = j;
        }
    }
    for (int i = 0; i < 8; i++) {
        if (i == zs) {
            abuf_adds(b, "::");
            i = ze;
            if (i >= 8) break;
        } else if (i > 0) {
            abuf_addc(b, ':');
        }
        abuf_addf(b, "%x", w[i]);
    }
}

/* The full Kubernetes message for a failed ParseAddr of raw. */
static void parse_addr_msg(abuf *b, const char *raw, size_t n, const parse_err *e) {
    abuf_adds(b, "ParseAddr(");
    go_quote(b, raw, n);
    abuf_adds(b, "): ");
    abuf_adds(b, e->msg);
    if (e->at && e->at_len) {
        abuf_adds(b, " (at ");
        go_quote(b, e->at, e->at_len);
        abuf_addc(b, ')');
    }
}

/* Kubernetes' parseIPAddr: ParseAddr, then no zone, no IPv4-mapped IPv6. On failure
 * returns false with the message in *msg (arena). */
static bool k8s_parse_ip(arena *ar, const char *s, size_t n, net_addr *a, const char **msg) {
    parse_err e = {0};
    abuf b;
    abuf_init(&b, ar, 64 + n);
    if (!parse_addr(s, n, a, &e)) {
        abuf_adds(&b, "IP Address ");
        go_quote(&b, s, n);
        abuf_adds(&b, " parse error during conversion from string: ");
        parse_addr_msg(&b, s, n, &e);
    } else if (a->zone) {
        abuf_adds(&b, "IP address ");
        go_quote(&b, s, n);
        abuf_adds(&b, " with zone value is not allowed");
    } else if (is_4in6(a)) {
        abuf_adds(&b, "IPv4-mapped IPv6 address ");
        go_quote(&b, s, n);
        abuf_adds(&b, " is not allowed");
    } else {
        return true;
    }
    *msg = abuf_string(&b).u.s;
    return false;
}

/* Kubernetes' parseCIDR (netip.ParsePrefix, then no IPv4-mapped IPv6); the message
 * carries parseCIDR's own prefix, stringToCIDR adds the second. */
static bool k8s_parse_cidr(arena *ar, const char *s, size_t n, net_prefix *p, const char **msg) {
    abuf b;
    abuf_init(&b, ar, 96 + 2 * n);
    abuf_adds(&b, "network address parse error during conversion from string: ");
    size_t slash = n;
    for (size_t i = n; i-- > 0;)
        if (s[i] == '/') {
            slash = i;
            break;
        }
    const char *why = NULL;
    parse_err e = {0};
    abuf inner;
    abuf_init(&inner, ar, 32);
    if (slash == n) {
        why = "no '/'";
    } else if (!parse_addr(s, slash, &p->a, &e)) {
        parse_addr_msg(&inner, s, slash, &e);
        why = abuf_string(&inner).u.s;
    } else if (!p->a.v4 && p->a.zone) {
        why = "IPv6 zones cannot be present in a prefix";
    } else {
        /* strconv.Atoi after netip's own rule: no sign, no leading zero */
        const char *bs = s + slash + 1;
        size_t bn = n - slash - 1;
        bool ok = bn > 0 && !(bn > 1 && (bs[0] < '1' || bs[0] > '9'));
        uint64_t bits = 0;
        for (size_t i = 0; ok && i < bn; i++) {
            if (bs[i] < '0' || bs[i] > '9' || bits > (UINT64_C(1) << 62) / 10) ok = false;
            else bits = bits * 10 + (uint64_t)(bs[i] - '0');
        }
        if (!ok) {
            abuf_adds(&inner, "bad bits after slash: ");
            go_quote(&inner, bs, bn);
            why = abuf_string(&inner).u.s;
        } else if (bits > (p->a.v4 ? 32u : 128u)) {
            why = "prefix length out of range";
        } else {
            p->bits = (int)bits;
        }
    }
    if (why) {
        abuf_adds(&b, "netip.ParsePrefix(");
        go_quote(&b, s, n);
        abuf_adds(&b, "): ");
        abuf_adds(&b, why);
        *msg = abuf_string(&b).u.s;
        return false;
    }
    if (is_4in6(&p->a)) {
        abuf_adds(&b, "IPv4-mapped IPv6 address ");
        go_quote(&b, s, n);
        abuf_adds(&b, " is not allowed");
        *msg = abuf_string(&b).u.s;
        return false;
    }
    return true;
}

/* ---- the opaque types ---------------------------------------------------------------- */

static int ip_cmp(const cel_opaque *x, const cel_opaque *y) {
    const net_addr *a = x->data, *b = y->data;
    return !(a->v4 == b->v4 && memcmp(a->b, b->b, a->v4 ? 4 : 16) == 0);
}

static int cidr_cmp(const cel_opaque *x, const cel_opaque *y) {
    const net_prefix *a = x->data, *b = y->data;
    return !(a->bits == b->bits && a->a.v4 == b->a.v4 && memcmp(a->a.b, b->a.b, a->a.v4 ? 4 : 16) == 0);
}

/* Literal text for printing: a small arena-free buffer is enough (max 39 + 4). */
static void addr_text(const net_addr *a, char *buf, size_t n) {
    arena tmp;
    arena_init(&tmp, 256);
    abuf b;
    abuf_init(&b, &tmp, 64);
    addr_string(&b, a);
    snprintf(buf, n, "%.*s", (int)b.n, b.p);
    arena_free(&tmp);
}

static void ip_format(const cel_opaque *o, char *buf, size_t n) {
    char t[64];
    addr_text(o->data, t, sizeof t);
    snprintf(buf, n, "ip(\"%s\")", t);
}

static void cidr_format(const cel_opaque *o, char *buf, size_t n) {
    const net_prefix *p = o->data;
    char t[64];
    addr_text(&p->a, t, sizeof t);
    snprintf(buf, n, "cidr(\"%s/%d\")", t, p->bits);
}

static const cel_opaque_type ip_type = {"net.IP", ip_cmp, ip_format};
static const cel_opaque_type cidr_type = {"net.CIDR", cidr_cmp, cidr_format};

static cel_value ip_value(arena *ar, const net_addr *a) {
    net_addr *d = arena_memdup(ar, a, sizeof *a);
    cel_opaque *o = arena_alloc(ar, sizeof *o);
    o->type = &ip_type;
    o->data = d;
    return cel_opaque_value(o);
}

static cel_value cidr_value(arena *ar, const net_prefix *p) {
    net_prefix *d = arena_memdup(ar, p, sizeof *p);
    cel_opaque *o = arena_alloc(ar, sizeof *o);
    o->type = &cidr_type;
    o->data = d;
    return cel_opaque_value(o);
}

static const net_addr *ip_of(const cel_value *v) { return v->u.o->data; }
static const net_prefix *cidr_of(const cel_value *v) { return v->u.o->data; }

/* ---- IP functions ------------------------------------------------------------------ */

/* Costs are Kubernetes' CallCost (apiserver pkg/cel/library/cost.go): parsing
 * ip/cidr/isIP/isCIDR ceil(0.1 × size), ip.isCanonical ceil(0.2 × size), containment
 * by the CIDR's size (ceil(prefix bits / 8), cel.CIDR's Size), accessors 1. */
static cel_value fn_ip(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    net_addr ad;
    const char *msg;
    if (!k8s_parse_ip(c->arena, a[0].u.s, a[0].len, &ad, &msg)) return cel_error_static(msg);
    return ip_value(c->arena, &ad);
}

static cel_value fn_is_ip(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    net_addr ad;
    const char *msg;
    return cel_bool(k8s_parse_ip(c->arena, a[0].u.s, a[0].len, &ad, &msg));
}

static cel_value fn_ip_is_canonical(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 2));
    net_addr ad;
    const char *msg;
    if (!k8s_parse_ip(c->arena, a[0].u.s, a[0].len, &ad, &msg)) return cel_error_static(msg);
    abuf b;
    abuf_init(&b, c->arena, 48);
    addr_string(&b, &ad);
    return cel_bool(b.n == a[0].len && memcmp(b.p, a[0].u.s, b.n) == 0);
}

static cel_value fn_ip_string(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    abuf b;
    abuf_init(&b, c->arena, 48);
    addr_string(&b, ip_of(&a[0]));
    return abuf_string(&b);
}

static cel_value fn_family(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int(ip_of(&a[0])->v4 ? 4 : 6);
}

static bool addr_unspecified(const net_addr *a) {
    for (int i = 0; i < (a->v4 ? 4 : 16); i++)
        if (a->b[i]) return false;
    return true;
}

static bool addr_loopback(const net_addr *a) {
    if (a->v4) return a->b[0] == 127;
    for (int i = 0; i < 15; i++)
        if (a->b[i]) return false;
    return a->b[15] == 1;
}

static bool addr_multicast(const net_addr *a) { return a->v4 ? (a->b[0] & 0xF0) == 0xE0 : a->b[0] == 0xFF; }

static bool addr_ll_multicast(const net_addr *a) {
    if (a->v4) return a->b[0] == 224 && a->b[1] == 0 && a->b[2] == 0;
    return a->b[0] == 0xFF && (a->b[1] & 0x0F) == 0x02;   /* ff02::/16 (v6u16(0) & 0xff0f) */
}

static bool addr_ll_unicast(const net_addr *a) {
    if (a->v4) return a->b[0] == 169 && a->b[1] == 254;
    return a->b[0] == 0xFE && (a->b[1] & 0xC0) == 0x80;   /* fe80::/10 */
}

static bool addr_global_unicast(const net_addr *a) {
    if (a->v4) {
        if (addr_unspecified(a)) return false;
        if (a->b[0] == 255 && a->b[1] == 255 && a->b[2] == 255 && a->b[3] == 255) return false;
    } else if (addr_unspecified(a)) {
        return false;
    }
    return !addr_loopback(a) && !addr_multicast(a) && !addr_ll_unicast(a);
}

static cel_value fn_is_unspecified(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(addr_unspecified(ip_of(&a[0])));
}

static cel_value fn_is_loopback(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(addr_loopback(ip_of(&a[0])));
}

static cel_value fn_is_ll_multicast(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(addr_ll_multicast(ip_of(&a[0])));
}

static cel_value fn_is_ll_unicast(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(addr_ll_unicast(ip_of(&a[0])));
}

static cel_value fn_is_global_unicast(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_bool(addr_global_unicast(ip_of(&a[0])));
}

/* ---- CIDR functions ---------------------------------------------------------------- */

static cel_value cidr_parse_value(cel_call *c, const cel_value *s) {
    net_prefix p;
    const char *msg;
    if (!k8s_parse_cidr(c->arena, s->u.s, s->len, &p, &msg))
        return cel__call_error(c, "network address parse error during conversion from string: %s", msg);
    return cidr_value(c->arena, &p);
}

static cel_value fn_cidr(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    return cidr_parse_value(c, &a[0]);
}

static cel_value fn_is_cidr(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    LIB_CALL_COST(c, lib_size_cost(&a[0], 1));
    net_prefix p;
    const char *msg;
    return cel_bool(k8s_parse_cidr(c->arena, a[0].u.s, a[0].len, &p, &msg));
}

static void mask_addr(net_addr *a, int bits) {
    int total = a->v4 ? 4 : 16;
    for (int i = 0; i < total; i++) {
        int keep = bits - 8 * i;
        if (keep >= 8) continue;
        a->b[i] = keep <= 0 ? 0 : (uint8_t)(a->b[i] & (0xFF << (8 - keep)));
    }
}

/* netip.Prefix.Contains */
static bool prefix_contains(const net_prefix *p, const net_addr *ip) {
    if (ip->zone || p->a.v4 != ip->v4) return false;
    net_addr x = *ip, y = p->a;
    mask_addr(&x, p->bits);
    mask_addr(&y, p->bits);
    return memcmp(x.b, y.b, ip->v4 ? 4 : 16) == 0;
}

/* cel.CIDR's Size: the prefix length in bytes, rounded up */
static uint64_t cidr_size(const cel_value *v) { return ((uint64_t)cidr_of(v)->bits + 7) / 8; }

static cel_value fn_contains_ip(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    uint64_t cs = cidr_size(&a[0]);
    uint64_t cost = cel__cost_factor(cs + cs, CEL_STRING_TRAVERSAL);
    /* the string's parse only under the overload id cidr_contains_ip_string, which
     * cel-go passes when the checker resolved it */
    if (a[1].kind == CV_STRING && !c->overload_unknown) cost += lib_size_cost(&a[1], 1);
    LIB_CALL_COST(c, cost);
    if (a[1].kind == CV_STRING) {
        net_addr ad;
        const char *msg;
        /* Kubernetes hands the parse error to a type switch that then reports the
         * receiver: "no such overload" */
        if (!k8s_parse_ip(c->arena, a[1].u.s, a[1].len, &ad, &msg)) return cel__call_error(c, "no such overload");
        return cel_bool(prefix_contains(cidr_of(&a[0]), &ad));
    }
    return cel_bool(prefix_contains(cidr_of(&a[0]), ip_of(&a[1])));
}

/* Kubernetes cidrContainsCIDR: Masked() == PrefixFrom(other.Addr(), bits) — the
 * other address is compared unmasked — and bits <= other.bits. */
static bool cidr_contains_cidr(const net_prefix *p, const net_prefix *o) {
    if (p->a.v4 != o->a.v4) return false;
    net_addr m = p->a;
    mask_addr(&m, p->bits);
    return memcmp(m.b, o->a.b, p->a.v4 ? 4 : 16) == 0 && p->bits <= o->bits;
}

static cel_value fn_contains_cidr(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    uint64_t cs = cidr_size(&a[0]);
    uint64_t cost = cel__cost_factor(cs + cs, CEL_STRING_TRAVERSAL) + cel__cost_factor(cs, CEL_STRING_TRAVERSAL) + 1;
    if (a[1].kind == CV_STRING && !c->overload_unknown) cost += lib_size_cost(&a[1], 1);
    LIB_CALL_COST(c, cost);
    if (a[1].kind == CV_STRING) {
        cel_value o = cidr_parse_value(c, &a[1]);
        if (o.kind == CV_ERROR) return o;
        return cel_bool(cidr_contains_cidr(cidr_of(&a[0]), cidr_of(&o)));
    }
    return cel_bool(cidr_contains_cidr(cidr_of(&a[0]), cidr_of(&a[1])));
}

static cel_value fn_cidr_ip(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    return ip_value(c->arena, &cidr_of(&a[0])->a);
}

static cel_value fn_prefix_length(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int(cidr_of(&a[0])->bits);
}

static cel_value fn_masked(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    net_prefix p = *cidr_of(&a[0]);
    mask_addr(&p.a, p.bits);
    return cidr_value(c->arena, &p);
}

static cel_value fn_cidr_string(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const net_prefix *p = cidr_of(&a[0]);
    abuf b;
    abuf_init(&b, c->arena, 52);
    addr_string(&b, &p->a);
    abuf_addf(&b, "/%d", p->bits);
    return abuf_string(&b);
}

/* ---- the library ------------------------------------------------------------------- */

#define R CEL_RECEIVER
#define G CEL_GLOBAL
#define F CEL_FN_FOLD

static const cel_overload net_overloads[] = {
    {"ip", "string_to_ip", G, 1, 0, {"string"}, "net.IP", fn_ip, 1, NULL, NULL},
    {"isIP", "is_ip", G, 1, F, {"string"}, "bool", fn_is_ip, 1, NULL, NULL},
    {"ip.isCanonical", "ip_is_canonical", G, 1, F, {"string"}, "bool", fn_ip_is_canonical, 1, NULL, NULL},
    {"string", "ip_to_string", G, 1, 0, {"net.IP"}, "string", fn_ip_string, 1, NULL, NULL},
    {"family", "ip_family", R, 1, 0, {"net.IP"}, "int", fn_family, 1, NULL, NULL},
    {"isUnspecified", "ip_is_unspecified", R, 1, 0, {"net.IP"}, "bool", fn_is_unspecified, 1, NULL, NULL},
    {"isLoopback", "ip_is_loopback", R, 1, 0, {"net.IP"}, "bool", fn_is_loopback, 1, NULL, NULL},
    {"isLinkLocalMulticast", "ip_is_link_local_multicast", R, 1, 0, {"net.IP"}, "bool", fn_is_ll_multicast, 1, NULL,
     NULL},
    {"isLinkLocalUnicast", "ip_is_link_local_unicast", R, 1, 0, {"net.IP"}, "bool", fn_is_ll_unicast, 1, NULL, NULL},
    {"isGlobalUnicast", "ip_is_global_unicast", R, 1, 0, {"net.IP"}, "bool", fn_is_global_unicast, 1, NULL, NULL},
    {"cidr", "string_to_cidr", G, 1, 0, {"string"}, "net.CIDR", fn_cidr, 1, NULL, NULL},
    {"isCIDR", "is_cidr", G, 1, F, {"string"}, "bool", fn_is_cidr, 1, NULL, NULL},
    {"containsIP", "cidr_contains_ip_string", R, 2, 0, {"net.CIDR", "string"}, "bool", fn_contains_ip, 1, NULL, NULL},
    {"containsIP", "cidr_contains_ip_ip", R, 2, 0, {"net.CIDR", "net.IP"}, "bool", fn_contains_ip, 1, NULL, NULL},
    {"containsCIDR", "cidr_contains_cidr_string", R, 2, 0, {"net.CIDR", "string"}, "bool", fn_contains_cidr, 1, NULL,
     NULL},
    {"containsCIDR", "cidr_contains_cidr", R, 2, 0, {"net.CIDR", "net.CIDR"}, "bool", fn_contains_cidr, 1, NULL, NULL},
    {"ip", "cidr_ip", R, 1, 0, {"net.CIDR"}, "net.IP", fn_cidr_ip, 1, NULL, NULL},
    {"prefixLength", "cidr_prefix_length", R, 1, 0, {"net.CIDR"}, "int", fn_prefix_length, 1, NULL, NULL},
    {"masked", "cidr_masked", R, 1, 0, {"net.CIDR"}, "net.CIDR", fn_masked, 1, NULL, NULL},
    {"string", "cidr_to_string", G, 1, 0, {"net.CIDR"}, "string", fn_cidr_string, 1, NULL, NULL},
};

const cel_library cel_lib_net = {"net", net_overloads, ARRAY_SIZE(net_overloads)};
