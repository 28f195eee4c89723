/*
 * test_state_pool.c - a warm pool's members in agent.db (state_pool_add,
 * state_pool_del, state_pool): every column read back, by node set and in
 * the order they were stopped, replaced by (provider, instance), forgotten;
 * read through a read-only handle as burstctl would; and a deposed agent's
 * write refused (the table is fenced as the others are).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "tap.h"

static const char *list(struct state_db *db, const char *nodeset)
{
	static char buf[512];
	struct pool_member *v;
	burst_err_t err;
	size_t n, i;

	buf[0] = '\0';
	if (state_pool(db, nodeset, &v, &n, &err) < 0) {
		snprintf(buf, sizeof(buf), "error: %.400s", err.msg);
		return buf;
	}
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s/%s", i ? " " : "", v[i].nodeset,
			 v[i].instance);
	state_pool_free(v, n);
	return buf;
}

int main(void)
{
	char dir[] = "/tmp/test_state_pool.XXXXXX", path[256], cmd[300];
	struct state_db *a, *b, *ro;
	struct pool_member m, *v = NULL;
	struct state_lease none, l;
	burst_err_t err;
	long long ea, eb;
	size_t n = 0;

	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/agent.db", dir);
	a = state_open(path, &err);
	ok(a != NULL, "state_open");
	if (!a)
		return done_testing();
	is_str(list(a, NULL), "", "a new database has no member");

	memset(&m, 0, sizeof(m));
	m.provider = "aws1";
	m.instance = "i-2";
	m.node = "burst-2";
	m.nodeset = "gpu";
	m.type = "g5.xlarge";
	m.region = "us-east-1";
	m.admitted_at = 100.5;
	m.stopped_at = 200.0;
	m.price = 0.0033;
	m.provenance_id = "prov-2";
	m.record = "{\"kernel\":{\"release\":\"6.1\"}}";
	m.attestation = "att-2";
	m.blessings = "b-7";
	m.acceptance = "suite-3";
	ok(state_pool_add(a, &m, &err) == 0, "a member is added");
	m.instance = "i-1";
	m.stopped_at = 150.0;
	m.attestation = NULL;
	m.blessings = NULL;
	m.acceptance = NULL;
	ok(state_pool_add(a, &m, &err) == 0, "a second, stopped earlier, without attestation or versions");
	m.instance = "i-9";
	m.nodeset = "cpu";
	m.stopped_at = 300.0;
	ok(state_pool_add(a, &m, &err) == 0, "a third, of another node set");
	is_str(list(a, NULL), "gpu/i-1 gpu/i-2 cpu/i-9", "every member, the longest stopped first");
	is_str(list(a, "gpu"), "gpu/i-1 gpu/i-2", "a node set's members");
	is_str(list(a, "none"), "", "a node set without members");

	ok(state_pool(a, "gpu", &v, &n, &err) == 0 && n == 2, "read back");
	if (n == 2) {
		const struct pool_member *p = &v[1];
		ok(!strcmp(p->provider, "aws1") && !strcmp(p->instance, "i-2") && !strcmp(p->node, "burst-2") &&
		   !strcmp(p->type, "g5.xlarge") && !strcmp(p->region, "us-east-1") && p->admitted_at == 100.5 &&
		   p->stopped_at == 200.0 && p->price == 0.0033 && !strcmp(p->provenance_id, "prov-2") &&
		   !strcmp(p->record, "{\"kernel\":{\"release\":\"6.1\"}}") && !strcmp(p->attestation, "att-2") &&
		   !strcmp(p->blessings, "b-7") && !strcmp(p->acceptance, "suite-3"),
		   "every column of i-2 as written");
		ok(v[0].attestation == NULL && !strcmp(v[0].blessings, "") && !strcmp(v[0].acceptance, ""),
		   "i-1: no attestation (NULL), no versions (\"\")");
	}
	state_pool_free(v, n);

	m.instance = "i-2";
	m.nodeset = "gpu";
	m.stopped_at = 400.0;
	ok(state_pool_add(a, &m, &err) == 0, "i-2 added again (stopped again)");
	is_str(list(a, NULL), "gpu/i-1 cpu/i-9 gpu/i-2", "... replaces its row: one i-2, now the last stopped");
	ok(state_pool_del(a, "aws1", "i-1", &err) == 0, "i-1 is taken");
	is_str(list(a, NULL), "cpu/i-9 gpu/i-2", "... and is no member any more");
	ok(state_pool_del(a, "aws1", "i-1", &err) == 0, "forgetting it again is fine");
	ok(state_pool_del(a, "other", "i-9", &err) == 0 && !strcmp(list(a, "cpu"), "cpu/i-9"),
	   "a member is known by its provider and instance both");

	ro = state_open_readonly(path, NULL, &err);
	ok(ro != NULL && !strcmp(list(ro, NULL), "cpu/i-9 gpu/i-2"), "a read-only handle reads the pool");
	state_close(ro);

	/* a deposed agent writes no member */
	b = state_open(path, &err);
	memset(&none, 0, sizeof(none));
	ok(b && state_lease_take(a, &none, "host-a", "boot-a", 5, &ea, &err) == 1, "a holds the lease");
	ok(b && state_lease_get(b, &l, &err) == 1 && state_lease_renew(a, ea, 0, &err) == 1 &&
	   state_lease_get(b, &l, &err) == 1 && state_lease_take(b, &l, "host-b", "boot-b", 5, &eb, &err) == 1,
	   "b takes it over once a let it go");
	m.instance = "i-3";
	ok(state_pool_add(a, &m, &err) == -1 && strstr(err.msg, "fenced"), "a's member is refused: %s", err.msg);
	ok(state_pool_del(a, "aws1", "i-2", &err) == -1, "and so is a's forgetting one");
	ok(b && state_pool_add(b, &m, &err) == 0, "b's is written");
	is_str(list(b, NULL), "cpu/i-9 gpu/i-2 gpu/i-3", "the pool as b left it");
	state_close(b);
	state_close(a);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
