/*
 * burst-agent: join and admission. A node's report on the join port
 * (munge credential, provenance record, acceptance results) is verified
 * and held against its node set's admission policy.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>
#include <munge.h>
#include <slurm/slurm.h>

#include "agent_int.h"
#include "node_life.h"
#include "crash.h"
#include "join_verify.h"
#include "wire.h"
#include "policy.h"
#include "slurm_compat.h"
#include "sigv4.h"
#include "strutil.h"

/*
 * The admission policy (lib/core/policy.h) on the node's recorded facts: blessed
 * kernels and driver versions (burst.conf, StateDir/blessed-kernels and
 * blessed-drivers), taint, modules, and
 * the hardware the catalog promises for the type it was launched as. NULL
 * if the node passes, else why not.
 */
static const char *admission_policy(const struct cfg_nodeset *ns, const struct node_rec *r,
				    json_object *rec, char *why, size_t len)
{
	struct policy p;
	char tname[512];
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
	if (policy_load_state(&p, A.cfg->state_dir, &err) < 0)
		ERR("%s (it blesses nothing more)", err.msg);
	rc = policy_check(&p, A.cat, type, rec, why, len);
	policy_free_state(&p);
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

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/*
 * The signer: the agent's credentials (a hello's proof, an answer's
 * signature) are made on a worker thread of their own, off the loop (a
 * munged that is slow or stopped holds that thread, not the joins of
 * others), at most SIGN_MAX_PENDING at once and SIGN_MAX_PER_SOURCE
 * hellos of one address: beyond that a hello is closed unanswered and the
 * node asks again.
 */
#define SIGN_MAX_PENDING 256
#define SIGN_MAX_PER_SOURCE 16
#define REPORT_AFTER_HELLO_S 5.0   /* the report, whole, once the hello is answered */

static struct pworker *signer, *decoder;
static uint64_t hello_serial;

/* A join connection's hello (its conn's data). */
struct join_conn {
	uint64_t serial;         /* this hello's, so that its answer finds it (the
				  * descriptor may be another connection's by then) */
	bool signing;            /* its proof is being made */
	struct join_hello hello;
};

enum sign_for { SIGN_HELLO, SIGN_ANSWER };

struct sign_job {
	struct pjob j;
	enum sign_for what;
	char *payload;           /* what is signed */
	char *cred;              /* the credential made, NULL if none */
	char err[300];
	char munge_socket[PATH_MAX];
	int fd;                  /* hello: its connection's; answer: a duplicate, closed here */
	uint64_t serial;         /* hello: its connection's */
	char *answer;            /* answer: its text */
	char admitted[128];      /* answer: an admitted node's name, else "" */
	char node[128];          /* for the log */
};

static void sign_run(struct pjob *pj, const struct provider_ops *ops, struct provider *drv)
{
	struct sign_job *j = (struct sign_job *)pj;
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;

	(void)ops;
	(void)drv;
	if (!ctx) {
		snprintf(j->err, sizeof(j->err), "cannot create a munge context");
		return;
	}
	if (j->munge_socket[0])
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, j->munge_socket);
	e = munge_encode(&j->cred, ctx, j->payload, (int)strlen(j->payload));
	if (e != EMUNGE_SUCCESS) {
		snprintf(j->err, sizeof(j->err), "%s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
		free(j->cred);
		j->cred = NULL;
	}
	munge_ctx_destroy(ctx);
}

static void sign_free(struct sign_job *j)
{
	free(j->payload);
	free(j->cred);
	free(j->answer);
	free(j);
}

/* The node is told it is admitted: its slurmd's registration is waited for from now. */
static void answered(const char *node)
{
	struct bnode *ni = node_find(node);

	if (ni) {
		ni->answer_pending = false;
		ni->answered_at = now();
	}
}

static void send_line(int fd, const char *s)
{
	size_t n = strlen(s);
	char *line = xmalloc(n + 2);

	memcpy(line, s, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	if (send(fd, line, n + 1, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(n + 1))
		ERR_LIMITED("join: answers not written", "join: cannot answer: %s", errno ? strerror(errno) : "short write");
	free(line);
}

static void hello_signed(struct sign_job *j)
{
	size_t ci = conn_find(agent_conns(), j->fd);
	struct conn *c = ci < agent_conns()->n ? &agent_conns()->c[ci] : NULL;
	struct join_conn *jc = c ? c->data : NULL;
	char *line;
	size_t n;

	if (!jc || jc->serial != j->serial)
		return;   /* closed meanwhile (its deadline, an eviction) */
	if (!j->cred) {
		ERR_LIMITED("join: credentials not made", "join: cannot prove the agent to %s: munge: %s (is munged running? socket %s); the node asks again",
			    j->node, j->err, j->munge_socket[0] ? j->munge_socket : "default");
		metric_join("unanswered");
		conn_drop(agent_conns(), ci);
		return;
	}
	line = join_hello_answer(j->cred);
	n = strlen(line);
	line = xrealloc(line, n + 2);
	line[n] = '\n';
	line[n + 1] = '\0';
	jc->signing = false;
	c->deadline = mono() + REPORT_AFTER_HELLO_S;
	if (conn_send(c, line, n + 1) == CONN_ERROR || conn_watch(agent_conns(), c) < 0)
		conn_drop(agent_conns(), ci);
}

static void sign_done(struct pjob *pj, bool ran)
{
	struct sign_job *j = (struct sign_job *)pj;

	if (j->what == SIGN_HELLO) {
		if (ran)
			hello_signed(j);
		sign_free(j);
		return;
	}
	if (ran && j->cred) {
		char *line = join_answer_line(j->answer, j->cred);
		send_line(j->fd, line);
		free(line);
	} else if (ran) {
		ERR_LIMITED("join: credentials not made", "join: cannot sign the answer to %s: munge: %s (is munged running? socket %s); not answered: the node asks again",
			    j->node, j->err, j->munge_socket[0] ? j->munge_socket : "default");
		metric_join("unanswered");
	}
	close(j->fd);
	if (ran && j->admitted[0]) {
		answered(j->admitted);
		if (j->cred)
			crash_point(CP_JOIN_ANSWERED);
	}
	sign_free(j);
}

int join_signer_start(void)
{
	burst_err_t err;

	signer = pworker_start("munge", NULL, NULL, &err);
	if (!signer) {
		ERR("join: %s", err.msg);
		return -1;
	}
	decoder = pworker_start("munge-decode", NULL, NULL, &err);
	if (!decoder) {
		ERR("join: %s", err.msg);
		return -1;
	}
	return 0;
}

void join_signer_stop(void)
{
	/* one in a munge call is left to the exit */
	if (signer && pworker_stop(signer, false) == 0)
		signer = NULL;
	if (decoder && pworker_stop(decoder, false) == 0)
		decoder = NULL;
}

static struct sign_job *sign_job(enum sign_for what, char *payload, const char *node)
{
	struct sign_job *j = xcalloc(1, sizeof(*j));

	j->j.run = sign_run;
	j->j.done = sign_done;
	j->what = what;
	j->payload = payload;
	j->fd = -1;
	snprintf(j->munge_socket, sizeof(j->munge_socket), "%s", A.munge_socket);
	snprintf(j->node, sizeof(j->node), "%s", node ? node : "?");
	return j;
}

/* Write a reply (one line) unsigned: to a node that sent no hello. */
static void send_plain(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0 || write(fd, "\n", 1) < 0)
		ERR_LIMITED("join: answers not written", "join: cannot answer: %s", strerror(errno));
}

void join_answer(const struct join_peer *p, const char *answer, const char *admitted)
{
	struct join_binding b;
	struct sign_job *j;
	char *text, *payload;
	int fd;

	if (!p->authed) {
		send_plain(p->fd, answer);
		if (admitted) {
			answered(admitted);
			crash_point(CP_JOIN_ANSWERED);
		}
		return;
	}
	text = xstrdup(answer);
	b.node = p->hello.node;
	b.instance = p->hello.instance;
	b.nonce = p->hello.nonce;
	b.digest = p->digest;
	b.token = p->token;
	payload = join_answer_payload(&b, text);
	fd = payload && pworker_pending(signer) < SIGN_MAX_PENDING ? fcntl(p->fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0) {
		/* not answered: the node asks again (an admitted one is answered
		 * again then, on the same report) */
		if (!payload)
			ERR("join: %s: an answer without a verdict (a bug): %s", p->hello.node, text);
		else {
			ERR_LIMITED("join: answers not signed", "join: %s: its answer not sent: %s; the node asks again", p->hello.node,
				    pworker_pending(signer) >= SIGN_MAX_PENDING ? "the signer is busy" : strerror(errno));
			metric_join("unanswered");
		}
		free(text);
		free(payload);
		if (admitted)
			answered(admitted);
		return;
	}
	j = sign_job(SIGN_ANSWER, payload, p->hello.node);
	j->fd = fd;
	j->answer = text;
	if (admitted) {
		struct bnode *ni = node_find(admitted);
		snprintf(j->admitted, sizeof(j->admitted), "%s", admitted);
		if (ni)
			ni->answer_pending = true;
	}
	pworker_submit(signer, &j->j);
}

/* A hello: its proof is made on the signer; the connection waits for it. */
static bool hello_start(struct conn *c, const struct join_hello *h)
{
	struct join_conn *jc;
	struct sign_job *j;
	size_t mine = 0, pending = pworker_pending(signer);

	for (size_t i = 0; i < agent_conns()->n; i++) {
		const struct join_conn *o = agent_conns()->c[i].data;
		mine += o && o->signing && agent_conns()->c[i].src == c->src;
	}
	if (pending >= SIGN_MAX_PENDING || mine >= SIGN_MAX_PER_SOURCE) {
		char *en = str_escape_ctl(h->node);
		ERR_LIMITED("join: hellos not answered", "join: hello of %s closed unanswered: %zu credentials being made, %zu for its address (at most %d, %d): the node asks again",
			    en, pending, mine, SIGN_MAX_PENDING, SIGN_MAX_PER_SOURCE);
		free(en);
		metric_join("unanswered");
		return false;
	}
	jc = xcalloc(1, sizeof(*jc));
	jc->serial = ++hello_serial;
	jc->signing = true;
	jc->hello = *h;
	c->data = jc;
	c->len = 0;
	j = sign_job(SIGN_HELLO, join_hello_payload(h), h->node);
	j->fd = c->fd;
	j->serial = jc->serial;
	pworker_submit(signer, &j->j);
	return true;
}

static void handle_join(struct join_peer *p, const char *buf, size_t got, uint64_t src);

bool join_line(struct conn *c)
{
	struct join_conn *jc = c->data;
	struct join_peer p;

	memset(&p, 0, sizeof(p));
	p.fd = c->fd;
	if (jc && jc->signing) {
		/* the node waits for the proof before it says more */
		ERR_LIMITED("join: lines before the hello's answer", "join: %zu bytes before the answer to the hello of %s: closed",
			    c->len, jc->hello.node);
		metric_join("malformed");
		return false;
	}
	if (!jc) {
		struct join_hello h;
		char why[200];
		int k = join_hello_parse(c->buf, c->len, &h, why, sizeof(why));
		if (k < 0) {
			char *o = join_hello_refusal(why);
			ERR_LIMITED("join: malformed hellos", "join: malformed hello (%zu bytes): %s; refused", c->len, why);
			metric_join("malformed");
			send_plain(c->fd, o);
			free(o);
			return false;
		}
		if (k > 0)
			return hello_start(c, &h);
		/* no hello: a burst-node older than this agent */
	} else {
		p.authed = true;
		p.hello = jc->hello;
	}
	handle_join(&p, c->buf, c->len, c->src);
	return false;
}

static void reply_reject(const struct join_peer *p, const char *reason);

void join_too_big(struct conn *c)
{
	struct join_conn *jc = c->data;
	struct join_peer p;

	memset(&p, 0, sizeof(p));
	p.fd = c->fd;
	if (jc && !jc->signing) {
		p.authed = true;
		p.hello = jc->hello;
	}
	reply_reject(&p, "report too large");
}

/* The answer a, encoded, sent (signed to a node that sent a hello);
 * admitted: the node admitted (answered once written). */
static void reply(const struct join_peer *p, const struct wire_join_answer *a, const char *admitted)
{
	char *text = wire_join_answer_encode(a);

	join_answer(p, text, admitted);
	free(text);
}

static void reply_reject(const struct join_peer *p, const char *reason)
{
	struct wire_join_answer a = { .decision = WIRE_JOIN_REJECT, .reason = (char *)reason };

	reply(p, &a, NULL);
}

/*
 * Admitted: the node's record, and when its slurmd may start
 * (lib/admit/slurmd_start.h). A node launched at its job's allocation
 * (EarlyLaunch=) may register before or after slurmctld's power-save pass
 * asks for it, so its slurmd starts only in the safe window of a second
 * ("slurmd_window": the clock whose tick decides, and the margin before the
 * tick; doc/compat.md, "Launch at allocation"). On Slurm releases with the
 * registration stall (slurm_compat.h) a node of a resume request gets the
 * window too, and the first whole second in which its slurmd is safe
 * whatever that clock says, the one after the resume request's: it starts
 * at whichever comes first, so it waits at most the window's margin, not
 * for the rest of the request's second. Marked answered once written.
 */
static void reply_admit(const struct join_peer *p, const char *node, struct wire_join_answer *a, double requested,
			bool early)
{
	a->decision = WIRE_JOIN_ADMIT;
	if (early || BURST_SLURMD_SAME_SECOND_STALL) {
		a->window = true;
		a->window_boot = BURST_SLURMD_BOOT_CLOCK_UPTIME;
		a->margin_ms = SLURMD_WINDOW_MARGIN_MS;
	}
	if (!early && BURST_SLURMD_SAME_SECOND_STALL && requested > 0)
		a->not_before = (long long)requested + 1;
	reply(p, a, node);
}

/* An admitted node's answer, held until Slurm has its address. */
struct admit_wait {
	struct join_peer peer;   /* its descriptor a duplicate of the connection's */
	struct wire_join_answer rec;   /* its record */
	double requested;
	bool early;
	char node[128];
};

static void admit_after_address(void *arg, bool ran, bool ok)
{
	struct admit_wait *w = arg;

	if (!ran) {
		/* the agent stops: no answer (the node is admitted; its slurmd
		 * comes up or the registration check relaunches it) */
	} else {
		if (!ok)
			ERR("%s: admitted, though slurmctld did not take its address (above)", w->node);
		reply_admit(&w->peer, w->node, &w->rec, w->requested, w->early);
	}
	wire_join_answer_free(&w->rec);
	close(w->peer.fd);
	free(w);
}

static void reply_retry(const struct join_peer *p)
{
	struct wire_join_answer a = { .decision = WIRE_JOIN_RETRY, .reason = (char *)"not ready for this instance yet" };

	reply(p, &a, NULL);
}

uint64_t addr_key(const char *instance, const char *address)
{
	/* FNV-1a over "instance\naddress" */
	uint64_t h = 1469598103934665603ull;
	const char *parts[2] = { instance ? instance : "", address ? address : "" };

	for (int k = 0; k < 2; k++) {
		for (const unsigned char *c = (const unsigned char *)parts[k]; *c; c++)
			h = (h ^ *c) * 1099511628211ull;
		h = (h ^ '\n') * 1099511628211ull;
	}
	return h ? h : 1;
}

struct addr_wait {
	uint64_t key;
	char node[128];
};

static void address_taken(void *arg, bool ran, bool ok)
{
	struct addr_wait *w = arg;
	struct bnode *ni = node_find(w->node);

	/* a failure is said in the log (t_update_node); the admission asks again */
	if (ran && ok && ni)
		ni->addr_in_slurm = w->key;
	free(w);
}

/*
 * The provider's address for a launched instance goes to slurmctld while
 * the instance boots, not after its report is admitted: the admitted node
 * is then answered at once (answer_admitted), one slurmctld call less
 * between admission and slurmd. Only the provider's word (as at
 * admission): a node that is rejected never starts slurmd, and the agent
 * sets it DOWN or powers it down as before.
 */
void address_at_launch(const char *node, const char *instance, const char *address)
{
	struct addr_wait *w = xcalloc(1, sizeof(*w));
	struct bnode *ni = node_find(node);

	if (ni)
		ni->addr_in_slurm = 0;
	w->key = addr_key(instance, address);
	snprintf(w->node, sizeof(w->node), "%s", node);
	slurm_node_then(node, address, NO_VAL, NULL, address_taken, w);
}

/*
 * Answer an admitted node once slurmctld has its address (its slurmd
 * registers from there): at once when slurmctld took it at launch
 * (address_at_launch), else after telling it now: its admission record (the CLOUD_* values), with
 * the connection kept (a duplicate of its descriptor) while the Slurm
 * worker tells it, and the loop going on meanwhile, however long
 * slurmctld takes.
 */
static void answer_admitted(const struct join_peer *p, const char *node, const struct node_rec *rp,
			    const char *digest, double requested)
{
	const struct node_rec r = *rp;
	struct wire_join_answer rec = { .decision = WIRE_JOIN_ADMIT, .margin_ms = -1 };
	struct bnode *ni = node_find(node);
	struct admit_wait *w;

	wire_join_answer_add(&rec, "CLOUD_PROVIDER", r.provider);
	wire_join_answer_add(&rec, "CLOUD_INSTANCE_TYPE", r.instance_type);
	wire_join_answer_add(&rec, "CLOUD_INSTANCE_ID", r.instance);
	wire_join_answer_add(&rec, "CLOUD_NODE", node);
	wire_join_answer_add(&rec, "CLOUD_NODESET", r.nodeset);
	wire_join_answer_add(&rec, "CLOUD_PROVENANCE_ID", digest);
	if (ni && r.address && ni->addr_in_slurm == addr_key(r.instance, r.address)) {
		/* slurmctld has had it since the launch */
		reply_admit(p, node, &rec, requested, r.early);
		wire_join_answer_free(&rec);
		return;
	}
	w = xcalloc(1, sizeof(*w));
	w->peer = *p;
	w->peer.fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);   /* not inherited by what the agent starts */
	w->rec = rec;
	w->requested = requested;
	w->early = r.early;
	snprintf(w->node, sizeof(w->node), "%s", node);
	if (w->peer.fd < 0) {
		ERR("%s: cannot keep its join connection (%s): answered before Slurm has its address",
		    node, strerror(errno));
		reply_admit(p, node, &w->rec, requested, r.early);
		wire_join_answer_free(&w->rec);
		free(w);
		slurm_node(node, r.address, NO_VAL, NULL);
	} else {
		/* not yet: the answer waits behind whatever the Slurm worker does
		 * first (a slurmctld that takes 10 s over another node) */
		if (ni)
			ni->answer_pending = true;
		slurm_node_then(node, r.address, NO_VAL, NULL, admit_after_address, w);
	}
}

/*
 * A node reported: {"op":"join","cred":MUNGE,"record":TEXT}, the credential's
 * payload {"digest":sha256(TEXT),"token","instance","node"}. Nothing a
 * forged, replayed, misdirected or malformed report says reaches the
 * database; only a verified report from the instance the token was issued
 * for is stored and decided on.
 */
/* An admission, waiting for its commit to be durable. */
struct join_wait {
	struct join_peer peer;   /* fd: a duplicate of the connection's */
	char node[128], digest[65];
	char *nodeset;
	double launched, requested;
};

static void join_durable(void *arg, bool durable)
{
	struct join_wait *w = arg;
	struct join_peer *p = &w->peer;
	const char *node = w->node;
	struct bnode *ni = node_find(node);
	struct node_rec r;
	burst_err_t err;

	memset(&r, 0, sizeof(r));
	/* answered below (or it asks again, and is answered then) */
	if (ni)
		ni->answer_pending = false;
	if (!durable) {
		/* not answered: the node asks again (it is answered again then,
		 * on the same report) */
		goto out;
	}
	crash_point(CP_JOIN_ADMITTED);
	metric_join("admitted");
	metric_observe("burst_admission_duration_seconds", w->nodeset, now() - w->launched);
	if (p->fd < 0)
		goto out;   /* it asks again, and is answered then */
	/* as it was written (it may have moved on while that was made durable) */
	if (state_node_get(A.db, node, &r, &err) != 1 || r.state != NS_ADMITTED || !r.provenance_id ||
	    strcmp(r.provenance_id, w->digest)) {
		reply_reject(p, "state changed");
		goto out;
	}
	/*
	 * The address before slurmd starts: the provider's word (the EC2
	 * instance's private IP, the local bridge address), recorded at launch.
	 * Where the report came from is no evidence: behind NAT or a load
	 * balancer it is the router's. Only a driver that could not say (none
	 * today) leaves the peer, said in the log.
	 */
	if (!r.address) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		char peer[INET_ADDRSTRLEN];
		if (getpeername(p->fd, (struct sockaddr *)&sa, &sl) == 0 && sa.sin_family == AF_INET &&
		    inet_ntop(AF_INET, &sa.sin_addr, peer, sizeof(peer))) {
			r.address = xstrdup(peer);
			INFO("%s: provider %s gave no address for instance %s: using %s, where its report came from (wrong behind NAT)",
			     node, r.provider ? r.provider : "?", r.instance ? r.instance : "?", peer);
		}
	}
	answer_admitted(p, node, &r, w->digest, w->requested);
out:
	state_node_clear(&r);
	if (p->fd >= 0)
		close(p->fd);
	free(w->nodeset);
	free(w);
}

/* The open batch (the report's record and its admission) committed; the
 * node answered once it is durable, and meanwhile not taken for one
 * answered (its slurmd's registration not waited for yet). */
static void join_commit(const struct join_peer *p, const char *node, const char *digest, const char *nodeset,
			double launched, double requested)
{
	struct join_wait *w = xcalloc(1, sizeof(*w));
	struct bnode *ni = node_find(node);

	w->peer = *p;
	/* not inherited by what the agent starts; -1: answered by no one (the node asks again) */
	w->peer.fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	if (w->peer.fd < 0)
		ERR("%s: cannot keep its join connection (%s): not answered (it asks again)", node, strerror(errno));
	snprintf(w->node, sizeof(w->node), "%s", node);
	snprintf(w->digest, sizeof(w->digest), "%s", digest);
	w->nodeset = nodeset ? xstrdup(nodeset) : NULL;
	if (ni)
		ni->answer_pending = true;
	w->launched = launched;
	w->requested = requested;
	node_life_commit_then(join_durable, w);
}

static void join_decoded(struct join_peer *p, const struct wire_join_request *rq, size_t got, const char *payload,
			 uid_t uid, const char *failed)
{
	char why[1200];
	json_object *jrec = NULL;
	struct wire_join_claim pay = { NULL, NULL, NULL, NULL };
	struct node_rec r;
	burst_err_t err;
	const char *node = NULL, *instance = NULL, *text = rq->record, *bad = NULL, *digest;
	const struct cfg_nodeset *ns;
	struct join_report rep;
	struct join_expect held;
	struct join_result res;
	bool known = false;
	double launched, requested;

	memset(&r, 0, sizeof(r));
	memset(&rep, 0, sizeof(rep));
	memset(&res, 0, sizeof(res));
	rep.uid = uid;
	if (!payload) {
		ERR_LIMITED("join: reports without a valid credential", "join: %s; report refused", failed);
		metric_join("refused");
		reply_reject(p, failed);
		goto out;
	}
	join_claims(payload, &rep, &pay);
	rep.record = text;
	node = rep.node;
	instance = rep.instance;
	if (rep.token && strlen(rep.token) < sizeof(p->token))
		snprintf(p->token, sizeof(p->token), "%s", rep.token);
	if (p->authed && (!node || !instance || strcmp(node, p->hello.node) || strcmp(instance, p->hello.instance))) {
		char *en = str_escape_ctl(node ? node : "?"), *ei = str_escape_ctl(instance ? instance : "?");
		ERR("join: %s (instance %s, uid %d): refused: the report is not of the node and instance its hello named (%s, %s)",
		    en, ei, (int)rep.uid, p->hello.node, p->hello.instance);
		free(en);
		free(ei);
		metric_join("refused");
		reply_reject(p, "the report is not of the node and instance its hello named");
		goto out;
	}
	if (!p->authed) {
		char *en = str_escape_ctl(node ? node : "?"), *ei = str_escape_ctl(instance ? instance : "?");
		ERR_LIMITED("join: reports without a hello",
			    "join: %s (instance %s): its burst-node sent no hello (older than this agent): answered unsigned, as it expects; "
			    "a process on the join port could answer it too: update the image's slurm-burst-node", en, ei);
		free(en);
		free(ei);
	}
	if (node && state_node_get(A.db, node, &r, &err) == 1) {
		held.node = r.name;
		held.state = r.state;
		held.token = r.token;
		held.token_used = r.token_used;
		held.instance = r.instance;
		held.admitted = r.provenance_id;
		known = true;
	}
	join_verify(&rep, 0, known ? &held : NULL, &res);
	jrec = res.record;
	digest = res.digest;
	if (res.verdict == JOIN_RETRY) {
		INFO("join: %s (instance %s): the launch is not recorded yet: asked to retry", node, instance);
		metric_join("retry");
		reply_retry(p);
		goto out;
	}
	if (res.verdict == JOIN_READMIT) {
		/* admitted on this very report, whose answer was lost (the agent
		 * that admitted it died first): answered as then; nothing is
		 * decided or recorded again */
		INFO("%s: report of instance %s again, the one it was admitted on (its answer was lost): answered again",
		     node, instance);
		/* its slurmd's registration is waited for from now */
		if (node_life_apply(node, &r, LE_READMIT, "its report answered again") != 1) {
			reply_reject(p, "state changed");
			goto out;
		}
		metric_join("admitted");
		answer_admitted(p, node, &r, digest, r.since);
		goto out;
	}
	if (res.verdict != JOIN_VERIFIED) {
		/* node and instance are the report's word: written out, not sent to the log raw */
		char *en = str_escape_ctl(node ? node : "?"), *ei = str_escape_ctl(instance ? instance : "?");
		ERR("join: %s (instance %s, uid %d): refused: %s", en, ei, (int)rep.uid, res.reason);
		free(en);
		free(ei);
		metric_join("refused");
		reply_reject(p, res.reason);
		goto out;
	}
	crash_point(CP_JOIN_VERIFIED);
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
		snprintf(why, sizeof(why), "the node reported a problem instead of its provenance: %.1000s", jstr(jrec, "error"));
		bad = why;
	} else if (!(bad = join_acceptance(jrec, why, sizeof(why))))
		bad = admission_policy(ns, &r, jrec, why, sizeof(why));
	if (bad) {
		/* the reasons quote the node's record: no raw control characters
		 * into the records, events, log and burstctl's terminal */
		char *e = str_escape_ctl(bad);
		snprintf(why, sizeof(why), "%s", e);
		free(e);
		bad = why;
	}
	lease_check();   /* the checks above took a while: still ours? */
	{
		{
			double pv = rq->provenance_s, av = rq->acceptance_s;
			char acc[48], prov[48];
			/* a node without acceptance.conf ran no acceptance test; one
			 * that reported a problem sent no provenance time */
			if (av < 0)
				snprintf(acc, sizeof(acc), "no acceptance tests");
			else
				snprintf(acc, sizeof(acc), "acceptance %.3f s", av);
			if (pv < 0)
				snprintf(prov, sizeof(prov), "no provenance");
			else
				snprintf(prov, sizeof(prov), "provenance %.3f s", pv);
			INFO("%s: report of instance %s: %s, %s, %zu bytes", node, instance, prov, acc, got);
			if (av >= 0)
				metric_observe("burst_acceptance_duration_seconds", r.nodeset, av);
		}
	}
	{
		/* the launch was recorded at or after Slurm's resume request */
		const struct bnode *bn = node_find(node);
		launched = r.since;
		requested = bn && bn->requested_at > 0 && bn->requested_at <= launched ? bn->requested_at : launched;
	}
	if (bad) {
		/* written at once (the loop terminates a rejected node's
		 * instance: not before the node is told why) */
		char full[1300];
		if (state_record_add(A.db, node, instance, digest, text, bad, &err) < 0)
			ERR("%s: cannot store its record: %s", node, err.msg);
		snprintf(full, sizeof(full), "rejected at join: %s", bad);
		metric_join("rejected");
		node_life_apply(node, &r, LE_REJECT, full);
		crash_point(CP_JOIN_REJECTED);
		reply_reject(p, bad);
		goto out;
	}
	/* the record and the admission in one commit, made durable off the
	 * loop; the node is answered once it is (join_durable) */
	node_life_begin_unsynced();
	if (state_record_add(A.db, node, instance, digest, text, "admitted", &err) < 0)
		ERR("%s: cannot store its record: %s", node, err.msg);
	if (node_life_apply(node, &r, LE_ADMIT, digest) != 1) {
		node_life_commit();
		reply_reject(p, "state changed");
		goto out;
	}
	join_commit(p, node, digest, r.nodeset, launched, requested);
out:
	wire_join_claim_free(&pay);
	json_object_put(jrec);
	state_node_clear(&r);
}

/*
 * The decoder: a report's or a notice's credential is decoded on a munge
 * worker of its own, off the loop (a munged that is slow or stopped holds
 * that thread, not the loop, nor the signer), its connection kept (a
 * duplicate of its descriptor) until it is answered. At most
 * DECODE_MAX_PENDING at once, DECODE_MAX_PER_SOURCE of one address, and
 * within JoinReportMemory= together: beyond that a report is closed
 * unanswered and the node asks again.
 */
#define DECODE_MAX_PENDING 256
#define DECODE_MAX_PER_SOURCE 16

struct decode_job {
	struct pjob j;
	struct decode_job *prev, *next;  /* those in flight (the loop's list) */
	struct join_peer peer;   /* fd: a duplicate of the connection's, closed once answered */
	uint64_t src;
	struct wire_join_request rq;   /* the loop's: the worker does not touch it */
	size_t got;
	bool notice;
	char *cred;              /* the worker's copy */
	char munge_socket[PATH_MAX];
	char *payload;           /* decoded, or NULL with why */
	uid_t uid;
	char why[300];
};

static struct decode_job *decoding;
static size_t ndecoding, decoding_bytes;

static void decode_run(struct pjob *pj, const struct provider_ops *ops, struct provider *drv)
{
	struct decode_job *j = (struct decode_job *)pj;
	munge_ctx_t ctx;
	void *pay = NULL;
	int plen = 0;
	gid_t gid;
	munge_err_t e;

	(void)ops;
	(void)drv;
	hold_point(HP_MUNGE_DECODE);
	ctx = munge_ctx_create();
	if (!ctx) {
		snprintf(j->why, sizeof(j->why), "cannot create a munge context");
		return;
	}
	if (j->munge_socket[0])
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, j->munge_socket);
	e = munge_decode(j->cred, ctx, &pay, &plen, &j->uid, &gid);
	if (e != EMUNGE_SUCCESS)
		snprintf(j->why, sizeof(j->why), "munge credential refused: %s",
			 munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
	else {
		j->payload = xmalloc((size_t)plen + 1);
		memcpy(j->payload, pay, (size_t)plen);
		j->payload[plen] = '\0';
	}
	free(pay);
	munge_ctx_destroy(ctx);
}

static void decode_done(struct pjob *pj, bool ran)
{
	struct decode_job *j = (struct decode_job *)pj;

	if (j->prev)
		j->prev->next = j->next;
	else
		decoding = j->next;
	if (j->next)
		j->next->prev = j->prev;
	ndecoding--;
	decoding_bytes -= j->got;
	if (ran) {
		/* the decoder waited on munged: an agent frozen meanwhile and
		 * deposed decides (and logs) nothing of the report */
		lease_check();
		if (j->notice)
			handle_notice(&j->peer, j->payload, j->uid, j->why);
		else
			join_decoded(&j->peer, &j->rq, j->got, j->payload, j->uid, j->why);
	}
	close(j->peer.fd);
	wire_join_request_free(&j->rq);
	free(j->cred);
	free(j->payload);
	free(j);
}

/* rq's credential to the decoder; rq is taken (freed here, or once decided on). */
static void decode_start(const struct join_peer *p, struct wire_join_request *rq, size_t got, uint64_t src)
{
	struct decode_job *j;
	size_t mine = 0;
	int fd;

	bool notice = rq->op == WIRE_JOIN_NOTICE;

	for (j = decoding; j; j = j->next)
		mine += j->src == src;
	if (ndecoding >= DECODE_MAX_PENDING || mine >= DECODE_MAX_PER_SOURCE ||
	    decoding_bytes + got > A.cfg->join_report_memory) {
		ERR_LIMITED("join: reports not decoded", "join: %s closed unanswered: %zu credentials being decoded, %zu for its "
			    "address, %zu bytes held (at most %d, %d, JoinReportMemory=): the node asks again",
			    notice ? "notice" : "report", ndecoding, mine, decoding_bytes, DECODE_MAX_PENDING, DECODE_MAX_PER_SOURCE);
		metric_join("unanswered");
		wire_join_request_free(rq);
		return;
	}
	/* not inherited by what the agent starts */
	fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		ERR_LIMITED("join: reports not decoded", "join: %s closed unanswered: cannot keep its connection: %s; the node asks again",
			    notice ? "notice" : "report", strerror(errno));
		metric_join("unanswered");
		wire_join_request_free(rq);
		return;
	}
	j = xcalloc(1, sizeof(*j));
	j->j.run = decode_run;
	j->j.done = decode_done;
	j->peer = *p;
	j->peer.fd = fd;
	j->src = src;
	j->rq = *rq;
	j->got = got;
	j->notice = rq->op == WIRE_JOIN_NOTICE;
	j->cred = xstrdup(rq->cred);
	j->uid = (uid_t)-1;
	snprintf(j->munge_socket, sizeof(j->munge_socket), "%s", A.munge_socket);
	j->next = decoding;
	if (decoding)
		decoding->prev = j;
	decoding = j;
	ndecoding++;
	decoding_bytes += got;
	pworker_submit(decoder, &j->j);
}

/*
 * A report or a notice, read whole: its credential decoded off the loop,
 * then decided on there (join_decoded, handle_notice).
 */
static void handle_join(struct join_peer *p, const char *buf, size_t got, uint64_t src)
{
	struct wire_join_request rq;
	burst_err_t err;

	if (wire_join_request_decode(buf, got, &rq, &err) == 0 && rq.op == WIRE_JOIN_NOTICE) {
		/* burst-node's interruption watch (agent_notice.c) */
		if (!rq.cred) {
			notice_malformed(p, got);
			wire_join_request_free(&rq);
			return;
		}
		decode_start(p, &rq, got, src);
		return;
	}
	crash_point(CP_JOIN_RECEIVED);
	if (rq.record)
		sigv4_sha256_hex(rq.record, strlen(rq.record), p->digest);
	if (!rq.cred || !rq.record) {
		ERR_LIMITED("join: malformed reports", "join: malformed report (%zu bytes: no cred or record), refused", got);
		metric_join("malformed");
		reply_reject(p, "malformed report");
		wire_join_request_free(&rq);
		return;
	}
	decode_start(p, &rq, got, src);
}
