/*
 * resume_file.c - SLURM_RESUME_FILE of Slurm 22.05 through 25.05.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "htab.h"
#include "strutil.h"
#include "resume_file.h"
#include "wire.h"

/* the most node names the host lists of all jobs may expand to, together */
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

struct resume_jobs {
	struct hostlist *hl;     /* each job's nodes: the table's keys */
	size_t nhl;
	struct htab by_node;     /* node -> job id (as a pointer-sized integer) */
};

struct resume_jobs *resume_jobs_index_max(const struct wire_job *jobs, size_t n, size_t max_names)
{
	struct resume_jobs *ix = xcalloc(1, sizeof(*ix));
	size_t i, k, total = 0;

	ix->hl = xcalloc(n ? n : 1, sizeof(*ix->hl));
	for (i = 0; i < n; i++) {
		struct hostlist *hl = &ix->hl[ix->nhl];
		burst_err_t err;
		uint32_t job = jobs[i].job_id;

		if (!job || !jobs[i].nodes)
			continue;
		/* every job's names count against one budget: a list of many
		 * jobs of a million names each would take gigabytes; a job past
		 * it is left out (its nodes have no job) */
		if (hostlist_expand(jobs[i].nodes, hl, max_names - total, &err) < 0) {
			hostlist_free(hl);
			continue;
		}
		total += hl->n;
		ix->nhl++;
		/* the first job naming a node is its job */
		for (k = 0; k < hl->n; k++)
			if (!htab_has(&ix->by_node, hl->names[k], NULL))
				htab_put(&ix->by_node, hl->names[k], (void *)(uintptr_t)job);
	}
	return ix;
}

struct resume_jobs *resume_jobs_index(const struct wire_job *jobs, size_t n)
{
	return resume_jobs_index_max(jobs, n, RESUME_MAX_NODES);
}

uint32_t resume_jobs_of(const struct resume_jobs *ix, const char *node)
{
	return ix && node ? (uint32_t)(uintptr_t)htab_get(&ix->by_node, node) : 0;
}

void resume_jobs_free(struct resume_jobs *ix)
{
	size_t i;

	if (!ix)
		return;
	for (i = 0; i < ix->nhl; i++)
		hostlist_free(&ix->hl[i]);
	free(ix->hl);
	htab_free(&ix->by_node);
	free(ix);
}

uint32_t resume_job_of(json_object *jobs, const char *node)
{
	struct wire_spool r = { .njobs = 0 };
	struct resume_jobs *ix;
	uint32_t job;

	wire_spool_add_jobs_json(&r, jobs);
	ix = resume_jobs_index(r.jobs, r.njobs);
	job = resume_jobs_of(ix, node);
	resume_jobs_free(ix);
	wire_spool_free(&r);
	return job;
}
