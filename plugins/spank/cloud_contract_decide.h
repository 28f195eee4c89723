/*
 * cloud_contract_decide.h - between spank_cloud_contract.so and the module
 * that decides a contract, cloud_contract_decide.so.
 *
 * The plugin loads into every sbatch, salloc, srun, slurmd and slurmstepd,
 * and most of them never see --cloud-contract. So the plugin itself holds
 * only the option, the job environment and the task environment; the
 * decision (burst.conf, the catalog, matching and ranking: ~110 KB of code
 * and ~300 relocations) is a module of its own, loaded with dlopen from the
 * plugin's own directory only when sbatch, salloc or srun is given the
 * option. The module uses nothing of Slurm's: it hands back the decision,
 * or a message for the plugin to log.
 */
#ifndef BURST_CLOUD_CONTRACT_DECIDE_H
#define BURST_CLOUD_CONTRACT_DECIDE_H

#include <stddef.h>

/* the module's file name, looked up beside the plugin */
#define CLOUD_CONTRACT_DECIDE_SO "cloud_contract_decide.so"
/* the one symbol it exports; a new layout of the struct gets a new name */
#define CLOUD_CONTRACT_DECIDE_SYM "cloud_contract_decide_v1"

/* what the job environment gets (malloc'd; free each with free(); a NULL one is not set) */
struct cloud_contract_decided {
	char *contract;    /* CLOUD_CONTRACT: the contract text */
	char *name;        /* CLOUD_CONTRACT_NAME: its name, "" for an inline one */
	char *nodesets;    /* CLOUD_NODESETS */
	char *features;    /* CLOUD_FEATURES */
	char *partitions;  /* CLOUD_PARTITIONS */
	int whole;         /* the whole catalog was read (a debug line) */
};

/*
 * Decide arg (a contract name or an inline expression) with burst.conf at
 * conf (NULL: beside slurm.conf) and the catalog in catalog_dir (NULL:
 * burst.conf's CatalogDir). Returns 0 and fills *out, or -1 with msg (len
 * bytes) holding the whole message for the user, without the plugin's
 * prefix.
 */
typedef int (*cloud_contract_decide_fn)(const char *conf, const char *catalog_dir, const char *arg,
					struct cloud_contract_decided *out, char *msg, size_t len);

int cloud_contract_decide_v1(const char *conf, const char *catalog_dir, const char *arg,
			     struct cloud_contract_decided *out, char *msg, size_t len)
	__attribute__((visibility("default")));

#endif
