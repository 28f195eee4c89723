/*
 * node_state.h - the life states of a burst node (doc/design.md §7), as one
 * enum with one table of names: the names are what the state database,
 * its events and burstctl show; code compares and sets the enum, so a
 * mistyped state does not compile instead of quietly matching nothing.
 */
#ifndef BURST_NODE_STATE_H
#define BURST_NODE_STATE_H

#include <stddef.h>

enum node_state {
	NS_POWERED_DOWN,         /* no instance; Slurm has it powered down */
	NS_REQUESTED,            /* Slurm asked for it; no launch intent yet */
	NS_LAUNCHING,            /* launch intent written; the provider is asked */
	NS_BOOTING,              /* instance launched; waiting for its join report */
	NS_ADMITTED,             /* report verified and passed: slurmd may start */
	NS_TERMINATING,          /* its instance is being terminated */
	NS_REJECTED,             /* its report failed admission */
	NS_LOST,                 /* its instance vanished (the reconciler saw) */
	NS_COUNT
};

/* "Any state": the from of a compare-and-set that sets unconditionally. */
#define NS_ANY ((enum node_state)-1)

/* The name of s ("powered_down"...); "?" for a value out of range. */
const char *node_state_name(enum node_state s);

/* The state named name; -1 if no state has that name (or name is NULL). */
int node_state_parse(const char *name);

/* The names, in enum order, as an SQL list for a CHECK constraint
 * ("'powered_down','requested',...") into buf; its length, as snprintf. */
int node_state_sql_list(char *buf, size_t len);

#endif
