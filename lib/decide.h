/*
 * decide.h - the submit-time decision for a --cloud-contract argument:
 * which contract it is, and which node sets (and so partitions and Slurm
 * features) can serve it. Shared by the SPANK plugin and burstctl.
 */
#ifndef BURST_DECIDE_H
#define BURST_DECIDE_H

#include "burst_err.h"
#include "catalog.h"
#include "config.h"

struct burst_decision {
	char *name;              /* the contract's name, or NULL for an inline one */
	char *contract;          /* the contract text */
	char *nodesets;          /* "gpu4,gpu1": node sets that can serve it, best first */
	char *partitions;        /* "burst-gpu": their partitions, best first, no repeats */
	char *features;          /* "gpu4|gpu1": the Slurm constraint that selects them */
	char *first;             /* "aws/g5.12xlarge@us-east-1 $5.6720/h": the first choice */
};

/*
 * Decide for arg (a contract name of cfg or an inline expression). Returns
 * 0 and fills d (free with burst_decision_free), or -1 with err holding a
 * message for the user who typed arg: the unknown name and the nearest
 * ones, the parse error with its caret, inline contracts being forbidden,
 * or the assumption that no node set satisfies, with the nearest misses.
 */
int burst_decide(const struct burst_config *cfg, const struct catalog *cat,
		 const char *arg, struct burst_decision *d, burst_err_t *err);
void burst_decision_free(struct burst_decision *d);

#endif
