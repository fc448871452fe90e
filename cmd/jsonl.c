/* jsonl.c — JSON Lines answered one line each (see jsonl.h). */
#include "cmd/jsonl.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_jsonl_answer(cmd_jsonl_fn fn, void *ud, const char *err_key, cmd_jsonl_print print) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long lineno = 0;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        lineno++;
        if (n == 1 && line[0] == '\n') continue;
        char where[48], msg[2048];
        snprintf(where, sizeof where, "<stdin>:%lu", lineno);
        json_error_t je;
        json_t *in = json_loadb(line, (size_t)n, 0, &je), *out = NULL;
        if (!in) snprintf(msg, sizeof msg, "%s: %s", where, je.text);
        else out = fn(in, where, msg, sizeof msg, ud);
        if (!out) out = json_pack("{s:s}", err_key, msg);
        if (print) {
            print(out);
        } else {
            char *s = json_dumps(out, JSON_COMPACT);
            puts(s);
            free(s);
        }
        fflush(stdout);
        json_decref(out);
        json_decref(in);
    }
    free(line);
    return 0;
}
