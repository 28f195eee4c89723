/*
 * agentview.h - burstctl status, nodes and events: the burst agent's state
 * as admins look at it, read straight from its SQLite database (read-only;
 * works while the agent runs and when it is down).
 */
#ifndef BURST_AGENTVIEW_H
#define BURST_AGENTVIEW_H

#include <stdbool.h>

struct agentview_opts {
	const char *config;      /* burst.conf; NULL: none, StateDir is the default */
	bool json;
	int limit;               /* -n COUNT: status, events: the newest COUNT events (0: default) */
	bool follow;             /* events --follow */
	const char *node;        /* events --node NODE (NULL: every node) */
	const char *since;       /* events --since SECONDS[smhd] as given (NULL: not given); cost: a time */
	const char *until;       /* cost --until (NULL: now) */
	const char *by;          /* cost --by (NULL: job) */
	bool budgets;            /* cost --budgets */
};

/* Each verb takes its words after the verb; returns the exit code
 * (0 ok, 1 a named node is not in the agent's state, 2 usage or input error). */
int agentview_status(const struct agentview_opts *o, int argc, char **argv);
int agentview_nodes(const struct agentview_opts *o, int argc, char **argv);
int agentview_events(const struct agentview_opts *o, int argc, char **argv);
/* burstctl cost [--since T] [--until T] [--by job|user|account|partition|nodeset|provider] */
int agentview_cost(const struct agentview_opts *o, int argc, char **argv);
/* state backup FILE: a consistent copy of agent.db while the agent runs */
int agentview_state(const struct agentview_opts *o, int argc, char **argv);

#endif
