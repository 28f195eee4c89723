/*
 * test_spool_read.c - the agent reads a spool request only if it is a
 * regular file of root or SlurmUser within the size cap: a FIFO is refused
 * without waiting for a writer, a symbolic link (to /dev/zero) is not
 * followed, another user's file and an oversized one are refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"
#include "tap.h"

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

int main(void)
{
	char dir[] = "/var/tmp/test_spool_read.XXXXXX", path[512];
	burst_err_t err;
	char *t;
	size_t len = 0;
	uid_t me = geteuid(), owner = me;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/a.json", dir);
	put(path, "{\"op\":\"resume\",\"nodes\":\"n1\"}");
	t = spool_read(dir, "a.json", owner, 1024, &len, &err);
	ok(t && !strcmp(t, "{\"op\":\"resume\",\"nodes\":\"n1\"}") && len == 28, "a regular request is read (%zu bytes)",
	   len);
	free(t);

	snprintf(path, sizeof(path), "%s/fifo.json", dir);
	ok(mkfifo(path, 0600) == 0, "a FIFO named fifo.json");
	t = spool_read(dir, "fifo.json", owner, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "not a regular file"), "refused without waiting for a writer (%s)", err.msg);

	snprintf(path, sizeof(path), "%s/zero.json", dir);
	ok(symlink("/dev/zero", path) == 0, "a symbolic link zero.json -> /dev/zero");
	t = spool_read(dir, "zero.json", owner, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "symbolic link"), "not followed (%s)", err.msg);

	snprintf(path, sizeof(path), "%s/big.json", dir);
	put(path, "{\"op\":\"resume\",\"nodes\":\"n[1-1000]\",\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}");
	t = spool_read(dir, "big.json", owner, 32, NULL, &err);
	ok(!t && strstr(err.msg, "more than a request may have"), "a request over the cap is refused (%s)", err.msg);

	/* a file neither root's nor SlurmUser's: as root, give it to nobody;
	 * otherwise it is ours and SlurmUser is someone else */
	snprintf(path, sizeof(path), "%s/other.json", dir);
	put(path, "{}");
	if (me == 0)
		ok(chown(path, 65534, 65534) == 0, "other.json belongs to uid 65534");
	else {
		owner = me + 1;
		ok(1, "other.json belongs to uid %u, SlurmUser is uid %u", (unsigned)me, (unsigned)owner);
	}
	t = spool_read(dir, "other.json", me == 0 ? 64030 : owner, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "not root or SlurmUser"), "another user's file is refused (%s)", err.msg);
	t = spool_read(dir, "missing.json", me, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "missing.json: cannot open"), "a missing file names itself (%s)", err.msg);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		return 1;
	return done_testing();
}
