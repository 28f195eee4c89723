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
 * The agent's database at path, read-only (state_open_readonly: missing,
 * err and the handle as there), if its schema version is one this build
 * reads: an older one (the newer columns are read where present), or
 * STATE_SCHEMA_VERSION. A newer one is refused, naming both versions: a
 * newer agent's rows may mean what this build cannot tell.
 */
struct state_db *state_view_open(const char *path, bool *missing, burst_err_t *err);

#endif
