/*
 * agent_talk.c - burst-node's authenticated exchange with the agent
 * (agent_talk.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <munge.h>

#include "agent_talk.h"
#include "join_auth.h"
#include "strutil.h"

#define LINE_MAX_BYTES 65536

static int send_line(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return send(fd, "\n", 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* One line from the peer within timeout_s: its length; 0 when the peer
 * closed (or reset) before a byte; -1 on a timeout or error (errno). What
 * follows the newline is not read. */
static ssize_t read_line(int fd, char *buf, size_t cap, int timeout_s)
{
	struct timeval tv = { timeout_s, 0 };
	size_t n = 0;

	char *nl;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (n < cap - 1) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (r < 0 && errno == ECONNRESET && !n))
			break;
		if (r < 0)
			return -1;
		n += (size_t)r;
		if (memchr(buf + n - (size_t)r, '\n', (size_t)r))
			break;
	}
	buf[n] = '\0';
	if ((nl = strchr(buf, '\n')))
		*nl = '\0';
	return (ssize_t)strlen(buf) + (nl != NULL);
}

/* Decode cred with the node's munged: the payload (caller frees) and *uid,
 * or NULL with why. */
static char *decode(const struct agent_talk *t, const char *cred, uid_t *uid, char *why, size_t len)
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
	if (t->munge_socket)
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, t->munge_socket);
	e = munge_decode(cred, ctx, &pay, &plen, uid, &gid);
	if (e != EMUNGE_SUCCESS)
		snprintf(why, len, "its munge credential does not decode here (munge socket %s): %s",
			 t->munge_socket ? t->munge_socket : "default",
			 munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
	else {
		out = xmalloc((size_t)plen + 1);
		memcpy(out, pay, (size_t)plen);
		out[plen] = '\0';
	}
	free(pay);
	munge_ctx_destroy(ctx);
	return out;
}

enum talk_status agent_talk(int fd, const struct agent_talk *t, const char *request, char **answer,
			    bool *hello_ok, char *why, size_t len)
{
	struct join_hello h;
	struct join_binding b;
	char *line = xmalloc(LINE_MAX_BYTES), *hello = NULL, *cred = NULL, *payload = NULL, *text = NULL;
	enum talk_status st = TALK_UNTRUSTED;
	char sub[900];
	ssize_t n;
	uid_t uid = (uid_t)-1;

	*answer = NULL;
	*hello_ok = false;
	memset(&h, 0, sizeof(h));
	snprintf(h.node, sizeof(h.node), "%s", t->node);
	snprintf(h.instance, sizeof(h.instance), "%s", t->instance);
	if (join_nonce(h.nonce) < 0) {
		snprintf(why, len, "cannot draw a nonce: %s", strerror(errno));
		goto out;
	}
	hello = join_hello_line(&h);
	if (send_line(fd, hello) < 0) {
		snprintf(why, len, "cannot send the hello: %s", strerror(errno));
		st = errno == EPIPE || errno == ECONNRESET ? TALK_LOST : TALK_UNTRUSTED;
		goto out;
	}
	n = read_line(fd, line, LINE_MAX_BYTES, t->hello_timeout_s);
	if (n <= 0) {
		if (n == 0)
			st = TALK_LOST;
		snprintf(why, len, n == 0 ? "the connection closed before an answer to the hello" :
			 "no answer to the hello within %d s (%s)", t->hello_timeout_s, strerror(errno));
		goto out;
	}
	if (join_hello_answer_parse(line, &cred, sub, sizeof(sub)) < 0) {
		snprintf(why, len, "%s", sub);
		goto out;
	}
	payload = decode(t, cred, &uid, sub, sizeof(sub));
	if (!payload || join_hello_check(uid, 0, payload, &h, sub, sizeof(sub)) < 0) {
		snprintf(why, len, "its answer to the hello is not the agent's: %s", sub);
		goto out;
	}
	*hello_ok = true;
	free(cred);
	free(payload);
	cred = payload = NULL;
	if (send_line(fd, request) < 0) {
		snprintf(why, len, "cannot send the %s: %s", t->notice ? "notice" : "report", strerror(errno));
		st = TALK_LOST;
		goto out;
	}
	n = read_line(fd, line, LINE_MAX_BYTES, t->answer_timeout_s);
	if (n <= 0) {
		if (n == 0)
			st = TALK_LOST;
		snprintf(why, len, n == 0 ? "the connection closed without an answer" :
			 "no answer within %d s (%s)", t->answer_timeout_s, strerror(errno));
		goto out;
	}
	if (join_answer_parse(line, &text, &cred, sub, sizeof(sub)) < 0) {
		snprintf(why, len, "%s", sub);
		goto out;
	}
	payload = decode(t, cred, &uid, sub, sizeof(sub));
	b.node = t->node;
	b.instance = t->instance;
	b.nonce = h.nonce;
	b.digest = t->digest ? t->digest : "";
	b.token = t->token ? t->token : "";
	if (!payload || join_answer_check(uid, 0, payload, &b, t->notice, text, sub, sizeof(sub)) < 0) {
		snprintf(why, len, "its answer is not the agent's: %s", sub);
		goto out;
	}
	*answer = text;
	text = NULL;
	st = TALK_OK;
out:
	free(line);
	free(hello);
	free(cred);
	free(payload);
	free(text);
	return st;
}
