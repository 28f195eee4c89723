/*
 * views.c - the agent's state as burstctl reads it (views.h).
 */
#include <stdbool.h>
#include <stddef.h>

#include "views.h"

struct state_db *state_view_open(const char *path, bool *missing, burst_err_t *err)
{
	struct state_db *db = state_open_readonly(path, missing, err);
	int version;

	if (!db)
		return NULL;
	if (state_schema_version(db, &version, err) < 0) {
		state_close(db);
		return NULL;
	}
	if (version > STATE_SCHEMA_VERSION) {
		burst_err_set(err, "%s is at schema %d, this burstctl reads %d to %d: upgrade burstctl (install the "
			      "slurm-burst release of the agent that wrote it)", path, version, STATE_VIEW_OLDEST,
			      STATE_SCHEMA_VERSION);
		state_close(db);
		return NULL;
	}
	if (version < STATE_VIEW_OLDEST) {
		burst_err_set(err, "%s is at schema %d, this burstctl reads %d to %d: start the new burst-agent, "
			      "which migrates it when it opens it (burstctl only reads it)", path, version,
			      STATE_VIEW_OLDEST, STATE_SCHEMA_VERSION);
		state_close(db);
		return NULL;
	}
	return db;
}
