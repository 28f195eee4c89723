/*
 * test_resume_file.c - SLURM_RESUME_FILE of 22.05 and of 23.02-25.05
 * (tests/fixtures/resume-file, written from Slurm's power_save.c): the jobs
 * normalized for the agent, and which job a node was resumed for.
 */
#include <stdlib.h>

#include "resume_file.h"
#include "tap.h"
#include "wire.h"

/* the index of normalized jobs (a JSON array), as the agent makes it from
 * a request's jobs, with a budget of max names */
static struct resume_jobs *index_json(json_object *a, size_t max)
{
	struct wire_spool r = { .count = -1 };
	struct resume_jobs *ix;

	wire_spool_add_jobs_json(&r, a);
	ix = resume_jobs_index_max(r.jobs, r.njobs, max);
	wire_spool_free(&r);
	return ix;
}

static json_object *jobs_of(const char *fixture)
{
	char path[4096];
	burst_err_t err;
	json_object *jobs;
	char *text;

	snprintf(path, sizeof(path), "%s/tests/fixtures/resume-file/%s", BURST_ABS_SRCDIR, fixture);
	text = tap_slurp(path, NULL);
	jobs = resume_file_jobs(text, &err);
	ok(jobs != NULL, "%s parses%s%s", fixture, jobs ? "" : ": ", jobs ? "" : err.msg);
	free(text);
	return jobs;
}

static const char *normalized(json_object *jobs)
{
	return jobs ? json_object_to_json_string_ext(jobs, JSON_C_TO_STRING_PLAIN) : "(none)";
}

int main(void)
{
	json_object *j;
	burst_err_t err;

	/* 22.05: {"jobs":[{"job_id","nodes"}],"all_nodes"} */
	j = jobs_of("slurm-22.05.json");
	is_str(normalized(j), "[{\"job_id\":12,\"nodes\":\"burst-[1-2]\"},{\"job_id\":13,\"nodes\":\"burst-3\"}]",
	       "22.05: the jobs and their nodes");
	ok(resume_job_of(j, "burst-1") == 12 && resume_job_of(j, "burst-2") == 12, "22.05: burst-[1-2] for job 12");
	ok(resume_job_of(j, "burst-3") == 13, "22.05: burst-3 for job 13");
	ok(resume_job_of(j, "burst-4") == 0, "22.05: burst-4 for no job");
	json_object_put(j);

	/* 23.02 on: nodes_resume (not nodes_alloc), extra and the rest left out */
	j = jobs_of("slurm-24.11.json");
	is_str(normalized(j), "[{\"job_id\":21,\"nodes\":\"burst-[1-2]\"},{\"job_id\":22,\"nodes\":\"burst-3\"},"
	       "{\"job_id\":24,\"nodes\":\"burst-3\"}]",
	       "24.11: the jobs and the nodes resumed for them (nodes_resume); none for a job held back by ResumeRate");
	ok(resume_job_of(j, "burst-2") == 21, "24.11: burst-2 for job 21");
	ok(resume_job_of(j, "burst-3") == 22, "24.11: burst-3, shared by jobs 22 and 24, for the first (22)");
	ok(resume_job_of(j, "burst-4") == 0, "24.11: burst-4, allocated to job 22 but not resumed now, for no job");
	ok(resume_job_of(j, "burst-5") == 0, "24.11: burst-5 (nodes_resume empty) for no job");
	json_object_put(j);

	/* scontrol power up: no job */
	j = jobs_of("slurm-22.05-power-up.json");
	is_str(normalized(j), "[]", "22.05 power up: no job");
	ok(resume_job_of(j, "burst-9") == 0, "22.05 power up: burst-9 for no job");
	json_object_put(j);
	j = jobs_of("slurm-24.11-power-up.json");
	is_str(normalized(j), "[]", "24.11 power up: no job");
	json_object_put(j);

	/* what is not a resume file */
	ok(resume_file_jobs("[1,2]", &err) == NULL && strstr(err.msg, "not a JSON object"),
	   "an array is refused: %s", err.msg);
	ok(resume_file_jobs("{\"jobs\":", &err) == NULL, "truncated JSON is refused");
	ok(resume_file_jobs("{\"jobs\":{}}", &err) == NULL && strstr(err.msg, "\"jobs\" is not an array"),
	   "jobs not an array is refused: %s", err.msg);
	j = resume_file_jobs("{\"all_nodes\":\"burst-1\"}", &err);
	is_str(normalized(j), "[]", "no jobs key: no job");
	json_object_put(j);
	j = resume_file_jobs("{\"jobs\":[{\"job_id\":\"7\",\"nodes\":\"burst-1\"},{\"job_id\":0,\"nodes\":\"burst-1\"},"
			     "{\"job_id\":-3,\"nodes\":\"burst-1\"},{\"job_id\":8},{\"job_id\":9,\"nodes\":null},7]}", &err);
	is_str(normalized(j), "[]", "entries without a positive numeric job id or without nodes are left out");
	json_object_put(j);
	ok(resume_job_of(NULL, "burst-1") == 0, "no jobs: no job");

	/* one index for a whole request: 2,000 jobs of 4 nodes each, every
	 * node shared with the next job; each node is its first job's */
	{
		json_object *a = json_object_new_array();
		struct resume_jobs *ix;
		char buf[64];
		int i, bad = 0;
		for (i = 0; i < 2000; i++) {
			json_object *o = json_object_new_object();
			snprintf(buf, sizeof(buf), "burst-[%d-%d]", 3 * i, 3 * i + 3);
			json_object_object_add(o, "job_id", json_object_new_int64(100 + i));
			json_object_object_add(o, "nodes", json_object_new_string(buf));
			json_object_array_add(a, o);
		}
		ix = index_json(a, 1 << 20);
		for (i = 0; i <= 6000; i++) {
			snprintf(buf, sizeof(buf), "burst-%d", i);
			/* node 3k is job k-1's last and job k's first: job k-1's */
			if (resume_jobs_of(ix, buf) != (uint32_t)(100 + (i ? (i - 1) / 3 : 0)))
				bad++;
		}
		is_num(bad, 0, "an index of 2,000 jobs answers each of 6,001 nodes with its first job");
		ok(resume_jobs_of(ix, "burst-6004") == 0 && resume_jobs_of(ix, NULL) == 0, "and no job for others");
		resume_jobs_free(ix);
		ix = index_json(NULL, 1 << 20);
		ok(resume_jobs_of(ix, "burst-1") == 0, "an index of no jobs answers none");
		resume_jobs_free(ix);
		json_object_put(a);
	}
	/* one budget of names for all jobs: with 13, jobs of 4, 5 and 3 nodes
	 * take 12; a fourth of 2 would pass it and is left out, a fifth of 1
	 * still fits */
	{
		json_object *a = json_tokener_parse("[{\"job_id\":1,\"nodes\":\"a-[1-4]\"},"
						    "{\"job_id\":2,\"nodes\":\"b-[1-5]\"},"
						    "{\"job_id\":3,\"nodes\":\"a-[4-6]\"},"
						    "{\"job_id\":4,\"nodes\":\"c-[1-2]\"},"
						    "{\"job_id\":5,\"nodes\":\"d-1\"}]");
		struct resume_jobs *ix = index_json(a, 13);

		ok(resume_jobs_of(ix, "a-4") == 1 && resume_jobs_of(ix, "b-5") == 2 && resume_jobs_of(ix, "a-6") == 3,
		   "within the budget: a-4 job 1, b-5 job 2, a-6 job 3");
		ok(resume_jobs_of(ix, "c-1") == 0 && resume_jobs_of(ix, "c-2") == 0,
		   "the job that would pass it is left out: c-1, c-2 no job");
		ok(resume_jobs_of(ix, "d-1") == 5, "a later job that fits is kept: d-1 job 5");
		resume_jobs_free(ix);
		json_object_put(a);
	}
	return done_testing();
}
