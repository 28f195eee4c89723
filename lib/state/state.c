/*
 * state.c - SQLite state of the burst agent (see state.h).
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "htab.h"
#include "state.h"
#include "state_rows.h"
#include "strutil.h"
#include "syncdir.h"

struct state_db {
	sqlite3 *db;
	char *path;
	bool immutable;          /* read-only view of a database no agent has open */
	bool batch;              /* in a state_begin transaction */
	bool unsynced;           /* its commit does not wait for the disk (state_begin_unsynced) */
	/* prepared statements by their SQL, kept for the connection's life:
	 * the agent's calls were mostly SQLite's parser before */
	struct htab stmts;
	unsigned long prepares;  /* sqlite3_prepare_v2 calls (state_prepares) */
	void (*on_fenced)(void); /* called by a fenced write before it aborts (state_on_fenced) */
	long long fenced_epoch;  /* the epoch this connection is fenced to (0: none) */
};

struct cached_stmt {
	sqlite3_stmt *st;
	bool busy;               /* handed out: a nested use of the same SQL gets its own */
};

/*
 * The statement of sql, prepared once per connection: returns SQLITE_OK
 * with *st, or SQLITE_* (the connection's error message says why). Give it
 * back with unprep, which resets it for the next use.
 */
static int prep(struct state_db *db, const char *sql, sqlite3_stmt **st)
{
	struct cached_stmt *c = htab_get(&db->stmts, sql);
	int rc;

	if (c && !c->busy) {
		c->busy = true;
		*st = c->st;
		return SQLITE_OK;
	}
	rc = sqlite3_prepare_v2(db->db, sql, -1, st, NULL);
	db->prepares++;
	if (rc != SQLITE_OK || c)
		return rc;       /* a nested use: its own statement, finalized by unprep */
	c = xcalloc(1, sizeof(*c));
	c->st = *st;
	c->busy = true;
	/* the key is the statement's own copy of its text */
	htab_put(&db->stmts, sqlite3_sql(*st), c);
	return SQLITE_OK;
}

static void unprep(struct state_db *db, sqlite3_stmt *st)
{
	struct cached_stmt *c;

	if (!st)
		return;
	c = htab_get(&db->stmts, sqlite3_sql(st));
	if (c && c->st == st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		c->busy = false;
	} else
		sqlite3_finalize(st);
}

/* Finalizes every kept statement (before the connection closes). */
static void stmts_drop(struct state_db *db)
{
	size_t it = 0;
	void *v;

	while (htab_next(&db->stmts, &it, NULL, &v)) {
		struct cached_stmt *c = v;
		sqlite3_finalize(c->st);
		free(c);
	}
	htab_free(&db->stmts);
}

#define EVENTS_COLUMNS \
	" id INTEGER PRIMARY KEY, time REAL NOT NULL, node TEXT, what TEXT NOT NULL, detail TEXT"
#define RECORDS_COLUMNS \
	" id INTEGER PRIMARY KEY, time REAL NOT NULL, node TEXT NOT NULL, instance TEXT," \
	" provenance_id TEXT NOT NULL, decision TEXT NOT NULL, record TEXT NOT NULL"

/* set on every open, before the migrations' transaction (SQLite does not
 * change the journal mode within one) */
static const char pragmas[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;";

/*
 * The tables but nodes, made where missing on every open (within its
 * transaction): each was added in a version without a step of its own.
 * events and records: ids without AUTOINCREMENT (see drop_autoincrement).
 */
static const char schema_tables[] =
	"CREATE TABLE IF NOT EXISTS events (" EVENTS_COLUMNS ");"
	"CREATE TABLE IF NOT EXISTS requests (name TEXT PRIMARY KEY, time REAL NOT NULL);"
	"CREATE TABLE IF NOT EXISTS records (" RECORDS_COLUMNS ");"
	"CREATE TABLE IF NOT EXISTS cooldowns ("
	" key TEXT PRIMARY KEY, until REAL NOT NULL, failures INTEGER NOT NULL, last_error TEXT);"
	/* the active agent's lease (one row): see state_lease_take */
	"CREATE TABLE IF NOT EXISTS lease ("
	" id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" holder TEXT NOT NULL, ident TEXT NOT NULL, renewed REAL NOT NULL, expires REAL NOT NULL);"
	/* cost (lib/core/cost.h): every instance's life and price, the jobs that
	 * held burst nodes and when, the jobs whose cost was written to Slurm */
	"CREATE TABLE IF NOT EXISTS instances ("
	" provider TEXT NOT NULL, instance TEXT NOT NULL, node TEXT NOT NULL, nodeset TEXT,"
	" type TEXT, region TEXT, price REAL, price_source TEXT, job INTEGER NOT NULL DEFAULT 0,"
	" launched REAL NOT NULL, joined REAL NOT NULL DEFAULT 0, ended REAL NOT NULL DEFAULT 0,"
	" PRIMARY KEY (provider, instance));"
	"CREATE TABLE IF NOT EXISTS holds ("
	" job INTEGER NOT NULL, node TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL DEFAULT 0,"
	" user TEXT, account TEXT, partition TEXT, PRIMARY KEY (job, node, start));"
	"CREATE TABLE IF NOT EXISTS job_costs ("
	" job INTEGER PRIMARY KEY, time REAL NOT NULL, dollars REAL NOT NULL);"
	/* jobs held for a budget, released once it allows them */
	"CREATE TABLE IF NOT EXISTS budget_holds ("
	" job INTEGER PRIMARY KEY, budget TEXT NOT NULL, estimate REAL NOT NULL, time REAL NOT NULL);"
	/* a warm pool's members: admitted instances kept stopped (state_pool_add) */
	"CREATE TABLE IF NOT EXISTS pool_members ("
	" provider TEXT NOT NULL, instance TEXT NOT NULL, node TEXT NOT NULL, nodeset TEXT NOT NULL,"
	" type TEXT, region TEXT, admitted_at REAL NOT NULL, stopped_at REAL NOT NULL,"
	" price REAL NOT NULL DEFAULT 0, provenance_id TEXT, record TEXT, attestation TEXT,"
	" blessings TEXT NOT NULL DEFAULT '', acceptance TEXT NOT NULL DEFAULT '',"
	" PRIMARY KEY (provider, instance));"
	/* the cost readings take what is alive after a time */
	"CREATE INDEX IF NOT EXISTS instances_ended ON instances(ended);"
	"CREATE INDEX IF NOT EXISTS holds_end ON holds(end);";

/*
 * The nodes table, whole: %s is its CHECK on the state, one comparison per
 * node state (states_check). Not "state IN (...)": SQLite builds an
 * ephemeral table of an IN list of more than two constants on every run of
 * a statement that checks it, and every transition's UPDATE did (a third
 * of its cost); the comparisons are the same guarantee, for every writer,
 * at the cost of a few string compares.
 */
static const char nodes_table[] =
	"CREATE TABLE %s ("
	" name TEXT PRIMARY KEY, nodeset TEXT, state TEXT NOT NULL CHECK (%s),"
	" attempt INTEGER NOT NULL DEFAULT 0, instance TEXT, address TEXT, token TEXT,"
	" token_used INTEGER NOT NULL DEFAULT 0, job INTEGER NOT NULL DEFAULT 0,"
	" since REAL NOT NULL, cooldown_until REAL NOT NULL DEFAULT 0, last_error TEXT,"
	" want_resume INTEGER NOT NULL DEFAULT 0, provenance_id TEXT, provider TEXT,"
	" instance_type TEXT, region TEXT, retry_at REAL NOT NULL DEFAULT 0,"
	" failures INTEGER NOT NULL DEFAULT 0, early INTEGER NOT NULL DEFAULT 0)";
static const char nodes_columns[] =
	"name, nodeset, state, attempt, instance, address, token, token_used, job, since,"
	" cooldown_until, last_error, want_resume, provenance_id, provider, instance_type, region, retry_at,"
	" failures, early";

static int exec1(struct state_db *db, const char *sql, burst_err_t *err);

/*
 * The schema's versions (PRAGMA user_version), each reached from the one
 * before by one step of migrations[] below:
 *   0  an agent from before the versions: the nodes table without a CHECK,
 *      perhaps without the columns added_columns[] adds;
 *   1  every column; the nodes table's CHECK on the state as an IN list;
 *   2  that CHECK as comparisons (states_check), and events and records
 *      without AUTOINCREMENT (which wrote sqlite_sequence on every insert).
 *      Their ids stay monotonic without it: a new row's id is the largest
 *      one's plus one, and the agent deletes no event or record (burstctl
 *      events --follow reads the events after the last id it printed).
 * A change to the tables that an older burstctl or agent would misread
 * (a column renamed, dropped or given another meaning; a table rebuilt)
 * takes a new version and a step; a table or an index added with
 * IF NOT EXISTS, as those of schema_tables, does not.
 */
#define SCHEMA_VERSION STATE_SCHEMA_VERSION

/* Columns added after the first release: added to a version 0 database. */
static const char *const added_columns[] = {
	"ALTER TABLE nodes ADD COLUMN want_resume INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE nodes ADD COLUMN provenance_id TEXT",
	"ALTER TABLE nodes ADD COLUMN provider TEXT",
	"ALTER TABLE nodes ADD COLUMN instance_type TEXT",
	"ALTER TABLE nodes ADD COLUMN region TEXT",
	"ALTER TABLE nodes ADD COLUMN retry_at REAL NOT NULL DEFAULT 0",
	"ALTER TABLE nodes ADD COLUMN failures INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE nodes ADD COLUMN early INTEGER NOT NULL DEFAULT 0",
	NULL,
};

static int fail(struct state_db *db, burst_err_t *err, const char *what)
{
	burst_err_set(err, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->db));
	return -1;
}

/*
 * Every row of st (prepared, its parameters bound) into a new array of
 * r->size items, each zeroed and filled by r->fill; the statement is given
 * back. 0 with the array in *out (NULL when no row) and its length in *n;
 * -1 with err (r->what: what was being read) and nothing in *out, the rows
 * filled so far (and the one that failed) given to r->drop.
 */
static int rows_of(struct state_db *db, sqlite3_stmt *st, const struct state_rows *r, void **out, size_t *n,
		   burst_err_t *err)
{
	char *v = NULL;
	size_t cnt = 0, cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * r->size);
		}
		memset(v + cnt * r->size, 0, r->size);
		if (r->fill(db, st, v + cnt++ * r->size, err) < 0) {
			unprep(db, st);
			r->drop(v, cnt);
			return -1;
		}
	}
	unprep(db, st);
	if (rc != SQLITE_DONE) {
		r->drop(v, cnt);
		return fail(db, err, r->what);
	}
	*out = v;
	*n = cnt;
	return 0;
}

int state_query_rows(struct state_db *db, const char *sql, void (*bind)(sqlite3_stmt *st, const void *arg),
		     const void *arg, const struct state_rows *r, void **out, size_t *n, burst_err_t *err)
{
	sqlite3_stmt *st;

	*out = NULL;
	*n = 0;
	if (prep(db, sql, &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	if (bind)
		bind(st, arg);
	return rows_of(db, st, r, out, n, err);
}

static int int_of(struct state_db *db, const char *sql, int *out)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, sql, &st) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	unprep(db, st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/*
 * The nodes of a state and, in it, of a time field or early: what the
 * loop lists every tick (state_nodes_in, state_nodes_due,
 * state_nodes_early) reads only the rows it lists, not the table (a burst
 * has thousands of nodes in one state for minutes). The cooldown, retry
 * and early indexes are partial: they hold only the nodes with one (what
 * their queries ask for, in the same words), so that a transition of any
 * other node, nearly every one of a burst, writes the table and one index,
 * not four (state_transition's cost was mostly these writes). The full
 * indexes of an older agent are dropped.
 */
static const char nodes_indexes[] =
	"DROP INDEX IF EXISTS nodes_state_cooldown;"
	"DROP INDEX IF EXISTS nodes_state_retry;"
	"DROP INDEX IF EXISTS nodes_state_early;"
	"CREATE INDEX IF NOT EXISTS nodes_state_since ON nodes(state, since);"
	"CREATE INDEX IF NOT EXISTS nodes_cooldown_due ON nodes(state, cooldown_until) WHERE cooldown_until > 0;"
	"CREATE INDEX IF NOT EXISTS nodes_retry_due ON nodes(state, retry_at) WHERE retry_at > 0;"
	"CREATE INDEX IF NOT EXISTS nodes_early ON nodes(state) WHERE early != 0;";

/* The nodes table's CHECK: "state = 'powered_down' OR state = ..." */
static void states_check(char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (int i = 0; i < NS_COUNT && l < len; i++)
		l += (size_t)snprintf(buf + l, len - l, "%sstate = '%s'", i ? " OR " : "",
				      node_state_name((enum node_state)i));
}

/*
 * Table t (events or records) made again without AUTOINCREMENT, every row
 * with its id, within the caller's transaction. A last id handed out past
 * the largest row's (rows deleted behind the agent's back) is kept by an
 * event of the upgrade at that id, so that no later event takes an id a
 * reader may have seen already.
 */
static int drop_autoincrement(struct state_db *db, const char *t, const char *columns, const char *names,
			      burst_err_t *err)
{
	char sql[1024];
	int autoinc = 0, seq = 0, top = 0;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='%s'"
		 " AND sql LIKE '%%AUTOINCREMENT%%'", t);
	if (int_of(db, sql, &autoinc) < 0)
		return fail(db, err, "upgrade: read the schema");
	if (!autoinc)
		return 0;
	snprintf(sql, sizeof(sql), "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name='%s'), 0)", t);
	if (int_of(db, sql, &seq) < 0)
		return fail(db, err, "upgrade: read the last id");
	snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s", t);
	if (int_of(db, sql, &top) < 0)
		return fail(db, err, "upgrade: read the largest id");
	snprintf(sql, sizeof(sql), "CREATE TABLE %s_v2 (%s)", t, columns);
	if (exec1(db, sql, err) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "INSERT INTO %s_v2(%s) SELECT %s FROM %s ORDER BY id", t, names, names, t);
	if (exec1(db, sql, err) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "DROP TABLE %s", t);
	if (exec1(db, sql, err) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "ALTER TABLE %s_v2 RENAME TO %s", t, t);
	if (exec1(db, sql, err) < 0)
		return -1;
	if (seq > top && !strcmp(t, "events")) {
		snprintf(sql, sizeof(sql), "INSERT INTO events(id, time, node, what, detail) VALUES(%d, %.6f, NULL,"
			 " 'schema upgraded', 'events after %d were deleted; later ones are numbered after it')",
			 seq, wall_seconds(), top);
		if (exec1(db, sql, err) < 0)
			return -1;
	}
	return 0;
}

/*
 * Step 1 (0 -> 1): the columns added after the first release are added
 * (those the file has already are kept as they are), and every node's
 * state must be a node state's name: a row with anything else stops the
 * migration, naming the node and what to do (step 2's CHECK would refuse
 * it with SQLite's words).
 */
static int migrate_1(struct state_db *db, burst_err_t *err)
{
	char names[256], sql[512], *msg = NULL;
	sqlite3_stmt *st;
	int rc;

	for (size_t i = 0; added_columns[i]; i++) {
		/* "duplicate column name" when the database has it already */
		if (sqlite3_exec(db->db, added_columns[i], NULL, NULL, &msg) != SQLITE_OK &&
		    !strstr(msg ? msg : "", "duplicate column")) {
			burst_err_set(err, "%s: %s: %s", db->path, added_columns[i], msg ? msg : "?");
			sqlite3_free(msg);
			return -1;
		}
		sqlite3_free(msg);
		msg = NULL;
	}
	node_state_sql_list(names, sizeof(names));
	snprintf(sql, sizeof(sql), "SELECT name, state FROM nodes WHERE state NOT IN (%s) ORDER BY name LIMIT 1", names);
	if (prep(db, sql, &st) != SQLITE_OK)
		return fail(db, err, "read the nodes' states");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		burst_err_set(err, "%s: node %s is in state '%s', which is no node state (%s): set it to powered_down "
			      "with sqlite3 while the agent is stopped", db->path, (const char *)sqlite3_column_text(st, 0),
			      (const char *)sqlite3_column_text(st, 1), names);
	else if (rc != SQLITE_DONE)
		fail(db, err, "read the nodes' states");
	unprep(db, st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * Step 2 (1 -> 2): the nodes table made again with its CHECK as
 * comparisons, every row kept; events and records without AUTOINCREMENT,
 * every row and id kept.
 */
static int migrate_2(struct state_db *db, burst_err_t *err)
{
	char check[512], sql[2048];

	states_check(check, sizeof(check));
	snprintf(sql, sizeof(sql), nodes_table, "nodes_v2", check);
	if (exec1(db, sql, err) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "INSERT INTO nodes_v2(%s) SELECT %s FROM nodes", nodes_columns, nodes_columns);
	if (exec1(db, sql, err) < 0 || exec1(db, "DROP TABLE nodes", err) < 0 ||
	    exec1(db, "ALTER TABLE nodes_v2 RENAME TO nodes", err) < 0)
		return -1;
	if (drop_autoincrement(db, "events", EVENTS_COLUMNS, "id, time, node, what, detail", err) < 0 ||
	    drop_autoincrement(db, "records", RECORDS_COLUMNS,
			       "id, time, node, instance, provenance_id, decision, record", err) < 0)
		return -1;
	return 0;
}

/* migrations[i] takes a database from version i to i + 1 */
static const struct migration {
	const char *what;
	int (*run)(struct state_db *db, burst_err_t *err);
} migrations[] = {
	{ "the columns added since the first release; every node in a node state", migrate_1 },
	{ "the nodes' CHECK as comparisons; events and records without AUTOINCREMENT", migrate_2 },
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == SCHEMA_VERSION,
	       "one migration step per schema version");

/* A database written by a newer agent: refused, the file as it was. */
static int newer_refused(struct state_db *db, int version, burst_err_t *err)
{
	burst_err_set(err, "%s is at schema %d, newer than this burst-agent's (%d): a later release's agent "
		      "wrote it, and this one would misread it. Run that release again, or, to go back to this "
		      "one, restore the copy of agent.db taken before the upgrade (burstctl state backup); the "
		      "file is left as it is", db->path, version, SCHEMA_VERSION);
	return -1;
}

/*
 * The state tables at SCHEMA_VERSION, in one transaction: a new database is
 * made whole at it; an older one is taken there one step of migrations[]
 * after the other, then given the tables and indexes it lacks; a newer one
 * is refused. A step that fails undoes the whole transaction: the file stays
 * at its version, every row as it was, and err says which step and why.
 */
static int lease_read(struct state_db *db, struct state_lease *out, burst_err_t *err);

/*
 * deferred (NULL: never): an existing database of an older version whose
 * lease another agent holds (not released) is left as it is, *deferred its
 * version (else -1): that agent, perhaps of the release before, is using it.
 */
static int migrate(struct state_db *db, int *deferred, burst_err_t *err)
{
	char check[512], sql[2048];
	int version = 0, had = 0;

	if (deferred)
		*deferred = -1;
	/* before anything is written: a newer file is left untouched */
	if (int_of(db, "PRAGMA user_version", &version) < 0)
		return fail(db, err, "read the schema version");
	if (version > SCHEMA_VERSION)
		return newer_refused(db, version, err);
	if (exec1(db, pragmas, err) < 0)
		return -1;
	if (deferred && version < SCHEMA_VERSION) {
		struct state_lease l;
		int rc;
		if (int_of(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='nodes'", &had) < 0)
			return fail(db, err, "read the schema version");
		rc = had ? lease_read(db, &l, err) : 0;
		if (rc < 0)
			return -1;
		if (rc == 1 && l.expires != 0) {
			*deferred = version;
			return 0;
		}
	}
	/*
	 * This build's version: nothing to migrate, and no write transaction
	 * (a standby starting while the active agent holds SQLite's write lock
	 * waits for none). What is missing is made, each statement on its own;
	 * on a whole database none of them writes.
	 */
	if (version == SCHEMA_VERSION)
		return exec1(db, schema_tables, err) < 0 || exec1(db, nodes_indexes, err) < 0 ? -1 : 0;
	if (exec1(db, "BEGIN IMMEDIATE", err) < 0)
		return -1;
	/* (read again in the transaction: another connection may have migrated it meanwhile) */
	if (int_of(db, "PRAGMA user_version", &version) < 0 ||
	    int_of(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='nodes'", &had) < 0) {
		fail(db, err, "read the schema version");
		goto undo;
	}
	if (version > SCHEMA_VERSION) {
		newer_refused(db, version, err);
		goto undo;
	}
	if (!had) {
		/* a new database (or one without nodes): made at this version */
		states_check(check, sizeof(check));
		snprintf(sql, sizeof(sql), nodes_table, "nodes", check);
		if (exec1(db, sql, err) < 0)
			goto undo;
	}
	if (exec1(db, schema_tables, err) < 0)
		goto undo;
	for (int v = version; had && v < SCHEMA_VERSION; v++) {
		burst_err_t e;
		if (migrations[v].run(db, &e) < 0) {
			size_t pl = strlen(db->path);
			/* (the step's message without the file's name, said once) */
			const char *why = !strncmp(e.msg, db->path, pl) && !strncmp(e.msg + pl, ": ", 2) ? e.msg + pl + 2 : e.msg;
			burst_err_set(err, "%s: cannot migrate the state database from schema %d to %d: step %d -> %d (%s) "
				      "failed: %s. Nothing of the migration is kept: the file is at schema %d, as it was",
				      db->path, version, SCHEMA_VERSION, v, v + 1, migrations[v].what, why, version);
			goto undo;
		}
	}
	if (exec1(db, nodes_indexes, err) < 0)
		goto undo;
	snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", SCHEMA_VERSION);
	if (exec1(db, sql, err) < 0 || exec1(db, "COMMIT", err) < 0)
		goto undo;
	return 0;
undo:
	exec1(db, "ROLLBACK", NULL);
	return -1;
}

static struct state_db *open_db(const char *path, int *deferred, burst_err_t *err)
{
	struct state_db *db = xcalloc(1, sizeof(*db));

	db->path = xstrdup(path);
	/* live join tokens: the database and its -wal and -shm (which SQLite
	 * makes with the database's mode) are for root alone, an older agent's
	 * 0644 files included */
	/*
	 * No open()/close() of an existing database here: closing any
	 * descriptor of the file drops every POSIX lock this process holds on
	 * it, those of its SQLite connections included. With the lease
	 * renewer's second connection, opened while the first was live, a
	 * reader in another process (burstctl, a test) then found itself the
	 * last connection on close, checkpointed and deleted the -wal and
	 * -shm, and the agent's later commits went to a deleted file: unseen
	 * by others and lost with the process (test_join failed on it).
	 */
	{
		static const char *const sfx[] = { "-wal", "-shm" };
		char side[4200];
		struct stat st;
		if (lstat(path, &st) < 0 && errno == ENOENT) {
			/* a new database: made 0600 before SQLite opens it */
			int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 && errno != EEXIST) {
				burst_err_set(err, "%s: cannot create the state database mode 0600: %s", path, strerror(errno));
				state_close(db);
				return NULL;
			}
			if (fd >= 0)
				close(fd);
		}
		errno = 0;
		errno = 0;
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			burst_err_set(err, "%s: the state database is not a regular file (%s)", path,
				      errno ? strerror(errno) : "a link or something else");
			state_close(db);
			return NULL;
		}
		if ((st.st_mode & 0777) != 0600 && chmod(path, 0600) < 0) {
			burst_err_set(err, "%s: cannot make it mode 0600: %s", path, strerror(errno));
			state_close(db);
			return NULL;
		}
		for (size_t i = 0; i < 2; i++) {
			snprintf(side, sizeof(side), "%s%s", path, sfx[i]);
			if (chmod(side, 0600) < 0 && errno != ENOENT) {
				burst_err_set(err, "%s: cannot make it mode 0600: %s", side, strerror(errno));
				state_close(db);
				return NULL;
			}
		}
	}
	if (sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		burst_err_set(err, "%s: cannot open the state database: %s", path,
			      db->db ? sqlite3_errmsg(db->db) : "out of memory");
		state_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db->db, 5000);
	if (migrate(db, deferred, err) < 0) {
		state_close(db);
		return NULL;
	}
	return db;
}

struct state_db *state_open(const char *path, burst_err_t *err)
{
	return open_db(path, NULL, err);
}

struct state_db *state_open_standby(const char *path, int *older, burst_err_t *err)
{
	return open_db(path, older, err);
}

static int fence(struct state_db *db, long long epoch, burst_err_t *err);

int state_migrate(struct state_db *db, burst_err_t *err)
{
	if (migrate(db, NULL, err) < 0)
		return -1;
	/* the fence again: on the tables the migration made, and on those it
	 * rebuilt (a table's triggers go with it) */
	return db->fenced_epoch ? fence(db, db->fenced_epoch, err) : 0;
}

void state_close(struct state_db *db)
{
	if (!db)
		return;
	stmts_drop(db);
	sqlite3_close(db->db);
	free(db->path);
	free(db);
}

int state_node_ensure(struct state_db *db, const char *name, const char *nodeset,
		      burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db,
			       "INSERT OR IGNORE INTO nodes(name, nodeset, state, since) VALUES(?1,?2,?4,?3)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, nodeset, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, wall_seconds());
	sqlite3_bind_text(st, 4, node_state_name(NS_POWERED_DOWN), -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	unprep(db, st);
	return rc == SQLITE_DONE ? 0 : fail(db, err, "insert node");
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

/* Column i as a node state; -1 with err (naming the node) if it is none. */
static int col_state(struct state_db *db, sqlite3_stmt *st, int i, const char *node, enum node_state *out,
		     burst_err_t *err)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	int s = node_state_parse(t);

	if (s < 0) {
		burst_err_set(err, "%s: node %s is in state '%s', which is no node state", db->path,
			      node ? node : "?", t ? t : "(null)");
		return -1;
	}
	*out = (enum node_state)s;
	return 0;
}

int state_node_get(struct state_db *db, const char *name, struct node_rec *out,
		   burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (prep(db,
			       "SELECT name, nodeset, state, attempt, instance, address, token, token_used,"
			       " job, since, cooldown_until, last_error, want_resume, provenance_id,"
			       " provider, instance_type, region, retry_at, failures, early FROM nodes WHERE name=?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->name = col_text(st, 0);
		out->nodeset = col_text(st, 1);
		if (col_state(db, st, 2, name, &out->state, err) < 0) {
			unprep(db, st);
			state_node_clear(out);
			return -1;
		}
		out->attempt = sqlite3_column_int(st, 3);
		out->instance = col_text(st, 4);
		out->address = col_text(st, 5);
		out->token = col_text(st, 6);
		out->token_used = sqlite3_column_int(st, 7) != 0;
		out->job = (long)sqlite3_column_int64(st, 8);
		out->since = sqlite3_column_double(st, 9);
		out->cooldown_until = sqlite3_column_double(st, 10);
		out->last_error = col_text(st, 11);
		out->want_resume = sqlite3_column_int(st, 12) != 0;
		out->provenance_id = col_text(st, 13);
		out->provider = col_text(st, 14);
		out->instance_type = col_text(st, 15);
		out->region = col_text(st, 16);
		out->retry_at = sqlite3_column_double(st, 17);
		out->failures = sqlite3_column_int(st, 18);
		out->early = sqlite3_column_int(st, 19) != 0;
		rc = 1;
	} else
		rc = rc == SQLITE_DONE ? 0 : fail(db, err, "read node");
	unprep(db, st);
	return rc;
}

int state_node_get_brief(struct state_db *db, const char *name, struct node_rec *out, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (prep(db, "SELECT state, instance, provider FROM nodes WHERE name=?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		if (col_state(db, st, 0, name, &out->state, err) < 0) {
			unprep(db, st);
			return -1;
		}
		out->instance = col_text(st, 1);
		out->provider = col_text(st, 2);
		rc = 1;
	} else
		rc = rc == SQLITE_DONE ? 0 : fail(db, err, "read node");
	unprep(db, st);
	return rc;
}

void state_node_clear(struct node_rec *r)
{
	free(r->name);
	free(r->nodeset);
	free(r->instance);
	free(r->address);
	free(r->token);
	free(r->last_error);
	free(r->provenance_id);
	free(r->provider);
	free(r->instance_type);
	free(r->region);
	memset(r, 0, sizeof(*r));
}

static int exec1(struct state_db *db, const char *sql, burst_err_t *err)
{
	char *msg = NULL;

	if (sqlite3_exec(db->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		burst_err_set(err, "%s: %s: %s", db->path, sql, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/*
 * One statement of transaction control (BEGIN, COMMIT, SAVEPOINT...), kept
 * prepared: every transition runs two or three of them.
 */
static int exec_kept(struct state_db *db, const char *sql, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc = prep(db, sql, &st);

	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			rc = SQLITE_OK;
		else
			burst_err_set(err, "%s: %s: %s", db->path, sql, sqlite3_errmsg(db->db));
		unprep(db, st);
		return rc == SQLITE_OK ? 0 : -1;
	}
	burst_err_set(err, "%s: %s: %s", db->path, sql, sqlite3_errmsg(db->db));
	return -1;
}

static int add_event(struct state_db *db, const char *node, const char *what,
		     const char *detail, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, "INSERT INTO events(time, node, what, detail) VALUES(?,?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, wall_seconds());
	sqlite3_bind_text(st, 2, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, what, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, detail, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	unprep(db, st);
	return rc == SQLITE_DONE ? 0 : fail(db, err, "insert event");
}

int state_event(struct state_db *db, const char *node, const char *what,
		const char *detail, burst_err_t *err)
{
	return add_event(db, node, what, detail, err);
}

int state_begin(struct state_db *db, burst_err_t *err)
{
	if (db->batch) {
		burst_err_set(err, "%s: a batch of changes is open already (state_begin is not nested)", db->path);
		return -1;
	}
	if (exec_kept(db, "BEGIN IMMEDIATE", err) < 0)
		return -1;
	db->batch = true;
	return 0;
}

/* the safety level goes back to FULL after an unsynced batch (it cannot
 * change inside a transaction) */
static void synced_again(struct state_db *db)
{
	burst_err_t err;

	if (!db->unsynced)
		return;
	db->unsynced = false;
	if (exec_kept(db, "PRAGMA synchronous=FULL", &err) < 0)
		fprintf(stderr, "%s\n", err.msg);
}

int state_begin_unsynced(struct state_db *db, burst_err_t *err)
{
	if (db->batch) {
		burst_err_set(err, "%s: a batch of changes is open already (state_begin is not nested)", db->path);
		return -1;
	}
	if (exec_kept(db, "PRAGMA synchronous=NORMAL", err) < 0)
		return -1;
	db->unsynced = true;
	if (state_begin(db, err) < 0) {
		synced_again(db);
		return -1;
	}
	return 0;
}

int state_commit(struct state_db *db, burst_err_t *err)
{
	int rc = 0;

	if (!db->batch)
		return 0;
	db->batch = false;
	if (exec_kept(db, "COMMIT", err) < 0) {
		exec_kept(db, "ROLLBACK", NULL);
		rc = -1;
	}
	synced_again(db);
	return rc;
}

void state_rollback(struct state_db *db)
{
	if (!db->batch)
		return;
	db->batch = false;
	exec_kept(db, "ROLLBACK", NULL);
	synced_again(db);
}

int state_sync(const char *path, burst_err_t *err)
{
	char wal[4096];
	int fd;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	fd = open(wal, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDONLY | O_CLOEXEC);   /* no log: all is in the database */
	if (fd < 0 || fsync(fd) < 0) {
		burst_err_set(err, "%s: cannot make the last changes durable (fsync): %s", wal, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

const char *state_path(const struct state_db *db)
{
	return db->path;
}

bool state_in_batch(const struct state_db *db)
{
	return db->batch;
}

unsigned long state_prepares(const struct state_db *db)
{
	return db->prepares;
}

/*
 * A transition is atomic: its own transaction, or within a batch its own
 * savepoint (so that one that fails leaves the batch's others).
 */
static int tr_begin(struct state_db *db, burst_err_t *err)
{
	return exec_kept(db, db->batch ? "SAVEPOINT tr" : "BEGIN IMMEDIATE", err);
}

static void tr_undo(struct state_db *db)
{
	if (db->batch) {
		exec_kept(db, "ROLLBACK TO tr", NULL);
		exec_kept(db, "RELEASE tr", NULL);
	} else
		exec_kept(db, "ROLLBACK", NULL);
}

static int tr_end(struct state_db *db, burst_err_t *err)
{
	if (exec_kept(db, db->batch ? "RELEASE tr" : "COMMIT", err) < 0) {
		tr_undo(db);
		return -1;
	}
	return 0;
}

int state_transition(struct state_db *db, const char *name, enum node_state from,
		     const struct node_rec *r, enum node_state to, const char *detail,
		     burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc, changed;

	if ((int)to < 0 || to >= NS_COUNT || (from != NS_ANY && ((int)from < 0 || from >= NS_COUNT))) {
		burst_err_set(err, "%s: node %s: no such state (%d -> %d): a transition not written", db->path,
			      name, (int)from, (int)to);
		return -1;
	}
	if (tr_begin(db, err) < 0)
		return -1;
	if (prep(db,
			       "UPDATE nodes SET state=?, attempt=?, instance=?, address=?, token=?,"
			       " token_used=?, job=?, since=?, cooldown_until=?, last_error=?,"
			       " want_resume=?13, provenance_id=?14, provider=?15, instance_type=?16,"
			       " region=?17, retry_at=?18, failures=?19, early=?20"
			       " WHERE name=?11 AND (?12 IS NULL OR state=?12)", &st) != SQLITE_OK) {
		fail(db, err, "prepare");
		tr_undo(db);
		return -1;
	}
	sqlite3_bind_text(st, 1, node_state_name(to), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, r->attempt);
	sqlite3_bind_text(st, 3, r->instance, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, r->address, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, r->token, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 6, r->token_used);
	sqlite3_bind_int64(st, 7, r->job);
	sqlite3_bind_double(st, 8, wall_seconds());
	sqlite3_bind_double(st, 9, r->cooldown_until);
	sqlite3_bind_text(st, 10, r->last_error, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 11, name, -1, SQLITE_TRANSIENT);
	if (from != NS_ANY)
		sqlite3_bind_text(st, 12, node_state_name(from), -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 12);
	sqlite3_bind_int(st, 13, r->want_resume);
	sqlite3_bind_text(st, 14, r->provenance_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 15, r->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 16, r->instance_type, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 17, r->region, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 18, r->retry_at);
	sqlite3_bind_int(st, 19, r->failures);
	sqlite3_bind_int(st, 20, r->early);
	rc = sqlite3_step(st);
	unprep(db, st);
	if (rc != SQLITE_DONE) {
		fail(db, err, "update node");
		tr_undo(db);
		return -1;
	}
	changed = sqlite3_changes(db->db);
	if (changed) {
		char what[96];
		snprintf(what, sizeof(what), "%s -> %s", from != NS_ANY ? node_state_name(from) : "*",
			 node_state_name(to));
		if (add_event(db, name, what, detail, err) < 0) {
			tr_undo(db);
			return -1;
		}
	}
	if (tr_end(db, err) < 0)
		return -1;
	return changed ? 1 : 0;
}

static int fill_name(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	(void)db;
	(void)err;
	*(char **)item = col_text(st, 0);
	return 0;
}

static void drop_names(void *v, size_t n)
{
	char **names = v;

	while (n)
		free(names[--n]);
	free(names);
}

/* The names sql selects (first column), with stname as ?1 and t as ?2:
 * NULL-terminated. */
static char **names_of(struct state_db *db, const char *sql, const char *stname, double t,
		       burst_err_t *err)
{
	static const struct state_rows rows = { sizeof(char *), fill_name, drop_names, "read nodes" };
	sqlite3_stmt *st;
	void *v;
	size_t n;

	if (prep(db, sql, &st) != SQLITE_OK) {
		fail(db, err, "prepare");
		return NULL;
	}
	sqlite3_bind_text(st, 1, stname, -1, SQLITE_TRANSIENT);
	if (sqlite3_bind_parameter_count(st) > 1)
		sqlite3_bind_double(st, 2, t);
	if (rows_of(db, st, &rows, &v, &n, err) < 0)
		return NULL;
	v = xrealloc(v, (n + 1) * sizeof(char *));
	((char **)v)[n] = NULL;
	return v;
}

char **state_nodes_in_jobs(struct state_db *db, enum node_state stv, long **jobs, burst_err_t *err)
{
	sqlite3_stmt *st;
	char **v;
	size_t n = 0, cap = 64;

	*jobs = NULL;
	if (prep(db, "SELECT name, job FROM nodes WHERE state=?1 ORDER BY name", &st) != SQLITE_OK) {
		fail(db, err, "prepare");
		return NULL;
	}
	v = xcalloc(cap + 1, sizeof(char *));
	*jobs = xcalloc(cap + 1, sizeof(long));
	sqlite3_bind_text(st, 1, node_state_name(stv), -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			cap += cap / 2;
			v = xrealloc(v, (cap + 1) * sizeof(char *));
			*jobs = xrealloc(*jobs, (cap + 1) * sizeof(long));
		}
		(*jobs)[n] = (long)sqlite3_column_int64(st, 1);
		v[n++] = col_text(st, 0);
		v[n] = NULL;
	}
	unprep(db, st);
	return v;
}

char **state_nodes_in(struct state_db *db, enum node_state stv, burst_err_t *err)
{
	return names_of(db, "SELECT name FROM nodes WHERE state=?1 ORDER BY name", node_state_name(stv), 0, err);
}

char **state_nodes_early(struct state_db *db, enum node_state stv, burst_err_t *err)
{
	return names_of(db, "SELECT name FROM nodes WHERE state=?1 AND early != 0 ORDER BY name",
			node_state_name(stv), 0, err);
}

char **state_nodes_due(struct state_db *db, enum node_state stv, enum state_time_field field,
		       double t, burst_err_t *err)
{
	const char *stname = node_state_name(stv);

	switch (field) {
	case STATE_SINCE:
		return names_of(db, "SELECT name FROM nodes WHERE state=?1 AND since > 0 AND since <= ?2"
				" ORDER BY name", stname, t, err);
	case STATE_COOLDOWN_UNTIL:
		return names_of(db, "SELECT name FROM nodes WHERE state=?1 AND cooldown_until > 0"
				" AND cooldown_until <= ?2 ORDER BY name", stname, t, err);
	case STATE_RETRY_AT:
		return names_of(db, "SELECT name FROM nodes WHERE state=?1 AND retry_at > 0"
				" AND retry_at <= ?2 ORDER BY name", stname, t, err);
	}
	burst_err_set(err, "state_nodes_due: no such time field (%d)", (int)field);
	return NULL;
}

void state_names_free(char **names)
{
	strv_free(names);
}

int state_record_add(struct state_db *db, const char *node, const char *instance,
		     const char *provenance_id, const char *record, const char *decision,
		     burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db,
			       "INSERT INTO records(time, node, instance, provenance_id, decision, record)"
			       " VALUES(?,?,?,?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, wall_seconds());
	sqlite3_bind_text(st, 2, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, instance, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, provenance_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, decision, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, record, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	unprep(db, st);
	return rc == SQLITE_DONE ? 0 : fail(db, err, "insert record");
}

double state_cooldown_until(struct state_db *db, const char *key)
{
	sqlite3_stmt *st;
	double until = 0;

	if (prep(db, "SELECT until FROM cooldowns WHERE key=?", &st) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		until = sqlite3_column_double(st, 0);
	unprep(db, st);
	return until;
}

int state_cooldowns_active(struct state_db *db, double t, char ***keys, double **until, size_t *n,
			   burst_err_t *err)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*keys = NULL;
	*until = NULL;
	*n = 0;
	if (prep(db, "SELECT key, until FROM cooldowns WHERE until > ? ORDER BY key", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, t);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*keys = xrealloc(*keys, cap * sizeof(**keys));
			*until = xrealloc(*until, cap * sizeof(**until));
		}
		(*keys)[*n] = xstrdup((const char *)sqlite3_column_text(st, 0));
		(*until)[*n] = sqlite3_column_double(st, 1);
		(*n)++;
	}
	unprep(db, st);
	if (rc != SQLITE_DONE) {
		while (*n)
			free((*keys)[--*n]);
		free(*keys);
		free(*until);
		*keys = NULL;
		*until = NULL;
		return fail(db, err, "read cooldowns");
	}
	return 0;
}

double state_cooldown_hit(struct state_db *db, const char *key, double base, double max,
			  const char *why, burst_err_t *err)
{
	sqlite3_stmt *st;
	int failures = 0;
	double t = wall_seconds(), len, until;

	if (prep(db, "SELECT failures, until FROM cooldowns WHERE key=?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	/* repeats while cooling down, or soon after, double the cooldown */
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_double(st, 1) + max > t)
		failures = sqlite3_column_int(st, 0);
	unprep(db, st);
	len = base;
	for (int i = 0; i < failures && len < max; i++)
		len *= 2;
	if (len > max)
		len = max;
	until = t + len;
	if (prep(db, "INSERT OR REPLACE INTO cooldowns(key, until, failures, last_error)"
			       " VALUES(?,?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 2, until);
	sqlite3_bind_int(st, 3, failures + 1);
	sqlite3_bind_text(st, 4, why, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		unprep(db, st);
		return fail(db, err, "write cooldown");
	}
	unprep(db, st);
	return until;
}

int state_request_seen(struct state_db *db, const char *name, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, "SELECT 1 FROM requests WHERE name=?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	unprep(db, st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : fail(db, err, "read request");
}

int state_request_add(struct state_db *db, const char *name, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	if (prep(db, "INSERT OR IGNORE INTO requests(name, time) VALUES(?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 2, wall_seconds());
	rc = sqlite3_step(st);
	unprep(db, st);
	return rc == SQLITE_DONE ? 0 : fail(db, err, "insert request");
}

/* ---- read-only views ---- */

/* "file:PATH?immutable=1" with PATH percent-encoded where a URI needs it. */
static char *immutable_uri(const char *path)
{
	struct strbuf sb;
	const unsigned char *p;

	sb_init(&sb);
	sb_add(&sb, "file:");
	for (p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-._~", *p))
			sb_addf(&sb, "%c", *p);
		else
			sb_addf(&sb, "%%%02X", *p);
	}
	sb_add(&sb, "?immutable=1");
	return sb_take(&sb);
}

/*
 * Connect db read-only (as immutable or not). On success the new
 * connection replaces the old one; on failure the old one is kept and
 * *code gets SQLite's primary result code.
 */
static int ro_connect(struct state_db *db, bool immutable, int *code, burst_err_t *err)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	char *uri = immutable ? immutable_uri(db->path) : NULL;
	int rc;

	rc = sqlite3_open_v2(immutable ? uri : db->path, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX |
			     (immutable ? SQLITE_OPEN_URI : 0), NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(h, 5000);
		rc = sqlite3_prepare_v2(h, "SELECT count(*) FROM nodes", -1, &st, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(h);
		sqlite3_finalize(st);
	}
	free(uri);
	*code = rc & 0xff;
	if (rc != SQLITE_OK) {
		const char *msg = h ? sqlite3_errmsg(h) : "out of memory";
		if (h && strstr(msg, "no such table"))
			burst_err_set(err, "%s is not a burst-agent state database (%s); check StateDir in burst.conf",
				      db->path, msg);
		else
			burst_err_set(err, "%s: cannot read the agent's state database: %s", db->path, msg);
		sqlite3_close(h);
		return -1;
	}
	stmts_drop(db);
	sqlite3_close(db->db);
	db->db = h;
	db->immutable = immutable;
	return 0;
}

static bool wal_exists(const struct state_db *db)
{
	char wal[4096];

	snprintf(wal, sizeof(wal), "%s-wal", db->path);
	return access(wal, F_OK) == 0;
}

struct state_db *state_open_readonly(const char *path, bool *missing, burst_err_t *err)
{
	struct state_db *db = xcalloc(1, sizeof(*db));
	struct stat sb;
	int code;

	if (missing)
		*missing = false;
	db->path = xstrdup(path);
	if (stat(path, &sb) < 0) {
		if (errno == ENOENT) {
			burst_err_set(err, "no agent state at %s: has burst-agent run?", path);
			if (missing)
				*missing = true;
		} else
			burst_err_set(err, "%s: cannot read the agent's state database: %s", path, strerror(errno));
		goto fail;
	}
	/* (SQLite would say only "unable to open database file") */
	if (access(path, R_OK) < 0 && errno == EACCES) {
		burst_err_set(err, "%s: cannot read the agent's state database: it is readable by its owner (uid %ld) alone, "
			      "as the agent makes it (mode %04o): run this as root (sudo), or as that user",
			      path, (long)sb.st_uid, (unsigned)(sb.st_mode & 07777));
		goto fail;
	}
	if (ro_connect(db, false, &code, err) == 0)
		return db;
	/*
	 * A reader that may not write StateDir cannot make the -shm file of a
	 * WAL database; with no -wal file no agent has the database open and
	 * every change is in the main file, so it can be read as immutable.
	 */
	if ((code == SQLITE_READONLY || code == SQLITE_CANTOPEN) && !wal_exists(db)) {
		burst_err_t err2;
		if (ro_connect(db, true, &code, &err2) == 0)
			return db;
	}
fail:
	state_close(db);
	return NULL;
}

int state_schema_version(struct state_db *db, int *version, burst_err_t *err)
{
	*version = 0;
	if (int_of(db, "PRAGMA user_version", version) < 0)
		return fail(db, err, "read the schema version");
	return 0;
}

/* An immutable view goes stale when an agent opens the database: reconnect. */
static void ro_refresh(struct state_db *db)
{
	burst_err_t e;
	int code;

	if (db->immutable && wal_exists(db))
		ro_connect(db, false, &code, &e);
}

static int read_node(struct state_db *db, sqlite3_stmt *st, struct node_rec *out, burst_err_t *err)
{
	out->name = col_text(st, 0);
	out->nodeset = col_text(st, 1);
	if (col_state(db, st, 2, out->name, &out->state, err) < 0)
		return -1;
	out->attempt = sqlite3_column_int(st, 3);
	out->instance = col_text(st, 4);
	out->address = col_text(st, 5);
	out->token = col_text(st, 6);
	out->token_used = sqlite3_column_int(st, 7) != 0;
	out->job = (long)sqlite3_column_int64(st, 8);
	out->since = sqlite3_column_double(st, 9);
	out->cooldown_until = sqlite3_column_double(st, 10);
	out->last_error = col_text(st, 11);
	if (sqlite3_column_count(st) > 13) {
		out->want_resume = sqlite3_column_int(st, 12) != 0;
		out->provenance_id = col_text(st, 13);
	}
	if (sqlite3_column_count(st) > 16) {
		out->provider = col_text(st, 14);
		out->instance_type = col_text(st, 15);
		out->region = col_text(st, 16);
	}
	return 0;
}

/* The brief row of state_nodes_brief: name, state, attempt, instance, since, provider. */
static int read_node_brief(struct state_db *db, sqlite3_stmt *st, struct node_rec *r, burst_err_t *err)
{
	r->name = col_text(st, 0);
	if (col_state(db, st, 1, r->name, &r->state, err) < 0)
		return -1;
	r->attempt = sqlite3_column_int(st, 2);
	r->instance = col_text(st, 3);
	r->since = sqlite3_column_double(st, 4);
	r->provider = col_text(st, 5);
	return 0;
}

static void drop_nodes(void *v, size_t n)
{
	state_nodes_free(v, n);
}

static int fill_node(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	return read_node(db, st, item, err);
}

static int fill_node_brief(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	return read_node_brief(db, st, item, err);
}

int state_nodes_brief(struct state_db *db, struct node_rec **out, size_t *n, burst_err_t *err)
{
	sqlite3_stmt *st;

	*out = NULL;
	*n = 0;
	ro_refresh(db);
	if (prep(db, "SELECT name, state, attempt, instance, since, provider FROM nodes ORDER BY name", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	{
		static const struct state_rows rows = { sizeof(struct node_rec), fill_node_brief, drop_nodes,
			"read nodes" };
		void *v;
		int rc = rows_of(db, st, &rows, &v, n, err);
		*out = v;
		return rc;
	}
}

int state_nodes_all(struct state_db *db, struct node_rec **out, size_t *n, burst_err_t *err)
{
	sqlite3_stmt *st;

	*out = NULL;
	*n = 0;
	ro_refresh(db);
	/* a database of an older agent (not upgraded: we never write) lacks the
	 * newer columns */
	if (prep(db,
			       "SELECT name, nodeset, state, attempt, instance, address, token, token_used,"
			       " job, since, cooldown_until, last_error, want_resume, provenance_id,"
			       " provider, instance_type, region FROM nodes ORDER BY name", &st) != SQLITE_OK &&
	    prep(db,
			       "SELECT name, nodeset, state, attempt, instance, address, token, token_used,"
			       " job, since, cooldown_until, last_error, want_resume, provenance_id"
			       " FROM nodes ORDER BY name", &st) != SQLITE_OK &&
	    prep(db,
			       "SELECT name, nodeset, state, attempt, instance, address, token, token_used,"
			       " job, since, cooldown_until, last_error FROM nodes ORDER BY name", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	{
		static const struct state_rows rows = { sizeof(struct node_rec), fill_node, drop_nodes, "read nodes" };
		void *v;
		int rc = rows_of(db, st, &rows, &v, n, err);
		*out = v;
		return rc;
	}
}

void state_nodes_free(struct node_rec *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		state_node_clear(&v[i]);
	free(v);
}

static int fill_event(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	struct event_rec *e = item;

	(void)db;
	(void)err;
	e->id = sqlite3_column_int64(st, 0);
	e->time = sqlite3_column_double(st, 1);
	e->node = col_text(st, 2);
	e->what = col_text(st, 3);
	e->detail = col_text(st, 4);
	return 0;
}

static void drop_events(void *v, size_t n)
{
	state_events_free(v, n);
}

int state_events(struct state_db *db, const struct event_query *q,
		 struct event_rec **out, size_t *n, burst_err_t *err)
{
	static const struct state_rows rows = { sizeof(struct event_rec), fill_event, drop_events, "read events" };
	sqlite3_stmt *st;
	struct event_rec *v;
	void *got;
	size_t cnt, i;
	bool newest = q->newest && q->limit;

	*out = NULL;
	*n = 0;
	ro_refresh(db);
	/* the newest LIMIT are read newest first, then turned around */
	if (prep(db, newest ?
			       "SELECT id, time, node, what, detail FROM events WHERE id > ?1"
			       " AND (?2 IS NULL OR node = ?2) AND time >= ?3 ORDER BY id DESC LIMIT ?4" :
			       "SELECT id, time, node, what, detail FROM events WHERE id > ?1"
			       " AND (?2 IS NULL OR node = ?2) AND time >= ?3 ORDER BY id LIMIT ?4", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_int64(st, 1, q->after_id);
	if (q->node)
		sqlite3_bind_text(st, 2, q->node, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_double(st, 3, q->since);
	sqlite3_bind_int64(st, 4, q->limit ? (sqlite3_int64)q->limit : -1);
	if (rows_of(db, st, &rows, &got, &cnt, err) < 0)
		return -1;
	v = got;
	if (newest)
		for (i = 0; i < cnt / 2; i++) {
			struct event_rec t = v[i];
			v[i] = v[cnt - 1 - i];
			v[cnt - 1 - i] = t;
		}
	*out = v;
	*n = cnt;
	return 0;
}

void state_events_free(struct event_rec *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].node);
		free(v[i].what);
		free(v[i].detail);
	}
	free(v);
}

int state_events_last_id(struct state_db *db, long long *id, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	*id = 0;
	ro_refresh(db);
	if (prep(db, "SELECT coalesce(max(id), 0) FROM events", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	unprep(db, st);
	return rc == SQLITE_ROW ? 0 : fail(db, err, "read events");
}

static int fill_record(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	struct record_rec *r = item;

	(void)db;
	(void)err;
	r->id = sqlite3_column_int64(st, 0);
	r->time = sqlite3_column_double(st, 1);
	r->node = col_text(st, 2);
	r->instance = col_text(st, 3);
	r->provenance_id = col_text(st, 4);
	r->decision = col_text(st, 5);
	r->record = col_text(st, 6);
	return 0;
}

static void drop_records(void *v, size_t n)
{
	state_records_free(v, n);
}

int state_records(struct state_db *db, const struct record_query *q,
		  struct record_rec **out, size_t *n, burst_err_t *err)
{
	static const struct state_rows rows = { sizeof(struct record_rec), fill_record, drop_records,
		"read records" };
	sqlite3_stmt *st;

	*out = NULL;
	*n = 0;
	ro_refresh(db);
	/* ?4: the newest only: no later matching record of the same node */
	if (prep(db,
			       "SELECT r.id, r.time, r.node, r.instance, r.provenance_id, r.decision, r.record"
			       " FROM records r WHERE (?1 IS NULL OR r.node = ?1)"
			       " AND (?2 <= 0 OR r.time <= ?2) AND (?3 = 0 OR r.decision = 'admitted')"
			       " AND (?4 = 0 OR NOT EXISTS (SELECT 1 FROM records s WHERE s.node = r.node"
			       "  AND (?2 <= 0 OR s.time <= ?2) AND (?3 = 0 OR s.decision = 'admitted')"
			       "  AND (s.time > r.time OR (s.time = r.time AND s.id > r.id))))"
			       " ORDER BY r.node, r.time, r.id", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	if (q->node)
		sqlite3_bind_text(st, 1, q->node, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 1);
	sqlite3_bind_double(st, 2, q->until);
	sqlite3_bind_int(st, 3, q->admitted_only);
	sqlite3_bind_int(st, 4, q->newest_only);
	{
		void *v;
		int rc = rows_of(db, st, &rows, &v, n, err);
		*out = v;
		return rc;
	}
}

void state_records_free(struct record_rec *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].node);
		free(v[i].instance);
		free(v[i].provenance_id);
		free(v[i].decision);
		free(v[i].record);
	}
	free(v);
}

/* ---- the active agent's lease ---- */

/* The tables an agent changes; each write to them is fenced (state_lease_take). */
static const char *const fenced_tables[] = { "nodes", "events", "requests", "records", "cooldowns",
	"instances", "holds", "job_costs", "budget_holds", "pool_members", NULL };

static int lease_read(struct state_db *db, struct state_lease *out, burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (prep(db, "SELECT epoch, seq, holder, ident, renewed, expires FROM lease WHERE id=1", &st) != SQLITE_OK) {
		/* a database of an agent before leases: nobody holds one */
		if (strstr(sqlite3_errmsg(db->db), "no such table"))
			return 0;
		return fail(db, err, "read the lease");
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(st, 2), *id = (const char *)sqlite3_column_text(st, 3);
		out->epoch = sqlite3_column_int64(st, 0);
		out->seq = sqlite3_column_int64(st, 1);
		snprintf(out->holder, sizeof(out->holder), "%s", h ? h : "");
		snprintf(out->ident, sizeof(out->ident), "%s", id ? id : "");
		out->renewed = sqlite3_column_double(st, 4);
		out->expires = sqlite3_column_double(st, 5);
		rc = 1;
	} else
		rc = rc == SQLITE_DONE ? 0 : fail(db, err, "read the lease");
	unprep(db, st);
	return rc;
}

int state_lease_get(struct state_db *db, struct state_lease *out, burst_err_t *err)
{
	ro_refresh(db);
	return lease_read(db, out, err);
}

/*
 * This connection's fence: temporary triggers (this connection's alone)
 * that abort any change to the agent's tables unless the lease's epoch is
 * still epoch, checked inside the writing transaction, so that a change and
 * a takeover cannot interleave.
 */
static void fenced_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct state_db *db = sqlite3_user_data(ctx);

	(void)argc;
	(void)argv;
	if (db->on_fenced)
		db->on_fenced();
	sqlite3_result_null(ctx);
}

void state_on_fenced(struct state_db *db, void (*cb)(void))
{
	db->on_fenced = cb;
}

static int fence(struct state_db *db, long long epoch, burst_err_t *err)
{
	static const char *const ops[] = { "INSERT", "UPDATE", "DELETE" };
	char sql[1024];

	/* the trigger tells the agent first (state_on_fenced), then aborts */
	if (sqlite3_create_function(db->db, "burst_fenced", 0, SQLITE_UTF8, db, fenced_fn, NULL, NULL) != SQLITE_OK)
		return fail(db, err, "register the fence's function");
	snprintf(sql, sizeof(sql),
		 "CREATE TEMP TABLE IF NOT EXISTS burst_fence (epoch INTEGER NOT NULL);"
		 "DELETE FROM temp.burst_fence; INSERT INTO temp.burst_fence VALUES (%lld);", epoch);
	if (exec1(db, sql, err) < 0)
		return -1;
	for (size_t t = 0; fenced_tables[t]; t++) {
		int there = 0;
		/* a table an older file lacks (its migration waits for the lease:
		 * state_open_standby) is fenced once the migration made it */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM main.sqlite_master WHERE type='table' AND name='%s'",
			 fenced_tables[t]);
		if (int_of(db, sql, &there) < 0)
			return fail(db, err, "read the tables");
		if (!there)
			continue;
		for (size_t o = 0; o < 3; o++) {
			snprintf(sql, sizeof(sql),
				 "CREATE TEMP TRIGGER IF NOT EXISTS burst_fence_%s_%s BEFORE %s ON main.%s"
				 " WHEN (SELECT epoch FROM main.lease WHERE id=1) IS NOT (SELECT epoch FROM temp.burst_fence)"
				 " BEGIN SELECT burst_fenced(); SELECT RAISE(ABORT, 'fenced: another burst-agent holds the lease now (this one was deposed)'); END;",
				 fenced_tables[t], ops[o], ops[o], fenced_tables[t]);
			if (exec1(db, sql, err) < 0)
				return -1;
		}
	}
	db->fenced_epoch = epoch;
	return 0;
}

int state_lease_take(struct state_db *db, const struct state_lease *seen, const char *holder,
		     const char *ident, double ttl, long long *epoch, burst_err_t *err)
{
	struct state_lease cur;
	sqlite3_stmt *st;
	double t = wall_seconds();
	int rc;

	if (exec_kept(db, "BEGIN IMMEDIATE", err) < 0)
		return -1;
	/* a later release's agent migrated the file since it was opened here */
	if (int_of(db, "PRAGMA user_version", &rc) < 0) {
		fail(db, err, "read the schema version");
		goto undo;
	}
	if (rc > SCHEMA_VERSION) {
		newer_refused(db, rc, err);
		exec_kept(db, "ROLLBACK", NULL);
		return -2;
	}
	rc = lease_read(db, &cur, err);
	if (rc < 0)
		goto undo;
	/* someone renewed or took it since it was seen: not expired after all */
	if (cur.epoch != seen->epoch || cur.seq != seen->seq) {
		exec_kept(db, "ROLLBACK", NULL);
		return 0;
	}
	if (prep(db,
			       "INSERT INTO lease(id, epoch, seq, holder, ident, renewed, expires) VALUES(1,?1,0,?2,?3,?4,?5)"
			       " ON CONFLICT(id) DO UPDATE SET epoch=?1, seq=0, holder=?2, ident=?3, renewed=?4, expires=?5", &st) != SQLITE_OK) {
		fail(db, err, "prepare");
		goto undo;
	}
	sqlite3_bind_int64(st, 1, cur.epoch + 1);
	sqlite3_bind_text(st, 2, holder, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, ident, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 4, t);
	sqlite3_bind_double(st, 5, t + ttl);
	rc = sqlite3_step(st);
	unprep(db, st);
	if (rc != SQLITE_DONE) {
		fail(db, err, "take the lease");
		goto undo;
	}
	/* fenced inside the taking transaction: a fence that cannot be made
	 * undoes the taking, rather than leave a lease taken but reported not
	 * (nobody would act on it until it ran out) */
	if (fence(db, cur.epoch + 1, err) < 0 || add_event(db, NULL, "lease", holder, err) < 0 ||
	    exec_kept(db, "COMMIT", err) < 0)
		goto undo;
	*epoch = cur.epoch + 1;
	return 1;
undo:
	exec_kept(db, "ROLLBACK", NULL);
	return -1;
}

int state_lease_renew(struct state_db *db, long long epoch, double ttl, burst_err_t *err)
{
	sqlite3_stmt *st;
	double t = wall_seconds();
	int rc;

	if (prep(db, "UPDATE lease SET seq=seq+1, renewed=?1, expires=?2 WHERE id=1 AND epoch=?3", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, t);
	sqlite3_bind_double(st, 2, ttl > 0 ? t + ttl : 0);
	sqlite3_bind_int64(st, 3, epoch);
	rc = sqlite3_step(st);
	unprep(db, st);
	if (rc != SQLITE_DONE)
		return fail(db, err, "renew the lease");
	return sqlite3_changes(db->db) ? 1 : 0;
}


/* ---- cost records ---- */

static int step_done(struct state_db *db, sqlite3_stmt *st, burst_err_t *err, const char *what)
{
	int rc = sqlite3_step(st);

	unprep(db, st);
	return rc == SQLITE_DONE ? 0 : fail(db, err, what);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

int state_instance_launched(struct state_db *db, const struct cost_inst *in, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "INSERT OR IGNORE INTO instances(provider, instance, node, nodeset, type, region,"
			       " price, price_source, job, launched) VALUES(?,?,?,?,?,?,?,?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	bind_text_or_null(st, 1, in->provider ? in->provider : "");
	bind_text_or_null(st, 2, in->instance);
	bind_text_or_null(st, 3, in->node);
	bind_text_or_null(st, 4, in->nodeset);
	bind_text_or_null(st, 5, in->type);
	bind_text_or_null(st, 6, in->region);
	if (isnan(in->price))
		sqlite3_bind_null(st, 7);
	else
		sqlite3_bind_double(st, 7, in->price);
	bind_text_or_null(st, 8, in->price_source);
	sqlite3_bind_int64(st, 9, in->job);
	sqlite3_bind_double(st, 10, in->launched);
	return step_done(db, st, err, "record the instance");
}

/* joined or ended, set once */
static int instance_time(struct state_db *db, const char *col, const char *provider, const char *instance,
			 double t, burst_err_t *err)
{
	sqlite3_stmt *st;
	char sql[200];

	snprintf(sql, sizeof(sql), "UPDATE instances SET %s=? WHERE provider=? AND instance=? AND %s=0", col, col);
	if (prep(db, sql, &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, t);
	bind_text_or_null(st, 2, provider ? provider : "");
	bind_text_or_null(st, 3, instance);
	return step_done(db, st, err, "record the instance's time");
}

int state_instance_joined(struct state_db *db, const char *provider, const char *instance, double t,
			  burst_err_t *err)
{
	return instance_time(db, "joined", provider, instance, t, err);
}

int state_instance_ended(struct state_db *db, const char *provider, const char *instance, double t,
			 burst_err_t *err)
{
	return instance_time(db, "ended", provider, instance, t, err);
}

int state_hold(struct state_db *db, const struct cost_hold *h, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "INSERT INTO holds(job, node, start, end, user, account, partition)"
			       " VALUES(?,?,?,?,?,?,?) ON CONFLICT(job, node, start) DO UPDATE SET"
			       " end=CASE WHEN excluded.end>0 AND end=0 THEN excluded.end ELSE end END,"
			       " user=coalesce(excluded.user, user), account=coalesce(excluded.account, account),"
			       " partition=coalesce(excluded.partition, partition)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_int64(st, 1, h->job);
	bind_text_or_null(st, 2, h->node);
	sqlite3_bind_double(st, 3, h->start);
	sqlite3_bind_double(st, 4, h->end);
	bind_text_or_null(st, 5, h->user);
	bind_text_or_null(st, 6, h->account);
	bind_text_or_null(st, 7, h->partition);
	return step_done(db, st, err, "record the job's node");
}

int state_holds_close(struct state_db *db, long job, double keep_start, double t, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "UPDATE holds SET end=max(?, start) WHERE job=? AND end=0 AND start<>?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, t);
	sqlite3_bind_int64(st, 2, job);
	sqlite3_bind_double(st, 3, keep_start);
	return step_done(db, st, err, "close the job's nodes");
}

static int fill_job(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	(void)db;
	(void)err;
	*(long *)item = (long)sqlite3_column_int64(st, 0);
	return 0;
}

static void drop_plain(void *v, size_t n)
{
	(void)n;
	free(v);
}

int state_holds_open_jobs(struct state_db *db, long **jobs, size_t *n, burst_err_t *err)
{
	static const struct state_rows rows = { sizeof(long), fill_job, drop_plain, "read the open holds" };
	sqlite3_stmt *st;
	void *v;
	int rc;

	*jobs = NULL;
	*n = 0;
	if (prep(db, "SELECT DISTINCT job FROM holds WHERE end=0 ORDER BY job", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	rc = rows_of(db, st, &rows, &v, n, err);
	*jobs = v;
	return rc;
}

static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

static int fill_inst(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	struct cost_inst *in = item;

	(void)db;
	(void)err;
	in->provider = col_str(st, 0);
	in->instance = col_str(st, 1);
	in->node = col_str(st, 2);
	in->nodeset = col_str(st, 3);
	in->type = col_str(st, 4);
	in->region = col_str(st, 5);
	in->price = sqlite3_column_type(st, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 6);
	in->price_source = col_str(st, 7);
	in->job = (long)sqlite3_column_int64(st, 8);
	in->launched = sqlite3_column_double(st, 9);
	in->joined = sqlite3_column_double(st, 10);
	in->ended = sqlite3_column_double(st, 11);
	return 0;
}

static void drop_insts(void *v, size_t n)
{
	cost_insts_free(v, n);
}

static int fill_hold(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	struct cost_hold *h = item;

	(void)db;
	(void)err;
	h->job = (long)sqlite3_column_int64(st, 0);
	h->node = col_str(st, 1);
	h->start = sqlite3_column_double(st, 2);
	h->end = sqlite3_column_double(st, 3);
	h->user = col_str(st, 4);
	h->account = col_str(st, 5);
	h->partition = col_str(st, 6);
	return 0;
}

static void drop_holds(void *v, size_t n)
{
	cost_holds_free(v, n);
}

int state_cost_read(struct state_db *db, double from, struct cost_inst **insts, size_t *ni,
		    struct cost_hold **holds, size_t *nh, burst_err_t *err)
{
	static const struct state_rows irows = { sizeof(struct cost_inst), fill_inst, drop_insts,
		"read the cost records" };
	static const struct state_rows hrows = { sizeof(struct cost_hold), fill_hold, drop_holds,
		"read the cost records" };
	sqlite3_stmt *st;
	void *v;

	*insts = NULL;
	*holds = NULL;
	*ni = *nh = 0;
	if (prep(db, "SELECT provider, instance, node, nodeset, type, region, price, price_source,"
			       " job, launched, joined, ended FROM instances WHERE ended=0 OR ended>?"
			       " ORDER BY launched, provider, instance", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_double(st, 1, from);
	if (rows_of(db, st, &irows, &v, ni, err) < 0)
		return -1;
	*insts = v;
	if (prep(db, "SELECT job, node, start, end, user, account, partition FROM holds"
			       " WHERE end=0 OR end>? ORDER BY job, node, start", &st) != SQLITE_OK) {
		fail(db, err, "read the cost records");
		goto bad;
	}
	sqlite3_bind_double(st, 1, from);
	if (rows_of(db, st, &hrows, &v, nh, err) < 0)
		goto bad;
	*holds = v;
	return 0;
bad:
	cost_insts_free(*insts, *ni);
	*insts = NULL;
	*ni = 0;
	return -1;
}

/*
 * The one REAL that sql (one '?', the job id) selects: 1 with *out set (out
 * may be NULL), 0 when there is none (no row, or NULL), -1 with err.
 */
static int job_real(struct state_db *db, const char *sql, long job, double *out, const char *what,
		    burst_err_t *err)
{
	sqlite3_stmt *st;
	int rc, found = 0;

	if (prep(db, sql, &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_int64(st, 1, job);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		if (out)
			*out = sqlite3_column_double(st, 0);
		found = 1;
	}
	unprep(db, st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? found : fail(db, err, what);
}

int state_job_first_start(struct state_db *db, long job, double *start, burst_err_t *err)
{
	return job_real(db, "SELECT min(start) FROM holds WHERE job=?", job, start, "read the job's first hold", err);
}

int state_job_cost_get(struct state_db *db, long job, double *dollars, burst_err_t *err)
{
	return job_real(db, "SELECT dollars FROM job_costs WHERE job=?", job, dollars, "read the job's cost", err);
}

int state_job_cost_set(struct state_db *db, long job, double dollars, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "INSERT OR REPLACE INTO job_costs(job, time, dollars) VALUES(?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_int64(st, 1, job);
	sqlite3_bind_double(st, 2, wall_seconds());
	sqlite3_bind_double(st, 3, dollars);
	return step_done(db, st, err, "record the job's cost");
}

int state_budget_hold_add(struct state_db *db, long job, const char *budget, double estimate, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "INSERT OR REPLACE INTO budget_holds(job, budget, estimate, time) VALUES(?,?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_int64(st, 1, job);
	sqlite3_bind_text(st, 2, budget, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, estimate);
	sqlite3_bind_double(st, 4, wall_seconds());
	return step_done(db, st, err, "record the budget hold");
}

int state_budget_hold_del(struct state_db *db, long job, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "DELETE FROM budget_holds WHERE job=?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_int64(st, 1, job);
	return step_done(db, st, err, "forget the budget hold");
}

static int fill_budget_hold(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	struct budget_hold *h = item;

	(void)db;
	(void)err;
	h->job = (long)sqlite3_column_int64(st, 0);
	h->budget = col_str(st, 1);
	h->estimate = sqlite3_column_double(st, 2);
	return 0;
}

static void drop_budget_holds(void *v, size_t n)
{
	state_budget_holds_free(v, n);
}

int state_budget_holds(struct state_db *db, struct budget_hold **out, size_t *n, burst_err_t *err)
{
	static const struct state_rows rows = { sizeof(struct budget_hold), fill_budget_hold, drop_budget_holds,
		"read the budget holds" };
	sqlite3_stmt *st;
	void *v;
	int rc;

	*out = NULL;
	*n = 0;
	if (prep(db, "SELECT job, budget, estimate FROM budget_holds ORDER BY time, job", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	rc = rows_of(db, st, &rows, &v, n, err);
	*out = v;
	return rc;
}

void state_budget_holds_free(struct budget_hold *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].budget);
	free(v);
}

/* state_backup's copy, open as out: checked and made one file. */
static int backup_check(sqlite3 *out, const char *tmp, burst_err_t *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* a copy of a WAL database is one too: make it a single file */
	rc = sqlite3_exec(out, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(out, "PRAGMA integrity_check", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    !strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		sqlite3_finalize(st);
		return 0;
	}
	burst_err_set(err, "%s: the copy does not check: %s", tmp,
		      st && sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : sqlite3_errmsg(out));
	sqlite3_finalize(st);
	return -1;
}

int state_backup(struct state_db *db, const char *dest, burst_err_t *err)
{
	struct strbuf sb;
	sqlite3 *out = NULL;
	sqlite3_backup *b;
	char *tmp, *journal;
	int fd, rc, tries, ret = -1;

	sb_init(&sb);
	sb_addf(&sb, "%s.XXXXXX", dest);
	tmp = sb_take(&sb);
	if ((fd = mkstemp(tmp)) < 0) {
		burst_err_set(err, "%s: cannot make a file in its directory: %s", dest, strerror(errno));
		free(tmp);
		return -1;
	}
	/* the agent's state holds its nodes' records: as private as agent.db */
	if (fchmod(fd, 0600) < 0) {
		burst_err_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (sqlite3_open_v2(tmp, &out, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		burst_err_set(err, "%s: %s", tmp, out ? sqlite3_errmsg(out) : "out of memory");
		goto out;
	}
	if (!(b = sqlite3_backup_init(out, "main", db->db, "main"))) {
		burst_err_set(err, "%s: cannot start a backup: %s", db->path, sqlite3_errmsg(out));
		goto out;
	}
	/* every page in one step: one read transaction, one moment of the
	 * agent's state (the agent's writes to the WAL go on beside it) */
	for (tries = 0; (rc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED; tries++) {
		if (tries == 50)
			break;
		sqlite3_sleep(100);
	}
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		burst_err_set(err, "%s: the backup did not finish: %s", db->path,
			      rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? "the database stayed locked for 5 s" : sqlite3_errstr(rc));
		goto out;
	}
	if (backup_check(out, tmp, err) < 0)
		goto out;
	if (sqlite3_close(out) != SQLITE_OK) {
		burst_err_set(err, "%s: %s", tmp, sqlite3_errmsg(out));
		goto out;
	}
	out = NULL;
	if (fsync(fd) < 0 || rename(tmp, dest) < 0) {
		burst_err_set(err, "%s: cannot write it: %s", dest, strerror(errno));
		goto out;
	}
	(void)sync_parent_dir(dest);   /* the rename, on disk */
	ret = 0;
out:
	if (out)
		sqlite3_close(out);
	close(fd);
	if (ret < 0) {
		unlink(tmp);
		sb_init(&sb);   /* and a journal the copy may have left */
		sb_addf(&sb, "%s-journal", tmp);
		journal = sb_take(&sb);
		unlink(journal);
		free(journal);
	}
	free(tmp);
	return ret;
}

/* ---- a warm pool's members ---- */

int state_pool_add(struct state_db *db, const struct pool_member *m, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "INSERT OR REPLACE INTO pool_members(provider, instance, node, nodeset, type, region,"
		 " admitted_at, stopped_at, price, provenance_id, record, attestation, blessings, acceptance)"
		 " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, m->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, m->instance, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, m->node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, m->nodeset, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, m->type, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, m->region, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 7, m->admitted_at);
	sqlite3_bind_double(st, 8, m->stopped_at);
	sqlite3_bind_double(st, 9, m->price);
	sqlite3_bind_text(st, 10, m->provenance_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 11, m->record, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 12, m->attestation, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 13, m->blessings ? m->blessings : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 14, m->acceptance ? m->acceptance : "", -1, SQLITE_TRANSIENT);
	return step_done(db, st, err, "record the warm pool's member");
}

int state_pool_del(struct state_db *db, const char *provider, const char *instance, burst_err_t *err)
{
	sqlite3_stmt *st;

	if (prep(db, "DELETE FROM pool_members WHERE provider=? AND instance=?", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	sqlite3_bind_text(st, 1, provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, instance, -1, SQLITE_TRANSIENT);
	return step_done(db, st, err, "forget the warm pool's member");
}

static int fill_pool_member(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err)
{
	struct pool_member *m = item;

	(void)db;
	(void)err;
	m->provider = col_str(st, 0);
	m->instance = col_str(st, 1);
	m->node = col_str(st, 2);
	m->nodeset = col_str(st, 3);
	m->type = col_str(st, 4);
	m->region = col_str(st, 5);
	m->admitted_at = sqlite3_column_double(st, 6);
	m->stopped_at = sqlite3_column_double(st, 7);
	m->price = sqlite3_column_double(st, 8);
	m->provenance_id = col_str(st, 9);
	m->record = col_str(st, 10);
	m->attestation = col_str(st, 11);
	m->blessings = col_str(st, 12);
	m->acceptance = col_str(st, 13);
	return 0;
}

static void drop_pool_members(void *v, size_t n)
{
	state_pool_free(v, n);
}

int state_pool(struct state_db *db, const char *nodeset, struct pool_member **out, size_t *n, burst_err_t *err)
{
	static const struct state_rows rows = { sizeof(struct pool_member), fill_pool_member, drop_pool_members,
		"read the warm pool" };
	sqlite3_stmt *st;
	void *v;
	int rc;

	*out = NULL;
	*n = 0;
	if (prep(db, "SELECT provider, instance, node, nodeset, type, region, admitted_at, stopped_at, price,"
		 " provenance_id, record, attestation, blessings, acceptance FROM pool_members"
		 " WHERE ?1 IS NULL OR nodeset = ?1 ORDER BY stopped_at, provider, instance", &st) != SQLITE_OK)
		return fail(db, err, "prepare");
	if (nodeset)
		sqlite3_bind_text(st, 1, nodeset, -1, SQLITE_TRANSIENT);
	rc = rows_of(db, st, &rows, &v, n, err);
	*out = v;
	return rc;
}

void state_pool_free(struct pool_member *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].provider);
		free(v[i].instance);
		free(v[i].node);
		free(v[i].nodeset);
		free(v[i].type);
		free(v[i].region);
		free(v[i].provenance_id);
		free(v[i].record);
		free(v[i].attestation);
		free(v[i].blessings);
		free(v[i].acceptance);
	}
	free(v);
}
