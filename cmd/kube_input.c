/* kube_input.c — a cluster read once for offline commands (kube_input.h). */
#include "cmd/kube_input.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_kube_row(const cmd_flag_use *u) {
    cmd_kube_flags *k = u->field;
    const char *n = u->flag->name;
    k->used = true;
    if (!strcmp(n, "--insecure-skip-tls-verify")) k->o.insecure = !strcmp(u->value, "true");
    else if (!strcmp(n, "--kubeconfig")) k->o.kubeconfig = u->value;
    else if (!strcmp(n, "--context")) k->o.context = u->value;
    else if (!strcmp(n, "--server")) k->o.server = u->value;
    else if (!strcmp(n, "--token-file")) k->o.token_file = u->value;
    else if (!strcmp(n, "--ca-file")) k->o.ca_file = u->value;
    else assert(!"a row of CMD_KUBE_ROWS");
    return CMD_PARSE_OK;
}

void cmd_kube_default(cmd_kube_flags *k) {
    k->used = true;
    if (k->o.kubeconfig || k->o.server) return;
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        /* kubectl merges every file of the list; the first holds the context here */
        const char *colon = strchr(env, ':');
        snprintf(k->path, sizeof k->path, "%.*s", (int)(colon ? (size_t)(colon - env) : strlen(env)), env);
        k->o.kubeconfig = k->path;
        return;
    }
    const char *home = getenv("HOME");
    if (home && *home) {
        snprintf(k->path, sizeof k->path, "%s/.kube/config", home);
        if (!access(k->path, R_OK)) k->o.kubeconfig = k->path;
    }
}

void cmd_kube_namespace(const cmd_kube_flags *k, char *out, size_t n) {
    err e;
    err_clear(&e);
    ext_kube *kube = ext_kube_new(&k->o, &e);
    if (kube && ext_kube_namespace(kube)) snprintf(out, n, "%s", ext_kube_namespace(kube));
    ext_kube_free(kube);   /* an unusable configuration: the fetch says why */
}

void cmd_kube_print_notes(const char *prog, const json_t *notes) {
    size_t i;
    const json_t *n;
    json_array_foreach(notes, i, n) fprintf(stderr, "%s: note: %s\n", prog, json_string_value(n));
}

json_t *cmd_kube_fetch(const cmd_kube_flags *k, const char *prog) {
    err e;
    err_clear(&e);
    ext_kube *kube = ext_kube_new(&k->o, &e);
    if (!kube) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return NULL;
    }
    json_t *notes = json_array();
    json_t *objs = ext_kube_snapshot(kube, notes, &e);
    if (!objs) fprintf(stderr, "%s: %s: %s\n", prog, ext_kube_server(kube), e.msg);
    cmd_kube_print_notes(prog, notes);
    json_decref(notes);
    ext_kube_free(kube);
    return objs;
}
