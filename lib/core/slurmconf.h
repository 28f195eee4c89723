/*
 * slurmconf.h - global keys of slurm.conf read as slurmctld reads them
 * (the node's plugstack check), and what budgets by account need to know of Slurm's
 * accounting: whether slurmctld checks that a job's account is one of its
 * user's associations (AccountingStorageEnforce, with slurmdbd), read from
 * slurmctld's running configuration (the agent) or from slurm.conf
 * (burstctl check-config).
 */
#ifndef BURST_SLURMCONF_H
#define BURST_SLURMCONF_H

#include <limits.h>
#include <stdbool.h>

struct slurm_acct {
	bool known;                 /* read; else why says why not */
	bool dbd;                   /* AccountingStorageType=accounting_storage/slurmdbd */
	bool associations;          /* AccountingStorageEnforce names associations or what implies it */
	char enforce[256];          /* AccountingStorageEnforce as read ("none" when not set) */
	char type[128];             /* AccountingStorageType as read ("accounting_storage/none" when not set) */
	char source[PATH_MAX + 64]; /* where it was read: a slurm.conf path, or slurmctld */
	char why[PATH_MAX + 256];   /* !known: why it could not be read */
};

/*
 * AccountingStorageEnforce as slurmctld reads it (read_config.c,
 * _validate_accounting_storage_enforce): a comma list of associations,
 * limits, qos, safe, wckeys (each of which implies associations), all,
 * nojobs, nosteps, or 1 and 2 (associations, limits). 1 when associations
 * are enforced, 0 when not, -1 for a word slurmctld refuses (it then
 * enforces nothing).
 */
int slurm_enforce_associations(const char *value);

/*
 * Read AccountingStorageEnforce and AccountingStorageType from the
 * slurm.conf at path as slurmctld does: keys case-insensitive, the last
 * value of a key wins, "Include FILE" lines followed (relative to the
 * including file's directory, %c the ClusterName), '#' comments, a
 * trailing '\' joining lines. Fills out (known false and why set when the
 * file or an included one cannot be read).
 */
void slurmconf_acct(const char *path, struct slurm_acct *out);

/*
 * The values of keys[0..nkeys) in the slurm.conf at path, read as slurmctld
 * reads it (as slurmconf_acct above; keys in node, partition and node set
 * lines are the object's, not global): vals[i] allocated, NULL when the key
 * is not set. 0, or -1 with why (the file that cannot be read) in why and
 * every vals[i] NULL.
 */
int slurmconf_values(const char *path, const char *const *keys, size_t nkeys, char **vals,
		     char *why, size_t whylen);

/* Fill out from the values slurmctld runs with (its configuration as
 * scontrol show config has it): the enforce flags' associations bit and the
 * storage type. */
void slurm_acct_from_ctld(struct slurm_acct *out, bool associations, const char *enforce_text,
			  const char *type);

#endif
