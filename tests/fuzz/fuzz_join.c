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
#include "policy.h"
#include "sigv4.h"
#include "strutil.h"

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

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
	json_object *a;

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
		a = join_answer_check(0, 0, cred, &b, false, answer, why, sizeof(why));
		json_object_put(a);
		free(answer);
		free(cred);
	}
	for (int notice = 0; notice < 2; notice++) {
		a = join_answer_check(0, 0, text, &b, notice, "{\"admit\":true}", why, sizeof(why));
		json_object_put(a);
	}
	/* the input as an answer the agent signs: its own payload passes */
	payload = join_answer_payload(&b, text);
	if (payload) {
		json_object *o = json_tokener_parse(text);
		const char *v = join_answer_verdict(o);
		bool notice = v && (!strcmp(v, JOIN_VERDICT_TAKEN) || !strcmp(v, JOIN_VERDICT_REFUSED));
		a = join_answer_check(0, 0, payload, &b, notice, text, why, sizeof(why));
		if (!a)
			abort();
		json_object_put(a);
		json_object_put(o);
		free(payload);
	}
}

FUZZ_TARGET(join)
{
	char *text = xstrndup((const char *)data, size);
	json_object *req = json_tokener_parse(text), *pay = NULL;
	const char *cred = jstr(req, "cred"), *record = jstr(req, "record");
	struct join_report rep;
	struct join_expect e;
	char digest[65];

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
		json_object_put(pay);
	}
	json_object_put(req);
	exchange(text, strlen(text));
	free(text);
	return 0;
}
