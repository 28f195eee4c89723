/*
 * batch_journal.c - the aws provider's batch journal (see batch_journal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "batch_journal.h"
#include "strutil.h"
#include "syncdir.h"

/* One (node, attempt) of a batch in the index; entries of the same key
 * in several batches are chained, newest first in the index. */
struct bj_ent {
	char *key;               /* "NODE:ATTEMPT" */
	struct bj_batch *b;
	size_t idx;
	struct bj_ent *older, *newer;
};

static void index_batch(struct batch_journal *j, struct bj_batch *b)
{
	size_t i;

	b->ents = xcalloc(b->n ? b->n : 1, sizeof(*b->ents));
	for (i = 0; i < b->n; i++) {
		struct bj_ent *e = &b->ents[i], *old;
		size_t len = strlen(b->nodes[i]) + 16;

		e->key = xmalloc(len);
		snprintf(e->key, len, "%s:%d", b->nodes[i], b->attempts[i]);
		e->b = b;
		e->idx = i;
		old = htab_get(&j->by_node, e->key);
		if (old) {
			/* the newest holds the key: the text of the old one stays
			 * the table's key until deleted, so put it anew */
			e->older = old;
			old->newer = e;
			htab_del(&j->by_node, old->key, NULL);
		}
		htab_put(&j->by_node, e->key, e);
	}
	htab_put(&j->by_token, b->token, b);
}

static void unindex_batch(struct batch_journal *j, struct bj_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		struct bj_ent *e = &b->ents[i];

		if (e->newer)
			e->newer->older = e->older;
		else {
			/* the newest: the index moves to the one before it */
			htab_del(&j->by_node, e->key, NULL);
			if (e->older)
				htab_put(&j->by_node, e->older->key, e->older);
		}
		if (e->older)
			e->older->newer = e->newer;
	}
	htab_del(&j->by_token, b->token, NULL);
}

static void batch_free(struct bj_batch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		free(b->nodes[i]);
		if (b->ents)
			free(b->ents[i].key);
	}
	free(b->ents);
	free(b->nodes);
	free(b->attempts);
	free(b->region);
	free(b);
}

/* Takes nodes, attempts and region. */
static struct bj_batch *push(struct batch_journal *j, const char *token, char **nodes, int *attempts, size_t n,
			     char *region, double sent)
{
	struct bj_batch *b = xcalloc(1, sizeof(*b));

	snprintf(b->token, sizeof(b->token), "%s", token);
	b->nodes = nodes;
	b->attempts = attempts;
	b->n = n;
	b->region = region;
	b->sent = sent;
	j->v = xrealloc(j->v, (j->n + 1) * sizeof(*j->v));
	j->v[j->n++] = b;
	index_batch(j, b);
	return b;
}

static void new_path(const struct batch_journal *j, char *out, size_t len)
{
	snprintf(out, len, "%s.new", j->path);
}

void bj_open(struct batch_journal *j, const char *path)
{
	char tmp[4200];
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	memset(j, 0, sizeof(*j));
	j->path = xstrdup(path);
	/* a compaction's new file that a crash left before its rename: the
	 * journal itself is whole, this is not read */
	new_path(j, tmp, sizeof(tmp));
	unlink(tmp);
	if (!(f = fopen(path, "r")))
		return;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok = strtok_r(line, " \n", &save), *w;
		char **nodes = NULL, *region = NULL;
		int *attempts = NULL;
		size_t n = 0;
		double sent = 0;

		j->file_lines++;
		if (!tok || strlen(tok) != BJ_TOKEN_LEN)
			continue;
		w = strtok_r(NULL, " \n", &save);
		if (w && !strcmp(w, "answered")) {   /* "TOKEN answered" */
			struct bj_batch *b = bj_get(j, tok);
			if (b)
				b->settled = true;
			continue;
		}
		for (; w; w = strtok_r(NULL, " \n", &save)) {
			char *colon = strrchr(w, ':');
			if (*w == '@') {   /* when it was sent (older journals lack it) */
				sent = strtod(w + 1, NULL);
				continue;
			}
			if (*w == '%') {   /* its region (older journals lack it) */
				free(region);
				region = w[1] ? xstrdup(w + 1) : NULL;
				continue;
			}
			if (!colon)
				continue;
			*colon = '\0';
			nodes = xrealloc(nodes, (n + 1) * sizeof(char *));
			attempts = xrealloc(attempts, (n + 1) * sizeof(int));
			nodes[n] = xstrdup(w);
			attempts[n] = atoi(colon + 1);
			n++;
		}
		if (bj_get(j, tok)) {   /* written twice: the first stands */
			while (n)
				free(nodes[--n]);
			free(nodes);
			free(attempts);
			free(region);
			continue;
		}
		push(j, tok, nodes, attempts, n, region, sent);
	}
	free(line);
	fclose(f);
}

void bj_free(struct batch_journal *j)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		batch_free(j->v[i]);
	free(j->v);
	htab_free(&j->by_token);
	htab_free(&j->by_node);
	free(j->path);
	memset(j, 0, sizeof(*j));
}

struct bj_batch *bj_get(const struct batch_journal *j, const char *token)
{
	return htab_get(&j->by_token, token);
}

const struct bj_batch *bj_find(const struct batch_journal *j, const char *node, int attempt, size_t *idx)
{
	char key[512];
	struct bj_ent *e;

	if ((size_t)snprintf(key, sizeof(key), "%s:%d", node, attempt) >= sizeof(key))
		return NULL;     /* longer than any node name */
	e = htab_get(&j->by_node, key);
	if (!e)
		return NULL;
	*idx = e->idx;
	return e->b;
}

static void batch_line(struct strbuf *s, const struct bj_batch *b)
{
	size_t i;

	sb_add(s, b->token);
	for (i = 0; i < b->n; i++)
		sb_addf(s, " %s:%d", b->nodes[i], b->attempts[i]);
	sb_addf(s, " @%.3f", b->sent);
	if (b->region)
		sb_addf(s, " %%%s", b->region);
	sb_add(s, "\n");
}

int bj_add(struct batch_journal *j, const char *token, const char *const *nodes, const int *attempts, size_t n,
	   const char *region, double sent, burst_err_t *err)
{
	struct bj_batch tmp;
	struct strbuf s;
	char **nv;
	int *av;
	struct stat sb;
	ssize_t wr = -1;
	size_t i;
	int fd, rc = -1;

	if (bj_get(j, token))
		return 0;
	if (strlen(token) != BJ_TOKEN_LEN) {
		burst_err_set(err, "batch journal %s: token '%s' is not %d characters long", j->path, token,
			      BJ_TOKEN_LEN);
		return -1;
	}
	memset(&tmp, 0, sizeof(tmp));
	snprintf(tmp.token, sizeof(tmp.token), "%s", token);
	tmp.n = n;
	tmp.nodes = (char **)nodes;
	tmp.attempts = (int *)attempts;
	tmp.region = (char *)region;
	tmp.sent = sent;
	sb_init(&s);
	batch_line(&s, &tmp);
	errno = 0;
	fd = open(j->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		burst_err_set(err, "cannot write the batch journal %s: %s", j->path, strerror(errno ? errno : EIO));
		goto out;
	}
	if ((wr = write(fd, s.s, s.len)) != (ssize_t)s.len || fdatasync(fd) < 0 ||
	    (!j->dir_synced && sync_parent_dir(j->path) < 0)) {
		int e = errno;
		char cut[300] = "";
		/* no part of the line may stay: the next one would run on from it,
		 * and a restart would read that batch's nodes as this one's */
		if (ftruncate(fd, sb.st_size) < 0)
			snprintf(cut, sizeof(cut), "; and cannot cut it back to its %lld bytes (%s): move it aside "
				 "before the agent restarts", (long long)sb.st_size, strerror(errno));
		if (wr >= 0 && wr < (ssize_t)s.len)
			burst_err_set(err, "cannot write the batch journal %s: %zd of a batch's %zu bytes written "
				      "(a full disk?)%s", j->path, wr, s.len, cut);
		else
			burst_err_set(err, "cannot write the batch journal %s: %s%s", j->path, strerror(e ? e : EIO),
				      cut);
		goto out;
	}
	j->dir_synced = true;
	j->file_lines++;
	nv = xcalloc(n + 1, sizeof(char *));
	av = xcalloc(n + 1, sizeof(int));
	for (i = 0; i < n; i++) {
		nv[i] = xstrdup(nodes[i]);
		av[i] = attempts[i];
	}
	push(j, token, nv, av, n, region ? xstrdup(region) : NULL, sent);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	sb_free(&s);
	return rc;
}

void bj_settle(struct batch_journal *j, struct bj_batch *b)
{
	char line[64];
	int fd, n;

	if (b->settled)
		return;
	b->settled = true;
	n = snprintf(line, sizeof(line), "%s answered\n", b->token);
	fd = open(j->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0) {
		struct stat sb;
		if (fstat(fd, &sb) == 0) {
			ssize_t wr = write(fd, line, (size_t)n);
			if (wr == n)
				j->file_lines++;
			/* else not kept (a restart waits for the batch a while),
			 * nor any part of it: the next line would run on from it */
			else if (wr > 0 && ftruncate(fd, sb.st_size) < 0) {
				/* a part stays (rare: a short write, then a failed
				 * cut): nothing more can be done from here */
			}
		}
		close(fd);
	}
}

int bj_write_new(struct batch_journal *j, burst_err_t *err)
{
	char tmp[4200];
	struct strbuf s;
	size_t i;
	int fd, rc = -1;

	new_path(j, tmp, sizeof(tmp));
	sb_init(&s);
	for (i = 0; i < j->n; i++) {
		batch_line(&s, j->v[i]);
		if (j->v[i]->settled)
			sb_addf(&s, "%s answered\n", j->v[i]->token);
	}
	errno = 0;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || (s.len && write(fd, s.s, s.len) != (ssize_t)s.len) || fsync(fd) < 0) {
		burst_err_set(err, "cannot compact the batch journal %s: writing %s: %s (the journal is kept as it is)",
			      j->path, tmp, strerror(errno ? errno : EIO));
		if (fd >= 0)
			unlink(tmp);
	} else
		rc = 0;
	if (fd >= 0)
		close(fd);
	sb_free(&s);
	return rc;
}

static size_t kept_lines(const struct batch_journal *j)
{
	size_t i, n = 0;

	for (i = 0; i < j->n; i++)
		n += 1 + (j->v[i]->settled ? 1 : 0);
	return n;
}

int bj_rewrite(struct batch_journal *j, burst_err_t *err)
{
	char tmp[4200];

	if (bj_write_new(j, err) < 0)
		return -1;
	new_path(j, tmp, sizeof(tmp));
	/* last, right before the rename: the new file's writing and syncing
	 * may have taken a while, in which another agent may have taken over
	 * and written batches of its own to the journal */
	if (j->fence && j->fence() != 0) {
		burst_err_set(err, "batch journal %s: not compacting it: this agent no longer holds the lease "
			      "(the journal is kept as it is)", j->path);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, j->path) < 0) {
		burst_err_set(err, "cannot compact the batch journal %s: renaming %s over it: %s (the journal is "
			      "kept as it is)", j->path, tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	/* the rename made durable: until then a crash leaves the old file,
	 * which holds everything the new one does */
	sync_parent_dir(j->path);
	j->dir_synced = true;
	j->file_lines = kept_lines(j);
	j->rewrites++;
	return 0;
}

static bool region_listed(const struct bj_batch *b, const char *const *regions)
{
	size_t i;

	if (!b->region)
		return true;
	for (i = 0; regions && regions[i]; i++)
		if (!strcmp(regions[i], b->region))
			return true;
	return false;
}

long bj_drop_finished(struct batch_journal *j, const struct htab *live, const char *const *regions,
		      double listed_at, double grace, burst_err_t *err)
{
	size_t i, k = 0;
	long dropped = 0;

	for (i = 0; i < j->n; i++) {
		struct bj_batch *b = j->v[i];
		if (!htab_has(live, b->token, NULL) && region_listed(b, regions) && b->sent + grace <= listed_at) {
			unindex_batch(j, b);
			batch_free(b);
			dropped++;
		} else
			j->v[k++] = b;
	}
	j->n = k;
	if (j->file_lines > 2 * kept_lines(j) + 64 && bj_rewrite(j, err) < 0)
		return -1;
	return dropped;
}
