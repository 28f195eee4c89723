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
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../../burst-agent/join_verify.h"
#include "fuzz.h"
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
	free(text);
	return 0;
}
