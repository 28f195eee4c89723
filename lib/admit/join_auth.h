/*
 * join_auth.h - the authenticated exchange on the agent's join port, as
 * pure functions of its lines: what burst-node and the agent each send,
 * what each signs, and the checks burst-node makes before it believes a
 * word. No I/O: munge makes and decodes the credentials around them.
 *
 * Anyone can answer on the join port: a local user who binds it while the
 * agent is stopped, anyone on the network path. So a node (burst-node join,
 * and its spot interruption watch) first proves who it talks to:
 *
 *   node:  {"op":"hello","v":1,"node":N,"instance":I,"nonce":X}
 *   agent: {"hello":"burst-agent","v":1,"cred":C}
 *          C a munge credential of root's (the cluster's key: only root on
 *          a host of the cluster can make one) over
 *          {"what":"burst-agent-hello","v":1,"node":N,"instance":I,"nonce":X}
 *
 * X is 16 random bytes (hex) the node drew for this connection; the node
 * decodes C with its own munged and sends its report (its munge credential
 * and provenance record) or its notice only when C is root's and names N,
 * I and X. The agent's answer to that request is signed too:
 *
 *   agent: {"answer":TEXT,"cred":C}
 *          TEXT the answer as it always was ({"admit":true,"record":...},
 *          {"admit":false,"retry":true,...}, {"ok":true} to a notice), C
 *          root's credential over {"what":"burst-agent-answer","v":1,
 *          "node","instance","nonce","digest","token_sha256","verdict",
 *          "answer_sha256"}
 *
 * so that an answer is bound to the node, its instance, this connection's
 * nonce, the report's record (digest) and join token (its SHA-256: the
 * credential's payload is readable by anyone who can decode it), and says
 * which verdict it carries. A node that sends no hello (a burst-node older
 * than the agent) is answered the old way, unsigned.
 */
#ifndef BURST_JOIN_AUTH_H
#define BURST_JOIN_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <json-c/json.h>

#define JOIN_AUTH_VERSION 1
#define JOIN_NONCE_BYTES 16
#define JOIN_HELLO_MAX 1024         /* a hello line, at most (bytes) */
#define JOIN_NAME_MAX 127           /* a node name or instance id in a hello */

/* A node's hello, as the agent parsed it (or as the node sent it). */
struct join_hello {
	char node[JOIN_NAME_MAX + 1];
	char instance[JOIN_NAME_MAX + 1];
	char nonce[2 * JOIN_NONCE_BYTES + 1];
};

/* What an answer is bound to ("" where there is none: a notice has no
 * digest nor token; a report the agent could not read, no token). */
struct join_binding {
	const char *node, *instance, *nonce;
	const char *digest;      /* sha256 hex of the report's record */
	const char *token;       /* the report's join token (its claim) */
};

/* The verdicts an answer can carry: to a report, and to a notice. */
#define JOIN_VERDICT_ADMIT "admit"
#define JOIN_VERDICT_REJECT "reject"
#define JOIN_VERDICT_RETRY "retry"
#define JOIN_VERDICT_TAKEN "taken"
#define JOIN_VERDICT_REFUSED "refused"

/* ---- burst-node ---- */

/* nonce (2 * JOIN_NONCE_BYTES + 1 bytes) from the kernel's random bytes: 0,
 * or -1 with errno. */
int join_nonce(char nonce[2 * JOIN_NONCE_BYTES + 1]);

/* The hello line (no newline; caller frees). */
char *join_hello_line(const struct join_hello *h);

/*
 * The agent's answer to a hello: its credential (caller frees), 0; -1 with
 * why when the line is not a signed hello answer (what the peer said
 * instead is quoted, its control characters written out).
 */
int join_hello_answer_parse(const char *line, char **cred, char *why, size_t len);

/*
 * The hello credential, as munge decoded it (its uid and payload): 0 when
 * it is want_uid's and names h's node, instance and nonce; -1 with why.
 */
int join_hello_check(uid_t uid, uid_t want_uid, const char *payload, const struct join_hello *h, char *why,
		     size_t len);

/*
 * The agent's answer to a report or notice: its text and credential
 * (caller frees both), 0; -1 with why (an unsigned answer quoted).
 */
int join_answer_parse(const char *line, char **answer, char **cred, char *why, size_t len);

/*
 * The answer's credential as munge decoded it, checked: want_uid's; for
 * the very node, instance, nonce (b); for a notice's answer (notice) or a
 * report's; the answer's SHA-256 as signed; the verdict signed is the
 * answer's (wire_answer_verdict). An admission or retry must name b's
 * digest and token; a rejection (or a notice's) may leave them "" (the
 * agent could not read the report) but must not name others. 0 when the
 * answer may be believed (decode it with wire.h), or -1 with why.
 */
int join_answer_check(uid_t uid, uid_t want_uid, const char *payload, const struct join_binding *b,
		      bool notice, const char *answer, char *why, size_t len);

/* ---- the agent ---- */

/*
 * A line that opened a join connection: 1 a hello (*h filled), 0 not a
 * hello (a report or notice of a node that sends none), -1 a malformed
 * hello (why).
 */
int join_hello_parse(const char *line, size_t n, struct join_hello *h, char *why, size_t len);

/* The payload the agent signs for a hello (caller frees). */
char *join_hello_payload(const struct join_hello *h);

/* The agent's answer to a malformed hello, unsigned (no newline; caller
 * frees): {"hello":"refused","reason":why}. */
char *join_hello_refusal(const char *why);

/* The agent's answer line to a hello (no newline; caller frees). */
char *join_hello_answer(const char *cred);

/* The payload the agent signs for an answer (its text) bound to b; NULL
 * when the answer carries no verdict. Caller frees. */
char *join_answer_payload(const struct join_binding *b, const char *answer);

/* The signed answer line (no newline; caller frees). */
char *join_answer_line(const char *answer, const char *cred);

#endif
