/*
 * burst-node - what runs on a burst node.
 *
 *   burst-node join --agent ADDR:PORT --node NAME --instance ID [--token TOKEN]
 *                   --record FILE [--imds URL | --gce-metadata URL | --azure-metadata URL
 *                   [--imds-interval S]]
 *                   [--sysroot DIR]
 *                   [--join-timeout S] -- SLURMD [ARG...]
 *   (the token otherwise from BURST_JOIN_TOKEN in the environment: off ps)
 *
 * Reports to the agent over the node's network, waits for its verdict, and
 * only when the node is admitted writes the admission record to FILE and
 * becomes SLURMD (so a rejected node never registers with Slurm). Only the
 * agent is told anything, and only its word counts: it proves who it is
 * before the report goes, and signs its verdict (agent_talk.h).
 * Exit 1 when rejected, 2 on usage errors, 3 when the agent cannot be
 * reached or gives no verdict of its own within --join-timeout.
 * With --imds (the aws provider's user data gives it) a child process
 * watches that instance metadata service for a spot interruption notice
 * from the start and reports it to the agent (interrupt.c), beside the join
 * and then beside slurmd; with --gce-metadata (a gcp Spot VM's startup
 * script gives it), Compute Engine's metadata server for the VM's
 * preemption (instance/preempted); with --azure-metadata (an azure Spot
 * VM's customData gives it), Azure's metadata service's Scheduled Events
 * for a Preempt event naming the VM (--instance).
 *
 *   burst-node provenance [--sysroot DIR] [...] [--pretty | --id]
 *
 * Prints the node's provenance record (burst-node/provenance.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <munge.h>

#include "proc.h"
#include "provenance.h"
#include "sigv4.h"
#include "slurmd_start.h"
#include "syncdir.h"
#include "wire.h"

#include "accept.h"
#include "agent_talk.h"
#include "node_provenance.h"
#include "node_health.h"
#include "node_interrupt.h"
#include "plugstack_check.h"

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#define CONNECT_TRIES 60          /* one every 0.5 s: the agent may be restarting */
#define HELLO_TIMEOUT_S 10         /* for the agent's proof of who it is */
#define REPLY_TIMEOUT_S 120
#define JOIN_RETRY_S 300           /* how long an agent may say "not ready yet", or not answer as the agent */

/* A connection to the agent: tried every 0.5 s for 30 s (not past
 * deadline); -1 with errno, -2 when spec is not ADDR:PORT. */
static int connect_agent(const char *spec, double deadline)
{
	struct sockaddr_in sa;
	int i, fd;

	if (agent_sockaddr(spec, &sa) < 0)
		return -2;
	for (i = 0; i < CONNECT_TRIES; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		if (mono() + 0.5 > deadline)
			break;
		usleep(500000);
	}
	return -1;
}

/* The record the node was admitted with, for burst-node health. */
static void save_record(const char *dir, json_object *rec)
{
	char path[4200], why[8900];
	char *text = provenance_serialize(rec, true);
	struct file_replace fr;

	/* whole or not at all: burst-node health compares against it */
	snprintf(path, sizeof(path), "%s/provenance.json", dir);
	if (replace_open(&fr, path, why, sizeof(why)) < 0 ||
	    replace_commit(&fr, fputs(text, fr.f) < 0, why, sizeof(why)) < 0)
		fprintf(stderr, "burst-node: the admission record for burst-node health: %s\n", why);
	free(text);
}

/*
 * The node-local acceptance suite (burst-node accept, run as a child so its
 * timeouts and process groups stay its own): its JSON results, or an
 * object {"error": why} when it could not run. Sets *seconds.
 */
static json_object *run_acceptance(const char *conf, const char *node, const char *itype,
				   const char *dir, double *seconds)
{
	char json_path[4200], self[4096], out[512], errbuf[2048];
	json_object *res;
	double t0 = mono();
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc;

	snprintf(json_path, sizeof(json_path), "%s/acceptance.json", dir);
	unlink(json_path);
	self[n > 0 ? n : 0] = '\0';
	{
		char *argv[] = { self, (char *)"accept", (char *)"--conf", (char *)conf, (char *)"--node", (char *)node,
			(char *)"--instance-type", (char *)(itype ? itype : "default"),
			(char *)"--kind", (char *)"hardware,container", (char *)"--json", json_path, NULL };
		rc = proc_run(argv, out, sizeof(out), errbuf, sizeof(errbuf));
	}
	*seconds = mono() - t0;
	res = json_object_from_file(json_path);
	if ((rc != 0 && rc != 1) || !res || !json_object_is_type(res, json_type_array)) {
		char why[2300];
		json_object_put(res);
		snprintf(why, sizeof(why), "burst-node accept --conf %s exited %d: %.2000s", conf, rc, errbuf);
		res = json_object_new_object();
		json_object_object_add(res, "error", json_object_new_string(why));
	}
	return res;
}

/*
 * What the node says of itself: its provenance record (lib/admit/provenance.h)
 * and, when an acceptance suite is given, the results of its node-local
 * tests under "acceptance". The agent checks both against its policy.
 */
static json_object *node_record(const char *sysroot, const struct prov_opts *po, const char *acceptance,
				const char *dir, struct wire_join_request *timing)
{
	json_object *rec = NULL;
	burst_err_t err;
	double t0 = mono();

	if (provenance_collect(sysroot, po, &rec, &err) < 0) {
		/* the agent rejects it, saying why, rather than waiting for BootTimeout */
		rec = json_object_new_object();
		json_object_object_add(rec, "error", json_object_new_string(err.msg));
		return rec;
	}
	timing->provenance_s = mono() - t0;
	{
		/* a burst node without the admission plugin would run jobs unchecked */
		const char *sc = getenv("SLURM_CONF") && *getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
		char why[3000];
		if (plugstack_admission_problem(sc, BURST_SPANK_PLUGINDIR, why, sizeof(why))) {
			json_object_put(rec);
			rec = json_object_new_object();
			json_object_object_add(rec, "error", json_object_new_string(why));
			return rec;
		}
	}
	if (acceptance) {
		double secs = 0;
		json_object_object_add(rec, "acceptance", run_acceptance(acceptance, po->node, po->instance_type, dir, &secs));
		timing->acceptance_s = secs;
	}
	return rec;
}

/*
 * One attempt at the join: over a new connection, the agent's proof of who
 * it is (agent_talk.h), then the report, whose credential is made now (a
 * credential lives minutes; the report may be sent again for longer), then
 * the verdict, believed only under the agent's credential. The verified
 * verdict (caller puts it), or NULL: *give_up when the agent cannot be
 * reached at all, or on a local failure (both said); else why, and *lost
 * when the connection closed without a byte of an answer (the agent
 * stopped, a standby took over) or *sent whether the report was sent.
 */
static int send_report(const char *agent, const char *node, const char *instance, const char *token,
		       const char *munge_socket, const struct wire_join_request *report, const char *digest,
		       double deadline, struct wire_join_answer *ans, bool *give_up, bool *lost, bool *sent,
		       char *why, size_t wlen)
{
	struct wire_join_claim claim = { (char *)node, (char *)instance, (char *)token, (char *)digest };
	struct wire_join_request req = *report;
	char *cred = NULL, *p, *line, *text = NULL;
	munge_ctx_t ctx = munge_ctx_create();
	struct agent_talk t = { 0 };
	enum talk_status st;
	burst_err_t err;
	int fd, rc = -1;

	*give_up = *lost = *sent = false;
	p = wire_join_claim_encode(&claim);
	/* only root (the agent) may decode it: it carries the join token */
	if (!ctx || (munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS) ||
	    munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)0) != EMUNGE_SUCCESS ||
	    munge_encode(&cred, ctx, p, (int)strlen(p)) != EMUNGE_SUCCESS) {
		fprintf(stderr, "burst-node: %s: cannot make a munge credential for the report (socket %s): %s; is munged running?\n",
			node, munge_socket ? munge_socket : "default", ctx ? munge_ctx_strerror(ctx) : "out of memory");
		munge_ctx_destroy(ctx);
		free(p);
		*give_up = true;
		return -1;
	}
	munge_ctx_destroy(ctx);
	free(p);
	req.op = WIRE_JOIN_REPORT;
	req.cred = cred;
	line = wire_join_request_encode(&req);
	free(cred);
	fd = connect_agent(agent, deadline);
	if (fd < 0) {
		fprintf(stderr, "burst-node: %s: cannot reach the agent at %s: %s\n", node, agent,
			fd == -2 ? "not ADDR:PORT" : strerror(errno));
		free(line);
		*give_up = true;
		return -1;
	}
	t.agent = agent;
	t.node = node;
	t.instance = instance;
	t.munge_socket = munge_socket;
	t.digest = digest;
	t.token = token;
	t.hello_timeout_s = HELLO_TIMEOUT_S;
	t.answer_timeout_s = REPLY_TIMEOUT_S;
	st = agent_talk(fd, &t, line, &text, sent, why, wlen);
	close(fd);
	free(line);
	*lost = st == TALK_LOST;
	if (st == TALK_OK) {
		/* its verdict, signed, is one on a report (agent_talk.h): it reads */
		if (wire_join_answer_decode(text, ans, &err) == 0)
			rc = 0;
		else
			snprintf(why, wlen, "the agent's answer: %.300s", err.msg);
	}
	free(text);
	return rc;
}

/*
 * What does not come from the agent is said loudly, but a line a second for
 * minutes would bury the rest: each new reason at once, the same again
 * every 30 s with how often it came meanwhile.
 */
enum unheard { NO_PROOF, NOT_AGENTS, NO_HELLO_ANSWER };

static void not_believed(const char *node, const char *agent, enum unheard what, const char *why, double left)
{
	static char last[1400];
	static double said;
	static unsigned times;
	char msg[1400];

	snprintf(msg, sizeof(msg), "%s", why);
	if (!strcmp(last, msg) && mono() - said < 30) {
		times++;
		return;
	}
	if (what == NOT_AGENTS)
		fprintf(stderr, "burst-node: %s: NOT BELIEVED: the answer on %s is not the agent's: %s; "
			"no admission record is written and slurmd is not started on it (asking the agent again, %.0f s left)",
			node, agent, why, left);
	else if (what == NO_PROOF)
		fprintf(stderr, "burst-node: %s: NOT BELIEVED: the peer on %s did not prove it is the agent: %s; "
			"the report (credential and provenance record) is not sent to it (asking again, %.0f s left)",
			node, agent, why, left);
	else
		fprintf(stderr, "burst-node: %s: %s: %s (the agent stopping, or too busy to answer?); asking again, %.0f s left",
			node, agent, why, left);
	if (times)
		fprintf(stderr, " [%u more time%s in %.0f s]", times, times == 1 ? "" : "s", mono() - said);
	fputc('\n', stderr);
	snprintf(last, sizeof(last), "%s", msg);
	said = mono();
	times = 0;
}

/*
 * When slurmd may start (lib/admit/slurmd_start.h). The agent's answer says
 * "slurmd_window": {"clock": "boot"|"wall", "margin_ms": M} (a node
 * launched at its job's allocation, which may register before or after
 * slurmctld's power-save pass asks for it; and on Slurm before 23.11.1 any
 * node) and, on Slurm before 23.11.1 for a node of a resume request,
 * "slurmd_not_before": the epoch second from which the request's second is
 * over (doc/compat.md, "Launch at allocation"). slurmd starts as soon as
 * one of them allows: a wait of at most M ms, or of SLURMD_START_WAIT_MAX_S
 * with the second alone (a clock far ahead of the agent's).
 */
static void wait_to_start(const char *node, const struct wire_join_answer *rep)
{
	struct slurmd_start_rule rule = { 0 };
	clockid_t id = CLOCK_REALTIME;
	struct timespec clk, wall, until;
	enum slurmd_start_why why;
	int64_t wait;
	char nb[48] = "";

	if (rep->window) {
		rule.window = true;
		rule.margin_ms = rep->margin_ms;
		if (rep->window_boot)
			id = CLOCK_BOOTTIME;
	}
	if (rep->not_before) {
		rule.second = true;
		rule.not_before = rep->not_before;
		snprintf(nb, sizeof(nb), "second %lld", (long long)rule.not_before);
	}
	clock_gettime(id, &clk);
	clock_gettime(CLOCK_REALTIME, &wall);
	wait = slurmd_start_wait(&rule, clk.tv_nsec, wall, &why);
	switch (why) {
	case SLURMD_START_FREE:
		fprintf(stderr, "burst-node: %s: slurmd starts now\n", node);
		return;
	case SLURMD_START_SECOND_OVER:
		fprintf(stderr, "burst-node: %s: slurmd starts now (at %lld.%03ld): %s is the resume request's next\n",
			node, (long long)wall.tv_sec, wall.tv_nsec / 1000000, nb);
		return;
	case SLURMD_START_WINDOW:
		fprintf(stderr, "burst-node: %s: slurmd starts now (%s clock at .%03ld of its second)%s%s\n",
			node, id == CLOCK_BOOTTIME ? "boot" : "wall", clk.tv_nsec / 1000000,
			*nb ? ", before " : "", nb);
		return;
	case SLURMD_START_WAIT:
		break;
	}
	if (!rule.window) {
		fprintf(stderr, "burst-node: %s: slurmd starts at %s or later (now %lld.%03ld): the resume request's second is over\n",
			node, nb, (long long)wall.tv_sec, wall.tv_nsec / 1000000);
		if (rule.not_before - (int64_t)wall.tv_sec > SLURMD_START_WAIT_MAX_S)
			fprintf(stderr, "burst-node: %s: the agent asks to start slurmd %lld s from now by this clock: waiting %d s only (is the clock of this node or of the agent's host wrong?)\n",
				node, (long long)(rule.not_before - (int64_t)wall.tv_sec), SLURMD_START_WAIT_MAX_S);
	} else
		fprintf(stderr, "burst-node: %s: slurmd starts after the %s clock's next second%s%s (now .%03ld, less than %ld ms left)\n",
			node, id == CLOCK_BOOTTIME ? "boot" : "wall", *nb ? " or at " : "", nb,
			clk.tv_nsec / 1000000, slurmd_start_margin_ms(&rule));
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(wait / 1000000000LL);
	until.tv_nsec += (long)(wait % 1000000000LL);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

static int join(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "node", required_argument, NULL, 'n' },
		{ "instance", required_argument, NULL, 'i' },
		{ "token", required_argument, NULL, 't' },
		{ "record", required_argument, NULL, 'r' },
		{ "munge-socket", required_argument, NULL, 'm' },
		{ "instance-type", required_argument, NULL, 'T' },
		{ "provider", required_argument, NULL, 'P' },
		{ "region", required_argument, NULL, 'R' },
		{ "acceptance", required_argument, NULL, 'A' },
		{ "sysroot", required_argument, NULL, 's' },
		{ "imds", required_argument, NULL, 'I' },
		{ "imds-interval", required_argument, NULL, 'W' },
		{ "gce-metadata", required_argument, NULL, 'G' },
		{ "azure-metadata", required_argument, NULL, 'Z' },
		{ "join-timeout", required_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sysroot = "/";
	const char *agent = NULL, *node = NULL, *instance = NULL, *token = NULL, *record = NULL;
	static char envtoken[256];
	const char *munge_socket = NULL, *acceptance = NULL, *imds = NULL, *gce_md = NULL, *az_md = NULL;
	static struct watch_opts wo;
	long interval = WATCH_INTERVAL_DEFAULT_S, join_timeout = JOIN_RETRY_S;
	char *end;
	struct prov_opts po;
	char dir[4096];
	struct wire_join_answer ans;
	int ch;

	memset(&po, 0, sizeof(po));
	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'a': agent = optarg; break;
		case 'n': node = optarg; break;
		case 'i': instance = optarg; break;
		case 't': token = optarg; break;
		case 'r': record = optarg; break;
		case 'm': munge_socket = optarg; break;
		case 'T': po.instance_type = optarg; break;
		case 'P': po.provider = optarg; break;
		case 'R': po.region = optarg; break;
		case 'A': acceptance = optarg; break;
		case 's': sysroot = optarg; break;
		case 'I': imds = optarg; break;
		case 'G': gce_md = optarg; break;
		case 'Z': az_md = optarg; break;
		case 'W':
			interval = strtol(optarg, &end, 10);
			if (!*optarg || *end || interval < 1 || interval > WATCH_INTERVAL_MAX_S) {
				fprintf(stderr, "burst-node: --imds-interval %s: give seconds between polls of the instance metadata (1-%d)\n",
					optarg, WATCH_INTERVAL_MAX_S);
				return 2;
			}
			break;
		case 'J':
			join_timeout = strtol(optarg, &end, 10);
			if (!*optarg || *end || join_timeout < 1 || join_timeout > 86400) {
				fprintf(stderr, "burst-node: --join-timeout %s: give the seconds join keeps asking the agent (1-86400)\n",
					optarg);
				return 2;
			}
			break;
		default: return 2;
		}
	}
	/* the token from the environment keeps it off the command line (ps);
	 * it goes no further (not into slurmd's environment) */
	if (!token && getenv("BURST_JOIN_TOKEN") && *getenv("BURST_JOIN_TOKEN")) {
		snprintf(envtoken, sizeof(envtoken), "%s", getenv("BURST_JOIN_TOKEN"));
		token = envtoken;
	}
	unsetenv("BURST_JOIN_TOKEN");
	if (!agent || !node || !instance || !token || !record || optind >= argc) {
		fprintf(stderr, "usage: burst-node join --agent ADDR:PORT --node NAME --instance ID [--token T] --record FILE [--munge-socket PATH]\n"
			"                       (the token: --token or BURST_JOIN_TOKEN in the environment)\n"
			"                       [--instance-type T] [--provider P] [--region R] [--acceptance CONF]\n"
			"                       [--imds URL | --gce-metadata URL | --azure-metadata URL\n"
			"                        [--imds-interval SECONDS]]\n"
			"                       [--join-timeout SECONDS]\n"
			"                       [--sysroot DIR] -- SLURMD [ARG...]\n");
		return 2;
	}
	if (!!(imds && *imds) + !!(gce_md && *gce_md) + !!(az_md && *az_md) > 1) {
		fprintf(stderr, "burst-node: give one of --imds (EC2), --gce-metadata (Compute Engine) and --azure-metadata (Azure)\n");
		return 2;
	}
	po.node = node;
	po.instance_id = instance;
	if ((imds && *imds) || (gce_md && *gce_md) || (az_md && *az_md)) {
		/* from the start: a notice may come while the node boots */
		wo.imds = imds && *imds ? imds : gce_md && *gce_md ? gce_md : az_md;
		wo.gce = gce_md && *gce_md;
		wo.azure = az_md && *az_md;
		wo.interval_s = (unsigned)interval;
		wo.agent = agent;
		wo.node = node;
		wo.instance = instance;
		wo.munge_socket = munge_socket;
		interrupt_watch(&wo);
	}
	/* the node's working files live beside its admission record */
	snprintf(dir, sizeof(dir), "%s", record);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	/* no admission record of an earlier instance survives this join */
	unlink(record);
	/*
	 * The report: the record, and a munge credential (the cluster's key, so
	 * only root on a node of this cluster can make it) over the record's
	 * digest, the one-time join token and the instance id. The record is
	 * made once; an agent that is not ready for this instance yet (it has
	 * not recorded the launch: a restart, a slow cloud API) says "retry",
	 * and the report is sent again with a fresh credential. The report goes
	 * only to a peer that proved it is the agent, and only its signed
	 * verdict is believed (agent_talk.h): anything else on the port (a
	 * process that took it while the agent was stopped) is said, and the
	 * agent asked again, until --join-timeout.
	 */
	{
		struct wire_join_request report = { .op = WIRE_JOIN_REPORT, .provenance_s = -1, .acceptance_s = -1 };
		json_object *rec = node_record(sysroot, &po, acceptance, dir, &report);
		char digest[65], *text = provenance_serialize(rec, false), why[1200];
		double give_up = mono() + (double)join_timeout;

		save_record(dir, rec);
		json_object_put(rec);
		sigv4_sha256_hex(text, strlen(text), digest);
		report.record = text;
		for (;;) {
			bool lost, sent, stop;
			int got = send_report(agent, node, instance, token, munge_socket, &report, digest, give_up, &ans,
					      &stop, &lost, &sent, why, sizeof(why));
			if (got < 0 && !stop && mono() < give_up) {
				if (lost && sent)
					/* the agent went away mid-report (a restart, a standby taking over) */
					fprintf(stderr, "burst-node: %s: the agent closed the connection without a verdict: sending the report again\n",
						node);
				else
					not_believed(node, agent, sent ? NOT_AGENTS : lost ? NO_HELLO_ANSWER : NO_PROOF, why,
						     give_up - mono());
				sleep(1);
				continue;
			}
			if (got < 0) {
				if (!stop)
					fprintf(stderr, "burst-node: %s: no verdict of the agent at %s within --join-timeout %ld s (the last answer: %s); slurmd is not started\n",
						node, agent, join_timeout, why);
				free(text);
				return 3;
			}
			if (ans.decision != WIRE_JOIN_RETRY || mono() > give_up)
				break;
			wire_join_answer_free(&ans);
			sleep(1);
		}
		free(text);
	}
	if (ans.decision != WIRE_JOIN_ADMIT) {
		fprintf(stderr, "burst-node: %s: rejected by the agent: %s; slurmd is not started\n", node,
			ans.reason ? ans.reason : "no reason given");
		wire_join_answer_free(&ans);
		return 1;
	}
	{
		char why[4096 + 256];
		if (!ans.has_record) {
			fprintf(stderr, "burst-node: %s: the agent admitted the node without an admission "
				"record; slurmd is not started (a bug of the agent: report it)\n", node);
			wire_join_answer_free(&ans);
			return 1;
		}
		if (wire_record_write(record, ans.record, ans.nrecord, why, sizeof(why)) < 0) {
			fprintf(stderr, "burst-node: %s: cannot write the admission record %s: %s; slurmd "
				"is not started\n", node, record, why);
			wire_join_answer_free(&ans);
			return 1;
		}
	}
	wait_to_start(node, &ans);
	wire_join_answer_free(&ans);
	setenv("BURST_ADMISSION", record, 1);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "burst-node: %s: cannot start %s: %s\n", node, argv[optind], strerror(errno));
	return 1;
}

/* the first directory of PATH (else /usr/sbin:/usr/bin) with an executable name */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH") && *getenv("PATH") ? getenv("PATH") : "/usr/sbin:/usr/bin";

	while (*path) {
		size_t n = strcspn(path, ":");
		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, path, name) < len && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -1;
}

/*
 * burst-node check: what join needs of this image, checked without an
 * agent (contrib/images/provision-node.sh ends with it): the plugstack.conf
 * of slurm.conf (or beside its path) must load the admission plugin, as
 * join requires; slurmd on the PATH; munge's key, only root's.
 * 0 when all is there; else 1, each problem said.
 */
static int node_check(int argc, char **argv)
{
	const char *sc = getenv("SLURM_CONF") && *getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
	const char *key = getenv("BURST_MUNGE_KEY") && *getenv("BURST_MUNGE_KEY") ? getenv("BURST_MUNGE_KEY")
										   : "/etc/munge/munge.key";
	char why[3000], slurmd[4096];
	struct stat st;
	int bad = 0;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: burst-node check (see burst-node(8))\n");
		return 2;
	}
	/* as join checks it: without slurm.conf (configless), the plugstack.conf beside its path */
	if (access(sc, R_OK) < 0)
		printf("burst-node check: note: no slurm.conf at %s (%s): fine for configless Slurm\n", sc, strerror(errno));
	if (plugstack_admission_problem(sc, BURST_SPANK_PLUGINDIR, why, sizeof(why))) {
		printf("burst-node check: %s\n", why);
		bad = 1;
	} else
		printf("burst-node check: ok: the plugstack.conf of %s loads the admission plugin %s\n", sc, ADMISSION_PLUGIN);
	if (find_program("slurmd", slurmd, sizeof(slurmd)) < 0) {
		printf("burst-node check: no slurmd on the PATH: install the cluster's Slurm release's (Debian: apt-get install slurmd)\n");
		bad = 1;
	} else
		printf("burst-node check: ok: slurmd %s\n", slurmd);
	if (stat(key, &st) < 0) {
		printf("burst-node check: munge key %s: %s: install the cluster's (mode 0400, owner munge)\n", key,
		       strerror(errno));
		bad = 1;
	} else if (st.st_mode & 077) {
		printf("burst-node check: munge key %s is mode %03o: munged refuses a key others may read: chmod 0400 it\n",
		       key, (unsigned)(st.st_mode & 0777));
		bad = 1;
	} else
		printf("burst-node check: ok: munge key %s\n", key);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("burst-node (slurm-burst) %s, built for Slurm %s\n", PACKAGE_VERSION, BURST_SLURM_VERSION);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return node_check(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "join"))
		return join(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "accept"))
		return accept_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "provenance"))
		return node_provenance(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "health"))
		return node_health(argc - 1, argv + 1);
	fprintf(stderr, "usage: burst-node join|accept|provenance|health|check ... | --version (see burst-node(8))\n");
	return 2;
}
