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
#include "timer.h"
#include "node_life.h"
#include "crash.h"
#include "proc.h"
#include "reconcile.h"
#include "slurm_compat.h"
#include "strutil.h"

static void rc_terminated(const struct term_result *t)
{
	char detail[700];
	burst_err_t err;

	if (t->rc < 0) {
		ERR("reconcile: cannot terminate orphan instance %s (%s): %s (next round)", t->instance,
		    prov_class_name(t->cls), t->err);
		return;
	}
	snprintf(detail, sizeof(detail), "orphan instance %s of provider %s terminated: %s", t->instance,
		 t->provider, t->note ? t->note : "");
	if (state_event(A.db, t->node[0] && node_find(t->node) ? t->node : NULL, "reconcile", detail, &err) < 0)
		ERR("%s", err.msg);
}

static void rc_terminate(const struct rc_action *a)
{
	struct aprov *p = prov_by_name(a->provider);

	if (!p)
		return;
	INFO("reconcile: instance %s of provider %s (node %s): terminating: %s", a->instance, a->provider,
	     a->node ? a->node : "none", a->why);
	/* the local driver finds an instance by its node; aws by its id */
	lease_check();
	prov_terminate_async(p, a->node ? a->node : "", a->instance, a->why, false, rc_terminated);
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
		node_life_apply(a->node, &r, LE_ADOPTED, detail);
	}
	state_node_clear(&r);
}

/* A lost node's instance record cleared: it waits powered down. */
static void lost_clear(const char *node, struct node_rec *r)
{
	metric_instance_down(node);
	free(r->instance);
	r->instance = NULL;
	node_life_apply(node, r, LE_LOST_CLEARED, "instance record cleared; powered down in Slurm after RejectCooldown");
}

static void lost_terminated(const struct term_result *t)
{
	struct node_rec r;
	burst_err_t err;

	if (t->rc < 0)
		ERR("%s: cannot terminate what is left of instance %s (%s): %s", t->node, t->instance,
		    prov_class_name(t->cls), t->err);
	if (state_node_get(A.db, t->node, &r, &err) == 1 && r.state == NS_LOST)
		lost_clear(t->node, &r);
	state_node_clear(&r);
}

/*
 * A lost node (r, in state lost): what is left of its instance is
 * terminated (a stopped instance still costs; a gone one is not found,
 * which is harmless) on its provider's worker, then its instance record is
 * cleared, and it waits powered down for its cooldown (cooldowns() tells
 * Slurm). Lost nodes not in a call are taken every turn (lost_nodes()).
 */
void lost_finish(const char *node, struct node_rec *r)
{
	struct aprov *p = prov_by_name(r->provider);
	struct bnode *ni = node_find(node);

	if (ni && ni->busy)
		return;
	if (p && r->instance) {
		lease_check();
		prov_terminate_async(p, node, r->instance, NULL, true, lost_terminated);
		return;
	}
	lost_clear(node, r);
}

void lost_nodes(void)
{
	burst_err_t err;
	char **names = state_nodes_in(A.db, NS_LOST, &err);
	size_t i;

	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		struct bnode *ni = node_find(names[i]);
		if (ni && ni->busy)
			continue;
		if (state_node_get(A.db, names[i], &r, &err) == 1 && r.state == NS_LOST)
			lost_finish(names[i], &r);
		state_node_clear(&r);
	}
	state_names_free(names);
}

/*
 * The node's instance vanished (spot reclaim, terminated by hand): the node
 * fails as "lost" (DOWN with the reason, so that Slurm requeues its job now;
 * powered down after RejectCooldown), whatever is left of the instance is
 * terminated, and its instance record is cleared.
 */
struct lost_ask {
	char *node, *instance, *why;
};

static void rc_lost_jobs(void *arg, bool ran, const uint32_t *jobs, size_t nj);

static void rc_lost(const struct rc_action *a)
{
	struct node_rec r;
	struct bnode *bn = node_find(a->node);
	burst_err_t err;
	struct lost_ask *q;

	if (!bn || bn->lost_asked || state_node_get(A.db, a->node, &r, &err) != 1 ||
	    (r.state != NS_BOOTING && r.state != NS_ADMITTED) || !r.instance || strcmp(r.instance, a->instance)) {
		state_node_clear(&r);
		return;
	}
	state_node_clear(&r);
	/* which jobs Slurm requeues: asked before the node goes DOWN (the
	 * Slurm worker keeps the order), the rest once it has answered */
	q = xcalloc(1, sizeof(*q));
	q->node = xstrdup(a->node);
	q->instance = xstrdup(a->instance);
	q->why = xstrdup(a->why);
	bn->lost_asked = true;
	jobs_on(a->node, rc_lost_jobs, q);
}

static void rc_lost_jobs(void *arg, bool ran, const uint32_t *jobs, size_t nj)
{
	struct lost_ask *q = arg;
	struct bnode *bn = node_find(q->node);
	struct node_rec r;
	burst_err_t err;
	size_t i;

	if (bn)
		bn->lost_asked = false;
	memset(&r, 0, sizeof(r));
	/* as things are now: the node may have moved on meanwhile */
	if (!ran || !bn || state_node_get(A.db, q->node, &r, &err) != 1 ||
	    (r.state != NS_BOOTING && r.state != NS_ADMITTED) || !r.instance || strcmp(r.instance, q->instance))
		goto out;
	INFO("reconcile: %s: %s%s", q->node, q->why, nj ? "; its job is requeued" : "");
	r.job = 0;    /* the requeued jobs are let go on below, whoever asked for the node */
	node_life_apply(q->node, &r, LE_LOST, q->why);
	state_node_clear(&r);
	if (state_node_get(A.db, q->node, &r, &err) != 1 || r.state != NS_LOST)
		goto out;
	for (i = 0; i < nj; i++) {
		slurm_lost_job_watch(jobs[i]);
		INFO("%s: job %u was running there: Slurm requeues it", q->node, jobs[i]);
	}
	lost_finish(q->node, &r);
out:
	state_node_clear(&r);
	free(q->node);
	free(q->instance);
	free(q->why);
	free(q);
}

/*
 * A reconciler round (at start, then every ReconcileInterval seconds): each
 * provider lists this cluster's instances on its worker, beside the loop,
 * behind the calls queued there before (a burst's launches: a listing goes
 * page by page between them). When every listing is in, they are held
 * against the node records (reconcile.h decides), then the actions, each
 * logged with node, instance and why. A listing still out after
 * ReconcileInterval (behind a hung call, a slow cloud) does not hold up the
 * round: its provider is treated as one whose listing failed, nothing is
 * decided for it, and it is not listed again until that listing comes back
 * (then dropped: its round is over). So a provider whose worker is never
 * idle (an hour-long burst) still gets its rounds, and a hung one holds up
 * no other provider's.
 */
/* the reconciler's own: the instances listed in the last round (when each
 * was first seen, reconcile.h) */
static struct rc_seen *seen;
static size_t nseen;
static unsigned round_seq;       /* the current round's number (list_job.round) */
static struct {
	bool on;                 /* a round's listings are out */
	size_t pending;
	size_t nprovs;
	struct prov_list *lists; /* by provider index */
	bool *ok;                /* its listing is complete */
	bool *out;               /* its listing was sent this round */
	double t;
	double wall0;            /* mono() at the round's start */
	double list_cpu;         /* CPU of the listings, on the workers */
	struct htab gone;        /* "PROVIDER\nINSTANCE" (keys owned) terminated
				  * since the round began: a listing made before
				  * (one page at a time, launches and terminations
				  * between its pages) may still hold them */
} R;

static char *gone_key(const char *provider, const char *instance)
{
	size_t a = strlen(provider), b = strlen(instance);
	char *k = xmalloc(a + b + 2);

	memcpy(k, provider, a);
	k[a] = '\n';
	memcpy(k + a + 1, instance, b + 1);
	return k;
}

void reconcile_terminated(const char *provider, const char *instance)
{
	char *k;

	if (!R.on || !provider || !instance || !instance[0])
		return;
	k = gone_key(provider, instance);
	if (htab_has(&R.gone, k, NULL))
		free(k);
	else
		htab_put(&R.gone, k, NULL);
}

static bool gone_in_round(const char *provider, const char *instance)
{
	char *k;
	bool in;

	if (!R.gone.n)
		return false;
	k = gone_key(provider, instance);
	in = htab_has(&R.gone, k, NULL);
	free(k);
	return in;
}

/* CPU seconds of the calling thread. */
static double thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A provider's listing, on its worker. A driver that lists one page at a
 * time (list_step) is called one page per run of the job, which is queued
 * again after each page that is not the last (pjob.again): a launch or a
 * termination asked for meanwhile runs between two pages instead of
 * waiting for the whole listing (10,000 instances: ten pages). Others (and
 * every driver with BURST_LIST_WHOLE=1 in the agent's environment, for
 * bench/reconcile-scale's comparison) list in one call.
 */
struct list_job {
	struct pjob j;
	size_t idx;
	unsigned round;          /* the round it was sent for */
	double sent;             /* mono() then */
	struct prov_list l;
	struct prov_list_cursor cur;
	enum prov_class cls;
	burst_err_t err;
	int rc;
	double seconds;          /* the calls', on the worker */
	double cpu;              /* the worker's CPU for them */
	bool whole;              /* in one call (BURST_LIST_WHOLE=1) */
	char *provider;
};

static void reconcile_finish(void);
static void reconcile_overdue(void);

static bool list_whole(void)
{
	static int whole = -1;

	if (whole < 0) {
		const char *v = getenv("BURST_LIST_WHOLE");
		whole = v && !strcmp(v, "1");
	}
	return whole;
}

static void list_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct list_job *l = (struct list_job *)j;
	double t0 = mono(), c0 = thread_cpu();

	if (!l->cur.steps) {
		burst_err_clear(&l->err);
		l->cls = PROV_OK;
		crash_point(CP_LIST_BEFORE);
	}
	if (ops->list_step && !l->whole) {
		int rc = ops->list_step(drv, &l->cur, &l->l, &l->cls, &l->err);
		l->cur.steps++;
		j->again = rc == 1;
		l->rc = rc < 0 ? -1 : 0;
	} else
		l->rc = ops->list(drv, &l->l, &l->cls, &l->err);
	if (!j->again)
		crash_point(CP_LIST_AFTER);
	l->seconds += mono() - t0;
	l->cpu += thread_cpu() - c0;
}

static void list_done(struct pjob *j, bool ran)
{
	struct list_job *l = (struct list_job *)j;

	if (l->idx < A.nprovs)
		A.provs[l->idx].listing = false;
	if (!R.on || l->round != round_seq) {
		/* its round was decided without it (reconcile_overdue) */
		if (ran)
			INFO("reconcile: provider %s: a listing came in %.1f s after it was sent, after its round "
			     "was decided without it: dropped; the provider is listed again next round",
			     l->provider, mono() - l->sent);
		prov_list_free(&l->l);
		prov_list_cursor_free(&l->cur);
		free(l->provider);
		free(l);
		return;
	}
	if (ran) {
		metric_provider_call(l->provider, "list", l->seconds, l->rc < 0 ? (int)(l->cls ? l->cls : PROV_TRANSIENT) : 0);
		R.list_cpu += l->cpu;
		/* a driver's text comes back with no control character (provider.h);
		 * the instances' fields were written out by prov_list_add */
		burst_err_escape_ctl(&l->err);
		str_escape_ctl_buf(l->l.note, sizeof(l->l.note));
	}
	if (ran && l->rc < 0)
		ERR("reconcile: cannot list the instances of provider %s (%s): %s; nothing is decided for it this round",
		    l->provider, prov_class_name(l->cls), l->err.msg);
	else if (ran && l->idx < R.nprovs) {
		if (l->l.note[0])
			ERR("reconcile: provider %s: %s", l->provider, l->l.note);
		R.lists[l->idx] = l->l;
		memset(&l->l, 0, sizeof(l->l));
		R.ok[l->idx] = true;
	}
	prov_list_free(&l->l);
	prov_list_cursor_free(&l->cur);
	free(l->provider);
	free(l);
	if (R.pending && !--R.pending && ran)
		reconcile_finish();
}

static void reconcile(void)
{
	static double last;
	double t = now();
	size_t i;

	if (!A.cfg->reconcile_interval)
		return;
	if (R.on) {
		if (mono() - R.wall0 >= A.cfg->reconcile_interval)
			reconcile_overdue();
		return;
	}
	if (last > 0 && t - last < A.cfg->reconcile_interval)
		return;
	last = t;
	R.on = true;
	R.t = t;
	R.wall0 = mono();
	R.list_cpu = 0;
	R.nprovs = A.nprovs;
	R.lists = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*R.lists));
	R.ok = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*R.ok));
	R.out = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*R.out));
	R.pending = 0;
	round_seq++;
	for (i = 0; i < A.nprovs; i++) {
		struct aprov *p = &A.provs[i];
		struct list_job *l;
		if (!p->ops->list)
			continue;
		if (p->listing) {
			INFO("reconcile: provider %s: the listing of an earlier round is not in yet (%zu call%s queued "
			     "or running on its worker): nothing is decided for it this round",
			     p->cfg->name, pworker_pending(p->w), pworker_pending(p->w) == 1 ? "" : "s");
			continue;
		}
		l = xcalloc(1, sizeof(*l));
		l->idx = i;
		l->round = round_seq;
		l->sent = mono();
		p->listing = true;
		R.out[i] = true;
		l->provider = xstrdup(p->cfg->name);
		l->whole = list_whole();
		l->j.run = list_run;
		l->j.done = list_done;
		R.pending++;
		pworker_submit(p->w, &l->j);
	}
	if (!R.pending)
		reconcile_finish();
}

/*
 * The round is ReconcileInterval old and a listing is not in: decide with
 * those that are. A provider whose listing is out is as one whose listing
 * failed (nothing decided for it); the listing, when it comes back, is
 * dropped (list_done).
 */
static void reconcile_overdue(void)
{
	size_t i;

	for (i = 0; i < R.nprovs && i < A.nprovs; i++)
		if (R.out[i] && !R.ok[i])
			ERR("reconcile: provider %s: its listing is not in after %.1f s (ReconcileInterval; %zu call%s "
			    "queued or running on its worker): nothing is decided for it this round",
			    A.provs[i].cfg->name, mono() - R.wall0, pworker_pending(A.provs[i].w),
			    pworker_pending(A.provs[i].w) == 1 ? "" : "s");
	R.pending = 0;
	reconcile_finish();
}

static void reconcile_finish(void)
{
	struct rc_instance *insts = NULL;
	struct rc_node *rn;
	struct rc_action *acts = NULL;
	struct node_rec *recs = NULL;
	const char **listed;
	struct rc_settings rs;
	struct rc_seen_round sr;
	burst_err_t err;
	size_t nrecs = 0, ni = 0, nl = 0, na = 0, i, k;
	double t = R.t, c0 = thread_cpu(), tnow;

	if (state_nodes_brief(A.db, &recs, &nrecs, &err) < 0) {
		ERR("reconcile: %s", err.msg);
		goto out;
	}
	/* state_nodes_brief's rows hold every field the decision reads (name,
	 * state, provider, instance, attempt, since) and no other: a round
	 * over a burst's nodes is the agent's peak of memory */
	listed = xcalloc(A.nprovs + 1, sizeof(*listed));
	rc_seen_begin(&sr, seen, nseen);
	tnow = now();
	for (i = 0; i < A.nprovs && i < R.nprovs; i++) {
		struct aprov *p = &A.provs[i];
		struct prov_list *pl = &R.lists[i];
		if (!R.ok[i])
			continue;
		listed[nl++] = p->cfg->name;
		insts = xrealloc(insts, (ni + pl->n + 1) * sizeof(*insts));
		for (k = 0; k < pl->n; k++) {
			const struct prov_instance *in = &pl->v[k];
			struct rc_instance *ri;
			/* listed, then terminated by the agent before the round's end:
			 * gone (its node no longer owns it), no orphan */
			if (gone_in_round(p->cfg->name, in->id))
				continue;
			ri = &insts[ni++];
			ri->provider = p->cfg->name;
			ri->id = in->id;
			ri->cluster = in->cluster[0] ? in->cluster : NULL;
			ri->node = in->node[0] ? in->node : NULL;
			ri->attempt = in->attempt;
			ri->state = in->state;
			ri->launched = in->launched;
			ri->first_seen = rc_seen_add(&sr, p->cfg->name, in->id, tnow);
		}
	}
	/* instances of a provider whose listing failed keep their first sighting */
	rc_seen_end(&sr, listed, nl, &seen, &nseen);
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
	{
		bool *missing = xcalloc(A.nnodes ? A.nnodes : 1, sizeof(bool));
		for (k = 0; k < na; k++) {
			const struct bnode *b = acts[k].kind == RC_MISSING ? node_find(acts[k].node) : NULL;
			if (b)
				missing[b->index] = true;
		}
		for (i = 0; i < A.nnodes; i++)
			if (!missing[i])
				A.nodes[i].missing_since = 0;
		free(missing);
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
	free(listed);
	state_nodes_free(recs, nrecs);
	{
		/* what a round costs the agent (bench/reconcile-scale reads it) */
		double dc = thread_cpu() - c0;
		INFO("reconcile: round over %zu instance%s of %zu provider%s and %zu node%s: %.3f s CPU "
		     "(%.3f s listing, on the provider workers; %.3f s deciding and acting, on the main loop), "
		     "%.3f s wall, %zu finding%s", ni, ni == 1 ? "" : "s", nl, nl == 1 ? "" : "s", nrecs,
		     nrecs == 1 ? "" : "s", R.list_cpu + dc, R.list_cpu, dc, mono() - R.wall0, na, na == 1 ? "" : "s");
	}
out:
	for (i = 0; i < R.nprovs; i++)
		prov_list_free(&R.lists[i]);
	free(R.lists);
	free(R.ok);
	free(R.out);
	{
		size_t it = 0;
		const char *key;
		while (htab_next(&R.gone, &it, &key, NULL))
			free((char *)key);
		htab_free(&R.gone);
	}
	memset(&R, 0, sizeof(R));
}

void reconcile_timers(void)
{
	timer_add(TP_RECONCILE, 0, reconcile, "reconciler");
	timer_add(TP_RECONCILE, 0, lost_nodes, "lost nodes");
}
