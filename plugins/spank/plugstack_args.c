/*
 * plugstack_args.c - the plugstack.conf arguments of the SPANK plugins.
 */
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "confwords.h"
#include "plugstack_args.h"
#include "strutil.h"

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
		if (strncmp(av[i], "conf=", 5) == 0 && av[i][5]) {
			free(a->conf);
			a->conf = xstrdup(av[i] + 5);
		} else if (allow_catalog && strncmp(av[i], "catalog_dir=", 12) == 0 && av[i][12]) {
			free(a->catalog_dir);
			a->catalog_dir = xstrdup(av[i] + 12);
		} else {
			slurm_error("%sunknown plugstack.conf argument '%s' (known: conf=PATH%s)", prefix,
				    av[i], allow_catalog ? ", catalog_dir=DIR" : "");
			return -1;
		}
	}
	return 0;
}

const char *plugstack_burst_conf(const struct plugstack_args *a, char *buf, size_t len)
{
	return conf_default_path(a->conf, NULL, "burst.conf", buf, len);
}
