/*
 * agent_talk.h - burst-node's side of the authenticated exchange with the
 * agent on its join port (lib/admit/join_auth.h): a hello, the agent's proof of
 * who it is (a munge credential of root's over this connection's nonce),
 * and only then the request (a join report, a spot interruption notice),
 * whose answer is believed only under the agent's credential bound to it.
 */
#ifndef BURST_NODE_AGENT_TALK_H
#define BURST_NODE_AGENT_TALK_H

#include <stdbool.h>
#include <stddef.h>

struct agent_talk {
	const char *agent;         /* ADDR:PORT, for what is said */
	const char *node, *instance;
	const char *munge_socket;  /* NULL: munge's default */
	const char *digest, *token; /* a report's ("" for a notice) */
	bool notice;               /* the request is a notice, not a report */
	int hello_timeout_s;       /* for the agent's hello answer */
	int answer_timeout_s;      /* for its answer to the request */
};

enum talk_status {
	TALK_OK,                   /* *answer: the agent's text, verified (wire.h decodes it) */
	TALK_LOST,                 /* the connection closed with no byte of an answer
				    * (the agent stopped, a standby took over) */
	TALK_UNTRUSTED,            /* an answer that is not the agent's, or none
				    * in time: why; hello says whether the
				    * request was sent */
};

/*
 * On fd, connected to the agent's join port: the hello, the agent's proof,
 * then request (one line, no newline), then the answer. *hello_ok tells
 * whether the agent proved itself (and so whether request was sent).
 */
enum talk_status agent_talk(int fd, const struct agent_talk *t, const char *request, char **answer,
			    bool *hello_ok, char *why, size_t len);

#endif
