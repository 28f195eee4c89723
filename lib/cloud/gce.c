/*
 * gce.c - Compute Engine's REST API (gce.h).
 */
#include "gce.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "gce_auth.h"
#include "gce_int.h"
#include "sha256.h"
#include "strutil.h"

const char *gce_class_name(enum gce_class c)
{
	switch (c) {
	case GCE_OK: return "OK";
	case GCE_CAPACITY: return "CAPACITY";
	case GCE_QUOTA: return "QUOTA";
	case GCE_THROTTLED: return "THROTTLED";
	case GCE_TRANSIENT: return "TRANSIENT";
	case GCE_PERMANENT: return "PERMANENT";
	case GCE_AUTH: return "AUTH";
	case GCE_NOT_FOUND: return "NOT_FOUND";
	case GCE_EXISTS: return "EXISTS";
	}
	return "?";
}

static bool has(const char *s, const char *what)
{
	return s && strcasestr(s, what);
}

enum gce_class gce_classify(long st, const char *reason, const char *msg)
{
	/* a rate quota says "Quota exceeded for quota metric 'Queries'" too:
	 * the reason decides first */
	if (has(reason, "rateLimitExceeded") || has(reason, "RATE_LIMIT_EXCEEDED") || st == 429 ||
	    has(msg, "Rate Limit Exceeded"))
		return GCE_THROTTLED;
	if (has(reason, "RESOURCE_POOL_EXHAUSTED") || has(reason, "resourcePoolExhausted") ||
	    has(reason, "ZONE_RESOURCE_POOL_EXHAUSTED") || has(reason, "STOCKOUT") ||
	    has(msg, "does not have enough resources available") || has(msg, "ZONE_RESOURCE_POOL_EXHAUSTED"))
		return GCE_CAPACITY;
	if (has(reason, "QUOTA_EXCEEDED") || has(reason, "quotaExceeded") || has(msg, "QUOTA_EXCEEDED") ||
	    (st == 0 && has(msg, "Quota '")))
		return GCE_QUOTA;
	if (st == 0) {
		/* an operation's error (no HTTP status of its own) */
		if (has(reason, "ALREADY_EXISTS") || has(reason, "alreadyExists"))
			return GCE_EXISTS;
		if (has(reason, "NOT_FOUND") || has(reason, "notFound"))
			return GCE_NOT_FOUND;
		if (has(reason, "PERMISSION") || has(reason, "forbidden"))
			return GCE_AUTH;
		if (has(reason, "INTERNAL") || has(reason, "UNAVAILABLE") || has(reason, "TIMEOUT"))
			return GCE_TRANSIENT;
		return GCE_PERMANENT;
	}
	if (st >= 200 && st < 300)
		return GCE_OK;
	if (st == 401 || st == 403)
		return GCE_AUTH;
	if (st == 404)
		return GCE_NOT_FOUND;
	if (st == 409)
		return GCE_EXISTS;
	if (st == 408 || st == 412 || st >= 500)
		return GCE_TRANSIENT;
	return GCE_PERMANENT;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static long jlong(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_int))
		return (long)json_object_get_int64(v);
	if (json_object_is_type(v, json_type_string))
		return strtol(json_object_get_string(v), NULL, 10);   /* int64 in proto3 JSON: a string */
	return 0;
}

/* text from Google: its control characters written out (NULL stays NULL) */
static char *cloud_text(const char *s)
{
	return s ? str_escape_ctl(s) : NULL;
}

static json_object *parse_object(const char *json)
{
	json_object *o = json ? json_tokener_parse(json) : NULL;

	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int gce_error_parse(const char *json, char *reason, size_t rlen, char *msg, size_t mlen)
{
	json_object *root = parse_object(json), *e, *errs;
	const char *r = NULL, *m;
	char *t;

	if (rlen)
		reason[0] = '\0';
	if (mlen)
		msg[0] = '\0';
	if (!root || !json_object_object_get_ex(root, "error", &e) || !json_object_is_type(e, json_type_object)) {
		json_object_put(root);
		return -1;
	}
	m = jstr(e, "message");
	if (json_object_object_get_ex(e, "errors", &errs) && json_object_is_type(errs, json_type_array) &&
	    json_object_array_length(errs) > 0) {
		json_object *first = json_object_array_get_idx(errs, 0);
		r = jstr(first, "reason");
		if (!m)
			m = jstr(first, "message");
	}
	if (!r) {
		/* the newer shape: details[].reason of an ErrorInfo, else the status */
		json_object *det;
		if (json_object_object_get_ex(e, "details", &det) && json_object_is_type(det, json_type_array))
			for (size_t i = 0; !r && i < json_object_array_length(det); i++)
				r = jstr(json_object_array_get_idx(det, i), "reason");
		if (!r)
			r = jstr(e, "status");
	}
	t = str_escape_ctl(r ? r : "");
	snprintf(reason, rlen, "%s", t);
	free(t);
	t = str_escape_ctl(m ? m : "");
	snprintf(msg, mlen, "%s", t);
	free(t);
	json_object_put(root);
	return 0;
}

/* ---- names, labels, times ---- */

static size_t name_part(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; s && *s && n + 1 < cap; s++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*s);
		out[n++] = (char)((isascii(c) && isalnum(c)) ? c : '-');
	}
	out[n] = '\0';
	return n;
}

void gce_vm_name(const char *cluster, const char *node, int attempt, char out[64])
{
	char c[256], nd[256], full[600];
	size_t l;

	name_part(cluster, c, sizeof(c));
	name_part(node, nd, sizeof(nd));
	snprintf(full, sizeof(full), "%s%s-%s-%d", isalpha((unsigned char)c[0]) ? "" : "b", c, nd, attempt);
	l = strlen(full);
	if (l <= 63) {
		memcpy(out, full, l + 1);
		return;
	}
	{
		/* the start, then a hash of the whole: unique still */
		struct sha256 h;
		unsigned char d[32];
		char tail[32];
		struct strbuf s;

		sb_init(&s);
		sb_addf(&s, "%s\n%s\n%d", cluster ? cluster : "", node ? node : "", attempt);
		sha256_init(&h);
		sha256_update(&h, s.s, s.len);
		sha256_final(&h, d);
		sb_free(&s);
		snprintf(tail, sizeof(tail), "-%02x%02x%02x%02x-%d", d[0], d[1], d[2], d[3], attempt);
		l = strlen(tail);
		memcpy(out, full, 63 - l);
		memcpy(out + 63 - l, tail, l + 1);
	}
}

int gce_label_value(const char *s, char out[64])
{
	size_t n = strlen(s), i;

	if (n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n && strncmp(s, "hex--", 5)) {
		memcpy(out, s, n + 1);
		return 0;
	}
	if (n > 29) {
		out[0] = '\0';
		return -1;
	}
	memcpy(out, "hex--", 5);
	for (i = 0; i < n; i++)
		snprintf(out + 5 + 2 * i, 3, "%02x", (unsigned char)s[i]);
	out[5 + 2 * n] = '\0';
	return 0;
}

int gce_label_decode(const char *v, char *out, size_t len)
{
	size_t n, i;

	if (!v || !len)
		return -1;
	if (strncmp(v, "hex--", 5)) {
		if (strlen(v) >= len)
			return -1;
		snprintf(out, len, "%s", v);
		return 0;
	}
	v += 5;
	n = strlen(v);
	if (n % 2 || n / 2 >= len || strspn(v, "0123456789abcdef") != n)
		return -1;
	for (i = 0; i < n / 2; i++) {
		unsigned x;
		if (sscanf(v + 2 * i, "%2x", &x) != 1 || x == 0)
			return -1;
		out[i] = (char)x;
	}
	out[n / 2] = '\0';
	return 0;
}

time_t gce_parse_time(const char *s)
{
	struct tm tm;
	const char *p;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (!s || !(p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	t = timegm(&tm);
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if (*p == 'Z' || *p == 'z')
		return t;
	if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) && p[3] == ':' &&
	    isdigit((unsigned char)p[4]) && isdigit((unsigned char)p[5])) {
		long off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600L + ((p[4] - '0') * 10 + (p[5] - '0')) * 60L;
		return *p == '+' ? t - off : t + off;
	}
	return *p ? 0 : t;
}

const char *gce_basename(const char *url)
{
	const char *s;

	if (!url)
		return NULL;
	s = strrchr(url, '/');
	return s ? s + 1 : url;
}

/* ---- operations ---- */

void gce_op_free(struct gce_op *op)
{
	size_t i;

	if (!op)
		return;
	free(op->name);
	free(op->status);
	free(op->type);
	free(op->zone);
	free(op->region);
	free(op->group);
	free(op->target);
	for (i = 0; i < op->nerrors; i++) {
		free(op->errors[i].code);
		free(op->errors[i].message);
	}
	free(op->errors);
	for (i = 0; i < op->nlocs; i++) {
		free(op->locs[i].where);
		free(op->locs[i].status);
	}
	free(op->locs);
	memset(op, 0, sizeof(*op));
}

static char *short_of(const char *url)
{
	return url ? cloud_text(gce_basename(url)) : NULL;
}

static int op_from(json_object *o, struct gce_op *out, burst_err_t *err)
{
	json_object *e, *errs, *md, *pls;

	memset(out, 0, sizeof(*out));
	if (!jstr(o, "name") || !jstr(o, "status")) {
		burst_err_set(err, "the answer is not an Operation (no name or status)");
		return -1;
	}
	out->name = cloud_text(jstr(o, "name"));
	out->status = cloud_text(jstr(o, "status"));
	out->type = cloud_text(jstr(o, "operationType"));
	out->zone = short_of(jstr(o, "zone"));
	out->region = short_of(jstr(o, "region"));
	out->group = cloud_text(jstr(o, "operationGroupId"));
	out->target = short_of(jstr(o, "targetLink"));
	out->http_error = jlong(o, "httpErrorStatusCode");
	if (json_object_object_get_ex(o, "error", &e) && json_object_object_get_ex(e, "errors", &errs) &&
	    json_object_is_type(errs, json_type_array)) {
		size_t n = json_object_array_length(errs), i;
		out->errors = xcalloc(n ? n : 1, sizeof(*out->errors));
		for (i = 0; i < n; i++) {
			json_object *x = json_object_array_get_idx(errs, i);
			struct gce_op_error *pe = &out->errors[out->nerrors++];
			pe->code = cloud_text(jstr(x, "code") ? jstr(x, "code") : "");
			pe->message = cloud_text(jstr(x, "message") ? jstr(x, "message") : "");
			pe->cls = gce_classify(0, pe->code, pe->message);
			if (pe->cls == GCE_PERMANENT && out->http_error)
				pe->cls = gce_classify(out->http_error, pe->code, pe->message);
		}
	}
	if (json_object_object_get_ex(o, "instancesBulkInsertOperationMetadata", &md) &&
	    json_object_object_get_ex(md, "perLocationStatus", &pls) && json_object_is_type(pls, json_type_object)) {
		json_object_object_foreach(pls, where, st)
		{
			struct gce_op_loc *l;
			out->locs = xrealloc(out->locs, (out->nlocs + 1) * sizeof(*out->locs));
			l = &out->locs[out->nlocs++];
			memset(l, 0, sizeof(*l));
			l->where = cloud_text(where);
			l->status = cloud_text(jstr(st, "status"));
			l->target = jlong(st, "targetVmCount");
			l->created = jlong(st, "createdVmCount");
			l->failed = jlong(st, "failedToCreateVmCount");
			l->deleted = jlong(st, "deletedVmCount");
		}
	}
	return 0;
}

int gce_op_parse(const char *json, struct gce_op *out, burst_err_t *err)
{
	json_object *root = parse_object(json);
	int rc;

	memset(out, 0, sizeof(*out));
	if (!root) {
		burst_err_set(err, "the answer is not a JSON object");
		return -1;
	}
	rc = op_from(root, out, err);
	json_object_put(root);
	return rc;
}

bool gce_op_done(const struct gce_op *op)
{
	return op->status && !strcmp(op->status, "DONE");
}

enum gce_class gce_op_class(const struct gce_op *op)
{
	size_t i;

	if (!op->nerrors)
		return GCE_OK;
	for (i = 0; i < op->nerrors; i++)
		if (op->errors[i].cls == GCE_CAPACITY)
			return GCE_CAPACITY;
	return op->errors[0].cls;
}

void gce_op_errors(const struct gce_op *op, char *buf, size_t len)
{
	size_t i, at = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < op->nerrors && at + 1 < len; i++) {
		int w = snprintf(buf + at, len - at, "%s%s: %s", i ? "; " : "", op->errors[i].code,
				 op->errors[i].message);
		if (w < 0)
			break;
		at += (size_t)w;
	}
}

void gce_ops_free(struct gce_ops *l)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		gce_op_free(&l->v[i]);
	if (l) {
		free(l->v);
		l->v = NULL;
		l->n = 0;
	}
}

/* Each element of an items value (an array, or an aggregated map of
 * scope -> {key: [...]}) */
static void each_item(json_object *items, const char *key, void (*fn)(json_object *, void *), void *ud)
{
	size_t i;

	if (json_object_is_type(items, json_type_array)) {
		for (i = 0; i < json_object_array_length(items); i++)
			fn(json_object_array_get_idx(items, i), ud);
		return;
	}
	if (!json_object_is_type(items, json_type_object))
		return;
	json_object_object_foreach(items, scope, v)
	{
		json_object *arr;
		(void)scope;
		if (json_object_object_get_ex(v, key, &arr) && json_object_is_type(arr, json_type_array))
			for (i = 0; i < json_object_array_length(arr); i++)
				fn(json_object_array_get_idx(arr, i), ud);
	}
}

static void add_op(json_object *o, void *ud)
{
	struct gce_ops *l = ud;
	struct gce_op op;
	burst_err_t e;

	if (op_from(o, &op, &e) < 0)
		return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = op;
}

static int list_page(const char *json, const char *key, void (*fn)(json_object *, void *), void *ud, char **next,
		     burst_err_t *err)
{
	json_object *root = parse_object(json), *items;
	const char *np;

	*next = NULL;
	if (!root) {
		burst_err_set(err, "the answer is not a JSON object");
		return -1;
	}
	if (!jstr(root, "kind") && !json_object_object_get_ex(root, "items", &items) && !jstr(root, "id")) {
		json_object_put(root);
		burst_err_set(err, "the answer is not a listing (no kind, id or items)");
		return -1;
	}
	if (json_object_object_get_ex(root, "items", &items))
		each_item(items, key, fn, ud);
	np = jstr(root, "nextPageToken");
	if (np && *np)
		*next = xstrdup(np);
	json_object_put(root);
	return 0;
}

int gce_ops_parse(const char *json, struct gce_ops *out, char **next, burst_err_t *err)
{
	return list_page(json, "operations", add_op, out, next, err);
}

/* ---- instances ---- */

void gce_vm_free(struct gce_vm *v)
{
	if (!v)
		return;
	free(v->name);
	free(v->id);
	free(v->zone);
	free(v->status);
	free(v->ip);
	free(v->created);
	free(v->fingerprint);
	free(v->machine_type);
	free(v->cluster);
	free(v->provider);
	free(v->node);
	free(v->attempt);
	free(v->batch);
	memset(v, 0, sizeof(*v));
}

void gce_vms_free(struct gce_vms *l)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		gce_vm_free(&l->v[i]);
	if (l) {
		free(l->v);
		l->v = NULL;
		l->n = 0;
	}
}

static int vm_from(json_object *o, struct gce_vm *v)
{
	json_object *x, *labels = NULL;

	memset(v, 0, sizeof(*v));
	if (!jstr(o, "name"))
		return -1;
	v->name = cloud_text(jstr(o, "name"));
	v->id = cloud_text(jstr(o, "id"));
	if (!v->id && json_object_object_get_ex(o, "id", &x) && json_object_is_type(x, json_type_int)) {
		char b[32];
		snprintf(b, sizeof(b), "%llu", (unsigned long long)json_object_get_uint64(x));
		v->id = xstrdup(b);
	}
	v->zone = short_of(jstr(o, "zone"));
	v->status = cloud_text(jstr(o, "status") ? jstr(o, "status") : "");
	v->created = cloud_text(jstr(o, "creationTimestamp"));
	v->machine_type = short_of(jstr(o, "machineType"));
	if (json_object_object_get_ex(o, "networkInterfaces", &x) && json_object_is_type(x, json_type_array) &&
	    json_object_array_length(x) > 0) {
		const char *ip = jstr(json_object_array_get_idx(x, 0), "networkIP");
		if (ip && *ip && strlen(ip) < 46 && strspn(ip, "0123456789abcdefABCDEF.:") == strlen(ip))
			v->ip = xstrdup(ip);
	}
	if (json_object_object_get_ex(o, "metadata", &x))
		v->fingerprint = cloud_text(jstr(x, "fingerprint"));
	if (json_object_object_get_ex(o, "labels", &labels) && json_object_is_type(labels, json_type_object)) {
		v->cluster = cloud_text(jstr(labels, GCE_LABEL_CLUSTER));
		v->provider = cloud_text(jstr(labels, GCE_LABEL_PROVIDER));
		v->attempt = cloud_text(jstr(labels, GCE_LABEL_ATTEMPT));
		v->batch = cloud_text(jstr(labels, GCE_LABEL_BATCH));
		if (jstr(labels, GCE_LABEL_NODE)) {
			char node[64];
			if (gce_label_decode(jstr(labels, GCE_LABEL_NODE), node, sizeof(node)) == 0)
				v->node = cloud_text(node);
		}
	}
	/* what the labels cannot carry (a bulk insert gives every VM the same
	 * ones): the node, attempt and join token the driver sets in each VM's
	 * metadata */
	if (json_object_object_get_ex(o, "metadata", &x) &&
	    json_object_object_get_ex(x, "items", &x) && json_object_is_type(x, json_type_array)) {
		size_t i, n = json_object_array_length(x);
		for (i = 0; i < n; i++) {
			json_object *it = json_object_array_get_idx(x, i);
			const char *k = jstr(it, "key"), *val = jstr(it, "value");
			if (!k || !val)
				continue;
			if (!v->node && !strcmp(k, GCE_META_NODE))
				v->node = cloud_text(val);
			else if (!v->attempt && !strcmp(k, GCE_META_ATTEMPT))
				v->attempt = cloud_text(val);
			else if (!strcmp(k, GCE_META_TOKEN) && *val)
				v->has_token = true;
		}
	}
	if (json_object_object_get_ex(o, "scheduling", &x)) {
		json_object *p;
		const char *pm = jstr(x, "provisioningModel");
		v->preemptible = (pm && !strcmp(pm, "SPOT")) ||
			(json_object_object_get_ex(x, "preemptible", &p) && json_object_get_boolean(p));
	}
	return 0;
}

int gce_vm_parse(const char *json, struct gce_vm *out, burst_err_t *err)
{
	json_object *root = parse_object(json);
	int rc;

	memset(out, 0, sizeof(*out));
	if (!root) {
		burst_err_set(err, "the answer is not a JSON object");
		return -1;
	}
	rc = vm_from(root, out);
	json_object_put(root);
	if (rc < 0)
		burst_err_set(err, "the answer is not an Instance (no name)");
	return rc;
}

static void add_vm(json_object *o, void *ud)
{
	struct gce_vms *l = ud;
	struct gce_vm v;

	if (vm_from(o, &v) < 0)
		return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = v;
}

int gce_vms_parse(const char *json, struct gce_vms *out, char **next, burst_err_t *err)
{
	return list_page(json, "instances", add_vm, out, next, err);
}

/* ---- the client ---- */

struct gce_client {
	char *base;              /* ENDPOINT/compute/v1/projects/PROJECT/ */
	char *project;
	char *ca_file;
	struct gce_auth *auth;
	long timeout_ms;
	unsigned calls;
	CURL *curl;
};

struct gce_client *gce_client_new(const struct gce_client_opts *o, burst_err_t *err)
{
	const char *ep = o->endpoint ? o->endpoint : GCE_ENDPOINT_DEFAULT;
	struct gce_client *c;
	struct strbuf sb;
	size_t l;

	if (strncasecmp(ep, "https://", 8) && !(o->allow_http && gce_url_is_http(ep))) {
		char *e = str_escape_ctl(ep);
		burst_err_set(err, "Endpoint=%s: want https://HOST[:PORT] (plain http only with AllowInsecureEndpoint=yes, "
			      "for tests)", e);
		free(e);
		return NULL;
	}
	if (!o->project || !*o->project ||
	    strspn(o->project, "abcdefghijklmnopqrstuvwxyz0123456789-.:") != strlen(o->project)) {
		char *e = str_escape_ctl(o->project ? o->project : "");
		burst_err_set(err, "project '%s' is not a Google Cloud project id (lower-case letters, digits, '-')", e);
		free(e);
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	sb_init(&sb);
	sb_add(&sb, ep);
	l = sb.len;
	while (l && sb.s[l - 1] == '/')
		sb.s[--l] = '\0';
	sb.len = l;
	sb_addf(&sb, "/compute/v1/projects/%s/", o->project);
	c->base = sb_take(&sb);
	c->project = xstrdup(o->project);
	c->ca_file = o->ca_file ? xstrdup(o->ca_file) : NULL;
	c->auth = o->auth;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
	return c;
}

void gce_client_free(struct gce_client *c)
{
	if (!c)
		return;
	free(c->base);
	free(c->project);
	free(c->ca_file);
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c);
}

const char *gce_client_project(const struct gce_client *c)
{
	return c->project;
}

long gce_client_call_bound_ms(const struct gce_client *c)
{
	/* a token's request, then the call and its retry after a 401 */
	return 10000 + 2 * (c->timeout_ms + 5000);
}

unsigned gce_client_calls(const struct gce_client *c)
{
	return c->calls;
}

enum gce_class gce_call(struct gce_client *c, const char *method, const char *path, const char *body,
			const char *what, char **answer, burst_err_t *err)
{
	struct gce_http_req rq;
	struct gce_http_resp rs;
	struct strbuf url;
	enum gce_class cls;
	char reason[128], msg[2048];
	int tries;

	if (answer)
		*answer = NULL;
	if (!c->curl && !(c->curl = curl_easy_init())) {
		burst_err_set(err, "%s: curl cannot start", what);
		return GCE_TRANSIENT;
	}
	sb_init(&url);
	sb_addf(&url, "%s%s", c->base, path);
	for (tries = 0; tries < 2; tries++) {
		const char *tok = c->auth ? gce_auth_token(c->auth, tries > 0, err) : NULL;

		if (c->auth && !tok) {
			char m[sizeof(err->msg)];
			snprintf(m, sizeof(m), "%.600s: %.3400s", what, err->msg);
			burst_err_set(err, "%s", m);
			sb_free(&url);
			return GCE_AUTH;
		}
		memset(&rq, 0, sizeof(rq));
		rq.method = method;
		rq.url = url.s;
		rq.body = body;
		rq.bearer = tok;
		rq.ca_file = c->ca_file;
		rq.timeout_ms = c->timeout_ms;
		c->calls++;
		if (gce_http(c->curl, &rq, &rs, err) < 0) {
			char m[sizeof(err->msg)];
			snprintf(m, sizeof(m), "%.600s: %.3400s", what, err->msg);
			burst_err_set(err, "%s", m);
			sb_free(&rs.body);
			sb_free(&url);
			return GCE_TRANSIENT;
		}
		if (rs.status == 401 && tries == 0 && c->auth) {
			sb_free(&rs.body);
			continue;   /* a token revoked or expired early: one new one */
		}
		break;
	}
	sb_free(&url);
	if (rs.status >= 200 && rs.status < 300) {
		if (answer)
			*answer = sb_take(&rs.body);
		sb_free(&rs.body);
		return GCE_OK;
	}
	if (gce_error_parse(rs.body.s, reason, sizeof(reason), msg, sizeof(msg)) < 0) {
		char *t = str_escape_ctl(rs.body.s ? rs.body.s : "");
		snprintf(msg, sizeof(msg), "%.300s", t);
		free(t);
	}
	cls = gce_classify(rs.status, reason, msg);
	burst_err_set(err, "%s: HTTP %ld%s%s%s%s", what, rs.status, reason[0] ? " " : "", reason, msg[0] ? ": " : "",
		      msg);
	sb_free(&rs.body);
	return cls;
}

/* ---- request bodies ---- */

static json_object *kv_items(const struct gce_kv *kv, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_object *it = json_object_new_object();
		json_object_object_add(it, "key", json_object_new_string(kv[i].key));
		json_object_object_add(it, "value", json_object_new_string(kv[i].value));
		json_object_array_add(a, it);
	}
	return a;
}

static char *to_text(json_object *o)
{
	char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));

	json_object_put(o);
	return s;
}

char *gce_bulk_body(const struct gce_bulk *b)
{
	json_object *root = json_object_new_object(), *pip = json_object_new_object();
	char num[32];
	size_t i;

	snprintf(num, sizeof(num), "%zu", b->n);
	json_object_object_add(root, "count", json_object_new_string(num));
	snprintf(num, sizeof(num), "%ld", b->min_count);
	json_object_object_add(root, "minCount", json_object_new_string(num));
	for (i = 0; i < b->n; i++) {
		json_object *one = json_object_new_object();
		json_object_object_add(one, "name", json_object_new_string(b->names[i]));
		json_object_object_add(pip, b->names[i], one);
	}
	json_object_object_add(root, "perInstanceProperties", pip);
	if (b->nzones) {
		json_object *lp = json_object_new_object(), *locs = json_object_new_object();
		for (i = 0; i < b->nzones; i++) {
			json_object *p = json_object_new_object();
			char key[200];
			json_object_object_add(p, "preference", json_object_new_string("ALLOW"));
			snprintf(key, sizeof(key), "zones/%s", b->zones[i]);
			json_object_object_add(locs, key, p);
		}
		json_object_object_add(lp, "locations", locs);
		json_object_object_add(root, "locationPolicy", lp);
	}
	if (b->source_template) {
		json_object_object_add(root, "sourceInstanceTemplate", json_object_new_string(b->source_template));
	} else {
		json_object *ip = json_object_new_object(), *disks = json_object_new_array(), *d = json_object_new_object(),
			    *init = json_object_new_object(), *nics = json_object_new_array(), *nic = json_object_new_object();
		json_object_object_add(ip, "machineType", json_object_new_string(b->machine_type ? b->machine_type : ""));
		json_object_object_add(d, "boot", json_object_new_boolean(1));
		json_object_object_add(d, "autoDelete", json_object_new_boolean(1));
		json_object_object_add(d, "type", json_object_new_string("PERSISTENT"));
		if (b->image)
			json_object_object_add(init, "sourceImage", json_object_new_string(b->image));
		if (b->disk_gb > 0) {
			snprintf(num, sizeof(num), "%ld", b->disk_gb);
			json_object_object_add(init, "diskSizeGb", json_object_new_string(num));
		}
		if (b->disk_type)
			json_object_object_add(init, "diskType", json_object_new_string(b->disk_type));
		json_object_object_add(d, "initializeParams", init);
		json_object_array_add(disks, d);
		json_object_object_add(ip, "disks", disks);
		if (b->network)
			json_object_object_add(nic, "network", json_object_new_string(b->network));
		if (b->subnetwork)
			json_object_object_add(nic, "subnetwork", json_object_new_string(b->subnetwork));
		if (b->external_ip) {
			json_object *acs = json_object_new_array(), *ac = json_object_new_object();
			json_object_object_add(ac, "type", json_object_new_string("ONE_TO_ONE_NAT"));
			json_object_object_add(ac, "name", json_object_new_string("External NAT"));
			json_object_array_add(acs, ac);
			json_object_object_add(nic, "accessConfigs", acs);
		}
		json_object_array_add(nics, nic);
		json_object_object_add(ip, "networkInterfaces", nics);
		if (b->service_account) {
			json_object *sas = json_object_new_array(), *sa = json_object_new_object(),
				    *scopes = json_object_new_array();
			json_object_object_add(sa, "email", json_object_new_string(b->service_account));
			json_object_array_add(scopes, json_object_new_string("https://www.googleapis.com/auth/cloud-platform"));
			json_object_object_add(sa, "scopes", scopes);
			json_object_array_add(sas, sa);
			json_object_object_add(ip, "serviceAccounts", sas);
		}
		if (b->ntags) {
			json_object *t = json_object_new_object(), *items = json_object_new_array();
			for (i = 0; i < b->ntags; i++)
				json_object_array_add(items, json_object_new_string(b->tags[i]));
			json_object_object_add(t, "items", items);
			json_object_object_add(ip, "tags", t);
		}
		if (b->nlabels) {
			json_object *l = json_object_new_object();
			for (i = 0; i < b->nlabels; i++)
				json_object_object_add(l, b->labels[i].key, json_object_new_string(b->labels[i].value));
			json_object_object_add(ip, "labels", l);
		}
		if (b->nmetadata) {
			json_object *m = json_object_new_object();
			json_object_object_add(m, "items", kv_items(b->metadata, b->nmetadata));
			json_object_object_add(ip, "metadata", m);
		}
		if (b->spot) {
			json_object *s = json_object_new_object();
			json_object_object_add(s, "provisioningModel", json_object_new_string("SPOT"));
			json_object_object_add(s, "instanceTerminationAction", json_object_new_string("DELETE"));
			json_object_object_add(s, "automaticRestart", json_object_new_boolean(0));
			json_object_object_add(s, "onHostMaintenance", json_object_new_string("TERMINATE"));
			json_object_object_add(ip, "scheduling", s);
		}
		json_object_object_add(root, "instanceProperties", ip);
	}
	return to_text(root);
}

char *gce_metadata_body(const char *fingerprint, const struct gce_kv *items, size_t n)
{
	json_object *root = json_object_new_object();

	if (fingerprint)
		json_object_object_add(root, "fingerprint", json_object_new_string(fingerprint));
	json_object_object_add(root, "items", kv_items(items, n));
	return to_text(root);
}
