/*
 * test_state_rows.c - state_query_rows, the one loop that reads a query's
 * rows into an array: every row in order past the array's first growth,
 * none as an empty array, a fill that fails and a step that fails each
 * leave nothing and free what was filled, a statement that does not
 * prepare says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state_rows.h"
#include "tap.h"

static char dir[] = "/tmp/test_state_rows.XXXXXX";
static char path[256];

struct item {
	long long id;
	char *what;
};

static int fail_at;              /* the row whose fill fails (1-based; 0 none) */
static int filled;               /* rows filled since the last reset */
static size_t dropped = (size_t)-1;   /* what drop was given, -1 if not called */

static int fill(struct state_db *db, sqlite3_stmt *st, void *v, burst_err_t *err)
{
	struct item *it = v;

	(void)db;
	if (it->what || it->id) {
		burst_err_set(err, "item %d not zeroed", filled);
		return -1;
	}
	it->id = sqlite3_column_int64(st, 0);
	it->what = strdup((const char *)sqlite3_column_text(st, 1));
	if (++filled == fail_at) {
		burst_err_set(err, "row %d refused", filled);
		return -1;
	}
	return 0;
}

static void drop(void *v, size_t n)
{
	struct item *items = v;

	dropped = n;
	while (n)
		free(items[--n].what);
	free(items);
}

static void bind_node(sqlite3_stmt *st, const void *arg)
{
	sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
}

static void reset(void)
{
	fail_at = 0;
	filled = 0;
	dropped = (size_t)-1;
}

int main(void)
{
	static const struct state_rows rows = { sizeof(struct item), fill, drop, "read the test's events" };
	static const char sql[] = "SELECT id, what FROM events WHERE node = ?1 ORDER BY id";
	struct state_db *db;
	burst_err_t err;
	struct item *items;
	void *v;
	size_t n, i;
	bool inorder = true;
	char what[32];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/agent.db", dir);
	db = state_open(path, &err);
	if (!ok(db != NULL, "a state database"))
		return done_testing();
	/* 40 events of n1 (past the first growth, 16) and one of n2 */
	for (i = 0; i < 40; i++) {
		snprintf(what, sizeof(what), "e%zu", i);
		state_event(db, "n1", what, NULL, &err);
	}
	state_event(db, "n2", "other", NULL, &err);

	reset();
	is_num(state_query_rows(db, sql, bind_node, "n1", &rows, &v, &n, &err), 0, "the rows of n1");
	items = v;
	is_num(n, 40, "... all 40");
	for (i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "e%zu", i);
		if (strcmp(items[i].what, what) || (i && items[i].id <= items[i - 1].id))
			inorder = false;
	}
	ok(inorder, "... in the query's order, each filled once");
	is_num(dropped, (size_t)-1, "... and nothing dropped");
	drop(v, n);

	reset();
	is_num(state_query_rows(db, sql, bind_node, "n3", &rows, &v, &n, &err), 0, "no row: not an error");
	ok(v == NULL && n == 0, "... and no array");

	reset();
	fail_at = 20;
	is_num(state_query_rows(db, sql, bind_node, "n1", &rows, &v, &n, &err), -1, "a fill that fails: -1");
	ok(v == NULL && n == 0, "... nothing in out");
	is_num(dropped, 20, "... the 20 rows filled (the failing one too) dropped");
	has_str(err.msg, "row 20 refused", "... with the fill's error");

	reset();
	is_num(state_query_rows(db, "SELECT id, what FROM no_such_table", NULL, NULL, &rows, &v, &n, &err), -1,
	       "a statement that does not prepare: -1");
	has_str(err.msg, "prepare", "... saying so");
	has_str(err.msg, "no_such_table", "... with SQLite's reason");
	is_num(dropped, (size_t)-1, "... and nothing to drop");

	/* a step that fails after rows were filled: abs() of the smallest
	 * integer overflows on the third row */
	reset();
	is_num(state_query_rows(db, "SELECT x, 'w' FROM (SELECT 1 AS k, 1 AS x UNION ALL SELECT 2, 2"
				" UNION ALL SELECT 3, abs(-9223372036854775807 - 1))",
				NULL, NULL, &rows, &v, &n, &err), -1, "a step that fails: -1");
	ok(v == NULL && n == 0, "... nothing in out");
	is_num(dropped, 2, "... the two rows before it dropped");
	has_str(err.msg, "read the test's events", "... saying what was being read");

	state_close(db);
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
