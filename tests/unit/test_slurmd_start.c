/*
 * test_slurmd_start.c - when an admitted node may start slurmd
 * (lib/admit/slurmd_start.h): at once with no rule; inside the safe window of
 * its clock's second; from the second after the resume request's; at
 * whichever of the two comes first when it has both (a node of a resume
 * request on Slurm before 23.11.1); and never longer than
 * SLURMD_START_WAIT_MAX_S for a second far ahead.
 */
#include <stdint.h>
#include <time.h>

#include "slurmd_start.h"
#include "tap.h"

#define MS 1000000L

static struct timespec at(time_t s, long ms)
{
	struct timespec t = { .tv_sec = s, .tv_nsec = ms * MS };
	return t;
}

int main(void)
{
	struct slurmd_start_rule none = { 0 };
	struct slurmd_start_rule win = { .window = true, .margin_ms = 250 };
	struct slurmd_start_rule sec = { .second = true, .not_before = 1001 };
	struct slurmd_start_rule both = { .window = true, .margin_ms = 250, .second = true, .not_before = 1001 };
	struct slurmd_start_rule odd = { .window = true, .margin_ms = 5000 };
	enum slurmd_start_why why;
	int64_t w;

	w = slurmd_start_wait(&none, 990 * MS, at(1000, 990), &why);
	ok(w == 0 && why == SLURMD_START_FREE, "no rule: at once (%lld)", (long long)w);

	/* the window: the clock's second before its last 250 ms */
	w = slurmd_start_wait(&win, 100 * MS, at(1000, 900), &why);
	ok(w == 0 && why == SLURMD_START_WINDOW, "window: .100 of the clock's second is inside it");
	w = slurmd_start_wait(&win, 749 * MS, at(1000, 0), &why);
	ok(w == 0 && why == SLURMD_START_WINDOW, "window: .749 is inside it");
	w = slurmd_start_wait(&win, 750 * MS, at(1000, 0), &why);
	ok(why == SLURMD_START_WAIT && w == 251 * MS, "window: at .750 wait until just past the tick (%lld ns)", (long long)w);
	w = slurmd_start_wait(&win, 990 * MS, at(1000, 0), &why);
	ok(why == SLURMD_START_WAIT && w == 11 * MS, "window: at .990, 11 ms (%lld ns)", (long long)w);
	/* the window's clock, not the wall clock, decides */
	w = slurmd_start_wait(&win, 990 * MS, at(1000, 100), &why);
	ok(why == SLURMD_START_WAIT, "window: the clock at .990 with the wall clock at .100 waits");
	w = slurmd_start_wait(&odd, 800 * MS, at(1000, 0), &why);
	ok(why == SLURMD_START_WAIT && w == 201 * MS, "a margin out of 0-900 ms counts as 250 ms");
	ok(slurmd_start_margin_ms(&odd) == 250, "  and is said as 250 ms");
	odd.margin_ms = -1;
	ok(slurmd_start_margin_ms(&odd) == 250, "  as is none (-1)");
	odd.margin_ms = 100;
	ok(slurmd_start_margin_ms(&odd) == 100, "  one inside it is kept");

	/* the second alone */
	w = slurmd_start_wait(&sec, 100 * MS, at(1000, 400), &why);
	ok(why == SLURMD_START_WAIT && w == 600 * MS, "second: in the resume request's second, wait for the next (%lld ns)", (long long)w);
	w = slurmd_start_wait(&sec, 100 * MS, at(1001, 0), &why);
	ok(w == 0 && why == SLURMD_START_SECOND_OVER, "second: from it on, at once");
	sec.not_before = 1010;
	w = slurmd_start_wait(&sec, 100 * MS, at(1000, 500), &why);
	ok(why == SLURMD_START_WAIT && w == (int64_t)SLURMD_START_WAIT_MAX_S * 1000 * MS,
	   "second: far ahead (a wrong clock), at most %d s (%lld ns)", SLURMD_START_WAIT_MAX_S, (long long)w);

	/* both: whichever comes first */
	w = slurmd_start_wait(&both, 300 * MS, at(1000, 400), &why);
	ok(w == 0 && why == SLURMD_START_WINDOW, "both: in the request's second but inside the window, at once");
	w = slurmd_start_wait(&both, 900 * MS, at(1001, 200), &why);
	ok(w == 0 && why == SLURMD_START_SECOND_OVER, "both: outside the window but the request's second over, at once");
	w = slurmd_start_wait(&both, 900 * MS, at(1000, 950), &why);
	ok(why == SLURMD_START_WAIT && w == 50 * MS, "both: the second comes first (%lld ns)", (long long)w);
	w = slurmd_start_wait(&both, 900 * MS, at(1000, 400), &why);
	ok(why == SLURMD_START_WAIT && w == 101 * MS, "both: the window opens first (%lld ns)", (long long)w);

	/* why may be NULL */
	ok(slurmd_start_wait(&win, 999 * MS, at(1000, 0), NULL) == 2 * MS, "without why: the same wait");
	return done_testing();
}
