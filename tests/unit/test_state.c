/*
 * test_state.c - the read-only views of the agent's state database: what
 * the agent writes through state_transition is what burstctl reads back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state.h"
#include "strutil.h"
#include "tap.h"

static char dir[] = "/tmp/test_state.XXXXXX";
static char path[256];

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int move(struct state_db *db, const char *node, const char *from, const char *to,
		const char *instance, const char *error, const char *detail)
{
	struct node_rec r;
	burst_err_t err;
	int rc;

	memset(&r, 0, sizeof(r));
	r.attempt = 1;
	r.instance = (char *)instance;
	r.address = (char *)"10.0.0.7";
	r.token = (char *)"s3cret-token";
	r.job = 42;
	r.last_error = (char *)error;
	if (!strcmp(to, "admitted"))
		r.provenance_id = (char *)"sha256:0123abcd";
	rc = state_transition(db, node, (enum node_state)node_state_parse(from), &r,
			      (enum node_state)node_state_parse(to), detail, &err);
	if (rc < 0)
		diag("%s", err.msg);
	return rc;
}

int main(void)
{
	struct state_db *w, *ro;
	struct node_rec *nodes;
	struct event_rec *ev;
	struct event_query q;
	burst_err_t err;
	size_t n, i;
	long long last;
	bool missing;
	double t0;

	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/agent.db", dir);

	/* a database that is not there */
	ro = state_open_readonly(path, &missing, &err);
	ok(ro == NULL, "a missing database does not open");
	ok(missing, "... and is reported as missing");
	has_str(err.msg, "no agent state at ", "... with the message for the admin");
	has_str(err.msg, path, "... naming the path");
	ok(access(path, F_OK) != 0, "... and is not created by the read-only open");

	/* the agent's side */
	w = state_open(path, &err);
	ok(w != NULL, "state_open creates the database");
	if (!w)
		return done_testing();
	state_node_ensure(w, "burst-2", "cpu", &err);
	state_node_ensure(w, "burst-1", "cpu", &err);
	state_node_ensure(w, "gpu-1", "gpu", &err);
	t0 = realtime();
	ok(move(w, "burst-1", "powered_down", "requested", NULL, NULL, "spool-1") == 1, "transition 1");
	ok(move(w, "burst-1", "requested", "launching", "i-0001", NULL, "i-0001") == 1, "transition 2");
	ok(move(w, "gpu-1", "powered_down", "requested", NULL, NULL, NULL) == 1, "transition 3");
	ok(move(w, "gpu-1", "requested", "launching", NULL, "capacity: no g5 in us-east-1", "ICE") == 1,
	   "transition 4");
	ok(move(w, "burst-1", "launching", "booting", "i-0001", NULL, "instance started") == 1, "transition 5");

	/* the launches due for a retry, and the early nodes, without reading
	 * every record (a burst has thousands launching and booting; a
	 * database of its own: the transitions here write events) */
	{
		struct node_rec r;
		struct state_db *dd;
		char dp[300], **names;
		snprintf(dp, sizeof(dp), "%s/due.db", dir);
		dd = state_open(dp, &err);
		ok(dd && state_node_ensure(dd, "d-1", "cpu", &err) == 0 && state_node_ensure(dd, "d-2", "cpu", &err) == 0,
		   "a database for the due and early lists");
		memset(&r, 0, sizeof(r));
		r.attempt = 1;
		ok(dd && state_transition(dd, "d-2", NS_POWERED_DOWN, &r, NS_LAUNCHING, "launching", &err) == 1,
		   "d-2 launching, no retry time");
		r.retry_at = t0 + 100;
		r.early = true;
		ok(dd && state_transition(dd, "d-1", NS_POWERED_DOWN, &r, NS_LAUNCHING, "retry later", &err) == 1,
		   "d-1 launching: a retry in 100 s, launched early");
		names = dd ? state_nodes_due(dd, NS_LAUNCHING, STATE_RETRY_AT, t0 + 50, &err) : NULL;
		ok(names && !names[0], "not due 50 s on");
		state_names_free(names);
		names = dd ? state_nodes_due(dd, NS_LAUNCHING, STATE_RETRY_AT, t0 + 100, &err) : NULL;
		ok(names && names[0] && !strcmp(names[0], "d-1") && !names[1], "due 100 s on: d-1 only (d-2 has none)");
		state_names_free(names);
		names = dd ? state_nodes_early(dd, NS_LAUNCHING, &err) : NULL;
		ok(names && names[0] && !strcmp(names[0], "d-1") && !names[1], "the early launching node: d-1");
		state_names_free(names);
		names = dd ? state_nodes_early(dd, NS_BOOTING, &err) : NULL;
		ok(names && !names[0], "no early booting node");
		state_names_free(names);
		state_close(dd);
		unlink(dp);
	}

	/* statements are prepared once per connection, not once per call
	 * (a database of its own: the transitions here write events) */
	{
		char pp[300];
		struct state_db *pd;
		unsigned long p0;
		struct node_rec r;
		int got = 0;
		snprintf(pp, sizeof(pp), "%s/prep.db", dir);
		pd = state_open(pp, &err);
		ok(pd && state_node_ensure(pd, "p-1", "cpu", &err) == 0, "a second database for the prepares");
		p0 = pd ? state_prepares(pd) : 0;
		for (i = 0; pd && i < 200; i++) {
			char **names;
			got += state_node_get(pd, "p-1", &r, &err) == 1 && r.state == NS_POWERED_DOWN;
			state_node_clear(&r);
			got += move(pd, "p-1", "powered_down", "powered_down", NULL, NULL, "again") == 1;
			names = state_nodes_in(pd, NS_POWERED_DOWN, &err);
			got += names && names[0] && !strcmp(names[0], "p-1");
			state_names_free(names);
		}
		is_num(got, 600, "200 reads, transitions and listings all done");
		ok(pd && state_prepares(pd) - p0 <= 8, "with %lu statements prepared for 600 calls (each SQL once)",
		   pd ? state_prepares(pd) - p0 : 0);
		state_close(pd);
		unlink(pp);
	}

	/* a state's names with their jobs, in name order (past the lists'
	 * first room), and the names alone the same */
	{
		char jp[300], nm[32];
		struct state_db *jd;
		long *jobs = NULL;
		char **names, **plain;
		int good = 0, k;
		snprintf(jp, sizeof(jp), "%s/jobs.db", dir);
		jd = state_open(jp, &err);
		ok(jd != NULL, "a database for the names with jobs");
		for (k = 0; jd && k < 100; k++) {
			struct node_rec r;
			snprintf(nm, sizeof(nm), "j-%03d", k);
			state_node_ensure(jd, nm, "cpu", &err);
			memset(&r, 0, sizeof(r));
			r.job = 1000 + k;
			/* the odd ones requested, for their jobs */
			if (k % 2)
				state_transition(jd, nm, NS_POWERED_DOWN, &r, NS_REQUESTED, "test", &err);
		}
		names = jd ? state_nodes_in_jobs(jd, NS_REQUESTED, &jobs, &err) : NULL;
		plain = jd ? state_nodes_in(jd, NS_REQUESTED, &err) : NULL;
		for (k = 0; names && plain && names[k] && k < 50; k++) {
			snprintf(nm, sizeof(nm), "j-%03d", 2 * k + 1);
			good += !strcmp(names[k], nm) && jobs[k] == 1000 + 2 * k + 1 && plain[k] && !strcmp(plain[k], nm);
		}
		is_num(good, 50, "50 requested nodes listed in name order, each with its job");
		{
			struct node_rec b, r;
			memset(&r, 0, sizeof(r));
			r.instance = (char *)"i-brief";
			r.provider = (char *)"aws1";
			r.token = (char *)"tok";
			r.job = 7;
			ok(jd && state_transition(jd, "j-001", NS_REQUESTED, &r, NS_BOOTING, "test", &err) == 1 &&
			   state_node_get_brief(jd, "j-001", &b, &err) == 1 && b.state == NS_BOOTING &&
			   b.instance && !strcmp(b.instance, "i-brief") && b.provider && !strcmp(b.provider, "aws1") &&
			   !b.token && !b.job && !b.name, "the brief read: state, instance and provider only");
			state_node_clear(&b);
			ok(jd && state_node_get_brief(jd, "j-none", &b, &err) == 0, "the brief read of no such node: 0");
			state_node_clear(&b);
		}
		{
			/* every node, briefly (the reconciler's read): the same rows
			 * and the six fields it needs as state_nodes_all, no other */
			struct node_rec *full = NULL, *br = NULL;
			size_t nf = 0, nb = 0, same = 0, row;
			ok(jd && state_nodes_all(jd, &full, &nf, &err) == 0 && state_nodes_brief(jd, &br, &nb, &err) == 0 &&
			   nf == nb, "state_nodes_brief reads as many nodes as state_nodes_all");
			is_num((double)nb, 100, "... the 100 nodes");
			for (row = 0; row < nb && row < nf; row++) {
				const struct node_rec *f = &full[row], *b = &br[row];
				bool eq = b->name && !strcmp(b->name, f->name) && b->state == f->state &&
					  b->attempt == f->attempt && b->since == f->since &&
					  (b->instance ? f->instance && !strcmp(b->instance, f->instance) : !f->instance) &&
					  (b->provider ? f->provider && !strcmp(b->provider, f->provider) : !f->provider) &&
					  !b->nodeset && !b->token && !b->address && !b->job && !b->region;
				same += eq;
			}
			is_num((double)same, (double)nb, "... each row's name, state, attempt, since, instance and provider, and nothing else");
			for (row = 0; row < nb && strcmp(br[row].name, "j-001"); row++)
				;
			ok(row < nb && br[row].state == NS_BOOTING && br[row].instance && !strcmp(br[row].instance, "i-brief") &&
			   br[row].provider && !strcmp(br[row].provider, "aws1") && br[row].since > 0,
			   "... j-001: booting on i-brief of aws1");
			state_nodes_free(full, nf);
			state_nodes_free(br, nb);
		}
		ok(names && !names[50] && plain && !plain[50], "and no more");
		state_names_free(names);
		state_names_free(plain);
		free(jobs);
		state_close(jd);
		unlink(jp);
	}

	/* the database holds live join tokens: none of its files is for others */
	{
		const char *sfx[] = { "", "-wal", "-shm" };
		char f[600];
		struct stat st;
		for (i = 0; i < 3; i++) {
			snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
			if (stat(f, &st) < 0)
				st.st_mode = 0;
			ok((st.st_mode & 0777) == 0600, "agent.db%s is mode 0600 (%03o)", sfx[i],
			   (unsigned)(st.st_mode & 0777));
		}
	}

	/* the reader, while the writer keeps the database open */
	ro = state_open_readonly(path, &missing, &err);
	ok(ro != NULL, "state_open_readonly opens the agent's database");
	if (!ro) {
		diag("%s", err.msg);
		return done_testing();
	}
	ok(!missing, "... and does not call it missing");

	ok(state_nodes_all(ro, &nodes, &n, &err) == 0, "state_nodes_all");
	is_num((double)n, 3, "three nodes");
	if (n == 3) {
		is_str(nodes[0].name, "burst-1", "ordered by name: burst-1 first");
		is_str(nodes[1].name, "burst-2", "... burst-2");
		is_str(nodes[2].name, "gpu-1", "... gpu-1");
		is_str(node_state_name(nodes[0].state), "booting", "burst-1 is booting");
		is_str(nodes[0].nodeset, "cpu", "burst-1 is in node set cpu");
		is_str(nodes[0].instance, "i-0001", "burst-1's instance");
		is_str(nodes[0].address, "10.0.0.7", "burst-1's address");
		is_num(nodes[0].attempt, 1, "burst-1's attempt");
		is_num((double)nodes[0].job, 42, "burst-1's job");
		double t1 = realtime();

		/* the same clock as the store's: time() reads a coarse clock that
		 * may still say the last second */
		if (!ok(nodes[0].since >= t0 && nodes[0].since <= t1,
			"burst-1's since is the time of its last transition"))
			diag("since %.6f, not in [%.6f, %.6f]", nodes[0].since, t0, t1);
		is_str(node_state_name(nodes[1].state), "powered_down", "burst-2 never moved");
		ok(nodes[1].instance == NULL, "burst-2 has no instance");
		is_str(node_state_name(nodes[2].state), "launching", "gpu-1 is launching");
		is_str(nodes[2].last_error, "capacity: no g5 in us-east-1", "gpu-1's last error");
	}
	state_nodes_free(nodes, n);

	/* every event, oldest first */
	memset(&q, 0, sizeof(q));
	ok(state_events(ro, &q, &ev, &n, &err) == 0, "state_events (all)");
	is_num((double)n, 5, "five events");
	if (n == 5) {
		is_str(ev[0].what, "powered_down -> requested", "first event");
		is_str(ev[0].node, "burst-1", "... of burst-1");
		is_str(ev[0].detail, "spool-1", "... with its detail");
		is_str(ev[1].what, "requested -> launching", "second event");
		is_str(ev[1].detail, "i-0001", "... with the instance as detail");
		ok(ev[2].detail == NULL, "an event without detail has NULL detail");
		is_str(ev[4].what, "launching -> booting", "last event");
		for (i = 1; i < n; i++)
			if (ev[i].id <= ev[i - 1].id)
				break;
		ok(i == n, "ids increase");
		ok(ev[0].time >= t0 - 1, "events carry their time");
	}
	/* after id N */
	if (n == 5) {
		q.after_id = ev[2].id;
		state_events_free(ev, n);
		ok(state_events(ro, &q, &ev, &n, &err) == 0, "state_events after the third id");
		is_num((double)n, 2, "... gives the last two");
		if (n == 2)
			is_str(ev[0].what, "requested -> launching", "... the fourth first");
	}
	state_events_free(ev, n);

	/* one node */
	memset(&q, 0, sizeof(q));
	q.node = "gpu-1";
	ok(state_events(ro, &q, &ev, &n, &err) == 0, "state_events for gpu-1");
	is_num((double)n, 2, "gpu-1 has two events");
	for (i = 0; i < n; i++)
		is_str(ev[i].node, "gpu-1", "event %zu is gpu-1's", i);
	state_events_free(ev, n);

	/* limits: the oldest and the newest */
	memset(&q, 0, sizeof(q));
	q.limit = 2;
	ok(state_events(ro, &q, &ev, &n, &err) == 0 && n == 2, "limit 2 gives two");
	if (n == 2) {
		is_str(ev[0].what, "powered_down -> requested", "... the oldest two, oldest first");
		is_str(ev[1].what, "requested -> launching", "... and the second");
	}
	state_events_free(ev, n);
	q.newest = true;
	ok(state_events(ro, &q, &ev, &n, &err) == 0 && n == 2, "newest 2 gives two");
	if (n == 2) {
		is_str(ev[0].what, "requested -> launching", "... the newest two, oldest first (gpu-1's)");
		is_str(ev[0].node, "gpu-1", "... the fourth event");
		is_str(ev[1].what, "launching -> booting", "... then the fifth");
	}
	state_events_free(ev, n);

	/* since: none is from the future, all are from the last minute */
	memset(&q, 0, sizeof(q));
	q.since = (double)time(NULL) + 3600;
	ok(state_events(ro, &q, &ev, &n, &err) == 0 && n == 0 && ev == NULL,
	   "no event since an hour from now");
	state_events_free(ev, n);
	q.since = t0 - 60;
	ok(state_events(ro, &q, &ev, &n, &err) == 0 && n == 5, "all five since a minute ago");
	state_events_free(ev, n);

	/* the reader sees what the writer writes next (burstctl events --follow) */
	ok(state_events_last_id(ro, &last, &err) == 0, "state_events_last_id");
	ok(move(w, "burst-1", "booting", "admitted", "i-0001", NULL, "i-0001") == 1, "transition 6");
	memset(&q, 0, sizeof(q));
	q.after_id = last;
	ok(state_events(ro, &q, &ev, &n, &err) == 0 && n == 1, "the reader sees the new event");
	if (n == 1) {
		is_str(ev[0].what, "booting -> admitted", "... booting -> admitted");
		ok(ev[0].id > last, "... with a newer id");
	}
	state_events_free(ev, n);
	ok(state_nodes_all(ro, &nodes, &n, &err) == 0 && n == 3 && nodes[0].state == NS_ADMITTED,
	   "... and the node's new state");
	if (n == 3) {
		is_str(nodes[0].provenance_id, "sha256:0123abcd", "... and its provenance id");
		ok(nodes[1].provenance_id == NULL, "a node never admitted has no provenance id");
	}
	state_nodes_free(nodes, n);
	{
		/* the cooldowns in force, in one read (the agent's metrics) */
		char **keys;
		double *until, tnow = (double)time(NULL);
		size_t nk, k;
		state_cooldown_hit(w, "aws/p4d.24xlarge@us-east-1", 60, 3600, "no capacity", &err);
		state_cooldown_hit(w, "aws/g5.xlarge@us-west-2", 60, 3600, "quota", &err);
		ok(state_cooldowns_active(w, tnow, &keys, &until, &nk, &err) == 0 && nk == 2 &&
		   !strcmp(keys[0], "aws/g5.xlarge@us-west-2") && !strcmp(keys[1], "aws/p4d.24xlarge@us-east-1") &&
		   until[0] > tnow + 50 && until[1] > tnow + 50, "state_cooldowns_active: both, in key order");
		for (k = 0; k < nk; k++)
			free(keys[k]);
		free(keys);
		free(until);
		ok(state_cooldowns_active(w, tnow + 7200, &keys, &until, &nk, &err) == 0 && nk == 0 && !keys,
		   "... none once they are over");
	}
	{
		/* EarlyLaunch=: a node launched at its job's allocation is marked
		 * early, durably, until the agent clears it */
		struct node_rec e, got;
		memset(&e, 0, sizeof(e));
		e.job = 77;
		e.early = true;
		ok(state_transition(w, "burst-2", NS_POWERED_DOWN, &e, NS_REQUESTED, "early", &err) == 1 &&
		   state_node_get(w, "burst-2", &got, &err) == 1 && got.early && got.job == 77,
		   "a node launched at allocation is read back as early, with its job");
		state_node_clear(&got);
		e.early = false;
		ok(state_transition(w, "burst-2", NS_REQUESTED, &e, NS_REQUESTED, "served", &err) == 1 &&
		   state_node_get(w, "burst-2", &got, &err) == 1 && !got.early,
		   "... and no longer once the mark is cleared");
		state_node_clear(&got);
	}
	state_close(w);

	/* the agent is down: the reader still reads */
	ok(state_events_last_id(ro, &last, &err) == 0 && last >= 6, "reading after the writer closed");
	state_close(ro);
	ro = state_open_readonly(path, &missing, &err);
	ok(ro != NULL, "opening read-only while no agent runs");
	ok(ro && state_nodes_all(ro, &nodes, &n, &err) == 0 && n == 3, "... reads the nodes");
	if (ro)
		state_nodes_free(nodes, n);
	state_close(ro);

	/* a file that is not the agent's database */
	{
		char other[300];
		FILE *f;
		snprintf(other, sizeof(other), "%s/other.db", dir);
		f = fopen(other, "w");
		fputs("not a database at all, just some text that is long enough to be a header......\n", f);
		fclose(f);
		ro = state_open_readonly(other, &missing, &err);
		ok(ro == NULL && !missing, "a file that is not a database does not open, and is not missing");
		has_str(err.msg, other, "... the message names the file");
		state_close(ro);
		unlink(other);
	}

	/* a database left 0644 by an older agent is made 0600 when opened */
	{
		char old[600];
		struct stat st;
		struct state_db *o;
		FILE *f;
		snprintf(old, sizeof(old), "%s/old.db", dir);
		f = fopen(old, "w");
		if (f)
			fclose(f);
		if (chmod(old, 0644) < 0)
			diag("chmod %s: failed", old);
		o = state_open(old, &err);
		if (stat(old, &st) < 0)
			st.st_mode = 0;
		ok(o && (st.st_mode & 0777) == 0600, "an existing 0644 database is made 0600 (%03o)",
		   (unsigned)(st.st_mode & 0777));
		state_close(o);
	}

	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
