/*
 * syncdir.c - a directory synced after a file was made or renamed in it,
 * and a file replaced whole by a rename (syncdir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.h"
#include "syncdir.h"

int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc, saved;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int sync_parent_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int rc, saved;

	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';   /* "/x" is in "/" */
	rc = sync_dir(slash ? dir : ".");
	saved = errno;
	free(dir);
	errno = saved;
	return rc;
}

int replace_open(struct file_replace *fr, const char *path, char *why, size_t whylen)
{
	mode_t mask;
	int fd;

	fr->path = path;
	fr->tmp = xmalloc(strlen(path) + sizeof(".XXXXXX"));
	strcpy(stpcpy(fr->tmp, path), ".XXXXXX");
	if ((fd = mkstemp(fr->tmp)) < 0) {
		snprintf(why, whylen, "cannot make a file beside %s: %s (is its directory there and "
			 "writable?)", path, strerror(errno));
		free(fr->tmp);
		fr->tmp = NULL;
		return -1;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || !(fr->f = fdopen(fd, "w"))) {
		snprintf(why, whylen, "cannot write %s: %s", fr->tmp, strerror(errno));
		close(fd);
		unlink(fr->tmp);
		free(fr->tmp);
		fr->tmp = NULL;
		return -1;
	}
	return 0;
}

int replace_commit(struct file_replace *fr, int failed, char *why, size_t whylen)
{
	int rc = failed ? -1 : 0, saved = errno;

	if (!failed && (fflush(fr->f) != 0 || fsync(fileno(fr->f)) != 0))
		rc = -1, saved = errno;
	if (fclose(fr->f) != 0 && rc == 0)
		rc = -1, saved = errno;
	if (rc < 0)
		snprintf(why, whylen, "writing %s failed: %s; %s is unchanged", fr->tmp, strerror(saved),
			 fr->path);
	else if (rename(fr->tmp, fr->path) != 0) {
		snprintf(why, whylen, "cannot rename %s to %s: %s", fr->tmp, fr->path, strerror(errno));
		rc = -1;
	} else
		sync_parent_dir(fr->path);
	if (rc < 0)
		unlink(fr->tmp);
	free(fr->tmp);
	fr->tmp = NULL;
	fr->f = NULL;
	return rc;
}
