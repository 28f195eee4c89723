/*
 * The burst agent's parts (internal): what they share. One agent per
 * process, its state in the global A; one thread runs it all (agent.c's
 * poll loop), so nothing here is locked. Provider calls alone run beside
 * it, on each provider's worker thread (pworker.h), which touches only its
 * job and its driver, and calls to slurmctld, on the Slurm worker
 * (agent_slurm.c); their outcomes come back to the loop.
 *
 *   agent.c            start-up, the poll loop, sockets and control requests, logging
 *   agent_conf.c       configuration state: burst.conf, catalog, candidates, nodes, drivers
 *   node_life.c        node life: its edges (node_life.h), transitions, batches, failing a node
 *   agent_spool.c      requests from the power-save programs' spool
 *   agent_launch.c     launching and terminating instances, cooldowns
 *   agent_join.c       join reports and admission
 *   agent_notice.c     spot interruption notices from the nodes
 *   agent_slurm.c      the Slurm adapter: what the agent asks of and tells slurmctld, on its worker
 *   agent_reconcile.c  reconciler glue: provider listings against the node records
 *   agent_lease.c      the active agent's lease: standby, takeover, stepping down
 *   agent_prov.c       provider calls through the workers
 *   agent_metrics.c    Prometheus metrics: the counters and the MetricsListen= server
 *   agent_cost.c       cost records (instances, the jobs on their nodes), job costs, budgets
 */
#ifndef BURST_AGENT_INT_H
#define BURST_AGENT_INT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "catalog.h"
#include "config.h"
#include "conn.h"
#include "htab.h"
#include "join_auth.h"
#include "loglimit.h"
#include "provider.h"
#include "pworker.h"
#include "state.h"
#include "wire.h"

/* A node launched at allocation (and, before Slurm 23.11.1, any node)
 * starts slurmd at least this long before the next tick of the clock its
 * boot time is counted in, unless it has another reason to be safe
 * (agent_join.c, lib/admit/slurmd_start.h). */
#define SLURMD_WINDOW_MARGIN_MS 250

struct bnode {
	const char *name;
	int nodeset;
	int index;               /* global index: the node's address */
	int pos;                 /* its place in its node set's hostlist */
	bool registered;         /* its slurmd was seen responding since its admission */
	bool answer_pending;     /* admitted; its answer waits until slurmctld has its address */
	double answered_at;      /* now() when it was last answered admitted (or this agent took it
	                          * over admitted): its slurmd's registration is waited for from then */
	double missing_since;    /* reconciler: first round its instance was not listed (0: listed) */
	double requested_at;     /* when the agent took Slurm's last resume request for it (0: not since start) */
	bool busy;               /* a provider call for it is in flight (launch, terminate): not repeated meanwhile */
	bool failing;            /* its failure waits for its instance's console (node_life.c) */
	bool paced;              /* its launch waits for its region's tokens (agent_pace.c) */
	double retry_after;      /* mono(): a failed terminate is tried again then */
	bool powering_down;      /* its cooldown's power-down is on the Slurm worker */
	bool lost_asked;         /* reconciler: its instance vanished; Slurm is asked for its jobs */
	char *noticed;           /* owned: the instance whose interruption notice was acted on (NULL:
	                          * none; a pointer, not an array: a burst has thousands of nodes) */
	uint64_t addr_in_slurm;  /* addr_key() of the instance and address slurmctld took as its
	                          * NodeAddr at launch (0: none): its admission is answered at once */
};

/* A key of an instance and its address (never 0): what addr_in_slurm holds. */
uint64_t addr_key(const char *instance, const char *address);
/* Tell slurmctld a just launched instance's address (agent_join.c). */
void address_at_launch(const char *node, const char *instance, const char *address);

/* A configured provider and its driver. */
struct aprov {
	const struct cfg_provider *cfg;
	const struct provider_ops *ops;
	struct provider *drv;    /* used only on its worker */
	struct pworker *w;
	int catalog_id;          /* the catalog's provider name, interned */
	bool listing;            /* a reconciler listing of it is queued or running */
};

struct agent {
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct state_db *db;
	int db_older;            /* agent.db's schema, older than this build's, left for
				  * the lease's holder: migrated once this agent takes it (-1: none) */
	struct bnode *nodes;
	size_t nnodes;
	struct htab node_index;  /* name -> its struct bnode (node_find) */
	struct aprov *provs;     /* a driver for each configured provider */
	size_t nprovs;
	size_t **ranked;         /* per node set: candidate indexes in launch order */
	size_t *nranked;
	char spool[PATH_MAX], nodes_dir[PATH_MAX];
	const char *conf_path, *slurm_conf, *libexec, *node_bin;
	uid_t slurm_uid;
	char munge_socket[PATH_MAX]; /* empty: munge's default */
	struct slurm_acct slurm_acct; /* Slurm's accounting enforcement, read at start (slurm_settings) */
	bool account_check;      /* Account= budgets and Slurm does not enforce associations
				  * (BudgetAccountTrust=unenforced): each job's account is
				  * checked against slurmdbd before a launch for it */
	FILE *log;               /* NULL: stderr */
	bool syslog;             /* log to syslog (LOG_DAEMON) instead */
	const char *log_path;    /* -L, else burst.conf LogFile= */
	bool exiting;            /* at exit: a worker in the middle of a call is not waited for */
};

extern struct agent A;

/* agent.c: logging and clocks */
void logmsg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_reopen_if_asked(void);   /* SIGUSR1's: the log file opened again */
#define INFO(...) logmsg("info", __VA_ARGS__)
#define ERR(...) logmsg("error", __VA_ARGS__)
/*
 * A line a peer can provoke as often as it likes (a malformed report, a
 * refused connection): limited per call site (loglimit.h), what is held
 * back said in one line a while later ("WHAT: N more like it not logged").
 */
void logmsg_limited(struct loglimit *l, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define ERR_LIMITED(what_, ...)                                              \
	do {                                                                 \
		static struct loglimit ll_ = { .what = (what_) };            \
		logmsg_limited(&ll_, "error", __VA_ARGS__);                  \
	} while (0)
/* the held-back lines' summaries that are due (every tick; force: all, at exit) */
void loglimit_flush_all(bool force);
double now(void);
/* The connections the loop reads (the server's, in agent.c): the join
 * code answers on them. */
struct conn_table *agent_conns(void);
/* For durations: seconds on a clock that does not jump. */
double mono(void);

/* agent_conf.c: configuration state */
int load_conf(void);
/* Budgets by account against Slurm's enforcement (A.slurm_acct): -1 refused
 * (said), else 0 with warnings said and A.account_check set for cfg. */
int budget_accounts_verdict(const struct burst_config *cfg);
void ensure_nodes(void);
void agent_conf_free(void);
struct bnode *node_find(const char *name);
int node_index_for(const struct aprov *p, const struct bnode *bn);
const struct cfg_nodeset *nodeset_of(const char *node);
struct aprov *prov_by_name(const char *name);
struct aprov *prov_of(const struct candidate *c);
void rank_candidates(void);
/* A job's launch order in a node set (agent_conf.c). */
struct job_order {
	uint32_t job;            /* 0: a node resumed for no job */
	int nodeset;
	const size_t *order;     /* candidate indexes, best first (into A.ranked or own) */
	size_t n;
	size_t *own;
	char how[600];           /* "job 12's contract cheap", "node set order: ..." */
};
/* false while the job's contract is being read from slurmctld: ask again later */
bool job_order_for(struct job_order *jo, int nsi, uint32_t job, const char *node);
void job_order_free(struct job_order *jo);

/* node_life.c: node life (its transitions: node_life.h) */
void random_token(char *buf, size_t len);
void admission_path(const char *node, char *buf, size_t len);

/* agent_spool.c */
void take_spool(void);
void spool_timers(void);

/* agent_launch.c */
void cooldown_key(const char *prov, const char *type, const char *region, char *buf, size_t len);
void launch_retry(void);
/* launches of requested nodes, retries, terminations and cooldowns: each turn */
void launch_timers(void);
/* Send these launching nodes (one candidate) as one batch now; how many were
 * sent. With prov, only those still launching through prov in region (the
 * region queue they waited in; NULL region: none): a node picked again for
 * another region while it waited is left for launch_retry to queue there. */
size_t launch_send(char **names, size_t n, const char *prov, const char *region);

/* agent_pace.c: launches and terminations paced to each region's rate limits */
/* When (mono()) one more instance than those waiting and planned could be
 * requested in that region. */
double pace_launch_eta(const char *prov, const char *region);
/* One instance picked for the region this round (pace_round_end forgets it). */
void pace_plan(const char *prov, const char *region);
void pace_round_end(void);
/* Launch intents of one candidate (key: its type and node set) into the
 * region's queue, sent by pace_run as its buckets allow. */
void pace_launch(char **names, size_t n, const char *prov, const char *region, const char *key);
void pace_run(void);
/* The answer to a paced launch of n instances (the call from t0 to t1). */
void pace_launch_answer(const char *prov, const char *region, size_t n, double t0, double t1, bool throttled);
/* May one instance be terminated now? If not, when (mono()). */
bool pace_terminate_take(const char *prov, const char *region, double *when);
void pace_terminate_throttled(const char *prov, const char *region);
size_t pace_waiting(void);
void pace_free(void);
void terminate(const char *node);

/*
 * agent_join.c: join reports and admission. A node on a join connection,
 * and how it is answered: a node that began with a hello (lib/admit/join_auth.h)
 * gets every answer signed by the agent (a munge credential of root's,
 * made on the signer's worker thread, off the loop) and bound to its hello
 * and its report; one that did not (a burst-node older than the agent)
 * gets the answer unsigned, as before.
 */
struct join_peer {
	int fd;
	bool authed;              /* it began with a hello */
	struct join_hello hello;
	char digest[65];          /* its report's record digest ("" until read) */
	char token[128];          /* its report's token claim ("" until read, or longer) */
};
/* A whole line on join connection c (c->data: its hello's state): true
 * while the connection stays open (its hello is being answered). */
bool join_line(struct conn *c);
/* Connection c sent more than a report may be: refused. */
void join_too_big(struct conn *c);
/* Answer p with o (put here); once it is written, admitted (a node name,
 * or NULL) is marked answered. */
void join_answer(const struct join_peer *p, const char *answer, const char *admitted);
/* The munge worker (the agent's credentials made, the nodes' decoded): 0,
 * or -1 (logged). Stopped at exit. */
int join_signer_start(void);
void join_signer_stop(void);

/* agent_notice.c: a node's spot interruption notice (op "notice"), its
 * credential decoded off the loop: its payload, and the uid that made it
 * (payload NULL: refused, failed says why). */
void handle_notice(struct join_peer *p, const char *payload, uid_t uid, const char *failed);
/* A notice without a credential. */
void notice_malformed(struct join_peer *p, size_t got);

/*
 * agent_slurm.c: every call to slurmctld (but slurm_settings, at start-up)
 * runs on the Slurm worker, in the order asked; what it brings back is
 * handled on the loop. A stopped or slow slurmctld holds only the worker.
 */
int slurm_settings(void);
int slurm_worker_start(void);
/* At exit: false when a call is still running (libslurm is then not shut down). */
bool slurm_worker_stop(void);
/* Calls queued or running. */
size_t slurm_pending(void);
void slurm_adapter_free(void);
/* Tell Slurm: the node's address, or its state with a reason (NULL: none). */
void slurm_node(const char *name, const char *addr, uint32_t state, const char *reason);
/* The same, then then(arg, ran, ok) on the loop: ran false if the agent
 * stopped first, ok whether slurmctld took it. */
void slurm_node_then(const char *name, const char *addr, uint32_t state, const char *reason,
		     void (*then)(void *arg, bool ran, bool ok), void *arg);
/* Let job (requeued from node) start at once: its BeginTime cleared. */
void slurm_job_begin_now(uint32_t job, const char *node);
/* Requeue job (running on node, whose instance is about to go); once
 * requeued it is let go on as one from a lost node. */
void slurm_job_requeue(uint32_t job, const char *node, const char *why);
/* A job Slurm requeued from a lost node: let go on once it is pending
 * (watched a while by the Slurm adapter, each turn). */
void slurm_lost_job_watch(uint32_t job);
/* Each turn: slurmds that did not register, nodes launched at allocation
 * whose job left them before Slurm took them over (reclaimed), jobs held
 * after a refusal, holds to try again, jobs requeued from lost nodes, and
 * last the turn's jobs_on() requests in one. */
void slurm_timers(void);
/* The running jobs on node, to then(arg, true, ids, n) on the loop (none
 * when slurmctld could not say); then(arg, false, NULL, 0) if the agent
 * stopped first. */
void jobs_on(const char *node, void (*then)(void *arg, bool ran, const uint32_t *ids, size_t n), void *arg);
/* A job's contract: 0 while slurmctld is asked (try again later), 1 with
 * *contract (a new string) or NULL and why. */
int slurm_job_contract(uint32_t job, char **contract, char *why, size_t len);
/* What the contract reading (slurm_job_contract) found of the job besides:
 * its account and time limit (minutes; 0 when unlimited or not known).
 * false when the job was not read (yet). */
bool slurm_job_meta(uint32_t job, char *account, size_t alen, uint32_t *time_limit);
/*
 * With A.account_check (Account= budgets, Slurm not enforcing
 * associations): is the job's account, as read with its contract, one of
 * its user's associations in slurmdbd? 1 yes (or no account, or not
 * checked), 0 no (why says so), -1 not known yet (slurmctld or slurmdbd
 * could not be asked: ask again later).
 */
int slurm_job_account_ok(uint32_t job, char *why, size_t len);
/* Put note in the job's admin comment: a note of the same kind (the same
 * words up to its first '=') is replaced, anything else stays. final: the
 * job ended; slurmctld refuses updates of an ended job, so then its
 * accounting record gets it (through slurmdbd) where Slurm keeps one.
 * done (may be NULL): on the loop, once the call ran (ran: true; ok: the
 * note was written where it could be) or was dropped at exit (ran: false). */
void slurm_job_admin_note(uint32_t job, const char *note, bool final,
			  void (*done)(void *arg, bool ran, bool ok), void *arg);
/* Hold the job (requeued from a node the agent failed) once it is pending,
 * with note appended to its comment (what squeue -o %k shows). */
void slurm_job_hold(uint32_t job, const char *note);
/* Release a job held for a budget (its note taken off its comment), if it
 * is still held so; then(arg, ran, ok) on the loop, ok also when it was
 * not held any more. */
void slurm_job_budget_release(uint32_t job, const char *why, void (*then)(void *arg, bool ran, bool ok), void *arg);

/* agent_boot.c: instances that fail to boot */
/* The console of r's instance read on its provider's worker, its last
 * lines into the event log; then on the loop with its last non-empty line
 * ("" if none) and where to read it all (at once when it cannot be read:
 * no console, no instance; ran false: the agent stopped first). */
typedef void (*boot_console_then)(const char *node, bool ran, const char *last, const char *where, void *arg);
void boot_console(const char *node, const struct node_rec *r, boot_console_then then, void *arg);
/* instances that ended on their own, asked once a second */
void boot_timers(void);
void boot_fini(void);

/* agent_prov.c: provider calls on the provider's worker; these two are
 * waited for (a restart's recovery, before the loop serves anyone) */
int prov_exists(struct aprov *p, const char *node, const char *instance);
/* p's whole listing (provider_ops.list), waited for: 0, or -1 with cls and err */
int prov_list_now(struct aprov *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err);
/* An instance's console, read on p's worker; then on the loop (ran: false
 * if the agent stopped first). where: what the driver says if it says
 * nothing of how to read it all. */
#define PROV_CONSOLE_BYTES 4096  /* read from the end of the console */
struct console_result {
	int rc;                  /* 0: buf and where; -1: cls and err */
	const char *buf, *where;
	enum prov_class cls;
	const char *err;
};
typedef void (*console_then)(void *arg, bool ran, const struct console_result *res);
void prov_console_async(struct aprov *p, const char *node, const char *instance, const char *where,
			console_then then, void *arg);
/* Whether instances ended on their own (provider_ops.ended), one after the
 * other on p's worker; then on the loop with each answer (rc). asks (its
 * strings too) are taken and freed after then. */
struct ended_ask {
	char *node, *instance;
	int rc;                  /* 1 ended, 0 not, -1 cannot tell */
	double t0, t1;
};
typedef void (*ended_then)(const char *provider, bool ran, const struct ended_ask *asks, size_t n);
void prov_ended_async(struct aprov *p, struct ended_ask *asks, size_t n, ended_then then);
/* The outcome of a terminate (prov_terminate_async), on the loop. */
struct term_result {
	const char *provider, *node, *instance, *note;
	int rc;                  /* 0: gone; -1: cls and err */
	enum prov_class cls;
	const char *err;
	double seconds;          /* the call's, on the worker */
};
typedef void (*term_then)(const struct term_result *t);
/* Terminate on p's worker, then call then (not when the agent stops first);
 * with mark the node is busy until then. */
void prov_terminate_async(struct aprov *p, const char *node, const char *instance, const char *note,
			  bool mark, term_then then);
/* Whether any provider call is queued or running. */
bool prov_any_pending(void);

/* agent_reconcile.c */
/* its rounds and the lost nodes: each turn */
void reconcile_timers(void);
void lost_finish(const char *node, struct node_rec *r);
void lost_nodes(void);
/* An instance terminated (its provider said so): a round's listing that
 * began before may still hold it; it is no orphan of that round. */
void reconcile_terminated(const char *provider, const char *instance);

/* agent_lease.c: the active agent's lease */
/* Wait as a standby until this agent holds the lease (then 0; 1 when
 * *stopping was set meanwhile; -1 on an error of the state). */
int lease_acquire(const volatile sig_atomic_t *stopping);
/* Before anything external: return if the lease is still this agent's,
 * else step down (exit at once, status 3). Any thread may call it. */
void lease_check(void);
/* lease_check as the drivers' fence (provider_fence): returns 0, or not at all */
int lease_fence(void);
/* A clean stop: hand the lease over at once. */
void lease_release(void);
/* the lease checked at the start of a turn, and before the reconciler */
void lease_timers(void);

/* agent_metrics.c: counted on the loop where each event is handled */
#define METRICS_MAX_REQ 8192      /* a scraper's request line and header */
#define METRICS_DEADLINE_S 10.0   /* a whole scrape, from its accept */
#define METRICS_MAX_CONNS 8
#define METRICS_MAX_PER_SOURCE 4  /* of them from one address (and user, on this host) */
#define METRICS_GAUGES_CACHE_S 1.0 /* gauges read at most this often; scrapes between reuse them */
void metrics_init(void);
void metrics_fini(void);
int metrics_listen(void);
bool metrics_conn(struct conn *c, short revents);
char *metrics_http(const char *req, size_t *len);
void metric_launch(const char *provider, const char *type, const char *region, enum prov_class cls);
/* failed_cls: the call's error class, 0 (PROV_OK) when it succeeded */
void metric_provider_call(const char *provider, const char *op, double seconds, int failed_cls);
void metric_join(const char *outcome);
/* an event node life has no edge for in the node's state (a bug: node_life.h) */
void metric_life_refused(const char *event, const char *state);
/* a spot interruption notice acted on (agent_notice.c) */
void metric_notice(const char *provider, const char *type, const char *region, const char *action);
void metric_observe(const char *name, const char *nodeset, double seconds);
/* finding NULL: a round */
void metric_reconcile(const char *finding, double n);
void metric_instance_up(const char *node, const char *provider, const char *type, const char *region);
void metric_instance_down(const char *node);
void metric_dropped(const char *reason);
/* The on-demand price (USD/h) of type in region as provider offers it; NAN if unknown. */
double instance_price(const char *provider, const char *type, const char *region);

/* agent_cost.c: cost records, job costs, budgets */
struct job_info_msg;
/* A node's transition (before: its row before it; r: after) as it touches
 * its instance's record: launched, joined, ended. */
void cost_transition(const char *node, const struct node_rec *before, const struct node_rec *r,
		     enum node_state to);
/* An instance found running at start-up: its record kept (made, from now, if none). */
void cost_adopted(const struct node_rec *r);
/* Slurm's jobs (a whole reading): the holds of burst nodes; ended jobs' costs. */
void cost_jobs(const struct job_info_msg *msg);
/* Running jobs' cost so far into their admin comments, every CostNoteInterval (a turn checks). */
void cost_timers(void);
/* A launch round: the budgets' spending read once (budget_round_begin),
 * then each launch (of count nodes) checked: 0 within every budget (its estimate is
 * counted for the next), 1 a budget would be crossed (why names it). */
void budget_round_begin(void);
int budget_check(int nodeset, uint32_t job, const char *provider, const char *type, const char *region,
		 unsigned count, char *why, size_t len);
void budget_round_end(void);
/* The job of a launch budget_check refused (b: its return) is held: kept,
 * to be released once budget b allows its launch. */
void budget_held(uint32_t job, int b);
/* At exit: what the cost part keeps in memory. */
void cost_fini(void);

#endif
