/*
 * test_attest.c - in-toto statements in DSSE envelopes, Ed25519 keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "attest.h"
#include "strutil.h"
#include "tap.h"

#define PROV "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char tmpdir[] = "/tmp/test_attest.XXXXXX";

static char *tpath(const char *name)
{
	struct strbuf sb;

	sb_init(&sb);
	sb_addf(&sb, "%s/%s", tmpdir, name);
	return sb_take(&sb);
}

static const char *jstr(json_object *o, const char *path)
{
	/* a.b.c lookups of objects only */
	char *copy = xstrdup(path), *save = NULL, *tok;
	json_object *cur = o;
	const char *res = NULL;

	for (tok = strtok_r(copy, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(cur, tok, &cur))
			cur = NULL;
	if (cur && json_object_is_type(cur, json_type_string))
		res = json_object_get_string(cur);
	free(copy);
	return res;
}

/* A JSON array of strings as "a,b,c" (static buffer). */
static const char *jlist(json_object *o, const char *key)
{
	static char buf[1024];
	json_object *a;
	size_t i;

	buf[0] = '\0';
	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return "(not an array)";
	for (i = 0; i < json_object_array_length(a); i++) {
		if (i)
			strcat(buf, ",");
		strcat(buf, json_object_get_string(json_object_array_get_idx(a, i)));
	}
	return buf;
}

/* Rebuild an envelope with the given payload bytes / signature bytes (NULL: keep). */
static char *tamper(const char *env, const void *payload, size_t plen, const void *sig,
		    size_t slen, const char *ptype)
{
	json_object *o = json_tokener_parse(env), *sigs;
	char *res;

	if (payload) {
		char *b = attest_b64_encode(payload, plen);
		json_object_object_add(o, "payload", json_object_new_string(b));
		free(b);
	}
	if (sig) {
		char *b = attest_b64_encode(sig, slen);
		json_object_object_get_ex(o, "signatures", &sigs);
		json_object_object_add(json_object_array_get_idx(sigs, 0), "sig", json_object_new_string(b));
		free(b);
	}
	if (ptype)
		json_object_object_add(o, "payloadType", json_object_new_string(ptype));
	res = xstrdup(json_object_to_json_string(o));
	json_object_put(o);
	return res;
}

/* The decoded payload / signature of an envelope. */
static unsigned char *field(const char *env, const char *which, size_t *len)
{
	json_object *o = json_tokener_parse(env), *v;
	unsigned char *res;

	if (!strcmp(which, "sig")) {
		json_object_object_get_ex(o, "signatures", &v);
		json_object_object_get_ex(json_object_array_get_idx(v, 0), "sig", &v);
	} else
		json_object_object_get_ex(o, which, &v);
	res = attest_b64_decode(json_object_get_string(v), len);
	json_object_put(o);
	return res;
}

static void test_b64(void)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const enc[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	static const unsigned char bin[] = { 0xfb, 0xff, 0xbe };
	unsigned char *d;
	char *e;
	size_t i, n;

	/* RFC 4648 section 10 test vectors */
	for (i = 0; i < 7; i++) {
		e = attest_b64_encode(plain[i], strlen(plain[i]));
		is_str(e, enc[i], "base64('%s')", plain[i]);
		free(e);
		d = attest_b64_decode(enc[i], &n);
		ok(d && n == strlen(plain[i]) && !memcmp(d, plain[i], n), "decode '%s'", enc[i]);
		free(d);
	}
	e = attest_b64_encode(bin, 3);
	is_str(e, "+/++", "standard alphabet for 0xfb 0xff 0xbe");
	free(e);
	d = attest_b64_decode("-_--", &n);
	ok(d && n == 3 && !memcmp(d, bin, 3), "URL-safe alphabet decodes (DSSE verifiers accept both)");
	free(d);
	d = attest_b64_decode("Zg", &n);
	ok(d && n == 1 && d[0] == 'f', "padding is optional");
	free(d);
	ok(attest_b64_decode("Zm9v!", &n) == NULL, "'!' is not base64");
	ok(attest_b64_decode("Z", &n) == NULL, "one character is not base64");
	ok(attest_b64_decode("Zh==", &n) == NULL, "non-zero trailing bits are refused");
	ok(attest_b64_decode("Zm9v\n", &n) == NULL, "a newline is not base64");
}

static void test_pae(void)
{
	unsigned char *p;
	size_t n;
	static const char want[] = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";

	/* the test vector of DSSE v1.0.0 protocol.md */
	p = attest_pae("http://example.com/HelloWorld", "hello world", 11, &n);
	ok(n == strlen(want) && !memcmp(p, want, n), "PAE of the DSSE spec's test vector");
	diag("PAE: %s", (char *)p);
	free(p);
	/* from the definition: empty body, and a body with a NUL byte counted in LEN */
	p = attest_pae("t", "", 0, &n);
	ok(n == sizeof("DSSEv1 1 t 0 ") - 1 && !memcmp(p, "DSSEv1 1 t 0 ", n),
	   "PAE with an empty body is 'DSSEv1 1 t 0 '");
	free(p);
	p = attest_pae("application/vnd.in-toto+json", "a\0b", 3, &n);
#define PAE_NUL "DSSEv1 28 application/vnd.in-toto+json 3 a\0b"
	ok(n == sizeof(PAE_NUL) - 1 && !memcmp(p, PAE_NUL, n),
	   "PAE counts bytes, NUL included");
	free(p);
}

static void test_keys(EVP_PKEY **key_out, EVP_PKEY **other_out)
{
	char *kp = tpath("agent.pem"), *kp2 = tpath("other.pem"), *ec = tpath("ec.pem");
	char id1[ATTEST_KEYID_LEN + 1], id2[ATTEST_KEYID_LEN + 1], *pem;
	EVP_PKEY *k = NULL, *k2 = NULL, *pub = NULL;
	burst_err_t err;
	struct stat st;
	FILE *f;
	int i;

	ok(attest_key_load_or_create(kp, &k, &err) == 0, "a missing key is created");
	memset(&st, 0, sizeof(st));
	i = stat(kp, &st);
	ok(i == 0 && (st.st_mode & 07777) == 0600, "... with mode 0600 (got %04o)",
	   (unsigned)(st.st_mode & 07777));
	f = fopen(kp, "r");
	{
		char line[64] = "";
		ok(f && fgets(line, sizeof(line), f) && !strcmp(line, "-----BEGIN PRIVATE KEY-----\n"),
		   "... in PEM PKCS#8");
		if (f)
			fclose(f);
	}
	ok(attest_key_id(k, id1, &err) == 0 && strlen(id1) == 64, "key id is 64 hex digits");
	ok(attest_key_load_or_create(kp, &k2, &err) == 0, "the key loads again");
	ok(k2 && attest_key_id(k2, id2, &err) == 0 && !strcmp(id1, id2), "... and is the same key");
	EVP_PKEY_free(k2);
	k2 = NULL;

	/* key id = sha256(raw public key) */
	{
		unsigned char raw[32], md[32];
		size_t rl = 32;
		unsigned int ml;
		char hex[65];
		EVP_PKEY_get_raw_public_key(k, raw, &rl);
		EVP_Digest(raw, rl, md, &ml, EVP_sha256(), NULL);
		for (i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		is_str(id1, hex, "key id is the sha256 of the raw public key");
	}

	chmod(kp, 0644);
	ok(attest_key_load_or_create(kp, &k2, &err) < 0 && !k2, "a key readable by others is refused");
	has_str(err.msg, "chmod 0600", "... and the message says to chmod 0600");
	has_str(err.msg, "0644", "... and names its mode");
	chmod(kp, 0640);
	ok(attest_key_load_or_create(kp, &k2, &err) < 0, "a key readable by the group is refused");
	chmod(kp, 0400);
	ok(attest_key_load_or_create(kp, &k2, &err) == 0, "mode 0400 is accepted");
	EVP_PKEY_free(k2);
	k2 = NULL;

	{
		char *link = tpath("link.pem");
		if (symlink(kp, link) == 0) {
			ok(attest_key_load_or_create(link, &k2, &err) < 0 && !k2, "a symbolic link is refused");
			has_str(err.msg, "symbolic link", "... saying so");
		} else
			ok(0, "symlink for the test");
		free(link);
	}

	/* not Ed25519 */
	{
		EVP_PKEY *e = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		FILE *ef = fopen(ec, "w");
		chmod(ec, 0600);
		PEM_write_PrivateKey(ef, e, NULL, NULL, 0, NULL, NULL);
		fclose(ef);
		EVP_PKEY_free(e);
		ok(attest_key_load_or_create(ec, &k2, &err) < 0, "an EC key is refused");
		has_str(err.msg, "not Ed25519", "... because it is not Ed25519");
	}
	{
		char *junk = tpath("junk.pem");
		FILE *jf = fopen(junk, "w");
		fputs("not a key\n", jf);
		fclose(jf);
		chmod(junk, 0600);
		ok(attest_key_load_or_create(junk, &k2, &err) < 0, "a file that is no key is refused");
		has_str(err.msg, "not a PEM private key", "... with a message saying so");
		free(junk);
	}

	/* the public half as PEM, loaded back */
	pem = attest_pubkey_pem(k, &err);
	ok(pem && strstr(pem, "-----BEGIN PUBLIC KEY-----"), "public key exports as PEM");
	{
		char *pp = tpath("agent.pub");
		f = fopen(pp, "w");
		fputs(pem, f);
		fclose(f);
		ok(attest_pubkey_load(pp, &pub, &err) == 0 && attest_key_id(pub, id2, &err) == 0 &&
		   !strcmp(id1, id2), "the exported public key loads and has the same key id");
		EVP_PKEY_free(pub);
		ok(attest_pubkey_load(kp, &pub, &err) == 0, "a private key file serves as public key too");
		EVP_PKEY_free(pub);
		free(pp);
	}
	free(pem);

	ok(attest_key_load_or_create(kp2, &k2, &err) == 0, "a second key");
	ok(attest_key_id(k2, id2, &err) == 0 && strcmp(id1, id2), "... has another key id");
	{
		char *nodir = tpath("no/such/dir/key.pem");
		EVP_PKEY *x = NULL;
		ok(attest_key_load_or_create(nodir, &x, &err) < 0, "no key is made in a missing directory");
		has_str(err.msg, "does the directory exist", "... and the message asks about the directory");
		free(nodir);
	}
	*key_out = k;
	*other_out = k2;
	free(kp);
	free(kp2);
	free(ec);
}

static const struct attest_subject subj = { "burst-gpu-3", "i-0abc123", PROV };
static const struct attest_test tests[] = {
	{ "nvidia-smi@burst-gpu-3", true, false },
	{ "stream@burst-gpu-3", true, true },
	{ "nccl-allreduce@burst-gpu-3", false, false },
	{ "hostname@burst-gpu-3", true, false },
};

static void test_statements(void)
{
	struct attest_test_run run = { "acceptance.conf", PROV, "https://ci.example/run/7" };
	struct attest_subject bad = subj;
	json_object *o, *s0;
	burst_err_t err;
	char *st;

	st = attest_statement_test_result(&subj, tests, 4, &run, &err);
	o = st ? json_tokener_parse(st) : NULL;
	ok(o != NULL, "test-result statement is JSON");
	is_str(jstr(o, "_type"), "https://in-toto.io/Statement/v1", "_type is Statement v1");
	is_str(jstr(o, "predicateType"), "https://in-toto.io/attestation/test-result/v0.1",
	       "predicateType is test-result v0.1");
	{
		json_object *sa;
		json_object_object_get_ex(o, "subject", &sa);
		ok(sa && json_object_array_length(sa) == 1, "one subject");
		s0 = json_object_array_get_idx(sa, 0);
	}
	is_str(jstr(s0, "name"), "node:burst-gpu-3/instance:i-0abc123", "subject name");
	is_str(jstr(s0, "digest.sha256"), PROV, "subject digest is the provenance id");
	is_str(jstr(o, "predicate.result"), "FAILED", "a failed test makes the result FAILED");
	{
		json_object *p;
		json_object_object_get_ex(o, "predicate", &p);
		is_str(jlist(p, "passedTests"), "nvidia-smi@burst-gpu-3,hostname@burst-gpu-3", "passedTests");
		is_str(jlist(p, "warnedTests"), "stream@burst-gpu-3", "warnedTests");
		is_str(jlist(p, "failedTests"), "nccl-allreduce@burst-gpu-3", "failedTests");
		is_str(jstr(p, "url"), "https://ci.example/run/7", "url");
		{
			json_object *c;
			json_object_object_get_ex(p, "configuration", &c);
			ok(c && json_object_array_length(c) == 1, "configuration has one resource descriptor");
			is_str(jstr(json_object_array_get_idx(c, 0), "name"), "acceptance.conf", "... named");
			is_str(jstr(json_object_array_get_idx(c, 0), "digest.sha256"), PROV, "... with its digest");
		}
	}
	ok(strstr(st, "https://in-toto.io/Statement/v1") != NULL, "slashes are not escaped");
	json_object_put(o);
	free(st);

	st = attest_statement_test_result(&subj, tests, 2, NULL, &err);
	o = st ? json_tokener_parse(st) : NULL;
	is_str(jstr(o, "predicate.result"), "WARNED", "passed with a warning: WARNED");
	{
		json_object *p, *c;
		json_object_object_get_ex(o, "predicate", &p);
		ok(json_object_object_get_ex(p, "configuration", &c) && json_object_array_length(c) == 0,
		   "configuration is present (required) and empty without a run");
		ok(!json_object_object_get_ex(p, "url", &c), "no url without a run");
	}
	json_object_put(o);
	free(st);
	st = attest_statement_test_result(&subj, tests, 1, NULL, &err);
	o = st ? json_tokener_parse(st) : NULL;
	is_str(jstr(o, "predicate.result"), "PASSED", "all passed: PASSED");
	json_object_put(o);
	free(st);

	ok(attest_statement_test_result(&subj, tests, 0, NULL, &err) == NULL, "no tests: refused");
	has_str(err.msg, "no acceptance test results", "... saying so");
	bad.provenance_id = "abc";
	ok(attest_statement_test_result(&bad, tests, 1, NULL, &err) == NULL, "a short provenance id is refused");
	has_str(err.msg, "burst-gpu-3", "... naming the node");
	has_str(err.msg, "not a sha256", "... and what is wrong");
	bad.provenance_id = "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	ok(attest_statement_test_result(&bad, tests, 1, NULL, &err) == NULL, "a non-hex provenance id is refused");
	bad = subj;
	bad.instance_id = "";
	ok(attest_statement_test_result(&bad, tests, 1, NULL, &err) == NULL, "no instance id: refused");

	/* Simple Verification Result */
	st = attest_statement_verification(&subj, "urn:slurm-burst:burst-agent:v1", "gpu4-ampere",
					   false, tests, 4, 0, &err);
	o = st ? json_tokener_parse(st) : NULL;
	ok(o != NULL, "SVR statement is JSON");
	is_str(jstr(o, "predicateType"), "https://in-toto.io/attestation/svr/v0.1", "predicateType is svr v0.1");
	is_str(jstr(o, "predicate.verifier.id"), "urn:slurm-burst:burst-agent:v1", "verifier.id");
	is_str(jstr(o, "predicate.verifier.policy.name"), "gpu4-ampere", "verifier.policy.name (extension)");
	is_str(jstr(o, "predicate.timeCreated"), "1970-01-01T00:00:00Z", "timeCreated in RFC 3339 UTC");
	{
		json_object *p;
		json_object_object_get_ex(o, "predicate", &p);
		is_str(jlist(p, "properties"),
		       "SLURM_BURST_TEST_PASSED:nvidia-smi@burst-gpu-3,SLURM_BURST_TEST_PASSED:stream@burst-gpu-3,"
		       "SLURM_BURST_TEST_PASSED:hostname@burst-gpu-3",
		       "rejected: properties are only the passed tests, no ADMITTED");
	}
	json_object_put(o);
	free(st);
	st = attest_statement_verification(&subj, "urn:x", NULL, true, NULL, 0, 1700000000, &err);
	o = st ? json_tokener_parse(st) : NULL;
	{
		json_object *p, *v;
		json_object_object_get_ex(o, "predicate", &p);
		is_str(jlist(p, "properties"), "SLURM_BURST_NODE_ADMITTED", "admitted: the ADMITTED property");
		json_object_object_get_ex(p, "verifier", &v);
		ok(v && !json_object_object_get_ex(v, "policy", NULL), "no policy: no policy field");
	}
	is_str(jstr(o, "predicate.timeCreated"), "2023-11-14T22:13:20Z", "timeCreated of 1700000000");
	json_object_put(o);
	free(st);
	ok(attest_statement_verification(&subj, "", NULL, true, NULL, 0, 0, &err) == NULL,
	   "no verifier id: refused");
}

static void test_envelopes(EVP_PKEY *key, EVP_PKEY *other)
{
	char *st, *env, *bad, *out = NULL, id[ATTEST_KEYID_LEN + 1], kid[ATTEST_KEYID_LEN + 1];
	unsigned char *pl, *sig;
	size_t pl_len, sig_len;
	burst_err_t err;
	json_object *o;

	st = attest_statement_test_result(&subj, tests, 4, NULL, &err);
	env = attest_envelope_sign(ATTEST_PAYLOAD_TYPE, st, strlen(st), key, &err);
	ok(env != NULL, "sign an envelope");
	o = json_tokener_parse(env);
	is_str(jstr(o, "payloadType"), "application/vnd.in-toto+json", "payloadType");
	attest_key_id(key, id, &err);
	{
		json_object *sigs;
		json_object_object_get_ex(o, "signatures", &sigs);
		ok(sigs && json_object_array_length(sigs) == 1, "one signature");
		is_str(jstr(json_object_array_get_idx(sigs, 0), "keyid"), id, "keyid is the signer's");
	}
	json_object_put(o);
	sig = field(env, "sig", &sig_len);
	ok(sig_len == 64, "an Ed25519 signature is 64 bytes");

	ok(attest_envelope_verify(env, key, &out, kid, &err) == 0, "sign then verify: ok");
	if (out == NULL)
		diag("%s", err.msg);
	is_str(out, st, "verify returns the signed statement");
	is_str(kid, id, "... and the key id");
	free(out);
	out = NULL;

	/* flip one bit of one payload byte, re-encode */
	pl = field(env, "payload", &pl_len);
	pl[pl_len / 2] ^= 0x01;
	bad = tamper(env, pl, pl_len, NULL, 0, NULL);
	ok(attest_envelope_verify(bad, key, &out, NULL, &err) < 0 && out == NULL,
	   "one payload byte changed: verification fails");
	has_str(err.msg, "bad signature", "... as a bad signature");
	free(bad);
	pl[pl_len / 2] ^= 0x01;

	/* flip one signature byte */
	sig[10] ^= 0x80;
	bad = tamper(env, NULL, 0, sig, sig_len, NULL);
	ok(attest_envelope_verify(bad, key, NULL, NULL, &err) < 0, "one signature byte changed: fails");
	has_str(err.msg, "bad signature", "... as a bad signature");
	free(bad);
	sig[10] ^= 0x80;

	/* a short signature */
	bad = tamper(env, NULL, 0, sig, 63, NULL);
	ok(attest_envelope_verify(bad, key, NULL, NULL, &err) < 0, "a 63-byte signature fails");
	has_str(err.msg, "not 64 bytes", "... saying it is not 64 bytes");
	free(bad);

	/* the type is signed too */
	bad = tamper(env, NULL, 0, NULL, 0, "application/json");
	ok(attest_envelope_verify(bad, key, NULL, NULL, &err) < 0, "payloadType changed: fails");
	has_str(err.msg, "bad signature", "... as a bad signature (PAE covers the type)");
	free(bad);

	/* another key */
	ok(attest_envelope_verify(env, other, NULL, NULL, &err) < 0, "verify with another key: fails");
	has_str(err.msg, "wrong key", "... as the wrong key");
	has_str(err.msg, id, "... naming the signer's key id");

	/* the untampered envelope re-encoded URL-safe without padding still verifies */
	{
		json_object *e = json_tokener_parse(env), *sigs;
		char *b = attest_b64_encode(pl, pl_len), *c = attest_b64_encode(sig, sig_len), *q;
		for (q = b; *q; q++)
			*q = *q == '+' ? '-' : *q == '/' ? '_' : *q;
		while (q > b && q[-1] == '=')
			*--q = '\0';
		for (q = c; *q; q++)
			*q = *q == '+' ? '-' : *q == '/' ? '_' : *q;
		json_object_object_add(e, "payload", json_object_new_string(b));
		json_object_object_get_ex(e, "signatures", &sigs);
		json_object_object_add(json_object_array_get_idx(sigs, 0), "sig", json_object_new_string(c));
		ok(attest_envelope_verify(json_object_to_json_string(e), key, NULL, NULL, &err) == 0,
		   "URL-safe base64 without padding verifies");
		free(b);
		free(c);
		json_object_put(e);
	}

	/* malformed envelopes, each naming its field */
	{
		static const struct { const char *env, *want; } cases[] = {
			{ "not json", "malformed envelope: not JSON" },
			{ "[]", "malformed envelope: not a JSON object" },
			{ "{\"payload\":\"e30=\",\"signatures\":[{\"sig\":\"AA==\"}]}", "payloadType is missing" },
			{ "{\"payloadType\":1,\"payload\":\"e30=\",\"signatures\":[{\"sig\":\"AA==\"}]}",
			  "payloadType is not a string" },
			{ "{\"payloadType\":\"x\",\"signatures\":[{\"sig\":\"AA==\"}]}", "payload is missing" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30*\",\"signatures\":[{\"sig\":\"AA==\"}]}",
			  "payload is not base64" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30=\",\"signatures\":[]}", "signatures must be" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30=\"}", "signatures must be" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30=\",\"signatures\":[{}]}", "signatures[0].sig is missing" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30=\",\"signatures\":[{\"sig\":\"@@\"}]}",
			  "signatures[0].sig is not base64" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30=\",\"signatures\":[{\"sig\":\"AA==\",\"keyid\":5}]}",
			  "signatures[0].keyid is not a string" },
			{ "{\"payloadType\":\"x\",\"payload\":\"e30=\",\"signatures\":[{\"sig\":\"AA==\"}]} x",
			  "malformed envelope: not JSON" },
		};
		size_t i;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			ok(attest_envelope_verify(cases[i].env, key, NULL, NULL, &err) < 0,
			   "malformed #%zu fails", i + 1);
			has_str(err.msg, cases[i].want, "... with '%s'", cases[i].want);
		}
	}

	/* correctly signed, but not what we accept */
	{
		static const struct { const char *type, *body, *want; } cases[] = {
			{ "application/json", "{}", "payloadType is \"application/json\"" },
			{ ATTEST_PAYLOAD_TYPE, "hello", "malformed statement: the payload is not JSON" },
			{ ATTEST_PAYLOAD_TYPE, "{\"_type\":\"https://in-toto.io/Statement/v0.1\"}",
			  "malformed statement: _type is \"https://in-toto.io/Statement/v0.1\"" },
			{ ATTEST_PAYLOAD_TYPE, "{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":[]}",
			  "subject must be a non-empty array" },
			{ ATTEST_PAYLOAD_TYPE, "{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":[{\"name\":\"a\"}]}",
			  "subject[0].digest" },
			{ ATTEST_PAYLOAD_TYPE, "{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":"
			  "[{\"digest\":{\"sha256\":\"ab\"}}]}", "predicateType is missing" },
			{ ATTEST_PAYLOAD_TYPE, "{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":"
			  "[{\"digest\":{\"sha256\":\"ab\"}}],\"predicateType\":\"x\",\"predicate\":[]}",
			  "predicate is not an object" },
		};
		size_t i;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char *e = attest_envelope_sign(cases[i].type, cases[i].body, strlen(cases[i].body), key, &err);
			ok(e && attest_envelope_verify(e, key, NULL, NULL, &err) < 0, "signed but unacceptable #%zu fails",
			   i + 1);
			has_str(err.msg, cases[i].want, "... with '%s'", cases[i].want);
			free(e);
		}
	}

	/* through a key file */
	{
		char *pp = tpath("agent.pem");
		ok(attest_envelope_verify_file_key(env, pp, &out, &err) == 0, "verify with a key file");
		free(out);
		free(pp);
		pp = tpath("missing.pub");
		ok(attest_envelope_verify_file_key(env, pp, &out, &err) < 0 && out == NULL,
		   "a missing key file fails");
		has_str(err.msg, "missing.pub", "... naming it");
		free(pp);
	}
	free(pl);
	free(sig);
	free(env);
	free(st);
}

int main(void)
{
	EVP_PKEY *key = NULL, *other = NULL;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_b64();
	test_pae();
	test_keys(&key, &other);
	test_statements();
	if (key && other)
		test_envelopes(key, other);
	else
		ok(0, "keys for the envelope tests");
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("could not remove %s", tmpdir);
	}
	return done_testing();
}
