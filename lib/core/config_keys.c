/*
 * config_keys.c - burst.conf's global keys.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "policy.h"
#include "units.h"

#include "config_int.h"
#include "strutil.h"

/*
 * A list key whose every item valid() must accept: replaces *list, or on a
 * bad item reports it (what is expected: want) and leaves *list as it was.
 */
static void set_checked_list(struct loader *ld, const char *file, int line, const char *obj,
			     const char *key, const char *val, bool (*valid)(const char *),
			     const char *want, char ***list, size_t *n)
{
	size_t i, nv;
	char **v = cfg_split_list(val, &nv);

	for (i = 0; i < nv; i++)
		if (!valid(v[i])) {
			cfg_err(ld, file, line, "%s%s: '%s' is not %s", obj, key, v[i], want);
			cfg_free_list(v, nv);
			return;
		}
	cfg_free_list(*list, *n);
	*list = v;
	*n = nv;
}

/*
 * The admission policy keys, global or on a NodeSet line (obj names which).
 * Returns false when key is not one of them.
 */
bool cfg_policy_key(struct loader *ld, const char *file, int line, const char *obj,
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
			cfg_err(ld, file, line, "%sMemoryTolerance=%s: give a percentage (5%%) or a fraction (0.05) from 0 to below 1",
			     obj, val);
	} else if (str_ieq(key, "RequiredModules")) {
		cfg_free_list(*required, *nrequired);
		*required = cfg_split_list(val, nrequired);
	} else if (str_ieq(key, "AllowedTaint")) {
		char bad;
		if (policy_parse_taint(val, taint, &bad) < 0) {
			if (bad)
				cfg_err(ld, file, line, "%sAllowedTaint=%s: '%c' is not a kernel taint letter (PFSRMBUDAWCIOELKXTNJ, e.g. AllowedTaint=POE)",
				     obj, val, bad);
			else
				cfg_err(ld, file, line, "%sAllowedTaint=%s: give taint letters (e.g. POE), none, or a number",
				     obj, val);
		} else if (taint_set)
			*taint_set = true;
	} else
		return false;
	return true;
}

/* JoinListen=ADDR[:PORT],... (a port of 0: JoinPort's, filled in at the end) */
void cfg_parse_join_listen(struct loader *ld, const char *file, int line, struct burst_config *cfg,
			      const char *val)
{
	size_t n = 0, i;
	char **items = cfg_split_list(val, &n);

	free(cfg->join_listen);
	cfg->join_listen = xcalloc(n ? n : 1, sizeof(*cfg->join_listen));
	cfg->njoin_listen = 0;
	cfg->join_listen_set = true;
	if (!n)
		cfg_err(ld, file, line, "JoinListen= needs at least one ADDRESS[:PORT] (an IPv4 address, or * for every address)");
	for (i = 0; i < n; i++) {
		const char *colon = strchr(items[i], ':');
		struct cfg_listen *l = &cfg->join_listen[cfg->njoin_listen];
		long port = 0;
		char *end = NULL;

		if (colon) {
			port = strtol(colon + 1, &end, 10);
			if (!colon[1] || !end || *end || port < 1 || port > 65535) {
				cfg_err(ld, file, line, "JoinListen=%s: '%s' has no TCP port (1-65535) after ':'", val, items[i]);
				continue;
			}
		}
		if (!cfg_listen_addr(items[i], colon ? (size_t)(colon - items[i]) : strlen(items[i]), l->addr)) {
			cfg_err(ld, file, line, "JoinListen=%s: '%s' is not an IPv4 ADDRESS[:PORT] such as 10.0.0.5:6830 (or *:6830 for every address)",
			     val, items[i]);
			continue;
		}
		l->port = (int)port;
		cfg->njoin_listen++;
	}
	cfg_free_list(items, n);
}

/* MetricsListen=ADDR:PORT: an IPv4 address of this host (127.0.0.1 for the
 * local Prometheus only, 0.0.0.0 for any) and a TCP port. */
void cfg_parse_metrics_listen(struct loader *ld, const char *file, int line, const char *val)
{
	struct in_addr a;
	const char *colon = strrchr(val, ':');
	char addr[64], *end;
	long port;

	if (!colon || colon == val || (size_t)(colon - val) >= sizeof(addr)) {
		cfg_err(ld, file, line, "MetricsListen=%s: give ADDRESS:PORT, e.g. MetricsListen=127.0.0.1:9830", val);
		return;
	}
	memcpy(addr, val, (size_t)(colon - val));
	addr[colon - val] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (inet_pton(AF_INET, addr, &a) != 1) {
		cfg_err(ld, file, line, "MetricsListen=%s: '%s' is not an IPv4 address (e.g. 127.0.0.1)", val, addr);
		return;
	}
	if (!colon[1] || *end || port < 1 || port > 65535) {
		cfg_err(ld, file, line, "MetricsListen=%s: give a TCP port (1-65535) after the colon", val);
		return;
	}
	free(ld->cfg->metrics_listen);
	ld->cfg->metrics_listen = xstrdup(val);
	snprintf(ld->cfg->metrics_addr, sizeof(ld->cfg->metrics_addr), "%s", addr);
	ld->cfg->metrics_port = (int)port;
}

/* ---- the table ---- */

static void set_policy(struct loader *ld, const char *file, int line, const char *key, const char *val)
{
	struct burst_config *cfg = ld->cfg;

	cfg_policy_key(ld, file, line, "", key, val, &cfg->blessed_kernels, &cfg->nblessed_kernels,
		       &cfg->memory_tolerance, &cfg->required_modules, &cfg->nrequired_modules,
		       &cfg->allowed_taint, NULL, &cfg->blessed_drivers, &cfg->nblessed_drivers);
}

static void set_join_listen(struct loader *ld, const char *file, int line, const char *key, const char *val)
{
	(void)key;
	cfg_parse_join_listen(ld, file, line, ld->cfg, val);
}

static void set_join_address(struct loader *ld, const char *file, int line, const char *key, const char *val)
{
	(void)key;
	if (!cfg_valid_hostport(val))
		cfg_err(ld, file, line, "JoinAddress=%s is not ADDRESS:PORT such as 203.0.113.7:6830 (where instances reach the agent's join port)",
			val);
	free(ld->cfg->join_address);
	ld->cfg->join_address = xstrdup(val);
}

static void set_metrics_listen(struct loader *ld, const char *file, int line, const char *key, const char *val)
{
	(void)key;
	cfg_parse_metrics_listen(ld, file, line, val);
}

/* whose word a budget by account takes: Slurm's enforced associations, or
 * (the risk accepted) the agent's own check */
static void set_budget_trust(struct loader *ld, const char *file, int line, const char *key, const char *val)
{
	(void)key;
	if (str_ieq(val, "enforced"))
		ld->cfg->budget_accounts_unenforced = false;
	else if (str_ieq(val, "unenforced"))
		ld->cfg->budget_accounts_unenforced = true;
	else
		cfg_err(ld, file, line, "BudgetAccountTrust is enforced (the default: Account= budgets need "
			"Slurm's AccountingStorageEnforce=associations) or unenforced (the risk accepted), "
			"not '%s'", val);
}

/* the bytes of reports not yet whole, all join connections together */
static void set_join_report_memory(struct loader *ld, const char *file, int line, const char *key,
				   const char *val)
{
	double v;
	char msg[256];

	(void)key;
	if (units_parse(val, strlen(val), UNIT_SIZE, &v, msg, sizeof(msg), NULL) < 0)
		cfg_err(ld, file, line, "JoinReportMemory=%s: %s", val, msg);
	else if (v < (double)CONFIG_JOIN_REPORT_MEMORY_MIN || v > (double)CONFIG_JOIN_REPORT_MEMORY_MAX)
		cfg_err(ld, file, line, "JoinReportMemory=%s: give a size from 1M (one whole report) to 64G", val);
	else
		ld->cfg->join_report_memory = (size_t)v;
}

#define OBJ(name, fn, ex) { name, CK_OBJECT, 0, 0, 0, NULL, fn, NULL, ex }
#define KEY(name, kind, field, ex) { name, kind, offsetof(struct burst_config, field), 0, 0, NULL, NULL, NULL, ex }
#define INT(name, field, lo, hi, unit, ex) \
	{ name, CK_INT, offsetof(struct burst_config, field), lo, hi, unit, NULL, NULL, ex }
#define SET(name, fn, ex) { name, CK_CUSTOM, 0, 0, 0, NULL, NULL, fn, ex }

/*
 * Every key a line of burst.conf may start with, and every global key
 * (burst.conf(5)): the parse, the list that "did you mean" chooses from
 * (in this order: the first of two as near wins) and the tests' examples.
 */
const struct cfg_key cfg_keys[] = {
	OBJ("Provider", cfg_parse_provider, "aws"),
	{ "Contract", CK_CONTRACT, 0, 0, 0, NULL, NULL, NULL, "c accelerator_count>=1" },
	OBJ("NodeSet", cfg_parse_nodeset, "ns Nodes=b-[1-2] InstanceTypes=t"),
	OBJ("InstanceType", cfg_parse_itype, "t Provider=p node_vcpus_count=4"),
	OBJ("Price", cfg_parse_price, "t Provider=p Region=r OnDemand=1.5"),
	OBJ("Budget", cfg_parse_budget, "b Amount=100 Period=month"),
	{ "Include", CK_INCLUDE, 0, 0, 0, NULL, NULL, NULL, NULL },
	KEY("ClusterName", CK_STRING, cluster_name, "lab"),
	KEY("CatalogDir", CK_DIR, catalog_dir, "/usr/share/slurm-burst/catalog"),
	KEY("AllowInlineContracts", CK_BOOL, allow_inline, "no"),
	KEY("StateDir", CK_PATH, state_dir, "/var/lib/burst"),
	KEY("SocketPath", CK_PATH, socket_path, "/run/burst.sock"),
	INT("JoinPort", join_port, 1, 65535, "a TCP port", "6831"),
	SET("JoinListen", set_join_listen, "127.0.0.1:6830"),
	SET("JoinAddress", set_join_address, "203.0.113.7:6830"),
	INT("BootTimeout", boot_timeout, 1, 86400, "seconds", "600"),
	INT("RejectCooldown", reject_cooldown, 0, 86400, "seconds", "0"),
	INT("ReconcileInterval", reconcile_interval, 0, 86400, "seconds", "30"),
	INT("OrphanGrace", orphan_grace, 0, 86400, "seconds", "0"),
	INT("VanishGrace", vanish_grace, 0, 86400, "seconds", "120"),
	/* the active agent's lease (agent_lease.c): renewed every
	 * LeaseTimeout/5 s, taken over after LeaseTimeout s */
	INT("LeaseTimeout", lease_timeout, 2, 300, "seconds", "10"),
	KEY("PrologSlurmctld", CK_PATH, prolog_slurmctld, "/usr/local/sbin/prolog"),
	KEY("LogFile", CK_PATH_SYSLOG, log_file, "/var/log/burst-agent.log"),
	KEY("MungeSocket", CK_PATH, munge_socket, "/run/munge/munge.socket.2"),
	KEY("Acceptance", CK_PATH, acceptance, "/etc/slurm/acceptance.conf"),
	SET("BlessedKernels", set_policy, "6.1.0-18-amd64"),
	SET("MemoryTolerance", set_policy, "10%"),
	SET("RequiredModules", set_policy, "nvidia,efa"),
	SET("AllowedTaint", set_policy, "POE"),
	KEY("AllowInsecureEndpoint", CK_BOOL, allow_insecure_endpoint, "yes"),
	SET("BlessedDrivers", set_policy, "nvidia=550.54.15"),
	SET("MetricsListen", set_metrics_listen, "127.0.0.1:9830"),
	INT("CostNoteInterval", cost_note_interval, 0, 86400, "seconds", "300"),
	/* a type and region whose instance got a spot interruption notice */
	INT("InterruptionCooldown", interruption_cooldown, 1, 86400, "seconds", "60"),
	KEY("EarlyLaunch", CK_BOOL, early_launch, "yes"),
	SET("BudgetAccountTrust", set_budget_trust, "unenforced"),
	SET("JoinReportMemory", set_join_report_memory, "16M"),
};
const size_t cfg_nkeys = sizeof(cfg_keys) / sizeof(cfg_keys[0]);

const struct cfg_key *cfg_key_find(const char *name)
{
	size_t i;

	for (i = 0; i < cfg_nkeys; i++)
		if (str_ieq(name, cfg_keys[i].name))
			return &cfg_keys[i];
	return NULL;
}

const char **cfg_key_names(void)
{
	const char **names = xcalloc(cfg_nkeys + 1, sizeof(*names));
	size_t i;

	for (i = 0; i < cfg_nkeys; i++)
		names[i] = cfg_keys[i].name;
	return names;
}

/* One global key (key as written) set to val. */
static void set_key(struct loader *ld, const char *file, int line, const struct cfg_key *k,
		    const char *key, const char *val)
{
	char *base = (char *)ld->cfg;
	char **str = (char **)(void *)(base + k->off);

	switch (k->kind) {
	case CK_STRING:
		free(*str);
		*str = xstrdup(val);
		break;
	case CK_DIR:
		free(*str);
		*str = val[0] ? xstrdup(val) : NULL;
		break;
	case CK_PATH_SYSLOG:
		if (str_ieq(val, "syslog")) {
			free(*str);
			*str = xstrdup("syslog");
			break;
		}
		/* fall through */
	case CK_PATH:
		if (val[0] != '/')
			cfg_err(ld, file, line, "%s must be an absolute path%s, not '%s'", key,
				k->kind == CK_PATH_SYSLOG ? " or syslog" : "", val);
		else {
			free(*str);
			*str = xstrdup(val);
		}
		break;
	case CK_BOOL:
		if (!cfg_parse_bool(val, (bool *)(void *)(base + k->off)))
			cfg_err(ld, file, line, "%s is yes or no, not '%s'", k->name, val);
		break;
	case CK_INT: {
		char *end;
		long v = strtol(val, &end, 10);
		if (!val[0] || *end || v < k->min || v > k->max)
			cfg_err(ld, file, line, "%s=%s: give %s (%ld-%ld)", key, val, k->unit, k->min, k->max);
		else
			*(int *)(void *)(base + k->off) = (int)v;
		break;
	}
	case CK_CUSTOM:
		k->set(ld, file, line, key, val);
		break;
	case CK_OBJECT: case CK_CONTRACT: case CK_INCLUDE:
		break;
	}
}

void cfg_parse_globals(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	int i;

	/* global settings: one or more per line */
	for (i = 0; i < n; i++) {
		const struct cfg_key *k;

		if (!w[i].key) {
			cfg_err(ld, file, line, "expected Key=Value, found '%s'", w[i].val);
			continue;
		}
		k = cfg_key_find(w[i].key);
		if (k && k->kind == CK_INCLUDE)
			cfg_err(ld, file, line, "write 'Include FILE' (a blank, not '=')");
		else if (!k || k->kind == CK_OBJECT || k->kind == CK_CONTRACT) {
			const char **names = cfg_key_names();
			cfg_unknown_key(ld, file, line, "global", w[i].key, names);
			free(names);
		} else
			set_key(ld, file, line, k, w[i].key, w[i].val);
	}
}
