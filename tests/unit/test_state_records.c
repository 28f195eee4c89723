/*
 * test_state_records.c - state_records: the provenance records the agent
 * stores (state_record_add) read back through a read-only handle, as
 * burstctl provenance reads them: a node's history, the newest, and the
 * newest admitted one at a given time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "state.h"
#include "strutil.h"
#include "tap.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* add a record, and return a time strictly after it (and before the next) */
static double add(struct state_db *w, const char *node, const char *inst, const char *id,
		  const char *decision)
{
	burst_err_t err;
	double t;
	char rec[128];

	snprintf(rec, sizeof(rec), "{\"identity\":{\"instance_id\":\"%s\"}}", inst);
	if (state_record_add(w, node, inst, id, rec, decision, &err) < 0)
		diag("state_record_add: %s", err.msg);
	usleep(20000);
	t = now_s();
	usleep(20000);
	return t;
}

static const char *ids(const struct record_rec *v, size_t n)
{
	static char buf[256];
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "", v[i].provenance_id);
	return buf;
}

int main(void)
{
	char dir[] = "/tmp/test_state_records.XXXXXX", path[256], cmd[300];
	struct state_db *w, *ro;
	struct record_rec *v;
	struct record_query q;
	burst_err_t err;
	double before, t1, t2, t3, t4;
	size_t n;

	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/agent.db", dir);
	w = state_open(path, &err);
	ok(w != NULL, "state_open");
	if (!w)
		return done_testing();
	ro = state_open_readonly(path, NULL, &err);
	ok(ro != NULL, "state_open_readonly beside the writer");
	if (!ro)
		return done_testing();

	memset(&q, 0, sizeof(q));
	ok(state_records(ro, &q, &v, &n, &err) == 0 && n == 0 && v == NULL,
	   "no records: none read, and no array");

	before = now_s();
	usleep(20000);
	t1 = add(w, "gpu-1", "i-1", "a1", "admitted");
	t2 = add(w, "gpu-1", "i-2", "r2", "acceptance failed: nccl");
	t3 = add(w, "gpu-2", "i-3", "a3", "admitted");
	t4 = add(w, "gpu-1", "i-4", "a4", "admitted");
	(void)t4;

	q.node = "gpu-1";
	ok(state_records(ro, &q, &v, &n, &err) == 0, "a node's history");
	is_str(ids(v, n), "a1 r2 a4", "... every record of gpu-1, oldest first, no other node's");
	if (n == 3) {
		is_str(v[0].instance, "i-1", "... with the instance");
		is_str(v[1].decision, "acceptance failed: nccl", "... the decision");
		is_str(v[2].record, "{\"identity\":{\"instance_id\":\"i-4\"}}", "... and the record as stored");
		is_str(v[0].node, "gpu-1", "... and the node");
		ok(v[0].time < t1 && v[1].time > t1 && v[1].time < t2, "... and the times they were written");
		ok(v[0].id < v[1].id && v[1].id < v[2].id, "... ids increase");
	}
	state_records_free(v, n);

	q.newest_only = true;
	ok(state_records(ro, &q, &v, &n, &err) == 0, "the newest");
	is_str(ids(v, n), "a4", "... is gpu-1's last record");
	state_records_free(v, n);

	q.admitted_only = true;
	q.until = t2;
	ok(state_records(ro, &q, &v, &n, &err) == 0, "the newest admitted until t2");
	is_str(ids(v, n), "a1", "... is the first record: the rejected one is never in force");
	state_records_free(v, n);

	q.admitted_only = false;
	ok(state_records(ro, &q, &v, &n, &err) == 0, "the newest until t2, whatever the decision");
	is_str(ids(v, n), "r2", "... is the rejected one");
	state_records_free(v, n);

	q.until = before;
	ok(state_records(ro, &q, &v, &n, &err) == 0 && n == 0, "nothing until before the first record");
	state_records_free(v, n);

	q.node = NULL;
	q.until = t3;
	q.admitted_only = true;
	ok(state_records(ro, &q, &v, &n, &err) == 0, "every node's newest admitted until t3");
	is_str(ids(v, n), "a1 a3", "... one per node, by node");
	state_records_free(v, n);

	q.until = 0;
	ok(state_records(ro, &q, &v, &n, &err) == 0, "every node's newest admitted");
	is_str(ids(v, n), "a4 a3", "... gpu-1's last, then gpu-2's");
	state_records_free(v, n);

	state_close(ro);
	state_close(w);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
