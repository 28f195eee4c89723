/*
 * test_join_verify.c - the join checks (burst-agent/join_verify.c) on
 * their own: a report verified for the node it was issued for, and each
 * forged, replayed, misdirected or malformed report refused with its
 * reason, before anything of it reaches the database.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "../../burst-agent/join_verify.h"
#include "sigv4.h"
#include "tap.h"

#define RECORD "{\"kernel\":\"6.1.0\",\"cpus\":4}"
#define TOKEN "0123456789abcdef0123456789abcdef"

static char good_digest[65];

/* A report as burst-node sends it for burst-3, instance i-0abc, TOKEN. */
static struct join_report report(void)
{
	struct join_report r;

	r.uid = 0;
	r.node = "burst-3";
	r.instance = "i-0abc";
	r.token = TOKEN;
	r.digest = good_digest;
	r.record = RECORD;
	return r;
}

/* What the agent holds for burst-3: booting as i-0abc with TOKEN unused. */
static struct join_expect expect(void)
{
	struct join_expect e;

	e.node = "burst-3";
	e.state = NS_BOOTING;
	e.token = TOKEN;
	e.token_used = false;
	e.instance = "i-0abc";
	e.admitted = NULL;
	return e;
}

/* The verdict on rep for e; res->record is put here. */
static enum join_verdict verdict(const struct join_report *rep, const struct join_expect *e, const char **reason)
{
	struct join_result res;
	enum join_verdict v = join_verify(rep, 0, e, &res);

	*reason = res.reason;
	if (v != JOIN_VERIFIED && res.record)
		*reason = "BUG: a record handed back with a refusal";
	json_object_put(res.record);
	return v;
}

#define REFUSED(rep, e, want, name) do { \
	const char *why_ = NULL; \
	enum join_verdict v_ = verdict(rep, e, &why_); \
	ok(v_ == JOIN_REFUSED, "%s: refused", name); \
	is_str(why_, want, "%s: the reason", name); \
} while (0)

int main(void)
{
	struct join_report rep;
	struct join_expect e;
	struct join_result res;
	struct wire_join_claim owner;
	json_object *v;
	const char *why;
	char other_digest[65];

	sigv4_sha256_hex(RECORD, strlen(RECORD), good_digest);

	/* the report the node was issued for passes */
	rep = report();
	e = expect();
	ok(join_verify(&rep, 0, &e, &res) == JOIN_VERIFIED && res.verdict == JOIN_VERIFIED && !res.reason,
	   "a report from the instance its token was issued for is verified");
	is_str(res.digest, good_digest, "the verdict carries the record's digest");
	ok(res.record && json_object_object_get_ex(res.record, "cpus", &v) && json_object_get_int(v) == 4,
	   "and the record, parsed");
	json_object_put(res.record);

	/* whose credential */
	rep = report();
	rep.uid = 65534;
	REFUSED(&rep, &e, "the credential is not root's", "a credential of uid 65534 (a job on a burst node)");
	rep.uid = 1000;
	REFUSED(&rep, &e, "the credential is not root's", "a credential of uid 1000");

	/* malformed payloads: each claim is needed */
	rep = report(); rep.node = NULL;
	REFUSED(&rep, &e, "malformed credential payload", "no node in the payload");
	rep = report(); rep.instance = NULL;
	REFUSED(&rep, &e, "malformed credential payload", "no instance in the payload");
	rep = report(); rep.token = NULL;
	REFUSED(&rep, &e, "malformed credential payload", "no token in the payload");
	rep = report(); rep.digest = NULL;
	REFUSED(&rep, &e, "malformed credential payload", "no digest in the payload");
	rep = report(); rep.record = NULL;
	REFUSED(&rep, &e, "malformed credential payload", "no record");

	/* the record is the one the credential vouches for */
	rep = report();
	rep.record = "{\"kernel\":\"6.1.0\",\"cpus\":400}";
	REFUSED(&rep, &e, "the record does not match the credential's digest", "a record changed after it was signed");
	sigv4_sha256_hex("other", 5, other_digest);
	rep = report();
	rep.digest = other_digest;
	REFUSED(&rep, &e, "the record does not match the credential's digest", "a digest of something else");
	rep = report();
	rep.digest = "";
	REFUSED(&rep, &e, "the record does not match the credential's digest", "an empty digest");
	{
		static const char arr[] = "[1,2]", bad[] = "{not json";
		char d1[65], d2[65];
		sigv4_sha256_hex(arr, strlen(arr), d1);
		sigv4_sha256_hex(bad, strlen(bad), d2);
		rep = report(); rep.record = arr; rep.digest = d1;
		REFUSED(&rep, &e, "the record is not a JSON object", "a signed record that is an array");
		rep = report(); rep.record = bad; rep.digest = d2;
		REFUSED(&rep, &e, "the record is not a JSON object", "a signed record that is not JSON");
	}

	/* which node */
	rep = report();
	REFUSED(&rep, NULL, "unknown node", "a node the agent does not hold");
	e = expect(); e.node = "burst-4";
	REFUSED(&rep, &e, "the credential is for another node", "a credential for burst-3 held against burst-4");
	e = expect(); e.node = NULL;
	REFUSED(&rep, &e, "the credential is for another node", "a record without a node name");

	/* which state */
	{
		int i;
		for (i = 0; i < NS_COUNT; i++) {
			char name[96];
			if (i == NS_BOOTING || i == NS_LAUNCHING)
				continue;
			e = expect();
			e.state = (enum node_state)i;
			snprintf(name, sizeof(name), "a report for a node %s", node_state_name(e.state));
			REFUSED(&rep, &e, "node is not booting", name);
		}
	}
	e = expect(); e.state = NS_LAUNCHING;
	why = NULL;
	ok(verdict(&rep, &e, &why) == JOIN_RETRY, "launching, with its unused token: asked to retry");
	ok(why && strstr(why, "not ready"), "... saying it is not ready yet");
	e = expect(); e.state = NS_LAUNCHING; e.token = "ffffffffffffffffffffffffffffffff";
	REFUSED(&rep, &e, "node is not booting", "launching, with a forged token: refused, not retried");
	e = expect(); e.state = NS_LAUNCHING; e.token_used = true;
	REFUSED(&rep, &e, "node is not booting", "launching, with a used token: refused, not retried");
	e = expect(); e.state = NS_LAUNCHING; e.token = NULL;
	REFUSED(&rep, &e, "node is not booting", "launching, with no token issued: refused, not retried");

	/* which instance */
	e = expect(); e.instance = "i-0def";
	REFUSED(&rep, &e, "wrong instance for this node", "a report from another instance");
	e = expect(); e.instance = NULL;
	REFUSED(&rep, &e, "wrong instance for this node", "a report before the instance is recorded");
	rep = report(); rep.instance = "i-0ab";
	e = expect();
	REFUSED(&rep, &e, "wrong instance for this node", "an instance id that is a prefix of the right one");

	/* which token */
	rep = report(); rep.token = "ffffffffffffffffffffffffffffffff";
	REFUSED(&rep, &e, "invalid or used join token", "a forged token");
	rep = report(); rep.token = "";
	REFUSED(&rep, &e, "invalid or used join token", "an empty token");
	rep = report();
	e = expect(); e.token_used = true;
	REFUSED(&rep, &e, "invalid or used join token", "a replayed token (marked used)");
	e = expect(); e.token_used = true; e.token = NULL;
	REFUSED(&rep, &e, "invalid or used join token", "a replayed token (dropped after its use)");
	e = expect(); e.token = NULL;
	REFUSED(&rep, &e, "invalid or used join token", "no token issued");
	e = expect(); e.token = "";
	rep.token = "";
	REFUSED(&rep, &e, "invalid or used join token", "an empty token matching an empty one");
	rep = report();
	e = expect(); e.token = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	REFUSED(&rep, &e, "invalid or used join token", "the token of an earlier attempt");

	/*
	 * Two instances of one launch batch: burst-3 as i-0abc with TOKEN and
	 * burst-4 as i-0def with TOKEN4. Each instance holds its own token
	 * only (doc/aws.md, "Join tokens"), but even one that learnt the
	 * other's cannot join with it: not as itself, not as the other node,
	 * not claiming the other's instance id.
	 */
	{
		static const char token4[] = "fedcba9876543210fedcba9876543210";
		struct join_expect e4 = expect();

		e4.node = "burst-4";
		e4.instance = "i-0def";
		e4.token = token4;
		rep = report(); rep.token = token4;
		e = expect();
		REFUSED(&rep, &e, "invalid or used join token", "burst-3's instance with burst-4's token, as burst-3");
		rep = report(); rep.node = "burst-4"; rep.token = token4;
		REFUSED(&rep, &e4, "wrong instance for this node", "burst-3's instance with burst-4's token, as burst-4");
		rep = report(); rep.node = "burst-4";
		REFUSED(&rep, &e4, "wrong instance for this node", "burst-3's instance with its own token, as burst-4");
		rep = report(); rep.node = "burst-4"; rep.instance = "i-0def";
		REFUSED(&rep, &e4, "invalid or used join token",
			"burst-3's own token, claiming burst-4's instance id, as burst-4");
		rep = report(); rep.node = "burst-4"; rep.instance = "i-0def"; rep.token = token4;
		ok(verdict(&rep, &e4, &why) == JOIN_VERIFIED, "burst-4's own report, its own token: verified");
		e4.token_used = true;
		REFUSED(&rep, &e4, "invalid or used join token", "... and not a second time");
	}

	/*
	 * The report a node was admitted on, sent again because its answer was
	 * lost (the agent that admitted it died before answering; the standby
	 * took over): its token is spent, but it is answered again, from its
	 * instance and on that very record only.
	 */
	rep = report();
	e = expect(); e.state = NS_ADMITTED; e.token = NULL; e.token_used = true; e.admitted = good_digest;
	ok(verdict(&rep, &e, &why) == JOIN_READMIT && !why,
	   "admitted on this report, sent again from its instance: answered again");
	rep = report(); rep.instance = "i-0def";
	REFUSED(&rep, &e, "node is not booting", "admitted on this report, sent again from another instance");
	rep = report(); rep.record = "{\"kernel\":\"6.1.0\",\"cpus\":8}";
	sigv4_sha256_hex(rep.record, strlen(rep.record), other_digest);
	rep.digest = other_digest;
	REFUSED(&rep, &e, "node is not booting", "admitted, another record from its instance");
	rep = report();
	e.admitted = NULL;
	REFUSED(&rep, &e, "node is not booting", "admitted, no record of what it was admitted on");
	e = expect(); e.admitted = good_digest;
	ok(verdict(&rep, &e, &why) == JOIN_VERIFIED, "booting: verified as usual, whatever it was admitted on before");

	/* the order: a report that is wrong in many ways says its first fault */
	rep = report(); rep.uid = 1000; rep.token = "x";
	e = expect(); e.state = NS_ADMITTED;
	REFUSED(&rep, &e, "the credential is not root's", "not root's, wrong token, not booting: the uid first");

	/* the payload's claims */
	join_claims("{\"node\":\"burst-3\",\"instance\":\"i-0abc\",\"token\":\"" TOKEN "\",\"digest\":\"d\"}", &rep, &owner);
	ok(rep.node && !strcmp(rep.node, "burst-3") && rep.instance && !strcmp(rep.instance, "i-0abc") &&
	   rep.token && !strcmp(rep.token, TOKEN) && rep.digest && !strcmp(rep.digest, "d"),
	   "the payload's four claims are read");
	wire_join_claim_free(&owner);
	join_claims("{\"node\":3,\"instance\":[\"i-0abc\"],\"token\":null}", &rep, &owner);
	ok(!rep.node && !rep.instance && !rep.token && !rep.digest, "claims that are not strings are absent");
	wire_join_claim_free(&owner);
	join_claims("not json", &rep, &owner);
	ok(!owner.node && !owner.token && !rep.node && !rep.token, "a payload that is not JSON claims nothing");
	wire_join_claim_free(&owner);
	rep.uid = 0;
	rep.record = RECORD;
	e = expect();
	REFUSED(&rep, &e, "malformed credential payload", "... and is refused as malformed");
	/* ---- spot interruption notices (op "notice") ---- */
	{
		struct notice_report nr, good = { 0, "burst-3", "i-0abc", "terminate", "2026-11-27T17:00:00Z" };
		struct wire_notice_claim nowner;
		const char *st = "{\"node\":\"burst-3\",\"instance\":\"i-0abc\",\"action\":\"stop\",\"time\":\"2026-11-27T17:00:00Z\"}";

		e = expect();
		ok(notice_verify(&good, 0, &e) == NULL, "a notice from the booting node's own instance is taken");
		e.state = NS_ADMITTED;
		e.token = NULL;
		e.token_used = true;
		ok(notice_verify(&good, 0, &e) == NULL, "... and from the admitted node's (its token used and gone)");
		nr = good;
		nr.uid = 1000;
		is_str(notice_verify(&nr, 0, &e), "the credential is not root's", "a notice in a user's credential: refused");
		nr = good;
		nr.time = NULL;
		is_str(notice_verify(&nr, 0, &e), "malformed credential payload", "no time: refused");
		nr = good;
		nr.action = "reboot";
		is_str(notice_verify(&nr, 0, &e), "unknown action (terminate, stop and hibernate are known)",
		       "an unknown action: refused");
		nr = good;
		nr.time = "2026-11-27 17:00";
		is_str(notice_verify(&nr, 0, &e), "the time is not YYYY-MM-DDTHH:MM:SSZ", "a bad time: refused");
		is_str(notice_verify(&good, 0, NULL), "unknown node", "a node the agent does not have: refused");
		nr = good;
		nr.node = "burst-4";
		is_str(notice_verify(&nr, 0, &e), "the credential is for another node", "a notice for another node: refused");
		nr = good;
		nr.instance = "i-0old";
		is_str(notice_verify(&nr, 0, &e), "wrong instance for this node",
		       "a notice from an earlier instance of the node: refused");
		e.state = NS_TERMINATING;
		is_str(notice_verify(&good, 0, &e), "node is neither booting nor admitted", "a node being terminated: refused");
		e.state = NS_ADMITTED;
		e.instance = NULL;
		is_str(notice_verify(&good, 0, &e), "wrong instance for this node", "a node without an instance: refused");
		notice_claims(st, &nr, &nowner);
		ok(nr.node && !strcmp(nr.node, "burst-3") && !strcmp(nr.instance, "i-0abc") && !strcmp(nr.action, "stop") &&
		   !strcmp(nr.time, "2026-11-27T17:00:00Z"), "the claims of a notice's payload");
		wire_notice_claim_free(&nowner);
		notice_claims("{\"node\":3}", &nr, &nowner);
		ok(!nr.node && !nr.instance && !nr.action && !nr.time, "claims that are not strings are absent");
		wire_notice_claim_free(&nowner);
		notice_claims("not json", &nr, &nowner);
		ok(!nr.node && !nowner.node && !nowner.time, "a payload that is not JSON has no claims");
		wire_notice_claim_free(&nowner);
	}
	return done_testing();
}
