/*
 * test_reconcile.c - the reconciler's decision table (burst-agent/reconcile.h):
 * orphans young and old, other clusters, untagged instances, adoption,
 * vanished instances young and old, eventual consistency right after a
 * launch, failed listings; the instances seen from round to round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../burst-agent/reconcile.h"
#include "tap.h"

#define NOW 1000000.0

static const char *const listed_aws[] = { "aws", NULL };
static const char *const listed_none[] = { NULL };

static struct rc_settings settings(const char *const *listed)
{
	struct rc_settings s = { "lab", 300, 60, listed };
	return s;
}

/* The one action of a round (NULL if it had none or several). */
static const struct rc_action *one(struct rc_action *v, size_t n)
{
	return n == 1 ? &v[0] : NULL;
}

static struct rc_instance inst(const char *id, const char *cluster, const char *node, int attempt,
			       const char *state, double age)
{
	struct rc_instance i = { "aws", id, cluster, node, attempt, state, NOW - age, NOW - age };
	return i;
}

static struct rc_node node(const char *name, enum node_state state, const char *instance, int attempt,
			   double since_age, double missing_age)
{
	struct rc_node n = { name, state, "aws", instance, attempt, NOW - since_age,
		missing_age < 0 ? 0 : NOW - missing_age };
	return n;
}

static size_t decide(const struct rc_node *nodes, size_t nn, const struct rc_instance *insts, size_t ni,
		     const struct rc_settings *s, struct rc_action **v)
{
	return reconcile_decide(nodes, nn, insts, ni, NOW, s, v);
}

int main(void)
{
	struct rc_settings s = settings(listed_aws);
	struct rc_action *v = NULL;
	const struct rc_action *a;
	size_t n;

	/* --- orphans --- */
	{
		struct rc_node nd[] = { node("burst-1", NS_POWERED_DOWN, NULL, 0, 1000, -1) };
		struct rc_instance in[] = { inst("i-old", "lab", NULL, 0, "running", 301) };
		n = decide(nd, 1, in, 1, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_TERMINATE && !strcmp(a->instance, "i-old") && !strcmp(a->provider, "aws"),
		   "an orphan of our cluster older than OrphanGrace is terminated");
		ok(a && strstr(a->why, "orphan") && strstr(a->why, "OrphanGrace=300"), "... and the log says why (%s)",
		   a ? a->why : "");
		free(v);
	}
	{
		struct rc_instance in[] = { inst("i-young", "lab", NULL, 0, "running", 299) };
		n = decide(NULL, 0, in, 1, &s, &v);
		ok(n == 0, "a younger orphan is kept (it may be a launch whose answer is on its way)");
		free(v);
	}
	{
		struct rc_instance in[] = { inst("i-other", "other", NULL, 0, "running", 9999),
			inst("i-untagged", NULL, NULL, 0, "running", 9999) };
		n = decide(NULL, 0, in, 2, &s, &v);
		ok(n == 0, "instances of another cluster and untagged ones are never touched");
		free(v);
	}
	{
		/* launch time unknown: the first time the agent saw it counts */
		struct rc_instance in[] = { inst("i-x", "lab", NULL, 0, "running", 0),
			inst("i-y", "lab", NULL, 0, "running", 0) };
		in[0].launched = 0;
		in[0].first_seen = NOW - 400;
		in[1].launched = 0;
		in[1].first_seen = NOW;
		n = decide(NULL, 0, in, 2, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_TERMINATE && !strcmp(a->instance, "i-x"),
		   "without a launch time, the age counts from when the agent first saw it");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 1000, -1),
			node("burst-2", NS_TERMINATING, "i-2", 1, 1000, -1),
			node("burst-3", NS_REJECTED, "i-3", 1, 1000, -1),
			node("burst-4", NS_BOOTING, "i-4", 1, 1000, -1) };
		struct rc_instance in[] = { inst("i-1", "lab", "burst-1", 1, "running", 1000),
			inst("i-2", "lab", "burst-2", 1, "running", 1000),
			inst("i-3", "lab", "burst-3", 1, "running", 1000),
			inst("i-4", "lab", "burst-4", 1, "pending", 1000) };
		n = decide(nd, 4, in, 4, &s, &v);
		ok(n == 0, "instances owned by admitted, terminating, rejected and booting nodes are no orphans");
		free(v);
	}
	{
		/* a node powered down whose termination did not take, and an earlier attempt's leftover */
		struct rc_node nd[] = { node("burst-1", NS_POWERED_DOWN, "i-1", 1, 1000, -1),
			node("burst-2", NS_ADMITTED, "i-2b", 2, 1000, -1) };
		struct rc_instance in[] = { inst("i-1", "lab", "burst-1", 1, "running", 1000),
			inst("i-2a", "lab", "burst-2", 1, "running", 1000),
			inst("i-2b", "lab", "burst-2", 2, "running", 900) };
		n = decide(nd, 2, in, 3, &s, &v);
		ok(n == 2 && v[0].kind == RC_TERMINATE && v[1].kind == RC_TERMINATE &&
		   !strcmp(v[0].instance, "i-1") && !strcmp(v[1].instance, "i-2a"),
		   "a powered-down node's leftover and an earlier attempt's instance are orphans");
		ok(n == 2 && strstr(v[0].why, "burst-1") && strstr(v[0].why, "powered_down"),
		   "... the log names the node and its state (%s)", n ? v[0].why : "");
		free(v);
	}
	{
		/* the same id listed by another provider is not this node's */
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 1000, -1) };
		struct rc_instance in[] = { inst("i-1", "lab", NULL, 0, "running", 1000) };
		const char *const both[] = { "aws", "aws2", NULL };
		struct rc_settings s2 = settings(both);
		in[0].provider = "aws2";
		n = decide(nd, 1, in, 1, &s2, &v);
		ok(n == 2 && v[0].kind == RC_TERMINATE && v[1].kind == RC_MISSING,
		   "instances are matched per provider");
		free(v);
	}

	/* --- adoption --- */
	{
		struct rc_node nd[] = { node("burst-1", NS_LAUNCHING, NULL, 3, 5, -1) };
		struct rc_instance in[] = { inst("i-a", "lab", "burst-1", 3, "pending", 4) };
		n = decide(nd, 1, in, 1, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_ADOPT && !strcmp(a->node, "burst-1") && !strcmp(a->instance, "i-a"),
		   "a launching node adopts its listed instance (the launch's answer was lost)");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_LAUNCHING, NULL, 3, 5, -1) };
		struct rc_instance in[] = { inst("i-a", "lab", "burst-1", 2, "running", 400) };
		n = decide(nd, 1, in, 1, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_TERMINATE, "an instance of another attempt is not adopted (an old orphan)");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_LAUNCHING, NULL, 3, 5, -1) };
		struct rc_instance in[] = { inst("i-a", "other", "burst-1", 3, "running", 400),
			inst("i-b", "lab", "burst-1", 3, "running", 400),
			inst("i-c", "lab", "burst-1", 3, "running", 400) };
		n = decide(nd, 1, in, 3, &s, &v);
		ok(n == 2 && v[0].kind == RC_ADOPT && !strcmp(v[0].instance, "i-b") &&
		   v[1].kind == RC_TERMINATE && !strcmp(v[1].instance, "i-c"),
		   "one instance is adopted, a duplicate is an orphan, another cluster's is left alone");
		free(v);
	}

	/* --- vanished instances --- */
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, 61) };
		n = decide(nd, 1, NULL, 0, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_LOST && !strcmp(a->node, "burst-1") && !strcmp(a->instance, "i-1"),
		   "an admitted node whose instance is missing for longer than VanishGrace is lost");
		ok(a && strstr(a->why, "instance i-1 vanished (spot reclaim?)"), "... the log says so (%s)",
		   a ? a->why : "");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, -1) };
		n = decide(nd, 1, NULL, 0, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_MISSING, "the first miss is only noted (listings are eventually consistent)");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, 59) };
		n = decide(nd, 1, NULL, 0, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_MISSING, "missing for less than VanishGrace: still waiting");
		free(v);
	}
	{
		/* InvalidInstanceID.NotFound right after a launch: missing, but young */
		struct rc_node nd[] = { node("burst-1", NS_BOOTING, "i-new", 1, 2, 120) };
		n = decide(nd, 1, NULL, 0, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_MISSING, "an instance launched less than VanishGrace ago is not lost when not listed");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_BOOTING, "i-1", 1, 100, 100) };
		n = decide(nd, 1, NULL, 0, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_LOST, "a booting node's vanished instance is lost too");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, 100) };
		struct rc_instance in[] = { inst("i-1", "lab", "burst-1", 1, "stopped", 3600) };
		n = decide(nd, 1, in, 1, &s, &v);
		a = one(v, n);
		ok(a && a->kind == RC_LOST && strstr(a->why, "stopped"), "a stopped instance runs no slurmd: lost (%s)",
		   a ? a->why : "");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, 100) };
		struct rc_instance in[] = { inst("i-1", "lab", "burst-1", 1, "running", 3600) };
		n = decide(nd, 1, in, 1, &s, &v);
		ok(n == 0, "listed again: nothing to do (the agent forgets the miss)");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, 100),
			node("burst-2", NS_POWERED_DOWN, "i-2", 1, 3600, 100),
			node("burst-3", NS_TERMINATING, "i-3", 1, 3600, 100),
			node("burst-4", NS_LAUNCHING, NULL, 1, 3600, 100) };
		struct rc_settings s2 = settings(listed_none);
		n = decide(nd, 4, NULL, 0, &s2, &v);
		ok(n == 0, "nothing is decided for a provider whose listing failed");
		s2 = settings(listed_aws);
		n = decide(nd + 1, 3, NULL, 0, &s2, &v);
		free(v);
		ok(n == 0, "only booting and admitted nodes can lose their instance");
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, 0) };
		struct rc_settings s2 = settings(listed_aws);
		s2.vanish_grace = 0;
		nd[0].missing_since = 0;
		n = decide(nd, 1, NULL, 0, &s2, &v);
		a = one(v, n);
		ok(a && a->kind == RC_MISSING, "VanishGrace=0: not listed at all, the first miss is only noted "
		   "(a paged listing may skip an instance)");
		free(v);
		nd[0].missing_since = NOW - 5;   /* an earlier round missed it, 5 s ago */
		n = decide(nd, 1, NULL, 0, &s2, &v);
		a = one(v, n);
		ok(a && a->kind == RC_LOST, "VanishGrace=0: lost at the second round that misses it");
		free(v);
	}
	{
		struct rc_node nd[] = { node("burst-1", NS_ADMITTED, "i-1", 1, 3600, -1) };
		struct rc_instance in[] = { inst("i-1", "lab", "burst-1", 1, "stopped", 3600) };
		struct rc_settings s2 = settings(listed_aws);
		s2.vanish_grace = 0;
		n = decide(nd, 1, in, 1, &s2, &v);
		a = one(v, n);
		ok(a && a->kind == RC_LOST, "VanishGrace=0: listed stopped, lost at once (the listing shows it)");
		free(v);
	}
	{
		/* booting since after the listing began (the listing went page by
		 * page, its instance was launched into a region already listed):
		 * not judged by this round, even with VanishGrace=0 */
		struct rc_node nd[] = { node("burst-1", NS_BOOTING, "i-late", 2, -1, -1),
			node("burst-2", NS_BOOTING, "i-gone", 1, 1, -1) };
		struct rc_settings s2 = settings(listed_aws);
		s2.vanish_grace = 0;
		n = decide(nd, 2, NULL, 0, &s2, &v);
		a = one(v, n);
		ok(a && a->kind == RC_MISSING && !strcmp(a->node, "burst-2"),
		   "a node that entered its state after the listing began is not lost nor missing by it; one before is");
		free(v);
	}
	/* --- 10,000 nodes and instances: every decision found through the
	 * indexes, the same as for one (node i owns instance i; every 100th
	 * instance is an orphan of no node, every 250th node launching adopts
	 * its listed instance, every 333rd node's instance vanished) --- */
	{
		enum { N = 10000 };
		struct rc_node *nd = calloc(N, sizeof(*nd));
		struct rc_instance *in = calloc(N + N / 100, sizeof(*in));
		char (*names)[24] = calloc(N, 24), (*ids)[24] = calloc(N + N / 100, 24);
		size_t i, ni = 0, nt = 0, nadopt = 0, nlost = 0, bad = 0, want_lost = 0, want_adopt = 0;

		for (i = 0; i < N; i++) {
			snprintf(names[i], 24, "burst-%zu", i);
			snprintf(ids[i], 24, "i-%017zu", i);
			nd[i] = node(names[i], NS_ADMITTED, ids[i], 1, 1000, 1000);
			if (i % 250 == 7) {
				nd[i].state = NS_LAUNCHING;
				nd[i].instance = NULL;
				want_adopt++;
			}
			if (i % 333 == 5 && i % 250 != 7)
				want_lost++;    /* not listed below */
			else
				in[ni++] = inst(ids[i], "lab", names[i], 1, "running", 1000);
		}
		for (i = 0; i < N / 100; i++) {
			snprintf(ids[N + i], 24, "i-orphan-%zu", i);
			in[ni++] = inst(ids[N + i], "lab", NULL, 0, "running", 1000);
		}
		n = decide(nd, N, in, ni, &s, &v);
		for (i = 0; i < n; i++) {
			if (v[i].kind == RC_TERMINATE)
				bad += strncmp(v[i].instance, "i-orphan-", 9) != 0, nt++;
			else if (v[i].kind == RC_ADOPT)
				bad += strcmp(v[i].instance + 2, v[i].node + 6) && atol(v[i].instance + 2) != atol(v[i].node + 6),
				nadopt++;
			else if (v[i].kind == RC_LOST)
				bad += atol(v[i].node + 6) % 333 != 5, nlost++;
			else
				bad++;
		}
		is_num(nt, N / 100, "10,000 nodes: every orphan (and no other instance) is terminated");
		is_num(nadopt, want_adopt, "every launching node adopts its listed instance");
		is_num(nlost, want_lost, "every node whose instance vanished is lost");
		is_num(bad, 0, "each action is for the right node and instance");
		free(v);
		free(nd);
		free(in);
		free(names);
		free(ids);
	}
	/* --- the instances seen from round to round (rc_seen) --- */
	{
		const char *const both[] = { "aws", "os" }, *const aws_only[] = { "aws" };
		struct rc_seen_round r;
		struct rc_seen *seen = NULL;
		size_t nseen = 0, i;
		char *b_id = NULL;
		char id[32];

		ok(rc_seen_provider("aws") == rc_seen_provider("aws") &&
		   rc_seen_provider("aws") != rc_seen_provider("os"), "a provider's name is interned once");
		rc_seen_begin(&r, seen, nseen);
		is_num(rc_seen_add(&r, "aws", "i-a", 10), 10, "round 1: i-a new");
		is_num(rc_seen_add(&r, "aws", "i-b", 10), 10, "round 1: i-b new");
		is_num(rc_seen_add(&r, "os", "i-b", 11), 11, "round 1: the same id at another provider is another instance");
		is_num(rc_seen_add(&r, "os", "o-1", 11), 11, "round 1: o-1 new");
		rc_seen_end(&r, both, 2, &seen, &nseen);
		is_num(nseen, 4, "round 1 keeps its 4 instances");
		for (i = 0; i < nseen; i++)
			if (!strcmp(seen[i].id, "i-b") && !strcmp(seen[i].provider, "aws"))
				b_id = seen[i].id;
		ok(b_id != NULL, "i-b of aws is among them");

		/* round 2: the os listing failed; aws lists i-b (twice: a page
		 * repeated) and i-c; i-a is gone */
		rc_seen_begin(&r, seen, nseen);
		is_num(rc_seen_add(&r, "aws", "i-b", 20), 10, "round 2: i-b keeps its first sighting");
		is_num(rc_seen_add(&r, "aws", "i-b", 20), 10, "round 2: i-b listed twice keeps it too");
		is_num(rc_seen_add(&r, "aws", "i-c", 20), 20, "round 2: i-c new");
		rc_seen_end(&r, aws_only, 1, &seen, &nseen);
		is_num(nseen, 5, "round 2: i-b twice, i-c, and the 2 of the unlisted provider");
		{
			int ia = 0, bsame = 0, bother = 0, c = 0, os_b = 0, o1 = 0;
			for (i = 0; i < nseen; i++) {
				bool aws = !strcmp(seen[i].provider, "aws");
				if (aws && !strcmp(seen[i].id, "i-a"))
					ia++;
				else if (aws && seen[i].id == b_id)
					bsame++;
				else if (aws && !strcmp(seen[i].id, "i-b") && seen[i].first == 10)
					bother++;
				else if (aws && !strcmp(seen[i].id, "i-c") && seen[i].first == 20)
					c++;
				else if (!aws && !strcmp(seen[i].id, "i-b") && seen[i].first == 11)
					os_b++;
				else if (!aws && !strcmp(seen[i].id, "o-1") && seen[i].first == 11)
					o1++;
			}
			is_num(ia, 0, "round 2: i-a, no longer listed, is forgotten");
			is_num(bsame, 1, "round 2: i-b's id is the last round's string, moved (one copy per instance)");
			is_num(bother, 1, "round 2: i-b's second listing has its own copy");
			is_num(c, 1, "round 2: i-c first seen in round 2");
			is_num(os_b + o1, 2, "round 2: the failed provider's instances keep their first sighting");
		}

		/* round 3: everything listed again, many new; nothing lost */
		rc_seen_begin(&r, seen, nseen);
		is_num(rc_seen_add(&r, "os", "o-1", 30), 11, "round 3: o-1 of the provider back keeps its sighting");
		is_num(rc_seen_add(&r, "os", "i-b", 30), 11, "round 3: i-b of os keeps its sighting");
		is_num(rc_seen_add(&r, "aws", "i-b", 30), 10, "round 3: i-b of aws keeps its sighting");
		for (i = 0; i < 1000; i++) {
			snprintf(id, sizeof(id), "i-%04zu", i);
			rc_seen_add(&r, "aws", id, 30);
		}
		rc_seen_end(&r, both, 2, &seen, &nseen);
		is_num(nseen, 1003, "round 3: 1,003 instances");
		rc_seen_begin(&r, seen, nseen);
		is_num(rc_seen_add(&r, "aws", "i-0999", 40), 30, "round 4: an instance of the 1,000 keeps its sighting");
		rc_seen_end(&r, both, 2, &seen, &nseen);
		is_num(nseen, 1, "round 4: only what was listed");
		rc_seen_free(seen, nseen);
	}
	ok(!strcmp(rc_kind_name(RC_TERMINATE), "terminate") && !strcmp(rc_kind_name(RC_LOST), "lost") &&
	   !strcmp(rc_kind_name(RC_ADOPT), "adopt") && !strcmp(rc_kind_name(RC_MISSING), "missing"),
	   "rc_kind_name");
	return done_testing();
}
