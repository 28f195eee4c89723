/*
 * fuzz_resume.c - libFuzzer target for SLURM_RESUME_FILE (the 22.05 and the
 * 23.02+ JSON forms), as the power-save resume program reads it: the jobs,
 * then the job of a few nodes.
 */
#include <stdint.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "fuzz.h"
#include "resume_file.h"
#include "strutil.h"

FUZZ_TARGET(resume)
{
	static const char *const nodes[] = { "burst-1", "burst-2", "burst-10", "" };
	char *text = xstrndup((const char *)data, size);
	burst_err_t err;
	json_object *jobs = resume_file_jobs(text, &err);
	size_t i;

	if (jobs) {
		if (!json_object_is_type(jobs, json_type_array))
			abort();
		for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
			(void)resume_job_of(jobs, nodes[i]);
		json_object_put(jobs);
	}
	free(text);
	return 0;
}
