/*
 * sigv4.c - AWS Signature Version 4 signing (see sigv4.h).
 *
 * The four steps, as AWS documents them:
 *   1. canonical request: METHOD \n URI \n QUERY \n HEADERS \n SIGNED \n
 *      hex(sha256(body))
 *   2. string to sign: "AWS4-HMAC-SHA256" \n date \n scope \n
 *      hex(sha256(canonical request)), scope = YYYYMMDD/region/service/aws4_request
 *   3. signing key: HMAC chain "AWS4"+secret -> date -> region -> service ->
 *      "aws4_request"
 *   4. signature = hex(HMAC(signing key, string to sign))
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "sigv4.h"
#include "strutil.h"

#define SIGV4_ALGO "AWS4-HMAC-SHA256"

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Appends the SigV4 URI encoding of s[0..n) to sb. */
static void uri_encode_n(struct strbuf *sb, const char *s, size_t n, bool encode_slash)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_unreserved(c) || (c == '/' && !encode_slash)) {
			sb_addc(sb, (char)c);
		} else {
			static const char digits[] = "0123456789ABCDEF";
			char e[3] = { '%', digits[c >> 4], digits[c & 0xf] };
			sb_addn(sb, e, 3);
		}
	}
}

char *sigv4_uri_encode(const char *s, bool encode_slash)
{
	struct strbuf sb;

	sb_init(&sb);
	uri_encode_n(&sb, s, strlen(s), encode_slash);
	return sb_take(&sb);
}

static void hex(const unsigned char *md, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 0xf];
	}
	out[2 * n] = '\0';
}

/*
 * SHA-256, fetched from OpenSSL once: EVP_sha256() in a call makes
 * OpenSSL 3 look the algorithm up again each time (and HMAC() a MAC as
 * well), which cost more than the hashing of a request. A fetched EVP_MD
 * may be used by every thread at once.
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	if (!sha256_md)
		abort();   /* a built-in digest: only when out of memory */
	return sha256_md;
}

/* md (32 bytes) = SHA-256 of the n parts p[i][0..len[i]). */
static void sha256_parts(const void *const *p, const size_t *len, size_t n, unsigned char md[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int mdlen = 0;
	size_t i;

	/* these fail only when out of memory */
	if (!ctx || !EVP_DigestInit_ex(ctx, sha256(), NULL))
		abort();
	for (i = 0; i < n; i++)
		if (!EVP_DigestUpdate(ctx, p[i], len[i]))
			abort();
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32)
		abort();
	EVP_MD_CTX_free(ctx);
}

void sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	const void *p[1] = { data ? data : "" };

	sha256_parts(p, &len, 1, md);
	hex(md, 32, out);
}

/* md (32 bytes) = HMAC-SHA256(key, data) (RFC 2104: SHA-256's block is
 * 64 bytes; a longer key is hashed first). */
static void hmac_sha256(const void *key, size_t keylen, const char *data, unsigned char md[32])
{
	unsigned char k[64], pad[64], inner[32];
	const void *p[2];
	size_t len[2], i;

	memset(k, 0, sizeof(k));
	if (keylen > sizeof(k)) {
		p[0] = key;
		sha256_parts(p, &keylen, 1, k);
	} else
		memcpy(k, key, keylen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	p[0] = pad;
	len[0] = sizeof(pad);
	p[1] = data;
	len[1] = strlen(data);
	sha256_parts(p, len, 2, inner);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	p[1] = inner;
	len[1] = sizeof(inner);
	sha256_parts(p, len, 2, md);
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
	OPENSSL_cleanse(inner, sizeof(inner));
}

/* ---- canonical URI ---- */

/*
 * Appends the canonical URI of the raw path: dot segments removed ("." is
 * dropped, ".." drops the segment before it), empty segments ("//")
 * collapsed, each segment URI-encoded once. A trailing '/' is kept when the
 * path has one and something is left ("/a/" stays, "//" becomes "/"); this
 * is what botocore does for non-S3 services.
 */
static void canonical_uri(struct strbuf *sb, const char *path)
{
	size_t plen = strlen(path), nseg = 0;
	const char **seg = xmalloc((plen / 2 + 1) * sizeof(*seg));
	size_t *seglen = xmalloc((plen / 2 + 1) * sizeof(*seglen));

	for (const char *p = path; *p; ) {
		size_t n = strcspn(p, "/");

		if (n == 1 && p[0] == '.') {
			/* "." : nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (nseg > 0)
				nseg--;
		} else if (n > 0) {
			seg[nseg] = p;
			seglen[nseg++] = n;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	sb_add(sb, "/");
	for (size_t i = 0; i < nseg; i++) {
		if (i > 0)
			sb_add(sb, "/");
		uri_encode_n(sb, seg[i], seglen[i], true);
	}
	if (nseg > 0 && plen > 0 && path[plen - 1] == '/')
		sb_add(sb, "/");
	free(seg);
	free(seglen);
}

/* ---- canonical query string ---- */

struct qparam {
	char *key, *value;   /* canonically encoded */
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s[0..n) ('+' stays '+'; a '%' not followed by two hex
 * digits stays literal), then returns its canonical encoding (caller frees). */
static char *recode(const char *s, size_t n)
{
	char *raw = xmalloc(n + 1);
	size_t len = 0;
	struct strbuf sb;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			raw[len++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			raw[len++] = s[i];
		}
	}
	sb_init(&sb);
	uri_encode_n(&sb, raw, len, true);
	free(raw);
	return sb_take(&sb);
}

static int qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->value, y->value);
}

/* Appends the canonical query: "k=v" pairs, each part decoded and encoded
 * again, sorted by key then value (byte order), joined by '&'. A key
 * without '=' gets an empty value ("k="); empty pieces ("a&&b") are skipped. */
static void canonical_query(struct strbuf *sb, const char *query)
{
	size_t cap = 1, n = 0;
	struct qparam *q;

	if (!query || !*query)
		return;
	for (const char *p = query; *p; p++)
		cap += *p == '&';
	q = xcalloc(cap, sizeof(*q));
	for (const char *p = query; *p; ) {
		size_t len = strcspn(p, "&");
		const char *eq = memchr(p, '=', len);

		if (len > 0) {
			size_t klen = eq ? (size_t)(eq - p) : len;

			q[n].key = recode(p, klen);
			q[n].value = eq ? recode(eq + 1, len - klen - 1) : xstrdup("");
			n++;
		}
		p += len;
		if (*p == '&')
			p++;
	}
	qsort(q, n, sizeof(*q), qparam_cmp);
	for (size_t i = 0; i < n; i++) {
		sb_addf(sb, "%s%s=%s", i ? "&" : "", q[i].key, q[i].value);
		free(q[i].key);
		free(q[i].value);
	}
	free(q);
}

/* ---- canonical headers ---- */

struct chdr {
	char *name;     /* lower case */
	char *value;    /* trimmed, whitespace runs collapsed to one space */
	size_t order;   /* position in the request: keeps duplicates in order */
};

static int chdr_cmp(const void *a, const void *b)
{
	const struct chdr *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* Trims v and collapses every run of whitespace (spaces, tabs, and the line
 * breaks of a folded multi-line value) into one space. Caller frees. */
static char *trimall(const char *v)
{
	struct strbuf sb;
	bool pending = false;

	sb_init(&sb);
	for (const char *p = v; *p; p++) {
		if (isspace((unsigned char)*p)) {
			pending = sb.len > 0;
			continue;
		}
		if (pending)
			sb_addc(&sb, ' ');
		pending = false;
		sb_addc(&sb, *p);
	}
	return sb_take(&sb);
}

static bool valid_header_name(const char *n)
{
	if (!*n)
		return false;
	for (const unsigned char *p = (const unsigned char *)n; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == ':')
			return false;
	return true;
}

static bool valid_amz_date(const char *d)
{
	if (strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && !isdigit((unsigned char)d[i]))
			return false;
	return true;
}

/* A credential-scope part (region, service): non-empty, no '/' or space. */
static bool valid_scope_part(const char *s)
{
	return s && *s && !strpbrk(s, "/ \t\r\n");
}

void sigv4_result_free(struct sigv4_result *r)
{
	if (!r)
		return;
	free(r->authorization);
	free(r->amz_date);
	free(r->canonical_request);
	free(r->string_to_sign);
	free(r->signed_headers);
	free(r->signature);
	free(r->security_token);
	memset(r, 0, sizeof(*r));
}

void sigv4_key_cache_clear(struct sigv4_key_cache *kc)
{
	if (kc)
		OPENSSL_cleanse(kc, sizeof(*kc));
}

/* The signing key for date8/region/service into k (from kc when it has it;
 * kc then has it). */
static void signing_key(const char *secret, const char *date8, const char *region, const char *service,
			struct sigv4_key_cache *kc, unsigned char k[32])
{
	struct strbuf key;
	unsigned char k1[32], sum[32];
	char scope[sizeof(kc->scope)];
	bool cacheable = false;

	if (kc) {
		const void *p[1] = { secret };
		size_t len = strlen(secret);
		int n = snprintf(scope, sizeof(scope), "%s/%s/%s", date8, region, service);
		cacheable = n > 0 && (size_t)n < sizeof(scope);
		sha256_parts(p, &len, 1, sum);
		if (cacheable && kc->valid && !strcmp(kc->scope, scope) &&
		    !CRYPTO_memcmp(kc->secret_sum, sum, sizeof(sum))) {
			memcpy(k, kc->key, 32);
			OPENSSL_cleanse(sum, sizeof(sum));
			return;
		}
	}
	sb_init(&key);
	sb_addf(&key, "AWS4%s", secret);
	hmac_sha256(key.s, key.len, date8, k);
	hmac_sha256(k, 32, region, k1);
	hmac_sha256(k1, 32, service, k);
	hmac_sha256(k, 32, "aws4_request", k1);
	memcpy(k, k1, 32);
	OPENSSL_cleanse(key.s, key.len);
	sb_free(&key);
	OPENSSL_cleanse(k1, sizeof(k1));
	if (cacheable) {
		kc->valid = true;
		memcpy(kc->scope, scope, sizeof(scope));
		memcpy(kc->secret_sum, sum, sizeof(sum));
		memcpy(kc->key, k, 32);
	}
	OPENSSL_cleanse(sum, sizeof(sum));
}

int sigv4_sign(const struct sigv4_request *req, const struct sigv4_creds *c,
	       const char *region, const char *service, const char *amz_date,
	       struct sigv4_result *out, burst_err_t *err)
{
	return sigv4_sign_cached(req, c, region, service, amz_date, NULL, out, err);
}

int sigv4_sign_cached(const struct sigv4_request *req, const struct sigv4_creds *c,
		      const char *region, const char *service, const char *amz_date,
		      struct sigv4_key_cache *kc, struct sigv4_result *out, burst_err_t *err)
{
	struct chdr *h = NULL;
	size_t nh = 0;
	bool have_host = false, have_date = false, have_token = false;
	struct strbuf creq, sts, signed_h;
	char payload[65], creq_hash[65], sig[65];
	unsigned char k1[32], k2[32];
	char date8[9];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	sb_init(&creq);
	sb_init(&sts);
	sb_init(&signed_h);

	if (!req->method || !*req->method || strpbrk(req->method, " \t\r\n")) {
		burst_err_set(err, "sigv4: the request has no valid HTTP method ('%s')",
			      req->method ? req->method : "(null)");
		goto out;
	}
	if (!req->path || req->path[0] != '/') {
		burst_err_set(err, "sigv4: the request path '%s' does not start with '/'; "
			      "pass the path as sent, e.g. \"/\"", req->path ? req->path : "(null)");
		goto out;
	}
	if (!amz_date || !valid_amz_date(amz_date)) {
		burst_err_set(err, "sigv4: the signing time '%s' is not a UTC time of the form "
			      "YYYYMMDDTHHMMSSZ (e.g. 20150830T123600Z)", amz_date ? amz_date : "(null)");
		goto out;
	}
	if (!valid_scope_part(region) || !valid_scope_part(service)) {
		burst_err_set(err, "sigv4: region '%s' and service '%s' must be non-empty and "
			      "without '/' or spaces", region ? region : "(null)",
			      service ? service : "(null)");
		goto out;
	}
	if (!c || !c->access_key || !*c->access_key || !c->secret_key || !*c->secret_key) {
		burst_err_set(err, "sigv4: no AWS access key or secret key to sign with; "
			      "check the credentials configured for the AWS provider");
		goto out;
	}

	/* 1. canonical headers: lower-case names, trimmed values; the
	 * X-Amz-Date and X-Amz-Security-Token headers are added if missing. */
	h = xcalloc(req->nheaders + 2, sizeof(*h));
	for (size_t i = 0; i < req->nheaders; i++) {
		const struct sigv4_header *in = &req->headers[i];
		struct chdr *cur = &h[nh];

		if (!in->name || !valid_header_name(in->name) || !in->value) {
			burst_err_set(err, "sigv4: request header %zu ('%s') has an invalid name "
				      "or no value", i + 1, in->name ? in->name : "(null)");
			goto out;
		}
		cur->name = xstrdup(in->name);
		for (char *p = cur->name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		cur->value = trimall(in->value);
		cur->order = nh++;
		if (strcmp(cur->name, "authorization") == 0) {
			burst_err_set(err, "sigv4: the request already carries an Authorization "
				      "header; sign the request without it");
			goto out;
		}
		have_host |= strcmp(cur->name, "host") == 0;
		if (strcmp(cur->name, "x-amz-date") == 0) {
			have_date = true;
			if (strcmp(cur->value, amz_date) != 0) {
				burst_err_set(err, "sigv4: the request's X-Amz-Date header '%s' differs "
					      "from the signing time '%s'", cur->value, amz_date);
				goto out;
			}
		}
		if (strcmp(cur->name, "x-amz-security-token") == 0) {
			have_token = true;
			if (c->session_token && strcmp(cur->value, c->session_token) != 0) {
				burst_err_set(err, "sigv4: the request's X-Amz-Security-Token header "
					      "differs from the credentials' session token");
				goto out;
			}
		}
	}
	if (!have_host) {
		burst_err_set(err, "sigv4: the request has no Host header; SigV4 must sign it");
		goto out;
	}
	if (!have_date) {
		h[nh].name = xstrdup("x-amz-date");
		h[nh].value = xstrdup(amz_date);
		h[nh].order = nh;
		nh++;
	}
	if (c->session_token && !have_token) {
		h[nh].name = xstrdup("x-amz-security-token");
		h[nh].value = trimall(c->session_token);
		h[nh].order = nh;
		nh++;
		out->security_token = xstrdup(c->session_token);
	}
	qsort(h, nh, sizeof(*h), chdr_cmp);

	sb_addf(&creq, "%s\n", req->method);
	canonical_uri(&creq, req->path);
	sb_add(&creq, "\n");
	canonical_query(&creq, req->query);
	sb_add(&creq, "\n");
	for (size_t i = 0; i < nh; i++) {
		bool dup = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;

		/* duplicates: one line, values joined by ',' in request order */
		if (dup)
			sb_addf(&creq, ",%s", h[i].value);
		else
			sb_addf(&creq, "%s%s:%s", i ? "\n" : "", h[i].name, h[i].value);
		if (!dup)
			sb_addf(&signed_h, "%s%s", i ? ";" : "", h[i].name);
	}
	sigv4_sha256_hex(req->body, req->body ? req->body_len : 0, payload);
	sb_addf(&creq, "\n\n%s\n%s", signed_h.s, payload);

	/* 2. string to sign */
	memcpy(date8, amz_date, 8);
	date8[8] = '\0';
	sigv4_sha256_hex(creq.s, creq.len, creq_hash);
	sb_addf(&sts, SIGV4_ALGO "\n%s\n%s/%s/%s/aws4_request\n%s",
		amz_date, date8, region, service, creq_hash);

	/* 3. signing key, 4. signature */
	signing_key(c->secret_key, date8, region, service, kc, k2);
	hmac_sha256(k2, 32, sts.s, k1);
	hex(k1, 32, sig);

	{
		struct strbuf a;

		sb_init(&a);
		sb_addf(&a, SIGV4_ALGO " Credential=%s/%s/%s/%s/aws4_request, "
			"SignedHeaders=%s, Signature=%s",
			c->access_key, date8, region, service, signed_h.s, sig);
		out->authorization = sb_take(&a);
	}
	out->amz_date = xstrdup(amz_date);
	out->canonical_request = sb_take(&creq);
	out->string_to_sign = sb_take(&sts);
	out->signed_headers = sb_take(&signed_h);
	out->signature = xstrdup(sig);
	rc = 0;
out:
	if (rc != 0)
		sigv4_result_free(out);
	for (size_t i = 0; i < nh; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
	sb_free(&creq);
	sb_free(&sts);
	sb_free(&signed_h);
	/* the secret key material */
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k2, sizeof(k2));
	return rc;
}
