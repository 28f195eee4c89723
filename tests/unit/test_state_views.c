/*
 * test_state_views.c - the face burstctl reads the agent's state through:
 * a database of this build's schema, or an older one of the same columns,
 * opens; a newer one is refused (upgrade burstctl), and so is one older
 * than burstctl reads (start the new agent), each message naming both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "views.h"
#include "tap.h"

static char dir[] = "/tmp/test_state_views.XXXXXX";
static char path[256];

/* Sets the file's schema version as an agent of that version would. */
static int set_version(int v)
{
	sqlite3 *h;
	char sql[64];
	int rc;

	if (sqlite3_open(path, &h) != SQLITE_OK)
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", v);
	rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
	return rc == SQLITE_OK ? 0 : -1;
}

int main(void)
{
	struct state_db *db;
	burst_err_t err;
	bool missing = false;
	char want[512];
	int v = -1;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/agent.db", dir);

	db = state_view_open(path, &missing, &err);
	ok(db == NULL && missing, "no database: refused, and missing says so");
	has_str(err.msg, "no agent state at", "... as state_open_readonly says it");

	db = state_open(path, &err);
	if (!ok(db != NULL, "the agent makes its database"))
		return done_testing();
	is_num(state_schema_version(db, &v, &err), 0, "its schema version reads");
	is_num(v, STATE_SCHEMA_VERSION, "... and is this build's");
	state_close(db);

	db = state_view_open(path, &missing, &err);
	ok(db != NULL && !missing, "this build's schema opens");
	state_close(db);

	ok(set_version(STATE_VIEW_OLDEST) == 0, "the oldest version burstctl reads (%d)", STATE_VIEW_OLDEST);
	db = state_view_open(path, NULL, &err);
	ok(db != NULL, "... opens (the same columns)");
	state_close(db);

	ok(set_version(STATE_VIEW_OLDEST - 1) == 0, "an older one (%d)", STATE_VIEW_OLDEST - 1);
	db = state_view_open(path, &missing, &err);
	ok(db == NULL && !missing, "... is refused, and not as missing");
	snprintf(want, sizeof(want), "%s is at schema %d, this burstctl reads %d to %d: start the new burst-agent", path,
		 STATE_VIEW_OLDEST - 1, STATE_VIEW_OLDEST, STATE_SCHEMA_VERSION);
	has_str(err.msg, want, "... naming the file, the versions, and the agent that migrates it");
	state_close(db);

	ok(set_version(STATE_SCHEMA_VERSION + 1) == 0, "a newer agent's version");
	db = state_view_open(path, &missing, &err);
	ok(db == NULL && !missing, "... is refused, and not as missing");
	snprintf(want, sizeof(want), "%s is at schema %d, this burstctl reads %d to %d: upgrade burstctl", path,
		 STATE_SCHEMA_VERSION + 1, STATE_VIEW_OLDEST, STATE_SCHEMA_VERSION);
	has_str(err.msg, want, "... naming the file, both versions, and what to upgrade");
	state_close(db);

	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
