/*
 * proc.c - process helpers shared by the programs slurmctld runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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
	return proc_run_env(argv, NULL, out, outlen, errbuf, errlen);
}

int proc_run_env(char *const argv[], char *const env[], char *out, size_t outlen, char *errbuf,
		 size_t errlen)
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
		for (size_t i = 0; env && env[i]; i++)
			putenv(env[i]);   /* the child's own copy of the environment */
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

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keep up to cap bytes; count what is dropped. */
static void keep(struct strbuf *out, size_t cap, size_t *dropped, const char *buf, size_t n)
{
	size_t room = out->len < cap ? cap - out->len : 0;
	size_t take = n < room ? n : room;

	if (take)
		sb_addf(out, "%.*s", (int)take, buf);
	*dropped += n - take;
}

int proc_capture(char *const argv[], double timeout_s, double grace_s, size_t cap,
		 struct proc_capture *r, burst_err_t *err)
{
	struct strbuf out;
	size_t dropped = 0;
	int pfd[2], nap_us = 1000;
	double start = mono_s(), deadline = start + timeout_s, killed_at = 0;
	bool reaped = false, eof = false;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		burst_err_set(err, "cannot run %s: cannot make a pipe: %s", argv[0], strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		burst_err_set(err, "cannot run %s: cannot fork: %s", argv[0], strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		sigset_t none;

		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);      /* both sides, so that the kills below never miss */
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	sb_init(&out);
	sb_add(&out, "");
	while (!reaped || !eof) {
		struct pollfd pf = { pfd[0], POLLIN, 0 };
		double t = mono_s();

		if (!r->timed_out && !reaped && t >= deadline) {
			r->timed_out = true;
			killed_at = t;
			kill(-pid, SIGTERM);
		}
		if (r->timed_out && !reaped && killed_at && t >= killed_at + grace_s) {
			kill(-pid, SIGKILL);
			killed_at = 0;
		}
		if (!eof && poll(&pf, 1, 100) > 0) {
			char buf[8192];
			ssize_t n = read(pfd[0], buf, sizeof(buf));
			if (n > 0)
				keep(&out, cap, &dropped, buf, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				eof = true;
		} else if (eof) {
			/* the output is closed: wait for the exit, 1 ms doubling to 100 ms */
			usleep((useconds_t)nap_us);
			if (nap_us < 100000)
				nap_us *= 2;
		}
		if (!reaped && waitpid(pid, &r->status, WNOHANG) == pid) {
			reaped = true;
			/* whatever it left behind goes with it (and lets the pipe close) */
			kill(-pid, SIGKILL);
		}
		if (reaped && !eof) {
			/* drain what is buffered; do not wait for stray holders of the pipe */
			char buf[8192];
			ssize_t n;
			while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
				keep(&out, cap, &dropped, buf, (size_t)n);
			if (n == 0 || mono_s() > deadline + grace_s + 2)
				eof = true;
		}
	}
	close(pfd[0]);
	r->duration = mono_s() - start;
	if (dropped)
		sb_addf(&out, "\n[... %zu more bytes of output not kept]\n", dropped);
	r->output = sb_take(&out);
	return 0;
}

const char *proc_capture_failure(const struct proc_capture *r, const char *what, double timeout_s,
				 char *buf, size_t len)
{
	if (r->timed_out)
		snprintf(buf, len, "timed out after %g s", timeout_s);
	else if (WIFSIGNALED(r->status))
		snprintf(buf, len, "%s was killed by signal %d (%s)", what, WTERMSIG(r->status),
			 strsignal(WTERMSIG(r->status)));
	else if (WIFEXITED(r->status) && WEXITSTATUS(r->status) != 0)
		snprintf(buf, len, "%s exited with status %d%s", what, WEXITSTATUS(r->status),
			 WEXITSTATUS(r->status) == 127 ? " (command not found?)" : "");
	else
		return NULL;
	return buf;
}
