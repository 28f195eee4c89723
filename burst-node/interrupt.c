/*
 * interrupt.c - burst-node's watch on the spot interruption notice
 * (node_interrupt.h).
 *
 * EC2 tells an instance about two minutes ahead that it will be
 * terminated, stopped or hibernated: its metadata's spot/instance-action
 * answers 404 until then, afterwards {"action": ..., "time": ...}
 * (lib/cloud/imds.h reads it). The watch asks every few seconds; on a notice it
 * sends the agent, on the join port, {"op":"notice","cred":MUNGE} whose
 * credential (root's, the cluster's key) carries {"node","instance",
 * "action","time"}, and the agent drains the node and requeues its job
 * before the instance goes. As for the join report, the agent first proves
 * who it is and signs its answer (agent_talk.h), {"ok":true} or
 * {"ok":false,"reason":...}; without an answer of the agent's (none, or one
 * that is not signed: a process on its port while it was stopped) the
 * notice is sent again at the next poll, until the instance is gone.
 * Compute Engine says a Spot VM's preemption about 30 s ahead: its
 * metadata server's instance/preempted answers FALSE, then TRUE (a notice:
 * terminate, 30 s from when it was read). Azure says a Spot VM's eviction
 * at least 30 s ahead through its metadata service's Scheduled Events: an
 * event of EventType Preempt naming the VM (a notice: terminate, at the
 * event's NotBefore).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <munge.h>

#include "agent_talk.h"
#include "imds.h"
#include "node_interrupt.h"
#include "wire.h"

#define IMDS_TIMEOUT_MS 2000       /* each metadata request: connection and answer */
#define AGENT_CONNECT_MS 5000
#define AGENT_REPLY_S 10
#define SAY_AGAIN_S 600            /* the same problem is said again after this long */

int agent_sockaddr(const char *spec, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	char *end;
	long port;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static const struct watch_opts *W;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	char when[32];
	time_t t = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	fprintf(stderr, "burst-node: %s: interruption watch (%s): ", W->node, when);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A problem: said when it differs from the last one, or ten minutes on. */
static void problem(const char *msg)
{
	static char last[1200];
	static time_t said;
	time_t t = time(NULL);

	if (!strcmp(last, msg) && t - said < SAY_AGAIN_S)
		return;
	snprintf(last, sizeof(last), "%s", msg);
	said = t;
	say("%s; ignored, asking again every %u s", msg, W->interval_s);
}

/* A bounded connect to the agent: the socket, or -1 with errno. */
static int agent_connect(void)
{
	struct sockaddr_in sa;
	struct pollfd p;
	int fd, e = 0;
	socklen_t el = sizeof(e);

	if (agent_sockaddr(W->agent, &sa) < 0) {
		errno = EINVAL;
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		goto fail;
	p.fd = fd;
	p.events = POLLOUT;
	if (poll(&p, 1, AGENT_CONNECT_MS) != 1) {
		errno = ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		errno = e ? e : errno;
		goto fail;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

/*
 * Tell the agent: 1 it took the notice, 0 it refused it (said; sending it
 * again would not help), -1 no answer (said; the next poll sends it again).
 */
static int report(const struct imds_notice *n)
{
	struct wire_notice_claim claim = { (char *)W->node, (char *)W->instance, (char *)n->action_name,
					   (char *)n->time };
	struct wire_join_request req = { .op = WIRE_JOIN_NOTICE, .provenance_s = -1, .acceptance_s = -1 };
	struct wire_notice_answer ans = { false, NULL };
	munge_ctx_t ctx = munge_ctx_create();
	char *cred = NULL, *s = NULL, *line = NULL, *text = NULL, msg[2400], why[2000];
	burst_err_t err;
	struct timeval tv = { AGENT_REPLY_S, 0 };
	struct agent_talk t = { 0 };
	enum talk_status st;
	bool sent;
	int fd = -1, rc = -1;

	s = wire_notice_claim_encode(&claim);
	/* only root (the agent) may decode it */
	if (!ctx || (W->munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, W->munge_socket) != EMUNGE_SUCCESS) ||
	    munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)0) != EMUNGE_SUCCESS ||
	    munge_encode(&cred, ctx, s, (int)strlen(s)) != EMUNGE_SUCCESS) {
		snprintf(msg, sizeof(msg), "cannot make a munge credential for the notice (socket %s): %s; is munged running?",
			 W->munge_socket ? W->munge_socket : "default", ctx ? munge_ctx_strerror(ctx) : "out of memory");
		problem(msg);
		goto out;
	}
	req.cred = cred;
	line = wire_join_request_encode(&req);
	fd = agent_connect();
	if (fd < 0) {
		snprintf(msg, sizeof(msg), "cannot reach the agent at %s to report the notice: %s", W->agent, strerror(errno));
		problem(msg);
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	t.agent = W->agent;
	t.node = W->node;
	t.instance = W->instance;
	t.munge_socket = W->munge_socket;
	t.digest = t.token = "";
	t.notice = true;
	t.hello_timeout_s = t.answer_timeout_s = AGENT_REPLY_S;
	st = agent_talk(fd, &t, line, &text, &sent, why, sizeof(why));
	if (st != TALK_OK) {
		/* not the agent's word (a process on its port while it was
		 * stopped; anyone on the path): the notice stands, sent again */
		snprintf(msg, sizeof(msg), "%s %s: %s", st == TALK_LOST ? "no answer from the agent at" : "NOT BELIEVED: the peer on",
			 W->agent, why);
		problem(msg);
		goto out;
	}
	if (wire_notice_answer_decode(text, &ans, &err) < 0) {
		/* signed as a verdict on a notice (agent_talk.h): this is not reached */
		snprintf(msg, sizeof(msg), "the agent's answer to the notice: %.300s", err.msg);
		problem(msg);
	} else if (ans.ok) {
		say("the agent took the notice: it drains the node and requeues its job");
		rc = 1;
	} else {
		say("the agent refused the notice: %.800s", ans.reason ? ans.reason : "no reason given");
		rc = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	free(cred);
	free(s);
	free(line);
	free(text);
	wire_notice_answer_free(&ans);
	munge_ctx_destroy(ctx);
	return rc;
}

static void watch(pid_t parent)
{
	struct imds *m;
	burst_err_t err;
	bool noticed = false;

	const char *path = W->gce ? GCE_PREEMPTED_PATH : W->azure ? AZURE_EVENTS_PATH : IMDS_NOTICE_PATH;
	size_t max = W->azure ? AZURE_EVENTS_MAX : IMDS_NOTICE_MAX;

	m = W->gce ? imds_open_gce(W->imds, IMDS_TIMEOUT_MS, &err) :
	    W->azure ? imds_open_azure(W->imds, IMDS_TIMEOUT_MS, &err) : imds_open(W->imds, IMDS_TIMEOUT_MS, &err);
	if (!m) {
		say("%s: not watching", err.msg);
		_exit(1);
	}
	say("watching %s%s every %u s", imds_base(m), path, W->interval_s);
	for (;;) {
		struct timespec ts = { (time_t)W->interval_s, 0 };
		struct imds_notice n;
		char why[400], msg[1200], *body = NULL;
		size_t len = 0;
		long status = 0;
		int rc;

		/* burst-node (or the slurmd it became) ended: so does the watch */
		if (getppid() != parent)
			_exit(0);
		if (imds_get(m, path, max, &status, &body, &len, &err) < 0)
			problem(err.msg);
		else if ((rc = W->gce ? imds_gce_preempted_parse(status, body, len, time(NULL), &n, why, sizeof(why)) :
			  W->azure ? imds_azure_events_parse(status, body, len, W->instance, time(NULL), &n, why, sizeof(why)) :
			  imds_notice_parse(status, body, len, &n, why, sizeof(why))) < 0) {
			snprintf(msg, sizeof(msg), "%s%s: not a notice: %s", imds_base(m), path, why);
			problem(msg);
		} else if (rc == 1) {
			if (!noticed)
				say("interruption notice: %s at %s (%lld s from now): telling the agent at %s",
				    n.action_name, n.time, (long long)(n.at - time(NULL)), W->agent);
			noticed = true;
			rc = report(&n);
			if (rc >= 0) {
				free(body);
				imds_close(m);
				_exit(0);
			}
		}
		free(body);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

pid_t interrupt_watch(const struct watch_opts *o)
{
	pid_t parent = getpid(), pid;

	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "burst-node: %s: cannot start the interruption watch: %s\n", o->node, strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;
	W = o;
	/* it ends with burst-node, and with the slurmd burst-node becomes */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(0);
	watch(parent);
	_exit(0);
}
