/*
 * state_rows.h - the one loop that reads a query's rows into an array
 * (lib/state and its tests only: it names SQLite's types).
 */
#ifndef BURST_STATE_ROWS_H
#define BURST_STATE_ROWS_H

#include <stddef.h>
#include <sqlite3.h>

#include "burst_err.h"
#include "state.h"

/* How the rows of a query become items of an array. */
struct state_rows {
	size_t size;             /* of one item */
	/* one row into item (zeroed): 0, or -1 with err */
	int (*fill)(struct state_db *db, sqlite3_stmt *st, void *item, burst_err_t *err);
	/* frees n filled items (the last may be half filled) and the array */
	void (*drop)(void *v, size_t n);
	const char *what;        /* "read events": said when a step fails */
};

/*
 * The rows of sql (its parameters bound by bind(st, arg) when bind is not
 * NULL) into a new array of r->size items: 0 with the array in *out (NULL
 * when there is no row) and its length in *n; -1 with err (which says
 * "prepare" or r->what) and nothing in *out.
 */
int state_query_rows(struct state_db *db, const char *sql, void (*bind)(sqlite3_stmt *st, const void *arg),
		     const void *arg, const struct state_rows *r, void **out, size_t *n, burst_err_t *err);

#endif
