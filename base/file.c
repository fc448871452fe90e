/* file.c — a file's bytes in memory, bounded (file.h). */
#include "base/file.h"

#include <stdio.h>
#include <sys/stat.h>

bool file_read_all(const char *path, size_t max, strbuf *sb, err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_at(e, path, NULL, "cannot open file");
    sbuf_init(sb);
    /* a regular file is read in one piece into a buffer of its size: a fleet's 166 MB
     * grown 64 KiB at a time was copied over again at every doubling */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (size_t)st.st_size <= max) {
        sb->cap = (size_t)st.st_size + 1;
        sb->buf = xmalloc(sb->cap);
        sb->len = fread(sb->buf, 1, (size_t)st.st_size, f);
        sb->buf[sb->len] = '\0';
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        sbuf_add(sb, buf, n);
        if (sb->len > max) {   /* /dev/zero, a file inside a directory too */
            fclose(f);
            sbuf_free(sb);
            return err_at(e, path, NULL, "more than %zu MiB of input, refused", max >> 20);
        }
    }
    fclose(f);
    return true;
}
