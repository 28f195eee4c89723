/*
 * sigv4.h - AWS Signature Version 4 (header-based, "AWS4-HMAC-SHA256").
 *
 * Builds the canonical request, the string to sign and the Authorization
 * header value exactly as AWS documents it ("Create a canonical request for
 * Signature Version 4"), for any service except S3 (whose paths are neither
 * normalized nor encoded a second time; not supported here).
 *
 * Tested byte for byte against the AWS SigV4 test suite
 * (tests/fixtures/sigv4/aws4_testsuite) and against botocore's SigV4Auth
 * (tests/cli/test_sigv4_botocore.sh).
 */
#ifndef BURST_SIGV4_H
#define BURST_SIGV4_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"

struct sigv4_header {
	const char *name;
	const char *value;
};

struct sigv4_request {
	const char *method;     /* "GET", "POST" */
	/* Raw path as sent on the wire, e.g. "/" or "/example space/"; the
	 * signer normalizes it (dot segments, "//") and URI-encodes each
	 * segment once more, as AWS requires for every service but S3. */
	const char *path;
	/* Raw query string without '?', may be NULL or "". Each key and value
	 * is percent-decoded, then encoded again canonically, so properly
	 * encoded and raw (e.g. UTF-8) input both work. A '+' is a plus, not a
	 * space: build queries with sigv4_uri_encode(value, true). */
	const char *query;
	/* As sent; must include Host. X-Amz-Date is added if absent (if present
	 * it must equal amz_date). X-Amz-Security-Token is added when the
	 * credentials carry a session token and the headers do not. */
	const struct sigv4_header *headers;
	size_t nheaders;
	const void *body;
	size_t body_len;
};

struct sigv4_creds {
	const char *access_key;
	const char *secret_key;
	const char *session_token;   /* may be NULL */
};

/*
 * What to send. All strings are allocated (free with sigv4_result_free).
 *   authorization      value of the Authorization header
 *   amz_date           value of the X-Amz-Date header (send it if the
 *                      request did not carry it already)
 *   security_token     value of the X-Amz-Security-Token header to add, or
 *                      NULL when there is none to add (no session token, or
 *                      the request already carries the header)
 *   canonical_request, string_to_sign, signed_headers, signature
 *                      the intermediate steps, for debugging and tests
 */
struct sigv4_result {
	char *authorization;
	char *amz_date;
	char *canonical_request;
	char *string_to_sign;
	char *signed_headers;
	char *signature;
	char *security_token;
};

/*
 * Sign req with credentials c for service/region at amz_date (UTC,
 * "YYYYMMDDTHHMMSSZ"). Returns 0 and fills *out (caller frees it with
 * sigv4_result_free), or -1 with err set and *out zeroed.
 */
int sigv4_sign(const struct sigv4_request *req, const struct sigv4_creds *c,
	       const char *region, const char *service, const char *amz_date,
	       struct sigv4_result *out, burst_err_t *err);

/*
 * The signing key of the last (day, region, service, secret key) signed
 * for: the four HMACs that derive it are done once a day, not for every
 * request. It holds no copy of the secret key (a SHA-256 of it tells a
 * changed one). Zero it to start; one user at a time (the EC2 client's
 * worker); sigv4_key_cache_clear wipes it.
 */
struct sigv4_key_cache {
	bool valid;
	char scope[128];              /* "YYYYMMDD/region/service" */
	unsigned char secret_sum[32];
	unsigned char key[32];
};
/* sigv4_sign with a signing key cache (NULL: none). */
int sigv4_sign_cached(const struct sigv4_request *req, const struct sigv4_creds *c,
		      const char *region, const char *service, const char *amz_date,
		      struct sigv4_key_cache *kc, struct sigv4_result *out, burst_err_t *err);
void sigv4_key_cache_clear(struct sigv4_key_cache *kc);

/* Frees the strings of r and zeroes it; r may be NULL or zeroed. */
void sigv4_result_free(struct sigv4_result *r);

/*
 * URI-encodes s as SigV4 wants it: the RFC 3986 unreserved characters
 * A-Z a-z 0-9 - . _ ~ are kept, every other byte becomes %XX (upper-case
 * hex); '/' is kept unless encode_slash. Returns a new string; caller frees.
 */
char *sigv4_uri_encode(const char *s, bool encode_slash);

/* out = lower-case hex SHA-256 of data[0..len), NUL-terminated. */
void sigv4_sha256_hex(const void *data, size_t len, char out[65]);

#endif
