/*
 * reconcile.c - the reconciler's decisions (reconcile.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "reconcile.h"
#include "strutil.h"

const char *rc_kind_name(enum rc_kind k)
{
	switch (k) {
	case RC_TERMINATE: return "terminate";
	case RC_ADOPT: return "adopt";
	case RC_LOST: return "lost";
	case RC_MISSING: return "missing";
	}
	return "?";
}

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* States in which a node's recorded instance is its own (not an orphan). */
static bool owning_state(enum node_state st)
{
	return st == NS_LAUNCHING || st == NS_BOOTING || st == NS_ADMITTED || st == NS_REJECTED ||
	       st == NS_TERMINATING || st == NS_LOST;
}

/* States in which a node must have a live instance. */
static bool live_state(enum node_state st)
{
	return st == NS_BOOTING || st == NS_ADMITTED;
}

static bool listed(const struct rc_settings *s, const char *provider)
{
	size_t i;

	for (i = 0; provider && s->listed && s->listed[i]; i++)
		if (!strcmp(s->listed[i], provider))
			return true;
	return false;
}

/* A listed instance that runs (stopping and stopped ones run no slurmd). */
static bool running(const struct rc_instance *in)
{
	return !streq(in->state, "stopping") && !streq(in->state, "stopped");
}

static struct rc_action *push(struct rc_action **v, size_t *n, enum rc_kind k, const char *node,
			      const char *instance, const char *provider)
{
	struct rc_action *a;

	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	a = &(*v)[(*n)++];
	memset(a, 0, sizeof(*a));
	a->kind = k;
	a->node = node;
	a->instance = instance;
	a->provider = provider;
	return a;
}

/*
 * Chains of indexes by a string key, in ascending index order: head gives
 * the first index + 1 of a key (0: none), next[i] the one after i + 1.
 * Every lookup of the decision is one of these instead of a scan: a round
 * over n nodes and m instances costs n + m, not n * m.
 */
struct chains {
	struct htab head;
	size_t *next;
};

static void chains_build(struct chains *c, size_t count, const char *(*key)(const void *v, size_t i),
			 const void *v)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->next = xcalloc(count ? count : 1, sizeof(size_t));
	for (i = count; i-- > 0;) {
		const char *k = key(v, i);
		void *first = NULL;
		if (!k)
			continue;
		htab_has(&c->head, k, &first);
		c->next[i] = (size_t)(uintptr_t)first;
		htab_put(&c->head, k, (void *)(uintptr_t)(i + 1));
	}
}

static void chains_free(struct chains *c)
{
	htab_free(&c->head);
	free(c->next);
}

/* for (i = chain_first(c, key); i; i = c->next[i - 1]): index i - 1 */
static size_t chain_first(const struct chains *c, const char *key)
{
	return key ? (size_t)(uintptr_t)htab_get(&c->head, key) : 0;
}

static const char *owning_instance(const void *v, size_t i)
{
	const struct rc_node *nd = &((const struct rc_node *)v)[i];
	return owning_state(nd->state) ? nd->instance : NULL;
}

static const char *node_name(const void *v, size_t i)
{
	return ((const struct rc_node *)v)[i].name;
}

static const char *inst_id(const void *v, size_t i)
{
	return ((const struct rc_instance *)v)[i].id;
}

static const char *inst_node(const void *v, size_t i)
{
	return ((const struct rc_instance *)v)[i].node;
}

size_t reconcile_decide(const struct rc_node *nodes, size_t nn, const struct rc_instance *insts,
			size_t ni, double now, const struct rc_settings *s, struct rc_action **out)
{
	struct rc_action *v = NULL;
	bool *owned = xcalloc(ni ? ni : 1, sizeof(bool));
	struct chains by_owned, by_name, by_id, by_inode;
	size_t n = 0, i, k, c;

	chains_build(&by_owned, nn, owning_instance, nodes);
	chains_build(&by_name, nn, node_name, nodes);
	chains_build(&by_id, ni, inst_id, insts);
	chains_build(&by_inode, ni, inst_node, insts);
	/* who owns what: recorded instances, then launching nodes adopting theirs */
	for (i = 0; i < ni; i++)
		for (c = chain_first(&by_owned, insts[i].id); c && !owned[i]; c = by_owned.next[c - 1]) {
			k = c - 1;
			if (!nodes[k].provider || streq(nodes[k].provider, insts[i].provider))
				owned[i] = true;
		}
	for (k = 0; k < nn; k++) {
		const struct rc_node *nd = &nodes[k];
		if (nd->state != NS_LAUNCHING || (nd->instance && nd->instance[0]) ||
		    !listed(s, nd->provider))
			continue;
		for (c = chain_first(&by_inode, nd->name); c; c = by_inode.next[c - 1]) {
			const struct rc_instance *in = &insts[c - 1];
			struct rc_action *a;
			i = c - 1;
			if (owned[i] || !streq(in->node, nd->name) || in->attempt != nd->attempt ||
			    !streq(in->provider, nd->provider) || !streq(in->cluster, s->cluster) || !running(in))
				continue;
			owned[i] = true;
			a = push(&v, &n, RC_ADOPT, nd->name, in->id, in->provider);
			snprintf(a->why, sizeof(a->why),
				 "attempt %d is launching and its instance is listed (%s): the launch's answer was lost",
				 nd->attempt, in->state ? in->state : "?");
			break;
		}
	}
	/* orphans */
	for (i = 0; i < ni; i++) {
		const struct rc_instance *in = &insts[i];
		double base = in->launched > 0 ? in->launched : in->first_seen, age;
		struct rc_action *a;

		if (owned[i] || !in->id || !in->id[0] || !streq(in->cluster, s->cluster))
			continue;
		age = base > 0 ? now - base : 0;
		if (age < s->orphan_grace)
			continue;
		a = push(&v, &n, RC_TERMINATE, in->node, in->id, in->provider);
		{
			const char *nst = NULL;
			/* the last node of that name, as a scan found it */
			for (c = chain_first(&by_name, in->node); c; c = by_name.next[c - 1])
				nst = node_state_name(nodes[c - 1].state);
			if (in->node)
				snprintf(a->why, sizeof(a->why),
					 "orphan: launched for %s (attempt %d) %.0f s ago (OrphanGrace=%.0f s), which %s%s",
					 in->node, in->attempt, age, s->orphan_grace,
					 nst ? "is " : "is no node of this agent", nst ? nst : "");
			else
				snprintf(a->why, sizeof(a->why),
					 "orphan: tagged burst:cluster=%s, launched %.0f s ago (OrphanGrace=%.0f s), no node owns it",
					 s->cluster, age, s->orphan_grace);
		}
	}
	/* vanished instances */
	for (k = 0; k < nn; k++) {
		const struct rc_node *nd = &nodes[k];
		const struct rc_instance *found = NULL;
		double since, gone;
		struct rc_action *a;

		if (!live_state(nd->state) || !nd->instance || !nd->instance[0] || !listed(s, nd->provider))
			continue;
		/* in this state since the listings began: they may have been made
		 * before its instance was launched (a provider lists page by page,
		 * with launches between its pages) */
		if (nd->since > now)
			continue;
		for (c = chain_first(&by_id, nd->instance); c && !found; c = by_id.next[c - 1])
			if (streq(insts[c - 1].provider, nd->provider))
				found = &insts[c - 1];
		if (found && running(found))
			continue;
		since = nd->missing_since > 0 ? nd->missing_since : now;
		gone = now - since;
		/* not listed at all: lost only when an earlier round missed it too,
		 * whatever VanishGrace (a listing made page by page may skip an
		 * instance that moved between its pages); listed stopped: at once */
		if (gone >= s->vanish_grace && now - nd->since >= s->vanish_grace && (found || nd->missing_since > 0)) {
			a = push(&v, &n, RC_LOST, nd->name, nd->instance, nd->provider);
			if (found)
				snprintf(a->why, sizeof(a->why), "instance %s vanished (spot reclaim?): it is %s",
					 nd->instance, found->state);
			else
				snprintf(a->why, sizeof(a->why),
					 "instance %s vanished (spot reclaim?): not listed by provider %s for %.0f s",
					 nd->instance, nd->provider, gone);
		} else {
			a = push(&v, &n, RC_MISSING, nd->name, nd->instance, nd->provider);
			snprintf(a->why, sizeof(a->why),
				 "instance %s %s for %.0f s, the node %s for %.0f s (VanishGrace=%.0f s): waiting",
				 nd->instance, found ? "is stopped" : "is not listed", gone, node_state_name(nd->state),
				 now - nd->since, s->vanish_grace);
		}
	}
	free(owned);
	chains_free(&by_owned);
	chains_free(&by_name);
	chains_free(&by_id);
	chains_free(&by_inode);
	*out = v;
	return n;
}

const char *rc_seen_provider(const char *name)
{
	static char **names;
	static size_t n;
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return names[i];
	names = xrealloc(names, (n + 1) * sizeof(*names));
	names[n] = xstrdup(name);
	return names[n++];
}

void rc_seen_begin(struct rc_seen_round *r, struct rc_seen *old, size_t nold)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->old = old;
	r->nold = nold;
	r->next = xcalloc(nold ? nold : 1, sizeof(size_t));
	/* the keys are old's id strings: a string taken by the new round
	 * stays where it is until the round ends */
	for (i = nold; i-- > 0;) {
		void *first = NULL;
		htab_has(&r->head, old[i].id, &first);
		r->next[i] = (size_t)(uintptr_t)first;
		htab_put(&r->head, old[i].id, (void *)(uintptr_t)(i + 1));
	}
}

double rc_seen_add(struct rc_seen_round *r, const char *provider, const char *id, double now)
{
	const char *prov = rc_seen_provider(provider);
	struct rc_seen *si;
	size_t c;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	si = &r->v[r->n++];
	si->provider = prov;
	si->id = NULL;
	si->first = now;
	for (c = (size_t)(uintptr_t)htab_get(&r->head, id); c; c = r->next[c - 1]) {
		struct rc_seen *o = &r->old[c - 1];
		if (o->provider != prov)
			continue;
		si->first = o->first;
		/* listed twice in one round: the second entry gets a copy */
		if (o->id) {
			si->id = o->id;
			o->id = NULL;
		}
		break;
	}
	if (!si->id)
		si->id = xstrdup(id);
	return si->first;
}

void rc_seen_end(struct rc_seen_round *r, const char *const *listed, size_t nlisted, struct rc_seen **v,
		 size_t *n)
{
	size_t i, k;

	htab_free(&r->head);
	free(r->next);
	for (i = 0; i < r->nold; i++) {
		struct rc_seen *o = &r->old[i];
		bool failed = true;
		for (k = 0; k < nlisted && failed; k++)
			failed = strcmp(listed[k], o->provider) != 0;
		if (!failed || !o->id)
			continue;
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 64;
			r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
		}
		r->v[r->n++] = *o;
		o->id = NULL;
	}
	rc_seen_free(r->old, r->nold);
	if (r->n < r->cap)
		r->v = xrealloc(r->v, (r->n ? r->n : 1) * sizeof(*r->v));
	*v = r->v;
	*n = r->n;
	memset(r, 0, sizeof(*r));
}

void rc_seen_free(struct rc_seen *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].id);
	free(v);
}
