/*
 * config_nodeset.c - NodeSet= lines and the admission policy they override.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy.h"

#include "config_int.h"
#include "strutil.h"
#include "units.h"

#define MAX_NODES_PER_SET 65536

void cfg_free_nodeset(struct cfg_nodeset *ns)
{
	free(ns->name);
	free(ns->nodes_expr);
	hostlist_free(&ns->nodes);
	free(ns->partition);
	cfg_free_list(ns->providers, ns->nproviders);
	cfg_free_list(ns->regions, ns->nregions);
	cfg_free_list(ns->types, ns->ntypes);
	contract_free(ns->constraint);
	free(ns->features);
	cfg_free_list(ns->blessed_kernels, ns->nblessed_kernels);
	cfg_free_list(ns->blessed_drivers, ns->nblessed_drivers);
	free(ns->acceptance);
	cfg_free_list(ns->required_modules, ns->nrequired_modules);
	free(ns->where.file);
}

static const char *const nodeset_keys[] = { "NodeSet", "Nodes", "Partition", "Providers",
	"Provider", "Regions", "Region", "InstanceTypes", "Constraint", "Features",
	"BlessedKernels", "Weight", "Acceptance", "MemoryTolerance", "RequiredModules",
	"AllowedTaint", "BlessedDrivers", "EarlyLaunch", "WarmPool", "WarmPoolMaxAge",
	"WarmPoolBudget", NULL };

/*
 * A duration: whole seconds, or a whole number followed by s, m, h or d
 * ("90", "90s", "30m", "12h", "7d"). 1 with *secs, 0 when it is none.
 */
static int parse_duration(const char *v, long *secs)
{
	char *end;
	long n, mult = 1;

	if (!isdigit((unsigned char)v[0]))
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || n < 0)
		return 0;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 's': mult = 1; break;
		case 'm': mult = 60; break;
		case 'h': mult = 3600; break;
		case 'd': mult = 86400; break;
		default: return 0;
		}
		if (end[1])
			return 0;
	}
	if (n > LONG_MAX / mult)
		return 0;
	*secs = n * mult;
	return 1;
}

/* A NodeSet= line being read. */
struct nsline {
	struct cfg_nodeset ns;
	char pobj[300];          /* "NodeSet NAME: ", for the policy keys' messages */
};

static bool nodeset_key(struct loader *ld, const char *file, int line, void *obj, const char *key,
			const char *val)
{
	struct nsline *nl = obj;
	struct cfg_nodeset *ns = &nl->ns;

	if (str_ieq(key, "Nodes")) {
		burst_err_t herr;
		free(ns->nodes_expr);
		hostlist_free(&ns->nodes);
		ns->nodes_expr = xstrdup(val);
		if (hostlist_expand(val, &ns->nodes, MAX_NODES_PER_SET, &herr) < 0)
			cfg_err(ld, file, line, "NodeSet %s: Nodes=%s: %s", ns->name, val, herr.msg);
	} else if (str_ieq(key, "Partition")) {
		free(ns->partition);
		ns->partition = xstrdup(val);
	} else if (str_ieq(key, "Providers") || str_ieq(key, "Provider")) {
		cfg_free_list(ns->providers, ns->nproviders);
		ns->providers = cfg_split_list(val, &ns->nproviders);
	} else if (str_ieq(key, "Regions") || str_ieq(key, "Region")) {
		cfg_free_list(ns->regions, ns->nregions);
		ns->regions = cfg_split_list(val, &ns->nregions);
	} else if (str_ieq(key, "InstanceTypes")) {
		cfg_free_list(ns->types, ns->ntypes);
		ns->types = cfg_split_list(val, &ns->ntypes);
	} else if (str_ieq(key, "Constraint")) {
		burst_err_t cerr;
		char what[300];
		contract_free(ns->constraint);
		ns->constraint = contract_parse(val, &cerr);
		if (!ns->constraint) {
			snprintf(what, sizeof(what), "NodeSet %s Constraint", ns->name);
			cfg_contract_error(ld, file, line, what, cerr.msg);
		}
	} else if (str_ieq(key, "Features")) {
		free(ns->features);
		ns->features = xstrdup(val);
	} else if (str_ieq(key, "Acceptance")) {
		free(ns->acceptance);
		ns->acceptance = NULL;
		if (val[0] != '/')
			cfg_err(ld, file, line, "NodeSet %s: Acceptance must be the absolute path of an acceptance.conf, not '%s'",
				ns->name, val);
		else
			ns->acceptance = xstrdup(val);
	} else if (cfg_policy_key(ld, file, line, nl->pobj, key, val, &ns->blessed_kernels,
				  &ns->nblessed_kernels, &ns->memory_tolerance, &ns->required_modules,
				  &ns->nrequired_modules, &ns->allowed_taint, &ns->allowed_taint_set,
				  &ns->blessed_drivers, &ns->nblessed_drivers)) {
		;
	} else if (str_ieq(key, "EarlyLaunch")) {
		bool b;
		if (!cfg_parse_bool(val, &b))
			cfg_err(ld, file, line, "NodeSet %s: EarlyLaunch is yes or no, not '%s'", ns->name, val);
		else
			ns->early_launch = b;
	} else if (str_ieq(key, "WarmPool")) {
		char *end;
		long v = strtol(val, &end, 10);
		if (!isdigit((unsigned char)*val) || *end || v > 1000)
			cfg_err(ld, file, line, "NodeSet %s: WarmPool=%s: expected how many admitted instances to keep stopped, a whole number from 0 to 1000",
				ns->name, val);
		else
			ns->warm_pool = (int)v;
	} else if (str_ieq(key, "WarmPoolMaxAge")) {
		long secs;
		if (!parse_duration(val, &secs) || secs < 60 || secs > 365L * 86400)
			cfg_err(ld, file, line, "NodeSet %s: WarmPoolMaxAge=%s: expected a duration from 1 minute to 365 days, such as 3600, 90m, 12h or 7d",
				ns->name, val);
		else
			ns->warm_pool_max_age = (int)secs;
	} else if (str_ieq(key, "WarmPoolBudget")) {
		double v;
		char msg[200];
		if (units_parse(val, strlen(val), UNIT_PRICE, &v, msg, sizeof(msg), NULL) < 0)
			cfg_err(ld, file, line, "NodeSet %s: WarmPoolBudget=%s: %s (US dollars per hour the stopped instances may cost together)",
				ns->name, val, msg);
		else
			ns->warm_pool_budget = v;
	} else if (str_ieq(key, "Weight")) {
		char *end;
		long v = strtol(val, &end, 10);
		if (!*val || *end || v < 1 || v > 65533)
			cfg_err(ld, file, line, "NodeSet %s: Weight=%s: expected a whole number from 1 to 65533 (Slurm's node Weight: lower is chosen first)",
				ns->name, val);
		else
			ns->weight = (int)v;
	} else
		return false;
	return true;
}

void cfg_parse_nodeset(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	struct burst_config *cfg = ld->cfg;
	struct nsline nl;
	struct cfg_nodeset *ns = &nl.ns;
	int before = ld->errs.n;

	if (!cfg_object_open(ld, file, line, "NodeSet", w[0].val, "",
			     CFG_OBJECTS(cfg->nodesets, cfg->nnodesets, struct cfg_nodeset)))
		return;
	memset(&nl, 0, sizeof(nl));
	ns->memory_tolerance = NAN;
	ns->early_launch = -1;
	ns->warm_pool_max_age = 0;
	ns->warm_pool_budget = NAN;
	snprintf(nl.pobj, sizeof(nl.pobj), "NodeSet %s: ", w[0].val);
	ns->name = xstrdup(w[0].val);
	cfg_object_words(ld, file, line, w, n, "NodeSet", "", nodeset_keys, nodeset_key, &nl);
	if (!ns->nodes_expr && ld->errs.n == before)
		cfg_err(ld, file, line, "NodeSet %s needs Nodes= (the Slurm node names it provisions, e.g. Nodes=burst-[1-8])",
			ns->name);
	if (!ns->types && !ns->constraint && ld->errs.n == before)
		cfg_err(ld, file, line, "NodeSet %s needs InstanceTypes= or Constraint= (which instance types it may launch)",
			ns->name);
	if ((ns->warm_pool_max_age || !isnan(ns->warm_pool_budget)) && !ns->warm_pool && ld->errs.n == before)
		cfg_err(ld, file, line, "NodeSet %s: %s= has no effect without WarmPool=N (how many admitted instances to keep stopped): add WarmPool= or remove it",
			ns->name, ns->warm_pool_max_age ? "WarmPoolMaxAge" : "WarmPoolBudget");
	if (ld->errs.n != before) {
		cfg_free_nodeset(ns);
		return;
	}
	if (!ns->warm_pool_max_age)
		ns->warm_pool_max_age = CONFIG_WARM_POOL_MAX_AGE;
	if (!ns->partition)
		ns->partition = xstrdup(ns->name);
	ns->where = cfg_where_of(file, line);
	cfg->nodesets = xrealloc(cfg->nodesets, (cfg->nnodesets + 1) * sizeof(*ns));
	cfg->nodesets[cfg->nnodesets++] = *ns;
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
