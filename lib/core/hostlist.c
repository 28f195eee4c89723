/*
 * hostlist.c - expand Slurm host list expressions.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "strutil.h"

/* the longest number of a range: it fits an unsigned long with room to
 * count past it (a longer one saturated strtoul at ULONG_MAX, and the
 * loop's v++ wrapped around to 0, making names until the limit) */
#define HOSTLIST_MAX_DIGITS 18

static int push(struct hostlist *hl, const char *name, size_t max, burst_err_t *err)
{
	if (hl->n >= max) {
		burst_err_set(err, "host list expands to more than %zu names", max);
		return -1;
	}
	if (hl->n == hl->cap) {
		hl->cap = hl->cap ? hl->cap * 2 : 16;
		hl->names = xrealloc(hl->names, hl->cap * sizeof(char *));
	}
	hl->names[hl->n++] = xstrdup(name);
	return 0;
}

/*
 * Expand one item (no top-level commas): prefix[ranges]rest, where rest runs
 * up to end. rest and end point into full, so that an error can name the
 * character.
 */
static int expand_item(const char *full, const char *prefix, size_t plen, const char *rest,
		       const char *end_of_item, struct hostlist *hl, size_t max, burst_err_t *err)
{
	size_t rlen = (size_t)(end_of_item - rest);
	const char *open = memchr(rest, '[', rlen), *close, *r;
	char buf[512];

	if (!open) {
		int n = snprintf(buf, sizeof(buf), "%.*s%.*s", (int)plen, prefix, (int)rlen, rest);
		if (n < 0 || (size_t)n >= sizeof(buf)) {
			burst_err_set(err, "host name too long in '%s'", full);
			return -1;
		}
		if (strchr(buf, ']')) {
			burst_err_set(err, "unbalanced ']' in host list '%s'", full);
			return -1;
		}
		if (!buf[0]) {
			burst_err_set(err, "empty host name in host list '%s'", full);
			return -1;
		}
		return push(hl, buf, max, err);
	}
	close = memchr(open, ']', (size_t)(end_of_item - open));
	if (!close) {
		burst_err_set(err, "missing ']' in host list '%s' at character %zu", full,
			      (size_t)(open - full) + 1);
		return -1;
	}
	r = open + 1;
	if (r == close) {   /* "burst-[]": no number, so no name at all */
		burst_err_set(err, "empty range '[]' in host list '%s' at character %zu", full,
			      (size_t)(open - full) + 1);
		return -1;
	}
	while (r < close) {
		unsigned long lo, hi, v;
		int width = 0;
		const char *s = r;
		char *end;
		char pre[512];

		if (!isdigit((unsigned char)*r)) {
			burst_err_set(err, "expected a number in host range of '%s' at character %zu",
				      full, (size_t)(r - full) + 1);
			return -1;
		}
		lo = strtoul(r, &end, 10);
		width = (int)(end - s);
		if (end - s > HOSTLIST_MAX_DIGITS) {
			burst_err_set(err, "number too long (over %d digits) in host range of '%s' at character %zu",
				      HOSTLIST_MAX_DIGITS, full, (size_t)(s - full) + 1);
			return -1;
		}
		r = end;
		hi = lo;
		if (*r == '-') {
			r++;
			if (!isdigit((unsigned char)*r)) {
				burst_err_set(err, "expected a number after '-' in host list '%s' at character %zu",
					      full, (size_t)(r - full) + 1);
				return -1;
			}
			hi = strtoul(r, &end, 10);
			if (end - r > HOSTLIST_MAX_DIGITS) {
				burst_err_set(err, "number too long (over %d digits) in host range of '%s' at character %zu",
					      HOSTLIST_MAX_DIGITS, full, (size_t)(r - full) + 1);
				return -1;
			}
			r = end;
		}
		if (hi < lo) {
			burst_err_set(err, "range %lu-%lu goes backwards in host list '%s'", lo, hi, full);
			return -1;
		}
		if (hi - lo >= max) {
			burst_err_set(err, "host list '%s' expands to more than %zu names", full, max);
			return -1;
		}
		if (*r == ',') {
			r++;
			if (r == close) {   /* "n[1,]": Slurm refuses it too */
				burst_err_set(err, "expected a number after ',' in host range of '%s' at character %zu",
					      full, (size_t)(r - full) + 1);
				return -1;
			}
		} else if (r != close) {
			burst_err_set(err, "unexpected '%c' in host range of '%s' at character %zu", *r,
				      full, (size_t)(r - full) + 1);
			return -1;
		}
		for (v = lo; v <= hi; v++) {
			int n = snprintf(pre, sizeof(pre), "%.*s%.*s%0*lu", (int)plen, prefix,
					 (int)(open - rest), rest, s[0] == '0' ? width : 0, v);
			if (n < 0 || (size_t)n >= sizeof(pre)) {
				burst_err_set(err, "host name too long in '%s'", full);
				return -1;
			}
			if (expand_item(full, pre, (size_t)n, close + 1, end_of_item, hl, max, err) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * How many names one item (up to end) expands to: the product of its
 * brackets' range sizes, at most cap + 1. A malformed range ends the
 * count; expand_item names the error.
 */
/* the most bytes of names one list may expand to */
#define HOSTLIST_MAX_BYTES (64 << 20)

static size_t item_count(const char *p, const char *end, size_t cap)
{
	size_t total = 1;

	while ((p = memchr(p, '[', (size_t)(end - p)))) {
		size_t n = 0;
		p++;
		while (p < end && isdigit((unsigned char)*p)) {
			char *e;
			unsigned long lo = strtoul(p, &e, 10), hi = lo;
			p = e;
			if (*p == '-' && isdigit((unsigned char)p[1])) {
				hi = strtoul(p + 1, &e, 10);
				p = e;
			}
			if (hi < lo)
				return total;
			n = hi - lo >= cap ? cap + 1 : n + (hi - lo + 1);
			if (n > cap)
				return cap + 1;
			if (*p != ',')
				break;
			p++;
		}
		if (!n)
			return total;
		if (total > (cap + 1) / n)
			return cap + 1;
		total *= n;
		if (total > cap)
			return cap + 1;
	}
	return total;
}

static int expand_all(const char *expr, struct hostlist *hl, size_t max_hosts,
		      burst_err_t *err)
{
	const char *p = expr;

	if (!expr || !*expr) {
		burst_err_set(err, "empty host list");
		return -1;
	}
	while (*p) {
		const char *q = p;
		int depth = 0;

		while (*q && (depth || *q != ',')) {
			if (*q == '[') depth++;
			if (*q == ']') depth--;
			if (depth < 0) {
				burst_err_set(err, "unbalanced ']' in host list '%s'", expr);
				return -1;
			}
			q++;
		}
		/* refused before it is expanded: a few brackets of small ranges
		 * multiply to more names than any cluster has (found by
		 * tests/fuzz/fuzz_resume: minutes spent making a million names) */
		size_t count = item_count(p, q, max_hosts);

		if (count > max_hosts - hl->n) {
			burst_err_set(err, "host list '%s' expands to more than %zu names", expr, max_hosts);
			return -1;
		}
		/* and by the bytes: a name is at most as long as its item, and a
		 * million long names are gigabytes (found the same way) */
		if (count > HOSTLIST_MAX_BYTES / ((size_t)(q - p) + 1)) {
			burst_err_set(err, "host list '%s' expands to more than %d MiB of names",
				      expr, HOSTLIST_MAX_BYTES >> 20);
			return -1;
		}
		if (expand_item(expr, "", 0, p, q, hl, max_hosts, err) < 0)
			return -1;
		p = *q ? q + 1 : q;
	}
	return 0;
}

int hostlist_expand(const char *expr, struct hostlist *hl, size_t max_hosts,
		    burst_err_t *err)
{
	size_t before = hl->n;

	if (expand_all(expr, hl, max_hosts, err) == 0)
		return 0;
	/* an error in a later item: the names of the earlier ones go, and
	 * hl is as it was (found by tests/fuzz/fuzz_resume: callers that
	 * skip a bad list leaked them) */
	while (hl->n > before)
		free(hl->names[--hl->n]);
	if (!hl->n) {
		free(hl->names);
		hl->names = NULL;
		hl->cap = 0;
	}
	return -1;
}

void hostlist_free(struct hostlist *hl)
{
	size_t i;

	for (i = 0; i < hl->n; i++)
		free(hl->names[i]);
	free(hl->names);
	hl->names = NULL;
	hl->n = hl->cap = 0;
}

long hostlist_find(const struct hostlist *hl, const char *name)
{
	size_t i;

	for (i = 0; i < hl->n; i++)
		if (strcmp(hl->names[i], name) == 0)
			return (long)i;
	return -1;
}
