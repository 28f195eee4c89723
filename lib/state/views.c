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
		burst_err_set(err, "%s: the agent's state database has schema version %d, newer than this build "
			      "reads (%d): use the burstctl of the burst-agent release that wrote it",
			      path, version, STATE_SCHEMA_VERSION);
		state_close(db);
		return NULL;
	}
	return db;
}
