/*
 * wire_join.c - what travels on the join port inside the authenticated
 * envelope (wire.h; the envelope: lib/admit/join_auth.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "strutil.h"
#include "syncdir.h"
#include "wire.h"

/* ---- helpers ---- */

static void add_str(json_object *o, const char *key, const char *value)
{
	json_object_object_add(o, key, json_object_new_string(value ? value : ""));
}

/* a new string of o's key when it is a string, else NULL */
static char *get_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	       xstrdup(json_object_get_string(v)) : NULL;
}

static char *plain(json_object *o)
{
	char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	json_object_put(o);
	return s;
}

/* text as a JSON object (NULL when it is not one) */
static json_object *object_of(const char *text, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;

	if (!tok)
		return NULL;
	o = len <= (size_t)INT32_MAX ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
	if (o && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* ---- the claims ---- */

/* A claim is strings under their keys: one table of (key, field) per kind
 * of claim serves its encoder (in the table's order), decoder and free. */
struct claim_field {
	const char *key;
	char **field;
};
#define NFIELDS 4

static char *claim_encode(const struct claim_field *f)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < NFIELDS; i++)
		add_str(o, f[i].key, *f[i].field);
	return plain(o);
}

static void claim_decode(const char *payload, const struct claim_field *f)
{
	json_object *o = payload ? object_of(payload, strlen(payload)) : NULL;
	size_t i;

	for (i = 0; i < NFIELDS; i++)
		*f[i].field = get_str(o, f[i].key);
	json_object_put(o);
}

static void claim_free(const struct claim_field *f)
{
	size_t i;

	for (i = 0; i < NFIELDS; i++) {
		free(*f[i].field);
		*f[i].field = NULL;
	}
}

/* a report's claim, in the order burst-node has always written it */
#define JOIN_CLAIM(c) { { "digest", &(c)->digest }, { "token", &(c)->token }, \
			{ "instance", &(c)->instance }, { "node", &(c)->node } }
#define NOTICE_CLAIM(c) { { "node", &(c)->node }, { "instance", &(c)->instance }, \
			  { "action", &(c)->action }, { "time", &(c)->time } }

char *wire_join_claim_encode(const struct wire_join_claim *c)
{
	struct wire_join_claim *w = (struct wire_join_claim *)c;   /* read only */
	const struct claim_field f[NFIELDS] = JOIN_CLAIM(w);

	return claim_encode(f);
}

void wire_join_claim_decode(const char *payload, struct wire_join_claim *c)
{
	const struct claim_field f[NFIELDS] = JOIN_CLAIM(c);

	claim_decode(payload, f);
}

void wire_join_claim_free(struct wire_join_claim *c)
{
	const struct claim_field f[NFIELDS] = JOIN_CLAIM(c);

	claim_free(f);
}

char *wire_notice_claim_encode(const struct wire_notice_claim *c)
{
	struct wire_notice_claim *w = (struct wire_notice_claim *)c;   /* read only */
	const struct claim_field f[NFIELDS] = NOTICE_CLAIM(w);

	return claim_encode(f);
}

void wire_notice_claim_decode(const char *payload, struct wire_notice_claim *c)
{
	const struct claim_field f[NFIELDS] = NOTICE_CLAIM(c);

	claim_decode(payload, f);
}

void wire_notice_claim_free(struct wire_notice_claim *c)
{
	const struct claim_field f[NFIELDS] = NOTICE_CLAIM(c);

	claim_free(f);
}

/* ---- the request ---- */

char *wire_join_request_encode(const struct wire_join_request *r)
{
	json_object *o = json_object_new_object();

	add_str(o, "op", r->op == WIRE_JOIN_NOTICE ? "notice" : "join");
	add_str(o, "cred", r->cred);
	if (r->op == WIRE_JOIN_REPORT) {
		json_object *t = json_object_new_object();
		add_str(o, "record", r->record);
		if (r->provenance_s >= 0)
			json_object_object_add(t, "provenance_s", json_object_new_double(r->provenance_s));
		if (r->acceptance_s >= 0)
			json_object_object_add(t, "acceptance_s", json_object_new_double(r->acceptance_s));
		json_object_object_add(o, "timing", t);
	}
	return plain(o);
}

static double seconds_of(json_object *t, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(t, key, &v) &&
	       (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ?
	       json_object_get_double(v) : -1;
}

int wire_join_request_decode(const char *text, size_t len, struct wire_join_request *r, burst_err_t *err)
{
	json_object *o = object_of(text, len), *t;
	char *op;

	memset(r, 0, sizeof(*r));
	r->provenance_s = r->acceptance_s = -1;
	if (!o) {
		burst_err_set(err, "not a JSON object");
		return -1;
	}
	/* a notice is said so; anything else is taken for a report (the
	 * oldest nodes said no "op"), which its checks then refuse or not */
	op = get_str(o, "op");
	r->op = op && !strcmp(op, "notice") ? WIRE_JOIN_NOTICE : WIRE_JOIN_REPORT;
	free(op);
	r->cred = get_str(o, "cred");
	if (r->op == WIRE_JOIN_REPORT) {
		r->record = get_str(o, "record");
		if (json_object_object_get_ex(o, "timing", &t)) {
			r->provenance_s = seconds_of(t, "provenance_s");
			r->acceptance_s = seconds_of(t, "acceptance_s");
		}
	}
	json_object_put(o);
	return 0;
}

void wire_join_request_free(struct wire_join_request *r)
{
	free(r->cred);
	free(r->record);
	memset(r, 0, sizeof(*r));
	r->provenance_s = r->acceptance_s = -1;
}

/* ---- the answers ---- */

const char *wire_join_decision_name(enum wire_join_decision d)
{
	switch (d) {
	case WIRE_JOIN_ADMIT: return "admit";
	case WIRE_JOIN_REJECT: return "reject";
	case WIRE_JOIN_RETRY: return "retry";
	}
	return "?";
}

void wire_join_answer_add(struct wire_join_answer *a, const char *key, const char *value)
{
	a->record = xrealloc(a->record, (a->nrecord + 1) * sizeof(*a->record));
	a->record[a->nrecord].key = xstrdup(key);
	a->record[a->nrecord].value = xstrdup(value ? value : "");
	a->nrecord++;
}

char *wire_join_answer_encode(const struct wire_join_answer *a)
{
	json_object *o = json_object_new_object();
	size_t i;

	json_object_object_add(o, "admit", json_object_new_boolean(a->decision == WIRE_JOIN_ADMIT));
	if (a->decision == WIRE_JOIN_RETRY)
		json_object_object_add(o, "retry", json_object_new_boolean(true));
	if (a->reason)
		add_str(o, "reason", a->reason);
	if (a->decision == WIRE_JOIN_ADMIT) {
		json_object *rec = json_object_new_object();
		for (i = 0; i < a->nrecord; i++)
			add_str(rec, a->record[i].key, a->record[i].value);
		json_object_object_add(o, "record", rec);
		if (a->window) {
			json_object *w = json_object_new_object();
			add_str(w, "clock", a->window_boot ? "boot" : "wall");
			json_object_object_add(w, "margin_ms", json_object_new_int((int)a->margin_ms));
			json_object_object_add(o, "slurmd_window", w);
		}
		if (a->not_before > 0)
			json_object_object_add(o, "slurmd_not_before", json_object_new_int64(a->not_before));
	}
	return plain(o);
}

int wire_join_answer_decode(const char *text, struct wire_join_answer *a, burst_err_t *err)
{
	json_object *o = text ? object_of(text, strlen(text)) : NULL, *v, *w;

	memset(a, 0, sizeof(*a));
	a->margin_ms = -1;
	if (!o || !json_object_object_get_ex(o, "admit", &v) || !json_object_is_type(v, json_type_boolean)) {
		burst_err_set(err, "not an answer to a report (no \"admit\")");
		json_object_put(o);
		return -1;
	}
	if (json_object_get_boolean(v))
		a->decision = WIRE_JOIN_ADMIT;
	else if (json_object_object_get_ex(o, "retry", &w) && json_object_get_boolean(w))
		a->decision = WIRE_JOIN_RETRY;
	else
		a->decision = WIRE_JOIN_REJECT;
	a->reason = get_str(o, "reason");
	if (a->decision == WIRE_JOIN_ADMIT) {
		/* (an admission without its record is one all the same: the
		 * node says it cannot write the record) */
		if (json_object_object_get_ex(o, "record", &v) && json_object_is_type(v, json_type_object)) {
			a->has_record = true;
			json_object_object_foreach(v, key, val)
				wire_join_answer_add(a, key, json_object_get_string(val));
		}
		if (json_object_object_get_ex(o, "slurmd_window", &w)) {
			json_object *c, *m;
			a->window = true;
			a->window_boot = json_object_object_get_ex(w, "clock", &c) &&
					 json_object_is_type(c, json_type_string) &&
					 !strcmp(json_object_get_string(c), "boot");
			a->margin_ms = json_object_object_get_ex(w, "margin_ms", &m) ? (long)json_object_get_int(m) : -1;
		}
		if (json_object_object_get_ex(o, "slurmd_not_before", &v))
			a->not_before = (long long)json_object_get_int64(v);
	}
	json_object_put(o);
	return 0;
}

void wire_join_answer_free(struct wire_join_answer *a)
{
	size_t i;

	free(a->reason);
	for (i = 0; i < a->nrecord; i++) {
		free(a->record[i].key);
		free(a->record[i].value);
	}
	free(a->record);
	memset(a, 0, sizeof(*a));
	a->margin_ms = -1;
}

char *wire_notice_answer_encode(const struct wire_notice_answer *a)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(a->ok));
	if (a->reason)
		add_str(o, "reason", a->reason);
	return plain(o);
}

int wire_notice_answer_decode(const char *text, struct wire_notice_answer *a, burst_err_t *err)
{
	json_object *o = text ? object_of(text, strlen(text)) : NULL, *v;

	memset(a, 0, sizeof(*a));
	if (!o || !json_object_object_get_ex(o, "ok", &v) || !json_object_is_type(v, json_type_boolean)) {
		burst_err_set(err, "not an answer to a notice (no \"ok\")");
		json_object_put(o);
		return -1;
	}
	a->ok = json_object_get_boolean(v);
	a->reason = get_str(o, "reason");
	json_object_put(o);
	return 0;
}

void wire_notice_answer_free(struct wire_notice_answer *a)
{
	free(a->reason);
	memset(a, 0, sizeof(*a));
}

const char *wire_answer_verdict(const char *text)
{
	struct wire_join_answer a;
	struct wire_notice_answer n;
	burst_err_t err;
	const char *v = NULL;

	if (wire_join_answer_decode(text, &a, &err) == 0) {
		v = wire_join_decision_name(a.decision);
		wire_join_answer_free(&a);
	} else if (wire_notice_answer_decode(text, &n, &err) == 0) {
		v = n.ok ? "taken" : "refused";
		wire_notice_answer_free(&n);
	}
	return v;
}

int wire_record_write(const char *path, const struct wire_kv *kv, size_t n, char *why,
		      size_t whylen)
{
	struct file_replace fr;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *k = kv[i].key, *v = kv[i].value ? kv[i].value : "";
		if (!k || !*k || k[strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789_")]) {
			snprintf(why, whylen, "the admission record's key %zu ('%.64s') is not a name of "
				 "letters, digits and '_'", i + 1, k ? k : "");
			return -1;
		}
		if (v[strcspn(v, "\r\n")]) {
			snprintf(why, whylen, "the admission record's %.64s holds a line break", k);
			return -1;
		}
	}
	if (replace_open(&fr, path, why, whylen) < 0)
		return -1;
	for (i = 0; i < n; i++)
		fprintf(fr.f, "%s=%s\n", kv[i].key, kv[i].value ? kv[i].value : "");
	return replace_commit(&fr, ferror(fr.f), why, whylen);
}

bool wire_record_get(const char *path, const char *key, char *buf, size_t len)
{
	char line[1024];
	size_t kl = strlen(key);
	bool found = false, whole = true;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		/* a line's start only (the tail of a line longer than the buffer is not one) */
		bool start = whole;
		whole = strchr(line, '\n') != NULL;
		line[strcspn(line, "\n")] = '\0';
		if (start && !strncmp(line, key, kl) && line[kl] == '=') {
			snprintf(buf, len, "%s", line + kl + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}
