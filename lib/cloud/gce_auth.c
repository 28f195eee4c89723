/*
 * gce_auth.c - access tokens for the Compute Engine API (gce_auth.h), and
 * the HTTP exchange gce.c shares (gce_int.h).
 */
#include "gce_auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "gce_int.h"
#include "httpc.h"
#include "strutil.h"

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void gce_redact(char *msg, size_t cap, const char *secret)
{
	static const char red[] = "[redacted]";
	size_t sl = secret ? strlen(secret) : 0, rl = sizeof(red) - 1;
	char *at, *from = msg;

	if (sl < 8)
		return;
	while ((at = strstr(from, secret))) {
		size_t head = (size_t)(at - msg), tail = strlen(at + sl);
		if (head + rl + tail + 1 > cap)
			tail = cap > head + rl + 1 ? cap - head - rl - 1 : 0;
		if (head + rl + 1 > cap) {
			/* no room for the mark: cut the message where the secret began */
			*at = '\0';
			return;
		}
		memmove(at + rl, at + sl, tail);
		memcpy(at, red, rl);
		at[rl + tail] = '\0';
		from = at + rl;
	}
}

/* ---- HTTP ---- */

bool gce_url_is_http(const char *url)
{
	return url && !strncasecmp(url, "http://", 7);
}

struct sink {
	struct gce_http_resp *rs;
};

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t l = sz * n;

	if (s->rs->body.len + l > (size_t)GCE_MAX_BODY) {
		s->rs->too_long = true;
		return 0;
	}
	if (memchr(p, '\0', l)) {
		/* no JSON answer holds a NUL: keep the text up to it */
		l = (size_t)((char *)memchr(p, '\0', l) - p);
		sb_addn(&s->rs->body, p, l);
		return sz * n;
	}
	sb_addn(&s->rs->body, p, l);
	return l;
}

static size_t header(char *p, size_t sz, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t l = sz * n;

	if (l >= 16 && !strncasecmp(p, "Metadata-Flavor:", 16)) {
		char *v = xstrndup(p + 16, l - 16);
		if (!strcmp(str_trim(v), "Google"))
			s->rs->flavor_google = true;
		free(v);
	}
	return l;
}

int gce_http(CURL *h, const struct gce_http_req *rq, struct gce_http_resp *rs, burst_err_t *err)
{
	struct curl_slist *hd = NULL, *i;
	char cerr[CURL_ERROR_SIZE] = "", line[4200];
	struct sink s = { rs };
	CURLcode rc;

	memset(rs, 0, sizeof(*rs));
	sb_init(&rs->body);
	curl_easy_reset(h);
	httpc_common(h, rq->ca_file, 5000L, rq->timeout_ms > 0 ? rq->timeout_ms : 30000L);
	hd = curl_slist_append(hd, "Accept: application/json");
	if (rq->body) {
		snprintf(line, sizeof(line), "Content-Type: %s", rq->content_type ? rq->content_type : "application/json");
		hd = curl_slist_append(hd, line);
	}
	/* no "Expect: 100-continue" wait on a large body */
	hd = curl_slist_append(hd, "Expect:");
	if (rq->metadata_flavor)
		hd = curl_slist_append(hd, "Metadata-Flavor: Google");
	if (rq->bearer) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s", rq->bearer);
		hd = curl_slist_append(hd, line);
		explicit_bzero(line, sizeof(line));
	}
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(rq->body));
	} else if (!strcmp(rq->method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	for (i = hd; i; i = i->next)
		explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(hd);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rs->status);
		return 0;
	}
	if (rs->too_long)
		burst_err_set(err, "%s %s: an answer longer than %ld bytes", rq->method, rq->url, GCE_MAX_BODY);
	else
		burst_err_set(err, "%s %s: %s", rq->method, rq->url, cerr[0] ? cerr : curl_easy_strerror(rc));
	rs->status = 0;
	return -1;
}

/* ---- the key file ---- */

void gce_key_free(struct gce_key *k)
{
	if (!k)
		return;
	free(k->client_email);
	wipe_free(k->private_key);
	free(k->private_key_id);
	free(k->token_uri);
	free(k->project_id);
	free(k->source);
	memset(k, 0, sizeof(*k));
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int gce_key_parse(const char *json, const char *path, struct gce_key *out, burst_err_t *err)
{
	static const char *const need[] = { "client_email", "private_key", NULL };
	json_tokener *tk;
	json_object *root;
	const char *type;
	size_t i;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	tk = json_tokener_new();
	root = json_tokener_parse_ex(tk, json, (int)strlen(json));
	if (!root || json_tokener_get_error(tk) != json_tokener_success ||
	    !json_object_is_type(root, json_type_object)) {
		json_tokener_free(tk);
		json_object_put(root);
		burst_err_set(err, "Google service-account key file %s is not a JSON object: give the key file "
			      "Google made (gcloud iam service-accounts keys create FILE --iam-account=EMAIL)", path);
		return -1;
	}
	json_tokener_free(tk);
	type = jstr(root, "type");
	if (!type || strcmp(type, "service_account")) {
		char *t = str_escape_ctl(type ? type : "");
		burst_err_set(err, "Google key file %s has \"type\": %s%s%s, not \"service_account\": CredentialsFile= "
			      "takes a service account's key (a user's application-default credentials are not used; "
			      "leave CredentialsFile= out to use the VM's service account through the metadata server)",
			      path, type ? "\"" : "", type ? t : "none", type ? "\"" : "");
		free(t);
		goto out;
	}
	for (i = 0; need[i]; i++)
		if (!jstr(root, need[i]) || !*jstr(root, need[i])) {
			burst_err_set(err, "Google service-account key file %s has no \"%s\" (a string): not a whole key file",
				      path, need[i]);
			goto out;
		}
	if (!strstr(jstr(root, "private_key"), "-----BEGIN ")) {
		burst_err_set(err, "Google service-account key file %s: \"private_key\" is not a PEM key", path);
		goto out;
	}
	out->client_email = str_escape_ctl(jstr(root, "client_email"));
	out->private_key = xstrdup(jstr(root, "private_key"));
	out->private_key_id = jstr(root, "private_key_id") ? str_escape_ctl(jstr(root, "private_key_id")) : NULL;
	out->token_uri = xstrdup(jstr(root, "token_uri") && *jstr(root, "token_uri") ? jstr(root, "token_uri")
				 : GCE_TOKEN_URI_DEFAULT);
	if (strncasecmp(out->token_uri, "https://", 8) && strncasecmp(out->token_uri, "http://", 7)) {
		char *t = str_escape_ctl(out->token_uri);
		burst_err_set(err, "Google service-account key file %s: token_uri %s is not an http(s) URL", path, t);
		free(t);
		goto out;
	}
	out->project_id = jstr(root, "project_id") && *jstr(root, "project_id") ?
		str_escape_ctl(jstr(root, "project_id")) : NULL;
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "key file %s (%s)", path, out->client_email);
		out->source = sb_take(&sb);
	}
	rc = 0;
out:
	/* the parsed copy of the key: its strings wiped before they are freed */
	{
		json_object *pk;
		if (json_object_object_get_ex(root, "private_key", &pk) && json_object_is_type(pk, json_type_string))
			explicit_bzero((char *)json_object_get_string(pk), (size_t)json_object_get_string_len(pk));
	}
	json_object_put(root);
	if (rc < 0)
		gce_key_free(out);
	return rc;
}

int gce_key_from_file(const char *path, struct gce_key *out, burst_err_t *err)
{
	struct stat st;
	struct strbuf sb;
	char buf[4096];
	size_t n;
	FILE *f;
	int rc;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f) {
		burst_err_set(err, "Google service-account key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		burst_err_set(err, "Google service-account key file %s is not a regular file", path);
		fclose(f);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		burst_err_set(err, "Google service-account key file %s is owned by uid %u, neither root nor this "
			      "process's user (uid %u): its owner could change the key; refusing to use it. "
			      "Run: chown %u %s", path, (unsigned)st.st_uid, (unsigned)geteuid(),
			      (unsigned)geteuid(), path);
		fclose(f);
		return -1;
	}
	if (st.st_mode & 077) {
		burst_err_set(err, "Google service-account key file %s has mode %04o: group or others can read or "
			      "change it; refusing to use it. Run: chmod 600 %s",
			      path, (unsigned)(st.st_mode & 07777), path);
		fclose(f);
		return -1;
	}
	if (st.st_size > 65536) {
		burst_err_set(err, "Google service-account key file %s is %lld bytes: a key file is a few KiB",
			      path, (long long)st.st_size);
		fclose(f);
		return -1;
	}
	sb_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (memchr(buf, '\0', n)) {
			explicit_bzero(buf, sizeof(buf));
			burst_err_set(err, "Google service-account key file %s holds a NUL byte: not a key file", path);
			fclose(f);
			if (sb.s)
				explicit_bzero(sb.s, sb.len);
			sb_free(&sb);
			return -1;
		}
		sb_addn(&sb, buf, n);
	}
	explicit_bzero(buf, sizeof(buf));
	fclose(f);
	rc = gce_key_parse(sb.s ? sb.s : "", path, out, err);
	if (sb.s)
		explicit_bzero(sb.s, sb.len);
	sb_free(&sb);
	return rc;
}

/* ---- the JWT ---- */

char *gce_b64url(const unsigned char *p, size_t n)
{
	char *out = xmalloc(4 * ((n + 2) / 3) + 1), *q;
	size_t l;

	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
	for (q = out; *q; q++)
		if (*q == '+')
			*q = '-';
		else if (*q == '/')
			*q = '_';
	l = strlen(out);
	while (l && out[l - 1] == '=')
		out[--l] = '\0';
	return out;
}

static char *b64url_str(const char *s)
{
	return gce_b64url((const unsigned char *)s, strlen(s));
}

char *gce_jwt_assertion(const struct gce_key *k, const char *scope, time_t now, burst_err_t *err)
{
	json_object *hd = json_object_new_object(), *cl = json_object_new_object();
	char *h64, *c64, *s64, *out = NULL;
	unsigned char *sig = NULL;
	size_t siglen = 0;
	struct strbuf in;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	BIO *bio;

	json_object_object_add(hd, "alg", json_object_new_string("RS256"));
	json_object_object_add(hd, "typ", json_object_new_string("JWT"));
	if (k->private_key_id)
		json_object_object_add(hd, "kid", json_object_new_string(k->private_key_id));
	json_object_object_add(cl, "iss", json_object_new_string(k->client_email));
	json_object_object_add(cl, "scope", json_object_new_string(scope));
	json_object_object_add(cl, "aud", json_object_new_string(k->token_uri));
	json_object_object_add(cl, "iat", json_object_new_int64((int64_t)now));
	json_object_object_add(cl, "exp", json_object_new_int64((int64_t)now + 3600));
	h64 = b64url_str(json_object_to_json_string_ext(hd, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	c64 = b64url_str(json_object_to_json_string_ext(cl, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(hd);
	json_object_put(cl);
	sb_init(&in);
	sb_addf(&in, "%s.%s", h64, c64);
	free(h64);
	free(c64);

	bio = BIO_new_mem_buf(k->private_key, -1);
	if (bio) {
		key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
		BIO_free(bio);
	}
	if (!key || EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
		burst_err_set(err, "%s: private_key is not an RSA private key in PEM (a service account's key is one)",
			      k->source ? k->source : "Google key");
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)in.s, in.len) != 1) {
		burst_err_set(err, "%s: OpenSSL cannot sign with its private_key (RS256)", k->source ? k->source : "Google key");
		goto out;
	}
	sig = xmalloc(siglen);
	if (EVP_DigestSign(md, sig, &siglen, (const unsigned char *)in.s, in.len) != 1) {
		burst_err_set(err, "%s: OpenSSL cannot sign with its private_key (RS256)", k->source ? k->source : "Google key");
		goto out;
	}
	s64 = gce_b64url(sig, siglen);
	sb_addf(&in, ".%s", s64);
	free(s64);
	out = sb_take(&in);
out:
	free(sig);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	sb_free(&in);
	return out;
}

/* ---- tokens ---- */

void gce_token_free(struct gce_token *t)
{
	if (!t)
		return;
	wipe_free(t->access);
	memset(t, 0, sizeof(*t));
}

int gce_token_parse(const char *json, time_t now, struct gce_token *out, burst_err_t *err)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *v;
	const char *tok, *type;
	int64_t life;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!root || !json_object_is_type(root, json_type_object)) {
		burst_err_set(err, "the token answer is not a JSON object");
		goto out;
	}
	tok = jstr(root, "access_token");
	if (!tok || !*tok) {
		burst_err_set(err, "the token answer has no access_token");
		goto out;
	}
	if (strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=") != strlen(tok) ||
	    strlen(tok) > 4000) {
		burst_err_set(err, "the token answer's access_token is not a token (characters a bearer token cannot "
			      "have, or longer than 4000)");
		goto out;
	}
	type = jstr(root, "token_type");
	if (type && strcasecmp(type, "Bearer")) {
		char *t = str_escape_ctl(type);
		burst_err_set(err, "the token answer's token_type is %.40s, not Bearer", t);
		free(t);
		goto out;
	}
	if (!json_object_object_get_ex(root, "expires_in", &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))) {
		burst_err_set(err, "the token answer has no expires_in (a number of seconds)");
		goto out;
	}
	life = json_object_get_int64(v);
	if (life <= 0 || life > 86400 * 2) {
		burst_err_set(err, "the token answer's expires_in is %lld seconds (a token lives up to an hour)",
			      (long long)life);
		goto out;
	}
	out->access = xstrdup(tok);
	out->obtained = now;
	out->expires = now + (time_t)life;
	rc = 0;
out:
	if (root && json_object_object_get_ex(root, "access_token", &v) && json_object_is_type(v, json_type_string))
		explicit_bzero((char *)json_object_get_string(v), (size_t)json_object_get_string_len(v));
	json_object_put(root);
	return rc;
}

bool gce_token_expiring(const struct gce_token *t, time_t now)
{
	time_t margin = GCE_TOKEN_REFRESH_MARGIN;

	if (!t->access)
		return true;
	if (t->expires > t->obtained && (t->expires - t->obtained) / 2 < margin)
		margin = (t->expires - t->obtained) / 2;
	return now >= t->expires - margin;
}

/* ---- the source of tokens ---- */

struct gce_auth {
	struct gce_key key;      /* key.client_email NULL: the metadata server */
	char *metadata;          /* http://HOST[:PORT] */
	char *ca_file;
	bool allow_http;
	long timeout_ms;
	char *project;
	char *source;
	struct gce_token tok;
	unsigned tokens;
	CURL *curl;
};

struct gce_auth *gce_auth_new(const struct gce_auth_opts *o, burst_err_t *err)
{
	struct gce_auth *a = xcalloc(1, sizeof(*a));
	struct strbuf sb;

	a->ca_file = o->ca_file ? xstrdup(o->ca_file) : NULL;
	a->allow_http = o->allow_http;
	a->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	sb_init(&sb);
	if (o->key_file) {
		if (gce_key_from_file(o->key_file, &a->key, err) < 0) {
			gce_auth_free(a);
			return NULL;
		}
		if (gce_url_is_http(a->key.token_uri) && !a->allow_http) {
			burst_err_set(err, "%s: token_uri %s is plain http: the token would cross the network in the "
				      "clear (AllowInsecureEndpoint=yes allows it, for tests only)", a->key.source,
				      a->key.token_uri);
			gce_auth_free(a);
			sb_free(&sb);
			return NULL;
		}
		if (a->key.project_id)
			a->project = xstrdup(a->key.project_id);
		sb_add(&sb, a->key.source);
	} else {
		const char *h = o->metadata_host ? o->metadata_host : getenv("GCE_METADATA_HOST");
		if (!h || !*h)
			h = GCE_METADATA_DEFAULT;
		if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != strlen(h)) {
			char *e = str_escape_ctl(h);
			burst_err_set(err, "the metadata server '%s' (GCE_METADATA_HOST) is not HOST[:PORT]", e);
			free(e);
			gce_auth_free(a);
			sb_free(&sb);
			return NULL;
		}
		sb_addf(&sb, "http://%s", h);
		a->metadata = sb_take(&sb);
		sb_addf(&sb, "the metadata server %s", h);
	}
	a->source = sb_take(&sb);
	return a;
}

void gce_auth_free(struct gce_auth *a)
{
	if (!a)
		return;
	gce_key_free(&a->key);
	gce_token_free(&a->tok);
	free(a->metadata);
	free(a->ca_file);
	free(a->project);
	free(a->source);
	if (a->curl)
		curl_easy_cleanup(a->curl);
	free(a);
}

const char *gce_auth_source(const struct gce_auth *a)
{
	return a->source;
}

unsigned gce_auth_tokens(const struct gce_auth *a)
{
	return a->tokens;
}

/* The token endpoint's own words from an error answer (OAuth's error and
 * error_description), or the body's start; secrets redacted, control
 * characters written out. */
static void token_error(const char *body, const char *assertion, char *out, size_t len)
{
	json_object *root = body ? json_tokener_parse(body) : NULL;
	const char *e = root ? jstr(root, "error") : NULL, *d = root ? jstr(root, "error_description") : NULL;
	struct strbuf sb;
	char *t;

	if (!e && root) {
		/* Google's API error shape: {"error": {"message": ...}} */
		json_object *eo;
		if (json_object_object_get_ex(root, "error", &eo))
			d = jstr(eo, "message");
	}
	/* whole, redacted, and only then cut: a secret cut short would escape
	 * the redaction */
	sb_init(&sb);
	if (e || d)
		sb_addf(&sb, "%s%s%s", e ? e : "", e && d ? ": " : "", d ? d : "");
	else
		sb_addf(&sb, "%.200s", body ? body : "");
	json_object_put(root);
	sb_add(&sb, "");
	gce_redact(sb.s, sb.len + 1, assertion);
	t = str_escape_ctl(sb.s);
	snprintf(out, len, "%s", t);
	free(t);
	sb_free(&sb);
}

static const char *fetch(struct gce_auth *a, burst_err_t *err)
{
	struct gce_http_req rq;
	struct gce_http_resp rs;
	struct strbuf body, url;
	char *assertion = NULL, *esc;
	time_t now = time(NULL);
	struct gce_token t;
	int rc;

	if (!a->curl && !(a->curl = curl_easy_init())) {
		burst_err_set(err, "%s: curl cannot start", a->source);
		return NULL;
	}
	memset(&rq, 0, sizeof(rq));
	sb_init(&body);
	sb_init(&url);
	rq.timeout_ms = a->timeout_ms;
	if (a->key.client_email) {
		assertion = gce_jwt_assertion(&a->key, GCE_SCOPE_COMPUTE, now, err);
		if (!assertion)
			return NULL;
		esc = curl_easy_escape(a->curl, assertion, 0);
		sb_addf(&body, "grant_type=%s&assertion=%s",
			"urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", esc ? esc : "");
		if (esc) {
			explicit_bzero(esc, strlen(esc));
			curl_free(esc);
		}
		rq.method = "POST";
		rq.url = a->key.token_uri;
		rq.body = body.s;
		rq.content_type = "application/x-www-form-urlencoded";
		rq.ca_file = a->ca_file;
	} else {
		sb_addf(&url, "%s/computeMetadata/v1/instance/service-accounts/default/token", a->metadata);
		rq.method = "GET";
		rq.url = url.s;
		rq.metadata_flavor = true;
	}
	a->tokens++;
	rc = gce_http(a->curl, &rq, &rs, err);
	if (body.s)
		explicit_bzero(body.s, body.len);
	sb_free(&body);
	if (rc < 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "an access token from %.600s: %.3400s", a->source, err->msg);
		burst_err_set(err, "%s", m);
		goto fail;
	}
	if (rs.status != 200) {
		char why[600];
		token_error(rs.body.s, assertion, why, sizeof(why));
		burst_err_set(err, "an access token from %s: HTTP %ld%s%s%s", a->source, rs.status,
			      why[0] ? " (" : "", why, why[0] ? ")" : "");
		goto fail;
	}
	if (a->metadata && !rs.flavor_google) {
		burst_err_set(err, "an access token from %s: the answer lacks \"Metadata-Flavor: Google\": "
			      "not a GCE metadata server", a->source);
		goto fail;
	}
	if (gce_token_parse(rs.body.s, now, &t, err) < 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "an access token from %.600s: %.3400s", a->source, err->msg);
		burst_err_set(err, "%s", m);
		goto fail;
	}
	if (rs.body.s)
		explicit_bzero(rs.body.s, rs.body.len);
	sb_free(&rs.body);
	sb_free(&url);
	wipe_free(assertion);
	gce_token_free(&a->tok);
	a->tok = t;
	return a->tok.access;
fail:
	if (rs.body.s)
		explicit_bzero(rs.body.s, rs.body.len);
	sb_free(&rs.body);
	sb_free(&url);
	wipe_free(assertion);
	return NULL;
}

const char *gce_auth_token(struct gce_auth *a, bool force, burst_err_t *err)
{
	if (!force && !gce_token_expiring(&a->tok, time(NULL)))
		return a->tok.access;
	return fetch(a, err);
}

const char *gce_auth_project(struct gce_auth *a, burst_err_t *err)
{
	struct gce_http_req rq;
	struct gce_http_resp rs;
	struct strbuf url;

	if (a->project)
		return a->project;
	if (!a->metadata) {
		burst_err_set(err, "%s has no project_id: set Project= on the Provider line", a->source);
		return NULL;
	}
	if (!a->curl && !(a->curl = curl_easy_init())) {
		burst_err_set(err, "%s: curl cannot start", a->source);
		return NULL;
	}
	memset(&rq, 0, sizeof(rq));
	sb_init(&url);
	sb_addf(&url, "%s/computeMetadata/v1/project/project-id", a->metadata);
	rq.method = "GET";
	rq.url = url.s;
	rq.metadata_flavor = true;
	rq.timeout_ms = a->timeout_ms;
	if (gce_http(a->curl, &rq, &rs, err) < 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "the project from %.600s: %.3300s (or set Project= on the Provider line)", a->source, err->msg);
		burst_err_set(err, "%s", m);
	} else if (rs.status != 200 || !rs.flavor_google || !rs.body.s ||
		   strspn(str_trim(rs.body.s), "abcdefghijklmnopqrstuvwxyz0123456789-.:") != strlen(rs.body.s) ||
		   !*rs.body.s || strlen(rs.body.s) > 100) {
		burst_err_set(err, "the project from %s: HTTP %ld%s (set Project= on the Provider line)", a->source,
			      rs.status, rs.status == 200 ? ", not a project id" : "");
	} else
		a->project = xstrdup(rs.body.s);
	sb_free(&rs.body);
	sb_free(&url);
	return a->project;
}
