/*
 * fuzz_spool.c - libFuzzer target for the spool request files the agent
 * takes from the power-save programs: the input, written to a private
 * temporary file, read as the agent reads it (spool_read) and parsed as a
 * request (wire_spool_decode); a resume's jobs are then indexed and each
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
#include "wire.h"

FUZZ_TARGET(spool)
{
	char *dir = xstrdup(fuzz_file("req.json", data, size)), *text;
	struct wire_spool r;
	burst_err_t err;
	size_t len = 0, i;

	*strrchr(dir, '/') = '\0';
	text = spool_read(dir, "req.json", geteuid(), SPOOL_MAX_REQUEST, &len, &err);
	if (!text || len != size || memcmp(text, data, size))
		abort();   /* our own regular file: read whole */
	if (wire_spool_decode(text, len, SPOOL_MAX_NODES, &r, &err) == 0) {
		struct resume_jobs *ix;
		char *again;
		struct wire_spool r2;

		if (!r.nodes || !r.names.n)
			abort();
		ix = resume_jobs_index(r.jobs, r.njobs);
		for (i = 0; i < r.names.n && i < 64; i++)
			(void)resume_jobs_of(ix, r.names.names[i]);
		resume_jobs_free(ix);
		/* what the agent read, made again, reads the same */
		again = wire_spool_encode(&r);
		if (wire_spool_decode(again, strlen(again), SPOOL_MAX_NODES, &r2, &err) != 0 || r2.op != r.op ||
		    strcmp(r2.nodes, r.nodes) || r2.njobs != r.njobs || r2.ndiagnostics != r.ndiagnostics ||
		    r2.slurm_job_id != r.slurm_job_id)
			abort();
		wire_spool_free(&r2);
		free(again);
		wire_spool_free(&r);
	} else if (!err.msg[0] || r.nodes || r.names.n)
		abort();
	free(text);
	free(dir);
	return 0;
}
