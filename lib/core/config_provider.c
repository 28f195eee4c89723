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
#include <stddef.h>
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
	bool stops;              /* its driver stops and starts instances (provider_ops.stop, .start) */
} provider_types[] = {
	{ "local", true, true },
	{ "aws", true, true },
	{ "openstack", true, false },
	{ "gcp", true, false },
	{ "azure", true, false },
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

/* Rate limits a Provider line gives (LaunchRate=, TerminateRate=,
 * RequestRate=), applied over its type's defaults once the type is known. */
struct rate_given {
	struct rate_limits v;
	bool launch, launch_calls, terminate, terminate_calls;
};

/* A Provider= line being read. */
struct pline {
	struct cfg_provider p;
	struct rate_given rg;
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

static void set_launch_rate(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	rate_key(ld, file, line, pl->p.name, "LaunchRate=", val, &pl->rg.v.launch, &pl->rg.launch);
}

static void set_terminate_rate(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	rate_key(ld, file, line, pl->p.name, "TerminateRate=", val, &pl->rg.v.terminate, &pl->rg.terminate);
}

/* RequestRate=launch:5/2,terminate:100/5 */
static void set_request_rate(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	static const char *const classes[] = { "launch", "terminate", NULL };
	struct rate_given *g = &pl->rg;
	const char *prov = pl->p.name;
	char *list, *save = NULL, *item;

	list = xstrdup(val);
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':'), key[64];
		if (!colon) {
			cfg_err(ld, file, line, "Provider %s: RequestRate=%s: '%s' is not CALL:SIZE/RATE; want e.g. "
				"RequestRate=launch:5/2,terminate:100/5", prov, val, item);
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
				prov, val, item, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		}
	}
	if (!val[0])
		cfg_err(ld, file, line, "Provider %s: RequestRate= is empty; want e.g. RequestRate=launch:5/2,terminate:100/5",
			prov);
	free(list);
}

static void set_address(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	unsigned a, b, c, d, len;
	char tail;

	if (sscanf(val, "%u.%u.%u.%u/%u%c", &a, &b, &c, &d, &len, &tail) != 5 ||
	    a > 255 || b > 255 || c > 255 || d > 255 || len < 8 || len > 30)
		cfg_err(ld, file, line, "Provider %s: Address=%s is not an IPv4 ADDRESS/PREFIX such as 10.211.0.1/24",
			pl->p.name, val);
	free(pl->p.address);
	pl->p.address = xstrdup(val);
}

static void set_join_address(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	if (!cfg_valid_hostport(val))
		cfg_err(ld, file, line, "Provider %s: JoinAddress=%s is not ADDRESS:PORT such as 10.0.0.5:6830",
			pl->p.name, val);
	free(pl->p.join_address);
	pl->p.join_address = xstrdup(val);
}

static void set_min_count(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	if (!str_ieq(val, "1") && !str_ieq(val, "all"))
		cfg_err(ld, file, line, "Provider %s: MinCount=%s: want 1 (launch what capacity allows) or all (the whole batch or nothing)",
			pl->p.name, val);
	pl->p.min_count_all = str_ieq(val, "all");
}

static void set_interface(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	if (!str_ieq(val, "public") && !str_ieq(val, "internal") && !str_ieq(val, "admin"))
		cfg_err(ld, file, line, "Provider %s: Interface=%s: want public, internal or admin", pl->p.name, val);
	free(pl->p.interface);
	pl->p.interface = xstrdup(val);
}

static void set_build_wait(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	char *end = NULL;
	long v = strtol(val, &end, 10);

	if (!end || *end || v < 0 || v > 3600)
		cfg_err(ld, file, line, "Provider %s: BuildWait=%s: want seconds from 0 to 3600", pl->p.name, val);
	pl->p.build_wait = (int)v;
}

/* WriteQuota=N, N/SECONDS or none */
static void set_write_quota(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	char *end = NULL;
	double n, len = 60;

	if (str_ieq(val, "none")) {
		pl->p.write_quota = 0;
		pl->p.write_quota_len = 60;
		return;
	}
	n = strtod(val, &end);
	if (end && *end == '/')
		len = strtod(end + 1, &end);
	if (!end || *end || end == val || !(n >= 1 && n <= 1e9) || !(len >= 1 && len <= 3600)) {
		cfg_err(ld, file, line, "Provider %s: WriteQuota=%s: want requests a minute (e.g. 1500), "
			"REQUESTS/SECONDS (1 to 3600 s), or none", pl->p.name, val);
		return;
	}
	pl->p.write_quota = n;
	pl->p.write_quota_len = len;
}

static void set_disk_size(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	char *end = NULL;
	long v = strtol(val, &end, 10);

	if (!end || *end || v < 10 || v > 65536)
		cfg_err(ld, file, line, "Provider %s: DiskSizeGB=%s: want GB from 10 to 65536", pl->p.name, val);
	else
		pl->p.disk_size_gb = (int)v;
}

/* A yes/no value into *dst, said when it is neither. */
static void set_yes_no(struct loader *ld, const char *file, int line, struct pline *pl, const char *key,
		       const char *val, bool *dst)
{
	if (str_ieq(val, "yes") || str_ieq(val, "true") || str_ieq(val, "1"))
		*dst = true;
	else if (str_ieq(val, "no") || str_ieq(val, "false") || str_ieq(val, "0"))
		*dst = false;
	else
		cfg_err(ld, file, line, "Provider %s: %s=%s: want yes or no", pl->p.name, key, val);
}

static void set_spot(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	set_yes_no(ld, file, line, pl, "Spot", val, &pl->p.spot);
}

static void set_external_ip(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	set_yes_no(ld, file, line, pl, "ExternalIP", val, &pl->p.external_ip);
}

/* A list of KEY:VALUE items (SchedulerHints=, Accelerators=), each said
 * when it is not one (want: e.g. "KEY:VALUE such as group:UUID"). */
static void set_pairs(struct loader *ld, const char *file, int line, const char *prov, const char *key,
		      const char *val, const char *want, char ***list, size_t *n)
{
	size_t i;

	cfg_free_list(*list, *n);
	*list = cfg_split_list(val, n);
	for (i = 0; i < *n; i++)
		if (!strchr((*list)[i], ':') || (*list)[i][0] == ':')
			cfg_err(ld, file, line, "Provider %s: %s: '%s' is not %s", prov, key, (*list)[i], want);
}

static void set_scheduler_hints(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	set_pairs(ld, file, line, pl->p.name, "SchedulerHints", val, "KEY:VALUE such as group:UUID",
		  &pl->p.scheduler_hints, &pl->p.nscheduler_hints);
}

static void set_accelerators(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	set_pairs(ld, file, line, pl->p.name, "Accelerators", val, "ALIAS:MODEL such as a100:A100-80GB",
		  &pl->p.accelerators, &pl->p.naccelerators);
}

static void set_priority(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	if (!str_ieq(val, "Regular") && !str_ieq(val, "Spot"))
		cfg_err(ld, file, line, "Provider %s: Priority=%s: want Regular or Spot", pl->p.name, val);
	pl->p.spot = str_ieq(val, "Spot");
}

static void set_max_price(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	char *end = NULL;
	double v = strtod(val, &end);

	if (!end || end == val || *end || !(v == -1 || (v > 0 && v < 10000)))
		cfg_err(ld, file, line, "Provider %s: MaxPrice=%s: want USD per hour (e.g. 0.5), or -1 for up to the "
			"on-demand price", pl->p.name, val);
	pl->p.max_price = v;
}

static void set_os_disk_type(struct loader *ld, const char *file, int line, struct pline *pl, const char *val)
{
	if (!str_ieq(val, "Standard_LRS") && !str_ieq(val, "StandardSSD_LRS") && !str_ieq(val, "Premium_LRS"))
		cfg_err(ld, file, line, "Provider %s: OsDiskType=%s: want Standard_LRS, StandardSSD_LRS or Premium_LRS",
			pl->p.name, val);
	free(pl->p.os_disk_type);
	pl->p.os_disk_type = xstrdup(val);
}

/* The keys of a Provider= line. */
static const struct pkey {
	const char *name;
	enum { PK_NONE, PK_STRING, PK_LIST, PK_SET } kind;
	size_t off, noff;        /* PK_STRING: a char *; PK_LIST: a char ** and its size_t count */
	void (*set)(struct loader *ld, const char *file, int line, struct pline *pl, const char *val);
} pkeys[] = {
#define PSTR(name, field) { name, PK_STRING, offsetof(struct cfg_provider, field), 0, NULL }
#define PLIST(name, field, count) \
	{ name, PK_LIST, offsetof(struct cfg_provider, field), offsetof(struct cfg_provider, count), NULL }
#define PSET(name, fn) { name, PK_SET, 0, 0, fn }
	{ "Provider", PK_NONE, 0, 0, NULL },   /* a second one on its line: unknown */
	PSTR("Type", type),
	PSTR("Catalog", catalog),
	PLIST("Regions", regions, nregions),
	PLIST("Region", regions, nregions),
	PSTR("CredentialsFile", credentials),
	PSTR("Endpoint", endpoint),
	/* local */
	PSTR("Bridge", bridge),
	PSET("Address", set_address),
	/* aws */
	PSTR("ImageId", image_id),
	PSTR("LaunchTemplate", launch_template),
	PSTR("SubnetId", subnet_id),
	PLIST("SecurityGroups", security_groups, nsecurity_groups),
	PSTR("IamInstanceProfile", iam_instance_profile),
	PSTR("Profile", profile),
	PSTR("CaFile", ca_file),
	PSET("JoinAddress", set_join_address),
	PSET("MinCount", set_min_count),
	/* openstack */
	PSTR("Image", image_id),
	PLIST("Networks", networks, nnetworks),
	PSTR("KeyName", key_name),
	PSTR("AvailabilityZone", availability_zone),
	PSET("SchedulerHints", set_scheduler_hints),
	PSET("Interface", set_interface),
	PSTR("Microversion", microversion),
	PSTR("ComputeEndpoint", compute_endpoint),
	PSET("BuildWait", set_build_wait),
	PSET("Accelerators", set_accelerators),
	/* every type: rate limits */
	PSET("LaunchRate", set_launch_rate),
	PSET("TerminateRate", set_terminate_rate),
	PSET("RequestRate", set_request_rate),
	/* openstack */
	PSTR("Cloud", cloud),
	/* gcp (also Image=, MinCount=, BuildWait=, CaFile=, JoinAddress=) */
	PSTR("Project", project),
	PLIST("Zones", zones, nzones),
	PSTR("Network", network),
	PSTR("Subnetwork", subnetwork),
	PSTR("ServiceAccount", service_account),
	PLIST("NetworkTags", network_tags, nnetwork_tags),
	PSTR("InstanceTemplate", instance_template),
	PSTR("DiskType", disk_type),
	PSET("DiskSizeGB", set_disk_size),
	PSET("ExternalIP", set_external_ip),
	PSET("Spot", set_spot),
	PSET("WriteQuota", set_write_quota),
	/* azure (and Zones=, Image=, SubnetId=, CredentialsFile=, Endpoint=, CaFile=, BuildWait=) */
	PSTR("Subscription", subscription),
	PSTR("ResourceGroup", resource_group),
	PSTR("AdminUser", admin_user),
	PSTR("SshPublicKey", ssh_public_key),
	PSET("Priority", set_priority),
	PSET("MaxPrice", set_max_price),
	PSTR("MetadataEndpoint", metadata_endpoint),
	PSET("OsDiskType", set_os_disk_type),
#undef PSTR
#undef PLIST
#undef PSET
};
#define NPKEYS (sizeof(pkeys) / sizeof(pkeys[0]))

static bool provider_key(struct loader *ld, const char *file, int line, void *obj, const char *key,
			 const char *val)
{
	struct pline *pl = obj;
	char *base = (char *)&pl->p;
	size_t i;

	for (i = 0; i < NPKEYS; i++)
		if (str_ieq(key, pkeys[i].name))
			break;
	if (i == NPKEYS || pkeys[i].kind == PK_NONE)
		return false;
	if (pkeys[i].kind == PK_STRING) {
		char **dst = (char **)(void *)(base + pkeys[i].off);
		free(*dst);
		*dst = xstrdup(val);
	} else if (pkeys[i].kind == PK_LIST) {
		char ***dst = (char ***)(void *)(base + pkeys[i].off);
		size_t *n = (size_t *)(void *)(base + pkeys[i].noff);
		cfg_free_list(*dst, *n);
		*dst = cfg_split_list(val, n);
	} else
		pkeys[i].set(ld, file, line, pl, val);
	return true;
}

void cfg_parse_provider(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	const char *keys[NPKEYS + 1];
	struct burst_config *cfg = ld->cfg;
	struct pline pl;
	struct cfg_provider *p = &pl.p;
	size_t i;

	if (!cfg_object_open(ld, file, line, "Provider", w[0].val, "",
			     CFG_OBJECTS(cfg->providers, cfg->nproviders, struct cfg_provider)))
		return;
	memset(&pl, 0, sizeof(pl));
	p->name = xstrdup(w[0].val);
	p->build_wait = -1;
	p->max_price = -1;
	p->write_quota = -1;
	p->write_quota_len = 60;
	for (i = 0; i < NPKEYS; i++)
		keys[i] = pkeys[i].name;
	keys[NPKEYS] = NULL;
	cfg_object_words(ld, file, line, w, n, "Provider", "", keys, provider_key, &pl);
	if (!p->type)
		p->type = xstrdup(p->name);
	for (i = 0; i < NTYPES; i++)
		if (str_ieq(p->type, provider_types[i].name))
			break;
	if (i == NTYPES) {
		const char *names[NTYPES + 1], *near;
		struct strbuf all;
		sb_init(&all);
		type_names(names);
		for (i = 0; i < NTYPES; i++)
			sb_addf(&all, "%s%s", i ? " " : "", names[i]);
		near = str_suggest(p->type, names, 0);
		cfg_err(ld, file, line, "unknown provider type '%s'%s%s%s (types: %s)",
			p->type, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", all.s);
		sb_free(&all);
	} else {
		free(p->type);
		p->type = xstrdup(provider_types[i].name);
	}
	if (!p->catalog)
		p->catalog = xstrdup(p->type);
	rate_limits_default(p->type, &p->rates);
	if (pl.rg.launch)
		p->rates.launch = pl.rg.v.launch;
	if (pl.rg.launch_calls)
		p->rates.launch_calls = pl.rg.v.launch_calls;
	if (pl.rg.terminate)
		p->rates.terminate = pl.rg.v.terminate;
	if (pl.rg.terminate_calls)
		p->rates.terminate_calls = pl.rg.v.terminate_calls;
	if (!p->regions)
		p->regions = xcalloc(1, sizeof(char *));
	p->where = cfg_where_of(file, line);
	cfg->providers = xrealloc(cfg->providers, (cfg->nproviders + 1) * sizeof(*p));
	cfg->providers[cfg->nproviders++] = *p;
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
	free(p->project);
	cfg_free_list(p->zones, p->nzones);
	free(p->network);
	free(p->subnetwork);
	free(p->service_account);
	cfg_free_list(p->network_tags, p->nnetwork_tags);
	free(p->instance_template);
	free(p->disk_type);
	free(p->subscription);
	free(p->resource_group);
	free(p->admin_user);
	free(p->ssh_public_key);
	free(p->metadata_endpoint);
	free(p->os_disk_type);
}

bool config_has_driver(const char *type)
{
	size_t i;

	for (i = 0; type && i < NTYPES; i++)
		if (!strcmp(provider_types[i].name, type))
			return provider_types[i].driver;
	return false;
}

bool config_driver_stops(const char *type)
{
	size_t i;

	for (i = 0; type && i < NTYPES; i++)
		if (!strcmp(provider_types[i].name, type))
			return provider_types[i].driver && provider_types[i].stops;
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
