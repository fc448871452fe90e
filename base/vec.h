/* vec.h — a growable array by value: `VEC(T) v = {0}; VEC_PUSH(v, x);` doubles its
 * capacity as it fills (xrealloc fails loudly), `v.v[0..v.n)` are the elements, free
 * with free(v.v). For the lists every layer keeps (objects, changes, slots). */
#ifndef DRA_VEC_H
#define DRA_VEC_H

#include "base/base.h"

#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(vec, x)                                                            \
    do {                                                                            \
        if ((vec).n == (vec).cap) {                                                 \
            (vec).cap = (vec).cap ? (vec).cap * 2 : 16;                             \
            (vec).v = xrealloc((vec).v, (vec).cap * sizeof *(vec).v);               \
        }                                                                           \
        (vec).v[(vec).n++] = (x);                                                   \
    } while (0)

#endif
