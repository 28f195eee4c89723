/*
 * test_timer.c - the agent's table of periodic work (burst-agent/timer.c),
 * alone (no agent): entries run in the order of their phase, then in the
 * order they were added, whatever order the parts add them in; one with a
 * period runs at once and then only once its period has passed; a bad
 * phase, a missing function or an entry added while the table runs is
 * refused.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "timer.h"

static char trace[256];

static void mark(const char *s)
{
	size_t l = strlen(trace);
	snprintf(trace + l, sizeof(trace) - l, "%s%s", l ? " " : "", s);
}

static void a(void) { mark("a"); }
static void b(void) { mark("b"); }
static void c(void) { mark("c"); }
static void d(void) { mark("d"); }
static void e(void) { mark("e"); }

static int added_inside = 1;
static void adder(void)
{
	mark("adder");
	added_inside = timer_add(TP_LAST, 0, a, "late");
}

int main(void)
{
	char desc[512];

	/* added out of order: the last phase first, two of one phase apart */
	ok(timer_add(TP_LAST, 0, e, "e") == 0, "an entry of the last phase");
	ok(timer_add(TP_ACT, 0, b, "b") == 0, "an entry of the act phase");
	ok(timer_add(TP_FIRST, 0, a, "a") == 0, "an entry of the first phase");
	ok(timer_add(TP_ACT, 0, c, "c") == 0, "a second entry of the act phase");
	ok(timer_add(TP_CHECKS, 2.0, d, "d") == 0, "an entry due every 2 s");
	ok(timer_add(TP_COUNT, 0, a, "x") < 0 && timer_add((enum timer_phase)-1, 0, a, "x") < 0,
	   "a phase that is not one is refused");
	ok(timer_add(TP_ACT, 0, NULL, "x") < 0 && timer_add(TP_ACT, -1, a, "x") < 0,
	   "no function, or a negative period, is refused");

	trace[0] = '\0';
	ok(timer_run(100.0) == 5, "the first run runs every entry");
	is_str(trace, "a b c d e", "... by phase, then in the order added");

	trace[0] = '\0';
	ok(timer_run(101.0) == 4, "1 s on: all but the 2 s entry");
	is_str(trace, "a b c e", "... the 2 s entry not yet due");

	trace[0] = '\0';
	timer_run(101.9);
	is_str(trace, "a b c e", "1.9 s after its last run: still not due");

	trace[0] = '\0';
	timer_run(102.0);
	is_str(trace, "a b c d e", "2 s after its last run: due");

	trace[0] = '\0';
	timer_run(102.5);
	is_str(trace, "a b c e", "its period counts from its last run");

	timer_describe(desc, sizeof(desc));
	is_str(desc, "first a 0\nact b 0\nact c 0\nchecks d 2\nlast e 0\n", "the table described in running order");

	/* an entry that adds one while the table runs: refused */
	timer_reset();
	ok(timer_add(TP_ACT, 0, adder, "adder") == 0, "a table of one entry that adds another when it runs");
	trace[0] = '\0';
	ok(timer_run(0) == 1 && added_inside < 0, "an entry added while the table runs is refused");
	trace[0] = '\0';
	timer_run(1);
	is_str(trace, "adder", "... and the table is as it was");

	timer_reset();
	trace[0] = '\0';
	ok(timer_run(5) == 0 && !trace[0], "after a reset nothing runs");
	return done_testing();
}
