/* world.c — the world snapshot: loading objects (single objects, `kind: List`, typed
 * lists such as `ResourceSliceList`, JSON or multi-document YAML files, directories),
 * freezing (indexes by class name and by pool), read accessors, and the allocated
 * state (devices in use, shared IDs, consumed capacity) that allocation reads. */
#include "engine/world.h"
#include "engine/extres.h"
#include "engine/podgroup.h"
#include "engine/taintrule.h"
#include "engine/validate.h"

#include "base/hash.h"
#include "base/strbuf.h"

#include <assert.h>
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

dra_world *dra__world_new_in(dra_catalog *cat, bool apply_defaults) {
    dra_world *w = xcalloc(1, sizeof *w);
    arena_init(&w->mem, 0);
    arena_init(&w->cli_mem, 4096);
    w->cat = dra__catalog_retain(cat);
    w->names = cat->names;
    w->env = cat->env;
    w->cel = cat->cel;
    w->env_any = cat->env_any;
    w->cel_any = cat->cel_any;
    w->dec = (dra_decoder){.a = &w->mem, .cat = cat, .apply_defaults = apply_defaults, .input = &w->input};
    hmap_init(&w->class_by_name);
    pmap_init(&w->slices_by_pool, &dra__slice_list_ops);
    pmap_init(&w->slices_by_node, &dra__slice_list_ops);
    pthread_mutex_init(&w->all_lock, NULL);
    dra_name_index *idx[] = {&w->claim_idx, &w->template_idx, &w->node_idx, &w->pod_idx};
    for (size_t i = 0; i < ARRAY_SIZE(idx); i++) hmap_init(&idx[i]->first);
    return w;
}

void dra_world_set_input(dra_world *w, const dra_input *in) { w->input = in ? *in : (dra_input){0}; }

dra_world *dra_world_new(bool apply_defaults) {
    dra_catalog *cat = dra__catalog_new();
    dra_world *w = dra__world_new_in(cat, apply_defaults);
    dra__catalog_release(cat);
    return w;
}

void dra_world_free(dra_world *w) {
    if (!w) return;
    if (!w->vectors_borrowed) {
        free(w->taint_rules.v);
        free(w->podgroups.v);
        free(w->classes.v);
        free(w->pods.v);
        hmap_free(&w->class_by_name);
    }
    free(w->slices.v);
    free(w->claims.v);
    free(w->templates.v);
    free(w->nodes.v);
    pmap_free(&w->slices_by_node);
    pmap_free(&w->slices_by_pool);
    dra__slice_list_ops.release(w->unnamed);
    free(w->all_slices);
    pthread_mutex_destroy(&w->all_lock);
    dra_name_index *idx[] = {&w->claim_idx, &w->template_idx, &w->node_idx, &w->pod_idx};
    for (size_t i = 0; i < ARRAY_SIZE(idx); i++) {
        hmap_free(&idx[i]->first);
        free(idx[i]->next);
    }
    for (size_t i = 0; i < w->seen_keys.n; i++) {
        free(w->seen_keys.v[i].key);
        free(w->seen_keys.v[i].source);
    }
    free(w->seen_keys.v);
    hmap_free(&w->seen);
    arena_free(&w->mem);
    arena_free(&w->cli_mem);
    dra__catalog_release(w->cat);
    free(w);
}

static const char *const kind_names[DRA_KIND_COUNT] = {
    [DRA_KIND_CLASS] = "DeviceClass",     [DRA_KIND_SLICE] = "ResourceSlice",
    [DRA_KIND_CLAIM] = "ResourceClaim",   [DRA_KIND_TEMPLATE] = "ResourceClaimTemplate",
    [DRA_KIND_NODE] = "Node",             [DRA_KIND_POD] = "Pod",
    [DRA_KIND_TAINT_RULE] = "DeviceTaintRule", [DRA_KIND_POD_GROUP] = "PodGroup",
};

dra_kind dra__kind_of(const char *kind) {
    for (int k = 1; kind && k < DRA_KIND_COUNT; k++)
        if (!strcmp(kind, kind_names[k])) return (dra_kind)k;
    return DRA_KIND_NONE;
}

const char *dra__kind_name(dra_kind k) { return k > 0 && k < DRA_KIND_COUNT ? kind_names[k] : "?"; }

bool dra__kind_cluster_scoped(dra_kind k) {
    return k == DRA_KIND_CLASS || k == DRA_KIND_SLICE || k == DRA_KIND_NODE || k == DRA_KIND_TAINT_RULE;
}

char *dra__object_key(dra_kind k, const char *ns, const char *name) {
    ns = dra__kind_cluster_scoped(k) ? "" : dra_ns(ns);
    size_t n = strlen(dra__kind_name(k)) + strlen(ns) + strlen(name) + 3;
    char *key = xmalloc(n);
    snprintf(key, n, "%s/%s/%s", dra__kind_name(k), ns, name);
    return key;
}

bool dra__decode_object(const dra_decoder *d, dra_kind k, const json_t *obj, void **out, err *e) {
    *out = NULL;
    switch (k) {
    case DRA_KIND_CLASS: {
        dra_class *c = ARENA_NEW(d->a, dra_class);
        if (!dra__decode_class(d, obj, c, e)) return false;
        *out = c;
        return true;
    }
    case DRA_KIND_SLICE: {
        dra_slice *s = ARENA_NEW(d->a, dra_slice);
        if (!dra__decode_slice(d, obj, s, e)) return false;
        *out = s;
        return true;
    }
    case DRA_KIND_CLAIM: {
        dra_claim *c = ARENA_NEW(d->a, dra_claim);
        if (!dra__decode_claim(d, obj, c, e)) return false;
        *out = c;
        return true;
    }
    case DRA_KIND_TEMPLATE: {
        dra_claim_template *t = ARENA_NEW(d->a, dra_claim_template);
        if (!dra__decode_claim_template(d, obj, t, e)) return false;
        *out = t;
        return true;
    }
    case DRA_KIND_NODE: {
        dra_node *n = ARENA_NEW(d->a, dra_node);
        if (!dra__decode_node(d, obj, n, e)) return false;
        *out = n;
        return true;
    }
    case DRA_KIND_POD: {
        dra_pod *p = ARENA_NEW(d->a, dra_pod);
        if (!dra__decode_pod(d, obj, p, e)) return false;
        *out = p;
        return true;
    }
    default:
        return true;
    }
}

void dra__world_push(dra_world *w, dra_kind k, void *obj) {
    switch (k) {
    case DRA_KIND_CLASS: DRA_VEC_PUSH(w->classes, (dra_class *)obj); break;
    case DRA_KIND_SLICE: {
        dra_slice *s = obj;
        /* a borrowed slice keeps the index (a stable-sort tie-break) its owner gave it */
        if (!w->borrowed) s->index = (uint32_t)w->slices.n;
        DRA_VEC_PUSH(w->slices, s);
        break;
    }
    case DRA_KIND_CLAIM: DRA_VEC_PUSH(w->claims, (dra_claim *)obj); break;
    case DRA_KIND_TEMPLATE: DRA_VEC_PUSH(w->templates, (dra_claim_template *)obj); break;
    case DRA_KIND_NODE: DRA_VEC_PUSH(w->nodes, (dra_node *)obj); break;
    case DRA_KIND_POD: DRA_VEC_PUSH(w->pods, (dra_pod *)obj); break;
    default: assert(!"dra__world_push: kind decoded per world");
    }
}

/* 1: the same object was loaded before (skip it); 0: new; -1: a different object
 * under the same kind/namespace/name (e names both files). Cluster-scoped kinds
 * ignore a namespace; namespaced ones default it, as kubectl does. */
static int seen_before(dra_world *w, dra_kind k, const json_t *obj, err *e) {
    const json_t *m = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(m, "name"));
    if (!name) return 0;   /* the decoder says what is missing */
    const char *ns = json_string_value(json_object_get(m, "namespace"));
    bool cluster = dra__kind_cluster_scoped(k);
    char *key = dra__object_key(k, ns, name);
    char *canon = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
    uint64_t h = canon ? hash_bytes(canon, strlen(canon)) : 0;
    free(canon);
    uint64_t kh = hash_bytes(key, strlen(key)), idx;
    for (uint64_t probe = kh; hmap_get(&w->seen, probe, &idx); probe = hash_u64(probe)) {
        struct dra_seen *s = &w->seen_keys.v[idx - 1];
        if (strcmp(s->key, key)) continue;   /* a hash collision: the next probe */
        int r = s->hash == h ? 1 : -1;
        if (r < 0)
            err_set(e, "%s %s%s%s is given twice with different contents: in %s and in %s", dra__kind_name(k),
                    cluster ? "" : dra_ns(ns), cluster ? "" : "/", name,
                    s->source ? s->source : "(input)", w->source ? w->source : "(input)");
        free(key);
        return r;
    }
    uint64_t probe = kh;
    while (hmap_get(&w->seen, probe, &idx)) probe = hash_u64(probe);
    struct dra_seen ns_ = {.key = key, .hash = h, .source = w->source ? xstrdup(w->source) : NULL};
    DRA_VEC_PUSH(w->seen_keys, ns_);
    hmap_put(&w->seen, probe, w->seen_keys.n);
    return 0;
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
                /* the list's version is its items' (a v1beta1 list holds v1beta1 items) */
                if (!json_object_get(copy, "apiVersion") && json_object_get(obj, "apiVersion"))
                    json_object_set(copy, "apiVersion", json_object_get(obj, "apiVersion"));
                bool ok = add_one(w, copy, e);
                json_decref(copy);
                if (!ok) return false;
            } else if (!add_one(w, it, e)) {
                return false;
            }
        }
        return true;
    }
    dra_kind k = dra__kind_of(kind);
    if (k && w->dec.apply_defaults && !w->borrowed) {
        int seen = seen_before(w, k, obj, e);
        if (seen < 0) return false;
        if (seen) return true;
    }
    if (k == DRA_KIND_TAINT_RULE) return dra__taintrule_add(w, obj, e);
    if (k == DRA_KIND_POD_GROUP) return dra__podgroup_add(w, obj, e);
    if (k == DRA_KIND_NONE) return true;
    void *o;
    if (!dra__decode_object(&w->dec, k, obj, &o, e)) return false;
    dra__world_push(w, k, o);
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

bool dra__read_input(const char *path, strbuf *sb, err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_at(e, path, NULL, "cannot open file");
    sbuf_init(sb);
    /* a regular file is read in one piece into a buffer of its size: a fleet's 166 MB
     * grown 64 KiB at a time was copied over again at every doubling */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (size_t)st.st_size <= DRA_INPUT_MAX_BYTES) {
        sb->cap = (size_t)st.st_size + 1;
        sb->buf = xmalloc(sb->cap);
        sb->len = fread(sb->buf, 1, (size_t)st.st_size, f);
        sb->buf[sb->len] = '\0';
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        sbuf_add(sb, buf, n);
        if (sb->len > DRA_INPUT_MAX_BYTES) {   /* -f /dev/zero, a file inside a directory too */
            fclose(f);
            sbuf_free(sb);
            return err_at(e, path, NULL, "more than %zu MiB of input, refused", DRA_INPUT_MAX_BYTES >> 20);
        }
    }
    fclose(f);
    return true;
}

bool dra__input_is_json(const strbuf *sb) {
    const char *p = sb->buf ? sb->buf : "";
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return *p == '{' || *p == '[';
}

/* The documents of one file: a JSON value, or a YAML stream as an array. */
static json_t *load_file_docs(const char *path, const dra_input *in, err *e) {
    strbuf sb;
    if (!dra__read_input(path, &sb, e)) return NULL;
    json_t *docs;
    if (dra__input_is_json(&sb)) {
        docs = dra_json_load(sb.buf, sb.len, path, in, e);
    } else {
        docs = dra__yaml_load_in(sb.buf ? sb.buf : "", sb.len, path, in, e);
    }
    sbuf_free(&sb);
    if (docs && !dra__input_check_types(docs, path, e)) {
        json_decref(docs);
        return NULL;
    }
    return docs;
}

bool dra__path_files(const char *path, bool (*fn)(void *arg, const char *file, err *e), void *arg, err *e) {
    struct stat st;
    if (stat(path, &st) != 0) return err_at(e, path, NULL, "no such file or directory");
    if (!S_ISDIR(st.st_mode)) return fn(arg, path, e);
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
        if (ok) ok = fn(arg, names.v[i], e);
        free(names.v[i]);
    }
    free(names.v);
    return ok;
}

typedef struct docs_call {
    const dra_input *in;
    bool (*fn)(void *arg, const char *file, json_t *docs, err *e);
    void *arg;
} docs_call;

static bool docs_of_file(void *arg, const char *file, err *e) {
    docs_call *dc = arg;
    json_t *docs = load_file_docs(file, dc->in, e);
    bool ok = docs && dc->fn(dc->arg, file, docs, e);
    json_decref(docs);
    return ok;
}

bool dra__path_docs(const char *path, const dra_input *in, bool (*fn)(void *arg, const char *file, json_t *docs, err *e),
                    void *arg, err *e) {
    docs_call dc = {in, fn, arg};
    return dra__path_files(path, docs_of_file, &dc, e);
}

json_t *dra_yaml_parse(const char *text, size_t len, const char *source, err *e) {
    return dra__yaml_load(text, len, source, e);
}

static bool add_docs(void *arg, const char *file, json_t *docs, err *e) {
    dra_world *w = arg;
    w->source = file;
    bool ok = dra_world_add_json(w, docs, e);
    w->source = NULL;
    return ok;
}

bool dra_world_load_path(dra_world *w, const char *path, err *e) { return dra__path_docs(path, &w->input, add_docs, w, e); }

/* ---- namespace/name indexes ------------------------------------------------------------- */

static const char *field_str(const void *obj, size_t off) {
    return off == SIZE_MAX ? NULL : *(const char *const *)((const char *)obj + off);
}

static uint64_t name_hash(const char *ns, const char *name) {
    ns = dra_ns(ns);
    size_t a = strlen(ns), b = strlen(name);
    char stack[256];
    char *buf = a + b + 1 <= sizeof stack ? stack : xmalloc(a + b + 1);
    memcpy(buf, ns, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b);
    uint64_t h = hash_bytes(buf, a + b + 1);
    if (buf != stack) free(buf);
    return h;
}

/* Objects in input order; a chain lists the ones whose key hashes alike, first
 * loaded first, so a lookup finds what the former linear scan found. */
static void index_names(dra_name_index *ix, const void *const *objs, size_t n, size_t ns_off, size_t name_off) {
    hmap_clear(&ix->first);
    free(ix->next);
    ix->next = xcalloc(n + 1, sizeof *ix->next);
    for (size_t i = n; i-- > 0;) {
        uint64_t h = name_hash(field_str(objs[i], ns_off), field_str(objs[i], name_off));
        uint64_t head = 0;
        hmap_get(&ix->first, h, &head);
        ix->next[i] = (uint32_t)head;
        hmap_put(&ix->first, h, i + 1);
    }
}

static bool ns_eq(const char *a, const char *b) {
    a = dra_ns(a);
    b = dra_ns(b);
    return !strcmp(a, b);
}

/* Index+1 of the object, 0 when absent. Before the first freeze (objects added
 * but not indexed yet) the scan is linear. */
static size_t lookup_name(const dra_world *w, const dra_name_index *ix, const void *const *objs, size_t n,
                          size_t ns_off, size_t name_off, const char *ns, const char *name) {
    if (!w->frozen || !ix->next) {
        for (size_t i = 0; i < n; i++)
            if (!strcmp(field_str(objs[i], name_off), name) &&
                (ns_off == SIZE_MAX || ns_eq(field_str(objs[i], ns_off), ns)))
                return i + 1;
        return 0;
    }
    uint64_t head = 0;
    if (!hmap_get(&ix->first, name_hash(ns_off == SIZE_MAX ? NULL : ns, name), &head)) return 0;
    for (uint32_t i = (uint32_t)head; i; i = ix->next[i - 1])
        if (i - 1 < n && !strcmp(field_str(objs[i - 1], name_off), name) &&
            (ns_off == SIZE_MAX || ns_eq(field_str(objs[i - 1], ns_off), ns)))
            return i;
    return 0;
}

/* ---- slice indexes ------------------------------------------------------------------ */

static dra_slice_list *slist_new(uint32_t n) {
    dra_slice_list *l = xmalloc(sizeof *l + (n ? n : 1) * sizeof *l->v);
    atomic_init(&l->refs, 1);
    l->n = 0;
    return l;
}

static void slist_retain(void *p) {
    if (p) atomic_fetch_add_explicit(&((dra_slice_list *)p)->refs, 1, memory_order_relaxed);
}

static void slist_release(void *p) {
    dra_slice_list *l = p;
    if (l && atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) == 1) free(l);
}

const pmap_ops dra__slice_list_ops = {slist_retain, slist_release};

/* l with s in its place by index (NULL l: empty). */
static dra_slice_list *slist_with(const dra_slice_list *l, const dra_slice *s) {
    uint32_t n = l ? l->n : 0, i = n;
    while (i > 0 && l->v[i - 1]->index > s->index) i--;
    dra_slice_list *o = slist_new(n + 1);
    if (i) memcpy(o->v, l->v, i * sizeof *o->v);
    o->v[i] = s;
    if (n > i) memcpy(o->v + i + 1, l->v + i, (n - i) * sizeof *o->v);
    o->n = n + 1;
    return o;
}

/* l without the slice of s's index; NULL when nothing is left. */
static dra_slice_list *slist_without(const dra_slice_list *l, const dra_slice *s) {
    dra_slice_list *o = slist_new(l->n);
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i]->index != s->index) o->v[o->n++] = l->v[i];
    if (!o->n) {
        free(o);
        return NULL;
    }
    return o;
}

static uint32_t slice_node_id(const dra_world *w, const dra_slice *s) {
    if (!s->node_name || !*s->node_name) return 0;
    (void)w;
    return s->node_id;   /* interned when the slice was decoded */
}

const dra_slice_list *dra__world_node_slices(const dra_world *w, uint32_t node_id) {
    return node_id ? pmap_get(&w->slices_by_node, hash_u64(node_id), NULL, NULL) : NULL;
}

const dra_slice_list *dra__world_pool_slices(const dra_world *w, uint32_t pool_key) {
    return pmap_get(&w->slices_by_pool, hash_u64(pool_key), NULL, NULL);
}

/* One index's list for key h, with s added (add) or removed. */
static void index_edit(pmap *m, uint64_t h, const dra_slice *s, bool add) {
    const dra_slice_list *l = pmap_get(m, h, NULL, NULL);
    dra_slice_list *o = add ? slist_with(l, s) : l ? slist_without(l, s) : NULL;
    if (o) pmap_put(m, h, o, NULL, NULL);
    else if (l) pmap_del(m, h, NULL, NULL);
}

static void slice_edit(dra_world *w, const dra_slice *s, bool add) {
    index_edit(&w->slices_by_pool, hash_u64(s->pool_key), s, add);
    uint32_t nid = slice_node_id(w, s);
    if (nid) {
        index_edit(&w->slices_by_node, hash_u64(nid), s, add);
        return;
    }
    dra_slice_list *o = add ? slist_with(w->unnamed, s) : w->unnamed ? slist_without(w->unnamed, s) : NULL;
    slist_release(w->unnamed);
    w->unnamed = o;
}

void dra__world_slice_add(dra_world *w, const dra_slice *s) { slice_edit(w, s, true); }
void dra__world_slice_remove(dra_world *w, const dra_slice *s) { slice_edit(w, s, false); }

/* Groups v[0..n) (arrival order) by a 64-bit key into lists put into m; key 0 is
 * left out. */
static void index_group(pmap *m, const dra_slice *const *v, size_t n, const uint64_t *keys) {
    hmap at;                 /* key → index+1 into lists */
    hmap_init(&at);
    DRA_VEC(dra_slice_list *) lists = {0};
    uint32_t *count = xcalloc(n + 1, sizeof *count);
    uint32_t *which = xmalloc((n + 1) * sizeof *which);
    for (size_t i = 0; i < n; i++) {
        if (!keys[i]) continue;
        bool ins;
        uint64_t *slot = hmap_upsert(&at, keys[i], 0, &ins);
        if (ins) {
            *slot = lists.n + 1;
            DRA_VEC_PUSH(lists, NULL);
        }
        which[i] = (uint32_t)(*slot - 1);
        count[which[i]]++;
    }
    for (size_t g = 0; g < lists.n; g++) lists.v[g] = slist_new(count[g]);
    for (size_t i = 0; i < n; i++)
        if (keys[i]) lists.v[which[i]]->v[lists.v[which[i]]->n++] = v[i];
    uint64_t k, g;
    for (size_t it = 0; hmap_next(&at, &it, &k, &g);) pmap_put(m, hash_u64(k), lists.v[g - 1], NULL, NULL);
    free(lists.v);
    free(count);
    free(which);
    hmap_free(&at);
}

void dra__world_index_slices(dra_world *w, const dra_slice *const *v, size_t n) {
    pmap_free(&w->slices_by_node);
    pmap_free(&w->slices_by_pool);
    slist_release(w->unnamed);
    w->unnamed = NULL;
    uint64_t *keys = xmalloc((n + 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) keys[i] = v[i]->pool_key;
    index_group(&w->slices_by_pool, v, n, keys);
    size_t nun = 0;
    for (size_t i = 0; i < n; i++) {
        keys[i] = slice_node_id(w, v[i]);
        nun += !keys[i];
    }
    index_group(&w->slices_by_node, v, n, keys);
    if (nun) {
        w->unnamed = slist_new((uint32_t)nun);
        for (size_t i = 0; i < n; i++)
            if (!keys[i]) w->unnamed->v[w->unnamed->n++] = v[i];
    }
    free(keys);
}

static int cmp_slice_index(const void *a, const void *b) {
    uint32_t x = (*(const dra_slice *const *)a)->index, y = (*(const dra_slice *const *)b)->index;
    return x < y ? -1 : x > y;
}

const dra_slice *const *dra__world_all_slices(dra_world *w, size_t *n) {
    if (!w->borrowed || w->slices.n) {
        *n = w->slices.n;
        return (const dra_slice *const *)w->slices.v;
    }
    pthread_mutex_lock(&w->all_lock);
    if (!w->all_done) {
        /* every slice is in exactly one pool's list */
        DRA_VEC(const dra_slice *) all = {0};
        pmap_iter it;
        pmap_iter_init(&it, &w->slices_by_pool);
        void *p;
        while (pmap_next(&it, NULL, &p)) {
            const dra_slice_list *l = p;
            for (uint32_t i = 0; i < l->n; i++) DRA_VEC_PUSH(all, l->v[i]);
        }
        if (all.n) qsort(all.v, all.n, sizeof *all.v, cmp_slice_index);
        w->all_slices = all.v;
        w->nall_slices = all.n;
        w->all_done = true;
    }
    pthread_mutex_unlock(&w->all_lock);
    *n = w->nall_slices;
    return w->all_slices;
}

void dra_world_freeze(dra_world *w) {
    hmap_clear(&w->class_by_name);
    for (size_t i = 0; i < w->classes.n; i++) hmap_put(&w->class_by_name, w->classes.v[i]->name_id, i + 1);
    if (w->borrowed && w->taint_rules.n && !w->taint_rules_done) {
        /* DeviceTaintRules merge taints into devices; borrowed slices are shared with
         * other snapshots, so this world's rules go into copies (their cost is paid
         * only while some rule exists) */
        for (size_t i = 0; i < w->slices.n; i++) {
            dra_slice *c = arena_memdup(&w->mem, w->slices.v[i], sizeof *c);
            if (c->ndevices) c->devices = arena_memdup(&w->mem, c->devices, c->ndevices * sizeof *c->devices);
            w->slices.v[i] = c;
        }
    }
    dra__taintrule_apply(w);
    dra__world_index_slices(w, (const dra_slice *const *)w->slices.v, w->slices.n);
    index_names(&w->claim_idx, (const void *const *)w->claims.v, w->claims.n, offsetof(dra_claim, ns),
                offsetof(dra_claim, name));
    index_names(&w->template_idx, (const void *const *)w->templates.v, w->templates.n,
                offsetof(dra_claim_template, ns), offsetof(dra_claim_template, name));
    index_names(&w->node_idx, (const void *const *)w->nodes.v, w->nodes.n, SIZE_MAX, offsetof(dra_node, name));
    index_names(&w->pod_idx, (const void *const *)w->pods.v, w->pods.n, offsetof(dra_pod, ns), offsetof(dra_pod, name));
    w->frozen = true;
}

const dra_class *dra__world_find_class(const dra_world *w, const char *name) {
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

const dra_claim *dra_world_find_claim(const dra_world *w, const char *ns, const char *name) {
    if (w->find) return w->find(w->find_arg, DRA_KIND_CLAIM, ns, name);
    size_t i = lookup_name(w, &w->claim_idx, (const void *const *)w->claims.v, w->claims.n, offsetof(dra_claim, ns),
                           offsetof(dra_claim, name), ns, name);
    return i ? w->claims.v[i - 1] : NULL;
}

const dra_node *dra_world_find_node(const dra_world *w, const char *name) {
    if (w->find) return w->find(w->find_arg, DRA_KIND_NODE, NULL, name);
    size_t i = lookup_name(w, &w->node_idx, (const void *const *)w->nodes.v, w->nodes.n, SIZE_MAX,
                           offsetof(dra_node, name), NULL, name);
    return i ? w->nodes.v[i - 1] : NULL;
}

const dra_pod *dra__world_find_pod(const dra_world *w, const char *ns, const char *name) {
    if (w->find) return w->find(w->find_arg, DRA_KIND_POD, ns, name);
    size_t i = lookup_name(w, &w->pod_idx, (const void *const *)w->pods.v, w->pods.n, offsetof(dra_pod, ns),
                           offsetof(dra_pod, name), ns, name);
    return i ? w->pods.v[i - 1] : NULL;
}

const dra_claim_template *dra_world_find_template(const dra_world *w, const char *ns, const char *name) {
    if (w->find) return w->find(w->find_arg, DRA_KIND_TEMPLATE, ns, name);
    size_t i = lookup_name(w, &w->template_idx, (const void *const *)w->templates.v, w->templates.n,
                           offsetof(dra_claim_template, ns), offsetof(dra_claim_template, name), ns, name);
    return i ? w->templates.v[i - 1] : NULL;
}

typedef struct ns_walk {
    const char *name, *skip;
    DRA_VEC(const char *) found;
} ns_walk;

static void ns_walk_one(void *ctx, const char *ns, const char *name) {
    ns_walk *nw = ctx;
    if (name && !strcmp(name, nw->name) && strcmp(dra_ns(ns), nw->skip)) DRA_VEC_PUSH(nw->found, dra_ns(ns));
}

static void ns_walk_claim(void *ctx, const void *obj) {
    const dra_claim *c = obj;
    ns_walk_one(ctx, c->ns, c->name);
}

static void ns_walk_template(void *ctx, const void *obj) {
    const dra_claim_template *t = obj;
    ns_walk_one(ctx, t->ns, t->name);
}

/* The namespaces other than ns (defaulted) holding a ResourceClaim or template named
 * name: how many, the first max of them in name order in out[]. A walk over every
 * object of the kind: for the text of a failure only. */
static size_t namespaces_with(const dra_world *w, dra_kind kind, const char *name, const char *ns, const char **out,
                              size_t max) {
    if (kind != DRA_KIND_CLAIM && kind != DRA_KIND_TEMPLATE) return 0;
    ns_walk nw = {.name = name ? name : "", .skip = dra_ns(ns)};
    void (*fn)(void *, const void *) = kind == DRA_KIND_CLAIM ? ns_walk_claim : ns_walk_template;
    if (w->each) {
        w->each(w->find_arg, kind, fn, &nw);
    } else if (kind == DRA_KIND_CLAIM) {
        for (size_t i = 0; i < w->claims.n; i++) fn(&nw, w->claims.v[i]);
    } else {
        for (size_t i = 0; i < w->templates.n; i++) fn(&nw, w->templates.v[i]);
    }
    if (nw.found.n) qsort(nw.found.v, nw.found.n, sizeof *nw.found.v, cmp_str);
    for (size_t i = 0; i < nw.found.n && i < max; i++) out[i] = nw.found.v[i];
    size_t n = nw.found.n;
    free(nw.found.v);
    return n;
}

/* Kubernetes' NotFound text for the object looked up, then the namespace searched and
 * where one of that name does exist — the usual mistake being a template created in
 * another namespace than the pod's:
 *   resourceclaimtemplate.resource.k8s.io "gpu" not found in namespace ml; a
 *   ResourceClaimTemplate named gpu exists in namespace team-a */
const char *dra__world_not_found(const dra_world *w, arena *a, dra_kind k, const char *ns, const char *name) {
    enum { SHOW = 3 };
    const char *where[SHOW];
    size_t n = namespaces_with(w, k, name, ns, where, SHOW);
    const bool tmpl = k == DRA_KIND_TEMPLATE;
    const char *t = arena_printf(a, "%s.resource.k8s.io \"%s\" not found in namespace %s",
                                 tmpl ? "resourceclaimtemplate" : "resourceclaim", name, dra_ns(ns));
    if (!n) return t;
    t = arena_printf(a, "%s; a %s named %s exists in namespace%s ", t, tmpl ? "ResourceClaimTemplate" : "ResourceClaim",
                     name, n > 1 ? "s" : "");
    for (size_t i = 0; i < n && i < SHOW; i++)
        t = arena_printf(a, "%s%s%s", t, i == 0 ? "" : (i + 1 == n && n <= SHOW) ? " and " : ", ", where[i]);
    return n > SHOW ? arena_printf(a, "%s and %zu more", t, n - SHOW) : t;
}

dra_claim *dra__claim_instantiate(arena *a, const dra_claim_template *t, const char *ns, const char *name) {
    dra_claim *c = ARENA_NEW(a, dra_claim);
    *c = t->spec;
    c->ns = ns ? arena_strdup(a, ns) : NULL;
    c->name = arena_strdup(a, name);
    c->allocated = false;
    c->from_template = true;
    return c;
}

/* For the CLI: the claim lives in cli_mem, as long as the world (requests use
 * dra__claim_instantiate in their own arena). */
const dra_claim *dra_world_claim_from_template(dra_world *w, const dra_claim_template *t, const char *ns,
                                               const char *name) {
    return dra__claim_instantiate(&w->cli_mem, t, ns, name);
}

/* For the CLI: a node that has no Node object, in cli_mem; not added to the world. */
const dra_node *dra_world_add_node(dra_world *w, const char *name, const dra_label *labels, size_t n) {
    dra_node *nd = ARENA_NEW(&w->cli_mem, dra_node);
    nd->name = arena_strdup(&w->cli_mem, name);
    nd->labels = ARENA_NEWN(&w->cli_mem, dra_label, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        nd->labels[i].key = arena_strdup(&w->cli_mem, labels[i].key);
        nd->labels[i].value = arena_strdup(&w->cli_mem, labels[i].value);
    }
    nd->nlabels = (uint32_t)n;
    return nd;
}

/* ---- allocated state ---------------------------------------------------------------- */

static void caps_retain(void *p) { atomic_fetch_add_explicit(&((dra_alloc_caps *)p)->refs, 1, memory_order_relaxed); }

static void caps_release(void *p) {
    dra_alloc_caps *c = p;
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    free(c->id);
    free(c->value);
    free(c);
}

static const pmap_ops caps_ops = {caps_retain, caps_release};

dra_allocated *dra__allocated_clone(const dra_allocated *src, dra_world *w) {
    dra_allocated *s = xcalloc(1, sizeof *s);
    s->w = w;
    cmap_share(&s->devices, &src->devices);
    cmap_share(&s->shared, &src->shared);
    cmap_share(&s->capacity, &src->capacity);
    cmap_share(&s->holders, &src->holders);
    return s;
}

/* The capacity entry in *slot, made private to s before it is written (the chunk it
 * is in is s's already: cmap_upsert made it so). */
static dra_alloc_caps *caps_own(uint64_t *slot) {
    dra_alloc_caps *c = (dra_alloc_caps *)(uintptr_t)*slot;
    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1) return c;
    dra_alloc_caps *o = xcalloc(1, sizeof *o);
    atomic_init(&o->refs, 1);
    o->n = o->cap = c->n;
    o->id = xmalloc((c->n ? c->n : 1) * sizeof *o->id);
    o->value = xmalloc((c->n ? c->n : 1) * sizeof *o->value);
    memcpy(o->id, c->id, c->n * sizeof *o->id);
    memcpy(o->value, c->value, c->n * sizeof *o->value);
    caps_release(c);
    *slot = (uint64_t)(uintptr_t)o;
    return o;
}

dra_allocated *dra_allocated_new(dra_world *w) {
    dra_allocated *s = xcalloc(1, sizeof *s);
    s->w = w;
    cmap_init(&s->devices, NULL);
    cmap_init(&s->shared, NULL);
    cmap_init(&s->capacity, &caps_ops);
    cmap_init(&s->holders, NULL);
    return s;
}

void dra_allocated_free(dra_allocated *s) {
    if (!s) return;
    cmap_free(&s->devices);
    cmap_free(&s->shared);
    cmap_free(&s->capacity);
    cmap_free(&s->holders);
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
    cmap_put(&s->devices, k, 1);
    return true;
}

bool dra_allocated_add_shared(dra_allocated *s, const char *id, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, true, &k, e)) return false;
    bool ins;
    uint64_t *v = cmap_upsert(&s->shared, k, 0, &ins);
    (*v)++;
    return true;
}

static bool add_capacity_key(dra_allocated *s, uint64_t k, uint32_t id, const quantity *q) {
    /* false only when the sum overflows Quantity's range */
    bool ins;
    uint64_t *slot = cmap_upsert(&s->capacity, k, 0, &ins);
    dra_alloc_caps *c;
    if (ins) {
        c = xcalloc(1, sizeof *c);
        atomic_init(&c->refs, 1);
        *slot = (uint64_t)(uintptr_t)c;
    } else {
        c = caps_own(slot);
    }
    /* keyed by the capacity name as the device's capacity map writes it */
    for (uint32_t i = 0; i < c->n; i++)
        if (c->id[i] == id) return quantity_add(&c->value[i], q, &c->value[i]);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4;
        c->id = xrealloc(c->id, c->cap * sizeof *c->id);
        c->value = xrealloc(c->value, c->cap * sizeof *c->value);
    }
    c->id[c->n] = id;
    c->value[c->n] = *q;
    c->n++;
    return true;
}

bool dra_allocated_add_capacity(dra_allocated *s, const char *id, const char *cap, const quantity *q, err *e) {
    uint64_t k;
    if (!device_key_of(s, id, false, &k, e)) return false;
    if (!add_capacity_key(s, k, intern_cstr(s->w->names, cap), q)) return err_set(e, "too many capacities for device %s", id);
    return true;
}

/* The device key of a result: set where its names were interned (a decoded claim, the
 * allocator's view); else looked up — a name nothing interned is no device anyone
 * holds or sees (the key matches no candidate). */
static uint64_t result_key(intern_table *names, const dra_device_result *r) {
    if (r->key) return r->key;
    char stack[512];
    size_t len;
    char *buf = dra_pool_id(r->driver, r->pool, stack, sizeof stack, &len);
    uint32_t pk = intern_get(names, buf, len);
    if (buf != stack) free(buf);
    return dra_device_key(pk, intern_get(names, r->device, strlen(r->device)));
}

/* A consumed capacity's key id (as result_key: set at decode, else looked up). */
static uint32_t cap_key_id(intern_table *names, const dra_cap_value *v) {
    return v->key_id ? v->key_id : intern_get(names, v->key, strlen(v->key));
}

/* The results of c, held by `holder` (NULL: not recorded). */
static void add_results(dra_allocated *s, const dra_claim *c, const dra_claim *holder, bool consumable_capacity) {
    if (!c->allocated) return;
    for (uint32_t i = 0; i < c->nalloc_results; i++) {
        const dra_device_result *r = &c->alloc_results[i];
        if (r->admin_access == 1) continue;
        /* keys come from the intern table only: the world's arena stays untouched, so
         * allocated states can be built while other threads read the world */
        uint64_t k = result_key(s->w->names, r);
        bool ins;
        if (consumable_capacity && r->share_id) {
            (*cmap_upsert(&s->shared, k, 0, &ins))++;
            for (uint32_t j = 0; j < r->nconsumed; j++)
                add_capacity_key(s, k, cap_key_id(s->w->names, &r->consumed[j]), &r->consumed[j].value);
        } else {
            (*cmap_upsert(&s->devices, k, 0, &ins))++;
        }
        if (holder) cmap_put(&s->holders, k, (uint64_t)(uintptr_t)holder);
    }
}

void dra_allocated_add_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity) {
    add_results(s, c, c, consumable_capacity);
}

static void count_down(cmap *m, uint64_t k) {
    uint64_t v;
    if (!cmap_get(m, k, &v)) return;
    if (v <= 1) cmap_del(m, k);
    else cmap_put(m, k, v - 1);
}

/* The inverse of dra_allocated_add_claim for the same claim object. */
void dra__allocated_remove_claim(dra_allocated *s, const dra_claim *c, bool consumable_capacity) {
    if (!c->allocated) return;
    for (uint32_t i = 0; i < c->nalloc_results; i++) {
        const dra_device_result *r = &c->alloc_results[i];
        if (r->admin_access == 1) continue;
        uint64_t k = result_key(s->w->names, r);
        uint64_t h;
        if (cmap_get(&s->holders, k, &h) && h == (uint64_t)(uintptr_t)c) cmap_del(&s->holders, k);
        if (!(consumable_capacity && r->share_id)) {
            count_down(&s->devices, k);
            continue;
        }
        count_down(&s->shared, k);
        if (!cmap_get(&s->capacity, k, NULL)) continue;
        if (!cmap_get(&s->shared, k, NULL)) {
            /* the last share of the device: nothing of its capacity is in use */
            cmap_del(&s->capacity, k);
            continue;
        }
        bool ins;
        dra_alloc_caps *cp = caps_own(cmap_upsert(&s->capacity, k, 0, &ins));
        for (uint32_t j = 0; j < r->nconsumed; j++) {
            uint32_t id = cap_key_id(s->w->names, &r->consumed[j]);
            for (uint32_t m = 0; m < cp->n; m++)
                if (cp->id[m] == id) quantity_sub(&cp->value[m], &r->consumed[j].value, &cp->value[m]);
        }
    }
}

void dra_allocated_add_result(dra_allocated *s, const dra_alloc_result *r, bool consumable_capacity) {
    dra_allocated_add_result_of(s, r, NULL, consumable_capacity);
}

void dra_allocated_add_result_of(dra_allocated *s, const dra_alloc_result *r, const dra_claim *holder,
                                 bool consumable_capacity) {
    dra_claim c = {.allocated = true, .alloc_results = r->results, .nalloc_results = r->nresults};
    add_results(s, &c, holder, consumable_capacity);
}
