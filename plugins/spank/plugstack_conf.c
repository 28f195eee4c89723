/*
 * plugstack_conf.c - where the SPANK plugins' code finds burst.conf
 * (plugstack_args.h); apart from plugstack_args.c because it needs
 * libburst, which spank_cloud_contract.so itself does not link.
 */
#include "confwords.h"
#include "plugstack_args.h"

const char *plugstack_burst_conf(const struct plugstack_args *a, char *buf, size_t len)
{
	return conf_default_path(a->conf, NULL, "burst.conf", buf, len);
}
