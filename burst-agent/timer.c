/*
 * burst-agent: the table of periodic work (timer.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "timer.h"

struct timer {
	enum timer_phase phase;
	double every;
	double last;             /* when it last ran */
	bool ran;                /* it has run once */
	timer_fn fn;
	const char *name;
};

static struct timer *timers;
static size_t ntimers;
static bool running;

static const char *const phase_names[TP_COUNT] = {
	[TP_FIRST] = "first", [TP_INTAKE] = "intake", [TP_LIFE] = "life", [TP_ACT] = "act",
	[TP_RECONCILE] = "reconcile", [TP_CHECKS] = "checks", [TP_LAST] = "last",
};

int timer_add(enum timer_phase phase, double every, timer_fn fn, const char *name)
{
	size_t at;

	if ((int)phase < 0 || phase >= TP_COUNT || !fn || every < 0 || running)
		return -1;
	/* kept in running order: after every entry of its phase and those before */
	for (at = 0; at < ntimers && timers[at].phase <= phase; at++)
		;
	timers = xrealloc(timers, (ntimers + 1) * sizeof(*timers));
	memmove(timers + at + 1, timers + at, (ntimers - at) * sizeof(*timers));
	timers[at] = (struct timer){ .phase = phase, .every = every, .fn = fn, .name = name ? name : "?" };
	ntimers++;
	return 0;
}

size_t timer_run(double t)
{
	size_t i, n = 0;

	running = true;
	for (i = 0; i < ntimers; i++) {
		struct timer *e = &timers[i];
		if (e->every > 0 && e->ran && t - e->last < e->every)
			continue;
		e->ran = true;
		e->last = t;
		e->fn();
		n++;
	}
	running = false;
	return n;
}

void timer_describe(char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < ntimers && off < len; i++) {
		int k = snprintf(buf + off, len - off, "%s %s %g\n", phase_names[timers[i].phase], timers[i].name,
				 timers[i].every);
		if (k < 0)
			break;
		off += (size_t)k;
	}
}

void timer_reset(void)
{
	free(timers);
	timers = NULL;
	ntimers = 0;
}
