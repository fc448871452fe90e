/* civil_time.c — proleptic Gregorian dates and the text of timestamps and durations
 * (civil_time.h): what value.c prints and lib_time.c computes with, apart from the
 * CEL functions so that printing a value needs nothing of the evaluator. */
#include "cel/civil_time.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int64_t cel__days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void cel__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

int64_t cel__floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

void cel__format_timestamp(int64_t sec, uint32_t nanos, char *buf, size_t n) {
    int64_t days = cel__floor_div(sec, 86400), rem = sec - days * 86400;
    int64_t y;
    unsigned m, d;
    cel__civil_from_days(days, &y, &m, &d);
    int len = snprintf(buf, n, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, m, d, (int)(rem / 3600),
                       (int)(rem / 60 % 60), (int)(rem % 60));
    if (nanos && len > 0 && (size_t)len < n) {
        char frac[16];
        snprintf(frac, sizeof frac, ".%09u", nanos);
        size_t fl = strlen(frac);
        while (fl > 1 && frac[fl - 1] == '0') frac[--fl] = '\0';
        snprintf(buf + len, n - (size_t)len, "%sZ", frac);
    } else if (len > 0 && (size_t)len < n) {
        snprintf(buf + len, n - (size_t)len, "Z");
    }
}

void cel__format_duration(int64_t sec, uint32_t nanos, char *buf, size_t n) {
    __int128 total = (__int128)sec * 1000000000 + nanos;
    bool neg = total < 0;
    if (neg) total = -total;
    unsigned long long whole = (unsigned long long)(total / 1000000000);
    unsigned frac = (unsigned)(total % 1000000000);
    if (!frac) {
        snprintf(buf, n, "%s%llus", neg ? "-" : "", whole);
        return;
    }
    char f[16];
    snprintf(f, sizeof f, "%09u", frac);
    size_t fl = strlen(f);
    while (fl > 0 && f[fl - 1] == '0') f[--fl] = '\0';
    snprintf(buf, n, "%s%llu.%ss", neg ? "-" : "", whole, f);
}
