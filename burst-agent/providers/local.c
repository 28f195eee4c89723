/*
 * local.c - the local provider: an instance is a set of namespaces on this
 * host (network with its own address on the agent's bridge, mount with a
 * private /tmp, UTS with the node's name as hostname) running burst-node
 * join and then that node's slurmd. The namespaces are made by the
 * burst-local-instance script beside it. Its one instance type, local.host,
 * describes this machine (config_apply_catalog).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../provider.h"
#include "proc.h"
#include "strutil.h"

struct provider {
	char *cluster;
	char *bridge;
	char *nodes_dir;
	char script[PATH_MAX];
	const char *node_bin;
};

static void netns_name(const struct provider *p, const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "burst-%s-%s", p->cluster, node);
}

static struct provider *local_init(const struct cfg_provider *cfg, const struct burst_config *all,
				   burst_err_t *err)
{
	struct provider *p;
	const char *libexec = getenv("BURST_LIBEXECDIR") ? getenv("BURST_LIBEXECDIR") : BURST_LIBEXECDIR;
	char dir[PATH_MAX];

	if (!cfg->bridge || !cfg->address) {
		burst_err_set(err, "%s:%d: Provider=%s (local) needs Bridge=NAME Address=ADDR/PREFIX (the agent's bridge and its address)",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->cluster = xstrdup(all->cluster_name);
	p->bridge = xstrdup(cfg->bridge);
	snprintf(dir, sizeof(dir), "%s/nodes", all->state_dir);
	p->nodes_dir = xstrdup(dir);
	snprintf(p->script, sizeof(p->script), "%s/burst-local-instance", libexec);
	p->node_bin = getenv("BURST_NODE") ? getenv("BURST_NODE") : BURST_LIBEXECDIR "/burst-node";
	mkdir(p->nodes_dir, 0755);
	return p;
}

static size_t local_launch(struct provider *p, struct prov_batch *b)
{
	size_t i, launched = 0;

	for (i = 0; i < b->n; i++) {
		struct prov_node *pn = &b->nodes[i];
		char ns[192], dir[PATH_MAX], record[PATH_MAX + 32], out[256];
		int rc;

		netns_name(p, pn->node, ns, sizeof(ns));
		snprintf(pn->instance, sizeof(pn->instance), "local-%s-%s-%d", p->cluster, pn->node, pn->attempt);
		snprintf(dir, sizeof(dir), "%s/%s", p->nodes_dir, pn->node);
		snprintf(record, sizeof(record), "%s/admission.env", dir);
		mkdir(dir, 0755);
		{
			char *argv[] = { p->script, (char *)"start", ns, (char *)pn->node, (char *)pn->address,
				p->bridge, dir, (char *)"--", (char *)p->node_bin, (char *)"join",
				(char *)"--agent", (char *)b->join_addr, (char *)"--node", (char *)pn->node,
				(char *)"--instance", pn->instance, (char *)"--token", (char *)pn->token,
				(char *)"--record", record, (char *)"--munge-socket", (char *)b->munge_socket,
				(char *)"--", (char *)"slurmd", (char *)"-D", (char *)"-b", (char *)"-f",
				(char *)b->slurm_conf, (char *)"-N", (char *)pn->node, NULL };
			rc = proc_run(argv, out, sizeof(out), pn->error, sizeof(pn->error));
		}
		if (rc == 0 || rc == 3) {
			/* 3: the namespace exists, so this (node, attempt) was launched already */
			pn->cls = PROV_OK;
			pn->error[0] = '\0';
			launched++;
		} else {
			pn->cls = PROV_PERMANENT;
			if (!pn->error[0])
				snprintf(pn->error, sizeof(pn->error), "%.400s start exited %d", p->script, rc);
			pn->instance[0] = '\0';
		}
	}
	return launched;
}

static int local_terminate(struct provider *p, const char *node, const char *instance,
			   enum prov_class *cls, burst_err_t *err)
{
	char ns[192], out[256], perr[1024];
	char *argv[] = { p->script, (char *)"stop", ns, NULL };

	(void)instance;
	netns_name(p, node, ns, sizeof(ns));
	if (proc_run(argv, out, sizeof(out), perr, sizeof(perr)) != 0) {
		*cls = PROV_TRANSIENT;
		burst_err_set(err, "cannot remove namespace %s: %s", ns, perr);
		return -1;
	}
	*cls = PROV_OK;
	return 0;
}

static int local_exists(struct provider *p, const char *node, const char *instance)
{
	char ns[192], out[64], perr[256];
	char *argv[] = { p->script, (char *)"exists", ns, NULL };
	int rc;

	(void)instance;
	netns_name(p, node, ns, sizeof(ns));
	rc = proc_run(argv, out, sizeof(out), perr, sizeof(perr));
	return rc == 0 ? 1 : rc == 1 ? 0 : -1;
}

static void local_fini(struct provider *p)
{
	if (!p)
		return;
	free(p->cluster);
	free(p->bridge);
	free(p->nodes_dir);
	free(p);
}

const struct provider_ops provider_local = {
	.type = "local",
	.init = local_init,
	.launch = local_launch,
	.terminate = local_terminate,
	.exists = local_exists,
	.fini = local_fini,
};
