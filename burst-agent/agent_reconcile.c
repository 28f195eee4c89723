/*
 * burst-agent: reconciler glue. Each provider's listing of this cluster's
 * instances held against the node records (reconcile.h decides), the
 * actions taken, and the jobs of lost nodes let go on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>

#include "agent_int.h"
#include "proc.h"
#include "reconcile.h"
#include "slurm_compat.h"
#include "strutil.h"

/* When the agent first saw instance id of provider prov (now, if it is new). */
static double first_seen(const struct seen_inst *old, size_t nold, const char *prov, const char *id)
{
	size_t i;

	for (i = 0; i < nold; i++)
		if (!strcmp(old[i].id, id) && !strcmp(old[i].provider, prov))
			return old[i].first;
	return now();
}

/*
 * Jobs requeued from a lost node: Slurm holds a requeued job back (its
 * BeginTime, two minutes ahead) in case it still runs on the node; the
 * node's instance is gone, so it cannot: let it go on at once, and release
 * it if it was requeued held. While it waits, slurmctld is asked again every
 * few seconds (an update of the job schedules it): the node it may need is
 * powered down after RejectCooldown, which by itself starts no scheduling
 * pass, and the periodic one comes only every minute.
 */
void lost_jobs_go_on(void)
{
	static double last;
	size_t i = 0;

	if (!A.nlost_jobs || now() - last < 1.0)
		return;
	last = now();
	while (i < A.nlost_jobs) {
		struct lost_job *lj = &A.lost_jobs[i];
		job_info_msg_t *m = NULL;
		bool done = now() > lj->until;

		if (!done && slurm_load_job(&m, lj->id, SHOW_ALL) == SLURM_SUCCESS && m->record_count) {
			slurm_job_info_t *j = &m->job_array[0];
			uint32_t st = j->job_state & JOB_STATE_BASE;
			if (st != JOB_PENDING)
				/* not requeued yet, or started again, or over */
				done = lj->pending || (st != JOB_RUNNING && st != JOB_SUSPENDED);
			else if (!(j->job_state & JOB_COMPLETING)) {
				lj->pending = true;
				if (j->priority == 0 && !lj->released) {
					char idbuf[32], out[256], errbuf[512];
					char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };
					snprintf(idbuf, sizeof(idbuf), "%u", j->job_id);
					lj->released = true;
					if (proc_run(argv, out, sizeof(out), errbuf, sizeof(errbuf)) == 0)
						INFO("job %u was requeued held from a lost node: released", j->job_id);
					else
						ERR("job %u: scontrol release failed: %s", j->job_id, errbuf);
				}
				if (now() >= lj->next) {
					job_desc_msg_t upd;
					slurm_init_job_desc_msg(&upd);
					upd.job_id = j->job_id;
					upd.begin_time = time(NULL);
					lj->next = now() + 5.0;
					if (slurm_update_job(&upd) != SLURM_SUCCESS)
						ERR("job %u: cannot clear its BeginTime: %s", j->job_id,
						    slurm_strerror(burst_slurm_errno()));
					else if (!lj->nudged)
						INFO("job %u was requeued from a lost node: it may start at once", j->job_id);
					lj->nudged = true;
				}
			}
		} else if (!done)
			done = burst_slurm_errno() == ESLURM_INVALID_JOB_ID;
		slurm_free_job_info_msg(m);
		if (done)
			A.lost_jobs[i] = A.lost_jobs[--A.nlost_jobs];
		else
			i++;
	}
}

static void rc_terminate(const struct rc_action *a)
{
	struct aprov *p = prov_by_name(a->provider);
	enum prov_class cls = PROV_OK;
	burst_err_t err;
	char detail[700];

	if (!p)
		return;
	INFO("reconcile: instance %s of provider %s (node %s): terminating: %s", a->instance, a->provider,
	     a->node ? a->node : "none", a->why);
	/* the local driver finds an instance by its node; aws by its id */
	lease_check();
	if (prov_terminate(p, a->node ? a->node : "", a->instance, &cls, &err) < 0) {
		ERR("reconcile: cannot terminate orphan instance %s (%s): %s (next round)", a->instance,
		    prov_class_name(cls), err.msg);
		return;
	}
	snprintf(detail, sizeof(detail), "orphan instance %s of provider %s terminated: %s", a->instance,
		 a->provider, a->why);
	if (state_event(A.db, a->node && node_find(a->node) ? a->node : NULL, "reconcile", detail, &err) < 0)
		ERR("%s", err.msg);
}

static void rc_adopt(const struct rc_action *a)
{
	struct node_rec r;
	burst_err_t err;
	char detail[500];
	struct bnode *ni = node_find(a->node);

	if (ni && ni->busy)
		return;     /* its launch is in flight: its outcome comes */
	if (state_node_get(A.db, a->node, &r, &err) == 1 && r.state == NS_LAUNCHING &&
	    (!r.instance || !r.instance[0])) {
		free(r.instance);
		r.instance = xstrdup(a->instance);
		r.retry_at = 0;
		snprintf(detail, sizeof(detail), "%s (reconcile: adopted, %s)", a->instance, a->why);
		transition(a->node, NS_LAUNCHING, &r, NS_BOOTING, detail);
	}
	state_node_clear(&r);
}

/*
 * A lost node (r, in state lost): what is left of its instance is
 * terminated (a stopped instance still costs; a gone one is not found,
 * which is harmless), its instance record cleared, and it waits powered
 * down for its cooldown (cooldowns() tells Slurm).
 */
void lost_finish(const char *node, struct node_rec *r)
{
	struct aprov *p = prov_by_name(r->provider);
	enum prov_class cls = PROV_OK;
	burst_err_t err;

	lease_check();
	if (p && r->instance && prov_terminate(p, node, r->instance, &cls, &err) < 0)
		ERR("%s: cannot terminate what is left of instance %s (%s): %s", node, r->instance,
		    prov_class_name(cls), err.msg);
	metric_instance_down(node);
	free(r->instance);
	r->instance = NULL;
	transition(node, NS_LOST, r, NS_POWERED_DOWN, "instance record cleared; powered down in Slurm after RejectCooldown");
}

/*
 * The node's instance vanished (spot reclaim, terminated by hand): the node
 * fails as "lost" (DOWN with the reason, so that Slurm requeues its job now;
 * powered down after RejectCooldown), whatever is left of the instance is
 * terminated, and its instance record is cleared.
 */
static void rc_lost(const struct rc_action *a)
{
	struct node_rec r;
	burst_err_t err;
	uint32_t *jobs = NULL;
	size_t nj, i;
	enum node_state from;

	if (state_node_get(A.db, a->node, &r, &err) != 1 || (r.state != NS_BOOTING && r.state != NS_ADMITTED) ||
	    !r.instance || strcmp(r.instance, a->instance)) {
		state_node_clear(&r);
		return;
	}
	from = r.state;
	nj = jobs_on(a->node, &jobs);
	INFO("reconcile: %s: %s%s", a->node, a->why, nj ? "; its job is requeued" : "");
	r.job = 0;    /* the requeued jobs are let go on below, whoever asked for the node */
	fail_node(a->node, from, &r, NS_LOST, a->why);
	state_node_clear(&r);
	if (state_node_get(A.db, a->node, &r, &err) != 1 || r.state != NS_LOST) {
		free(jobs);
		state_node_clear(&r);
		return;
	}
	for (i = 0; i < nj; i++) {
		A.lost_jobs = xrealloc(A.lost_jobs, (A.nlost_jobs + 1) * sizeof(*A.lost_jobs));
		memset(&A.lost_jobs[A.nlost_jobs], 0, sizeof(*A.lost_jobs));
		A.lost_jobs[A.nlost_jobs].id = jobs[i];
		A.lost_jobs[A.nlost_jobs].until = now() + 120 + A.cfg->reject_cooldown;
		A.nlost_jobs++;
		INFO("%s: job %u was running there: Slurm requeues it", a->node, jobs[i]);
	}
	free(jobs);
	lost_finish(a->node, &r);
	state_node_clear(&r);
}

/*
 * A reconciler round (at start, then every ReconcileInterval seconds): each
 * provider's listing of this cluster's instances against the node records
 * (reconcile.h decides), then the actions, each logged with node, instance
 * and why.
 */
void reconcile(void)
{
	static double last;
	struct prov_list *lists;
	struct rc_instance *insts = NULL;
	struct rc_node *rn;
	struct rc_action *acts = NULL;
	struct node_rec *recs = NULL;
	struct seen_inst *seen = NULL;
	const char **listed;
	struct rc_settings rs;
	burst_err_t err;
	size_t nrecs = 0, ni = 0, nl = 0, nseen = 0, na, i, k;
	double t = now();

	if (!A.cfg->reconcile_interval || (last > 0 && t - last < A.cfg->reconcile_interval))
		return;
	last = t;
	if (state_nodes_all(A.db, &recs, &nrecs, &err) < 0) {
		ERR("reconcile: %s", err.msg);
		return;
	}
	/* the whole rows (provider, region...): state_nodes_all gives a summary */
	for (i = 0; i < nrecs; i++) {
		struct node_rec full;
		if (state_node_get(A.db, recs[i].name, &full, &err) == 1) {
			state_node_clear(&recs[i]);
			recs[i] = full;
		} else
			state_node_clear(&full);
	}
	lists = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*lists));
	listed = xcalloc(A.nprovs + 1, sizeof(*listed));
	for (i = 0; i < A.nprovs; i++) {
		enum prov_class cls = PROV_OK;
		struct aprov *p = &A.provs[i];
		if (!p->ops->list)
			continue;
		if (prov_list(p, &lists[i], &cls, &err) < 0) {
			ERR("reconcile: cannot list the instances of provider %s (%s): %s; nothing is decided for it this round",
			    p->cfg->name, prov_class_name(cls), err.msg);
			prov_list_free(&lists[i]);
			continue;
		}
		listed[nl++] = p->cfg->name;
		insts = xrealloc(insts, (ni + lists[i].n + 1) * sizeof(*insts));
		seen = xrealloc(seen, (nseen + lists[i].n + 1) * sizeof(*seen));
		for (k = 0; k < lists[i].n; k++) {
			const struct prov_instance *in = &lists[i].v[k];
			struct rc_instance *ri = &insts[ni++];
			struct seen_inst *si = &seen[nseen++];
			snprintf(si->provider, sizeof(si->provider), "%s", p->cfg->name);
			snprintf(si->id, sizeof(si->id), "%s", in->id);
			si->first = first_seen(A.seen, A.nseen, p->cfg->name, in->id);
			ri->provider = p->cfg->name;
			ri->id = in->id;
			ri->cluster = in->cluster[0] ? in->cluster : NULL;
			ri->node = in->node[0] ? in->node : NULL;
			ri->attempt = in->attempt;
			ri->state = in->state;
			ri->launched = in->launched;
			ri->first_seen = si->first;
		}
	}
	/* instances of a provider whose listing failed keep their first sighting */
	for (i = 0; i < A.nseen; i++) {
		bool failed = true;
		for (k = 0; k < nl && failed; k++)
			failed = strcmp(listed[k], A.seen[i].provider) != 0;
		if (failed) {
			seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
			seen[nseen++] = A.seen[i];
		}
	}
	free(A.seen);
	A.seen = seen;
	A.nseen = nseen;
	rn = xcalloc(nrecs ? nrecs : 1, sizeof(*rn));
	for (i = 0; i < nrecs; i++) {
		struct bnode *ni_ = node_find(recs[i].name);
		rn[i].name = recs[i].name;
		rn[i].state = recs[i].state;
		rn[i].provider = recs[i].provider;
		rn[i].instance = recs[i].instance;
		rn[i].attempt = recs[i].attempt;
		rn[i].since = recs[i].since;
		rn[i].missing_since = ni_ ? ni_->missing_since : 0;
	}
	rs.cluster = A.cfg->cluster_name;
	rs.orphan_grace = A.cfg->orphan_grace;
	rs.vanish_grace = A.cfg->vanish_grace;
	rs.listed = listed;
	na = reconcile_decide(rn, nrecs, insts, ni, t, &rs, &acts);
	/* a miss is remembered only while it lasts */
	for (i = 0; i < A.nnodes; i++) {
		bool missing = false;
		for (k = 0; k < na && !missing; k++)
			missing = acts[k].kind == RC_MISSING && !strcmp(acts[k].node, A.nodes[i].name);
		if (!missing)
			A.nodes[i].missing_since = 0;
	}
	metric_reconcile(NULL, 1);
	for (k = 0; k < na; k++) {
		const struct rc_action *a = &acts[k];
		metric_reconcile(rc_kind_name(a->kind), 1);
		switch (a->kind) {
		case RC_TERMINATE:
			rc_terminate(a);
			break;
		case RC_ADOPT:
			rc_adopt(a);
			break;
		case RC_LOST:
			rc_lost(a);
			break;
		case RC_MISSING: {
			struct bnode *b = node_find(a->node);
			if (b && !b->missing_since) {
				b->missing_since = t;
				INFO("reconcile: %s: %s", a->node, a->why);
			}
			break;
		}
		}
	}
	free(acts);
	free(rn);
	free(insts);
	for (i = 0; i < A.nprovs; i++)
		prov_list_free(&lists[i]);
	free(lists);
	free(listed);
	state_nodes_free(recs, nrecs);
}
