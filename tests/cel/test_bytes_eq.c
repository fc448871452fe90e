/* test_bytes_eq.c — cel_bytes_eq (cel/value.h), the compare behind every string
 * equality on the predicate path: the same answer as memcmp for every length from 0
 * to 40 with a difference at each position (first, middle, last and every byte in
 * between, in the overlapping words too), and no byte read outside [0, n): each
 * operand is its own malloc'd block of exactly n bytes, which ASan's build checks. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cel/value.h"

static char *block(size_t n, char fill) {
    char *p = malloc(n ? n : 1);
    cr_assert(p);
    for (size_t i = 0; i < n; i++) p[i] = (char)(fill + (char)(i * 7));
    return p;
}

Test(bytes_eq, equal_and_each_single_difference_up_to_40_bytes) {
    for (size_t n = 0; n <= 40; n++) {
        char *a = block(n, 'a'), *b = block(n, 'a');
        cr_assert(cel_bytes_eq(a, b, n), "n=%zu: equal bytes compare unequal", n);
        for (size_t i = 0; i < n; i++) {
            for (int delta = 1; delta < 256; delta *= 2) {   /* every bit of the byte */
                b[i] = (char)(a[i] ^ delta);
                bool want = memcmp(a, b, n) == 0;
                cr_assert_eq(cel_bytes_eq(a, b, n), want, "n=%zu: byte %zu differs by %#x", n, i, delta);
                cr_assert_eq(cel_bytes_eq(b, a, n), want, "n=%zu: byte %zu differs by %#x (swapped)", n, i, delta);
            }
            b[i] = a[i];
        }
        free(a);
        free(b);
    }
}

Test(bytes_eq, two_differences_and_unaligned_operands) {
    char buf_a[64], buf_b[64];
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 1; n + off <= 48; n++)
            for (size_t i = 0; i < n; i++)
                for (size_t j = i; j < n; j++) {
                    memset(buf_a, 'x', sizeof buf_a);
                    memset(buf_b, 'x', sizeof buf_b);
                    buf_b[off + i] = 'y';
                    buf_b[off + j] = 'z';
                    cr_assert(!cel_bytes_eq(buf_a + off, buf_b + off, n), "off=%zu n=%zu i=%zu j=%zu", off, n, i, j);
                }
}
