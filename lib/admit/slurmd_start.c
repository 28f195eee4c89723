/*
 * slurmd_start.c - when a newly admitted node may start slurmd
 * (slurmd_start.h).
 */
#include "slurmd_start.h"

#define NS 1000000000LL

long slurmd_start_margin_ms(const struct slurmd_start_rule *r)
{
	return r->margin_ms < 0 || r->margin_ms > 900 ? 250 : r->margin_ms;
}

int64_t slurmd_start_wait(const struct slurmd_start_rule *r, long clk_nsec,
			  struct timespec wall, enum slurmd_start_why *why)
{
	enum slurmd_start_why w_dummy;
	int64_t wait = -1;

	if (!why)
		why = &w_dummy;
	if (!r->window && !r->second) {
		*why = SLURMD_START_FREE;
		return 0;
	}
	if (r->second && (int64_t)wall.tv_sec >= r->not_before) {
		*why = SLURMD_START_SECOND_OVER;
		return 0;
	}
	if (r->window) {
		if (clk_nsec < NS - slurmd_start_margin_ms(r) * 1000000LL) {
			*why = SLURMD_START_WINDOW;
			return 0;
		}
		/* just past the clock's tick, where the window opens again */
		wait = NS - clk_nsec + 1000000LL;
	}
	if (r->second) {
		int64_t s = (r->not_before - (int64_t)wall.tv_sec) * NS - wall.tv_nsec;

		if (s > SLURMD_START_WAIT_MAX_S * NS)
			s = SLURMD_START_WAIT_MAX_S * NS;
		if (wait < 0 || s < wait)
			wait = s;
	}
	*why = SLURMD_START_WAIT;
	return wait;
}
