/*
 * test_agent_pace.c - the agent's launch queues per region
 * (burst-agent/agent_pace.c), with the agent's lookups stubbed: a launch
 * request none of whose nodes can wait (a node no longer configured, or one
 * already waiting) must not leave an empty entry that stops its region's
 * queue for good.
 */
#include <stdio.h>
#include <string.h>

#include "agent_int.h"
#include "tap.h"

struct agent A;

static struct bnode nodes[] = { { .name = "n1" }, { .name = "n2" } };
static char sent[8][32];
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

/* no provider configured: its buckets have no limit */
struct aprov *prov_by_name(const char *name)
{
	(void)name;
	return NULL;
}

size_t launch_send(char **names, size_t n)
{
	for (size_t i = 0; i < n && nsent < 8; i++)
		snprintf(sent[nsent++], sizeof(sent[0]), "%s", names[i]);
	return n;
}

int main(void)
{
	char *gone[] = { "gone" }, *n1[] = { "n1" }, *n2[] = { "n2" };

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
	pace_free();
	return done_testing();
}
