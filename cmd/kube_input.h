/* kube_input.h — a cluster read once as the input of an offline command (`plan`,
 * `capacity`): the kube-apiserver flags shared with `serve` and one paged list of
 * every kind allocation reads (extender/kube.h ext_kube_snapshot). */
#ifndef DRA_CMD_KUBE_INPUT_H
#define DRA_CMD_KUBE_INPUT_H

#include <jansson.h>
#include <stdbool.h>

#include "cmd/flags.h"
#include "extender/kube.h"

typedef struct cmd_kube_flags {
    ext_kube_opts o;
    bool used;                  /* one of the flags was given */
    char path[4096];            /* cmd_kube_default's kubeconfig (o.kubeconfig points here) */
} cmd_kube_flags;

/* The flag rows of a cluster (cmd/flags.h) for a command whose options hold a
 * cmd_kube_flags at OFF: --kubeconfig F, --context C, --server URL, --token-file F,
 * --ca-file F, --insecure-skip-tls-verify; each sets `used`. */
int cmd_kube_row(const cmd_flag_use *u);
#define CMD_KUBE_ROWS(OFF)                                                          \
    {.name = "--kubeconfig", .kind = CMD_FUNC, .off = (OFF), .fn = cmd_kube_row},   \
    {.name = "--context", .kind = CMD_FUNC, .off = (OFF), .fn = cmd_kube_row},      \
    {.name = "--server", .kind = CMD_FUNC, .off = (OFF), .fn = cmd_kube_row},       \
    {.name = "--token-file", .kind = CMD_FUNC, .off = (OFF), .fn = cmd_kube_row},   \
    {.name = "--ca-file", .kind = CMD_FUNC, .off = (OFF), .fn = cmd_kube_row},      \
    {.name = "--insecure-skip-tls-verify", .kind = CMD_BOOL, .off = (OFF), .fn = cmd_kube_row}
/* The cluster as kubectl finds it when no flag named one: the first file of
 * $KUBECONFIG, else ~/.kube/config when it exists, else the pod's service account
 * (in-cluster; extender/kube.c says when none is there). Sets k->used. */
void cmd_kube_default(cmd_kube_flags *k);
/* The cluster's objects as a JSON array, or NULL after printing why (prog: the
 * command's name for the message); the snapshot's notes (a kind read at an older
 * version or not served) printed on stderr as "PROG: note: ...". */
json_t *cmd_kube_fetch(const cmd_kube_flags *k, const char *prog);
/* kubectl's namespace for -n left out: the kubeconfig context's, or in a pod its
 * own (extender/kube.h ext_kube_namespace); out is left as it is when none is named. */
void cmd_kube_namespace(const cmd_kube_flags *k, char *out, size_t n);
/* ext_kube_snapshot's notes on stderr, one "PROG: note: ..." line each. */
void cmd_kube_print_notes(const char *prog, const json_t *notes);

#endif
