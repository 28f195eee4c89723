/*
 * views.h - the agent's state as burstctl reads it: read-only, and only a
 * schema this build knows. burstctl opens the agent's database here and
 * nowhere else.
 */
#ifndef BURST_STATE_VIEWS_H
#define BURST_STATE_VIEWS_H

#include <stdbool.h>

#include "burst_err.h"
#include "state.h"

/*
 * The oldest schema version burstctl reads: every one from it to
 * STATE_SCHEMA_VERSION has the columns and meanings burstctl's queries
 * read (1 differs from 2 only in the nodes' CHECK and the ids' AUTOINCREMENT;
 * a database of version 0 may lack columns). Raise it with a schema
 * version that changes what burstctl reads.
 */
#define STATE_VIEW_OLDEST 1

/*
 * The agent's database at path, read-only (state_open_readonly: missing,
 * err and the handle as there), if its schema version is one this build
 * reads: STATE_VIEW_OLDEST to STATE_SCHEMA_VERSION. A newer one is
 * refused, naming both and telling to upgrade burstctl (a newer agent's
 * rows may mean what this build cannot tell); an older one, telling to
 * start the new agent, which migrates it (state_open).
 */
struct state_db *state_view_open(const char *path, bool *missing, burst_err_t *err);

#endif
