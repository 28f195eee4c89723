/*
 * config_check.c - the agent's verdict on a configuration (config_check)
 * and where each provider's instances report.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include "config_int.h"
#include "strutil.h"

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && !strcmp(s + n - t, tail);
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
	/* Address= without its prefix length */
	snprintf(want, sizeof(want), "%s", p->address ? p->address : "");
	if ((slash = strchr(want, '/')))
		*slash = '\0';
	exists = if_nametoindex(p->bridge) != 0;
	if (!exists) {
		/* a MAC of its own (the admin guide, section 3: without one the
		 * bridge takes its ports' lowest and changes it as instances come
		 * and go): a locally administered one made of the IPv4 address */
		char mac[32] = "02:00:XX:XX:XX:XX";
		struct in_addr a;

		if (inet_pton(AF_INET, want, &a) == 1) {
			const unsigned char *b = (const unsigned char *)&a.s_addr;

			snprintf(mac, sizeof(mac), "02:00:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3]);
		}
		snprintf(why, len, "Bridge=%s does not exist on this host: create it with an address and a MAC of its own "
			 "(ip link add %s address %s type bridge; ip addr add %s dev %s; ip link set %s up), "
			 "and make it persistent (a systemd-networkd .netdev with MACAddress=; admin guide, section 3)",
			 p->bridge, p->bridge, mac, p->address ? p->address : "ADDR/PREFIX", p->bridge, p->bridge);
		return why;
	}
	if (!p->address)
		return NULL;
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
	return p->address && cfg_listen_addr(p->address, strcspn(p->address, "/"), out);
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

int config_check(const struct burst_config *cfg, const struct catalog *cat,
		 burst_err_t *err)
{
	struct candset *cs;
	struct ns_cands prev;
	int problems = 0;
	size_t i, j;
	char drivers[256] = "";

	burst_err_clear(err);
	cfg_driver_names(drivers, sizeof(drivers));
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
		if (!strcmp(p->type, "gcp") && !p->image_id && !p->instance_template) {
			burst_err_append(err, "%s:%d: Provider %s (gcp) needs Image=projects/P/global/images/family/F "
					 "or InstanceTemplate=global/instanceTemplates/NAME: the image its VMs boot",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (!strcmp(p->type, "gcp") && !p->nregions) {
			burst_err_append(err, "%s:%d: Provider %s (gcp) needs Regions=R[,R...] such as us-central1",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (!strcmp(p->type, "gcp") && p->nzones) {
			for (size_t z = 0; z < p->nzones; z++) {
				bool in = false;
				for (size_t r = 0; r < p->nregions && !in; r++) {
					size_t rl = strlen(p->regions[r]);
					in = !strncmp(p->zones[z], p->regions[r], rl) && p->zones[z][rl] == '-';
				}
				if (!in) {
					burst_err_append(err, "%s:%d: Provider %s (gcp): zone %s of Zones= is in none of its Regions=",
							 p->where.file, p->where.line, p->name, p->zones[z]);
					problems++;
				}
			}
		}
		if (!strcmp(p->type, "openstack") && !p->credentials) {
			burst_err_append(err, "%s:%d: Provider %s (openstack) needs CredentialsFile=: an openrc-style file "
					 "(OS_AUTH_URL, OS_USERNAME/OS_PASSWORD/OS_PROJECT_NAME or OS_APPLICATION_CREDENTIAL_ID/_SECRET), "
					 "or a clouds.yaml with Cloud=NAME; mode 0600",
					 p->where.file, p->where.line, p->name);
			problems++;
		}
		if (!strcmp(p->type, "azure")) {
			const char *miss = !p->subscription ? "Subscription= (the subscription id)"
					   : !p->resource_group ? "ResourceGroup= (where its VMs go)"
					   : !p->image_id ? "Image=PUBLISHER:OFFER:SKU:VERSION or an image's resource id"
					   : !p->subnet_id ? "SubnetId= (the subnet's resource id)"
					   : !p->nregions ? "Regions= (e.g. eastus)" : NULL;
			size_t z;
			if (miss) {
				burst_err_append(err, "%s:%d: Provider %s (azure) needs %s", p->where.file, p->where.line,
						 p->name, miss);
				problems++;
			}
			for (z = 0; z < p->nzones; z++)
				if (!p->zones[z][0] || strlen(p->zones[z]) > 8 ||
				    strspn(p->zones[z], "0123456789") != strlen(p->zones[z])) {
					burst_err_append(err, "%s:%d: Provider %s (azure): Zones: '%s' is not an availability "
							 "zone number such as 1", p->where.file, p->where.line, p->name,
							 p->zones[z]);
					problems++;
				}
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
				if (ns->nproviders && !cfg_in_list(ns->providers, ns->nproviders, cfg->providers[p].name))
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
	/* a warm pool keeps stopped instances: every provider of its node set must stop and start them */
	for (i = 0; i < cfg->nnodesets; i++) {
		const struct cfg_nodeset *ns = &cfg->nodesets[i];
		for (j = 0; ns->warm_pool && j < cfg->nproviders; j++) {
			const struct cfg_provider *p = &cfg->providers[j];
			bool used = ns->nproviders == 0;
			for (size_t k = 0; k < ns->nproviders && !used; k++)
				used = !strcmp(ns->providers[k], p->name);
			if (!used || !config_has_driver(p->type) || config_driver_stops(p->type))
				continue;
			burst_err_append(err, "%s:%d: NodeSet %s: WarmPool=%d needs instances that can be stopped and started, and the %s driver (Provider %s) cannot yet (local and aws can): remove WarmPool= or name other Providers= for this node set",
					 ns->where.file, ns->where.line, ns->name, ns->warm_pool, p->type, p->name);
			problems++;
		}
	}
	for (i = 0; i < cfg->nnodesets; i++)
		if (cfg_nodeset_candidates(cfg, cat, i, cs, &prev) == 0) {
			burst_err_append(err, "%s:%d: NodeSet %s has no instance type to launch: check its Providers, InstanceTypes and Constraint",
					 cfg->nodesets[i].where.file, cfg->nodesets[i].where.line,
					 cfg->nodesets[i].name);
			problems++;
		}
	cfg_ns_cands_clear(&prev);
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
