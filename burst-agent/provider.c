/*
 * provider.c - the table of provider drivers (provider.h).
 */
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "strutil.h"

/* a driver added here is added to config_has_driver's list (lib/config.c)
 * too: burstctl check-config gives the agent's verdict without linking them */
static const struct provider_ops *const drivers[] = {
	&provider_local,
	&provider_aws,
	&provider_openstack,
	NULL,
};

const struct provider_ops *provider_ops_find(const char *type)
{
	size_t i;

	for (i = 0; type && drivers[i]; i++)
		if (!strcmp(drivers[i]->type, type))
			return drivers[i];
	return NULL;
}

const char *prov_class_name(enum prov_class c)
{
	switch (c) {
	case PROV_OK: return "ok";
	case PROV_CAPACITY: return "capacity";
	case PROV_QUOTA: return "quota";
	case PROV_THROTTLED: return "throttled";
	case PROV_TRANSIENT: return "transient";
	case PROV_PERMANENT: return "permanent";
	case PROV_AUTH: return "auth";
	}
	return "?";
}

struct prov_instance *prov_list_add(struct prov_list *l)
{
	struct prov_instance *in;

	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	in = &l->v[l->n++];
	memset(in, 0, sizeof(*in));
	return in;
}

void prov_list_free(struct prov_list *l)
{
	if (!l)
		return;
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
