/*
 * burst-agent: spot interruption notices. burst-node's interruption watch
 * (burst-node/interrupt.c) reports on the join port that its
 * instance's metadata announced a termination, stop or hibernation, about
 * two minutes ahead: {"op":"notice","cred":MUNGE}, the credential root's
 * (the cluster's munge key, as for a join report) and its payload
 * {"node","instance","action","time"}. Only a notice from the instance
 * the agent holds for a booting or admitted node is acted on
 * (join_verify.h, notice_verify), once per instance:
 *
 *  - the node's type and region cool down (the cooldowns of capacity
 *    errors, InterruptionCooldown= long, doubled on repeats up to an hour
 *    or that setting): no node is launched into them meanwhile;
 *  - an admitted node is drained at once with the reason
 *    "burst: spot interruption notice: ACTION at TIME (instance ID)", and
 *    the jobs running on it are requeued (and let go on at once, like
 *    those of a lost node) while the instance still runs; the instance
 *    itself is left to EC2, and the reconciler finds it gone;
 *  - a booting node, whose job never ran there, fails as at any other
 *    boot failure: DOWN with that reason, its job let go on, its instance
 *    terminated, powered down after RejectCooldown.
 *
 * The answer is {"ok":true}, or {"ok":false,"reason":...}: signed, to a
 * watch that began with a hello (agent_join.c, join_answer), as its node
 * believes nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "agent_int.h"
#include "node_life.h"
#include "join_verify.h"
#include "strutil.h"
#include "wire.h"

static void reply_notice(const struct join_peer *p, bool ok, const char *reason)
{
	struct wire_notice_answer a = { ok, (char *)reason };
	char *text = wire_notice_answer_encode(&a);

	join_answer(p, text, NULL);
	free(text);
}

/* The jobs running on a node under a notice: each requeued. */
static void notice_jobs(void *arg, bool ran, const uint32_t *jobs, size_t n)
{
	char *node = arg;
	size_t i;

	if (ran && !n)
		INFO("%s: no job runs there to requeue", node);
	for (i = 0; ran && i < n; i++)
		slurm_job_requeue(jobs[i], node, "spot interruption notice");
	free(node);
}

static void notice_why(const struct notice_report *rep, char *why, size_t len)
{
	snprintf(why, len, "spot interruption notice: %s at %s (instance %.128s)", rep->action, rep->time,
		 rep->instance);
}

/* Act on a verified notice for node (r: its record, booting or admitted). */
static void act(const char *node, struct node_rec *r, const struct notice_report *rep)
{
	char why[600], key[512];
	int base = A.cfg->interruption_cooldown;
	double until;
	burst_err_t err;

	notice_why(rep, why, sizeof(why));
	cooldown_key(r->provider ? r->provider : "?", r->instance_type ? r->instance_type : "?", r->region, key,
		     sizeof(key));
	until = state_cooldown_hit(A.db, key, base, base > 3600 ? base : 3600, why, &err);
	if (until < 0)
		ERR("%s: cannot record the cooldown of %s: %s", node, key, err.msg);
	else
		INFO("%s: %s: no launch into %s for %.0f s", node, why, key, until - now());
	metric_notice(r->provider, r->instance_type, r->region, rep->action);
	if (r->state == NS_BOOTING) {
		/* its job never ran there: it goes on elsewhere */
		node_life_apply(node, r, LE_NOTICE, why);
		return;
	}
	free(r->last_error);
	r->last_error = xstrdup(why);
	if (node_life_apply(node, r, LE_NOTICE, why) != 1)
		return;
	{
		char reason[700];
		snprintf(reason, sizeof(reason), "burst: %s", why);
		/* drained first, then its jobs read and requeued: the Slurm
		 * worker keeps the order, so nothing new starts there between */
		slurm_node(node, NULL, NODE_STATE_DRAIN, reason);
	}
	jobs_on(node, notice_jobs, xstrdup(node));
}

void notice_malformed(struct join_peer *p, size_t got)
{
	ERR_LIMITED("notice: malformed notices", "notice: malformed (%zu bytes: no cred), refused", got);
	reply_notice(p, false, "malformed notice");
}

void handle_notice(struct join_peer *p, const char *payload, uid_t uid, const char *failed)
{
	char why[1200];
	const char *bad;
	struct wire_notice_claim pay = { NULL, NULL, NULL, NULL };
	struct notice_report rep;
	struct join_expect held;
	struct node_rec r;
	struct bnode *bn;
	burst_err_t err;
	bool known = false;

	memset(&r, 0, sizeof(r));
	memset(&rep, 0, sizeof(rep));
	rep.uid = uid;
	if (!payload) {
		ERR_LIMITED("notice: notices without a valid credential", "notice: %s; refused", failed);
		reply_notice(p, false, failed);
		return;
	}
	notice_claims(payload, &rep, &pay);
	if (p->authed && (!rep.node || !rep.instance || strcmp(rep.node, p->hello.node) ||
			  strcmp(rep.instance, p->hello.instance))) {
		bad = "the notice is not of the node and instance its hello named";
		goto refused;
	}
	if (rep.node && state_node_get(A.db, rep.node, &r, &err) == 1) {
		memset(&held, 0, sizeof(held));
		held.node = r.name;
		held.state = r.state;
		held.instance = r.instance;
		known = true;
	}
	bad = notice_verify(&rep, 0, known ? &held : NULL);
refused:
	if (bad) {
		/* the claims are the report's word: escaped before the log */
		char *en = str_escape_ctl(rep.node ? rep.node : "?"), *ei = str_escape_ctl(rep.instance ? rep.instance : "?");
		ERR("notice: %s (instance %s, uid %d): refused: %s", en, ei, (int)rep.uid, bad);
		free(en);
		free(ei);
		reply_notice(p, false, bad);
		goto out;
	}
	bn = node_find(rep.node);
	notice_why(&rep, why, sizeof(why));
	if ((bn && bn->noticed && !strcmp(bn->noticed, rep.instance)) ||
	    (r.state == NS_ADMITTED && r.last_error && !strcmp(r.last_error, why))) {
		/* sent again (no answer reached the node; the agent restarted
		 * meanwhile: the node's record has it): acted on already, and
		 * the cooldown is not doubled for it */
		INFO("%s: interruption notice of instance %s again: acted on already", rep.node, rep.instance);
		reply_notice(p, true, NULL);
		goto out;
	}
	if (bn) {
		free(bn->noticed);
		bn->noticed = xstrdup(rep.instance);
	}
	act(rep.node, &r, &rep);
	reply_notice(p, true, NULL);
out:
	wire_notice_claim_free(&pay);
	state_node_clear(&r);
}
