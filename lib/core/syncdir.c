/*
 * syncdir.c - a directory synced after a file was made or renamed in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
