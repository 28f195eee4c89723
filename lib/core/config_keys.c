/*
 * config_keys.c - burst.conf's global keys.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
