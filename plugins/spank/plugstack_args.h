/*
 * plugstack_args.h - the plugstack.conf arguments both SPANK plugins take,
 * and where they find burst.conf.
 */
#ifndef BURST_PLUGSTACK_ARGS_H
#define BURST_PLUGSTACK_ARGS_H

#include <stddef.h>

/* compiled into each plugin: not exported (nothing of ours may clash with Slurm's symbols) */
#define PLUGSTACK_LOCAL __attribute__((visibility("hidden")))

/*
 * The values point into the plugin's av: Slurm keeps a plugin's arguments
 * from plugstack.conf for as long as the plugin is loaded and gives the
 * same av to every hook (plugin->argv, freed by _spank_plugin_destroy:
 * src/common/plugstack.c in 22.05, spank.c in 24.11). Nothing is copied:
 * slurm_spank_init runs in every sbatch, srun and slurmstepd.
 */
struct plugstack_args {
	const char *conf;          /* conf=PATH: burst.conf (NULL: beside slurm.conf) */
	const char *catalog_dir;   /* catalog_dir=DIR (NULL: burst.conf's CatalogDir) */
};

/*
 * Parse ac/av into a. An unknown argument, or one the plugin does not take
 * (catalog_dir= when allow_catalog is false), is an error logged with
 * prefix; returns 0 or -1.
 */
PLUGSTACK_LOCAL int plugstack_args_parse(struct plugstack_args *a, int ac, char **av, int allow_catalog,
			 const char *prefix);
/* a holds nothing any more (at the plugin's exit) */
PLUGSTACK_LOCAL void plugstack_args_clear(struct plugstack_args *a);

/*
 * burst.conf: conf=, else beside slurm.conf. Slurm's commands and slurmd's
 * prolog both carry SLURM_CONF when slurm.conf is not in its default place;
 * no BURST_CONF here, since a job's environment must not choose the file
 * the prolog's admission check reads (doc/design.md §10).
 */
PLUGSTACK_LOCAL const char *plugstack_burst_conf(const struct plugstack_args *a, char *buf, size_t len);

#endif
