/*
 * cost.h - what burst instances cost, and to whom (doc/admin-guide.md,
 * "Cost and budgets"). Pure arithmetic on the records the agent keeps
 * (lib/state/state.h: instances and the jobs that held their nodes): no I/O.
 *
 * An instance costs its price per hour for its whole life, launch to
 * termination. That time is split three ways:
 *   boot  launch to the node's admission (join), or to the end if it never joined;
 *   job   after the join, while jobs held the node: each second goes to the
 *         jobs holding the node in it, in equal shares when several share it;
 *   idle  after the join, while no job held the node.
 */
#ifndef BURST_COST_H
#define BURST_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* An instance as the agent recorded it. Times are seconds since the epoch. */
struct cost_inst {
	char *provider, *instance, *node, *nodeset, *type, *region;
	double price;            /* USD per hour; NAN when its price is unknown */
	char *price_source;      /* "on-demand: catalog" or "on-demand: Price= FILE:LINE" */
	long job;                /* the job it was launched for (0: none) */
	double launched;
	double joined;           /* 0: never admitted */
	double ended;            /* 0: still running */
};

/* A job's hold of a node: the job ran there from start to end (0: still). */
struct cost_hold {
	long job;
	char *node;
	double start, end;
	char *user, *account, *partition;   /* the job's (may be NULL) */
};

enum cost_kind { COST_BOOT, COST_IDLE, COST_JOB };

/* A piece of an instance's time: its kind, the hold it went to (COST_JOB),
 * its seconds and their cost (NAN when the price is unknown). */
struct cost_item {
	size_t inst;             /* index into the instances */
	ssize_t hold;            /* index into the holds (COST_JOB), else -1 */
	enum cost_kind kind;
	double seconds, dollars;
};

/*
 * Split one instance's life within [from, until) (a running instance, or a
 * hold still open, counts up to until) into boot, idle and each hold's
 * share; holds[i] is counted only where it overlaps the instance's life
 * after its join. *boot and *idle get seconds, share[i] the seconds of
 * holds[i] (share has nh entries). Returns the seconds counted in all.
 */
double cost_split(const struct cost_inst *in, const struct cost_hold *holds, size_t nh,
		  double from, double until, double *boot, double *idle, double *share);

/*
 * Every instance's time within [from, until) as items: one boot and one
 * idle item per instance (when not zero) and one item per hold of its node
 * that overlaps it. *items (free it) gets *n items. Holds go to the
 * instances of their node.
 */
void cost_items(const struct cost_inst *insts, size_t ni, const struct cost_hold *holds, size_t nh,
		double from, double until, struct cost_item **items, size_t *n);

/*
 * What items (of cost_items over insts and holds) count against a budget
 * scoped to nodeset and account (NULL: any): with an account only the time
 * of its jobs, else all the time (boot, jobs, idle) of the node set's
 * instances, or of every instance. Items of an unknown price add nothing.
 */
double cost_spent(const struct cost_inst *insts, const struct cost_hold *holds, const struct cost_item *items,
		  size_t n, const char *nodeset, const char *account);

/* A budget's period (Budget= ... Period=). */
enum cost_period { PERIOD_DAY, PERIOD_WEEK, PERIOD_MONTH, PERIOD_YEAR, PERIOD_COUNT };
/* "day", "week", "month", "year"; -1 for another word. */
int cost_period_parse(const char *s);
const char *cost_period_name(enum cost_period p);
/* When the period holding t began: 00:00 UTC of its day, of the Monday of
 * its week, of the 1st of its month, of the 1st of January. */
double cost_period_start(enum cost_period p, double t);

void cost_insts_free(struct cost_inst *v, size_t n);
void cost_holds_free(struct cost_hold *v, size_t n);

#endif
