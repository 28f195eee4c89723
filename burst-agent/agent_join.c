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
#include "crash.h"
#include "join_verify.h"
#include "policy.h"
#include "slurm_compat.h"
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

/* Decode a munge credential; the payload (caller frees) or NULL with why. */
char *munge_open(const char *cred, uid_t *uid, char *why, size_t len)
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

/* Write a reply object (one line) and free it. */
void send_reply(int fd, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

	if (write(fd, s, strlen(s)) < 0 || write(fd, "\n", 1) < 0)
		ERR_LIMITED("join: answers not written", "join: cannot answer: %s", strerror(errno));
	json_object_put(o);
}

void reply_json(int fd, bool admit, const char *reason, json_object *record)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "admit", json_object_new_boolean(admit));
	if (reason)
		json_object_object_add(o, "reason", json_object_new_string(reason));
	if (record)
		json_object_object_add(o, "record", record);
	send_reply(fd, o);
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
 * for the rest of the request's second.
 */
static void reply_admit(int fd, json_object *record, double requested, bool early)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "admit", json_object_new_boolean(true));
	json_object_object_add(o, "record", record);
	if (early || BURST_SLURMD_SAME_SECOND_STALL) {
		json_object *w = json_object_new_object();
		json_object_object_add(w, "clock", json_object_new_string(BURST_SLURMD_BOOT_CLOCK_UPTIME ? "boot" : "wall"));
		json_object_object_add(w, "margin_ms", json_object_new_int(SLURMD_WINDOW_MARGIN_MS));
		json_object_object_add(o, "slurmd_window", w);
	}
	if (!early && BURST_SLURMD_SAME_SECOND_STALL && requested > 0)
		json_object_object_add(o, "slurmd_not_before", json_object_new_int64((int64_t)requested + 1));
	send_reply(fd, o);
}

/* An admitted node's answer, held until Slurm has its address. */
struct admit_wait {
	int fd;
	json_object *rec;
	double requested;
	bool early;
	char node[128];
};

/* The node is told it is admitted: its slurmd's registration is waited for from now. */
static void answered(const char *node)
{
	struct bnode *ni = node_find(node);

	if (ni) {
		ni->answer_pending = false;
		ni->answered_at = now();
	}
}

static void admit_after_address(void *arg, bool ran, bool ok)
{
	struct admit_wait *w = arg;

	if (!ran) {
		/* the agent stops: no answer (the node is admitted; its slurmd
		 * comes up or the registration check relaunches it) */
		json_object_put(w->rec);
	} else {
		if (!ok)
			ERR("%s: admitted, though slurmctld did not take its address (above)", w->node);
		reply_admit(w->fd, w->rec, w->requested, w->early);
		answered(w->node);
		crash_point(CP_JOIN_ANSWERED);
	}
	close(w->fd);
	free(w);
}

static void reply_retry(int fd)
{
	static const char msg[] = "{\"admit\":false,\"retry\":true,\"reason\":\"not ready for this instance yet\"}\n";

	if (write(fd, msg, sizeof(msg) - 1) < 0)
		ERR_LIMITED("join: answers not written", "join: cannot answer: %s", strerror(errno));
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
static void answer_admitted(int fd, const char *node, const struct node_rec *rp, const char *digest,
			    double requested)
{
	const struct node_rec r = *rp;
	json_object *rec = json_object_new_object();
	struct admit_wait *w = xcalloc(1, sizeof(*w));

	json_object_object_add(rec, "CLOUD_PROVIDER", json_object_new_string(r.provider ? r.provider : ""));
	json_object_object_add(rec, "CLOUD_INSTANCE_TYPE", json_object_new_string(r.instance_type ? r.instance_type : ""));
	json_object_object_add(rec, "CLOUD_INSTANCE_ID", json_object_new_string(r.instance));
	json_object_object_add(rec, "CLOUD_NODE", json_object_new_string(node));
	json_object_object_add(rec, "CLOUD_NODESET", json_object_new_string(r.nodeset ? r.nodeset : ""));
	json_object_object_add(rec, "CLOUD_PROVENANCE_ID", json_object_new_string(digest));
	w->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);   /* not inherited by what the agent starts */
	w->rec = rec;
	w->requested = requested;
	w->early = r.early;
	snprintf(w->node, sizeof(w->node), "%s", node);
	{
		struct bnode *ni = node_find(node);
		if (w->fd >= 0 && ni && r.address && ni->addr_in_slurm == addr_key(r.instance, r.address)) {
			/* slurmctld has had it since the launch */
			reply_admit(fd, rec, requested, r.early);
			answered(node);
			crash_point(CP_JOIN_ANSWERED);
			close(w->fd);
			free(w);
			return;
		}
	}
	if (w->fd < 0) {
		ERR("%s: cannot keep its join connection (%s): answered before Slurm has its address",
		    node, strerror(errno));
		reply_admit(fd, rec, requested, r.early);
		answered(node);
		crash_point(CP_JOIN_ANSWERED);
		free(w);
		slurm_node(node, r.address, NO_VAL, NULL);
	} else {
		/* not yet: the answer waits behind whatever the Slurm worker does
		 * first (a slurmctld that takes 10 s over another node) */
		struct bnode *ni = node_find(node);
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
void handle_join(int fd, const char *buf, size_t got)
{
	char why[1200], *payload = NULL;
	json_object *req = NULL, *pay = NULL, *jrec = NULL;
	struct node_rec r;
	burst_err_t err;
	const char *node = NULL, *instance = NULL, *cred, *text, *bad = NULL, *digest;
	const struct cfg_nodeset *ns;
	struct join_report rep;
	struct join_expect held;
	struct join_result res;
	bool known = false;
	double launched, requested;

	memset(&r, 0, sizeof(r));
	memset(&rep, 0, sizeof(rep));
	memset(&res, 0, sizeof(res));
	rep.uid = (uid_t)-1;
	req = json_tokener_parse(buf);
	if (jstr(req, "op") && !strcmp(jstr(req, "op"), "notice")) {
		/* burst-node's interruption watch (agent_notice.c) */
		handle_notice(fd, req, got);
		goto out;
	}
	crash_point(CP_JOIN_RECEIVED);
	cred = jstr(req, "cred");
	text = jstr(req, "record");
	if (!cred || !text) {
		ERR_LIMITED("join: malformed reports", "join: malformed report (%zu bytes: no cred or record), refused", got);
		metric_join("malformed");
		reply_json(fd, false, "malformed report", NULL);
		goto out;
	}
	payload = munge_open(cred, &rep.uid, why, sizeof(why));
	if (!payload) {
		ERR_LIMITED("join: reports without a valid credential", "join: %s; report refused", why);
		metric_join("refused");
		reply_json(fd, false, why, NULL);
		goto out;
	}
	/* munge_open waited on munged: an agent frozen meanwhile and deposed
	 * decides (and logs) nothing of the report */
	lease_check();
	join_claims(payload, &rep, &pay);
	rep.record = text;
	node = rep.node;
	instance = rep.instance;
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
		reply_retry(fd);
		goto out;
	}
	if (res.verdict == JOIN_READMIT) {
		/* admitted on this very report, whose answer was lost (the agent
		 * that admitted it died first): answered as then; nothing is
		 * decided or recorded again */
		INFO("%s: report of instance %s again, the one it was admitted on (its answer was lost): answered again",
		     node, instance);
		/* its slurmd's registration is waited for from now */
		if (transition(node, NS_ADMITTED, &r, NS_ADMITTED, "its report answered again") != 1) {
			reply_json(fd, false, "state changed", NULL);
			goto out;
		}
		metric_join("admitted");
		answer_admitted(fd, node, &r, digest, r.since);
		goto out;
	}
	if (res.verdict != JOIN_VERIFIED) {
		/* node and instance are the report's word: written out, not sent to the log raw */
		char *en = str_escape_ctl(node ? node : "?"), *ei = str_escape_ctl(instance ? instance : "?");
		ERR("join: %s (instance %s, uid %d): refused: %s", en, ei, (int)rep.uid, res.reason);
		free(en);
		free(ei);
		metric_join("refused");
		reply_json(fd, false, res.reason, NULL);
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
		json_object *tm, *v;
		if (json_object_object_get_ex(req, "timing", &tm)) {
			double pv = json_object_object_get_ex(tm, "provenance_s", &v) ? json_object_get_double(v) : -1;
			double av = json_object_object_get_ex(tm, "acceptance_s", &v) ? json_object_get_double(v) : -1;
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
	if (state_record_add(A.db, node, instance, digest, text, bad ? bad : "admitted", &err) < 0)
		ERR("%s: cannot store its record: %s", node, err.msg);
	if (bad) {
		char full[1300];
		snprintf(full, sizeof(full), "rejected at join: %s", bad);
		metric_join("rejected");
		fail_node(node, NS_BOOTING, &r, NS_REJECTED, full);
		crash_point(CP_JOIN_REJECTED);
		reply_json(fd, false, bad, NULL);
		goto out;
	}
	{
		/* the launch was recorded at or after Slurm's resume request */
		const struct bnode *bn = node_find(node);
		launched = r.since;
		requested = bn && bn->requested_at > 0 && bn->requested_at <= launched ? bn->requested_at : launched;
	}
	if (transition(node, NS_BOOTING, &r, NS_ADMITTED, digest) != 1) {
		reply_json(fd, false, "state changed", NULL);
		goto out;
	}
	crash_point(CP_JOIN_ADMITTED);
	metric_join("admitted");
	metric_observe("burst_admission_duration_seconds", r.nodeset, now() - launched);
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
		if (getpeername(fd, (struct sockaddr *)&sa, &sl) == 0 && sa.sin_family == AF_INET &&
		    inet_ntop(AF_INET, &sa.sin_addr, peer, sizeof(peer))) {
			r.address = xstrdup(peer);
			INFO("%s: provider %s gave no address for instance %s: using %s, where its report came from (wrong behind NAT)",
			     node, r.provider ? r.provider : "?", r.instance ? r.instance : "?", peer);
		}
	}
	answer_admitted(fd, node, &r, digest, requested);
out:
	free(payload);
	json_object_put(req);
	json_object_put(pay);
	json_object_put(jrec);
	state_node_clear(&r);
}
