/*
 * test_state_batch.c - batches of state changes (state_begin/state_commit):
 * one commit for the transitions of many nodes, nothing of a batch seen or
 * durable before its commit (also when the writer dies without it), and
 * the one-by-one transitions unchanged outside a batch; and
 * state_nodes_due, which gives the agent's periodic checks only the rows
 * they may act on.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "state.h"
#include "strutil.h"
#include "tap.h"

static char dir[] = "/tmp/test_state_batch.XXXXXX";
static char path[256];

static int move(struct state_db *db, const char *node, const char *from, const char *to)
{
	struct node_rec r;
	burst_err_t err;
	int rc;

	memset(&r, 0, sizeof(r));
	r.attempt = 1;
	rc = state_transition(db, node, (enum node_state)node_state_parse(from), &r,
			      (enum node_state)node_state_parse(to), "batch test", &err);
	if (rc < 0)
		diag("%s", err.msg);
	return rc;
}

/* node's state as a fresh reader sees it ("" if none) */
static const char *seen(const char *node, char *buf, size_t len)
{
	struct state_db *ro;
	struct node_rec *v;
	burst_err_t err;
	bool missing;
	size_t n, i;

	buf[0] = '\0';
	ro = state_open_readonly(path, &missing, &err);
	if (ro && state_nodes_all(ro, &v, &n, &err) == 0) {
		for (i = 0; i < n; i++)
			if (!strcmp(v[i].name, node))
				snprintf(buf, len, "%s", node_state_name(v[i].state));
		state_nodes_free(v, n);
	}
	state_close(ro);
	return buf;
}

static size_t events_of(const char *node)
{
	struct state_db *ro;
	struct event_rec *ev;
	struct event_query q;
	burst_err_t err;
	bool missing;
	size_t n = 0;

	memset(&q, 0, sizeof(q));
	q.node = node;
	ro = state_open_readonly(path, &missing, &err);
	if (ro && state_events(ro, &q, &ev, &n, &err) == 0)
		state_events_free(ev, n);
	state_close(ro);
	return n;
}

/*
 * In a child: a batch moving node, committed or not, then the process is
 * killed (SIGKILL: no state_close, no exit handler). Returns 0 when it got
 * that far, else -1.
 */
static int child_batch(const char *node, bool commit)
{
	int fds[2], status;
	char c = 0;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		burst_err_t err;
		struct state_db *db = state_open(path, &err);
		close(fds[0]);
		if (!db || state_begin(db, &err) < 0 || move(db, node, "powered_down", "requested") != 1)
			_exit(1);
		if (commit && state_commit(db, &err) < 0)
			_exit(1);
		/* there: the parent kills it */
		if (write(fds[1], "k", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &c, 1) == 1)
		kill(pid, SIGKILL);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return c == 'k' && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -1;
}

int main(void)
{
	struct state_db *w;
	burst_err_t err;
	char buf[64];

	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/agent.db", dir);
	w = state_open(path, &err);
	ok(w != NULL, "state_open");
	if (!w)
		return done_testing();
	state_node_ensure(w, "b-1", "cpu", &err);
	state_node_ensure(w, "b-2", "cpu", &err);
	state_node_ensure(w, "b-3", "cpu", &err);
	state_node_ensure(w, "b-4", "cpu", &err);
	ok(!state_in_batch(w), "no batch open at first");
	ok(state_commit(w, &err) == 0, "state_commit without a batch is 0 (nothing to do)");

	/* a batch: seen by nobody until its commit */
	ok(state_begin(w, &err) == 0, "state_begin");
	ok(state_in_batch(w), "... a batch is open");
	ok(state_begin(w, &err) < 0, "state_begin in a batch fails (not nested)");
	has_str(err.msg, "not nested", "... saying so");
	ok(state_in_batch(w), "... and the batch stays open");
	is_num(move(w, "b-1", "powered_down", "requested"), 1, "a transition in the batch");
	is_num(move(w, "b-2", "powered_down", "requested"), 1, "another");
	is_num(move(w, "b-1", "requested", "launching"), 1, "a second one of b-1 (sees the first)");
	is_num(move(w, "b-3", "launching", "booting"), 0, "a compare-and-set that misses is 0 in a batch too");
	ok(state_request_add(w, "req-1", &err) == 0, "a request taken in the batch");
	is_str(seen("b-1", buf, sizeof(buf)), "powered_down", "another connection does not see b-1 moved before the commit");
	is_num((double)events_of("b-1"), 0, "... nor its events");
	ok(state_commit(w, &err) == 0, "state_commit");
	ok(!state_in_batch(w), "... closes the batch");
	is_str(seen("b-1", buf, sizeof(buf)), "launching", "after the commit b-1 is launching");
	is_str(seen("b-2", buf, sizeof(buf)), "requested", "... b-2 requested");
	is_str(seen("b-3", buf, sizeof(buf)), "powered_down", "... b-3 did not move");
	is_num((double)events_of("b-1"), 2, "... b-1 has its two events");
	is_num((double)events_of("b-3"), 0, "... b-3 none");
	is_num(state_request_seen(w, "req-1", &err), 1, "... the request is seen");

	/* rolled back: nothing happened */
	ok(state_begin(w, &err) == 0, "another batch");
	is_num(move(w, "b-3", "powered_down", "requested"), 1, "b-3 moves in it");
	state_rollback(w);
	ok(!state_in_batch(w), "state_rollback closes the batch");
	is_str(seen("b-3", buf, sizeof(buf)), "powered_down", "... and b-3 did not move");
	is_num((double)events_of("b-3"), 0, "... no event of it");

	/* outside a batch, one transition is one commit, as before */
	is_num(move(w, "b-2", "requested", "launching"), 1, "a transition outside a batch");
	is_str(seen("b-2", buf, sizeof(buf)), "launching", "... is seen at once");
	state_close(w);

	/* the writer dies: a batch not committed is not there, a committed one is */
	is_num(child_batch("b-3", false), 0, "a writer is killed with a batch open");
	is_str(seen("b-3", buf, sizeof(buf)), "powered_down", "... none of it was written");
	is_num((double)events_of("b-3"), 0, "... no event");
	is_num(child_batch("b-4", true), 0, "a writer is killed after committing a batch");
	is_str(seen("b-4", buf, sizeof(buf)), "requested", "... all of it is there");
	is_num((double)events_of("b-4"), 1, "... with its event");
	w = state_open(path, &err);
	ok(w != NULL && move(w, "b-3", "powered_down", "requested") == 1, "the database is usable after the crash");

	/* state_nodes_due */
	{
		struct node_rec r;
		char **v;
		double t = (double)time(NULL);

		memset(&r, 0, sizeof(r));
		state_node_ensure(w, "c-1", "cpu", &err);
		state_node_ensure(w, "c-2", "cpu", &err);
		state_node_ensure(w, "c-3", "cpu", &err);
		r.cooldown_until = t - 5;
		state_transition(w, "c-1", NS_POWERED_DOWN, &r, NS_POWERED_DOWN, "cooled", &err);
		r.cooldown_until = t + 600;
		state_transition(w, "c-2", NS_POWERED_DOWN, &r, NS_POWERED_DOWN, "cooling", &err);
		v = state_nodes_due(w, NS_POWERED_DOWN, STATE_COOLDOWN_UNTIL, t, &err);
		ok(v && v[0] && !strcmp(v[0], "c-1") && !v[1],
		   "due by cooldown: only c-1 (over), not c-2 (cooling) nor nodes without one");
		state_names_free(v);
		v = state_nodes_due(w, NS_POWERED_DOWN, STATE_COOLDOWN_UNTIL, t + 3600, &err);
		ok(v && v[0] && v[1] && !strcmp(v[0], "c-1") && !strcmp(v[1], "c-2") && !v[2],
		   "... an hour later c-1 and c-2, by name");
		state_names_free(v);
		v = state_nodes_due(w, NS_REQUESTED, STATE_SINCE, t + 60, &err);
		ok(v && v[0] && v[1] && !strcmp(v[0], "b-3") && !strcmp(v[1], "b-4") && !v[2],
		   "due by since: the two requested nodes (b-3, b-4), moved before a minute from now");
		state_names_free(v);
		v = state_nodes_due(w, NS_REQUESTED, STATE_SINCE, t - 3600, &err);
		ok(v && !v[0], "... none moved before an hour ago");
		state_names_free(v);
	}
	state_close(w);

	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
