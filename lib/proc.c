/*
 * proc.c - process helpers shared by the programs slurmctld runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "strutil.h"

void proc_reopen_stdio(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
			if (n >= 0 && n != fd) {
				dup2(n, fd);
				close(n);
			}
		}
}

void proc_reset_signals(void)
{
	sigset_t all;
	int s;

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
}

char *proc_environ_get(int pid, const char *name, char *buf, size_t len)
{
	char path[64], env[65536];
	size_t nl = strlen(name), off = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	env[n] = '\0';
	while (off < (size_t)n) {
		const char *e = env + off;
		size_t el = strlen(e);
		if (el > nl && !strncmp(e, name, nl) && e[nl] == '=') {
			if (el - nl - 1 >= len)
				return NULL;
			memcpy(buf, e + nl + 1, el - nl);
			return buf;
		}
		off += el + 1;
	}
	return NULL;
}

/* Append what fd has to buf (len bytes, *used so far); 0 at EOF. */
static ssize_t drain(int fd, char *buf, size_t len, size_t *used)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n > 0 && *used + 1 < len) {
		size_t k = (size_t)n < len - 1 - *used ? (size_t)n : len - 1 - *used;
		memcpy(buf + *used, tmp, k);
		*used += k;
	}
	return n;
}

int proc_run(char *const argv[], char *out, size_t outlen, char *errbuf, size_t errlen)
{
	int op[2], ep[2], status;
	size_t no = 0, ne = 0;
	bool oo = true, eo = true;
	pid_t pid;

	out[0] = errbuf[0] = '\0';
	if (pipe2(op, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(op[0]);
		close(op[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(op[0]); close(op[1]); close(ep[0]); close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(op[1], 1);
		dup2(ep[1], 2);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	/* both pipes at once: a child that fills one while we wait on the other
	 * would never finish */
	while (oo || eo) {
		struct pollfd p[2] = { { oo ? op[0] : -1, POLLIN, 0 }, { eo ? ep[0] : -1, POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (oo && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) && drain(op[0], out, outlen, &no) <= 0)
			oo = false;
		if (eo && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && drain(ep[0], errbuf, errlen, &ne) <= 0)
			eo = false;
	}
	out[no] = '\0';
	errbuf[ne] = '\0';
	close(op[0]);
	close(ep[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	str_trim(out);
	str_trim(errbuf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
