/*
 * burst_admission.c - the SPANK plugin that keeps jobs off burst nodes the
 * burst agent did not admit.
 *
 * plugstack.conf (every node reads it; the plugin file is installed only on
 * burst node images, by the slurm-burst-node package):
 *   optional /usr/lib/slurm-burst/spank_burst_admission.so conf=/etc/slurm/burst.conf
 *
 * A plugin with a job prolog makes slurmd start one more slurmstepd for
 * every job on every node that loads it, so this check lives in a plugin of
 * its own, listed "optional": on-premises nodes, which lack the file, skip
 * it (Slurm logs "Failed to load optional plugin ... Ignored" at verbose
 * level) and pay nothing; the submit-time checks are spank_cloud_contract.so's.
 * A burst node whose plugstack.conf does not load this plugin is refused
 * by the agent at join (burst-node join checks it), so no job runs on a
 * burst node unchecked.
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "config.h"
#include "plugstack_args.h"
#include "wire.h"

SPANK_PLUGIN(burst_admission, 1);

#define PREFIX "burst_admission: "

static struct plugstack_args args;

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
	char arg_job[64], arg_comment[3200], text[1001], *note;
	pid_t pid;
	int status;

	snprintf(arg_job, sizeof(arg_job), "JobId=%u", job);
	/* "job refused": the job's fault, not the node's (the agent keeps the node) */
	snprintf(text, sizeof(text), "%.1000s", why);
	note = wire_note_encode(job_side ? WIRE_NOTE_JOB_REFUSED : WIRE_NOTE_REFUSED, node, text);
	snprintf(arg_comment, sizeof(arg_comment), "AdminComment=%s", note);
	free(note);
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
	if (!wire_record_get(path, "CLOUD_NODE", v, sizeof(v)) || strcmp(v, node)) {
		snprintf(why, len, "the admission record %.900s is not for node %s", path, node);
		return why;
	}
	if (!wire_record_get(path, "CLOUD_NODESET", v, sizeof(v)) || strcmp(v, ns->name)) {
		snprintf(why, len, "the admission record %.900s is for node set '%s', not %s", path, v, ns->name);
		return why;
	}
	if (!wire_record_get(path, "CLOUD_INSTANCE_ID", v, sizeof(v)) || !*v ||
	    !wire_record_get(path, "CLOUD_PROVENANCE_ID", v, sizeof(v)) || strlen(v) != 64) {
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
	if (plugstack_args_parse(&args, ac, av, 0, PREFIX) < 0)
		return -1;
	path = plugstack_burst_conf(&args, buf, sizeof(buf));
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
	plugstack_args_clear(&args);
	return 0;
}
