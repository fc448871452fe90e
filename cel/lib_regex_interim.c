/* lib_regex_interim.c — INTERIM `matches()` on POSIX extended regular
 * expressions, until the RE2 library file (cel/lib_regex*.cc) replaces it: delete
 * this file and its line in cel/libraries.c then. RE2 and POSIX ERE agree on the
 * common subset selectors use (anchors, classes, alternation, repetition); the
 * Perl classes \d \D \s \S \w \W are rewritten to bracket expressions. A constant
 * pattern is compiled once at compile time (and a bad one is a compile error, as
 * Kubernetes' regex literal validator makes it); a dynamic pattern per call. */
#include "cel/functions.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

static bool translate(const char *p, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        if (p[i] == '\\' && i + 1 < n) {
            switch (p[i + 1]) {
            case 'd': rep = "[0-9]"; break;
            case 'D': rep = "[^0-9]"; break;
            case 's': rep = "[[:space:]]"; break;
            case 'S': rep = "[^[:space:]]"; break;
            case 'w': rep = "[[:alnum:]_]"; break;
            case 'W': rep = "[^[:alnum:]_]"; break;
            default: break;
            }
        }
        if (rep) {
            size_t l = strlen(rep);
            if (o + l + 1 > cap) return false;
            memcpy(out + o, rep, l);
            o += l;
            i++;
            continue;
        }
        if (o + 2 > cap) return false;
        out[o++] = p[i];
    }
    out[o] = '\0';
    return true;
}

static regex_t *compile_re(const char *p, size_t n, err *e) {
    char buf[4096];
    if (!translate(p, n, buf, sizeof buf)) {
        err_set(e, "regular expression too long");
        return NULL;
    }
    regex_t *re = xmalloc(sizeof *re);
    int rc = regcomp(re, buf, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char msg[256];
        regerror(rc, re, msg, sizeof msg);
        free(re);
        err_set(e, "error parsing regexp: %s: `%.*s`", msg, (int)n, p);
        return NULL;
    }
    return re;
}

static bool re_prepare(const cel_value *args, const bool *is_const, uint32_t nargs, void **out, err *e) {
    *out = NULL;
    if (nargs < 2 || !is_const[1] || args[1].kind != CV_STRING) return true;
    regex_t *re = compile_re(args[1].u.s, args[1].len, e);
    if (!re) return false;
    *out = re;
    return true;
}

static void re_release(void *p) {
    regfree(p);
    free(p);
}

static cel_value re_matches(cel_call *c, const cel_value *a, uint32_t n) {
    (void)n;
    if (!cel_call_charge(c, a[0].len / 10 + 1)) return cel_cost_exceeded();
    char *text = arena_strndup(c->arena, a[0].u.s, a[0].len);
    if (c->prepared) return cel_bool(regexec(c->prepared, text, 0, NULL, 0) == 0);
    err e;
    err_clear(&e);
    regex_t *re = compile_re(a[1].u.s, a[1].len, &e);
    if (!re) return cel_call_error(c, "%s", e.msg);
    bool m = regexec(re, text, 0, NULL, 0) == 0;
    re_release(re);
    return cel_bool(m);
}

static const cel_overload regex_overloads[] = {
    {"matches", "matches", CEL_GLOBAL, 2, 0, {"string", "string"}, "bool", re_matches, 1, re_prepare, re_release},
    {"matches", "matches_string", CEL_RECEIVER, 2, 0, {"string", "string"}, "bool", re_matches, 1, re_prepare, re_release},
};

const cel_library cel_lib_regex_interim = {"regex_interim", regex_overloads, ARRAY_SIZE(regex_overloads)};
