/*
 * cloud_contract.c - the SPANK plugin behind --cloud-contract.
 *
 * plugstack.conf:
 *   required /usr/lib/slurm-burst/spank_cloud_contract.so conf=/etc/slurm/burst.conf
 *
 * Allocator and local contexts (sbatch, salloc, srun): the option's value,
 * a contract name from burst.conf or an inline expression, is matched
 * against the configured node sets before anything reaches slurmctld. A
 * contract no node set can serve fails the submission with a message that
 * says why. On success the decision goes into the job-control environment
 * (CLOUD_CONTRACT, CLOUD_CONTRACT_NAME, CLOUD_NODESETS, CLOUD_FEATURES,
 * CLOUD_PARTITIONS), where contrib/job_submit.lua reads it.
 *
 * Remote context (slurmstepd): CLOUD_CONTRACT and the node's admission
 * record (CLOUD_PROVIDER, CLOUD_INSTANCE_TYPE, CLOUD_INSTANCE_ID,
 * CLOUD_PROVENANCE_ID, ...) are exported into the tasks.
 *
 * Job prolog (slurmd, as root): on a node of a burst node set, the job runs
 * only if the node holds a valid admission record (written by burst-node
 * join when the agent admitted it) for a node set that serves the job's
 * contract. Otherwise the prolog fails, so Slurm drains the node and
 * requeues the job held; the job's admin comment says why. When the node
 * is at fault ("burst: refused on NODE: ..."), the burst agent releases the
 * job and fails the node. When the job is ("burst: job refused on NODE:
 * ...": its CLOUD_NODESETS, which the client sets, does not name the node's
 * node set), the job stays held and the agent resumes the healthy node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "catalog.h"
#include "config.h"
#include "confwords.h"
#include "decide.h"
#include "strutil.h"

SPANK_PLUGIN(cloud_contract, 1);

#define PREFIX "cloud_contract: "

static char *conf_path;
static char *catalog_dir;
static char *contract_arg;
static struct burst_decision decision;
static bool decided;

static int opt_contract(int val, const char *optarg, int remote);

static struct spank_option contract_option = {
	"cloud-contract", "NAME|EXPR",
	"Run on burst (cloud) nodes that satisfy a contract: a name from "
	"burst.conf, or an expression such as "
	"'accelerator_count>=2,accelerator_architecture>=ampere'. "
	"See burstctl(8).",
	1, 0, opt_contract
};

static void reset(void)
{
	free(conf_path);
	free(catalog_dir);
	free(contract_arg);
	conf_path = catalog_dir = contract_arg = NULL;
	if (decided)
		burst_decision_free(&decision);
	decided = false;
}

/*
 * burst.conf: the conf= argument, else beside slurm.conf. Slurm's commands
 * and slurmd's prolog both carry SLURM_CONF when slurm.conf is not in its
 * default place; no BURST_CONF here, since a job's environment must not
 * choose the file the prolog's admission check reads (doc/design.md §10).
 */
static const char *burst_conf_path(char *buf, size_t len)
{
	return conf_default_path(conf_path, NULL, "burst.conf", buf, len);
}

/* Resolve the contract now, so that a bad one fails the submission. */
static int decide(const char *arg)
{
	struct burst_config *cfg;
	struct catalog *cat;
	burst_err_t err;
	char buf[4096];
	const char *path = burst_conf_path(buf, sizeof(buf));
	int rc = -1;

	cfg = config_load(path, &err);
	if (!cfg) {
		slurm_error(PREFIX "cannot use %s, so --cloud-contract cannot be checked; tell your administrator:\n%s",
			    path, err.msg);
		return -1;
	}
	/* the decision needs no checksum of the catalog: not computed */
	cat = catalog_load_opts(catalog_default_dir(catalog_dir ? catalog_dir : cfg->catalog_dir),
				CATALOG_NO_CHECKSUM, &err);
	if (!cat) {
		slurm_error(PREFIX "%s; tell your administrator", err.msg);
		goto out;
	}
	if (config_apply_catalog(cfg, cat, &err) < 0) {
		slurm_error(PREFIX "%s", err.msg);
		goto out;
	}
	if (decided)
		burst_decision_free(&decision);
	decided = false;
	if (burst_decide(cfg, cat, arg, &decision, &err) < 0) {
		slurm_error(PREFIX "--cloud-contract=%s: %s", arg, err.msg);
		goto out;
	}
	decided = true;
	rc = 0;
out:
	catalog_free(cat);
	config_free(cfg);
	return rc;
}

static int opt_contract(int val, const char *optarg, int remote)
{
	(void)val;
	free(contract_arg);
	contract_arg = xstrdup(optarg ? optarg : "");
	if (remote)
		return 0;
	/* sbatch, salloc and srun: check it here, before submission */
	if (spank_context() == S_CTX_ALLOCATOR || spank_context() == S_CTX_LOCAL)
		return decide(contract_arg);
	return 0;
}

/* plugstack.conf arguments; -1 (with a message) on an unknown one */
static int parse_args(int ac, char **av)
{
	int i;

	for (i = 0; i < ac; i++) {
		if (strncmp(av[i], "conf=", 5) == 0 && av[i][5]) {
			free(conf_path);
			conf_path = xstrdup(av[i] + 5);
		} else if (strncmp(av[i], "catalog_dir=", 12) == 0 && av[i][12]) {
			free(catalog_dir);
			catalog_dir = xstrdup(av[i] + 12);
		} else {
			slurm_error(PREFIX "unknown plugstack.conf argument '%s' (known: conf=PATH, catalog_dir=DIR)",
				    av[i]);
			return -1;
		}
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	reset();
	if (parse_args(ac, av) < 0)
		return -1;
	if (spank_option_register(sp, &contract_option) != ESPANK_SUCCESS) {
		slurm_error(PREFIX "cannot register --cloud-contract");
		return -1;
	}
	return 0;
}

static int setenv_ctl(spank_t sp, const char *name, const char *value)
{
	if (!value)
		return 0;
	if (spank_job_control_setenv(sp, name, value, 1) != ESPANK_SUCCESS) {
		slurm_error(PREFIX "cannot record %s for the job", name);
		return -1;
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_ALLOCATOR && spank_context() != S_CTX_LOCAL)
		return 0;
	if (!contract_arg || !decided)
		return 0;
	if (setenv_ctl(sp, "CLOUD_CONTRACT", decision.contract) < 0 ||
	    setenv_ctl(sp, "CLOUD_CONTRACT_NAME", decision.name ? decision.name : "") < 0 ||
	    setenv_ctl(sp, "CLOUD_NODESETS", decision.nodesets) < 0 ||
	    setenv_ctl(sp, "CLOUD_FEATURES", decision.features) < 0 ||
	    setenv_ctl(sp, "CLOUD_PARTITIONS", decision.partitions) < 0)
		return -1;
	return 0;
}

/*
 * The node's admission record (written by burst-node join when the agent
 * admitted the node; its path is in slurmd's environment, which slurmstepd
 * inherits): CLOUD_PROVIDER, CLOUD_INSTANCE_TYPE, CLOUD_INSTANCE_ID, ...
 * Only CLOUD_* keys are exported.
 */
static void export_admission(spank_t sp)
{
	const char *path = getenv("BURST_ADMISSION");
	char line[1024];
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		size_t n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!eq || strncmp(line, "CLOUD_", 6) != 0)
			continue;
		*eq = '\0';
		spank_setenv(sp, line, eq + 1, 1);
	}
	fclose(f);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char buf[4096];

	(void)ac;
	(void)av;
	if (!spank_remote(sp))
		return 0;
	if (spank_getenv(sp, "SLURM_SPANK_CLOUD_CONTRACT", buf, sizeof(buf)) == ESPANK_SUCCESS)
		spank_setenv(sp, "CLOUD_CONTRACT", buf, 1);
	export_admission(sp);
	return 0;
}

/* The value of KEY in a KEY=VALUE file (first match), copied into buf. */
static bool record_get(const char *path, const char *key, char *buf, size_t len)
{
	char line[1024];
	size_t kl = strlen(key);
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, key, kl) && line[kl] == '=') {
			snprintf(buf, len, "%s", line + kl + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static bool in_list(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == wl && !strncmp(p, word, wl))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* Put the refusal in the job's admin comment, where the agent finds it. */
static void mark_job(uint32_t job, const char *node, const char *why, bool job_side)
{
	char arg_job[64], arg_comment[1200];
	pid_t pid;
	int status;

	snprintf(arg_job, sizeof(arg_job), "JobId=%u", job);
	/* "job refused": the job's fault, not the node's (the agent keeps the node) */
	snprintf(arg_comment, sizeof(arg_comment), "AdminComment=burst: %srefused on %s: %.1000s",
		 job_side ? "job " : "", node, why);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "scontrol", "update", arg_job, arg_comment, NULL };
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		if (!getenv("PATH"))
			setenv("PATH", "/usr/bin:/bin:/usr/sbin:/sbin", 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
}

/* Why this node may not run the job, or NULL if it may. */
static const char *admission_check(const struct burst_config *cfg, const char *node,
				   char *why, size_t len, bool *job_side)
{
	const struct cfg_nodeset *ns = NULL;
	char path[4096], v[1024];
	const char *want;
	size_t i, j;

	for (i = 0; i < cfg->nnodesets && !ns; i++)
		for (j = 0; j < cfg->nodesets[i].nodes.n; j++)
			if (!strcmp(cfg->nodesets[i].nodes.names[j], node)) {
				ns = &cfg->nodesets[i];
				break;
			}
	if (!ns)
		return NULL;    /* not a burst node: none of our business */
	snprintf(path, sizeof(path), "%s/nodes/%s/admission.env", cfg->state_dir, node);
	if (access(path, R_OK) != 0) {
		snprintf(why, len, "node %s has no admission record (%.900s): it was not admitted by burst-agent", node, path);
		return why;
	}
	if (!record_get(path, "CLOUD_NODE", v, sizeof(v)) || strcmp(v, node)) {
		snprintf(why, len, "the admission record %.900s is not for node %s", path, node);
		return why;
	}
	if (!record_get(path, "CLOUD_NODESET", v, sizeof(v)) || strcmp(v, ns->name)) {
		snprintf(why, len, "the admission record %.900s is for node set '%s', not %s", path, v, ns->name);
		return why;
	}
	if (!record_get(path, "CLOUD_INSTANCE_ID", v, sizeof(v)) || !*v ||
	    !record_get(path, "CLOUD_PROVENANCE_ID", v, sizeof(v)) || strlen(v) != 64) {
		snprintf(why, len, "the admission record %.900s lacks an instance or provenance id", path);
		return why;
	}
	/* the job's contract (from the job control environment) names its node sets */
	want = getenv("SPANK_CLOUD_NODESETS");
	if (want && *want && !in_list(want, ns->name)) {
		*job_side = true;
		snprintf(why, len, "node set %s of node %s does not serve the job's contract (node sets %s)",
			 ns->name, node, want);
		return why;
	}
	return NULL;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	struct burst_config *cfg;
	burst_err_t err;
	const char *node = getenv("SLURMD_NODENAME");
	const char *path;
	char buf[4096], why[2048];
	uint32_t job = 0;
	int rc = 0;
	bool job_side = false;

	if (!node || !*node)
		return 0;
	/* the job prolog runs in a process of its own: its arguments again */
	if (!conf_path && parse_args(ac, av) < 0)
		return -1;
	path = burst_conf_path(buf, sizeof(buf));
	spank_get_item(sp, S_JOB_ID, &job);
	cfg = config_load(path, &err);
	if (!cfg) {
		/* cannot tell whether this is a burst node: refuse nothing, say why */
		slurm_error(PREFIX "job %u on %s: cannot check admission: %s", job, node, err.msg);
		return 0;
	}
	if (admission_check(cfg, node, why, sizeof(why), &job_side)) {
		slurm_error(PREFIX "job %u refused on %s: %s", job, node, why);
		mark_job(job, node, why, job_side);
		rc = -1;
	}
	config_free(cfg);
	return rc;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	reset();
	return 0;
}
