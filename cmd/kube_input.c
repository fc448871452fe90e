/* kube_input.c — a cluster read once for offline commands (kube_input.h). */
#include "cmd/kube_input.h"

#include <stdio.h>
#include <string.h>

bool cmd_kube_flag(int argc, char **argv, int *i, cmd_kube_flags *k) {
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    static const char *const with_value[] = {"--kubeconfig", "--context", "--server", "--token-file", "--ca-file"};
    if (!strcmp(a, "--insecure-skip-tls-verify")) {
        k->o.insecure = k->used = true;
        return true;
    }
    for (size_t n = 0; n < sizeof with_value / sizeof with_value[0]; n++) {
        if (strcmp(a, with_value[n]) || !v) continue;
        const char **slot[] = {&k->o.kubeconfig, &k->o.context, &k->o.server, &k->o.token_file, &k->o.ca_file};
        *slot[n] = v;
        (*i)++;
        k->used = true;
        return true;
    }
    return false;
}

json_t *cmd_kube_fetch(const cmd_kube_flags *k, const char *prog) {
    err e;
    err_clear(&e);
    ext_kube *kube = ext_kube_new(&k->o, &e);
    if (!kube) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return NULL;
    }
    json_t *objs = ext_kube_snapshot(kube, &e);
    if (!objs) fprintf(stderr, "%s: %s: %s\n", prog, ext_kube_server(kube), e.msg);
    ext_kube_free(kube);
    return objs;
}
