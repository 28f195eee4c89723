/*
 * loglimit.c - a token bucket per call site for lines a peer can provoke
 * (loglimit.h).
 */
#include "loglimit.h"

bool loglimit_take(struct loglimit *l, double t)
{
	if (!l->init) {
		struct rate_spec s = { LOGLIMIT_BURST, 1.0 / LOGLIMIT_EVERY };
		tb_init(&l->b, &s, t);
		l->init = true;
	}
	if (tb_tokens(&l->b, t) >= 1.0) {
		tb_take(&l->b, 1.0, t);
		return true;
	}
	if (!l->held++)
		l->held_since = t;
	return false;
}

unsigned long loglimit_flush(struct loglimit *l, double t, bool force, double *since)
{
	unsigned long n = l->held;

	if (!n || (!force && t - l->held_since < LOGLIMIT_EVERY))
		return 0;
	*since = l->held_since;
	l->held = 0;
	return n;
}
