/*
 * test_node_state.c - the node states as one enum with one names table
 * (lib/core/node_state.h), and the state database's CHECK on them: a name
 * round-trips, an unknown state is refused by the schema itself (a new
 * database and one upgraded from an agent before the CHECK), an old
 * database holding a state that is no node state is refused, named, and a
 * database of schema version 1 (the CHECK as an IN list, events and records
 * with AUTOINCREMENT) is upgraded with every row and id kept. A migration
 * is one transaction: a step that fails after another succeeded, and a
 * database of a newer agent (a downgrade), leave the file's bytes as they
 * were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "state.h"
#include "tap.h"

static char dir[] = "/tmp/test_node_state.XXXXXX";

/* A new database at path made by ddl, then rows; what names it in a failure. */
static int make_database(const char *path, const char *ddl, const char *rows, const char *what)
{
	sqlite3 *h;
	char *msg = NULL;
	int rc;

	unlink(path);
	if (sqlite3_open(path, &h) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(h, ddl, NULL, NULL, &msg) == SQLITE_OK && sqlite3_exec(h, rows, NULL, NULL, &msg) == SQLITE_OK;
	if (!rc)
		diag("%s: %s", what, msg ? msg : "?");
	sqlite3_free(msg);
	sqlite3_close(h);
	return rc ? 0 : -1;
}

/* The schema of an agent before the CHECK (schema version 0), with rows. */
static int old_database(const char *path, const char *rows)
{
	static const char old[] =
		"PRAGMA journal_mode=WAL;"
		"CREATE TABLE nodes ("
		" name TEXT PRIMARY KEY, nodeset TEXT, state TEXT NOT NULL,"
		" attempt INTEGER NOT NULL DEFAULT 0, instance TEXT, address TEXT, token TEXT,"
		" token_used INTEGER NOT NULL DEFAULT 0, job INTEGER NOT NULL DEFAULT 0,"
		" since REAL NOT NULL, cooldown_until REAL NOT NULL DEFAULT 0, last_error TEXT);"
		"ALTER TABLE nodes ADD COLUMN want_resume INTEGER NOT NULL DEFAULT 0;"
		"ALTER TABLE nodes ADD COLUMN provenance_id TEXT;"
		"CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, node TEXT,"
		" what TEXT NOT NULL, detail TEXT);";
	return make_database(path, old, rows, "old database");
}

/* The schema of version 1 (the CHECK as an IN list; AUTOINCREMENT ids), with rows. */
static int v1_database(const char *path, const char *rows)
{
	static const char v1[] =
		"PRAGMA journal_mode=WAL;"
		"CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, node TEXT,"
		" what TEXT NOT NULL, detail TEXT);"
		"CREATE TABLE records (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, node TEXT NOT NULL,"
		" instance TEXT, provenance_id TEXT NOT NULL, decision TEXT NOT NULL, record TEXT NOT NULL);"
		"CREATE TABLE nodes ("
		" name TEXT PRIMARY KEY, nodeset TEXT, state TEXT NOT NULL CHECK (state IN ('powered_down','requested',"
		"'launching','booting','admitted','terminating','rejected','lost')),"
		" attempt INTEGER NOT NULL DEFAULT 0, instance TEXT, address TEXT, token TEXT,"
		" token_used INTEGER NOT NULL DEFAULT 0, job INTEGER NOT NULL DEFAULT 0,"
		" since REAL NOT NULL, cooldown_until REAL NOT NULL DEFAULT 0, last_error TEXT,"
		" want_resume INTEGER NOT NULL DEFAULT 0, provenance_id TEXT, provider TEXT,"
		" instance_type TEXT, region TEXT, retry_at REAL NOT NULL DEFAULT 0,"
		" failures INTEGER NOT NULL DEFAULT 0, early INTEGER NOT NULL DEFAULT 0);"
		"CREATE INDEX nodes_state_since ON nodes(state, since);"
		"CREATE TABLE requests (name TEXT PRIMARY KEY, time REAL NOT NULL);"
		"CREATE TABLE cooldowns (key TEXT PRIMARY KEY, until REAL NOT NULL, failures INTEGER NOT NULL, last_error TEXT);"
		"PRAGMA user_version=1;";
	return make_database(path, v1, rows, "version 1 database");
}

/* The first column of the one-row answer to sql, as text (into buf). */
static const char *one(const char *path, const char *sql, char *buf, size_t len)
{
	sqlite3 *h;
	sqlite3_stmt *st = NULL;

	snprintf(buf, len, "(no answer)");
	if (sqlite3_open(path, &h) != SQLITE_OK)
		return buf;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		snprintf(buf, len, "%s", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "(null)");
	else
		snprintf(buf, len, "(error: %s)", sqlite3_errmsg(h));
	sqlite3_finalize(st);
	sqlite3_close(h);
	return buf;
}

/* Whether the schema of path takes a row of node state st (written behind the library's back). */
static int raw_insert(const char *path, const char *node, const char *st, char *why, size_t len)
{
	sqlite3 *h;
	char sql[256], *msg = NULL;
	int rc;

	if (sqlite3_open(path, &h) != SQLITE_OK)
		return -1;
	snprintf(sql, sizeof(sql), "INSERT INTO nodes(name, nodeset, state, since) VALUES('%s','ns','%s',1)", node, st);
	rc = sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK ? 0 : -1;
	snprintf(why, len, "%s", msg ? msg : "");
	sqlite3_free(msg);
	sqlite3_close(h);
	return rc;
}

/* The whole file at path (malloc'd, its length in *len), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
			*len = (size_t)n;
		else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* Whether path's bytes are still before's (and no -wal holds a change to them). */
static int same_file(const char *path, const char *before, size_t blen)
{
	char wal[300];
	size_t n;
	char *now = slurp(path, &n);
	int same = now && before && n == blen && !memcmp(now, before, n);

	free(now);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	return same && access(wal, F_OK) != 0;
}

static int set_user_version(const char *path, int v)
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

static int user_version(const char *path)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_open(path, &h) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

int main(void)
{
	char path[256], why[512], list[256];
	struct state_db *db;
	struct node_rec r;
	burst_err_t err;
	int i, seen = 0;

	/* the names table */
	for (i = 0; i < NS_COUNT; i++) {
		const char *n = node_state_name((enum node_state)i);
		ok(n && strcmp(n, "?") && node_state_parse(n) == i, "state %d is named %s, and the name gives it back", i,
		   n ? n : "(null)");
		seen++;
	}
	ok(seen == 8, "eight states");
	is_str(node_state_name(NS_POWERED_DOWN), "powered_down", "the names are the database's words: powered_down");
	is_str(node_state_name(NS_ADMITTED), "admitted", "... admitted");
	is_str(node_state_name(NS_LOST), "lost", "... lost");
	is_str(node_state_name(NS_COUNT), "?", "a value past the last has no name");
	is_str(node_state_name(NS_ANY), "?", "nor has NS_ANY");
	ok(node_state_parse("bootng") == -1, "a mistyped name is no state");
	ok(node_state_parse("Booting") == -1 && node_state_parse("booting ") == -1, "names are exact");
	ok(node_state_parse("") == -1 && node_state_parse(NULL) == -1, "nor is an empty or missing name");
	ok(node_state_sql_list(list, sizeof(list)) == (int)strlen(list) &&
	   !strncmp(list, "'powered_down','requested',", 27) && strstr(list, ",'lost'") &&
	   list[strlen(list) - 1] == '\'', "the SQL list of names: %s", list);
	ok(node_state_sql_list(list, 10) > 10 && strlen(list) == 9, "a short buffer: cut, and the length needed said");

	if (!mkdtemp(dir))
		return 1;

	/* a new database: the CHECK refuses what is no node state */
	snprintf(path, sizeof(path), "%s/agent.db", dir);
	db = state_open(path, &err);
	ok(db != NULL, "a new state database");
	ok(user_version(path) == 2, "... at schema version 2");
	ok(db && state_node_ensure(db, "burst-1", "ns", &err) == 0, "a node is made powered_down");
	ok(raw_insert(path, "burst-2", "bootng", why, sizeof(why)) < 0 && strstr(why, "CHECK"),
	   "the schema refuses a row in state 'bootng': %s", why);
	ok(raw_insert(path, "burst-3", "booting", why, sizeof(why)) == 0, "and takes one in state booting");
	memset(&r, 0, sizeof(r));
	ok(state_transition(db, "burst-1", NS_POWERED_DOWN, &r, NS_REQUESTED, "test", &err) == 1,
	   "a compare-and-set with enum values");
	ok(state_transition(db, "burst-1", NS_POWERED_DOWN, &r, NS_LAUNCHING, "test", &err) == 0,
	   "one whose from does not hold does nothing");
	ok(state_transition(db, "burst-1", NS_ANY, &r, NS_COUNT, "test", &err) == -1 && strstr(err.msg, "no such state"),
	   "a to that is no state is refused: %s", err.msg);
	ok(state_transition(db, "burst-1", (enum node_state)42, &r, NS_BOOTING, "test", &err) == -1,
	   "and a from that is none");
	ok(state_node_get(db, "burst-1", &r, &err) == 1 && r.state == NS_REQUESTED, "burst-1 is requested");
	state_node_clear(&r);
	ok(state_transition(db, "burst-1", NS_ANY, &r, NS_LOST, "test", &err) == 1, "NS_ANY sets whatever the state");
	ok(state_node_get(db, "burst-1", &r, &err) == 1 && r.state == NS_LOST, "burst-1 is lost");
	state_node_clear(&r);
	state_close(db);
	db = state_open(path, &err);
	ok(db != NULL && user_version(path) == 2, "opened again: still version 2, nothing to upgrade");
	state_close(db);

	/* an agent's database from before the CHECK: upgraded, rows kept */
	snprintf(path, sizeof(path), "%s/old.db", dir);
	ok(old_database(path, "INSERT INTO nodes(name, nodeset, state, attempt, instance, token, since)"
			      " VALUES('burst-1','ns','booting',3,'i-1','tok',5);"
			      "INSERT INTO nodes(name, nodeset, state, since) VALUES('burst-2','ns','powered_down',6);") == 0,
	   "an old database (version 0, no CHECK) with two nodes");
	ok(user_version(path) == 0, "... at version 0");
	db = state_open(path, &err);
	ok(db != NULL, "opened: %s", db ? "upgraded" : err.msg);
	ok(user_version(path) == 2, "... to version 2");
	memset(&r, 0, sizeof(r));
	ok(db && state_node_get(db, "burst-1", &r, &err) == 1 && r.state == NS_BOOTING && r.attempt == 3 &&
	   r.instance && !strcmp(r.instance, "i-1") && r.token && !strcmp(r.token, "tok") && r.since == 5,
	   "burst-1's row is kept whole");
	state_node_clear(&r);
	ok(db && state_node_get(db, "burst-2", &r, &err) == 1 && r.state == NS_POWERED_DOWN, "burst-2's too");
	state_node_clear(&r);
	ok(raw_insert(path, "burst-9", "joining", why, sizeof(why)) < 0 && strstr(why, "CHECK"),
	   "the upgraded schema refuses a row in state 'joining'");
	ok(db && state_transition(db, "burst-1", NS_BOOTING, &r, NS_ADMITTED, "test", &err) == 1,
	   "and the agent goes on with it");
	state_close(db);

	/* a database of version 1: every row and id kept, no AUTOINCREMENT, the CHECK as comparisons */
	snprintf(path, sizeof(path), "%s/v1.db", dir);
	ok(v1_database(path,
		       "INSERT INTO nodes(name, nodeset, state, attempt, instance, address, token, token_used, job, since,"
		       " cooldown_until, last_error, want_resume, provenance_id, provider, instance_type, region, retry_at,"
		       " failures, early) VALUES('burst-1','ns','booting',3,'i-1','10.0.0.1','tok',1,77,5,9,'slow',1,"
		       "'prov-1','aws1','c5.large','us-east-1',11,2,1);"
		       "INSERT INTO nodes(name, nodeset, state, since) VALUES('burst-2','ns','lost',6);"
		       "INSERT INTO events(time, node, what, detail) VALUES(1,'burst-1','powered_down -> requested','r');"
		       "INSERT INTO events(time, node, what, detail) VALUES(2,'burst-1','requested -> launching',NULL);"
		       "INSERT INTO events(time, node, what, detail) VALUES(3,'burst-2','* -> lost','gone');"
		       "INSERT INTO events(time, node, what, detail) VALUES(4,'burst-2','deleted later',NULL);"
		       "INSERT INTO events(time, node, what, detail) VALUES(5,'burst-2','deleted later',NULL);"
		       "DELETE FROM events WHERE what = 'deleted later';"
		       "INSERT INTO records(time, node, instance, provenance_id, decision, record)"
		       " VALUES(7,'burst-1','i-1','prov-1','admitted','{\"a\": 1}');"
		       "INSERT INTO records(time, node, instance, provenance_id, decision, record)"
		       " VALUES(8,'burst-2',NULL,'prov-2','rejected','{\"b\": 2}');"
		       "INSERT INTO requests(name, time) VALUES('burst-3', 12);"
		       "INSERT INTO cooldowns(key, until, failures, last_error) VALUES('aws1/c5.large', 99, 2, 'capacity');") == 0,
	   "a version 1 database: two nodes, three events (the last two handed out deleted), two records,"
	   " a pending request, a cooldown");
	ok(user_version(path) == 1, "... at version 1");
	db = state_open(path, &err);
	ok(db != NULL, "opened: %s", db ? "upgraded" : err.msg);
	ok(user_version(path) == 2, "... to version 2");
	is_str(one(path, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'", why, sizeof(why)), "0",
	       "no table has AUTOINCREMENT any more");
	is_str(one(path, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%state IN (%'", why, sizeof(why)), "0",
	       "nor the CHECK's IN list");
	is_str(one(path, "SELECT group_concat(name || '|' || nodeset || '|' || state || '|' || attempt || '|' || instance"
		   " || '|' || address || '|' || token || '|' || token_used || '|' || job || '|' || since || '|' ||"
		   " cooldown_until || '|' || last_error || '|' || want_resume || '|' || provenance_id || '|' || provider"
		   " || '|' || instance_type || '|' || region || '|' || retry_at || '|' || failures || '|' || early, ';')"
		   " FROM (SELECT * FROM nodes WHERE name = 'burst-1')", why, sizeof(why)),
	       "burst-1|ns|booting|3|i-1|10.0.0.1|tok|1|77|5.0|9.0|slow|1|prov-1|aws1|c5.large|us-east-1|11.0|2|1",
	       "burst-1's row is kept, every column");
	is_str(one(path, "SELECT name || '|' || state || '|' || since FROM nodes WHERE name = 'burst-2'", why, sizeof(why)),
	       "burst-2|lost|6.0", "burst-2's too");
	is_str(one(path, "SELECT group_concat(id || '|' || time || '|' || node || '|' || what || '|' || coalesce(detail, '-'), ';')"
		   " FROM (SELECT * FROM events WHERE id <= 3 ORDER BY id)", why, sizeof(why)),
	       "1|1.0|burst-1|powered_down -> requested|r;2|2.0|burst-1|requested -> launching|-;3|3.0|burst-2|* -> lost|gone",
	       "the three events are kept, with their ids");
	is_str(one(path, "SELECT id || '|' || what FROM events WHERE id > 3", why, sizeof(why)), "5|schema upgraded",
	       "the last id handed out (5, deleted) is held by an event of the upgrade");
	is_str(one(path, "SELECT group_concat(id || '|' || time || '|' || node || '|' || coalesce(instance, '-') || '|' ||"
		   " provenance_id || '|' || decision || '|' || record, ';') FROM (SELECT * FROM records ORDER BY id)",
		   why, sizeof(why)),
	       "1|7.0|burst-1|i-1|prov-1|admitted|{\"a\": 1};2|8.0|burst-2|-|prov-2|rejected|{\"b\": 2}",
	       "the two records are kept, with their ids");
	is_str(one(path, "SELECT (SELECT group_concat(name || '|' || time) FROM requests) || ';' ||"
		   " (SELECT group_concat(key || '|' || until || '|' || failures || '|' || last_error) FROM cooldowns)",
		   why, sizeof(why)), "burst-3|12.0;aws1/c5.large|99.0|2|capacity", "the pending request and the cooldown are kept");
	is_str(one(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('instances', 'holds',"
		   " 'job_costs', 'budget_holds', 'lease', 'pool_members')", why, sizeof(why)), "6",
	       "the tables added since (cost, budget holds, lease, warm pool) are made");
	memset(&r, 0, sizeof(r));
	ok(db && state_transition(db, "burst-2", NS_LOST, &r, NS_POWERED_DOWN, "test", &err) == 1,
	   "the agent goes on with it");
	is_str(one(path, "SELECT id FROM events WHERE node = 'burst-2' AND what = 'lost -> powered_down'", why, sizeof(why)),
	       "6", "its next event's id is past every id handed out before (6)");
	ok(db && state_record_add(db, "burst-1", "i-1", "prov-3", "{}", "admitted", &err) == 0, "a record is added");
	is_str(one(path, "SELECT max(id) FROM records", why, sizeof(why)), "3", "... as id 3");
	ok(raw_insert(path, "burst-9", "joining", why, sizeof(why)) < 0 && strstr(why, "CHECK"),
	   "the upgraded schema still refuses a row in state 'joining'");
	ok(raw_insert(path, "burst-10", "terminating", why, sizeof(why)) == 0, "and takes one in state terminating");
	state_close(db);
	db = state_open(path, &err);
	ok(db != NULL && user_version(path) == 2, "opened again: nothing more to upgrade");
	is_str(one(path, "SELECT (SELECT count(*) FROM nodes) || ' ' || (SELECT count(*) FROM events) || ' ' ||"
		   " (SELECT count(*) FROM records)", why, sizeof(why)), "3 5 3", "and no row lost or added by it");
	state_close(db);

	/* an old database holding something that is no node state: refused, named, its nodes as they were */
	snprintf(path, sizeof(path), "%s/bad.db", dir);
	ok(old_database(path, "INSERT INTO nodes(name, nodeset, state, since) VALUES('burst-1','ns','booting',5);"
			      "INSERT INTO nodes(name, nodeset, state, since) VALUES('burst-7','ns','bootng',6);") == 0,
	   "an old database with a node in state 'bootng'");
	db = state_open(path, &err);
	ok(db == NULL, "is not opened");
	ok(!db && strstr(err.msg, "burst-7") && strstr(err.msg, "'bootng'") && strstr(err.msg, "powered_down"),
	   "the error names the node, its state and what to do: %s", err.msg);
	ok(!db && strstr(err.msg, "step 0 -> 1") && strstr(err.msg, "at schema 0, as it was"),
	   "... which step failed, and that the file is as it was");
	is_str(one(path, "SELECT count(*) FROM pragma_table_info('nodes') WHERE name IN ('provider', 'early')", why,
		   sizeof(why)), "0", "no column of the step was added (the step's ALTERs are undone with it)");
	ok(user_version(path) == 0 && raw_insert(path, "burst-8", "whatever", why, sizeof(why)) == 0,
	   "the database is left as it was (version 0, no CHECK)");
	state_close(db);

	/* a later step that fails undoes the earlier ones: the file's bytes as they were */
	{
		char *before;
		size_t blen;
		snprintf(path, sizeof(path), "%s/stuck.db", dir);
		ok(old_database(path, "INSERT INTO nodes(name, nodeset, state, since) VALUES('burst-1','ns','booting',5);"
				      "INSERT INTO events(time, node, what) VALUES(1,'burst-1','powered_down -> requested');"
				      "CREATE TABLE nodes_v2 (left_by TEXT);") == 0,
		   "a version 0 database where step 1 -> 2 cannot make its table (nodes_v2 is taken)");
		before = slurp(path, &blen);
		db = state_open(path, &err);
		ok(db == NULL, "is not opened");
		ok(!db && strstr(err.msg, "from schema 0 to 2") && strstr(err.msg, "step 1 -> 2") &&
		   strstr(err.msg, "nodes_v2") && strstr(err.msg, "at schema 0, as it was"),
		   "the error names the step and why: %s", err.msg);
		ok(same_file(path, before, blen), "the file is byte for byte as it was: step 0 -> 1's columns are not kept");
		is_str(one(path, "SELECT (SELECT count(*) FROM pragma_table_info('nodes')) || ' ' ||"
			   " (SELECT count(*) FROM nodes) || ' ' || (SELECT count(*) FROM events)", why, sizeof(why)),
		       "14 1 1", "... 14 columns, one node, one event");
		free(before);
		state_close(db);
	}

	/* a database of a newer agent (a downgrade): refused, untouched */
	{
		char *before, sql[96];
		size_t blen;
		snprintf(path, sizeof(path), "%s/newer.db", dir);
		db = state_open(path, &err);
		ok(db && state_node_ensure(db, "burst-1", "ns", &err) == 0, "a database of this build, with a node");
		state_close(db);
		ok(set_user_version(path, STATE_SCHEMA_VERSION + 1) == 0 && user_version(path) == STATE_SCHEMA_VERSION + 1,
		   "its version set to %d, as a newer agent would", STATE_SCHEMA_VERSION + 1);
		before = slurp(path, &blen);
		db = state_open(path, &err);
		ok(db == NULL, "this build's agent does not open it");
		snprintf(sql, sizeof(sql), "is at schema %d, newer than this burst-agent's (%d)", STATE_SCHEMA_VERSION + 1,
			 STATE_SCHEMA_VERSION);
		ok(!db && strstr(err.msg, path) && strstr(err.msg, sql) && strstr(err.msg, "burstctl state backup"),
		   "the error names the file, both versions and the way back: %s", err.msg);
		ok(same_file(path, before, blen), "the file is byte for byte as it was");
		free(before);
		state_close(db);
	}

	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("cannot remove %s", dir);
	}
	return done_testing();
}
