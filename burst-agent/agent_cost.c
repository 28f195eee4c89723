/*
 * burst-agent: cost. Every instance's record (type, region, price and where
 * the price comes from, launch, join, end), kept with the node's
 * transitions; the jobs that held burst nodes and when, from Slurm's job
 * readings (agent_slurm.c); a job's cost written to its admin comment once
 * it ended; and the budgets (Budget= lines), held against each launch.
 * The arithmetic is lib/core/cost.c's; burstctl cost reads the same records.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>

#include "agent_int.h"
#include "timer.h"
#include "node_life.h"
#include "wire.h"
#include "cost.h"
#include "hostlist.h"
#include "strutil.h"

/* ---- instances ---- */

static void record_launch(const struct node_rec *r, double t)
{
	struct cost_inst in;
	char src[PATH_MAX + 64];
	const struct cfg_nodeset *ns = nodeset_of(r->name);
	burst_err_t err;

	memset(&in, 0, sizeof(in));
	in.provider = r->provider;
	in.instance = r->instance;
	in.node = r->name;
	in.nodeset = ns ? ns->name : r->nodeset;
	in.type = r->instance_type;
	in.region = r->region;
	in.price = instance_price(r->provider ? r->provider : "", r->instance_type ? r->instance_type : "",
				  r->region ? r->region : "");
	in.price_source = isnan(in.price) ? (char *)"unknown: no price in the catalog or a Price= line" :
		(char *)config_price_source(A.cfg, r->provider ? r->provider : "", r->instance_type ? r->instance_type : "",
					    r->region, src, sizeof(src));
	in.job = r->job;
	in.launched = t;
	if (state_instance_launched(A.db, &in, &err) < 0)
		ERR("%s: cost: %s", r->name, err.msg);
}

void cost_transition(const char *node, const struct node_rec *before, const struct node_rec *r,
		     enum node_state to)
{
	burst_err_t err;
	bool has = r->instance && r->instance[0], had = before->instance && before->instance[0];
	double t = now();

	if (had && (!has || strcmp(before->instance, r->instance) || to == NS_POWERED_DOWN ||
		    to == NS_REQUESTED || to == NS_LAUNCHING) &&
	    state_instance_ended(A.db, before->provider, before->instance, t, &err) < 0)
		ERR("%s: cost: %s", node, err.msg);
	if (!has || to == NS_POWERED_DOWN || to == NS_REQUESTED || to == NS_LAUNCHING)
		return;
	/* an instance of this node now: launched (recorded once), perhaps admitted */
	record_launch(r, t);
	if (to == NS_ADMITTED && before->state != NS_ADMITTED &&
	    state_instance_joined(A.db, r->provider, r->instance, t, &err) < 0)
		ERR("%s: cost: %s", node, err.msg);
}

void cost_adopted(const struct node_rec *r)
{
	if (r->instance && r->instance[0])
		record_launch(r, now());
}

/* ---- jobs ---- */

/* What was recorded of a job already: a reading with nothing new writes nothing. */
struct seen_job {
	uint32_t id;
	time_t start;
	bool ended;
	bool running;            /* at the last reading: its cost so far is noted only then */
	bool mark;
	double noted;            /* mono(): its cost so far was last noted then (0: not yet) */
};
static struct seen_job *seen;
static size_t nseen;

/* The job's cost until t: its share of the instances' time while it held
 * their nodes. -1 when the records cannot be read. */
static int job_dollars(uint32_t job, double t, double *dollars, double *secs, bool *unknown)
{
	struct cost_inst *insts = NULL;
	struct cost_hold *holds = NULL;
	struct cost_item *items = NULL;
	size_t ni = 0, nh = 0, n = 0, i;
	double from = t;
	burst_err_t err;

	*dollars = *secs = 0;
	*unknown = false;
	/* only what was alive while the job was: not the whole history */
	switch (state_job_first_start(A.db, job, &from, &err)) {
	case 0:
		return 0;
	case 1:
		break;
	default:
		ERR("job %u: cost: %s", job, err.msg);
		return -1;
	}
	if (state_cost_read(A.db, from, &insts, &ni, &holds, &nh, &err) < 0) {
		ERR("job %u: cost: %s", job, err.msg);
		return -1;
	}
	cost_items(insts, ni, holds, nh, from, t, &items, &n);
	for (i = 0; i < n; i++)
		if (items[i].kind == COST_JOB && holds[items[i].hold].job == (long)job) {
			*secs += items[i].seconds;
			if (isnan(items[i].dollars))
				*unknown = true;
			else
				*dollars += items[i].dollars;
		}
	free(items);
	cost_insts_free(insts, ni);
	cost_holds_free(holds, nh);
	return 0;
}

/* A job's final note under way: its cost is recorded (and the job not
 * noted again) once the note was written, not before: an agent that stops
 * first writes it after its restart. */
struct final_note {
	uint32_t job;
	double dollars;
};

static void final_noted(void *arg, bool ran, bool ok)
{
	struct final_note *f = arg;
	burst_err_t err;

	(void)ok;   /* (a failure is in the log; tried once) */
	if (ran && state_job_cost_set(A.db, f->job, f->dollars, &err) < 0)
		ERR("job %u: cost: %s", f->job, err.msg);
	free(f);
}

/* The note in the job's admin comment (its cost note, lib/core/wire.h). */
static void job_note(uint32_t job, double dollars, double secs, bool unknown, bool final)
{
	char text[300], *note;
	struct final_note *f = NULL;

	snprintf(text, sizeof(text), "%.4f USD (%.1f instance-seconds%s%s)", dollars, secs,
		 unknown ? ", some at an unknown price, not counted: no Price= line or catalog price for its type" : "",
		 final ? "" : " so far");
	note = wire_note_encode(WIRE_NOTE_COST, NULL, text);
	if (final) {
		f = xcalloc(1, sizeof(*f));
		f->job = job;
		f->dollars = dollars;
	}
	slurm_job_admin_note(job, note, final, f ? final_noted : NULL, f);
	free(note);
}

/* The job's cost, once it ended: into its admin comment, then the database. */
static void job_cost(uint32_t job)
{
	double dollars, secs;
	bool unknown;
	burst_err_t err;

	if (state_job_cost_get(A.db, job, NULL, &err) != 0)
		return;   /* written already (or cannot say) */
	if (job_dollars(job, now(), &dollars, &secs, &unknown) < 0)
		return;
	job_note(job, dollars, secs, unknown, true);
}

static void budget_release(void);

static void cost_tick(void)
{
	static double last;
	double t = mono();
	size_t i;

	if (t - last < 1.0)
		return;
	last = t;
	budget_release();
	if (A.cfg->cost_note_interval <= 0)
		return;
	for (i = 0; i < nseen; i++) {
		double dollars, secs;
		bool unknown;
		if (seen[i].ended || !seen[i].running ||
		    (seen[i].noted > 0 && t - seen[i].noted < A.cfg->cost_note_interval))
			continue;
		seen[i].noted = t;
		if (job_dollars(seen[i].id, now(), &dollars, &secs, &unknown) == 0)
			job_note(seen[i].id, dollars, secs, unknown, false);
	}
}

void cost_jobs(const struct job_info_msg *msg)
{
	long *open = NULL;
	size_t nopen = 0, i, k;
	uint32_t j;
	burst_err_t err;
	bool any = false;

	for (i = 0; i < nseen; i++)
		seen[i].mark = false;
	if (state_holds_open_jobs(A.db, &open, &nopen, &err) < 0)
		ERR("cost: %s", err.msg);
	for (j = 0; j < msg->record_count; j++) {
		const slurm_job_info_t *ji = &msg->job_array[j];
		uint32_t st = ji->job_state & JOB_STATE_BASE;
		bool running = st == JOB_RUNNING || st == JOB_SUSPENDED, ended = st > JOB_SUSPENDED;
		struct hostlist hl = { NULL, 0, 0 };
		struct seen_job *sj = NULL;
		char uid[32];
		size_t h;

		for (i = 0; i < nseen && !sj; i++)
			if (seen[i].id == ji->job_id)
				sj = &seen[i];
		if (sj) {
			sj->mark = true;
			sj->running = running;
		}
		if ((!running && !ended) || !ji->nodes || !ji->start_time ||
		    (sj && sj->start == ji->start_time && sj->ended == ended))
			continue;
		if (hostlist_expand(ji->nodes, &hl, 1 << 20, &err) < 0)
			continue;
		snprintf(uid, sizeof(uid), "%u", ji->user_id);
		for (h = 0; h < hl.n; h++) {
			struct cost_hold ch;
			if (!node_find(hl.names[h]))
				continue;
			if (!any && !state_in_batch(A.db)) {
				/* the holds of a reading in one commit */
				node_life_begin();
				any = true;
			}
			memset(&ch, 0, sizeof(ch));
			ch.job = ji->job_id;
			ch.node = hl.names[h];
			ch.start = (double)ji->start_time;
			ch.end = ended ? (double)(ji->end_time > ji->start_time ? ji->end_time : ji->start_time) : 0;
			ch.user = ji->user_name && ji->user_name[0] ? ji->user_name : uid;
			ch.account = ji->account;
			ch.partition = ji->partition;
			if (state_hold(A.db, &ch, &err) < 0)
				ERR("job %u: cost: %s", ji->job_id, err.msg);
			if (!sj) {
				seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
				sj = &seen[nseen++];
				sj->id = ji->job_id;
				sj->mark = true;
				sj->running = running;
				sj->noted = mono();   /* the first note after an interval */
			}
			sj->start = ji->start_time;
			sj->ended = ended;
		}
		hostlist_free(&hl);
		if (!sj)
			continue;   /* on no burst node */
		/* a run before (requeued) ended when this one started */
		if (state_holds_close(A.db, ji->job_id, (double)ji->start_time, (double)ji->start_time, &err) < 0)
			ERR("job %u: cost: %s", ji->job_id, err.msg);
		if (ended) {
			if (any)
				node_life_commit();
			any = false;
			job_cost(ji->job_id);
		}
	}
	/* open holds of jobs that are pending again (requeued) or gone */
	for (k = 0; k < nopen; k++) {
		bool live = false;
		for (j = 0; j < msg->record_count && !live; j++)
			if ((long)msg->job_array[j].job_id == open[k]) {
				uint32_t st = msg->job_array[j].job_state & JOB_STATE_BASE;
				live = st != JOB_PENDING;
			}
		if (!live && state_holds_close(A.db, open[k], -1, now(), &err) < 0)
			ERR("job %ld: cost: %s", open[k], err.msg);
	}
	if (any)
		node_life_commit();
	free(open);
	/* forget the jobs slurmctld forgot */
	for (i = 0; i < nseen;)
		if (!seen[i].mark)
			seen[i] = seen[--nseen];
		else
			i++;
}

/* ---- budgets ---- */

static double *spent, *committed;
static bool round_on;
static double refused_est;   /* the estimate of the launch budget_check refused last */

void budget_round_begin(void)
{
	struct cost_inst *insts = NULL;
	struct cost_hold *holds = NULL;
	size_t ni = 0, nh = 0, b;
	double t = now(), from = t;
	burst_err_t err;

	round_on = false;
	if (!A.cfg->nbudgets)
		return;
	spent = xrealloc(spent, A.cfg->nbudgets * sizeof(*spent));
	committed = xrealloc(committed, A.cfg->nbudgets * sizeof(*committed));
	for (b = 0; b < A.cfg->nbudgets; b++) {
		double f = cost_period_start((enum cost_period)A.cfg->budgets[b].period, t);
		spent[b] = committed[b] = 0;
		if (f < from)
			from = f;
	}
	if (state_cost_read(A.db, from, &insts, &ni, &holds, &nh, &err) < 0) {
		/* spending that cannot be read is not taken for none */
		ERR("budgets: %s: no launch this round", err.msg);
		for (b = 0; b < A.cfg->nbudgets; b++)
			spent[b] = INFINITY;
		round_on = true;
		return;
	}
	for (b = 0; b < A.cfg->nbudgets; b++) {
		const struct cfg_budget *bg = &A.cfg->budgets[b];
		struct cost_item *items;
		size_t n;
		cost_items(insts, ni, holds, nh, cost_period_start((enum cost_period)bg->period, t), t, &items, &n);
		spent[b] = cost_spent(insts, holds, items, n, bg->nodeset, bg->account);
		free(items);
	}
	cost_insts_free(insts, ni);
	cost_holds_free(holds, nh);
	round_on = true;
}

void budget_round_end(void)
{
	round_on = false;
}

int budget_check(int nodeset, uint32_t job, const char *provider, const char *type, const char *region,
		 unsigned count, char *why, size_t len)
{
	const char *nsname = nodeset >= 0 && (size_t)nodeset < A.cfg->nnodesets ? A.cfg->nodesets[nodeset].name : "";
	char account[128] = "";
	uint32_t limit = 0;
	double price, hours, est, t = now();
	size_t b;

	if (!round_on || !A.cfg->nbudgets)
		return 0;
	if (job)
		slurm_job_meta(job, account, sizeof(account), &limit);
	price = instance_price(provider, type, region ? region : "");
	hours = limit ? limit / 60.0 : 1.0;
	est = isnan(price) ? 0 : price * hours * (count ? count : 1);
	for (b = 0; b < A.cfg->nbudgets; b++) {
		const struct cfg_budget *bg = &A.cfg->budgets[b];
		if ((bg->nodeset && strcmp(bg->nodeset, nsname)) || (bg->account && strcmp(bg->account, account)))
			continue;
		if (spent[b] + committed[b] + est > bg->amount) {
			char since[64];
			time_t ps = (time_t)cost_period_start((enum cost_period)bg->period, t);
			struct tm tm;
			gmtime_r(&ps, &tm);
			strftime(since, sizeof(since), "%Y-%m-%dT%H:%MZ", &tm);
			snprintf(why, len, "budget %s (%g USD a %s%s%s%s%s, %s:%d) would be crossed: %.4f USD spent since %s, %.4f "
				 "USD of launches this round, and this launch of %u %s at %.4f USD/h for %.2f h (%s) is %.4f USD more",
				 bg->name, bg->amount, cost_period_name((enum cost_period)bg->period),
				 bg->nodeset ? ", node set " : "", bg->nodeset ? bg->nodeset : "",
				 bg->account ? ", account " : "", bg->account ? bg->account : "",
				 bg->where.file, bg->where.line, spent[b], since, committed[b], count ? count : 1, type, isnan(price) ? 0 : price, hours,
				 limit ? "the job's time limit" : "one hour: no time limit known", est);
			refused_est = est;
			return (int)b + 1;
		}
	}
	for (b = 0; b < A.cfg->nbudgets; b++) {
		const struct cfg_budget *bg = &A.cfg->budgets[b];
		if ((bg->nodeset && strcmp(bg->nodeset, nsname)) || (bg->account && strcmp(bg->account, account)))
			continue;
		committed[b] += est;
	}
	return 0;
}

void cost_fini(void)
{
	free(seen);
	seen = NULL;
	nseen = 0;
	free(spent);
	free(committed);
	spent = committed = NULL;
}

void budget_held(uint32_t job, int b)
{
	burst_err_t err;

	if (b < 1 || (size_t)b > A.cfg->nbudgets)
		return;
	if (state_budget_hold_add(A.db, job, A.cfg->budgets[b - 1].name, refused_est, &err) < 0)
		ERR("job %u: %s", job, err.msg);
}

/* A release in flight: the job, forgotten once slurmctld has done it. */
static void released(void *arg, bool ran, bool ok)
{
	long job = (long)(intptr_t)arg;
	burst_err_t err;

	if (ran && ok && state_budget_hold_del(A.db, job, &err) < 0)
		ERR("job %ld: %s", job, err.msg);
}

/*
 * Jobs held for a budget are released once it allows their launch again:
 * a new period began, the budget was raised or removed (SIGHUP). Checked
 * every few seconds, against the spending as budget_check counts it, the
 * releases of one round counted one after the other.
 */
static void budget_release(void)
{
	static double last;
	struct budget_hold *h = NULL;
	size_t n = 0, i, b;
	burst_err_t err;
	double t = mono();

	if (t - last < 5.0)
		return;
	last = t;
	if (state_budget_holds(A.db, &h, &n, &err) < 0) {
		ERR("budgets: %s", err.msg);
		return;
	}
	if (!n) {
		free(h);
		return;
	}
	budget_round_begin();
	for (i = 0; i < n; i++) {
		char why[600];
		for (b = 0; b < A.cfg->nbudgets; b++)
			if (!strcmp(A.cfg->budgets[b].name, h[i].budget))
				break;
		if (b == A.cfg->nbudgets)
			snprintf(why, sizeof(why), "budget %s is no longer configured", h[i].budget);
		else if (round_on && spent[b] + committed[b] + h[i].estimate <= A.cfg->budgets[b].amount) {
			committed[b] += h[i].estimate;
			snprintf(why, sizeof(why), "budget %s allows its launch now (%.4f USD spent, %.4f more of %g)",
				 h[i].budget, spent[b], h[i].estimate, A.cfg->budgets[b].amount);
		} else
			continue;
		slurm_job_budget_release((uint32_t)h[i].job, why, released, (void *)(intptr_t)h[i].job);
	}
	budget_round_end();
	state_budget_holds_free(h, n);
}

void cost_timers(void)
{
	timer_add(TP_ACT, 0, cost_tick, "job costs noted");
}
