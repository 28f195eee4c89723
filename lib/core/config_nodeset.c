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
	"AllowedTaint", "BlessedDrivers", "EarlyLaunch", NULL };

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
	snprintf(nl.pobj, sizeof(nl.pobj), "NodeSet %s: ", w[0].val);
	ns->name = xstrdup(w[0].val);
	cfg_object_words(ld, file, line, w, n, "NodeSet", "", nodeset_keys, nodeset_key, &nl);
	if (!ns->nodes_expr && ld->errs.n == before)
		cfg_err(ld, file, line, "NodeSet %s needs Nodes= (the Slurm node names it provisions, e.g. Nodes=burst-[1-8])",
			ns->name);
	if (!ns->types && !ns->constraint && ld->errs.n == before)
		cfg_err(ld, file, line, "NodeSet %s needs InstanceTypes= or Constraint= (which instance types it may launch)",
			ns->name);
	if (ld->errs.n != before) {
		cfg_free_nodeset(ns);
		return;
	}
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
