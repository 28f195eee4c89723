/*
 * accept.c - burst-node accept: run the node-local part of the acceptance
 * suite (acceptance.conf tests of kind hardware and container) on this node.
 *
 *   burst-node accept [--conf FILE] [--node NAME] [--instance-type T]
 *                     [--accelerator-model M] [--kind hardware,container]
 *                     [--tap FILE] [--junit FILE] [--json FILE]
 *
 * Each test runs as "/bin/sh -c LINE" in its own process group, with stdin
 * from /dev/null and stdout+stderr captured together (capped); a test that
 * outlives its Timeout= has its process group killed. Multi-node (mpi) tests
 * are listed as not run: burstctl accept runs them across nodes.
 * Exit 0 when every test run passed, 1 when any failed, 2 on usage or
 * configuration errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acceptance.h"
#include "burst_err.h"
#include "strutil.h"

#include "accept.h"

#define OUTPUT_CAP (64 * 1024)    /* bytes of a test's output kept */
#define KILL_GRACE_MS 1000        /* SIGTERM, then SIGKILL after this */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keep up to OUTPUT_CAP bytes; count what is dropped. */
static void keep(struct strbuf *out, size_t *dropped, const char *buf, size_t n)
{
	size_t room = out->len < OUTPUT_CAP ? OUTPUT_CAP - out->len : 0;
	size_t take = n < room ? n : room;

	if (take)
		sb_addf(out, "%.*s", (int)take, buf);
	*dropped += n - take;
}

/*
 * Run line with /bin/sh in a new process group; fills res (output, duration,
 * and failure on timeout, abnormal exit or nonzero status).
 */
static void run_one(const char *line, int timeout, struct acceptance_result *res)
{
	struct strbuf out;
	size_t dropped = 0;
	int pfd[2] = { -1, -1 }, status = 0;
	double start = now_s(), deadline = start + timeout, killed_at = 0;
	bool timed_out = false, reaped = false, eof = false;
	int nap_us = 1000;      /* after EOF: wait for the exit, 1 ms doubling to 100 ms */
	pid_t pid;

	sb_init(&out);
	sb_add(&out, "");
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "cannot make a pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "cannot fork: %s", strerror(errno));
		goto out;
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
		/* ch-run refuses to start as root without USER */
		if (!getenv("USER"))
			setenv("USER", getuid() == 0 ? "root" : "nobody", 1);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		fprintf(stderr, "burst-node accept: cannot run /bin/sh: %s\n", strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);      /* both sides, so the kill below never misses */
	close(pfd[1]);
	pfd[1] = -1;
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);

	while (!reaped || !eof) {
		struct pollfd pf = { pfd[0], POLLIN, 0 };
		double t = now_s();
		int wait_ms = 100;

		if (!timed_out && !reaped && t >= deadline) {
			timed_out = true;
			killed_at = t;
			kill(pid, SIGTERM);
		}
		if (timed_out && !reaped && killed_at && t >= killed_at + KILL_GRACE_MS / 1000.0) {
			kill(-pid, SIGKILL);
			killed_at = 0;
		}
		if (!eof && poll(&pf, 1, wait_ms) > 0) {
			char buf[8192];
			ssize_t n = read(pfd[0], buf, sizeof(buf));
			if (n > 0)
				keep(&out, &dropped, buf, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				eof = true;
		} else if (eof) {
			usleep((useconds_t)nap_us);
			if (nap_us < wait_ms * 1000)
				nap_us *= 2;
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				reaped = true;
				/* whatever the test left behind goes with it (and lets the pipe close) */
				kill(-pid, SIGKILL);
			}
		}
		if (reaped && !eof) {
			/* drain what is buffered; do not wait for stray holders of the pipe */
			char buf[8192];
			ssize_t n;
			while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
				keep(&out, &dropped, buf, (size_t)n);
			if (n == 0 || now_s() > deadline + 2)
				eof = true;
		}
	}
	res->duration = now_s() - start;
	if (dropped)
		sb_addf(&out, "\n[... %zu more bytes of output not kept]\n", dropped);
	if (timed_out)
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "timed out after %d s", timeout);
	else if (WIFSIGNALED(status))
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "killed by signal %d (%s)",
				       WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "the command exited with status %d%s",
				       WEXITSTATUS(status),
				       WEXITSTATUS(status) == 127 ? " (command not found?)" : "");
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	res->output = sb_take(&out);
}

static int write_file(const char *path, const char *what, const struct acceptance_result *r,
		      size_t n, const char *suite)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "burst-node accept: cannot write the %s file %s: %s\n", what, path,
			strerror(errno));
		return -1;
	}
	if (!strcmp(what, "JUnit"))
		rc = acceptance_write_junit(f, suite, r, n);
	else if (!strcmp(what, "JSON"))
		rc = acceptance_write_json(f, r, n);
	else
		rc = acceptance_write_tap(f, r, n);
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		fprintf(stderr, "burst-node accept: writing the %s file %s failed: %s\n", what, path,
			strerror(errno));
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: burst-node accept [--conf FILE] [--node NAME] [--instance-type T]\n"
		"                         [--accelerator-model M] [--kind hardware,container,mpi]\n"
		"                         [--tap FILE] [--junit FILE] [--json FILE]\n"
		"Runs the node-local acceptance tests of acceptance.conf(5); TAP on stdout unless\n"
		"--tap is given. Exit 0: all passed; 1: a test failed; 2: usage or configuration error.\n");
}

int accept_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "conf", required_argument, NULL, 'c' },
		{ "node", required_argument, NULL, 'n' },
		{ "instance-type", required_argument, NULL, 'i' },
		{ "accelerator-model", required_argument, NULL, 'a' },
		{ "kind", required_argument, NULL, 'k' },
		{ "tap", required_argument, NULL, 't' },
		{ "junit", required_argument, NULL, 'j' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *conf_path = NULL, *tap = NULL, *junit = NULL,
		   *json = NULL;
	struct acceptance_node node = { NULL, NULL, NULL };
	bool kinds[3] = { true, true, true };
	struct acceptance_conf *conf = NULL;
	struct acceptance_result *res = NULL;
	char host[256];
	burst_err_t err;
	size_t i, n = 0;
	int ch, rc = 2;
	bool failed = false;

	optind = 1;
	argv[0] = (char *)"burst-node accept";   /* for getopt's messages */
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': conf_path = optarg; break;
		case 'n': node.name = optarg; break;
		case 'i': node.instance_type = optarg; break;
		case 'a': node.accelerator_model = optarg; break;
		case 't': tap = optarg; break;
		case 'j': junit = optarg; break;
		case 'J': json = optarg; break;
		case 'k': {
			char *copy = xstrdup(optarg), *save = NULL, *tok;
			kinds[0] = kinds[1] = kinds[2] = false;
			for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int k = acceptance_kind_parse(tok);
				if (k < 0) {
					fprintf(stderr, "burst-node accept: --kind %s: '%s' is not hardware, "
						"container or mpi\n", optarg, tok);
					free(copy);
					return 2;
				}
				kinds[k] = true;
			}
			free(copy);
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "burst-node accept: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!node.name) {
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		node.name = host;
	}
	conf_path = acceptance_default_path(conf_path);
	conf = acceptance_load(conf_path, &err);
	if (!conf) {
		fprintf(stderr, "burst-node accept: %s\n", err.msg);
		return 2;
	}
	res = xcalloc(conf->ntests ? conf->ntests : 1, sizeof(*res));
	for (i = 0; i < conf->ntests; i++) {
		const struct acceptance_test *t = &conf->tests[i];
		struct acceptance_result *r;
		char *line;

		if (!kinds[t->kind])
			continue;
		r = &res[n++];
		acceptance_result_init(r, t, &node);
		if (t->kind == ACCEPTANCE_MPI) {
			acceptance_result_fail(r, ACCEPTANCE_NOT_RUN,
					       "multi-node test: burstctl accept runs it across nodes");
			continue;
		}
		line = acceptance_command_line(conf, t);
		run_one(line, t->timeout, r);
		free(line);
		/* sanity and performance speak only for a command that ran to its end */
		if (r->status == ACCEPTANCE_PASS)
			acceptance_check(t, r->output, &node, r);
		failed |= r->status == ACCEPTANCE_FAIL;
	}
	rc = failed ? 1 : 0;
	if (tap) {
		if (write_file(tap, "TAP", res, n, NULL) < 0)
			rc = 2;
	} else if (acceptance_write_tap(stdout, res, n) < 0) {
		rc = 2;
	}
	if (junit && write_file(junit, "JUnit", res, n, "acceptance") < 0)
		rc = 2;
	if (json && write_file(json, "JSON", res, n, NULL) < 0)
		rc = 2;
	for (i = 0; i < n; i++)
		acceptance_result_free(&res[i]);
	free(res);
	acceptance_free(conf);
	return rc;
}
