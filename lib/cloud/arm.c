/*
 * arm.c - Azure Resource Manager requests, errors, operations and buckets
 * (arm.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "arm.h"
#include "httpc.h"
#include "ratelimit.h"
#include "strutil.h"

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

enum az_class arm_classify(long status, const char *code, const char *message)
{
	static const char *const capacity[] = { "AllocationFailed", "ZonalAllocationFailed",
		"OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest", "SkuNotAvailable",
		"AllocationFailedVMSeriesNotSupported", NULL };
	size_t i;

	code = code ? code : "";
	for (i = 0; capacity[i]; i++)
		if (!strcasecmp(code, capacity[i]))
			return AZ_CAPACITY;
	if (!strcasecmp(code, "QuotaExceeded") ||
	    (!strcasecmp(code, "OperationNotAllowed") && message && strcasestr(message, "quota")))
		return AZ_QUOTA;
	if (status == 429)
		return AZ_THROTTLED;
	if (status == 401 || status == 403)
		return AZ_AUTH;
	if (status == 404)
		return AZ_NOT_FOUND;
	if (status == 0 || status >= 500 || status == 408)
		return AZ_TRANSIENT;
	if (status == 409 && (!strcasecmp(code, "Conflict") || !strcasecmp(code, "OperationPreempted") ||
			      !strcasecmp(code, "RetryableError") || !strcasecmp(code, "AnotherOperationInProgress")))
		return AZ_TRANSIENT;
	if (status >= 400)
		return AZ_PERMANENT;
	/* a failed operation's error (status 200): its code decides */
	if (!strcasecmp(code, "InternalExecutionError") || !strcasecmp(code, "InternalServerError") ||
	    !strcasecmp(code, "OperationPreempted") || !strcasecmp(code, "RetryableError"))
		return AZ_TRANSIENT;
	return *code ? AZ_PERMANENT : AZ_OK;
}

static void error_of(json_object *e, char *code, size_t clen, char **message)
{
	const char *c = jstr(e, "code"), *m = jstr(e, "message");
	json_object *det;

	/* a deployment-style error wraps the real one in details[0] */
	if (c && !strcasecmp(c, "DeploymentFailed") && json_object_object_get_ex(e, "details", &det) &&
	    json_object_is_type(det, json_type_array) && json_object_array_length(det) > 0) {
		json_object *d = json_object_array_get_idx(det, 0);
		if (jstr(d, "code")) {
			c = jstr(d, "code");
			m = jstr(d, "message");
		}
	}
	if (c) {
		char *ec = str_escape_ctl(c);
		snprintf(code, clen, "%s", ec);
		free(ec);
	}
	if (m) {
		*message = str_escape_ctl(m);
		str_trim(*message);
	}
}

void arm_error_parse(const char *json, char *code, size_t clen, char **message)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *e;

	code[0] = '\0';
	*message = NULL;
	if (root && json_object_is_type(root, json_type_object)) {
		if (json_object_object_get_ex(root, "error", &e) && json_object_is_type(e, json_type_object))
			error_of(e, code, clen, message);
		else if (jstr(root, "code"))
			error_of(root, code, clen, message);
	}
	json_object_put(root);
}

int arm_operation_parse(const char *json, char *status, size_t slen, char *code, size_t clen, char **message)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *e;
	const char *s;
	int rc = -1;

	status[0] = code[0] = '\0';
	*message = NULL;
	if (root && json_object_is_type(root, json_type_object) && (s = jstr(root, "status"))) {
		char *es = str_escape_ctl(s);
		snprintf(status, slen, "%s", es);
		free(es);
		if (json_object_object_get_ex(root, "error", &e) && json_object_is_type(e, json_type_object))
			error_of(e, code, clen, message);
		rc = 0;
	}
	json_object_put(root);
	return rc;
}

double arm_retry_after(const char *v, double now_epoch)
{
	char *end;
	double s;

	if (!v)
		return -1;
	while (*v == ' ')
		v++;
	s = strtod(v, &end);
	if (end != v && (*end == '\0' || *end == '\r' || *end == '\n' || *end == ' ') && s >= 0 && s < 86400)
		return s;
	{
		time_t t = curl_getdate(v, NULL);
		if (t > 0)
			return t > now_epoch ? (double)t - now_epoch : 0;
	}
	return -1;
}

void arm_answer_free(struct arm_answer *a)
{
	free(a->body);
	free(a->async_op);
	free(a->location);
	free(a->message);
	memset(a, 0, sizeof(*a));
}

/* ---- the client ---- */

struct region_buckets {
	char *region;
	struct tbucket vm_write, vm_list, op_status;
};

struct arm_client {
	struct az_auth *auth;
	char *endpoint;          /* scheme://host[:port], no trailing / */
	char *ca_file;
	bool allow_http;
	long timeout_ms;
	double scale;
	CURL *curl;
	struct tbucket reads, writes, deletes;
	struct region_buckets *rb;
	size_t nrb;
	struct arm_stats stats;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void bucket(struct tbucket *b, double size, double per_s, double scale, double t)
{
	struct rate_spec s = { size, per_s * scale };

	tb_init(b, &s, t);
}

struct arm_client *arm_client_new(const struct arm_client_opts *o, burst_err_t *err)
{
	struct arm_client *c;
	struct az_auth_opts ao;
	const char *ep = o->endpoint ? o->endpoint : ARM_DEFAULT_ENDPOINT;
	double t = mono();

	if (strncmp(ep, "https://", 8) && !(o->allow_http && !strncmp(ep, "http://", 7))) {
		burst_err_set(err, "Endpoint=%s: want an https:// URL", ep);
		return NULL;
	}
	memset(&ao, 0, sizeof(ao));
	ao.creds = o->creds;
	ao.imds = o->imds;
	ao.ca_file = o->ca_file;
	ao.allow_http = o->allow_http;
	ao.timeout_ms = o->timeout_ms;
	c = xcalloc(1, sizeof(*c));
	c->auth = az_auth_new(&ao, err);
	if (!c->auth) {
		free(c);
		return NULL;
	}
	c->endpoint = xstrdup(ep);
	{
		size_t l = strlen(c->endpoint);
		while (l && c->endpoint[l - 1] == '/')
			c->endpoint[--l] = '\0';
	}
	c->ca_file = o->ca_file ? xstrdup(o->ca_file) : NULL;
	c->allow_http = o->allow_http;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
	c->scale = o->time_scale > 0 ? o->time_scale : 1;
	bucket(&c->reads, 250, 25, c->scale, t);
	bucket(&c->writes, 200, 10, c->scale, t);
	bucket(&c->deletes, 200, 10, c->scale, t);
	return c;
}

void arm_client_free(struct arm_client *c)
{
	size_t i;

	if (!c)
		return;
	az_auth_free(c->auth);
	free(c->endpoint);
	free(c->ca_file);
	for (i = 0; i < c->nrb; i++)
		free(c->rb[i].region);
	free(c->rb);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c);
}

struct arm_stats arm_client_stats(const struct arm_client *c)
{
	struct arm_stats s = c->stats;

	s.tokens = az_auth_tokens(c->auth);
	return s;
}

static struct region_buckets *region_of(struct arm_client *c, const char *region)
{
	size_t i;
	double t = mono();

	region = region ? region : "-";
	for (i = 0; i < c->nrb; i++)
		if (!strcasecmp(c->rb[i].region, region))
			return &c->rb[i];
	c->rb = xrealloc(c->rb, (c->nrb + 1) * sizeof(*c->rb));
	memset(&c->rb[c->nrb], 0, sizeof(c->rb[0]));
	c->rb[c->nrb].region = xstrdup(region);
	bucket(&c->rb[c->nrb].vm_write, 1500, 500.0 / 60, c->scale, t);
	bucket(&c->rb[c->nrb].vm_list, 900, 300.0 / 60, c->scale, t);
	bucket(&c->rb[c->nrb].op_status, 15000, 5000.0 / 60, c->scale, t);
	return &c->rb[c->nrb++];
}

/* The two buckets a request takes one token from. */
static void buckets_of(struct arm_client *c, enum arm_kind k, const char *region, struct tbucket **a,
		       struct tbucket **b)
{
	struct region_buckets *r = k == ARM_READ ? NULL : region_of(c, region);

	*a = &c->reads;
	*b = NULL;
	switch (k) {
	case ARM_READ: *a = &c->reads; break;
	case ARM_VM_PUT: *a = &c->writes; *b = &r->vm_write; break;
	case ARM_VM_DELETE: *a = &c->deletes; *b = &r->vm_write; break;
	case ARM_VM_LIST: *a = &c->reads; *b = &r->vm_list; break;
	case ARM_OP_STATUS: *a = &c->reads; *b = &r->op_status; break;
	}
}

static void nap(struct arm_client *c, double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	c->stats.waited += s;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* Wait until both buckets hold a token, and take it. */
static void take(struct arm_client *c, struct tbucket *a, struct tbucket *b)
{
	double t = mono(), w = tb_when(a, 1, t);

	if (b && tb_when(b, 1, t) > w)
		w = tb_when(b, 1, t);
	if (isfinite(w) && w > t)
		nap(c, w - t);
	t = mono();
	tb_take(a, 1, t);
	if (b)
		tb_take(b, 1, t);
}

struct resp {
	struct strbuf body;
	char *async_op, *location, *retry_after;
	long sub_left, res_left;   /* x-ms-ratelimit-remaining-*: -1 when not given */
};

long arm_ratelimit_left(const char *v)
{
	long least = -1;

	/* "7", or "Microsoft.Compute/PutVM3Min;0,Microsoft.Compute/PutVM30Min;1199" */
	while (v && *v) {
		const char *semi = strchr(v, ';'), *comma = strchr(v, ',');
		const char *num = semi && (!comma || semi < comma) ? semi + 1 : v;
		char *end;
		long n = strtol(num, &end, 10);

		if (end != num && n >= 0 && (end == comma || !*end || *end == ' ') && (least < 0 || n < least))
			least = n;
		v = comma ? comma + 1 : NULL;
	}
	return least;
}

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
	struct resp *r = ud;

	if (r->body.len + sz * n > (64u << 20))
		return 0;   /* a listing page is well below 64 MiB */
	sb_addn(&r->body, p, sz * n);
	return sz * n;
}

static char *header_value(const char *p, size_t l, const char *name)
{
	size_t nl = strlen(name);
	char *v;

	if (l <= nl + 1 || strncasecmp(p, name, nl) || p[nl] != ':')
		return NULL;
	v = xstrndup(p + nl + 1, l - nl - 1);
	str_trim(v);
	return v;
}

static size_t header(char *p, size_t sz, size_t n, void *ud)
{
	struct resp *r = ud;
	size_t l = sz * n;
	const char *colon;
	char *v;

	if ((v = header_value(p, l, "Azure-AsyncOperation")))
		free(r->async_op), r->async_op = v;
	else if ((v = header_value(p, l, "Location")))
		free(r->location), r->location = v;
	else if ((v = header_value(p, l, "Retry-After")))
		free(r->retry_after), r->retry_after = v;
	else if ((v = header_value(p, l, "x-ms-ratelimit-remaining-resource"))) {
		long left = arm_ratelimit_left(v);
		if (left >= 0 && (r->res_left < 0 || left < r->res_left))
			r->res_left = left;
		free(v);
	} else if (l > 38 && !strncasecmp(p, "x-ms-ratelimit-remaining-subscription-", 38) && (colon = memchr(p, ':', l))) {
		long left;
		v = xstrndup(colon + 1, l - (size_t)(colon + 1 - p));
		str_trim(v);
		left = arm_ratelimit_left(v);
		if (left >= 0 && (r->sub_left < 0 || left < r->sub_left))
			r->sub_left = left;
		free(v);
	}
	return l;
}

/* Is url of the endpoint's origin (so that it may get the token)? */
static bool same_origin(const struct arm_client *c, const char *url)
{
	size_t l = strlen(c->endpoint);

	return !strncmp(url, c->endpoint, l) && (url[l] == '/' || url[l] == '?' || url[l] == '\0');
}

static void http(struct arm_client *c, const char *method, const char *url, const char *body, const char *token,
		 struct resp *r, long *status, burst_err_t *err)
{
	struct curl_slist *h = NULL;
	char cerr[CURL_ERROR_SIZE] = "", line[4200];
	CURLcode rc;

	*status = 0;
	memset(r, 0, sizeof(*r));
	r->sub_left = r->res_left = -1;
	sb_init(&r->body);
	if (!c->curl)
		c->curl = curl_easy_init();
	curl_easy_reset(c->curl);
	h = curl_slist_append(h, "Accept: application/json");
	if (body)
		h = curl_slist_append(h, "Content-Type: application/json; charset=utf-8");
	snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
	h = curl_slist_append(h, line);
	explicit_bzero(line, sizeof(line));
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
	c->stats.calls++;
	rc = curl_easy_perform(c->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
	else
		burst_err_set(err, "%s %s: %s", method, url, cerr[0] ? cerr : curl_easy_strerror(rc));
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	{
		struct curl_slist *i;
		for (i = h; i; i = i->next)
			explicit_bzero(i->data, strlen(i->data));
	}
	curl_slist_free_all(h);
}

enum az_class arm_authenticate(struct arm_client *c, burst_err_t *err)
{
	enum az_class cls;

	az_auth_token(c->auth, &cls, err);
	return cls;
}

enum az_class arm_request(struct arm_client *c, const char *method, const char *path, const char *body,
			  enum arm_kind kind, const char *region, const char *what, struct arm_answer *ans,
			  burst_err_t *err)
{
	struct tbucket *ba, *bb;
	struct strbuf url;
	int tries = 0, reauth = 0;
	enum az_class cls = AZ_TRANSIENT;

	memset(ans, 0, sizeof(*ans));
	ans->retry_after = -1;
	sb_init(&url);
	if (!strncmp(path, "https://", 8) || !strncmp(path, "http://", 7)) {
		if (!same_origin(c, path)) {
			char *e = str_escape_ctl(path);
			burst_err_set(err, "%s: ARM gave the URL %.300s, not one of the endpoint %s: not following it",
				      what, e, c->endpoint);
			free(e);
			return AZ_PERMANENT;
		}
		sb_add(&url, path);
	} else
		sb_addf(&url, "%s%s", c->endpoint, path);
	buckets_of(c, kind, region, &ba, &bb);
	for (;;) {
		struct resp r;
		const char *tok;
		long st;
		burst_err_t herr;

		tok = az_auth_token(c->auth, &cls, err);
		if (!tok)
			break;
		take(c, ba, bb);
		http(c, method, url.s, body, tok, &r, &st, &herr);
		arm_answer_free(ans);
		ans->status = st;
		ans->body = sb_take(&r.body);
		ans->async_op = r.async_op;
		ans->location = r.location;
		ans->retry_after = arm_retry_after(r.retry_after, (double)time(NULL));
		free(r.retry_after);
		if (st == 0) {
			cls = AZ_TRANSIENT;
			burst_err_set(err, "%s: %s", what, herr.msg);
			break;
		}
		if (st >= 200 && st < 300) {
			cls = AZ_OK;
			break;
		}
		arm_error_parse(ans->body, ans->code, sizeof(ans->code), &ans->message);
		if (st == 401 && !reauth++) {
			az_auth_invalidate(c->auth);
			continue;
		}
		if (st == 429) {
			double t = mono(), w = ans->retry_after >= 0 ? ans->retry_after : 1;
			c->stats.throttled++;
			/* the cloud's bucket is empty: so is ours. The one the
			 * answer says is at 0 (x-ms-ratelimit-remaining-*), not
			 * the other, whose tokens are still there; both when
			 * it does not say (found by bench/launch-scale-azure:
			 * a 429 of the subscription's writes emptied the
			 * region's VM create bucket too, and 4,096 creates
			 * went at its 500 a minute instead of 10 a second) */
			if (r.sub_left == 0 || r.res_left != 0 || !bb)
				tb_drain(ba, t);
			if (bb && (r.res_left == 0 || r.sub_left != 0))
				tb_drain(bb, t);
			if (tries++ < ARM_THROTTLE_RETRIES) {
				nap(c, w);
				continue;
			}
		}
		cls = arm_classify(st, ans->code, ans->message);
		burst_err_set(err, "%s: HTTP %ld%s%s%s%s", what, st, ans->code[0] ? " " : "", ans->code,
			      ans->message ? ": " : "", ans->message ? ans->message : "");
		break;
	}
	sb_free(&url);
	return cls;
}

enum az_class arm_wait(struct arm_client *c, const struct arm_answer *start, const char *region, const char *what,
		       double timeout_s, unsigned *polls, burst_err_t *err)
{
	const char *url = start->async_op ? start->async_op : start->location;
	bool async = start->async_op != NULL;
	double wait = start->retry_after >= 0 ? start->retry_after : 1, t0 = mono();
	unsigned n = 0;
	enum az_class cls;

	if (polls)
		*polls = 0;
	if (!url)
		return AZ_OK;
	for (;;) {
		struct arm_answer a;
		char status[32], code[96], *msg = NULL;

		if (mono() - t0 + wait > timeout_s) {
			burst_err_set(err, "%s: still running after %.0f s (its operation polled %u times); left to "
				      "finish on its own", what, timeout_s, n);
			cls = AZ_TRANSIENT;
			break;
		}
		nap(c, wait);
		n++;
		cls = arm_request(c, "GET", url, NULL, ARM_OP_STATUS, region, what, &a, err);
		if (cls != AZ_OK) {
			arm_answer_free(&a);
			break;
		}
		wait = a.retry_after >= 0 ? a.retry_after : 1;
		if (!async) {
			bool done = a.status != 202;
			arm_answer_free(&a);
			if (done)
				break;
			continue;
		}
		if (arm_operation_parse(a.body, status, sizeof(status), code, sizeof(code), &msg) < 0) {
			burst_err_set(err, "%s: the operation's status (HTTP %ld) is no status document", what, a.status);
			arm_answer_free(&a);
			cls = AZ_TRANSIENT;
			break;
		}
		arm_answer_free(&a);
		if (!strcasecmp(status, "InProgress") || !strcasecmp(status, "Accepted") || !strcasecmp(status, "Running") ||
		    !strcasecmp(status, "Creating") || !strcasecmp(status, "Deleting") || !strcasecmp(status, "Updating")) {
			free(msg);
			continue;
		}
		if (!strcasecmp(status, "Succeeded")) {
			free(msg);
			cls = AZ_OK;
			break;
		}
		if (!strcasecmp(status, "Canceled")) {
			cls = AZ_TRANSIENT;
			burst_err_set(err, "%s: its operation was Canceled%s%s", what, msg ? ": " : "", msg ? msg : "");
		} else {
			cls = arm_classify(200, code, msg);
			if (cls == AZ_OK)
				cls = AZ_PERMANENT;
			burst_err_set(err, "%s: its operation %s: %s%s%s", what, status, code[0] ? code : "(no code)",
				      msg ? ": " : "", msg ? msg : "");
		}
		free(msg);
		break;
	}
	if (polls)
		*polls = n;
	return cls;
}
