/*
 * test_loglimit.c - lines a peer can provoke, limited per call site
 * (lib/core/loglimit.c): the first LOGLIMIT_BURST at once, then one every
 * LOGLIMIT_EVERY seconds; every line held back is counted and said once.
 */
#include <stdio.h>

#include "loglimit.h"
#include "tap.h"

int main(void)
{
	struct loglimit l = { .what = "test" };
	unsigned long logged = 0, held, n;
	double since = -1, t;
	int i;

	for (i = 0; i < LOGLIMIT_BURST; i++)
		logged += loglimit_take(&l, 100.0);
	ok(logged == LOGLIMIT_BURST, "the first %d lines at once are logged (%lu)", LOGLIMIT_BURST, logged);
	ok(!loglimit_take(&l, 100.0), "... the next one is held back");
	ok(loglimit_flush(&l, 100.0 + LOGLIMIT_EVERY / 2, false, &since) == 0,
	   "nothing is said of it before it is LOGLIMIT_EVERY old");
	ok(!loglimit_take(&l, 100.0 + LOGLIMIT_EVERY / 2), "a line half a period later is held back too");
	ok(loglimit_take(&l, 100.0 + LOGLIMIT_EVERY), "one is logged a whole period after the burst");
	n = loglimit_flush(&l, 100.0 + LOGLIMIT_EVERY, false, &since);
	ok(n == 2 && since == 100.0, "the summary counts the 2 held back, the first at t=100 (%lu, %.1f)", n, since);
	ok(loglimit_flush(&l, 200.0, false, &since) == 0, "... and says them once");

	/* a flood of 1000 lines over 50 s: a burst, then one each 10 s; the
	 * rest held back, and the counts add up to every line */
	struct loglimit f = { .what = "flood" };
	logged = held = 0;
	for (i = 0; i < 1000; i++) {
		t = 1000.0 + i * 0.05;
		if (loglimit_take(&f, t))
			logged++;
		held += loglimit_flush(&f, t, false, &since);
	}
	held += loglimit_flush(&f, t, true, &since);
	ok(logged == LOGLIMIT_BURST + 4 || logged == LOGLIMIT_BURST + 5,
	   "a flood of 1000 lines in 50 s logs the burst and about one each %.0f s (%lu)", LOGLIMIT_EVERY, logged);
	ok(logged + held == 1000, "logged and held back add up to the 1000 (%lu + %lu)", logged, held);
	ok(loglimit_flush(&f, t + 100, true, &since) == 0, "forced with nothing held back: nothing to say");

	/* after a quiet while the burst is whole again */
	logged = 0;
	for (i = 0; i < LOGLIMIT_BURST + 3; i++)
		logged += loglimit_take(&f, t + 1000.0);
	ok(logged == LOGLIMIT_BURST, "after a quiet while, a whole burst again (%lu)", logged);
	return done_testing();
}
