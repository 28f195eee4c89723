/*
 * units.h - numbers with units as written in contracts and burst.conf.
 *
 * Sizes take binary units: K, M, G, T (2^10 .. 2^40), optionally followed
 * by "i" and/or "B" (16G = 16GiB = 16GB = 16 * 2^30 bytes). Network
 * performance is in Gbit/s: "100", "100G", "100Gbps", "400M" (Mbit/s).
 * Counts are plain non-negative numbers.
 */
#ifndef BURST_UNITS_H
#define BURST_UNITS_H

#include <stddef.h>

enum unit_class {
	UNIT_COUNT,   /* plain number, no unit allowed */
	UNIT_SIZE,    /* bytes, binary suffix required unless the value is 0 */
	UNIT_NET,     /* Gbit/s */
	UNIT_PRICE,   /* US dollars per hour, plain decimal */
};

/*
 * Parse s[0..len) as a number of the given class into *out (canonical unit:
 * bytes, Gbit/s, count, USD/h). On error returns -1 and writes into msg
 * (msglen bytes) what is wrong and what would be right; *errpos gets the
 * offset within s of the offending character.
 */
int units_parse(const char *s, size_t len, enum unit_class cls, double *out,
		char *msg, size_t msglen, size_t *errpos);

/* Format a canonical value for humans ("256G", "100 Gbit/s", "8"). */
void units_format(double v, enum unit_class cls, char *buf, size_t buflen);

#endif
