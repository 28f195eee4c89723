/*
 * state_fixture - writes an agent state database for the burstctl tests,
 * through the same functions the agent uses (state_transition writes the
 * row and its event in one transaction).
 *
 *   state_fixture DB ensure NODE NODESET
 *   state_fixture DB move NODE FROM|* TO [instance=I] [error=E] [detail=D]
 *                 [job=N] [attempt=N] [address=A] [token=T] [cooldown=SECONDS]
 *   state_fixture DB age NODE SECONDS     the last transition was SECONDS ago
 *   state_fixture DB age-events - SECONDS every event so far is SECONDS older
 *   state_fixture DB instance PROVIDER ID NODE NODESET TYPE REGION PRICE|- LAUNCHED JOINED ENDED
 *                 an instance's cost record (times since the epoch; 0: not)
 *   state_fixture DB hold JOB NODE START END USER ACCOUNT PARTITION
 *                 a job's hold of a node (END 0: still)
 *
 * Exit: 0 done, 1 the node was not in state FROM, 2 usage or error.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "state.h"

static int age(const char *path, bool events, const char *node, double secs)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = 2;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, events ? "UPDATE events SET time=time-?1" :
			       "UPDATE nodes SET since=?1 WHERE name=?2", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "state_fixture: %s: %s\n", path, sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_bind_double(st, 1, events ? secs : (double)time(NULL) - secs);
	if (!events)
		sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_DONE && (events || sqlite3_changes(db) == 1))
		rc = 0;
	else
		fprintf(stderr, "state_fixture: %s: no node %s\n", path, node);
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

int main(int argc, char **argv)
{
	struct state_db *db;
	burst_err_t err;
	int rc = 2, i;

	if (argc < 4) {
		fprintf(stderr, "usage: state_fixture DB ensure|move|age NODE ...\n");
		return 2;
	}
	if (!strcmp(argv[2], "age") || !strcmp(argv[2], "age-events"))
		return argc == 5 ? age(argv[1], !strcmp(argv[2], "age-events"), argv[3], atof(argv[4])) : 2;
	db = state_open(argv[1], &err);
	if (!db) {
		fprintf(stderr, "state_fixture: %s\n", err.msg);
		return 2;
	}
	if (!strcmp(argv[2], "instance") && argc == 13) {
		struct cost_inst in;
		memset(&in, 0, sizeof(in));
		in.provider = argv[3];
		in.instance = argv[4];
		in.node = argv[5];
		in.nodeset = argv[6];
		in.type = argv[7];
		in.region = argv[8];
		in.price = strcmp(argv[9], "-") ? atof(argv[9]) : NAN;
		in.price_source = (char *)(strcmp(argv[9], "-") ? "on-demand: catalog" : "unknown");
		in.launched = atof(argv[10]);
		rc = state_instance_launched(db, &in, &err) == 0 &&
		     (atof(argv[11]) <= 0 || state_instance_joined(db, argv[3], argv[4], atof(argv[11]), &err) == 0) &&
		     (atof(argv[12]) <= 0 || state_instance_ended(db, argv[3], argv[4], atof(argv[12]), &err) == 0) ? 0 : 2;
		if (rc)
			fprintf(stderr, "state_fixture: %s\n", err.msg);
	} else if (!strcmp(argv[2], "hold") && argc == 10) {
		struct cost_hold h = { .job = atol(argv[3]), .node = argv[4], .start = atof(argv[5]), .end = atof(argv[6]),
				       .user = argv[7], .account = argv[8], .partition = argv[9] };
		rc = state_hold(db, &h, &err) == 0 ? 0 : 2;
		if (rc)
			fprintf(stderr, "state_fixture: %s\n", err.msg);
	} else if (!strcmp(argv[2], "ensure") && argc == 5) {
		rc = state_node_ensure(db, argv[3], argv[4], &err) == 0 ? 0 : 2;
	} else if (!strcmp(argv[2], "move") && argc >= 6) {
		struct node_rec r;
		const char *detail = NULL;
		if (state_node_get(db, argv[3], &r, &err) != 1) {
			fprintf(stderr, "state_fixture: no node %s\n", argv[3]);
			goto out;
		}
		for (i = 6; i < argc; i++) {
			char *eq = strchr(argv[i], '=');
			char **field = NULL;
			if (!eq) {
				fprintf(stderr, "state_fixture: not KEY=VALUE: %s\n", argv[i]);
				state_node_clear(&r);
				goto out;
			}
			*eq++ = '\0';
			if (!strcmp(argv[i], "instance"))
				field = &r.instance;
			else if (!strcmp(argv[i], "error"))
				field = &r.last_error;
			else if (!strcmp(argv[i], "address"))
				field = &r.address;
			else if (!strcmp(argv[i], "token"))
				field = &r.token;
			else if (!strcmp(argv[i], "detail"))
				detail = eq;
			else if (!strcmp(argv[i], "job"))
				r.job = atol(eq);
			else if (!strcmp(argv[i], "attempt"))
				r.attempt = atoi(eq);
			else if (!strcmp(argv[i], "cooldown"))
				r.cooldown_until = (double)time(NULL) + atof(eq);
			else {
				fprintf(stderr, "state_fixture: unknown key %s\n", argv[i]);
				state_node_clear(&r);
				goto out;
			}
			if (field) {
				free(*field);
				*field = *eq ? strdup(eq) : NULL;
			}
		}
		if ((strcmp(argv[4], "*") && node_state_parse(argv[4]) < 0) || node_state_parse(argv[5]) < 0) {
			fprintf(stderr, "state_fixture: %s or %s is no node state\n", argv[4], argv[5]);
			state_node_clear(&r);
			goto out;
		}
		rc = state_transition(db, argv[3], strcmp(argv[4], "*") ? (enum node_state)node_state_parse(argv[4]) : NS_ANY,
				      &r, (enum node_state)node_state_parse(argv[5]), detail, &err);
		if (rc < 0)
			fprintf(stderr, "state_fixture: %s\n", err.msg);
		rc = rc == 1 ? 0 : rc == 0 ? 1 : 2;
		state_node_clear(&r);
	} else
		fprintf(stderr, "state_fixture: bad command\n");
out:
	state_close(db);
	return rc;
}
