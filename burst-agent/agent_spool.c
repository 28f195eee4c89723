/*
 * burst-agent: requests from the power-save programs' durable spool
 * (resume, suspend, resume-fail) and from burst-prolog-slurmctld (early:
 * EarlyLaunch=), each taken in one commit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_int.h"
#include "timer.h"
#include "node_life.h"
#include "crash.h"
#include "hostlist.h"
#include "resume_file.h"
#include "spool.h"
#include "strutil.h"
#include "wire.h"

/*
 * What the power-save program said while it made the request (since Slurm
 * 23.02 its own output reaches slurmctld's log only with DebugFlags=Script):
 * into the agent's log, escaped, as the program's word.
 */
static void log_diagnostics(const char *file, const struct wire_spool *rq)
{
	size_t i;

	for (i = 0; i < rq->ndiagnostics && i < 16; i++) {
		char *e = str_escape_ctl(rq->diagnostics[i]);
		logmsg("warning", "spool: %s: burst-%s said: %s", file, wire_spool_op_name(rq->op), e);
		free(e);
	}
}

/*
 * A node of a job just allocated (burst-prolog-slurmctld, EarlyLaunch=):
 * launched now, before slurmctld's power-save pass asks for it
 * (doc/compat.md, "Launch at allocation"). The node is marked early: the
 * agent watches the job (early_check) until Slurm has taken the node over.
 */
static void take_early(const char *node, struct node_rec *r, const struct wire_spool *rq, const char *file)
{
	long job = (long)rq->slurm_job_id;
	char why[300];

	if (r->state == NS_POWERED_DOWN && r->cooldown_until <= 0) {
		r->retry_at = 0;
		r->failures = 0;
		r->job = job;
		r->early = true;
		snprintf(why, sizeof(why), "%s: launch at job %ld's allocation", file, job);
		node_life_apply(node, r, LE_EARLY_LAUNCH, why);
	} else if (r->early && job && job != r->job &&
		   (r->state == NS_REQUESTED || r->state == NS_LAUNCHING || r->state == NS_BOOTING ||
		    r->state == NS_ADMITTED)) {
		/* its earlier job left it; the instance goes on for this one */
		snprintf(why, sizeof(why), "launched at job %ld's allocation: adopted by job %ld", r->job, job);
		r->job = job;
		node_life_apply(node, r, LE_EARLY_ADOPTED, why);
	} else if (r->state == NS_TERMINATING && job) {
		/* an early instance being reclaimed: launched again afterwards,
		 * watched as launched at this job's allocation */
		r->want_resume = true;
		r->early = true;
		r->job = job;
		snprintf(why, sizeof(why), "job %ld allocated it: launched again after termination", job);
		node_life_apply(node, r, LE_EARLY_AGAIN, why);
	} else
		INFO("%s: launch at job %ld's allocation while %s: nothing to do (Slurm's resume request decides)",
		     node, job, node_state_name(r->state));
}

static void take_request(const char *file)
{
	char path[PATH_MAX * 2];
	struct wire_spool rq;
	struct resume_jobs *jobix = NULL;
	burst_err_t err;
	const char *op;
	char *text;
	size_t i, len = 0;
	double t0;

	snprintf(path, sizeof(path), "%s/%s", A.spool, file);
	if (state_request_seen(A.db, file, &err) == 1) {
		unlink(path);
		return;
	}
	text = spool_read(A.spool, file, A.slurm_uid, SPOOL_MAX_REQUEST, &len, &err);
	if (!text) {
		char bad[PATH_MAX * 2 + 8];
		/* renamed, not followed: a link or a FIFO moves aside as it is */
		snprintf(bad, sizeof(bad), "%s.bad", path);
		ERR("spool: %s; moved to %s.bad (remove it once understood)", err.msg, file);
		if (rename(path, bad) < 0)
			ERR("spool: cannot move %s aside: %s", path, strerror(errno));
		return;
	}
	if (wire_spool_decode(text, len, SPOOL_MAX_NODES, &rq, &err) < 0) {
		char bad[PATH_MAX * 2 + 8];
		ERR("spool: %s is not a request: %s; moved to %s.bad", path, err.msg, file);
		snprintf(bad, sizeof(bad), "%s.bad", path);
		rename(path, bad);
		free(text);
		return;
	}
	free(text);
	op = wire_spool_op_name(rq.op);
	log_diagnostics(file, &rq);
	if (rq.op == WIRE_OP_RESUME)
		/* each job's nodes expanded once, not once per node */
		jobix = resume_jobs_index(rq.jobs, rq.njobs);
	t0 = mono();
	crash_point(CP_SPOOL_READ);
	/* the request's transitions and its being taken, in one commit */
	node_life_begin();
	for (i = 0; i < rq.names.n; i++) {
		const char *node = rq.names.names[i];
		struct node_rec r;

		struct bnode *bn = node_find(node);

		if (!bn) {
			ERR("%s: %s for a node of no node set (ignored; check burst.conf and slurm.conf)", node, op);
			continue;
		}
		if (state_node_get(A.db, node, &r, &err) != 1)
			continue;
		if (rq.op == WIRE_OP_EARLY) {
			take_early(node, &r, &rq, file);
		} else if (rq.op == WIRE_OP_RESUME) {
			/* at or after the power-save scan that asked for it */
			bn->requested_at = now();
			if (r.early && (r.state == NS_REQUESTED || r.state == NS_LAUNCHING ||
					r.state == NS_BOOTING || r.state == NS_ADMITTED)) {
				/* launched at allocation: Slurm's own request, served already */
				char why[200];
				long job = resume_jobs_of(jobix, node);
				r.early = false;
				if (job && job != r.job) {
					snprintf(why, sizeof(why), "resume: served by the launch at job %ld's allocation; now for job %ld",
						 r.job, job);
					r.job = job;
				} else
					snprintf(why, sizeof(why), "resume: served by the launch at job %ld's allocation", r.job);
				node_life_apply(node, &r, LE_RESUME_SERVED, why);
			} else if (r.state == NS_POWERED_DOWN) {
				r.cooldown_until = 0;
				r.retry_at = 0;
				r.failures = 0;
				/* the job it is for (0: none, an admin's scontrol power up):
				 * its contract ranks the node set's instance types */
				r.job = resume_jobs_of(jobix, node);
				node_life_apply(node, &r, LE_RESUME, file);
			} else if (r.state == NS_TERMINATING || r.state == NS_REJECTED) {
				/* launched again once the old instance is gone, for this job
				 * (Slurm's own request: no longer one launched at allocation) */
				r.want_resume = true;
				r.early = false;
				r.job = resume_jobs_of(jobix, node);
				node_life_apply(node, &r, LE_RESUME_AGAIN, "resume requested: after termination");
			} else
				INFO("%s: resume while %s: nothing to do", node, node_state_name(r.state));
		} else if (rq.op == WIRE_OP_SUSPEND || rq.op == WIRE_OP_RESUME_FAIL) {
			if (r.state != NS_POWERED_DOWN && r.state != NS_TERMINATING) {
				r.want_resume = false;
				node_life_apply(node, &r, LE_SUSPEND, op);
			} else if (r.want_resume) {
				r.want_resume = false;
				node_life_apply(node, &r, LE_SUSPEND_WITHDRAWN, "suspend: resume request withdrawn");
			}
		}
		state_node_clear(&r);
	}
	state_request_add(A.db, file, &err);
	if (node_life_commit() == 0) {
		INFO("spool: %s: %s of %zu node%s taken in %.3f s", file, op, rq.names.n, rq.names.n == 1 ? "" : "s",
		     mono() - t0);
		crash_point(CP_SPOOL_TAKEN);
		unlink(path);
		crash_point(CP_SPOOL_REMOVED);
	}   /* else the request stays in the spool, taken again later */
	wire_spool_free(&rq);
	resume_jobs_free(jobix);
}

void take_spool(void)
{
	burst_err_t err;
	char **names = spool_list(A.spool, &err);
	size_t i;

	if (!names) {
		ERR("%s", err.msg);
		return;
	}
	for (i = 0; names[i]; i++)
		take_request(names[i]);
	spool_list_free(names);
}

void spool_timers(void)
{
	timer_add(TP_INTAKE, 0, take_spool, "spool");
}
