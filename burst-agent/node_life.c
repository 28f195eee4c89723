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

int node_life_commit(void)
{
	burst_err_t err;
	size_t i;
	int rc = 0;

	if (!state_in_batch(A.db))
		return 0;
	if (state_commit(A.db, &err) < 0) {
		ERR("%s: %zu transition%s not written", err.msg, npending, npending == 1 ? "" : "s");
		rc = -1;
	}
	for (i = 0; i < npending; i++) {
		if (!rc)
			INFO("%s", pending[i]);
		free(pending[i]);
	}
	if (!rc)
		for (i = 0; i < npending; i++)
			crash_point(CP_STATE(pending_to[i], true));
	free(pending);
	free(pending_to);
	pending = NULL;
	pending_to = NULL;
	npending = 0;
	/* the failed nodes' Slurm side, now that their transitions are durable
	 * (none when they were not written: the nodes are as before) */
	for (i = 0; i < nfa; i++) {
		if (!rc)
			fail_slurm(fa[i].node, fa[i].from, fa[i].job, fa[i].reason, fa[i].hold_note);
		free(fa[i].node);
		free(fa[i].reason);
		free(fa[i].hold_note);
	}
	free(fa);
	fa = NULL;
	nfa = 0;
	return rc;
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

/* An instance that failed to boot: the end of its console into the event
 * log and its last line into the reason, then the node failed. */
static int boot_failed(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
		       const char *why)
{
	char last[200], where[300], full[700];

	boot_console_record(node, r, last, sizeof(last), where, sizeof(where));
	with_console(full, sizeof(full), node, why, last, where);
	return fail_node(node, from, r, to, full, NULL);
}

/* An admitted node whose slurmd did not come up: launched again, at most
 * RELAUNCH_MAX times in a row, each after a longer wait; then failed. */
static int slurmd_failed(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
			 const char *why)
{
	char last[200], where[300], full[900];

	boot_console_record(node, r, last, sizeof(last), where, sizeof(where));
	r->failures++;
	if (r->failures > RELAUNCH_MAX) {
		char gave_up[400];
		snprintf(gave_up, sizeof(gave_up), "%.250s; %d instances in a row: not launched again",
			 why, r->failures);
		with_console(full, sizeof(full), node, gave_up, last, where);
		r->failures = 0;
		return fail_node(node, from, r, to, full, NULL);
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
		return transition(node, from, r, to, full);
	}
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
		return boot_failed(node, e->from, r, e->to, why);
	case LX_SLURMD_FAIL:
		return slurmd_failed(node, e->from, r, e->to, why);
	default:
		return transition(node, e->from, r, e->to, why);
	}
}

int node_life_apply(const char *node, struct node_rec *r, enum life_event ev, const char *why)
{
	return node_life_apply_held(node, r, ev, why, NULL);
}

void node_life_rejected(void)
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

void node_life_boot_timeouts(void)
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
