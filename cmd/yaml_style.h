/* yaml_style.h — a string as kubectl's YAML printer writes it (sigs.k8s.io/yaml →
 * go-yaml v2): plain unless plain would read back as another type or not at all. */
#ifndef DRA_CMD_YAML_STYLE_H
#define DRA_CMD_YAML_STYLE_H

#include <stdbool.h>
#include <stdio.h>

typedef enum dra__yaml_style {
    DRA_YAML_PLAIN,
    DRA_YAML_SINGLE,   /* 'it''s' */
    DRA_YAML_DOUBLE,   /* "1", "", "tab\there" */
    DRA_YAML_LITERAL,  /* |- and the lines below, one indent deeper */
} dra__yaml_style;

/* How go-yaml v2 writes s as a mapping key (key) or a value. */
dra__yaml_style dra__yaml_style_of(const char *s, bool key);
/* Writes s in that style; a literal's lines are indented by indent + 2. Returns true
 * when it ended the line itself (a literal block), so the caller must not. */
bool dra__yaml_string(FILE *out, const char *s, int indent, bool key);

#endif
