/*
 * burst-agent: provider calls through each provider's worker (pworker.h).
 * These wait for the call's end (after what the worker has queued before
 * it); launches do not wait (agent_launch.c).
 */
#include <string.h>

#include "agent_int.h"

enum call_kind { CALL_TERMINATE, CALL_EXISTS, CALL_LIST, CALL_CONSOLE, CALL_ENDED };

struct call {
	struct pjob j;
	enum call_kind kind;
	const char *node, *instance;
	char *buf, *where;
	size_t len, wlen;
	struct prov_list *list;
	enum prov_class cls;
	burst_err_t err;
	int rc;
	double t0, t1;           /* mono(): the driver call's start and end, on the worker */
};

static const char *const call_op[] = { "terminate", "exists", "list", "console", "ended" };

static void call_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct call *c = (struct call *)j;

	c->cls = PROV_OK;
	burst_err_clear(&c->err);
	c->t0 = mono();
	switch (c->kind) {
	case CALL_TERMINATE:
		c->rc = ops->terminate(drv, c->node, c->instance, &c->cls, &c->err);
		break;
	case CALL_EXISTS:
		c->rc = ops->exists(drv, c->node, c->instance);
		break;
	case CALL_LIST:
		c->rc = ops->list(drv, c->list, &c->cls, &c->err);
		break;
	case CALL_CONSOLE:
		c->rc = ops->console(drv, c->node, c->instance, c->buf, c->len, c->where, c->wlen, &c->cls, &c->err);
		break;
	case CALL_ENDED:
		c->rc = ops->ended(drv, c->node, c->instance);
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

int prov_terminate(struct aprov *p, const char *node, const char *instance, enum prov_class *cls,
		   burst_err_t *err)
{
	struct call c = { .kind = CALL_TERMINATE, .node = node, .instance = instance };
	return call(p, &c, cls, err);
}

int prov_exists(struct aprov *p, const char *node, const char *instance)
{
	struct call c = { .kind = CALL_EXISTS, .node = node, .instance = instance };
	return call(p, &c, NULL, NULL);
}

int prov_list(struct aprov *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	struct call c = { .kind = CALL_LIST, .list = out };
	return call(p, &c, cls, err);
}

int prov_console(struct aprov *p, const char *node, const char *instance, char *buf, size_t len,
		 char *where, size_t wlen, enum prov_class *cls, burst_err_t *err)
{
	struct call c = { .kind = CALL_CONSOLE, .node = node, .instance = instance, .buf = buf, .len = len,
			  .where = where, .wlen = wlen };
	return call(p, &c, cls, err);
}

int prov_ended(struct aprov *p, const char *node, const char *instance)
{
	struct call c = { .kind = CALL_ENDED, .node = node, .instance = instance };
	return call(p, &c, NULL, NULL);
}

bool prov_any_pending(void)
{
	size_t i;

	for (i = 0; i < A.nprovs; i++)
		if (pworker_pending(A.provs[i].w))
			return true;
	return false;
}
