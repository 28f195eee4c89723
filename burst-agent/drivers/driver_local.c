/*
 * local.c - the local provider: an instance is a set of namespaces on this
 * host (network with its own address on the agent's bridge, mount with a
 * private /tmp, UTS with the node's name as hostname) running burst-node
 * join and then that node's slurmd. The namespaces are made by the
 * burst-local-instance script beside it. Its one instance type, local.host,
 * describes this machine (config_apply_catalog).
 *
 * An instance sees this host's files except /tmp, so it gets its software
 * the way a cloud instance gets it from its image, not from wherever the
 * agent was started: the agent copies burst-node and the data it reads into
 * StateDir/local-image at its first launch, and every instance runs that copy
 * (slurmd is the host's, from its PATH). StateDir itself must not be under
 * /tmp (each instance writes its admission record there).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../provider.h"
#include "confwords.h"
#include "proc.h"
#include "strutil.h"

struct provider {
	char *cluster;
	char *bridge;
	uint32_t net;            /* the bridge's address (host order): its instances get the next ones */
	int prefix;
	uint32_t room;           /* how many instances have an address in the bridge's network */
	char *nodes_dir;
	char script[PATH_MAX];
	char *node_bin;          /* the image's burst-node */
	char *pci_table;         /* the image's accelerator table */
	char *state_dir;
};

/* An instance's address: the bridge's + LOCAL_FIRST + the node's index. */
#define LOCAL_FIRST 10

static void netns_name(const struct provider *p, const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "burst-%s-%s", p->cluster, node);
}

/* Is path /tmp or under it, as given or once its links are resolved? */
static bool under_tmp(const char *path)
{
	char real[PATH_MAX];

	if (!strcmp(path, "/tmp") || !strncmp(path, "/tmp/", 5))
		return true;
	if (!realpath(path, real))
		return false;
	return !strcmp(real, "/tmp") || !strncmp(real, "/tmp/", 5);
}

/* Copy src to dst (mode 0755 or 0644) through a temporary name, so that a
 * running instance keeps the file it started with. */
static int copy_file(const char *src, const char *dst, mode_t mode, burst_err_t *err)
{
	char tmp[PATH_MAX + 16], buf[65536];
	int in, out;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.new", dst);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return burst_err_set(err, "cannot read %s: %s", src, strerror(errno)), -1;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0) {
		burst_err_set(err, "cannot write %s: %s", tmp, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (n < 0 || fchmod(out, mode) < 0 || close(out) < 0) {
		burst_err_set(err, "cannot copy %s to %s: %s", src, tmp, strerror(errno));
		close(in);
		unlink(tmp);
		return -1;
	}
	close(in);
	if (rename(tmp, dst) < 0) {
		burst_err_set(err, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* StateDir/local-image: burst-node and its accelerator table. */
static int make_image(struct provider *p, const char *state_dir, burst_err_t *err)
{
	const char *bin = getenv("BURST_NODE") ? getenv("BURST_NODE") : BURST_LIBEXECDIR "/burst-node";
	char table_buf[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 64];
	const char *table = share_default_path(NULL, "BURST_PCI_TABLE", "pci/accelerators.csv",
					       table_buf, sizeof(table_buf));

	snprintf(dir, sizeof(dir), "%s/local-image", state_dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return burst_err_set(err, "cannot create %s: %s", dir, strerror(errno)), -1;
	snprintf(path, sizeof(path), "%s/burst-node", dir);
	if (copy_file(bin, path, 0755, err) < 0)
		return -1;
	free(p->node_bin);
	p->node_bin = xstrdup(path);
	snprintf(path, sizeof(path), "%s/accelerators.csv", dir);
	if (copy_file(table, path, 0644, err) < 0)
		return -1;
	p->pci_table = xstrdup(path);
	return 0;
}

static struct provider *local_init(const struct cfg_provider *cfg, const struct burst_config *all,
				   burst_err_t *err)
{
	struct provider *p;
	const char *libexec = getenv("BURST_LIBEXECDIR") ? getenv("BURST_LIBEXECDIR") : BURST_LIBEXECDIR;
	char dir[PATH_MAX];

	if (!cfg->bridge || !cfg->address) {
		burst_err_set(err, "%s:%d: Provider=%s (local) needs Bridge=NAME Address=ADDR/PREFIX (the bridge its instances are plugged into and its address)",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	if (under_tmp(all->state_dir)) {
		burst_err_set(err, "%s:%d: Provider=%s (local): StateDir=%s is under /tmp, which the local provider's instances do not see (each has a private /tmp): choose a StateDir elsewhere (e.g. /var/lib/slurm-burst)",
			      cfg->where.file, cfg->where.line, cfg->name, all->state_dir);
		return NULL;
	}
	{
		unsigned a, b, c, d;
		int len;
		if (sscanf(cfg->address, "%u.%u.%u.%u/%d", &a, &b, &c, &d, &len) != 5 || a > 255 || b > 255 ||
		    c > 255 || d > 255 || len < 8 || len > 30) {
			burst_err_set(err, "%s:%d: Provider=%s (local): Address=%s is not an IPv4 ADDRESS/PREFIX such as 10.211.0.1/24",
				      cfg->where.file, cfg->where.line, cfg->name, cfg->address);
			return NULL;
		}
		p = xcalloc(1, sizeof(*p));
		p->net = (a << 24) | (b << 16) | (c << 8) | d;
		p->prefix = len;
		/* from the bridge's address + LOCAL_FIRST to the network's last before broadcast */
		{
			uint64_t last = (p->net | ((1ull << (32 - len)) - 1)) - 1;
			p->room = last >= (uint64_t)p->net + LOCAL_FIRST ? (uint32_t)(last - p->net - LOCAL_FIRST + 1) : 0;
		}
	}
	p->cluster = xstrdup(all->cluster_name);
	p->bridge = xstrdup(cfg->bridge);
	snprintf(dir, sizeof(dir), "%s/nodes", all->state_dir);
	p->nodes_dir = xstrdup(dir);
	snprintf(p->script, sizeof(p->script), "%s/burst-local-instance", libexec);
	p->state_dir = xstrdup(all->state_dir);
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
	burst_err_t ierr;

	/* the image, made at the first launch (StateDir exists by then) */
	if (!p->pci_table && make_image(p, p->state_dir, &ierr) < 0) {
		for (i = 0; i < b->n; i++) {
			b->nodes[i].cls = PROV_PERMANENT;
			b->nodes[i].instance[0] = '\0';
			snprintf(b->nodes[i].error, sizeof(b->nodes[i].error), "the local instances' image: %.480s",
				 ierr.msg);
		}
		return 0;
	}

	for (i = 0; i < b->n; i++) {
		struct prov_node *pn = &b->nodes[i];
		char ns[192], dir[PATH_MAX], record[PATH_MAX + 32], out[256], addr[64];
		int rc;

		pn->address[0] = '\0';
		if (pn->index < 0 || (uint32_t)pn->index >= p->room) {
			pn->cls = PROV_PERMANENT;
			pn->instance[0] = '\0';
			snprintf(pn->error, sizeof(pn->error),
				 "bridge %s (/%d) has addresses for %u local instances; %s is number %d of the nodes this provider may launch: give Address= a shorter prefix",
				 p->bridge, p->prefix, (unsigned)p->room, pn->node, pn->index + 1);
			continue;
		}
		{
			uint32_t a = p->net + LOCAL_FIRST + (uint32_t)pn->index;
			snprintf(addr, sizeof(addr), "%u.%u.%u.%u/%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
				 a & 255, p->prefix);
		}
		netns_name(p, pn->node, ns, sizeof(ns));
		snprintf(pn->instance, sizeof(pn->instance), "local-%s-%s-%d", p->cluster, pn->node, pn->attempt);
		snprintf(dir, sizeof(dir), "%s/%s", p->nodes_dir, pn->node);
		snprintf(record, sizeof(record), "%s/admission.env", dir);
		mkdir(dir, 0755);
		{
			char *argv[40];
			size_t k = 0;
#define ARG(x) (argv[k++] = (char *)(x))
			ARG(p->script); ARG("start"); ARG(ns); ARG(pn->node); ARG(addr);
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
			char tokenv[300], tablev[PATH_MAX + 32];
			char *env[] = { tokenv, tablev, NULL };
			snprintf(tokenv, sizeof(tokenv), "BURST_JOIN_TOKEN=%s", pn->token ? pn->token : "");
			snprintf(tablev, sizeof(tablev), "BURST_PCI_TABLE=%s", p->pci_table);
			rc = proc_run_env(argv, env, out, sizeof(out), pn->error, sizeof(pn->error));
		}
		if (rc == 0 || rc == 3) {
			/* 3: the namespace exists, so this (node, attempt) was launched already */
			instance_record(dir, pn->instance);
			snprintf(pn->address, sizeof(pn->address), "%.*s", (int)strcspn(addr, "/"), addr);
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
		snprintf(path, sizeof(path), "%s/%s/stopped", p->nodes_dir, node);
		unlink(path);
	}
	*cls = PROV_OK;
	return 0;
}

/*
 * A stopped (warm pool) instance: its processes frozen (burst-local-instance
 * freeze), its namespaces kept, and NODEDIR/stopped saying so (the listing's
 * "stopped"), written once they are all frozen, removed once thawed.
 */
static int local_freeze_thaw(struct provider *p, bool freeze, const char *node, enum prov_class *cls,
			     burst_err_t *err)
{
	char ns[192], out[256], perr[1024], path[PATH_MAX + 256];
	char *argv[] = { p->script, (char *)(freeze ? "freeze" : "thaw"), ns, NULL };
	int rc;

	netns_name(p, node, ns, sizeof(ns));
	snprintf(path, sizeof(path), "%s/%s/stopped", p->nodes_dir, node);
	rc = proc_run(argv, out, sizeof(out), perr, sizeof(perr));
	if (rc != 0) {
		/* 4: the namespace is gone: nothing to keep or to start */
		*cls = rc == 4 ? PROV_PERMANENT : PROV_TRANSIENT;
		burst_err_set(err, "cannot %s instance %s: %s", freeze ? "stop" : "start", ns,
			      perr[0] ? perr : "burst-local-instance failed");
		return -1;
	}
	if (freeze) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			*cls = PROV_TRANSIENT;
			burst_err_set(err, "instance %s is frozen, but %s cannot be written: %s", ns, path,
				      strerror(errno));
			return -1;
		}
		close(fd);
	} else if (unlink(path) < 0 && errno != ENOENT) {
		*cls = PROV_TRANSIENT;
		burst_err_set(err, "instance %s runs again, but %s cannot be removed: %s", ns, path, strerror(errno));
		return -1;
	}
	*cls = PROV_OK;
	return 0;
}

static int local_stop(struct provider *p, const char *node, const char *instance, enum prov_class *cls,
		      burst_err_t *err)
{
	(void)instance;
	return local_freeze_thaw(p, true, node, cls, err);
}

static int local_start(struct provider *p, const char *node, const char *instance, enum prov_class *cls,
		       burst_err_t *err)
{
	(void)instance;
	return local_freeze_thaw(p, false, node, cls, err);
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

		if (e->d_name[0] == '.' || strlen(e->d_name) >= 128)
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
		snprintf(path, sizeof(path), "%s/%s/stopped", p->nodes_dir, e->d_name);
		in = prov_list_add(out, id, p->cluster, e->d_name, access(path, F_OK) == 0 ? "stopped" : "running");
		{
			const char *dash = strrchr(id, '-');
			in->attempt = dash ? atoi(dash + 1) : 0;
		}
		in->launched = (double)sb.st_mtime;
	}
	closedir(d);
	return 0;
}

/* NODEDIR/node.log, the instance's console: its last len - 1 bytes, from a line start. */
static int local_console(struct provider *p, const char *node, const char *instance, char *buf, size_t len,
			 char *where, size_t wlen, enum prov_class *cls, burst_err_t *err)
{
	char path[PATH_MAX + 256];
	struct stat sb;
	size_t n;
	FILE *f;

	(void)instance;
	*cls = PROV_OK;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s/node.log", p->nodes_dir, node);
	snprintf(where, wlen, "%s", path);
	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		*cls = PROV_TRANSIENT;
		burst_err_set(err, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &sb) == 0 && (size_t)sb.st_size > len - 1)
		fseek(f, sb.st_size - (off_t)(len - 1), SEEK_SET);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	if (fstat(fileno(f), &sb) == 0 && (size_t)sb.st_size > len - 1) {
		/* from the first whole line */
		char *nl = strchr(buf, '\n');
		if (nl)
			memmove(buf, nl + 1, strlen(nl + 1) + 1);
	}
	fclose(f);
	return 0;
}

/* NODEDIR/exited: the instance's command has ended (burst-local-instance). */
static int local_ended(struct provider *p, const char *node, const char *instance)
{
	char path[PATH_MAX + 256];

	(void)instance;
	snprintf(path, sizeof(path), "%s/%s/exited", p->nodes_dir, node);
	if (access(path, F_OK) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

static void local_fini(struct provider *p)
{
	if (!p)
		return;
	free(p->cluster);
	free(p->bridge);
	free(p->nodes_dir);
	free(p->node_bin);
	free(p->pci_table);
	free(p->state_dir);
	free(p);
}

const struct provider_ops provider_local = {
	.type = "local",
	.init = local_init,
	.launch = local_launch,
	.terminate = local_terminate,
	.stop = local_stop,
	.start = local_start,
	.exists = local_exists,
	.list = local_list,
	.console = local_console,
	.ended = local_ended,
	.fini = local_fini,
};
