/*
 * burst-agent: provider calls through each provider's worker (pworker.h).
 * Most wait for the call's end (after what the worker has queued before
 * it); terminations do not wait (their outcome comes back to a function of
 * the caller's), nor do launches (agent_launch.c) and listings
 * (agent_reconcile.c).
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "crash.h"
#include "strutil.h"

enum call_kind { CALL_EXISTS, CALL_CONSOLE, CALL_ENDED, CALL_LIST };

struct call {
	struct pjob j;
	enum call_kind kind;
	const char *node, *instance;
	char *buf, *where;
	size_t len, wlen;
	struct prov_list *list;  /* CALL_LIST: filled */
	enum prov_class cls;
	burst_err_t err;
	int rc;
	double t0, t1;           /* mono(): the driver call's start and end, on the worker */
};

static const char *const call_op[] = { [CALL_EXISTS] = "exists", [CALL_CONSOLE] = "console", [CALL_ENDED] = "ended",
				       [CALL_LIST] = "list" };

static void call_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct call *c = (struct call *)j;

	c->cls = PROV_OK;
	burst_err_clear(&c->err);
	c->t0 = mono();
	switch (c->kind) {
	case CALL_EXISTS:
		crash_point(CP_EXISTS_BEFORE);
		c->rc = ops->exists(drv, c->node, c->instance);
		crash_point(CP_EXISTS_AFTER);
		break;
	case CALL_CONSOLE:
		crash_point(CP_CONSOLE_BEFORE);
		c->rc = ops->console(drv, c->node, c->instance, c->buf, c->len, c->where, c->wlen, &c->cls, &c->err);
		crash_point(CP_CONSOLE_AFTER);
		break;
	case CALL_ENDED:
		crash_point(CP_ENDED_BEFORE);
		c->rc = ops->ended(drv, c->node, c->instance);
		crash_point(CP_ENDED_AFTER);
		break;
	case CALL_LIST:
		crash_point(CP_LIST_BEFORE);
		c->rc = ops->list(drv, c->list, &c->cls, &c->err);
		crash_point(CP_LIST_AFTER);
		break;
	}
	c->t1 = mono();
}

static void call_done(struct pjob *j, bool ran)
{
	(void)j;
	(void)ran;   /* a waited-for call: its caller has it */
}

static int call(struct aprov *p, struct call *c, enum prov_class *cls, burst_err_t *err)
{
	c->j.run = call_run;
	c->j.done = call_done;
	pworker_call(p->w, &c->j);
	/* a driver's text comes back with no control character (provider.h) */
	burst_err_escape_ctl(&c->err);
	/* counted here, on the loop; a failure without a class (exists, ended:
	 * cannot tell) is transient */
	metric_provider_call(p->cfg->name, call_op[c->kind], c->t1 - c->t0,
			     c->rc < 0 ? (int)(c->cls != PROV_OK ? c->cls : PROV_TRANSIENT) : 0);
	if (cls)
		*cls = c->cls;
	if (err)
		*err = c->err;
	return c->rc;
}

int prov_exists(struct aprov *p, const char *node, const char *instance)
{
	struct call c = { .kind = CALL_EXISTS, .node = node, .instance = instance };
	return call(p, &c, NULL, NULL);
}

int prov_console(struct aprov *p, const char *node, const char *instance, char *buf, size_t len,
		 char *where, size_t wlen, enum prov_class *cls, burst_err_t *err)
{
	struct call c = { .kind = CALL_CONSOLE, .node = node, .instance = instance, .buf = buf, .len = len,
			  .where = where, .wlen = wlen };
	return call(p, &c, cls, err);
}

int prov_list_now(struct aprov *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	struct call c = { .kind = CALL_LIST, .list = out };
	if (!p->ops->list) {
		if (cls)
			*cls = PROV_PERMANENT;
		if (err)
			burst_err_set(err, "provider %s cannot list its instances", p->cfg->name);
		return -1;
	}
	return call(p, &c, cls, err);
}

int prov_ended(struct aprov *p, const char *node, const char *instance)
{
	struct call c = { .kind = CALL_ENDED, .node = node, .instance = instance };
	return call(p, &c, NULL, NULL);
}

/* ---- terminate, not waited for ---- */

struct term_job {
	struct pjob j;
	struct term_result t;
	char *provider, *node, *instance, *note;
	bool mark;
	term_then then;
};

static void term_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct term_job *t = (struct term_job *)j;
	burst_err_t err;

	burst_err_clear(&err);
	t->t.cls = PROV_OK;
	double t0 = mono();

	lease_check();   /* on the worker too: the call may have waited behind others */
	crash_point(CP_TERMINATE_BEFORE);
	t->t.rc = ops->terminate(drv, t->node, t->instance, &t->t.cls, &err);
	crash_point(CP_TERMINATE_AFTER);
	t->t.seconds = mono() - t0;
	burst_err_escape_ctl(&err);
	t->t.err = xstrdup(err.msg);
}

static void term_done(struct pjob *j, bool ran)
{
	struct term_job *t = (struct term_job *)j;

	if (t->mark) {
		struct bnode *ni = node_find(t->node);
		if (ni)
			ni->busy = false;
	}
	if (ran) {
		/* every terminate counted here, whoever asked for it */
		metric_provider_call(t->provider, "terminate", t->t.seconds,
				     t->t.rc < 0 ? (int)(t->t.cls != PROV_OK ? t->t.cls : PROV_TRANSIENT) : 0);
		t->t.provider = t->provider;
		t->t.node = t->node;
		t->t.instance = t->instance;
		t->t.note = t->note;
		if (t->t.rc == 0)
			reconcile_terminated(t->provider, t->instance);
		t->then(&t->t);
	}
	free((char *)t->t.err);
	free(t->provider);
	free(t->node);
	free(t->instance);
	free(t->note);
	free(t);
}

void prov_terminate_async(struct aprov *p, const char *node, const char *instance, const char *note,
			  bool mark, term_then then)
{
	struct term_job *t = xcalloc(1, sizeof(*t));

	t->provider = xstrdup(p->cfg->name);
	t->node = xstrdup(node ? node : "");
	t->instance = xstrdup(instance);
	t->note = note ? xstrdup(note) : NULL;
	t->mark = mark;
	t->then = then;
	t->j.run = term_run;
	t->j.done = term_done;
	if (mark) {
		struct bnode *ni = node_find(t->node);
		if (ni)
			ni->busy = true;
	}
	pworker_submit(p->w, &t->j);
}

bool prov_any_pending(void)
{
	size_t i;

	for (i = 0; i < A.nprovs; i++)
		if (pworker_pending(A.provs[i].w))
			return true;
	return false;
}
