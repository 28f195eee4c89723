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

/* replace_open/replace_commit: the new file whole, or the old one kept */
static void test_replace(void)
{
	char dir[] = "/tmp/test_syncdir.XXXXXX", path[128], why[512], *s;
	struct file_replace fr;

	if (!ok(mkdtemp(dir) != NULL, "a scratch directory"))
		return;
	snprintf(path, sizeof(path), "%s/f", dir);
	ok(replace_open(&fr, path, why, sizeof(why)) == 0, "a replacement is opened");
	fputs("old\n", fr.f);
	ok(replace_commit(&fr, 0, why, sizeof(why)) == 0, "and put in place");
	s = tap_slurp(path, NULL);
	is_str(s, "old\n", "the file holds what was written");
	free(s);
	ok(replace_open(&fr, path, why, sizeof(why)) == 0, "a second replacement is opened");
	fputs("half", fr.f);
	ok(replace_commit(&fr, 1, why, sizeof(why)) == -1, "a write the caller saw fail is not put in place");
	ok(strstr(why, path) && strstr(why, "is unchanged"), "why says the file is unchanged: %s", why);
	s = tap_slurp(path, NULL);
	is_str(s, "old\n", "the old file is whole");
	free(s);
	unlink(path);
	ok(rmdir(dir) == 0, "no temporary file is left beside it");
	snprintf(path, sizeof(path), "%s/f", dir);
	ok(replace_open(&fr, path, why, sizeof(why)) == -1 && strstr(why, "is its directory there"),
	   "a missing directory is named: %s", why);
}


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
	test_replace();
	return done_testing();
}
