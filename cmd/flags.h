/* flags.h — the one flag parser of every `dralloc` subcommand. A command lists its
 * flags in a table (cmd_flag rows: name, shorthand, what the value is, where it goes,
 * its help) and cmd_flags_parse reads argv with kubectl's habits:
 *
 *   --flag value, --flag=value; -f value, -f=value, -fvalue for a shorthand;
 *   a boolean as --flag or --flag=true|false;
 *   --help / -h print the command's usage on stdout when reached (exit 0), so that
 *   `dralloc serve ARGS --help` still checks every argument before it;
 *   -- ends the flags (every word after it is a word, or only the next one);
 *   an unknown flag, or a word the command takes none of, named in the error (exit 2);
 *   a value missing at the end named (the command's own words for it).
 *
 * Adding a flag is one row: {"--make-room", NULL, CMD_BOOL, offsetof(why_opts, make_room)}.
 * Rows read in order; the first whose name or shorthand matches takes the word. The
 * help's flag section is printed from the same rows (cmd_flags_help), in the column
 * layout the command's usage had. */
#ifndef DRA_CMD_FLAGS_H
#define DRA_CMD_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum cmd_flag_kind {
    CMD_BOOL,      /* no value (or =true|false): a bool set */
    CMD_STRING,    /* one value, the last one given wins: a const char * */
    CMD_LIST,      /* one value, each use appends: a cmd_list (--min-nodes A --min-nodes B) */
    CMD_PATHS,     /* a value and the words after it up to the next flag: a cmd_list (-f A B C) */
    CMD_FUNC,      /* one value, read by the row's fn alone */
    CMD_SECTION,   /* not a flag: a line of the help between flags (help: its text) */
} cmd_flag_kind;

/* The values of a CMD_LIST or CMD_PATHS flag, in the order given. */
typedef struct cmd_list {
    const char **v;
    size_t n;
} cmd_list;

/* The parse's answers: ok, --help printed, an error printed (exit 2), and a word no row
 * takes (printed as the table says, or left to the caller when it says nothing). */
enum { CMD_PARSE_OK = 0, CMD_PARSE_HELP = -1, CMD_PARSE_ERROR = 2, CMD_PARSE_UNKNOWN = 3 };

typedef struct cmd_flags cmd_flags;
typedef struct cmd_flag cmd_flag;

/* One use of a flag, as a row's fn sees it. */
typedef struct cmd_flag_use {
    const cmd_flags *spec;
    const cmd_flag *flag;
    const char *as;      /* the flag as written: "-o" or "--output" (without =value) */
    const char *value;   /* NULL: none given (only for rows with own_missing); a CMD_BOOL's
                          * "true" or "false" */
    void *opts;          /* the command's options */
    void *field;         /* opts + the row's off */
} cmd_flag_use;

/* A row's own reading of a value (a number, a choice): CMD_PARSE_OK to go on (the
 * value then stored by the row's kind, except CMD_FUNC), CMD_PARSE_ERROR after printing
 * why, CMD_PARSE_UNKNOWN to treat the word as no flag of the table. */
typedef int cmd_flag_fn(const cmd_flag_use *u);

struct cmd_flag {
    const char *name;        /* "--filename" (NULL: shorthand only) */
    const char *shorthand;   /* "-f", or NULL */
    cmd_flag_kind kind;
    size_t off;              /* offsetof the field in the command's options */
    cmd_flag_fn *fn;         /* optional for every kind but CMD_FUNC */
    const char *label;       /* the help's left column (default: name) */
    const char *help;        /* the help's text, continuation lines after '\n'; NULL: not listed */
    bool own_missing;        /* a missing value goes to fn (value NULL), which says what is missing */
    const void *data;        /* fn's own (a range, a unit): the same fn for several rows */
};

/* What -- does: every word after it is a word, or only the next one (cel eval's
 * `-- '-1 + 2' --device-json F`: flags may follow the expression). */
typedef enum cmd_dashdash { CMD_DASHDASH_REST, CMD_DASHDASH_NEXT } cmd_dashdash;

struct cmd_flags {
    const char *prog;               /* "dralloc plan": for messages the parser words itself */
    const cmd_flag *flags;
    size_t nflags;
    /* a word that is not a flag: CMD_PARSE_OK when taken, CMD_PARSE_UNKNOWN when not
     * (the unknown message follows), CMD_PARSE_ERROR after printing why; NULL: none taken */
    int (*word)(void *opts, const char *word);
    const char *unknown;            /* printf format, %s = the word; NULL: nothing printed */
    const char *missing;            /* printf format, %s = the flag; NULL: an unknown word */
    void (*usage)(FILE *f);         /* the command's usage: --help, and after errors below */
    bool usage_after_unknown;       /* usage on stderr after the unknown message */
    bool no_help;                   /* --help is no flag (cel eval: usage on stderr, exit 2) */
    cmd_dashdash dashdash;
    int help_width;                 /* the help's left column: "  %-Ws text" */
};

/* Reads argv[1..argc-1] into opts: CMD_PARSE_OK, CMD_PARSE_HELP (usage printed on
 * stdout: exit 0), CMD_PARSE_ERROR (printed: exit 2) or CMD_PARSE_UNKNOWN (a word no
 * row takes, printed by the table's unknown/usage; returned as it is only when the
 * table prints nothing, for a caller that tries another table). CMD_LIST and CMD_PATHS
 * fields are allocated here (argc entries at most): free them with cmd_flags_free. */
int cmd_flags_parse(const cmd_flags *spec, int argc, char **argv, void *opts);
/* The lists' memory (the strings are argv's). */
void cmd_flags_free(const cmd_flags *spec, void *opts);
/* The flag section of the usage: every row with help, "  LABEL  TEXT" with the label
 * padded to spec->help_width (two spaces after a longer one), continuation lines under
 * the text; CMD_SECTION rows as they are. */
void cmd_flags_help(FILE *f, const cmd_flags *spec);
/* Prints spec->missing for u (or the unknown message when it has none) and returns
 * what the parser would: for an fn with own_missing that finds nothing it can use. */
int cmd_flag_missing(const cmd_flag_use *u);

#endif
