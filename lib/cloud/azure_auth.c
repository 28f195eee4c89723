/*
 * azure_auth.c - Entra ID tokens: a client secret, a certificate's signed
 * assertion, or the managed identity through IMDS (azure_auth.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "azure_auth.h"
#include "httpc.h"
#include "strutil.h"

const char *az_class_name(enum az_class c)
{
	static const char *const n[] = { "ok", "capacity", "quota", "throttled", "transient", "permanent",
					 "auth", "not-found" };
	return (unsigned)c < sizeof(n) / sizeof(n[0]) ? n[c] : "?";
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void az_creds_free(struct az_creds *c)
{
	if (!c)
		return;
	free(c->tenant);
	free(c->client_id);
	wipe_free(c->secret);
	free(c->cert_path);
	free(c->authority);
	free(c->source);
	memset(c, 0, sizeof(*c));
}

void az_creds_managed(struct az_creds *out)
{
	memset(out, 0, sizeof(*out));
	out->managed = true;
	out->source = xstrdup("the VM's managed identity");
}

/* A file holding a secret: the running user's, not group's or others'. */
static int private_file(int fd, const char *what, const char *path, burst_err_t *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		burst_err_set(err, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid()) {
		burst_err_set(err, "%s %s is owned by uid %u, not by the agent's user (uid %u); refusing to use "
			      "it. Run: chown %u %s", what, path, (unsigned)st.st_uid, (unsigned)geteuid(),
			      (unsigned)geteuid(), path);
		return -1;
	}
	if (st.st_mode & 077) {
		burst_err_set(err, "%s %s has mode %04o: group or others can read or change it; refusing to use "
			      "it. Run: chmod 600 %s", what, path, (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	return 0;
}

int az_creds_from_file(const char *path, struct az_creds *out, burst_err_t *err)
{
	FILE *f;
	char *line = NULL, *mi = NULL;
	size_t cap = 0;
	int lineno = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f) {
		burst_err_set(err, "Azure credentials file %s: %s", path, strerror(errno));
		return -1;
	}
	if (private_file(fileno(f), "Azure credentials file", path, err) < 0)
		goto out;
	while (getline(&line, &cap, f) > 0) {
		char *s = str_trim(line), *eq, *val, **dst = NULL;
		size_t vl;

		lineno++;
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "export ", 7))
			s = str_trim(s + 7);
		eq = strchr(s, '=');
		if (!eq) {
			burst_err_set(err, "%s:%d: expected AZURE_NAME=VALUE", path, lineno);
			goto out;
		}
		*eq = '\0';
		val = eq + 1;
		vl = strlen(val);
		if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
			val[vl - 1] = '\0';
			val++;
		}
		if (!strcmp(s, "AZURE_TENANT_ID"))
			dst = &out->tenant;
		else if (!strcmp(s, "AZURE_CLIENT_ID"))
			dst = &out->client_id;
		else if (!strcmp(s, "AZURE_CLIENT_SECRET"))
			dst = &out->secret;
		else if (!strcmp(s, "AZURE_CLIENT_CERTIFICATE_PATH"))
			dst = &out->cert_path;
		else if (!strcmp(s, "AZURE_AUTHORITY_HOST"))
			dst = &out->authority;
		else if (!strcmp(s, "AZURE_MANAGED_IDENTITY"))
			dst = &mi;
		else if (!strcmp(s, "AZURE_SUBSCRIPTION_ID"))
			continue;   /* burst.conf's Subscription= says it */
		else {
			burst_err_set(err, "%s:%d: unknown name %s (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, "
				      "AZURE_CLIENT_CERTIFICATE_PATH, AZURE_AUTHORITY_HOST, AZURE_MANAGED_IDENTITY)",
				      path, lineno, s);
			goto out;
		}
		wipe_free(*dst);
		*dst = xstrdup(val);
	}
	if (mi) {
		if (!str_ieq(mi, "yes") && !str_ieq(mi, "true") && !str_ieq(mi, "no") && !str_ieq(mi, "false")) {
			burst_err_set(err, "Azure credentials file %s: AZURE_MANAGED_IDENTITY=%s: want yes or no", path, mi);
			goto out;
		}
		out->managed = str_ieq(mi, "yes") || str_ieq(mi, "true");
	}
	if (!out->managed) {
		if (!out->tenant || !out->client_id) {
			burst_err_set(err, "Azure credentials file %s needs AZURE_TENANT_ID and AZURE_CLIENT_ID (a service "
				      "principal), or AZURE_MANAGED_IDENTITY=yes", path);
			goto out;
		}
		if (!out->secret == !out->cert_path) {
			burst_err_set(err, "Azure credentials file %s needs one of AZURE_CLIENT_SECRET and "
				      "AZURE_CLIENT_CERTIFICATE_PATH", path);
			goto out;
		}
		if (strspn(out->tenant, "abcdefABCDEF0123456789-.") != strlen(out->tenant) || !*out->tenant) {
			burst_err_set(err, "Azure credentials file %s: AZURE_TENANT_ID is not a tenant id or domain", path);
			goto out;
		}
	}
	if (!out->authority)
		out->authority = xstrdup(AZ_DEFAULT_AUTHORITY);
	{
		size_t l = strlen(out->authority);
		while (l && out->authority[l - 1] == '/')
			out->authority[--l] = '\0';
	}
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "file %s", path);
		out->source = sb_take(&sb);
	}
	rc = 0;
out:
	if (line) {
		explicit_bzero(line, cap);
		free(line);
	}
	free(mi);
	fclose(f);
	if (rc < 0)
		az_creds_free(out);
	return rc;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int az_token_parse(const char *json, time_t now, char **token, time_t *expires, burst_err_t *err)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *v;
	const char *t;
	long long life = -1, on = -1;

	*token = NULL;
	if (!root || !json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		burst_err_set(err, "the token answer is not a JSON object");
		return -1;
	}
	t = jstr(root, "access_token");
	if (json_object_object_get_ex(root, "expires_in", &v)) {
		if (json_object_is_type(v, json_type_int))
			life = json_object_get_int64(v);
		else if (json_object_is_type(v, json_type_string))
			life = strtoll(json_object_get_string(v), NULL, 10);
	}
	if (json_object_object_get_ex(root, "expires_on", &v) && json_object_is_type(v, json_type_string))
		on = strtoll(json_object_get_string(v), NULL, 10);
	if (!t || !*t || (life <= 0 && on <= now)) {
		json_object_put(root);
		burst_err_set(err, "the token answer has no access_token or no expiry");
		return -1;
	}
	if (jstr(root, "token_type") && strcasecmp(jstr(root, "token_type"), "Bearer")) {
		burst_err_set(err, "the token answer's token_type is %.32s, not Bearer", jstr(root, "token_type"));
		json_object_put(root);
		return -1;
	}
	*token = xstrdup(t);
	*expires = life > 0 ? now + (time_t)life : (time_t)on;
	json_object_put(root);
	return 0;
}

/* base64url without padding */
static char *b64url(const unsigned char *p, size_t n)
{
	char *out = xmalloc(4 * ((n + 2) / 3) + 1);
	size_t i, j = 0;

	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
	for (i = 0; out[i]; i++) {
		if (out[i] == '=')
			break;
		out[j++] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	}
	out[j] = '\0';
	return out;
}

char *az_client_assertion(const char *pem_path, const char *client_id, const char *token_url, time_t now,
			  burst_err_t *err)
{
	FILE *f = fopen(pem_path, "re");
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	EVP_MD_CTX *md = NULL;
	unsigned char *der = NULL, thumb[SHA_DIGEST_LENGTH], jti[16], *sig = NULL;
	char *h64 = NULL, *p64 = NULL, *s64 = NULL, *x5t = NULL, *out = NULL, id[40];
	struct strbuf hdr, pay, sin;
	size_t siglen = 0;
	int dlen;

	if (!f) {
		burst_err_set(err, "Azure client certificate %s: %s", pem_path, strerror(errno));
		return NULL;
	}
	if (private_file(fileno(f), "Azure client certificate", pem_path, err) < 0) {
		fclose(f);
		return NULL;
	}
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	rewind(f);
	cert = PEM_read_X509(f, NULL, NULL, NULL);   /* each skips the other's block, in either order */
	fclose(f);
	if (!key || !cert) {
		burst_err_set(err, "Azure client certificate %s: %s", pem_path,
			      !key ? "no private key (want a PEM file with the key and the certificate)"
				   : "no certificate (want a PEM file with the key and the certificate)");
		goto done;
	}
	if (EVP_PKEY_base_id(key) != EVP_PKEY_RSA) {
		burst_err_set(err, "Azure client certificate %s: the key is not RSA (Entra ID signs client assertions "
			      "with RS256)", pem_path);
		goto done;
	}
	dlen = i2d_X509(cert, &der);
	if (dlen <= 0) {
		burst_err_set(err, "Azure client certificate %s: cannot encode the certificate", pem_path);
		goto done;
	}
	SHA1(der, (size_t)dlen, thumb);
	x5t = b64url(thumb, sizeof(thumb));
	RAND_bytes(jti, sizeof(jti));
	jti[6] = (jti[6] & 0x0f) | 0x40;
	jti[8] = (jti[8] & 0x3f) | 0x80;
	snprintf(id, sizeof(id), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", jti[0],
		 jti[1], jti[2], jti[3], jti[4], jti[5], jti[6], jti[7], jti[8], jti[9], jti[10], jti[11], jti[12],
		 jti[13], jti[14], jti[15]);
	sb_init(&hdr);
	sb_addf(&hdr, "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"x5t\":\"%s\"}", x5t);
	sb_init(&pay);
	{
		json_object *o = json_object_new_object();
		json_object_object_add(o, "aud", json_object_new_string(token_url));
		json_object_object_add(o, "iss", json_object_new_string(client_id));
		json_object_object_add(o, "sub", json_object_new_string(client_id));
		json_object_object_add(o, "jti", json_object_new_string(id));
		json_object_object_add(o, "nbf", json_object_new_int64((int64_t)now));
		json_object_object_add(o, "iat", json_object_new_int64((int64_t)now));
		json_object_object_add(o, "exp", json_object_new_int64((int64_t)now + 600));
		sb_add(&pay, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	h64 = b64url((const unsigned char *)hdr.s, hdr.len);
	p64 = b64url((const unsigned char *)pay.s, pay.len);
	sb_free(&hdr);
	sb_free(&pay);
	sb_init(&sin);
	sb_addf(&sin, "%s.%s", h64, p64);
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)sin.s, sin.len) != 1 ||
	    !(sig = xmalloc(siglen)) ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)sin.s, sin.len) != 1) {
		burst_err_set(err, "Azure client certificate %s: signing the assertion failed", pem_path);
		sb_free(&sin);
		goto done;
	}
	s64 = b64url(sig, siglen);
	sb_addf(&sin, ".%s", s64);
	out = sb_take(&sin);
done:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	X509_free(cert);
	OPENSSL_free(der);
	free(sig);
	free(h64);
	free(p64);
	free(s64);
	free(x5t);
	return out;
}

/* ---- the client ---- */

struct az_auth {
	struct az_creds c;
	char *imds, *ca_file;
	bool allow_http;
	long timeout_ms;
	CURL *curl;
	char *token;
	time_t issued, expires;
	unsigned ntokens;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

struct az_auth *az_auth_new(const struct az_auth_opts *o, burst_err_t *err)
{
	struct az_auth *a;
	const char *auth = o->creds->authority ? o->creds->authority : AZ_DEFAULT_AUTHORITY;

	if (!o->creds->managed && strncmp(auth, "https://", 8) && !(o->allow_http && !strncmp(auth, "http://", 7))) {
		burst_err_set(err, "AZURE_AUTHORITY_HOST=%s (%s): want an https:// URL", auth,
			      o->creds->source ? o->creds->source : "");
		return NULL;
	}
	a = xcalloc(1, sizeof(*a));
	a->c.tenant = dup_or_null(o->creds->tenant);
	a->c.client_id = dup_or_null(o->creds->client_id);
	a->c.secret = dup_or_null(o->creds->secret);
	a->c.cert_path = dup_or_null(o->creds->cert_path);
	a->c.authority = xstrdup(auth);
	a->c.managed = o->creds->managed;
	a->c.source = dup_or_null(o->creds->source);
	a->imds = xstrdup(o->imds ? o->imds : AZ_DEFAULT_IMDS);
	{
		size_t l = strlen(a->imds);
		while (l && a->imds[l - 1] == '/')
			a->imds[--l] = '\0';
	}
	a->ca_file = dup_or_null(o->ca_file);
	a->allow_http = o->allow_http;
	a->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
	return a;
}

void az_auth_free(struct az_auth *a)
{
	if (!a)
		return;
	az_creds_free(&a->c);
	free(a->imds);
	free(a->ca_file);
	wipe_free(a->token);
	if (a->curl)
		curl_easy_cleanup(a->curl);
	free(a);
}

void az_auth_invalidate(struct az_auth *a)
{
	wipe_free(a->token);
	a->token = NULL;
}

unsigned az_auth_tokens(const struct az_auth *a)
{
	return a->ntokens;
}

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
	struct strbuf *b = ud;

	if (b->len + sz * n > 1u << 20)
		return 0;   /* no token answer is a megabyte */
	{
		char *chunk = xstrndup(p, sz * n);
		sb_add(b, chunk);
		free(chunk);
	}
	return sz * n;
}

/* Entra's error_description (its first line), or IMDS's error, escaped; or NULL. */
static char *entra_error(const char *json)
{
	json_object *root = json ? json_tokener_parse(json) : NULL;
	const char *m = NULL;
	char *out = NULL;

	if (root && json_object_is_type(root, json_type_object)) {
		m = jstr(root, "error_description");
		if (!m)
			m = jstr(root, "error");
	}
	if (m) {
		char *nl, *t = xstrdup(m);
		if ((nl = strstr(t, "\r\n")) || (nl = strchr(t, '\n')))
			*nl = '\0';
		out = str_escape_ctl(t);
		free(t);
	}
	json_object_put(root);
	return out;
}

const char *az_auth_token(struct az_auth *a, enum az_class *cls, burst_err_t *err)
{
	time_t now = time(NULL), margin;
	struct curl_slist *h = NULL;
	struct strbuf body, ans, url;
	char cerr[CURL_ERROR_SIZE] = "", *assertion = NULL;
	long st = 0;
	CURLcode rc;

	*cls = AZ_OK;
	if (a->token) {
		margin = (a->expires - a->issued) / 2;
		if (margin > AZ_TOKEN_MARGIN)
			margin = AZ_TOKEN_MARGIN;
		if (now + margin < a->expires)
			return a->token;
		az_auth_invalidate(a);
	}
	sb_init(&body);
	sb_init(&ans);
	sb_init(&url);
	if (!a->curl)
		a->curl = curl_easy_init();
	curl_easy_reset(a->curl);
	if (a->c.managed) {
		char *res = curl_easy_escape(a->curl, AZ_ARM_RESOURCE, 0);
		sb_addf(&url, "%s/metadata/identity/oauth2/token?api-version=2018-02-01&resource=%s", a->imds, res);
		curl_free(res);
		if (a->c.client_id) {
			char *cid = curl_easy_escape(a->curl, a->c.client_id, 0);
			sb_addf(&url, "&client_id=%s", cid);
			curl_free(cid);
		}
		h = curl_slist_append(h, "Metadata: true");
		httpc_common(a->curl, NULL, 2000L, a->timeout_ms);
		curl_easy_setopt(a->curl, CURLOPT_NOPROXY, "*");
	} else {
		char *e;
		sb_addf(&url, "%s/%s/oauth2/v2.0/token", a->c.authority, a->c.tenant);
		sb_add(&body, "grant_type=client_credentials&client_id=");
		e = curl_easy_escape(a->curl, a->c.client_id, 0);
		sb_add(&body, e);
		curl_free(e);
		e = curl_easy_escape(a->curl, AZ_ARM_SCOPE, 0);
		sb_addf(&body, "&scope=%s", e);
		curl_free(e);
		if (a->c.secret) {
			e = curl_easy_escape(a->curl, a->c.secret, 0);
			sb_addf(&body, "&client_secret=%s", e);
			explicit_bzero(e, strlen(e));
			curl_free(e);
		} else {
			assertion = az_client_assertion(a->c.cert_path, a->c.client_id, url.s, now, err);
			if (!assertion) {
				*cls = AZ_AUTH;
				goto out;
			}
			sb_addf(&body, "&client_assertion_type=%s&client_assertion=%s",
				"urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer", assertion);
		}
		httpc_common(a->curl, a->ca_file, 5000L, a->timeout_ms);
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, body.s);
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
		h = curl_slist_append(h, "Content-Type: application/x-www-form-urlencoded");
	}
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(a->curl, CURLOPT_URL, url.s);
	curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(a->curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(a->curl, CURLOPT_WRITEDATA, &ans);
	curl_easy_setopt(a->curl, CURLOPT_ERRORBUFFER, cerr);
	a->ntokens++;
	rc = curl_easy_perform(a->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &st);
	curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, NULL);
	if (rc != CURLE_OK) {
		*cls = AZ_TRANSIENT;
		burst_err_set(err, "token from %s for %s: %s", a->c.managed ? "the instance metadata service" : "Entra ID",
			      a->c.managed ? "the managed identity" : a->c.source, cerr[0] ? cerr : curl_easy_strerror(rc));
		goto out;
	}
	if (st != 200) {
		char *why = entra_error(ans.s);
		*cls = st == 429 ? AZ_THROTTLED : st >= 500 ? AZ_TRANSIENT : AZ_AUTH;
		if (a->c.managed)
			burst_err_set(err, "the instance metadata service refused a token for the managed identity: "
				      "HTTP %ld: %s", st, why ? why : "(no message)");
		else
			burst_err_set(err, "Entra ID (tenant %s) refused the client %s (%s from %s): HTTP %ld: %s",
				      a->c.tenant, a->c.client_id, a->c.secret ? "client secret" : "certificate",
				      a->c.source, st, why ? why : "(no message)");
		free(why);
		goto out;
	}
	{
		char *tok = NULL;
		time_t exp = 0;
		burst_err_t perr;
		if (az_token_parse(ans.s, now, &tok, &exp, &perr) < 0) {
			*cls = AZ_TRANSIENT;
			burst_err_set(err, "token from %s: %s", a->c.managed ? "the instance metadata service" : "Entra ID",
				      perr.msg);
			goto out;
		}
		a->token = tok;
		a->issued = now;
		a->expires = exp;
	}
out:
	if (body.s)
		explicit_bzero(body.s, body.len);
	sb_free(&body);
	if (ans.s)
		explicit_bzero(ans.s, ans.len);
	sb_free(&ans);
	sb_free(&url);
	if (assertion)
		wipe_free(assertion);
	curl_slist_free_all(h);
	return a->token;
}
