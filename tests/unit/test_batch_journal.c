/*
 * test_batch_journal.c - the aws provider's batch journal: indexed lookups
 * (by token; by (node, attempt), the latest batch holding it, the one
 * before once it is dropped), finished batches dropped (not live, region
 * listed, sent long enough before), a file bounded by what is kept, and no
 * loss from a crash in the middle of a compaction.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "batch_journal.h"
#include "tap.h"

static char dir[] = "/tmp/test_batch_journal.XXXXXX";
static char path[256];

static const char *tok(int i)
{
	static char t[8][BJ_TOKEN_LEN + 1];
	static int k;
	char *o = t[k++ % 8];
	snprintf(o, BJ_TOKEN_LEN + 1, "burst-%040d", i);
	return o;
}

static int add(struct batch_journal *j, int t, const char *region, double sent, size_t n, ...)
{
	const char *nodes[8];
	int attempts[8];
	burst_err_t err;
	va_list ap;
	size_t i;
	int rc;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		nodes[i] = va_arg(ap, const char *);
		attempts[i] = va_arg(ap, int);
	}
	va_end(ap);
	rc = bj_add(j, tok(t), nodes, attempts, n, region, sent, &err);
	if (rc < 0)
		diag("%s", err.msg);
	return rc;
}

static size_t lines_of(const char *p)
{
	size_t len = 0, n = 0, i;
	char *s = tap_slurp(p, &len);
	for (i = 0; s && i < len; i++)
		n += s[i] == '\n';
	free(s);
	return n;
}

/* The fence: counts its calls, notes whether the new file was there (written
 * before the check) and answers fence_answer. */
static int fence_calls, fence_answer, fence_saw_new;
static char fence_newp[300];

static int fence(void)
{
	fence_calls++;
	fence_saw_new = access(fence_newp, F_OK) == 0;
	return fence_answer;
}

/* The batch of (node, attempt) as its token's number, or -1; *idx its index. */
static int found(const struct batch_journal *j, const char *node, int attempt, size_t *idx)
{
	const struct bj_batch *b = bj_find(j, node, attempt, idx);
	return b ? atoi(b->token + 6) : -1;
}

int main(void)
{
	struct batch_journal j;
	struct htab live = HTAB_INIT;
	const char *r1[] = { "us-east-1", NULL };
	burst_err_t err;
	size_t idx = 99, i;
	char live1[BJ_TOKEN_LEN + 1];   /* the table borrows its keys */
	char newp[300];
	FILE *f;

	if (!mkdtemp(dir))
		return 1;
	snprintf(live1, sizeof(live1), "%s", tok(1));
	snprintf(path, sizeof(path), "%s/aws-aws.batches", dir);
	snprintf(newp, sizeof(newp), "%s.new", path);

	bj_open(&j, path);
	ok(j.n == 0 && !bj_get(&j, tok(1)) && found(&j, "burst-1", 1, &idx) < 0, "a missing file is an empty journal");

	ok(add(&j, 1, "us-east-1", 100, 2, "burst-1", 1, "burst-2", 1) == 0, "batch 1 journaled");
	ok(add(&j, 2, "us-east-1", 100, 1, "burst-3", 1) == 0, "batch 2 journaled");
	ok(add(&j, 3, "us-east-1", 100, 2, "burst-4", 1, "burst-1", 1) == 0,
	   "batch 3 journaled (burst-1's attempt 1 again: a retry)");
	ok(add(&j, 4, "eu-west-1", 100, 1, "burst-5", 1) == 0, "batch 4 journaled (another region)");
	ok(add(&j, 5, "us-east-1", 900, 1, "burst-6", 1) == 0, "batch 5 journaled (sent later)");
	ok(add(&j, 1, "us-east-1", 100, 2, "burst-1", 1, "burst-2", 1) == 0 && j.n == 5 && lines_of(path) == 5,
	   "a token journaled again is not written twice");
	bj_settle(&j, bj_get(&j, tok(1)));
	is_num(lines_of(path), 6, "an answer adds a line");

	is_num(found(&j, "burst-1", 1, &idx), 3, "(burst-1, 1): the latest batch holding it");
	is_num(idx, 1, "at its index in that batch");
	is_num(found(&j, "burst-2", 1, &idx), 1, "(burst-2, 1): batch 1");
	is_num(idx, 1, "index 1");
	ok(found(&j, "burst-2", 2, &idx) < 0 && found(&j, "burst-", 1, &idx) < 0,
	   "another attempt or a prefix of a name is not found");

	/* what a restart reads */
	bj_free(&j);
	bj_open(&j, path);
	ok(j.n == 5 && bj_get(&j, tok(1))->settled && !bj_get(&j, tok(2))->settled, "read back: 5 batches, 1 answered");
	ok(bj_get(&j, tok(4))->region && !strcmp(bj_get(&j, tok(4))->region, "eu-west-1") &&
	   bj_get(&j, tok(5))->sent == 900, "with their region and when they were sent");
	is_num(found(&j, "burst-1", 1, &idx), 3, "and (burst-1, 1) is batch 3's again");

	/* a listing at 1000 shows batch 1 live: 2 and 3 are finished (their
	 * region listed, sent 900 s before); 4's region was not listed; 5 is
	 * too recent */
	htab_put(&live, live1, NULL);
	is_num(bj_drop_finished(&j, &live, r1, 1000, 600, &err), 2, "two finished batches dropped");
	ok(!bj_get(&j, tok(2)) && !bj_get(&j, tok(3)), "batches 2 and 3 are gone");
	ok(bj_get(&j, tok(1)) && bj_get(&j, tok(4)) && bj_get(&j, tok(5)),
	   "the live one, the one of a region not listed and the recent one are kept");
	is_num(found(&j, "burst-1", 1, &idx), 1, "(burst-1, 1) is batch 1's again once batch 3 is dropped");
	is_num(idx, 0, "at index 0");
	ok(found(&j, "burst-3", 1, &idx) < 0 && found(&j, "burst-4", 1, &idx) < 0, "the dropped nodes are not found");
	is_num(j.rewrites, 0, "a file this small is not rewritten yet");

	/* a crash in the middle of a compaction: the new file written, not
	 * renamed over the journal. Nothing is lost: the old one is read. */
	ok(bj_write_new(&j, &err) == 0 && access(newp, F_OK) == 0, "the compacted journal is written beside it");
	bj_free(&j);
	bj_open(&j, path);
	ok(j.n == 5 && bj_get(&j, tok(2)) && bj_get(&j, tok(3)) && bj_get(&j, tok(1))->settled,
	   "after a crash before the rename: every batch is there, the answer too");
	ok(access(newp, F_OK) < 0, "and the half-done compaction is removed");
	/* a crash while the new file was being written: a partial file */
	f = fopen(newp, "w");
	fputs("burst-0000000000000000000000000000000000000002 burst-3", f);
	fclose(f);
	bj_free(&j);
	bj_open(&j, path);
	ok(j.n == 5 && access(newp, F_OK) < 0, "a partial compaction is not read either");

	/* a compaction: the file keeps what memory keeps */
	is_num(bj_drop_finished(&j, &live, r1, 1000, 600, &err), 2, "the same two dropped again");
	ok(bj_rewrite(&j, &err) == 0, "rewritten");
	is_num(lines_of(path), 4, "the file holds the three kept batches and the answer");
	bj_free(&j);
	bj_open(&j, path);
	ok(j.n == 3 && bj_get(&j, tok(1))->settled && bj_get(&j, tok(4)) && bj_get(&j, tok(5)) &&
	   !bj_get(&j, tok(2)) && bj_get(&j, tok(5))->sent == 900,
	   "read back after the rename: the kept batches, answered as they were, sent when they were");
	{
		struct stat st;
		ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "the new file is mode 0600");
	}

	/* a deposed agent's compaction: another agent (b) took over and
	 * journaled a batch; this one's rewrite, asked for after that, must
	 * not rename its view over the file */
	{
		struct batch_journal b;
		snprintf(fence_newp, sizeof(fence_newp), "%s", newp);
		ok(j.fence == NULL, "bj_open leaves no fence");
		j.fence = fence;
		bj_open(&b, path);
		ok(add(&b, 20, "us-east-1", 950, 1, "burst-20", 1) == 0, "the agent that took over journals a batch");
		fence_answer = 1;
		fence_calls = 0;
		ok(bj_rewrite(&j, &err) < 0 && strstr(err.msg, "no longer holds the lease"),
		   "a fence that refuses: no rewrite, and the error says why (%s)", err.msg);
		ok(fence_calls == 1 && fence_saw_new, "the fence was asked once, after the new file was written");
		ok(access(newp, F_OK) < 0, "the refused compaction's new file is removed");
		is_num(lines_of(path), 5, "the journal keeps every line: the other agent's batch is there");
		bj_free(&b);
		bj_open(&b, path);
		ok(bj_get(&b, tok(20)) != NULL, "and reads back with it");
		bj_free(&b);
		fence_answer = 0;
		fence_calls = 0;
		ok(bj_rewrite(&j, &err) == 0 && fence_calls == 1 && fence_saw_new && lines_of(path) == 4,
		   "a fence that lets it: asked once, the file rewritten as this journal has it");
		j.fence = NULL;
	}

	/* bounded: many batches come and go, the file does not grow with them */
	for (i = 0; i < 2000; i++) {
		char node[32];
		const char *nv[1] = { node };
		int at[1] = { 1 };
		snprintf(node, sizeof(node), "burst-%zu", 100 + i);
		if (bj_add(&j, tok(1000 + (int)i), nv, at, 1, "us-east-1", 100, &err) < 0)
			break;
		bj_settle(&j, bj_get(&j, tok(1000 + (int)i)));
		if (i % 50 == 49 && bj_drop_finished(&j, &live, r1, 1000, 600, &err) < 0)
			break;
	}
	is_num(i, 2000, "2,000 batches journaled, answered and finished");
	ok(j.n == 3, "memory keeps the 3 live ones (%zu)", j.n);
	ok(lines_of(path) <= 2 * 4 + 64 + 100, "the file stays bounded: %zu lines", lines_of(path));
	ok(j.rewrites > 5, "rewritten as it grew (%lu times)", j.rewrites);
	bj_free(&j);
	bj_open(&j, path);
	ok(j.n >= 3 && bj_get(&j, tok(1)) && bj_get(&j, tok(4)) && bj_get(&j, tok(5)), "and reads back whole");

	/* a line of an older agent (no region, no time) counts as listed and old */
	bj_free(&j);
	f = fopen(path, "a");
	fprintf(f, "%s burst-9:2\n", tok(9));
	fclose(f);
	bj_open(&j, path);
	ok(bj_get(&j, tok(9)) && !bj_get(&j, tok(9))->region && bj_get(&j, tok(9))->sent == 0,
	   "an older line reads with no region and no time");
	bj_drop_finished(&j, &live, r1, 1000, 600, &err);
	ok(!bj_get(&j, tok(9)), "and is dropped once no instance of it is live");

	/* a write cut short (a full disk; here RLIMIT_FSIZE) leaves no part
	 * of its line: the next batch's line would run on from it, and a
	 * restart would read that batch's nodes as the failed one's */
	bj_free(&j);
	unlink(path);
	bj_open(&j, path);
	{
		struct rlimit old, lim;
		getrlimit(RLIMIT_FSIZE, &old);
		signal(SIGXFSZ, SIG_IGN);
		lim = old;
		lim.rlim_cur = 60;   /* a batch line is longer: cut in its middle */
		setrlimit(RLIMIT_FSIZE, &lim);
		ok(add(&j, 20, "us-east-1", 100, 2, "burst-20", 1, "burst-21", 1) < 0, "a write cut short fails");
		setrlimit(RLIMIT_FSIZE, &old);
		signal(SIGXFSZ, SIG_DFL);
	}
	ok(!bj_get(&j, tok(20)), "the failed batch is not in memory");
	ok(add(&j, 21, "us-east-1", 100, 1, "burst-22", 1) == 0, "the next batch is journaled");
	bj_free(&j);
	bj_open(&j, path);
	ok(bj_get(&j, tok(21)) && found(&j, "burst-22", 1, &idx) == 21,
	   "a restart reads the next batch as its own (burst-22 in batch %d)", found(&j, "burst-22", 1, &idx));
	ok(!bj_get(&j, tok(20)) && found(&j, "burst-20", 1, &idx) < 0, "and nothing of the failed one");
	/* the same for a batch's "answered" line */
	{
		struct rlimit old, lim;
		struct stat st;
		stat(path, &st);
		getrlimit(RLIMIT_FSIZE, &old);
		signal(SIGXFSZ, SIG_IGN);
		lim = old;
		lim.rlim_cur = (rlim_t)st.st_size + 10;
		setrlimit(RLIMIT_FSIZE, &lim);
		bj_settle(&j, bj_get(&j, tok(21)));
		setrlimit(RLIMIT_FSIZE, &old);
		signal(SIGXFSZ, SIG_DFL);
	}
	ok(add(&j, 22, "us-east-1", 100, 1, "burst-23", 1) == 0, "a batch after a settle cut short is journaled");
	bj_free(&j);
	bj_open(&j, path);
	ok(found(&j, "burst-23", 1, &idx) == 22, "and read back as its own (burst-23 in batch %d)",
	   found(&j, "burst-23", 1, &idx));

	bj_free(&j);
	htab_free(&live);
	unlink(path);
	unlink(newp);
	rmdir(dir);
	return done_testing();
}
