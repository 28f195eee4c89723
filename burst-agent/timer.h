/*
 * timer.h - the agent's periodic work, as a table each part registers with
 * (the shape of chrony's scheduler: a function and how often it is due,
 * not a fixed list in the loop). At start-up each part adds its own
 * entries (its *_timers function); the loop runs the table once a tick,
 * and at once after an event (timer_run). An entry runs when it is due,
 * in the order of its phase, then in the order entries were added; one
 * with a period runs at its first run and then once that period has passed
 * since its last run. Pure: the clock is the caller's, and nothing here
 * knows the agent (tests/unit/test_timer.c).
 */
#ifndef BURST_TIMER_H
#define BURST_TIMER_H

#include <stddef.h>

/* The phases of a turn, in their order. */
enum timer_phase {
	TP_FIRST,                /* the log's held-back lines, the lease, the listening sockets */
	TP_INTAKE,               /* requests taken in (the spool) and launched */
	TP_LIFE,                 /* node life's own rules (a rejected node's instance goes) */
	TP_ACT,                  /* terminations, cooldowns, Slurm's checks, costs */
	TP_RECONCILE,            /* the reconciler, the nodes and jobs it found lost */
	TP_CHECKS,               /* instances that ended, nodes past BootTimeout */
	TP_LAST,                 /* what the turn asked of Slurm, sent in one go */
	TP_COUNT
};

typedef void (*timer_fn)(void);

/* Add fn to the table (every: seconds between its runs; 0: each turn);
 * name says it in timer_describe. 0, or -1 when the phase is not one, or
 * while the table runs (entries are added at start-up). */
int timer_add(enum timer_phase phase, double every, timer_fn fn, const char *name);
/* Run what is due at t (seconds on the caller's clock): how many ran. */
size_t timer_run(double t);
/* The entries, in the order they run, one a line ("PHASE NAME EVERY"), into buf. */
void timer_describe(char *buf, size_t len);
/* Forget every entry (at exit; between tests). */
void timer_reset(void);

#endif
