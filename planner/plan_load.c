/* plan_load.c — reading the planner's inputs: Kubernetes objects from files and
 * directories (kept as JSON, so what-ifs can edit them before a store is built),
 * workload files, and the store built from the objects. Objects are read by the
 * engine's document reader (engine/json.h dra_docs), workload files by its loaders,
 * so every path reads as `dralloc allocate -f` reads it. */
#include "planner/planner.h"

#include "engine/preempt.h"
#include "planner/plan_suggest.h"
#include "planner/plan_tmpl.h"
#include "planner/plan_yaml.h"

#include "engine/json.h"

#include "base/file.h"
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plan_objects_init(plan_objects *o) {
    o->items = json_array();
    o->sources = json_array();
}

void plan_objects_free(plan_objects *o) {
    json_decref(o->items);
    json_decref(o->sources);
    o->items = o->sources = NULL;
}

void plan_objects_copy(plan_objects *dst, const plan_objects *src) {
    /* objects are never edited in place (what-ifs add copies, removals drop
     * entries), so a shallow copy of the arrays is a full one */
    dst->items = json_copy(src->items);
    dst->sources = json_copy(src->sources);
}

static bool is_list(const json_t *doc) {
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    size_t n = kind ? strlen(kind) : 0;
    return n >= 4 && !strcmp(kind + n - 4, "List") && json_is_array(json_object_get(doc, "items"));
}

void plan_objects_add_doc(plan_objects *o, json_t *doc, const char *source) {
    size_t i;
    json_t *x;
    if (json_is_array(doc)) {
        json_array_foreach(doc, i, x) plan_objects_add_doc(o, x, source);
    } else if (is_list(doc)) {
        /* typed lists (ResourceSliceList) leave kind out of their items */
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        json_array_foreach(json_object_get(doc, "items"), i, x) {
            if (!json_object_get(x, "kind") && strcmp(kind, "List")) {
                json_t *c = json_copy(x);
                json_object_set_new(c, "kind", json_stringn(kind, strlen(kind) - 4));
                const json_t *av = json_object_get(doc, "apiVersion");
                if (av && !json_object_get(c, "apiVersion")) json_object_set(c, "apiVersion", (json_t *)av);
                plan_objects_add_doc(o, c, source);
                json_decref(c);
            } else {
                plan_objects_add_doc(o, x, source);
            }
        }
    } else if (json_is_object(doc)) {
        json_array_append(o->items, doc);
        json_array_append_new(o->sources, json_string(source ? source : ""));
    }
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

json_t *plan_file_docs(const char *path, err *e) {
    strbuf sb;
    if (!file_read_all(path, DRA_INPUT_MAX_BYTES, &sb, e)) return plan_err_flatten(e), NULL;
    const char *text = sb.buf ? sb.buf : "";
    json_t *docs;
    if (has_suffix(path, ".json")) {
        json_t *d = dra_json_load(text, sb.len, path, NULL, e);
        docs = d ? json_array() : NULL;
        if (d) json_array_append_new(docs, d);
        else plan_err_flatten(e);
    } else {
        docs = plan_yaml_load(text, sb.len, path, e);
    }
    sbuf_free(&sb);
    return docs;
}

bool plan_objects_load_path(plan_objects *o, const char *path, err *e) {
    /* the engine's document reader, as `dralloc allocate -f` reads the same path */
    dra_docs *d = dra_docs_open(path, NULL);
    for (dra_doc doc; dra_docs_next(d, &doc);) {
        if (doc.list) {
            /* an item of a List the reader gives one at a time: added as the List's */
            json_t *one = json_deep_copy(doc.list);
            json_array_append(json_object_get(one, "items"), doc.doc);
            plan_objects_add_doc(o, one, doc.file);
            json_decref(one);
        } else {
            plan_objects_add_doc(o, doc.doc, doc.file);
        }
    }
    if (dra_docs_close(d, e)) return true;
    plan_err_flatten(e);
    return false;
}

dra_store *plan_store_new(const plan_objects *o, const dra_features *f, err *e) {
    size_t n = json_array_size(o->items);
    dra_change *ch = xcalloc(n ? n : 1, sizeof *ch);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        /* PriorityClasses and PDBs in a snapshot are for making room, not the store */
        if (dra_room_reads_only(json_string_value(json_object_get(json_array_get(o->items, i), "kind")))) continue;
        ch[k].upsert = json_array_get(o->items, i);
        ch[k++].source = json_string_value(json_array_get(o->sources, i));
    }
    dra_store *st = dra_store_new(f);
    /* an empty store still needs a first snapshot to plan against */
    uint64_t gen = dra_store_apply(st, ch, k, e);
    free(ch);
    if (!gen) {
        dra_store_free(st);
        return NULL;
    }
    return st;
}

/* ---- workloads ------------------------------------------------------------------------- */

/* Fields of obj outside known[]: warned (with the nearest known one), an error when strict. */
static bool check_fields(const plan_workloads *w, const json_t *obj, const char *const *known, size_t nknown,
                         const char *source, const char *path, err *e) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        size_t best = 99, bi = 0;
        for (size_t i = 0; i < nknown; i++) {
            if (!strcmp(k, known[i])) goto next;
            size_t d = plan_suggest_distance(k, known[i]);
            if (d < best) best = d, bi = i;
        }
        char msg[512];
        if (best <= PLAN_SUGGEST_MAX) snprintf(msg, sizeof msg, "%s: %s: unknown field \"%s\" (did you mean \"%s\"?)", source, path, k, known[bi]);
        else snprintf(msg, sizeof msg, "%s: %s: unknown field \"%s\"", source, path, k);
        if (w->strict) return err_set(e, "%s (--strict)", msg), false;
        if (w->warn) w->warn(w->warn_arg, msg);
    next:;
    }
    return true;
}

/* Unknown fields of a template, gathered for one warning each or, strict, one error
 * naming them all (as the API server's "strict decoding error" does). */
typedef struct tmpl_unknowns {
    const plan_workloads *w;
    const char *source, *path;
    char msg[ERR_MSG_MAX];
    size_t len, n;
} tmpl_unknowns;

static void tmpl_unknown(void *arg, const char *field, const char *nearest) {
    tmpl_unknowns *u = arg;
    char one[600];
    if (nearest) snprintf(one, sizeof one, "unknown field \"%s\" (did you mean \"%s\"?)", field, nearest);
    else snprintf(one, sizeof one, "unknown field \"%s\"", field);
    if (!u->w->strict) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: %s: %s", u->source, u->path, one);
        if (u->w->warn) u->w->warn(u->w->warn_arg, msg);
        return;
    }
    if (u->len < sizeof u->msg - 1) {
        int k = snprintf(u->msg + u->len, sizeof u->msg - u->len, "%s%s", u->n ? ", " : "", one);
        if (k > 0) u->len += (size_t)k;
        if (u->len > sizeof u->msg - 1) u->len = sizeof u->msg - 1;
    }
    u->n++;
}

/* The template as the API server decodes a PodTemplateSpec (plan_tmpl.h): a wrong type
 * is an error always, unknown fields warnings or, strict, an error. */
static bool check_template(const plan_workloads *w, const json_t *t, const char *source, const char *path, err *e) {
    tmpl_unknowns u = {.w = w, .source = source, .path = path};
    err te;
    err_clear(&te);
    if (!plan_tmpl_check(t, tmpl_unknown, &u, &te)) return err_at(e, source, path, "%s", te.msg);
    if (u.n) return err_at(e, source, path, "%s (--strict)", u.msg);
    return true;
}

static bool parse_workload(const plan_workloads *ws, const json_t *j, size_t i, const char *source, plan_workload *w,
                           err *e) {
    char path[64];
    snprintf(path, sizeof path, "workloads[%zu]", i);
    static const char *const wk[] = {"name", "replicas", "template", "gang"};
    if (json_is_object(j) && !check_fields(ws, j, wk, ARRAY_SIZE(wk), source, path, e)) return false;
    char tpath[80];
    snprintf(tpath, sizeof tpath, "%s.template", path);
    if (json_is_object(json_object_get(j, "template")) &&
        !check_template(ws, json_object_get(j, "template"), source, tpath, e))
        return false;
    const char *name = json_string_value(json_object_get(j, "name"));
    if (!json_is_object(j) || !name || !*name) return err_at(e, source, path, "a workload needs a name");
    const json_t *r = json_object_get(j, "replicas");
    if (r && (!json_is_integer(r) || json_integer_value(r) < 0))
        return err_at(e, source, path, "workload %s: replicas must be an integer >= 0", name);
    const json_t *t = json_object_get(j, "template");
    if (!json_is_object(t) || !json_is_object(json_object_get(t, "spec")))
        return err_at(e, source, path, "workload %s: template must be a Pod template with a spec", name);
    const json_t *g = json_object_get(j, "gang");
    if (g && !json_is_boolean(g)) return err_at(e, source, path, "workload %s: gang must be true or false", name);
    w->name = xstrdup(name);
    w->replicas = r ? (long)json_integer_value(r) : 1;
    w->tmpl = json_incref((json_t *)t);
    w->gang = g && json_is_true(g);
    return true;
}

bool plan_workloads_from_docs(const json_t *docs, const char *source, plan_workloads *w, plan_objects *objects, err *e) {
    size_t i;
    json_t *d;
    bool seen = false;
    json_array_foreach(docs, i, d) {
        const json_t *wl = json_is_object(d) ? json_object_get(d, "workloads") : NULL;
        if (!wl) {
            if (objects) plan_objects_add_doc(objects, d, source);
            continue;
        }
        if (!json_is_array(wl)) return err_at(e, source, "workloads", "must be a list");
        static const char *const dk[] = {"workloads", "objects", "apiVersion", "kind", "metadata"};
        if (!check_fields(w, d, dk, ARRAY_SIZE(dk), source, "(document)", e)) return false;
        seen = true;
        size_t k;
        json_t *x;
        json_array_foreach(wl, k, x) {
            const char *nm = json_string_value(json_object_get(x, "name"));
            for (size_t m = 0; m < w->n && nm; m++)
                if (!strcmp(w->v[m].name, nm))
                    return err_at(e, source, "workloads", "workload %s appears twice", w->v[m].name);
            plan_workload pw;
            if (!parse_workload(w, x, k, source, &pw, e)) return false;
            w->v = xrealloc(w->v, (w->n + 1) * sizeof *w->v);
            w->v[w->n++] = pw;
        }
        if (objects && json_object_get(d, "objects")) plan_objects_add_doc(objects, json_object_get(d, "objects"), source);
    }
    if (!seen) return err_at(e, source, NULL, "no \"workloads\" list in the file");
    return true;
}

bool plan_workloads_load(const char *path, plan_workloads *w, plan_objects *objects, err *e) {
    json_t *docs = plan_file_docs(path, e);
    if (!docs) return false;
    bool ok = plan_workloads_from_docs(docs, path, w, objects, e);
    json_decref(docs);
    return ok;
}

void plan_workloads_free(plan_workloads *w) {
    for (size_t i = 0; i < w->n; i++) {
        free(w->v[i].name);
        json_decref(w->v[i].tmpl);
    }
    free(w->v);
    w->v = NULL;
    w->n = 0;
}
