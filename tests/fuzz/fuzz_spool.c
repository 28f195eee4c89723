/*
 * fuzz_spool.c - libFuzzer target for the spool request files the agent
 * takes from the power-save programs: the input, written to a private
 * temporary file, read as the agent reads it (spool_read) and parsed as a
 * request (spool_request_parse); a resume's jobs are then indexed and each
 * node's job looked up, as the agent does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fuzz.h"
#include "resume_file.h"
#include "spool.h"
#include "strutil.h"

FUZZ_TARGET(spool)
{
	char *dir = xstrdup(fuzz_file("req.json", data, size)), *text;
	struct spool_request r;
	burst_err_t err;
	size_t len = 0, i;

	*strrchr(dir, '/') = '\0';
	text = spool_read(dir, "req.json", geteuid(), SPOOL_MAX_REQUEST, &len, &err);
	if (!text || len != size || memcmp(text, data, size))
		abort();   /* our own regular file: read whole */
	if (spool_request_parse(text, len, SPOOL_MAX_NODES, &r, &err) == 0) {
		json_object *jobs = NULL;
		struct resume_jobs *ix;

		if (!r.op || !r.nodes.n)
			abort();
		json_object_object_get_ex(r.req, "jobs", &jobs);
		ix = resume_jobs_index(jobs);
		for (i = 0; i < r.nodes.n && i < 64; i++)
			(void)resume_jobs_of(ix, r.nodes.names[i]);
		resume_jobs_free(ix);
		spool_request_free(&r);
	} else if (!err.msg[0] || r.req || r.nodes.n)
		abort();
	free(text);
	free(dir);
	return 0;
}
