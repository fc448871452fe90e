/* lib_time.c — CEL's google.protobuf.Timestamp and Duration as cel-go implements
 * them: timestamp(string) (RFC 3339) and timestamp(int) (Unix seconds),
 * duration(string) (Go's time.ParseDuration syntax), conversions to int and
 * string, arithmetic and comparison with range checks (timestamps within years
 * 0001..9999, durations within int64 nanoseconds as Go's time.Duration: "range"
 * errors otherwise), and the
 * accessors getFullYear … getMilliseconds, on timestamps optionally in a time zone
 * given as "±HH:MM" or an IANA name (read from /usr/share/zoneinfo; a constant
 * zone is loaded once at compile time).
 *
 * Values are exact: seconds plus nanoseconds, no floating point. Civil dates use
 * the days-from-civil algorithm (proleptic Gregorian, as Go's time package;
 * civil_time.c). */
#include "cel/civil_time.h"
#include "cel/functions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_MIN (-62135596800LL)   /* 0001-01-01T00:00:00Z */
#define TS_MAX 253402300799LL     /* 9999-12-31T23:59:59Z */
/* cel-go durations are Go time.Durations: int64 nanoseconds (about ±292 years) */

static cel_value range_error(void) { return cel_error_static("range error: timestamp or duration out of range"); }

/* ---- normalisation and range -------------------------------------------------------- */

static bool make_ts(__int128 total_ns, cel_value *out) {
    __int128 s = total_ns / 1000000000, r = total_ns % 1000000000;
    if (r < 0) r += 1000000000, s -= 1;
    if (s < TS_MIN || s > TS_MAX) return false;
    *out = cel_timestamp((int64_t)s, (uint32_t)r);
    return true;
}

static bool make_dur(__int128 total_ns, cel_value *out) {
    if (total_ns > INT64_MAX || total_ns < INT64_MIN) return false;
    __int128 s = total_ns / 1000000000, r = total_ns % 1000000000;
    if (r < 0) r += 1000000000, s -= 1;
    *out = cel_duration((int64_t)s, (uint32_t)r);
    return true;
}

static __int128 ns_of(const cel_value *v) { return (__int128)v->u.i * 1000000000 + v->len; }

/* ---- parsing ------------------------------------------------------------------------ */

static int digits(const char *s, size_t n, size_t *i, int k) {
    int v = 0;
    for (int j = 0; j < k; j++) {
        if (*i >= n || s[*i] < '0' || s[*i] > '9') return -1;
        v = v * 10 + (s[(*i)++] - '0');
    }
    return v;
}

/* time.Parse(time.RFC3339, s) */
static bool parse_rfc3339(const char *s, size_t n, cel_value *out) {
    size_t i = 0;
    int y = digits(s, n, &i, 4);
    if (y < 0 || i >= n || s[i++] != '-') return false;
    int mo = digits(s, n, &i, 2);
    if (mo < 1 || mo > 12 || i >= n || s[i++] != '-') return false;
    int d = digits(s, n, &i, 2);
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap)) return false;
    if (i >= n || (s[i] != 'T' && s[i] != 't')) return false;
    i++;
    int h = digits(s, n, &i, 2);
    if (h < 0 || h > 23 || i >= n || s[i++] != ':') return false;
    int mi = digits(s, n, &i, 2);
    if (mi < 0 || mi > 59 || i >= n || s[i++] != ':') return false;
    int se = digits(s, n, &i, 2);
    if (se < 0 || se > 59) return false;
    int64_t nanos = 0;
    if (i < n && s[i] == '.') {
        i++;
        int k = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (k < 9) nanos = nanos * 10 + (s[i] - '0');
            k++, i++;
        }
        if (!k) return false;
        for (; k < 9; k++) nanos *= 10;
    }
    int64_t off = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        bool neg = s[i++] == '-';
        int oh = digits(s, n, &i, 2);
        if (oh < 0 || oh > 23 || i >= n || s[i++] != ':') return false;
        int om = digits(s, n, &i, 2);
        if (om < 0 || om > 59) return false;
        off = (oh * 3600 + om * 60) * (neg ? -1 : 1);
    } else {
        return false;
    }
    if (i != n) return false;
    int64_t secs = cel__days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - off;
    return make_ts((__int128)secs * 1000000000 + nanos, out);
}

/* time.ParseDuration */
static bool parse_go_duration(const char *s, size_t n, cel_value *out) {
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (n - i == 1 && s[i] == '0') return make_dur(0, out);
    if (i == n) return false;
    __int128 total = 0;
    while (i < n) {
        __int128 whole = 0;
        size_t st = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            whole = whole * 10 + (s[i++] - '0');
            if (whole > ((__int128)1 << 100)) return false;
        }
        bool had_whole = i > st;
        __int128 frac = 0, scale = 1;
        bool had_frac = false;
        if (i < n && s[i] == '.') {
            i++;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                if (scale < (__int128)1000000000000000000LL) frac = frac * 10 + (s[i] - '0'), scale *= 10;
                i++;
                had_frac = true;
            }
        }
        if (!had_whole && !had_frac) return false;
        size_t us = i;
        while (i < n && !(s[i] >= '0' && s[i] <= '9') && s[i] != '.') i++;
        size_t ul = i - us;
        const char *u = s + us;
        int64_t unit;
        if (ul == 2 && !memcmp(u, "ns", 2)) unit = 1;
        else if (ul == 2 && !memcmp(u, "us", 2)) unit = 1000;
        else if (ul == 3 && (!memcmp(u, "\xc2\xb5s", 3) || !memcmp(u, "\xce\xbcs", 3))) unit = 1000;
        else if (ul == 2 && !memcmp(u, "ms", 2)) unit = 1000000;
        else if (ul == 1 && u[0] == 's') unit = 1000000000;
        else if (ul == 1 && u[0] == 'm') unit = 60LL * 1000000000;
        else if (ul == 1 && u[0] == 'h') unit = 3600LL * 1000000000;
        else return false;
        if (whole > ((__int128)1 << 100) / unit) return false;   /* the sum below would exceed it */
        total += whole * unit + frac * unit / scale;
        if (total > ((__int128)1 << 100)) return false;
    }
    return make_dur(neg ? -total : total, out);
}

/* ---- time zones ------------------------------------------------------------------------ */

/* A loaded zone: transition times and the UTC offsets in force from each. */
/* A POSIX TZ rule date: Mm.w.d (month, week 1..5, weekday), Jn (1..365, no Feb 29)
 * or n (0..365), plus the local time of day of the change. */
typedef struct tzrule_date {
    char kind;           /* 'M', 'J' or 'n' */
    int m, w, d;         /* 'M' */
    int n;               /* 'J' / 'n' */
    int32_t secs;        /* local time of day of the change */
} tzrule_date;

/* The TZif footer: offsets (seconds east of UTC) and, with DST, when it applies. */
typedef struct tzrule {
    bool valid, has_dst;
    int32_t std_off, dst_off;
    tzrule_date start, end;
} tzrule;

typedef struct tzone {
    int64_t *times;
    int32_t *offs;
    uint32_t n;
    int32_t first_off;   /* before the first transition */
    bool fixed;
    int32_t fixed_off;
    tzrule rule;         /* after the last transition */
} tzone;

/* ---- POSIX TZ strings ("EST5EDT,M3.2.0,M11.1.0", "<+0545>-5:45") ---- */

static const char *tz_name(const char *p) {
    if (*p == '<') {
        while (*p && *p != '>') p++;
        return *p ? p + 1 : NULL;
    }
    const char *st = p;
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) p++;
    return p - st >= 3 ? p : NULL;
}

/* [+-]hh[:mm[:ss]] → seconds; NULL on error */
static const char *tz_hms(const char *p, int32_t *out) {
    int sign = 1;
    if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
    if (*p < '0' || *p > '9') return NULL;
    int32_t v[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        if (*p < '0' || *p > '9') return NULL;
        while (*p >= '0' && *p <= '9') v[k] = v[k] * 10 + (*p++ - '0');
        if (*p != ':' || k == 2) break;
        p++;
    }
    *out = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
    return p;
}

static const char *tz_date(const char *p, tzrule_date *d) {
    d->secs = 7200;   /* default 02:00:00 */
    if (*p == 'M') {
        d->kind = 'M';
        p++;
        d->m = (int)strtol(p, (char **)&p, 10);
        if (*p++ != '.') return NULL;
        d->w = (int)strtol(p, (char **)&p, 10);
        if (*p++ != '.') return NULL;
        d->d = (int)strtol(p, (char **)&p, 10);
        if (d->m < 1 || d->m > 12 || d->w < 1 || d->w > 5 || d->d < 0 || d->d > 6) return NULL;
    } else if (*p == 'J') {
        d->kind = 'J';
        p++;
        d->n = (int)strtol(p, (char **)&p, 10);
    } else if (*p >= '0' && *p <= '9') {
        d->kind = 'n';
        d->n = (int)strtol(p, (char **)&p, 10);
    } else {
        return NULL;
    }
    if (*p == '/') p = tz_hms(p + 1, &d->secs);
    return p;
}

static bool tz_parse_rule(const char *p, tzrule *r) {
    memset(r, 0, sizeof *r);
    int32_t off;
    if (!(p = tz_name(p)) || !(p = tz_hms(p, &off))) return false;
    r->std_off = -off;   /* POSIX offsets count west of UTC */
    if (*p == '\0' || *p == '\n') return r->valid = true;
    if (!(p = tz_name(p))) return false;
    r->has_dst = true;
    r->dst_off = r->std_off + 3600;
    if (*p && *p != ',' && *p != '\n') {
        if (!(p = tz_hms(p, &off))) return false;
        r->dst_off = -off;
    }
    if (*p != ',') return false;
    if (!(p = tz_date(p + 1, &r->start)) || *p != ',') return false;
    if (!(p = tz_date(p + 1, &r->end))) return false;
    return r->valid = true;
}

static bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Local seconds (in the offset in force before the change) of a rule date in year y. */
static int64_t tz_rule_local(const tzrule_date *d, int64_t y) {
    int64_t day;
    if (d->kind == 'M') {
        int64_t first = cel__days_from_civil(y, (unsigned)d->m, 1);
        int wd = (int)(((first % 7) + 11) % 7);          /* weekday of the 1st */
        int64_t dd = first + (d->d - wd + 7) % 7 + (d->w - 1) * 7;
        static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int len = mdays[d->m - 1] + (d->m == 2 && is_leap(y));
        while (dd >= first + len) dd -= 7;
        day = dd;
    } else if (d->kind == 'J') {
        day = cel__days_from_civil(y, 1, 1) + d->n - 1 + (is_leap(y) && d->n >= 60);
    } else {
        day = cel__days_from_civil(y, 1, 1) + d->n;
    }
    return day * 86400 + d->secs;
}

static int32_t tz_rule_offset(const tzrule *r, int64_t t) {
    if (!r->has_dst) return r->std_off;
    int64_t days = cel__floor_div(t + r->std_off, 86400), y;
    unsigned m, d;
    cel__civil_from_days(days, &y, &m, &d);
    int64_t start = tz_rule_local(&r->start, y) - r->std_off;   /* UTC instants */
    int64_t end = tz_rule_local(&r->end, y) - r->dst_off;
    bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
    return dst ? r->dst_off : r->std_off;
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static int64_t be64(const unsigned char *p) { return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4)); }

static void tz_free(void *p) {
    tzone *z = p;
    if (!z) return;
    free(z->times);
    free(z->offs);
    free(z);
}

/* Loads a TZif file (version 2+ 64-bit section when present); times after the last
 * transition follow the POSIX TZ rule of the footer. */
static tzone *tz_load(const char *name, size_t len, err *e) {
    tzone *z = xcalloc(1, sizeof *z);
    if ((len == 3 && !memcmp(name, "UTC", 3)) || len == 0) {
        z->fixed = true;
        return z;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '/' ||
                  ch == '_' || ch == '-' || ch == '+';
        if (!ok || (ch == '/' && (i == 0 || name[i - 1] == '/'))) goto bad;
    }
    if (name[0] == '/' || memmem(name, len, "..", 2)) goto bad;
    char path[512];
    snprintf(path, sizeof path, "/usr/share/zoneinfo/%.*s", (int)len, name);
    FILE *f = fopen(path, "rb");
    if (!f) goto bad;
    unsigned char *buf = xmalloc(1 << 16);
    size_t sz = fread(buf, 1, 1 << 16, f);
    fclose(f);
    if (sz < 44 || memcmp(buf, "TZif", 4)) {
        free(buf);
        goto bad;
    }
    const unsigned char *p = buf;
    int tsize = 4;
    uint32_t cnt[6];
    for (int k = 0; k < 6; k++) cnt[k] = be32(p + 20 + 4 * k);
    if (buf[4] >= '2') {
        size_t v1 = 44 + (size_t)cnt[3] * 4 + cnt[3] + (size_t)cnt[4] * 6 + cnt[5] + (size_t)cnt[2] * 8 + cnt[1] + cnt[0];
        if (v1 + 44 > sz) {
            free(buf);
            goto bad;
        }
        p = buf + v1;
        tsize = 8;
        for (int k = 0; k < 6; k++) cnt[k] = be32(p + 20 + 4 * k);
    }
    uint32_t timecnt = cnt[3], typecnt = cnt[4];
    const unsigned char *tp = p + 44, *ip = tp + (size_t)timecnt * tsize, *tt = ip + timecnt;
    if ((size_t)(tt - buf) + (size_t)typecnt * 6 > sz || typecnt == 0) {
        free(buf);
        goto bad;
    }
    z->n = timecnt;
    z->times = xmalloc(sizeof(int64_t) * (timecnt + 1));
    z->offs = xmalloc(sizeof(int32_t) * (timecnt + 1));
    for (uint32_t k = 0; k < timecnt; k++) {
        z->times[k] = tsize == 8 ? be64(tp + 8 * k) : (int32_t)be32(tp + 4 * k);
        uint32_t idx = ip[k] < typecnt ? ip[k] : 0;
        z->offs[k] = (int32_t)be32(tt + 6 * idx);
    }
    z->first_off = (int32_t)be32(tt);
    if (tsize == 8) {
        /* the footer after the 64-bit data: "\n<POSIX TZ>\n" */
        size_t end = (size_t)(tt - buf) + (size_t)typecnt * 6 + cnt[5] + (size_t)cnt[2] * 12 + cnt[1] + cnt[0];
        if (end + 2 < sz && buf[end] == '\n') {
            char rule[128];
            size_t k = 0;
            for (size_t i = end + 1; i < sz && buf[i] != '\n' && k + 1 < sizeof rule; i++) rule[k++] = (char)buf[i];
            rule[k] = '\0';
            tz_parse_rule(rule, &z->rule);
        }
    }
    free(buf);
    return z;
bad:
    tz_free(z);
    err_set(e, "unknown time zone %.*s", (int)len, name);
    return NULL;
}

static int32_t tz_offset(const tzone *z, int64_t t) {
    if (z->fixed) return z->fixed_off;
    if (!z->n || t < z->times[0]) return z->n || !z->rule.valid ? z->first_off : tz_rule_offset(&z->rule, t);
    if (t >= z->times[z->n - 1] && z->rule.valid) return tz_rule_offset(&z->rule, t);
    uint32_t lo = 0, hi = z->n;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (z->times[mid] <= t) lo = mid;
        else hi = mid;
    }
    return z->offs[lo];
}

/* cel-go's timeZone(): "±HH:MM"-ish offsets contain ':'; anything else is a zone name. */
static bool parse_offset(const char *s, size_t n, int32_t *off) {
    const char *colon = memchr(s, ':', n);
    if (!colon) return false;
    size_t hl = (size_t)(colon - s);
    char hb[8], mb[8];
    if (hl == 0 || hl >= sizeof hb || n - hl - 1 == 0 || n - hl - 1 >= sizeof mb) return false;
    memcpy(hb, s, hl);
    hb[hl] = '\0';
    memcpy(mb, colon + 1, n - hl - 1);
    mb[n - hl - 1] = '\0';
    char *end;
    long h = strtol(hb, &end, 10);
    if (*end) return false;
    long m = strtol(mb, &end, 10);
    if (*end) return false;
    long mins = s[0] == '-' ? h * 60 - m : h * 60 + m;
    *off = (int32_t)(mins * 60);
    return true;
}

static bool tz_prepare(const cel_value *args, const bool *is_const, uint32_t nargs, void **out, err *e) {
    (void)e;
    *out = NULL;
    if (nargs < 2 || !is_const[1] || args[1].kind != CV_STRING) return true;
    int32_t off;
    if (parse_offset(args[1].u.s, args[1].len, &off)) {
        tzone *z = xcalloc(1, sizeof *z);
        z->fixed = true;
        z->fixed_off = off;
        *out = z;
        return true;
    }
    /* an unknown zone stays a runtime error, as in cel-go */
    *out = tz_load(args[1].u.s, args[1].len, NULL);
    return true;
}

/* Seconds of local time for a timestamp accessor call, or an error value. */
static bool local_secs(cel_call *c, const cel_value *a, uint32_t n, int64_t *out, cel_value *errv) {
    int64_t t = a[0].u.i;
    if (n < 2) {
        *out = t;
        return true;
    }
    const tzone *z = c->prepared;
    int32_t off;
    if (z) {
        *out = t + tz_offset(z, t);
        return true;
    }
    if (parse_offset(a[1].u.s, a[1].len, &off)) {
        *out = t + off;
        return true;
    }
    err e;
    err_clear(&e);
    tzone *lz = tz_load(a[1].u.s, a[1].len, &e);
    if (!lz) {
        *errv = cel__call_error(c, "%s", e.msg);
        return false;
    }
    *out = t + tz_offset(lz, t);
    tz_free(lz);
    return true;
}

/* ---- functions ---------------------------------------------------------------------------- */

static cel_value f_timestamp(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    cel_value out;
    switch (a[0].kind) {
    case CV_TIMESTAMP: return a[0];
    case CV_INT:
        if (!make_ts((__int128)a[0].u.i * 1000000000, &out)) return range_error();
        return out;
    case CV_STRING:
        if (!parse_rfc3339(a[0].u.s, a[0].len, &out))
            return cel__call_error(c, "timestamp(\"%.*s\"): invalid or out of range", (int)a[0].len, a[0].u.s);
        return out;
    default: return cel_error_static("no such overload");
    }
}

static cel_value f_duration(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    cel_value out;
    if (a[0].kind == CV_DURATION) return a[0];
    if (!parse_go_duration(a[0].u.s, a[0].len, &out))
        return cel__call_error(c, "duration(\"%.*s\"): invalid or out of range", (int)a[0].len, a[0].u.s);
    return out;
}

static cel_value f_ts_int(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    return cel_int(a[0].u.i);
}

static cel_value f_to_string(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    char buf[64];
    if (a[0].kind == CV_TIMESTAMP) cel__format_timestamp(a[0].u.i, a[0].len, buf, sizeof buf);
    else cel__format_duration(a[0].u.i, a[0].len, buf, sizeof buf);
    return cel__string_copy(c->arena, buf, strlen(buf));
}

static cel_value f_add(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    cel_value out;
    __int128 t = ns_of(&a[0]) + ns_of(&a[1]);
    bool ok = (a[0].kind == CV_TIMESTAMP || a[1].kind == CV_TIMESTAMP) ? make_ts(t, &out) : make_dur(t, &out);
    return ok ? out : range_error();
}

static cel_value f_sub(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    cel_value out;
    __int128 t = ns_of(&a[0]) - ns_of(&a[1]);
    bool ok = (a[0].kind == CV_TIMESTAMP && a[1].kind == CV_DURATION) ? make_ts(t, &out) : make_dur(t, &out);
    return ok ? out : range_error();
}

static cel_value cmp_stub(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    int r;
    if (!cel__value_compare(&a[0], &a[1], &r)) return cel_error_static("no such overload");
    return cel_int(r);
}

enum { GET_YEAR, GET_MONTH, GET_DATE, GET_DOM, GET_DOW, GET_DOY, GET_HOURS, GET_MINUTES, GET_SECONDS, GET_MS };

static cel_value ts_get(cel_call *c, const cel_value *a, uint32_t n, int what) {
    int64_t s;
    cel_value errv;
    if (!local_secs(c, a, n, &s, &errv)) return errv;
    int64_t days = cel__floor_div(s, 86400), rem = s - days * 86400;
    int64_t y;
    unsigned m, d;
    cel__civil_from_days(days, &y, &m, &d);
    switch (what) {
    case GET_YEAR: return cel_int(y);
    case GET_MONTH: return cel_int(m - 1);
    case GET_DATE: return cel_int(d);
    case GET_DOM: return cel_int(d - 1);
    case GET_DOW: return cel_int(((days % 7) + 11) % 7);   /* 1970-01-01 was a Thursday */
    case GET_DOY: return cel_int(days - cel__days_from_civil(y, 1, 1));
    case GET_HOURS: return cel_int(rem / 3600);
    case GET_MINUTES: return cel_int(rem / 60 % 60);
    case GET_SECONDS: return cel_int(rem % 60);
    default: return cel_int(a[0].len / 1000000);
    }
}

static cel_value dur_get(const cel_value *a, int what) {
    __int128 t = ns_of(&a[0]);
    switch (what) {
    case GET_HOURS: return cel_int((int64_t)(t / ((__int128)3600 * 1000000000)));
    case GET_MINUTES: return cel_int((int64_t)(t / ((__int128)60 * 1000000000)));
    case GET_SECONDS: return cel_int((int64_t)(t / 1000000000));
    default: return cel_int((int64_t)((t % 1000000000) / 1000000));   /* the milliseconds component */
    }
}

#define GETTER(fn, what)                                                            \
    static cel_value fn(cel_call *c, const cel_value *a, uint32_t n) {              \
        if (a[0].kind == CV_DURATION) return dur_get(a, what);                      \
        return ts_get(c, a, n, what);                                               \
    }
GETTER(g_year, GET_YEAR)
GETTER(g_month, GET_MONTH)
GETTER(g_date, GET_DATE)
GETTER(g_dom, GET_DOM)
GETTER(g_dow, GET_DOW)
GETTER(g_doy, GET_DOY)
GETTER(g_hours, GET_HOURS)
GETTER(g_minutes, GET_MINUTES)
GETTER(g_seconds, GET_SECONDS)
GETTER(g_ms, GET_MS)

#define G CEL_GLOBAL
#define R CEL_RECEIVER
#define F CEL_FN_FOLD
#define TS "google.protobuf.Timestamp"
#define DU "google.protobuf.Duration"

#define TS_GETTER(name, fn)                                                                         \
    {name, "timestamp_to_" name, R, 1, F, {TS}, "int", fn, 1, NULL, NULL},                          \
    {name, "timestamp_to_" name "_with_tz", R, 2, F, {TS, "string"}, "int", fn, 1, tz_prepare, tz_free}

static const cel_overload time_overloads[] = {
    {"timestamp", "string_to_timestamp", G, 1, F, {"string"}, TS, f_timestamp, 1, NULL, NULL},
    {"timestamp", "int64_to_timestamp", G, 1, F, {"int"}, TS, f_timestamp, 1, NULL, NULL},
    {"timestamp", "timestamp_to_timestamp", G, 1, F, {TS}, TS, f_timestamp, 1, NULL, NULL},
    {"duration", "string_to_duration", G, 1, F, {"string"}, DU, f_duration, 1, NULL, NULL},
    {"duration", "duration_to_duration", G, 1, F, {DU}, DU, f_duration, 1, NULL, NULL},
    {"int", "timestamp_to_int64", G, 1, F, {TS}, "int", f_ts_int, 1, NULL, NULL},
    {"string", "timestamp_to_string", G, 1, F, {TS}, "string", f_to_string, 1, NULL, NULL},
    {"string", "duration_to_string", G, 1, F, {DU}, "string", f_to_string, 1, NULL, NULL},
    {"_+_", "add_timestamp_duration", G, 2, F, {TS, DU}, TS, f_add, 1, NULL, NULL},
    {"_+_", "add_duration_timestamp", G, 2, F, {DU, TS}, TS, f_add, 1, NULL, NULL},
    {"_+_", "add_duration_duration", G, 2, F, {DU, DU}, DU, f_add, 1, NULL, NULL},
    {"_-_", "subtract_timestamp_timestamp", G, 2, F, {TS, TS}, DU, f_sub, 1, NULL, NULL},
    {"_-_", "subtract_timestamp_duration", G, 2, F, {TS, DU}, TS, f_sub, 1, NULL, NULL},
    {"_-_", "subtract_duration_duration", G, 2, F, {DU, DU}, DU, f_sub, 1, NULL, NULL},
#define CMP(op, name)                                                                    \
    {op, name "_timestamp", G, 2, F, {TS, TS}, "bool", cmp_stub, 1, NULL, NULL},         \
    {op, name "_duration", G, 2, F, {DU, DU}, "bool", cmp_stub, 1, NULL, NULL}
    CMP("_<_", "less"),
    CMP("_<=_", "less_equals"),
    CMP("_>_", "greater"),
    CMP("_>=_", "greater_equals"),
#undef CMP
    TS_GETTER("getFullYear", g_year),
    TS_GETTER("getMonth", g_month),
    TS_GETTER("getDate", g_date),
    TS_GETTER("getDayOfMonth", g_dom),
    TS_GETTER("getDayOfWeek", g_dow),
    TS_GETTER("getDayOfYear", g_doy),
    TS_GETTER("getHours", g_hours),
    TS_GETTER("getMinutes", g_minutes),
    TS_GETTER("getSeconds", g_seconds),
    TS_GETTER("getMilliseconds", g_ms),
    {"getHours", "duration_to_hours", R, 1, F, {DU}, "int", g_hours, 1, NULL, NULL},
    {"getMinutes", "duration_to_minutes", R, 1, F, {DU}, "int", g_minutes, 1, NULL, NULL},
    {"getSeconds", "duration_to_seconds", R, 1, F, {DU}, "int", g_seconds, 1, NULL, NULL},
    {"getMilliseconds", "duration_to_milliseconds", R, 1, F, {DU}, "int", g_ms, 1, NULL, NULL},
};

const cel_library cel_lib_time = {"time", time_overloads, ARRAY_SIZE(time_overloads)};
