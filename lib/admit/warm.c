/*
 * warm.c - a warm pool's decisions (warm.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provenance.h"
#include "warm.h"

/* why += "; " + text, within len */
static void add_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t l;

	if (!why || !len)
		return;
	l = strlen(why);
	if (l + 3 >= len)
		return;
	if (l)
		l += (size_t)snprintf(why + l, len - l, "; ");
	va_start(ap, fmt);
	if (l < len)
		vsnprintf(why + l, len - l, fmt, ap);
	va_end(ap);
}

/* Whether part of the two records (a member of each, or NULL) serializes the same. */
static int same(json_object *a, json_object *b)
{
	char *sa, *sb;
	int r;

	if (!a || !b)
		return !a && !b;
	sa = provenance_serialize(a, false);
	sb = provenance_serialize(b, false);
	r = !strcmp(sa, sb);
	free(sa);
	free(sb);
	return r;
}

static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;

	return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str_or(json_object *v, const char *dflt)
{
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : dflt;
}

int warm_provenance_diff(json_object *admitted, json_object *now, char *why, size_t len)
{
	static const char *const kernel_keys[] = { "release", "build_id", "version", NULL };
	static const char *const parts[] = { "drivers", "firmware", "cpu", "accelerators", "interconnect", NULL };
	int n = 0;

	if (why && len)
		why[0] = '\0';
	if (!admitted || !json_object_is_type(admitted, json_type_object) || !now ||
	    !json_object_is_type(now, json_type_object)) {
		add_why(why, len, "the %s provenance record is no JSON object",
			!admitted || !json_object_is_type(admitted, json_type_object) ? "admitted" : "new");
		return -1;
	}
	for (size_t i = 0; kernel_keys[i]; i++) {
		json_object *a = member(member(admitted, "kernel"), kernel_keys[i]);
		json_object *b = member(member(now, "kernel"), kernel_keys[i]);
		if (!same(a, b)) {
			add_why(why, len, "kernel.%s %s -> %s", kernel_keys[i], str_or(a, "(none)"), str_or(b, "(none)"));
			n++;
		}
	}
	for (size_t i = 0; parts[i]; i++)
		if (!same(member(admitted, parts[i]), member(now, parts[i]))) {
			add_why(why, len, "%s", parts[i]);
			n++;
		}
	if (!same(member(member(admitted, "memory"), "total_bytes"), member(member(now, "memory"), "total_bytes"))) {
		add_why(why, len, "memory.total_bytes");
		n++;
	}
	return n;
}

enum warm_keep warm_keep(int pool_size, double budget, unsigned members, double cost, double price,
			 char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	if (pool_size <= 0) {
		if (why)
			snprintf(why, len, "the node set keeps no warm pool");
		return WARM_NO_POOL;
	}
	if (members >= (unsigned)pool_size) {
		if (why)
			snprintf(why, len, "the warm pool is full (%u of WarmPool=%d)", members, pool_size);
		return WARM_FULL;
	}
	/* a cent's hundredth of slack: the sum of a few prices is not exact */
	if (!isnan(budget) && cost + price > budget + 1e-6) {
		if (why)
			snprintf(why, len, "the warm pool would cost %.4f USD per hour with it (%u members at %.4f, this one %.4f), over WarmPoolBudget=%.4f",
				 cost + price, members, cost, price, budget);
		return WARM_OVER_BUDGET;
	}
	return WARM_KEEP;
}

int warm_needs_acceptance(const struct warm_member *m, double now, int max_age, const char *blessings_now,
			  const char *acceptance_now, char *why, size_t len)
{
	const char *bl = m->blessings ? m->blessings : "", *ac = m->acceptance ? m->acceptance : "";
	int need = 0;

	if (why && len)
		why[0] = '\0';
	if (strcmp(bl, blessings_now ? blessings_now : "")) {
		add_why(why, len, "the blessings changed (%s -> %s)", bl[0] ? bl : "none",
			blessings_now && *blessings_now ? blessings_now : "none");
		need = 1;
	}
	if (strcmp(ac, acceptance_now ? acceptance_now : "")) {
		add_why(why, len, "the acceptance suite changed (%s -> %s)", ac[0] ? ac : "none",
			acceptance_now && *acceptance_now ? acceptance_now : "none");
		need = 1;
	}
	if (now - m->admitted_at > (double)max_age) {
		add_why(why, len, "admitted %.0f s ago, over WarmPoolMaxAge=%d s", now - m->admitted_at, max_age);
		need = 1;
	}
	return need;
}
