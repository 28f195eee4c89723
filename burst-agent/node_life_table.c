/*
 * burst-agent: the edges of a node's life (node_life.h), the table alone.
 * Pure: no state, no agent. doc/design.md §7 lists the same edges in the
 * same order (tests/unit/test_node_life.c holds one against the other).
 */
#include <stddef.h>

#include "node_life.h"

#define PD NS_POWERED_DOWN
#define RQ NS_REQUESTED
#define LA NS_LAUNCHING
#define BO NS_BOOTING
#define AD NS_ADMITTED
#define TE NS_TERMINATING
#define RJ NS_REJECTED
#define LO NS_LOST

static const struct life_edge edges[] = {
	/* the way up */
	{ PD, RQ, LE_RESUME, LX_NONE },
	{ PD, RQ, LE_EARLY_LAUNCH, LX_NONE },
	{ RQ, LA, LE_LAUNCH, LX_NONE },
	{ LA, BO, LE_LAUNCHED, LX_NONE },
	{ LA, BO, LE_ADOPTED, LX_NONE },
	{ BO, AD, LE_ADMIT, LX_NONE },
	/* a launch that does not go */
	{ RQ, PD, LE_NO_CANDIDATE, LX_FAIL },
	{ RQ, PD, LE_OVER_BUDGET, LX_FAIL },
	{ RQ, PD, LE_ACCOUNT_REFUSED, LX_FAIL },
	{ LA, RQ, LE_CAPACITY, LX_NONE },
	{ LA, LA, LE_LAUNCH_RETRY, LX_NONE },
	{ LA, TE, LE_LAUNCH_FAILED, LX_FAIL },
	/* a node that does not come up */
	{ BO, RJ, LE_REJECT, LX_FAIL },
	{ RJ, TE, LE_TERMINATE_REJECTED, LX_NONE },
	{ BO, TE, LE_BOOT_TIMEOUT, LX_BOOT_FAIL },
	{ BO, TE, LE_INSTANCE_ENDED, LX_BOOT_FAIL },
	{ AD, TE, LE_INSTANCE_ENDED, LX_SLURMD_FAIL },
	{ AD, TE, LE_SLURMD_UNREGISTERED, LX_SLURMD_FAIL },
	{ AD, AD, LE_SLURMD_REGISTERED, LX_NONE },
	{ AD, AD, LE_READMIT, LX_NONE },
	/* spot interruption notices */
	{ BO, TE, LE_NOTICE, LX_FAIL },
	{ AD, AD, LE_NOTICE, LX_NONE },
	/* the way down */
	{ RQ, TE, LE_SUSPEND, LX_NONE },
	{ LA, TE, LE_SUSPEND, LX_NONE },
	{ BO, TE, LE_SUSPEND, LX_NONE },
	{ AD, TE, LE_SUSPEND, LX_NONE },
	{ RJ, TE, LE_SUSPEND, LX_NONE },
	{ LO, TE, LE_SUSPEND, LX_NONE },
	{ PD, PD, LE_SUSPEND_WITHDRAWN, LX_NONE },
	{ TE, TE, LE_SUSPEND_WITHDRAWN, LX_NONE },
	{ TE, TE, LE_LAUNCHED_MEANWHILE, LX_NONE },
	{ TE, PD, LE_TERMINATED, LX_NONE },
	{ TE, RQ, LE_TERMINATED_RESUME, LX_NONE },
	{ TE, TE, LE_RESUME_AGAIN, LX_NONE },
	{ RJ, RJ, LE_RESUME_AGAIN, LX_NONE },
	{ PD, PD, LE_COOLDOWN_OVER, LX_NONE },
	/* launched at a job's allocation */
	{ RQ, RQ, LE_EARLY_ADOPTED, LX_NONE },
	{ LA, LA, LE_EARLY_ADOPTED, LX_NONE },
	{ BO, BO, LE_EARLY_ADOPTED, LX_NONE },
	{ AD, AD, LE_EARLY_ADOPTED, LX_NONE },
	{ TE, TE, LE_EARLY_AGAIN, LX_NONE },
	{ RQ, RQ, LE_RESUME_SERVED, LX_NONE },
	{ LA, LA, LE_RESUME_SERVED, LX_NONE },
	{ BO, BO, LE_RESUME_SERVED, LX_NONE },
	{ AD, AD, LE_RESUME_SERVED, LX_NONE },
	{ RQ, RQ, LE_EARLY_TAKEN, LX_NONE },
	{ LA, LA, LE_EARLY_TAKEN, LX_NONE },
	{ BO, BO, LE_EARLY_TAKEN, LX_NONE },
	{ AD, AD, LE_EARLY_TAKEN, LX_NONE },
	{ RQ, TE, LE_EARLY_RECLAIMED, LX_NONE },
	{ LA, TE, LE_EARLY_RECLAIMED, LX_NONE },
	{ BO, TE, LE_EARLY_RECLAIMED, LX_NONE },
	{ AD, TE, LE_EARLY_RECLAIMED, LX_NONE },
	/* a job's prolog refused it */
	{ RQ, TE, LE_PROLOG_REFUSED, LX_FAIL },
	{ LA, TE, LE_PROLOG_REFUSED, LX_FAIL },
	{ BO, TE, LE_PROLOG_REFUSED, LX_FAIL },
	{ AD, TE, LE_PROLOG_REFUSED, LX_FAIL },
	{ RJ, TE, LE_PROLOG_REFUSED, LX_FAIL },
	{ LO, TE, LE_PROLOG_REFUSED, LX_FAIL },
	/* instances that vanish */
	{ BO, LO, LE_LOST, LX_FAIL },
	{ AD, LO, LE_LOST, LX_FAIL },
	{ LO, PD, LE_LOST_CLEARED, LX_NONE },
	{ BO, PD, LE_LOST_AT_RESTART, LX_FAIL },
	{ AD, PD, LE_LOST_AT_RESTART, LX_FAIL },
};

static const char *const event_names[LE_COUNT] = {
	[LE_RESUME] = "resume",
	[LE_EARLY_LAUNCH] = "early_launch",
	[LE_LAUNCH] = "launch",
	[LE_NO_CANDIDATE] = "no_candidate",
	[LE_OVER_BUDGET] = "over_budget",
	[LE_ACCOUNT_REFUSED] = "account_refused",
	[LE_LAUNCHED] = "launched",
	[LE_ADOPTED] = "adopted",
	[LE_CAPACITY] = "capacity",
	[LE_LAUNCH_RETRY] = "launch_retry",
	[LE_LAUNCH_FAILED] = "launch_failed",
	[LE_LAUNCHED_MEANWHILE] = "launched_meanwhile",
	[LE_ADMIT] = "admit",
	[LE_REJECT] = "reject",
	[LE_READMIT] = "readmit",
	[LE_BOOT_TIMEOUT] = "boot_timeout",
	[LE_INSTANCE_ENDED] = "instance_ended",
	[LE_SLURMD_UNREGISTERED] = "slurmd_unregistered",
	[LE_SLURMD_REGISTERED] = "slurmd_registered",
	[LE_NOTICE] = "notice",
	[LE_TERMINATE_REJECTED] = "terminate_rejected",
	[LE_TERMINATED] = "terminated",
	[LE_TERMINATED_RESUME] = "terminated_resume",
	[LE_SUSPEND] = "suspend",
	[LE_SUSPEND_WITHDRAWN] = "suspend_withdrawn",
	[LE_RESUME_SERVED] = "resume_served",
	[LE_RESUME_AGAIN] = "resume_again",
	[LE_EARLY_ADOPTED] = "early_adopted",
	[LE_EARLY_AGAIN] = "early_again",
	[LE_EARLY_TAKEN] = "early_taken",
	[LE_EARLY_RECLAIMED] = "early_reclaimed",
	[LE_PROLOG_REFUSED] = "prolog_refused",
	[LE_LOST] = "lost",
	[LE_LOST_AT_RESTART] = "lost_at_restart",
	[LE_LOST_CLEARED] = "lost_cleared",
	[LE_COOLDOWN_OVER] = "cooldown_over",
};

static const char *const effect_names[LX_COUNT] = {
	[LX_NONE] = "-",
	[LX_FAIL] = "fail",
	[LX_BOOT_FAIL] = "fail, console",
	[LX_SLURMD_FAIL] = "relaunch or fail, console",
};

const struct life_edge *node_life_edges(size_t *n)
{
	*n = sizeof(edges) / sizeof(edges[0]);
	return edges;
}

const struct life_edge *node_life_edge(enum node_state from, enum life_event ev)
{
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (edges[i].from == from && edges[i].ev == ev)
			return &edges[i];
	return NULL;
}

const char *life_event_name(enum life_event ev)
{
	return (int)ev >= 0 && ev < LE_COUNT ? event_names[ev] : NULL;
}

const char *life_effect_name(enum life_effect fx)
{
	return (int)fx >= 0 && fx < LX_COUNT ? effect_names[fx] : NULL;
}
