/*
 * resume_file.c - SLURM_RESUME_FILE of Slurm 22.05 through 25.05.
 */
#include <stdbool.h>
#include <string.h>

#include "hostlist.h"
#include "resume_file.h"

/* the most node names a job entry's host list may expand to */
#define RESUME_MAX_NODES (1 << 20)

json_object *resume_file_jobs(const char *text, burst_err_t *err)
{
	json_object *rf = json_tokener_parse(text ? text : ""), *jobs, *out;
	size_t i;

	if (!rf || !json_object_is_type(rf, json_type_object)) {
		burst_err_set(err, "the resume file is not a JSON object");
		json_object_put(rf);
		return NULL;
	}
	out = json_object_new_array();
	if (!json_object_object_get_ex(rf, "jobs", &jobs)) {
		json_object_put(rf);
		return out;     /* nodes resumed for no job */
	}
	if (!json_object_is_type(jobs, json_type_array)) {
		burst_err_set(err, "the resume file's \"jobs\" is not an array");
		json_object_put(out);
		json_object_put(rf);
		return NULL;
	}
	for (i = 0; i < json_object_array_length(jobs); i++) {
		json_object *j = json_object_array_get_idx(jobs, i), *id, *nodes, *o;
		int64_t n;

		if (!json_object_is_type(j, json_type_object) ||
		    !json_object_object_get_ex(j, "job_id", &id) || !json_object_is_type(id, json_type_int))
			continue;
		n = json_object_get_int64(id);
		if (n <= 0 || n > (int64_t)UINT32_MAX)
			continue;
		/* 22.05: "nodes"; 23.02 on: "nodes_resume" (and "nodes_alloc": all the job's) */
		if (!json_object_object_get_ex(j, "nodes_resume", &nodes) &&
		    !json_object_object_get_ex(j, "nodes", &nodes))
			continue;
		if (!json_object_is_type(nodes, json_type_string) || !*json_object_get_string(nodes))
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "job_id", json_object_new_int64(n));
		json_object_object_add(o, "nodes", json_object_new_string(json_object_get_string(nodes)));
		json_object_array_add(out, o);
	}
	json_object_put(rf);
	return out;
}

uint32_t resume_job_of(json_object *jobs, const char *node)
{
	size_t i, k;

	if (!jobs || !json_object_is_type(jobs, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(jobs); i++) {
		json_object *j = json_object_array_get_idx(jobs, i), *id, *nodes;
		struct hostlist hl = { NULL, 0, 0 };
		burst_err_t err;
		int64_t n;
		bool found = false;

		if (!json_object_object_get_ex(j, "job_id", &id) || !json_object_object_get_ex(j, "nodes", &nodes) ||
		    hostlist_expand(json_object_get_string(nodes), &hl, RESUME_MAX_NODES, &err) < 0)
			continue;
		for (k = 0; k < hl.n && !found; k++)
			found = !strcmp(hl.names[k], node);
		hostlist_free(&hl);
		n = json_object_get_int64(id);
		if (found && n > 0 && n <= (int64_t)UINT32_MAX)
			return (uint32_t)n;
	}
	return 0;
}
