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
#include "resolver.h"

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

/*
 * burst_decide over the catalog in dir with cfg applied to it, as the SPANK
 * plugin decides in every sbatch with --cloud-contract, reading as little as
 * it can: first only the catalogs of cfg's providers (the candidates are
 * theirs: config_candidates). When that fails, or the contract names an
 * accelerator model they do not spell (which the whole catalog might bind
 * otherwise), it decides again over the whole catalog, so the answer and
 * every error are those of catalog_load + config_apply_catalog +
 * burst_decide. Returns 0, or -1 with err and *stage: the step that failed
 * (the catalog, applying burst.conf to it, or the contract). *whole (may be
 * NULL) is set when the whole catalog was read.
 */
enum { BURST_DECIDE_CATALOG = 1, BURST_DECIDE_APPLY, BURST_DECIDE_CONTRACT };
int burst_decide_dir(const struct burst_config *cfg, const char *dir, const char *arg,
		     struct burst_decision *d, int *stage, int *whole, burst_err_t *err);

/*
 * The contract arg stands for: cfg's contract of that name, or (when arg
 * looks like an expression: it has one of = < > ! {) the expression parsed,
 * if cfg allows inline contracts. Returns it, or NULL with err set as
 * burst_decide says. *named gets the named contract (NULL for an inline
 * one); *inl the parsed inline contract, which the caller frees with
 * contract_free (NULL for a named one). The one way every part of
 * slurm-burst reads a --cloud-contract value.
 */
const struct contract *burst_contract_of(const struct burst_config *cfg, const char *arg,
					 const struct cfg_contract **named,
					 struct contract **inl, burst_err_t *err);

/* The ranking behind a decision (burst_decide_ranked). */
struct burst_ranking {
	const struct contract *c;          /* the contract ranked by */
	const struct cfg_contract *named;  /* cfg's, or NULL for an inline one */
	const struct candset *cs;          /* the candidates ranked */
	struct resolution res;             /* over cs, best first */
	struct contract *inl;              /* owned */
	struct candset *own_cs;            /* owned, when cs was built */
};

/*
 * burst_decide, keeping its ranking in rk (free with burst_ranking_free,
 * also after a failure): over cs (the config's candidates, sorted, as
 * config_candidates makes them; NULL: made here), resolved with flags
 * (RESOLVE_WHY, RESOLVE_EXPLAIN: near misses are always asked for).
 * Returns 0 decided, 1 when no node set satisfies the contract (err says
 * so with the nearest misses; rk holds them), -1 for any other error
 * (err; rk->c NULL).
 */
int burst_decide_ranked(const struct burst_config *cfg, const struct catalog *cat,
			const struct candset *cs, const char *arg, int flags,
			struct burst_decision *d, struct burst_ranking *rk, burst_err_t *err);
void burst_ranking_free(struct burst_ranking *rk);

#endif
