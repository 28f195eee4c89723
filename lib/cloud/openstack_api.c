/*
 * openstack.c - Keystone v3 and Nova's compute API (openstack.h).
 */
#include "openstack_api.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <yaml.h>

#include "config.h"
#include "ec2.h"
#include "httpc.h"
#include "strutil.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "?"
#endif

struct os_client {
	struct os_auth auth;
	char *compute_override, *microversion, *ca_file;
	bool allow_http;
	long timeout_ms;
	struct os_token tok;
	struct os_stats stats;
	CURL *curl;
};

const char *os_class_name(enum os_class c)
{
	switch (c) {
	case OS_OK: return "OK";
	case OS_CAPACITY: return "CAPACITY";
	case OS_QUOTA: return "QUOTA";
	case OS_THROTTLED: return "THROTTLED";
	case OS_TRANSIENT: return "TRANSIENT";
	case OS_PERMANENT: return "PERMANENT";
	case OS_AUTH: return "AUTH";
	case OS_NOT_FOUND: return "NOT_FOUND";
	}
	return "?";
}

enum os_class os_classify(long st, const char *msg)
{
	if (msg && (strcasestr(msg, "No valid host was found") || strcasestr(msg, "insufficient capacity")))
		return OS_CAPACITY;
	if (msg && (strcasestr(msg, "Quota exceeded") || strcasestr(msg, "exceeds quota")))
		return OS_QUOTA;
	if (st >= 200 && st < 300)
		return OS_OK;
	if (st == 401)
		return OS_AUTH;
	if (st == 403)
		return OS_AUTH;
	if (st == 404)
		return OS_NOT_FOUND;
	if (st == 413 || st == 429)
		return OS_THROTTLED;
	if (st == 409 || st == 408 || st >= 500 || st == 0)
		return OS_TRANSIENT;
	return OS_PERMANENT;
}

/* ---- secrets ---- */

static void wipe_free(char *s)
{
	if (!s)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

void os_redact(char *msg, size_t cap, const char *const *secrets)
{
	static const char red[] = "[redacted]";
	size_t i;

	for (i = 0; secrets && secrets[i]; i++) {
		const char *s = secrets[i];
		size_t sl = s ? strlen(s) : 0;
		char *at;

		if (sl < 4)
			continue;
		while ((at = strstr(msg, s))) {
			size_t tail = strlen(at + sl), rl = sizeof(red) - 1;
			if ((size_t)(at - msg) + rl + tail + 1 > cap)
				tail = cap - (size_t)(at - msg) - rl - 1;
			memmove(at + rl, at + sl, tail);
			memcpy(at, red, rl);
			at[rl + tail] = '\0';
		}
	}
}

void os_auth_free(struct os_auth *a)
{
	if (!a)
		return;
	free(a->auth_url);
	free(a->username);
	wipe_free(a->password);
	free(a->user_domain);
	free(a->project_name);
	free(a->project_id);
	free(a->project_domain);
	free(a->ac_id);
	wipe_free(a->ac_secret);
	free(a->region);
	free(a->interface);
	free(a->source);
	memset(a, 0, sizeof(*a));
}

static void auth_copy(struct os_auth *d, const struct os_auth *s)
{
#define CP(f) d->f = s->f ? xstrdup(s->f) : NULL
	CP(auth_url); CP(username); CP(password); CP(user_domain); CP(project_name);
	CP(project_id); CP(project_domain); CP(ac_id); CP(ac_secret); CP(region);
	CP(interface); CP(source);
#undef CP
}

int os_auth_from_file(const char *path, struct os_auth *out, burst_err_t *err)
{
	static const struct { const char *key; size_t off; } keys[] = {
		{ "OS_AUTH_URL", offsetof(struct os_auth, auth_url) },
		{ "OS_USERNAME", offsetof(struct os_auth, username) },
		{ "OS_PASSWORD", offsetof(struct os_auth, password) },
		{ "OS_USER_DOMAIN_NAME", offsetof(struct os_auth, user_domain) },
		{ "OS_PROJECT_NAME", offsetof(struct os_auth, project_name) },
		{ "OS_TENANT_NAME", offsetof(struct os_auth, project_name) },
		{ "OS_PROJECT_ID", offsetof(struct os_auth, project_id) },
		{ "OS_PROJECT_DOMAIN_NAME", offsetof(struct os_auth, project_domain) },
		{ "OS_APPLICATION_CREDENTIAL_ID", offsetof(struct os_auth, ac_id) },
		{ "OS_APPLICATION_CREDENTIAL_SECRET", offsetof(struct os_auth, ac_secret) },
		{ "OS_REGION_NAME", offsetof(struct os_auth, region) },
		{ "OS_INTERFACE", offsetof(struct os_auth, interface) },
	};
	struct stat st;
	FILE *f;
	char *line = NULL;
	size_t cap = 0, k;
	int lineno = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f) {
		burst_err_set(err, "OpenStack credentials file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
		burst_err_set(err, "OpenStack credentials file %s has mode %04o: group or others can read or "
			      "change it; refusing to use it. Run: chmod 600 %s",
			      path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		char *s = str_trim(line), *eq, *val;
		size_t vl;

		lineno++;
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "export ", 7))
			s = str_trim(s + 7);
		eq = strchr(s, '=');
		if (!eq) {
			burst_err_set(err, "%s:%d: expected [export ]OS_NAME=VALUE", path, lineno);
			goto out;
		}
		*eq = '\0';
		val = eq + 1;
		vl = strlen(val);
		if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
			val[vl - 1] = '\0';
			val++;
		}
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strcmp(s, keys[k].key)) {
				char **dst = (char **)(void *)((char *)out + keys[k].off);
				wipe_free(*dst);
				*dst = xstrdup(val);
				break;
			}
		/* other OS_* names (OS_IDENTITY_API_VERSION...) are ignored */
	}
	if (!out->ac_id && !(out->username && out->password)) {
		burst_err_set(err, "OpenStack credentials file %s has neither OS_USERNAME and OS_PASSWORD nor "
			      "OS_APPLICATION_CREDENTIAL_ID and OS_APPLICATION_CREDENTIAL_SECRET", path);
		goto out;
	}
	if (out->ac_id && !out->ac_secret) {
		burst_err_set(err, "OpenStack credentials file %s: OS_APPLICATION_CREDENTIAL_ID without "
			      "OS_APPLICATION_CREDENTIAL_SECRET", path);
		goto out;
	}
	if (!out->ac_id && !out->project_name && !out->project_id) {
		burst_err_set(err, "OpenStack credentials file %s: a password needs a project: set OS_PROJECT_NAME "
			      "or OS_PROJECT_ID", path);
		goto out;
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
	fclose(f);
	if (rc < 0)
		os_auth_free(out);
	return rc;
}

/* ---- clouds.yaml ---- */

/* The value node of key in mapping m, or NULL. */
static yaml_node_t *ymap_get(yaml_document_t *d, yaml_node_t *m, const char *key)
{
	yaml_node_pair_t *pr;

	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(d, pr->key);
		if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
		    !memcmp(k->data.scalar.value, key, k->data.scalar.length))
			return yaml_document_get_node(d, pr->value);
	}
	return NULL;
}

/* The keys of mapping m, comma-separated, for a message. */
static void ymap_keys(yaml_document_t *d, yaml_node_t *m, struct strbuf *sb)
{
	yaml_node_pair_t *pr;

	if (!m || m->type != YAML_MAPPING_NODE)
		return;
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(d, pr->key);
		if (k && k->type == YAML_SCALAR_NODE)
			sb_addf(sb, "%s%.*s", sb->len ? ", " : "", (int)k->data.scalar.length,
				(const char *)k->data.scalar.value);
	}
}

/*
 * The scalar at key of mapping m into *dst (replacing it); 0, or -1 with err
 * when it is there but not a scalar (names the key and its line, never a
 * value).
 */
static int yscalar(const char *path, yaml_document_t *d, yaml_node_t *m, const char *where, const char *key,
		   char **dst, burst_err_t *err)
{
	yaml_node_t *v = ymap_get(d, m, key);

	if (!v)
		return 0;
	if (v->type != YAML_SCALAR_NODE) {
		burst_err_set(err, "%s:%zu: %s%s is not a plain value", path, v->start_mark.line + 1, where, key);
		return -1;
	}
	wipe_free(*dst);
	*dst = xstrndup((const char *)v->data.scalar.value, v->data.scalar.length);
	return 0;
}

int os_auth_from_clouds_yaml(const char *path, const char *cloud, struct os_auth *out, burst_err_t *err)
{
	static const struct { const char *key; size_t off; } auth_keys[] = {
		{ "auth_url", offsetof(struct os_auth, auth_url) },
		{ "username", offsetof(struct os_auth, username) },
		{ "password", offsetof(struct os_auth, password) },
		{ "user_domain_name", offsetof(struct os_auth, user_domain) },
		{ "project_name", offsetof(struct os_auth, project_name) },
		{ "project_id", offsetof(struct os_auth, project_id) },
		{ "project_domain_name", offsetof(struct os_auth, project_domain) },
		{ "application_credential_id", offsetof(struct os_auth, ac_id) },
		{ "application_credential_secret", offsetof(struct os_auth, ac_secret) },
	};
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root, *clouds, *c, *auth;
	struct stat st;
	char *auth_type = NULL;
	FILE *f;
	size_t k;
	int rc = -1;
	bool have_doc = false;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f) {
		burst_err_set(err, "OpenStack clouds.yaml %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
		burst_err_set(err, "OpenStack clouds.yaml %s has mode %04o: group or others can read or "
			      "change it; refusing to use it. Run: chmod 600 %s",
			      path, (unsigned)(st.st_mode & 07777), path);
		fclose(f);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		burst_err_set(err, "OpenStack clouds.yaml %s: out of memory", path);
		fclose(f);
		return -1;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		burst_err_set(err, "%s:%zu:%zu: not YAML: %s", path, parser.problem_mark.line + 1,
			      parser.problem_mark.column + 1, parser.problem ? parser.problem : "a syntax error");
		goto out;
	}
	have_doc = true;
	root = yaml_document_get_root_node(&doc);
	clouds = ymap_get(&doc, root, "clouds");
	if (!clouds || clouds->type != YAML_MAPPING_NODE) {
		burst_err_set(err, "%s: no 'clouds:' mapping: not a clouds.yaml", path);
		goto out;
	}
	c = ymap_get(&doc, clouds, cloud);
	if (!c || c->type != YAML_MAPPING_NODE) {
		struct strbuf names;
		sb_init(&names);
		ymap_keys(&doc, clouds, &names);
		burst_err_set(err, "%s: no cloud '%s' under 'clouds:' (it has: %s); fix Cloud=", path, cloud,
			      names.len ? names.s : "none");
		sb_free(&names);
		goto out;
	}
	auth = ymap_get(&doc, c, "auth");
	if (!auth || auth->type != YAML_MAPPING_NODE) {
		burst_err_set(err, "%s:%zu: cloud '%s' has no 'auth:' mapping", path, c->start_mark.line + 1, cloud);
		goto out;
	}
	for (k = 0; k < sizeof(auth_keys) / sizeof(auth_keys[0]); k++)
		if (yscalar(path, &doc, auth, "auth: ", auth_keys[k].key,
			    (char **)(void *)((char *)out + auth_keys[k].off), err) < 0)
			goto out;
	if (yscalar(path, &doc, c, "", "region_name", &out->region, err) < 0 ||
	    yscalar(path, &doc, c, "", "interface", &out->interface, err) < 0 ||
	    yscalar(path, &doc, c, "", "auth_type", &auth_type, err) < 0)
		goto out;
	if (auth_type && strcmp(auth_type, "password") && strcmp(auth_type, "v3password") &&
	    strcmp(auth_type, "v3applicationcredential")) {
		burst_err_set(err, "%s: cloud '%s': auth_type %s is not supported (password or v3applicationcredential)",
			      path, cloud, auth_type);
		goto out;
	}
	if (auth_type && !strcmp(auth_type, "v3applicationcredential") && !(out->ac_id && out->ac_secret)) {
		burst_err_set(err, "%s: cloud '%s': auth_type v3applicationcredential needs auth: "
			      "application_credential_id and application_credential_secret", path, cloud);
		goto out;
	}
	if (auth_type && strcmp(auth_type, "v3applicationcredential")) {
		/* a password cloud: an application credential beside it is not used */
		wipe_free(out->ac_id);
		wipe_free(out->ac_secret);
		out->ac_id = out->ac_secret = NULL;
	}
	if (!out->auth_url) {
		burst_err_set(err, "%s: cloud '%s' has no auth: auth_url", path, cloud);
		goto out;
	}
	if (!out->ac_id && !(out->username && out->password)) {
		burst_err_set(err, "%s: cloud '%s' has neither auth: username and password nor "
			      "application_credential_id and application_credential_secret "
			      "(a password kept in secure.yaml is not read: put it in this file, mode 0600)", path, cloud);
		goto out;
	}
	if (out->ac_id && !out->ac_secret) {
		burst_err_set(err, "%s: cloud '%s': application_credential_id without application_credential_secret",
			      path, cloud);
		goto out;
	}
	if (!out->ac_id && !out->project_name && !out->project_id) {
		burst_err_set(err, "%s: cloud '%s': a password needs a project: auth: project_name or project_id",
			      path, cloud);
		goto out;
	}
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "cloud %s of %s", cloud, path);
		out->source = sb_take(&sb);
	}
	rc = 0;
out:
	free(auth_type);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (rc < 0)
		os_auth_free(out);
	return rc;
}

/* ---- tokens ---- */

void os_token_free(struct os_token *t)
{
	if (!t)
		return;
	wipe_free(t->id);
	free(t->compute_url);
	free(t->image_url);
	free(t->project_id);
	free(t->user_id);
	memset(t, 0, sizeof(*t));
}

time_t os_parse_time(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return timegm(&tm);
}

bool os_token_expiring(const struct os_token *t, time_t now)
{
	time_t margin = OS_TOKEN_REFRESH_MARGIN;

	if (!t->id)
		return true;
	if (t->issued && t->expires > t->issued && (t->expires - t->issued) / 2 < margin)
		margin = (t->expires - t->issued) / 2;
	return now >= t->expires - margin;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The URL of service type's endpoint at interface and region; NULL when none
 * (then *seen lists what there is, for the message). */
static const char *catalog_url(json_object *catalog, const char *type, const char *interface,
			       const char *region, struct strbuf *seen, int *nmatch)
{
	const char *found = NULL;
	size_t i, k;

	*nmatch = 0;
	for (i = 0; catalog && i < json_object_array_length(catalog); i++) {
		json_object *svc = json_object_array_get_idx(catalog, i), *eps;
		const char *t = jstr(svc, "type");

		if (!t || strcmp(t, type) || !json_object_object_get_ex(svc, "endpoints", &eps))
			continue;
		for (k = 0; k < json_object_array_length(eps); k++) {
			json_object *ep = json_object_array_get_idx(eps, k);
			const char *in = jstr(ep, "interface"), *rg = jstr(ep, "region_id"), *url = jstr(ep, "url");
			if (!rg)
				rg = jstr(ep, "region");
			if (seen)
				sb_addf(seen, "%s%s/%s", seen->len ? ", " : "", rg ? rg : "?", in ? in : "?");
			if (!in || !url || strcmp(in, interface) || (region && (!rg || strcmp(rg, region))))
				continue;
			if (!found || strcmp(found, url))
				(*nmatch)++;
			found = url;
		}
	}
	return found;
}

static char *url_trim(const char *u)
{
	char *s = xstrdup(u);
	size_t l = strlen(s);

	while (l && s[l - 1] == '/')
		s[--l] = '\0';
	return s;
}

int os_token_parse(const char *json, size_t len, const char *subject, const char *interface,
		   const char *region, struct os_token *out, burst_err_t *err)
{
	json_tokener *tk = json_tokener_new();
	json_object *root = json_tokener_parse_ex(tk, json, (int)len), *token, *catalog = NULL, *o;
	struct strbuf seen;
	const char *url;
	int n, rc = -1;

	json_tokener_free(tk);
	memset(out, 0, sizeof(*out));
	sb_init(&seen);
	if (!interface)
		interface = "public";
	if (!root || !json_object_object_get_ex(root, "token", &token)) {
		burst_err_set(err, "Keystone's token answer is not a token document");
		goto out;
	}
	if (!subject || !*subject) {
		burst_err_set(err, "Keystone's token answer has no X-Subject-Token header");
		goto out;
	}
	out->id = xstrdup(subject);
	out->issued = os_parse_time(jstr(token, "issued_at"));
	out->expires = os_parse_time(jstr(token, "expires_at"));
	if (!out->expires) {
		burst_err_set(err, "Keystone's token has no readable expires_at (%s)",
			      jstr(token, "expires_at") ? jstr(token, "expires_at") : "none");
		goto out;
	}
	if (json_object_object_get_ex(token, "project", &o) && jstr(o, "id"))
		out->project_id = xstrdup(jstr(o, "id"));
	if (json_object_object_get_ex(token, "user", &o) && jstr(o, "id"))
		out->user_id = xstrdup(jstr(o, "id"));
	json_object_object_get_ex(token, "catalog", &catalog);
	url = catalog_url(catalog, "compute", interface, region, &seen, &n);
	if (url && n > 1 && !region) {
		burst_err_set(err, "the token's catalog has compute endpoints in several regions (%s): "
			      "set Regions= on the Provider line", seen.s ? seen.s : "");
		goto out;
	}
	if (url)
		out->compute_url = url_trim(url);
	url = catalog_url(catalog, "image", interface, region, NULL, &n);
	if (url)
		out->image_url = url_trim(url);
	if (!out->compute_url) {
		burst_err_set(err, "the token's catalog has no compute endpoint for interface %s%s%s "
			      "(compute endpoints: %s)", interface, region ? " in region " : "",
			      region ? region : "", seen.len ? seen.s : "none");
		goto out;
	}
	rc = 0;
out:
	sb_free(&seen);
	json_object_put(root);
	if (rc < 0)
		os_token_free(out);
	return rc;
}

/* ---- HTTP ---- */

struct resp {
	struct strbuf body;
	char *subject;
};

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
	struct resp *r = ud;
	char *chunk = xstrndup(p, sz * n);

	sb_add(&r->body, chunk);
	free(chunk);
	return sz * n;
}

static size_t header(char *p, size_t sz, size_t n, void *ud)
{
	struct resp *r = ud;
	size_t l = sz * n;

	if (l > 16 && !strncasecmp(p, "X-Subject-Token:", 16)) {
		char *v = xstrndup(p + 16, l - 16);
		wipe_free(r->subject);
		r->subject = xstrdup(str_trim(v));
		wipe_free(v);
	}
	return l;
}

/* One HTTP request; *status 0 on a transport failure (err says why). */
static void http(struct os_client *c, const char *method, const char *url, const char *body,
		 const char *token, struct resp *r, long *status, burst_err_t *err)
{
	struct curl_slist *h = NULL;
	char cerr[CURL_ERROR_SIZE] = "", line[1400];
	CURLcode rc;

	*status = 0;
	sb_init(&r->body);
	r->subject = NULL;
	if (!c->curl)
		c->curl = curl_easy_init();
	curl_easy_reset(c->curl);
	h = curl_slist_append(h, "Accept: application/json");
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json");
	if (token) {
		snprintf(line, sizeof(line), "X-Auth-Token: %s", token);
		h = curl_slist_append(h, line);
		explicit_bzero(line, sizeof(line));
		snprintf(line, sizeof(line), "OpenStack-API-Version: compute %s", c->microversion);
		h = curl_slist_append(h, line);
		snprintf(line, sizeof(line), "X-OpenStack-Nova-API-Version: %s", c->microversion);
		h = curl_slist_append(h, line);
	}
	/* reset above: a request's method and body must not carry over */
	httpc_common(c->curl, c->ca_file, 5000L, c->timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, cerr);
	c->stats.api_calls++;
	rc = curl_easy_perform(c->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
	else
		burst_err_set(err, "%s %s: %s", method, url, cerr[0] ? cerr : curl_easy_strerror(rc));
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	/* the token's header line was in h: wipe it */
	{
		struct curl_slist *i;
		for (i = h; i; i = i->next)
			explicit_bzero(i->data, strlen(i->data));
	}
	curl_slist_free_all(h);
}

static void resp_free(struct resp *r)
{
	sb_free(&r->body);
	wipe_free(r->subject);
	r->subject = NULL;
}

char *os_error_message(const char *json)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *v = NULL;
	char *msg = NULL;
	const char *m;

	/* a proxy's or a broken service's body may be any JSON value: only an
	 * object carries a message */
	if (!root || !json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return NULL;
	}
	if ((m = jstr(root, "message")))
		msg = xstrdup(m);
	else if (json_object_object_get_ex(root, "error", &v) && (m = jstr(v, "message")))
		msg = xstrdup(m);
	else {
		/* Nova: {"badRequest": {"code": 400, "message": "..."}} */
		json_object_object_foreach(root, k, val) {
			(void)k;
			if (json_object_is_type(val, json_type_object) && (m = jstr(val, "message"))) {
				msg = xstrdup(m);
				break;
			}
		}
	}
	json_object_put(root);
	if (msg) {
		/* the cloud's text, bound for logs, node reasons and terminals:
		 * its control characters written out as it enters */
		char *e = str_escape_ctl(msg);
		free(msg);
		msg = e;
	}
	return msg;
}

char *os_cloud_text(const char *s)
{
	char *t = str_escape_ctl(s);

	str_trim(t);
	return t;
}

struct os_client *os_client_new(const struct os_client_opts *o, burst_err_t *err)
{
	struct os_client *c;

	if (!o->auth || !o->auth->auth_url || !*o->auth->auth_url) {
		burst_err_set(err, "no Keystone URL: set Endpoint=https://keystone.example:5000/v3 on the "
			      "Provider line or OS_AUTH_URL in its credentials file");
		return NULL;
	}
	if (!o->auth->ac_id && !(o->auth->username && o->auth->password)) {
		burst_err_set(err, "no OpenStack credentials: a password or an application credential "
			      "(CredentialsFile=)");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	auth_copy(&c->auth, o->auth);
	{
		char *u = url_trim(c->auth.auth_url);
		free(c->auth.auth_url);
		c->auth.auth_url = u;
	}
	c->compute_override = o->compute_url ? url_trim(o->compute_url) : NULL;
	c->microversion = xstrdup(o->microversion ? o->microversion : "2.52");
	c->ca_file = o->ca_file ? xstrdup(o->ca_file) : NULL;
	c->allow_http = o->allow_http;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
	return c;
}

void os_client_free(struct os_client *c)
{
	if (!c)
		return;
	os_auth_free(&c->auth);
	os_token_free(&c->tok);
	free(c->compute_override);
	free(c->microversion);
	free(c->ca_file);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c);
}

struct os_stats os_client_stats(const struct os_client *c)
{
	return c->stats;
}

/* The request body of POST /v3/auth/tokens (holds a secret: wipe it). */
static char *auth_body(const struct os_auth *a)
{
	json_object *root = json_object_new_object(), *auth = json_object_new_object(),
		    *id = json_object_new_object(), *methods = json_object_new_array();
	char *s;

	json_object_object_add(root, "auth", auth);
	json_object_object_add(auth, "identity", id);
	json_object_object_add(id, "methods", methods);
	if (a->ac_id) {
		json_object *ac = json_object_new_object();
		json_object_array_add(methods, json_object_new_string("application_credential"));
		json_object_object_add(id, "application_credential", ac);
		json_object_object_add(ac, "id", json_object_new_string(a->ac_id));
		json_object_object_add(ac, "secret", json_object_new_string(a->ac_secret ? a->ac_secret : ""));
	} else {
		json_object *pw = json_object_new_object(), *user = json_object_new_object(),
			    *ud = json_object_new_object(), *scope = json_object_new_object(),
			    *proj = json_object_new_object();
		json_object_array_add(methods, json_object_new_string("password"));
		json_object_object_add(id, "password", pw);
		json_object_object_add(pw, "user", user);
		json_object_object_add(user, "name", json_object_new_string(a->username));
		json_object_object_add(user, "domain", ud);
		json_object_object_add(ud, "name", json_object_new_string(a->user_domain ? a->user_domain : "Default"));
		json_object_object_add(user, "password", json_object_new_string(a->password));
		json_object_object_add(auth, "scope", scope);
		json_object_object_add(scope, "project", proj);
		if (a->project_id)
			json_object_object_add(proj, "id", json_object_new_string(a->project_id));
		else {
			json_object *pd = json_object_new_object();
			json_object_object_add(proj, "name", json_object_new_string(a->project_name));
			json_object_object_add(proj, "domain", pd);
			json_object_object_add(pd, "name", json_object_new_string(a->project_domain ? a->project_domain : "Default"));
		}
	}
	s = xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	/* json-c's own copy of the secret */
	{
		const char *js = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
		explicit_bzero((char *)js, strlen(js));
	}
	json_object_put(root);
	return s;
}

static void who(const struct os_auth *a, char *buf, size_t len)
{
	if (a->ac_id)
		snprintf(buf, len, "application credential %s", a->ac_id);
	else
		snprintf(buf, len, "user %s (project %s)", a->username, a->project_id ? a->project_id : a->project_name);
}

static enum os_class authenticate(struct os_client *c, burst_err_t *err)
{
	struct resp r;
	char url[2048], w[512];
	char *body = auth_body(&c->auth);
	long st;
	enum os_class cls;
	const char *secrets[] = { c->auth.password, c->auth.ac_secret, NULL };

	os_token_free(&c->tok);
	snprintf(url, sizeof(url), "%s/auth/tokens", c->auth.auth_url);
	who(&c->auth, w, sizeof(w));
	c->stats.tokens++;
	http(c, "POST", url, body, NULL, &r, &st, err);
	wipe_free(body);
	if (st == 0) {
		cls = OS_TRANSIENT;
		goto out;
	}
	if (st != 201 && st != 200) {
		char *m = os_error_message(r.body.s);
		cls = os_classify(st, m);
		if (st == 401 || st == 403)
			cls = OS_AUTH;
		burst_err_set(err, "Keystone %s refused the %s from %s: HTTP %ld: %s", c->auth.auth_url, w,
			      c->auth.source ? c->auth.source : "burst.conf", st, m ? m : "(no message)");
		free(m);
		goto out;
	}
	if (os_token_parse(r.body.s ? r.body.s : "", r.body.len, r.subject, c->auth.interface,
			   c->auth.region, &c->tok, err) < 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "Keystone %.512s, %.400s: %.3000s", c->auth.auth_url, w, err->msg);
		burst_err_set(err, "%s", m);
		cls = OS_PERMANENT;
		goto out;
	}
	if (c->compute_override) {
		free(c->tok.compute_url);
		c->tok.compute_url = xstrdup(c->compute_override);
	}
	if (!c->allow_http && !strncasecmp(c->tok.compute_url, "http://", 7)) {
		burst_err_set(err, "the compute endpoint %s (the token's catalog) is plain HTTP: "
			      "requests and answers would travel unencrypted (AllowInsecureEndpoint=yes is for tests)",
			      c->tok.compute_url);
		os_token_free(&c->tok);
		cls = OS_PERMANENT;
		goto out;
	}
	cls = OS_OK;
out:
	if (cls != OS_OK) {
		os_redact(err->msg, sizeof(err->msg), secrets);
		/* what Keystone answered went into it (a message, a catalog's regions) */
		burst_err_escape_ctl(err);
	}
	resp_free(&r);
	return cls;
}

enum os_class os_authenticate(struct os_client *c, burst_err_t *err)
{
	if (c->tok.id && !os_token_expiring(&c->tok, time(NULL)))
		return OS_OK;
	return authenticate(c, err);
}

static enum os_class request(struct os_client *c, bool image, const char *method, const char *path,
			     const char *body, const char *what, long *status, char **answer,
			     burst_err_t *err)
{
	struct resp r;
	char url[4096];
	enum os_class cls;
	long st = 0;
	int round;

	if (answer)
		*answer = NULL;
	*status = 0;
	for (round = 0; round < 2; round++) {
		const char *base;

		cls = os_authenticate(c, err);
		if (cls != OS_OK)
			return cls;
		base = image ? c->tok.image_url : c->tok.compute_url;
		if (!base) {
			burst_err_set(err, "%s: the token's catalog has no image service endpoint: give the image's id", what);
			return OS_PERMANENT;
		}
		snprintf(url, sizeof(url), "%s%s", base, path);
		http(c, method, url, body, c->tok.id, &r, &st, err);
		if (st == 401 && round == 0) {
			/* revoked or expired early: one new token, one retry */
			resp_free(&r);
			os_token_free(&c->tok);
			continue;
		}
		break;
	}
	*status = st;
	if (st == 0) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%.600s: %.3400s", what, err->msg);
		burst_err_set(err, "%s", m);
		burst_err_escape_ctl(err);
		resp_free(&r);
		return OS_TRANSIENT;
	}
	if (st >= 200 && st < 300)
		cls = OS_OK;
	else {
		char *m = os_error_message(r.body.s);
		cls = os_classify(st, m);
		burst_err_set(err, "%s: HTTP %ld from %s %s: %s", what, st, method, url, m ? m : "(no message)");
		/* the URL is the token catalog's: the cloud's text too */
		burst_err_escape_ctl(err);
		free(m);
	}
	if (answer)
		*answer = r.body.s ? sb_take(&r.body) : xstrdup("");
	resp_free(&r);
	return cls;
}

enum os_class os_compute(struct os_client *c, const char *method, const char *path, const char *body,
			 const char *what, long *status, char **answer, burst_err_t *err)
{
	return request(c, false, method, path, body, what, status, answer, err);
}

enum os_class os_image_get(struct os_client *c, const char *path, const char *what, char **answer,
			   burst_err_t *err)
{
	long st;
	return request(c, true, "GET", path, NULL, what, &st, answer, err);
}

struct os_client *os_client_for_provider(const struct cfg_provider *p, const char *region,
					 bool allow_http, const char *microversion, burst_err_t *err)
{
	struct os_auth a;
	struct os_client_opts o;
	struct os_client *c;

	if (!p->credentials) {
		burst_err_set(err, "provider %s has no CredentialsFile= (an openrc-style file, mode 0600)", p->name);
		return NULL;
	}
	if ((p->cloud ? os_auth_from_clouds_yaml(p->credentials, p->cloud, &a, err)
		      : os_auth_from_file(p->credentials, &a, err)) < 0)
		return NULL;
	if (p->endpoint) {
		free(a.auth_url);
		a.auth_url = xstrdup(p->endpoint);
	}
	if (!region && p->nregions)
		region = p->regions[0];
	if (region && *region) {
		free(a.region);
		a.region = xstrdup(region);
	}
	if (p->interface) {
		free(a.interface);
		a.interface = xstrdup(p->interface);
	}
	memset(&o, 0, sizeof(o));
	o.auth = &a;
	o.compute_url = p->compute_endpoint;
	o.microversion = microversion ? microversion : p->microversion;
	o.ca_file = p->ca_file;
	o.allow_http = allow_http;
	c = os_client_new(&o, err);
	os_auth_free(&a);
	return c;
}

static char *alias_model(const char *alias, char *const *aliases, size_t n)
{
	size_t i, l = strlen(alias);

	for (i = 0; i < n; i++)
		if (!strncmp(aliases[i], alias, l) && aliases[i][l] == ':')
			return xstrdup(aliases[i] + l + 1);
	return xstrdup(alias);
}

int os_parse_flavors(const char *json, char *const *aliases, size_t naliases,
		     struct ec2_instance_types *out, burst_err_t *err)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *fl;
	size_t i;

	if (!root || !json_object_object_get_ex(root, "flavors", &fl) ||
	    !json_object_is_type(fl, json_type_array)) {
		json_object_put(root);
		burst_err_set(err, "Nova's flavors answer has no flavors list");
		return -1;
	}
	for (i = 0; i < json_object_array_length(fl); i++) {
		json_object *f = json_object_array_get_idx(fl, i), *v, *es = NULL;
		struct ec2_instance_type *t;
		const char *name = jstr(f, "name"), *spec;
		long disk = 0;

		if (!name)
			continue;
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		t = &out->v[out->n++];
		memset(t, 0, sizeof(*t));
		t->name = xstrdup(name);
		if (json_object_object_get_ex(f, "vcpus", &v))
			t->vcpus = json_object_get_int(v);
		if (json_object_object_get_ex(f, "ram", &v))
			t->memory_mib = json_object_get_int64(v);
		if (json_object_object_get_ex(f, "disk", &v))
			disk += json_object_get_int64(v);
		if (json_object_object_get_ex(f, "OS-FLV-EXT-DATA:ephemeral", &v))
			disk += json_object_get_int64(v);
		if (disk > 0) {
			t->storage_gb = disk;
			t->storage_disk = xstrdup("disk");
		}
		json_object_object_get_ex(f, "extra_specs", &es);
		if ((spec = jstr(es, "pci_passthrough:alias"))) {
			/* ALIAS:COUNT[,ALIAS:COUNT]: the first */
			char *a = xstrdup(spec), *comma = strchr(a, ','), *colon;
			if (comma)
				*comma = '\0';
			colon = strchr(a, ':');
			if (colon)
				*colon = '\0';
			t->gpu_count = colon ? atoi(colon + 1) : 1;
			t->gpu_name = alias_model(a, aliases, naliases);
			free(a);
		} else if ((spec = jstr(es, "resources:VGPU"))) {
			t->gpu_count = atoi(spec);
			t->gpu_name = alias_model("VGPU", aliases, naliases);
		}
		if (t->gpu_count <= 0) {
			free(t->gpu_name);
			t->gpu_name = NULL;
			t->gpu_count = 0;
		}
		if ((spec = jstr(es, "hw:cpu_arch")) || (spec = jstr(es, "capabilities:cpu_info:arch")))
			t->arch = xstrdup(spec);
	}
	json_object_put(root);
	return 0;
}

enum os_class os_flavors(struct os_client *c, char *const *aliases, size_t naliases,
			 struct ec2_instance_types *out, burst_err_t *err)
{
	char *ans = NULL;
	long st;
	enum os_class cls = os_compute(c, "GET", "/flavors/detail?is_public=None", NULL, "list flavors",
				       &st, &ans, err);

	if (cls == OS_OK && os_parse_flavors(ans, aliases, naliases, out, err) < 0)
		cls = OS_TRANSIENT;
	free(ans);
	return cls;
}
