/*
 * spool.c - durable request files (see spool.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>


#include "spool.h"
#include "strutil.h"
#include "syncdir.h"

static int mkdir_p(const char *dir, burst_err_t *err)
{
	char path[PATH_MAX];
	char *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		burst_err_set(err, "spool directory path too long: %s", dir);
		return -1;
	}
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			burst_err_set(err, "cannot create %s: %s", path, strerror(errno));
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		burst_err_set(err, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int spool_write(const char *dir, const char *kind, const char *text,
		char *name, size_t namelen, burst_err_t *err)
{
	char tmp[PATH_MAX], final[PATH_MAX], base[128];
	struct timespec ts;
	int fd, n;

	if (mkdir_p(dir, err) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* sorts in arrival order: seconds and nanoseconds, zero padded */
	snprintf(base, sizeof(base), "%011lld.%09ld-%d-%s.json", (long long)ts.tv_sec,
		 ts.tv_nsec, (int)getpid(), kind);
	n = snprintf(tmp, sizeof(tmp), "%s/.tmp-%s", dir, base);
	if (n < 0 || (size_t)n >= sizeof(tmp) ||
	    snprintf(final, sizeof(final), "%s/%s", dir, base) >= (int)sizeof(final)) {
		burst_err_set(err, "spool path too long in %s", dir);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		burst_err_set(err, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0 ||
	    fsync(fd) < 0) {
		burst_err_set(err, "cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, final) < 0) {
		burst_err_set(err, "cannot put %s in place: %s", final, strerror(errno));
		unlink(tmp);
		return -1;
	}
	(void)sync_dir(dir);
	if (name)
		snprintf(name, namelen, "%s", base);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **spool_list(const char *dir, burst_err_t *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct strv l = { NULL, 0, 0 };
	char **v;
	size_t n;

	if (!d) {
		if (errno == ENOENT)
			return strv_take(&l);
		burst_err_set(err, "cannot read spool directory %s: %s", dir, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		strv_add(&l, xstrdup(de->d_name));
	}
	closedir(d);
	n = l.n;
	v = strv_take(&l);
	qsort(v, n, sizeof(char *), cmp_name);
	return v;
}

void spool_list_free(char **names)
{
	strv_free(names);
}

char *spool_read(const char *dir, const char *name, uid_t owner, size_t max, size_t *len,
		 burst_err_t *err)
{
	char path[PATH_MAX];
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		burst_err_set(err, "spool request path too long: %s/%s", dir, name);
		return NULL;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		burst_err_set(err, "%s: cannot open: %s%s", path, strerror(errno),
			      errno == ELOOP ? " (a symbolic link: requests are regular files)" : "");
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		burst_err_set(err, "%s: cannot stat: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		burst_err_set(err, "%s: not a regular file (mode %06o): requests are regular files", path,
			      (unsigned)st.st_mode);
		goto fail;
	}
	if (st.st_uid != 0 && st.st_uid != owner) {
		burst_err_set(err, "%s: owned by uid %u, not root or SlurmUser (uid %u)", path,
			      (unsigned)st.st_uid, (unsigned)owner);
		goto fail;
	}
	if ((unsigned long long)st.st_size > max) {
		burst_err_set(err, "%s: %lld bytes, more than a request may have (%zu)", path,
			      (long long)st.st_size, max);
		goto fail;
	}
	/*
	 * Read to the end, but never past max (the file may grow meanwhile).
	 * The buffer is the file's size now and one byte (to see its end), not
	 * max: grown, up to max + 1 bytes, only if the file grows.
	 */
	{
		size_t cap = (size_t)st.st_size + 1;
		buf = xmalloc(cap + 1);
		for (;;) {
			if (got == cap) {
				if (cap > max)
					break;
				cap = cap > (max + 1) / 2 ? max + 1 : 2 * cap;
				buf = xrealloc(buf, cap + 1);
			}
			n = read(fd, buf + got, cap - got);
			if (n == 0)
				break;
			if (n < 0) {
				if (errno == EINTR)
					continue;
				burst_err_set(err, "%s: cannot read: %s", path, strerror(errno));
				goto fail;
			}
			got += (size_t)n;
		}
	}
	if (got > max) {
		burst_err_set(err, "%s: more than a request may have (%zu bytes)", path, max);
		goto fail;
	}
	close(fd);
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

#define SPOOL_POKE_TIMEOUT_MS 200

/* Tell a running agent to look at its spool now; harmless if it is down. */
void spool_poke(const char *sock_path)
{
	struct sockaddr_un sa;
	struct pollfd pfd;
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, sock_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, SPOOL_POKE_TIMEOUT_MS) == 1 && (pfd.revents & POLLOUT)) {
		ssize_t w = write(fd, "{\"op\":\"poke\"}\n", 14);
		(void)w;
	}
	close(fd);
}
