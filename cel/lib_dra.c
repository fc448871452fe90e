/* lib_dra.c — functions the DRA selector environment adds itself
 * (dynamic-resource-allocation cel/compile.go): `<dyn>.includes(<dyn>)`. On a list
 * it is true when an element equals the argument, with Kubernetes' runtime cap of
 * 48 elements (the most attribute values a device may have); on a scalar it is
 * plain equality. */
#include "cel/functions.h"

#define DRA_INCLUDES_MAX 48

static cel_value dra_includes(cel_call *c, const cel_value *a, uint32_t n) {
    (void)c, (void)n;
    if (a[0].kind == CV_LIST) {
        const cel_list *l = a[0].u.list;
        if (l->n > DRA_INCLUDES_MAX)
            return cel_error_static("'includes' function cannot be applied to lists longer than 48 values");
        for (uint32_t i = 0; i < l->n; i++)
            if (cel__value_equal(&l->items[i], &a[1])) return cel_bool(true);
        return cel_bool(false);
    }
    return cel_bool(cel__value_equal(&a[0], &a[1]));
}

static const cel_overload dra_overloads[] = {
    {"includes", "dra_includes_dyn_dyn", CEL_RECEIVER, 2, CEL_FN_FOLD, {"dyn", "dyn"}, "bool", dra_includes, 48, NULL, NULL},
};

const cel_library cel_lib_dra = {"dra", dra_overloads, ARRAY_SIZE(dra_overloads)};
