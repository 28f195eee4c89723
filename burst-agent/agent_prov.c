/*
 * burst-agent: provider calls through each provider's worker (pworker.h).
 * Only those of a restart's recovery wait for the call's end (exists,
 * list: before the loop serves anyone); the loop's own calls do not wait:
 * their outcome comes back to a function of the caller's (terminate,
 * console, ended here; launches in agent_launch.c, listings in
 * agent_reconcile.c).
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "crash.h"
#include "strutil.h"

enum call_kind { CALL_EXISTS, CALL_LIST };

struct call {
	struct pjob j;
	enum call_kind kind;
	const char *node, *instance;
	struct prov_list *list;  /* CALL_LIST: filled */
	enum prov_class cls;
	burst_err_t err;
	int rc;
	double t0, t1;           /* mono(): the driver call's start and end, on the worker */
};

static const char *const call_op[] = { [CALL_EXISTS] = "exists", [CALL_LIST] = "list" };

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

/* ---- console, not waited for ---- */

struct console_job {
	struct pjob j;
	char *provider, *node, *instance;
	struct console_result res;
	char buf[PROV_CONSOLE_BYTES], where[300], err[sizeof(((burst_err_t *)0)->msg)];
	double t0, t1;
	console_then then;
	void *arg;
};

static void console_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct console_job *c = (struct console_job *)j;
	burst_err_t err;

	burst_err_clear(&err);
	c->res.cls = PROV_OK;
	hold_point(HP_PROVIDER_CONSOLE);
	c->t0 = mono();
	crash_point(CP_CONSOLE_BEFORE);
	c->res.rc = ops->console(drv, c->node, c->instance, c->buf, sizeof(c->buf), c->where, sizeof(c->where),
				 &c->res.cls, &err);
	crash_point(CP_CONSOLE_AFTER);
	c->t1 = mono();
	snprintf(c->err, sizeof(c->err), "%s", err.msg);
}

static void console_done(struct pjob *j, bool ran)
{
	struct console_job *c = (struct console_job *)j;

	if (ran) {
		metric_provider_call(c->provider, "console", c->t1 - c->t0,
				     c->res.rc < 0 ? (int)(c->res.cls != PROV_OK ? c->res.cls : PROV_TRANSIENT) : 0);
		c->res.buf = c->buf;
		c->res.where = c->where;
		c->res.err = c->err;
	}
	c->then(c->arg, ran, &c->res);
	free(c->provider);
	free(c->node);
	free(c->instance);
	free(c);
}

void prov_console_async(struct aprov *p, const char *node, const char *instance, const char *where,
			console_then then, void *arg)
{
	struct console_job *c = xcalloc(1, sizeof(*c));

	c->provider = xstrdup(p->cfg->name);
	c->node = xstrdup(node);
	c->instance = xstrdup(instance);
	/* what the driver leaves as it is */
	snprintf(c->where, sizeof(c->where), "%s", where);
	c->then = then;
	c->arg = arg;
	c->j.run = console_run;
	c->j.done = console_done;
	pworker_submit(p->w, &c->j);
}

/* ---- ended, not waited for ---- */

struct ended_job {
	struct pjob j;
	char *provider;
	struct ended_ask *asks;
	size_t n;
	ended_then then;
};

static void ended_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct ended_job *e = (struct ended_job *)j;

	hold_point(HP_PROVIDER_ENDED);
	for (size_t i = 0; i < e->n; i++) {
		e->asks[i].t0 = mono();
		crash_point(CP_ENDED_BEFORE);
		e->asks[i].rc = ops->ended(drv, e->asks[i].node, e->asks[i].instance);
		crash_point(CP_ENDED_AFTER);
		e->asks[i].t1 = mono();
	}
}

static void ended_done(struct pjob *j, bool ran)
{
	struct ended_job *e = (struct ended_job *)j;

	if (ran)
		for (size_t i = 0; i < e->n; i++)
			/* a failure (cannot tell) is transient */
			metric_provider_call(e->provider, "ended", e->asks[i].t1 - e->asks[i].t0,
					     e->asks[i].rc < 0 ? (int)PROV_TRANSIENT : 0);
	e->then(e->provider, ran, e->asks, e->n);
	for (size_t i = 0; i < e->n; i++) {
		free(e->asks[i].node);
		free(e->asks[i].instance);
	}
	free(e->asks);
	free(e->provider);
	free(e);
}

void prov_ended_async(struct aprov *p, struct ended_ask *asks, size_t n, ended_then then)
{
	struct ended_job *e = xcalloc(1, sizeof(*e));

	e->provider = xstrdup(p->cfg->name);
	e->asks = asks;
	e->n = n;
	e->then = then;
	e->j.run = ended_run;
	e->j.done = ended_done;
	pworker_submit(p->w, &e->j);
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
