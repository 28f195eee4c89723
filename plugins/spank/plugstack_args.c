/*
 * plugstack_args.c - the plugstack.conf arguments of the SPANK plugins.
 * libc only: spank_cloud_contract.so, which loads into every Slurm command,
 * links nothing of libburst (plugstack_burst_conf is in plugstack_conf.c).
 */
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "plugstack_args.h"

void plugstack_args_clear(struct plugstack_args *a)
{
	a->conf = a->catalog_dir = NULL;
}

/* av's "key=VALUE" with a non-empty value: VALUE, else NULL (no libc call:
 * each first call of a libc function costs this command a symbol lookup) */
static const char *value_of(const char *arg, const char *key)
{
	while (*key && *arg == *key)
		arg++, key++;
	return !*key && *arg ? arg : NULL;
}

int plugstack_args_parse(struct plugstack_args *a, int ac, char **av, int allow_catalog,
			 const char *prefix)
{
	const char *v;
	int i;

	plugstack_args_clear(a);
	for (i = 0; i < ac; i++) {
		if ((v = value_of(av[i], "conf=")))
			a->conf = v;
		else if (allow_catalog && (v = value_of(av[i], "catalog_dir=")))
			a->catalog_dir = v;
		else {
			slurm_error("%sunknown plugstack.conf argument '%s' (known: conf=PATH%s)", prefix,
				    av[i], allow_catalog ? ", catalog_dir=DIR" : "");
			return -1;
		}
	}
	return 0;
}
