/*
 * plugstack_args.c - the plugstack.conf arguments of the SPANK plugins.
 * libc only: spank_cloud_contract.so, which loads into every Slurm command,
 * links nothing of libburst (plugstack_burst_conf is in plugstack_conf.c).
 */
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "plugstack_args.h"

void plugstack_args_free(struct plugstack_args *a)
{
	free(a->conf);
	free(a->catalog_dir);
	a->conf = a->catalog_dir = NULL;
}

int plugstack_args_parse(struct plugstack_args *a, int ac, char **av, int allow_catalog,
			 const char *prefix)
{
	int i;

	plugstack_args_free(a);
	for (i = 0; i < ac; i++) {
		char **dst = NULL;
		const char *val = NULL;

		if (strncmp(av[i], "conf=", 5) == 0 && av[i][5]) {
			dst = &a->conf;
			val = av[i] + 5;
		} else if (allow_catalog && strncmp(av[i], "catalog_dir=", 12) == 0 && av[i][12]) {
			dst = &a->catalog_dir;
			val = av[i] + 12;
		}
		if (dst) {
			free(*dst);
			if (!(*dst = strdup(val))) {
				slurm_error("%sout of memory reading plugstack.conf argument '%s'", prefix, av[i]);
				return -1;
			}
		} else {
			slurm_error("%sunknown plugstack.conf argument '%s' (known: conf=PATH%s)", prefix,
				    av[i], allow_catalog ? ", catalog_dir=DIR" : "");
			return -1;
		}
	}
	return 0;
}
