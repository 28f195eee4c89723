/*
 * warm.h - a warm pool's decisions (issue 32; burst.conf(5) WarmPool=):
 * whether an idle node's instance is kept stopped rather than terminated,
 * whether a member taken from the pool has the provenance it was admitted
 * with, and whether its container acceptance must run again.
 *
 * Pure functions of what they are given: the agent asks them, keeps the
 * members in agent.db and acts.
 */
#ifndef BURST_WARM_H
#define BURST_WARM_H

#include <stddef.h>

#include <json-c/json.h>

/*
 * The parts of a provenance record (provenance.h) a member must still have
 * when it is started again: its kernel (release, build id, version), its
 * drivers, and its hardware (firmware, cpu, memory's total, accelerators,
 * interconnect). 0 when they are the same; else how many parts differ,
 * each named in why ("kernel.release 6.1.0-18-amd64 -> 6.1.0-20-amd64;
 * drivers"); -1 when a record is not an object (why says which). Identity
 * (the node and instance names, which a member changes) and software
 * versions are not compared; a part missing from both is the same.
 */
int warm_provenance_diff(json_object *admitted, json_object *now, char *why, size_t len);

enum warm_keep {
	WARM_KEEP,               /* stop it: the pool has room and budget */
	WARM_NO_POOL,            /* the node set keeps no pool (WarmPool=0) */
	WARM_FULL,               /* the pool holds WarmPool= members already */
	WARM_OVER_BUDGET,        /* the pool would cost more than WarmPoolBudget= */
};

/*
 * Whether an idle node's instance, whose stopped price is price (USD per
 * hour), joins its node set's pool of members members costing cost per
 * hour together, under WarmPool=pool_size and WarmPoolBudget=budget (NAN:
 * none). why (may be NULL) says why not, with the figures.
 */
enum warm_keep warm_keep(int pool_size, double budget, unsigned members, double cost, double price,
			 char *why, size_t len);

/* A member's admission, as recorded when it was stopped. */
struct warm_member {
	double admitted_at;      /* seconds since the epoch */
	const char *blessings;   /* the blessings' version it was admitted under */
	const char *acceptance;  /* the acceptance suite's version it passed ("": none ran) */
};

/*
 * Whether a member taken now (seconds since the epoch) must run container
 * acceptance again: 1 when the blessings or the acceptance suite changed
 * since its admission, or it is older than max_age seconds (why says
 * which, may be NULL); 0 when its admission stands.
 */
int warm_needs_acceptance(const struct warm_member *m, double now, int max_age, const char *blessings_now,
			  const char *acceptance_now, char *why, size_t len);

#endif
