/*
 * test_statedir.c - StateDir is used only when no one but root and its
 * user can change it (lib/state/statedir.h): a StateDir, a file or a
 * directory of the agent's that group or others may write is refused, so
 * is a link where a file or directory is kept, and a directory above
 * StateDir that others may write unless it is sticky; each message names
 * the path, what was found and the fix. As root, files of another user
 * (uid 65534) are refused too, and the spool may be SlurmUser's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "statedir.h"
#include "tap.h"

static char top[4096];

static void mk(const char *rel, mode_t mode, int dir)
{
	char p[8192];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	if (dir) {
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			perror(p);
	} else if ((fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, mode)) >= 0)
		close(fd);
	chmod(p, mode);
}

/* rel under the test's directory (four at a time: symlink(at(a), at(b))) */
static const char *at(const char *rel)
{
	static char p[4][8192];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", top, rel);
	return p[k];
}

/* Check rel as the agent (or a reader); 0 or -1, the message in err. */
static int check(const char *rel, unsigned flags, burst_err_t *err)
{
	char p[8192];

	snprintf(p, sizeof(p), "%s", at(rel));
	burst_err_clear(err);
	return statedir_check(p, geteuid(), STATEDIR_ANY_OWNER, flags, err);
}

static int has(const burst_err_t *err, const char *frag)
{
	char want[8192];

	/* '@' in frag stands for the test's directory */
	snprintf(want, sizeof(want), "%s", frag);
	if (strchr(want, '@')) {
		char *a = strchr(want, '@');
		*a = '\0';
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", top, strchr(frag, '@') + 1);
	}
	if (!strstr(err->msg, want))
		diag("got: %s\nwant: %s", err->msg, want);
	return strstr(err->msg, want) != NULL;
}

int main(void)
{
	burst_err_t err;
	char tmpl[] = "/tmp/test_statedir.XXXXXX";

	if (!mkdtemp(tmpl))
		return 1;
	chmod(tmpl, 0755);
	snprintf(top, sizeof(top), "%s", tmpl);

	/* the good case: what the agent makes */
	mk("s", 0755, 1);
	mk("s/agent.db", 0600, 0);
	mk("s/agent.db-wal", 0600, 0);
	mk("s/spool", 0700, 1);
	mk("s/nodes", 0755, 1);
	mk("s/nodes/burst-1", 0755, 1);
	mk("s/nodes/burst-1/tmp", 01777, 1);
	mk("s/local-image", 0755, 1);
	mk("s/local-image/burst-node", 0755, 0);
	mk("s/blessed-kernels", 0644, 0);
	mk("s/aws-cloud.batches", 0600, 0);
	ok(check("s", STATEDIR_AGENT, &err) == 0, "a StateDir as the agent makes it is used (%s)", err.msg);
	ok(check("missing", STATEDIR_AGENT, &err) == 0, "one not made yet is fine (the agent makes it)");
	ok(statedir_check("relative/dir", geteuid(), STATEDIR_ANY_OWNER, 0, &err) < 0 &&
	   has(&err, "StateDir=relative/dir is not an absolute path"), "a relative StateDir is refused");

	/* StateDir itself, writable by others or its group */
	chmod(at("s"), 0777);
	ok(check("s", 0, &err) < 0 && has(&err, "@/s (StateDir) can be written by anyone (mode 0777") &&
	   has(&err, "chmod go-w @/s"), "StateDir mode 0777: refused, with the fix");
	chmod(at("s"), 01777);
	ok(check("s", 0, &err) < 0 && has(&err, "(mode 1777"), "... sticky does not make StateDir safe");
	chmod(at("s"), 0775);
	ok(check("s", 0, &err) < 0 && has(&err, "@/s (StateDir) can be written by its group (mode 0775"),
	   "StateDir mode 0775: refused");
	chmod(at("s"), 0755);

	/* the database files */
	chmod(at("s/agent.db-wal"), 0666);
	ok(check("s", 0, &err) < 0 && has(&err, "@/s/agent.db-wal (the agent's state database) can be written by anyone"),
	   "a -wal others may write: refused (a reader too)");
	chmod(at("s/agent.db-wal"), 0600);
	unlink(at("s/agent.db-wal"));
	ok(symlink("/etc/passwd", at("s/agent.db-wal")) == 0 && check("s", 0, &err) < 0 &&
	   has(&err, "@/s/agent.db-wal (the agent's state database) is a symbolic link (to /etc/passwd), not the file") &&
	   has(&err, "remove it (rm @/s/agent.db-wal)"), "a link for the -wal: refused");
	unlink(at("s/agent.db-wal"));
	mk("s/agent.db-shm", 0600, 1);
	ok(check("s", 0, &err) < 0 && has(&err, "@/s/agent.db-shm (the agent's state database) is not a regular file"),
	   "a directory where the -shm goes: refused");
	rmdir(at("s/agent.db-shm"));
	ok(check("s", STATEDIR_AGENT, &err) == 0, "put right: used again (%s)", err.msg);

	/* the agent's own files and directories; a reader does not look at them */
	rmdir(at("s/spool"));
	ok(symlink(top, at("s/spool")) == 0 && check("s", STATEDIR_AGENT, &err) < 0 &&
	   has(&err, "@/s/spool (the request spool, where SlurmUser's power-save programs write) is a symbolic link"),
	   "a link for the spool: refused");
	ok(check("s", 0, &err) == 0, "... a reader (burstctl) does not read the spool's files: not its concern");
	unlink(at("s/spool"));
	mk("s/spool", 0733, 1);
	ok(check("s", STATEDIR_AGENT, &err) < 0 && has(&err, "@/s/spool (the request spool"),
	   "a spool others may write: refused");
	chmod(at("s/spool"), 0700);
	chmod(at("s/nodes/burst-1"), 0757);
	ok(check("s", STATEDIR_AGENT, &err) < 0 && has(&err, "@/s/nodes/burst-1 (a node's directory) can be written by anyone"),
	   "a node's directory others may write: refused");
	chmod(at("s/nodes/burst-1"), 0755);
	ok(symlink("/", at("s/nodes/burst-2")) == 0 && check("s", STATEDIR_AGENT, &err) < 0 &&
	   has(&err, "@/s/nodes/burst-2 (a node's directory) is a symbolic link (to /)"), "a link for a node's directory: refused");
	unlink(at("s/nodes/burst-2"));
	chmod(at("s/local-image/burst-node"), 0777);
	ok(check("s", STATEDIR_AGENT, &err) < 0 &&
	   has(&err, "@/s/local-image/burst-node (a file of the local provider's image) can be written by anyone"),
	   "the local image's burst-node others may write: refused");
	chmod(at("s/local-image/burst-node"), 0755);
	chmod(at("s/blessed-kernels"), 0664);
	ok(check("s", STATEDIR_AGENT, &err) < 0 && has(&err, "@/s/blessed-kernels (the blessed versions"),
	   "blessed-kernels its group may write: refused");
	chmod(at("s/blessed-kernels"), 0644);
	chmod(at("s/aws-cloud.batches"), 0606);
	ok(check("s", STATEDIR_AGENT, &err) < 0 && has(&err, "@/s/aws-cloud.batches (a provider's journal of launch batches)"),
	   "a batch journal others may write: refused");
	chmod(at("s/aws-cloud.batches"), 0600);
	ok(check("s", STATEDIR_AGENT, &err) == 0, "all put right: used (%s)", err.msg);

	/* the directories above StateDir: sticky, or no one else's to write */
	mk("open", 0777, 1);
	mk("open/s", 0755, 1);
	ok(check("open/s", 0, &err) < 0 && has(&err, "@/open (a directory above StateDir) can be written by anyone") &&
	   has(&err, "chmod go-w @/open (or chmod +t, as /tmp is)"), "under a directory anyone may write: refused");
	ok(check("open/not-yet", STATEDIR_AGENT, &err) < 0, "... even before StateDir is made there");
	chmod(at("open"), 01777);
	ok(check("open/s", 0, &err) == 0, "the same directory sticky (as /tmp): used (%s)", err.msg);
	chmod(at("open"), 0777);
	/* a link of ours to StateDir is followed, and what it leads to checked */
	ok(symlink(at("s"), at("link")) == 0 && check("link", STATEDIR_AGENT, &err) == 0,
	   "StateDir given as a link of ours to a good one: used (%s)", err.msg);
	ok(symlink(at("open/s"), at("link2")) == 0 && check("link2", 0, &err) < 0 &&
	   has(&err, "@/open (a directory above StateDir) can be written by anyone"),
	   "a link to a StateDir under a directory anyone may write: refused");

	if (geteuid() == 0) {
		/* files of another user: uid 65534 */
		ok(chown(at("s/agent.db"), 65534, 65534) == 0 && check("s", 0, &err) < 0 &&
		   has(&err, "@/s/agent.db (the agent's state database) is owned by uid 65534") &&
		   has(&err, "not root: its owner can change what the agent trusts there") && has(&err, "chown root @/s/agent.db"),
		   "an agent.db of uid 65534: refused, with the fix");
		chown(at("s/agent.db"), 0, 0);
		ok(chown(at("s/spool"), 65534, 65534) == 0 &&
		   statedir_check_spool(at("s/spool"), 0, 65534, &err) == 0, "a spool of SlurmUser (uid 65534 here): used");
		ok(statedir_check_spool(at("s/spool"), 0, 64000, &err) < 0 &&
		   has(&err, "is owned by uid 65534") && has(&err, "not root or uid 64000"),
		   "... of another user than SlurmUser: refused");
		ok(check("s", STATEDIR_AGENT, &err) == 0, "... and not checked before SlurmUser is known (%s)", err.msg);
		chown(at("s/spool"), 0, 0);
		ok(chown(at("s"), 65534, 65534) == 0 && check("s", 0, &err) < 0 && has(&err, "@/s (StateDir) is owned by uid 65534"),
		   "a StateDir of another user: refused");
		chown(at("s"), 0, 0);
		ok(lchown(at("link"), 65534, 65534) == 0 && check("link", 0, &err) < 0 &&
		   has(&err, "@/link (StateDir) is a symbolic link owned by uid 65534"),
		   "StateDir given as a link of another user: refused");
		mk("d", 0755, 1);
		ok(symlink(at("s"), at("d/s")) == 0 && lchown(at("d"), 0, 0) == 0 && check("link/../d/s", 0, &err) < 0 &&
		   has(&err, "@/link (a directory above StateDir) is a symbolic link owned by uid 65534"),
		   "a path through a link of another user: refused");
	}
	{
		char cmd[8300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			diag("cannot remove %s", top);
	}
	return done_testing();
}
