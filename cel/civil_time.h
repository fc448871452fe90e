/* civil_time.h — private to cel/: civil dates (the days-from-civil algorithm,
 * proleptic Gregorian as Go's time package) and the text of a timestamp or duration
 * as cel-go's string() prints them. Pure functions, below value.c and lib_time.c. */
#ifndef DRA_CEL_CIVIL_TIME_H
#define DRA_CEL_CIVIL_TIME_H

#include <stddef.h>
#include <stdint.h>

/* Days since 1970-01-01 of a civil date, and back. */
int64_t cel__days_from_civil(int64_t y, unsigned m, unsigned d);
void cel__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
/* a / b rounded toward negative infinity. */
int64_t cel__floor_div(int64_t a, int64_t b);
/* RFC 3339 text of a timestamp in UTC with trailing fractional zeros removed, and
 * a duration in seconds ("1.5s"), as cel-go's string() prints them. */
void cel__format_timestamp(int64_t sec, uint32_t nanos, char *buf, size_t n);
void cel__format_duration(int64_t sec, uint32_t nanos, char *buf, size_t n);

#endif
