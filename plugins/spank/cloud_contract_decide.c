/*
 * cloud_contract_decide.c - cloud_contract_decide.so: the submit-time
 * decision of --cloud-contract, loaded by spank_cloud_contract.so only when
 * the option is given (cloud_contract_decide.h says why).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cloud_contract_decide.h"
#include "config.h"
#include "confwords.h"
#include "decide.h"
#include "plugstack_args.h"

/* a copy the plugin frees with free(); NULL stays NULL (not set) */
static char *dup_value(const char *s, int *failed)
{
	char *d;

	if (!s)
		return NULL;
	if (!(d = strdup(s)))
		*failed = 1;
	return d;
}

int cloud_contract_decide_v1(const char *conf, const char *catalog_dir, const char *arg,
			     struct cloud_contract_decided *out, char *msg, size_t len)
{
	struct plugstack_args args = { .conf = conf, .catalog_dir = catalog_dir };
	struct burst_decision d;
	struct burst_config *cfg;
	burst_err_t err;
	char buf[4096];
	const char *path = plugstack_burst_conf(&args, buf, sizeof(buf));
	int stage, whole, failed = 0;

	memset(out, 0, sizeof(*out));
	cfg = config_load(path, &err);
	if (!cfg) {
		snprintf(msg, len, "cannot use %s, so --cloud-contract cannot be checked; tell your administrator:\n%s",
			 path, err.msg);
		return -1;
	}
	/* reads only the configured providers' catalogs unless it must read all */
	if (burst_decide_dir(cfg, catalog_default_dir(catalog_dir ? catalog_dir : cfg->catalog_dir), arg, &d,
			     &stage, &whole, &err) < 0) {
		if (stage == BURST_DECIDE_CATALOG)
			snprintf(msg, len, "%s; tell your administrator", err.msg);
		else if (stage == BURST_DECIDE_APPLY)
			snprintf(msg, len, "%s", err.msg);
		else
			snprintf(msg, len, "--cloud-contract=%s: %s", arg, err.msg);
		config_free(cfg);
		return -1;
	}
	config_free(cfg);
	out->contract = dup_value(d.contract, &failed);
	out->name = dup_value(d.name ? d.name : "", &failed);
	out->nodesets = dup_value(d.nodesets, &failed);
	out->features = dup_value(d.features, &failed);
	out->partitions = dup_value(d.partitions, &failed);
	out->whole = whole;
	burst_decision_free(&d);
	if (failed) {
		free(out->contract);
		free(out->name);
		free(out->nodesets);
		free(out->features);
		free(out->partitions);
		memset(out, 0, sizeof(*out));
		snprintf(msg, len, "--cloud-contract=%s: out of memory", arg);
		return -1;
	}
	return 0;
}
