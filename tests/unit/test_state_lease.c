/*
 * test_state_lease.c - the active agent's lease in the state database: it
 * is taken only as it was seen, renewed only by its epoch's holder, and a
 * deposed holder's connection can change nothing of the agent's state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "tap.h"

static char dir[] = "/tmp/test_state_lease.XXXXXX";
static char path[256];

static int fenced_calls;
static void on_fenced(void)
{
	fenced_calls++;
}

static int move(struct state_db *db, const char *node, enum node_state from, enum node_state to,
		burst_err_t *err)
{
	struct node_rec r;

	memset(&r, 0, sizeof(r));
	r.attempt = 1;
	return state_transition(db, node, from, &r, to, "test", err);
}

int main(void)
{
	struct state_db *a, *b, *ro;
	struct state_lease none, l, l2;
	burst_err_t err;
	long long ea = 0, eb = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/agent.db", dir);
	a = state_open(path, &err);
	b = state_open(path, &err);
	ok(a && b, "two agents open one state database");
	if (!a || !b)
		return done_testing();
	memset(&none, 0, sizeof(none));
	is_num(state_lease_get(b, &l, &err), 0, "nobody holds the lease of a new database");

	/* a takes it; b, acting on what it saw before, does not */
	is_num(state_lease_take(a, &none, "host-a pid 1", "boot ns 1", 5, &ea, &err), 1, "a takes the lease");
	is_num(ea, 1, "epoch 1");
	state_on_fenced(a, on_fenced);
	is_num(state_lease_take(b, &none, "host-b pid 2", "boot ns 2", 5, &eb, &err), 0,
	       "b cannot take it as it saw it before (nobody's)");
	is_num(state_node_ensure(a, "n1", "s", &err), 0, "the holder adds a node");
	is_num(move(a, "n1", NS_POWERED_DOWN, NS_REQUESTED, &err), 1, "the holder changes a node");
	is_num(fenced_calls, 0, "the holder's writes do not call its fence handler");

	/* renewed since b looked: b's view is stale */
	is_num(state_lease_get(b, &l, &err), 1, "b reads the lease");
	is_str(l.holder, "host-a pid 1", "its holder");
	ok(l.expires > l.renewed && l.epoch == 1 && l.seq == 0, "epoch 1, not renewed yet, expires after");
	is_num(state_lease_renew(a, ea, 5, &err), 1, "a renews it");
	is_num(state_lease_take(b, &l, "host-b pid 2", "boot ns 2", 5, &eb, &err), 0,
	       "b cannot take it: renewed since it looked");
	is_num(state_lease_get(b, &l2, &err), 1, "b reads it again");
	is_num(l2.seq, 1, "one renewal");

	/* not renewed since: b takes it over, a is fenced */
	is_num(state_lease_take(b, &l2, "host-b pid 2", "boot ns 2", 5, &eb, &err), 1, "b takes it over as it saw it");
	is_num(eb, 2, "epoch 2");
	is_num(state_lease_renew(a, ea, 5, &err), 0, "a's renewal finds it taken (a is deposed)");
	is_num(move(a, "n1", NS_REQUESTED, NS_LAUNCHING, &err), -1, "the deposed a cannot change a node");
	has_str(err.msg, "fenced", "fenced: %s", err.msg);
	is_num(fenced_calls, 1, "the refused write called a's fence handler first (the agent steps down there)");
	is_num(state_event(a, "n1", "x", "y", &err), -1, "nor add an event");
	is_num(state_request_add(a, "req-1.json", &err), -1, "nor take a spool request");
	is_num(state_begin(a, &err), 0, "a batch of a");
	is_num(move(a, "n1", NS_REQUESTED, NS_LAUNCHING, &err), -1, "a's change in a batch is refused too");
	state_rollback(a);
	{
		struct node_rec r;
		is_num(state_node_get(b, "n1", &r, &err), 1, "b reads the node");
		is_num(r.state, NS_REQUESTED, "still requested: nothing of a's was written");
		state_node_clear(&r);
	}
	is_num(move(b, "n1", NS_REQUESTED, NS_LAUNCHING, &err), 1, "the new holder changes the node");
	ok(fenced_calls >= 4, "each refused write of a called it (%d)", fenced_calls);

	/* a clean stop releases it; the read-only view shows it */
	is_num(state_lease_renew(b, eb, 0, &err), 1, "b releases the lease");
	ro = state_open_readonly(path, NULL, &err);
	ok(ro != NULL, "a read-only view");
	is_num(ro ? state_lease_get(ro, &l, &err) : -1, 1, "the view reads the lease");
	ok(l.epoch == 2 && l.expires == 0 && !strcmp(l.holder, "host-b pid 2"), "released by b, epoch 2");
	state_close(ro);
	state_close(a);
	state_close(b);
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("cannot remove %s", dir);
	}
	return done_testing();
}
