/*
 * burst-agent: the Slurm adapter. What the agent tells slurmctld (node
 * addresses and states, jobs let go on) and what it reads there (its
 * settings, registrations, jobs held by the prolog, jobs on a node, a
 * job's contract).
 *
 * Every call to slurmctld but the settings at start-up runs on the Slurm
 * worker (a pworker of its own, pworker.h), one at a time and in the order
 * asked, never on the poll loop: a slurmctld that is slow, stopped or
 * unreachable holds each call up to about twice MessageTimeout, and the
 * loop must go on taking joins, spool requests and control requests
 * meanwhile. What a call brings back is handled on the loop (its then
 * function), against the node records as they are by then.
 */
#include <errno.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "agent_int.h"
#include "timer.h"
#include "node_life.h"
#include "hostlist.h"
#include "proc.h"
#include "slurm_compat.h"
#include "strutil.h"
#include "wire.h"

#define REGISTER_TIMEOUT_S 5      /* admitted to registered in Slurm (it takes ~0.1 s) */
#define SLOW_CALL_S 3.0
static char cluster_name[256];  /* ClusterName: the accounting records' */
static bool accounting_dbd;   /* AccountingStorageType=accounting_storage/slurmdbd: sacct has jobs */           /* a call that took longer is said in the log */
#define CONTRACT_KEEP_S 60.0      /* a job's contract, once read, is kept this long */
#define CONTRACT_RETRY_S 5.0      /* ... and a failure to read it this long */

/*
 * What the agent takes from Slurm's configuration: SlurmUser (who, besides
 * root, may use the control socket and writes the spool) and, unless
 * burst.conf gives MungeSocket=, the munged of AuthInfo=socket=PATH. -1 if
 * slurmctld could not be asked (then only root is let in). At start-up,
 * before the loop: the one call made on the loop's thread.
 */
int slurm_settings(void)
{
	slurm_conf_t *sc = NULL;

	A.slurm_uid = 0;
	if (A.cfg->munge_socket)
		snprintf(A.munge_socket, sizeof(A.munge_socket), "%s", A.cfg->munge_socket);
	if (slurm_load_ctl_conf((time_t)0, &sc) != SLURM_SUCCESS) {
		ERR("cannot read Slurm's configuration (%s): only root may use the control socket",
		    slurm_strerror(burst_slurm_errno()));
		/* Slurm's accounting enforcement from the file slurmctld reads instead */
		slurmconf_acct(A.slurm_conf, &A.slurm_acct);
		if (config_account_budget(A.cfg))
			INFO("budgets by account: AccountingStorageEnforce read from %s, slurmctld not answering%s%s",
			     A.slurm_conf, A.slurm_acct.known ? "" : ": ", A.slurm_acct.known ? "" : A.slurm_acct.why);
		return -1;
	}
	{
		/* what slurmctld enforces (scontrol show config's
		 * AccountingStorageEnforce): the running daemon's, whatever
		 * slurm.conf says now, its Include files and configless set-ups
		 * too, and none when it has no slurmdbd (controller.c) */
		static const char *const words[] = { "associations", "limits", "wckeys", "qos", "safe", "nojobs",
			"nosteps", NULL };
		char text[256] = "";
		size_t i, used = 0;
		for (i = 0; words[i]; i++)
			if (sc->accounting_storage_enforce & (1u << i))
				used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s", used ? "," : "", words[i]);
		slurm_acct_from_ctld(&A.slurm_acct, sc->accounting_storage_enforce & BURST_ENFORCE_ASSOCS,
				     text, sc->accounting_storage_type);
	}
	{
		const char *so = sc->authinfo ? strstr(sc->authinfo, "socket=") : NULL;
		/* the same munged as Slurm's: AuthInfo=socket=PATH */
		if (so && !A.munge_socket[0])
			snprintf(A.munge_socket, sizeof(A.munge_socket), "%.*s", (int)strcspn(so + 7, ","), so + 7);
	}
	A.slurm_uid = sc->slurm_user_id;
	accounting_dbd = sc->accounting_storage_type && strstr(sc->accounting_storage_type, "slurmdbd");
	snprintf(cluster_name, sizeof(cluster_name), "%s", sc->cluster_name ? sc->cluster_name : "");
	slurm_free_ctl_conf(sc);
	return 0;
}

/* ---- the Slurm worker ---- */

static struct pworker *sw;

/* One call: its arguments, the worker's part, what it found, the loop's part. */
struct scall {
	struct pjob pj;                   /* first: the worker's job */
	const char *what;                 /* for the log */
	void (*work)(struct scall *c);    /* on the worker: libslurm (or scontrol) only, into c */
	void (*then)(struct scall *c);    /* on the loop, once it ran */
	char *node, *addr, *reason, *text, *ok_msg;
	uint32_t state, job;
	bool begin_now;
	char **names;                     /* registration check: nodes; their states */
	uint32_t *states;
	size_t n;
	struct sjob *jobs;                /* lost jobs: what each is now */
	int rc, err;
	job_info_msg_t *msg;
	char out[600];
	double secs;
	void (*cb)(void *arg, bool ran, bool ok);
	void *arg;
	struct jobs_req *reqs;            /* jobs on nodes: the batch it answers */
	size_t nreqs;
	bool check_assoc;                 /* a job read: is its account an association of its user? */
	int assoc;                        /* ... 1 yes, 0 no, -1 could not be asked, 2 not asked */
	char user[64];                    /* ... its user */
	char assoc_why[600];              /* ... -1: why */
};

/* One jobs_on() request: answered with the others of its batch. */
struct jobs_req {
	char *node;
	void (*cb)(void *arg, bool ran, const uint32_t *ids, size_t n);
	void *arg;
	uint32_t *ids;
	size_t n;
};
static void jobs_batch_end(struct scall *c, bool ran);

/* A job requeued from a lost node (or one under a notice), let go on at
 * once: the Slurm adapter's own (lost_jobs_go_on). */
struct lost_job {
	uint32_t id;
	double until;            /* give up watching it then */
	double next;             /* when to ask slurmctld to schedule it again */
	bool pending;            /* seen requeued (pending) */
	bool released, nudged;
	bool noticed;            /* requeued by the agent: its node got an interruption notice */
};
static struct lost_job *lost_jobs;
static size_t nlost_jobs;

/* A lost job as slurmctld has it (lost_jobs_go_on). */
struct sjob {
	uint32_t id;
	bool found, gone;                 /* gone: slurmctld knows no such job (any more) */
	uint32_t state, priority;
};

static void sc_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct scall *c = (struct scall *)j;
	double t0 = mono();

	(void)ops;
	(void)drv;
	lease_check();   /* nothing external from an agent that lost its lease */
	c->work(c);
	c->secs = mono() - t0;
}

static void sc_done(struct pjob *j, bool ran)
{
	struct scall *c = (struct scall *)j;
	size_t i;

	if (ran && c->secs >= SLOW_CALL_S)
		INFO("slurmctld took %.1f s to answer (%s); the agent went on meanwhile", c->secs, c->what);
	if (ran && c->then)
		c->then(c);
	else if (!ran && c->cb)
		c->cb(c->arg, false, false);
	if (c->reqs)
		jobs_batch_end(c, ran);
	free(c->node);
	free(c->addr);
	free(c->reason);
	free(c->text);
	free(c->ok_msg);
	for (i = 0; c->names && i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	free(c->states);
	free(c->jobs);
	slurm_free_job_info_msg(c->msg);
	free(c);
}

static struct scall *sc_new(const char *what, void (*work)(struct scall *), void (*then)(struct scall *))
{
	struct scall *c = xcalloc(1, sizeof(*c));

	c->pj.run = sc_run;
	c->pj.done = sc_done;
	c->what = what;
	c->work = work;
	c->then = then;
	return c;
}

static void sc_submit(struct scall *c)
{
	if (!sw) {
		/* no worker (it could not start): refused, as at exit */
		sc_done(&c->pj, false);
		return;
	}
	pworker_submit(sw, &c->pj);
}

int slurm_worker_start(void)
{
	burst_err_t err;

	sw = pworker_start("slurm", NULL, NULL, &err);
	if (!sw) {
		ERR("%s", err.msg);
		return -1;
	}
	return 0;
}

static void jobs_let_go(void);

bool slurm_worker_stop(void)
{
	int rc = pworker_stop(sw, false);
	sw = NULL;
	jobs_let_go();
	return rc == 0;
}

size_t slurm_pending(void)
{
	return pworker_pending(sw);
}

/* ---- nodes ---- */

static void w_update_node(struct scall *c)
{
	update_node_msg_t m;

	slurm_init_update_node_msg(&m);
	m.node_names = c->node;
	if (c->addr) {
		m.node_addr = c->addr;
		m.node_hostname = c->node;
	}
	if (c->state != NO_VAL)
		m.node_state = c->state;
	if (c->reason) {
		m.reason = c->reason;
		m.reason_uid = 0;
	}
	c->rc = slurm_update_node(&m);
	c->err = c->rc == SLURM_SUCCESS ? 0 : burst_slurm_errno();
}

static void t_update_node(struct scall *c)
{
	if (c->rc != SLURM_SUCCESS)
		ERR("%s: slurm_update_node: %s", c->node, slurm_strerror(c->err));
	if (c->cb)
		c->cb(c->arg, true, c->rc == SLURM_SUCCESS);
}

void slurm_node_then(const char *name, const char *addr, uint32_t state, const char *reason,
		     void (*then)(void *arg, bool ran, bool ok), void *arg)
{
	struct scall *c = sc_new("update_node", w_update_node, t_update_node);

	c->node = xstrdup(name);
	c->addr = addr ? xstrdup(addr) : NULL;
	c->state = state;
	/* a reason quotes what others wrote (a cloud's error, a node's console
	 * or record): slurmctld logs it and scontrol and sinfo print it as it
	 * is, one line each, so none of its control characters (a newline, an
	 * escape sequence) goes there */
	c->reason = reason ? str_escape_ctl(reason) : NULL;
	c->cb = then;
	c->arg = arg;
	sc_submit(c);
}

/* Tell Slurm: the node's address, or DOWN with a reason, or power it down. */
void slurm_node(const char *name, const char *addr, uint32_t state, const char *reason)
{
	slurm_node_then(name, addr, state, reason, NULL, NULL);
}

/* ---- jobs: updates ---- */

static void w_update_job(struct scall *c)
{
	job_desc_msg_t upd;

	slurm_init_job_desc_msg(&upd);
	upd.job_id = c->job;
	if (c->begin_now)
		upd.begin_time = time(NULL);
	if (c->text)
		upd.admin_comment = c->text;
	c->rc = slurm_update_job(&upd);
	c->err = c->rc == SLURM_SUCCESS ? 0 : burst_slurm_errno();
}

static void t_update_job(struct scall *c)
{
	if (c->rc != SLURM_SUCCESS)
		ERR("job %u: cannot %s: %s", c->job, c->begin_now ? "clear its BeginTime" : "update its admin comment",
		    slurm_strerror(c->err));
	else if (c->ok_msg)
		INFO("%s", c->ok_msg);
}

/* Update job: its admin comment (text), or its BeginTime to now; ok_msg
 * (NULL: none) is logged once done. */
static void update_job(uint32_t job, const char *text, bool begin_now, const char *ok_msg)
{
	struct scall *c = sc_new("update_job", w_update_job, t_update_job);

	c->job = job;
	c->text = text ? xstrdup(text) : NULL;
	c->begin_now = begin_now;
	c->ok_msg = ok_msg ? xstrdup(ok_msg) : NULL;
	sc_submit(c);
}

/* Let a job Slurm requeued start at once: clear the BeginTime it was given. */
void slurm_job_begin_now(uint32_t job, const char *node)
{
	char msg[300];

	snprintf(msg, sizeof(msg), "%s: job %u may start at once on another node", node, job);
	update_job(job, NULL, true, msg);
}

static void w_requeue(struct scall *c)
{
	c->rc = slurm_requeue(c->job, 0);
	c->err = c->rc == SLURM_SUCCESS ? 0 : burst_slurm_errno();
}

/* job watched until it runs again (lost_jobs_go_on) */
static struct lost_job *lost_job_add(uint32_t job)
{
	struct lost_job *lj;

	lost_jobs = xrealloc(lost_jobs, (nlost_jobs + 1) * sizeof(*lost_jobs));
	lj = &lost_jobs[nlost_jobs++];
	memset(lj, 0, sizeof(*lj));
	lj->id = job;
	lj->until = now() + 120 + A.cfg->reject_cooldown;
	return lj;
}

void slurm_lost_job_watch(uint32_t job)
{
	lost_job_add(job);
}

static void t_requeue(struct scall *c)
{
	struct lost_job *lj;

	if (c->rc != SLURM_SUCCESS) {
		ERR("%s: job %u: cannot requeue it (%s): %s; it ends with the instance", c->node, c->job, c->reason,
		    slurm_strerror(c->err));
		return;
	}
	INFO("%s: job %u requeued before its instance goes (%s)", c->node, c->job, c->reason);
	/* Slurm holds it back (BeginTime) as if it could still run there: let it go on */
	lj = lost_job_add(c->job);
	lj->noticed = true;
}

void slurm_job_requeue(uint32_t job, const char *node, const char *why)
{
	struct scall *c = sc_new("requeue", w_requeue, t_requeue);

	c->job = job;
	c->node = xstrdup(node);
	c->reason = xstrdup(why);
	sc_submit(c);
}

static void w_release(struct scall *c)
{
	char idbuf[32], out[256];
	char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };

	snprintf(idbuf, sizeof(idbuf), "%u", c->job);
	c->rc = proc_run(argv, out, sizeof(out), c->out, sizeof(c->out));
}

static void t_release(struct scall *c)
{
	if (c->rc != 0)
		ERR("job %u: scontrol release failed: %s", c->job, c->out);
	else if (c->ok_msg)
		INFO("%s", c->ok_msg);
}

/* scontrol release job (held by Slurm or the prolog); ok_msg logged once done. */
static void release_job(uint32_t job, const char *ok_msg)
{
	struct scall *c = sc_new("scontrol release", w_release, t_release);

	c->job = job;
	c->ok_msg = ok_msg ? xstrdup(ok_msg) : NULL;
	sc_submit(c);
}

/* ---- registrations ---- */

/* A node whose Slurm state c asks for. */
static void sc_add_node(struct scall *c, const char *name)
{
	c->names = xrealloc(c->names, (c->n + 1) * sizeof(*c->names));
	c->names[c->n++] = xstrdup(name);
}

/* Submit c, which reads the states of its nodes (busy until its answer); none: done at once. */
static void sc_submit_states(struct scall *c, bool *busy)
{
	if (!c->n) {
		sc_done(&c->pj, false);
		return;
	}
	c->states = xcalloc(c->n, sizeof(*c->states));
	*busy = true;
	sc_submit(c);
}

static void w_node_states(struct scall *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		node_info_msg_t *m = NULL;
		c->states[i] = NO_VAL;
		if (slurm_load_node_single(&m, c->names[i], SHOW_ALL) == SLURM_SUCCESS && m->record_count)
			c->states[i] = m->node_array[0].node_state;
		slurm_free_node_info_msg(m);
	}
}

static bool reg_busy;

/*
 * Is the node's slurmd late? Its time counts from when the node was told
 * it is admitted, not from the admission: the answer waits until slurmctld
 * has the node's address, on the Slurm worker, behind any call before it
 * (slurmctld took 10 s over powering down a node whose name does not
 * resolve, test_crash_points), and a node must not be launched again for
 * the agent's own delay. Not while its answer is still held.
 */
static bool register_due(const struct bnode *ni, const struct node_rec *r)
{
	double from = r->since > ni->answered_at ? r->since : ni->answered_at;

	return !ni->answer_pending && now() - from >= REGISTER_TIMEOUT_S;
}

static void t_node_states(struct scall *c)
{
	burst_err_t err;
	size_t i;

	reg_busy = false;
	for (i = 0; i < c->n; i++) {
		struct bnode *ni = node_find(c->names[i]);
		struct node_rec r;
		uint32_t st = c->states[i];

		memset(&r, 0, sizeof(r));
		/* as things are now: the node may have moved on meanwhile */
		if (st == NO_VAL || !ni || ni->registered || state_node_get(A.db, c->names[i], &r, &err) != 1 ||
		    r.state != NS_ADMITTED || !register_due(ni, &r)) {
			state_node_clear(&r);
			continue;
		}
		if (!(st & (NODE_STATE_POWERING_UP | NODE_STATE_NO_RESPOND | NODE_STATE_POWERED_DOWN))) {
			ni->registered = true;
			if (r.failures) {
				r.failures = 0;
				node_life_apply(c->names[i], &r, LE_SLURMD_REGISTERED, "slurmd registered");
			}
		} else if (st & NODE_STATE_POWERING_UP) {
			char why[300];
			snprintf(why, sizeof(why), "slurmd of %s did not register within %d s",
				 r.instance ? r.instance : "?", REGISTER_TIMEOUT_S);
			node_life_apply(c->names[i], &r, LE_SLURMD_UNREGISTERED, why);
		}
		state_node_clear(&r);
	}
}

/*
 * An admitted node whose slurmd has not registered with slurmctld within
 * RegisterTimeout is launched again, as a new instance, while Slurm still
 * waits for it (its ResumeTimeout is longer): rarely, a slurmd started
 * right after its node was resumed is never taken in by slurmctld 22.05,
 * and the job would wait for ResumeTimeout and then be requeued. A node
 * whose slurmd never comes up is launched again a few times, each after a
 * longer wait, and then goes DOWN (slurmd_failed, agent_boot.c). The
 * nodes' states are read on the Slurm worker, one round at a time.
 */
static void registration_check(void)
{
	static double last;
	burst_err_t err;
	char **names;
	struct scall *c;
	size_t i;

	if (reg_busy || now() - last < 2.0)
		return;
	last = now();
	names = state_nodes_in(A.db, NS_ADMITTED, &err);
	c = sc_new("load_node", w_node_states, t_node_states);
	for (i = 0; names && names[i]; i++) {
		struct bnode *ni = node_find(names[i]);
		struct node_rec r;

		memset(&r, 0, sizeof(r));
		if (ni && !ni->registered && state_node_get(A.db, names[i], &r, &err) == 1 && register_due(ni, &r))
			sc_add_node(c, names[i]);
		state_node_clear(&r);
	}
	state_names_free(names);
	sc_submit_states(c, &reg_busy);
}

/* ---- nodes launched at a job's allocation (EarlyLaunch=) ---- */

#define EARLY_CHECK_S 1.0

static bool early_busy;

static bool live_state(enum node_state s)
{
	return s == NS_REQUESTED || s == NS_LAUNCHING || s == NS_BOOTING || s == NS_ADMITTED;
}

/*
 * On the loop: what became of each early node. Slurm has taken it over
 * once its power-save pass powers it up (then ResumeProgram's request,
 * which follows, ends the watch) or its slurmd has registered (Slurm then powers it down when it has been idle
 * for SuspendTime, as any node). While Slurm still has it powered down, a
 * job holds it (ALLOCATED) or none does any more: the job was cancelled or
 * requeued before either, and Slurm, which never resumed the node, would
 * never suspend it either. Its instance is then reclaimed (terminated at
 * once). A node another job holds meanwhile is left to that job's prolog or
 * resume request, which adopt it.
 */
static void t_early(struct scall *c)
{
	burst_err_t err;
	size_t i;

	early_busy = false;
	for (i = 0; i < c->n; i++) {
		uint32_t st = c->states[i], base = st & NODE_STATE_BASE;
		struct node_rec r;
		char why[400];

		memset(&r, 0, sizeof(r));
		/* as things are now: a request may have been taken meanwhile */
		if (st == NO_VAL || state_node_get(A.db, c->names[i], &r, &err) != 1 || !r.early ||
		    !live_state(r.state)) {
			state_node_clear(&r);
			continue;
		}
		if (st & NODE_STATE_POWERING_UP) {
			;   /* ResumeProgram's request follows from the same pass: it ends the watch */
		} else if (!(st & NODE_STATE_POWERED_DOWN)) {
			r.early = false;
			snprintf(why, sizeof(why), "launched at job %ld's allocation: its slurmd registered; Slurm has it now",
				 r.job);
			node_life_apply(c->names[i], &r, LE_EARLY_TAKEN, why);
		} else if (base == NODE_STATE_IDLE && !(st & NODE_STATE_COMPLETING)) {
			enum node_state was = r.state;

			r.early = false;
			snprintf(why, sizeof(why), "launched at job %ld's allocation; the job left it before Slurm resumed it: instance reclaimed",
				 r.job);
			node_life_apply(c->names[i], &r, LE_EARLY_RECLAIMED, why);
			/* an admitted slurmd may register meanwhile: Slurm powers it down again */
			if (was == NS_ADMITTED)
				slurm_node(c->names[i], NULL, NODE_STATE_POWER_DOWN, NULL);
		}
		state_node_clear(&r);
	}
}

static void early_check(void)
{
	static const enum node_state live[] = { NS_REQUESTED, NS_LAUNCHING, NS_BOOTING, NS_ADMITTED };
	static double last;
	burst_err_t err;
	struct scall *c;
	size_t s, i;

	if (early_busy || now() - last < EARLY_CHECK_S)
		return;
	last = now();
	c = sc_new("early launches", w_node_states, t_early);
	for (s = 0; s < sizeof(live) / sizeof(live[0]); s++) {
		/* only the early ones: not every live node's record every second */
		char **names = state_nodes_early(A.db, live[s], &err);

		for (i = 0; names && names[i]; i++)
			sc_add_node(c, names[i]);
		state_names_free(names);
	}
	sc_submit_states(c, &early_busy);
}

/* ---- jobs held by the prolog ---- */

static void w_load_jobs(struct scall *c)
{
	c->rc = slurm_load_jobs((time_t)c->state, &c->msg, SHOW_ALL);
	c->err = c->rc == SLURM_SUCCESS ? 0 : burst_slurm_errno();
	if (c->rc != SLURM_SUCCESS)
		c->msg = NULL;
}

static bool refused_busy;
static time_t refused_last_update;

static void t_refused_jobs(struct scall *c)
{
	job_info_msg_t *msg = c->msg;
	uint32_t i;

	refused_busy = false;
	if (c->rc != SLURM_SUCCESS || !msg)
		return;   /* SLURM_NO_CHANGE_IN_DATA, or slurmctld away: next time */
	refused_last_update = msg->last_update;
	cost_jobs(msg);
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		const char *cm = j->admin_comment;
		const struct wire_note *n;
		struct wire_notes notes;
		struct node_rec r;
		burst_err_t err;

		if (!cm || (j->job_state & JOB_STATE_BASE) != JOB_PENDING || j->priority != 0)
			continue;
		wire_notes_decode(cm, &notes);
		if ((n = wire_notes_find(&notes, WIRE_NOTE_JOB_REFUSED))) {
			/* the job's own doing (its contract does not allow the node's
			 * node set): it stays held; the node, drained by Slurm for the
			 * failed prolog, is healthy and goes back to work */
			char held[1600], *note;
			INFO("job %u refused by %s for itself (%s): left held; %s is resumed, not failed", j->job_id, n->node,
			     cm, n->node);
			snprintf(held, sizeof(held), "job refused on %s: %.1000s", n->node, n->text);
			note = wire_note_encode(WIRE_NOTE_HELD, NULL, held);
			update_job(j->job_id, note, false, NULL);
			free(note);
			if (node_find(n->node))
				slurm_node(n->node, NULL, NODE_RESUME, NULL);
			wire_notes_free(&notes);
			continue;
		}
		if (!(n = wire_notes_find(&notes, WIRE_NOTE_REFUSED))) {
			wire_notes_free(&notes);
			continue;
		}
		INFO("job %u was held because %s refused it (%s): releasing it", j->job_id, n->node, cm);
		/* the comment first (the worker keeps the order): the next reading
		 * does not take it for a refusal again */
		{
			char *note = wire_note_encode(WIRE_NOTE_RELEASED, NULL,
						      "after a refusal on a node that was not admitted");
			update_job(j->job_id, note, false, NULL);
			free(note);
		}
		release_job(j->job_id, NULL);
		memset(&r, 0, sizeof(r));
		if (node_find(n->node) && state_node_get(A.db, n->node, &r, &err) == 1 &&
		    r.state != NS_POWERED_DOWN && r.state != NS_TERMINATING) {
			char why[700];
			snprintf(why, sizeof(why), "job prolog refused job %u: %.600s", j->job_id, cm);
			node_life_apply(n->node, &r, LE_PROLOG_REFUSED, why);
		}
		wire_notes_free(&notes);
		state_node_clear(&r);
	}
}

/*
 * Jobs that the SPANK job prolog held because their node was not admitted
 * (admin comment "burst: refused on NODE: why"): not the user's fault, so
 * they are released, and the node goes through the failure path. Slurm's
 * jobs are read (what changed since the last reading) every second on the
 * Slurm worker, one reading at a time.
 */
static void release_refused_jobs(void)
{
	static double last_check;
	struct scall *c;

	if (refused_busy || now() - last_check < 1.0)
		return;
	last_check = now();
	c = sc_new("load_jobs", w_load_jobs, t_refused_jobs);
	c->state = (uint32_t)refused_last_update;
	refused_busy = true;
	sc_submit(c);
}

/* ---- jobs on a node ---- */

/*
 * The running (or suspended) jobs on each of a set of nodes, from one
 * reading of Slurm's jobs. Many nodes lost at once (a spot reclaim of a
 * fleet, a reconciler round finding a region gone) each ask: one
 * slurm_load_jobs and one expansion of each job's node list answer all the
 * requests of a turn of the loop (slurm_jobs_send, at the end of each
 * tick), where a reading per node cost slurmctld a whole job table each and
 * the agent every job's host list each (quadratic). Requests made while a
 * reading is out wait for the next one.
 */
static struct jobs_req *jq;      /* requests not sent yet */
static size_t njq;
static bool jq_out;              /* a reading is queued or running */

static void w_jobs_on(struct scall *c)
{
	job_info_msg_t *msg = NULL;
	struct htab want = HTAB_INIT;
	uint32_t i;
	size_t k;

	c->rc = slurm_load_jobs((time_t)0, &msg, SHOW_ALL);
	if (c->rc != SLURM_SUCCESS) {
		c->err = burst_slurm_errno();
		return;
	}
	/* node -> its first request (+1: a NULL value is not told apart) */
	for (k = 0; k < c->nreqs; k++)
		if (!htab_has(&want, c->reqs[k].node, NULL))
			htab_put(&want, c->reqs[k].node, (void *)(uintptr_t)(k + 1));
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		struct hostlist hl = { NULL, 0, 0 };
		burst_err_t err;
		uint32_t st = j->job_state & JOB_STATE_BASE;
		size_t h;

		if ((st != JOB_RUNNING && st != JOB_SUSPENDED) || !j->nodes ||
		    hostlist_expand(j->nodes, &hl, 1 << 20, &err) < 0)
			continue;
		for (h = 0; h < hl.n; h++) {
			void *v;
			struct jobs_req *q;
			if (!htab_has(&want, hl.names[h], &v))
				continue;
			q = &c->reqs[(uintptr_t)v - 1];
			/* a node listed twice in one job's list counts the job once */
			if (q->n && q->ids[q->n - 1] == j->job_id)
				continue;
			q->ids = xrealloc(q->ids, (q->n + 1) * sizeof(*q->ids));
			q->ids[q->n++] = j->job_id;
		}
		hostlist_free(&hl);
	}
	/* a node asked about twice: each request gets the jobs */
	for (k = 0; k < c->nreqs; k++) {
		struct jobs_req *first = &c->reqs[(uintptr_t)htab_get(&want, c->reqs[k].node) - 1];
		if (first != &c->reqs[k] && first->n) {
			c->reqs[k].ids = xmalloc(first->n * sizeof(*first->ids));
			memcpy(c->reqs[k].ids, first->ids, first->n * sizeof(*first->ids));
			c->reqs[k].n = first->n;
		}
	}
	htab_free(&want);
	slurm_free_job_info_msg(msg);
}

static void jobs_send(void)
{
	/* answered by jobs_batch_end, from sc_done */
	struct scall *c = sc_new("load_jobs", w_jobs_on, NULL);

	c->reqs = jq;
	c->nreqs = njq;
	jq = NULL;
	njq = 0;
	jq_out = true;
	sc_submit(c);
}

static void slurm_jobs_send(void)
{
	if (njq && !jq_out)
		jobs_send();
}

/* Stopping: the requests not sent are answered as not run. */
static void jobs_let_go(void)
{
	while (njq) {
		struct jobs_req q = jq[--njq];
		q.cb(q.arg, false, NULL, 0);
		free(q.node);
	}
	free(jq);
	jq = NULL;
}

/* A reading is over (ran), or let go: each of its requests is answered;
 * those made meanwhile wait for the next slurm_jobs_send (none once
 * stopping). */
static void jobs_batch_end(struct scall *c, bool ran)
{
	size_t k;

	if (ran && c->nreqs > 1)
		INFO("the jobs on %zu nodes (%s, ...) from one reading of Slurm's jobs (%.3f s)", c->nreqs,
		     c->reqs[0].node, c->secs);
	if (ran && c->rc != SLURM_SUCCESS)
		ERR("cannot read Slurm's jobs (for the jobs on %zu node%s, %s%s): %s", c->nreqs,
		    c->nreqs == 1 ? "" : "s", c->reqs[0].node, c->nreqs > 1 ? ", ..." : "",
		    slurm_strerror(c->err));
	for (k = 0; k < c->nreqs; k++) {
		struct jobs_req *q = &c->reqs[k];
		q->cb(q->arg, ran, ran ? q->ids : NULL, ran ? q->n : 0);
		free(q->node);
		free(q->ids);
	}
	free(c->reqs);
	c->reqs = NULL;
	c->nreqs = 0;
	jq_out = false;
	if (!ran)
		jobs_let_go();
}

void jobs_on(const char *node, void (*then)(void *arg, bool ran, const uint32_t *ids, size_t n), void *arg)
{
	jq = xrealloc(jq, (njq + 1) * sizeof(*jq));
	jq[njq].node = xstrdup(node);
	jq[njq].cb = then;
	jq[njq].arg = arg;
	jq[njq].ids = NULL;
	jq[njq].n = 0;
	njq++;
}

/* ---- jobs requeued from lost nodes ---- */

static void w_lost_jobs(struct scall *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		job_info_msg_t *m = NULL;
		struct sjob *s = &c->jobs[i];
		if (slurm_load_job(&m, s->id, SHOW_ALL) == SLURM_SUCCESS && m->record_count) {
			s->found = true;
			s->state = m->job_array[0].job_state;
			s->priority = m->job_array[0].priority;
		} else
			/* no such job (any more): over */
			s->gone = m ? true : burst_slurm_errno() == ESLURM_INVALID_JOB_ID;
		slurm_free_job_info_msg(m);
	}
}

static bool lost_busy;

static void t_lost_jobs(struct scall *c)
{
	size_t i, k;

	lost_busy = false;
	for (k = 0; k < c->n; k++) {
		const struct sjob *s = &c->jobs[k];
		struct lost_job *lj = NULL;
		bool done = false;

		for (i = 0; i < nlost_jobs && !lj; i++)
			if (lost_jobs[i].id == s->id)
				lj = &lost_jobs[i];
		if (!lj)
			continue;
		if (s->found) {
			uint32_t st = s->state & JOB_STATE_BASE;
			if (st != JOB_PENDING)
				/* not requeued yet, or started again, or over */
				done = lj->pending || (st != JOB_RUNNING && st != JOB_SUSPENDED);
			else if (!(s->state & JOB_COMPLETING)) {
				lj->pending = true;
				if (s->priority == 0 && !lj->released) {
					char msg[200];
					snprintf(msg, sizeof(msg), "job %u was requeued held from a lost node: released", s->id);
					lj->released = true;
					release_job(s->id, msg);
				}
				if (now() >= lj->next) {
					char msg[200];
					snprintf(msg, sizeof(msg), "job %u was requeued from %s: it may start at once", s->id,
						 lj->noticed ? "a node under an interruption notice" : "a lost node");
					lj->next = now() + 5.0;
					update_job(s->id, NULL, true, lj->nudged ? NULL : msg);
					lj->nudged = true;
				}
			}
		} else
			done = s->gone;
		if (done)
			*lj = lost_jobs[--nlost_jobs];
	}
}

/*
 * Jobs requeued from a lost node: Slurm holds a requeued job back (its
 * BeginTime, two minutes ahead) in case it still runs on the node; the
 * node's instance is gone, so it cannot: let it go on at once, and release
 * it if it was requeued held. While it waits, slurmctld is asked again every
 * few seconds (an update of the job schedules it): the node it may need is
 * powered down after RejectCooldown, which by itself starts no scheduling
 * pass, and the periodic one comes only every minute. The jobs are read on
 * the Slurm worker, one round at a time.
 */
static void lost_jobs_go_on(void)
{
	static double last;
	struct scall *c;
	size_t i = 0;

	if (!nlost_jobs || lost_busy || now() - last < 1.0)
		return;
	last = now();
	c = sc_new("load_job", w_lost_jobs, t_lost_jobs);
	while (i < nlost_jobs) {
		if (now() > lost_jobs[i].until) {
			/* given up on */
			lost_jobs[i] = lost_jobs[--nlost_jobs];
			continue;
		}
		c->jobs = xrealloc(c->jobs, (c->n + 1) * sizeof(*c->jobs));
		memset(&c->jobs[c->n], 0, sizeof(*c->jobs));
		c->jobs[c->n++].id = lost_jobs[i++].id;
	}
	if (!c->n) {
		sc_done(&c->pj, false);
		return;
	}
	lost_busy = true;
	sc_submit(c);
}

/* ---- a job's contract ---- */

struct contract_entry {
	uint32_t job;
	bool known;
	bool read;               /* slurmctld answered with the job */
	char *contract;          /* NULL: none, why says */
	char account[128];
	char user[64];           /* the job's user */
	int assoc;               /* its account an association of its user: 1 yes, 0 no,
				  * -1 slurmdbd could not be asked, 2 not asked */
	char assoc_why[600];     /* -1: why */
	uint32_t time_limit;     /* minutes; 0: unlimited or not known */
	char why[600];
	double until;            /* known: kept until then */
};
static struct contract_entry *contracts;
static size_t ncontracts;

/* A list of slurmdb.h's, whose type 22.05 calls List and 24.11 list_t *. */
typedef __typeof__(((slurmdb_job_cond_t *)0)->step_list) dblist_t;

/*
 * Is account one of user's associations on this cluster (slurmdbd's
 * associations, as sacctmgr show assoc lists them)? 1 yes, 0 no, -1 when
 * slurmdbd cannot be asked (why). On the Slurm worker only; answers are
 * kept a minute (one job array's thousands of jobs ask once).
 */
#define ASSOC_KEEP_S 60.0
#define ASSOC_CACHE 256
static int dbd_is_association(const char *user, const char *account, char *why, size_t len)
{
	static struct { char user[64], account[128]; int yes; double at; } cache[ASSOC_CACHE];
	static size_t ncache, next;
	slurmdb_assoc_cond_t cond;
	dblist_t got;
	uint16_t flags = 0;
	void *db;
	size_t i;
	int yes;

	for (i = 0; i < ncache; i++)
		if (!strcmp(cache[i].user, user) && !strcmp(cache[i].account, account) &&
		    mono() - cache[i].at < ASSOC_KEEP_S)
			return cache[i].yes;
	errno = 0;
	if (!(db = slurmdb_connection_get(&flags))) {
		snprintf(why, len, "cannot reach slurmdbd: %s", slurm_strerror(errno ? errno : SLURM_ERROR));
		return -1;
	}
	memset(&cond, 0, sizeof(cond));
	cond.acct_list = slurm_list_create(free);
	slurm_list_append(cond.acct_list, xstrdup(account));
	cond.user_list = slurm_list_create(free);
	slurm_list_append(cond.user_list, xstrdup(user));
	cond.cluster_list = slurm_list_create(free);
	slurm_list_append(cond.cluster_list, xstrdup(cluster_name));
	errno = 0;
	got = slurmdb_associations_get(db, &cond);
	if (!got) {
		snprintf(why, len, "slurmdbd did not list the associations: %s", slurm_strerror(errno ? errno : SLURM_ERROR));
		yes = -1;
	} else {
		yes = slurm_list_count(got) > 0;
		slurm_list_destroy(got);
	}
	slurm_list_destroy(cond.acct_list);
	slurm_list_destroy(cond.user_list);
	slurm_list_destroy(cond.cluster_list);
	slurmdb_connection_close(&db);
	if (yes >= 0) {
		i = ncache < ASSOC_CACHE ? ncache++ : next++ % ASSOC_CACHE;
		snprintf(cache[i].user, sizeof(cache[i].user), "%s", user);
		snprintf(cache[i].account, sizeof(cache[i].account), "%s", account);
		cache[i].yes = yes;
		cache[i].at = mono();
	}
	return yes;
}

static void w_contract(struct scall *c)
{
	job_info_msg_t *msg = NULL;
	const struct wire_note *n;
	struct wire_notes notes;
	const char *cm;

	if (slurm_load_job(&msg, c->job, SHOW_ALL) != SLURM_SUCCESS) {
		snprintf(c->out, sizeof(c->out), "cannot read the job from slurmctld: %s", slurm_strerror(burst_slurm_errno()));
		c->rc = -1;
		return;
	}
	if (!msg->record_count) {
		snprintf(c->out, sizeof(c->out), "slurmctld has no such job");
		c->rc = -1;
	} else {
		const slurm_job_info_t *j = &msg->job_array[0];
		/* for the budgets: whose it is and how long it may run */
		c->state = 1;
		c->reason = xstrdup(j->account ? j->account : "");
		c->n = j->time_limit == INFINITE || j->time_limit == NO_VAL ? 0 : j->time_limit;
		if (j->user_name && *j->user_name)
			snprintf(c->user, sizeof(c->user), "%s", j->user_name);
		else {
			struct passwd pw, *pp = NULL;
			char buf[1024];
			if (getpwuid_r(j->user_id, &pw, buf, sizeof(buf), &pp) == 0 && pp)
				snprintf(c->user, sizeof(c->user), "%s", pw.pw_name);
			else
				snprintf(c->user, sizeof(c->user), "%u", j->user_id);
		}
		/* a job's account is its user's word unless slurmctld enforces
		 * associations: then checked here, against slurmdbd (Budget=
		 * Account=, BudgetAccountTrust=unenforced) */
		c->assoc = 2;
		if (c->check_assoc && j->account && *j->account)
			c->assoc = dbd_is_association(c->user, j->account, c->assoc_why, sizeof(c->assoc_why));
		cm = msg->job_array[0].admin_comment;
		wire_notes_decode(cm, &notes);
		if ((n = wire_notes_find(&notes, WIRE_NOTE_CONTRACT)) && *n->text)
			/* the contract note alone, not the notes the agent adds
			 * beside it ("burst: cost=..."), so that a job whose
			 * contract is read again (requeued, relaunched) gets the
			 * contract alone */
			c->text = xstrdup(n->text);
		else {
			char *e = str_escape_ctl(cm ? cm : "none: not submitted with --cloud-contract");
			snprintf(c->out, sizeof(c->out), "no contract in its admin comment (%s%.200s%s)", cm ? "\"" : "", e,
				 cm ? "\"" : "");
			free(e);
		}
		wire_notes_free(&notes);
	}
	slurm_free_job_info_msg(msg);
}

static void t_contract(struct scall *c)
{
	size_t i;

	for (i = 0; i < ncontracts; i++)
		if (contracts[i].job == c->job && !contracts[i].known) {
			contracts[i].known = true;
			contracts[i].contract = c->text;
			c->text = NULL;
			snprintf(contracts[i].why, sizeof(contracts[i].why), "%s", c->out);
			contracts[i].read = c->state == 1;
			snprintf(contracts[i].account, sizeof(contracts[i].account), "%s", c->reason ? c->reason : "");
			snprintf(contracts[i].user, sizeof(contracts[i].user), "%s", c->user);
			contracts[i].assoc = c->state == 1 ? c->assoc : -1;
			if (contracts[i].assoc < 0)
				snprintf(contracts[i].assoc_why, sizeof(contracts[i].assoc_why), "%s",
					 c->state == 1 ? c->assoc_why : "slurmctld did not give the job");
			contracts[i].time_limit = (uint32_t)c->n;
			/* a reading that failed (slurmctld or slurmdbd away) is not kept long */
			contracts[i].until = now() + (c->rc < 0 || contracts[i].assoc < 0 ? CONTRACT_RETRY_S : CONTRACT_KEEP_S);
			break;
		}
}

/*
 * The contract job was submitted with. job_submit.lua records it in the
 * job's admin comment ("burst: contract=" and the contract's name, or its
 * expression for an inline one), which only Slurm's administrators and
 * job_submit.lua can set: a job's owner cannot change it (unlike the job's
 * comment or --extra). Read by job id on every Slurm release: 22.05's
 * resume file has nothing else, and later ones' "extra" is the user's.
 * Read on the Slurm worker: 0 while it is being read (asked for now if it
 * was not yet: ask again later); 1 once read, with *contract (a new string)
 * or NULL and why saying why not (slurmctld does not answer, no such job,
 * not a contract job).
 */
int slurm_job_contract(uint32_t job, char **contract, char *why, size_t len)
{
	struct scall *c;
	size_t i = 0;

	*contract = NULL;
	while (i < ncontracts) {
		struct contract_entry *e = &contracts[i];
		if (e->known && now() >= e->until) {
			free(e->contract);
			*e = contracts[--ncontracts];
			continue;
		}
		if (e->job == job) {
			if (!e->known)
				return 0;
			if (e->contract)
				*contract = xstrdup(e->contract);
			else
				snprintf(why, len, "%s", e->why);
			return 1;
		}
		i++;
	}
	contracts = xrealloc(contracts, (ncontracts + 1) * sizeof(*contracts));
	memset(&contracts[ncontracts], 0, sizeof(*contracts));
	contracts[ncontracts++].job = job;
	c = sc_new("load_job", w_contract, t_contract);
	c->job = job;
	c->check_assoc = A.account_check;
	sc_submit(c);
	return 0;
}

int slurm_job_account_ok(uint32_t job, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < ncontracts; i++) {
		struct contract_entry *e = &contracts[i];
		if (e->job != job || !e->known)
			continue;
		if (e->read && e->assoc == 2 && e->account[0] && A.account_check) {
			/* read before the check was asked for (a reload added a budget
			 * by account): read again */
			e->until = 0;
			snprintf(why, len, "job %u's account is read again, to check it against slurmdbd", job);
			return -1;
		}
		if (!e->read) {
			snprintf(why, len, "job %u could not be read from slurmctld (%s): its account is not known yet",
				 job, e->why);
			return -1;
		}
		if (e->assoc == 0) {
			char *a = str_escape_ctl(e->account), *u = str_escape_ctl(e->user);
			snprintf(why, len, "job %u's account %s is not an association of its user %s in slurmdbd "
				 "(Slurm does not enforce associations here, and a budget counts accounts: "
				 "BudgetAccountTrust=unenforced); held until an administrator releases it", job, a, u);
			free(a);
			free(u);
			return 0;
		}
		if (e->assoc < 0) {
			snprintf(why, len, "job %u's account cannot be checked against slurmdbd's associations: %s",
				 job, e->assoc_why);
			return -1;
		}
		return 1;
	}
	snprintf(why, len, "job %u has not been read from slurmctld yet", job);
	return -1;
}

bool slurm_job_meta(uint32_t job, char *account, size_t alen, uint32_t *time_limit)
{
	size_t i;

	for (i = 0; i < ncontracts; i++)
		if (contracts[i].job == job && contracts[i].known && contracts[i].read) {
			snprintf(account, alen, "%s", contracts[i].account);
			*time_limit = contracts[i].time_limit;
			return true;
		}
	return false;
}

/* ---- notes on jobs: the cost when it ended, a hold for a budget ---- */


#define DBD_TRIES 20              /* slurmctld's end of a job reaches slurmdbd in a moment */
#define DBD_RETRY_US 250000

/* The job's accounting record, to be modified: found, and closed (its end
 * written: slurmctld writes the admin comment it has when it closes it, over
 * ours). 1 closed, 0 not (yet), -1 error (errno). */
static int dbd_job_closed(void *db, slurmdb_job_cond_t *cond)
{
	dblist_t jobs = slurmdb_jobs_get(db, cond);
	slurmdb_job_rec_t *r;
	int closed = 0;

	if (!jobs)
		return -1;
	while ((r = slurm_list_pop(jobs))) {
		if (r->end)
			closed = 1;
		slurmdb_destroy_job_rec(r);
	}
	slurm_list_destroy(jobs);
	return closed;
}

/* The job's accounting record (what sacct shows) gets text as its admin
 * comment, through slurmdbd as 'sacctmgr modify job' does it but without
 * sacctmgr: 22.05's lowercases the value it is given, and both turn quotes
 * into backquotes (slurmdbd puts the value between quotes as it is: so do we
 * here). slurmdbd lets root, its SlurmUser and users whose AdminLevel is
 * Operator or Admin do it. 0, or -1 with why in err. */
static int dbd_admin_comment(uint32_t job, const char *text, char *err, size_t errlen)
{
	slurmdb_job_cond_t cond;
	slurmdb_job_rec_t rec;
	slurm_selected_step_t *step;
	dblist_t done = NULL;
	uint16_t flags = 0;
	void *db;
	char *t = xstrdup(text), *q;
	int rc = -1, i, closed = 0;

	for (q = t; *q; q++)
		if (*q == '\'' || *q == '"' || *q == '\\')
			*q = '`';
	errno = 0;
	if (!(db = slurmdb_connection_get(&flags))) {
		snprintf(err, errlen, "cannot reach slurmdbd: %s", slurm_strerror(errno ? errno : SLURM_ERROR));
		free(t);
		return -1;
	}
	memset(&cond, 0, sizeof(cond));
	cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
	cond.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE | JOBCOND_FLAG_NO_STEP;
	cond.cluster_list = slurm_list_create(free);
	slurm_list_append(cond.cluster_list, xstrdup(cluster_name));
	cond.step_list = slurm_list_create(free);
	step = xcalloc(1, sizeof(*step));
	step->array_task_id = NO_VAL;
	step->het_job_offset = NO_VAL;
	step->step_id.job_id = job;
	step->step_id.step_id = NO_VAL;
	step->step_id.step_het_comp = NO_VAL;
	slurm_list_append(cond.step_list, step);
	for (i = 0; i < DBD_TRIES && (closed = dbd_job_closed(db, &cond)) == 0; i++)
		usleep(DBD_RETRY_US);
	if (closed < 0) {
		snprintf(err, errlen, "cannot read its accounting record: %s", slurm_strerror(errno ? errno : SLURM_ERROR));
		goto out;
	}
	if (!closed) {
		snprintf(err, errlen, "slurmdbd has no ended record of it after %.0f s", DBD_TRIES * DBD_RETRY_US / 1e6);
		goto out;
	}
	memset(&rec, 0, sizeof(rec));
	rec.derived_ec = NO_VAL;   /* (unset: only the admin comment changes) */
	rec.admin_comment = t;
	errno = 0;
	done = slurmdb_job_modify(db, &cond, &rec);
	if (!done)
		snprintf(err, errlen, "slurmdbd refused it: %s%s", slurm_strerror(errno ? errno : SLURM_ERROR),
			 errno == ESLURM_ACCESS_DENIED ? " (the agent's user needs AdminLevel=Operator in slurmdbd: "
							 "sacctmgr modify user NAME set AdminLevel=Operator)" : "");
	else if (!slurm_list_count(done))
		snprintf(err, errlen, "slurmdbd has no record of it");
	else if (slurmdb_connection_commit(db, 1) != SLURM_SUCCESS)
		snprintf(err, errlen, "slurmdbd did not commit it: %s", slurm_strerror(errno ? errno : SLURM_ERROR));
	else
		rc = 0;
out:
	if (done)
		slurm_list_destroy(done);
	slurm_list_destroy(cond.cluster_list);
	slurm_list_destroy(cond.step_list);
	slurmdb_connection_close(&db);
	free(t);
	return rc;
}

static void w_admin_note(struct scall *c)
{
	job_info_msg_t *msg = NULL;
	job_desc_msg_t upd;
	char *text;

	c->rc = slurm_load_job(&msg, c->job, SHOW_ALL);
	if (c->rc != SLURM_SUCCESS || !msg->record_count) {
		c->err = c->rc != SLURM_SUCCESS ? burst_slurm_errno() : ESLURM_INVALID_JOB_ID;
		c->rc = -1;
		slurm_free_job_info_msg(msg);
		return;
	}
	text = wire_notes_merge(msg->job_array[0].admin_comment, c->text);
	slurm_free_job_info_msg(msg);
	slurm_init_job_desc_msg(&upd);
	upd.job_id = c->job;
	upd.admin_comment = text;
	c->rc = slurm_update_job(&upd);
	c->err = c->rc == SLURM_SUCCESS ? 0 : burst_slurm_errno();
	if (c->rc != SLURM_SUCCESS && c->err == ESLURM_JOB_FINISHED && c->begin_now && accounting_dbd) {
		/* slurmctld takes no update of an ended job: its accounting
		 * record (what sacct shows) still takes an admin comment */
		c->rc = dbd_admin_comment(c->job, text, c->out, sizeof(c->out));
		c->state = 2;   /* said: to slurmdbd */
	}
	free(text);
}

static void t_admin_note(struct scall *c)
{
	/* written where it could be: in slurmctld's job, in its accounting
	 * record, or (no slurmdbd) nowhere but the log */
	bool ok = c->state == 2 ? c->rc == 0 : c->rc == SLURM_SUCCESS || c->err == ESLURM_JOB_FINISHED;

	if (c->cb)
		c->cb(c->arg, true, ok);
	if (c->state == 2 && c->rc != 0)
		ERR("job %u: cannot add \"%s\" to its accounting record (slurmdbd): %s", c->job, c->text, c->out);
	else if (c->state == 2)
		INFO("job %u: its accounting record's admin comment (slurmdbd): %s", c->job, c->text);
	else if (c->rc != SLURM_SUCCESS && c->err == ESLURM_JOB_FINISHED && c->begin_now)
		INFO("job %u ended: %s; slurmctld takes no update of an ended job and it keeps no accounting "
		     "database here (AccountingStorageType): burstctl cost has it", c->job, c->text);
	else if (c->rc != SLURM_SUCCESS && c->err == ESLURM_JOB_FINISHED)
		INFO("job %u ended before its running cost note (%s) was written: its final note follows", c->job, c->text);
	else if (c->rc != SLURM_SUCCESS)
		ERR("job %u: cannot add \"%s\" to its admin comment: %s", c->job, c->text, slurm_strerror(c->err));
	else if (c->begin_now)
		INFO("job %u: admin comment: %s", c->job, c->text);
}

void slurm_job_admin_note(uint32_t job, const char *note, bool final,
			  void (*done)(void *arg, bool ran, bool ok), void *arg)
{
	struct scall *c = sc_new("update_job", w_admin_note, t_admin_note);

	c->cb = done;
	c->arg = arg;
	c->job = job;
	c->text = xstrdup(note);
	c->begin_now = final;   /* (here: the final note, after the job ended) */
	sc_submit(c);
}

#define HOLD_TRIES 50             /* a requeue takes slurmctld a moment: tried every 0.2 s */
#define HOLD_RETRY_S 0.2

/* One try: held (rc 0), not pending yet (state 3: tried again from the
 * loop, the worker free meanwhile), or failed. */
static void w_hold(struct scall *c)
{
	job_info_msg_t *msg = NULL;
	job_desc_msg_t upd;
	char *text;
	uint32_t st;

	c->rc = -1;
	if (slurm_load_job(&msg, c->job, SHOW_ALL) != SLURM_SUCCESS || !msg->record_count) {
		snprintf(c->out, sizeof(c->out), "cannot read it: %s", slurm_strerror(burst_slurm_errno()));
		slurm_free_job_info_msg(msg);
		return;
	}
	st = msg->job_array[0].job_state;
	if ((st & JOB_STATE_BASE) != JOB_PENDING) {
		slurm_free_job_info_msg(msg);
		if ((st & JOB_STATE_BASE) > JOB_SUSPENDED)
			snprintf(c->out, sizeof(c->out), "it ended meanwhile");
		else
			c->state = 3;
		return;
	}
	text = wire_notes_merge(msg->job_array[0].comment, c->text);
	slurm_free_job_info_msg(msg);
	slurm_init_job_desc_msg(&upd);
	upd.job_id = c->job;
	upd.priority = 0;
	upd.comment = text;
	c->rc = slurm_update_job(&upd);
	if (c->rc != SLURM_SUCCESS)
		snprintf(c->out, sizeof(c->out), "%s", slurm_strerror(burst_slurm_errno()));
	free(text);
}

/* Holds waiting for their job to be requeued (pending), tried again then. */
struct hold_retry {
	uint32_t job;
	char *note;
	unsigned tries;
	double at;               /* mono() */
};
static struct hold_retry *hold_retries;
static size_t nhold_retries;

static void hold_submit(uint32_t job, const char *note, unsigned tries);

static void t_hold(struct scall *c)
{
	if (c->state == 3 && c->n + 1 < HOLD_TRIES) {
		hold_retries = xrealloc(hold_retries, (nhold_retries + 1) * sizeof(*hold_retries));
		hold_retries[nhold_retries].job = c->job;
		hold_retries[nhold_retries].note = xstrdup(c->text);
		hold_retries[nhold_retries].tries = (unsigned)c->n + 1;
		hold_retries[nhold_retries].at = mono() + HOLD_RETRY_S;
		nhold_retries++;
	} else if (c->state == 3)
		ERR("job %u: cannot hold it (%s): not pending after %.0f s", c->job, c->text, HOLD_TRIES * HOLD_RETRY_S);
	else if (c->rc != SLURM_SUCCESS)
		ERR("job %u: cannot hold it (%s): %s", c->job, c->text, c->out);
	else
		INFO("job %u held: %s", c->job, c->text);
}

static void hold_submit(uint32_t job, const char *note, unsigned tries)
{
	struct scall *c = sc_new("hold_job", w_hold, t_hold);

	c->job = job;
	c->text = xstrdup(note);
	c->n = tries;
	sc_submit(c);
}

void slurm_job_hold(uint32_t job, const char *note)
{
	hold_submit(job, note, 0);
}

static void slurm_holds_retry(void)
{
	size_t i = 0;
	double t = mono();

	while (i < nhold_retries) {
		struct hold_retry h = hold_retries[i];
		if (h.at > t) {
			i++;
			continue;
		}
		hold_retries[i] = hold_retries[--nhold_retries];
		hold_submit(h.job, h.note, h.tries);
		free(h.note);
	}
}

static void w_budget_release(struct scall *c)
{
	job_info_msg_t *msg = NULL;
	struct wire_notes notes;
	bool held;
	const slurm_job_info_t *j;
	job_desc_msg_t upd;
	char *text;
	char idbuf[32], out[256];
	char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };

	c->state = 0;   /* 0: not held by the agent (any more): nothing to do */
	if (slurm_load_job(&msg, c->job, SHOW_ALL) != SLURM_SUCCESS || !msg->record_count) {
		slurm_free_job_info_msg(msg);
		return;
	}
	j = &msg->job_array[0];
	wire_notes_decode(j->comment, &notes);
	held = wire_notes_find(&notes, WIRE_NOTE_BUDGET) != NULL;
	wire_notes_free(&notes);
	if ((j->job_state & JOB_STATE_BASE) != JOB_PENDING || j->priority != 0 || !held) {
		slurm_free_job_info_msg(msg);
		return;
	}
	text = wire_notes_put(j->comment, WIRE_NOTE_BUDGET, NULL, NULL);
	slurm_free_job_info_msg(msg);
	slurm_init_job_desc_msg(&upd);
	upd.job_id = c->job;
	upd.comment = text;
	/* Slurm gave the job it requeued from the node the agent failed a
	 * BeginTime two minutes on; it never ran there: it may start now */
	upd.begin_time = time(NULL);
	c->state = 1;
	if (slurm_update_job(&upd) != SLURM_SUCCESS)
		snprintf(c->out, sizeof(c->out), "cannot clear its comment: %s", slurm_strerror(burst_slurm_errno()));
	free(text);
	snprintf(idbuf, sizeof(idbuf), "%u", c->job);
	c->rc = proc_run(argv, out, sizeof(out), c->out, sizeof(c->out));
}

static void t_budget_release(struct scall *c)
{
	if (c->state == 1 && c->rc != 0)
		ERR("job %u: scontrol release failed: %s", c->job, c->out);
	else if (c->state == 1)
		INFO("job %u released: %s", c->job, c->text);
	if (c->cb)
		c->cb(c->arg, true, c->state == 0 || c->rc == 0);
}

void slurm_job_budget_release(uint32_t job, const char *why, void (*then)(void *arg, bool ran, bool ok), void *arg)
{
	struct scall *c = sc_new("release_job", w_budget_release, t_budget_release);

	c->job = job;
	c->text = xstrdup(why);
	c->cb = then;
	c->arg = arg;
	sc_submit(c);
}

void slurm_adapter_free(void)
{
	size_t i;

	for (i = 0; i < nhold_retries; i++)
		free(hold_retries[i].note);
	free(hold_retries);
	hold_retries = NULL;
	nhold_retries = 0;
	for (i = 0; i < ncontracts; i++)
		free(contracts[i].contract);
	free(contracts);
	contracts = NULL;
	ncontracts = 0;
	free(lost_jobs);
	lost_jobs = NULL;
	nlost_jobs = 0;
}

void slurm_timers(void)
{
	timer_add(TP_ACT, 0, registration_check, "slurmd registrations");
	timer_add(TP_ACT, 0, early_check, "nodes launched at allocation");
	timer_add(TP_ACT, 0, release_refused_jobs, "jobs held after a refusal");
	timer_add(TP_ACT, 0, slurm_holds_retry, "holds tried again");
	timer_add(TP_RECONCILE, 0, lost_jobs_go_on, "jobs requeued from lost nodes");
	/* last: the jobs on every node lost or noticed this turn, in one reading */
	timer_add(TP_LAST, 0, slurm_jobs_send, "jobs on nodes asked of slurmctld");
}
