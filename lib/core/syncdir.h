/*
 * syncdir.h - a directory synced after a file was made or renamed in it, so
 * that the new name survives a crash (fsync of the file alone does not
 * write its directory entry).
 */
#ifndef BURST_SYNCDIR_H
#define BURST_SYNCDIR_H

/* fsync of the directory dir: 0, or -1 with errno. */
int sync_dir(const char *dir);

/* fsync of the directory that holds path ("." for a bare name, "/" for a
 * name in /): 0, or -1 with errno. */
int sync_parent_dir(const char *path);

#include <stdio.h>

/*
 * A file that replaces path whole: written to a temporary beside it (mode
 * 0666 less the umask, like any file the user makes) and renamed over it by
 * replace_commit, so that a reader sees the old file or the new one, never
 * half. replace_open: 0, or -1 with why ("cannot make a file beside PATH:
 * ... (is its directory there and writable?)"). replace_commit flushes,
 * fsyncs, closes, renames and syncs the directory; on any failure, or with
 * failed set (the caller's write went wrong), the temporary is removed and
 * path left as it was: -1 with why ("...; PATH is unchanged"). Both free
 * what they hold on failure; replace_commit always.
 */
struct file_replace {
	FILE *f;
	char *tmp;
	const char *path;
};
int replace_open(struct file_replace *fr, const char *path, char *why, size_t whylen);
int replace_commit(struct file_replace *fr, int failed, char *why, size_t whylen);

#endif
