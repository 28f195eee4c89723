/*
 * reconcile.h - the reconciler's decisions (doc/design.md §3 step 7, §7): the
 * agent's node records against the instances its providers list, as a pure
 * function of both and of the time, so that every rule is tested without a
 * cloud (tests/unit/test_reconcile.c). burst-agent gathers the inputs and
 * carries out the actions.
 *
 * The rules:
 * - an instance tagged with our cluster that no node owns (a node owns the
 *   instance recorded for it while it is launching, booting, admitted,
 *   rejected or terminating) is an orphan; once it is older than
 *   OrphanGrace it is terminated. Instances of other clusters and untagged
 *   ones are never touched.
 * - a launching node whose instance (same node, same attempt) is listed
 *   although the launch's answer was lost adopts it.
 * - a booting or admitted node whose instance is missing from its
 *   provider's listing (or listed stopped) is lost once it has been missing
 *   for VanishGrace and was launched more than VanishGrace ago: EC2's
 *   listings are eventually consistent (an instance just launched may be
 *   missing, InvalidInstanceID.NotFound right after a launch), so one miss
 *   is only noted (RC_MISSING). One not listed at all is lost only when an
 *   earlier round missed it too, even with VanishGrace=0: a listing made
 *   page by page (NextToken) may skip an instance that moved between pages.
 * - nothing is decided for a provider whose listing failed this round.
 */
#ifndef BURST_RECONCILE_H
#define BURST_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>

#include "htab.h"
#include "node_state.h"

/* A node record of the agent (pointers borrowed from the caller). */
struct rc_node {
	const char *name;
	enum node_state state;   /* the agent's state of the node */
	const char *provider;    /* configured provider of its current attempt (may be NULL) */
	const char *instance;    /* its recorded instance (may be NULL) */
	int attempt;
	double since;            /* time of its last transition */
	double missing_since;    /* first round its instance was missing (0: it was not) */
};

/* An instance a provider listed (pointers borrowed from the caller). */
struct rc_instance {
	const char *provider;    /* the configured provider that listed it */
	const char *id;
	const char *cluster;     /* its cluster tag; NULL: untagged */
	const char *node;        /* the node it was launched for; NULL: unknown */
	int attempt;             /* that node's attempt; 0: unknown */
	const char *state;       /* pending, running, stopping, stopped (provider's words) */
	double launched;         /* launch time; 0: unknown (then first_seen counts) */
	double first_seen;       /* first round the agent saw it */
};

struct rc_settings {
	const char *cluster;     /* ours */
	double orphan_grace;     /* OrphanGrace= seconds */
	double vanish_grace;     /* VanishGrace= seconds */
	const char *const *listed; /* providers whose listing succeeded this round (NULL-terminated) */
};

enum rc_kind {
	RC_TERMINATE,            /* an orphan older than OrphanGrace: terminate it */
	RC_ADOPT,                /* a launching node's instance, its launch answer lost */
	RC_LOST,                 /* the node's instance vanished: fail the node */
	RC_MISSING,              /* the node's instance is missing, within the grace: note it */
};

struct rc_action {
	enum rc_kind kind;
	const char *node;        /* RC_TERMINATE: the instance's node tag, may be NULL */
	const char *instance;
	const char *provider;
	char why[256];           /* for the log */
};

/* "terminate", "adopt", "lost", "missing" (static). */
const char *rc_kind_name(enum rc_kind k);

/*
 * Decide a round. now is when the round's listings began: a node whose
 * last transition came after it (since > now) is not found vanished by
 * them (its instance may have been launched after its region was listed).
 * Returns the number of actions and *out, a new array the caller frees
 * with free() (NULL when there are none); its strings point into nodes
 * and insts.
 */
size_t reconcile_decide(const struct rc_node *nodes, size_t nn, const struct rc_instance *insts,
			size_t ni, double now, const struct rc_settings *s, struct rc_action **out);

/*
 * The instances the reconciler saw in its last round, and when it first
 * saw each (the orphan grace counts from then). A burst lists thousands:
 * one copy of each id, moved from round to round, and the provider's name
 * interned (a few names for the process's life).
 */
struct rc_seen {
	const char *provider;    /* interned: rc_seen_provider() */
	char *id;                /* owned */
	double first;
};

/* A round being built from the last one (old, which it consumes). */
struct rc_seen_round {
	struct rc_seen *old, *v;
	size_t nold, n, cap;
	struct htab head;        /* id -> its first index in old, + 1 */
	size_t *next;            /* old[i]'s id's next index in old, + 1 (0: none) */
};

/* name's interned copy, kept for the process's life (never NULL). */
const char *rc_seen_provider(const char *name);
/* Starts a round from the last one's nold instances (old, NULL if none). */
void rc_seen_begin(struct rc_seen_round *r, struct rc_seen *old, size_t nold);
/*
 * Instance id of provider listed this round: returns when it was first
 * seen (now if the last round did not list it). Its id string is taken
 * from the last round's when there (no second copy).
 */
double rc_seen_add(struct rc_seen_round *r, const char *provider, const char *id, double now);
/*
 * Ends the round: the last round's instances of a provider not among the
 * nlisted names in listed (its listing failed) are kept with their first
 * sighting; the rest of the last round is freed. The round's instances in
 * *v (the caller frees with rc_seen_free) and *n.
 */
void rc_seen_end(struct rc_seen_round *r, const char *const *listed, size_t nlisted, struct rc_seen **v,
		 size_t *n);
/* Frees v and the ids of its n entries. */
void rc_seen_free(struct rc_seen *v, size_t n);

#endif
