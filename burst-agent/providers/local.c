/*
 * local.c - the local provider: an instance is a set of namespaces on this
 * host (network with its own address on the agent's bridge, mount with a
 * private /tmp, UTS with the node's name as hostname) running burst-node
 * join and then that node's slurmd. The namespaces are made by the
 * burst-local-instance script beside it. Its one instance type, local.host,
 * describes this machine (config_apply_catalog).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * NODEDIR/instance holds the id of the node's instance while its namespace
 * is there (written at launch, removed at termination): the listing of this
 * agent's instances (the namespace names alone could be another cluster's
 * whose name shares a prefix with ours). Its time is the launch time.
 */
static void instance_record(const char *dir, const char *id)
{
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/instance", dir);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%s\n", id);
	fclose(f);
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
			char *argv[40];
			size_t k = 0;
#define ARG(x) (argv[k++] = (char *)(x))
			ARG(p->script); ARG("start"); ARG(ns); ARG(pn->node); ARG(pn->address);
			ARG(p->bridge); ARG(dir); ARG("--");
			ARG(p->node_bin); ARG("join"); ARG("--agent"); ARG(b->join_addr);
			ARG("--node"); ARG(pn->node); ARG("--instance"); ARG(pn->instance);
			ARG("--record"); ARG(record);
			ARG("--munge-socket"); ARG(b->munge_socket);
			ARG("--provider"); ARG(b->provider); ARG("--instance-type"); ARG(b->instance_type);
			if (b->acceptance) {
				ARG("--acceptance");
				ARG(b->acceptance);
			}
			ARG("--"); ARG("slurmd"); ARG("-D"); ARG("-b"); ARG("-f"); ARG(b->slurm_conf);
			ARG("-N"); ARG(pn->node);
			argv[k] = NULL;
#undef ARG
			/* the token in the environment (root's alone to read in
			 * /proc), not on a command line every user sees in ps */
			char tokenv[300];
			char *env[] = { tokenv, NULL };
			snprintf(tokenv, sizeof(tokenv), "BURST_JOIN_TOKEN=%s", pn->token ? pn->token : "");
			rc = proc_run_env(argv, env, out, sizeof(out), pn->error, sizeof(pn->error));
		}
		if (rc == 0 || rc == 3) {
			/* 3: the namespace exists, so this (node, attempt) was launched already */
			instance_record(dir, pn->instance);
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
	{
		char path[PATH_MAX + 256];
		snprintf(path, sizeof(path), "%s/%s/instance", p->nodes_dir, node);
		unlink(path);
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

/* This agent's instances: NODEDIR/instance files whose namespace exists. */
static int local_list(struct provider *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	char nsl[65536], perr[512];
	char *argv[] = { (char *)"/usr/sbin/ip", (char *)"netns", (char *)"list", NULL };
	DIR *d;
	struct dirent *e;

	*cls = PROV_OK;
	if (proc_run(argv, nsl, sizeof(nsl), perr, sizeof(perr)) != 0) {
		*cls = PROV_TRANSIENT;
		burst_err_set(err, "ip netns list failed: %s", perr);
		return -1;
	}
	d = opendir(p->nodes_dir);
	if (!d) {
		*cls = PROV_TRANSIENT;
		burst_err_set(err, "cannot read %s: %s", p->nodes_dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX + 512], id[128], ns[400], *line, *save = NULL, *copy;
		struct prov_instance *in;
		struct stat sb;
		bool there = false;
		FILE *f;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(in->node))
			continue;
		snprintf(path, sizeof(path), "%s/%s/instance", p->nodes_dir, e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		id[0] = '\0';
		if (!fgets(id, sizeof(id), f) || fstat(fileno(f), &sb) < 0)
			id[0] = '\0';
		fclose(f);
		id[strcspn(id, "\n")] = '\0';
		if (!id[0])
			continue;
		netns_name(p, e->d_name, ns, sizeof(ns));
		copy = xstrdup(nsl);
		for (line = strtok_r(copy, "\n", &save); line && !there; line = strtok_r(NULL, "\n", &save))
			there = !strncmp(line, ns, strlen(ns)) && (!line[strlen(ns)] || line[strlen(ns)] == ' ');
		free(copy);
		if (!there)
			continue;
		in = prov_list_add(out);
		snprintf(in->id, sizeof(in->id), "%s", id);
		snprintf(in->cluster, sizeof(in->cluster), "%s", p->cluster);
		memcpy(in->node, e->d_name, strlen(e->d_name) + 1);
		{
			const char *dash = strrchr(id, '-');
			in->attempt = dash ? atoi(dash + 1) : 0;
		}
		snprintf(in->state, sizeof(in->state), "running");
		in->launched = (double)sb.st_mtime;
	}
	closedir(d);
	return 0;
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
	.list = local_list,
	.fini = local_fini,
};
