/*
 * record_fixture - stores a node's provenance record in an agent state
 * database for tests/cli/test_provenance_cmd.sh, through the function the
 * agent uses (state_record_add), then dates it.
 *
 *   record_fixture DB NODE INSTANCE PROVENANCE_ID DECISION RECORD.json EPOCH
 *
 * The node's row is made first (state_node_ensure, node set "gpu").
 * Exit: 0 done, 2 usage or error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "burst_err.h"
#include "state.h"
#include "strutil.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	sb_init(&sb);
	sb_add(&sb, "");
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
		buf[n] = '\0';
		sb_add(&sb, buf);
	}
	fclose(f);
	return sb_take(&sb);
}

int main(int argc, char **argv)
{
	struct state_db *db = NULL;
	sqlite3 *sq = NULL;
	sqlite3_stmt *st = NULL;
	char *text = NULL;
	burst_err_t err;
	int rc = 2;

	if (argc != 8) {
		fprintf(stderr, "usage: record_fixture DB NODE INSTANCE PROVENANCE_ID DECISION "
			"RECORD.json EPOCH\n");
		return 2;
	}
	text = slurp(argv[6]);
	if (!text) {
		fprintf(stderr, "record_fixture: cannot read %s\n", argv[6]);
		return 2;
	}
	db = state_open(argv[1], &err);
	if (!db || state_node_ensure(db, argv[2], "gpu", &err) < 0 ||
	    state_record_add(db, argv[2], argv[3], argv[4], text, argv[5], &err) < 0) {
		fprintf(stderr, "record_fixture: %s\n", err.msg);
		goto out;
	}
	state_close(db);
	db = NULL;
	if (sqlite3_open_v2(argv[1], &sq, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sq, "UPDATE records SET time=?1 WHERE id=(SELECT max(id) FROM records)",
			       -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "record_fixture: %s: %s\n", argv[1], sqlite3_errmsg(sq));
		goto out;
	}
	sqlite3_bind_double(st, 1, strtod(argv[7], NULL));
	if (sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(sq) == 1)
		rc = 0;
	else
		fprintf(stderr, "record_fixture: %s: %s\n", argv[1], sqlite3_errmsg(sq));
out:
	sqlite3_finalize(st);
	sqlite3_close(sq);
	state_close(db);
	free(text);
	return rc;
}
