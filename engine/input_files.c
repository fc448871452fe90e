/* input_files.c — reading cluster objects from files: a file, or each YAML or JSON
 * file of a directory in name order (.yaml, .yml, .json); a file's bytes (bounded by
 * DRA_INPUT_MAX_BYTES), and its documents (a JSON value, or a YAML stream as an
 * array). The store reads files through path_stream.c, which streams a large JSON
 * List item by item on top of these. */
#include "engine/decode.h"
#include "engine/docs.h"
#include "engine/validate.h"

#include "base/strbuf.h"
#include "base/vec.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
    VEC(char *) names = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (has_suffix(de->d_name, ".yaml") || has_suffix(de->d_name, ".yml") || has_suffix(de->d_name, ".json")) {
            char *full = xmalloc(strlen(path) + strlen(de->d_name) + 2);
            sprintf(full, "%s/%s", path, de->d_name);
            VEC_PUSH(names, full);
        }
    }
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);   /* qsort(NULL, 0): undefined */
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

