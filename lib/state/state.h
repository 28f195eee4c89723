/*
 * state.h - the burst agent's durable state: one SQLite database (WAL) with
 * the life of every node (doc/design.md §7) and an event log. Every transition is
 * written, atomically with its event (alone, or in a batch of many nodes'
 * transitions with one commit), before the action it leads to, so that a
 * restart resumes in-flight work.
 */
#ifndef BURST_STATE_H
#define BURST_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include "burst_err.h"
#include "cost.h"
#include "node_state.h"

struct state_db;

/* A node's row. Strings are owned by the struct (state_node_clear frees them). */
struct node_rec {
	char *name;
	char *nodeset;
	enum node_state state;
	int attempt;             /* launches so far; part of the idempotency key */
	char *instance;          /* provider's instance id */
	char *address;
	char *token;             /* one-time join token of this attempt */
	bool token_used;
	long job;                /* job that asked for the node, or 0 */
	double since;            /* time of the last transition */
	double cooldown_until;   /* powered down but kept out of Slurm until then (0: none) */
	char *last_error;
	bool want_resume;        /* Slurm asked for the node while it was terminating */
	char *provenance_id;     /* sha256 of the node's admitted report (NULL before admission) */
	char *provider;          /* the configured provider of this attempt's instance */
	char *instance_type;
	char *region;            /* may be NULL (local) */
	double retry_at;         /* launching: when to try the launch again (throttled, transient);
				  * requested: not launched before (relaunch backoff) */
	int failures;            /* instances in a row whose slurmd never registered: bounds
				  * the relaunches (0 again once one registers) */
	bool early;              /* launched when job was allocated (EarlyLaunch=), before Slurm
				  * asked: the agent watches the job until Slurm takes the node over */
};

/*
 * Open (creating if needed) path; caller closes with state_close. A
 * database of an older schema version is migrated to STATE_SCHEMA_VERSION
 * in one transaction, one step per version (state.c); if a step fails
 * (e.g. a node in a state that is none, named) nothing of it is kept and
 * NULL is returned with err naming the step. A database of a newer version
 * is refused before anything is written to it.
 */
struct state_db *state_open(const char *path, burst_err_t *err);
/*
 * The agent's open: as state_open, but an existing database of an older
 * version whose lease another agent holds (a row not released) is not
 * migrated, nothing written to it: that agent (perhaps of the release
 * before, on the other host) is using it. *older is then its version, else
 * -1. The agent waits as a standby and migrates it (state_migrate) once it
 * has taken the lease, when the other agent's writes are fenced.
 */
struct state_db *state_open_standby(const char *path, int *older, burst_err_t *err);
/* What state_open does to an older database: 0, or -1 with err, the file as it was. */
int state_migrate(struct state_db *db, burst_err_t *err);
void state_close(struct state_db *db);

/* Make sure a row exists for name (powered_down); no-op if it does. */
int state_node_ensure(struct state_db *db, const char *name, const char *nodeset,
		      burst_err_t *err);
/* Read a node; returns 1 found, 0 not found, -1 error. */
int state_node_get(struct state_db *db, const char *name, struct node_rec *out,
		   burst_err_t *err);
/* Only its state, instance and provider (the rest zero): what a
 * transition's cost record needs of the record before it. */
int state_node_get_brief(struct state_db *db, const char *name, struct node_rec *out, burst_err_t *err);
void state_node_clear(struct node_rec *r);

/*
 * Compare-and-set: if name is in state from (or from is NS_ANY), write r's
 * fields with state to, and an event with detail, in one transaction.
 * Returns 1 done, 0 not in state from (nothing written), -1 error (also
 * for a to that is not a node state: the schema's CHECK refuses it).
 */
int state_transition(struct state_db *db, const char *name, enum node_state from,
		     const struct node_rec *r, enum node_state to, const char *detail,
		     burst_err_t *err);

/*
 * A batch: state_begin opens one transaction that keeps every write until
 * state_commit (transitions, events, cooldowns, requests), so that the
 * transitions of many nodes cost one commit (one sync) instead of one each.
 * Each transition in it stays atomic. Nothing in it is durable, nor seen by
 * other connections, before state_commit returns 0: do nothing a transition
 * leads to (written before the action it leads to) until then.
 * state_commit returns 0 (also with no batch open), or -1 with err when
 * nothing of the batch was written; state_rollback drops the batch. Not
 * nested: state_begin in a batch is -1. state_in_batch: one is open.
 */
int state_begin(struct state_db *db, burst_err_t *err);
int state_commit(struct state_db *db, burst_err_t *err);
void state_rollback(struct state_db *db);
bool state_in_batch(const struct state_db *db);
/*
 * A batch whose commit does not wait for the disk (PRAGMA synchronous=NORMAL
 * for its one commit; every other commit waits, FULL): once state_commit
 * returns 0 it is written and seen, and survives the agent's crash, but
 * not a power cut until state_sync has returned 0. state_sync may run on
 * any thread (it does not use the connection): it syncs the write-ahead
 * log of the database at path (every commit before it, of any batch).
 */
int state_begin_unsynced(struct state_db *db, burst_err_t *err);
int state_sync(const char *path, burst_err_t *err);
const char *state_path(const struct state_db *db);

/*
 * Statements prepared on this connection so far. Each SQL text is prepared
 * once and kept for the connection's life (finalized by state_close); a
 * second use of one while the first is still reading gets its own. For
 * tests and the metrics: steady work adds none.
 */
unsigned long state_prepares(const struct state_db *db);

/* Names of nodes in state st (NULL-terminated; free with state_names_free). */
char **state_nodes_in(struct state_db *db, enum node_state st, burst_err_t *err);
/* The same, and each one's job in *jobs (caller frees; NULL when the
 * names are NULL): what a launch round reads of every requested node
 * before it takes them one by one. */
char **state_nodes_in_jobs(struct state_db *db, enum node_state st, long **jobs, burst_err_t *err);
void state_names_free(char **names);
/* Names of the nodes in state st launched at a job's allocation (early). */
char **state_nodes_early(struct state_db *db, enum node_state st, burst_err_t *err);

/*
 * Names of nodes in state st whose time field is set (> 0) and at or
 * before t, so that a periodic check reads only the rows it may act on
 * (NULL-terminated; free with state_names_free; NULL with err on error).
 */
enum state_time_field {
	STATE_SINCE,             /* the time of the last transition */
	STATE_COOLDOWN_UNTIL,
	STATE_RETRY_AT,          /* when a launch is tried again */
};
char **state_nodes_due(struct state_db *db, enum node_state st, enum state_time_field field,
		       double t, burst_err_t *err);

/* Record that a spool request was taken in (so a replayed file is skipped). */
int state_request_seen(struct state_db *db, const char *name, burst_err_t *err);
int state_request_add(struct state_db *db, const char *name, burst_err_t *err);

/* Store the node's join report (its provenance record) for the admission of
 * its current instance. Returns 0 or -1 with err. */
int state_record_add(struct state_db *db, const char *node, const char *instance,
		     const char *provenance_id, const char *record, const char *decision,
		     burst_err_t *err);

/*
 * Capacity cooldowns of (provider, type, region), kept across restarts:
 * state_cooldown_until returns the time until which key is cooling down
 * (0 if not); state_cooldown_hit records a capacity failure, doubling the
 * cooldown on repeats from base up to max seconds, and returns its end.
 */
double state_cooldown_until(struct state_db *db, const char *key);
double state_cooldown_hit(struct state_db *db, const char *key, double base, double max,
			  const char *why, burst_err_t *err);
/* The cooldowns in force at t, in key order, in one query: keys (free each
 * and the array) and their ends; 0, or -1 with err. */
int state_cooldowns_active(struct state_db *db, double t, char ***keys, double **until, size_t *n,
			   burst_err_t *err);

/* Append an event without a transition. */
int state_event(struct state_db *db, const char *node, const char *what,
		const char *detail, burst_err_t *err);

/* ---- read-only views (burstctl status, nodes, events) ---- */

/*
 * Open an existing database read-only: never creates it, never writes,
 * works beside a running agent (WAL readers do not block the writer) and
 * when the agent is down, also for a user who cannot write StateDir (then
 * the file is read as immutable until an agent's -wal file appears).
 * Returns a handle the caller closes with state_close, or NULL with err; a
 * missing file gives "no agent state at PATH: has burst-agent run?" and
 * sets *missing (if missing is not NULL) so the caller can tell.
 */
struct state_db *state_open_readonly(const char *path, bool *missing, burst_err_t *err);

/*
 * The schema version this build writes (PRAGMA user_version; state.c says
 * what each one changed), and the one of db's file: 0, or -1 with err.
 */
#define STATE_SCHEMA_VERSION 2
int state_schema_version(struct state_db *db, int *version, burst_err_t *err);

/*
 * A copy of the whole database db (open for reading, an agent may be
 * writing it) as it was at one moment: SQLite's online backup in one read
 * transaction, into a temporary file beside dest that is checked
 * (integrity_check), made a single file (no -wal), synced, 0600, and renamed
 * over dest. 0, or -1 with err (dest untouched, nothing left beside it).
 */
int state_backup(struct state_db *db, const char *dest, burst_err_t *err);

/*
 * Every node's row, ordered by name. On success *out is a new array of *n
 * records that the caller owns and frees with state_nodes_free (which also
 * frees each record's strings); *out is NULL when *n is 0. Returns 0 or -1
 * with err (then *out is NULL and *n 0).
 */
int state_nodes_all(struct state_db *db, struct node_rec **out, size_t *n, burst_err_t *err);
void state_nodes_free(struct node_rec *v, size_t n);
/*
 * As state_nodes_all, with only each row's name, state, attempt, instance,
 * since and provider (the other fields NULL or 0): what the reconciler
 * reads of every node, at a tenth of the memory of a full record's strings.
 * The agent's own database only (it has every column).
 */
int state_nodes_brief(struct state_db *db, struct node_rec **out, size_t *n, burst_err_t *err);

/* An event's row. Strings are owned by the array (state_events_free). */
struct event_rec {
	long long id;            /* increasing: the order events were written */
	double time;             /* seconds since the epoch */
	char *node;              /* may be NULL */
	char *what;              /* "FROM -> TO" for a transition, else a word */
	char *detail;            /* may be NULL */
};

struct event_query {
	long long after_id;      /* only events with id > after_id (0: from the first) */
	const char *node;        /* only this node's events (NULL: every node's) */
	double since;            /* only events written at or after this time (0: any) */
	size_t limit;            /* at most this many (0: no limit) */
	bool newest;             /* with limit: the newest limit events, not the oldest */
};

/*
 * The events that q selects, oldest first. On success *out is a new array
 * of *n records that the caller owns and frees with state_events_free;
 * *out is NULL when *n is 0. Returns 0 or -1 with err.
 */
int state_events(struct state_db *db, const struct event_query *q,
		 struct event_rec **out, size_t *n, burst_err_t *err);
void state_events_free(struct event_rec *v, size_t n);

/* The id of the newest event (0 if none) into *id. Returns 0 or -1 with err. */
int state_events_last_id(struct state_db *db, long long *id, burst_err_t *err);

/* A provenance record's row (a node's join report and the agent's decision).
 * Strings are owned by the array (state_records_free). */
struct record_rec {
	long long id;            /* increasing: the order records were written */
	double time;             /* when the agent stored it, seconds since the epoch */
	char *node;
	char *instance;          /* may be NULL */
	char *provenance_id;     /* sha256 of record */
	char *decision;          /* "admitted", or the reason the node was rejected */
	char *record;            /* the provenance JSON as the node sent it */
};

struct record_query {
	const char *node;        /* only this node's records (NULL: every node's) */
	double until;            /* only records written at or before this time (0: any) */
	bool admitted_only;      /* only records whose decision is "admitted" */
	bool newest_only;        /* only the newest matching record of each node */
};

/*
 * The records that q selects, ordered by node, then oldest first. On success
 * *out is a new array of *n records that the caller owns and frees with
 * state_records_free; *out is NULL when *n is 0. Returns 0 or -1 with err.
 */
int state_records(struct state_db *db, const struct record_query *q,
		  struct record_rec **out, size_t *n, burst_err_t *err);
void state_records_free(struct record_rec *v, size_t n);

/*
 * The active agent's lease: one row. Of the agents sharing a StateDir, the
 * one holding it acts; the others wait (agent_lease.c). Each taking raises
 * the epoch, and the taker's connection is fenced: any change it makes to
 * the agent's tables (nodes, events, requests, records, cooldowns) fails
 * ("fenced: ...") once another agent has taken the lease, checked in the
 * writing transaction itself.
 */
struct state_lease {
	long long epoch;         /* 0: never taken */
	long long seq;           /* renewals within the epoch */
	char holder[256];        /* for people: "host pid N" */
	char ident[256];         /* for agents: the holder's boot, pid namespace and pid */
	double renewed;          /* the holder's clock at its last renewal */
	double expires;          /* the holder's clock: renewed + LeaseTimeout (0: released) */
};

/* The lease into *out: 1, or 0 when nobody ever held it, -1 with err. */
int state_lease_get(struct state_db *db, struct state_lease *out, burst_err_t *err);
/*
 * Take the lease if it is still as seen (same epoch and renewal, a zeroed
 * seen for none), with epoch + 1, and fence this connection to that epoch.
 * 1 taken (*epoch), 0 it changed since (its holder lives), -1 with err;
 * -2 with err when the file is at a newer schema than this build's (a later
 * release's agent migrated it since it was opened here): not taken.
 */
int state_lease_take(struct state_db *db, const struct state_lease *seen, const char *holder,
		     const char *ident, double ttl, long long *epoch, burst_err_t *err);
/* Renew the lease of epoch for ttl seconds (0: release it, for a clean
 * stop). 1 renewed, 0 another agent took it (deposed), -1 with err. */
int state_lease_renew(struct state_db *db, long long epoch, double ttl, burst_err_t *err);
/*
 * cb is called (on the writing thread, inside the aborted statement) by
 * the first change a fenced connection tries after another agent took the
 * lease, before the change fails: a deposed agent steps down there rather
 * than log the failure and go on to its next step. NULL: none.
 */
void state_on_fenced(struct state_db *db, void (*cb)(void));

/* ---- cost records (lib/core/cost.h; doc/admin-guide.md "Cost and budgets") ---- */

/* An instance launched (or adopted): its row, once (a second call for the
 * same provider and instance leaves the first). 0, or -1 with err. */
int state_instance_launched(struct state_db *db, const struct cost_inst *in, burst_err_t *err);
/* Its admission, its termination: set once each (later calls change nothing). */
int state_instance_joined(struct state_db *db, const char *provider, const char *instance, double t,
			  burst_err_t *err);
int state_instance_ended(struct state_db *db, const char *provider, const char *instance, double t,
			 burst_err_t *err);
/* A job's hold of a node since h->start: added, or its end (when h->end
 * > 0 and it had none) and the job's user, account and partition set. */
int state_hold(struct state_db *db, const struct cost_hold *h, burst_err_t *err);
/* The job's open holds whose start is not keep_start end at t (a job
 * requeued, or started again elsewhere). */
int state_holds_close(struct state_db *db, long job, double keep_start, double t, burst_err_t *err);
/* The jobs that hold a node now (open holds), into *jobs (free it). */
int state_holds_open_jobs(struct state_db *db, long **jobs, size_t *n, burst_err_t *err);
/* The instances alive after from and the holds open after from (free with
 * cost_insts_free and cost_holds_free). 0, or -1 with err. */
int state_cost_read(struct state_db *db, double from, struct cost_inst **insts, size_t *ni,
		    struct cost_hold **holds, size_t *nh, burst_err_t *err);
/* When the job first held a burst node: 1 (*start), 0 never, -1 with err. */
int state_job_first_start(struct state_db *db, long job, double *start, burst_err_t *err);
/* A job's cost as written to Slurm once it ended: 1 (*dollars), 0 none yet, -1 with err. */
int state_job_cost_get(struct state_db *db, long job, double *dollars, burst_err_t *err);
int state_job_cost_set(struct state_db *db, long job, double dollars, burst_err_t *err);

/* Jobs the agent held because their launch would cross a budget: the
 * budget's name and the launch's estimate (USD), till released. */
struct budget_hold {
	long job;
	char *budget;
	double estimate;
};
int state_budget_hold_add(struct state_db *db, long job, const char *budget, double estimate, burst_err_t *err);
int state_budget_hold_del(struct state_db *db, long job, burst_err_t *err);
int state_budget_holds(struct state_db *db, struct budget_hold **out, size_t *n, burst_err_t *err);
void state_budget_holds_free(struct budget_hold *v, size_t n);


/*
 * A warm pool's member (issue 32, burst.conf(5) WarmPool=): an admitted
 * instance kept stopped rather than terminated, with its admission: the
 * provenance record and attestation it was admitted with and the
 * blessings' and acceptance suite's versions then. One row per (provider,
 * instance), written when the instance is stopped into the pool, deleted
 * when it is taken or terminated.
 */
struct pool_member {
	char *provider, *instance;
	char *node;              /* the node it was admitted as */
	char *nodeset, *type, *region;
	double admitted_at;      /* seconds since the epoch */
	double stopped_at;
	double price;            /* USD per stopped hour (config_stopped_price) */
	char *provenance_id;
	char *record;            /* its provenance record (JSON) */
	char *attestation;       /* its attestation (may be NULL) */
	char *blessings;         /* the blessings' version it was admitted under ("" none) */
	char *acceptance;        /* the acceptance suite's version it passed ("" none) */
};
/* Add m (or replace the row of its provider and instance): 0, or -1 with err. */
int state_pool_add(struct state_db *db, const struct pool_member *m, burst_err_t *err);
/* Forget a member (none there is fine): 0, or -1 with err. */
int state_pool_del(struct state_db *db, const char *provider, const char *instance, burst_err_t *err);
/* The members of nodeset (NULL: every node set), the longest stopped first. */
int state_pool(struct state_db *db, const char *nodeset, struct pool_member **out, size_t *n, burst_err_t *err);
void state_pool_free(struct pool_member *v, size_t n);

#endif
