/* lib_format.c — Kubernetes' format library: named string formats as the opaque
 * type `kubernetes.NamedFormat`, obtained with format.named(name) (an optional:
 * none for an unknown name) or format.<name>(), and checked with
 * `<Format>.validate(s)`, which is optional.none() when s is valid and otherwise
 * optional.of(the list of apimachinery's error messages).
 *
 * The 13 formats: dns1123Label, dns1123Subdomain, dns1035Label, qualifiedName,
 * the three *Prefix variants (a trailing '-' is allowed because a generated suffix
 * follows; apimachinery's maskTrailingDash, quirk included), labelValue, uri (Go's
 * url.ParseRequestURI, its error text), uuid, byte (standard base64 with padding),
 * date (RFC 3339 full-date, calendar-checked) and datetime (kube-openapi's
 * IsDateTime). The regular expressions of apimachinery are matched by hand here —
 * they are simple character-class patterns — and the messages are apimachinery's,
 * including the regex text they quote and their "(e.g. 'my-name',  or ...)" form.
 *
 * The Format values are static constants, so format.<name>() folds at compile time. */
#include "cel/lib_support.h"

/* ---- apimachinery messages ----------------------------------------------------------- */

typedef struct msgs {
    arena *a;
    cel_list *l;
} msgs;

static void add_msg(msgs *m, const char *prefix, const char *text) {
    if (!m->l) m->l = cel__list_new(m->a, 2);
    abuf b;
    abuf_init(&b, m->a, strlen(prefix) + strlen(text) + 1);
    abuf_adds(&b, prefix);
    abuf_adds(&b, text);
    cel__list_push(m->a, m->l, abuf_string(&b));
}

/* validation.RegexError(msg, fmt, examples...) */
static const char *regex_error(arena *a, const char *msg, const char *fmt, const char *const *ex, int nex) {
    abuf b;
    abuf_init(&b, a, 256);
    abuf_adds(&b, msg);
    if (nex == 0) {
        abuf_addf(&b, " (regex used for validation is '%s')", fmt);
        return abuf_string(&b).u.s;
    }
    abuf_adds(&b, " (e.g. ");
    for (int i = 0; i < nex; i++) {
        if (i > 0) abuf_adds(&b, " or ");
        abuf_addf(&b, "'%s', ", ex[i]);
    }
    abuf_addf(&b, "regex used for validation is '%s')", fmt);
    return abuf_string(&b).u.s;
}

static void max_len_error(msgs *m, const char *prefix, int n) {
    char t[64];
    snprintf(t, sizeof t, "must be no more than %d characters", n);
    add_msg(m, prefix, t);
}

/* ---- the character-class patterns ------------------------------------------------------ */

static bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static bool alnum(char c) { return lower_alnum(c) || (c >= 'A' && c <= 'Z'); }

/* ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ */
static bool is_label(const char *s, size_t n) {
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-') return false;
    return true;
}

/* label(\.label)* */
static bool is_subdomain(const char *s, size_t n) {
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!is_label(s + start, i - start)) return false;
            start = i + 1;
        }
    }
    return true;
}

/* ^[a-z]([-a-z0-9]*[a-z0-9])?$ */
static bool is_1035(const char *s, size_t n) { return n > 0 && s[0] >= 'a' && s[0] <= 'z' && is_label(s, n); }

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool is_qname(const char *s, size_t n) {
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

#define LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define SUBDOMAIN_FMT LABEL_FMT "(\\." LABEL_FMT ")*"
#define DNS1035_FMT "[a-z]([-a-z0-9]*[a-z0-9])?"
#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define LABEL_VALUE_FMT "(" QNAME_FMT ")?"
#define QNAME_MSG "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

static void dns1123_label(msgs *m, const char *s, size_t n) {
    if (n > 63) max_len_error(m, "", 63);
    if (!is_label(s, n)) {
        if (is_subdomain(s, n)) {
            add_msg(m, "", "must not contain dots");
        } else {
            static const char *const ex[] = {"my-name", "123-abc"};
            add_msg(m, "",
                    regex_error(m->a,
                                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                                "'-', and must start and end with an alphanumeric character",
                                LABEL_FMT, ex, 2));
        }
    }
}

static void dns1123_subdomain(msgs *m, const char *prefix, const char *s, size_t n) {
    if (n > 253) max_len_error(m, prefix, 253);
    if (!is_subdomain(s, n)) {
        static const char *const ex[] = {"example.com"};
        add_msg(m, prefix,
                regex_error(m->a,
                            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                            "or '.', and must start and end with an alphanumeric character",
                            SUBDOMAIN_FMT, ex, 1));
    }
}

static void dns1035_label(msgs *m, const char *s, size_t n) {
    if (n > 63) max_len_error(m, "", 63);
    if (!is_1035(s, n)) {
        static const char *const ex[] = {"my-name", "abc-123"};
        add_msg(m, "",
                regex_error(m->a,
                            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
                            "an alphabetic character, and end with an alphanumeric character",
                            DNS1035_FMT, ex, 2));
    }
}

static void qualified_name(msgs *m, const char *s, size_t n) {
    static const char *const ex[] = {"MyName", "my.name", "123-abc"};
    int slashes = 0;
    size_t slash = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/') {
            slashes++;
            slash = i;
        }
    const char *name = s;
    size_t nn = n;
    if (slashes > 1) {
        abuf b;
        abuf_init(&b, m->a, 256);
        abuf_adds(&b, "a qualified name ");
        abuf_adds(&b, regex_error(m->a, QNAME_MSG, QNAME_FMT, ex, 3));
        abuf_adds(&b, " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
        add_msg(m, "", abuf_string(&b).u.s);
        return;
    }
    if (slashes == 1) {
        if (slash == 0) add_msg(m, "prefix part ", "must be non-empty");
        else dns1123_subdomain(m, "prefix part ", s, slash);
        name = s + slash + 1;
        nn = n - slash - 1;
    }
    if (nn == 0) add_msg(m, "name part ", "must be non-empty");
    else if (nn > 63) max_len_error(m, "name part ", 63);
    if (!is_qname(name, nn)) add_msg(m, "name part ", regex_error(m->a, QNAME_MSG, QNAME_FMT, ex, 3));
}

static void label_value(msgs *m, const char *s, size_t n) {
    if (n > 63) max_len_error(m, "", 63);
    if (n > 0 && !is_qname(s, n)) {
        static const char *const ex[] = {"MyValue", "my_value", "12345"};
        add_msg(m, "",
                regex_error(m->a,
                            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                            "or '.', and must start and end with an alphanumeric character",
                            LABEL_VALUE_FMT, ex, 3));
    }
}

/* apimachinery maskTrailingDash: "x-" → drops two characters and appends 'a'. */
static const char *mask_trailing_dash(arena *a, const char *s, size_t *n) {
    if (*n > 1 && s[*n - 1] == '-') {
        char *d = arena_alloc(a, *n);
        memcpy(d, s, *n - 2);
        d[*n - 2] = 'a';
        *n -= 1;
        return d;
    }
    return s;
}

/* ---- strfmt formats -------------------------------------------------------------------- */

static bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$ */
static bool is_uuid(const char *s, size_t n) {
    static const int groups[] = {8, 4, 4, 4, 12};
    size_t i = 0;
    for (int g = 0; g < 5; g++) {
        if (g > 0 && i < n && s[i] == '-') i++;
        for (int k = 0; k < groups[g]; k++, i++)
            if (i >= n || !hex(s[i])) return false;
    }
    return i == n;
}

/* base64.StdEncoding.DecodeString succeeds: '\r' and '\n' are ignored, the rest
 * is whole quanta of four, with '=' padding only at the end ("xx==" or "xxx="). */
static bool is_base64(const char *s, size_t n) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += s[i] != '\r' && s[i] != '\n';
    if (len % 4) return false;
    size_t k = 0;
    bool pad = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\r' || c == '\n') continue;
        if (c == '=') {
            if (k + 2 < len) return false;
            pad = true;
        } else if (pad) {
            return false;   /* "xx=x" */
        } else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                     c == '/')) {
            return false;
        }
        k++;
    }
    return true;
}

static int days_in(int month, int year) {
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0))) return 29;
    return d[month - 1];
}

static bool digits(const char *s, size_t k) {
    for (size_t i = 0; i < k; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static int num(const char *s, size_t k) {
    int v = 0;
    for (size_t i = 0; i < k; i++) v = v * 10 + (s[i] - '0');
    return v;
}

/* time.Parse("2006-01-02", s) */
static bool is_date(const char *s, size_t n) {
    if (n != 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2)) return false;
    int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
    return m >= 1 && m <= 12 && d >= 1 && d <= days_in(m, y);
}

/* the time zone part of kube-openapi's DateTimePattern: z|[+-][0-9]{2}:[0-9]{2}, to the end */
static bool is_tz(const char *s, size_t n) {
    if (n == 1 && s[0] == 'z') return true;
    return n == 6 && (s[0] == '+' || s[0] == '-') && digits(s + 1, 2) && s[3] == ':' && digits(s + 4, 2);
}

/* kube-openapi strfmt IsDateTime: lower-case, split at every 't', date check on the
 * first piece, ^hh:mm:ss(.[0-9]+)?(z|[+-]hh:mm)$ with hh <= 23, mm, ss <= 59 on the
 * second. */
static bool is_datetime(arena *a, const char *s, size_t n) {
    if (n < 4) return false;
    char *l = arena_alloc(a, n + 1);
    for (size_t i = 0; i < n; i++) l[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
    const char *t1 = memchr(l, 't', n);
    if (!t1 || !is_date(l, (size_t)(t1 - l))) return false;
    const char *p = t1 + 1;
    const char *t2 = memchr(p, 't', n - (size_t)(p - l));
    size_t pn = t2 ? (size_t)(t2 - p) : n - (size_t)(p - l);
    if (pn < 8 || !digits(p, 2) || p[2] != ':' || !digits(p + 3, 2) || p[5] != ':' || !digits(p + 6, 2)) return false;
    if (num(p, 2) > 23 || num(p + 3, 2) > 59 || num(p + 6, 2) > 59) return false;
    const char *r = p + 8;
    size_t rn = pn - 8;
    if (is_tz(r, rn)) return true;
    /* (.[0-9]+): any one character, then digits */
    if (rn == 0) return false;
    uint32_t cp;
    size_t w = lib_utf8_decode(r, rn, &cp);
    size_t k = w;
    while (k < rn && r[k] >= '0' && r[k] <= '9') k++;
    return k > w && is_tz(r + k, rn - k);
}

/* ---- the formats ----------------------------------------------------------------------- */

typedef enum {
    F_DNS1123_LABEL, F_DNS1123_SUBDOMAIN, F_DNS1035_LABEL, F_QUALIFIED_NAME, F_DNS1123_LABEL_PREFIX,
    F_DNS1123_SUBDOMAIN_PREFIX, F_DNS1035_LABEL_PREFIX, F_LABEL_VALUE, F_URI, F_UUID, F_BYTE, F_DATE, F_DATETIME,
    F_COUNT
} format_id;

typedef struct named_format {
    const char *key;    /* the name in format.named() and format.<key>() */
    const char *name;   /* apiservercel.Format.Name */
    format_id id;
    /* apiservercel.Format.MaxRegexSize, the regex length validate() is charged for.
     * The CRD formats' figures are lengths of govalidator/strfmt patterns we do not
     * carry; they use apiserver's MaxNameFormatRegexSize (128), as the estimate does. */
    uint32_t max_regex;
} named_format;

static const named_format formats[F_COUNT] = {
    {"dns1123Label", "DNS1123Label", F_DNS1123_LABEL, 30},
    {"dns1123Subdomain", "DNS1123Subdomain", F_DNS1123_SUBDOMAIN, 60},
    {"dns1035Label", "DNS1035Label", F_DNS1035_LABEL, 30},
    {"qualifiedName", "QualifiedName", F_QUALIFIED_NAME, 60},
    {"dns1123LabelPrefix", "DNS1123LabelPrefix", F_DNS1123_LABEL_PREFIX, 30},
    {"dns1123SubdomainPrefix", "DNS1123SubdomainPrefix", F_DNS1123_SUBDOMAIN_PREFIX, 60},
    {"dns1035LabelPrefix", "DNS1035LabelPrefix", F_DNS1035_LABEL_PREFIX, 30},
    {"labelValue", "LabelValue", F_LABEL_VALUE, 40},
    {"uri", "URI", F_URI, 128},
    {"uuid", "uuid", F_UUID, 128},
    {"byte", "byte", F_BYTE, 128},
    {"date", "date", F_DATE, 128},
    {"datetime", "datetime", F_DATETIME, 128},
};

static void format_print(const cel_opaque *o, char *buf, size_t n) {
    const named_format *f = o->data;
    snprintf(buf, n, "format.%s()", f->key);
}

/* Values are the static objects below, so identity is equality. */
static const cel_opaque_type format_type = {"kubernetes.NamedFormat", NULL, format_print};

static const cel_opaque format_objs[F_COUNT] = {
    {&format_type, &formats[0]},  {&format_type, &formats[1]},  {&format_type, &formats[2]},
    {&format_type, &formats[3]},  {&format_type, &formats[4]},  {&format_type, &formats[5]},
    {&format_type, &formats[6]},  {&format_type, &formats[7]},  {&format_type, &formats[8]},
    {&format_type, &formats[9]},  {&format_type, &formats[10]}, {&format_type, &formats[11]},
    {&format_type, &formats[12]},
};

static void validate(msgs *m, format_id id, const char *s, size_t n) {
    switch (id) {
    case F_DNS1123_LABEL_PREFIX:
    case F_DNS1123_SUBDOMAIN_PREFIX:
    case F_DNS1035_LABEL_PREFIX: s = mask_trailing_dash(m->a, s, &n); break;
    default: break;
    }
    switch (id) {
    case F_DNS1123_LABEL:
    case F_DNS1123_LABEL_PREFIX: dns1123_label(m, s, n); break;
    case F_DNS1123_SUBDOMAIN:
    case F_DNS1123_SUBDOMAIN_PREFIX: dns1123_subdomain(m, "", s, n); break;
    case F_DNS1035_LABEL:
    case F_DNS1035_LABEL_PREFIX: dns1035_label(m, s, n); break;
    case F_QUALIFIED_NAME: qualified_name(m, s, n); break;
    case F_LABEL_VALUE: label_value(m, s, n); break;
    case F_URI: {
        const char *err = cel__lib_url_request_uri_error(m->a, s, n);
        if (err) add_msg(m, "", err);
        break;
    }
    case F_UUID: if (!is_uuid(s, n)) add_msg(m, "", "does not match the UUID format"); break;
    case F_BYTE: if (!is_base64(s, n)) add_msg(m, "", "invalid base64"); break;
    case F_DATE: if (!is_date(s, n)) add_msg(m, "", "invalid date"); break;
    case F_DATETIME: if (!is_datetime(m->a, s, n)) add_msg(m, "", "invalid datetime"); break;
    case F_COUNT: break;
    }
}

/* ---- functions --------------------------------------------------------------------------- */

static cel_value fn_validate(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    const named_format *f = a[0].u.o->data;
    /* Kubernetes' CallCost for validate: matches' rule with the format's regex size,
     * ceil(0.1 × (1 + size)) × ceil(0.25 × MaxRegexSize) */
    LIB_CALL_COST(c, cel__cost_factor(1 + cel__value_size(&a[1]), CEL_STRING_TRAVERSAL) *
                         cel__cost_factor(f->max_regex, CEL_REGEX_LENGTH));
    msgs m = {c->arena, NULL};
    validate(&m, f->id, a[1].u.s, a[1].len);
    if (!m.l) return cel_optional_none();
    return cel__optional_of(c->arena, cel_list_value(m.l));
}

static cel_value fn_named(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    for (int i = 0; i < F_COUNT; i++)
        if (strlen(formats[i].key) == a[0].len && !memcmp(formats[i].key, a[0].u.s, a[0].len))
            return cel__optional_of(c->arena, cel_opaque_value(&format_objs[i]));
    return cel_optional_none();
}

#define FORMAT_CTOR(fn, idx)                                              \
    static cel_value fn(cel_call *c, const cel_value *a, uint32_t n) {    \
        (void)c, (void)a, (void)n;                                        \
        return cel_opaque_value(&format_objs[idx]);                      \
    }
FORMAT_CTOR(fc_dns1123_label, F_DNS1123_LABEL)
FORMAT_CTOR(fc_dns1123_subdomain, F_DNS1123_SUBDOMAIN)
FORMAT_CTOR(fc_dns1035_label, F_DNS1035_LABEL)
FORMAT_CTOR(fc_qualified_name, F_QUALIFIED_NAME)
FORMAT_CTOR(fc_dns1123_label_prefix, F_DNS1123_LABEL_PREFIX)
FORMAT_CTOR(fc_dns1123_subdomain_prefix, F_DNS1123_SUBDOMAIN_PREFIX)
FORMAT_CTOR(fc_dns1035_label_prefix, F_DNS1035_LABEL_PREFIX)
FORMAT_CTOR(fc_label_value, F_LABEL_VALUE)
FORMAT_CTOR(fc_uri, F_URI)
FORMAT_CTOR(fc_uuid, F_UUID)
FORMAT_CTOR(fc_byte, F_BYTE)
FORMAT_CTOR(fc_date, F_DATE)
FORMAT_CTOR(fc_datetime, F_DATETIME)

#define G CEL_GLOBAL
#define CTOR(key, fn) {"format." key, "format." key, G, 0, CEL_FN_FOLD, {NULL}, "kubernetes.NamedFormat", fn, 1, NULL, NULL}

static const cel_overload format_overloads[] = {
    {"validate", "format-validate", CEL_RECEIVER, 2, 0, {"kubernetes.NamedFormat", "string"}, "optional(list(string))",
     fn_validate, 1, NULL, NULL},
    {"format.named", "format-named", G, 1, 0, {"string"}, "optional(kubernetes.NamedFormat)", fn_named, 1, NULL, NULL},
    CTOR("dns1123Label", fc_dns1123_label),
    CTOR("dns1123Subdomain", fc_dns1123_subdomain),
    CTOR("dns1035Label", fc_dns1035_label),
    CTOR("qualifiedName", fc_qualified_name),
    CTOR("dns1123LabelPrefix", fc_dns1123_label_prefix),
    CTOR("dns1123SubdomainPrefix", fc_dns1123_subdomain_prefix),
    CTOR("dns1035LabelPrefix", fc_dns1035_label_prefix),
    CTOR("labelValue", fc_label_value),
    CTOR("uri", fc_uri),
    CTOR("uuid", fc_uuid),
    CTOR("byte", fc_byte),
    CTOR("date", fc_date),
    CTOR("datetime", fc_datetime),
};

const cel_library cel_lib_format = {"format", format_overloads, ARRAY_SIZE(format_overloads)};
