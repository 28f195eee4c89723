/*
 * config_provider.c - Provider= lines: the provider types and their keys.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "strutil.h"

/*
 * The provider types burst.conf knows, and which of them burst-agent has a
 * driver for (its drivers are in burst-agent/provider.c's table; a unit
 * test holds the two to each other): burstctl check-config gives the
 * agent's verdict without linking the drivers.
 */
static const struct provider_type {
	const char *name;
	bool driver;
} provider_types[] = {
	{ "local", true },
	{ "aws", true },
	{ "openstack", true },
	{ "gcp", false },
	{ "azure", false },
};
#define NTYPES (sizeof(provider_types) / sizeof(provider_types[0]))

/* The types' names, NULL-terminated (names: NTYPES + 1). */
static void type_names(const char **names)
{
	size_t i;

	for (i = 0; i < NTYPES; i++)
		names[i] = provider_types[i].name;
	names[NTYPES] = NULL;
}

/* The aws provider's keys; 1 when w was one of them. */
static int parse_provider_aws(struct loader *ld, const char *file, int line, struct cfg_provider *p,
			      const struct conf_word *w)
{
	static const char *const skeys[] = { "ImageId", "LaunchTemplate", "SubnetId",
		"IamInstanceProfile", "Profile", "CaFile", "JoinAddress", NULL };
	char **const dst[] = { &p->image_id, &p->launch_template, &p->subnet_id,
		&p->iam_instance_profile, &p->profile, &p->ca_file, &p->join_address };
	size_t i;

	if (str_ieq(w->key, "MinCount")) {
		if (!str_ieq(w->val, "1") && !str_ieq(w->val, "all"))
			cfg_err(ld, file, line, "Provider %s: MinCount=%s: want 1 (launch what capacity allows) or all (the whole batch or nothing)",
			     p->name, w->val);
		p->min_count_all = str_ieq(w->val, "all");
		return 1;
	}
	if (str_ieq(w->key, "SecurityGroups")) {
		cfg_free_list(p->security_groups, p->nsecurity_groups);
		p->security_groups = cfg_split_list(w->val, &p->nsecurity_groups);
		return 1;
	}
	for (i = 0; skeys[i]; i++)
		if (str_ieq(w->key, skeys[i]))
			break;
	if (!skeys[i])
		return 0;
	if (!strcmp(skeys[i], "JoinAddress") && !cfg_valid_hostport(w->val))
		cfg_err(ld, file, line, "Provider %s: JoinAddress=%s is not ADDRESS:PORT such as 10.0.0.5:6830",
		     p->name, w->val);
	free(*dst[i]);
	*dst[i] = xstrdup(w->val);
	return 1;
}

/* The openstack provider's keys; 1 when w was one of them. */
static int parse_provider_openstack(struct loader *ld, const char *file, int line, struct cfg_provider *p,
				    const struct conf_word *w)
{
	static const char *const skeys[] = { "Image", "KeyName", "AvailabilityZone", "Interface",
		"Microversion", "ComputeEndpoint", "Cloud", NULL };
	char **const dst[] = { &p->image_id, &p->key_name, &p->availability_zone, &p->interface,
		&p->microversion, &p->compute_endpoint, &p->cloud };
	size_t i;

	if (str_ieq(w->key, "Networks")) {
		cfg_free_list(p->networks, p->nnetworks);
		p->networks = cfg_split_list(w->val, &p->nnetworks);
		return 1;
	}
	if (str_ieq(w->key, "SchedulerHints")) {
		cfg_free_list(p->scheduler_hints, p->nscheduler_hints);
		p->scheduler_hints = cfg_split_list(w->val, &p->nscheduler_hints);
		for (i = 0; i < p->nscheduler_hints; i++)
			if (!strchr(p->scheduler_hints[i], ':') || p->scheduler_hints[i][0] == ':')
				cfg_err(ld, file, line, "Provider %s: SchedulerHints: '%s' is not KEY:VALUE such as group:UUID",
				     p->name, p->scheduler_hints[i]);
		return 1;
	}
	if (str_ieq(w->key, "Accelerators")) {
		cfg_free_list(p->accelerators, p->naccelerators);
		p->accelerators = cfg_split_list(w->val, &p->naccelerators);
		for (i = 0; i < p->naccelerators; i++)
			if (!strchr(p->accelerators[i], ':') || p->accelerators[i][0] == ':')
				cfg_err(ld, file, line, "Provider %s: Accelerators: '%s' is not ALIAS:MODEL such as a100:A100-80GB",
				     p->name, p->accelerators[i]);
		return 1;
	}
	if (str_ieq(w->key, "BuildWait")) {
		char *end = NULL;
		long v = strtol(w->val, &end, 10);
		if (!end || *end || v < 0 || v > 3600)
			cfg_err(ld, file, line, "Provider %s: BuildWait=%s: want seconds from 0 to 3600", p->name, w->val);
		p->build_wait = (int)v;
		return 1;
	}
	for (i = 0; skeys[i]; i++)
		if (str_ieq(w->key, skeys[i]))
			break;
	if (!skeys[i])
		return 0;
	if (!strcmp(skeys[i], "Interface") && !str_ieq(w->val, "public") && !str_ieq(w->val, "internal") &&
	    !str_ieq(w->val, "admin"))
		cfg_err(ld, file, line, "Provider %s: Interface=%s: want public, internal or admin", p->name, w->val);
	free(*dst[i]);
	*dst[i] = xstrdup(w->val);
	return 1;
}

/* Rate limits a Provider line gives (LaunchRate=, TerminateRate=,
 * RequestRate=), applied over its type's defaults once the type is known. */
struct rate_given {
	struct rate_limits v;
	bool launch, launch_calls, terminate, terminate_calls;
};

static void rate_key(struct loader *ld, const char *file, int line, const char *prov, const char *key,
		     const char *val, struct rate_spec *dst, bool *given)
{
	char why[300];

	if (rate_spec_parse(val, dst, why, sizeof(why)) < 0)
		cfg_err(ld, file, line, "Provider %s: %s%s: %s", prov, key, val, why);
	else
		*given = true;
}

static int parse_provider_rates(struct loader *ld, const char *file, int line, const char *prov,
				const struct conf_word *w, struct rate_given *g)
{
	static const char *const classes[] = { "launch", "terminate", NULL };
	char *list, *save = NULL, *item;

	if (str_ieq(w->key, "LaunchRate")) {
		rate_key(ld, file, line, prov, "LaunchRate=", w->val, &g->v.launch, &g->launch);
		return 1;
	}
	if (str_ieq(w->key, "TerminateRate")) {
		rate_key(ld, file, line, prov, "TerminateRate=", w->val, &g->v.terminate, &g->terminate);
		return 1;
	}
	if (!str_ieq(w->key, "RequestRate"))
		return 0;
	/* RequestRate=launch:5/2,terminate:100/5 */
	list = xstrdup(w->val);
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':'), key[64];
		if (!colon) {
			cfg_err(ld, file, line, "Provider %s: RequestRate=%s: '%s' is not CALL:SIZE/RATE; want e.g. "
			     "RequestRate=launch:5/2,terminate:100/5", prov, w->val, item);
			continue;
		}
		*colon = '\0';
		snprintf(key, sizeof(key), "RequestRate=%.20s:", item);
		if (str_ieq(item, "launch"))
			rate_key(ld, file, line, prov, key, colon + 1, &g->v.launch_calls, &g->launch_calls);
		else if (str_ieq(item, "terminate"))
			rate_key(ld, file, line, prov, key, colon + 1, &g->v.terminate_calls, &g->terminate_calls);
		else {
			const char *near = str_suggest(item, classes, 0);
			cfg_err(ld, file, line, "Provider %s: RequestRate=%s: unknown call '%s'%s%s%s (calls: launch, terminate)",
			     prov, w->val, item, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		}
	}
	if (!w->val[0])
		cfg_err(ld, file, line, "Provider %s: RequestRate= is empty; want e.g. RequestRate=launch:5/2,terminate:100/5",
		     prov);
	free(list);
	return 1;
}

void cfg_parse_provider(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	static const char *const keys[] = { "Provider", "Type", "Catalog", "Regions", "Region",
		"CredentialsFile", "Endpoint", "Bridge", "Address", "ImageId", "LaunchTemplate",
		"SubnetId", "SecurityGroups", "IamInstanceProfile", "Profile", "CaFile", "JoinAddress",
		"MinCount", "Image", "Networks", "KeyName", "AvailabilityZone", "SchedulerHints",
		"Interface", "Microversion", "ComputeEndpoint", "BuildWait", "Accelerators",
		"LaunchRate", "TerminateRate", "RequestRate", "Cloud", NULL };
	struct burst_config *cfg = ld->cfg;
	struct cfg_provider p;
	struct rate_given rg;
	size_t i;
	int k;

	memset(&p, 0, sizeof(p));
	memset(&rg, 0, sizeof(rg));
	if (!cfg_valid_name(w[0].val)) {
		cfg_err(ld, file, line, "Provider name '%s' must be letters, digits, '_', '.' or '-'", w[0].val);
		return;
	}
	for (i = 0; i < cfg->nproviders; i++)
		if (strcmp(cfg->providers[i].name, w[0].val) == 0) {
			cfg_err(ld, file, line, "Provider %s is defined twice (first at %s:%d)", w[0].val,
			     cfg->providers[i].where.file, cfg->providers[i].where.line);
			return;
		}
	p.name = xstrdup(w[0].val);
	p.build_wait = -1;
	for (k = 1; k < n; k++) {
		if (!w[k].key) {
			cfg_err(ld, file, line, "expected Key=Value, found '%s'", w[k].val);
			continue;
		}
		if (str_ieq(w[k].key, "Type"))
			free(p.type), p.type = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Catalog"))
			free(p.catalog), p.catalog = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Regions") || str_ieq(w[k].key, "Region")) {
			cfg_free_list(p.regions, p.nregions);
			p.regions = cfg_split_list(w[k].val, &p.nregions);
		} else if (str_ieq(w[k].key, "CredentialsFile"))
			free(p.credentials), p.credentials = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Endpoint"))
			free(p.endpoint), p.endpoint = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Bridge"))
			free(p.bridge), p.bridge = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Address")) {
			unsigned a, b, c, d, len;
			char tail;
			if (sscanf(w[k].val, "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &len, &tail) != 5 ||
			    a > 255 || b > 255 || c > 255 || d > 255 || len < 8 || len > 30)
				cfg_err(ld, file, line, "Provider %s: Address=%s is not an IPv4 ADDRESS/PREFIX such as 10.211.0.1/24",
				     p.name, w[k].val);
			free(p.address);
			p.address = xstrdup(w[k].val);
		}
		else if (parse_provider_aws(ld, file, line, &p, &w[k]))
			;
		else if (parse_provider_rates(ld, file, line, p.name, &w[k], &rg))
			;
		else if (parse_provider_openstack(ld, file, line, &p, &w[k]))
			;
		else
			cfg_unknown_key(ld, file, line, "Provider", w[k].key, keys);
	}
	if (!p.type)
		p.type = xstrdup(p.name);
	for (i = 0; i < NTYPES; i++)
		if (str_ieq(p.type, provider_types[i].name))
			break;
	if (i == NTYPES) {
		const char *names[NTYPES + 1], *near;
		struct strbuf all;
		sb_init(&all);
		type_names(names);
		for (i = 0; i < NTYPES; i++)
			sb_addf(&all, "%s%s", i ? " " : "", names[i]);
		near = str_suggest(p.type, names, 0);
		cfg_err(ld, file, line, "unknown provider type '%s'%s%s%s (types: %s)",
			p.type, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", all.s);
		sb_free(&all);
	} else {
		free(p.type);
		p.type = xstrdup(provider_types[i].name);
	}
	if (!p.catalog)
		p.catalog = xstrdup(p.type);
	rate_limits_default(p.type, &p.rates);
	if (rg.launch)
		p.rates.launch = rg.v.launch;
	if (rg.launch_calls)
		p.rates.launch_calls = rg.v.launch_calls;
	if (rg.terminate)
		p.rates.terminate = rg.v.terminate;
	if (rg.terminate_calls)
		p.rates.terminate_calls = rg.v.terminate_calls;
	if (!p.regions)
		p.regions = xcalloc(1, sizeof(char *));
	p.where = cfg_where_of(file, line);
	cfg->providers = xrealloc(cfg->providers, (cfg->nproviders + 1) * sizeof(p));
	cfg->providers[cfg->nproviders++] = p;
}

void cfg_free_provider(struct cfg_provider *p)
{
	free(p->name);
	free(p->type);
	free(p->catalog);
	cfg_free_list(p->regions, p->nregions);
	free(p->credentials);
	free(p->endpoint);
	free(p->bridge);
	free(p->address);
	free(p->where.file);
	free(p->image_id);
	free(p->launch_template);
	free(p->subnet_id);
	cfg_free_list(p->security_groups, p->nsecurity_groups);
	free(p->iam_instance_profile);
	free(p->profile);
	free(p->ca_file);
	free(p->join_address);
	cfg_free_list(p->networks, p->nnetworks);
	free(p->key_name);
	free(p->availability_zone);
	cfg_free_list(p->scheduler_hints, p->nscheduler_hints);
	cfg_free_list(p->accelerators, p->naccelerators);
	free(p->interface);
	free(p->cloud);
	free(p->microversion);
	free(p->compute_endpoint);
}

bool config_has_driver(const char *type)
{
	size_t i;

	for (i = 0; type && i < NTYPES; i++)
		if (!strcmp(provider_types[i].name, type))
			return provider_types[i].driver;
	return false;
}

const char *config_provider_type(size_t i)
{
	return i < NTYPES ? provider_types[i].name : NULL;
}

const char *cfg_driver_names(char *buf, size_t len)
{
	size_t i, l = 0;

	buf[0] = '\0';
	for (i = 0; i < NTYPES; i++)
		if (provider_types[i].driver && l < len) {
			snprintf(buf + l, len - l, "%s%s", l ? ", " : "", provider_types[i].name);
			l += strlen(buf + l);
		}
	return buf;
}
