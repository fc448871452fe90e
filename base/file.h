/* file.h — a file's bytes in memory, bounded: what every reader of a named file
 * (cluster objects, workloads, kubeconfigs) starts from, so that a file too large,
 * /dev/zero, or a FIFO is refused with the same words wherever it is named. */
#ifndef DRA_BASE_FILE_H
#define DRA_BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

/* The bytes of path into sb (initialised here; the caller frees it when true), NUL
 * terminated; refused past max bytes ("more than N MiB of input, refused") or when
 * the file cannot be opened ("cannot open file"), e naming path. A regular file is
 * read in one piece into a buffer of its size. */
bool file_read_all(const char *path, size_t max, strbuf *sb, err *e);

#endif
