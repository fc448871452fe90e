/* test_docs.c — the document reader (engine/json.h dra_docs_open / next / refuse /
 * close): a directory's YAML and JSON files in name order, dotfiles and other
 * endings skipped; a JSON List's items one at a time with the List beside them; the
 * precedence of a file's errors (a syntax error, then a document without kind, then
 * the caller's refusal), each ending the read with that file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/json.h"

static char dir[64];

static void put(const char *name, const char *text) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/dralloc-docs-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#define CM(name) "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" name "\"}}"

/* "file:name ..." of every document the reader gives (names of metadata.name). */
static bool read_all(const char *path, const char *refuse, char *out, size_t n, err *e) {
    dra_docs *d = dra_docs_open(path, NULL);
    size_t len = 0;
    out[0] = '\0';
    for (dra_doc doc; dra_docs_next(d, &doc);) {
        const char *name = json_string_value(json_object_get(json_object_get(doc.doc, "metadata"), "name"));
        const char *base = strrchr(doc.file, '/') ? strrchr(doc.file, '/') + 1 : doc.file;
        len += (size_t)snprintf(out + len, n - len, "%s%s:%s%s", len ? " " : "", base, name ? name : "?",
                                doc.list ? "(item)" : "");
        if (refuse && name && !strcmp(name, refuse)) {
            err why;
            err_clear(&why);
            err_set(&why, "refused %s", name);
            dra_docs_refuse(d, &why);
        }
    }
    return dra_docs_close(d, e);
}

TestSuite(docs, .init = setup, .fini = teardown);

Test(docs, a_directory_in_name_order_dotfiles_and_other_endings_skipped) {
    put("b.yaml", "# two documents\n" CM("b1") "\n---\n" CM("b2") "\n");
    put("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" CM("a1") "," CM("a2") "]}");
    put(".hidden.yaml", CM("hidden"));
    put("notes.txt", CM("txt"));
    put("c.yml", CM("c1"));
    char got[512];
    err e;
    err_clear(&e);
    cr_assert(read_all(dir, NULL, got, sizeof got, &e), "%s", e.msg);
    cr_assert_str_eq(got, "a.json:a1(item) a.json:a2(item) b.yaml:b1 b.yaml:b2 c.yml:c1");
}

Test(docs, the_callers_refusal_ends_the_read_after_its_file) {
    put("a.yaml", "# a stream\n" CM("a1") "\n---\n" CM("a2") "\n---\n" CM("a3") "\n");
    put("b.yaml", CM("b1"));
    char got[512];
    err e;
    err_clear(&e);
    cr_assert_not(read_all(dir, "a2", got, sizeof got, &e));
    /* a3 is read (and checked) but not given; b.yaml is not read */
    cr_assert_str_eq(got, "a.yaml:a1 a.yaml:a2");
    cr_assert_str_eq(e.msg, "refused a2");
}

Test(docs, a_document_without_kind_comes_before_the_callers_refusal) {
    put("a.yaml", "# a stream\n" CM("a1") "\n---\n{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}\n");
    char got[512];
    err e;
    err_clear(&e);
    cr_assert_not(read_all(dir, "a1", got, sizeof got, &e));
    cr_assert_str_eq(got, "a.yaml:a1");
    cr_assert(strstr(e.msg, "kind not set"), "%s", e.msg);
}

Test(docs, a_syntax_error_anywhere_in_a_list_comes_first) {
    put("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" CM("a1") ",{\"kind\":}]}");
    char got[512];
    err e;
    err_clear(&e);
    cr_assert_not(read_all(dir, "a1", got, sizeof got, &e));
    cr_assert(strstr(e.object, "a.json"), "%s", e.object);
    cr_assert_neq(strcmp(e.msg, "refused a1"), 0, "the syntax error, not the refusal: %s", e.msg);
}

Test(docs, a_missing_path_is_an_error_and_nothing_is_given) {
    char got[512], path[128];
    snprintf(path, sizeof path, "%s/none.yaml", dir);
    err e;
    err_clear(&e);
    cr_assert_not(read_all(path, NULL, got, sizeof got, &e));
    cr_assert_str_eq(got, "");
    cr_assert_str_eq(e.msg, "no such file or directory");
}
