/*
 * fuzz_join.c - libFuzzer target for a join report, what burst-node sends
 * to the agent's join port: {"op":"join","cred":C,"record":TEXT}. The
 * agent takes C to munge, which it cannot be here: C stands for the
 * credential's payload as munge would hand it back (the node's claims).
 * The report goes through the agent's checks as sent (join_claims,
 * join_verify), and then as from an honest node with a valid credential
 * over the same record, so that the record, the part a node writes,
 * reaches what the agent reads of it: the acceptance results and the
 * admission and health policies.
 *
 * The same bytes go to the authenticated exchange's decoders
 * (lib/admit/join_auth.h): the agent's reading of a hello, and burst-node's of
 * the agent's hello answer and signed answer, the input standing for a
 * munge payload too; what the agent signs for a hello or an answer must
 * pass burst-node's checks.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../../burst-agent/join_verify.h"
#include "fuzz.h"
#include "join_auth.h"
#include "wire.h"
#include "policy.h"
#include "sigv4.h"
#include "strutil.h"

static void verdicts(const struct join_report *rep, const struct join_expect *e)
{
	struct join_result res;
	char why[1200];
	struct policy p;

	join_verify(rep, 0, e, &res);
	if (res.verdict != JOIN_VERIFIED) {
		if (res.record || !res.reason)
			abort();     /* a refusal hands back nothing, and says why */
		return;
	}
	join_acceptance(res.record, why, sizeof(why));
	policy_init(&p);
	policy_check(&p, NULL, NULL, res.record, why, sizeof(why));
	policy_check_drivers(&p, res.record, why, sizeof(why));
	policy_compare(res.record, res.record, 0.05, why, sizeof(why));
	json_object_put(res.record);
}

static void exchange(const char *text, size_t size)
{
	struct join_hello h, mine;
	struct join_binding b = { "burst-1", "i-0", "00112233445566778899aabbccddeeff",
				  "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b", "t" };
	char why[600], *cred = NULL, *answer = NULL, *payload;
	int a;

	/* the agent: the first line of a connection */
	if (join_hello_parse(text, size, &h, why, sizeof(why)) == 1) {
		payload = join_hello_payload(&h);
		if (join_hello_check(0, 0, payload, &h, why, sizeof(why)) != 0)
			abort();     /* the agent's proof of a hello it took must pass */
		free(payload);
	}
	/* burst-node: the agent's lines, and the input as a munge payload */
	if (join_hello_answer_parse(text, &cred, why, sizeof(why)) == 0 && !cred)
		abort();
	free(cred);
	memset(&mine, 0, sizeof(mine));
	snprintf(mine.node, sizeof(mine.node), "burst-1");
	snprintf(mine.instance, sizeof(mine.instance), "i-0");
	snprintf(mine.nonce, sizeof(mine.nonce), "%s", b.nonce);
	join_hello_check(0, 0, text, &mine, why, sizeof(why));
	if (join_answer_parse(text, &answer, &cred, why, sizeof(why)) == 0) {
		(void)join_answer_check(0, 0, cred, &b, false, answer, why, sizeof(why));
		free(answer);
		free(cred);
	}
	for (int notice = 0; notice < 2; notice++) {
		(void)join_answer_check(0, 0, text, &b, notice, "{\"admit\":true}", why, sizeof(why));
	}
	/* the input as an answer the agent signs: its own payload passes */
	payload = join_answer_payload(&b, text);
	if (payload) {
		const char *v = wire_answer_verdict(text);
		bool notice = v && (!strcmp(v, JOIN_VERDICT_TAKEN) || !strcmp(v, JOIN_VERDICT_REFUSED));
		struct wire_join_answer wa;
		struct wire_notice_answer wn;
		burst_err_t err;
		a = join_answer_check(0, 0, payload, &b, notice, text, why, sizeof(why));
		if (a != 0)
			abort();
		/* what the node believed, it reads */
		if (notice ? wire_notice_answer_decode(text, &wn, &err) != 0 : wire_join_answer_decode(text, &wa, &err) != 0)
			abort();
		if (notice)
			wire_notice_answer_free(&wn);
		else
			wire_join_answer_free(&wa);
		free(payload);
	}
}

FUZZ_TARGET(join)
{
	char *text = xstrndup((const char *)data, size);
	struct wire_join_request rq;
	struct wire_join_claim pay = { NULL, NULL, NULL, NULL };
	burst_err_t err;
	const char *cred, *record;
	struct join_report rep;
	struct join_expect e;
	char digest[65];

	/* the agent's reading of a request */
	if (wire_join_request_decode(text, strlen(text), &rq, &err) != 0)
		memset(&rq, 0, sizeof(rq));
	cred = rq.cred;
	record = rq.record;
	if (cred && record) {
		memset(&rep, 0, sizeof(rep));
		join_claims(cred, &rep, &pay);
		rep.uid = 0;
		rep.record = record;
		/* the agent holds the node the claims name, booting as claimed */
		e.node = rep.node;
		e.state = NS_BOOTING;
		e.token = rep.token;
		e.token_used = false;
		e.instance = rep.instance;
		verdicts(&rep, rep.node ? &e : NULL);
		e.state = NS_LAUNCHING;
		verdicts(&rep, rep.node ? &e : NULL);
		/* the same record under a valid credential */
		sigv4_sha256_hex(record, strlen(record), digest);
		rep.digest = digest;
		rep.node = rep.node ? rep.node : "burst-1";
		rep.instance = rep.instance ? rep.instance : "i-0";
		rep.token = rep.token ? rep.token : "t";
		e.node = rep.node;
		e.state = NS_BOOTING;
		e.token = rep.token;
		e.instance = rep.instance;
		verdicts(&rep, &e);
		wire_join_claim_free(&pay);
	}
	wire_join_request_free(&rq);
	exchange(text, strlen(text));
	free(text);
	return 0;
}
