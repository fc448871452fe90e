/* world.c — the world snapshot: loading objects (single objects, `kind: List`, typed
 * lists such as `ResourceSliceList`, JSON or multi-document YAML files, directories),
 * freezing (indexes by class name and by pool), read accessors, and the allocated
 * state (devices in use, shared IDs, consumed capacity) that allocation reads. */
#include "engine/world.h"
#include "engine/podgroup.h"
#include "engine/taintrule.h"

#include "base/strbuf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

dra_world *dra_world_new(bool apply_defaults) {
    dra_world *w = xcalloc(1, sizeof *w);
    arena_init(&w->mem, 0);
    w->names = intern_new();
    w->env = cel_env_new_dra(w->names);
    w->cel = cel_cache_new(w->env);
    w->env_any = cel_env_new_dra_any(w->names);
    w->cel_any = cel_cache_new(w->env_any);
    w->dec = (dra_decoder){.a = &w->mem, .names = w->names, .apply_defaults = apply_defaults};
    hmap_init(&w->class_by_name);
    hmap_init(&w->slices_by_pool);
    hmap_init(&w->slices_by_node);
    return w;
}

void dra_world_free(dra_world *w) {
    if (!w) return;
    cel_cache_free(w->cel);
    cel_cache_free(w->cel_any);
    cel_env_free(w->env_any);
    free(w->taint_rules.v);
    free(w->podgroups.v);
    cel_env_free(w->env);
    intern_free(w->names);
    free(w->classes.v);
    free(w->slices.v);
    free(w->claims.v);
    free(w->templates.v);
    free(w->nodes.v);
    free(w->pods.v);
    free(w->pool_next);
    free(w->node_next);
    free(w->unnamed.v);
    hmap_free(&w->slices_by_node);
    hmap_free(&w->class_by_name);
    hmap_free(&w->slices_by_pool);
    arena_free(&w->mem);
    free(w);
}

static bool add_one(dra_world *w, const json_t *obj, err *e) {
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!kind) return true;
    size_t kl = strlen(kind);
    if (!strcmp(kind, "List") || (kl > 4 && !strcmp(kind + kl - 4, "List"))) {
        const json_t *items = json_object_get(obj, "items");
        for (size_t i = 0; json_is_array(items) && i < json_array_size(items); i++) {
            json_t *it = json_array_get(items, i);
            /* Typed lists print items without kind; give them the list's element kind. */
            if (!json_object_get(it, "kind") && strcmp(kind, "List")) {
                json_t *copy = json_copy(it);
                char k[128];
                snprintf(k, sizeof k, "%.*s", (int)(kl - 4), kind);
                json_object_set_new(copy, "kind", json_string(k));
                bool ok = add_one(w, copy, e);
                json_decref(copy);
                if (!ok) return false;
            } else if (!add_one(w, it, e)) {
                return false;
            }
        }
        return true;
    }
    if (!strcmp(kind, "DeviceClass")) {
        dra_class *c = ARENA_NEW(&w->mem, dra_class);
        if (!dra_decode_class(&w->dec, obj, c, e)) return false;
        DRA_VEC_PUSH(w->classes, c);
    } else if (!strcmp(kind, "ResourceSlice")) {
        dra_slice *s = ARENA_NEW(&w->mem, dra_slice);
        if (!dra_decode_slice(&w->dec, obj, s, e)) return false;
        s->index = (uint32_t)w->slices.n;
        DRA_VEC_PUSH(w->slices, s);
    } else if (!strcmp(kind, "ResourceClaim")) {
        dra_claim *c = ARENA_NEW(&w->mem, dra_claim);
        if (!dra_decode_claim(&w->dec, obj, c, e)) return false;
        DRA_VEC_PUSH(w->claims, c);
    } else if (!strcmp(kind, "ResourceClaimTemplate")) {
        dra_claim_template *t = ARENA_NEW(&w->mem, dra_claim_template);
        if (!dra_decode_claim_template(&w->dec, obj, t, e)) return false;
        DRA_VEC_PUSH(w->templates, t);
    } else if (!strcmp(kind, "Node")) {
        dra_node *n = ARENA_NEW(&w->mem, dra_node);
        if (!dra_decode_node(&w->dec, obj, n, e)) return false;
        DRA_VEC_PUSH(w->nodes, n);
    } else if (!strcmp(kind, "Pod")) {
        dra_pod *p = ARENA_NEW(&w->mem, dra_pod);
        if (!dra_decode_pod(&w->dec, obj, p, e)) return false;
        DRA_VEC_PUSH(w->pods, p);
    } else if (!strcmp(kind, "DeviceTaintRule")) {
        if (!dra_taintrule_add(w, obj, e)) return false;
    } else if (!strcmp(kind, "PodGroup")) {
        if (!dra_podgroup_add(w, obj, e)) return false;
    }
    return true;
}

bool dra_world_add_json(dra_world *w, const json_t *obj, err *e) {
    if (json_is_array(obj)) {
        for (size_t i = 0; i < json_array_size(obj); i++)
            if (!add_one(w, json_array_get(obj, i), e)) return false;
        return true;
    }
    if (!json_is_object(obj)) return err_set(e, "expected a Kubernetes object");
    return add_one(w, obj, e);
}

static bool has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool load_file(dra_world *w, const char *path, err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_at(e, path, NULL, "cannot open file");
    strbuf sb;
    sbuf_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sbuf_add(&sb, buf, n);
    fclose(f);
    const char *p = sb.buf ? sb.buf : "";
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    json_t *docs;
    if (*p == '{' || *p == '[') {
        json_error_t je;
        docs = json_loadb(sb.buf, sb.len, 0, &je);
        if (!docs) {
            sbuf_free(&sb);
            return err_at(e, path, NULL, "JSON: %s (line %d)", je.text, je.line);
        }
    } else {
        docs = dra_yaml_load(sb.buf ? sb.buf : "", sb.len, path, e);
        if (!docs) {
            sbuf_free(&sb);
            return false;
        }
    }
    sbuf_free(&sb);
    bool ok = dra_world_add_json(w, docs, e);
    json_decref(docs);
    return ok;
}

bool dra_world_load_path(dra_world *w, const char *path, err *e) {
    struct stat st;
    if (stat(path, &st) != 0) return err_at(e, path, NULL, "no such file or directory");
    if (!S_ISDIR(st.st_mode)) return load_file(w, path, e);
    DIR *d = opendir(path);
    if (!d) return err_at(e, path, NULL, "cannot read directory");
    DRA_VEC(char *) names = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (has_suffix(de->d_name, ".yaml") || has_suffix(de->d_name, ".yml") || has_suffix(de->d_name, ".json")) {
            char *full = xmalloc(strlen(path) + strlen(de->d_name) + 2);
            sprintf(full, "%s/%s", path, de->d_name);
            DRA_VEC_PUSH(names, full);
        }
    }
    closedir(d);
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
    bool ok = true;
    for (size_t i = 0; i < names.n; i++) {
        if (ok) ok = load_file(w, names.v[i], e);
        free(names.v[i]);
    }
    free(names.v);
    return ok;
}

void dra_world_freeze(dra_world *w) {
    hmap_clear(&w->class_by_name);
    for (size_t i = 0; i < w->classes.n; i++) hmap_put(&w->class_by_name, w->classes.v[i]->name_id, i + 1);
    hmap_clear(&w->slices_by_pool);
    free(w->pool_next);
    w->pool_next = xcalloc(w->slices.n + 1, sizeof *w->pool_next);
    /* Build chains in input order: walk backwards, prepend. */
    for (size_t i = w->slices.n; i-- > 0;) {
        uint64_t head = 0;
        hmap_get(&w->slices_by_pool, w->slices.v[i]->pool_key, &head);
        w->pool_next[i] = (uint32_t)head;
        hmap_put(&w->slices_by_pool, w->slices.v[i]->pool_key, i + 1);
    }
    hmap_clear(&w->slices_by_node);
    free(w->node_next);
    w->node_next = xcalloc(w->slices.n + 1, sizeof *w->node_next);
    w->unnamed.n = 0;
    for (size_t i = w->slices.n; i-- > 0;) {
        const dra_slice *sl = w->slices.v[i];
        if (!sl->node_name || !*sl->node_name) continue;
        uint32_t id = intern_cstr(w->names, sl->node_name);
        uint64_t head = 0;
        hmap_get(&w->slices_by_node, id, &head);
        w->node_next[i] = (uint32_t)head;
        hmap_put(&w->slices_by_node, id, i + 1);
    }
    for (size_t i = 0; i < w->slices.n; i++)
        if (!w->slices.v[i]->node_name || !*w->slices.v[i]->node_name) DRA_VEC_PUSH(w->unnamed, (uint32_t)i);
    dra_taintrule_apply(w);
    w->frozen = true;
}

const dra_class *dra_world_find_class(const dra_world *w, const char *name) {
    uint32_t id = intern_get(w->names, name, strlen(name));
    uint64_t v;
    if (!id || !hmap_get(&w->class_by_name, id, &v)) return NULL;
    return w->classes.v[v - 1];
}

size_t dra_world_nclaims(const dra_world *w) { return w->claims.n; }
const dra_claim *dra_world_claim(const dra_world *w, size_t i) { return w->claims.v[i]; }
size_t dra_world_nnodes(const dra_world *w) { return w->nodes.n; }
const dra_node *dra_world_node(const dra_world *w, size_t i) { return w->nodes.v[i]; }
size_t dra_world_ntemplates(const dra_world *w) { return w->templates.n; }
const dra_claim_template *dra_world_template(const dra_world *w, size_t i) { return w->templates.v[i]; }
size_t dra_world_npods(const dra_world *w) { return w->pods.n; }
const dra_pod *dra_world_pod(const dra_world *w, size_t i) { return w->pods.v[i]; }

static bool ns_eq(const char *a, const char *b) {
    if (!a || !*a) a = "default";
    if (!b || !*b) b = "default";
    return !strcmp(a, b);
}

const dra_claim *dra_world_find_claim(const dra_world *w, const char *ns, const char *name) {
    for (size_t i = 0; i < w->claims.n; i++)
        if (!strcmp(w->claims.v[i]->name, name) && ns_eq(w->claims.v[i]->ns, ns)) return w->claims.v[i];
    return NULL;
}

const dra_node *dra_world_find_node(const dra_world *w, const char *name) {
    for (size_t i = 0; i < w->nodes.n; i++)
        if (!strcmp(w->nodes.v[i]->name, name)) return w->nodes.v[i];
    return NULL;
}

const dra_claim_template *dra_world_find_template(const dra_world *w, const char *ns, const char *name) {
    for (size_t i = 0; i < w->templates.n; i++)
        if (!strcmp(w->templates.v[i]->name, name) && ns_eq(w->templates.v[i]->ns, ns)) return w->templates.v[i];
    return NULL;
}

const dra_claim *dra_world_claim_from_template(dra_world *w, const dra_claim_template *t, const char *ns,
                                               const char *name) {
    dra_claim *c = ARENA_NEW(&w->mem, dra_claim);
    *c = t->spec;
    c->ns = ns ? arena_strdup(&w->mem, ns) : NULL;
    c->name = arena_strdup(&w->mem, name);
    c->allocated = false;
    c->from_template = true;
    return c;
}

const dra_node *dra_world_add_node(dra_world *w, const char *name, const dra_label *labels, size_t n) {
    dra_node *nd = ARENA_NEW(&w->mem, dra_node);
    nd->name = arena_strdup(&w->mem, name);
    nd->labels = ARENA_NEWN(&w->mem, dra_label, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        nd->labels[i].key = arena_strdup(&w->mem, labels[i].key);
        nd->labels[i].value = arena_strdup(&w->mem, labels[i].value);
    }
    nd->nlabels = (uint32_t)n;
    DRA_VEC_PUSH(w->nodes, nd);
    return nd;
}

/* ---- allocated state ---------------------------------------------------------------- */

dra_allocated *dra_allocated_new(dra_world *w) {
    dra_allocated *s = xcalloc(1, sizeof *s);
    s->w = w;
    hmap_init(&s->devices);
    hmap_init(&s->shared);
    hmap_init(&s->capacity);
    return s;
}

void dra_allocated_free(dra_allocated *s) {
    if (!s) return;
    hmap_free(&s->devices);
    hmap_free(&s->shared);
    hmap_free(&s->capacity);
    for (size_t i = 0; i < s->caps.n; i++) free(s->caps.v[i]);
    free(s->caps.v);
    free(s);
}

/* "driver/pool/device[/shareID]": the driver has no '/', a device name has none, the
 * pool may contain '/'. With share, the last component is the share ID. */
static bool device_key_of(dra_allocated *s, const char *id, bool with_share, uint64_t *key, err *e) {
    const char *end = id + strlen(id);
    if (with_share) {
        const char *sl = strrchr(id, '/');
        if (!sl) return err_set(e, "invalid shared device ID %s", id);
        end = sl;
    }
    const char *first = strchr(id, '/');
    const char *last = NULL;
    for (const char *p = id; p < end; p++)
        if (*p == '/') last = p;
    if (!first || !last || first == last) return err_set(e, "invalid device ID %s: want driver/pool/device", id);
    uint32_t pk = intern_put(s->w->names, id, (size_t)(last - id));
    uint32_t dn = intern_put(s->w->names, last + 1, (size_t)(end - last - 1));
    *key = dra_device_key(pk, dn);
    return true;
}

bool dra_allocated_add_device(dra_allocated *s, const char *id, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, false, &k, e)) return false;
    hmap_put(&s->devices, k, 1);
    return true;
}

bool dra_allocated_add_shared(dra_allocated *s, const char *id, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, true, &k, e)) return false;
    bool ins;
    uint64_t *v = hmap_upsert(&s->shared, k, 0, &ins);
    (*v)++;
    return true;
}

static bool add_capacity_key(dra_allocated *s, uint64_t k, const char *cap, const quantity *q) {
    uint64_t idx;
    dra_alloc_caps *c;
    if (hmap_get(&s->capacity, k, &idx)) {
        c = s->caps.v[idx - 1];
    } else {
        c = xcalloc(1, sizeof *c);
        DRA_VEC_PUSH(s->caps, c);
        hmap_put(&s->capacity, k, s->caps.n);
    }
    /* Keyed by the capacity name as the device's capacity map writes it. */
    uint32_t id = intern_cstr(s->w->names, cap);
    for (uint32_t i = 0; i < c->n; i++)
        if (c->id[i] == id) return quantity_add(&c->value[i], q, &c->value[i]);
    if (c->n == ARRAY_SIZE(c->id)) return false;
    c->id[c->n] = id;
    c->value[c->n] = *q;
    c->n++;
    return true;
}

bool dra_allocated_add_capacity(dra_allocated *s, const char *id, const char *cap, const quantity *q, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, false, &k, e)) return false;
    if (!add_capacity_key(s, k, cap, q)) return err_set(e, "too many capacities for device %s", id);
    return true;
}

void dra_allocated_add_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity) {
    if (!c->allocated) return;
    for (uint32_t i = 0; i < c->nalloc_results; i++) {
        const dra_device_result *r = &c->alloc_results[i];
        if (r->admin_access == 1) continue;
        /* keys come from the intern table only: the world's arena stays untouched, so
         * allocated states can be built while other threads read the world */
        char id[1024];
        snprintf(id, sizeof id, "%s/%s/%s", r->driver, r->pool, r->device);
        uint64_t k;
        if (!device_key_of(s, id, false, &k, NULL)) continue;
        if (consumable_capacity && r->share_id) {
            bool ins;
            (*hmap_upsert(&s->shared, k, 0, &ins))++;
            for (uint32_t j = 0; j < r->nconsumed; j++) add_capacity_key(s, k, r->consumed[j].key, &r->consumed[j].value);
        } else {
            hmap_put(&s->devices, k, 1);
        }
    }
}

void dra_allocated_add_result(dra_allocated *s, const dra_alloc_result *r, bool consumable_capacity) {
    dra_claim c = {.allocated = true, .alloc_results = r->results, .nalloc_results = r->nresults};
    dra_allocated_add_claim(s, &c, consumable_capacity);
}
