/* flags.c — the table-driven flag parser of the subcommands (flags.h). */
#include "cmd/flags.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* One parse: the table, argv, and where the next word is. */
typedef struct parse {
    const cmd_flags *spec;
    int argc;
    char **argv;
    int i;
    void *opts;
} parse;

static void *field_of(const parse *p, const cmd_flag *f) { return (char *)p->opts + f->off; }

static void list_add(const parse *p, const cmd_flag *f, const char *v) {
    cmd_list *l = field_of(p, f);
    if (!l->v) l->v = xcalloc((size_t)p->argc + 1, sizeof *l->v);
    assert(l->n < (size_t)p->argc);
    l->v[l->n++] = v;
}

/* A word no row takes: the table's message (and usage), or CMD_PARSE_UNKNOWN unsaid. */
static int unknown(const cmd_flags *spec, const char *word) {
    if (!spec->unknown && !spec->usage_after_unknown) return CMD_PARSE_UNKNOWN;
    if (spec->unknown) fprintf(stderr, spec->unknown, word);
    if (spec->usage_after_unknown && spec->usage) spec->usage(stderr);
    return CMD_PARSE_ERROR;
}

int cmd_flag_missing(const cmd_flag_use *u) {
    if (!u->spec->missing) return unknown(u->spec, u->as);
    fprintf(stderr, u->spec->missing, u->as);
    return CMD_PARSE_ERROR;
}

/* Is the word this row (as "-o", "--output"), and with which inline value: *inline_v
 * is the text after "=" (or after a shorthand's letter: -ojson), NULL when none. */
static bool matches(const cmd_flag *f, const char *w, const char **as_len_src, size_t *as_len, const char **inline_v) {
    const char *names[2] = {f->name, f->shorthand};
    for (int k = 0; k < 2; k++) {
        const char *n = names[k];
        if (!n) continue;
        size_t l = strlen(n);
        if (strncmp(w, n, l)) continue;
        if (!w[l]) {
            *as_len_src = w, *as_len = l, *inline_v = NULL;
            return true;
        }
        if (w[l] == '=') {
            *as_len_src = w, *as_len = l, *inline_v = w + l + 1;
            return true;
        }
        /* a shorthand with its value joined (kubectl's -oyaml); a boolean takes none */
        if (k == 1 && f->kind != CMD_BOOL) {
            *as_len_src = w, *as_len = l, *inline_v = w + l;
            return true;
        }
    }
    return false;
}

static int set_bool(const parse *p, const cmd_flag *f, const cmd_flag_use *u, const char *word) {
    bool on = true;
    if (u->value) {
        if (!strcmp(u->value, "true")) on = true;
        else if (!strcmp(u->value, "false")) on = false;
        else return unknown(p->spec, word);
    }
    if (!f->fn) {
        *(bool *)field_of(p, f) = on;
        return CMD_PARSE_OK;
    }
    cmd_flag_use v = *u;   /* the row's fn reads the boolean as "true" or "false" */
    v.value = on ? "true" : "false";
    int rc = f->fn(&v);
    return rc == CMD_PARSE_UNKNOWN ? unknown(p->spec, word) : rc;
}

/* The word at p->i is row f: its value read and stored. */
static int take(parse *p, const cmd_flag *f, const char *as, size_t as_len, const char *inline_v) {
    const char *word = p->argv[p->i];
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)as_len, as);
    cmd_flag_use u = {.spec = p->spec, .flag = f, .as = name, .value = inline_v, .opts = p->opts,
                      .field = field_of(p, f)};
    if (f->kind == CMD_BOOL) return set_bool(p, f, &u, word);
    if (!u.value && p->i + 1 < p->argc) u.value = p->argv[++p->i];
    if (!u.value && !(f->fn && f->own_missing)) return cmd_flag_missing(&u);
    if (f->fn) {
        int rc = f->fn(&u);
        if (rc != CMD_PARSE_OK) return rc == CMD_PARSE_UNKNOWN ? unknown(p->spec, word) : rc;
    }
    switch (f->kind) {
    case CMD_STRING: *(const char **)u.field = u.value; break;
    case CMD_LIST: list_add(p, f, u.value); break;
    case CMD_PATHS:
        list_add(p, f, u.value);
        while (p->i + 1 < p->argc && p->argv[p->i + 1][0] != '-') list_add(p, f, p->argv[++p->i]);
        break;
    default: break;
    }
    return CMD_PARSE_OK;
}

static const cmd_flag *find(const cmd_flags *spec, const char *w, const char **as, size_t *as_len, const char **inline_v) {
    for (size_t k = 0; k < spec->nflags; k++) {
        const cmd_flag *f = &spec->flags[k];
        assert(f->kind == CMD_SECTION || f->name || f->shorthand);   /* a flag has a name */
        assert(f->kind != CMD_FUNC || f->fn);                         /* CMD_FUNC: fn reads the value */
        if (f->kind != CMD_SECTION && matches(f, w, as, as_len, inline_v)) return f;
    }
    return NULL;
}

static int word(parse *p, const char *w) {
    int rc = p->spec->word ? p->spec->word(p->opts, w) : CMD_PARSE_UNKNOWN;
    return rc == CMD_PARSE_UNKNOWN ? unknown(p->spec, w) : rc;
}

int cmd_flags_parse(const cmd_flags *spec, int argc, char **argv, void *opts) {
    parse p = {.spec = spec, .argc = argc, .argv = argv, .opts = opts};
    bool words_only = false;
    for (p.i = 1; p.i < argc; p.i++) {
        const char *w = argv[p.i];
        int rc = CMD_PARSE_OK;
        if (words_only || w[0] != '-' || !w[1]) {
            rc = word(&p, w);
        } else if (!strcmp(w, "--")) {
            if (spec->dashdash == CMD_DASHDASH_REST) words_only = true;
            else if (p.i + 1 < argc) rc = word(&p, argv[++p.i]);
            else rc = unknown(spec, w);
        } else if (!spec->no_help && (!strcmp(w, "--help") || !strcmp(w, "-h"))) {
            if (spec->usage) spec->usage(stdout);
            return CMD_PARSE_HELP;
        } else {
            const char *as = NULL, *inline_v = NULL;
            size_t as_len = 0;
            const cmd_flag *f = find(spec, w, &as, &as_len, &inline_v);
            rc = f ? take(&p, f, as, as_len, inline_v) : unknown(spec, w);
        }
        if (rc != CMD_PARSE_OK) return rc;
    }
    return CMD_PARSE_OK;
}

void cmd_flags_free(const cmd_flags *spec, void *opts) {
    for (size_t k = 0; k < spec->nflags; k++) {
        const cmd_flag *f = &spec->flags[k];
        if (f->kind != CMD_LIST && f->kind != CMD_PATHS) continue;
        cmd_list *l = (cmd_list *)((char *)opts + f->off);
        free(l->v);
        l->v = NULL;
        l->n = 0;
    }
}

void cmd_flags_help(FILE *f, const cmd_flags *spec) {
    int w = spec->help_width;
    for (size_t k = 0; k < spec->nflags; k++) {
        const cmd_flag *r = &spec->flags[k];
        if (!r->help) continue;
        if (r->kind == CMD_SECTION) {
            fputs(r->help, f);
            continue;
        }
        const char *label = r->label ? r->label : r->name ? r->name : r->shorthand;
        if ((int)strlen(label) <= w) fprintf(f, "  %-*s ", w, label);
        else fprintf(f, "  %s  ", label);
        for (const char *line = r->help; line;) {
            const char *nl = strchr(line, '\n');
            fprintf(f, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
            line = nl ? nl + 1 : NULL;
            if (line) fprintf(f, "%*s", w + 3, "");
        }
    }
}
