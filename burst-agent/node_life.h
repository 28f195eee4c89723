/*
 * node_life.h - the life of a node (doc/design.md §7), in one place. Every
 * change of a node's record goes through node_life_apply: an event of the
 * agent (a resume request, a launch's answer, a join report, a timeout)
 * taken in the node's present state leads along one edge of the table
 * below to its next state, with that edge's effect. An event the table has
 * no edge for in that state is refused, logged as a bug and counted
 * (burst_node_life_refused_total): no part of the agent sets a state of
 * its own.
 *
 * The table (node_life_table.c) is pure: it needs nothing of the agent,
 * and tests/unit/test_node_life.c holds it against the table of
 * doc/design.md §7, so that the two cannot drift. The effects, the writes
 * and the rules run every tick (node_life.c) are the agent's.
 */
#ifndef BURST_NODE_LIFE_H
#define BURST_NODE_LIFE_H

#include <stdbool.h>
#include <stddef.h>

#include "node_state.h"

struct node_rec;

/* What happened to a node: the table's third column, by these names. */
enum life_event {
	LE_RESUME,               /* Slurm's resume request (the spool) */
	LE_EARLY_LAUNCH,         /* a job's allocation (EarlyLaunch=, the slurmctld prolog) */
	LE_LAUNCH,               /* an instance type picked: the launch intent */
	LE_NO_CANDIDATE,         /* no instance type of the node set can be launched now */
	LE_OVER_BUDGET,          /* the launch would cross a budget: its job is held */
	LE_ACCOUNT_REFUSED,      /* its job's account is none of its user's (budgets count accounts): held */
	LE_LAUNCHED,             /* the provider launched its instance */
	LE_ADOPTED,              /* the reconciler found its instance before the launch's answer */
	LE_CAPACITY,             /* no capacity (or quota) for the type: the next candidate */
	LE_LAUNCH_RETRY,         /* throttled or a transient error: the same attempt later */
	LE_LAUNCH_FAILED,        /* the launch failed for good */
	LE_LAUNCHED_MEANWHILE,   /* an instance launched while the node was being terminated */
	LE_ADMIT,                /* its join report passed */
	LE_REJECT,               /* its join report failed admission */
	LE_READMIT,              /* its report again, its answer lost: answered again */
	LE_BOOT_TIMEOUT,         /* no report within BootTimeout */
	LE_INSTANCE_ENDED,       /* its instance ended on its own */
	LE_SLURMD_UNREGISTERED,  /* its slurmd did not register within RegisterTimeout */
	LE_SLURMD_REGISTERED,    /* its slurmd registered after failures: they are forgotten */
	LE_NOTICE,               /* a spot interruption notice */
	LE_TERMINATE_REJECTED,   /* a rejected node's instance goes */
	LE_TERMINATED,           /* its instance is gone */
	LE_TERMINATED_RESUME,    /* its instance is gone; Slurm asked for it meanwhile */
	LE_SUSPEND,              /* Slurm's suspend (or resume-fail) request */
	LE_SUSPEND_WITHDRAWN,    /* a suspend withdraws a resume request made meanwhile */
	LE_RESUME_SERVED,        /* a resume of a node launched at allocation: served already */
	LE_RESUME_AGAIN,         /* a resume while its instance goes: launched again after */
	LE_EARLY_ADOPTED,        /* launched at one job's allocation, adopted by another */
	LE_EARLY_AGAIN,          /* a job's allocation while its instance goes: launched again after */
	LE_EARLY_TAKEN,          /* launched at allocation: Slurm has taken it over */
	LE_EARLY_RECLAIMED,      /* launched at allocation; its job left it first */
	LE_PROLOG_REFUSED,       /* the job prolog on it refused its job */
	LE_LOST,                 /* its instance vanished (the reconciler) */
	LE_LOST_AT_RESTART,      /* its instance was not there when the agent started */
	LE_LOST_CLEARED,         /* a lost node's instance record cleared */
	LE_COOLDOWN_OVER,        /* its cooldown is over: powered down in Slurm again */
	LE_COUNT
};

/* What an edge does besides writing the node's record and its event. */
enum life_effect {
	LX_NONE,
	LX_FAIL,                 /* the node failed: Slurm sets it DOWN with the reason, its job
				  * goes on elsewhere (or is held), the node cools down */
	LX_BOOT_FAIL,            /* the same, the end of its instance's console in the event log */
	LX_SLURMD_FAIL,          /* its console in the event log; launched again, after a longer
				  * wait each time, at most RELAUNCH_MAX times; then LX_FAIL */
	LX_COUNT
};

/* One edge: in state from, event ev leads to state to (to == from: the
 * record changes, the state stays), doing effect. */
struct life_edge {
	enum node_state from;
	enum node_state to;
	enum life_event ev;
	enum life_effect effect;
};

/* The table: every edge, in the order doc/design.md §7 lists them. */
const struct life_edge *node_life_edges(size_t *n);
/* The edge of ev in state from; NULL: none (the event is refused). */
const struct life_edge *node_life_edge(enum node_state from, enum life_event ev);
/* Names, as the doc's table writes them ("resume", "fail"); NULL past the end. */
const char *life_event_name(enum life_event ev);
const char *life_effect_name(enum life_effect fx);

/*
 * Event ev happened to node, whose record r was read from the state (its
 * fields set by the caller as the event has them: an instance, a job, an
 * error); why says it, in the node's event log. Along the edge of ev from
 * r->state, if that is still the node's state when written (a
 * compare-and-set): 1 done; 0 the node had moved on (nothing done); -1 not
 * written (logged): the table has no such edge, or the state could not be
 * written. An effect that reads the instance's console first
 * (LX_BOOT_FAIL, LX_SLURMD_FAIL) reads it off the loop and is done once
 * it is read, if the node is still as it was (same state, instance and
 * attempt): 0 then.
 */
int node_life_apply(const char *node, struct node_rec *r, enum life_event ev, const char *why);
/* The same, a failed node's job held with hold_note in its comment (LE_OVER_BUDGET,
 * LE_ACCOUNT_REFUSED). */
int node_life_apply_held(const char *node, struct node_rec *r, enum life_event ev, const char *why,
			 const char *hold_note);

/*
 * The transitions of many nodes in one transaction (one sync), for a
 * spool request, a node set's launch intents and a launch's outcome.
 * Nothing a transition leads to may be done before node_life_commit
 * returns 0 (a failed node's DOWN is held until then); after -1 none of
 * the batch's transitions happened.
 */
void node_life_begin(void);
int node_life_commit(void);
/*
 * A batch whose commit does not wait for the disk on the loop: it is
 * written (and seen by the agent) at once, made durable on a worker
 * (fsync), and only then is what its transitions lead to done (their log
 * lines, crash points, a failed node's DOWN), and then(arg, durable)
 * called on the loop (durable false: not written, or not known to be on
 * the disk; the caller answers no one who would act on it). The worker:
 * node_life_start; node_life_stop at exit (the batches not synced yet are
 * done then, unanswered).
 */
void node_life_begin_unsynced(void);
void node_life_commit_then(void (*then)(void *arg, bool durable), void *arg);
int node_life_start(void);
void node_life_stop(void);

/* The rules of each turn (timer.h): a rejected node's instance is
 * terminated; a node that missed BootTimeout failed. */
void node_life_timers(void);

/* At exit: what node life keeps in memory. */
void node_life_fini(void);

#endif
