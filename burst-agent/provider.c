/*
 * provider.c - the table of provider drivers (provider.h).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "strutil.h"

/* a driver added here is marked as one in lib/core/config_provider.c's type table
 * too: burstctl check-config gives the agent's verdict without linking them */
static const struct provider_ops *const drivers[] = {
	&provider_local,
	&provider_aws,
	&provider_openstack,
	&provider_gcp,
	&provider_azure,
	NULL,
};

int (*provider_fence)(void);
void (*provider_crash)(int point);

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

/* Blocks of strings that never move (a record points into them). */
#define PROV_STRS_BLOCK 16384

struct prov_strs {
	struct prov_strs *prev;   /* the block filled before this one */
	size_t used, cap;
	char s[];
};

/* A cluster or state seen lately is kept once: the list's few last ones of
 * each (a listing has one cluster and a handful of states). */
static const char *strs_seen(struct prov_list *l, int kind, const char *s)
{
	for (int i = 0; i < PROV_STRS_SEEN; i++)
		if (l->seen[kind][i] && !strcmp(l->seen[kind][i], s))
			return l->seen[kind][i];
	return NULL;
}

static const char *strs_put(struct prov_list *l, const char *s, int kind)
{
	struct prov_strs *b = l->strs;
	const char *seen;
	size_t n;
	char *r;

	if (!s || !*s)
		return "";
	if (kind >= 0 && (seen = strs_seen(l, kind, s)))
		return seen;
	n = strlen(s) + 1;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > PROV_STRS_BLOCK ? n : PROV_STRS_BLOCK;
		struct prov_strs *nb = xmalloc(sizeof(*nb) + cap);
		nb->prev = b;
		nb->used = 0;
		nb->cap = cap;
		l->strs = b = nb;
	}
	r = b->s + b->used;
	memcpy(r, s, n);
	b->used += n;
	if (kind >= 0) {
		memmove(&l->seen[kind][1], &l->seen[kind][0], (PROV_STRS_SEEN - 1) * sizeof(char *));
		l->seen[kind][0] = r;
	}
	return r;
}

/* Whether s may need str_escape_ctl: a byte that is not printable ASCII
 * (the usual listing has none, and is copied as it is). */
static bool needs_escape(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return true;
	return false;
}

struct prov_instance *prov_list_add(struct prov_list *l, const char *id, const char *cluster,
				    const char *node, const char *state)
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
	{
		/* what a cloud lists (its tags are anyone's with access to the
		 * account) is logged and put in node reasons: its control
		 * characters are written out here, as it enters the agent */
		const char *f[4] = { id, cluster, node, state };
		char *e[4] = { NULL, NULL, NULL, NULL };
		for (int k = 0; k < 4; k++)
			if (f[k] && needs_escape(f[k]))
				f[k] = e[k] = str_escape_ctl(f[k]);
		in->id = strs_put(l, f[0], -1);
		in->cluster = strs_put(l, f[1], 0);
		in->node = strs_put(l, f[2], -1);
		in->state = strs_put(l, f[3], 1);
		for (int k = 0; k < 4; k++)
			free(e[k]);
	}
	return in;
}

void prov_list_free(struct prov_list *l)
{
	if (!l)
		return;
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
	while (l->strs) {
		struct prov_strs *prev = l->strs->prev;
		free(l->strs);
		l->strs = prev;
	}
	memset(l->seen, 0, sizeof(l->seen));
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
		"# a metadata service to watch for an interruption notice (aws; a gcp or azure Spot VM)\n"
		"[ -n \"${BURST_IMDS:-}\" ] && set -- \"$@\" --imds \"$BURST_IMDS\"\n"
		"[ -n \"${BURST_GCE_METADATA:-}\" ] && set -- \"$@\" --gce-metadata \"$BURST_GCE_METADATA\"\n"
		"[ -n \"${BURST_AZURE_METADATA:-}\" ] && set -- \"$@\" --azure-metadata \"$BURST_AZURE_METADATA\"\n"
		"set -- \"$@\" -- slurmd -D -b\n"
		"[ -n \"${SLURMD_CONF:-}\" ] && set -- \"$@\" -f \"$SLURMD_CONF\"\n"
		"exec \"${BURST_NODE_BIN:-burst-node}\" join \"$@\" -N \"$NODE\"\n");
}
