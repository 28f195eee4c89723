/*
 * proc.c - process helpers shared by the programs slurmctld runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

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
