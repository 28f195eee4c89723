/*
 * burst-agent: launches and terminations paced to each provider region's
 * rate limits (lib/core/ratelimit.h, doc/design.md "Rate limits").
 *
 * Each provider's region has the agent's model of its buckets (instances
 * and requests, launch and terminate; the provider's rates from burst.conf).
 * Launch intents of a region wait in its queue, in the order they came,
 * and are sent as soon as the buckets hold them: what the buckets hold now
 * goes at once, the rest on a later turn of the loop (nothing waits on the
 * loop). One launch per region is in flight at a time: when its answer
 * comes, the buckets are counted again from the moment the call started on
 * the provider's worker (a call that waited behind others reaches the cloud
 * later than the loop sent it, and the cloud's bucket fills meanwhile only
 * up to its size). A throttling answer empties the region's buckets: the
 * cloud's are empty, so are ours.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "strutil.h"

/* A request may reach the cloud up to this much sooner after the one before
 * it than the loop sent them apart (s): the buckets are read this much
 * earlier than now. */
#define PACE_SLACK 0.25

/* Launch intents that wait for tokens: nodes of one candidate. */
struct pace_wait {
	char **names;
	size_t n, off, cap;      /* names[off..n) still wait */
	char *key;               /* the candidate: type and node set */
};

struct pace_region {
	char *provider, *region;
	struct rate_limits spec;
	struct pace_sender launch;   /* the launch buckets, one request in flight */
	struct launch_pace term;
	struct pace_wait *q;
	size_t head, nq, qcap;
	size_t waiting;              /* instances in the queue */
	size_t planned;              /* picked for it in this round, not queued yet */
	unsigned throttled;          /* throttling answers */
};

static struct pace_region *R;
static size_t nR;

static struct pace_region *pace_of(const char *prov, const char *region)
{
	struct aprov *p;
	size_t i;
	double t = mono();

	if (!region)
		region = "";
	for (i = 0; i < nR; i++)
		if (!strcmp(R[i].provider, prov) && !strcmp(R[i].region, region))
			break;
	p = prov_by_name(prov);
	if (i == nR) {
		R = xrealloc(R, (nR + 1) * sizeof(*R));
		memset(&R[nR], 0, sizeof(R[nR]));
		R[nR].provider = xstrdup(prov);
		R[nR].region = xstrdup(region);
		if (p)
			R[nR].spec = p->cfg->rates;
		pace_sender_init(&R[nR].launch, &R[nR].spec.launch, &R[nR].spec.launch_calls, t);
		pace_init(&R[nR].term, &R[nR].spec.terminate, &R[nR].spec.terminate_calls, t);
		nR++;
	} else if (p && memcmp(&R[i].spec, &p->cfg->rates, sizeof(R[i].spec))) {
		/* burst.conf read again with other rates: the new sizes, the tokens kept */
		struct pace_region *r = &R[i];
		r->spec = p->cfg->rates;
		r->launch.cur.inst.size = r->launch.before.inst.size = r->spec.launch.size;
		r->launch.cur.inst.rate = r->launch.before.inst.rate = r->spec.launch.rate;
		r->launch.cur.calls.size = r->launch.before.calls.size = r->spec.launch_calls.size;
		r->launch.cur.calls.rate = r->launch.before.calls.rate = r->spec.launch_calls.rate;
		r->term.inst.size = r->spec.terminate.size;
		r->term.inst.rate = r->spec.terminate.rate;
		r->term.calls.size = r->spec.terminate_calls.size;
		r->term.calls.rate = r->spec.terminate_calls.rate;
	}
	return &R[i];
}

double pace_launch_eta(const char *prov, const char *region)
{
	struct pace_region *r = pace_of(prov, region);

	return pace_sender_eta(&r->launch, r->waiting + r->planned, mono(), PACE_SLACK);
}

void pace_plan(const char *prov, const char *region)
{
	pace_of(prov, region)->planned++;
}

void pace_round_end(void)
{
	size_t i;

	for (i = 0; i < nR; i++)
		R[i].planned = 0;
}

void pace_launch(char **names, size_t n, const char *prov, const char *region, const char *key)
{
	struct pace_region *r = pace_of(prov, region);
	struct pace_wait *w = r->nq > r->head ? &r->q[r->nq - 1] : NULL;
	size_t i;

	if (w && strcmp(w->key, key))
		w = NULL;
	for (i = 0; i < n; i++) {
		struct bnode *ni = node_find(names[i]);
		if (!ni || ni->paced)
			continue;
		/* a new entry only for a node that waits: an empty one at the
		 * head would stop the region's queue (pace_run sends nothing
		 * from it, and nothing after it) */
		if (!w) {
			if (r->head && r->head == r->nq)
				r->head = r->nq = 0;
			if (r->nq == r->qcap) {
				r->qcap = r->qcap ? 2 * r->qcap : 8;
				r->q = xrealloc(r->q, r->qcap * sizeof(*r->q));
			}
			w = &r->q[r->nq++];
			memset(w, 0, sizeof(*w));
			w->key = xstrdup(key);
		}
		ni->paced = true;
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 16;
			w->names = xrealloc(w->names, w->cap * sizeof(char *));
		}
		w->names[w->n++] = xstrdup(names[i]);
		r->waiting++;
		r->planned = r->planned ? r->planned - 1 : 0;
	}
}

static void wait_free(struct pace_wait *w)
{
	size_t i;

	for (i = w->off; i < w->n; i++)
		free(w->names[i]);
	free(w->names);
	free(w->key);
}

/* The head entry of r is done: the next one heads the queue. */
static void pace_pop(struct pace_region *r)
{
	wait_free(&r->q[r->head]);
	r->head++;
	if (r->head == r->nq)
		r->head = r->nq = 0;
	else if (r->head > 64 && r->head > r->nq / 2) {
		memmove(r->q, r->q + r->head, (r->nq - r->head) * sizeof(*r->q));
		r->nq -= r->head;
		r->head = 0;
	}
}

void pace_run(void)
{
	size_t i;

	for (i = 0; i < nR; i++) {
		struct pace_region *r = &R[i];

		while (r->head < r->nq) {
			struct pace_wait *w = &r->q[r->head];
			size_t k, j, m;

			if (w->off == w->n) {
				/* an empty entry would stop the queue: pace_send
				 * sends nothing from it, nor after it */
				pace_pop(r);
				continue;
			}
			k = pace_send(&r->launch, w->n - w->off, mono(), PACE_SLACK);
			if (!k)
				break;
			for (j = w->off; j < w->off + k; j++) {
				struct bnode *ni = node_find(w->names[j]);
				if (ni)
					ni->paced = false;
			}
			/* only those still launching in this region: a node picked
			 * again for another region while it waited here goes there
			 * (launch_retry), and its answer does not settle that
			 * region's call. r may move if launch_send's outcome (a
			 * provider no longer configured: at once) looks a region
			 * up: by index */
			m = launch_send(w->names + w->off, k, r->provider, r->region);
			r = &R[i];
			w = &r->q[r->head];
			for (j = w->off; j < w->off + k; j++)
				free(w->names[j]);
			w->off += k;
			r->waiting -= k;
			if (w->off == w->n)
				pace_pop(r);
			if (!m)   /* none of them was still launching here: nothing sent */
				pace_unsend(&r->launch);
		}
	}
}

void pace_launch_answer(const char *prov, const char *region, size_t n, double t0, double t1, bool throttled)
{
	struct pace_region *r = pace_of(prov, region);

	if (throttled)
		r->throttled++;
	/* counted from the call's start on the worker */
	pace_answer(&r->launch, n, t0, t1, throttled);
}

bool pace_terminate_take(const char *prov, const char *region, double *when)
{
	struct pace_region *r = pace_of(prov, region);
	double t = mono();

	if (pace_now(&r->term, 1, t - PACE_SLACK) >= 1) {
		pace_take(&r->term, 1, 1, t);
		return true;
	}
	*when = pace_when(&r->term, 1, t) + PACE_SLACK;
	return false;
}

void pace_terminate_throttled(const char *prov, const char *region)
{
	struct pace_region *r = pace_of(prov, region);
	double t = mono();

	r->throttled++;
	tb_drain(&r->term.inst, t);
	tb_drain(&r->term.calls, t);
}

size_t pace_waiting(void)
{
	size_t i, n = 0;

	for (i = 0; i < nR; i++)
		n += R[i].waiting;
	return n;
}

void pace_free(void)
{
	size_t i, k;

	for (i = 0; i < nR; i++) {
		for (k = R[i].head; k < R[i].nq; k++)
			wait_free(&R[i].q[k]);
		free(R[i].q);
		free(R[i].provider);
		free(R[i].region);
	}
	free(R);
	R = NULL;
	nR = 0;
}
