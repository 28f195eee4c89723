/*
 * port_holder.c - who holds a TCP port (port_holder.h).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "port_holder.h"
#include "strutil.h"

#define TCP_LISTEN 0x0A

/* 8 hex digits of the kernel's table: the 32-bit word as it is in memory */
static bool word(const char *s, uint32_t *w)
{
	char hex[9], *end;
	unsigned long v;

	memcpy(hex, s, 8);
	hex[8] = '\0';
	v = strtoul(hex, &end, 16);
	if (*end)
		return false;
	*w = (uint32_t)v;
	return true;
}

/* one line of the table: 1 a socket listening on port at addr or a wildcard */
static int listener(const char *line, bool v6, uint32_t addr, int port, unsigned long *inode, uid_t *uid)
{
	const char *p = strchr(line, ':');
	size_t alen = v6 ? 32 : 8;
	uint32_t a[4] = { 0, 0, 0, 0 };
	unsigned lport, st;
	unsigned long ino, u;
	char rest[64];

	if (!p)
		return 0;
	p++;
	while (*p == ' ')
		p++;
	if (strlen(p) < alen + 5 || p[alen] != ':')
		return 0;
	for (size_t k = 0; k < alen / 8; k++)
		if (!word(p + 8 * k, &a[k]))
			return 0;
	/* port, remote address, state, queues, timer, retransmits, uid, timeout, inode */
	if (sscanf(p + alen + 1, "%x %63s %x %*s %*s %*s %lu %*s %lu", &lport, rest, &st, &u, &ino) != 5)
		return 0;
	if (st != TCP_LISTEN || (int)lport != port)
		return 0;
	if (v6) {
		/* the wildcard (v4 too, unless the socket is v6-only: it may
		 * not be, so it is named), or v4-mapped ::ffff:addr */
		bool any = !a[0] && !a[1] && !a[2] && !a[3];
		uint32_t mapped;
		unsigned char m[4] = { 0, 0, 0xff, 0xff };
		memcpy(&mapped, m, 4);
		if (!any && !(!a[0] && !a[1] && a[2] == mapped && (addr == INADDR_ANY || a[3] == addr)))
			return 0;
	} else if (addr != INADDR_ANY && a[0] != INADDR_ANY && a[0] != addr)
		return 0;
	*inode = ino;
	*uid = (uid_t)u;
	return 1;
}

int port_listener_find(const char *table, bool v6, uint32_t addr, int port, unsigned long *inode, uid_t *uid)
{
	const char *line = table;

	/* the first line names the columns */
	line = strchr(line, '\n');
	while (line && *++line) {
		char buf[512];
		size_t n = strcspn(line, "\n");
		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), line);
		if (listener(buf, v6, addr, port, inode, uid))
			return 1;
		line += n;
		if (!*line)
			break;
	}
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 16384;
			s = xrealloc(s, cap + 1);
		}
		n = fread(s + len, 1, cap - len, f);
		len += n;
	} while (n > 0 && len < (64u << 20));
	fclose(f);
	s[len] = '\0';
	return s;
}

/* a process that has socket inode open: its pid, or 0 */
static pid_t socket_owner(unsigned long inode)
{
	char want[64];
	DIR *proc = opendir("/proc");
	struct dirent *d;
	pid_t found = 0;

	if (!proc)
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	while (!found && (d = readdir(proc))) {
		char path[300];
		DIR *fds;
		struct dirent *f;
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", d->d_name);
		if (!(fds = opendir(path)))
			continue;
		while ((f = readdir(fds))) {
			char link[600], target[80];
			ssize_t n;
			if (f->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "%s/%s", path, f->d_name);
			n = readlink(link, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (!strcmp(target, want)) {
				found = (pid_t)atol(d->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

/* the process's real uid and command line; false when it is gone */
static bool process_of(pid_t pid, struct port_holder *h)
{
	char path[64], *s, *cmd;
	const char *u;
	int fd;
	ssize_t n;
	char buf[sizeof(h->cmd)];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(s = slurp(path)))
		return false;
	u = strstr(s, "\nUid:");
	h->uid = u ? (uid_t)strtoul(u + 5, NULL, 10) : (uid_t)-1;
	free(s);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		/* a kernel thread or a zombie: its name */
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0 && buf[n - 1] == '\n')
			n--;
	}
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	/* the command line is the process's own: written out, not raw */
	cmd = str_escape_ctl(buf);
	snprintf(h->cmd, sizeof(h->cmd), "%s", cmd);
	free(cmd);
	return true;
}

int port_holder_find(const char *addr, int port, struct port_holder *h)
{
	struct in_addr in;
	unsigned long inode = 0;
	uid_t uid = 0;
	int found = 0;

	if (inet_pton(AF_INET, addr, &in) != 1)
		return -1;
	for (int v6 = 0; v6 < 2 && !found; v6++) {
		char *t = slurp(v6 ? "/proc/net/tcp6" : "/proc/net/tcp");
		if (t)
			found = port_listener_find(t, v6, in.s_addr, port, &inode, &uid);
		free(t);
	}
	if (!found) {
		memset(h, 0, sizeof(*h));
		return 0;
	}
	if (inode == h->inode && h->pid > 0 && process_of(h->pid, h))
		return 1;
	memset(h, 0, sizeof(*h));
	h->inode = inode;
	h->sock_uid = uid;
	h->pid = socket_owner(inode);
	if (h->pid > 0 && !process_of(h->pid, h))
		h->pid = 0;
	return 1;
}

void port_holder_describe(const struct port_holder *h, char *buf, size_t len)
{
	if (h->pid > 0)
		snprintf(buf, len, "pid %d (uid %u, %s)", (int)h->pid, (unsigned)h->uid, h->cmd[0] ? h->cmd : "?");
	else
		snprintf(buf, len, "a socket of uid %u (inode %lu) that no process here has open: another network namespace's, or closing",
			 (unsigned)h->sock_uid, h->inode);
}
