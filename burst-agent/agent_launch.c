/*
 * burst-agent: launching. Requested nodes become launch intents (written
 * first), launched in batches through their provider's driver; launches to
 * retry, instances to terminate, cooldowns that end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "agent_int.h"
#include "timer.h"
#include "node_life.h"
#include "wire.h"
#include "crash.h"
#include "strutil.h"

#define DEFAULT_MUNGE_SOCKET "/run/munge/munge.socket.2"   /* munged's own default */

void cooldown_key(const char *prov, const char *type, const char *region, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s@%s", prov, type, region ? region : "-");
}

/*
 * Compute Engine's quotas are per VM family (CPUS_PER_VM_FAMILY: N2_CPUS,
 * E2_CPUS, ...) and region: a gcp launch refused for quota cools down every
 * candidate of that provider and region whose machine type is of the same
 * family (the name's part before its first '-'), not only the type that
 * was refused; the others would be refused the same way, each after a
 * round trip. One already cooling down is left as it is.
 */
static void quota_family(const char *prov, const char *type, const char *region, const char *error)
{
	struct aprov *p = prov ? prov_by_name(prov) : NULL;
	const char *dash = type ? strchr(type, '-') : NULL;
	burst_err_t err;
	double t = now();

	if (!p || !dash || strcmp(p->cfg->type ? p->cfg->type : p->cfg->name, "gcp"))
		return;
	for (size_t k = 0; k < A.cs->n; k++) {
		const struct candidate *c = &A.cs->c[k];
		const char *tn = catalog_str(A.cat, c->type->name);
		const char *rn = c->region >= 0 ? catalog_str(A.cat, c->region) : NULL;
		char key[512];

		if (prov_of(c) != p || !tn || !strcmp(tn, type) || strncmp(tn, type, (size_t)(dash - type) + 1) ||
		    !(rn && region ? !strcmp(rn, region) : rn == region))
			continue;
		cooldown_key(p->cfg->name, tn, rn, key, sizeof(key));
		if (state_cooldown_until(A.db, key) > t)
			continue;
		if (state_cooldown_hit(A.db, key, A.cfg->reject_cooldown > 0 ? A.cfg->reject_cooldown : 60, 3600,
				       error, &err) < 0)
			ERR("cooldown %s: %s", key, err.msg);
		else
			INFO("%s: cooling down with %s/%s@%s: quota of its family (%.*s) in that region", key, prov,
			     type, region ? region : "-", (int)(dash - type), type);
	}
}

/* What a pick says of the candidates it passed over, at most. */
#define TRIED_MAX 2048

/* The next candidate of order (a node set's, or a job's in it) that is not
 * cooling down; -1 if none. The ones passed over are said in *tried
 * (allocated at the first, TRIED_MAX bytes; NULL while there is none). */
static ssize_t next_candidate(const struct job_order *jo, char **tried)
{
	size_t k;
	double t = now();

	for (k = 0; k < jo->n; k++) {
		const struct candidate *c = &A.cs->c[jo->order[k]];
		struct aprov *p = prov_of(c);
		char key[512];
		double until;

		cooldown_key(p->cfg->name, catalog_str(A.cat, c->type->name),
			     c->region >= 0 ? catalog_str(A.cat, c->region) : NULL, key, sizeof(key));
		until = state_cooldown_until(A.db, key);
		if (until > t) {
			size_t l;
			if (!*tried)
				*tried = xcalloc(TRIED_MAX, 1);
			l = strlen(*tried);
			snprintf(*tried + l, TRIED_MAX - l, "%s%s (cooling down %.0f s more)", l ? ", " : "", key, until - t);
			continue;
		}
		return (ssize_t)jo->order[k];
	}
	return -1;
}

/* A batch in flight: what its provider's worker is given, and its outcome. */
struct launch_job {
	struct pjob j;
	struct prov_batch b;
	struct prov_node *pn;
	struct node_rec *recs;   /* the nodes' records when it was sent (own the strings of b and pn) */
	char joinaddr[300];
	char *cluster, *acceptance, *munge_socket;
	double queued, t0, t1;   /* mono(): queued, the call's start and end (on the worker) */
};

static void launch_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct launch_job *l = (struct launch_job *)j;

	l->t0 = mono();
	lease_check();   /* on the worker too: the call may have waited behind others */
	crash_point(CP_LAUNCH_BEFORE);
	ops->launch(drv, &l->b);
	crash_point(CP_LAUNCH_AFTER);
	l->t1 = mono();
}

static void launch_job_free(struct launch_job *l)
{
	size_t i;

	for (i = 0; i < l->b.n; i++) {
		struct bnode *ni = node_find(l->recs[i].name);
		if (ni)
			ni->busy = false;
		state_node_clear(&l->recs[i]);
	}
	free(l->recs);
	free(l->pn);
	free(l->cluster);
	free(l->acceptance);
	free(l->munge_socket);
	free(l);
}

/*
 * The outcome of a batch, on the loop, in one commit. Each node's record is
 * read again: only a node still launching the same attempt takes it. One
 * that went terminating meanwhile (Slurm suspended it) keeps the launched
 * instance, to terminate it; any other leaves it to the reconciler (an
 * instance of no node is an orphan).
 */
static void launch_done(struct pjob *j, bool ran)
{
	struct launch_job *l = (struct launch_job *)j;
	struct prov_node *pn = l->pn;
	burst_err_t err;
	size_t i, m = l->b.n, launched = 0;
	double tr = mono();

	if (!ran) {
		INFO("launch of %zu node%s through %s: not sent (stopping); the intents stay for the next start",
		     m, m == 1 ? "" : "s", l->b.provider);
		pace_launch_answer(l->b.provider, l->b.region, 0, l->queued, l->queued, false);
		launch_job_free(l);
		return;
	}
	{
		/* the call failed as a whole when no node launched: its first node's class */
		int failed = 0;
		bool throttled = false;
		for (i = 0; i < m && !failed; i++)
			failed = pn[i].cls == PROV_OK ? -1 : (int)pn[i].cls;
		for (i = 0; i < m; i++)
			throttled = throttled || pn[i].cls == PROV_THROTTLED;
		metric_provider_call(l->b.provider, "launch", l->t1 - l->t0, failed > 0 ? failed : 0);
		pace_launch_answer(l->b.provider, l->b.region, m, l->t0, l->t1, throttled);
	}
	/* a driver's text comes back with no control character (provider.h):
	 * the cloud answered the instance id and the error */
	for (i = 0; i < m; i++) {
		str_escape_ctl_buf(pn[i].instance, sizeof(pn[i].instance));
		str_escape_ctl_buf(pn[i].address, sizeof(pn[i].address));
		str_escape_ctl_buf(pn[i].error, sizeof(pn[i].error));
	}
	node_life_begin();
	for (i = 0; i < m; i++) {
		struct node_rec rr, *r = &rr;
		char why[1200], key[512];

		metric_launch(l->recs[i].provider, l->recs[i].instance_type, l->recs[i].region, pn[i].cls);
		if (state_node_get(A.db, l->recs[i].name, r, &err) != 1 || r->attempt != l->recs[i].attempt ||
		    (r->state != NS_LAUNCHING && r->state != NS_TERMINATING)) {
			if (pn[i].cls == PROV_OK)
				INFO("%s: instance %s launched for attempt %d, but the node is %s now: the reconciler "
				     "terminates it as an orphan", l->recs[i].name, pn[i].instance, l->recs[i].attempt,
				     r->name ? node_state_name(r->state) : "gone");
			state_node_clear(r);
			continue;
		}
		if (r->state == NS_TERMINATING) {
			if (pn[i].cls == PROV_OK && (!r->instance || !r->instance[0])) {
				free(r->instance);
				r->instance = xstrdup(pn[i].instance);
				snprintf(why, sizeof(why), "%s launched meanwhile: terminating it", pn[i].instance);
				node_life_apply(r->name, r, LE_LAUNCHED_MEANWHILE, why);
				metric_instance_up(r->name, r->provider, r->instance_type, r->region);
			}
			state_node_clear(r);
			continue;
		}
		switch (pn[i].cls) {
		case PROV_OK:
			if (pn[i].error[0])   /* the driver's note (an adopted instance) */
				INFO("%s: %s", r->name, pn[i].error);
			free(r->instance);
			r->instance = xstrdup(pn[i].instance);
			/* the provider's word for its address: Slurm's NodeAddr at admission */
			free(r->address);
			r->address = pn[i].address[0] ? xstrdup(pn[i].address) : NULL;
			r->retry_at = 0;
			/*
			 * An early node's address goes to slurmctld now, so that
			 * its admission is answered without a slurmctld call (its
			 * job waits on it). Not every node's: that is one
			 * update_node each on the one Slurm worker, and a
			 * 15,000-node burst took twice the agent's CPU for it
			 * (bench/burst-scale, 0.53 -> 1.17 ms a node); the others
			 * are told at admission, as before.
			 */
			if (node_life_apply(r->name, r, LE_LAUNCHED, pn[i].instance) == 1 && r->address &&
			    r->early)
				address_at_launch(r->name, r->instance, r->address);
			metric_instance_up(r->name, r->provider, r->instance_type, r->region);
			launched++;
			break;
		case PROV_CAPACITY:
		case PROV_QUOTA:
			/* this type and region cools down; the node tries the next candidate */
			cooldown_key(r->provider, r->instance_type, r->region, key, sizeof(key));
			state_cooldown_hit(A.db, key, A.cfg->reject_cooldown > 0 ? A.cfg->reject_cooldown : 60,
					   3600, pn[i].error, &err);
			if (pn[i].cls == PROV_QUOTA)
				quota_family(r->provider, r->instance_type, r->region, pn[i].error);
			snprintf(why, sizeof(why), "%.500s %s: %.500s: trying the next candidate",
				 key, prov_class_name(pn[i].cls), pn[i].error);
			free(r->last_error);
			r->last_error = xstrdup(why);
			node_life_apply(r->name, r, LE_CAPACITY, why);
			break;
		case PROV_THROTTLED:
		case PROV_TRANSIENT:
			/* the same attempt again later: the same idempotency key */
			r->retry_at = now() + 2.0;
			snprintf(why, sizeof(why), "%s: %.900s: retrying", prov_class_name(pn[i].cls), pn[i].error);
			node_life_apply(r->name, r, LE_LAUNCH_RETRY, why);
			break;
		default:
			snprintf(why, sizeof(why), "launch of %s as %s failed (%s): %.900s",
				 r->name, r->instance_type ? r->instance_type : "?", prov_class_name(pn[i].cls),
				 pn[i].error);
			/* whatever a failed launch left is cleaned up by terminating */
			node_life_apply(r->name, r, LE_LAUNCH_FAILED, why);
			break;
		}
		state_node_clear(r);
	}
	if (node_life_commit() < 0)
		launched = 0;   /* still launching: adopted (batch journal) when retried */
	/* what bench/launch-scale reads to tell the agent's time from its provider's */
	INFO("launch of %zu node%s through %s: %zu launched; %.3f s in the provider, %.3f s recording, "
	     "%.3f s queued", m, m == 1 ? "" : "s", l->b.provider, launched, l->t1 - l->t0, mono() - tr,
	     l->t0 - l->queued);
	launch_job_free(l);
}

/*
 * Send the nodes in 'launching' of one node set as one batch (same
 * candidate) to their provider's worker; each is marked busy (not retried)
 * until its outcome is in. Called by the pace (agent_pace.c) when the
 * region's buckets hold them.
 */
static bool same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* Whether two launching nodes can go in one batch. */
static bool same_candidate(const struct node_rec *a, const struct node_rec *b)
{
	return same_str(a->provider, b->provider) && same_str(a->instance_type, b->instance_type) &&
		same_str(a->region, b->region) && same_str(a->nodeset, b->nodeset);
}

/* Whether a launching node's record is for this provider's region. */
static bool same_place(const struct node_rec *r, const char *prov, const char *region)
{
	return same_str(r->provider, prov) &&
		!strcmp(r->region ? r->region : "", region ? region : "");
}

size_t launch_send(char **names, size_t n, const char *prov, const char *region)
{
	struct launch_job *l = xcalloc(1, sizeof(*l));
	struct aprov *p;
	burst_err_t err;
	size_t i, m = 0;

	l->pn = xcalloc(n, sizeof(*l->pn));
	l->recs = xcalloc(n, sizeof(*l->recs));
	for (i = 0; i < n; i++) {
		struct bnode *ni = node_find(names[i]);
		if (!ni || ni->busy || state_node_get(A.db, names[i], &l->recs[m], &err) != 1 ||
		    l->recs[m].state != NS_LAUNCHING || (prov && !same_place(&l->recs[m], prov, region)) ||
		    (m && !same_candidate(&l->recs[0], &l->recs[m]))) {
			/* (one relaunched as another candidate while its old launch
			 * waited for tokens, maybe in another region's queue:
			 * launch_retry queues it anew; its answer must not settle
			 * another region's call) */
			state_node_clear(&l->recs[m]);
			continue;
		}
		ni->busy = true;
		l->pn[m].node = l->recs[m].name;
		l->pn[m].attempt = l->recs[m].attempt;
		l->pn[m].token = l->recs[m].token;
		m++;
	}
	l->b.n = m;
	if (!m) {
		launch_job_free(l);
		return 0;
	}
	p = prov_by_name(l->recs[0].provider);
	/* where its instances report (config_check made sure there is one) */
	if (!p || !config_join_address(A.cfg, p->cfg, l->joinaddr, sizeof(l->joinaddr)))
		snprintf(l->joinaddr, sizeof(l->joinaddr), "?");
	for (i = 0; i < m && p; i++) {
		const struct bnode *bn = node_find(l->recs[i].name);
		l->pn[i].index = bn ? node_index_for(p, bn) : -1;
	}
	l->cluster = xstrdup(A.cfg->cluster_name);
	{
		const struct cfg_nodeset *ns = nodeset_of(l->recs[0].name);
		const char *acc = ns && ns->acceptance ? ns->acceptance : A.cfg->acceptance;
		l->acceptance = acc ? xstrdup(acc) : NULL;
	}
	l->munge_socket = xstrdup(A.munge_socket[0] ? A.munge_socket : DEFAULT_MUNGE_SOCKET);
	l->b.cluster = l->cluster;
	l->b.provider = l->recs[0].provider ? l->recs[0].provider : "?";
	l->b.nodeset = l->recs[0].nodeset;
	l->b.acceptance = l->acceptance;
	l->b.instance_type = l->recs[0].instance_type;
	l->b.region = l->recs[0].region;
	l->b.join_addr = l->joinaddr;
	l->b.munge_socket = l->munge_socket;
	l->b.slurm_conf = A.slurm_conf;
	l->b.nodes = l->pn;
	l->queued = mono();
	l->j.run = launch_run;
	l->j.done = launch_done;
	if (!p) {
		for (i = 0; i < m; i++) {
			l->pn[i].cls = PROV_PERMANENT;
			snprintf(l->pn[i].error, sizeof(l->pn[i].error), "provider %s is no longer configured",
				 l->b.provider);
		}
		l->t0 = l->t1 = mono();
		launch_done(&l->j, true);
		return m;
	}
	lease_check();
	pworker_submit(p->w, &l->j);
	return m;
}

/*
 * A job's pick in one launch round: its order in the node set and its
 * candidate. One per job with requested nodes (15,000 one-node jobs of an
 * array: 15,000 of them), so what only a refusal says is allocated only
 * then.
 */
struct job_pick {
	struct job_order jo;
	bool wait;               /* its contract is being read: its nodes wait */
	ssize_t ci;
	char *tried;             /* candidates passed over (cooling down), or NULL */
	unsigned nnodes;         /* its requested nodes in the node set */
	int budget;              /* 0: not checked yet; 1: within the budgets; -B: budget B refuses */
	char *bwhy;              /* the refusing budget's reason, or NULL */
	int account;             /* A.account_check: 0 not checked yet; 1 an association;
				  * -1 not one (awhy); -2 not known yet (awhy) */
	char *awhy;
	ssize_t elig[32];        /* its candidates not cooling down, in rank order (pace_pick) */
	int nelig;               /* -1: not listed yet */
};

/* A new pick for job (its first node name) at the end of *v, grown by half
 * again when full. */
static struct job_pick *job_pick_add(struct job_pick **v, size_t *n, size_t *cap, int nsi, uint32_t job,
				     const char *name, unsigned nnodes)
{
	struct job_pick *jp;

	if (*n == *cap) {
		*cap = *cap ? *cap + *cap / 2 : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	jp = &(*v)[(*n)++];
	memset(jp, 0, sizeof(*jp));
	jp->wait = !job_order_for(&jp->jo, nsi, job, name);
	jp->ci = jp->wait ? -1 : next_candidate(&jp->jo, &jp->tried);
	jp->nnodes = nnodes;
	jp->nelig = -1;
	return jp;
}

/* The region of a candidate ("": the provider has none). */
static const char *cand_region(const struct candidate *c)
{
	return c->region >= 0 ? catalog_str(A.cat, c->region) : "";
}

/*
 * A node's candidate: of the job's candidates not cooling down, the one
 * whose region's buckets let one more instance go soonest (what waits there
 * and what this round has picked counted), the first in rank order on a
 * tie: the node set spreads over its regions and providers in rank order
 * when one region's bucket would delay it.
 */
static ssize_t pace_pick(struct job_pick *jp)
{
	double best = INFINITY, t = mono();
	ssize_t bi = jp->ci;
	int k;

	if (jp->nelig < 0) {
		size_t o;
		double tw = now();
		jp->nelig = 0;
		for (o = 0; o < jp->jo.n && jp->nelig < (int)(sizeof(jp->elig) / sizeof(jp->elig[0])); o++) {
			const struct candidate *c = &A.cs->c[jp->jo.order[o]];
			char key[512];
			cooldown_key(prov_of(c)->cfg->name, catalog_str(A.cat, c->type->name),
				     c->region >= 0 ? catalog_str(A.cat, c->region) : NULL, key, sizeof(key));
			if (state_cooldown_until(A.db, key) <= tw)
				jp->elig[jp->nelig++] = (ssize_t)jp->jo.order[o];
		}
	}
	for (k = 0; k < jp->nelig; k++) {
		const struct candidate *c = &A.cs->c[jp->elig[k]];
		double eta = pace_launch_eta(prov_of(c)->cfg->name, cand_region(c));
		if (eta < best - 1e-6) {
			best = eta;
			bi = jp->elig[k];
		}
		if (eta <= t + 0.5)
			break;  /* (no region can do better than now) */
	}
	return bi;
}

/* A node whose intent is recorded, with its candidate. */
struct picked {
	char *name;
	ssize_t ci;
	size_t seq;
};

static int cmp_picked(const void *a, const void *b)
{
	const struct picked *x = a, *y = b;
	if (x->ci != y->ci)
		return x->ci < y->ci ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A round's job picks by job id (index + 1): one lookup per node, not a
 * scan of the jobs (a burst of n one-node jobs was n^2). */
struct pick_index {
	struct htab h;
	char **keys;
	size_t n;
};

static size_t pick_find(const struct pick_index *x, uint32_t job)
{
	char k[16];

	snprintf(k, sizeof(k), "%u", job);
	return (size_t)(uintptr_t)htab_get(&x->h, k);
}

static void pick_add(struct pick_index *x, uint32_t job, size_t idx)
{
	char *k = xmalloc(16);

	snprintf(k, 16, "%u", job);
	x->keys = xrealloc(x->keys, (x->n + 1) * sizeof(*x->keys));
	x->keys[x->n++] = k;
	htab_put(&x->h, k, (void *)(uintptr_t)(idx + 1));
}

static void pick_index_free(struct pick_index *x)
{
	while (x->n)
		free(x->keys[--x->n]);
	free(x->keys);
	htab_free(&x->h);
	memset(x, 0, sizeof(*x));
}

/*
 * Requested nodes, by node set: each gets the best candidate not cooling
 * down in its job's order (job_order_for: the job's contract ranks the node
 * set's candidates; the node set's own order for a node resumed for no
 * job), a new attempt and token, written as an intent (launching) before
 * anything is launched; then the node set's nodes go in one batch per
 * candidate.
 */
static void launch_requested(void)
{
	burst_err_t err;
	long *jobof = NULL;
	char **names = state_nodes_in_jobs(A.db, NS_REQUESTED, &jobof, &err);
	size_t nsi, i, k;

	if (!names || !names[0]) {
		state_names_free(names);
		free(jobof);
		return;
	}
	budget_round_begin();
	for (nsi = 0; nsi < A.cfg->nnodesets; nsi++) {
		struct picked *picks = xcalloc(A.cfg->nodesets[nsi].nodes.n + 1, sizeof(*picks));
		struct job_pick *jobs = NULL;
		struct pick_index jx = { HTAB_INIT, NULL, 0 };
		size_t np = 0, njobs = 0, jobs_cap = 0;
		double t0 = mono();
		bool any = false;

		/*
		 * Each job's order first, outside the intents' transaction. A
		 * job's contract is read from slurmctld on the Slurm worker
		 * (slurm_job_contract): until it is in, the job's nodes stay
		 * requested and are taken up again on a later turn.
		 */
		for (i = 0; names[i]; i++) {
			struct bnode *ni = node_find(names[i]);
			long job = jobof[i];   /* (read with the names: not each record again) */

			if (!ni || ni->nodeset != (int)nsi)
				continue;
			k = pick_find(&jx, (uint32_t)job);
			k = k ? k - 1 : njobs;
			if (k == njobs) {
				pick_add(&jx, (uint32_t)job, njobs);
				job_pick_add(&jobs, &njobs, &jobs_cap, (int)nsi, (uint32_t)job, names[i], 0);
			}
			jobs[k].nnodes++;
		}
		for (i = 0; names[i]; i++) {
			struct bnode *ni = node_find(names[i]);
			struct job_pick *jp = NULL;
			struct node_rec r;
			char token[64];

			if (!ni || ni->nodeset != (int)nsi)
				continue;
			if (!any) {
				/* the node set's intents in one commit */
				node_life_begin();
				any = true;
			}
			ni->registered = false;
			if (state_node_get(A.db, names[i], &r, &err) != 1 || r.state != NS_REQUESTED ||
			    r.retry_at > now()) {
				/* (a relaunch waits for its backoff: node_life.c) */
				state_node_clear(&r);
				continue;
			}
			/* one order and one pick per job (and one for nodes of no job) */
			k = pick_find(&jx, (uint32_t)r.job);
			if (k)
				jp = &jobs[k - 1];
			if (!jp) {
				pick_add(&jx, (uint32_t)r.job, njobs);
				jp = job_pick_add(&jobs, &njobs, &jobs_cap, (int)nsi, (uint32_t)r.job, names[i], 1);
			}
			if (jp->wait) {
				/* still requested: launched once slurmctld has said */
				state_node_clear(&r);
				continue;
			}
			if (jp->ci < 0) {
				char why[3000];
				snprintf(why, sizeof(why), "no instance type of node set %s can be launched now (%s): %s",
					 A.cfg->nodesets[nsi].name, jp->jo.how, jp->tried ? jp->tried : "it has no candidate");
				node_life_apply(names[i], &r, LE_NO_CANDIDATE, why);
				state_node_clear(&r);
				continue;
			}
			if (A.account_check && r.job) {
				/*
				 * Budgets count accounts and Slurm does not hold a job's
				 * account to its user's associations: no launch for a job
				 * whose account is none of its user's (the agent's own
				 * check, against slurmdbd); one whose account is not known
				 * yet waits, requested.
				 */
				if (!jp->account) {
					char awhy[1200];
					int a = slurm_job_account_ok((uint32_t)r.job, awhy, sizeof(awhy));
					jp->account = a == 1 ? 1 : a == 0 ? -1 : -2;
					if (a != 1) {
						free(jp->awhy);
						jp->awhy = xstrdup(awhy);
					}
				}
				if (jp->account == -2) {
					ERR_LIMITED("account not known yet", "%s: not launched yet: %s", names[i], jp->awhy);
					state_node_clear(&r);
					continue;
				}
				if (jp->account == -1) {
					char note[600], text[300], acct[128] = "", *n;
					burst_err_t e2;
					uint32_t lim = 0;
					/* (the note's text is encoded: an account cannot end it) */
					slurm_job_meta((uint32_t)r.job, acct, sizeof(acct), &lim);
					snprintf(text, sizeof(text), "account %.100s is not an association of the job's user "
						 "(budgets count accounts)", acct);
					n = wire_note_encode(WIRE_NOTE_HELD, NULL, text);
					snprintf(note, sizeof(note), "%s", n);
					free(n);
					if (state_event(A.db, names[i], "budget", jp->awhy, &e2) < 0)
						ERR("%s: %s", names[i], e2.msg);
					ERR("%s: not launched: %s", names[i], jp->awhy);
					node_life_apply_held(names[i], &r, LE_ACCOUNT_REFUSED, jp->awhy, note);
					state_node_clear(&r);
					continue;
				}
			}
			{
				/*
				 * The budgets: no launch that would cross one. A job's nodes
				 * are checked together (all of them launched, or none: a part
				 * of them would wait idle for the rest), nodes resumed for no
				 * job one by one.
				 */
				const struct candidate *c = &A.cs->c[jp->ci];
				struct aprov *p = prov_of(c);
				char note[300];
				const char *why;
				int b;
				if (!jp->budget || !r.job) {
					char bwhy[2000];
					b = budget_check((int)nsi, (uint32_t)r.job, p->cfg->name, catalog_str(A.cat, c->type->name),
							 c->region >= 0 ? catalog_str(A.cat, c->region) : NULL,
							 r.job ? jp->nnodes : 1, bwhy, sizeof(bwhy));
					jp->budget = b ? -b : 1;
					if (b) {
						free(jp->bwhy);
						jp->bwhy = xstrdup(bwhy);
					}
					if (b && r.job)
						budget_held((uint32_t)r.job, b);
				}
				why = jp->bwhy;
				b = jp->budget < 0 ? -jp->budget : 0;
				if (b) {
					burst_err_t e2;
					char text[300], *n;
					snprintf(text, sizeof(text), "%s would be crossed: held until it allows the launch",
						 A.cfg->budgets[b - 1].name);
					n = wire_note_encode(WIRE_NOTE_BUDGET, NULL, text);
					snprintf(note, sizeof(note), "%s", n);
					free(n);
					if (state_event(A.db, names[i], "budget", why, &e2) < 0)
						ERR("%s: %s", names[i], e2.msg);
					ERR("%s: not launched: %s%s", names[i], why, r.job ? "; its job is held" : "");
					node_life_apply_held(names[i], &r, LE_OVER_BUDGET, why, note);
					state_node_clear(&r);
					continue;
				}
			}
			{
				ssize_t ci = pace_pick(jp);
				const struct candidate *c = &A.cs->c[ci];
				struct aprov *p = prov_of(c);
				r.attempt++;
				random_token(token, sizeof(token));
				free(r.token);
				free(r.instance);
				free(r.address);
				free(r.provenance_id);
				free(r.provider);
				free(r.instance_type);
				free(r.region);
				r.token = xstrdup(token);
				r.instance = NULL;
				r.address = NULL;   /* the provider's, when it launches */
				r.provenance_id = NULL;
				r.provider = xstrdup(p->cfg->name);
				r.instance_type = xstrdup(catalog_str(A.cat, c->type->name));
				r.region = c->region >= 0 ? xstrdup(catalog_str(A.cat, c->region)) : NULL;
				r.token_used = false;
				r.want_resume = false;
				r.cooldown_until = 0;
				r.retry_at = 0;
				{
					char rec[PATH_MAX * 2], detail[1200];
					/* no admission record of an earlier instance may survive */
					admission_path(names[i], rec, sizeof(rec));
					unlink(rec);
					snprintf(detail, sizeof(detail), "attempt %d as %s/%s%s%s (%s)", r.attempt, r.provider,
						 r.instance_type, r.region ? "@" : "", r.region ? r.region : "", jp->jo.how);
					/* the intent first: a crash from here on finds the node launching */
					if (node_life_apply(names[i], &r, LE_LAUNCH, detail) == 1) {
						pace_plan(r.provider, r.region);
						picks[np].name = names[i];
						picks[np].ci = ci;
						picks[np].seq = np;
						np++;
					}
				}
			}
			state_node_clear(&r);
		}
		/* the intents are durable before anything is launched */
		if (any && node_life_commit() < 0)
			np = 0;         /* still requested: tried again */
		if (np) {
			char **batch = xcalloc(np, sizeof(char *));
			INFO("node set %s: %zu launch intent%s recorded in %.3f s", A.cfg->nodesets[nsi].name,
			     np, np == 1 ? "" : "s", mono() - t0);
			/* one batch per candidate, in the order the nodes came, to
			 * its region's pace */
			qsort(picks, np, sizeof(*picks), cmp_picked);
			for (i = 0; i < np; i = k) {
				const struct candidate *c = &A.cs->c[picks[i].ci];
				char key[600];
				size_t nb = 0;
				for (k = i; k < np && picks[k].ci == picks[i].ci; k++)
					batch[nb++] = picks[k].name;
				snprintf(key, sizeof(key), "%s\n%s", catalog_str(A.cat, c->type->name),
					 A.cfg->nodesets[nsi].name);
				pace_launch(batch, nb, prov_of(c)->cfg->name, cand_region(c), key);
			}
			free(batch);
		}
		for (k = 0; k < njobs; k++) {
			job_order_free(&jobs[k].jo);
			free(jobs[k].tried);
			free(jobs[k].bwhy);
			free(jobs[k].awhy);
		}
		free(jobs);
		pick_index_free(&jx);
		free(picks);
	}
	budget_round_end();
	pace_round_end();
	state_names_free(names);
	free(jobof);
	pace_run();
}

/*
 * Launches to try again (throttled, transient, or in flight at a restart),
 * through their region's pace. Each turn reads only those whose retry time
 * has come; every launching node is looked at at the first turn (a restart)
 * and every 5 s (one whose outcome could not be recorded).
 */
void launch_retry(void)
{
	static double last_all = -1;
	burst_err_t err;
	bool all = last_all < 0 || mono() - last_all >= 5.0;
	double t = now();
	char **names = all ? state_nodes_in(A.db, NS_LAUNCHING, &err) :
		state_nodes_due(A.db, NS_LAUNCHING, STATE_RETRY_AT, t, &err);
	size_t i;

	if (all)
		last_all = mono();
	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		struct bnode *ni = node_find(names[i]);
		if (ni && (ni->busy || ni->paced))
			continue;   /* its launch is in flight, or waits for tokens */
		if (state_node_get(A.db, names[i], &r, &err) == 1 && r.retry_at <= t) {
			char *one[1] = { names[i] }, key[600];
			snprintf(key, sizeof(key), "%s\n%s", r.instance_type ? r.instance_type : "",
				 r.nodeset ? r.nodeset : "");
			if (r.provider)
				pace_launch(one, 1, r.provider, r.region, key);
			else
				launch_send(one, 1, NULL, NULL);
		}
		state_node_clear(&r);
	}
	state_names_free(names);
	pace_run();
}

/* The instance of a terminating node r is gone: the node goes on. */
static void terminated(const char *node, struct node_rec *r)
{
	char rec[PATH_MAX * 2];

	metric_instance_down(node);
	admission_path(node, rec, sizeof(rec));
	unlink(rec);
	if (r->want_resume) {
		/* Slurm asked for the node again while it was going away */
		r->want_resume = false;
		node_life_apply(node, r, LE_TERMINATED_RESUME, "instance terminated; resume requested meanwhile");
	} else
		node_life_apply(node, r, LE_TERMINATED, "instance terminated");
}

static void terminate_then(const struct term_result *t)
{
	struct node_rec r;
	burst_err_t err;
	struct bnode *ni = node_find(t->node);

	if (t->rc < 0) {
		ERR("%s: cannot terminate instance %s (%s): %s (will retry)", t->node, t->instance,
		    prov_class_name(t->cls), t->err);
		if (t->cls == PROV_THROTTLED) {
			if (state_node_get(A.db, t->node, &r, &err) == 1)
				pace_terminate_throttled(t->provider, r.region);
			state_node_clear(&r);
		}
		if (ni)
			ni->retry_after = mono() + 2.0;
		return;
	}
	/* only if the node still waits for this instance to go */
	if (state_node_get(A.db, t->node, &r, &err) == 1 && r.state == NS_TERMINATING && r.instance &&
	    !strcmp(r.instance, t->instance))
		terminated(t->node, &r);
	state_node_clear(&r);
}

/* A terminating node: its instance is terminated on its provider's worker;
 * the node goes on when that is done (terminate_then). */
void terminate(const char *node)
{
	struct node_rec r;
	burst_err_t err;
	struct aprov *p;
	struct bnode *ni = node_find(node);

	if (ni && (ni->busy || ni->retry_after > mono()))
		return;     /* a call for it is in flight (its outcome says what to do), or a retry waits */
	if (state_node_get(A.db, node, &r, &err) != 1 || r.state != NS_TERMINATING) {
		state_node_clear(&r);
		return;
	}
	p = prov_by_name(r.provider);
	if (p && r.instance) {
		double when;
		if (!pace_terminate_take(r.provider, r.region, &when)) {
			/* the region's terminate buckets are empty: when they hold one */
			if (ni)
				ni->retry_after = when;
			state_node_clear(&r);
			return;
		}
		lease_check();
		prov_terminate_async(p, node, r.instance, NULL, true, terminate_then);
		state_node_clear(&r);
		return;
	}
	if (!p && r.provider && r.instance)
		ERR("%s: instance %s of provider %s, which is no longer configured: terminate it by hand",
		    node, r.instance, r.provider);
	terminated(node, &r);
	state_node_clear(&r);
}

/*
 * A cooldown's power-down, once slurmctld has answered: only then is the
 * cooldown over in the state. The call waits on the Slurm worker (behind a
 * slurmctld that takes 10 s over another node) and goes with the agent if
 * it dies first; the next agent then finds the cooldown due and powers the
 * node down (test_crash_points: burst-3 left DOWN for good otherwise). A
 * refusal is said and not retried, as before.
 */
static void cooldown_done(void *arg, bool ran, bool ok)
{
	char *node = arg;
	struct bnode *ni = node_find(node);
	struct node_rec r;
	burst_err_t err;

	memset(&r, 0, sizeof(r));
	if (ni)
		ni->powering_down = false;
	if (ran && state_node_get(A.db, node, &r, &err) == 1 && r.state == NS_POWERED_DOWN && r.cooldown_until > 0) {
		r.cooldown_until = 0;
		node_life_apply(node, &r, LE_COOLDOWN_OVER,
			   ok ? "cooldown over: powered down in Slurm" : "cooldown over: slurmctld refused the power-down (above)");
	}
	state_node_clear(&r);
	free(node);
}

/* Nodes whose cooldown is over are powered down in Slurm again (idle~). */
static void cooldowns(void)
{
	burst_err_t err;
	double t = now();
	/* only those whose cooldown is over: every tick, with thousands of nodes */
	char **names = state_nodes_due(A.db, NS_POWERED_DOWN, STATE_COOLDOWN_UNTIL, t, &err);
	size_t i;

	for (i = 0; names && names[i]; i++) {
		struct bnode *ni = node_find(names[i]);
		struct node_rec r;

		memset(&r, 0, sizeof(r));
		if (ni && !ni->powering_down && state_node_get(A.db, names[i], &r, &err) == 1 &&
		    r.cooldown_until > 0 && r.cooldown_until <= t) {
			char reason[600];
			snprintf(reason, sizeof(reason), "burst: cooldown over after: %.500s",
				 r.last_error ? r.last_error : "a failure");
			ni->powering_down = true;
			slurm_node_then(names[i], NULL, NODE_STATE_POWER_DOWN | NODE_STATE_POWERED_DOWN, reason,
					cooldown_done, xstrdup(names[i]));
		}
		state_node_clear(&r);
	}
	state_names_free(names);
}

/* The terminating nodes' instances terminated (those not in a call already). */
static void terminate_all(void)
{
	burst_err_t err;
	char **names = state_nodes_in(A.db, NS_TERMINATING, &err);

	for (size_t i = 0; names && names[i]; i++)
		terminate(names[i]);
	state_names_free(names);
}

void launch_timers(void)
{
	timer_add(TP_INTAKE, 0, launch_requested, "launches of requested nodes");
	timer_add(TP_INTAKE, 0, launch_retry, "launches retried");
	timer_add(TP_ACT, 0, terminate_all, "terminations");
	timer_add(TP_ACT, 0, cooldowns, "cooldowns over");
}
