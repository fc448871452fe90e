/* plan_suggest.c — edit distance for "did you mean" (plan_suggest.h). */
#include "planner/plan_suggest.h"

#include <string.h>

size_t plan_suggest_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    /* keys are short; a fixed table keeps this allocation-free */
    if (n > 30 || m > 30) return 99;
    size_t d[32][32];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[n][m];
}
