/*
 * test_syncdir.c - sync_dir and sync_parent_dir: the directory that holds a
 * file synced (what a rename needs to survive a crash), and the errors when
 * there is none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syncdir.h"
#include "tap.h"

int main(void)
{
	char dir[] = "/tmp/test_syncdir.XXXXXX", file[256], deep[256];
	FILE *f;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/a.conf", dir);
	snprintf(deep, sizeof(deep), "%s/none/a.conf", dir);
	f = fopen(file, "w");
	if (f)
		fclose(f);

	ok(sync_dir(dir) == 0, "sync_dir of a directory");
	errno = 0;
	ok(sync_dir(file) < 0 && errno == ENOTDIR, "sync_dir of a file: ENOTDIR (%s)", strerror(errno));
	errno = 0;
	ok(sync_dir(deep) < 0 && errno == ENOENT, "sync_dir of a missing path: ENOENT (%s)", strerror(errno));
	ok(sync_parent_dir(file) == 0, "sync_parent_dir of a file in a directory");
	errno = 0;
	ok(sync_parent_dir(deep) < 0 && errno == ENOENT, "sync_parent_dir in a missing directory: ENOENT (%s)",
	   strerror(errno));
	ok(sync_parent_dir("/burst-syncdir-test-none") == 0, "a name in / syncs / (it exists)");
	if (chdir(dir) == 0)
		ok(sync_parent_dir("a.conf") == 0, "a bare name syncs the working directory");
	else
		ok(0, "chdir %s", dir);
	unlink(file);
	rmdir(dir);
	return done_testing();
}
