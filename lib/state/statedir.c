/*
 * statedir.c - StateDir is the agent's own, checked before it is used
 * (statedir.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statedir.h"
#include "strutil.h"

/* "uid 65534 (nobody)" */
static const char *who(uid_t u, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pbuf[1024];

	if (getpwuid_r(u, &pw, pbuf, sizeof(pbuf), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)u, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)u);
	return buf;
}

/* The name chown takes for uid. */
static const char *owner_name(uid_t u, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char pbuf[1024];

	if (getpwuid_r(u, &pw, pbuf, sizeof(pbuf), &res) == 0 && res)
		snprintf(buf, len, "%s", res->pw_name);
	else
		snprintf(buf, len, "%u", (unsigned)u);
	return buf;
}

enum kind { K_ABOVE, K_DIR, K_FILE };

struct want {
	const char *what;   /* "StateDir", "the state database", ... */
	enum kind kind;
	uid_t uid;          /* the checking process's */
	uid_t other;        /* another owner allowed, STATEDIR_ANY_OWNER: any, 0: none more */
};

/*
 * Check path as w wants it (a symbolic link is never it, except above
 * StateDir: there a link is checked as its target, and must be ours). 0
 * (or missing: *missing, when given), -1 with err.
 */
static int check_path(const char *path, const struct want *w, bool *missing, burst_err_t *err)
{
	struct stat st;
	char o[300], u[300], n[300];
	unsigned mode;

	if (missing)
		*missing = false;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT) {
			if (missing)
				*missing = true;
			return 0;
		}
		burst_err_set(err, "%s (%s): cannot check it: %s", path, w->what, strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		char to[PATH_MAX];
		ssize_t k = readlink(path, to, sizeof(to) - 1);
		if (w->kind == K_ABOVE && (st.st_uid == 0 || st.st_uid == w->uid)) {
			/* a link of ours on the way: what it leads to is checked as itself */
			if (stat(path, &st) < 0) {
				burst_err_set(err, "%s (%s): cannot check where it leads: %s", path, w->what,
					      strerror(errno));
				return -1;
			}
		} else if (w->kind == K_ABOVE) {
			burst_err_set(err, "%s (%s) is a symbolic link owned by %s, not root%s%s: its owner can "
				      "point the agent's state anywhere; make it root's, or give StateDir= a path "
				      "without it", path, w->what, who(st.st_uid, o, sizeof(o)), w->uid ? " or " : "",
				      w->uid ? who(w->uid, u, sizeof(u)) : "");
			return -1;
		} else {
			to[k > 0 ? k : 0] = '\0';
			burst_err_set(err, "%s (%s) is a symbolic link (to %s), not the %s the agent keeps there: "
				      "whoever made it chooses what the agent reads and writes; remove it (rm %s) and "
				      "let the agent make the %s", path, w->what, k > 0 ? to : "?",
				      w->kind == K_DIR ? "directory" : "file", path,
				      w->kind == K_DIR ? "directory" : "file");
			return -1;
		}
	}
	mode = (unsigned)(st.st_mode & 07777);
	if ((w->kind != K_FILE && !S_ISDIR(st.st_mode)) || (w->kind == K_FILE && !S_ISREG(st.st_mode))) {
		burst_err_set(err, "%s (%s) is not a %s (mode %06o): move it away and let the agent make it", path,
			      w->what, w->kind == K_FILE ? "regular file" : "directory", (unsigned)st.st_mode);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != w->uid && w->other != STATEDIR_ANY_OWNER &&
	    (w->other == 0 || st.st_uid != w->other)) {
		char also[700] = "";
		if (w->uid != 0)
			snprintf(also, sizeof(also), " or %s", who(w->uid, u, sizeof(u)));
		if (w->other != STATEDIR_ANY_OWNER && w->other != 0)
			snprintf(also + strlen(also), sizeof(also) - strlen(also), " or %s", who(w->other, n, sizeof(n)));
		burst_err_set(err, "%s (%s) is owned by %s, not root%s: its owner can change what the agent "
			      "trusts there; if you did not make it, remove it, else: chown %s %s", path, w->what,
			      who(st.st_uid, o, sizeof(o)), also, owner_name(w->uid, n, sizeof(n)), path);
		return -1;
	}
	if ((mode & (S_IWGRP | S_IWOTH)) && !(w->kind == K_ABOVE && (mode & S_ISVTX))) {
		burst_err_set(err, "%s (%s) can be written by %s (mode %04o, owner %s): %s; chmod go-w %s%s", path,
			      w->what, (mode & S_IWOTH) ? "anyone" : "its group", mode, who(st.st_uid, o, sizeof(o)),
			      w->kind == K_ABOVE ? "whoever can write there can replace StateDir" :
			      "whoever can write it can change the agent's state", path,
			      w->kind == K_ABOVE ? " (or chmod +t, as /tmp is)" : "");
		return -1;
	}
	return 0;
}

/* Each directory from / down to path's parent, as written and as resolved. */
static int check_above(const char *dir, uid_t uid, burst_err_t *err)
{
	const struct want w = { "a directory above StateDir", K_ABOVE, uid, 0 };
	char real[PATH_MAX], p[PATH_MAX];
	const char *paths[2] = { dir, NULL };

	if (realpath(dir, real))
		paths[1] = real;
	for (int k = 0; k < 2 && paths[k]; k++) {
		size_t len = strlen(paths[k]);
		if (len >= sizeof(p))
			continue;
		memcpy(p, paths[k], len + 1);
		/* "/" first, then each prefix that ends before a '/' (the last part is StateDir) */
		if (check_path("/", &w, NULL, err) < 0)
			return -1;
		for (size_t i = 1; i < len; i++) {
			bool missing;
			if (p[i] != '/')
				continue;
			p[i] = '\0';
			if (check_path(p, &w, &missing, err) < 0)
				return -1;
			p[i] = '/';
			if (missing)
				break;
		}
	}
	return 0;
}

/* Each entry of dir (not . and ..): a directory (dirs) or a regular file of
 * ours that no one else may write; anything else that is there is left. */
static int check_entries(const char *dir, const char *what, enum kind kind, uid_t uid, burst_err_t *err)
{
	const struct want w = { what, kind, uid, 0 };
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return errno == ENOENT ? 0 : (burst_err_set(err, "%s: cannot read it: %s", dir, strerror(errno)), -1);
	while (rc == 0 && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (lstat(path, &st) < 0)
			continue;   /* gone meanwhile */
		/* links where a directory or a file is kept are refused; other
		 * kinds of things (a node's file beside the directories) are not
		 * what the agent reads here */
		if (S_ISLNK(st.st_mode) || (kind == K_DIR ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			rc = check_path(path, &w, NULL, err);
	}
	closedir(d);
	return rc;
}

int statedir_check_spool(const char *spool, uid_t uid, uid_t spool_uid, burst_err_t *err)
{
	const struct want w = { "the request spool, where SlurmUser's power-save programs write", K_DIR, uid,
				spool_uid };

	return check_path(spool, &w, NULL, err);
}

int statedir_check(const char *dir, uid_t uid, uid_t spool_uid, unsigned flags, burst_err_t *err)
{
	static const char *const db[] = { "agent.db", "agent.db-wal", "agent.db-shm", "agent.db-journal" };
	static const char *const policy[] = { "blessed-kernels", "blessed-drivers" };
	char path[PATH_MAX];
	bool missing;

	if (dir[0] != '/') {
		burst_err_set(err, "StateDir=%s is not an absolute path", dir);
		return -1;
	}
	if (check_above(dir, uid, err) < 0)
		return -1;
	{
		/* StateDir itself may be a link of ours (to a cluster filesystem, say) */
		const struct want link = { "StateDir", K_ABOVE, uid, 0 }, w = { "StateDir", K_DIR, uid, 0 };
		char real[PATH_MAX];
		const char *d = realpath(dir, real) ? real : dir;
		struct stat st;
		if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && check_path(dir, &link, NULL, err) < 0)
			return -1;
		if (check_path(d, &w, &missing, err) < 0)
			return -1;
		if (missing)
			return 0;
	}
#define AT(name) ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, (name)) < sizeof(path) ? path : "")
	for (size_t i = 0; i < sizeof(db) / sizeof(db[0]); i++) {
		const struct want w = { "the agent's state database", K_FILE, uid, 0 };
		if (check_path(AT(db[i]), &w, NULL, err) < 0)
			return -1;
	}
	if (!(flags & STATEDIR_AGENT))
		return 0;
	if (statedir_check_spool(AT("spool"), uid, spool_uid, err) < 0)
		return -1;
	{
		const struct want w = { "the nodes' directories", K_DIR, uid, 0 };
		if (check_path(AT("nodes"), &w, &missing, err) < 0)
			return -1;
		if (!missing && check_entries(path, "a node's directory", K_DIR, uid, err) < 0)
			return -1;
	}
	{
		const struct want w = { "the local provider's image, run by its instances as root", K_DIR, uid, 0 };
		if (check_path(AT("local-image"), &w, &missing, err) < 0)
			return -1;
		if (!missing && check_entries(path, "a file of the local provider's image", K_FILE, uid, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(policy) / sizeof(policy[0]); i++) {
		const struct want w = { "the blessed versions the admission policy takes", K_FILE, uid, 0 };
		if (check_path(AT(policy[i]), &w, NULL, err) < 0)
			return -1;
	}
	{
		/* the aws provider's batch journals: PROVIDER.batches */
		DIR *d = opendir(dir);
		struct dirent *e;
		int rc = 0;
		const struct want w = { "a provider's journal of launch batches", K_FILE, uid, 0 };
		if (!d) {
			burst_err_set(err, "%s (StateDir): cannot read it: %s", dir, strerror(errno));
			return -1;
		}
		while (rc == 0 && (e = readdir(d))) {
			size_t l = strlen(e->d_name);
			if (l > 8 && !strcmp(e->d_name + l - 8, ".batches"))
				rc = check_path(AT(e->d_name), &w, NULL, err);
		}
		closedir(d);
		if (rc < 0)
			return -1;
	}
#undef AT
	return 0;
}
