/*
 * test_agent_pace.c - the agent's launch queues per region
 * (burst-agent/agent_pace.c), with the agent's lookups stubbed: a launch
 * request none of whose nodes can wait (a node no longer configured, or one
 * already waiting) must not leave an empty entry that stops its region's
 * queue for good; a node picked again for another region while it waited
 * in one region's queue is not sent from there (its record is the other
 * region's now), and each region's call in flight is settled by its own
 * answer only.
 */
#include <stdio.h>
#include <string.h>

#include "agent_int.h"
#include "tap.h"

struct agent A;

static struct bnode nodes[] = { { .name = "n1" }, { .name = "n2" }, { .name = "n3" }, { .name = "n4" },
				 { .name = "n5" }, { .name = "n6" }, { .name = "n7" } };
/* each node's record: the region it launches in now */
static const char *rec_region[] = { "r", "r", "A", "A", "B", "A", "B" };
static char sent[8][32], sent_region[8][32];
static size_t nsent;

double mono(void)
{
	return 100.0;
}

struct bnode *node_find(const char *name)
{
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (!strcmp(nodes[i].name, name))
			return &nodes[i];
	return NULL;
}

/* provider q: buckets of 100, 1 a second (one call in flight at a time);
 * p is not configured: its buckets have no limit */
static struct cfg_provider qcfg = { .rates = { .launch = { 100, 1 }, .launch_calls = { 100, 1 } } };
static struct aprov q = { .cfg = &qcfg };

struct aprov *prov_by_name(const char *name)
{
	return !strcmp(name, "q") ? &q : NULL;
}

static size_t node_no(const char *name)
{
	return (size_t)(node_find(name) - nodes);
}

/* as the agent's: only nodes whose record is still the queue's region go */
size_t launch_send(char **names, size_t n, const char *prov, const char *region)
{
	size_t m = 0;

	(void)prov;
	for (size_t i = 0; i < n && nsent < 8; i++) {
		if (!node_find(names[i]) || strcmp(rec_region[node_no(names[i])], region))
			continue;
		snprintf(sent_region[nsent], sizeof(sent_region[0]), "%s", region);
		snprintf(sent[nsent++], sizeof(sent[0]), "%s", names[i]);
		m++;
	}
	return m;
}

static bool was_sent(const char *name, const char *region)
{
	for (size_t i = 0; i < nsent; i++)
		if (!strcmp(sent[i], name) && !strcmp(sent_region[i], region))
			return true;
	return false;
}

int main(void)
{
	char *gone[] = { "gone" }, *n1[] = { "n1" }, *n2[] = { "n2" }, *n3[] = { "n3" }, *n4[] = { "n4" },
	     *n5[] = { "n5" }, *n6[] = { "n6" }, *n7[] = { "n7" };

	/* a node removed from burst.conf while launching: nothing to queue */
	pace_launch(gone, 1, "p", "r", "t1\nns");
	/* then a launch of another candidate in the same region */
	pace_launch(n1, 1, "p", "r", "t2\nns");
	pace_run();
	ok(nsent == 1 && !strcmp(sent[0], "n1"), "the other candidate's launch is sent (%zu sent)", nsent);
	ok(pace_waiting() == 0, "nothing waits (%zu)", pace_waiting());
	ok(!nodes[0].paced, "n1 no longer waits");

	/* a node that waits already, asked again as another candidate */
	nsent = 0;
	nodes[1].paced = true;
	pace_launch(n2, 1, "p", "r", "t3\nns");
	nodes[1].paced = false;
	pace_launch(n1, 1, "p", "r", "t4\nns");
	pace_run();
	ok(nsent == 1 && !strcmp(sent[0], "n1"), "a launch after one with nothing new is sent (%zu sent)", nsent);

	/* n3 waits in region A's queue behind n4's call in flight */
	nsent = 0;
	pace_launch(n4, 1, "q", "A", "t\nns");
	pace_run();
	ok(nsent == 1 && was_sent("n4", "A"), "A: n4 sent (%zu sent)", nsent);
	pace_launch(n3, 1, "q", "A", "t\nns");
	pace_run();
	ok(nsent == 1 && nodes[2].paced && pace_waiting() == 1, "A: n3 waits behind n4's call (%zu waiting)",
	   pace_waiting());
	/* n3 goes down and is resumed meanwhile: picked again, for region B
	 * (it still waits in A's queue, so B's does not take it) */
	rec_region[2] = "B";
	pace_launch(n3, 1, "q", "B", "t\nns");
	/* B has a call of its own in flight */
	pace_launch(n5, 1, "q", "B", "t\nns");
	pace_run();
	ok(nsent == 2 && was_sent("n5", "B"), "B: n5 sent (%zu sent)", nsent);
	/* n4's answer: A's queue comes to n3, whose record is B's now */
	pace_launch_answer("q", "A", 1, 100.0, 100.0, false);
	pace_run();
	ok(!was_sent("n3", "A") && !was_sent("n3", "B"), "n3 is not sent from A's queue (it launches in B now)");
	ok(!nodes[2].paced && pace_waiting() == 0, "n3 waits no more (%zu waiting): launch_retry queues it in B",
	   pace_waiting());
	/* nothing went from A: its sender is not left in flight */
	pace_launch(n6, 1, "q", "A", "t\nns");
	pace_run();
	ok(was_sent("n6", "A"), "A: a later launch is sent (A is not left with a call in flight)");
	/* B's call is still in flight: nothing else of B goes before its answer */
	pace_launch(n3, 1, "q", "B", "t\nns");
	pace_launch(n7, 1, "q", "B", "t\nns");
	pace_run();
	ok(!was_sent("n3", "B") && !was_sent("n7", "B") && pace_waiting() == 2,
	   "B: n3 and n7 wait for n5's answer (%zu waiting)", pace_waiting());
	pace_launch_answer("q", "B", 1, 100.0, 100.0, false);
	pace_run();
	ok(was_sent("n3", "B") && was_sent("n7", "B") && pace_waiting() == 0,
	   "B: n3 and n7 sent after n5's answer (%zu sent)", nsent);
	pace_free();
	return done_testing();
}
