/*
 * wire.c - the spool request's codec (wire.h): written by the power-save
 * programs and the slurmctld prolog, read by the agent.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "strutil.h"
#include "wire.h"

static const char *const op_names[] = {
	[WIRE_OP_RESUME] = "resume",
	[WIRE_OP_SUSPEND] = "suspend",
	[WIRE_OP_RESUME_FAIL] = "resume-fail",
	[WIRE_OP_EARLY] = "early",
};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

const char *wire_spool_op_name(enum wire_spool_op op)
{
	return (size_t)op < NOPS ? op_names[op] : "?";
}

int wire_spool_op_from_name(const char *name)
{
	size_t i;

	for (i = 0; name && i < NOPS; i++)
		if (!strcmp(op_names[i], name))
			return (int)i;
	return -1;
}

void wire_spool_add_job(struct wire_spool *r, uint32_t job_id, const char *nodes)
{
	r->jobs = xrealloc(r->jobs, (r->njobs + 1) * sizeof(*r->jobs));
	r->jobs[r->njobs].job_id = job_id;
	r->jobs[r->njobs].nodes = xstrdup(nodes);
	r->njobs++;
}

void wire_spool_add_diagnostic(struct wire_spool *r, const char *line)
{
	r->diagnostics = xrealloc(r->diagnostics, (r->ndiagnostics + 1) * sizeof(char *));
	r->diagnostics[r->ndiagnostics++] = xstrdup(line);
}

char *wire_spool_encode(const struct wire_spool *r)
{
	json_object *o = json_object_new_object(), *a;
	char *text;
	size_t i;

	json_object_object_add(o, "version", json_object_new_int(WIRE_SPOOL_VERSION));
	json_object_object_add(o, "op", json_object_new_string(wire_spool_op_name(r->op)));
	json_object_object_add(o, "nodes", json_object_new_string(r->nodes ? r->nodes : ""));
	if (r->count >= 0)
		json_object_object_add(o, "count", json_object_new_int64(r->count));
	if (r->time > 0)
		json_object_object_add(o, "time", json_object_new_double(r->time));
	if (r->pid > 0)
		json_object_object_add(o, "pid", json_object_new_int64(r->pid));
	if (r->slurm_job_id) {
		char id[16];
		snprintf(id, sizeof(id), "%u", r->slurm_job_id);
		json_object_object_add(o, "slurm_job_id", json_object_new_string(id));
	}
	if (r->njobs || r->op == WIRE_OP_RESUME || r->op == WIRE_OP_EARLY) {
		a = json_object_new_array();
		for (i = 0; i < r->njobs; i++) {
			json_object *j = json_object_new_object();
			json_object_object_add(j, "job_id", json_object_new_int64(r->jobs[i].job_id));
			json_object_object_add(j, "nodes", json_object_new_string(r->jobs[i].nodes));
			json_object_array_add(a, j);
		}
		json_object_object_add(o, "jobs", a);
	}
	if (r->ndiagnostics) {
		a = json_object_new_array();
		for (i = 0; i < r->ndiagnostics; i++)
			json_object_array_add(a, json_object_new_string(r->diagnostics[i]));
		json_object_object_add(o, "diagnostics", a);
	}
	text = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

/* what a key of the request is, for the errors */
static const char *what_is(json_object *v, bool present)
{
	return present ? json_type_to_name(json_object_get_type(v)) : "missing";
}

/* a job id: a positive number below 2^32, or such a number as a string */
static uint32_t job_id_of(json_object *v)
{
	int64_t n = 0;

	if (json_object_is_type(v, json_type_int))
		n = json_object_get_int64(v);
	else if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		char *end;
		long long l = strtoll(s, &end, 10);
		n = *s && !*end ? l : 0;
	}
	return n > 0 && n <= UINT32_MAX ? (uint32_t)n : 0;
}

void wire_spool_add_jobs_json(struct wire_spool *r, json_object *jobs)
{
	size_t i;

	if (!json_object_is_type(jobs, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(jobs); i++) {
		json_object *j = json_object_array_get_idx(jobs, i), *id, *nodes;
		uint32_t job;
		if (!json_object_is_type(j, json_type_object) || !json_object_object_get_ex(j, "job_id", &id) ||
		    !(job = job_id_of(id)) || !json_object_object_get_ex(j, "nodes", &nodes) ||
		    !json_object_is_type(nodes, json_type_string) || !*json_object_get_string(nodes))
			continue;
		wire_spool_add_job(r, job, json_object_get_string(nodes));
	}
}

int wire_spool_decode(const char *text, size_t len, size_t max_nodes, struct wire_spool *r,
		      burst_err_t *err)
{
	json_tokener *tok;
	json_object *req, *v = NULL;
	enum json_tokener_error jerr;
	const char *nul = memchr(text, '\0', len);
	size_t end, i;
	bool present;
	int op;

	memset(r, 0, sizeof(*r));
	r->count = -1;
	if (nul) {
		burst_err_set(err, "a NUL byte at byte %zu: a request is JSON text", (size_t)(nul - text));
		return -1;
	}
	if (len > INT32_MAX) {
		burst_err_set(err, "%zu bytes: too large for a request", len);
		return -1;
	}
	tok = json_tokener_new();
	if (!tok) {
		burst_err_set(err, "out of memory");
		return -1;
	}
	req = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr != json_tokener_success) {
		burst_err_set(err, "not JSON: %s at byte %zu", jerr == json_tokener_continue ?
			      "it ends early" : json_tokener_error_desc(jerr), end);
		goto bad;
	}
	while (end < len && strchr(" \t\r\n", text[end]))
		end++;
	if (end != len) {
		burst_err_set(err, "text after the JSON value, at byte %zu", end);
		goto bad;
	}
	if (!json_object_is_type(req, json_type_object)) {
		burst_err_set(err, "not a JSON object but %s", json_type_to_name(json_object_get_type(req)));
		goto bad;
	}
	r->version = 1;
	if (json_object_object_get_ex(req, "version", &v)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1) {
			burst_err_set(err, "\"version\" is not a positive whole number");
			goto bad;
		}
		if (json_object_get_int64(v) > WIRE_SPOOL_VERSION) {
			burst_err_set(err, "\"version\" is %lld: this agent reads version %d and older (a newer power-save program than agent? upgrade the agent)",
				      (long long)json_object_get_int64(v), WIRE_SPOOL_VERSION);
			goto bad;
		}
		r->version = (int)json_object_get_int64(v);
	}
	v = NULL;
	present = json_object_object_get_ex(req, "op", &v);
	if (!json_object_is_type(v, json_type_string)) {
		burst_err_set(err, "\"op\" is %s: it must be the string %s",
			      present ? "not a string" : "missing", WIRE_SPOOL_OPS);
		goto bad;
	}
	op = wire_spool_op_from_name(json_object_get_string(v));
	if (op < 0) {
		char *e = str_escape_ctl(json_object_get_string(v));
		burst_err_set(err, "\"op\" is \"%.64s\": not %s", e, WIRE_SPOOL_OPS);
		free(e);
		goto bad;
	}
	r->op = (enum wire_spool_op)op;
	v = NULL;
	present = json_object_object_get_ex(req, "nodes", &v);
	if (!json_object_is_type(v, json_type_string)) {
		burst_err_set(err, "\"nodes\" is %s: it must be a string, a Slurm host list",
			      present ? "not a string" : "missing");
		goto bad;
	}
	r->nodes = xstrdup(json_object_get_string(v));
	if (hostlist_expand(r->nodes, &r->names, max_nodes, err) < 0) {
		char why[512];
		memcpy(why, err->msg, sizeof(why) - 1);
		why[sizeof(why) - 1] = '\0';
		burst_err_set(err, "\"nodes\": %s", why);
		goto bad;
	}
	if (json_object_object_get_ex(req, "count", &v) && json_object_is_type(v, json_type_int))
		r->count = (long)json_object_get_int64(v);
	if (json_object_object_get_ex(req, "time", &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		r->time = json_object_get_double(v);
	if (json_object_object_get_ex(req, "pid", &v) && json_object_is_type(v, json_type_int))
		r->pid = (long)json_object_get_int64(v);
	if (json_object_object_get_ex(req, "slurm_job_id", &v))
		r->slurm_job_id = job_id_of(v);
	if ((present = json_object_object_get_ex(req, "jobs", &v)) && !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_array)) {
			burst_err_set(err, "\"jobs\" is %s: it must be an array of {\"job_id\", \"nodes\"}",
				      what_is(v, present));
			goto bad;
		}
		wire_spool_add_jobs_json(r, v);
	}
	if ((present = json_object_object_get_ex(req, "diagnostics", &v)) &&
	    json_object_is_type(v, json_type_array))
		for (i = 0; i < json_object_array_length(v); i++) {
			json_object *d = json_object_array_get_idx(v, i);
			if (json_object_is_type(d, json_type_string))
				wire_spool_add_diagnostic(r, json_object_get_string(d));
		}
	json_object_put(req);
	return 0;
bad:
	json_object_put(req);
	wire_spool_free(r);
	return -1;
}

void wire_spool_free(struct wire_spool *r)
{
	size_t i;

	free(r->nodes);
	for (i = 0; i < r->njobs; i++)
		free(r->jobs[i].nodes);
	free(r->jobs);
	for (i = 0; i < r->ndiagnostics; i++)
		free(r->diagnostics[i]);
	free(r->diagnostics);
	hostlist_free(&r->names);
	memset(r, 0, sizeof(*r));
	r->count = -1;
}
