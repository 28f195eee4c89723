/*
 * burst-agent - provisions the nodes of burst node sets.
 *
 * One thread, one poll loop. Requests come from the power-save programs'
 * durable spool (poked over the UNIX socket); each node's life (DESIGN §7)
 * is in SQLite, every transition written before the action it leads to;
 * instances come from a provider driver (this slice: local, an instance is
 * a set of namespaces on this host); nodes report on the join port and
 * only admitted nodes start slurmd.
 *
 *   burst-agent [-c burst.conf] [-D] [-L logfile]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <munge.h>
#include <openssl/evp.h>
#include <slurm/slurm.h>
#include <strings.h>
#include <syslog.h>

#include "catalog.h"
#include "config.h"
#include "conn.h"
#include "hostlist.h"
#include "policy.h"
#include "proc.h"
#include "provider.h"
#include "reconcile.h"
#include "resolver.h"
#include "sigv4.h"
#include "slurm_compat.h"
#include "spool.h"
#include "state.h"
#include "strutil.h"

#define TICK_MS 250
#define MAX_REPORT (1 << 20)    /* a join report: record and credential */
#define JOIN_DEADLINE_S 5.0     /* a join report, whole, from its accept */
#define JOIN_MAX_CONNS 256      /* join connections open at once (then the oldest goes) */
#define CTL_MAX_REQ 4096        /* a control request */
#define CTL_DEADLINE_S 2.0
#define CTL_MAX_CONNS 32
#define ACCEPT_BURST 64         /* connections taken per socket per turn of the loop */
#define REGISTER_TIMEOUT_S 5      /* admitted to registered in Slurm (it takes ~0.1 s) */
#define DEFAULT_MUNGE_SOCKET "/run/munge/munge.socket.2"   /* munged's own default */

struct bnode {
	const char *name;
	int nodeset;
	int index;               /* global index: the node's address */
	bool registered;         /* its slurmd was seen responding since its admission */
	double missing_since;    /* reconciler: first round its instance was not listed (0: listed) */
};

/* Reconciler: an instance listed by a provider, and when it was first seen. */
struct seen_inst {
	char provider[128];
	char id[128];
	double first;
};

/* Reconciler: a job requeued from a lost node, to let go on at once. */
struct lost_job {
	uint32_t id;
	double until;            /* give up watching it then */
	double next;             /* when to ask slurmctld to schedule it again */
	bool pending;            /* seen requeued (pending) */
	bool released, nudged;
};

struct aprov;

struct agent {
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct state_db *db;
	const struct cfg_provider *local;
	struct bnode *nodes;
	size_t nnodes;
	struct aprov *provs;     /* a driver for each configured provider */
	size_t nprovs;
	size_t **ranked;         /* per node set: candidate indexes in launch order */
	size_t *nranked;
	char spool[PATH_MAX], nodes_dir[PATH_MAX];
	const char *conf_path, *slurm_conf, *libexec, *node_bin;
	uint32_t net;            /* local bridge address (host order) */
	int prefix;
	int usock, jsock;
	struct conn_table conns; /* join and control connections being read */
	unsigned long dropped_slow, dropped_full; /* join connections, logged now and then */
	double dropped_said;
	uid_t slurm_uid;
	char munge_socket[PATH_MAX]; /* empty: munge's default */
	FILE *log;               /* NULL: stderr */
	bool syslog;             /* log to syslog (LOG_DAEMON) instead */
	const char *log_path;    /* -L, else burst.conf LogFile= */
	char **pending;          /* log lines of a batch's transitions, said once it commits */
	size_t npending;
	struct seen_inst *seen;  /* reconciler: instances listed in the last round */
	size_t nseen;
	struct lost_job *lost_jobs;
	size_t nlost_jobs;
};

static volatile sig_atomic_t stopping, reloading;
static void release_refused_jobs(void);
static void registration_check(void);
static void reconcile(void);
static void lost_jobs_go_on(void);
static void lost_finish(const char *node, struct node_rec *r);
static struct agent A;

static void logmsg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logmsg(const char *level, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char t[32];
	va_list ap;
	FILE *f = A.log ? A.log : stderr;

	if (A.syslog) {
		va_start(ap, fmt);
		vsyslog(level[0] == 'e' ? LOG_ERR : LOG_INFO, fmt, ap);
		va_end(ap);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "[%s.%03ld] burst-agent: %s: ", t, ts.tv_nsec / 1000000, level);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}
#define INFO(...) logmsg("info", __VA_ARGS__)
#define ERR(...) logmsg("error", __VA_ARGS__)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* For durations: seconds on a clock that does not jump. */
static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- helpers ---- */

static struct bnode *node_find(const char *name)
{
	size_t i;
	for (i = 0; i < A.nnodes; i++)
		if (!strcmp(A.nodes[i].name, name))
			return &A.nodes[i];
	return NULL;
}

static void node_address(const struct bnode *ni, char *buf, size_t len, bool with_prefix)
{
	uint32_t a = A.net + 10 + (uint32_t)ni->index;
	if (with_prefix)
		snprintf(buf, len, "%u.%u.%u.%u/%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, A.prefix);
	else
		snprintf(buf, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static void random_token(char *buf, size_t len)
{
	unsigned char r[16];
	size_t i;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		ERR("cannot read /dev/urandom: %s", strerror(errno));
		abort();
	}
	close(fd);
	for (i = 0; i < sizeof(r) && 2 * i + 2 < len; i++)
		sprintf(buf + 2 * i, "%02x", r[i]);
}

/* Tell Slurm: the node's address, or DOWN with a reason, or power it down. */
static void slurm_node(const char *name, const char *addr, uint32_t state, const char *reason)
{
	update_node_msg_t m;

	slurm_init_update_node_msg(&m);
	m.node_names = (char *)name;
	if (addr) {
		m.node_addr = (char *)addr;
		m.node_hostname = (char *)name;
	}
	if (state != NO_VAL)
		m.node_state = state;
	if (reason) {
		m.reason = (char *)reason;
		m.reason_uid = 0;
	}
	if (slurm_update_node(&m) != SLURM_SUCCESS)
		ERR("%s: slurm_update_node: %s", name, slurm_strerror(burst_slurm_errno()));
}

static int transition(const char *node, const char *from, struct node_rec *r, const char *to,
		      const char *detail)
{
	burst_err_t err;
	int rc = state_transition(A.db, node, from, r, to, detail, &err);

	if (rc < 0)
		ERR("%s: %s", node, err.msg);
	else if (rc > 0 && state_in_batch(A.db)) {
		/* the log says a transition once it is durable */
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "%s: %s -> %s%s%s", node, from ? from : "*", to, detail ? ": " : "", detail ? detail : "");
		A.pending = xrealloc(A.pending, (A.npending + 1) * sizeof(char *));
		A.pending[A.npending++] = sb_take(&sb);
	} else if (rc > 0)
		INFO("%s: %s -> %s%s%s", node, from ? from : "*", to, detail ? ": " : "", detail ? detail : "");
	return rc;
}

/*
 * The transitions of many nodes in one transaction (one sync), for a
 * spool request, a node set's launch intents and a launch's outcome.
 * Nothing a transition leads to may be done before batch_commit returns 0
 * (fail_node commits first, with batch_sync); after -1 none of the batch's
 * transitions happened.
 */
static void batch_begin(void)
{
	burst_err_t err;

	if (state_begin(A.db, &err) < 0)
		ERR("%s (the transitions that follow are written one by one)", err.msg);
}

static int batch_commit(void)
{
	burst_err_t err;
	size_t i;
	int rc = 0;

	if (!state_in_batch(A.db))
		return 0;
	if (state_commit(A.db, &err) < 0) {
		ERR("%s: %zu transition%s not written", err.msg, A.npending, A.npending == 1 ? "" : "s");
		rc = -1;
	}
	for (i = 0; i < A.npending; i++) {
		if (!rc)
			INFO("%s", A.pending[i]);
		free(A.pending[i]);
	}
	free(A.pending);
	A.pending = NULL;
	A.npending = 0;
	return rc;
}

/* Make what the open batch holds durable now, and go on batching. */
static int batch_sync(void)
{
	int rc;

	if (!state_in_batch(A.db))
		return 0;
	rc = batch_commit();
	batch_begin();
	return rc;
}

/* ---- providers and candidates ---- */

struct aprov {
	const struct cfg_provider *cfg;
	const struct provider_ops *ops;
	struct provider *drv;
	int catalog_id;          /* the catalog's provider name, interned */
};

static struct aprov *prov_by_name(const char *name)
{
	size_t i;
	for (i = 0; name && i < A.nprovs; i++)
		if (!strcmp(A.provs[i].cfg->name, name))
			return &A.provs[i];
	return NULL;
}

/* The configured provider that launches candidate c of node set ns. */
static struct aprov *prov_of(const struct candidate *c, const struct cfg_nodeset *ns)
{
	size_t i, k;

	for (i = 0; i < A.nprovs; i++) {
		bool allowed = !ns->nproviders;
		for (k = 0; k < ns->nproviders && !allowed; k++)
			allowed = !strcmp(ns->providers[k], A.provs[i].cfg->name);
		if (allowed && A.provs[i].catalog_id == c->type->provider)
			return &A.provs[i];
	}
	return NULL;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct candidate *x = &A.cs->c[*(const size_t *)a], *y = &A.cs->c[*(const size_t *)b];
	double px = isnan(x->ondemand) ? INFINITY : x->ondemand, py = isnan(y->ondemand) ? INFINITY : y->ondemand;
	int c;

	if (px != py)
		return px < py ? -1 : 1;
	c = strcmp(catalog_str(A.cat, x->type->name), catalog_str(A.cat, y->type->name));
	if (c)
		return c;
	return strcmp(x->region >= 0 ? catalog_str(A.cat, x->region) : "",
		      y->region >= 0 ? catalog_str(A.cat, y->region) : "");
}

/* Each node set's candidates in launch order: price per hour, then name, then region. */
static void rank_candidates(void)
{
	size_t i, j;

	A.ranked = xcalloc(A.cfg->nnodesets ? A.cfg->nnodesets : 1, sizeof(*A.ranked));
	A.nranked = xcalloc(A.cfg->nnodesets ? A.cfg->nnodesets : 1, sizeof(*A.nranked));
	for (i = 0; i < A.cfg->nnodesets; i++) {
		A.ranked[i] = xcalloc(A.cs->n ? A.cs->n : 1, sizeof(size_t));
		for (j = 0; j < A.cs->n; j++)
			if (A.cs->c[j].nodeset == (int)i && prov_of(&A.cs->c[j], &A.cfg->nodesets[i]))
				A.ranked[i][A.nranked[i]++] = j;
		qsort(A.ranked[i], A.nranked[i], sizeof(size_t), cmp_rank);
	}
}

static void cooldown_key(const char *prov, const char *type, const char *region, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s@%s", prov, type, region ? region : "-");
}

/* ---- node life ---- */

static const struct cfg_nodeset *nodeset_of(const char *node)
{
	const struct bnode *ni = node_find(node);
	return ni ? &A.cfg->nodesets[ni->nodeset] : NULL;
}

static void admission_path(const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/admission.env", A.nodes_dir, node);
}

/*
 * The node failed (launch, join, admission, prolog): Slurm is told now, so
 * that its job is requeued at once (DOWN with a reason starting "burst:"),
 * the instance is terminated, and the node is kept out until its cooldown
 * is over; then it is powered down again (see cooldowns()), so that no node
 * stays DOWN for good.
 */
static void fail_node(const char *node, const char *from, struct node_rec *r, const char *to,
		      const char *why)
{
	char reason[512];

	free(r->last_error);
	r->last_error = xstrdup(why);
	r->cooldown_until = now() + A.cfg->reject_cooldown;
	r->want_resume = false;
	/* in a batch, the transition is committed before Slurm hears of it */
	if (transition(node, from, r, to, why) != 1 || batch_sync() < 0)
		return;
	snprintf(reason, sizeof(reason), "burst: %.480s", why);
	slurm_node(node, NULL, NODE_STATE_DOWN, reason);
	if (r->job > 0 && strcmp(from, "admitted")) {
		/*
		 * Slurm requeues the job now but holds it back for two minutes
		 * (its BeginTime), in case the job still runs on the node. It
		 * never ran here (the node never started slurmd): let it go on.
		 */
		job_desc_msg_t upd;
		slurm_init_job_desc_msg(&upd);
		upd.job_id = (uint32_t)r->job;
		upd.begin_time = time(NULL);
		if (slurm_update_job(&upd) == SLURM_SUCCESS)
			INFO("%s: job %ld may start at once on another node", node, r->job);
	}
}

/* The next candidate of the node's node set that is not cooling down; -1 if none. */
static ssize_t next_candidate(int nsi, char *tried, size_t triedlen)
{
	size_t k;
	double t = now();

	for (k = 0; k < A.nranked[nsi]; k++) {
		const struct candidate *c = &A.cs->c[A.ranked[nsi][k]];
		struct aprov *p = prov_of(c, &A.cfg->nodesets[nsi]);
		char key[512];
		double until;

		cooldown_key(p->cfg->name, catalog_str(A.cat, c->type->name),
			     c->region >= 0 ? catalog_str(A.cat, c->region) : NULL, key, sizeof(key));
		until = state_cooldown_until(A.db, key);
		if (until > t) {
			size_t l = strlen(tried);
			snprintf(tried + l, triedlen - l, "%s%s (cooling down %.0f s more)", l ? ", " : "", key, until - t);
			continue;
		}
		return (ssize_t)A.ranked[nsi][k];
	}
	return -1;
}

/* Launch the nodes in 'launching' of one node set as one batch (same candidate). */
static void launch_batch(char **names, size_t n)
{
	struct prov_node *pn = xcalloc(n, sizeof(*pn));
	struct node_rec *recs = xcalloc(n, sizeof(*recs));
	char (*addr)[64] = xcalloc(n, sizeof(*addr));
	struct prov_batch b;
	struct aprov *p;
	burst_err_t err;
	char joinaddr[64];
	size_t i, m = 0, launched = 0;
	double t0, t1;

	for (i = 0; i < n; i++) {
		if (state_node_get(A.db, names[i], &recs[m], &err) != 1 || strcmp(recs[m].state, "launching")) {
			state_node_clear(&recs[m]);
			continue;
		}
		node_address(node_find(names[i]), addr[m], sizeof(addr[m]), true);
		pn[m].node = recs[m].name;
		pn[m].attempt = recs[m].attempt;
		pn[m].token = recs[m].token;
		pn[m].address = addr[m];
		m++;
	}
	if (!m)
		goto out;
	p = prov_by_name(recs[0].provider);
	snprintf(joinaddr, sizeof(joinaddr), "%u.%u.%u.%u:%d", A.net >> 24, (A.net >> 16) & 255,
		 (A.net >> 8) & 255, A.net & 255, A.cfg->join_port);
	memset(&b, 0, sizeof(b));
	b.cluster = A.cfg->cluster_name;
	b.provider = recs[0].provider;
	b.nodeset = recs[0].nodeset;
	{
		const struct cfg_nodeset *ns = nodeset_of(recs[0].name);
		b.acceptance = ns && ns->acceptance ? ns->acceptance : A.cfg->acceptance;
	}
	b.instance_type = recs[0].instance_type;
	b.region = recs[0].region;
	b.join_addr = joinaddr;
	b.munge_socket = A.munge_socket[0] ? A.munge_socket : DEFAULT_MUNGE_SOCKET;
	b.slurm_conf = A.slurm_conf;
	b.nodes = pn;
	b.n = m;
	t0 = mono();
	if (!p) {
		for (i = 0; i < m; i++) {
			pn[i].cls = PROV_PERMANENT;
			snprintf(pn[i].error, sizeof(pn[i].error), "provider %s is no longer configured",
				 recs[i].provider ? recs[i].provider : "?");
		}
	} else
		p->ops->launch(p->drv, &b);
	t1 = mono();
	/* the outcome of the whole batch in one commit */
	batch_begin();
	for (i = 0; i < m; i++) {
		struct node_rec *r = &recs[i];
		char why[1200], key[512];

		switch (pn[i].cls) {
		case PROV_OK:
			if (pn[i].error[0])   /* the driver's note (an adopted instance) */
				INFO("%s: %s", r->name, pn[i].error);
			free(r->instance);
			r->instance = xstrdup(pn[i].instance);
			r->retry_at = 0;
			transition(r->name, "launching", r, "booting", pn[i].instance);
			launched++;
			break;
		case PROV_CAPACITY:
		case PROV_QUOTA:
			/* this type and region cools down; the node tries the next candidate */
			cooldown_key(r->provider, r->instance_type, r->region, key, sizeof(key));
			state_cooldown_hit(A.db, key, A.cfg->reject_cooldown > 0 ? A.cfg->reject_cooldown : 60,
					   3600, pn[i].error, &err);
			snprintf(why, sizeof(why), "%.500s %s: %.500s: trying the next candidate",
				 key, prov_class_name(pn[i].cls), pn[i].error);
			free(r->last_error);
			r->last_error = xstrdup(why);
			transition(r->name, "launching", r, "requested", why);
			break;
		case PROV_THROTTLED:
		case PROV_TRANSIENT:
			/* the same attempt again later: the same idempotency key */
			r->retry_at = now() + 2.0;
			snprintf(why, sizeof(why), "%s: %.900s: retrying", prov_class_name(pn[i].cls), pn[i].error);
			transition(r->name, "launching", r, "launching", why);
			break;
		default:
			snprintf(why, sizeof(why), "launch of %s as %s failed (%s): %.900s",
				 r->name, r->instance_type ? r->instance_type : "?", prov_class_name(pn[i].cls),
				 pn[i].error);
			/* whatever a failed launch left is cleaned up by terminating */
			fail_node(r->name, "launching", r, "terminating", why);
			break;
		}
	}
	if (batch_commit() < 0)
		launched = 0;   /* still launching: adopted (batch journal) when retried */
	/* what bench/launch-scale reads to tell the agent's time from its provider's */
	INFO("launch of %zu node%s through %s: %zu launched; %.3f s in the provider, %.3f s recording",
	     m, m == 1 ? "" : "s", b.provider ? b.provider : "?", launched, t1 - t0, mono() - t1);
out:
	for (i = 0; i < n; i++)
		state_node_clear(&recs[i]);
	free(recs);
	free(pn);
	free(addr);
}

/*
 * Requested nodes, by node set: each gets the node set's best candidate that
 * is not cooling down, a new attempt and token, written as an intent
 * (launching) before anything is launched; then each node set's batch goes.
 */
static void launch_requested(void)
{
	burst_err_t err;
	char **names = state_nodes_in(A.db, "requested", &err);
	size_t nsi, i;

	if (!names || !names[0]) {
		state_names_free(names);
		return;
	}
	for (nsi = 0; nsi < A.cfg->nnodesets; nsi++) {
		char **batch = xcalloc(A.cfg->nodesets[nsi].nodes.n + 1, sizeof(char *));
		size_t nb = 0;
		double t0 = mono();
		bool any = false;
		char tried[2048] = "";
		ssize_t ci = -1;
		bool picked = false;

		for (i = 0; names[i]; i++) {
			struct bnode *ni = node_find(names[i]);
			struct node_rec r;
			char token[64];

			if (!ni || ni->nodeset != (int)nsi)
				continue;
			if (!any) {
				/* the node set's intents in one commit */
				batch_begin();
				any = true;
			}
			ni->registered = false;
			if (!picked) {
				ci = next_candidate((int)nsi, tried, sizeof(tried));
				picked = true;
			}
			if (state_node_get(A.db, names[i], &r, &err) != 1) {
				state_node_clear(&r);
				continue;
			}
			if (ci < 0) {
				char why[2300];
				snprintf(why, sizeof(why), "no instance type of node set %s can be launched now: %s",
					 A.cfg->nodesets[nsi].name, tried[0] ? tried : "it has no candidate");
				fail_node(names[i], "requested", &r, "powered_down", why);
				state_node_clear(&r);
				continue;
			}
			{
				const struct candidate *c = &A.cs->c[ci];
				struct aprov *p = prov_of(c, &A.cfg->nodesets[nsi]);
				r.attempt++;
				random_token(token, sizeof(token));
				free(r.token);
				free(r.instance);
				free(r.address);
				free(r.provenance_id);
				free(r.provider);
				free(r.instance_type);
				free(r.region);
				r.token = xstrdup(token);
				r.instance = NULL;
				r.address = NULL;
				if (!strcmp(p->cfg->type, "local")) {
					char addr[64];
					node_address(ni, addr, sizeof(addr), false);
					r.address = xstrdup(addr);
				}
				r.provenance_id = NULL;
				r.provider = xstrdup(p->cfg->name);
				r.instance_type = xstrdup(catalog_str(A.cat, c->type->name));
				r.region = c->region >= 0 ? xstrdup(catalog_str(A.cat, c->region)) : NULL;
				r.token_used = false;
				r.want_resume = false;
				r.cooldown_until = 0;
				r.retry_at = 0;
				{
					char rec[PATH_MAX * 2], detail[600];
					/* no admission record of an earlier instance may survive */
					admission_path(names[i], rec, sizeof(rec));
					unlink(rec);
					snprintf(detail, sizeof(detail), "attempt %d as %s/%s%s%s", r.attempt, r.provider,
						 r.instance_type, r.region ? "@" : "", r.region ? r.region : "");
					/* the intent first: a crash from here on finds the node launching */
					if (transition(names[i], "requested", &r, "launching", detail) == 1)
						batch[nb++] = names[i];
				}
			}
			state_node_clear(&r);
		}
		/* the intents are durable before anything is launched */
		if (any && batch_commit() < 0)
			nb = 0;         /* still requested: tried again */
		if (nb) {
			INFO("node set %s: %zu launch intent%s recorded in %.3f s", A.cfg->nodesets[nsi].name,
			     nb, nb == 1 ? "" : "s", mono() - t0);
			launch_batch(batch, nb);
		}
		free(batch);
	}
	state_names_free(names);
}

/* Launches to try again (throttled, transient, or in flight at a restart). */
static void launch_retry(void)
{
	burst_err_t err;
	char **names = state_nodes_in(A.db, "launching", &err);
	size_t i;
	double t = now();

	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		if (state_node_get(A.db, names[i], &r, &err) == 1 && r.retry_at <= t) {
			char *one[1] = { names[i] };
			launch_batch(one, 1);
		}
		state_node_clear(&r);
	}
	state_names_free(names);
}

static void terminate(const char *node)
{
	struct node_rec r;
	burst_err_t err;
	char rec[PATH_MAX * 2];
	struct aprov *p;
	enum prov_class cls = PROV_OK;

	if (state_node_get(A.db, node, &r, &err) != 1 || strcmp(r.state, "terminating")) {
		state_node_clear(&r);
		return;
	}
	p = prov_by_name(r.provider);
	if (p && r.instance && p->ops->terminate(p->drv, node, r.instance, &cls, &err) < 0) {
		ERR("%s: cannot terminate instance %s (%s): %s (will retry)", node, r.instance,
		    prov_class_name(cls), err.msg);
		state_node_clear(&r);
		return;
	}
	if (!p && r.provider && r.instance)
		ERR("%s: instance %s of provider %s, which is no longer configured: terminate it by hand",
		    node, r.instance, r.provider);
	admission_path(node, rec, sizeof(rec));
	unlink(rec);
	if (r.want_resume) {
		/* Slurm asked for the node again while it was going away */
		r.want_resume = false;
		transition(node, "terminating", &r, "requested", "instance terminated; resume requested meanwhile");
	} else
		transition(node, "terminating", &r, "powered_down", "instance terminated");
	state_node_clear(&r);
}

/* Nodes whose cooldown is over are powered down in Slurm again (idle~). */
static void cooldowns(void)
{
	burst_err_t err;
	double t = now();
	/* only those whose cooldown is over: every tick, with thousands of nodes */
	char **names = state_nodes_due(A.db, "powered_down", STATE_COOLDOWN_UNTIL, t, &err);
	size_t i;

	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		if (state_node_get(A.db, names[i], &r, &err) == 1 && r.cooldown_until > 0 &&
		    r.cooldown_until <= t) {
			char reason[600];
			snprintf(reason, sizeof(reason), "burst: cooldown over after: %.500s",
				 r.last_error ? r.last_error : "a failure");
			r.cooldown_until = 0;
			if (transition(names[i], "powered_down", &r, "powered_down", "cooldown over: powered down in Slurm") == 1)
				slurm_node(names[i], NULL, NODE_STATE_POWER_DOWN | NODE_STATE_POWERED_DOWN, reason);
		}
		state_node_clear(&r);
	}
	state_names_free(names);
}

/*
 * The admission policy (lib/policy.h) on the node's recorded facts: blessed
 * kernels (burst.conf and StateDir/blessed-kernels), taint, modules, and
 * the hardware the catalog promises for the type it was launched as. NULL
 * if the node passes, else why not.
 */
static const char *admission_policy(const struct cfg_nodeset *ns, const struct node_rec *r,
				    json_object *rec, char *why, size_t len)
{
	struct policy p;
	char **extra = NULL, path[PATH_MAX + 32], tname[512];
	size_t nextra = 0;
	burst_err_t err;
	const struct aprov *pv = prov_by_name(r->provider);
	const struct cat_type *type;
	int rc;

	snprintf(tname, sizeof(tname), "%s:%s", pv ? pv->cfg->catalog : "?", r->instance_type ? r->instance_type : "?");
	type = catalog_find_type(A.cat, tname);
	if (!type) {
		snprintf(why, len, "instance type %s is not in the catalog", tname);
		return why;
	}
	config_policy(A.cfg, ns, &p);
	snprintf(path, sizeof(path), "%s/blessed-kernels", A.cfg->state_dir);
	if (policy_load_blessed_file(path, &extra, &nextra, &err) < 0)
		ERR("%s (it blesses nothing more)", err.msg);
	p.blessed_extra = extra;
	p.nblessed_extra = nextra;
	rc = policy_check(&p, A.cat, type, rec, why, len);
	policy_free_list(extra, nextra);
	if (rc == 0)
		return NULL;
	{
		/* say which node set's policy and which type the facts were held against */
		char *copy = xstrdup(rc < 0 && !why[0] ? "malformed record" : why);
		snprintf(why, len, "node set %s, %s: %s", ns->name, tname, copy);
		free(copy);
	}
	return why;
}

/*
 * The node-local acceptance results in the record: NULL if all passed (or
 * none were run), else why not, naming each failed test and its reason.
 */
static const char *acceptance_policy(json_object *rec, char *why, size_t len)
{
	json_object *acc, *v;
	size_t i, failed = 0;

	if (!json_object_object_get_ex(rec, "acceptance", &acc))
		return NULL;
	if (json_object_is_type(acc, json_type_object)) {
		snprintf(why, len, "the acceptance suite could not run: %s",
			 json_object_object_get_ex(acc, "error", &v) ? json_object_get_string(v) : "no results");
		return why;
	}
	if (!json_object_is_type(acc, json_type_array)) {
		snprintf(why, len, "malformed acceptance results");
		return why;
	}
	snprintf(why, len, "acceptance failed:");
	for (i = 0; i < json_object_array_length(acc); i++) {
		json_object *t = json_object_array_get_idx(acc, i), *p, *n, *r;
		size_t l = strlen(why);
		if (!json_object_object_get_ex(t, "passed", &p) || json_object_get_boolean(p))
			continue;
		/* a test this node does not run (mpi, at join) is not a failure */
		if (json_object_object_get_ex(t, "run", &r) && !json_object_get_boolean(r))
			continue;
		json_object_object_get_ex(t, "name", &n);
		json_object_object_get_ex(t, "reason", &r);
		snprintf(why + l, len - l, "%s %s: %s", failed ? ";" : "", n ? json_object_get_string(n) : "?",
			 r ? json_object_get_string(r) : "failed");
		failed++;
	}
	return failed ? why : NULL;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/* Read one line (the report) of at most max bytes; NULL (and *len) if too large. */
/* Decode a munge credential; the payload (caller frees) or NULL with why. */
static char *munge_open(const char *cred, uid_t *uid, char *why, size_t len)
{
	munge_ctx_t ctx = munge_ctx_create();
	void *pay = NULL;
	int plen = 0;
	gid_t gid;
	munge_err_t e;
	char *out = NULL;

	if (!ctx) {
		snprintf(why, len, "cannot create a munge context");
		return NULL;
	}
	if (A.munge_socket[0])
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, A.munge_socket);
	e = munge_decode(cred, ctx, &pay, &plen, uid, &gid);
	if (e != EMUNGE_SUCCESS)
		snprintf(why, len, "munge credential refused: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
	else {
		out = xmalloc((size_t)plen + 1);
		memcpy(out, pay, (size_t)plen);
		out[plen] = '\0';
	}
	free(pay);
	munge_ctx_destroy(ctx);
	return out;
}

static void reply_json(int fd, bool admit, const char *reason, json_object *record)
{
	json_object *o = json_object_new_object();
	const char *s;

	json_object_object_add(o, "admit", json_object_new_boolean(admit));
	if (reason)
		json_object_object_add(o, "reason", json_object_new_string(reason));
	if (record)
		json_object_object_add(o, "record", record);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (write(fd, s, strlen(s)) < 0 || write(fd, "\n", 1) < 0)
		ERR("join: cannot answer: %s", strerror(errno));
	json_object_put(o);
}

static void reply_retry(int fd)
{
	static const char msg[] = "{\"admit\":false,\"retry\":true,\"reason\":\"not ready for this instance yet\"}\n";

	if (write(fd, msg, sizeof(msg) - 1) < 0)
		ERR("join: cannot answer: %s", strerror(errno));
}

/*
 * A node reported: {"op":"join","cred":MUNGE,"record":TEXT}, the credential's
 * payload {"digest":sha256(TEXT),"token","instance","node"}. Nothing a
 * forged, replayed, misdirected or malformed report says reaches the
 * database; only a verified report from the instance the token was issued
 * for is stored and decided on.
 */
static void handle_join(int fd, const char *buf, size_t got)
{
	char why[1200], digest[65], *payload = NULL;
	json_object *req = NULL, *pay = NULL, *jrec = NULL;
	struct node_rec r;
	burst_err_t err;
	const char *node = NULL, *instance = NULL, *token = NULL, *cred, *text, *bad = NULL;
	const struct cfg_nodeset *ns;
	uid_t uid = (uid_t)-1;

	memset(&r, 0, sizeof(r));
	req = json_tokener_parse(buf);
	cred = jstr(req, "cred");
	text = jstr(req, "record");
	if (!cred || !text) {
		ERR("join: malformed report (%zu bytes: no cred or record), refused", got);
		reply_json(fd, false, "malformed report", NULL);
		goto out;
	}
	payload = munge_open(cred, &uid, why, sizeof(why));
	if (!payload) {
		ERR("join: %s; report refused", why);
		reply_json(fd, false, why, NULL);
		goto out;
	}
	pay = json_tokener_parse(payload);
	node = jstr(pay, "node");
	instance = jstr(pay, "instance");
	token = jstr(pay, "token");
	sigv4_sha256_hex(text, strlen(text), digest);
	if (uid != 0)
		bad = "the credential is not root's";
	else if (!node || !instance || !token || !jstr(pay, "digest"))
		bad = "malformed credential payload";
	else if (strcmp(jstr(pay, "digest"), digest))
		bad = "the record does not match the credential's digest";
	else if (!(jrec = json_tokener_parse(text)) || !json_object_is_type(jrec, json_type_object))
		bad = "the record is not a JSON object";
	else if (state_node_get(A.db, node, &r, &err) != 1)
		bad = "unknown node";
	else if (!strcmp(r.state, "launching") && r.token && !r.token_used && !strcmp(r.token, token)) {
		/* launched, but the launch is not recorded yet (a restart, a slow
		 * API): the node asks again in a moment */
		INFO("join: %s (instance %s): the launch is not recorded yet: asked to retry", node, instance);
		reply_retry(fd);
		goto out;
	} else if (strcmp(r.state, "booting"))
		bad = "node is not booting";
	else if (!r.instance || strcmp(r.instance, instance))
		bad = "wrong instance for this node";
	else if (r.token_used || !r.token || strcmp(r.token, token))
		bad = "invalid or used join token";
	if (bad) {
		/* node and instance are the report's word: written out, not sent to the log raw */
		char *en = str_escape_ctl(node ? node : "?"), *ei = str_escape_ctl(instance ? instance : "?");
		ERR("join: %s (instance %s, uid %d): refused: %s", en, ei, (int)uid, bad);
		free(en);
		free(ei);
		reply_json(fd, false, bad, NULL);
		goto out;
	}
	/* used: the token is of no more use to anyone, so it is not kept */
	r.token_used = true;
	free(r.token);
	r.token = NULL;
	free(r.provenance_id);
	r.provenance_id = xstrdup(digest);
	ns = nodeset_of(node);
	if (!ns) {
		/* removed from burst.conf (a reload) while it booted */
		snprintf(why, sizeof(why), "node %s is no longer in a node set of burst.conf", node);
		bad = why;
	} else if (jstr(jrec, "error")) {
		snprintf(why, sizeof(why), "the node could not collect its provenance: %.1000s", jstr(jrec, "error"));
		bad = why;
	} else if (!(bad = acceptance_policy(jrec, why, sizeof(why))))
		bad = admission_policy(ns, &r, jrec, why, sizeof(why));
	if (bad) {
		/* the reasons quote the node's record: no raw control characters
		 * into the records, events, log and burstctl's terminal */
		char *e = str_escape_ctl(bad);
		snprintf(why, sizeof(why), "%s", e);
		free(e);
		bad = why;
	}
	{
		json_object *tm, *v;
		if (json_object_object_get_ex(req, "timing", &tm)) {
			double pv = json_object_object_get_ex(tm, "provenance_s", &v) ? json_object_get_double(v) : -1;
			double av = json_object_object_get_ex(tm, "acceptance_s", &v) ? json_object_get_double(v) : -1;
			char acc[48];
			/* a node without acceptance.conf ran no acceptance test */
			if (av < 0)
				snprintf(acc, sizeof(acc), "no acceptance tests");
			else
				snprintf(acc, sizeof(acc), "acceptance %.3f s", av);
			INFO("%s: report of instance %s: provenance %.3f s, %s, %zu bytes",
			     node, instance, pv, acc, got);
		}
	}
	if (state_record_add(A.db, node, instance, digest, text, bad ? bad : "admitted", &err) < 0)
		ERR("%s: cannot store its record: %s", node, err.msg);
	if (bad) {
		char full[1300];
		snprintf(full, sizeof(full), "rejected at join: %s", bad);
		fail_node(node, "booting", &r, "rejected", full);
		reply_json(fd, false, bad, NULL);
		goto out;
	}
	if (transition(node, "booting", &r, "admitted", digest) != 1) {
		reply_json(fd, false, "state changed", NULL);
		goto out;
	}
	/* the address before slurmd starts (a cloud instance's: where it reported from) */
	if (!r.address) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		char peer[INET_ADDRSTRLEN];
		if (getpeername(fd, (struct sockaddr *)&sa, &sl) == 0 && sa.sin_family == AF_INET &&
		    inet_ntop(AF_INET, &sa.sin_addr, peer, sizeof(peer)))
			r.address = xstrdup(peer);
	}
	slurm_node(node, r.address, NO_VAL, NULL);
	{
		json_object *rec = json_object_new_object();
		json_object_object_add(rec, "CLOUD_PROVIDER", json_object_new_string(r.provider ? r.provider : ""));
		json_object_object_add(rec, "CLOUD_INSTANCE_TYPE", json_object_new_string(r.instance_type ? r.instance_type : ""));
		json_object_object_add(rec, "CLOUD_INSTANCE_ID", json_object_new_string(r.instance));
		json_object_object_add(rec, "CLOUD_NODE", json_object_new_string(node));
		json_object_object_add(rec, "CLOUD_NODESET", json_object_new_string(r.nodeset ? r.nodeset : ""));
		json_object_object_add(rec, "CLOUD_PROVENANCE_ID", json_object_new_string(digest));
		reply_json(fd, true, NULL, rec);
	}
out:
	free(payload);
	json_object_put(req);
	json_object_put(pay);
	json_object_put(jrec);
	state_node_clear(&r);
}

/* ---- requests from the spool ---- */

/* The job that asked for node, from a resume request's "jobs" list; 0 if none. */
static long job_of(json_object *req, const char *node)
{
	json_object *jobs, *j, *id, *nodes;
	struct hostlist hl = { NULL, 0, 0 };
	burst_err_t err;
	size_t i, k;
	long found = 0;

	if (!json_object_object_get_ex(req, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array))
		return 0;
	for (i = 0; !found && i < json_object_array_length(jobs); i++) {
		j = json_object_array_get_idx(jobs, i);
		if (!json_object_object_get_ex(j, "job_id", &id) || !json_object_object_get_ex(j, "nodes", &nodes) ||
		    hostlist_expand(json_object_get_string(nodes), &hl, 1 << 20, &err) < 0)
			continue;
		for (k = 0; k < hl.n; k++)
			if (!strcmp(hl.names[k], node))
				found = (long)json_object_get_int64(id);
		hostlist_free(&hl);
	}
	return found;
}

static void take_request(const char *file)
{
	char path[PATH_MAX * 2];
	json_object *req, *jop, *jnodes;
	struct hostlist hl = { NULL, 0, 0 };
	burst_err_t err;
	const char *op;
	char *text;
	size_t i;
	double t0;

	snprintf(path, sizeof(path), "%s/%s", A.spool, file);
	if (state_request_seen(A.db, file, &err) == 1) {
		unlink(path);
		return;
	}
	text = spool_read(A.spool, file, A.slurm_uid, SPOOL_MAX_REQUEST, NULL, &err);
	if (!text) {
		char bad[PATH_MAX * 2 + 8];
		/* renamed, not followed: a link or a FIFO moves aside as it is */
		snprintf(bad, sizeof(bad), "%s.bad", path);
		ERR("spool: %s; moved to %s.bad (remove it once understood)", err.msg, file);
		if (rename(path, bad) < 0)
			ERR("spool: cannot move %s aside: %s", path, strerror(errno));
		return;
	}
	req = json_tokener_parse(text);
	free(text);
	if (!req || !json_object_object_get_ex(req, "op", &jop) ||
	    !json_object_object_get_ex(req, "nodes", &jnodes) ||
	    hostlist_expand(json_object_get_string(jnodes), &hl, 1 << 20, &err) < 0) {
		char bad[PATH_MAX * 2 + 8];
		ERR("spool: %s is not a request; moved to %s.bad", path, file);
		snprintf(bad, sizeof(bad), "%s.bad", path);
		rename(path, bad);
		json_object_put(req);
		hostlist_free(&hl);
		return;
	}
	op = json_object_get_string(jop);
	t0 = mono();
	/* the request's transitions and its being taken, in one commit */
	batch_begin();
	for (i = 0; i < hl.n; i++) {
		const char *node = hl.names[i];
		struct node_rec r;

		if (!node_find(node)) {
			ERR("%s: %s for a node of no node set (ignored; check burst.conf and slurm.conf)", node, op);
			continue;
		}
		if (state_node_get(A.db, node, &r, &err) != 1)
			continue;
		if (!strcmp(op, "resume")) {
			if (!strcmp(r.state, "powered_down")) {
				r.cooldown_until = 0;
				r.job = job_of(req, node);
				transition(node, "powered_down", &r, "requested", file);
			} else if (!strcmp(r.state, "terminating") || !strcmp(r.state, "rejected")) {
				/* launched again once the old instance is gone */
				r.want_resume = true;
				transition(node, r.state, &r, r.state, "resume requested: after termination");
			} else
				INFO("%s: resume while %s: nothing to do", node, r.state);
		} else if (!strcmp(op, "suspend") || !strcmp(op, "resume-fail")) {
			if (strcmp(r.state, "powered_down") && strcmp(r.state, "terminating")) {
				r.want_resume = false;
				transition(node, r.state, &r, "terminating", op);
			} else if (r.want_resume) {
				r.want_resume = false;
				transition(node, r.state, &r, r.state, "suspend: resume request withdrawn");
			}
		}
		state_node_clear(&r);
	}
	state_request_add(A.db, file, &err);
	if (batch_commit() == 0) {
		INFO("spool: %s: %s of %zu node%s taken in %.3f s", file, op, hl.n, hl.n == 1 ? "" : "s", mono() - t0);
		unlink(path);
	}   /* else the request stays in the spool, taken again later */
	json_object_put(req);
	hostlist_free(&hl);
}

static void take_spool(void)
{
	burst_err_t err;
	char **names = spool_list(A.spool, &err);
	size_t i;

	if (!names) {
		ERR("%s", err.msg);
		return;
	}
	for (i = 0; names[i]; i++)
		take_request(names[i]);
	spool_list_free(names);
}

/* ---- control socket ---- */

/* Whether the peer of a control connection may talk to the agent: root and
 * SlurmUser only; anyone else is answered and closed before anything of
 * theirs is read. */
static bool control_peer_ok(int fd)
{
	static const char msg[] = "{\"ok\":false,\"error\":\"permission denied: only root and SlurmUser may talk to burst-agent\"}\n";
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	    (cred.uid == 0 || cred.uid == A.slurm_uid))
		return true;
	ERR("control: refused uid %u pid %d (only root and SlurmUser uid %u)",
	    (unsigned)cred.uid, (int)cred.pid, (unsigned)A.slurm_uid);
	if (send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return false;
	return false;
}

/* A request of an allowed peer, read whole by the poll loop. */
static void handle_control(int fd, const char *buf)
{
	if (strstr(buf, "\"poke\"")) {
		take_spool();
		if (write(fd, "{\"ok\":true}\n", 12) < 0)
			return;
	} else {
		if (write(fd, "{\"ok\":false,\"error\":\"unknown request\"}\n", 39) < 0)
			return;
	}
}

/* ---- start-up and the loop ---- */

/*
 * The control socket at path, mode 0666 (root and SlurmUser are told apart
 * by SO_PEERCRED). Its directory must not be writable by others than root
 * unless sticky (/run style): someone who can rename entries there could
 * swap the path for a link between our unlink and bind. The mode comes from
 * the umask at bind, not from a chmod that would follow a link; only a
 * socket is removed. -1 with why.
 */
static int listen_unix(const char *path, char *why, size_t len)
{
	struct sockaddr_un sa;
	struct stat st;
	char dir[PATH_MAX];
	char *slash;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path) || strlen(path) >= sizeof(dir)) {
		snprintf(why, len, "the path is longer than a socket's (%zu bytes)", sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (stat(slash ? dir : ".", &st) < 0) {
		snprintf(why, len, "its directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, len, "its directory %s (mode %04o) is writable by others and not sticky: "
			 "give SocketPath= in a directory only root can write (chmod go-w it)",
			 dir, (unsigned)(st.st_mode & 07777));
		errno = EPERM;
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(why, len, "%s exists and is not a socket (remove it if it is not needed)", path);
			errno = EEXIST;
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(why, len, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	old = umask(0111);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

static int listen_tcp(uint32_t addr, int port)
{
	struct sockaddr_in sa;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(addr);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 256) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

enum { CONN_CTL, CONN_JOIN };

/* Take the connections waiting on a listening socket (a bounded number per
 * turn); control peers are checked before anything is read. */
static void accept_clients(int lsock, int kind)
{
	int i, fd, evicted;

	for (i = 0; i < ACCEPT_BURST; i++) {
		fd = accept4(lsock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
				ERR("%s: accept: %s", kind == CONN_JOIN ? "join" : "control", strerror(errno));
			return;
		}
		if (kind == CONN_CTL && !control_peer_ok(fd)) {
			close(fd);
			continue;
		}
		conn_add(&A.conns, fd, kind, mono(), kind == CONN_JOIN ? JOIN_DEADLINE_S : CTL_DEADLINE_S,
			 kind == CONN_JOIN ? JOIN_MAX_CONNS : CTL_MAX_CONNS, &evicted);
		if (evicted && kind == CONN_JOIN)
			A.dropped_full++;
		else if (evicted)
			ERR("control: more than %d connections open: the oldest closed", CTL_MAX_CONNS);
	}
}

/* One turn of the loop's clients: wait up to a tick for a listening socket
 * or a connection to have something, read what each has without waiting,
 * answer whole requests, close the ones past their deadline or cap. */
static void serve_clients(void)
{
	struct pollfd *p = xmalloc((A.conns.n + 2) * sizeof(*p));
	size_t i, n = A.conns.n;
	double now;

	p[0] = (struct pollfd){ A.usock, POLLIN, 0 };
	p[1] = (struct pollfd){ A.jsock, POLLIN, 0 };
	for (i = 0; i < n; i++)
		p[i + 2] = (struct pollfd){ A.conns.c[i].fd, POLLIN, 0 };
	if (poll(p, n + 2, TICK_MS) > 0) {
		/* the connections first: conn_drop moves the last into i, so from the end */
		for (i = n; i-- > 0;) {
			struct conn *c = &A.conns.c[i];
			enum conn_status st;
			bool join = c->kind == CONN_JOIN;

			if (!p[i + 2].revents)
				continue;
			st = conn_pump(c, join ? MAX_REPORT : CTL_MAX_REQ);
			if (st == CONN_MORE)
				continue;
			if (st == CONN_LINE && join)
				handle_join(c->fd, c->buf, c->len);
			else if (st == CONN_LINE)
				handle_control(c->fd, c->buf);
			else if (st == CONN_TOO_BIG && join) {
				ERR("join: report of more than %d bytes refused", MAX_REPORT);
				reply_json(c->fd, false, "report too large", NULL);
			} else if (st == CONN_TOO_BIG)
				ERR("control: request of more than %d bytes refused", CTL_MAX_REQ);
			conn_drop(&A.conns, i);
		}
		if (p[0].revents & POLLIN)
			accept_clients(A.usock, CONN_CTL);
		if (p[1].revents & POLLIN)
			accept_clients(A.jsock, CONN_JOIN);
	}
	free(p);
	now = mono();
	for (i = A.conns.n; i-- > 0;)
		if (A.conns.c[i].deadline <= now) {
			if (A.conns.c[i].kind == CONN_JOIN)
				A.dropped_slow++;
			else
				ERR("control: no whole request within %.0f s: closed", CTL_DEADLINE_S);
			conn_drop(&A.conns, i);
		}
	/* what a flood of join connections did, once in a while rather than a line each */
	if ((A.dropped_slow || A.dropped_full) && now - A.dropped_said >= 10) {
		ERR("join: closed %lu connection%s with no whole report within %.0f s, %lu beyond %d open at once",
		    A.dropped_slow, A.dropped_slow == 1 ? "" : "s", JOIN_DEADLINE_S, A.dropped_full, JOIN_MAX_CONNS);
		A.dropped_slow = A.dropped_full = 0;
		A.dropped_said = now;
	}
}

/* What burst.conf makes: config, catalog, candidates, nodes, drivers. */
struct conf_state {
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct bnode *nodes;
	size_t nnodes;
	struct aprov *provs;
	size_t nprovs;
	size_t **ranked;
	size_t *nranked;
	const struct cfg_provider *local;
	uint32_t net;
	int prefix;
};

static void conf_state_free(struct conf_state *c)
{
	size_t i;

	for (i = 0; i < c->nprovs; i++)
		if (c->provs[i].ops && c->provs[i].drv)
			c->provs[i].ops->fini(c->provs[i].drv);
	free(c->provs);
	for (i = 0; c->ranked && c->cfg && i < c->cfg->nnodesets; i++)
		free(c->ranked[i]);
	free(c->ranked);
	free(c->nranked);
	free(c->nodes);
	candset_free(c->cs);
	catalog_free(c->cat);
	config_free(c->cfg);
	memset(c, 0, sizeof(*c));
}

static void conf_state_get(struct conf_state *c)
{
	c->cfg = A.cfg; c->cat = A.cat; c->cs = A.cs; c->nodes = A.nodes; c->nnodes = A.nnodes;
	c->provs = A.provs; c->nprovs = A.nprovs; c->ranked = A.ranked; c->nranked = A.nranked;
	c->local = A.local; c->net = A.net; c->prefix = A.prefix;
}

static void conf_state_put(const struct conf_state *c)
{
	A.cfg = c->cfg; A.cat = c->cat; A.cs = c->cs; A.nodes = c->nodes; A.nnodes = c->nnodes;
	A.provs = c->provs; A.nprovs = c->nprovs; A.ranked = c->ranked; A.nranked = c->nranked;
	A.local = c->local; A.net = c->net; A.prefix = c->prefix;
}

/* Read burst.conf into the agent's globals; on failure they are untouched. */
static int load_conf(void)
{
	struct conf_state old, c;
	burst_err_t err;
	size_t i, j, k = 0;

	conf_state_get(&old);
	memset(&c, 0, sizeof(c));
	c.cfg = config_load(A.conf_path, &err);
	if (!c.cfg) {
		ERR("%s", err.msg);
		goto fail;
	}
	if (old.cfg) {
		char why[600];
		if (config_identity_change(old.cfg, c.cfg, why, sizeof(why))) {
			ERR("%s: %s: a reload cannot change that; restart burst-agent to apply it", A.conf_path, why);
			goto fail;
		}
	}
	for (i = 0; i < c.cfg->nproviders; i++)
		if (!strcmp(c.cfg->providers[i].type, "local"))
			c.local = &c.cfg->providers[i];
	{
		unsigned a, b, cc, d;
		if (!c.local || !c.local->bridge || !c.local->address ||
		    sscanf(c.local->address, "%u.%u.%u.%u/%d", &a, &b, &cc, &d, &c.prefix) != 5 ||
		    a > 255 || b > 255 || cc > 255 || d > 255 || c.prefix < 8 || c.prefix > 30) {
			ERR("%s: the agent listens for node reports on the local provider's bridge: give Provider=local Bridge=NAME Address=ADDR/PREFIX",
			    A.conf_path);
			goto fail;
		}
		c.net = (a << 24) | (b << 16) | (cc << 8) | d;
	}
	c.cat = catalog_load(catalog_default_dir(c.cfg->catalog_dir), &err);
	if (!c.cat || config_apply_catalog(c.cfg, c.cat, &err) < 0) {
		ERR("%s", err.msg);
		goto fail;
	}
	c.cs = config_candidates(c.cfg, c.cat, &err);
	if (!c.cs) {
		ERR("%s", err.msg);
		goto fail;
	}
	for (i = 0; i < c.cfg->nnodesets; i++)
		c.nnodes += c.cfg->nodesets[i].nodes.n;
	c.nodes = xcalloc(c.nnodes ? c.nnodes : 1, sizeof(*c.nodes));
	for (i = 0; i < c.cfg->nnodesets; i++)
		for (j = 0; j < c.cfg->nodesets[i].nodes.n; j++, k++) {
			c.nodes[k].name = c.cfg->nodesets[i].nodes.names[j];
			c.nodes[k].nodeset = (int)i;
			c.nodes[k].index = (int)k;
		}
	if (10 + c.nnodes >= (1u << (32 - c.prefix)) - 1) {
		ERR("Address=%s has room for fewer than %zu nodes", c.local->address, c.nnodes);
		goto fail;
	}
	c.provs = xcalloc(c.cfg->nproviders ? c.cfg->nproviders : 1, sizeof(*c.provs));
	for (i = 0; i < c.cfg->nproviders; i++) {
		struct aprov *p = &c.provs[c.nprovs];
		p->cfg = &c.cfg->providers[i];
		p->ops = provider_ops_find(p->cfg->type);
		if (!p->ops) {
			ERR("%s:%d: Provider %s: Type=%s has no driver in this agent (drivers: local, aws)",
			    p->cfg->where.file, p->cfg->where.line, p->cfg->name, p->cfg->type);
			goto fail;
		}
		p->drv = p->ops->init(p->cfg, c.cfg, &err);
		if (!p->drv) {
			ERR("%s", err.msg);
			goto fail;
		}
		p->catalog_id = catalog_find_str(c.cat, p->cfg->catalog);
		c.nprovs++;
	}
	/* the ranking reads the globals: install, rank, and keep */
	conf_state_put(&c);
	rank_candidates();
	conf_state_get(&c);
	if (old.cfg) {
		if (old.net != c.net || old.cfg->join_port != c.cfg->join_port ||
		    strcmp(old.cfg->state_dir, c.cfg->state_dir) || strcmp(old.cfg->socket_path, c.cfg->socket_path))
			INFO("StateDir, SocketPath, JoinPort and the bridge address take effect at the next restart");
		c.net = old.net;
		c.prefix = old.prefix;
		conf_state_put(&c);
		conf_state_free(&old);
	}
	return 0;
fail:
	conf_state_free(&c);
	conf_state_put(&old);
	return -1;
}

static void ensure_nodes(void)
{
	burst_err_t err;
	size_t i;

	for (i = 0; i < A.nnodes; i++)
		if (state_node_ensure(A.db, A.nodes[i].name, A.cfg->nodesets[A.nodes[i].nodeset].name, &err) < 0)
			ERR("%s", err.msg);
}

static int setup(void)
{
	burst_err_t err;
	char dbpath[PATH_MAX];
	slurm_conf_t *sc = NULL;

	if (load_conf() < 0)
		return -1;
	snprintf(A.spool, sizeof(A.spool), "%s/spool", A.cfg->state_dir);
	snprintf(A.nodes_dir, sizeof(A.nodes_dir), "%s/nodes", A.cfg->state_dir);
	snprintf(dbpath, sizeof(dbpath), "%s/agent.db", A.cfg->state_dir);
	mkdir(A.cfg->state_dir, 0755);
	mkdir(A.spool, 0700);
	mkdir(A.nodes_dir, 0755);
	A.db = state_open(dbpath, &err);
	if (!A.db) {
		ERR("%s", err.msg);
		return -1;
	}
	ensure_nodes();
	slurm_init(NULL);
	A.slurm_uid = 0;
	if (A.cfg->munge_socket)
		snprintf(A.munge_socket, sizeof(A.munge_socket), "%s", A.cfg->munge_socket);
	if (slurm_load_ctl_conf((time_t)0, &sc) == SLURM_SUCCESS) {
		const char *so = sc->authinfo ? strstr(sc->authinfo, "socket=") : NULL;
		/* the same munged as Slurm's: AuthInfo=socket=PATH */
		if (so && !A.munge_socket[0])
			snprintf(A.munge_socket, sizeof(A.munge_socket), "%.*s", (int)strcspn(so + 7, ","), so + 7);
		A.slurm_uid = sc->slurm_user_id;
		slurm_free_ctl_conf(sc);
	} else
		ERR("cannot read Slurm's configuration (%s): only root may use the control socket",
		    slurm_strerror(burst_slurm_errno()));
	/* the power-save programs run as SlurmUser and write the spool */
	if (A.slurm_uid && chown(A.spool, A.slurm_uid, (gid_t)-1) < 0)
		ERR("cannot give the spool %s to SlurmUser (uid %u): %s; burst-resume will fail to record requests",
		    A.spool, (unsigned)A.slurm_uid, strerror(errno));
	{
		char why[PATH_MAX + 200];
		A.usock = listen_unix(A.cfg->socket_path, why, sizeof(why));
		if (A.usock < 0) {
			ERR("cannot listen on SocketPath=%s: %s", A.cfg->socket_path, why);
			return -1;
		}
	}
	A.jsock = listen_tcp(A.net, A.cfg->join_port);
	if (A.jsock < 0) {
		ERR("cannot listen for nodes on %s port %d: %s (is Bridge=%s up with that address?)",
		    A.local->address, A.cfg->join_port, strerror(errno), A.local->bridge);
		return -1;
	}
	return 0;
}

/* After a restart: finish what was in flight. */
static void recover(void)
{
	static const char *const live[] = { "booting", "admitted", NULL };
	burst_err_t err;
	size_t s, i;

	/* launching: the intent was written; it is repeated now with the same
	 * attempt, which the driver makes idempotent */
	launch_retry();
	for (s = 0; live[s]; s++) {
		char **names = state_nodes_in(A.db, live[s], &err);
		for (i = 0; names && names[i]; i++) {
			struct node_rec r;
			struct aprov *p;
			int exists;
			if (state_node_get(A.db, names[i], &r, &err) != 1) {
				state_node_clear(&r);
				continue;
			}
			p = prov_by_name(r.provider);
			exists = p && r.instance ? p->ops->exists(p->drv, names[i], r.instance) : 0;
			if (exists == 0) {
				char why[300];
				snprintf(why, sizeof(why), "instance %s lost", r.instance ? r.instance : "?");
				fail_node(names[i], live[s], &r, "powered_down", why);
			} else
				INFO("%s: %s, instance %s %s", names[i], live[s], r.instance,
				     exists > 0 ? "still there" : "not known yet (the reconciler will see)");
			state_node_clear(&r);
		}
		state_names_free(names);
	}
	/* lost before a crash: finish what rc_lost began */
	{
		char **names = state_nodes_in(A.db, "lost", &err);
		for (i = 0; names && names[i]; i++) {
			struct node_rec r;
			if (state_node_get(A.db, names[i], &r, &err) == 1)
				lost_finish(names[i], &r);
			state_node_clear(&r);
		}
		state_names_free(names);
	}
}

static void tick(void)
{
	burst_err_t err;
	char **names;
	size_t i;

	take_spool();
	launch_requested();
	launch_retry();
	names = state_nodes_in(A.db, "rejected", &err);
	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		if (state_node_get(A.db, names[i], &r, &err) == 1)
			transition(names[i], "rejected", &r, "terminating", "terminate the rejected instance");
		state_node_clear(&r);
	}
	state_names_free(names);
	names = state_nodes_in(A.db, "terminating", &err);
	for (i = 0; names && names[i]; i++)
		terminate(names[i]);
	state_names_free(names);
	cooldowns();
	registration_check();
	release_refused_jobs();
	reconcile();
	lost_jobs_go_on();
	/* only those booting longer than BootTimeout */
	names = state_nodes_due(A.db, "booting", STATE_SINCE, now() - A.cfg->boot_timeout, &err);
	for (i = 0; names && names[i]; i++) {
		struct node_rec r;
		if (state_node_get(A.db, names[i], &r, &err) == 1 && now() - r.since > A.cfg->boot_timeout) {
			char why[300];
			snprintf(why, sizeof(why), "instance %s did not join within BootTimeout=%d s",
				 r.instance ? r.instance : "?", A.cfg->boot_timeout);
			fail_node(names[i], "booting", &r, "terminating", why);
		}
		state_node_clear(&r);
	}
	state_names_free(names);
}

/*
 * An admitted node whose slurmd has not registered with slurmctld within
 * RegisterTimeout is launched again, as a new instance, while Slurm still
 * waits for it (its ResumeTimeout is longer): rarely, a slurmd started
 * right after its node was resumed is never taken in by slurmctld 22.05,
 * and the job would wait for ResumeTimeout and then be requeued.
 */
static void registration_check(void)
{
	static double last;
	burst_err_t err;
	char **names;
	size_t i;

	if (now() - last < 2.0)
		return;
	last = now();
	names = state_nodes_in(A.db, "admitted", &err);
	for (i = 0; names && names[i]; i++) {
		struct bnode *ni = node_find(names[i]);
		node_info_msg_t *m = NULL;
		struct node_rec r;
		uint32_t st;

		memset(&r, 0, sizeof(r));
		if (!ni || ni->registered || state_node_get(A.db, names[i], &r, &err) != 1 ||
		    now() - r.since < REGISTER_TIMEOUT_S ||
		    slurm_load_node_single(&m, (char *)names[i], SHOW_ALL) != SLURM_SUCCESS || !m->record_count) {
			slurm_free_node_info_msg(m);
			state_node_clear(&r);
			continue;
		}
		st = m->node_array[0].node_state;
		if (!(st & (NODE_STATE_POWERING_UP | NODE_STATE_NO_RESPOND | NODE_STATE_POWERED_DOWN)))
			ni->registered = true;
		else if (st & NODE_STATE_POWERING_UP) {
			char why[300];
			snprintf(why, sizeof(why), "slurmd of %s did not register within %d s: launching it again",
				 r.instance ? r.instance : "?", REGISTER_TIMEOUT_S);
			r.want_resume = true;
			transition(names[i], "admitted", &r, "terminating", why);
		}
		slurm_free_node_info_msg(m);
		state_node_clear(&r);
	}
	state_names_free(names);
}

/*
 * Jobs that the SPANK job prolog held because their node was not admitted
 * (admin comment "burst: refused on NODE: why"): not the user's fault, so
 * they are released, and the node goes through the failure path.
 */
static void release_refused_jobs(void)
{
	static time_t last_update;
	static double last_check;
	job_info_msg_t *msg = NULL;
	uint32_t i;

	if (now() - last_check < 1.0)
		return;
	last_check = now();
	if (slurm_load_jobs(last_update, &msg, SHOW_ALL) != SLURM_SUCCESS)
		return;   /* SLURM_NO_CHANGE_IN_DATA, or slurmctld away: next time */
	last_update = msg->last_update;
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		const char *c = j->admin_comment, *p = "burst: refused on ";
		char node[256], idbuf[32], out[256], errbuf[512];
		struct node_rec r;
		burst_err_t err;
		job_desc_msg_t upd;
		size_t l;

		if (c && !strncmp(c, "burst: job refused on ", 22) && (j->job_state & JOB_STATE_BASE) == JOB_PENDING &&
		    j->priority == 0) {
			/* the job's own doing (its contract does not allow the node's
			 * node set): it stays held; the node, drained by Slurm for the
			 * failed prolog, is healthy and goes back to work */
			char note[1200];
			l = strcspn(c + 22, ":");
			snprintf(node, sizeof(node), "%.*s", (int)l, c + 22);
			INFO("job %u refused by %s for itself (%s): left held; %s is resumed, not failed", j->job_id, node, c, node);
			snprintf(note, sizeof(note), "burst: held: %.1100s", c + 7);
			slurm_init_job_desc_msg(&upd);
			upd.job_id = j->job_id;
			upd.admin_comment = note;
			if (slurm_update_job(&upd) != SLURM_SUCCESS)
				ERR("job %u: cannot update its admin comment: %s", j->job_id, slurm_strerror(burst_slurm_errno()));
			if (node_find(node))
				slurm_node(node, NULL, NODE_RESUME, NULL);
			continue;
		}
		if (!c || strncmp(c, p, strlen(p)) || (j->job_state & JOB_STATE_BASE) != JOB_PENDING ||
		    j->priority != 0)
			continue;
		l = strcspn(c + strlen(p), ":");
		snprintf(node, sizeof(node), "%.*s", (int)l, c + strlen(p));
		snprintf(idbuf, sizeof(idbuf), "%u", j->job_id);
		INFO("job %u was held because %s refused it (%s): releasing it", j->job_id, node, c);
		slurm_init_job_desc_msg(&upd);
		upd.job_id = j->job_id;
		upd.admin_comment = (char *)"burst: released after a refusal on a node that was not admitted";
		if (slurm_update_job(&upd) != SLURM_SUCCESS)
			ERR("job %u: cannot update its admin comment: %s", j->job_id, slurm_strerror(burst_slurm_errno()));
		{
			char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };
			if (proc_run(argv, out, sizeof(out), errbuf, sizeof(errbuf)) != 0)
				ERR("job %u: scontrol release failed: %s", j->job_id, errbuf);
		}
		memset(&r, 0, sizeof(r));
		if (node_find(node) && state_node_get(A.db, node, &r, &err) == 1 &&
		    strcmp(r.state, "powered_down") && strcmp(r.state, "terminating")) {
			char why[700];
			snprintf(why, sizeof(why), "job prolog refused job %u: %.600s", j->job_id, c);
			fail_node(node, r.state, &r, "terminating", why);
		}
		state_node_clear(&r);
	}
	slurm_free_job_info_msg(msg);
}

/* ---- the reconciler ---- */

/* When the agent first saw instance id of provider prov (now, if it is new). */
static double first_seen(const struct seen_inst *old, size_t nold, const char *prov, const char *id)
{
	size_t i;

	for (i = 0; i < nold; i++)
		if (!strcmp(old[i].id, id) && !strcmp(old[i].provider, prov))
			return old[i].first;
	return now();
}

/* The running jobs on node (ids into *ids, a new array the caller frees); their count. */
static size_t jobs_on(const char *node, uint32_t **ids)
{
	job_info_msg_t *msg = NULL;
	size_t n = 0;
	uint32_t i;

	*ids = NULL;
	if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		ERR("%s: cannot read Slurm's jobs: %s", node, slurm_strerror(burst_slurm_errno()));
		return 0;
	}
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		struct hostlist hl = { NULL, 0, 0 };
		burst_err_t err;
		uint32_t st = j->job_state & JOB_STATE_BASE;

		if ((st != JOB_RUNNING && st != JOB_SUSPENDED) || !j->nodes ||
		    hostlist_expand(j->nodes, &hl, 1 << 20, &err) < 0)
			continue;
		if (hostlist_find(&hl, node) >= 0) {
			*ids = xrealloc(*ids, (n + 1) * sizeof(**ids));
			(*ids)[n++] = j->job_id;
		}
		hostlist_free(&hl);
	}
	slurm_free_job_info_msg(msg);
	return n;
}

/*
 * Jobs requeued from a lost node: Slurm holds a requeued job back (its
 * BeginTime, two minutes ahead) in case it still runs on the node; the
 * node's instance is gone, so it cannot: let it go on at once, and release
 * it if it was requeued held. While it waits, slurmctld is asked again every
 * few seconds (an update of the job schedules it): the node it may need is
 * powered down after RejectCooldown, which by itself starts no scheduling
 * pass, and the periodic one comes only every minute.
 */
static void lost_jobs_go_on(void)
{
	static double last;
	size_t i = 0;

	if (!A.nlost_jobs || now() - last < 1.0)
		return;
	last = now();
	while (i < A.nlost_jobs) {
		struct lost_job *lj = &A.lost_jobs[i];
		job_info_msg_t *m = NULL;
		bool done = now() > lj->until;

		if (!done && slurm_load_job(&m, lj->id, SHOW_ALL) == SLURM_SUCCESS && m->record_count) {
			slurm_job_info_t *j = &m->job_array[0];
			uint32_t st = j->job_state & JOB_STATE_BASE;
			if (st != JOB_PENDING)
				/* not requeued yet, or started again, or over */
				done = lj->pending || (st != JOB_RUNNING && st != JOB_SUSPENDED);
			else if (!(j->job_state & JOB_COMPLETING)) {
				lj->pending = true;
				if (j->priority == 0 && !lj->released) {
					char idbuf[32], out[256], errbuf[512];
					char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };
					snprintf(idbuf, sizeof(idbuf), "%u", j->job_id);
					lj->released = true;
					if (proc_run(argv, out, sizeof(out), errbuf, sizeof(errbuf)) == 0)
						INFO("job %u was requeued held from a lost node: released", j->job_id);
					else
						ERR("job %u: scontrol release failed: %s", j->job_id, errbuf);
				}
				if (now() >= lj->next) {
					job_desc_msg_t upd;
					slurm_init_job_desc_msg(&upd);
					upd.job_id = j->job_id;
					upd.begin_time = time(NULL);
					lj->next = now() + 5.0;
					if (slurm_update_job(&upd) != SLURM_SUCCESS)
						ERR("job %u: cannot clear its BeginTime: %s", j->job_id,
						    slurm_strerror(burst_slurm_errno()));
					else if (!lj->nudged)
						INFO("job %u was requeued from a lost node: it may start at once", j->job_id);
					lj->nudged = true;
				}
			}
		} else if (!done)
			done = burst_slurm_errno() == ESLURM_INVALID_JOB_ID;
		slurm_free_job_info_msg(m);
		if (done)
			A.lost_jobs[i] = A.lost_jobs[--A.nlost_jobs];
		else
			i++;
	}
}

static void rc_terminate(const struct rc_action *a)
{
	struct aprov *p = prov_by_name(a->provider);
	enum prov_class cls = PROV_OK;
	burst_err_t err;
	char detail[700];

	if (!p)
		return;
	INFO("reconcile: instance %s of provider %s (node %s): terminating: %s", a->instance, a->provider,
	     a->node ? a->node : "none", a->why);
	/* the local driver finds an instance by its node; aws by its id */
	if (p->ops->terminate(p->drv, a->node ? a->node : "", a->instance, &cls, &err) < 0) {
		ERR("reconcile: cannot terminate orphan instance %s (%s): %s (next round)", a->instance,
		    prov_class_name(cls), err.msg);
		return;
	}
	snprintf(detail, sizeof(detail), "orphan instance %s of provider %s terminated: %s", a->instance,
		 a->provider, a->why);
	if (state_event(A.db, a->node && node_find(a->node) ? a->node : NULL, "reconcile", detail, &err) < 0)
		ERR("%s", err.msg);
}

static void rc_adopt(const struct rc_action *a)
{
	struct node_rec r;
	burst_err_t err;
	char detail[500];

	if (state_node_get(A.db, a->node, &r, &err) == 1 && !strcmp(r.state, "launching") &&
	    (!r.instance || !r.instance[0])) {
		free(r.instance);
		r.instance = xstrdup(a->instance);
		r.retry_at = 0;
		snprintf(detail, sizeof(detail), "%s (reconcile: adopted, %s)", a->instance, a->why);
		transition(a->node, "launching", &r, "booting", detail);
	}
	state_node_clear(&r);
}

/*
 * A lost node (r, in state lost): what is left of its instance is
 * terminated (a stopped instance still costs; a gone one is not found,
 * which is harmless), its instance record cleared, and it waits powered
 * down for its cooldown (cooldowns() tells Slurm).
 */
static void lost_finish(const char *node, struct node_rec *r)
{
	struct aprov *p = prov_by_name(r->provider);
	enum prov_class cls = PROV_OK;
	burst_err_t err;

	if (p && r->instance && p->ops->terminate(p->drv, node, r->instance, &cls, &err) < 0)
		ERR("%s: cannot terminate what is left of instance %s (%s): %s", node, r->instance,
		    prov_class_name(cls), err.msg);
	free(r->instance);
	r->instance = NULL;
	transition(node, "lost", r, "powered_down", "instance record cleared; powered down in Slurm after RejectCooldown");
}

/*
 * The node's instance vanished (spot reclaim, terminated by hand): the node
 * fails as "lost" (DOWN with the reason, so that Slurm requeues its job now;
 * powered down after RejectCooldown), whatever is left of the instance is
 * terminated, and its instance record is cleared.
 */
static void rc_lost(const struct rc_action *a)
{
	struct node_rec r;
	burst_err_t err;
	uint32_t *jobs = NULL;
	size_t nj, i;
	const char *from;

	if (state_node_get(A.db, a->node, &r, &err) != 1 || (strcmp(r.state, "booting") && strcmp(r.state, "admitted")) ||
	    !r.instance || strcmp(r.instance, a->instance)) {
		state_node_clear(&r);
		return;
	}
	from = !strcmp(r.state, "booting") ? "booting" : "admitted";
	nj = jobs_on(a->node, &jobs);
	INFO("reconcile: %s: %s%s", a->node, a->why, nj ? "; its job is requeued" : "");
	r.job = 0;    /* the requeued jobs are let go on below, whoever asked for the node */
	fail_node(a->node, from, &r, "lost", a->why);
	state_node_clear(&r);
	if (state_node_get(A.db, a->node, &r, &err) != 1 || strcmp(r.state, "lost")) {
		free(jobs);
		state_node_clear(&r);
		return;
	}
	for (i = 0; i < nj; i++) {
		A.lost_jobs = xrealloc(A.lost_jobs, (A.nlost_jobs + 1) * sizeof(*A.lost_jobs));
		memset(&A.lost_jobs[A.nlost_jobs], 0, sizeof(*A.lost_jobs));
		A.lost_jobs[A.nlost_jobs].id = jobs[i];
		A.lost_jobs[A.nlost_jobs].until = now() + 120 + A.cfg->reject_cooldown;
		A.nlost_jobs++;
		INFO("%s: job %u was running there: Slurm requeues it", a->node, jobs[i]);
	}
	free(jobs);
	lost_finish(a->node, &r);
	state_node_clear(&r);
}

/*
 * A reconciler round (at start, then every ReconcileInterval seconds): each
 * provider's listing of this cluster's instances against the node records
 * (reconcile.h decides), then the actions, each logged with node, instance
 * and why.
 */
static void reconcile(void)
{
	static double last;
	struct prov_list *lists;
	struct rc_instance *insts = NULL;
	struct rc_node *rn;
	struct rc_action *acts = NULL;
	struct node_rec *recs = NULL;
	struct seen_inst *seen = NULL;
	const char **listed;
	struct rc_settings rs;
	burst_err_t err;
	size_t nrecs = 0, ni = 0, nl = 0, nseen = 0, na, i, k;
	double t = now();

	if (!A.cfg->reconcile_interval || (last > 0 && t - last < A.cfg->reconcile_interval))
		return;
	last = t;
	if (state_nodes_all(A.db, &recs, &nrecs, &err) < 0) {
		ERR("reconcile: %s", err.msg);
		return;
	}
	/* the whole rows (provider, region...): state_nodes_all gives a summary */
	for (i = 0; i < nrecs; i++) {
		struct node_rec full;
		if (state_node_get(A.db, recs[i].name, &full, &err) == 1) {
			state_node_clear(&recs[i]);
			recs[i] = full;
		} else
			state_node_clear(&full);
	}
	lists = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*lists));
	listed = xcalloc(A.nprovs + 1, sizeof(*listed));
	for (i = 0; i < A.nprovs; i++) {
		enum prov_class cls = PROV_OK;
		struct aprov *p = &A.provs[i];
		if (!p->ops->list)
			continue;
		if (p->ops->list(p->drv, &lists[i], &cls, &err) < 0) {
			ERR("reconcile: cannot list the instances of provider %s (%s): %s; nothing is decided for it this round",
			    p->cfg->name, prov_class_name(cls), err.msg);
			prov_list_free(&lists[i]);
			continue;
		}
		listed[nl++] = p->cfg->name;
		insts = xrealloc(insts, (ni + lists[i].n + 1) * sizeof(*insts));
		seen = xrealloc(seen, (nseen + lists[i].n + 1) * sizeof(*seen));
		for (k = 0; k < lists[i].n; k++) {
			const struct prov_instance *in = &lists[i].v[k];
			struct rc_instance *ri = &insts[ni++];
			struct seen_inst *si = &seen[nseen++];
			snprintf(si->provider, sizeof(si->provider), "%s", p->cfg->name);
			snprintf(si->id, sizeof(si->id), "%s", in->id);
			si->first = first_seen(A.seen, A.nseen, p->cfg->name, in->id);
			ri->provider = p->cfg->name;
			ri->id = in->id;
			ri->cluster = in->cluster[0] ? in->cluster : NULL;
			ri->node = in->node[0] ? in->node : NULL;
			ri->attempt = in->attempt;
			ri->state = in->state;
			ri->launched = in->launched;
			ri->first_seen = si->first;
		}
	}
	/* instances of a provider whose listing failed keep their first sighting */
	for (i = 0; i < A.nseen; i++) {
		bool failed = true;
		for (k = 0; k < nl && failed; k++)
			failed = strcmp(listed[k], A.seen[i].provider) != 0;
		if (failed) {
			seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
			seen[nseen++] = A.seen[i];
		}
	}
	free(A.seen);
	A.seen = seen;
	A.nseen = nseen;
	rn = xcalloc(nrecs ? nrecs : 1, sizeof(*rn));
	for (i = 0; i < nrecs; i++) {
		struct bnode *ni_ = node_find(recs[i].name);
		rn[i].name = recs[i].name;
		rn[i].state = recs[i].state;
		rn[i].provider = recs[i].provider;
		rn[i].instance = recs[i].instance;
		rn[i].attempt = recs[i].attempt;
		rn[i].since = recs[i].since;
		rn[i].missing_since = ni_ ? ni_->missing_since : 0;
	}
	rs.cluster = A.cfg->cluster_name;
	rs.orphan_grace = A.cfg->orphan_grace;
	rs.vanish_grace = A.cfg->vanish_grace;
	rs.listed = listed;
	na = reconcile_decide(rn, nrecs, insts, ni, t, &rs, &acts);
	/* a miss is remembered only while it lasts */
	for (i = 0; i < A.nnodes; i++) {
		bool missing = false;
		for (k = 0; k < na && !missing; k++)
			missing = acts[k].kind == RC_MISSING && !strcmp(acts[k].node, A.nodes[i].name);
		if (!missing)
			A.nodes[i].missing_since = 0;
	}
	for (k = 0; k < na; k++) {
		const struct rc_action *a = &acts[k];
		switch (a->kind) {
		case RC_TERMINATE:
			rc_terminate(a);
			break;
		case RC_ADOPT:
			rc_adopt(a);
			break;
		case RC_LOST:
			rc_lost(a);
			break;
		case RC_MISSING: {
			struct bnode *b = node_find(a->node);
			if (b && !b->missing_since) {
				b->missing_since = t;
				INFO("reconcile: %s: %s", a->node, a->why);
			}
			break;
		}
		}
	}
	free(acts);
	free(rn);
	free(insts);
	for (i = 0; i < A.nprovs; i++)
		prov_list_free(&lists[i]);
	free(lists);
	free(listed);
	state_nodes_free(recs, nrecs);
}

/* Log to path ("syslog" for syslog); reopened on SIGHUP, for logrotate. */
static int open_log(const char *path)
{
	FILE *f;

	A.log_path = path;
	if (!strcmp(path, "syslog")) {
		if (!A.syslog)
			openlog("burst-agent", LOG_PID, LOG_DAEMON);
		A.syslog = true;
		return 0;
	}
	f = fopen(path, "a");
	if (!f) {
		fprintf(stderr, "burst-agent: cannot open the log %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (A.log)
		fclose(A.log);
	A.log = f;
	return 0;
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reloading = 1;
	else
		stopping = 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	sigset_t none;
	int ch;
	const char *logpath = NULL;

	while ((ch = getopt_long(argc, argv, "c:L:Dh", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': A.conf_path = optarg; break;
		case 'L': logpath = optarg; break;
		case 'D': break;   /* foreground: the default; run it under systemd */
		case 'h':
			printf("usage: burst-agent [-c burst.conf] [-L logfile|syslog]\n");
			return 0;
		default: return 2;
		}
	}
	A.conf_path = config_default_path(A.conf_path);
	A.slurm_conf = getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
	A.libexec = getenv("BURST_LIBEXECDIR") ? getenv("BURST_LIBEXECDIR") : BURST_LIBEXECDIR;
	A.node_bin = getenv("BURST_NODE") ? getenv("BURST_NODE") : BURST_LIBEXECDIR "/burst-node";
	if (logpath && open_log(logpath) < 0)
		return 1;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (setup() < 0)
		return 1;
	if (!logpath && A.cfg->log_file && open_log(A.cfg->log_file) < 0)
		return 1;
	INFO("started: %zu nodes in %zu node sets, state %s, socket %s, join %s:%d",
	     A.nnodes, A.cfg->nnodesets, A.cfg->state_dir, A.cfg->socket_path, A.local->address,
	     A.cfg->join_port);
	recover();
	while (!stopping) {
		serve_clients();
		if (reloading) {
			reloading = 0;
			if (A.log_path && open_log(A.log_path) < 0)
				ERR("SIGHUP: cannot reopen the log %s: %s", A.log_path, strerror(errno));
			if (load_conf() == 0) {
				ensure_nodes();
				INFO("SIGHUP: %s read again: %zu nodes in %zu node sets", A.conf_path, A.nnodes,
				     A.cfg->nnodesets);
			} else
				ERR("SIGHUP: %s has errors (above): the running configuration is kept", A.conf_path);
		}
		tick();
	}
	INFO("stopping (instances keep running; a restart takes them up again)");
	conn_table_free(&A.conns);
	close(A.usock);
	close(A.jsock);
	unlink(A.cfg->socket_path);
	state_close(A.db);
	{
		struct conf_state c;
		conf_state_get(&c);
		conf_state_free(&c);
	}
	slurm_fini();
	return 0;
}
