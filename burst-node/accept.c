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
#include "proc.h"
#include "strutil.h"

#include "accept.h"

#define OUTPUT_CAP (64 * 1024)    /* bytes of a test's output kept */
#define KILL_GRACE_MS 1000        /* SIGTERM, then SIGKILL after this */

/*
 * Run line with /bin/sh in a process group of its own; fills res (output,
 * duration, and failure on timeout, abnormal exit or nonzero status).
 */
static void run_one(const char *line, int timeout, struct acceptance_result *res)
{
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)line, NULL };
	struct proc_capture pc;
	burst_err_t err;
	char why[256];

	/* ch-run refuses to start as root without USER */
	if (!getenv("USER"))
		setenv("USER", getuid() == 0 ? "root" : "nobody", 1);
	if (proc_capture(argv, timeout, KILL_GRACE_MS / 1000.0, OUTPUT_CAP, &pc, &err) < 0) {
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "%s", err.msg);
		res->output = xstrdup("");
		return;
	}
	res->duration = pc.duration;
	res->output = pc.output;
	if (proc_capture_failure(&pc, "the command", timeout, why, sizeof(why)))
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "%s", why);
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
	if (acceptance_write_reports("burst-node accept", tap, junit, json, "acceptance", res, n) < 0)
		rc = 2;
	for (i = 0; i < n; i++)
		acceptance_result_free(&res[i]);
	free(res);
	acceptance_free(conf);
	return rc;
}
