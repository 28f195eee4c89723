/*
 * join_verify.h - whether a node's join report may be decided on: the
 * checks that carry the security of admission (whose credential, which
 * record, which node, state, instance and token), as a pure function of
 * the report and what the agent holds for the node. No I/O: munge decodes
 * the credential before, the caller reads the node's record between
 * join_claims() and join_verify().
 */
#ifndef BURST_JOIN_VERIFY_H
#define BURST_JOIN_VERIFY_H

#include <stdbool.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "node_state.h"
#include "wire.h"

/* What a report says: its credential (decoded by munge) and its record. */
struct join_report {
	uid_t uid;               /* the credential's uid, as munge decoded it */
	const char *node;        /* the credential's payload: NULL where absent or not a string */
	const char *instance;
	const char *token;
	const char *digest;      /* sha256 hex of the record, as the node computed it */
	const char *record;      /* the record text */
};

/* What the agent holds for the node the credential names. */
struct join_expect {
	const char *node;
	enum node_state state;
	const char *token;       /* the join token issued for its attempt; NULL: none */
	bool token_used;
	const char *instance;    /* the instance it was launched as; NULL: not recorded */
	const char *admitted;    /* the digest of the report it was admitted on; NULL: none */
};

enum join_verdict {
	JOIN_VERIFIED,           /* go on to the node's admission policy */
	JOIN_RETRY,              /* launched, launch not recorded yet: the node asks again */
	JOIN_READMIT,            /* the report it was admitted on, sent again (its answer
				  * was lost: the agent died or stepped down meanwhile):
				  * answered as then, nothing decided again */
	JOIN_REFUSED,            /* nothing of the report is stored; reason says why */
};

struct join_result {
	enum join_verdict verdict;
	const char *reason;      /* static text: why refused, or retried; NULL if verified */
	char digest[65];         /* sha256 hex of the record text */
	json_object *record;     /* the record parsed, when verified (the caller puts it); else NULL */
};

/*
 * The credential payload's claims (wire.h's struct wire_join_claim) into
 * rep's pointers, which live in *owner (wire_join_claim_free it; a claim
 * absent, or a payload that is not JSON: NULL).
 */
void join_claims(const char *payload, struct join_report *rep, struct wire_join_claim *owner);

/*
 * The verdict on rep for a node the agent holds as e (NULL: no such node),
 * from a credential that must be want_uid's. The refusals, in order: not
 * want_uid's credential, malformed payload, record not matching the
 * digest, record not a JSON object, unknown node, a credential for another
 * node, node not booting (launching with the right token: JOIN_RETRY;
 * admitted, from its instance, on this very record: JOIN_READMIT), wrong
 * instance, invalid or used token.
 */
enum join_verdict join_verify(const struct join_report *rep, uid_t want_uid, const struct join_expect *e,
			      struct join_result *res);

/*
 * The node-local acceptance results in a verified record (its "acceptance"
 * section): NULL if all passed (or none were run), else why not in why
 * (len bytes), naming each failed test and its reason.
 */
const char *join_acceptance(json_object *rec, char *why, size_t len);

/*
 * A spot interruption notice from a node (op "notice", burst-node's
 * interruption watch): its credential's claims {"node","instance",
 * "action","time"}, NULL where absent or not a string.
 */
struct notice_report {
	uid_t uid;
	const char *node, *instance, *action, *time;
};

/* The claims of payload into rep (they live in *owner: wire_notice_claim_free it). */
void notice_claims(const char *payload, struct notice_report *rep, struct wire_notice_claim *owner);

/*
 * NULL when the notice may be acted on: want_uid's credential, every claim
 * there, an action EC2 gives (terminate, stop, hibernate) and a time
 * YYYY-MM-DDTHH:MM:SSZ, for a node the agent holds (e, NULL: none) booting
 * or admitted as that very instance. Else why not (static text).
 */
const char *notice_verify(const struct notice_report *rep, uid_t want_uid, const struct join_expect *e);

#endif
