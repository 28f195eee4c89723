/*
 * loglimit.h - lines a peer can make the agent log (a malformed node report,
 * a refused control connection, an answer that cannot be written) limited
 * per call site, so that a flood from a hostile or broken client cannot
 * fill the disk or bury the lines that matter: LOGLIMIT_BURST lines at
 * once, then one every LOGLIMIT_EVERY seconds; what is held back is counted
 * and said in one line (loglimit_flush), nothing is lost from the count.
 * The metrics count every event whatever is logged.
 *
 * Times are seconds on any one clock (the agent's mono()).
 */
#ifndef BURST_LOGLIMIT_H
#define BURST_LOGLIMIT_H

#include <stdbool.h>

#include "ratelimit.h"

#define LOGLIMIT_BURST 10
#define LOGLIMIT_EVERY 10.0

struct loglimit {
	const char *what;            /* what the lines are, for the summary line */
	struct tbucket b;
	bool init;
	unsigned long held;          /* lines held back since the last summary */
	double held_since;           /* when the first of them came */
	struct loglimit *next;       /* the caller's list of limits (loglimit_flush) */
};

/* Whether a line at t is logged; when not, it is counted as held back. */
bool loglimit_take(struct loglimit *l, double t);
/*
 * The lines held back, once the first of them is LOGLIMIT_EVERY old (or at
 * once with force): returns their count and when the first came (*since),
 * and starts counting again; 0 when there is nothing to say yet.
 */
unsigned long loglimit_flush(struct loglimit *l, double t, bool force, double *since);

#endif
