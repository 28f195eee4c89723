/*
 * burst-agent: node life (node_life.h). Each node's transitions along the
 * edges of node_life_table.c (doc/design.md §7), written to SQLite before
 * the action they lead to, batched in one transaction where many go
 * together; the failure paths; and the rules of each tick. The only
 * caller of state_transition (tests/cli/node_life.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "agent_int.h"
#include "crash.h"
#include "node_life.h"
#include "strutil.h"
#include "timer.h"

#define RELAUNCH_MAX 3           /* relaunches in a row of a node whose slurmd never came up */
#define RELAUNCH_BACKOFF_S 5.0   /* before the first; doubled for each next one */

/* log lines of a batch's transitions, said once it commits, and the target
 * state of each, for its crash point once durable */
static char **pending;
static enum node_state *pending_to;
static size_t npending;

/* 16 random bytes in hex: from getrandom (the kernel's urandom source,
 * without an open and a close of /dev/urandom for each of a burst's
 * thousands of tokens). */
void random_token(char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char r[16];
	size_t i;
	ssize_t got = 0;

	while (got < (ssize_t)sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - (size_t)got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ERR("cannot read random bytes (getrandom): %s", strerror(errno));
			abort();
		}
		got += n;
	}
	for (i = 0; i < sizeof(r) && 2 * i + 2 < len; i++) {
		buf[2 * i] = digits[r[i] >> 4];
		buf[2 * i + 1] = digits[r[i] & 0xf];
		buf[2 * i + 2] = '\0';
	}
	explicit_bzero(r, sizeof(r));
}

static int transition(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
		      const char *detail)
{
	burst_err_t err;
	struct node_rec before;
	int rc, had;

	/* launched at allocation: watched (early_check) while it is requested,
	 * launching, booting or admitted; terminating only on its way to being
	 * launched again for a job's allocation (want_resume); any other state
	 * ends that */
	if (to == NS_POWERED_DOWN || to == NS_REJECTED || to == NS_LOST ||
	    (to == NS_TERMINATING && !r->want_resume))
		r->early = false;
	/* (its state, instance and provider: all cost_transition reads) */
	had = state_node_get_brief(A.db, node, &before, &err);
	crash_point(CP_STATE(to, false));
	rc = state_transition(A.db, node, from, r, to, detail, &err);
	if (rc > 0 && had == 1)
		cost_transition(node, &before, r, to);
	state_node_clear(&before);
	if (rc < 0)
		ERR("%s: %s", node, err.msg);
	else if (rc > 0 && state_in_batch(A.db)) {
		/* the log says a transition once it is durable */
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "%s: %s -> %s%s%s", node, from != NS_ANY ? node_state_name(from) : "*", node_state_name(to),
			detail ? ": " : "", detail ? detail : "");
		pending = xrealloc(pending, (npending + 1) * sizeof(char *));
		pending_to = xrealloc(pending_to, (npending + 1) * sizeof(*pending_to));
		pending_to[npending] = to;
		pending[npending++] = sb_take(&sb);
	} else if (rc > 0) {
		INFO("%s: %s -> %s%s%s", node, from != NS_ANY ? node_state_name(from) : "*", node_state_name(to),
		     detail ? ": " : "", detail ? detail : "");
		crash_point(CP_STATE(to, true));
	}
	return rc;
}

/* What a failed node's transition leads to in Slurm (fail_node_hold),
 * held until its batch is durable. */
struct fail_after {
	char *node, *reason, *hold_note;
	long long job;
	enum node_state from;
};
static struct fail_after *fa;
static size_t nfa;

/* Slurm told of a failed node: DOWN with its reason, and its job. */
static void fail_slurm(const char *node, enum node_state from, long long job, const char *reason,
		       const char *hold_note)
{
	slurm_node(node, NULL, NODE_STATE_DOWN, reason);
	if (job > 0 && hold_note)
		slurm_job_hold((uint32_t)job, hold_note);
	else if (job > 0 && from != NS_ADMITTED) {
		/*
		 * Slurm requeues the job now but holds it back for two minutes
		 * (its BeginTime), in case the job still runs on the node. It
		 * never ran here (the node never started slurmd): let it go on.
		 */
		slurm_job_begin_now((uint32_t)job, node);
	}
}

void node_life_begin(void)
{
	burst_err_t err;

	if (state_begin(A.db, &err) < 0)
		ERR("%s (the transitions that follow are written one by one)", err.msg);
}

void node_life_begin_unsynced(void)
{
	burst_err_t err;

	if (state_begin_unsynced(A.db, &err) < 0)
		ERR("%s (the transitions that follow are written one by one)", err.msg);
}

/* What a batch's transitions lead to, held until it is durable. */
struct batch_after {
	char **lines;            /* their log lines */
	enum node_state *to;     /* their target states (crash points) */
	size_t n;
	struct fail_after *fa;   /* the failed nodes' Slurm side */
	size_t nfa;
};

/* The open batch's (and a fresh start for the next). */
static struct batch_after batch_take(void)
{
	struct batch_after b = { pending, pending_to, npending, fa, nfa };

	pending = NULL;
	pending_to = NULL;
	npending = 0;
	fa = NULL;
	nfa = 0;
	return b;
}

/* Once the batch is durable (written: ok; else it did not happen): what it leads to. */
static void batch_after_run(struct batch_after *b, bool written)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (written)
			INFO("%s", b->lines[i]);
		free(b->lines[i]);
	}
	if (written)
		for (i = 0; i < b->n; i++)
			crash_point(CP_STATE(b->to[i], true));
	free(b->lines);
	free(b->to);
	/* the failed nodes' Slurm side, now that their transitions are durable
	 * (none when they were not written: the nodes are as before) */
	for (i = 0; i < b->nfa; i++) {
		if (written)
			fail_slurm(b->fa[i].node, b->fa[i].from, b->fa[i].job, b->fa[i].reason, b->fa[i].hold_note);
		free(b->fa[i].node);
		free(b->fa[i].reason);
		free(b->fa[i].hold_note);
	}
	free(b->fa);
}

int node_life_commit(void)
{
	struct batch_after b;
	burst_err_t err;
	int rc = 0;

	if (!state_in_batch(A.db))
		return 0;
	if (state_commit(A.db, &err) < 0) {
		ERR("%s: %zu transition%s not written", err.msg, npending, npending == 1 ? "" : "s");
		rc = -1;
	}
	b = batch_take();
	batch_after_run(&b, rc == 0);
	return rc;
}

/* ---- batches made durable off the loop ---- */

static struct pworker *syncer;

struct sync_job {
	struct pjob j;
	struct batch_after after;
	char *path;
	bool synced;
	char err[300];
	void (*then)(void *arg, bool durable);
	void *arg;
};

static void sync_run(struct pjob *pj, const struct provider_ops *ops, struct provider *drv)
{
	struct sync_job *j = (struct sync_job *)pj;
	burst_err_t err;

	(void)ops;
	(void)drv;
	hold_point(HP_STATE_SYNC);
	j->synced = state_sync(j->path, &err) == 0;
	if (!j->synced)
		snprintf(j->err, sizeof(j->err), "%.290s", err.msg);
}

static void sync_done(struct pjob *pj, bool ran)
{
	struct sync_job *j = (struct sync_job *)pj;

	if (ran && !j->synced)
		ERR("%s: %zu transition%s written, not known to be durable: what they lead to is done, "
		    "the nodes waiting on them are not answered (they ask again)", j->err, j->after.n,
		    j->after.n == 1 ? "" : "s");
	/* written (and at a stop, not synced yet): the agent acts on what its
	 * state holds, as it would after a restart */
	batch_after_run(&j->after, true);
	j->then(j->arg, ran && j->synced);
	free(j->path);
	free(j);
}

int node_life_start(void)
{
	burst_err_t err;

	syncer = pworker_start("state-sync", NULL, NULL, &err);
	if (!syncer) {
		ERR("node life: %s", err.msg);
		return -1;
	}
	return 0;
}

void node_life_commit_then(void (*then)(void *arg, bool durable), void *arg)
{
	struct sync_job *j;
	burst_err_t err;

	if (!state_in_batch(A.db)) {
		/* (no batch: each transition was durable when written) */
		then(arg, true);
		return;
	}
	if (state_commit(A.db, &err) < 0) {
		struct batch_after b;
		ERR("%s: %zu transition%s not written", err.msg, npending, npending == 1 ? "" : "s");
		b = batch_take();
		batch_after_run(&b, false);
		then(arg, false);
		return;
	}
	j = xcalloc(1, sizeof(*j));
	j->j.run = sync_run;
	j->j.done = sync_done;
	j->after = batch_take();
	j->path = xstrdup(state_path(A.db));
	j->then = then;
	j->arg = arg;
	pworker_submit(syncer, &j->j);
}


void admission_path(const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/admission.env", A.nodes_dir, node);
}

/*
 * The node failed (launch, join, admission, prolog): Slurm is told now, so
 * that its job is requeued at once (DOWN with a reason starting "burst:"),
 * the instance is terminated, and the node is kept out until its cooldown
 * is over; then it is powered down again (see cooldowns()), so that no node
 * stays DOWN for good. With hold_note, the node's job (if any) is held with
 * hold_note in its comment instead of let go on (a budget: agent_cost.c).
 */
static int fail_node(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
		     const char *why, const char *hold_note)
{
	char reason[512];
	int rc;

	free(r->last_error);
	r->last_error = xstrdup(why);
	r->cooldown_until = now() + A.cfg->reject_cooldown;
	r->want_resume = false;
	if ((rc = transition(node, from, r, to, why)) != 1)
		return rc;
	snprintf(reason, sizeof(reason), "burst: %.480s", why);
	if (state_in_batch(A.db)) {
		/* Slurm hears of it once the batch is durable (batch_commit):
		 * one sync for a batch's failed nodes, not one each */
		fa = xrealloc(fa, (nfa + 1) * sizeof(*fa));
		fa[nfa].node = xstrdup(node);
		fa[nfa].reason = xstrdup(reason);
		fa[nfa].hold_note = hold_note ? xstrdup(hold_note) : NULL;
		fa[nfa].job = r->job;
		fa[nfa].from = from;
		nfa++;
		return rc;
	}
	fail_slurm(node, from, r->job, reason, hold_note);
	return rc;
}

/* why, the last console line and where to read the console, for a reason. */
static void with_console(char *out, size_t len, const char *node, const char *why, const char *last,
			 const char *where)
{
	if (last[0])
		snprintf(out, len, "%.200s; console: \"%.120s\" (burstctl events --node %s; %.160s)", why, last,
			 node, where);
	else
		snprintf(out, len, "%.200s; console: burstctl events --node %s; %.160s", why, node, where);
}

/* An instance that failed to boot: the last line of its console in the
 * reason, the node failed. */
static int boot_failed(const char *node, const struct life_edge *e, struct node_rec *r, const char *why,
		       const char *last, const char *where)
{
	char full[700];

	with_console(full, sizeof(full), node, why, last, where);
	return fail_node(node, e->from, r, e->to, full, NULL);
}

/* An admitted node whose slurmd did not come up: launched again, at most
 * RELAUNCH_MAX times in a row, each after a longer wait; then failed. */
static int slurmd_failed(const char *node, const struct life_edge *e, struct node_rec *r, const char *why,
			 const char *last, const char *where)
{
	char full[900];

	r->failures++;
	if (r->failures > RELAUNCH_MAX) {
		char gave_up[400];
		snprintf(gave_up, sizeof(gave_up), "%.250s; %d instances in a row: not launched again",
			 why, r->failures);
		with_console(full, sizeof(full), node, gave_up, last, where);
		r->failures = 0;
		return fail_node(node, e->from, r, e->to, full, NULL);
	}
	{
		double wait = RELAUNCH_BACKOFF_S;
		int k;
		for (k = 1; k < r->failures; k++)
			wait *= 2;
		r->want_resume = true;
		r->retry_at = now() + wait;
		snprintf(full, sizeof(full), "%.300s: launching it again in %.0f s (%d of at most %d)%s%.150s%s",
			 why, wait, r->failures, RELAUNCH_MAX, last[0] ? "; console: \"" : "", last,
			 last[0] ? "\"" : "");
		return transition(node, e->from, r, e->to, full);
	}
}

/* A failure that waits for its instance's console (LX_BOOT_FAIL, LX_SLURMD_FAIL). */
struct console_wait {
	const struct life_edge *e;
	char *why, *instance;
	int attempt;
};

static void console_read_then(const char *node, bool ran, const char *last, const char *where, void *arg)
{
	struct console_wait *w = arg;
	struct bnode *ni = node_find(node);
	struct node_rec r;
	burst_err_t err;

	if (ni)
		ni->failing = false;
	memset(&r, 0, sizeof(r));
	/* as things are now: the node may have moved on while its console was read */
	if (ran && state_node_get(A.db, node, &r, &err) == 1 && r.state == w->e->from && r.attempt == w->attempt &&
	    !strcmp(r.instance ? r.instance : "", w->instance ? w->instance : "")) {
		if (w->e->effect == LX_BOOT_FAIL)
			boot_failed(node, w->e, &r, w->why, last, where);
		else
			slurmd_failed(node, w->e, &r, w->why, last, where);
	}
	state_node_clear(&r);
	free(w->why);
	free(w->instance);
	free(w);
}

/* The end of the instance's console into the event log, read off the
 * loop; the node fails (or is launched again) once it is read. */
static int after_console(const char *node, const struct life_edge *e, const struct node_rec *r, const char *why)
{
	struct bnode *ni = node_find(node);
	struct console_wait *w;

	if (ni && ni->failing)
		return 0;   /* its console is being read already: it fails then */
	w = xcalloc(1, sizeof(*w));
	w->e = e;
	w->why = xstrdup(why ? why : "");
	w->instance = r->instance ? xstrdup(r->instance) : NULL;
	w->attempt = r->attempt;
	if (ni)
		ni->failing = true;
	boot_console(node, r, console_read_then, w);
	return 0;
}

int node_life_apply_held(const char *node, struct node_rec *r, enum life_event ev, const char *why,
			 const char *hold_note)
{
	const struct life_edge *e = node_life_edge(r->state, ev);

	if (!e) {
		ERR("%s: a bug: event %s in state %s, which has no such edge (doc/design.md §7): refused; %s",
		    node, life_event_name(ev) ? life_event_name(ev) : "?", node_state_name(r->state),
		    why ? why : "");
		metric_life_refused(life_event_name(ev) ? life_event_name(ev) : "?", node_state_name(r->state));
		return -1;
	}
	switch (e->effect) {
	case LX_FAIL:
		return fail_node(node, e->from, r, e->to, why, hold_note);
	case LX_BOOT_FAIL:
	case LX_SLURMD_FAIL:
		return after_console(node, e, r, why);
	default:
		return transition(node, e->from, r, e->to, why);
	}
}

int node_life_apply(const char *node, struct node_rec *r, enum life_event ev, const char *why)
{
	return node_life_apply_held(node, r, ev, why, NULL);
}

static void node_life_rejected(void)
{
	burst_err_t err;
	char **names;
	size_t i;

	names = state_nodes_in(A.db, NS_REJECTED, &err);
	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		if (state_node_get(A.db, names[i], &r, &err) == 1 && r.state == NS_REJECTED)
			node_life_apply(names[i], &r, LE_TERMINATE_REJECTED, "terminate the rejected instance");
		state_node_clear(&r);
	}
	state_names_free(names);
}

static void node_life_boot_timeouts(void)
{
	burst_err_t err;
	char **names;
	size_t i;

	/* only those booting longer than BootTimeout */
	names = state_nodes_due(A.db, NS_BOOTING, STATE_SINCE, now() - A.cfg->boot_timeout, &err);
	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		if (state_node_get(A.db, names[i], &r, &err) == 1 && r.state == NS_BOOTING &&
		    now() - r.since > A.cfg->boot_timeout) {
			char why[300];
			snprintf(why, sizeof(why), "instance %s did not join within BootTimeout=%d s",
				 r.instance ? r.instance : "?", A.cfg->boot_timeout);
			node_life_apply(names[i], &r, LE_BOOT_TIMEOUT, why);
		}
		state_node_clear(&r);
	}
	state_names_free(names);
}

void node_life_stop(void)
{
	/* one in an fsync is left to the exit */
	if (syncer && pworker_stop(syncer, false) == 0)
		syncer = NULL;
}

void node_life_fini(void)
{
	for (size_t i = 0; i < npending; i++)
		free(pending[i]);
	free(pending);
	free(pending_to);
	pending = NULL;
	pending_to = NULL;
	npending = 0;
}

void node_life_timers(void)
{
	timer_add(TP_LIFE, 0, node_life_rejected, "rejected nodes' instances");
	timer_add(TP_CHECKS, 0, node_life_boot_timeouts, "BootTimeout");
}
