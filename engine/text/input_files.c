/* input_files.c — reading cluster objects from files: a file, or each YAML or JSON
 * file of a directory in name order (.yaml, .yml, .json); a file's bytes (bounded by
 * DRA_INPUT_MAX_BYTES), and its documents (a JSON value, or a YAML stream as an
 * array). The document reader (docs.c) reads files through these. */
#include "engine/decode/decode.h"
#include "engine/text/docs.h"
#include "engine/decode/validate.h"

#include "base/file.h"
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
    return file_read_all(path, DRA_INPUT_MAX_BYTES, sb, e);
}

bool dra__input_is_json(const strbuf *sb) {
    const char *p = sb->buf ? sb->buf : "";
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return *p == '{' || *p == '[';
}

char **dra__path_files(const char *path, size_t *n, err *e) {
    struct stat st;
    *n = 0;
    if (stat(path, &st) != 0) return err_at(e, path, NULL, "no such file or directory"), NULL;
    VEC(char *) names = {0};
    if (!S_ISDIR(st.st_mode)) {
        VEC_PUSH(names, xstrdup(path));
        *n = 1;
        return names.v;
    }
    DIR *d = opendir(path);
    if (!d) return err_at(e, path, NULL, "cannot read directory"), NULL;
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
    *n = names.n;
    return names.n ? names.v : xcalloc(1, sizeof(char *));   /* an empty directory: no files, no error */
}

json_t *dra_yaml_parse(const char *text, size_t len, const char *source, err *e) {
    return dra__yaml_load(text, len, source, e);
}

