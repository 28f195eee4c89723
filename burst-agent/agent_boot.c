/*
 * burst-agent: instances that fail to boot. When an instance ends on its own
 * or misses BootTimeout, or its slurmd never comes up, the end of its
 * console (local: the node log; aws: GetConsoleOutput) goes into the event
 * log, one event "console" per line, and the node's DOWN reason says where
 * to read it (node_life.c: LX_BOOT_FAIL, LX_SLURMD_FAIL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "timer.h"
#include "node_life.h"
#include "strutil.h"

#define CONSOLE_LINES 15         /* of which the last lines go into the event log */

/* A console being read: for whom, and what is done with it. */
struct console_ask {
	char *node, *instance;
	boot_console_then then;
	void *arg;
};

/* res (a console read, or why not) into the event log; last gets its
 * last non-empty line ("" if none). */
static void console_lines(const char *node, const char *instance, const struct console_result *res,
			  char *last, size_t lastlen)
{
	char *lines[CONSOLE_LINES], *s, *save = NULL, *buf;
	burst_err_t err;
	size_t n = 0, i;

	last[0] = '\0';
	if (res->rc < 0) {
		char detail[600];
		snprintf(detail, sizeof(detail), "%s: cannot read its console (%s): %.400s", instance,
			 prov_class_name(res->cls), res->err);
		if (state_event(A.db, node, "console", detail, &err) < 0)
			ERR("%s: %s", node, err.msg);
		return;
	}
	buf = xstrdup(res->buf);
	/* the last CONSOLE_LINES non-empty lines, oldest first */
	for (s = strtok_r(buf, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		s[strcspn(s, "\r")] = '\0';
		if (!*s)
			continue;
		if (n == CONSOLE_LINES) {
			memmove(lines, lines + 1, (CONSOLE_LINES - 1) * sizeof(*lines));
			n--;
		}
		lines[n++] = s;
	}
	if (!n) {
		char detail[300];
		snprintf(detail, sizeof(detail), "%s: its console is empty", instance);
		if (state_event(A.db, node, "console", detail, &err) < 0)
			ERR("%s: %s", node, err.msg);
		free(buf);
		return;
	}
	/* what the instance wrote (escape sequences, a bell, bytes that are
	 * not UTF-8) is written out before it is stored or shown */
	{
		char *e = str_escape_ctl(lines[n - 1]);
		snprintf(last, lastlen, "%s", e);
		free(e);
	}
	for (i = 0; i < n; i++) {
		char detail[700], *e = str_escape_ctl(lines[i]);
		snprintf(detail, sizeof(detail), "%s: %.600s", instance, e);
		free(e);
		if (state_event(A.db, node, "console", detail, &err) < 0) {
			ERR("%s: %s", node, err.msg);
			break;
		}
	}
	INFO("%s: the last %zu line%s of %s are in the event log (burstctl events --node %s)", node, n,
	     n == 1 ? "" : "s", res->where, node);
	free(buf);
}

static void console_read(void *arg, bool ran, const struct console_result *res)
{
	struct console_ask *q = arg;
	char last[200] = "", where[300] = "";

	if (ran) {
		snprintf(where, sizeof(where), "%s", res->where);
		console_lines(q->node, q->instance, res, last, sizeof(last));
	}
	q->then(q->node, ran, last, where, q->arg);
	free(q->node);
	free(q->instance);
	free(q);
}

void boot_console(const char *node, const struct node_rec *r, boot_console_then then, void *arg)
{
	struct aprov *p = prov_by_name(r->provider);
	char where[300];
	struct console_ask *q;

	snprintf(where, sizeof(where), "the console of %s", r->instance ? r->instance : "the instance");
	if (!p || !p->ops->console || !r->instance) {
		then(node, true, "", where, arg);
		return;
	}
	q = xcalloc(1, sizeof(*q));
	q->node = xstrdup(node);
	q->instance = xstrdup(r->instance);
	q->then = then;
	q->arg = arg;
	prov_console_async(p, node, r->instance, where, console_read, q);
}

/* Which providers have an ended check in flight (by their place in A.provs). */
static bool *ended_asking;
static size_t nended_asking;

/* A provider's answers: each node whose instance ended, if it is still as it was asked. */
static void ended_answered(const char *provider, bool ran, const struct ended_ask *asks, size_t n)
{
	struct aprov *p = prov_by_name(provider);
	burst_err_t err;

	if (p && (size_t)(p - A.provs) < nended_asking)
		ended_asking[p - A.provs] = false;
	for (size_t i = 0; ran && i < n; i++) {
		struct bnode *ni = node_find(asks[i].node);
		struct node_rec r;
		char why[300];

		memset(&r, 0, sizeof(r));
		/* as things are now: the node may have moved on meanwhile */
		if (asks[i].rc != 1 || !ni || state_node_get(A.db, asks[i].node, &r, &err) != 1 || !r.instance ||
		    strcmp(r.instance, asks[i].instance) || (r.state != NS_BOOTING && r.state != NS_ADMITTED) ||
		    (r.state == NS_ADMITTED && ni->registered)) {
			state_node_clear(&r);
			continue;
		}
		if (r.state == NS_BOOTING)
			snprintf(why, sizeof(why), "instance %s ended before it joined", r.instance);
		else
			snprintf(why, sizeof(why), "instance %s ended after its admission: its slurmd did not start",
				 r.instance);
		node_life_apply(asks[i].node, &r, LE_INSTANCE_ENDED, why);
		state_node_clear(&r);
	}
}

/*
 * Instances that ended on their own: before joining (their boot failed) or
 * after their admission, before their slurmd registered (it could not
 * start). Asked of their providers once a second, on each one's worker (a
 * provider still answering the last round is not asked again).
 */
static void ended_check(void)
{
	static const enum node_state states[] = { NS_BOOTING, NS_ADMITTED };
	struct ended_ask **asks;
	size_t *nasks;
	burst_err_t err;
	size_t s, i;
	bool *may_end;

	/* the node sets whose providers can tell (local): the others' nodes
	 * (aws, openstack) are not read every second, thousands booting at
	 * once in a burst */
	may_end = xcalloc(A.cfg->nnodesets + 1, sizeof(*may_end));
	for (s = 0; s < A.cfg->nnodesets; s++) {
		const struct cfg_nodeset *ns = &A.cfg->nodesets[s];
		for (i = 0; i < A.nprovs && !may_end[s]; i++) {
			bool allowed = !ns->nproviders;
			size_t k;
			for (k = 0; k < ns->nproviders && !allowed; k++)
				allowed = !strcmp(ns->providers[k], A.provs[i].cfg->name);
			may_end[s] = allowed && A.provs[i].ops && A.provs[i].ops->ended;
		}
	}
	for (s = 0; s < A.cfg->nnodesets && !may_end[s]; s++)
		;
	if (s == A.cfg->nnodesets) {
		/* none: no listing either */
		free(may_end);
		return;
	}
	if (nended_asking != A.nprovs) {
		/* (a reload's new providers: none is in a call then) */
		free(ended_asking);
		ended_asking = xcalloc(A.nprovs + 1, sizeof(*ended_asking));
		nended_asking = A.nprovs;
	}
	asks = xcalloc(A.nprovs + 1, sizeof(*asks));
	nasks = xcalloc(A.nprovs + 1, sizeof(*nasks));
	for (s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		char **names = state_nodes_in(A.db, states[s], &err);

		for (i = 0; names && names[i]; i++) {
			struct bnode *ni = node_find(names[i]);
			/* zeroed: a node skipped before state_node_get is cleared too */
			struct node_rec r = { 0 };
			struct aprov *p;
			size_t k;

			memset(&r, 0, sizeof(r));   /* cleared below even when not read */
			if (!ni || ni->nodeset < 0 || !may_end[ni->nodeset] || (s == 1 && ni->registered) ||
			    state_node_get(A.db, names[i], &r, &err) != 1) {
				state_node_clear(&r);
				continue;
			}
			p = prov_by_name(r.provider);
			if (p && p->ops->ended && r.instance && r.state == states[s] && !ended_asking[p - A.provs]) {
				k = (size_t)(p - A.provs);
				asks[k] = xrealloc(asks[k], (nasks[k] + 1) * sizeof(**asks));
				memset(&asks[k][nasks[k]], 0, sizeof(**asks));
				asks[k][nasks[k]].node = xstrdup(names[i]);
				asks[k][nasks[k]].instance = xstrdup(r.instance);
				nasks[k]++;
			}
			state_node_clear(&r);
		}
		state_names_free(names);
	}
	for (i = 0; i < A.nprovs; i++)
		if (nasks[i]) {
			ended_asking[i] = true;
			prov_ended_async(&A.provs[i], asks[i], nasks[i], ended_answered);
		}
	free(asks);
	free(nasks);
	free(may_end);
}

void boot_fini(void)
{
	free(ended_asking);
	ended_asking = NULL;
	nended_asking = 0;
}

void boot_timers(void)
{
	timer_add(TP_CHECKS, 1.0, ended_check, "instances that ended");
}
