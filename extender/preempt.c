/* preempt.c — the extender's preempt verb. kube-scheduler's DefaultPreemption decides
 * victims without DRA (its DynamicResources plugin frees no device when a pod is
 * removed in its dry run), then hands the candidates to the extenders
 * (pkg/scheduler/framework/preemption/preemption.go callExtenders, extender.go
 * ProcessPreemption): ExtenderPreemptionArgs {Pod, NodeNameToMetaVictims (UIDs, with
 * nodeCacheCapable) or NodeNameToVictims (whole pods)}, answered with
 * ExtenderPreemptionResult {NodeNameToMetaVictims}. kube-scheduler maps the UIDs back to
 * the pods of each node (convertPodUIDToPod) and drops the nodes the answer leaves out.
 * Here every node gets kube-scheduler's victims and, where they leave the pod without
 * its devices, the fewest more lower-priority pods whose claims free them
 * (engine/preempt.h, dra_room_extend); a node where no set works is left out; a node
 * sent with no victims is answered with the ones DRA needs. The room covers only the
 * candidate nodes' pods and their claims, read from the store's text of them (serve
 * --preempt-verb keeps it). */
#include "extender/preempt.h"

#include "engine/preempt.h"
#include "extender/wire.h"

#include <stdlib.h>
#include <string.h>

/* NodeNameToVictims (whole pods) as NodeNameToMetaVictims (their UIDs). */
static json_t *meta_of(const json_t *victims) {
    json_t *out = json_object();
    const char *node;
    const json_t *v;
    json_object_foreach((json_t *)victims, node, v) {
        json_t *pods = json_array();
        size_t i;
        const json_t *p;
        json_array_foreach(json_object_get(v, "Pods"), i, p)
            json_array_append_new(pods, json_pack("{s:s?}", "UID",
                                                  json_string_value(json_object_get(json_object_get(p, "metadata"), "uid"))));
        json_object_set_new(out, node, json_pack("{s:o, s:O?}", "Pods", pods, "NumPDBViolations",
                                                 json_object_get(v, "NumPDBViolations")));
    }
    return out;
}

static void answer(ext_reply *r, json_t *doc) {
    char *text = json_dumps(doc, JSON_COMPACT);
    r->status = 200;
    r->content_type = "application/json";
    r->body = text ? text : xstrdup("{}");
    r->len = strlen(r->body);
}

void ext_preempt_verb(dra_store *st, unsigned max_depth, const char *body, size_t len, ext_reply *r) {
    err e;
    err_clear(&e);
    json_t *doc = ext_json_parse(body, len, max_depth, &e);
    const json_t *pod = json_object_get(doc, "Pod");
    const json_t *meta = json_object_get(doc, "NodeNameToMetaVictims");
    json_t *conv = meta ? NULL : meta_of(json_object_get(doc, "NodeNameToVictims"));
    if (!doc || !json_is_object(pod)) {
        ext_reply_error(r, 400, "ExtenderPreemptionArgs: %s", doc ? "Pod: expected an object" : e.msg);
        json_decref(conv);
        json_decref(doc);
        return;
    }
    const json_t *victims = meta ? meta : conv;
    size_t n = json_object_size(victims), i = 0;
    const char **nodes = xcalloc(n + 1, sizeof *nodes);
    const char *node;
    const json_t *v;
    json_object_foreach((json_t *)victims, node, v) nodes[i++] = node;
    dra_snapshot *snap = dra_store_acquire(st);
    const json_t *md = json_object_get(pod, "metadata");
    dra_room *room = snap ? dra_room_new_nodes(snap, pod, nodes, n, &e) : NULL;
    json_t *out = room ? dra_room_extend(room, json_string_value(json_object_get(md, "namespace")),
                                         json_string_value(json_object_get(md, "name")) ?: "", victims, &e)
                       : NULL;
    if (out) answer(r, out);
    else if (!snap) ext_reply_error(r, 503, "no snapshot loaded yet");
    else ext_reply_error(r, 400, "preempt: %s", e.msg);
    json_decref(out);
    dra_room_free(room);
    if (snap) dra_snapshot_release(snap);
    free(nodes);
    json_decref(conv);
    json_decref(doc);
}
