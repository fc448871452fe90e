/* jsonl.h — JSON Lines on stdin, one answer line each on stdout: the loop that
 * `dralloc allocate --fixture -` and `dralloc cel eval --stdin` share, so that a
 * differential test (tests/upstream) asks a million questions of one process. */
#ifndef DRALLOC_CMD_JSONL_H
#define DRALLOC_CMD_JSONL_H

#include <jansson.h>
#include <stddef.h>

/* One question: `in` is the line's JSON value (never NULL), `where` names it
 * ("<stdin>:N"). Returns the answer (owned by the caller), or NULL with msg set to
 * why the line is not a question. */
typedef json_t *(*cmd_jsonl_fn)(json_t *in, const char *where, char *msg, size_t nmsg, void *ud);
/* Prints one answer as one line (NULL: compact JSON). */
typedef void (*cmd_jsonl_print)(json_t *answer);

/* Answers every non-empty line of stdin until its end, flushing after each; a line
 * that is not JSON, or that fn refuses, is answered {err_key: "<stdin>:N: why"}.
 * Returns 0. */
int cmd_jsonl_answer(cmd_jsonl_fn fn, void *ud, const char *err_key, cmd_jsonl_print print);

#endif
