/* libraries.c — the list of function libraries every environment is built from.
 * One line per library; see functions.h for how to write one. Order matters only
 * for runtime dispatch among overloads with identical signatures (first wins). */
#include "cel/functions.h"

const cel_library *const cel_libraries[] = {
    &cel_lib_std,
    &cel_lib_quantity,
    &cel_lib_semver,
    &cel_lib_optional,
    &cel_lib_dra,
    &cel_lib_time,
    &cel_lib_regex,
    &cel_lib_strings,
    &cel_lib_lists,
    &cel_lib_sets,
    &cel_lib_net,
    &cel_lib_url,
    &cel_lib_format,
};

const size_t cel_nlibraries = ARRAY_SIZE(cel_libraries);
