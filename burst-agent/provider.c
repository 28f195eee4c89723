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

	/* room by half again, not one more each time: a listing of 15,000
	 * instances of ~430 bytes was 15,000 reallocs of a growing array */
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap + l->cap / 2 : 64;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
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
	l->n = l->cap = 0;
}

void prov_list_cursor_free(struct prov_list_cursor *c)
{
	if (!c)
		return;
	free(c->page);
	if (c->priv && c->priv_free)
		c->priv_free(c->priv);
	memset(c, 0, sizeof(*c));
}

void ud_sh_quote(struct strbuf *s, const char *v)
{
	sb_add(s, "'");
	for (; *v; v++) {
		if (*v == '\'')
			sb_add(s, "'\\''");
		else
			sb_addf(s, "%c", *v);
	}
	sb_add(s, "'");
}

void ud_head(struct strbuf *s, const char *what, const char *join, const char *provider,
	     const char *type, const char *region, const char *acceptance)
{
	sb_addf(s, "#!/bin/sh\n"
		"# slurm-burst: join this %s to the cluster (written by burst-agent)\n"
		"set -u\n"
		"JOIN=", what);
	ud_sh_quote(s, join);
	sb_add(s, "\nPROVIDER=");
	ud_sh_quote(s, provider);
	sb_add(s, "\nTYPE=");
	ud_sh_quote(s, type);
	sb_add(s, "\nREGION=");
	ud_sh_quote(s, region);
	sb_add(s, "\nACCEPTANCE=");
	ud_sh_quote(s, acceptance);
}

void ud_join_tail(struct strbuf *s)
{
	sb_add(s, "hostname \"$NODE\" 2>/dev/null || true\n"
		"STATE=${BURST_STATE_DIR:-/var/lib/slurm-burst}/nodes/$NODE\n"
		"mkdir -p \"$STATE\" || exit 1\n"
		"# the token in the environment: on no command line (ps)\n"
		"BURST_JOIN_TOKEN=$TOKEN\n"
		"export BURST_JOIN_TOKEN\n"
		"set -- --agent \"$JOIN\" --node \"$NODE\" --instance \"$BURST_INSTANCE_ID\" \\\n"
		"\t--record \"$STATE/admission.env\" --provider \"$PROVIDER\" --instance-type \"$TYPE\"\n"
		"[ -n \"$REGION\" ] && set -- \"$@\" --region \"$REGION\"\n"
		"[ -n \"$ACCEPTANCE\" ] && set -- \"$@\" --acceptance \"$ACCEPTANCE\"\n"
		"[ -n \"${BURST_MUNGE_SOCKET:-}\" ] && set -- \"$@\" --munge-socket \"$BURST_MUNGE_SOCKET\"\n"
		"# an instance metadata service to watch for an interruption notice (aws)\n"
		"[ -n \"${BURST_IMDS:-}\" ] && set -- \"$@\" --imds \"$BURST_IMDS\"\n"
		"set -- \"$@\" -- slurmd -D -b\n"
		"[ -n \"${SLURMD_CONF:-}\" ] && set -- \"$@\" -f \"$SLURMD_CONF\"\n"
		"exec \"${BURST_NODE_BIN:-burst-node}\" join \"$@\" -N \"$NODE\"\n");
}
