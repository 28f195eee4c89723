/*
 * hostlist.c - expand Slurm host list expressions, as Slurm does.
 *
 * What is accepted, and the order of the names, follow Slurm's own parser
 * (src/common/hostlist.c, _hostlist_create_bracketed and the functions it
 * calls, one-dimensional names), so that a node set that burst.conf takes
 * is one that slurm.conf takes too, with the same names:
 *
 *  - items are separated by commas, blanks or tabs (a comma inside brackets
 *    separates ranges); empty items are skipped;
 *  - an item is text and bracket groups "[RANGES]", each group closed
 *    before the next one opens; RANGES are N or N-M (N <= M), separated by
 *    commas; a range's names are zero-padded to the width of N as written;
 *    one range names at most SLURM_MAX_RANGE hosts, and the ranges of each
 *    group but the last at most SLURM_MAX_PREFIX names together;
 *  - text after an item's last group (a suffix, "n[1-2]-y") only from Slurm
 *    23.11 on: 22.05 refuses it;
 *  - names come in Slurm's order: the last group varies fastest; of the
 *    groups before it, the one nearest the last varies slowest
 *    ("a[1-2]b[3-4]c[5-6]": a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...).
 *
 * Stricter than Slurm, on purpose (tests/integration/test_hostlist_slurm.sh
 * checks the rest against scontrol show hostnames): a bracket that does not
 * pair up (Slurm 22.05 makes names with a bracket in them, "n[1-2" is "n]"),
 * a range with nothing after its '-' ("n[1-]", which Slurm reads as n1), a
 * number that is not plain digits or has more than 18 of them, and a list
 * with no name at all.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "slurm_compat.h"
#include "strutil.h"

/* the longest number of a range: it fits an unsigned long with room to
 * count past it (a longer one saturated strtoul at ULONG_MAX, and the
 * loop's v++ wrapped around to 0, making names until the limit) */
#define HOSTLIST_MAX_DIGITS 18
/* Slurm's limits (hostlist.c MAX_RANGE, hostlist.h MAX_PREFIX_CNT) */
#define SLURM_MAX_RANGE 65536
#define SLURM_MAX_PREFIX 65536
#define SLURM_MAX_RANGES (256 * 1024)   /* ranges in one bracket (MAX_RANGES) */
/* the most bytes of names one list may expand to */
#define HOSTLIST_MAX_BYTES (64 << 20)
/* the most bracket groups in one item */
#define HOSTLIST_MAX_GROUPS 64
/* a name's longest length */
#define HOSTLIST_MAX_NAME 511

/* Slurm 23.11 took text after the last bracket ("Extend hostlist to support suffix") */
#define HOSTLIST_SUFFIX BURST_SLURM_AT_LEAST(23, 11)

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t';
}

struct range {
	unsigned long lo, hi;
	int width;               /* the digits of lo as written: names are padded to it */
};

struct group {
	const char *open, *close;   /* '[' and ']' in the expression */
	struct range *r;
	size_t nr, cap;
	size_t count;            /* names of its ranges together */
};

struct item {
	const char *start, *end;
	struct group g[HOSTLIST_MAX_GROUPS];
	size_t ng;
};

static void item_free(struct item *it)
{
	size_t i;

	for (i = 0; i < it->ng; i++)
		free(it->g[i].r);
	it->ng = 0;
}

/* at: a character of full, 1-based */
static size_t at(const char *full, const char *p)
{
	return (size_t)(p - full) + 1;
}

/* The ranges between g->open and g->close: 0, or -1 with err. */
static int parse_ranges(const char *full, struct group *g, burst_err_t *err)
{
	const char *r = g->open + 1;

	if (r == g->close) {   /* "burst-[]": no number, so no name at all */
		burst_err_set(err, "empty range '[]' in host list '%s' at character %zu", full, at(full, g->open));
		return -1;
	}
	while (r < g->close) {
		struct range x;
		const char *s = r;
		char *end;

		if (!isdigit((unsigned char)*r)) {
			burst_err_set(err, "expected a number in host range of '%s' at character %zu", full, at(full, r));
			return -1;
		}
		while (isdigit((unsigned char)*r))
			r++;
		if (r - s > HOSTLIST_MAX_DIGITS) {
			burst_err_set(err, "number too long (over %d digits) in host range of '%s' at character %zu",
				      HOSTLIST_MAX_DIGITS, full, at(full, s));
			return -1;
		}
		x.lo = x.hi = strtoul(s, &end, 10);
		x.width = (int)(r - s);
		if (*r == '-') {
			const char *h = ++r;
			if (!isdigit((unsigned char)*r)) {
				/* Slurm reads "n[1-]" as n1: refused here, a typo of a range */
				burst_err_set(err, "expected a number after '-' in host list '%s' at character %zu",
					      full, at(full, r));
				return -1;
			}
			while (isdigit((unsigned char)*r))
				r++;
			if (r - h > HOSTLIST_MAX_DIGITS) {
				burst_err_set(err, "number too long (over %d digits) in host range of '%s' at character %zu",
					      HOSTLIST_MAX_DIGITS, full, at(full, h));
				return -1;
			}
			x.hi = strtoul(h, &end, 10);
		}
		if (x.hi < x.lo) {
			burst_err_set(err, "range %lu-%lu goes backwards in host list '%s'", x.lo, x.hi, full);
			return -1;
		}
		if (x.hi - x.lo >= SLURM_MAX_RANGE) {
			burst_err_set(err, "range %lu-%lu in host list '%s' names more than %d hosts, which Slurm "
				      "refuses: split it (e.g. [1-65536,65537-...])", x.lo, x.hi, full, SLURM_MAX_RANGE);
			return -1;
		}
		if (*r == ',') {
			r++;
			if (r == g->close) {   /* "n[1,]": Slurm refuses it too */
				burst_err_set(err, "expected a number after ',' in host range of '%s' at character %zu",
					      full, at(full, r));
				return -1;
			}
		} else if (r != g->close) {
			burst_err_set(err, "unexpected '%c' in host range of '%s' at character %zu", *r, full, at(full, r));
			return -1;
		}
		if (g->nr == SLURM_MAX_RANGES) {
			burst_err_set(err, "more than %d ranges in one bracket of host list '%s', which Slurm refuses",
				      SLURM_MAX_RANGES, full);
			return -1;
		}
		if (g->nr == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 8;
			g->r = xrealloc(g->r, g->cap * sizeof(*g->r));
		}
		g->r[g->nr++] = x;
		g->count += x.hi - x.lo + 1;   /* (at most 2^18 ranges of 2^16: no overflow) */
	}
	return 0;
}

/* One item [it->start, it->end): its bracket groups and their ranges.
 * 0, or -1 with err. */
static int parse_item(const char *full, struct item *it, burst_err_t *err)
{
	const char *p, *open = NULL;
	size_t i;

	for (p = it->start; p < it->end; p++) {
		if (*p == '[') {
			if (open) {
				burst_err_set(err, "'[' inside brackets in host list '%s' at character %zu "
					      "(a bracket closes before the next one opens)", full, at(full, p));
				return -1;
			}
			if (it->ng == HOSTLIST_MAX_GROUPS) {
				burst_err_set(err, "more than %d brackets in one name of host list '%s'",
					      HOSTLIST_MAX_GROUPS, full);
				return -1;
			}
			open = p;
		} else if (*p == ']') {
			if (!open) {
				burst_err_set(err, "unbalanced ']' in host list '%s' at character %zu", full, at(full, p));
				return -1;
			}
			memset(&it->g[it->ng], 0, sizeof(it->g[0]));
			it->g[it->ng].open = open;
			it->g[it->ng].close = p;
			it->ng++;
			open = NULL;
		}
	}
	if (open) {
		burst_err_set(err, "missing ']' in host list '%s' at character %zu", full, at(full, open));
		return -1;
	}
	for (i = 0; i < it->ng; i++)
		if (parse_ranges(full, &it->g[i], err) < 0)
			return -1;
	for (i = 0; i + 1 < it->ng; i++)
		if (it->g[i].count > SLURM_MAX_PREFIX) {
			burst_err_set(err, "brackets '%.*s' in host list '%s' name more than %d hosts before the "
				      "last bracket, which Slurm refuses", (int)(it->g[i].close - it->g[i].open + 1),
				      it->g[i].open, full, SLURM_MAX_PREFIX);
			return -1;
		}
	if (!HOSTLIST_SUFFIX && it->ng && it->g[it->ng - 1].close + 1 < it->end) {
		const char *s = it->g[it->ng - 1].close + 1;
		burst_err_set(err, "host list '%s': text after the last ']' ('%.*s' at character %zu), which "
			      "Slurm %s refuses (23.11 and later take it): end the name with its range, or list "
			      "those names one by one", full, (int)(it->end - s), s, at(full, s), BURST_SLURM_VERSION);
		return -1;
	}
	return 0;
}

/* The name of the current choice: the item's text with each group's number. */
static int make_name(const char *full, const struct item *it, const unsigned long *v, const int *w,
		     char *buf, burst_err_t *err)
{
	const char *t = it->start;
	size_t len = 0, i;
	int n;

	for (i = 0; i <= it->ng; i++) {
		const char *e = i < it->ng ? it->g[i].open : it->end;
		if ((size_t)(e - t) > HOSTLIST_MAX_NAME - len)
			goto long_name;
		memcpy(buf + len, t, (size_t)(e - t));
		len += (size_t)(e - t);
		if (i == it->ng)
			break;
		n = snprintf(buf + len, HOSTLIST_MAX_NAME + 1 - len, "%0*lu", w[i], v[i]);
		if (n < 0 || (size_t)n > HOSTLIST_MAX_NAME - len)
			goto long_name;
		len += (size_t)n;
		t = it->g[i].close + 1;
	}
	buf[len] = '\0';
	if (!len) {
		burst_err_set(err, "empty host name in host list '%s'", full);
		return -1;
	}
	return 0;
long_name:
	burst_err_set(err, "host name too long (over %d bytes) in '%s'", HOSTLIST_MAX_NAME, full);
	return -1;
}

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
 * The names of an item, in Slurm's order: order[0] is the outermost group
 * (varies slowest), order[ng - 1] the last group (fastest). depth: how many
 * of them have their value chosen.
 */
static int expand_groups(const char *full, const struct item *it, const size_t *order, size_t depth,
			 unsigned long *v, int *w, struct hostlist *hl, size_t max, burst_err_t *err)
{
	const struct group *g;
	size_t i;
	unsigned long x;

	if (depth == it->ng) {
		char name[HOSTLIST_MAX_NAME + 1];
		if (make_name(full, it, v, w, name, err) < 0)
			return -1;
		return push(hl, name, max, err);
	}
	g = &it->g[order[depth]];
	for (i = 0; i < g->nr; i++)
		for (x = g->r[i].lo; x <= g->r[i].hi; x++) {
			v[order[depth]] = x;
			w[order[depth]] = g->r[i].width;
			if (expand_groups(full, it, order, depth + 1, v, w, hl, max, err) < 0)
				return -1;
		}
	return 0;
}

static int expand_all(const char *expr, struct hostlist *hl, size_t max_hosts,
		      burst_err_t *err)
{
	const char *p = expr;
	size_t before = hl->n;

	if (!expr || !*expr) {
		burst_err_set(err, "empty host list");
		return -1;
	}
	while (*p) {
		struct item it;
		size_t count = 1, i, order[HOSTLIST_MAX_GROUPS];
		unsigned long v[HOSTLIST_MAX_GROUPS];
		int w[HOSTLIST_MAX_GROUPS], depth = 0, rc;
		const char *q;

		while (is_sep(*p))
			p++;
		if (!*p)
			break;
		/* up to a separator outside brackets */
		for (q = p; *q && (depth || !is_sep(*q)); q++) {
			if (*q == '[')
				depth++;
			else if (*q == ']' && depth)
				depth--;
		}
		memset(&it, 0, sizeof(it));
		it.start = p;
		it.end = q;
		if (parse_item(expr, &it, err) < 0) {
			item_free(&it);
			return -1;
		}
		/* refused before it is expanded: a few brackets of small ranges
		 * multiply to more names than any cluster has (found by
		 * tests/fuzz/fuzz_resume: minutes spent making a million names) */
		for (i = 0; i < it.ng && count <= max_hosts; i++)
			count = count > SIZE_MAX / it.g[i].count ? SIZE_MAX : count * it.g[i].count;
		if (count > max_hosts - hl->n) {
			burst_err_set(err, "host list '%s' expands to more than %zu names", expr, max_hosts);
			item_free(&it);
			return -1;
		}
		/* and by the bytes: a name is at most as long as its item, and a
		 * million long names are gigabytes (found the same way) */
		if (count > HOSTLIST_MAX_BYTES / ((size_t)(q - p) + 1)) {
			burst_err_set(err, "host list '%s' expands to more than %d MiB of names",
				      expr, HOSTLIST_MAX_BYTES >> 20);
			item_free(&it);
			return -1;
		}
		/* Slurm's order: the groups before the last one from the one
		 * nearest it outwards, then the last one */
		for (i = 0; i + 1 < it.ng; i++)
			order[i] = it.ng - 2 - i;
		if (it.ng)
			order[it.ng - 1] = it.ng - 1;
		rc = expand_groups(expr, &it, order, 0, v, w, hl, max_hosts, err);
		item_free(&it);
		if (rc < 0)
			return -1;
		p = q;
	}
	if (hl->n == before) {
		burst_err_set(err, "host list '%s' names no host", expr);
		return -1;
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
