/*
 * cost.c - the cost arithmetic (see cost.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost.h"
#include "strutil.h"

static double maxd(double a, double b) { return a > b ? a : b; }
static double mind(double a, double b) { return a < b ? a : b; }

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double cost_split(const struct cost_inst *in, const struct cost_hold *holds, size_t nh,
		  double from, double until, double *boot, double *idle, double *share)
{
	double life_end = in->ended > 0 ? in->ended : until;
	double lo = maxd(from, in->launched), hi = mind(until, life_end);
	double join = in->joined > 0 ? mind(in->joined, life_end) : life_end;
	double *pts, total = 0;
	size_t i, k, np = 0;

	*boot = *idle = 0;
	for (i = 0; i < nh; i++)
		share[i] = 0;
	if (hi <= lo)
		return 0;
	*boot = maxd(0, mind(join, hi) - lo);
	total = *boot;
	lo = maxd(lo, join);
	if (hi <= lo)
		return total;
	/* the job phase [lo, hi), cut where a hold starts or ends */
	pts = xcalloc(2 * nh + 2, sizeof(*pts));
	pts[np++] = lo;
	pts[np++] = hi;
	for (i = 0; i < nh; i++) {
		double s = holds[i].start, e = holds[i].end > 0 ? holds[i].end : until;
		if (s > lo && s < hi)
			pts[np++] = s;
		if (e > lo && e < hi)
			pts[np++] = e;
	}
	qsort(pts, np, sizeof(*pts), cmp_double);
	for (k = 0; k + 1 < np; k++) {
		double a = pts[k], b = pts[k + 1];
		size_t holding = 0;
		if (b <= a)
			continue;
		for (i = 0; i < nh; i++) {
			double e = holds[i].end > 0 ? holds[i].end : until;
			if (holds[i].start <= a && e >= b)
				holding++;
		}
		if (!holding)
			*idle += b - a;
		else
			for (i = 0; i < nh; i++) {
				double e = holds[i].end > 0 ? holds[i].end : until;
				if (holds[i].start <= a && e >= b)
					share[i] += (b - a) / (double)holding;
			}
		total += b - a;
	}
	free(pts);
	return total;
}

static void add_item(struct cost_item **items, size_t *n, size_t *cap, size_t inst, ssize_t hold,
		     enum cost_kind kind, double secs, double price)
{
	if (secs <= 0)
		return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*items = xrealloc(*items, *cap * sizeof(**items));
	}
	(*items)[*n].inst = inst;
	(*items)[*n].hold = hold;
	(*items)[*n].kind = kind;
	(*items)[*n].seconds = secs;
	(*items)[*n].dollars = secs * price / 3600.0;
	(*n)++;
}

void cost_items(const struct cost_inst *insts, size_t ni, const struct cost_hold *holds, size_t nh,
		double from, double until, struct cost_item **items, size_t *n)
{
	struct cost_hold *mine = xcalloc(nh + 1, sizeof(*mine));
	size_t *idx = xcalloc(nh + 1, sizeof(*idx));
	double *share = xcalloc(nh + 1, sizeof(*share));
	size_t i, j, cap = 0;

	*items = NULL;
	*n = 0;
	for (i = 0; i < ni; i++) {
		const struct cost_inst *in = &insts[i];
		double boot, idle, life_end = in->ended > 0 ? in->ended : until;
		size_t m = 0;

		/* the holds of its node that overlap its life */
		for (j = 0; j < nh; j++) {
			double e = holds[j].end > 0 ? holds[j].end : until;
			if (!holds[j].node || !in->node || strcmp(holds[j].node, in->node) ||
			    e <= in->launched || holds[j].start >= life_end)
				continue;
			mine[m] = holds[j];
			idx[m++] = j;
		}
		cost_split(in, mine, m, from, until, &boot, &idle, share);
		add_item(items, n, &cap, i, -1, COST_BOOT, boot, in->price);
		add_item(items, n, &cap, i, -1, COST_IDLE, idle, in->price);
		for (j = 0; j < m; j++)
			add_item(items, n, &cap, i, (ssize_t)idx[j], COST_JOB, share[j], in->price);
	}
	free(mine);
	free(idx);
	free(share);
}

double cost_spent(const struct cost_inst *insts, const struct cost_hold *holds, const struct cost_item *items,
		  size_t n, const char *nodeset, const char *account)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct cost_inst *in = &insts[items[i].inst];
		const struct cost_hold *h = items[i].kind == COST_JOB && items[i].hold >= 0 ? &holds[items[i].hold] : NULL;
		if (isnan(items[i].dollars))
			continue;
		if (nodeset && (!in->nodeset || strcmp(in->nodeset, nodeset)))
			continue;
		if (account && (!h || !h->account || strcmp(h->account, account)))
			continue;
		sum += items[i].dollars;
	}
	return sum;
}

static const char *const period_names[PERIOD_COUNT] = { "day", "week", "month", "year" };

int cost_period_parse(const char *s)
{
	for (int p = 0; p < PERIOD_COUNT; p++)
		if (s && str_ieq(s, period_names[p]))
			return p;
	return -1;
}

const char *cost_period_name(enum cost_period p)
{
	return (int)p >= 0 && p < PERIOD_COUNT ? period_names[p] : "?";
}

double cost_period_start(enum cost_period p, double t)
{
	time_t s = (time_t)floor(t);
	struct tm tm;

	gmtime_r(&s, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	switch (p) {
	case PERIOD_WEEK:
		/* back to Monday (tm_wday: 0 is Sunday) */
		tm.tm_mday -= (tm.tm_wday + 6) % 7;
		break;
	case PERIOD_MONTH:
		tm.tm_mday = 1;
		break;
	case PERIOD_YEAR:
		tm.tm_mday = 1;
		tm.tm_mon = 0;
		break;
	default:
		break;
	}
	tm.tm_isdst = 0;
	return (double)timegm(&tm);
}

void cost_insts_free(struct cost_inst *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].provider);
		free(v[i].instance);
		free(v[i].node);
		free(v[i].nodeset);
		free(v[i].type);
		free(v[i].region);
		free(v[i].price_source);
	}
	free(v);
}

void cost_holds_free(struct cost_hold *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].node);
		free(v[i].user);
		free(v[i].account);
		free(v[i].partition);
	}
	free(v);
}
