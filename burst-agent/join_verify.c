/*
 * join_verify.c - the join checks as a pure function (join_verify.h).
 */
#include <stdio.h>
#include <string.h>

#include "imds.h"
#include "join_verify.h"
#include "sigv4.h"

void join_claims(const char *payload, struct join_report *rep, struct wire_join_claim *owner)
{
	wire_join_claim_decode(payload, owner);
	rep->node = owner->node;
	rep->instance = owner->instance;
	rep->token = owner->token;
	rep->digest = owner->digest;
}

static enum join_verdict refuse(struct join_result *res, const char *why)
{
	if (res->record)
		json_object_put(res->record);
	res->record = NULL;
	res->reason = why;
	return res->verdict = JOIN_REFUSED;
}

enum join_verdict join_verify(const struct join_report *rep, uid_t want_uid, const struct join_expect *e,
			      struct join_result *res)
{
	const char *text = rep->record ? rep->record : "";

	memset(res, 0, sizeof(*res));
	sigv4_sha256_hex(text, strlen(text), res->digest);
	if (rep->uid != want_uid)
		return refuse(res, want_uid == 0 ? "the credential is not root's" : "the credential is not of the expected user");
	if (!rep->node || !rep->instance || !rep->token || !rep->digest || !rep->record)
		return refuse(res, "malformed credential payload");
	if (strcmp(rep->digest, res->digest))
		return refuse(res, "the record does not match the credential's digest");
	res->record = json_tokener_parse(text);
	if (!res->record || !json_object_is_type(res->record, json_type_object))
		return refuse(res, "the record is not a JSON object");
	if (!e)
		return refuse(res, "unknown node");
	if (!e->node || strcmp(e->node, rep->node))
		return refuse(res, "the credential is for another node");
	if (e->state == NS_LAUNCHING && e->token && e->token[0] && !e->token_used &&
	    !strcmp(e->token, rep->token)) {
		/* launched, but the launch is not recorded yet (a restart, a slow
		 * API): the node asks again in a moment */
		json_object_put(res->record);
		res->record = NULL;
		res->reason = "not ready for this instance yet";
		return res->verdict = JOIN_RETRY;
	}
	if (e->state == NS_ADMITTED && e->admitted && !strcmp(e->admitted, res->digest) &&
	    e->instance && !strcmp(e->instance, rep->instance)) {
		/*
		 * The report this node was admitted on, from its instance: its
		 * token is spent (dropped at admission), but only that instance
		 * made this record. Its answer was lost (the agent that admitted
		 * it died before answering; a standby took over): answered again
		 */
		json_object_put(res->record);
		res->record = NULL;
		res->reason = NULL;
		return res->verdict = JOIN_READMIT;
	}
	if (e->state != NS_BOOTING)
		return refuse(res, "node is not booting");
	if (!e->instance || strcmp(e->instance, rep->instance))
		return refuse(res, "wrong instance for this node");
	if (e->token_used || !e->token || !e->token[0] || strcmp(e->token, rep->token))
		return refuse(res, "invalid or used join token");
	res->reason = NULL;
	return res->verdict = JOIN_VERIFIED;
}

/*
 * The node-local acceptance results in the record: NULL if all passed (or
 * none were run), else why not, naming each failed test and its reason.
 */
const char *join_acceptance(json_object *rec, char *why, size_t len)
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

void notice_claims(const char *payload, struct notice_report *rep, struct wire_notice_claim *owner)
{
	wire_notice_claim_decode(payload, owner);
	rep->node = owner->node;
	rep->instance = owner->instance;
	rep->action = owner->action;
	rep->time = owner->time;
}

const char *notice_verify(const struct notice_report *rep, uid_t want_uid, const struct join_expect *e)
{
	enum imds_action a;
	time_t at;

	if (rep->uid != want_uid)
		return want_uid == 0 ? "the credential is not root's" : "the credential is not of the expected user";
	if (!rep->node || !rep->instance || !rep->action || !rep->time)
		return "malformed credential payload";
	if (!imds_action_from_name(rep->action, &a))
		return "unknown action (terminate, stop and hibernate are known)";
	if (!imds_notice_time(rep->time, &at))
		return "the time is not YYYY-MM-DDTHH:MM:SSZ";
	if (!e)
		return "unknown node";
	if (!e->node || strcmp(e->node, rep->node))
		return "the credential is for another node";
	if (e->state != NS_BOOTING && e->state != NS_ADMITTED)
		return "node is neither booting nor admitted";
	if (!e->instance || strcmp(e->instance, rep->instance))
		return "wrong instance for this node";
	return NULL;
}
