/*
 * test_join_auth.c - the authenticated join exchange's lines
 * (lib/admit/join_auth.c) without munge: what the agent signs, and burst-node's
 * checks of the agent's hello and answers as munge would hand them back
 * (a uid and a payload). A credential of another uid, for another node,
 * instance, nonce (a replayed hello or answer), report digest or join
 * token, or over another answer or verdict is refused; what the agent
 * signs passes.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "join_auth.h"
#include "wire.h"
#include "sha256.h"
#include "strutil.h"
#include "tap.h"

#define NONCE "00112233445566778899aabbccddeeff"
#define NONCE2 "ffeeddccbbaa99887766554433221100"
#define DIGEST "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
#define DIGEST2 "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35"
#define TOKEN "0123456789abcdef0123456789abcdef"

static struct join_hello hello(void)
{
	struct join_hello h;

	memset(&h, 0, sizeof(h));
	snprintf(h.node, sizeof(h.node), "burst-3");
	snprintf(h.instance, sizeof(h.instance), "i-0abc");
	snprintf(h.nonce, sizeof(h.nonce), NONCE);
	return h;
}

static struct join_binding binding(void)
{
	struct join_binding b = { "burst-3", "i-0abc", NONCE, DIGEST, TOKEN };
	return b;
}

/* the node's check of an answer the agent signed for sb, against what the node expects (nb) */
static bool believed(const struct join_binding *sb, const struct join_binding *nb, uid_t uid, bool notice,
		     const char *answer, char *why, size_t len)
{
	char *payload = join_answer_payload(sb, answer);
	int rc = payload ? join_answer_check(uid, 0, payload, nb, notice, answer, why, len) : -1;

	if (!payload)
		snprintf(why, len, "(no payload: the answer carries no verdict)");
	free(payload);
	return rc == 0;
}

static void test_hello(void)
{
	struct join_hello h = hello(), got, other;
	char why[300], *line = join_hello_line(&h), *payload, *ans, *cred;
	int k;

	k = join_hello_parse(line, strlen(line), &got, why, sizeof(why));
	ok(k == 1 && !strcmp(got.node, "burst-3") && !strcmp(got.instance, "i-0abc") && !strcmp(got.nonce, NONCE),
	   "the node's hello parses as a hello (%d)", k);
	payload = join_hello_payload(&got);
	ok(join_hello_check(0, 0, payload, &h, why, sizeof(why)) == 0, "the agent's proof of it, root's, passes");
	ok(join_hello_check(65534, 0, payload, &h, why, sizeof(why)) < 0 && strstr(why, "uid 65534's, not root's"),
	   "the same proof of uid 65534's is refused: %s", why);
	other = h;
	snprintf(other.nonce, sizeof(other.nonce), NONCE2);
	ok(join_hello_check(0, 0, payload, &other, why, sizeof(why)) < 0 && strstr(why, "nonce"),
	   "a proof replayed to a later hello (another nonce) is refused: %s", why);
	other = h;
	snprintf(other.node, sizeof(other.node), "burst-4");
	ok(join_hello_check(0, 0, payload, &other, why, sizeof(why)) < 0 && strstr(why, "node"),
	   "a proof for another node is refused: %s", why);
	other = h;
	snprintf(other.instance, sizeof(other.instance), "i-0def");
	ok(join_hello_check(0, 0, payload, &other, why, sizeof(why)) < 0 && strstr(why, "instance"),
	   "a proof for another instance is refused: %s", why);
	{
		/* an answer's credential is no hello proof */
		struct join_binding b = binding();
		char *ap = join_answer_payload(&b, "{\"admit\":true}");
		ok(join_hello_check(0, 0, ap, &h, why, sizeof(why)) < 0 && strstr(why, "not a burst-agent-hello"),
		   "an answer's credential is not taken for a hello's: %s", why);
		free(ap);
	}
	ok(join_hello_check(0, 0, "not json", &h, why, sizeof(why)) < 0, "a payload that is not JSON is refused");
	free(payload);

	ans = join_hello_answer("MUNGE:abc:");
	ok(join_hello_answer_parse(ans, &cred, why, sizeof(why)) == 0 && !strcmp(cred, "MUNGE:abc:"),
	   "the agent's hello answer gives its credential");
	free(cred);
	free(ans);
	ok(join_hello_answer_parse("{\"admit\": true, \"record\": {\"CLOUD_INSTANCE_ID\": \"forged\"}}", &cred, why,
				   sizeof(why)) < 0 && !cred && strstr(why, "the peer said: {\"admit\": true"),
	   "an answer to the hello without a credential is refused, quoted: %s", why);
	ok(join_hello_answer_parse("\x1b[2J{", &cred, why, sizeof(why)) < 0 && !strchr(why, '\x1b'),
	   "what a peer says is quoted with its control characters written out: %s", why);
	ok(join_hello_answer_parse("{\"hello\":\"burst-agent\",\"v\":2,\"cred\":\"x\"}", &cred, why, sizeof(why)) < 0,
	   "an answer of another version is refused: %s", why);
	free(line);
}

static void test_hello_parse(void)
{
	struct join_hello h;
	char why[300], big[2000];

	ok(join_hello_parse("{\"op\":\"join\",\"cred\":\"x\",\"record\":\"{}\"}", 36, &h, why, sizeof(why)) == 0,
	   "a report (an older burst-node's) is not a hello");
	ok(join_hello_parse("{\"op\":\"notice\",\"cred\":\"x\"}", 26, &h, why, sizeof(why)) == 0,
	   "nor is a notice");
	ok(join_hello_parse("{\"op\":\"hello\",\"v\":1,\"node\":\"n\",\"instance\":\"i\",\"nonce\":\"zz\"}", 60, &h, why,
			    sizeof(why)) < 0 && strstr(why, "nonce"), "a hello with a bad nonce is malformed: %s", why);
	ok(join_hello_parse("{\"op\":\"hello\",\"v\":1,\"node\":\"n x\",\"instance\":\"i\",\"nonce\":\"" NONCE "\"}", 80, &h,
			    why, sizeof(why)) < 0 && strstr(why, "node"), "a node name with a blank is malformed: %s", why);
	ok(join_hello_parse("{\"op\":\"hello\",\"v\":3,\"node\":\"n\",\"instance\":\"i\",\"nonce\":\"" NONCE "\"}", 80, &h,
			    why, sizeof(why)) < 0 && strstr(why, "version"), "a hello of another version: %s", why);
	ok(join_hello_parse("{\"op\":\"hello\",\"v\":1,\"node\":\"n\",\"nonce\":\"" NONCE "\"}", 70, &h, why,
			    sizeof(why)) < 0 && strstr(why, "instance"), "a hello without an instance: %s", why);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "{\"op\":\"hello\"", 13);
	ok(join_hello_parse(big, strlen(big), &h, why, sizeof(why)) == 0, "a line longer than a hello is not one");
}

static void test_answers(void)
{
	struct join_binding b = binding(), o;
	const char *admit = "{\"admit\":true,\"record\":{\"CLOUD_INSTANCE_ID\":\"i-0abc\"}}";
	const char *reject = "{\"admit\":false,\"reason\":\"invalid or used join token\"}";
	const char *retry = "{\"admit\":false,\"retry\":true,\"reason\":\"not ready for this instance yet\"}";
	char why[400];

	ok(believed(&b, &b, 0, false, admit, why, sizeof(why)), "an admission signed for this report is believed");
	ok(believed(&b, &b, 0, false, reject, why, sizeof(why)), "so is a rejection");
	ok(believed(&b, &b, 0, false, retry, why, sizeof(why)), "and a retry");
	ok(!believed(&b, &b, 65534, false, admit, why, sizeof(why)) && strstr(why, "uid 65534's, not root's"),
	   "an admission under uid 65534's credential is not: %s", why);
	ok(!believed(&b, &b, 450, false, retry, why, sizeof(why)), "nor a retry under another user's (SlurmUser's)");
	o = b;
	o.node = "burst-4";
	ok(!believed(&o, &b, 0, false, admit, why, sizeof(why)) && strstr(why, "node burst-4"),
	   "an admission for another node is not: %s", why);
	o = b;
	o.instance = "i-0def";
	ok(!believed(&o, &b, 0, false, admit, why, sizeof(why)) && strstr(why, "instance"),
	   "nor one for another instance: %s", why);
	o = b;
	o.nonce = NONCE2;
	ok(!believed(&o, &b, 0, false, admit, why, sizeof(why)) && strstr(why, "nonce"),
	   "nor one replayed from another connection (its nonce): %s", why);
	ok(!believed(&o, &b, 0, false, retry, why, sizeof(why)), "nor a retry replayed so");
	ok(!believed(&o, &b, 0, false, reject, why, sizeof(why)), "nor a rejection replayed so");
	o = b;
	o.digest = DIGEST2;
	ok(!believed(&o, &b, 0, false, admit, why, sizeof(why)) && strstr(why, "digest"),
	   "nor one for another report (its digest): %s", why);
	ok(!believed(&o, &b, 0, false, reject, why, sizeof(why)), "nor a rejection of another report");
	o = b;
	o.token = "ffffffffffffffffffffffffffffffff";
	ok(!believed(&o, &b, 0, false, admit, why, sizeof(why)) && strstr(why, "token"),
	   "nor one for another join token: %s", why);
	ok(!believed(&o, &b, 0, false, retry, why, sizeof(why)), "nor a retry for another token");
	/* an agent that could not read the report (no credential, no record) */
	o = b;
	o.digest = "";
	o.token = "";
	ok(believed(&o, &b, 0, false, reject, why, sizeof(why)),
	   "a rejection that names no digest nor token (the agent could not read them) is believed");
	ok(!believed(&o, &b, 0, false, admit, why, sizeof(why)), "an admission that names none is not");
	ok(!believed(&o, &b, 0, false, retry, why, sizeof(why)), "nor a retry");
	/* a notice's answers, and the kinds kept apart */
	o = b;
	o.digest = o.token = "";
	ok(believed(&o, &o, 0, true, "{\"ok\":true}", why, sizeof(why)), "a notice's answer signed for it is believed");
	ok(believed(&o, &o, 0, true, "{\"ok\":false,\"reason\":\"unknown node\"}", why, sizeof(why)),
	   "so is a refusal of the notice");
	ok(!believed(&o, &o, 0, false, "{\"ok\":true}", why, sizeof(why)) && strstr(why, "notice"),
	   "a notice's answer is not taken for a report's: %s", why);
	ok(!believed(&b, &b, 0, true, admit, why, sizeof(why)), "nor an admission for a notice's answer");
	{
		/* the signed answer, swapped for another or altered */
		char *payload = join_answer_payload(&b, reject);
		struct wire_join_answer wa;
		burst_err_t err;
		int a = join_answer_check(0, 0, payload, &b, false, admit, why, sizeof(why));
		ok(a < 0 && strstr(why, "not the one its credential signs"),
		   "an admission under a rejection's credential is not believed: %s", why);
		free(payload);
		payload = join_answer_payload(&b, admit);
		a = join_answer_check(0, 0, payload, &b, false,
				      "{\"admit\":true,\"record\":{\"CLOUD_INSTANCE_ID\":\"forged\"}}", why, sizeof(why));
		ok(a < 0, "nor an admission whose record was altered: %s", why);
		a = join_answer_check(0, 0, payload, &b, false, admit, why, sizeof(why));
		ok(a == 0 && wire_join_answer_decode(admit, &wa, &err) == 0 && wa.decision == WIRE_JOIN_ADMIT,
		   "the answer signed is believed, and reads as the admission it is");
		wire_join_answer_free(&wa);
		free(payload);
	}
	{
		/* a payload that signs the answer's hash with another verdict */
		char *p = join_answer_payload(&b, admit), *q;
		json_object *po = json_tokener_parse(p);
		int a;
		json_object_object_add(po, "verdict", json_object_new_string("reject"));
		q = xstrdup(json_object_to_json_string(po));
		a = join_answer_check(0, 0, q, &b, false, admit, why, sizeof(why));
		ok(a < 0 && strstr(why, "verdict"), "an answer whose verdict is not the one signed is not believed: %s", why);
		json_object_put(po);
		free(p);
		free(q);
	}
	ok(join_answer_payload(&b, "{\"hello\":1}") == NULL, "the agent signs no answer without a verdict");
}

static void test_answer_lines(void)
{
	char *line = join_answer_line("{\"admit\":true}", "MUNGE:x:"), *answer, *cred, why[400];

	ok(join_answer_parse(line, &answer, &cred, why, sizeof(why)) == 0 && !strcmp(answer, "{\"admit\":true}") &&
	   !strcmp(cred, "MUNGE:x:"), "a signed answer line gives its answer and credential");
	free(answer);
	free(cred);
	free(line);
	ok(join_answer_parse("{\"admit\":true,\"record\":{}}", &answer, &cred, why, sizeof(why)) < 0 && !answer && !cred &&
	   strstr(why, "without the agent's credential"), "an unsigned answer (an older agent's, a squatter's) is refused: %s", why);
	ok(join_answer_parse("", &answer, &cred, why, sizeof(why)) < 0, "an empty line is refused");
}

static void test_nonce(void)
{
	char a[2 * JOIN_NONCE_BYTES + 1], b[2 * JOIN_NONCE_BYTES + 1];
	struct join_hello h;
	char why[200], *line;

	ok(join_nonce(a) == 0 && join_nonce(b) == 0 && strlen(a) == 32 && strcmp(a, b),
	   "nonces are 32 hex digits, drawn anew each time (%s, %s)", a, b);
	h = hello();
	memcpy(h.nonce, a, sizeof(a));
	line = join_hello_line(&h);
	ok(join_hello_parse(line, strlen(line), &h, why, sizeof(why)) == 1, "and a hello with one parses");
	free(line);
}

int main(void)
{
	test_hello();
	test_hello_parse();
	test_answers();
	test_answer_lines();
	test_nonce();
	return done_testing();
}
