/*
 * burst-prolog-slurmctld - Slurm's PrologSlurmctld for burst partitions.
 *
 * Slurm 22.05 launches a batch job whose nodes were powered down either
 * from a periodic check (up to 30 s after the nodes are up) or at once
 * when the job's PrologSlurmctld finishes. This program runs the site's own
 * PrologSlurmctld first (burst.conf PrologSlurmctld=; its failure is
 * returned as is), then waits until none of the job's nodes is powering up
 * and returns, so the job starts the moment its nodes are up.
 *
 * It never fails a job for a node that does not come up: that node goes
 * DOWN (ResumeTimeout or the agent's reject path) and Slurm requeues the
 * job. slurmctld runs it with no PATH and no SLURM_CONF: SLURM_CONF is taken
 * from slurmctld's own environment when it is not set.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "config.h"
#include "hostlist.h"
#include "proc.h"
#include "slurm_compat.h"

#define PROG "burst-prolog-slurmctld"
#define POLL_US 100000

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run the site's own PrologSlurmctld with our environment; its exit status. */
static int run_site_prolog(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, PROG ": cannot run the site's PrologSlurmctld %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		fprintf(stderr, PROG ": cannot run the site's PrologSlurmctld %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, PROG ": the site's PrologSlurmctld %s died of signal %d\n", path, WTERMSIG(status));
	return 1;
}

/*
 * Wait until no node of the job is powering up (or powered down awaiting
 * its power-up), at most timeout seconds. Returns the number still not up.
 */
static size_t wait_nodes(struct hostlist *job, double timeout)
{
	node_info_msg_t *msg = NULL;
	time_t last = 0;
	double end = now() + timeout;
	size_t pending = job->n;
	bool *seen = calloc(job->n ? job->n : 1, sizeof(*seen));

	if (!seen)
		return job->n;
	qsort(job->names, job->n, sizeof(*job->names), cmp_str);
	for (;;) {
		node_info_msg_t *nmsg = NULL;
		int rc = slurm_load_node(last, &nmsg, SHOW_ALL);

		if (rc == SLURM_SUCCESS) {
			slurm_free_node_info_msg(msg);
			msg = nmsg;
			last = msg->last_update;
			pending = 0;
			memset(seen, 0, job->n * sizeof(*seen));
			for (uint32_t i = 0; i < msg->record_count; i++) {
				node_info_t *ni = &msg->node_array[i];
				char **hit;
				uint32_t st, base;

				if (!ni->name)
					continue;
				hit = bsearch(&ni->name, job->names, job->n, sizeof(*job->names), cmp_str);
				if (!hit)
					continue;
				seen[hit - job->names] = true;
				st = ni->node_state;
				base = st & NODE_STATE_BASE;
				/* a DOWN node will not come up: Slurm requeues the job */
				if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE)
					continue;
				if (st & (NODE_STATE_POWERING_UP | NODE_STATE_POWERED_DOWN | NODE_STATE_NO_RESPOND))
					pending++;
			}
			if (pending == 0)
				break;
		} else if (burst_slurm_errno() != SLURM_NO_CHANGE_IN_DATA) {
			fprintf(stderr, PROG ": cannot read node states: %s (the job starts when Slurm sees its nodes up)\n",
				slurm_strerror(burst_slurm_errno()));
			break;
		}
		if (now() >= end)
			break;
		usleep(POLL_US);
	}
	slurm_free_node_info_msg(msg);
	free(seen);
	return pending;
}

int main(int argc, char **argv)
{
	const char *nodelist, *jobid;
	char slurm_conf[PATH_MAX];
	struct burst_config *cfg;
	struct hostlist job = { NULL, 0, 0 };
	burst_err_t err;
	slurm_conf_t *sc = NULL;
	double timeout = 600;
	size_t left;
	int rc;

	(void)argv;
	proc_reopen_stdio();
	proc_reset_signals();
	if (argc != 1) {
		fprintf(stderr, "usage: " PROG " (run by slurmctld as PrologSlurmctld; takes no arguments)\n");
		return 2;
	}
	if (!getenv("SLURM_CONF") &&
	    proc_environ_get((int)getppid(), "SLURM_CONF", slurm_conf, sizeof(slurm_conf)))
		setenv("SLURM_CONF", slurm_conf, 1);
	if (!getenv("PATH"))
		setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
	jobid = getenv("SLURM_JOB_ID");
	jobid = jobid ? jobid : "?";

	cfg = config_load(config_default_path(NULL), &err);
	if (!cfg) {
		/* the site's own prolog may be in it: never skip it silently */
		fprintf(stderr, PROG ": job %s: %s\n", jobid, err.msg);
		return 1;
	}
	if (cfg->prolog_slurmctld) {
		rc = run_site_prolog(cfg->prolog_slurmctld);
		if (rc != 0) {
			fprintf(stderr, PROG ": job %s: the site's PrologSlurmctld %s exited %d\n", jobid,
				cfg->prolog_slurmctld, rc);
			config_free(cfg);
			return rc;
		}
	}
	config_free(cfg);

	nodelist = getenv("SLURM_JOB_NODELIST");
	if (!nodelist || !*nodelist)
		return 0;
	if (hostlist_expand(nodelist, &job, 1 << 20, &err) < 0) {
		fprintf(stderr, PROG ": job %s: bad SLURM_JOB_NODELIST '%s': %s\n", jobid, nodelist, err.msg);
		return 0;
	}
	slurm_init(NULL);
	if (slurm_load_ctl_conf((time_t)0, &sc) == SLURM_SUCCESS) {
		timeout = (double)sc->resume_timeout + 10;
		slurm_free_ctl_conf(sc);
	}
	left = wait_nodes(&job, timeout);
	if (left)
		fprintf(stderr, PROG ": job %s: %zu of %zu nodes still not up after %.0f s; Slurm decides\n",
			jobid, left, job.n, timeout);
	hostlist_free(&job);
	slurm_fini();
	return 0;
}
