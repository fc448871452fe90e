/* error_test.c — err values (set, at, wrap, format with object and path, NULL
 * tolerance, truncation) and the errpath builder (push/pop, overflow). */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"

Test(error, set_and_clear) {
    err e;
    err_clear(&e);
    cr_expect_not(e.set);
    cr_expect_str_eq(e.msg, "");
    cr_expect_not(err_set(&e, "bad %s %d", "thing", 3));
    cr_expect(e.set);
    cr_expect_str_eq(e.msg, "bad thing 3");
    err_clear(&e);
    cr_expect_not(e.set);
    cr_expect_str_eq(e.msg, "");
    /* NULL means "do not record" */
    cr_expect_not(err_set(NULL, "x"));
    cr_expect_not(err_at(NULL, "o", "p", "x"));
    err_wrap(NULL, "w");
    err_set_object(NULL, "o");
    err_set_path(NULL, "p");
    err_clear(NULL);
}

Test(error, format_with_object_and_path) {
    err e;
    err_clear(&e);
    char buf[512];
    cr_expect_not(err_at(&e, "ResourceSlice node-1-gpus", "spec.devices[3].capacity[\"memory\"].value",
                         "quantities must match %s", "..."));
    cr_expect_str_eq(err_format(&e, buf, sizeof buf),
                     "ResourceSlice node-1-gpus: spec.devices[3].capacity[\"memory\"].value: quantities must match ...");

    err_clear(&e);
    err_set(&e, "only a message");
    cr_expect_str_eq(err_format(&e, buf, sizeof buf), "only a message");

    err_set_object(&e, "ResourceClaim %s/%s", "ns", "claim");
    cr_expect_str_eq(err_format(&e, buf, sizeof buf), "ResourceClaim ns/claim: only a message");

    err_clear(&e);
    err_set(&e, "must be >= 1");
    err_set_path(&e, "spec.devices.requests[1].exactly.count");
    cr_expect_str_eq(err_format(&e, buf, sizeof buf), "spec.devices.requests[1].exactly.count: must be >= 1");

    err_at(&e, NULL, NULL, "m");
    cr_expect_str_eq(err_format(&e, buf, sizeof buf), "m");
    cr_expect_str_eq(err_format(NULL, buf, sizeof buf), "");
}

Test(error, format_truncates) {
    err e;
    err_clear(&e);
    err_at(&e, "Obj", "path", "message");
    char small[8];
    err_format(&e, small, sizeof small);
    cr_expect_str_eq(small, "Obj: pa");
    char one[1] = {'x'};
    err_format(&e, one, sizeof one);
    cr_expect_eq(one[0], '\0');
}

Test(error, wrap_prepends) {
    err e;
    err_clear(&e);
    err_set(&e, "unable to parse quantity's suffix");
    err_wrap(&e, "capacity %s", "memory");
    cr_expect_str_eq(e.msg, "capacity memory: unable to parse quantity's suffix");
    err_wrap(&e, "device %d", 7);
    cr_expect_str_eq(e.msg, "device 7: capacity memory: unable to parse quantity's suffix");
    cr_expect(e.set);
}

Test(error, wrap_long_chain_stays_terminated) {
    err e;
    err_clear(&e);
    err_set(&e, "root cause");
    for (int i = 0; i < 200; i++) err_wrap(&e, "level %03d", i);
    size_t n = strlen(e.msg);
    cr_expect_lt(n, sizeof e.msg);
    cr_expect(strncmp(e.msg, "level 199: level 198: ", 22) == 0);
    char huge[4000];
    memset(huge, 'w', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    err_wrap(&e, "%s", huge);
    cr_expect_lt(strlen(e.msg), sizeof e.msg);
}

Test(error, errpath_push_pop) {
    errpath p;
    errpath_init(&p);
    cr_expect_str_eq(errpath_str(&p), "");
    size_t m0 = errpath_push(&p, "spec");
    cr_expect_eq(m0, 0);
    size_t m1 = errpath_push(&p, ".devices[%d]", 3);
    cr_expect_eq(m1, 4);
    errpath_push(&p, ".name");
    cr_expect_str_eq(errpath_str(&p), "spec.devices[3].name");
    errpath_pop(&p, m1);
    cr_expect_str_eq(errpath_str(&p), "spec");
    errpath_push(&p, ".devices[%d]", 4);
    errpath_push(&p, ".capacity[\"%s\"]", "memory");
    cr_expect_str_eq(errpath_str(&p), "spec.devices[4].capacity[\"memory\"]");
    errpath_pop(&p, m0);
    cr_expect_str_eq(errpath_str(&p), "");
    /* popping "forward" is ignored */
    errpath_pop(&p, 50);
    cr_expect_eq(p.len, 0);
}

Test(error, errpath_overflow_is_truncated) {
    errpath p;
    errpath_init(&p);
    size_t marks[100];
    for (int i = 0; i < 100; i++) marks[i] = errpath_push(&p, ".segment%02d", i);
    cr_expect_eq(p.len, sizeof p.buf - 1);
    cr_expect_eq(strlen(errpath_str(&p)), sizeof p.buf - 1);
    /* a mark taken while full pops back to the full length; an early mark still works */
    errpath_pop(&p, marks[99]);
    cr_expect_eq(p.len, sizeof p.buf - 1);
    errpath_pop(&p, marks[2]);
    cr_expect_str_eq(errpath_str(&p), ".segment00.segment01");
}
