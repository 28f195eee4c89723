/*
 * imds.c - the EC2 instance metadata service, IMDSv2 (imds.h).
 */
#include "imds.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "strutil.h"

struct imds {
	CURL *h;
	char *base;
	long timeout_ms;
	char *token;             /* NULL: none yet */
	double token_until;      /* CLOCK_MONOTONIC seconds: asked for again from then */
	bool gce;                /* Compute Engine's metadata server: no token, Metadata-Flavor: Google */
	bool azure;              /* Azure's metadata service: no token, Metadata: true */
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

struct imds *imds_open(const char *endpoint, long timeout_ms, burst_err_t *err)
{
	struct imds *m;
	const char *base = endpoint;

	if (!base || !*base)
		base = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (!base || !*base)
		base = IMDS_DEFAULT_ENDPOINT;
	m = xcalloc(1, sizeof(*m));
	m->base = xstrdup(base);
	while (*m->base && m->base[strlen(m->base) - 1] == '/')
		m->base[strlen(m->base) - 1] = '\0';
	m->timeout_ms = timeout_ms > 0 ? timeout_ms : 2000;
	m->h = curl_easy_init();
	if (!m->h) {
		burst_err_set(err, "cannot initialise libcurl");
		imds_close(m);
		return NULL;
	}
	return m;
}

struct imds *imds_open_gce(const char *endpoint, long timeout_ms, burst_err_t *err)
{
	const char *host = getenv("GCE_METADATA_HOST");
	char def[300];
	struct imds *m;

	if (!endpoint || !*endpoint) {
		snprintf(def, sizeof(def), "http://%.280s", host && *host ? host : GCE_METADATA_DEFAULT_HOST);
		endpoint = def;
	}
	m = imds_open(endpoint, timeout_ms, err);
	if (m)
		m->gce = true;
	return m;
}

struct imds *imds_open_azure(const char *endpoint, long timeout_ms, burst_err_t *err)
{
	struct imds *m = imds_open(endpoint && *endpoint ? endpoint : IMDS_DEFAULT_ENDPOINT, timeout_ms, err);

	if (m)
		m->azure = true;
	return m;
}

const char *imds_base(const struct imds *m)
{
	return m->base;
}

void imds_close(struct imds *m)
{
	if (!m)
		return;
	if (m->h)
		curl_easy_cleanup(m->h);
	wipe_free(m->token);
	free(m->base);
	free(m);
}

struct body {
	struct strbuf sb;
	size_t max;
	bool over;
};

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
	struct body *b = ud;
	size_t len = sz * n;

	if (b->sb.len + len > b->max) {
		b->over = true;
		return 0;
	}
	if (b->sb.len + len + 1 > b->sb.cap) {
		b->sb.cap = b->sb.len + len + 1;
		b->sb.s = xrealloc(b->sb.s, b->sb.cap);
	}
	memcpy(b->sb.s + b->sb.len, p, len);
	b->sb.len += len;
	b->sb.s[b->sb.len] = '\0';
	return len;
}

/* One request: a GET with token, or (token NULL) the PUT for one. */
static int request(struct imds *m, const char *path, const char *token, size_t max, long *status,
		   char **out, size_t *outlen, burst_err_t *err)
{
	struct body b;
	struct strbuf url;
	struct curl_slist *hdrs = NULL;
	char hdr[512];
	CURLcode cc;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	sb_init(&b.sb);
	b.max = max;
	sb_init(&url);
	sb_addf(&url, "%s%s", m->base, path);
	*status = 0;
	curl_easy_reset(m->h);
	curl_easy_setopt(m->h, CURLOPT_URL, url.s);
	curl_easy_setopt(m->h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(m->h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(m->h, CURLOPT_TIMEOUT_MS, m->timeout_ms);
	curl_easy_setopt(m->h, CURLOPT_CONNECTTIMEOUT_MS, m->timeout_ms);
	curl_easy_setopt(m->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(m->h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(m->h, CURLOPT_WRITEDATA, &b);
	if (m->gce) {
		hdrs = curl_slist_append(hdrs, "Metadata-Flavor: Google");
	} else if (m->azure) {
		hdrs = curl_slist_append(hdrs, "Metadata: true");
	} else if (!token) {
		curl_easy_setopt(m->h, CURLOPT_CUSTOMREQUEST, "PUT");
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token-ttl-seconds: %d", IMDS_TOKEN_TTL_S);
		hdrs = curl_slist_append(hdrs, hdr);
	} else {
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", token);
		hdrs = curl_slist_append(hdrs, hdr);
		explicit_bzero(hdr, sizeof(hdr));
	}
	curl_easy_setopt(m->h, CURLOPT_HTTPHEADER, hdrs);
	cc = curl_easy_perform(m->h);
	if (b.over) {
		burst_err_set(err, "instance metadata service %s%s: an answer larger than %zu bytes (refused)",
			      m->base, path, max);
		goto out;
	}
	if (cc != CURLE_OK) {
		burst_err_set(err, "instance metadata service %s%s: %s", m->base, path, curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(m->h, CURLINFO_RESPONSE_CODE, status);
	*outlen = b.sb.len;
	*out = b.sb.s ? sb_take(&b.sb) : xstrdup("");
	rc = 0;
out:
	curl_easy_setopt(m->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (b.sb.s)
		explicit_bzero(b.sb.s, b.sb.len);
	sb_free(&b.sb);
	sb_free(&url);
	return rc;
}

static int get_token(struct imds *m, burst_err_t *err)
{
	long status;
	size_t len;
	char *tok = NULL;

	wipe_free(m->token);
	m->token = NULL;
	/* a token is a few dozen characters */
	if (request(m, "/latest/api/token", NULL, 4096, &status, &tok, &len, err) < 0)
		return -1;
	if (status != 200) {
		wipe_free(tok);
		burst_err_set(err, "instance metadata service %s/latest/api/token: HTTP %ld (IMDSv2 session token refused)",
			      m->base, status);
		return -1;
	}
	if (memchr(tok, '\0', len))
		*tok = '\0';
	str_trim(tok);
	if (!*tok || strpbrk(tok, "\r\n")) {
		wipe_free(tok);
		burst_err_set(err, "instance metadata service %s/latest/api/token: an empty or malformed session token",
			      m->base);
		return -1;
	}
	m->token = tok;
	/* asked for again a minute before its end */
	m->token_until = mono_s() + IMDS_TOKEN_TTL_S - 60;
	return 0;
}

int imds_get(struct imds *m, const char *path, size_t max, long *status, char **body, size_t *len,
	     burst_err_t *err)
{
	int tries;

	*body = NULL;
	*len = 0;
	if (m->gce || m->azure)
		return request(m, path, NULL, max, status, body, len, err);
	for (tries = 0; tries < 2; tries++) {
		if ((!m->token || mono_s() >= m->token_until) && get_token(m, err) < 0)
			return -1;
		if (request(m, path, m->token, max, status, body, len, err) < 0)
			return -1;
		if (*status != 401)
			return 0;
		/* the token expired or the service restarted: a new one, once */
		wipe_free(m->token);
		m->token = NULL;
		if (tries == 0) {
			free(*body);
			*body = NULL;
		}
	}
	return 0;
}

int imds_action_from_name(const char *name, enum imds_action *a)
{
	if (!strcmp(name, "terminate"))
		*a = IMDS_ACTION_TERMINATE;
	else if (!strcmp(name, "stop"))
		*a = IMDS_ACTION_STOP;
	else if (!strcmp(name, "hibernate"))
		*a = IMDS_ACTION_HIBERNATE;
	else
		return 0;
	return 1;
}

int imds_notice_time(const char *s, time_t *at)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	if (!s || strlen(s) != 20 || !(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) || strcmp(end, "Z"))
		return 0;
	*at = timegm(&tm);
	return 1;
}

/* s for a message: control characters escaped, at most 64 characters. */
static void quote(const char *s, char *out, size_t len)
{
	char *e = str_escape_ctl(s);

	snprintf(out, len, "%.64s%s", e, strlen(e) > 64 ? "..." : "");
	free(e);
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/*
 * An answer that must be one JSON object and nothing after it but blanks
 * (its status and size checked by the caller): the object, or NULL with why.
 */
static json_object *one_object(const char *body, size_t len, char *why, size_t wlen)
{
	json_object *o;
	json_tokener *tok;
	char *text, q[80];
	size_t end_at;

	if (memchr(body, '\0', len)) {
		snprintf(why, wlen, "a NUL byte in the answer");
		return NULL;
	}
	text = xmalloc(len + 1);
	memcpy(text, body, len);
	text[len] = '\0';
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, text, (int)len);
	end_at = o ? json_tokener_get_parse_end(tok) : 0;
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    strspn(text + end_at, " \t\r\n") != len - end_at || !json_object_is_type(o, json_type_object)) {
		quote(text, q, sizeof(q));
		snprintf(why, wlen, "not a JSON object: '%s'", q);
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	free(text);
	return o;
}

int imds_notice_parse(long status, const char *body, size_t len, struct imds_notice *n, char *why,
		      size_t wlen)
{
	json_object *o = NULL;
	const char *act, *t;
	char q[80];
	int rc = -1;

	memset(n, 0, sizeof(*n));
	if (status == 404)
		return 0;
	if (status != 200) {
		snprintf(why, wlen, "HTTP %ld (200 with a notice, or 404 without one, expected)", status);
		return -1;
	}
	if (!body || len > IMDS_NOTICE_MAX) {
		snprintf(why, wlen, "an answer of %zu bytes (a notice is at most %d)", len, IMDS_NOTICE_MAX);
		return -1;
	}
	if (!(o = one_object(body, len, why, wlen)))
		return -1;
	act = field(o, "action");
	t = field(o, "time");
	if (!act) {
		snprintf(why, wlen, "no \"action\" (a string) in the notice");
		goto out;
	}
	if (!imds_action_from_name(act, &n->action)) {
		quote(act, q, sizeof(q));
		snprintf(why, wlen, "unknown action '%s' (terminate, stop and hibernate are known)", q);
		goto out;
	}
	if (!t) {
		snprintf(why, wlen, "no \"time\" (a string) in the notice");
		goto out;
	}
	if (!imds_notice_time(t, &n->at)) {
		quote(t, q, sizeof(q));
		snprintf(why, wlen, "time '%s' is not YYYY-MM-DDTHH:MM:SSZ", q);
		goto out;
	}
	snprintf(n->action_name, sizeof(n->action_name), "%s", act);
	snprintf(n->time, sizeof(n->time), "%s", t);
	rc = 1;
out:
	json_object_put(o);
	if (rc < 0)
		memset(n, 0, sizeof(*n));
	return rc;
}

int imds_gce_preempted_parse(long status, const char *body, size_t len, time_t now, struct imds_notice *n,
			     char *why, size_t wlen)
{
	char text[16], q[80];
	struct tm tm;

	memset(n, 0, sizeof(*n));
	if (status != 200) {
		snprintf(why, wlen, "HTTP %ld (200 with TRUE or FALSE expected)", status);
		return -1;
	}
	if (!body || len >= sizeof(text) || memchr(body, '\0', len)) {
		snprintf(why, wlen, "an answer of %zu bytes (TRUE or FALSE expected)", len);
		return -1;
	}
	memcpy(text, body, len);
	text[len] = '\0';
	str_trim(text);
	if (!strcmp(text, "FALSE"))
		return 0;
	if (strcmp(text, "TRUE")) {
		quote(text, q, sizeof(q));
		snprintf(why, wlen, "'%s' (TRUE or FALSE expected)", q);
		return -1;
	}
	/* Compute Engine stops a preempted VM about 30 s after it says so */
	n->action = IMDS_ACTION_TERMINATE;
	snprintf(n->action_name, sizeof(n->action_name), "terminate");
	n->at = now + GCE_PREEMPT_NOTICE_S;
	strftime(n->time, sizeof(n->time), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&n->at, &tm));
	return 1;
}

/* 1 if the JSON array a holds the string vm (ignoring case), 0 if not, -1 if a is not an array of strings. */
static int names_vm(json_object *a, const char *vm)
{
	size_t i, k;
	int found = 0;

	if (!a || !json_object_is_type(a, json_type_array))
		return -1;
	k = json_object_array_length(a);
	for (i = 0; i < k; i++) {
		json_object *r = json_object_array_get_idx(a, i);

		if (!json_object_is_type(r, json_type_string))
			return -1;
		if (!strcasecmp(json_object_get_string(r), vm))
			found = 1;
	}
	return found;
}

int imds_azure_events_parse(long status, const char *body, size_t len, const char *vm, time_t now,
			    struct imds_notice *n, char *why, size_t wlen)
{
	json_object *o = NULL, *events, *found = NULL;
	size_t i, k;
	int rc = -1;

	memset(n, 0, sizeof(*n));
	if (status != 200) {
		snprintf(why, wlen, "HTTP %ld (200 with the scheduled events expected)", status);
		return -1;
	}
	if (!body || len > AZURE_EVENTS_MAX) {
		snprintf(why, wlen, "an answer of %zu bytes (at most %d expected)", len, AZURE_EVENTS_MAX);
		return -1;
	}
	if (!(o = one_object(body, len, why, wlen)))
		return -1;
	if (!json_object_object_get_ex(o, "Events", &events) || !json_object_is_type(events, json_type_array)) {
		snprintf(why, wlen, "no \"Events\" (an array) in the document");
		goto out;
	}
	k = json_object_array_length(events);
	for (i = 0; i < k; i++) {
		json_object *e = json_object_array_get_idx(events, i), *res = NULL;
		const char *type;
		int mine;

		if (!json_object_is_type(e, json_type_object)) {
			snprintf(why, wlen, "event %zu is not an object", i + 1);
			goto out;
		}
		if (!(type = field(e, "EventType"))) {
			snprintf(why, wlen, "event %zu has no \"EventType\" (a string)", i + 1);
			goto out;
		}
		/* Reboot, Redeploy, Freeze, Terminate: not an eviction */
		if (strcmp(type, "Preempt"))
			continue;
		json_object_object_get_ex(e, "Resources", &res);
		if ((mine = names_vm(res, vm)) < 0) {
			snprintf(why, wlen, "Preempt event %zu: \"Resources\" is not an array of VM names", i + 1);
			goto out;
		}
		if (mine && !found)
			found = e;
	}
	rc = 0;
	if (found) {
		const char *nb = field(found, "NotBefore");
		struct tm tm;
		char *end;

		memset(&tm, 0, sizeof(tm));
		n->at = now;
		if (nb && (end = strptime(nb, "%a, %d %b %Y %H:%M:%S GMT", &tm)) && !*end)
			n->at = timegm(&tm);
		n->action = IMDS_ACTION_TERMINATE;
		snprintf(n->action_name, sizeof(n->action_name), "terminate");
		strftime(n->time, sizeof(n->time), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&n->at, &tm));
		rc = 1;
	}
out:
	json_object_put(o);
	if (rc < 0)
		memset(n, 0, sizeof(*n));
	return rc;
}
