/* flags_test.c — cmd/flags.c, the subcommands' one flag parser, case by case: each row
 * of `cases` is an argv, the answer and what stdout/stderr say, worked by hand from
 * kubectl's habits (pflag: --flag=value and --flag value, -ovalue, -- ends flags,
 * unknown flags named, a missing value named, --help when reached). */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/flags.h"

typedef struct demo_opts {
    bool strict, verbose, quiet;
    const char *output, *node;
    cmd_list files, prices;
    long count;
    const char *word;
    int nwords;
} demo_opts;

/* --count N: a number >= 0, said in the table's own words when it is not one. */
static int read_count(const cmd_flag_use *u) {
    char *end;
    long v = u->value ? strtol(u->value, &end, 10) : -1;
    if (!u->value || !*u->value || *end || v < 0) {
        fprintf(stderr, "demo: %s needs an integer >= 0\n", u->as);
        return CMD_PARSE_ERROR;
    }
    *(long *)u->field = v;
    return CMD_PARSE_OK;
}

/* -o: json or yaml only; another value is no flag of this table (CMD_PARSE_UNKNOWN). */
static int read_output(const cmd_flag_use *u) {
    return !strcmp(u->value, "json") || !strcmp(u->value, "yaml") ? CMD_PARSE_OK : CMD_PARSE_UNKNOWN;
}

/* --quiet: a boolean read by its own fn, which sees "true" or "false" */
static int read_quiet(const cmd_flag_use *u) {
    *(bool *)u->field = !strcmp(u->value, "true");
    return CMD_PARSE_OK;
}

static int demo_word(void *opts, const char *w) {
    demo_opts *o = opts;
    if (!strcmp(w, "bad")) {
        fprintf(stderr, "demo: bad word\n");
        return CMD_PARSE_ERROR;
    }
    if (o->nwords++) return CMD_PARSE_UNKNOWN;   /* one word only */
    o->word = w;
    return CMD_PARSE_OK;
}

static void demo_usage(FILE *f);

static const cmd_flag demo_rows[] = {
    {.name = "--filename", .shorthand = "-f", .kind = CMD_PATHS, .off = offsetof(demo_opts, files),
     .label = "-f, --filename F", .help = "files\nor directories"},
    {.name = "--node", .kind = CMD_STRING, .off = offsetof(demo_opts, node), .label = "--node N", .help = "the node"},
    {.name = "--output", .shorthand = "-o", .kind = CMD_STRING, .off = offsetof(demo_opts, output), .fn = read_output},
    {.name = "--price", .kind = CMD_LIST, .off = offsetof(demo_opts, prices), .help = "once per shape"},
    {.name = "--count", .kind = CMD_FUNC, .off = offsetof(demo_opts, count), .fn = read_count, .label = "--count N",
     .help = "how many", .own_missing = true},
    {.kind = CMD_SECTION, .help = "\nMore\n"},
    {.name = "--strict", .kind = CMD_BOOL, .off = offsetof(demo_opts, strict), .help = "errors, not warnings"},
    {.name = "--verbose", .shorthand = "-v", .kind = CMD_BOOL, .off = offsetof(demo_opts, verbose),
     .label = "-v, --verbose-and-longer", .help = "chatty"},
    {.name = "--quiet", .kind = CMD_BOOL, .off = offsetof(demo_opts, quiet), .fn = read_quiet},
};

static const cmd_flags demo = {
    .prog = "demo",
    .flags = demo_rows,
    .nflags = sizeof demo_rows / sizeof demo_rows[0],
    .word = demo_word,
    .unknown = "demo: unknown flag: %s\n",
    .missing = "demo: flag needs an argument: %s\n",
    .usage = demo_usage,
    .help_width = 16,
};

static void demo_usage(FILE *f) {
    fprintf(f, "usage: demo\n");
    cmd_flags_help(f, &demo);
}

typedef struct demo_case {
    const char *args;   /* the words after argv[0], space-separated */
    int rc;
    const char *files, *prices;   /* comma-joined */
    const char *node, *output, *word;
    bool strict, verbose;
    long count;
    const char *err, *out;
    bool quiet;
} demo_case;

static const demo_case cases[] = {
    /* both value forms, shorthands joined, with = and apart */
    {.args = "--node n1 -o json", .rc = CMD_PARSE_OK, .files = "", .prices = "", .node = "n1", .output = "json"},
    {.args = "--node=n1 -ojson", .rc = CMD_PARSE_OK, .files = "", .prices = "", .node = "n1", .output = "json"},
    {.args = "--node= -o=yaml", .rc = CMD_PARSE_OK, .files = "", .prices = "", .node = "", .output = "yaml"},
    {.args = "--output yaml --node a --node b", .rc = CMD_PARSE_OK, .files = "", .prices = "", .node = "b", .output = "yaml"},   /* the last wins */
    /* -f A B C: the words after it up to the next flag; -f again adds */
    {.args = "-f a b c --node n -f d", .rc = CMD_PARSE_OK, .files = "a,b,c,d", .prices = "", .node = "n"},
    {.args = "--filename=a b", .rc = CMD_PARSE_OK, .files = "a,b", .prices = ""},
    {.args = "-f - x", .rc = CMD_PARSE_OK, .files = "-,x", .prices = ""},
    /* a repeated list flag keeps every value, = and apart */
    {.args = "--price a=1,b=2 --price=c=3", .rc = CMD_PARSE_OK, .files = "", .prices = "a=1,b=2,c=3"},
    /* booleans, with =true|false */
    {.args = "--strict -v", .rc = CMD_PARSE_OK, .files = "", .prices = "", .strict = true, .verbose = true},
    {.args = "--strict=true --verbose=false", .rc = CMD_PARSE_OK, .files = "", .prices = "", .strict = true},
    {.args = "--strict=maybe", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: unknown flag: --strict=maybe\n"},
    {.args = "--quiet", .rc = CMD_PARSE_OK, .files = "", .prices = "", .quiet = true},
    {.args = "--quiet --quiet=false", .rc = CMD_PARSE_OK, .files = "", .prices = ""},
    /* a row's own reader */
    {.args = "--count 7", .rc = CMD_PARSE_OK, .files = "", .prices = "", .count = 7},
    {.args = "--count=-1", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: --count needs an integer >= 0\n"},
    {.args = "--count", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: --count needs an integer >= 0\n"},
    {.args = "-o xml", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: unknown flag: -o\n"},
    /* words: one taken, a second unknown, one the command refuses itself */
    {.args = "w --strict", .rc = CMD_PARSE_OK, .files = "", .prices = "", .word = "w", .strict = true},
    {.args = "w x", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .word = "w", .err = "demo: unknown flag: x\n"},
    {.args = "bad", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: bad word\n"},
    /* -- ends the flags; a lone - is a word */
    {.args = "-- --strict", .rc = CMD_PARSE_OK, .files = "", .prices = "", .word = "--strict"},
    {.args = "-", .rc = CMD_PARSE_OK, .files = "", .prices = "", .word = "-"},
    /* unknown flags named; a flag name's prefix is not the flag */
    {.args = "--nod x", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: unknown flag: --nod\n"},
    {.args = "--node-name x", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: unknown flag: --node-name\n"},
    {.args = "-vx", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: unknown flag: -vx\n"},
    /* a missing value named as written */
    {.args = "--node", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: flag needs an argument: --node\n"},
    {.args = "--strict -f", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .strict = true, .err = "demo: flag needs an argument: -f\n"},
    /* --help when reached: what came before is checked, what follows is not read */
    {.args = "--strict --help --bogus", .rc = CMD_PARSE_HELP, .files = "", .prices = "", .strict = true, .out = "usage: demo\n"
     "  -f, --filename F files\n"
     "                   or directories\n"
     "  --node N         the node\n"
     "  --price          once per shape\n"
     "  --count N        how many\n"
     "\nMore\n"
     "  --strict         errors, not warnings\n"
     "  -v, --verbose-and-longer  chatty\n"},
    {.args = "--bogus -h", .rc = CMD_PARSE_ERROR, .files = "", .prices = "", .err = "demo: unknown flag: --bogus\n"},
};

/* fd 1 or 2 into a file while fn runs: what it printed. */
static char *slurp_fd(FILE *tmp) {
    fflush(tmp);
    long n = ftell(tmp);
    char *b = calloc((size_t)n + 1, 1);
    rewind(tmp);
    cr_assert_eq(fread(b, 1, (size_t)n, tmp), (size_t)n);
    return b;
}

static const char *joined(const cmd_list *l, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->n; i++) len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", l->v[i]);
    return buf;
}

static int nullcmp(const char *a, const char *b) { return a == b ? 0 : !a || !b ? 1 : strcmp(a, b); }

Test(flags, table) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const demo_case *k = &cases[c];
        char line[256], *argv[32];
        int argc = 0;
        snprintf(line, sizeof line, "%s", k->args);
        argv[argc++] = "demo";
        for (char *save = NULL, *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) argv[argc++] = t;
        argv[argc] = NULL;
        FILE *out = tmpfile(), *err = tmpfile();
        int o1 = dup(1), o2 = dup(2);
        fflush(stdout), fflush(stderr);
        dup2(fileno(out), 1), dup2(fileno(err), 2);
        demo_opts o = {0};
        int rc = cmd_flags_parse(&demo, argc, argv, &o);
        fflush(stdout), fflush(stderr);
        dup2(o1, 1), dup2(o2, 2);
        close(o1), close(o2);
        fseek(out, 0, SEEK_END), fseek(err, 0, SEEK_END);
        char *out_text = slurp_fd(out), *err_text = slurp_fd(err);
        char fb[256], pb[256];
        cr_expect_eq(rc, k->rc, "%s: rc %d, want %d", k->args, rc, k->rc);
        cr_expect_str_eq(err_text, k->err ? k->err : "", "%s: stderr", k->args);
        cr_expect_str_eq(out_text, k->out ? k->out : "", "%s: stdout", k->args);
        if (k->rc != CMD_PARSE_ERROR) {
            cr_expect_str_eq(joined(&o.files, fb, sizeof fb), k->files, "%s: files", k->args);
            cr_expect_str_eq(joined(&o.prices, pb, sizeof pb), k->prices, "%s: prices", k->args);
            cr_expect(!nullcmp(o.node, k->node), "%s: node %s", k->args, o.node ? o.node : "(none)");
            cr_expect(!nullcmp(o.output, k->output), "%s: output %s", k->args, o.output ? o.output : "(none)");
            cr_expect(!nullcmp(o.word, k->word), "%s: word %s", k->args, o.word ? o.word : "(none)");
            cr_expect_eq(o.count, k->count, "%s: count", k->args);
        }
        cr_expect_eq(o.strict, k->strict, "%s: strict", k->args);
        cr_expect_eq(o.verbose, k->verbose, "%s: verbose", k->args);
        cr_expect_eq(o.quiet, k->quiet, "%s: quiet", k->args);
        cmd_flags_free(&demo, &o);
        free(out_text), free(err_text);
        fclose(out), fclose(err);
    }
}

/* A table that prints nothing for an unknown word hands it back (bench tries its
 * matrix table first, then the micro workloads'). */
Test(flags, unknown_unsaid) {
    cmd_flags quiet = demo;
    quiet.unknown = NULL;
    quiet.missing = NULL;
    char *argv[] = {"demo", "--nope", NULL};
    demo_opts o = {0};
    cr_assert_eq(cmd_flags_parse(&quiet, 2, argv, &o), CMD_PARSE_UNKNOWN);
    char *argv2[] = {"demo", "--node", NULL};
    cr_assert_eq(cmd_flags_parse(&quiet, 2, argv2, &o), CMD_PARSE_UNKNOWN);
    cmd_flags_free(&quiet, &o);
}

/* cel eval's --: only the next word is a word, flags may follow it. */
Test(flags, dashdash_next) {
    cmd_flags next = demo;
    next.dashdash = CMD_DASHDASH_NEXT;
    char *argv[] = {"demo", "--", "-1 + 2", "--strict", NULL};
    demo_opts o = {0};
    cr_assert_eq(cmd_flags_parse(&next, 4, argv, &o), CMD_PARSE_OK);
    cr_assert_str_eq(o.word, "-1 + 2");
    cr_assert(o.strict);
    cmd_flags_free(&next, &o);
}
