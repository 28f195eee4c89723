/*
 * test_sigv4.c - AWS Signature Version 4 against the AWS SigV4 test suite
 * (tests/fixtures/sigv4/aws4_testsuite, see its SOURCES.md), plus the
 * helpers and the errors of lib/cloud/sigv4.c.
 *
 * Every case is a directory NAME holding NAME.req (the request to sign),
 * NAME.creq (canonical request), NAME.sts (string to sign), NAME.authz
 * (Authorization value) and NAME.sreq (the signed request); some sit in
 * group folders (normalize-path/, post-sts-token/). All are found by walking
 * the tree, and each is signed with the suite's fixed parameters: key
 * AKIDEXAMPLE, region us-east-1, service "service", the time of the
 * request's X-Amz-Date header.
 *
 * Session tokens: get-vanilla-with-session-token's .req carries no token;
 * its .sreq shows the X-Amz-Security-Token the signer adds, so the token is
 * taken from there. post-sts-header-before carries the header in its .req
 * (signed as it is). post-sts-header-after is signed without a token: per
 * post-sts-token/readme.txt the header is added only after signing.
 *
 * The signing key cache (sigv4_sign_cached): every signature of a series
 * through one cache (the same day, another day, region, service, secret
 * key, a key longer than SHA-256's block) is checked against one computed
 * here with OpenSSL's own HMAC.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sigv4.h"
#include "sigv4_req.h"
#include "strutil.h"
#include "tap.h"

#define SUITE_CASES 34

static const struct sigv4_creds suite_creds = {
	"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", NULL
};

static int ncases;

/* dir/name/name.EXT, read whole; NULL if missing. Caller frees. */
static char *case_file(const char *dir, const char *name, const char *ext)
{
	char path[4096];
	size_t len;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	return slurp(path, &len);
}

static void run_case(const char *dir, const char *name, const char *rel)
{
	char *req = case_file(dir, name, "req"), *creq = case_file(dir, name, "creq");
	char *sts = case_file(dir, name, "sts"), *authz = case_file(dir, name, "authz");
	char *sreq_text = case_file(dir, name, "sreq");
	struct httpreq r, sreq;
	struct sigv4_creds creds = suite_creds;
	struct sigv4_result res = { 0 };
	burst_err_t err = { .msg = "" };
	char why[256];
	const char *date, *token = NULL;
	int rc;

	ncases++;
	if (!req || !creq || !sts || !authz || !sreq_text) {
		ok(0, "%s: all of .req .creq .sts .authz .sreq readable", rel);
		goto out;
	}
	if (httpreq_parse(req, strlen(req), &r, why, sizeof(why)) != 0) {
		ok(0, "%s: .req parses: %s", rel, why);
		goto out;
	}
	/* the token the signed request carries but the request lacks */
	if (httpreq_parse(sreq_text, strlen(sreq_text), &sreq, why, sizeof(why)) == 0) {
		if (!httpreq_header(&r, "X-Amz-Security-Token") &&
		    strcmp(name, "post-sts-header-after") != 0)
			token = httpreq_header(&sreq, "X-Amz-Security-Token");
		creds.session_token = token;
	} else {
		memset(&sreq, 0, sizeof(sreq));
	}
	date = httpreq_header(&r, "X-Amz-Date");
	rc = sigv4_sign(&r.req, &creds, "us-east-1", "service", date, &res, &err);
	if (!ok(rc == 0, "%s: signs", rel)) {
		diag("%s", err.msg);
	} else {
		is_str(res.canonical_request, creq, "%s: canonical request", rel);
		is_str(res.string_to_sign, sts, "%s: string to sign", rel);
		is_str(res.authorization, authz, "%s: Authorization", rel);
		if (token)
			is_str(res.security_token, token, "%s: X-Amz-Security-Token to add", rel);
	}
	sigv4_result_free(&res);
	httpreq_free(&sreq);
	httpreq_free(&r);
out:
	free(req);
	free(creq);
	free(sts);
	free(authz);
	free(sreq_text);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every case under dir: a subdirectory NAME holding NAME.req is a
 * case, any other subdirectory is searched in turn. */
static void walk(const char *dir, const char *rel)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (!d) {
		ok(0, "open %s", dir);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		char sub[4096], subrel[4096], req[8192];
		struct stat st;

		snprintf(sub, sizeof(sub), "%s/%s", dir, names[i]);
		snprintf(subrel, sizeof(subrel), "%s%s%s", rel, *rel ? "/" : "", names[i]);
		snprintf(req, sizeof(req), "%s/%s.req", sub, names[i]);
		if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (stat(req, &st) == 0)
				run_case(sub, names[i], subrel);
			else
				walk(sub, subrel);
		}
		free(names[i]);
	}
	free(names);
}

/* Signs a request for the error tests; returns sigv4_sign's result. */
static int sign_simple(const char *method, const char *path, const char *host,
		       const char *date, struct sigv4_result *res, burst_err_t *err)
{
	struct sigv4_header h[] = { { "Host", host } };
	struct sigv4_request req = { method, path, NULL, h, host ? 1 : 0, NULL, 0 };

	return sigv4_sign(&req, &suite_creds, "us-east-1", "ec2", date, res, err);
}

static void test_helpers(void)
{
	char *s, hash[65];

	s = sigv4_uri_encode("a b/c+d=\xc3\xa9~-._Z9%", false);
	is_str(s, "a%20b/c%2Bd%3D%C3%A9~-._Z9%25", "uri_encode keeps '/' and unreserved");
	free(s);
	s = sigv4_uri_encode("a b/c", true);
	is_str(s, "a%20b%2Fc", "uri_encode encodes '/' when asked");
	free(s);
	/* FIPS 180-2 test vectors */
	sigv4_sha256_hex("abc", 3, hash);
	is_str(hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256 abc");
	sigv4_sha256_hex(NULL, 0, hash);
	is_str(hash, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "sha256 empty");
}

/* Rules the suite does not cover, each expectation derived by hand. */
static void test_canonical_extras(void)
{
	struct sigv4_header h[] = { { "Host", "h" }, { "X-Amz-Date", "20260101T000000Z" } };
	struct sigv4_request req = { "GET", "/a/./b/../c//%41 d/", "b=2&a=%2f&a=1&c&&%7E=x+y", h, 2, NULL, 0 };
	struct sigv4_result res = { 0 };
	burst_err_t err = { .msg = "" };

	ok(sigv4_sign(&req, &suite_creds, "us-east-1", "ec2", "20260101T000000Z", &res, &err) == 0,
	   "extras: signs");
	/* '%' of the path as sent is encoded again (non-S3 double encoding);
	 * query parts are decoded then encoded, '+' literal, sorted */
	has_str(res.canonical_request, "GET\n/a/c/%2541%20d/\na=%2F&a=1&b=2&c=&~=x%2By\n",
		"extras: path normalized and encoded, query decoded, encoded and sorted");
	ok(res.security_token == NULL, "extras: no token to add without a session token");
	sigv4_result_free(&res);
}

static void test_errors(void)
{
	struct sigv4_result res = { 0 };
	burst_err_t err = { .msg = "" };

	ok(sign_simple("GET", "/", NULL, "20260101T000000Z", &res, &err) == -1 &&
	   res.authorization == NULL, "no Host header: error, nothing returned");
	has_str(err.msg, "no Host header", "no Host header: says so");
	ok(sign_simple("GET", "/", "h", "2026-01-01T00:00:00Z", &res, &err) == -1, "bad date: error");
	has_str(err.msg, "YYYYMMDDTHHMMSSZ", "bad date: says which form");
	ok(sign_simple("GET", "x", "h", "20260101T000000Z", &res, &err) == -1, "relative path: error");
	has_str(err.msg, "does not start with '/'", "relative path: says so");

	{
		struct sigv4_header h[] = { { "Host", "h" }, { "X-Amz-Date", "20250101T000000Z" } };
		struct sigv4_request req = { "GET", "/", NULL, h, 2, NULL, 0 };

		ok(sigv4_sign(&req, &suite_creds, "us-east-1", "ec2", "20260101T000000Z", &res,
			      &err) == -1, "X-Amz-Date differing from the signing time: error");
		has_str(err.msg, "differs from the signing time", "X-Amz-Date mismatch: says so");
	}
	{
		struct sigv4_creds none = { "AKID", "", NULL };
		struct sigv4_header h[] = { { "Host", "h" } };
		struct sigv4_request req = { "GET", "/", NULL, h, 1, NULL, 0 };

		ok(sigv4_sign(&req, &none, "us-east-1", "ec2", "20260101T000000Z", &res, &err) == -1,
		   "empty secret key: error");
		has_str(err.msg, "secret key", "empty secret key: says so");
	}
}

/* hex(HMAC chain of AWS4+secret over date8, region, service,
 * "aws4_request", then sts), with OpenSSL's HMAC: the signature expected. */
static void expected_sig(const char *secret, const char *date8, const char *region, const char *service,
			 const char *sts, char out[65])
{
	unsigned char k[EVP_MAX_MD_SIZE];
	unsigned int klen = 0;
	char *key = xmalloc(strlen(secret) + 5);
	const char *parts[] = { date8, region, service, "aws4_request", sts };

	sprintf(key, "AWS4%s", secret);
	HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)parts[0], strlen(parts[0]), k, &klen);
	for (size_t i = 1; i < sizeof(parts) / sizeof(parts[0]); i++) {
		unsigned char k2[EVP_MAX_MD_SIZE];
		unsigned int l2 = 0;
		HMAC(EVP_sha256(), k, (int)klen, (const unsigned char *)parts[i], strlen(parts[i]), k2, &l2);
		memcpy(k, k2, l2);
		klen = l2;
	}
	for (unsigned int i = 0; i < klen; i++)
		sprintf(out + 2 * i, "%02x", k[i]);
	free(key);
}

static void test_key_cache(void)
{
	static const char long_secret[] =
		"a-secret-key-longer-than-the-64-bytes-of-a-SHA-256-block-so-it-is-hashed-first";
	static const struct {
		const char *date, *region, *service, *secret;
	} seq[] = {
		{ "20260101T000000Z", "us-east-1", "ec2", "secretA" },
		{ "20260101T235959Z", "us-east-1", "ec2", "secretA" },   /* the cached key */
		{ "20260102T000000Z", "us-east-1", "ec2", "secretA" },   /* another day */
		{ "20260102T000001Z", "us-west-2", "ec2", "secretA" },   /* another region */
		{ "20260102T000002Z", "us-west-2", "sts", "secretA" },   /* another service */
		{ "20260102T000003Z", "us-west-2", "sts", "secretB" },   /* another secret */
		{ "20260102T000004Z", "us-west-2", "sts", "secretA" },   /* the first again */
		{ "20260102T000005Z", "us-west-2", "sts", long_secret },
		{ "20260102T000006Z", "us-west-2", "sts", long_secret },
	};
	struct sigv4_key_cache kc;
	size_t i;

	memset(&kc, 0, sizeof(kc));
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		struct sigv4_creds cr = { "AKID", seq[i].secret, NULL };
		struct sigv4_header h[] = { { "Host", "ec2.example" } };
		struct sigv4_request req = { "POST", "/", NULL, h, 1, "Action=X", 8 };
		struct sigv4_result res = { 0 }, plain = { 0 };
		burst_err_t err = { .msg = "" };
		char date8[9], want[65];

		memcpy(date8, seq[i].date, 8);
		date8[8] = '\0';
		ok(sigv4_sign_cached(&req, &cr, seq[i].region, seq[i].service, seq[i].date, &kc, &res, &err) == 0 &&
		   sigv4_sign(&req, &cr, seq[i].region, seq[i].service, seq[i].date, &plain, &err) == 0,
		   "key cache %zu: signs", i);
		expected_sig(seq[i].secret, date8, seq[i].region, seq[i].service, res.string_to_sign, want);
		is_str(res.signature, want, "key cache %zu (%s %s %s): OpenSSL's HMAC chain's signature", i,
		       date8, seq[i].region, seq[i].service);
		is_str(plain.signature, want, "key cache %zu: the same without the cache", i);
		sigv4_result_free(&res);
		sigv4_result_free(&plain);
	}
	sigv4_key_cache_clear(&kc);
	ok(!kc.valid, "key cache: cleared");
}

int main(void)
{
	const char *top = getenv("BURST_TOP_SRCDIR");
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/sigv4/aws4_testsuite", top ? top : ".");
	walk(dir, "");
	ok(ncases >= SUITE_CASES, "ran %d of the suite's %d cases", ncases, SUITE_CASES);
	test_helpers();
	test_canonical_extras();
	test_errors();
	test_key_cache();
	return done_testing();
}
