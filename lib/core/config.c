/*
 * config.c - parse and check burst.conf.
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include "arch.h"
#include "cost.h"
#include "config_int.h"
#include "policy.h"
#include "confwords.h"
#include "strutil.h"

#define MAX_WORDS 128
#define MAX_INCLUDE_DEPTH 8
#define MAX_NODES_PER_SET 65536
#define MAX_LINE_LEN 65536

struct loader {
	struct burst_config *cfg;
	burst_err_t *err;
	int nerr;
};

static void lerr(struct loader *ld, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void lerr(struct loader *ld, const char *file, int line, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ld->nerr == 0)
		burst_err_clear(ld->err);
	if (ld->nerr < 50)
		burst_err_append(ld->err, "%s:%d: %s", file, line, msg);
	else if (ld->nerr == 50)
		burst_err_append(ld->err, "%s:%d: (more errors not shown)", file, line);
	ld->nerr++;
}

/* Strip a comment: '#' not inside quotes and not escaped. */
static void strip_comment(char *s)
{
	bool q = false;
	char *p;

	for (p = s; *p; p++) {
		if (*p == '"')
			q = !q;
		else if (*p == '\\' && p[1] == '#')
			memmove(p, p + 1, strlen(p));
		else if (*p == '#' && !q) {
			*p = '\0';
			return;
		}
	}
}


static char **split_list(const char *s, size_t *n)
{
	char **v = NULL;
	const char *p = s;

	*n = 0;
	while (*p) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len) {
			v = xrealloc(v, (*n + 2) * sizeof(char *));
			v[(*n)++] = xstrndup(p, len);
			v[*n] = NULL;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!v) {
		v = xcalloc(1, sizeof(char *));
	}
	return v;
}

static void free_list(char **v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

static void unknown_key(struct loader *ld, const char *file, int line, const char *obj,
			const char *key, const char *const *known)
{
	const char *near = str_suggest(key, known, 0);

	if (near)
		lerr(ld, file, line, "unknown %s key '%s'; did you mean '%s'?", obj, key, near);
	else
		lerr(ld, file, line, "unknown %s key '%s' (see burst.conf(5))", obj, key);
}

static bool parse_bool(const char *v, bool *out)
{
	if (str_ieq(v, "yes") || str_ieq(v, "true") || str_ieq(v, "1")) { *out = true; return true; }
	if (str_ieq(v, "no") || str_ieq(v, "false") || str_ieq(v, "0")) { *out = false; return true; }
	return false;
}

/*
 * A list key whose every item valid() must accept: replaces *list, or on a
 * bad item reports it (what is expected: want) and leaves *list as it was.
 */
static void set_checked_list(struct loader *ld, const char *file, int line, const char *obj,
			     const char *key, const char *val, bool (*valid)(const char *),
			     const char *want, char ***list, size_t *n)
{
	size_t i, nv;
	char **v = split_list(val, &nv);

	for (i = 0; i < nv; i++)
		if (!valid(v[i])) {
			lerr(ld, file, line, "%s%s: '%s' is not %s", obj, key, v[i], want);
			free_list(v, nv);
			return;
		}
	free_list(*list, *n);
	*list = v;
	*n = nv;
}

/*
 * The admission policy keys, global or on a NodeSet line (obj names which).
 * Returns false when key is not one of them.
 */
static bool parse_policy_key(struct loader *ld, const char *file, int line, const char *obj,
			     const char *key, const char *val, char ***blessed, size_t *nblessed,
			     double *tolerance, char ***required, size_t *nrequired,
			     unsigned long long *taint, bool *taint_set, char ***drivers,
			     size_t *ndrivers)
{
	if (str_ieq(key, "BlessedDrivers")) {
		set_checked_list(ld, file, line, obj, "BlessedDrivers", val, policy_valid_driver,
				 "NAME=VERSION (a kernel module and its version as /sys/module/NAME/version gives it, e.g. nvidia=550.54.15 or efa=2.10.0g; burstctl bless --driver writes one)",
				 drivers, ndrivers);
		return true;
	}

	if (str_ieq(key, "BlessedKernels")) {
		set_checked_list(ld, file, line, obj, "BlessedKernels", val, policy_valid_kernel,
				 "RELEASE[:BUILDID] (e.g. 6.1.0-18-amd64 or 6.1.0-18-amd64:9a3c..., the hex GNU build-id of /sys/kernel/notes; burstctl bless --from NODE writes one)",
				 blessed, nblessed);
	} else if (str_ieq(key, "MemoryTolerance")) {
		if (policy_parse_tolerance(val, tolerance) < 0)
			lerr(ld, file, line, "%sMemoryTolerance=%s: give a percentage (5%%) or a fraction (0.05) from 0 to below 1",
			     obj, val);
	} else if (str_ieq(key, "RequiredModules")) {
		free_list(*required, *nrequired);
		*required = split_list(val, nrequired);
	} else if (str_ieq(key, "AllowedTaint")) {
		char bad;
		if (policy_parse_taint(val, taint, &bad) < 0) {
			if (bad)
				lerr(ld, file, line, "%sAllowedTaint=%s: '%c' is not a kernel taint letter (PFSRMBUDAWCIOELKXTNJ, e.g. AllowedTaint=POE)",
				     obj, val, bad);
			else
				lerr(ld, file, line, "%sAllowedTaint=%s: give taint letters (e.g. POE), none, or a number",
				     obj, val);
		} else if (taint_set)
			*taint_set = true;
	} else
		return false;
	return true;
}

static struct cfg_where where_of(const char *file, int line)
{
	struct cfg_where w = { xstrdup(file), line };
	return w;
}

const char *config_default_path(const char *explicit_path)
{
	static char buf[PATH_MAX];

	return conf_default_path(explicit_path, "BURST_CONF", "burst.conf", buf, sizeof(buf));
}

/* ---- objects ---- */

/* ADDRESS:PORT (JoinAddress=): 1 when it is one. */
static int valid_hostport(const char *v)
{
	const char *colon = strrchr(v, ':');
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;

	return colon && colon != v && end && !*end && colon[1] && port >= 1 && port <= 65535;
}

/* An IPv4 address in dotted form, or "*" (every address): into out; 1 when valid. */
static int parse_listen_addr(const char *v, size_t n, char out[16])
{
	char a[64];
	struct in_addr in;

	if (n == 0 || n >= sizeof(a))
		return 0;
	memcpy(a, v, n);
	a[n] = '\0';
	if (!strcmp(a, "*"))
		snprintf(a, sizeof(a), "0.0.0.0");
	if (inet_pton(AF_INET, a, &in) != 1)
		return 0;
	inet_ntop(AF_INET, &in, out, 16);
	return 1;
}

/* JoinListen=ADDR[:PORT],... (a port of 0: JoinPort's, filled in at the end) */
static void parse_join_listen(struct loader *ld, const char *file, int line, struct burst_config *cfg,
			      const char *val)
{
	size_t n = 0, i;
	char **items = split_list(val, &n);

	free(cfg->join_listen);
	cfg->join_listen = xcalloc(n ? n : 1, sizeof(*cfg->join_listen));
	cfg->njoin_listen = 0;
	cfg->join_listen_set = true;
	if (!n)
		lerr(ld, file, line, "JoinListen= needs at least one ADDRESS[:PORT] (an IPv4 address, or * for every address)");
	for (i = 0; i < n; i++) {
		const char *colon = strchr(items[i], ':');
		struct cfg_listen *l = &cfg->join_listen[cfg->njoin_listen];
		long port = 0;
		char *end = NULL;

		if (colon) {
			port = strtol(colon + 1, &end, 10);
			if (!colon[1] || !end || *end || port < 1 || port > 65535) {
				lerr(ld, file, line, "JoinListen=%s: '%s' has no TCP port (1-65535) after ':'", val, items[i]);
				continue;
			}
		}
		if (!parse_listen_addr(items[i], colon ? (size_t)(colon - items[i]) : strlen(items[i]), l->addr)) {
			lerr(ld, file, line, "JoinListen=%s: '%s' is not an IPv4 ADDRESS[:PORT] such as 10.0.0.5:6830 (or *:6830 for every address)",
			     val, items[i]);
			continue;
		}
		l->port = (int)port;
		cfg->njoin_listen++;
	}
	free_list(items, n);
}

static const char *const provider_types[] = { "local", "aws", "openstack", "gcp", "azure", NULL };

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
			lerr(ld, file, line, "Provider %s: MinCount=%s: want 1 (launch what capacity allows) or all (the whole batch or nothing)",
			     p->name, w->val);
		p->min_count_all = str_ieq(w->val, "all");
		return 1;
	}
	if (str_ieq(w->key, "SecurityGroups")) {
		free_list(p->security_groups, p->nsecurity_groups);
		p->security_groups = split_list(w->val, &p->nsecurity_groups);
		return 1;
	}
	for (i = 0; skeys[i]; i++)
		if (str_ieq(w->key, skeys[i]))
			break;
	if (!skeys[i])
		return 0;
	if (!strcmp(skeys[i], "JoinAddress") && !valid_hostport(w->val))
		lerr(ld, file, line, "Provider %s: JoinAddress=%s is not ADDRESS:PORT such as 10.0.0.5:6830",
		     p->name, w->val);
	free(*dst[i]);
	*dst[i] = xstrdup(w->val);
	return 1;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && !strcmp(s + n - t, tail);
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
		free_list(p->networks, p->nnetworks);
		p->networks = split_list(w->val, &p->nnetworks);
		return 1;
	}
	if (str_ieq(w->key, "SchedulerHints")) {
		free_list(p->scheduler_hints, p->nscheduler_hints);
		free_list(p->accelerators, p->naccelerators);
		p->scheduler_hints = split_list(w->val, &p->nscheduler_hints);
		for (i = 0; i < p->nscheduler_hints; i++)
			if (!strchr(p->scheduler_hints[i], ':') || p->scheduler_hints[i][0] == ':')
				lerr(ld, file, line, "Provider %s: SchedulerHints: '%s' is not KEY:VALUE such as group:UUID",
				     p->name, p->scheduler_hints[i]);
		return 1;
	}
	if (str_ieq(w->key, "Accelerators")) {
		free_list(p->accelerators, p->naccelerators);
		p->accelerators = split_list(w->val, &p->naccelerators);
		for (i = 0; i < p->naccelerators; i++)
			if (!strchr(p->accelerators[i], ':') || p->accelerators[i][0] == ':')
				lerr(ld, file, line, "Provider %s: Accelerators: '%s' is not ALIAS:MODEL such as a100:A100-80GB",
				     p->name, p->accelerators[i]);
		return 1;
	}
	if (str_ieq(w->key, "BuildWait")) {
		char *end = NULL;
		long v = strtol(w->val, &end, 10);
		if (!end || *end || v < 0 || v > 3600)
			lerr(ld, file, line, "Provider %s: BuildWait=%s: want seconds from 0 to 3600", p->name, w->val);
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
		lerr(ld, file, line, "Provider %s: Interface=%s: want public, internal or admin", p->name, w->val);
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
		lerr(ld, file, line, "Provider %s: %s%s: %s", prov, key, val, why);
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
			lerr(ld, file, line, "Provider %s: RequestRate=%s: '%s' is not CALL:SIZE/RATE; want e.g. "
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
			lerr(ld, file, line, "Provider %s: RequestRate=%s: unknown call '%s'%s%s%s (calls: launch, terminate)",
			     prov, w->val, item, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		}
	}
	if (!w->val[0])
		lerr(ld, file, line, "Provider %s: RequestRate= is empty; want e.g. RequestRate=launch:5/2,terminate:100/5",
		     prov);
	free(list);
	return 1;
}

static void parse_provider(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
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
	if (!valid_name(w[0].val)) {
		lerr(ld, file, line, "Provider name '%s' must be letters, digits, '_', '.' or '-'", w[0].val);
		return;
	}
	for (i = 0; i < cfg->nproviders; i++)
		if (strcmp(cfg->providers[i].name, w[0].val) == 0) {
			lerr(ld, file, line, "Provider %s is defined twice (first at %s:%d)", w[0].val,
			     cfg->providers[i].where.file, cfg->providers[i].where.line);
			return;
		}
	p.name = xstrdup(w[0].val);
	p.build_wait = -1;
	for (k = 1; k < n; k++) {
		if (!w[k].key) {
			lerr(ld, file, line, "expected Key=Value, found '%s'", w[k].val);
			continue;
		}
		if (str_ieq(w[k].key, "Type"))
			free(p.type), p.type = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Catalog"))
			free(p.catalog), p.catalog = xstrdup(w[k].val);
		else if (str_ieq(w[k].key, "Regions") || str_ieq(w[k].key, "Region")) {
			free_list(p.regions, p.nregions);
			p.regions = split_list(w[k].val, &p.nregions);
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
				lerr(ld, file, line, "Provider %s: Address=%s is not an IPv4 ADDRESS/PREFIX such as 10.211.0.1/24",
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
			unknown_key(ld, file, line, "Provider", w[k].key, keys);
	}
	if (!p.type)
		p.type = xstrdup(p.name);
	for (i = 0; provider_types[i]; i++)
		if (str_ieq(p.type, provider_types[i]))
			break;
	if (!provider_types[i]) {
		const char *near = str_suggest(p.type, provider_types, 0);
		lerr(ld, file, line, "unknown provider type '%s'%s%s%s (types: local aws openstack gcp azure)",
		     p.type, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	} else {
		free(p.type);
		p.type = xstrdup(provider_types[i]);
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
	p.where = where_of(file, line);
	cfg->providers = xrealloc(cfg->providers, (cfg->nproviders + 1) * sizeof(p));
	cfg->providers[cfg->nproviders++] = p;
}

/* A contract error message is multi-line; indent its continuation lines. */
static void contract_error(struct loader *ld, const char *file, int line, const char *what,
			   const char *msg)
{
	struct strbuf sb;
	const char *p;

	sb_init(&sb);
	for (p = msg; *p; p++) {
		if (*p == '\n')
			sb_add(&sb, "\n    ");
		else
			sb_addf(&sb, "%c", *p);
	}
	lerr(ld, file, line, "%s: %s", what, sb.s);
	sb_free(&sb);
}

static void parse_contract(struct loader *ld, const char *file, int line, char *rest,
			   const char *name)
{
	struct burst_config *cfg = ld->cfg;
	struct cfg_contract cc;
	burst_err_t cerr;
	char what[300];
	size_t i;

	if (!valid_name(name)) {
		lerr(ld, file, line, "Contract name '%s' must be letters, digits, '_', '.' or '-' (it becomes a Slurm feature)",
		     name);
		return;
	}
	for (i = 0; i < cfg->ncontracts; i++)
		if (strcmp(cfg->contracts[i].name, name) == 0) {
			lerr(ld, file, line, "Contract %s is defined twice (first at %s:%d)", name,
			     cfg->contracts[i].where.file, cfg->contracts[i].where.line);
			return;
		}
	snprintf(what, sizeof(what), "Contract %s", name);
	burst_err_clear(&cerr);
	cc.c = contract_parse(rest, &cerr);
	if (!cc.c) {
		contract_error(ld, file, line, what, cerr.msg);
		return;
	}
	cc.name = xstrdup(name);
	cc.where = where_of(file, line);
	cfg->contracts = xrealloc(cfg->contracts, (cfg->ncontracts + 1) * sizeof(cc));
	cfg->contracts[cfg->ncontracts++] = cc;
}

static void free_nodeset(struct cfg_nodeset *ns)
{
	free(ns->name);
	free(ns->nodes_expr);
	hostlist_free(&ns->nodes);
	free(ns->partition);
	free_list(ns->providers, ns->nproviders);
	free_list(ns->regions, ns->nregions);
	free_list(ns->types, ns->ntypes);
	contract_free(ns->constraint);
	free(ns->features);
	free_list(ns->blessed_kernels, ns->nblessed_kernels);
	free_list(ns->blessed_drivers, ns->nblessed_drivers);
	free(ns->acceptance);
	free_list(ns->required_modules, ns->nrequired_modules);
	free(ns->where.file);
}

static void parse_nodeset(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	static const char *const keys[] = { "NodeSet", "Nodes", "Partition", "Providers",
		"Provider", "Regions", "Region", "InstanceTypes", "Constraint", "Features",
		"BlessedKernels", "Weight", "Acceptance", "MemoryTolerance", "RequiredModules",
		"AllowedTaint", "BlessedDrivers", "EarlyLaunch", NULL };
	char pobj[300];
	struct burst_config *cfg = ld->cfg;
	struct cfg_nodeset ns;
	int k, before = ld->nerr;
	size_t i;

	memset(&ns, 0, sizeof(ns));
	ns.memory_tolerance = NAN;
	ns.early_launch = -1;
	snprintf(pobj, sizeof(pobj), "NodeSet %s: ", w[0].val);
	if (!valid_name(w[0].val)) {
		lerr(ld, file, line, "NodeSet name '%s' must be letters, digits, '_', '.' or '-'", w[0].val);
		return;
	}
	for (i = 0; i < cfg->nnodesets; i++)
		if (strcmp(cfg->nodesets[i].name, w[0].val) == 0) {
			lerr(ld, file, line, "NodeSet %s is defined twice (first at %s:%d)", w[0].val,
			     cfg->nodesets[i].where.file, cfg->nodesets[i].where.line);
			return;
		}
	ns.name = xstrdup(w[0].val);
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;

		if (!key) {
			lerr(ld, file, line, "expected Key=Value, found '%s'", val);
			continue;
		}
		if (str_ieq(key, "Nodes")) {
			burst_err_t herr;
			free(ns.nodes_expr);
			hostlist_free(&ns.nodes);
			ns.nodes_expr = xstrdup(val);
			if (hostlist_expand(val, &ns.nodes, MAX_NODES_PER_SET, &herr) < 0)
				lerr(ld, file, line, "NodeSet %s: Nodes=%s: %s", ns.name, val, herr.msg);
		} else if (str_ieq(key, "Partition")) {
			free(ns.partition);
			ns.partition = xstrdup(val);
		} else if (str_ieq(key, "Providers") || str_ieq(key, "Provider")) {
			free_list(ns.providers, ns.nproviders);
			ns.providers = split_list(val, &ns.nproviders);
		} else if (str_ieq(key, "Regions") || str_ieq(key, "Region")) {
			free_list(ns.regions, ns.nregions);
			ns.regions = split_list(val, &ns.nregions);
		} else if (str_ieq(key, "InstanceTypes")) {
			free_list(ns.types, ns.ntypes);
			ns.types = split_list(val, &ns.ntypes);
		} else if (str_ieq(key, "Constraint")) {
			burst_err_t cerr;
			char what[300];
			contract_free(ns.constraint);
			ns.constraint = contract_parse(val, &cerr);
			if (!ns.constraint) {
				snprintf(what, sizeof(what), "NodeSet %s Constraint", ns.name);
				contract_error(ld, file, line, what, cerr.msg);
			}
		} else if (str_ieq(key, "Features")) {
			free(ns.features);
			ns.features = xstrdup(val);
		} else if (str_ieq(key, "Acceptance")) {
			free(ns.acceptance);
			if (val[0] != '/')
				lerr(ld, file, line, "NodeSet %s: Acceptance must be the absolute path of an acceptance.conf, not '%s'",
				     ns.name, val);
			else
				ns.acceptance = xstrdup(val);
		} else if (parse_policy_key(ld, file, line, pobj, key, val, &ns.blessed_kernels,
					    &ns.nblessed_kernels, &ns.memory_tolerance, &ns.required_modules,
					    &ns.nrequired_modules, &ns.allowed_taint, &ns.allowed_taint_set,
					    &ns.blessed_drivers, &ns.nblessed_drivers)) {
			;
		} else if (str_ieq(key, "EarlyLaunch")) {
			bool b;
			if (!parse_bool(val, &b))
				lerr(ld, file, line, "NodeSet %s: EarlyLaunch is yes or no, not '%s'", ns.name, val);
			else
				ns.early_launch = b;
		} else if (str_ieq(key, "Weight")) {
			char *end;
			long v = strtol(val, &end, 10);
			if (!*val || *end || v < 1 || v > 65533)
				lerr(ld, file, line, "NodeSet %s: Weight=%s: expected a whole number from 1 to 65533 (Slurm's node Weight: lower is chosen first)",
				     ns.name, val);
			else
				ns.weight = (int)v;
		} else
			unknown_key(ld, file, line, "NodeSet", key, keys);
	}
	if (!ns.nodes_expr && ld->nerr == before)
		lerr(ld, file, line, "NodeSet %s needs Nodes= (the Slurm node names it provisions, e.g. Nodes=burst-[1-8])",
		     ns.name);
	if (!ns.types && !ns.constraint && ld->nerr == before)
		lerr(ld, file, line, "NodeSet %s needs InstanceTypes= or Constraint= (which instance types it may launch)",
		     ns.name);
	if (ld->nerr != before) {
		free_nodeset(&ns);
		return;
	}
	if (!ns.partition)
		ns.partition = xstrdup(ns.name);
	ns.where = where_of(file, line);
	cfg->nodesets = xrealloc(cfg->nodesets, (cfg->nnodesets + 1) * sizeof(ns));
	cfg->nodesets[cfg->nnodesets++] = ns;
}

static void add_override(struct burst_config *cfg, struct cfg_override *o)
{
	cfg->overrides = xrealloc(cfg->overrides, (cfg->noverrides + 1) * sizeof(*o));
	cfg->overrides[cfg->noverrides++] = *o;
}

static void free_override(struct cfg_override *o)
{
	size_t i;

	free(o->provider);
	free(o->type);
	free(o->region);
	for (i = 0; i < o->nvals; i++)
		free(o->vals[i].str);
	free(o->vals);
	free(o->where.file);
}

static void parse_price(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	static const char *const keys[] = { "Price", "Provider", "Region", "OnDemand", "Spot", NULL };
	struct cfg_override o;
	int k, before = ld->nerr;

	memset(&o, 0, sizeof(o));
	o.kind = OVERRIDE_PRICE;
	o.type = xstrdup(w[0].val);
	o.ondemand = o.spot = NAN;
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		if (!key) {
			lerr(ld, file, line, "expected Key=Value, found '%s'", val);
			continue;
		}
		if (str_ieq(key, "Provider"))
			free(o.provider), o.provider = xstrdup(val);
		else if (str_ieq(key, "Region"))
			free(o.region), o.region = xstrdup(val);
		else if (str_ieq(key, "OnDemand") || str_ieq(key, "Spot")) {
			double v;
			char msg[200];
			if (units_parse(val, strlen(val), UNIT_PRICE, &v, msg, sizeof(msg), NULL) < 0)
				lerr(ld, file, line, "Price %s: %s=%s: %s", o.type, key, val, msg);
			else if (str_ieq(key, "OnDemand"))
				o.ondemand = v;
			else
				o.spot = v;
		} else
			unknown_key(ld, file, line, "Price", key, keys);
	}
	if (!o.provider || !o.region)
		lerr(ld, file, line, "Price %s needs Provider= and Region=", o.type);
	if (isnan(o.ondemand) && isnan(o.spot))
		lerr(ld, file, line, "Price %s needs OnDemand= and/or Spot= (US dollars per hour)", o.type);
	if (ld->nerr != before) {
		free_override(&o);
		return;
	}
	o.where = where_of(file, line);
	add_override(ld->cfg, &o);
}

static void free_budget(struct cfg_budget *b)
{
	free(b->name);
	free(b->nodeset);
	free(b->account);
	free(b->where.file);
}

/* Budget=NAME Amount=USD Period=day|week|month|year [NodeSet=NS] [Account=ACCT] */
static void parse_budget(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	static const char *const keys[] = { "Budget", "Amount", "Period", "NodeSet", "Account", NULL };
	struct cfg_budget b;
	struct burst_config *cfg = ld->cfg;
	bool amount = false;
	int k, before = ld->nerr;
	size_t i;

	memset(&b, 0, sizeof(b));
	b.period = -1;
	if (!valid_name(w[0].val)) {
		lerr(ld, file, line, "Budget=%s: a budget's name is letters, digits, '_', '.' and '-'", w[0].val);
		return;
	}
	b.name = xstrdup(w[0].val);
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		if (!key) {
			lerr(ld, file, line, "Budget %s: expected Key=Value, found '%s'", b.name, val);
			continue;
		}
		if (str_ieq(key, "Amount")) {
			char *end;
			double v;
			errno = 0;
			v = strtod(val, &end);
			if (!val[0] || *end || errno || !isfinite(v) || v < 0)
				lerr(ld, file, line, "Budget %s: Amount=%s: give US dollars per period, a number >= 0 (e.g. Amount=100 or Amount=12.50)",
				     b.name, val);
			else {
				b.amount = v;
				amount = true;
			}
		} else if (str_ieq(key, "Period")) {
			b.period = cost_period_parse(val);
			if (b.period < 0) {
				static const char *const periods[] = { "day", "week", "month", "year", NULL };
				const char *near = str_suggest(val, periods, 0);
				lerr(ld, file, line, "Budget %s: Period=%s: give day, week, month or year%s%s%s", b.name, val,
				     near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
			}
		} else if (str_ieq(key, "NodeSet") || str_ieq(key, "Account")) {
			char **dst = str_ieq(key, "NodeSet") ? &b.nodeset : &b.account;
			if (!val[0])
				lerr(ld, file, line, "Budget %s: %s= needs a name", b.name, key);
			else if (*dst)
				lerr(ld, file, line, "Budget %s: %s= given twice (a budget has one of each at most)", b.name, key);
			else
				*dst = xstrdup(val);
		} else
			unknown_key(ld, file, line, "Budget", key, keys);
	}
	if (!amount && ld->nerr == before)
		lerr(ld, file, line, "Budget %s needs Amount= (US dollars per period, e.g. Amount=100)", b.name);
	if (b.period < 0 && ld->nerr == before)
		lerr(ld, file, line, "Budget %s needs Period= (day, week, month or year)", b.name);
	for (i = 0; i < cfg->nbudgets; i++)
		if (str_ieq(cfg->budgets[i].name, b.name)) {
			lerr(ld, file, line, "Budget %s is defined twice (first at %s:%d): give each its own name",
			     b.name, cfg->budgets[i].where.file, cfg->budgets[i].where.line);
			free_budget(&b);
			return;
		}
	/* kept with errors too (the load fails anyway): its NodeSet= is checked
	 * with the other references, so that one run says everything */
	b.where = where_of(file, line);
	cfg->budgets = xrealloc(cfg->budgets, (cfg->nbudgets + 1) * sizeof(b));
	cfg->budgets[cfg->nbudgets++] = b;
}

static void parse_itype(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	struct cfg_override o;
	int k, before = ld->nerr;

	memset(&o, 0, sizeof(o));
	o.kind = OVERRIDE_TYPE;
	o.type = xstrdup(w[0].val);
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		const struct key_info *ki;
		struct cfg_value v;

		if (!key) {
			lerr(ld, file, line, "expected Key=Value, found '%s'", val);
			continue;
		}
		if (str_ieq(key, "Provider")) {
			free(o.provider);
			o.provider = xstrdup(val);
			continue;
		}
		ki = key_lookup(key, strlen(key));
		if (!ki || ki->id >= KEY_NFEATURES || ki->id == KEY_PROVIDER ||
		    ki->id == KEY_REGION || ki->id == KEY_MACHINETYPE || ki->id == KEY_PRICE) {
			const char *near = str_suggest(key, key_names(), 0);
			if (ki)
				lerr(ld, file, line, "InstanceType %s: '%s' cannot be set here (use Provider=, or a Price line for prices)",
				     o.type, key);
			else
				lerr(ld, file, line, "InstanceType %s: unknown key '%s'%s%s%s", o.type, key,
				     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			continue;
		}
		memset(&v, 0, sizeof(v));
		v.key = ki->id;
		v.num = NAN;
		v.arch = -1;
		if (ki->kind == KIND_NUMBER) {
			char msg[200];
			if (units_parse(val, strlen(val), ki->unit, &v.num, msg, sizeof(msg), NULL) < 0) {
				lerr(ld, file, line, "InstanceType %s: %s=%s: %s", o.type, key, val, msg);
				continue;
			}
		} else if (ki->kind == KIND_ARCH) {
			const struct arch_info *ai = arch_lookup(val);
			if (!ai) {
				const char *near = str_suggest(val, arch_names(), 0);
				lerr(ld, file, line, "InstanceType %s: unknown accelerator architecture '%s'%s%s%s",
				     o.type, val, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
				continue;
			}
			v.arch = (int)(ai - arch_at(0));
		} else
			v.str = xstrdup(val);
		o.vals = xrealloc(o.vals, (o.nvals + 1) * sizeof(v));
		o.vals[o.nvals++] = v;
	}
	if (!o.provider)
		lerr(ld, file, line, "InstanceType %s needs Provider=", o.type);
	if (ld->nerr != before) {
		free_override(&o);
		return;
	}
	o.where = where_of(file, line);
	add_override(ld->cfg, &o);
}

static int load_file(struct loader *ld, const char *path, int depth, const char *from,
		     int fromline);

/* MetricsListen=ADDR:PORT: an IPv4 address of this host (127.0.0.1 for the
 * local Prometheus only, 0.0.0.0 for any) and a TCP port. */
static void parse_metrics_listen(struct loader *ld, const char *file, int line, const char *val)
{
	struct in_addr a;
	const char *colon = strrchr(val, ':');
	char addr[64], *end;
	long port;

	if (!colon || colon == val || (size_t)(colon - val) >= sizeof(addr)) {
		lerr(ld, file, line, "MetricsListen=%s: give ADDRESS:PORT, e.g. MetricsListen=127.0.0.1:9830", val);
		return;
	}
	memcpy(addr, val, (size_t)(colon - val));
	addr[colon - val] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (inet_pton(AF_INET, addr, &a) != 1) {
		lerr(ld, file, line, "MetricsListen=%s: '%s' is not an IPv4 address (e.g. 127.0.0.1)", val, addr);
		return;
	}
	if (!colon[1] || *end || port < 1 || port > 65535) {
		lerr(ld, file, line, "MetricsListen=%s: give a TCP port (1-65535) after the colon", val);
		return;
	}
	free(ld->cfg->metrics_listen);
	ld->cfg->metrics_listen = xstrdup(val);
	snprintf(ld->cfg->metrics_addr, sizeof(ld->cfg->metrics_addr), "%s", addr);
	ld->cfg->metrics_port = (int)port;
}

static void parse_line(struct loader *ld, const char *file, int line, char *text, int depth)
{
	static const char *const objects[] = { "Provider", "Contract", "NodeSet", "InstanceType",
		"Price", "Budget", "Include", "ClusterName", "CatalogDir", "AllowInlineContracts",
		"StateDir", "SocketPath", "JoinPort", "JoinListen", "JoinAddress", "BootTimeout", "RejectCooldown",
		"ReconcileInterval", "OrphanGrace", "VanishGrace", "LeaseTimeout",
		"PrologSlurmctld", "LogFile", "MungeSocket", "Acceptance", "BlessedKernels",
		"MemoryTolerance", "RequiredModules", "AllowedTaint", "AllowInsecureEndpoint",
		"BlessedDrivers", "MetricsListen", "CostNoteInterval", "InterruptionCooldown", "EarlyLaunch",
		"BudgetAccountTrust",
		"JoinReportMemory", NULL };
	struct conf_word w[MAX_WORDS];
	struct burst_config *cfg = ld->cfg;
	size_t bad = 0;
	int n;
	char *copy;

	/* Contract lines: the rest of the line after the name is the contract. */
	{
		char *p = text;
		while (isspace((unsigned char)*p))
			p++;
		if (strncasecmp(p, "Contract=", 9) == 0) {
			char *name = p + 9, *end = name;
			while (*end && !isspace((unsigned char)*end))
				end++;
			if (*end)
				*end++ = '\0';
			parse_contract(ld, file, line, str_trim(end), name);
			return;
		}
	}
	copy = xstrdup(text);
	n = conf_split_words(copy, w, MAX_WORDS, false, &bad);
	if (n < 0) {
		lerr(ld, file, line, "unterminated quote starting near column %zu", bad);
		goto out;
	}
	if (n == 0)
		goto out;
	if (n == MAX_WORDS) {
		lerr(ld, file, line, "too many words on one line (at most %d)", MAX_WORDS - 1);
		goto out;
	}
	if (!w[0].key) {
		if (str_ieq(w[0].val, "Include")) {
			char path[PATH_MAX];
			if (n != 2) {
				lerr(ld, file, line, "Include takes one file name");
				goto out;
			}
			if (w[1].val[0] == '/')
				snprintf(path, sizeof(path), "%s", w[1].val);
			else {
				char *dup = xstrdup(file);
				snprintf(path, sizeof(path), "%s/%s", dirname(dup), w[1].val);
				free(dup);
			}
			load_file(ld, path, depth + 1, file, line);
			goto out;
		}
		{
			const char *near = str_suggest(w[0].val, objects, 0);
			lerr(ld, file, line, "expected Key=Value, found '%s'%s%s%s", w[0].val,
			     near ? "; did you mean '" : "", near ? near : "", near ? "=...'?" : "");
		}
		goto out;
	}
	if (!w[0].val[0] && !str_ieq(w[0].key, "CatalogDir")) {
		lerr(ld, file, line, "%s= needs a value", w[0].key);
		goto out;
	}
	if (str_ieq(w[0].key, "Provider"))
		parse_provider(ld, file, line, w, n);
	else if (str_ieq(w[0].key, "NodeSet"))
		parse_nodeset(ld, file, line, w, n);
	else if (str_ieq(w[0].key, "InstanceType"))
		parse_itype(ld, file, line, w, n);
	else if (str_ieq(w[0].key, "Price"))
		parse_price(ld, file, line, w, n);
	else if (str_ieq(w[0].key, "Budget"))
		parse_budget(ld, file, line, w, n);
	else if (str_ieq(w[0].key, "Include") || str_ieq(w[0].key, "ClusterName") ||
		 str_ieq(w[0].key, "CatalogDir") || str_ieq(w[0].key, "AllowInlineContracts") ||
		 str_ieq(w[0].key, "StateDir") || str_ieq(w[0].key, "SocketPath") ||
		 str_ieq(w[0].key, "JoinPort") || str_ieq(w[0].key, "BootTimeout") ||
		 str_ieq(w[0].key, "JoinListen") || str_ieq(w[0].key, "JoinAddress") ||
		 str_ieq(w[0].key, "RejectCooldown") || str_ieq(w[0].key, "PrologSlurmctld") ||
		 str_ieq(w[0].key, "ReconcileInterval") || str_ieq(w[0].key, "OrphanGrace") ||
		 str_ieq(w[0].key, "VanishGrace") || str_ieq(w[0].key, "LeaseTimeout") ||
		 str_ieq(w[0].key, "LogFile") || str_ieq(w[0].key, "MungeSocket") ||
		 str_ieq(w[0].key, "Acceptance") ||
		 str_ieq(w[0].key, "BlessedKernels") || str_ieq(w[0].key, "MemoryTolerance") ||
		 str_ieq(w[0].key, "BlessedDrivers") || str_ieq(w[0].key, "MetricsListen") ||
		 str_ieq(w[0].key, "CostNoteInterval") || str_ieq(w[0].key, "InterruptionCooldown") ||
		 str_ieq(w[0].key, "EarlyLaunch") || str_ieq(w[0].key, "JoinReportMemory") ||
		 str_ieq(w[0].key, "BudgetAccountTrust") ||
		 str_ieq(w[0].key, "RequiredModules") || str_ieq(w[0].key, "AllowedTaint") ||
		 str_ieq(w[0].key, "AllowInsecureEndpoint")) {
		int k;
		/* global settings: one or more per line */
		for (k = 0; k < n; k++) {
			if (!w[k].key) {
				lerr(ld, file, line, "expected Key=Value, found '%s'", w[k].val);
			} else if (parse_policy_key(ld, file, line, "", w[k].key, w[k].val,
						    &cfg->blessed_kernels, &cfg->nblessed_kernels,
						    &cfg->memory_tolerance, &cfg->required_modules,
						    &cfg->nrequired_modules, &cfg->allowed_taint, NULL,
						    &cfg->blessed_drivers, &cfg->nblessed_drivers)) {
				;
			} else if (str_ieq(w[k].key, "ClusterName")) {
				free(cfg->cluster_name);
				cfg->cluster_name = xstrdup(w[k].val);
			} else if (str_ieq(w[k].key, "CatalogDir")) {
				free(cfg->catalog_dir);
				cfg->catalog_dir = w[k].val[0] ? xstrdup(w[k].val) : NULL;
			} else if (str_ieq(w[k].key, "JoinListen")) {
				parse_join_listen(ld, file, line, cfg, w[k].val);
			} else if (str_ieq(w[k].key, "JoinAddress")) {
				if (!valid_hostport(w[k].val))
					lerr(ld, file, line, "JoinAddress=%s is not ADDRESS:PORT such as 203.0.113.7:6830 (where instances reach the agent's join port)",
					     w[k].val);
				free(cfg->join_address);
				cfg->join_address = xstrdup(w[k].val);
			} else if (str_ieq(w[k].key, "AllowInsecureEndpoint")) {
				if (!parse_bool(w[k].val, &cfg->allow_insecure_endpoint))
					lerr(ld, file, line, "AllowInsecureEndpoint is yes or no, not '%s'", w[k].val);
			} else if (str_ieq(w[k].key, "EarlyLaunch")) {
				if (!parse_bool(w[k].val, &cfg->early_launch))
					lerr(ld, file, line, "EarlyLaunch is yes or no, not '%s'", w[k].val);
			} else if (str_ieq(w[k].key, "BudgetAccountTrust")) {
				/* whose word a budget by account takes: Slurm's enforced
				 * associations, or (the risk accepted) the agent's own check */
				if (str_ieq(w[k].val, "enforced"))
					cfg->budget_accounts_unenforced = false;
				else if (str_ieq(w[k].val, "unenforced"))
					cfg->budget_accounts_unenforced = true;
				else
					lerr(ld, file, line, "BudgetAccountTrust is enforced (the default: Account= budgets need "
					     "Slurm's AccountingStorageEnforce=associations) or unenforced (the risk accepted), "
					     "not '%s'", w[k].val);
			} else if (str_ieq(w[k].key, "AllowInlineContracts")) {
				if (!parse_bool(w[k].val, &cfg->allow_inline))
					lerr(ld, file, line, "AllowInlineContracts is yes or no, not '%s'", w[k].val);
			} else if (str_ieq(w[k].key, "ReconcileInterval") || str_ieq(w[k].key, "OrphanGrace") ||
				   str_ieq(w[k].key, "VanishGrace") || str_ieq(w[k].key, "CostNoteInterval")) {
				/* the reconciler: 0 is allowed (interval: off; grace: act at once) */
				char *end;
				long v = strtol(w[k].val, &end, 10);
				if (!w[k].val[0] || *end || v < 0 || v > 86400)
					lerr(ld, file, line, "%s=%s: give seconds (0-86400)", w[k].key, w[k].val);
				else if (str_ieq(w[k].key, "ReconcileInterval"))
					cfg->reconcile_interval = (int)v;
				else if (str_ieq(w[k].key, "CostNoteInterval"))
					cfg->cost_note_interval = (int)v;
				else if (str_ieq(w[k].key, "OrphanGrace"))
					cfg->orphan_grace = (int)v;
				else
					cfg->vanish_grace = (int)v;
			} else if (str_ieq(w[k].key, "InterruptionCooldown")) {
				/* a type and region whose instance got a spot interruption notice */
				char *end;
				long v = strtol(w[k].val, &end, 10);
				if (!w[k].val[0] || *end || v < 1 || v > 86400)
					lerr(ld, file, line, "%s=%s: give seconds (1-86400)", w[k].key, w[k].val);
				else
					cfg->interruption_cooldown = (int)v;
			} else if (str_ieq(w[k].key, "LeaseTimeout")) {
				/* the active agent's lease (agent_lease.c): renewed every
				 * LeaseTimeout/5 s, taken over after LeaseTimeout s */
				char *end;
				long v = strtol(w[k].val, &end, 10);
				if (!w[k].val[0] || *end || v < 2 || v > 300)
					lerr(ld, file, line, "%s=%s: give seconds (2-300)", w[k].key, w[k].val);
				else
					cfg->lease_timeout = (int)v;
			} else if (str_ieq(w[k].key, "JoinPort") || str_ieq(w[k].key, "BootTimeout") ||
				   str_ieq(w[k].key, "RejectCooldown")) {
				char *end;
				long v = strtol(w[k].val, &end, 10);
				bool port = str_ieq(w[k].key, "JoinPort");
				long lo = str_ieq(w[k].key, "RejectCooldown") ? 0 : 1;
				if (!w[k].val[0] || *end || v < lo || v > (port ? 65535 : 86400))
					lerr(ld, file, line, "%s=%s: give %s", w[k].key, w[k].val,
					     port ? "a TCP port (1-65535)" :
					     lo ? "seconds (1-86400)" : "seconds (0-86400)");
				else if (port)
					cfg->join_port = (int)v;
				else if (lo)
					cfg->boot_timeout = (int)v;
				else
					cfg->reject_cooldown = (int)v;
			} else if (str_ieq(w[k].key, "MetricsListen")) {
				parse_metrics_listen(ld, file, line, w[k].val);
			} else if (str_ieq(w[k].key, "JoinReportMemory")) {
				/* the bytes of reports not yet whole, all join connections together */
				double v;
				char msg[256];
				if (units_parse(w[k].val, strlen(w[k].val), UNIT_SIZE, &v, msg, sizeof(msg), NULL) < 0)
					lerr(ld, file, line, "JoinReportMemory=%s: %s", w[k].val, msg);
				else if (v < (double)CONFIG_JOIN_REPORT_MEMORY_MIN || v > (double)CONFIG_JOIN_REPORT_MEMORY_MAX)
					lerr(ld, file, line, "JoinReportMemory=%s: give a size from 1M (one whole report) to 64G",
					     w[k].val);
				else
					cfg->join_report_memory = (size_t)v;
			} else if (str_ieq(w[k].key, "LogFile") && str_ieq(w[k].val, "syslog")) {
				free(cfg->log_file);
				cfg->log_file = xstrdup("syslog");
			} else if (str_ieq(w[k].key, "StateDir") || str_ieq(w[k].key, "SocketPath") ||
				   str_ieq(w[k].key, "PrologSlurmctld") || str_ieq(w[k].key, "LogFile") ||
				   str_ieq(w[k].key, "MungeSocket") || str_ieq(w[k].key, "Acceptance")) {
				char **dst = str_ieq(w[k].key, "StateDir") ? &cfg->state_dir :
					     str_ieq(w[k].key, "Acceptance") ? &cfg->acceptance :
					     str_ieq(w[k].key, "SocketPath") ? &cfg->socket_path :
					     str_ieq(w[k].key, "MungeSocket") ? &cfg->munge_socket :
					     str_ieq(w[k].key, "LogFile") ? &cfg->log_file : &cfg->prolog_slurmctld;
				if (w[k].val[0] != '/')
					lerr(ld, file, line, "%s must be an absolute path%s, not '%s'", w[k].key,
					     str_ieq(w[k].key, "LogFile") ? " or syslog" : "", w[k].val);
				else {
					free(*dst);
					*dst = xstrdup(w[k].val);
				}
			} else if (str_ieq(w[k].key, "Include")) {
				lerr(ld, file, line, "write 'Include FILE' (a blank, not '=')");
			} else {
				unknown_key(ld, file, line, "global", w[k].key, objects);
			}
		}
	} else {
		const char *near = str_suggest(w[0].key, objects, 0);
		lerr(ld, file, line, "unknown key '%s'%s%s%s (a line starts with a global key or Provider=, Contract=, NodeSet=, InstanceType=, Price=, Budget=)",
		     w[0].key, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
out:
	free(copy);
}

static int load_file(struct loader *ld, const char *path, int depth, const char *from,
		     int fromline)
{
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	int line = 0;

	if (depth > MAX_INCLUDE_DEPTH) {
		lerr(ld, from, fromline, "Include nested deeper than %d (a loop?) at %s", MAX_INCLUDE_DEPTH, path);
		return -1;
	}
	f = fopen(path, "r");
	if (!f) {
		if (from)
			lerr(ld, from, fromline, "Include %s: %s", path, strerror(errno));
		else {
			burst_err_set(ld->err, "%s: cannot open: %s", path, strerror(errno));
			ld->nerr++;
		}
		return -1;
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		line++;
		if (len > MAX_LINE_LEN) {
			lerr(ld, path, line, "line longer than %d bytes", MAX_LINE_LEN);
			continue;
		}
		if (memchr(buf, '\0', (size_t)len)) {
			lerr(ld, path, line, "NUL byte in line (not a text file?)");
			continue;
		}
		/* join continuation lines ending in '\' */
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		strip_comment(buf);
		parse_line(ld, path, line, buf, depth);
	}
	free(buf);
	if (ferror(f)) {   /* e.g. a directory: fopen succeeds, reading does not */
		int e = errno;

		fclose(f);
		if (from)
			lerr(ld, from, fromline, "Include %s: cannot read: %s", path, strerror(e));
		else {
			burst_err_set(ld->err, "%s: cannot read: %s", path, strerror(e));
			ld->nerr++;
		}
		return -1;
	}
	fclose(f);
	return 0;
}

struct burst_config *config_load(const char *path, burst_err_t *err)
{
	struct burst_config *cfg = xcalloc(1, sizeof(*cfg));
	struct loader ld = { cfg, err, 0 };
	size_t i, j;

	burst_err_clear(err);
	cfg->path = xstrdup(path);
	cfg->allow_inline = true;
	cfg->join_port = 6830;
	cfg->join_report_memory = CONFIG_JOIN_REPORT_MEMORY;
	cfg->boot_timeout = 300;
	cfg->reject_cooldown = 60;
	cfg->interruption_cooldown = 600;
	cfg->reconcile_interval = 60;
	cfg->cost_note_interval = 60;
	cfg->orphan_grace = 300;
	cfg->vanish_grace = 60;
	cfg->lease_timeout = 5;
	cfg->memory_tolerance = POLICY_DEFAULT_MEMORY_TOLERANCE;
	cfg->allowed_taint = POLICY_DEFAULT_TAINT;
	load_file(&ld, path, 0, NULL, 0);
	/* references between objects: checked even when lines had errors, so
	 * that one run reports everything (an object whose own line failed is
	 * still in its table unless its name itself was bad) */
	{
		for (i = 0; i < cfg->nnodesets; i++) {
			struct cfg_nodeset *ns = &cfg->nodesets[i];
			for (j = 0; j < ns->nproviders; j++) {
				size_t p;
				const char *names[64];
				size_t nn = 0;
				for (p = 0; p < cfg->nproviders; p++)
					if (strcmp(cfg->providers[p].name, ns->providers[j]) == 0)
						break;
				if (p < cfg->nproviders)
					continue;
				for (p = 0; p < cfg->nproviders && nn < 63; p++)
					names[nn++] = cfg->providers[p].name;
				names[nn] = NULL;
				{
					const char *near = str_suggest(ns->providers[j], names, 0);
					lerr(&ld, ns->where.file, ns->where.line,
					     "NodeSet %s: Providers names '%s', which no Provider= line defines%s%s%s",
					     ns->name, ns->providers[j], near ? "; did you mean '" : "",
					     near ? near : "", near ? "'?" : "");
				}
			}
			for (j = 0; j < i; j++) {
				size_t h;
				for (h = 0; h < ns->nodes.n; h++)
					if (hostlist_find(&cfg->nodesets[j].nodes, ns->nodes.names[h]) >= 0) {
						lerr(&ld, ns->where.file, ns->where.line,
						     "NodeSet %s: node %s is already in NodeSet %s (%s:%d); a node belongs to one node set",
						     ns->name, ns->nodes.names[h], cfg->nodesets[j].name,
						     cfg->nodesets[j].where.file, cfg->nodesets[j].where.line);
						break;
					}
			}
		}
		/* cloud API calls carry signed requests and their answers: TLS,
		 * unless a test's burst.conf says otherwise */
		for (i = 0; i < cfg->nproviders && !cfg->allow_insecure_endpoint; i++)
			if (cfg->providers[i].endpoint && !strncasecmp(cfg->providers[i].endpoint, "http://", 7))
				lerr(&ld, cfg->providers[i].where.file, cfg->providers[i].where.line,
				     "Provider %s: Endpoint=%s is plain HTTP: requests and answers would travel unencrypted and unverified; use https:// (AllowInsecureEndpoint=yes is for tests against a local endpoint only)",
				     cfg->providers[i].name, cfg->providers[i].endpoint);
		for (i = 0; i < cfg->nbudgets; i++) {
			const struct cfg_budget *b = &cfg->budgets[i];
			const char *names[64];
			size_t nn = 0;
			if (!b->nodeset)
				continue;
			for (j = 0; j < cfg->nnodesets; j++)
				if (!strcmp(cfg->nodesets[j].name, b->nodeset))
					break;
			if (j < cfg->nnodesets)
				continue;
			for (j = 0; j < cfg->nnodesets && nn < 63; j++)
				names[nn++] = cfg->nodesets[j].name;
			names[nn] = NULL;
			{
				const char *near = str_suggest(b->nodeset, names, 0);
				lerr(&ld, b->where.file, b->where.line,
				     "Budget %s: NodeSet=%s names no NodeSet= line%s%s%s", b->name, b->nodeset,
				     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			}
		}
		for (i = 0; i < cfg->ncontracts; i++)
			for (j = 0; j < cfg->nnodesets; j++)
				if (strcmp(cfg->contracts[i].name, cfg->nodesets[j].name) == 0)
					lerr(&ld, cfg->contracts[i].where.file, cfg->contracts[i].where.line,
					     "Contract %s has the name of NodeSet %s (%s:%d); both become Slurm features, so they must differ",
					     cfg->contracts[i].name, cfg->nodesets[j].name,
					     cfg->nodesets[j].where.file, cfg->nodesets[j].where.line);
	}
	/* where the agent listens for node reports: JoinListen=, else the local
	 * provider's bridge (as before JoinListen= existed), else everywhere */
	if (!cfg->join_listen_set) {
		const struct cfg_provider *loc = NULL;
		for (i = 0; i < cfg->nproviders && !loc; i++)
			if (!strcmp(cfg->providers[i].type, "local") && cfg->providers[i].address)
				loc = &cfg->providers[i];
		cfg->join_listen = xcalloc(1, sizeof(*cfg->join_listen));
		cfg->njoin_listen = 1;
		if (!loc || !parse_listen_addr(loc->address, strcspn(loc->address, "/"), cfg->join_listen[0].addr))
			snprintf(cfg->join_listen[0].addr, sizeof(cfg->join_listen[0].addr), "0.0.0.0");
	}
	for (i = 0; i < cfg->njoin_listen; i++)
		if (!cfg->join_listen[i].port)
			cfg->join_listen[i].port = cfg->join_port;
	if (!cfg->cluster_name)
		cfg->cluster_name = xstrdup("slurm");
	if (!cfg->state_dir)
		cfg->state_dir = xstrdup(BURST_DEFAULT_STATE_DIR);
	if (!cfg->socket_path) {
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "%s/agent.sock", cfg->state_dir);
		cfg->socket_path = sb_take(&sb);
	}
	if (ld.nerr) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

bool config_early_launch(const struct burst_config *cfg, const struct cfg_nodeset *ns)
{
	return ns && ns->early_launch >= 0 ? ns->early_launch != 0 : cfg->early_launch;
}

void config_free(struct burst_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->nproviders; i++) {
		struct cfg_provider *p = &cfg->providers[i];
		free(p->name);
		free(p->type);
		free(p->catalog);
		free_list(p->regions, p->nregions);
		free(p->credentials);
		free(p->endpoint);
		free(p->bridge);
		free(p->address);
		free(p->where.file);
		free(p->image_id);
		free(p->launch_template);
		free(p->subnet_id);
		free_list(p->security_groups, p->nsecurity_groups);
		free(p->iam_instance_profile);
		free(p->profile);
		free(p->ca_file);
		free(p->join_address);
		free_list(p->networks, p->nnetworks);
		free(p->key_name);
		free(p->availability_zone);
		free_list(p->scheduler_hints, p->nscheduler_hints);
		free_list(p->accelerators, p->naccelerators);
		free(p->interface);
		free(p->cloud);
		free(p->microversion);
		free(p->compute_endpoint);
	}
	free(cfg->providers);
	for (i = 0; i < cfg->ncontracts; i++) {
		free(cfg->contracts[i].name);
		contract_free(cfg->contracts[i].c);
		free(cfg->contracts[i].where.file);
	}
	free(cfg->contracts);
	for (i = 0; i < cfg->nnodesets; i++)
		free_nodeset(&cfg->nodesets[i]);
	free(cfg->nodesets);
	for (i = 0; i < cfg->noverrides; i++)
		free_override(&cfg->overrides[i]);
	free(cfg->overrides);
	for (i = 0; i < cfg->nbudgets; i++)
		free_budget(&cfg->budgets[i]);
	free(cfg->budgets);
	free(cfg->path);
	free(cfg->cluster_name);
	free(cfg->catalog_dir);
	free(cfg->state_dir);
	free(cfg->socket_path);
	free(cfg->join_listen);
	free(cfg->join_address);
	free(cfg->prolog_slurmctld);
	free(cfg->munge_socket);
	free(cfg->acceptance);
	free(cfg->log_file);
	free(cfg->metrics_listen);
	free_list(cfg->blessed_kernels, cfg->nblessed_kernels);
	free_list(cfg->blessed_drivers, cfg->nblessed_drivers);
	free_list(cfg->required_modules, cfg->nrequired_modules);
	free(cfg);
}

/* ---- with the catalog ---- */

/* The catalog provider name of a configured provider (or name itself). */
static const char *provider_catalog(const struct burst_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nproviders; i++)
		if (strcmp(cfg->providers[i].name, name) == 0)
			return cfg->providers[i].catalog;
	return name;
}

/*
 * The local provider offers one instance type, local.host: this machine's
 * real vCPUs and memory, detected now, so that contracts resolve honestly
 * against it.
 */
static void add_local_host(struct catalog *cat, const char *catalog_name)
{
	char name[256];
	struct cat_type *t;
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	double kib = NAN;

	snprintf(name, sizeof(name), "%s:local.host", catalog_name);
	t = catalog_find_type(cat, name);
	if (!t)
		t = catalog_add_type(cat, catalog_name, "local.host", catalog_source(cat, "detected on this host"));
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lf kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	t->num[KEY_VCPUS] = (double)sysconf(_SC_NPROCESSORS_ONLN);
	t->num[KEY_MEMORY] = kib * 1024;
	t->num[KEY_ACC_COUNT] = 0;
	catalog_no_accelerators(cat, t);
#if defined(__x86_64__)
	t->sid[KEY_PROC_ISA] = catalog_intern(cat, "x86_64");
#elif defined(__aarch64__)
	t->sid[KEY_PROC_ISA] = catalog_intern(cat, "aarch64");
#endif
}

int config_apply_catalog(const struct burst_config *cfg, struct catalog *cat,
			 burst_err_t *err)
{
	size_t i, k;
	int problems = 0;

	for (i = 0; i < cfg->nproviders; i++)
		if (!strcmp(cfg->providers[i].type, "local"))
			add_local_host(cat, cfg->providers[i].catalog);

	for (i = 0; i < cfg->noverrides; i++) {
		const struct cfg_override *o = &cfg->overrides[i];
		const char *ptype = provider_catalog(cfg, o->provider);
		char name[512], src[PATH_MAX + 32];
		struct cat_type *t;

		snprintf(name, sizeof(name), "%s:%s", ptype, o->type);
		t = catalog_find_type(cat, name);
		snprintf(src, sizeof(src), "%s:%d", o->where.file, o->where.line);
		if (o->kind == OVERRIDE_PRICE) {
			if (!t) {
				burst_err_append(err, "%s:%d: Price %s: no instance type %s in the %s catalog (add it with an InstanceType= line)",
						 o->where.file, o->where.line, o->type, o->type, ptype);
				problems++;
				continue;
			}
			{
				double od = o->ondemand, sp = o->spot;
				int rid = catalog_find_str(cat, o->region);
				for (k = 0; k < t->nprices && rid >= 0; k++)
					if (t->prices[k].region == rid) {
						if (isnan(od)) od = t->prices[k].ondemand;
						if (isnan(sp)) sp = t->prices[k].spot;
					}
				catalog_set_price(cat, t, o->region, od, sp);
			}
			continue;
		}
		if (!t) {
			t = catalog_add_type(cat, ptype, o->type, catalog_source(cat, src));
			t->num[KEY_ACC_COUNT] = 0;
		} else
			t->source = catalog_source(cat, src);
		for (k = 0; k < o->nvals; k++) {
			const struct cfg_value *v = &o->vals[k];
			const struct key_info *ki = key_info(v->key);
			if (ki->kind == KIND_NUMBER)
				t->num[v->key] = v->num;
			else if (ki->kind == KIND_ARCH)
				t->sid[v->key] = v->arch;
			else
				t->sid[v->key] = catalog_intern(cat, v->str);
		}
		if (t->num[KEY_ACC_COUNT] == 0)
			catalog_no_accelerators(cat, t);
	}
	catalog_index(cat);
	return problems ? -1 : 0;
}

static bool in_list(char **list, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(list[i], s) == 0)
			return true;
	return false;
}

/* A node set's candidates before its Constraint, in the order they are
 * made (raw) and in name order (sorted): node sets that select the same
 * providers, regions and types (as all do in a one-provider burst.conf)
 * make the same list, which is then sorted once, not once per node set. */
struct ns_cands {
	struct candidate *raw;
	size_t nraw;
	struct candset sorted;
	bool valid;
};

static void ns_cands_clear(struct ns_cands *nc)
{
	free(nc->raw);
	candset_clear(&nc->sorted);
	memset(nc, 0, sizeof(*nc));
}

/* Whether a and b are the same candidates in the same order, node sets aside. */
static bool same_cands(const struct candidate *a, const struct candidate *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].type != b[i].type || a[i].region != b[i].region || a[i].provider != b[i].provider ||
		    memcmp(&a[i].ondemand, &b[i].ondemand, sizeof(double)) ||
		    memcmp(&a[i].spot, &b[i].spot, sizeof(double)))
			return false;
	return true;
}

/* Add a candidate to cs as configured provider p (index and name) launches it. */
static void add_provided(struct candset *cs, const struct cat_type *ty, int region, double ondemand, double spot,
			 int nodeset, int p, const char *pname)
{
	candset_add(cs, ty, region, ondemand, spot, nodeset);
	cs->c[cs->n - 1].provider = p;
	cs->c[cs->n - 1].provider_name = pname;
}

/* Add the candidates of node set i to cs. Returns how many were added. */
static size_t nodeset_candidates(const struct burst_config *cfg, const struct catalog *cat,
				 size_t nsi, struct candset *cs, struct ns_cands *prev)
{
	const struct cfg_nodeset *ns = &cfg->nodesets[nsi];
	size_t p, t, r, before = cs->n;
	struct candset tmp, *sorted;

	memset(&tmp, 0, sizeof(tmp));
	for (p = 0; p < cfg->nproviders; p++) {
		const struct cfg_provider *pv = &cfg->providers[p];
		char *const *regs = ns->nregions ? ns->regions : pv->regions;
		size_t nregs = ns->nregions ? ns->nregions : pv->nregions;
		int *rids;
		int pid;

		if (ns->providers && ns->nproviders && !in_list(ns->providers, ns->nproviders, pv->name))
			continue;
		pid = catalog_find_str(cat, pv->catalog);
		if (pid < 0)
			continue;
		/* each region's id, looked up (interned if the catalog has no
		 * price there) at its first use, once for all the types */
		rids = xmalloc((nregs ? nregs : 1) * sizeof(int));
		for (r = 0; r < nregs; r++)
			rids[r] = INT_MIN;
		for (t = 0; t < cat->ntypes; t++) {
			const struct cat_type *ty = &cat->types[t];

			if (ty->provider != pid)
				continue;
			if (ns->ntypes && !in_list(ns->types, ns->ntypes, catalog_str(cat, ty->name)))
				continue;
			if (nregs == 0) {
				if (ty->nprices == 0) {
					add_provided(&tmp, ty, CATALOG_UNKNOWN, NAN, NAN, (int)nsi, (int)p, pv->name);
				}
				for (r = 0; r < ty->nprices; r++) {
					add_provided(&tmp, ty, ty->prices[r].region, ty->prices[r].ondemand,
						     ty->prices[r].spot, (int)nsi, (int)p, pv->name);
				}
				continue;
			}
			for (r = 0; r < nregs; r++) {
				double od = NAN, sp = NAN;
				size_t k;
				if (rids[r] == INT_MIN) {
					rids[r] = catalog_find_str(cat, regs[r]);
					if (rids[r] < 0)
						rids[r] = catalog_intern((struct catalog *)cat, regs[r]);
				}
				for (k = 0; k < ty->nprices; k++)
					if (ty->prices[k].region == rids[r]) {
						od = ty->prices[k].ondemand;
						sp = ty->prices[k].spot;
					}
				add_provided(&tmp, ty, rids[r], od, sp, (int)nsi, (int)p, pv->name);
			}
		}
		free(rids);
	}
	if (prev->valid && prev->nraw == tmp.n && same_cands(prev->raw, tmp.c, tmp.n)) {
		/* the same list as the previous node set's: its name and
		 * price orders hold, the node set being the same for all */
		candset_clear(&tmp);
		sorted = &prev->sorted;
		for (t = 0; t < sorted->n; t++)
			sorted->c[t].nodeset = (int)nsi;
	} else {
		ns_cands_clear(prev);
		prev->nraw = tmp.n;
		prev->raw = xmalloc((tmp.n ? tmp.n : 1) * sizeof(*tmp.c));
		if (tmp.n)
			memcpy(prev->raw, tmp.c, tmp.n * sizeof(*tmp.c));
		candset_sort(cat, &tmp);
		prev->sorted = tmp;
		prev->valid = true;
		sorted = &prev->sorted;
	}
	if (ns->constraint) {
		struct resolution res;
		burst_err_t e;
		resolver_run(cat, sorted, ns->constraint, 0, &res, &e);
		for (t = 0; t < res.n; t++) {
			const struct candidate *cd = &sorted->c[res.m[t].cand];
			add_provided(cs, cd->type, cd->region, cd->ondemand, cd->spot, cd->nodeset, cd->provider,
				     cd->provider_name);
		}
		resolution_free(&res);
	} else {
		for (t = 0; t < sorted->n; t++) {
			const struct candidate *cd = &sorted->c[t];
			add_provided(cs, cd->type, cd->region, cd->ondemand, cd->spot, cd->nodeset, cd->provider,
				     cd->provider_name);
		}
	}
	return cs->n - before;
}

struct candset *config_candidates(const struct burst_config *cfg,
				  const struct catalog *cat, burst_err_t *err)
{
	struct candset *cs = xcalloc(1, sizeof(*cs));
	struct ns_cands prev;
	size_t i;

	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < cfg->nnodesets; i++)
		if (nodeset_candidates(cfg, cat, i, cs, &prev) == 0) {
			burst_err_set(err, "%s:%d: NodeSet %s has no instance type to launch: check its Providers, InstanceTypes and Constraint (burstctl catalog list)",
				      cfg->nodesets[i].where.file, cfg->nodesets[i].where.line,
				      cfg->nodesets[i].name);
			candset_free(cs);
			ns_cands_clear(&prev);
			return NULL;
		}
	ns_cands_clear(&prev);
	candset_sort(cat, cs);
	return cs;
}

/* The local provider's Bridge= must exist on this host and carry the
 * address of Address=: the agent listens there and its instances are
 * plugged into it. NULL when it does, else why not. */
static const char *local_bridge_problem(const struct cfg_provider *p, char *why, size_t len)
{
	struct ifaddrs *ifs, *i;
	char want[64], *slash;
	bool exists, has_addr = false, up = false;

	if (!p->bridge)
		return NULL;
	exists = if_nametoindex(p->bridge) != 0;
	if (!exists) {
		snprintf(why, len, "Bridge=%s does not exist on this host: create it (ip link add %s type bridge; ip addr add %s dev %s; ip link set %s up)",
			 p->bridge, p->bridge, p->address ? p->address : "ADDR/PREFIX", p->bridge, p->bridge);
		return why;
	}
	if (!p->address)
		return NULL;
	snprintf(want, sizeof(want), "%s", p->address);
	if ((slash = strchr(want, '/')))
		*slash = '\0';
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i && !has_addr; i = i->ifa_next) {
			char got[INET_ADDRSTRLEN];
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, p->bridge))
				continue;
			inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, got, sizeof(got));
			has_addr = !strcmp(got, want);
			up = (i->ifa_flags & IFF_UP) != 0;
		}
		freeifaddrs(ifs);
	}
	if (!has_addr) {
		snprintf(why, len, "Bridge=%s does not have the address %s: ip addr add %s dev %s",
			 p->bridge, want, p->address, p->bridge);
		return why;
	}
	if (!up) {
		/* instances on it would get "No route to host" at join */
		snprintf(why, len, "Bridge=%s is down: ip link set %s up", p->bridge, p->bridge);
		return why;
	}
	return NULL;
}

/* The provider types burst-agent has a driver for: keep in step with the
 * table in burst-agent/provider.c. */
static const char *const agent_drivers[] = { "local", "aws", "openstack", NULL };

bool config_has_driver(const char *type)
{
	size_t i;

	for (i = 0; type && agent_drivers[i]; i++)
		if (!strcmp(agent_drivers[i], type))
			return true;
	return false;
}

/* The listening entry that takes connections to addr (dotted), or NULL. */
static const struct cfg_listen *listen_for(const struct burst_config *cfg, const char *addr)
{
	size_t i;

	for (i = 0; i < cfg->njoin_listen; i++)
		if (!strcmp(cfg->join_listen[i].addr, addr))
			return &cfg->join_listen[i];
	for (i = 0; i < cfg->njoin_listen; i++)
		if (!strcmp(cfg->join_listen[i].addr, "0.0.0.0"))
			return &cfg->join_listen[i];
	return NULL;
}

/* The local provider's bridge address, without its prefix, into out (16). */
static bool bridge_addr(const struct cfg_provider *p, char out[16])
{
	return p->address && parse_listen_addr(p->address, strcspn(p->address, "/"), out);
}

const char *config_join_address(const struct burst_config *cfg, const struct cfg_provider *p,
				char *buf, size_t len)
{
	char a[16];
	size_t i;

	if (p->join_address) {
		snprintf(buf, len, "%s", p->join_address);
		return buf;
	}
	if (!strcmp(p->type, "local")) {
		const struct cfg_listen *l;
		if (!bridge_addr(p, a) || !(l = listen_for(cfg, a)))
			return NULL;
		snprintf(buf, len, "%s:%d", a, l->port);
		return buf;
	}
	if (cfg->join_address) {
		snprintf(buf, len, "%s", cfg->join_address);
		return buf;
	}
	for (i = 0; i < cfg->njoin_listen; i++)
		if (strcmp(cfg->join_listen[i].addr, "0.0.0.0")) {
			snprintf(buf, len, "%s:%d", cfg->join_listen[i].addr, cfg->join_listen[i].port);
			return buf;
		}
	return NULL;
}

/* Whether addr (dotted) is the wildcard or an address of one of this host's interfaces. */
static bool host_has_addr(const char *addr)
{
	struct ifaddrs *ifs, *i;
	bool has = !strcmp(addr, "0.0.0.0");

	if (has || getifaddrs(&ifs) != 0)
		return has;
	for (i = ifs; i && !has; i = i->ifa_next) {
		char got[INET_ADDRSTRLEN];
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, got, sizeof(got));
		has = !strcmp(got, addr);
	}
	freeifaddrs(ifs);
	return has;
}

/* Where provider p's instances report, or a problem (into err; 1). */
static int join_problem(const struct burst_config *cfg, const struct cfg_provider *p, burst_err_t *err)
{
	char where[300], a[16];

	if (!strcmp(p->type, "local") && (!p->bridge || !p->address)) {
		burst_err_append(err, "%s:%d: Provider %s (local) needs Bridge=NAME Address=ADDR/PREFIX: the bridge its instances are plugged into and its address",
				 p->where.file, p->where.line, p->name);
		return 1;
	}
	if (config_join_address(cfg, p, where, sizeof(where)))
		return 0;
	if (!strcmp(p->type, "local") && bridge_addr(p, a)) {
		burst_err_append(err, "%s:%d: Provider %s: its instances report to its bridge's address %s, where the agent does not listen: add %s to JoinListen= (or give the Provider line a JoinAddress=)",
				 p->where.file, p->where.line, p->name, a, a);
		return 1;
	}
	burst_err_append(err, "%s:%d: Provider %s: nothing says where its instances send their join report: set JoinAddress=ADDRESS:PORT (globally or on this line; the address instances reach the agent at, maybe a NAT or load-balancer address) or JoinListen= with a specific address",
			 p->where.file, p->where.line, p->name);
	return 1;
}

const struct cfg_budget *config_account_budget(const struct burst_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nbudgets; i++)
		if (cfg->budgets[i].account)
			return &cfg->budgets[i];
	return NULL;
}

int config_check_budget_accounts(const struct burst_config *cfg, const struct slurm_acct *sa,
				 burst_err_t *err, burst_err_t *warn)
{
	char slurm[PATH_MAX + 600];
	int problems = 0;
	size_t i;

	if (!config_account_budget(cfg))
		return 0;
	if (!sa->known)
		snprintf(slurm, sizeof(slurm), "whether Slurm enforces associations is unknown: %s", sa->why);
	else
		snprintf(slurm, sizeof(slurm), "%s has AccountingStorageEnforce=%s, AccountingStorageType=%s",
			 sa->source, sa->enforce, sa->type);
	for (i = 0; i < cfg->nbudgets; i++) {
		const struct cfg_budget *b = &cfg->budgets[i];
		if (!b->account || (sa->known && sa->associations))
			continue;
		if (sa->known && !sa->dbd) {
			burst_err_append(err, "%s:%d: Budget %s: Account=%s counts the jobs of a Slurm account, and %s: "
					 "without slurmdbd an account is whatever the user types (sbatch --account) and "
					 "nothing can check it; set AccountingStorageType=accounting_storage/slurmdbd and "
					 "AccountingStorageEnforce=associations, or drop Account=",
					 b->where.file, b->where.line, b->name, b->account, slurm);
			problems++;
		} else if (!cfg->budget_accounts_unenforced) {
			burst_err_append(err, "%s:%d: Budget %s: Account=%s counts the jobs of a Slurm account, which the "
					 "user chooses (sbatch --account): %s, so slurmctld does not hold a job's account to "
					 "its user's associations and a user escapes the budget by naming another account. "
					 "Set AccountingStorageEnforce=associations (or limits, qos, safe; slurmctld restarted), "
					 "or accept the risk with BudgetAccountTrust=unenforced (the agent then checks each "
					 "job's account against slurmdbd's associations itself and holds the job when it is "
					 "none of its user's)", b->where.file, b->where.line, b->name, b->account, slurm);
			problems++;
		} else if (warn)
			burst_err_append(warn, "%s:%d: Budget %s: Account=%s: WARNING: Slurm does not enforce associations "
					 "(%s): a job's account is what its user typed. BudgetAccountTrust=unenforced accepts "
					 "that: the agent checks each job's account against slurmdbd's associations before it "
					 "launches for it, and holds a job whose account is none of its user's; a job Slurm "
					 "places on a burst node already up needs no launch and is not checked, and a user of "
					 "several accounts still picks which budget pays",
					 b->where.file, b->where.line, b->name, b->account, slurm);
	}
	return problems;
}

int config_check(const struct burst_config *cfg, const struct catalog *cat,
		 burst_err_t *err)
{
	struct candset *cs;
	struct ns_cands prev;
	int problems = 0;
	size_t i, j;
	char drivers[256] = "";

	burst_err_clear(err);
	for (i = 0; agent_drivers[i]; i++) {
		size_t l = strlen(drivers);
		snprintf(drivers + l, sizeof(drivers) - l, "%s%s", i ? ", " : "", agent_drivers[i]);
	}
	/* (the default, a local bridge's address, is checked with the bridge) */
	for (i = 0; i < cfg->njoin_listen && cfg->join_listen_set; i++)
		if (!host_has_addr(cfg->join_listen[i].addr)) {
			burst_err_append(err, "%s: JoinListen: %s is no address of this host: the agent could not listen there for node reports (give one of this host's addresses, or * for every address)",
					 cfg->path, cfg->join_listen[i].addr);
			problems++;
		}
	if (cfg->nproviders == 0) {
		burst_err_append(err, "%s: no Provider= line: nothing can be launched", cfg->path);
		problems++;
	}
	for (i = 0; i < cfg->nproviders; i++) {
		const struct cfg_provider *p = &cfg->providers[i];
		struct stat st;
		char why[512];
		if (!config_has_driver(p->type)) {
			burst_err_append(err, "%s:%d: Provider %s: Type=%s has no driver in burst-agent (drivers: %s): remove it or use one of those",
					 p->where.file, p->where.line, p->name, p->type, drivers);
			problems++;
			continue;
		}
		problems += join_problem(cfg, p, err);
		if (!strcmp(p->type, "local") && local_bridge_problem(p, why, sizeof(why))) {
			burst_err_append(err, "%s:%d: Provider %s: %s", p->where.file, p->where.line, p->name, why);
			problems++;
		}
		if (!strcmp(p->type, "aws") && !p->image_id && !p->launch_template) {
			burst_err_append(err, "%s:%d: Provider %s (aws) needs ImageId=ami-... or LaunchTemplate=lt-...|NAME: the image its instances boot",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (!strcmp(p->type, "openstack") && !p->image_id) {
			burst_err_append(err, "%s:%d: Provider %s (openstack) needs Image=NAME|ID: the image its servers boot",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (!strcmp(p->type, "openstack") && !p->credentials) {
			burst_err_append(err, "%s:%d: Provider %s (openstack) needs CredentialsFile=: an openrc-style file "
					 "(OS_AUTH_URL, OS_USERNAME/OS_PASSWORD/OS_PROJECT_NAME or OS_APPLICATION_CREDENTIAL_ID/_SECRET), "
					 "or a clouds.yaml with Cloud=NAME; mode 0600",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (p->cloud && strcmp(p->type, "openstack")) {
			burst_err_append(err, "%s:%d: Provider %s: Cloud= is for openstack providers (a clouds.yaml entry)",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (!strcmp(p->type, "openstack") && p->credentials && !p->cloud &&
		    (ends_with(p->credentials, ".yaml") || ends_with(p->credentials, ".yml"))) {
			burst_err_append(err, "%s:%d: Provider %s: CredentialsFile %s looks like a clouds.yaml: "
					 "say which of its clouds with Cloud=NAME",
					 p->where.file, p->where.line, p->name, p->credentials);
			problems++;
		}
		if (!p->credentials)
			continue;
		if (stat(p->credentials, &st) < 0) {
			burst_err_append(err, "%s:%d: Provider %s: CredentialsFile %s: %s",
					 p->where.file, p->where.line, p->name, p->credentials, strerror(errno));
			problems++;
		} else if (st.st_mode & 077) {
			burst_err_append(err, "%s:%d: Provider %s: CredentialsFile %s is readable by others (mode %03o): chmod 600 it",
					 p->where.file, p->where.line, p->name, p->credentials,
					 (unsigned)(st.st_mode & 0777));
			problems++;
		}
	}
	for (i = 0; i < cfg->nnodesets; i++) {
		const struct cfg_nodeset *ns = &cfg->nodesets[i];
		for (j = 0; j < ns->ntypes; j++) {
			bool found = false;
			size_t p;
			for (p = 0; p < cfg->nproviders && !found; p++) {
				char name[512];
				if (ns->nproviders && !in_list(ns->providers, ns->nproviders, cfg->providers[p].name))
					continue;
				snprintf(name, sizeof(name), "%s:%s", cfg->providers[p].catalog, ns->types[j]);
				found = catalog_find_type(cat, name) != NULL;
			}
			if (!found) {
				const char **names = xcalloc(cat->ntypes + 1, sizeof(char *));
				const char *near;
				size_t t;
				for (t = 0; t < cat->ntypes; t++)
					names[t] = catalog_str(cat, cat->types[t].name);
				near = str_suggest(ns->types[j], names, cat->ntypes);
				burst_err_append(err, "%s:%d: NodeSet %s: instance type %s is in no catalog of its providers%s%s%s",
						 ns->where.file, ns->where.line, ns->name, ns->types[j],
						 near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
				free(names);
				problems++;
			}
		}
	}
	cs = xcalloc(1, sizeof(*cs));
	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < cfg->nnodesets; i++)
		if (nodeset_candidates(cfg, cat, i, cs, &prev) == 0) {
			burst_err_append(err, "%s:%d: NodeSet %s has no instance type to launch: check its Providers, InstanceTypes and Constraint",
					 cfg->nodesets[i].where.file, cfg->nodesets[i].where.line,
					 cfg->nodesets[i].name);
			problems++;
		}
	ns_cands_clear(&prev);
	candset_sort(cat, cs);
	for (i = 0; i < cfg->ncontracts; i++) {
		const struct cfg_contract *cc = &cfg->contracts[i];
		struct resolution res;
		burst_err_t e;

		if (cfg->nnodesets == 0)
			break;
		resolver_run(cat, cs, cc->c, 0, &res, &e);
		if (res.n == 0) {
			burst_err_append(err, "%s:%d: Contract %s is satisfied by no instance type of any NodeSet (burstctl resolve %s --explain says why)",
					 cc->where.file, cc->where.line, cc->name, cc->name);
			problems++;
		}
		resolution_free(&res);
	}
	candset_free(cs);
	return problems;
}

const char *config_price_source(const struct burst_config *cfg, const char *provider, const char *type,
				const char *region, char *buf, size_t len)
{
	const char *cat = provider_catalog(cfg, provider);
	size_t i;

	snprintf(buf, len, "on-demand: catalog");
	/* the last Price= line of it wins, as config_apply_catalog applies them in order */
	for (i = 0; i < cfg->noverrides; i++) {
		const struct cfg_override *o = &cfg->overrides[i];
		if (o->kind == OVERRIDE_PRICE && !isnan(o->ondemand) && !strcmp(o->type, type) &&
		    o->region && region && !strcmp(o->region, region) && !strcmp(provider_catalog(cfg, o->provider), cat))
			snprintf(buf, len, "on-demand: Price= %s:%d", o->where.file, o->where.line);
	}
	return buf;
}

const struct cfg_contract *config_find_contract(const struct burst_config *cfg,
						const char *name)
{
	size_t i;

	for (i = 0; i < cfg->ncontracts; i++)
		if (strcmp(cfg->contracts[i].name, name) == 0)
			return &cfg->contracts[i];
	return NULL;
}

const char *config_suggest_contract(const struct burst_config *cfg, const char *name)
{
	const char **names = xcalloc(cfg->ncontracts + 1, sizeof(char *));
	const char *near;
	size_t i;

	for (i = 0; i < cfg->ncontracts; i++)
		names[i] = cfg->contracts[i].name;
	near = str_suggest(name, names, cfg->ncontracts);
	free(names);
	return near;
}

void config_policy(const struct burst_config *cfg, const struct cfg_nodeset *ns,
		   struct policy *out)
{
	policy_init(out);
	out->blessed_kernels = cfg->blessed_kernels;
	out->nblessed = cfg->nblessed_kernels;
	out->memory_tolerance = cfg->memory_tolerance;
	out->required_modules = cfg->required_modules;
	out->nrequired = cfg->nrequired_modules;
	out->allowed_taint = cfg->allowed_taint;
	out->blessed_drivers = cfg->blessed_drivers;
	out->nblessed_drivers = cfg->nblessed_drivers;
	if (!ns)
		return;
	if (ns->blessed_drivers) {
		out->blessed_drivers = ns->blessed_drivers;
		out->nblessed_drivers = ns->nblessed_drivers;
		out->any_driver = ns->nblessed_drivers == 0;
	}
	if (ns->blessed_kernels) {
		out->blessed_kernels = ns->blessed_kernels;
		out->nblessed = ns->nblessed_kernels;
		out->any_kernel = ns->nblessed_kernels == 0;
	}
	if (!isnan(ns->memory_tolerance))
		out->memory_tolerance = ns->memory_tolerance;
	if (ns->required_modules) {
		out->required_modules = ns->required_modules;
		out->nrequired = ns->nrequired_modules;
	}
	if (ns->allowed_taint_set)
		out->allowed_taint = ns->allowed_taint;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

const char *config_identity_change(const struct burst_config *old, const struct burst_config *cfg,
				   char *buf, size_t len)
{
	size_t i, j, k;

	if (!same_str(old->cluster_name, cfg->cluster_name)) {
		snprintf(buf, len, "ClusterName changed from %s to %s (instances are tagged with it)",
			 old->cluster_name, cfg->cluster_name);
		return buf;
	}
	if (!same_str(old->state_dir, cfg->state_dir)) {
		snprintf(buf, len, "StateDir changed from %s to %s", old->state_dir, cfg->state_dir);
		return buf;
	}
	if (!same_str(old->socket_path, cfg->socket_path)) {
		snprintf(buf, len, "SocketPath changed from %s to %s", old->socket_path, cfg->socket_path);
		return buf;
	}
	if (old->join_port != cfg->join_port) {
		snprintf(buf, len, "JoinPort changed from %d to %d", old->join_port, cfg->join_port);
		return buf;
	}
	for (i = 0; i < old->nproviders; i++) {
		const struct cfg_provider *o = &old->providers[i], *n = NULL;
		for (j = 0; j < cfg->nproviders && !n; j++)
			if (!strcmp(cfg->providers[j].name, o->name))
				n = &cfg->providers[j];
		if (!n) {
			snprintf(buf, len, "Provider %s was removed (its live instances would be taken for vanished)",
				 o->name);
			return buf;
		}
		if (strcmp(n->type, o->type)) {
			snprintf(buf, len, "Provider %s changed Type from %s to %s", o->name, o->type, n->type);
			return buf;
		}
		for (j = 0; j < o->nregions; j++) {
			for (k = 0; k < n->nregions; k++)
				if (!strcmp(n->regions[k], o->regions[j]))
					break;
			if (k == n->nregions) {
				snprintf(buf, len,
					 "Provider %s: region %s was dropped (its live instances would be taken for vanished)",
					 o->name, o->regions[j]);
				return buf;
			}
		}
	}
	for (i = 0; i < old->njoin_listen || i < cfg->njoin_listen; i++)
		if (i >= old->njoin_listen || i >= cfg->njoin_listen ||
		    strcmp(old->join_listen[i].addr, cfg->join_listen[i].addr) ||
		    old->join_listen[i].port != cfg->join_listen[i].port) {
			snprintf(buf, len, "JoinListen= changed (the addresses the agent listens on for node reports)");
			return buf;
		}
	return NULL;
}
