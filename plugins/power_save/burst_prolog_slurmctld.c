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
 * With EarlyLaunch= (burst.conf; doc/compat.md, "Launch at allocation") it
 * first hands the job's powered-down nodes of such node sets to the agent,
 * through its durable spool (an "early" request) as ResumeProgram does, so
 * that they launch now rather than when slurmctld's power-save pass gets
 * to them. Only with ReturnToService=2: on any other setting slurmctld sets
 * a powered-down node that registers before that pass DOWN ("unexpectedly
 * rebooted"), and today's path is kept.
 *
 * It never fails a job for a node that does not come up: that node goes
 * DOWN (ResumeTimeout or the agent's reject path) and Slurm requeues the
 * job. slurmctld runs it with no PATH and no SLURM_CONF: SLURM_CONF is taken
 * from slurmctld's own environment when it is not set.
 */
#include <errno.h>
#include <limits.h>
#include <syslog.h>
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
#include "spool.h"
#include "strutil.h"
#include "wire.h"

#define PROG "burst-prolog-slurmctld"
/*
 * Node states are read every FAST_POLL_US for the first FAST_POLL_S
 * seconds (a node launched at allocation, or an instance that boots in
 * well under a second, registers then: the job starts within 20 ms of it),
 * then every POLL_US. A read with no change is cheap for slurmctld
 * (SLURM_NO_CHANGE_IN_DATA).
 */
#define FAST_POLL_US 20000
#define FAST_POLL_S 5.0
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
	double start = now(), end = start + timeout;
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
		usleep(now() - start < FAST_POLL_S ? FAST_POLL_US : POLL_US);
	}
	slurm_free_node_info_msg(msg);
	free(seen);
	return pending;
}

/* Whether any node set launches at allocation. */
static bool any_early(const struct burst_config *cfg)
{
	for (size_t i = 0; i < cfg->nnodesets; i++)
		if (config_early_launch(cfg, &cfg->nodesets[i]))
			return true;
	return false;
}

/*
 * The job's nodes that are powered down in Slurm (and neither powering up
 * nor down) and belong to a node set with EarlyLaunch=yes, into the spool
 * as one "early" request; the agent is poked. A node the agent does not
 * take this way is resumed as today, by ResumeProgram.
 */
static void early_handoff(const struct burst_config *cfg, const struct hostlist *job, const char *jobid)
{
	node_info_msg_t *msg = NULL;
	struct strbuf nodes;
	struct wire_spool req = { .count = -1 };
	char spooldir[4096], *text;
	burst_err_t err;
	struct timespec ts;
	int count = 0;

	if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		fprintf(stderr, PROG ": job %s: cannot read node states (%s): its nodes are launched when Slurm resumes them\n",
			jobid, slurm_strerror(burst_slurm_errno()));
		return;
	}
	sb_init(&nodes);
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const node_info_t *ni = &msg->node_array[i];
		const struct cfg_nodeset *ns = NULL;
		uint32_t st = ni->node_state;

		if (!ni->name || hostlist_find(job, ni->name) < 0)
			continue;
		for (size_t k = 0; k < cfg->nnodesets && !ns; k++)
			if (hostlist_find(&cfg->nodesets[k].nodes, ni->name) >= 0)
				ns = &cfg->nodesets[k];
		if (!ns || !config_early_launch(cfg, ns) || !(st & NODE_STATE_POWERED_DOWN) ||
		    (st & (NODE_STATE_POWERING_UP | NODE_STATE_POWERING_DOWN)))
			continue;
		sb_addf(&nodes, "%s%s", count ? "," : "", ni->name);
		count++;
	}
	slurm_free_node_info_msg(msg);
	if (!count) {
		sb_free(&nodes);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	req.op = WIRE_OP_EARLY;
	req.nodes = nodes.s;
	req.count = count;
	req.time = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	req.pid = (long)getpid();
	req.slurm_job_id = (uint32_t)strtoul(jobid, NULL, 10);
	wire_spool_add_job(&req, req.slurm_job_id, nodes.s);
	text = wire_spool_encode(&req);
	snprintf(spooldir, sizeof(spooldir), "%s/spool", cfg->state_dir);
	if (spool_write(spooldir, "early", text, NULL, 0, &err) < 0) {
		fprintf(stderr, PROG ": job %s: %s: its nodes %s are launched when Slurm resumes them\n", jobid,
			err.msg, nodes.s);
		syslog(LOG_ERR, "job %s: %s: its nodes %s are launched when Slurm resumes them", jobid, err.msg,
		       nodes.s);
	} else
		spool_poke(cfg->socket_path);
	free(text);
	req.nodes = NULL;   /* nodes.s, freed below */
	wire_spool_free(&req);
	sb_free(&nodes);
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
	int ret2service = -1;
	bool have_job;
	size_t left;
	int rc;

	(void)argv;
	proc_reopen_stdio();
	proc_reset_signals();
	openlog(PROG, LOG_PID, LOG_DAEMON);
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
	nodelist = getenv("SLURM_JOB_NODELIST");
	have_job = nodelist && *nodelist;
	if (have_job && hostlist_expand(nodelist, &job, 1 << 20, &err) < 0) {
		fprintf(stderr, PROG ": job %s: bad SLURM_JOB_NODELIST '%s': %s\n", jobid, nodelist, err.msg);
		have_job = false;
	}
	if (have_job) {
		slurm_init(NULL);
		if (slurm_load_ctl_conf((time_t)0, &sc) == SLURM_SUCCESS) {
			timeout = (double)sc->resume_timeout + 10;
			ret2service = sc->ret2service;
			slurm_free_ctl_conf(sc);
		}
	}
	/* before the site's prolog: the launch is what takes long (a job the
	 * site's prolog fails leaves its nodes, and the agent reclaims them) */
	if (have_job && any_early(cfg)) {
		if (ret2service == 2)
			early_handoff(cfg, &job, jobid);
		else {
			fprintf(stderr, PROG ": job %s: EarlyLaunch=yes needs ReturnToService=2 in slurm.conf (it is %d): the nodes are launched when Slurm resumes them\n",
				jobid, ret2service);
			syslog(LOG_WARNING, "job %s: EarlyLaunch=yes needs ReturnToService=2 in slurm.conf (it is %d): the nodes are launched when Slurm resumes them",
			       jobid, ret2service);
		}
	}
	if (cfg->prolog_slurmctld) {
		rc = run_site_prolog(cfg->prolog_slurmctld);
		if (rc != 0) {
			fprintf(stderr, PROG ": job %s: the site's PrologSlurmctld %s exited %d\n", jobid,
				cfg->prolog_slurmctld, rc);
			config_free(cfg);
			hostlist_free(&job);
			if (have_job)
				slurm_fini();
			return rc;
		}
	}
	config_free(cfg);
	if (!have_job)
		return 0;
	left = wait_nodes(&job, timeout);
	if (left)
		fprintf(stderr, PROG ": job %s: %zu of %zu nodes still not up after %.0f s; Slurm decides\n",
			jobid, left, job.n, timeout);
	hostlist_free(&job);
	slurm_fini();
	return 0;
}
