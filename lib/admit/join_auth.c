/*
 * join_auth.c - the authenticated join exchange's lines (join_auth.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "join_auth.h"
#include "sha256.h"
#include "strutil.h"
#include "wire.h"

#define HELLO_WHAT "burst-agent-hello"
#define ANSWER_WHAT "burst-agent-answer"
#define AGENT_NAME "burst-agent"

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

static bool is_int(json_object *o, const char *key, int want)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) &&
	       json_object_get_int64(v) == want;
}

static char *text_of(json_object *o)
{
	char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

static void hex_sha256(const char *s, size_t n, char hex[65])
{
	struct sha256 h;
	unsigned char d[32];

	sha256_init(&h);
	sha256_update(&h, s, n);
	sha256_final(&h, d);
	sha256_hex(d, hex);
}

/* what a peer said instead of a signed answer, quoted for the node's log */
static void quote_peer(const char *line, const char *what, char *why, size_t len)
{
	char cut[301];
	char *e;

	snprintf(cut, sizeof(cut), "%s", line);
	e = str_escape_ctl(cut);
	snprintf(why, len, "%s: %s%s", what, e, strlen(line) > 300 ? "..." : "");
	free(e);
}

int join_nonce(char nonce[2 * JOIN_NONCE_BYTES + 1])
{
	unsigned char b[JOIN_NONCE_BYTES];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(nonce + 2 * i, 3, "%02x", b[i]);
	return 0;
}

char *join_hello_line(const struct join_hello *h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "op", json_object_new_string("hello"));
	json_object_object_add(o, "v", json_object_new_int(JOIN_AUTH_VERSION));
	json_object_object_add(o, "node", json_object_new_string(h->node));
	json_object_object_add(o, "instance", json_object_new_string(h->instance));
	json_object_object_add(o, "nonce", json_object_new_string(h->nonce));
	return text_of(o);
}

static bool is_nonce(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 2 * JOIN_NONCE_BYTES;
}

/* a name in a hello: 1 to JOIN_NAME_MAX printable ASCII bytes, no blank */
static bool is_name(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return i >= 1 && i <= JOIN_NAME_MAX;
}

int join_hello_parse(const char *line, size_t n, struct join_hello *h, char *why, size_t len)
{
	json_object *o;
	const char *op, *node, *instance, *nonce;
	int rc = -1;

	memset(h, 0, sizeof(*h));
	/* a report is most of a MiB: only a short line can be a hello, and
	 * only one that names the op early is parsed twice */
	if (n > JOIN_HELLO_MAX || !strstr(line, "\"hello\""))
		return 0;
	o = json_tokener_parse(line);
	op = str(o, "op");
	if (!op || strcmp(op, "hello")) {
		json_object_put(o);
		return 0;
	}
	node = str(o, "node");
	instance = str(o, "instance");
	nonce = str(o, "nonce");
	if (!is_int(o, "v", JOIN_AUTH_VERSION))
		snprintf(why, len, "a hello of another version than %d", JOIN_AUTH_VERSION);
	else if (!node || !is_name(node))
		snprintf(why, len, "a hello without a node name (1 to %d printable characters)", JOIN_NAME_MAX);
	else if (!instance || !is_name(instance))
		snprintf(why, len, "a hello without an instance id (1 to %d printable characters)", JOIN_NAME_MAX);
	else if (!nonce || !is_nonce(nonce))
		snprintf(why, len, "a hello without a nonce (%d lower-case hex digits)", 2 * JOIN_NONCE_BYTES);
	else {
		snprintf(h->node, sizeof(h->node), "%s", node);
		snprintf(h->instance, sizeof(h->instance), "%s", instance);
		snprintf(h->nonce, sizeof(h->nonce), "%s", nonce);
		rc = 1;
	}
	json_object_put(o);
	return rc;
}

char *join_hello_payload(const struct join_hello *h)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "what", json_object_new_string(HELLO_WHAT));
	json_object_object_add(o, "v", json_object_new_int(JOIN_AUTH_VERSION));
	json_object_object_add(o, "node", json_object_new_string(h->node));
	json_object_object_add(o, "instance", json_object_new_string(h->instance));
	json_object_object_add(o, "nonce", json_object_new_string(h->nonce));
	return text_of(o);
}

char *join_hello_refusal(const char *why)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "hello", json_object_new_string("refused"));
	json_object_object_add(o, "reason", json_object_new_string(why ? why : ""));
	return text_of(o);
}

char *join_hello_answer(const char *cred)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "hello", json_object_new_string(AGENT_NAME));
	json_object_object_add(o, "v", json_object_new_int(JOIN_AUTH_VERSION));
	json_object_object_add(o, "cred", json_object_new_string(cred));
	return text_of(o);
}

int join_hello_answer_parse(const char *line, char **cred, char *why, size_t len)
{
	json_object *o = json_tokener_parse(line);
	const char *hello = str(o, "hello"), *c = str(o, "cred");

	*cred = NULL;
	if (!hello || strcmp(hello, AGENT_NAME) || !c || !*c) {
		json_object_put(o);
		quote_peer(line, "no signed answer to the hello; the peer said", why, len);
		return -1;
	}
	if (!is_int(o, "v", JOIN_AUTH_VERSION)) {
		json_object_put(o);
		snprintf(why, len, "the answer to the hello is not of version %d", JOIN_AUTH_VERSION);
		return -1;
	}
	*cred = xstrdup(c);
	json_object_put(o);
	return 0;
}

/* uid and the payload's "what" and version: NULL, or why not */
static const char *signed_by(uid_t uid, uid_t want_uid, json_object *pay, const char *what, char *why, size_t len)
{
	const char *w = str(pay, "what");

	if (uid != want_uid) {
		snprintf(why, len, "its credential is uid %u's, not %s", (unsigned)uid,
			 want_uid == 0 ? "root's" : "the agent's user's");
		return why;
	}
	if (!w || strcmp(w, what)) {
		snprintf(why, len, "its credential is not a %s (it says \"%s\")", what, w ? w : "");
		return why;
	}
	if (!is_int(pay, "v", JOIN_AUTH_VERSION)) {
		snprintf(why, len, "its credential is not of version %d", JOIN_AUTH_VERSION);
		return why;
	}
	return NULL;
}

/* a claim of the payload equal to want: NULL, or why not */
static const char *claim_is(json_object *pay, const char *key, const char *want, char *why, size_t len)
{
	const char *v = str(pay, key);

	if (!v || strcmp(v, want)) {
		char *e = str_escape_ctl(v ? v : "(none)");
		snprintf(why, len, "its credential is for %s %.200s, not %.200s", key, e, want);
		free(e);
		return why;
	}
	return NULL;
}

int join_hello_check(uid_t uid, uid_t want_uid, const char *payload, const struct join_hello *h, char *why,
		     size_t len)
{
	json_object *pay = payload ? json_tokener_parse(payload) : NULL;
	int rc = -1;

	if (!signed_by(uid, want_uid, pay, HELLO_WHAT, why, len) &&
	    !claim_is(pay, "node", h->node, why, len) &&
	    !claim_is(pay, "instance", h->instance, why, len) &&
	    !claim_is(pay, "nonce", h->nonce, why, len))
		rc = 0;
	json_object_put(pay);
	return rc;
}

static void token_hash(const char *token, char hex[65])
{
	if (token && *token)
		hex_sha256(token, strlen(token), hex);
	else
		hex[0] = '\0';
}

char *join_answer_payload(const struct join_binding *b, const char *answer)
{
	const char *verdict = wire_answer_verdict(answer);
	json_object *o;
	char tok[65], ans[65];

	if (!verdict)
		return NULL;
	token_hash(b->token, tok);
	hex_sha256(answer, strlen(answer), ans);
	o = json_object_new_object();
	json_object_object_add(o, "what", json_object_new_string(ANSWER_WHAT));
	json_object_object_add(o, "v", json_object_new_int(JOIN_AUTH_VERSION));
	json_object_object_add(o, "node", json_object_new_string(b->node ? b->node : ""));
	json_object_object_add(o, "instance", json_object_new_string(b->instance ? b->instance : ""));
	json_object_object_add(o, "nonce", json_object_new_string(b->nonce ? b->nonce : ""));
	json_object_object_add(o, "digest", json_object_new_string(b->digest ? b->digest : ""));
	json_object_object_add(o, "token_sha256", json_object_new_string(tok));
	json_object_object_add(o, "verdict", json_object_new_string(verdict));
	json_object_object_add(o, "answer_sha256", json_object_new_string(ans));
	return text_of(o);
}

char *join_answer_line(const char *answer, const char *cred)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "answer", json_object_new_string(answer));
	json_object_object_add(o, "cred", json_object_new_string(cred));
	return text_of(o);
}

int join_answer_parse(const char *line, char **answer, char **cred, char *why, size_t len)
{
	json_object *o = json_tokener_parse(line);
	const char *a = str(o, "answer"), *c = str(o, "cred");

	*answer = *cred = NULL;
	if (!a || !c || !*c) {
		json_object_put(o);
		quote_peer(line, "an answer without the agent's credential", why, len);
		return -1;
	}
	*answer = xstrdup(a);
	*cred = xstrdup(c);
	json_object_put(o);
	return 0;
}

/* a claim that must be want, or (when empty is allowed) "" */
static const char *bound_to(json_object *pay, const char *key, const char *want, bool empty_ok, char *why,
			    size_t len)
{
	const char *v = str(pay, key);

	if (v && empty_ok && !*v)
		return NULL;
	return claim_is(pay, key, want, why, len);
}

int join_answer_check(uid_t uid, uid_t want_uid, const char *payload, const struct join_binding *b,
		      bool notice, const char *answer, char *why, size_t len)
{
	json_object *pay = payload ? json_tokener_parse(payload) : NULL;
	const char *signed_verdict, *verdict;
	char tok[65], ans[65];
	bool partial;

	if (signed_by(uid, want_uid, pay, ANSWER_WHAT, why, len) ||
	    claim_is(pay, "node", b->node, why, len) ||
	    claim_is(pay, "instance", b->instance, why, len) ||
	    claim_is(pay, "nonce", b->nonce, why, len))
		goto bad;
	hex_sha256(answer, strlen(answer), ans);
	if (claim_is(pay, "answer_sha256", ans, why, len)) {
		snprintf(why, len, "the answer is not the one its credential signs");
		goto bad;
	}
	verdict = wire_answer_verdict(answer);
	signed_verdict = str(pay, "verdict");
	if (!verdict || !signed_verdict || strcmp(verdict, signed_verdict)) {
		snprintf(why, len, "the answer's verdict is not the one its credential signs");
		goto bad;
	}
	if (notice != (!strcmp(verdict, JOIN_VERDICT_TAKEN) || !strcmp(verdict, JOIN_VERDICT_REFUSED))) {
		snprintf(why, len, "its credential signs a verdict on a %s, not on a %s", notice ? "report" : "notice",
			 notice ? "notice" : "report");
		goto bad;
	}
	/* a rejection may come from an agent that could not read the report */
	partial = !strcmp(verdict, JOIN_VERDICT_REJECT) || !strcmp(verdict, JOIN_VERDICT_REFUSED);
	token_hash(b->token, tok);
	if (bound_to(pay, "digest", b->digest ? b->digest : "", partial, why, len) ||
	    bound_to(pay, "token_sha256", tok, partial, why, len))
		goto bad;
	json_object_put(pay);
	return 0;
bad:
	json_object_put(pay);
	return -1;
}
