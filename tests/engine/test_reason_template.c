/* test_reason_template.c — the memos' reason templates (engine/store/store.c): a reason with
 * the pod's names replaced by marks, expanded back in another pod's names, truncated
 * to the buffer like snprintf. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/store_internal.h"
#include "engine/world/world.h"

Test(reason_template, round_trip_in_other_names) {
    const char *a[] = {"ml/train-0", "train-0-gpu"}, *b[] = {"ml/train-17", "train-17-gpu"};
    const char *reason = "cannot allocate all claims: claim ml/train-0 request gpu: 7 held by claim ml/train-0 "
                         "and train-0-gpu";
    char *t = dra__reason_template(reason, a, 2);
    char out[512];
    dra__reason_expand(t, out, sizeof out, a, 2);
    cr_assert_str_eq(out, reason);
    dra__reason_expand(t, out, sizeof out, b, 2);
    cr_assert_str_eq(out, "cannot allocate all claims: claim ml/train-17 request gpu: 7 held by claim ml/train-17 "
                          "and train-17-gpu");
    free(t);
}

Test(reason_template, truncates_like_snprintf) {
    const char *a[] = {"pod-a"}, *b[] = {"a-much-longer-pod-name"};
    char *t = dra__reason_template("x pod-a y pod-a", a, 1);
    char want[64], out[64];
    for (size_t n = 1; n <= sizeof out; n++) {
        snprintf(want, n, "x %s y %s", b[0], b[0]);
        memset(out, '#', sizeof out);
        dra__reason_expand(t, out, n, b, 1);
        cr_assert_str_eq(out, want, "n=%zu", n);
    }
    free(t);
    /* no marks at all, and an empty template */
    dra__reason_expand("plain text", out, 6, b, 1);
    cr_assert_str_eq(out, "plain");
    dra__reason_expand("", out, sizeof out, b, 1);
    cr_assert_str_eq(out, "");
    /* a mark beyond the names given reads "?" */
    dra__reason_expand("claim \x01\x02 here", out, sizeof out, b, 1);
    cr_assert_str_eq(out, "claim ? here");
}
