/*
 * slurmd_start.h - when a newly admitted node may start slurmd, so that
 * slurmctld cannot miss its registration (lib/core/slurm_compat.h, the
 * registration stall; doc/compat.md, "Launch at allocation").
 *
 * The agent's admission answer may give a node two rules, either of which
 * makes a start safe:
 * - a safe window: the deciding clock (the node's boot clock whose uptime
 *   seconds 22.05's `slurmd -b` counts, or the wall clock from 23.11.1 on)
 *   is at least margin_ms before its next whole second, so slurmd's
 *   registration is made before that clock ticks;
 * - a second: from it on the resume request's second is over (22.05 only;
 *   a node whose resume request came before it).
 * A node launched at allocation gets the window only; a node of a resume
 * request on 22.05 gets both and starts at whichever comes first; a node
 * with neither starts at once.
 */
#ifndef BURST_SLURMD_START_H
#define BURST_SLURMD_START_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* a clock far ahead of the agent's does not hold a node longer than this */
#define SLURMD_START_WAIT_MAX_S 2

struct slurmd_start_rule {
	bool window;          /* the safe window of the deciding clock */
	long margin_ms;       /* 0-900: what is left of its second before it closes
	                       * (slurmd_start_margin_ms) */
	bool second;          /* the second not_before */
	int64_t not_before;   /* an epoch second */
};

enum slurmd_start_why {
	SLURMD_START_FREE,        /* no rule: at once */
	SLURMD_START_SECOND_OVER, /* not_before has come */
	SLURMD_START_WINDOW,      /* inside the window */
	SLURMD_START_WAIT,        /* neither yet: wait the time returned */
};

/* The window's margin in effect: margin_ms, or 250 when it is outside
 * 0-900 (an agent's answer without one, or with one that leaves no window). */
long slurmd_start_margin_ms(const struct slurmd_start_rule *r);

/*
 * How long to wait before slurmd starts, in nanoseconds (0: now).
 * clk_nsec: the deciding clock's nanoseconds into its second; wall: the
 * wall clock now. *why (if not NULL) says which rule decided.
 */
int64_t slurmd_start_wait(const struct slurmd_start_rule *r, long clk_nsec,
			  struct timespec wall, enum slurmd_start_why *why);

#endif
