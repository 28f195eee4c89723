/*
 * accept_cmd.c - burstctl accept: run the multi-node (Kind=mpi) tests of
 * acceptance.conf across burst nodes.
 *
 *   burstctl accept (--nodes HOSTLIST | --partition P -N N) [--conf FILE]
 *                   [--tap FILE] [--junit FILE] [--json FILE] [--timeout S]
 *                   [--mpi-acceptance PROGRAM]
 *
 * First one step "srun -N N -n N --ntasks-per-node=1 [-w HOSTLIST | -p P]"
 * asks every node for its name and $CLOUD_INSTANCE_TYPE (this is also what
 * wakes powered-down burst nodes). Then every mpi test runs as
 *   srun --mpi=pmix -N N -n N --ntasks-per-node=1 -w HOSTLIST [-p P] /bin/sh -c COMMAND
 * on those nodes, with "{mpi_acceptance}" in COMMAND replaced by the path of
 * the mpi_acceptance program (--mpi-acceptance, else $BURST_MPI_ACCEPTANCE,
 * else $(pkglibexecdir)/mpi_acceptance). Each result is named TEST@HOSTLIST
 * and has the nodes' instance type as its JUnit classname. Without any mpi
 * test in the configuration the built-in tests ranks, pingpong and
 * allreduce run.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acceptance.h"
#include "accept_cmd.h"
#include "proc.h"
#include "verb.h"
#include "hostlist.h"
#include "strutil.h"

#define EXIT_OK 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2

#define OUTPUT_CAP (64 * 1024)      /* bytes of a step's output kept */
#define KILL_GRACE_S 2.0            /* SIGTERM to srun, then SIGKILL */
#define PROBE_TIMEOUT 600           /* seconds for the nodes to come up (cloud boots) */
#define MAX_NODES 100000
#define PROG_TOKEN "{mpi_acceptance}"

const char accept_cmd_usage[] =
"  accept (--nodes HOSTLIST | --partition P -N N) [--conf FILE] [--tap FILE]\n"
"         [--junit FILE] [--json FILE] [--timeout S]\n"
"                           run the MPI acceptance tests (acceptance.conf Kind=mpi)\n"
"                           across nodes with srun --mpi=pmix: exit 0 passed, 1 failed\n";

/* The tests run when acceptance.conf has no mpi test (see acceptance.conf(5)). */
static const char default_tests[] =
"Test=ranks Kind=mpi Command=\"" PROG_TOKEN " ranks\" Sanity=\"^rank 0 of [0-9]+ on \"\n"
"Test=pingpong Kind=mpi Command=\"" PROG_TOKEN " pingpong\" "
	"Sanity=\"^latency_us=[0-9.]+ bandwidth_mbs=[0-9.]+\" "
	"Perf=\"latency_us=latency_us=([0-9.]+)\" Perf=\"bandwidth_mbs=bandwidth_mbs=([0-9.]+)\" "
	"Reference=default:latency_us:1000:-1:+9 Reference=default:bandwidth_mbs:100:-0.99:inf\n"
"Test=allreduce Kind=mpi Command=\"" PROG_TOKEN " allreduce\" Sanity=\"^allreduce ok\"\n";

struct accept_opts {
	const char *nodes, *partition, *conf, *tap, *junit, *json, *program;
	long count;              /* -N */
	int timeout;             /* --timeout; 0: the tests' own */
};

/* ---- host names ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The length of the digits that end s (0 if none). */
static size_t digits_at_end(const char *s)
{
	size_t n = strlen(s), k = 0;

	while (k < n && s[n - 1 - k] >= '0' && s[n - 1 - k] <= '9')
		k++;
	return k;
}

/* 0 for an unpadded number, else its width (zero-padded numbers group by width) */
static size_t pad_class(const char *num)
{
	return num[0] == '0' && num[1] ? strlen(num) : 0;
}

/* Host name order: prefix, then unpadded numbers before padded ones (by
 * width), then the number's value. */
static int cmp_host(const void *pa, const void *pb)
{
	const char *a = *(char *const *)pa, *b = *(char *const *)pb;
	size_t da = digits_at_end(a), db = digits_at_end(b);
	size_t la = strlen(a) - da, lb = strlen(b) - db, ca, cb;
	int c = strncmp(a, b, la < lb ? la : lb);
	unsigned long va, vb;

	if (c || la != lb)
		return c ? c : (la < lb ? -1 : 1);
	if (!da || !db)
		return da == db ? 0 : (da ? 1 : -1);
	ca = pad_class(a + la);
	cb = pad_class(b + lb);
	if (ca != cb)
		return ca < cb ? -1 : 1;
	va = strtoul(a + la, NULL, 10);
	vb = strtoul(b + lb, NULL, 10);
	return va == vb ? 0 : (va < vb ? -1 : 1);
}

/* Can numbers a and b (digit strings) share one bracket? Unpadded ones
 * always; zero-padded ones only with their own width. */
static bool same_kind(const char *a, const char *b)
{
	return pad_class(a) == pad_class(b);
}

/*
 * A Slurm host list for names: runs of PREFIX + number become
 * PREFIX[a-b,c] (zero-padded numbers keep their width). Returns allocated
 * memory (caller frees).
 */
static char *hostlist_compress(char **names, size_t n)
{
	struct strbuf sb;
	char **v = xcalloc(n ? n : 1, sizeof(*v));
	size_t i = 0, j;

	if (n)
		memcpy(v, names, n * sizeof(*v));
	sb_init(&sb);
	sb_add(&sb, "");
	qsort(v, n, sizeof(*v), cmp_host);
	while (i < n) {
		size_t d = digits_at_end(v[i]), plen = strlen(v[i]) - d, k = 0;
		if (sb.len)
			sb_add(&sb, ",");
		for (j = i + 1; d && j < n; j++)
			if (!digits_at_end(v[j]) || strlen(v[j]) - digits_at_end(v[j]) != plen ||
			    strncmp(v[j], v[i], plen) || !same_kind(v[j] + plen, v[i] + plen))
				break;
		if (!d || j == i + 1) {
			sb_add(&sb, v[i]);
			i++;
			continue;
		}
		/* v[i..j) share the prefix and kind of number, in numeric order */
		sb_addf(&sb, "%.*s[", (int)plen, v[i]);
		while (i < j) {
			unsigned long a = strtoul(v[i] + plen, NULL, 10), b = a;
			size_t m = i + 1;
			while (m < j && strtoul(v[m] + plen, NULL, 10) == b + 1) {
				b++;
				m++;
			}
			sb_addf(&sb, "%s%s", k++ ? "," : "", v[i] + plen);
			if (b != a)
				sb_addf(&sb, "-%s", v[m - 1] + plen);
			i = m;
		}
		sb_add(&sb, "]");
	}
	free(v);
	return sb_take(&sb);
}

/* ---- running a step ---- */

/*
 * Run argv (argv[0] looked up in PATH) in its own process group, stdin from
 * /dev/null, stdout and stderr captured together. Sets *output (allocated)
 * and *duration; returns NULL when it exited 0, else why not (into why[]).
 */
static const char *run_argv(char *const *argv, int timeout, char **output, double *duration,
			    char *why, size_t whylen)
{
	struct proc_capture pc;
	burst_err_t err;

	/* srun cancels its step on SIGTERM */
	if (proc_capture(argv, timeout, KILL_GRACE_S, OUTPUT_CAP, &pc, &err) < 0) {
		snprintf(why, whylen, "%.1000s", err.msg);
		*output = xstrdup("");
		*duration = 0;
		return why;
	}
	*output = pc.output;
	*duration = pc.duration;
	return proc_capture_failure(&pc, argv[0], timeout, why, whylen);
}

/* srun's argument vector: srun [--mpi=pmix] -N n -n n --ntasks-per-node=1 [-w H] [-p P] /bin/sh -c CMD */
static char **srun_argv(bool mpi, size_t n, const char *hosts, const char *partition,
			const char *command, char *count, size_t countlen)
{
	char **av = xcalloc(16, sizeof(*av));
	int k = 0;

	snprintf(count, countlen, "%zu", n);
	av[k++] = (char *)"srun";
	if (mpi)
		av[k++] = (char *)"--mpi=pmix";
	av[k++] = (char *)"-N";
	av[k++] = count;
	av[k++] = (char *)"-n";
	av[k++] = count;
	av[k++] = (char *)"--ntasks-per-node=1";
	if (hosts) {
		av[k++] = (char *)"-w";
		av[k++] = (char *)hosts;
	}
	if (partition) {
		av[k++] = (char *)"-p";
		av[k++] = (char *)partition;
	}
	av[k++] = (char *)"/bin/sh";
	av[k++] = (char *)"-c";
	av[k++] = (char *)command;
	av[k] = NULL;
	return av;
}

/* s with every {mpi_acceptance} replaced by program, shell-quoted. Allocated. */
static char *expand_command(const char *s, const char *program)
{
	struct strbuf sb;
	const char *p;

	sb_init(&sb);
	sb_add(&sb, "");
	while ((p = strstr(s, PROG_TOKEN))) {
		sb_addf(&sb, "%.*s'", (int)(p - s), s);
		for (const char *q = program; *q; q++) {
			if (*q == '\'')
				sb_add(&sb, "'\\''");
			else
				sb_addf(&sb, "%c", *q);
		}
		sb_add(&sb, "'");
		s = p + strlen(PROG_TOKEN);
	}
	sb_add(&sb, s);
	return sb_take(&sb);
}

/* Does the test run "{mpi_acceptance} ranks"? Then its output is also checked
 * for one rank per node on exactly the nodes asked for. */
static bool is_ranks_test(const struct acceptance_test *t)
{
	const char *p = strstr(t->command, PROG_TOKEN);

	if (!p)
		return false;
	p += strlen(PROG_TOKEN);
	while (*p == ' ' || *p == '\t')
		p++;
	/* the word ranks, ended by anything that cannot continue a word */
	return !strncmp(p, "ranks", 5) && !isalnum((unsigned char)p[5]) && p[5] != '_' &&
	       p[5] != '-' && p[5] != '.';
}

/* "rank R of N on HOST" lines: ranks 0..n-1 each once, of n, on the n hosts. */
static void check_ranks(const char *output, char **hosts, size_t n, const char *expr,
			struct acceptance_result *r)
{
	char **seen = xcalloc(n, sizeof(*seen));
	const char *line = output;
	size_t i, j, got = 0;

	while (line && *line) {
		char host[256];
		int rank, of;
		if (sscanf(line, "rank %d of %d on %255s", &rank, &of, host) == 3) {
			if (of != (int)n) {
				acceptance_result_fail(r, ACCEPTANCE_FAIL, "ranks: rank %d says there are %d "
						       "ranks; expected %zu, one per node of %s", rank,
						       of, n, expr);
			} else if (rank < 0 || rank >= (int)n || seen[rank]) {
				acceptance_result_fail(r, ACCEPTANCE_FAIL, "ranks: rank %d is reported "
						       "twice or out of range 0..%zu", rank, n - 1);
			} else {
				seen[rank] = xstrdup(host);
				got++;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (got != n)
		acceptance_result_fail(r, ACCEPTANCE_FAIL, "ranks: %zu of %zu ranks reported where "
				       "they run (expected one per node of %s)", got, n, expr);
	for (i = 0; i < n && r->status == ACCEPTANCE_PASS; i++) {
		bool known = false;
		for (j = 0; j < n; j++)
			known |= !strcmp(seen[i], hosts[j]);
		if (!known)
			acceptance_result_fail(r, ACCEPTANCE_FAIL, "ranks: rank %zu runs on %s, which "
					       "is not one of %s", i, seen[i], expr);
		for (j = 0; j < i; j++)
			if (!strcmp(seen[i], seen[j]))
				acceptance_result_fail(r, ACCEPTANCE_FAIL, "ranks: ranks %zu and %zu both "
						       "run on %s; expected one rank per node of %s",
						       j, i, seen[i], expr);
	}
	for (i = 0; i < n; i++)
		free(seen[i]);
	free(seen);
}

#define PROBE_TAG "burst-accept-node"

/*
 * Ask the nodes who they are (one task per node): fills nodes (sorted) and
 * *itype (allocated: the instance type they share, "default" when unset,
 * NULL when they differ). NULL on success, else why not (in why), with
 * *output the step's output.
 */
static const char *probe(const struct accept_opts *o, size_t count, const char *hosts,
			 struct hostlist *nodes, char **itype, char **output, double *duration,
			 char *why, size_t whylen)
{
	char cnt[32], **av;
	const char *bad;
	const char *line;
	bool mixed = false;

	av = srun_argv(false, count, hosts, o->partition,
		       "echo \"" PROBE_TAG " ${SLURMD_NODENAME:-$(hostname)} "
		       "${CLOUD_INSTANCE_TYPE:-default}\"", cnt, sizeof(cnt));
	bad = run_argv(av, o->timeout ? o->timeout : PROBE_TIMEOUT, output, duration, why, whylen);
	free(av);
	if (bad)
		return bad;
	for (line = *output; line && *line; ) {
		char name[256], type[256];
		if (sscanf(line, PROBE_TAG " %255s %255s", name, type) == 2) {
			if (hostlist_find(nodes, name) < 0) {
				burst_err_t err;
				if (hostlist_expand(name, nodes, MAX_NODES, &err) < 0) {
					snprintf(why, whylen, "node name '%.200s': %.500s", name, err.msg);
					return why;
				}
			}
			if (!*itype)
				*itype = xstrdup(type);
			else if (strcmp(*itype, type))
				mixed = true;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (mixed) {
		free(*itype);
		*itype = NULL;
	}
	if (nodes->n != count) {
		snprintf(why, whylen, "%zu of the %zu nodes answered", nodes->n, count);
		return why;
	}
	qsort(nodes->names, nodes->n, sizeof(*nodes->names), cmp_str);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: burstctl accept (--nodes HOSTLIST | --partition P -N N) [--conf FILE]\n"
"                       [--tap FILE] [--junit FILE] [--json FILE] [--timeout S]\n"
"                       [--mpi-acceptance PROGRAM]\n"
"Runs the Kind=mpi tests of acceptance.conf(5) (default: ranks, pingpong,\n"
"allreduce) across the nodes with srun --mpi=pmix, one task per node. TAP on\n"
"stdout unless --tap is given. Exit 0: all passed; 1: a test failed; 2: usage or\n"
"configuration error.\n");
}

int accept_cmd_main(const char *verb, int argc, char **argv)
{
	enum { O_NODES = 256, O_PART, O_CONF, O_TAP, O_JUNIT, O_JSON, O_TIMEOUT, O_PROG };
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, O_NODES },
		{ "partition", required_argument, NULL, O_PART },
		{ "conf", required_argument, NULL, O_CONF },
		{ "tap", required_argument, NULL, O_TAP },
		{ "junit", required_argument, NULL, O_JUNIT },
		{ "json", required_argument, NULL, O_JSON },   /* the report; not burstctl's --json */
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "mpi-acceptance", required_argument, NULL, O_PROG },
		{ NULL, 0, NULL, 0 },
	};
	struct accept_opts o;
	struct acceptance_conf *conf = NULL, *builtin = NULL;
	struct acceptance_result *res = NULL;
	struct hostlist want = { NULL, 0, 0 }, nodes = { NULL, 0, 0 };
	struct acceptance_node node = { NULL, NULL, NULL };
	const struct acceptance_test **tests = NULL;
	char **av = argv, *expr = NULL, *itype = NULL, *probe_out = NULL, why[1024];
	const char *bad, *program;
	size_t i, ntests = 0, nres = 0, count = 0;
	int ac = argc, ch, rc = EXIT_USAGE;
	double probe_time = 0;
	burst_err_t err;
	bool failed = false;
	struct ctl_getopt g;
	struct ctl_globals gl;

	(void)verb;
	memset(&o, 0, sizeof(o));
	memset(&gl, 0, sizeof(gl));
	/* burstctl's global options: accepted, and of no use here */
	ctl_getopt_init(&g, longopts, "+N:w:", CTL_G(CONFIG) | CTL_G(CATALOG_DIR) | CTL_G(PROVIDER) |
			CTL_G(LIBEXECDIR) | CTL_G(HELP));
	av[0] = (char *)"burstctl accept";
	optind = 1;
	while ((ch = getopt_long(ac, av, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case O_NODES: case 'w': o.nodes = optarg; break;
		case O_PART: o.partition = optarg; break;
		case O_CONF: o.conf = optarg; break;
		case O_TAP: o.tap = optarg; break;
		case O_JUNIT: o.junit = optarg; break;
		case O_JSON: o.json = optarg; break;
		case O_PROG: o.program = optarg; break;
		case 'N': case O_TIMEOUT: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > (ch == 'N' ? MAX_NODES : 86400)) {
				fprintf(stderr, "burstctl accept: %s takes a positive number%s, not '%s'\n",
					ch == 'N' ? "-N" : "--timeout",
					ch == 'N' ? " of nodes" : " of seconds (up to 86400)", optarg);
				goto out;
			}
			if (ch == 'N')
				o.count = v;
			else
				o.timeout = (int)v;
			break;
		}
		case 'h': usage(stdout); rc = EXIT_OK; goto out;
		default:
			if (ctl_global(ch, optarg, &gl))
				break;
			usage(stderr);
			goto out;
		}
	}
	if (optind < ac) {
		fprintf(stderr, "burstctl accept: unexpected argument '%s'\n", av[optind]);
		usage(stderr);
		goto out;
	}
	if (!o.nodes == !o.partition) {
		fprintf(stderr, "burstctl accept: give the nodes to test: --nodes HOSTLIST, or "
			"--partition P with -N N\n");
		usage(stderr);
		goto out;
	}
	if (o.partition && !o.count) {
		fprintf(stderr, "burstctl accept: --partition %s needs -N N, the number of nodes to "
			"test\n", o.partition);
		goto out;
	}
	if (o.nodes) {
		if (hostlist_expand(o.nodes, &want, MAX_NODES, &err) < 0) {
			fprintf(stderr, "burstctl accept: --nodes %s: %s\n", o.nodes, err.msg);
			goto out;
		}
		if (o.count && (size_t)o.count != want.n) {
			fprintf(stderr, "burstctl accept: -N %ld but --nodes %s names %zu nodes\n",
				o.count, o.nodes, want.n);
			goto out;
		}
		count = want.n;
	} else {
		count = (size_t)o.count;
	}
	if (count < 1) {
		fprintf(stderr, "burstctl accept: --nodes %s names no node\n", o.nodes);
		goto out;
	}

	/* the tests: Kind=mpi of acceptance.conf (explicit, or the default one if
	 * present), else the built-in ones */
	{
		const char *path = acceptance_default_path(o.conf);
		if (o.conf || access(path, F_OK) == 0) {
			conf = acceptance_load(path, &err);
			if (!conf) {
				fprintf(stderr, "burstctl accept: %s\n", err.msg);
				goto out;
			}
		}
	}
	tests = xcalloc(conf && conf->ntests ? conf->ntests : 3, sizeof(*tests));
	for (i = 0; conf && i < conf->ntests; i++)
		if (conf->tests[i].kind == ACCEPTANCE_MPI)
			tests[ntests++] = &conf->tests[i];
	if (!ntests) {
		builtin = acceptance_parse(default_tests, "(built-in mpi tests)", &err);
		if (!builtin) {
			fprintf(stderr, "burstctl accept: internal error: %s\n", err.msg);
			goto out;
		}
		for (i = 0; i < builtin->ntests && i < 3; i++)
			tests[ntests++] = &builtin->tests[i];
	}
	program = o.program ? o.program : getenv("BURST_MPI_ACCEPTANCE");
	if (!program || !*program)
		program = BURST_LIBEXECDIR "/mpi_acceptance";

	/* who the nodes are (and waking them up) */
	expr = o.nodes ? hostlist_compress(want.names, want.n) : NULL;
	bad = probe(&o, count, expr, &nodes, &itype, &probe_out, &probe_time, why, sizeof(why));
	if (!bad && o.nodes) {
		for (i = 0; i < want.n; i++)
			if (hostlist_find(&nodes, want.names[i]) < 0) {
				snprintf(why, sizeof(why), "node %s did not answer", want.names[i]);
				bad = why;
				break;
			}
	}
	if (!o.nodes && nodes.n)
		expr = hostlist_compress(nodes.names, nodes.n);
	node.name = expr ? expr : o.partition;
	node.instance_type = itype;

	res = xcalloc(ntests, sizeof(*res));
	for (i = 0; i < ntests; i++) {
		const struct acceptance_test *t = tests[i];
		struct acceptance_result *r = &res[nres++];
		char cnt[32], *cmd, *sub = NULL, **sav, *out = NULL;
		const char *hosts = expr, *tbad;
		size_t n = nodes.n;

		acceptance_result_init(r, t, &node);
		if (!itype && !bad) {
			free(r->classname);
			r->classname = xstrdup("mixed");
		}
		if (bad) {
			acceptance_result_fail(r, ACCEPTANCE_FAIL, "the nodes %s did not all start "
					       "the probe step: %s", node.name, bad);
			r->output = xstrdup(probe_out ? probe_out : "");
			r->duration = probe_time;
			failed = true;
			continue;
		}
		if (t->nodes > 0 && (size_t)t->nodes > nodes.n) {
			acceptance_result_fail(r, ACCEPTANCE_FAIL, "test %s needs Nodes=%d but only %zu "
					       "nodes (%s) are tested", t->name, t->nodes, nodes.n, expr);
			failed = true;
			continue;
		}
		if (t->nodes > 0 && (size_t)t->nodes < nodes.n) {
			/* the first Nodes= of them; the result is named after those */
			n = (size_t)t->nodes;
			sub = hostlist_compress(nodes.names, n);
			hosts = sub;
			free(r->node);
			r->node = xstrdup(sub);
		}
		cmd = expand_command(t->command, program);
		sav = srun_argv(true, n, hosts, o.partition, cmd, cnt, sizeof(cnt));
		tbad = run_argv(sav, o.timeout ? o.timeout : t->timeout, &out, &r->duration, why,
				sizeof(why));
		if (tbad) {
			const char *why_init = acceptance_mpi_init_crash(out);
			if (why_init)
				acceptance_result_fail(r, ACCEPTANCE_FAIL, "%s; %s", tbad, why_init);
			else
				acceptance_result_fail(r, ACCEPTANCE_FAIL, "%s", tbad);
		}
		r->output = out;
		/* sanity and performance speak only for a step that ran to its end */
		if (r->status == ACCEPTANCE_PASS)
			acceptance_check(t, r->output, &node, r);
		if (r->status == ACCEPTANCE_PASS && is_ranks_test(t))
			check_ranks(r->output, nodes.names, n, hosts, r);
		failed |= r->status == ACCEPTANCE_FAIL;
		free(sav);
		free(cmd);
		free(sub);
	}
	rc = failed ? EXIT_FAILED : EXIT_OK;
	if (acceptance_write_reports("burstctl accept", o.tap, o.junit, o.json, "mpi-acceptance", res,
				     nres) < 0)
		rc = EXIT_USAGE;
out:
	for (i = 0; i < nres; i++)
		acceptance_result_free(&res[i]);
	free(res);
	free(tests);
	free(expr);
	free(itype);
	free(probe_out);
	hostlist_free(&want);
	hostlist_free(&nodes);
	acceptance_free(conf);
	acceptance_free(builtin);
	return rc;
}
