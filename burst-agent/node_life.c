/*
 * burst-agent: node life. Each node's transitions (doc/design.md §7) written to
 * SQLite before the action they lead to, batched in one transaction where
 * many go together, and the failure path.
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
#include "strutil.h"

/* the target state of each of A.pending, for its crash point once durable */
static enum node_state *pending_to;

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

int transition(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
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
		A.pending = xrealloc(A.pending, (A.npending + 1) * sizeof(char *));
		pending_to = xrealloc(pending_to, (A.npending + 1) * sizeof(*pending_to));
		pending_to[A.npending] = to;
		A.pending[A.npending++] = sb_take(&sb);
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

/*
 * The transitions of many nodes in one transaction (one sync), for a
 * spool request, a node set's launch intents and a launch's outcome.
 * Nothing a transition leads to may be done before batch_commit returns 0
 * (fail_node's DOWN is held until then); after -1 none of the batch's
 * transitions happened.
 */
void batch_begin(void)
{
	burst_err_t err;

	if (state_begin(A.db, &err) < 0)
		ERR("%s (the transitions that follow are written one by one)", err.msg);
}

int batch_commit(void)
{
	burst_err_t err;
	size_t i;
	int rc = 0;

	if (!state_in_batch(A.db))
		return 0;
	if (state_commit(A.db, &err) < 0) {
		ERR("%s: %zu transition%s not written", err.msg, A.npending, A.npending == 1 ? "" : "s");
		rc = -1;
	}
	for (i = 0; i < A.npending; i++) {
		if (!rc)
			INFO("%s", A.pending[i]);
		free(A.pending[i]);
	}
	if (!rc)
		for (i = 0; i < A.npending; i++)
			crash_point(CP_STATE(pending_to[i], true));
	free(A.pending);
	free(pending_to);
	A.pending = NULL;
	pending_to = NULL;
	A.npending = 0;
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
 * stays DOWN for good.
 */
void fail_node(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
		      const char *why)
{
	fail_node_hold(node, from, r, to, why, NULL);
}

void fail_node_hold(const char *node, enum node_state from, struct node_rec *r, enum node_state to,
		    const char *why, const char *hold_note)
{
	char reason[512];

	free(r->last_error);
	r->last_error = xstrdup(why);
	r->cooldown_until = now() + A.cfg->reject_cooldown;
	r->want_resume = false;
	if (transition(node, from, r, to, why) != 1)
		return;
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
		return;
	}
	fail_slurm(node, from, r->job, reason, hold_note);
}
