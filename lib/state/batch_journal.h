/*
 * batch_journal.h - the aws provider's batch journal (doc/aws.md): every
 * RunInstances batch, written and synced before it is sent, so that a
 * restart adopts what an earlier batch launched instead of launching again.
 *
 * One line per batch, "TOKEN NODE:ATTEMPT... @SENT %REGION" (the region
 * since compaction: older lines lack it), and "TOKEN answered" once its
 * RunInstances was answered. Lookups are indexed (by token, and by (node,
 * attempt): the latest batch holding it), and the file is compacted:
 * batches that are finished (no live instance in a complete listing of
 * their region, sent long enough before it) are dropped from memory at
 * once, and the file is rewritten without them once it holds more than
 * twice the lines of what is kept (plus a margin): its size is bounded by
 * the batches still live, not by the agent's history. The rewrite writes a
 * new file, syncs it and renames it over the old one: a crash at any point
 * leaves the old journal or the new one, whole.
 */
#ifndef BURST_BATCH_JOURNAL_H
#define BURST_BATCH_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"
#include "htab.h"

#define BJ_TOKEN_LEN 46

struct bj_ent;

struct bj_batch {
	char token[BJ_TOKEN_LEN + 1];
	size_t n;
	char **nodes;            /* in launch index order */
	int *attempts;
	char *region;            /* NULL: not known (a line of an older agent) */
	double sent;             /* when it was journaled (wall clock); 0: not known */
	bool settled;            /* its RunInstances was answered */
	struct bj_ent *ents;     /* its (node, attempt) index entries */
};

struct batch_journal {
	char *path;
	bool dir_synced;         /* the file's directory entry is durable */
	struct bj_batch **v;     /* in journal order */
	size_t n;
	struct htab by_token;
	struct htab by_node;     /* "NODE:ATTEMPT" -> newest entry holding it */
	size_t file_lines;       /* lines the file holds (what a rewrite would drop included) */
	unsigned long rewrites;  /* compactions written (for tests and the log) */
	/* Asked right before a rewrite renames its new file over the journal
	 * (bj_rewrite): 0 lets it, anything else leaves the journal as it is.
	 * Another process may share the file (a standby agent that has taken
	 * over): the agent's lease check. NULL (as bj_open leaves it): no
	 * check. */
	int (*fence)(void);
};

/* Reads path (a missing file is an empty journal). */
void bj_open(struct batch_journal *j, const char *path);
void bj_free(struct batch_journal *j);

/* The batch of token, or NULL. */
struct bj_batch *bj_get(const struct batch_journal *j, const char *token);
/* The latest batch holding (node, attempt), and the node's index in it. */
const struct bj_batch *bj_find(const struct batch_journal *j, const char *node, int attempt, size_t *idx);

/*
 * Journal batch token (nodes[i], attempts[i], i < n; in region, may be
 * NULL) on disk, synced, and in memory. 0 (also if token is in already),
 * or -1 with err (nothing recorded, not even in memory).
 */
int bj_add(struct batch_journal *j, const char *token, const char *const *nodes, const int *attempts, size_t n,
	   const char *region, double sent, burst_err_t *err);
/* Batch b was answered: "TOKEN answered" appended (not synced: a crash
 * loses it, a restart then waits out the batch's in-flight time). */
void bj_settle(struct batch_journal *j, struct bj_batch *b);

/*
 * Drop the finished batches: those whose token is not in live (the tokens
 * of a complete listing of the live instances, started at listed_at),
 * whose region is one of regions (NULL-terminated; a batch of unknown
 * region counts as listed) and which were sent at least grace seconds
 * before listed_at (so that neither a RunInstances still in flight nor
 * EC2's eventual consistency hides a live one). Then the file is
 * rewritten (bj_rewrite) if it holds more than twice what is kept plus 64
 * lines. Returns how many were dropped; -1 with err if the rewrite failed
 * (the drop stands in memory; the old file is whole).
 */
long bj_drop_finished(struct batch_journal *j, const struct htab *live, const char *const *regions,
		      double listed_at, double grace, burst_err_t *err);

/*
 * Write the journal as memory has it: bj_write_new writes PATH.new and
 * syncs it, bj_rewrite does that, renames it over PATH and syncs the
 * directory. 0, or -1 with err (PATH untouched: also when j->fence
 * refuses the rename). A PATH.new left by a crash before its rename is
 * never read (bj_open removes it).
 */
int bj_write_new(struct batch_journal *j, burst_err_t *err);
int bj_rewrite(struct batch_journal *j, burst_err_t *err);

#endif
