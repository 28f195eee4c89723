/*
 * crash.h - named crash points, for tests only (doc/crash_points.md). With
 * BURST_CRASH_POINT=NAME[:COUNT] in its environment the agent ends at once
 * (_exit(CRASH_EXIT), no cleanup, as a SIGKILL or a power cut would leave
 * it) the COUNT-th time (default 1) it reaches the point NAME. Unset, every
 * point is one load and one compare. burst-agent --list-crash-points
 * prints the table.
 */
#ifndef BURST_CRASH_H
#define BURST_CRASH_H

#include <stddef.h>
#include <stdio.h>

#include "node_state.h"

/* the exit status of a crash at a point: a test tells it from any other end */
#define CRASH_EXIT 86

enum crash_point {
	/* a transition to each state: about to be written, and durable */
	CP_STATE_FIRST,
	CP_STATE_LAST = CP_STATE_FIRST + 2 * NS_COUNT - 1,
	/* each provider call, on its worker: before it is made, once it answered */
	CP_LAUNCH_BEFORE, CP_LAUNCH_AFTER,
	CP_TERMINATE_BEFORE, CP_TERMINATE_AFTER,
	CP_LIST_BEFORE, CP_LIST_AFTER,
	CP_EXISTS_BEFORE, CP_EXISTS_AFTER,
	CP_CONSOLE_BEFORE, CP_CONSOLE_AFTER,
	CP_ENDED_BEFORE, CP_ENDED_AFTER,
	/* spool intake */
	CP_SPOOL_READ, CP_SPOOL_TAKEN, CP_SPOOL_REMOVED,
	/* join and admission */
	CP_JOIN_RECEIVED, CP_JOIN_VERIFIED, CP_JOIN_REJECTED, CP_JOIN_ADMITTED, CP_JOIN_ANSWERED,
	/* inside a driver's launch, on the provider's worker (provider_crash) */
	CP_GCP_BULK_SENT, CP_GCP_BULK_DONE, CP_GCP_METADATA,
	CP_AZURE_PUT_SENT, CP_AZURE_OP_DONE,
	CP_COUNT
};

/* The point of a transition to s: written next (after false) or durable (after true). */
#define CP_STATE(s, after) ((enum crash_point)(CP_STATE_FIRST + 2 * (int)(s) + ((after) ? 1 : 0)))

/* Read BURST_CRASH_POINT (once, before any thread): 0, or -1 with why
 * (an unknown name, a bad count) for the caller to say. */
int crash_init(char *why, size_t len);

/* The point p is reached: the end if it is armed and this is its COUNT-th time. */
void crash_reached_(enum crash_point p);
extern int crash_armed;   /* the armed point, -1: none */
#define crash_point(p) do { if (crash_armed >= 0) crash_reached_(p); } while (0)

/* The name and description of p; NULL past the end. */
const char *crash_point_name(enum crash_point p);
const char *crash_point_desc(enum crash_point p);

/* The table, one point a line: NAME<TAB>DESCRIPTION. */
void crash_points_print(FILE *f);

/*
 * Hold points, for tests only (doc/crash_points.md, "Hold points"): with
 * BURST_HOLD_POINT=NAME:FIFO[,NAME:FIFO...] the thread that reaches the
 * point NAME the first time logs "hold point NAME reached" and waits there
 * until the test writes to FIFO (a named pipe it made): a slow munged or
 * cloud API, or a slow disk, that the test ends when it likes. Each is
 * held once; unset, every point is one load and one compare.
 */
enum hold_point {
	HP_MUNGE_DECODE,         /* a credential about to be decoded (join reports, notices) */
	HP_STATE_SYNC,           /* an admission committed, about to be made durable */
	HP_PROVIDER_CONSOLE,     /* on the provider's worker: a console about to be read */
	HP_PROVIDER_ENDED,       /* on the provider's worker: whether instances ended, about to be asked */
	HP_COUNT
};
/* Read BURST_HOLD_POINT (once, before any thread): 0, or -1 with why. */
int hold_init(char *why, size_t len);
void hold_reached_(enum hold_point p);
extern int hold_armed;    /* how many points are held (0: none) */
#define hold_point(p) do { if (hold_armed) hold_reached_(p); } while (0)

#endif
