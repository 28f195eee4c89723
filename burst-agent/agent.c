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
#include <openssl/evp.h>
#include <slurm/slurm.h>
#include <strings.h>

#include "catalog.h"
#include "config.h"
#include "hostlist.h"
#include "resolver.h"
#include "spool.h"
#include "state.h"
#include "strutil.h"

#define TICK_MS 250
#define MAX_LINE 65536

struct bnode {
	const char *name;
	int nodeset;
	int index;               /* global index: the node's address */
};

struct agent {
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct state_db *db;
	const struct cfg_provider *local;
	struct bnode *nodes;
	size_t nnodes;
	char spool[PATH_MAX], nodes_dir[PATH_MAX];
	const char *conf_path, *slurm_conf, *libexec, *node_bin;
	uint32_t net;            /* local bridge address (host order) */
	int prefix;
	int usock, jsock;
	uid_t slurm_uid;
	FILE *log;
};

static volatile sig_atomic_t stopping, reloading;
static void release_refused_jobs(void);
static struct agent A;

static void logmsg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logmsg(const char *level, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char t[32];
	va_list ap;
	FILE *f = A.log ? A.log : stderr;

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

/* ---- helpers ---- */

static const struct bnode *node_find(const char *name)
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

static void netns_name(const char *node, char *buf, size_t len)
{
	snprintf(buf, len, "burst-%s-%s", A.cfg->cluster_name, node);
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

/* Run argv, wait; stdout (first line) into out. Returns the exit status or -1. */
static int run(char *const argv[], char *out, size_t outlen, char *errbuf, size_t errlen)
{
	int op[2], ep[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(op[1], 1);
		dup2(ep[1], 2);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	n = read(op[0], out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(ep[0], errbuf, errlen - 1);
	errbuf[n > 0 ? n : 0] = '\0';
	close(op[0]);
	close(ep[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	str_trim(out);
	str_trim(errbuf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
		ERR("%s: slurm_update_node: %s", name, slurm_strerror(slurm_get_errno()));
}

static int transition(const char *node, const char *from, struct node_rec *r, const char *to,
		      const char *detail)
{
	burst_err_t err;
	int rc = state_transition(A.db, node, from, r, to, detail, &err);

	if (rc < 0)
		ERR("%s: %s", node, err.msg);
	else if (rc > 0)
		INFO("%s: %s -> %s%s%s", node, from ? from : "*", to, detail ? ": " : "", detail ? detail : "");
	return rc;
}

/* ---- the local provider ---- */

static int local_start(const char *node, const struct node_rec *r, char *err, size_t errlen)
{
	char ns[128], addr[64], joinaddr[64], dir[PATH_MAX * 2], record[PATH_MAX * 2 + 32], script[PATH_MAX];
	char out[256];
	const struct bnode *ni = node_find(node);
	int rc;

	netns_name(node, ns, sizeof(ns));
	node_address(ni, addr, sizeof(addr), true);
	snprintf(joinaddr, sizeof(joinaddr), "%u.%u.%u.%u:%d", A.net >> 24, (A.net >> 16) & 255,
		 (A.net >> 8) & 255, A.net & 255, A.cfg->join_port);
	snprintf(dir, sizeof(dir), "%s/%s", A.nodes_dir, node);
	snprintf(record, sizeof(record), "%s/admission.env", dir);
	snprintf(script, sizeof(script), "%s/burst-local-instance", A.libexec);
	mkdir(dir, 0755);
	{
		char *argv[] = { script, "start", ns, (char *)node, addr, A.local->bridge, dir, "--",
			(char *)A.node_bin, "join", "--agent", joinaddr, "--node", (char *)node,
			"--instance", r->instance, "--token", r->token, "--record", record, "--",
			"slurmd", "-D", "-b", "-f", (char *)A.slurm_conf, "-N", (char *)node, NULL };
		rc = run(argv, out, sizeof(out), err, errlen);
	}
	if (rc == 3) {
		snprintf(err, errlen, "instance %s exists already", ns);
		return 1;
	}
	return rc == 0 ? 0 : -1;
}

static int local_stop(const char *node, char *err, size_t errlen)
{
	char ns[128], script[PATH_MAX], out[256];

	netns_name(node, ns, sizeof(ns));
	snprintf(script, sizeof(script), "%s/burst-local-instance", A.libexec);
	{
		char *argv[] = { script, "stop", ns, NULL };
		return run(argv, out, sizeof(out), err, errlen) == 0 ? 0 : -1;
	}
}

static bool local_exists(const char *node)
{
	char ns[128], script[PATH_MAX], out[64], err[256];

	netns_name(node, ns, sizeof(ns));
	snprintf(script, sizeof(script), "%s/burst-local-instance", A.libexec);
	{
		char *argv[] = { script, "exists", ns, NULL };
		return run(argv, out, sizeof(out), err, sizeof(err)) == 0;
	}
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
	if (transition(node, from, r, to, why) != 1)
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

static void launch(const char *node)
{
	struct node_rec r;
	burst_err_t err;
	char token[64], instance[256], addr[64], perr[1024], rec[PATH_MAX * 2];
	int rc;

	if (state_node_get(A.db, node, &r, &err) != 1 || strcmp(r.state, "requested")) {
		state_node_clear(&r);
		return;
	}
	r.attempt++;
	random_token(token, sizeof(token));
	snprintf(instance, sizeof(instance), "local-%s-%s-%d", A.cfg->cluster_name, node, r.attempt);
	node_address(node_find(node), addr, sizeof(addr), false);
	free(r.token);
	free(r.instance);
	free(r.address);
	free(r.provenance_id);
	r.token = xstrdup(token);
	r.instance = xstrdup(instance);
	r.address = xstrdup(addr);
	r.provenance_id = NULL;
	r.token_used = false;
	r.want_resume = false;
	r.cooldown_until = 0;
	/* no admission record of an earlier instance may survive into this one */
	admission_path(node, rec, sizeof(rec));
	unlink(rec);
	/* the intent first: a crash from here on finds the node launching */
	if (transition(node, "requested", &r, "launching", instance) != 1)
		goto out;
	rc = local_start(node, &r, perr, sizeof(perr));
	if (rc >= 0) {
		transition(node, "launching", &r, "booting", rc == 1 ? perr : "instance started");
	} else {
		char why[1400];
		snprintf(why, sizeof(why), "launch of %.250s failed: %.1000s", instance, perr);
		/* whatever the failed launch left is cleaned up by terminating */
		fail_node(node, "launching", &r, "terminating", why);
	}
out:
	state_node_clear(&r);
}

static void terminate(const char *node)
{
	struct node_rec r;
	burst_err_t err;
	char perr[1024], rec[PATH_MAX * 2];

	if (state_node_get(A.db, node, &r, &err) != 1 || strcmp(r.state, "terminating")) {
		state_node_clear(&r);
		return;
	}
	if (local_stop(node, perr, sizeof(perr)) < 0) {
		ERR("%s: cannot stop instance %s: %s (will retry)", node, r.instance ? r.instance : "?", perr);
		state_node_clear(&r);
		return;
	}
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
	char **names = state_nodes_in(A.db, "powered_down", &err);
	size_t i;
	double t = now();

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

/* Is the reported kernel one the node set admits? NULL if so, else why not. */
static const char *kernel_policy(const struct cfg_nodeset *ns, const char *release,
				 const char *build_id, char *why, size_t len)
{
	size_t i;

	if (!ns->nblessed_kernels)
		return NULL;
	for (i = 0; i < ns->nblessed_kernels; i++) {
		const char *b = ns->blessed_kernels[i], *colon = strchr(b, ':');
		size_t rl = colon ? (size_t)(colon - b) : strlen(b);
		if (!release || strlen(release) != rl || strncmp(release, b, rl))
			continue;
		if (colon && (!build_id || strcasecmp(colon + 1, build_id)))
			continue;
		return NULL;
	}
	snprintf(why, len, "kernel %s (build-id %s) is not blessed for node set %s (BlessedKernels=",
		 release ? release : "unknown", build_id && *build_id ? build_id : "unknown", ns->name);
	for (i = 0; i < ns->nblessed_kernels; i++) {
		size_t l = strlen(why);
		snprintf(why + l, len - l, "%s%s", i ? "," : "", ns->blessed_kernels[i]);
	}
	strncat(why, ")", len - strlen(why) - 1);
	return why;
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0, i;

	EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	out[64] = '\0';
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/* A node reported: check it and answer. */
static void handle_join(int fd)
{
	char buf[MAX_LINE], reply[2048], why[1024], pid[65];
	ssize_t n;
	size_t got = 0;
	json_object *req = NULL, *jrec = NULL, *jk = NULL;
	struct node_rec r;
	burst_err_t err;
	const char *node, *instance, *token, *bad = NULL;
	const struct cfg_nodeset *ns;
	struct timeval tv = { 5, 0 };

	memset(&r, 0, sizeof(r));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			break;
	}
	buf[got] = '\0';
	req = json_tokener_parse(buf);
	node = jstr(req, "node");
	instance = jstr(req, "instance");
	token = jstr(req, "token");
	if (!node || !instance || !token || !json_object_object_get_ex(req, "record", &jrec) ||
	    !json_object_is_type(jrec, json_type_object)) {
		ERR("join: malformed report (%zu bytes%s), refused", got,
		    got >= sizeof(buf) - 1 ? ", too large" : "");
		snprintf(reply, sizeof(reply), "{\"admit\":false,\"reason\":\"malformed report\"}\n");
		goto answer;
	}
	if (state_node_get(A.db, node, &r, &err) != 1)
		bad = "unknown node";
	else if (strcmp(r.state, "booting"))
		bad = "node is not booting";
	else if (!r.instance || strcmp(r.instance, instance))
		bad = "wrong instance for this node";
	else if (r.token_used || !r.token || strcmp(r.token, token))
		bad = "invalid or used join token";
	if (bad) {
		/* a forged, replayed or misdirected report changes nothing */
		ERR("join: %s (instance %s): refused: %s", node, instance, bad);
		snprintf(reply, sizeof(reply), "{\"admit\":false,\"reason\":\"%s\"}\n", bad);
		goto answer;
	}
	r.token_used = true;
	{
		const char *rec = json_object_to_json_string_ext(jrec, JSON_C_TO_STRING_PLAIN);
		sha256_hex(rec, pid);
		free(r.provenance_id);
		r.provenance_id = xstrdup(pid);
		ns = nodeset_of(node);
		json_object_object_get_ex(jrec, "kernel", &jk);
		bad = kernel_policy(ns, jstr(jk, "release"), jstr(jk, "build_id"), why, sizeof(why));
		if (state_record_add(A.db, node, instance, pid, rec, bad ? bad : "admitted", &err) < 0)
			ERR("%s: cannot store its record: %s", node, err.msg);
	}
	if (bad) {
		char full[1200];
		snprintf(full, sizeof(full), "rejected at join: %s", bad);
		fail_node(node, "booting", &r, "rejected", full);
		json_object *o = json_object_new_object();
		json_object_object_add(o, "admit", json_object_new_boolean(0));
		json_object_object_add(o, "reason", json_object_new_string(bad));
		snprintf(reply, sizeof(reply), "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		goto answer;
	}
	if (transition(node, "booting", &r, "admitted", pid) != 1) {
		snprintf(reply, sizeof(reply), "{\"admit\":false,\"reason\":\"state changed\"}\n");
		goto answer;
	}
	/* the address before slurmd starts */
	slurm_node(node, r.address, NO_VAL, NULL);
	snprintf(reply, sizeof(reply),
		 "{\"admit\":true,\"record\":{\"CLOUD_PROVIDER\":\"local\",\"CLOUD_INSTANCE_TYPE\":\"local.host\","
		 "\"CLOUD_INSTANCE_ID\":\"%s\",\"CLOUD_NODE\":\"%s\",\"CLOUD_NODESET\":\"%s\","
		 "\"CLOUD_PROVENANCE_ID\":\"%s\"}}\n",
		 r.instance, node, r.nodeset ? r.nodeset : "", pid);
answer:
	if (write(fd, reply, strlen(reply)) < 0)
		ERR("join: cannot answer: %s", strerror(errno));
	json_object_put(req);
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
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", A.spool, file);
	if (state_request_seen(A.db, file, &err) == 1) {
		unlink(path);
		return;
	}
	req = json_object_from_file(path);
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
	unlink(path);
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

static void handle_control(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char buf[4096];
	ssize_t n;
	struct timeval tv = { 2, 0 };

	/* read the request first: answering before it is read can reset the
	 * connection under the client's feet */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != 0 && cred.uid != A.slurm_uid)) {
		const char *msg = "{\"ok\":false,\"error\":\"permission denied: only root and SlurmUser may talk to burst-agent\"}\n";
		ERR("control: refused uid %u pid %d (only root and SlurmUser uid %u)",
		    (unsigned)cred.uid, (int)cred.pid, (unsigned)A.slurm_uid);
		if (write(fd, msg, strlen(msg)) < 0)
			return;
		return;
	}
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

static int listen_unix(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0666) < 0 ||
	    listen(fd, 64) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int listen_tcp(uint32_t addr, int port)
{
	struct sockaddr_in sa;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

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

static int setup(void)
{
	burst_err_t err;
	size_t i, j, k = 0;
	char dbpath[PATH_MAX];
	slurm_conf_t *sc = NULL;

	A.cfg = config_load(A.conf_path, &err);
	if (!A.cfg) {
		ERR("%s", err.msg);
		return -1;
	}
	for (i = 0; i < A.cfg->nproviders; i++)
		if (!strcmp(A.cfg->providers[i].type, "local"))
			A.local = &A.cfg->providers[i];
	if (!A.local || !A.local->bridge || !A.local->address) {
		ERR("%s: this agent drives the local provider: give Provider=local Bridge=NAME Address=ADDR/PREFIX",
		    A.conf_path);
		return -1;
	}
	{
		unsigned a, b, c, d;
		sscanf(A.local->address, "%u.%u.%u.%u/%d", &a, &b, &c, &d, &A.prefix);
		A.net = (a << 24) | (b << 16) | (c << 8) | d;
	}
	A.cat = catalog_load(catalog_default_dir(A.cfg->catalog_dir), &err);
	if (!A.cat) {
		ERR("%s", err.msg);
		return -1;
	}
	if (config_apply_catalog(A.cfg, A.cat, &err) < 0) {
		ERR("%s", err.msg);
		return -1;
	}
	A.cs = config_candidates(A.cfg, A.cat, &err);
	if (!A.cs) {
		ERR("%s", err.msg);
		return -1;
	}
	for (i = 0; i < A.cfg->nnodesets; i++)
		A.nnodes += A.cfg->nodesets[i].nodes.n;
	A.nodes = xcalloc(A.nnodes ? A.nnodes : 1, sizeof(*A.nodes));
	for (i = 0; i < A.cfg->nnodesets; i++)
		for (j = 0; j < A.cfg->nodesets[i].nodes.n; j++, k++) {
			A.nodes[k].name = A.cfg->nodesets[i].nodes.names[j];
			A.nodes[k].nodeset = (int)i;
			A.nodes[k].index = (int)k;
		}
	if (10 + A.nnodes >= (1u << (32 - A.prefix)) - 1) {
		ERR("Address=%s has room for fewer than %zu nodes", A.local->address, A.nnodes);
		return -1;
	}
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
	for (i = 0; i < A.nnodes; i++)
		if (state_node_ensure(A.db, A.nodes[i].name, A.cfg->nodesets[A.nodes[i].nodeset].name, &err) < 0) {
			ERR("%s", err.msg);
			return -1;
		}
	slurm_init(NULL);
	A.slurm_uid = 0;
	if (slurm_load_ctl_conf((time_t)0, &sc) == SLURM_SUCCESS) {
		A.slurm_uid = sc->slurm_user_id;
		slurm_free_ctl_conf(sc);
	} else
		ERR("cannot read Slurm's configuration (%s): only root may use the control socket",
		    slurm_strerror(slurm_get_errno()));
	A.usock = listen_unix(A.cfg->socket_path);
	if (A.usock < 0) {
		ERR("cannot listen on %s: %s", A.cfg->socket_path, strerror(errno));
		return -1;
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
	static const char *const live[] = { "launching", "booting", "admitted", NULL };
	burst_err_t err;
	size_t s, i;

	for (s = 0; live[s]; s++) {
		char **names = state_nodes_in(A.db, live[s], &err);
		for (i = 0; names && names[i]; i++) {
			struct node_rec r;
			bool exists = local_exists(names[i]);
			if (state_node_get(A.db, names[i], &r, &err) != 1)
				continue;
			if (!strcmp(live[s], "launching")) {
				/* the intent was written; did the launch happen? */
				if (exists)
					transition(names[i], "launching", &r, "booting", "found after restart");
				else
					transition(names[i], "launching", &r, "requested", "launch not done before restart");
			} else if (!exists) {
				char why[300];
				snprintf(why, sizeof(why), "instance %s lost", r.instance ? r.instance : "?");
				fail_node(names[i], live[s], &r, "powered_down", why);
			} else
				INFO("%s: %s, instance %s still there", names[i], live[s], r.instance);
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
	names = state_nodes_in(A.db, "requested", &err);
	for (i = 0; names && names[i]; i++)
		launch(names[i]);
	state_names_free(names);
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
	release_refused_jobs();
	names = state_nodes_in(A.db, "booting", &err);
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
			ERR("job %u: cannot update its admin comment: %s", j->job_id, slurm_strerror(slurm_get_errno()));
		{
			char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };
			if (run(argv, out, sizeof(out), errbuf, sizeof(errbuf)) != 0)
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
			printf("usage: burst-agent [-c burst.conf] [-L logfile]\n");
			return 0;
		default: return 2;
		}
	}
	A.conf_path = config_default_path(A.conf_path);
	A.slurm_conf = getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
	A.libexec = getenv("BURST_LIBEXECDIR") ? getenv("BURST_LIBEXECDIR") : BURST_LIBEXECDIR;
	A.node_bin = getenv("BURST_NODE") ? getenv("BURST_NODE") : BURST_LIBEXECDIR "/burst-node";
	if (logpath) {
		A.log = fopen(logpath, "a");
		if (!A.log) {
			fprintf(stderr, "burst-agent: cannot open log %s: %s\n", logpath, strerror(errno));
			return 1;
		}
	}
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
	INFO("started: %zu nodes in %zu node sets, state %s, socket %s, join %s:%d",
	     A.nnodes, A.cfg->nnodesets, A.cfg->state_dir, A.cfg->socket_path, A.local->address,
	     A.cfg->join_port);
	recover();
	while (!stopping) {
		struct pollfd p[2] = { { A.usock, POLLIN, 0 }, { A.jsock, POLLIN, 0 } };
		int n = poll(p, 2, TICK_MS);
		if (n > 0 && (p[0].revents & POLLIN)) {
			int fd = accept4(A.usock, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				handle_control(fd);
				close(fd);
			}
		}
		if (n > 0 && (p[1].revents & POLLIN)) {
			int fd = accept4(A.jsock, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				handle_join(fd);
				close(fd);
			}
		}
		if (reloading) {
			reloading = 0;
			INFO("SIGHUP: reload is not supported yet in this version; restart the agent");
		}
		tick();
	}
	INFO("stopping (instances keep running; a restart takes them up again)");
	close(A.usock);
	close(A.jsock);
	unlink(A.cfg->socket_path);
	state_close(A.db);
	candset_free(A.cs);
	catalog_free(A.cat);
	config_free(A.cfg);
	free(A.nodes);
	slurm_fini();
	return 0;
}
