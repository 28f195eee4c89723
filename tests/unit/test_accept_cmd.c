/*
 * test_accept_cmd.c - the pieces of burstctl accept that need no cluster:
 * host list compression (result names), {mpi_acceptance} expansion, the
 * ranks check, finding the verb, and the usage errors. The real runs across
 * nodes are in tests/integration/test_mpi_accept.sh.
 */
#include "../../burstctl/accept_cmd.c"

#include "tap.h"

static void compress_is(const char *expr, const char *want)
{
	struct hostlist hl = { NULL, 0, 0 };
	burst_err_t err;
	char *got;

	if (hostlist_expand(expr, &hl, 1000, &err) < 0) {
		ok(0, "expand %s: %s", expr, err.msg);
		return;
	}
	got = hostlist_compress(hl.names, hl.n);
	is_str(got, want, "compress %s", expr);
	free(got);
	hostlist_free(&hl);
}

/* compress, then expand again: the same hosts */
static void roundtrip(const char *expr)
{
	struct hostlist hl = { NULL, 0, 0 }, back = { NULL, 0, 0 };
	burst_err_t err;
	char *c;
	size_t i;
	bool same;

	if (hostlist_expand(expr, &hl, 1000, &err) < 0) {
		ok(0, "expand %s: %s", expr, err.msg);
		return;
	}
	c = hostlist_compress(hl.names, hl.n);
	same = hostlist_expand(c, &back, 1000, &err) == 0 && back.n == hl.n;
	for (i = 0; same && i < hl.n; i++)
		same = hostlist_find(&back, hl.names[i]) >= 0;
	ok(same, "%s -> %s names the same hosts", expr, c);
	free(c);
	hostlist_free(&hl);
	hostlist_free(&back);
}

static void test_compress(void)
{
	compress_is("burst-[1-2]", "burst-[1-2]");
	compress_is("burst-2,burst-1", "burst-[1-2]");
	compress_is("burst-[1-4,7,9-10]", "burst-[1-4,7,9-10]");
	compress_is("gpu-[01-03],cpu-[1-2]", "cpu-[1-2],gpu-[01-03]");
	compress_is("n[8-11]", "n[8-11]");
	/* a padded run into a wider number is not joined, but stays exact */
	roundtrip("gpu-[08-10]");
	roundtrip("a[1-3],b[001-003],a7,c,a[10-12]");
	compress_is("n[1-2],n[01-02]", "n[1-2],n[01-02]");   /* padded and not: apart */
	compress_is("burst-3,burst-3", "burst-[3,3]");
	compress_is("login", "login");
	compress_is("a1", "a1");
	compress_is("x,y1,y2", "x,y[1-2]");
}

static void test_expand(void)
{
	char *s = expand_command("{mpi_acceptance} pingpong", "/opt/mpi acc/prog");
	is_str(s, "'/opt/mpi acc/prog' pingpong", "{mpi_acceptance} is replaced, shell-quoted");
	free(s);
	s = expand_command("a {mpi_acceptance} b {mpi_acceptance}", "/it's");
	is_str(s, "a '/it'\\''s' b '/it'\\''s'", "every occurrence, quotes escaped");
	free(s);
	s = expand_command("osu_latency", "/x");
	is_str(s, "osu_latency", "a command without the token is unchanged");
	free(s);
}

static void test_is_ranks(void)
{
	struct acceptance_test t;

	memset(&t, 0, sizeof(t));
	t.command = (char *)"{mpi_acceptance} ranks";
	ok(is_ranks_test(&t), "'{mpi_acceptance} ranks' is a ranks test");
	t.command = (char *)"{mpi_acceptance}  ranks | sed s/a/b/";
	ok(is_ranks_test(&t), "... also with a pipe after it");
	t.command = (char *)"{mpi_acceptance} ranks|sort";
	ok(is_ranks_test(&t), "... and with a pipe right after the word");
	t.command = (char *)"{mpi_acceptance} ranksx";
	ok(!is_ranks_test(&t), "'ranksx' is not");
	t.command = (char *)"{mpi_acceptance} pingpong";
	ok(!is_ranks_test(&t), "pingpong is not");
	t.command = (char *)"echo ranks";
	ok(!is_ranks_test(&t), "a command without the program is not");
}

static void ranks_case(const char *output, const char *want_reason, const char *name)
{
	char *hosts[] = { (char *)"burst-1", (char *)"burst-2" };
	struct acceptance_result r;

	memset(&r, 0, sizeof(r));
	r.status = ACCEPTANCE_PASS;
	check_ranks(output, hosts, 2, "burst-[1-2]", &r);
	if (!want_reason)
		ok(r.status == ACCEPTANCE_PASS, "%s: passes (%s)", name, r.reason ? r.reason : "");
	else if (ok(r.status == ACCEPTANCE_FAIL, "%s: fails", name))
		has_str(r.reason, want_reason, "%s: the reason", name);
	free(r.reason);
}

static void test_ranks(void)
{
	ranks_case("srun: job 2 queued\nrank 0 of 2 on burst-1\nrank 1 of 2 on burst-2\n", NULL,
		   "two ranks on the two nodes");
	ranks_case("rank 1 of 2 on burst-1\nrank 0 of 2 on burst-2\n", NULL, "any placement");
	ranks_case("rank 0 of 2 on burst-1\nrank 1 of 2 on burst-1\n",
		   "ranks 0 and 1 both run on burst-1; expected one rank per node of burst-[1-2]",
		   "two ranks on one host");
	ranks_case("rank 0 of 2 on burst-1\n", "1 of 2 ranks reported", "a rank missing");
	ranks_case("rank 0 of 3 on burst-1\nrank 1 of 3 on burst-2\n", "says there are 3 ranks",
		   "a world of the wrong size");
	ranks_case("rank 0 of 2 on burst-1\nrank 0 of 2 on burst-2\n", "rank 0 is reported twice",
		   "a rank twice");
	ranks_case("rank 0 of 2 on burst-1\nrank 1 of 2 on login\n",
		   "rank 1 runs on login, which is not one of burst-[1-2]", "a stranger");
	ranks_case("", "0 of 2 ranks reported", "no output");
}

static void test_verb(void)
{
	char *a1[] = { (char *)"burstctl", (char *)"-c", (char *)"accept", (char *)"accept", NULL };
	char *a2[] = { (char *)"burstctl", (char *)"--config", (char *)"x", (char *)"accept", NULL };
	char *a3[] = { (char *)"burstctl", (char *)"select", (char *)"accept", NULL };
	char *a4[] = { (char *)"burstctl", (char *)"-j", NULL };
	char *a5[] = { (char *)"burstctl", (char *)"-N", (char *)"2", (char *)"--tap", (char *)"t",
		(char *)"accept", NULL };
	char *a6[] = { (char *)"burstctl", (char *)"--json", (char *)"accept", (char *)"x", NULL };
	static const struct option own[] = { { "json", required_argument, NULL, 300 },
		{ "nodes", required_argument, NULL, 301 }, { NULL, 0, NULL, 0 } };
	struct ctl_globals gl;
	struct ctl_getopt g;
	size_t n;

	is_num(ctl_find_verb(4, a1, ctl_short_valued, ctl_long_valued), 3,
	       "-c takes a value: the verb is the second 'accept'");
	is_num(ctl_find_verb(4, a2, ctl_short_valued, ctl_long_valued), 3, "--config takes a value");
	is_num(ctl_find_verb(3, a3, ctl_short_valued, ctl_long_valued), 1, "select is the verb");
	is_num(ctl_find_verb(2, a4, ctl_short_valued, ctl_long_valued), -1, "no verb");
	is_num(ctl_find_verb(6, a5, ctl_short_valued, ctl_long_valued), 5,
	       "accept's -N and --tap take a value before the verb too");
	is_num(ctl_find_verb(4, a6, ctl_short_valued, ctl_long_valued), 2,
	       "--json before the verb is burstctl's flag");

	/* a verb's options: its own, then the globals it takes, its own first */
	ctl_getopt_init(&g, own, "+N:", CTL_G(CONFIG) | CTL_G(JSON) | CTL_G(HELP));
	for (n = 0; g.longopts[n].name; n++)
		;
	is_num(n, 4, "json, nodes, config, help: the global --json shadowed");
	is_str(g.longopts[0].name, "json", "its own --json first");
	is_num(g.longopts[0].has_arg, required_argument, "... with its value");
	is_str(g.longopts[2].name, "config", "then --config");
	is_num(g.longopts[2].val, 'c', "... as -c");
	is_str(g.shortopts, "+N:c:h", "the short ones: its own, then -c VALUE and -h, no -j");
	ctl_getopt_init(&g, NULL, "", CTL_G(CATALOG_DIR) | CTL_G(FOLLOW));
	is_str(g.shortopts, "f", "a long-only global adds no letter");
	is_num(g.longopts[0].val, CTL_OPT_LONG + CTL_G_CATALOG_DIR, "... and getopt returns its code");

	memset(&gl, 0, sizeof(gl));
	ok(ctl_global('c', "b.conf", &gl) && gl.config && !strcmp(gl.config, "b.conf"), "-c is recorded");
	ok(ctl_global(CTL_OPT_LONG + CTL_G_SINCE, "2h ago", &gl) && gl.since && !strcmp(gl.since, "2h ago"),
	   "--since is recorded");
	ok(ctl_global('j', NULL, &gl) && gl.json, "-j is recorded");
	ok(!ctl_global('N', "2", &gl), "accept's -N is not a global option");
	ok(!ctl_global('h', NULL, &gl), "--help is the verb's to answer");
}

static int run_main(const char *const *args)
{
	char *argv[16];
	int n = 0, rc;
	FILE *saved = stderr;

	while (args[n] && n < 15) {
		argv[n] = (char *)args[n];
		n++;
	}
	argv[n] = NULL;
	/* burstctl's verb table gives the verb argv without the verb */
	if (n > 1 && !strcmp(argv[1], "accept")) {
		memmove(argv + 1, argv + 2, (size_t)(n - 1) * sizeof(*argv));
		n--;
	}
	stderr = fopen("/dev/null", "w");
	rc = accept_cmd_main("accept", n, argv);
	fclose(stderr);
	stderr = saved;
	return rc;
}

static void test_usage(void)
{
	static const char *const none[] = { "burstctl", "accept", NULL };
	static const char *const both[] = { "burstctl", "accept", "--nodes", "a", "--partition", "p", NULL };
	static const char *const part[] = { "burstctl", "accept", "--partition", "p", NULL };
	static const char *const count[] = { "burstctl", "accept", "--nodes", "a[1-2]", "-N", "3", NULL };
	static const char *const badn[] = { "burstctl", "accept", "--partition", "p", "-N", "0", NULL };
	static const char *const badt[] = { "burstctl", "accept", "--nodes", "a", "--timeout", "x", NULL };
	static const char *const badl[] = { "burstctl", "accept", "--nodes", "a[1-", NULL };
	static const char *const conf[] = { "burstctl", "accept", "--nodes", "a",
		"--conf", "/nonexistent/acceptance.conf", NULL };
	static const char *const extra[] = { "burstctl", "accept", "--nodes", "a", "more", NULL };

	is_num(run_main(none), 2, "no nodes: exit 2");
	is_num(run_main(both), 2, "--nodes and --partition: exit 2");
	is_num(run_main(part), 2, "--partition without -N: exit 2");
	is_num(run_main(count), 2, "-N disagreeing with --nodes: exit 2");
	is_num(run_main(badn), 2, "-N 0: exit 2");
	is_num(run_main(badt), 2, "--timeout x: exit 2");
	is_num(run_main(badl), 2, "a bad host list: exit 2");
	is_num(run_main(conf), 2, "an explicit --conf that does not exist: exit 2");
	is_num(run_main(extra), 2, "an extra argument: exit 2");
}

static void test_defaults(void)
{
	burst_err_t err;
	struct acceptance_conf *c = acceptance_parse(default_tests, "built-in", &err);
	size_t i;

	if (!ok(c != NULL, "the built-in tests parse")) {
		diag("%s", err.msg);
		return;
	}
	is_num(c->ntests, 3, "three of them");
	for (i = 0; i < c->ntests; i++)
		ok(c->tests[i].kind == ACCEPTANCE_MPI, "%s is Kind=mpi", c->tests[i].name);
	is_str(c->tests[0].name, "ranks", "ranks first");
	ok(is_ranks_test(&c->tests[0]), "... and it gets the ranks check");
	{
		struct acceptance_node n = { "burst-[1-2]", "local.host", NULL };
		struct acceptance_result r;
		acceptance_result_init(&r, &c->tests[1], &n);
		ok(acceptance_check(&c->tests[1], "latency_us=40.5 bandwidth_mbs=200.0\n", &n, &r),
		   "pingpong passes with plausible values");
		acceptance_result_free(&r);
		acceptance_result_init(&r, &c->tests[1], &n);
		ok(!acceptance_check(&c->tests[1], "latency_us=40.5 bandwidth_mbs=0.2\n", &n, &r),
		   "... and fails below 1 MB/s");
		has_str(r.reason, "bandwidth_mbs = 0.2 is below", "... saying so");
		acceptance_result_free(&r);
		acceptance_result_init(&r, &c->tests[2], &n);
		ok(!acceptance_check(&c->tests[2], "allreduce FAILED: 1 wrong sums\n", &n, &r),
		   "allreduce FAILED fails the sanity check");
		acceptance_result_free(&r);
	}
	acceptance_free(c);
}

static void test_run(void)
{
	char *av1[] = { (char *)"/bin/sh", (char *)"-c", (char *)"echo out; echo err >&2; exit 3", NULL };
	char *av2[] = { (char *)"/bin/sh", (char *)"-c", (char *)"sleep 5", NULL };
	char why[256], *out = NULL;
	const char *bad;
	double d = 0;

	bad = run_argv(av1, 10, &out, &d, why, sizeof(why));
	has_str(bad ? bad : "", "exited with status 3", "a failing step says its status");
	has_str(out, "out\nerr\n", "stdout and stderr are captured together");
	free(out);
	bad = run_argv(av2, 1, &out, &d, why, sizeof(why));
	has_str(bad ? bad : "", "timed out after 1 s", "a step past its timeout is killed");
	ok(d < 4, "... within the grace time (%.1f s)", d);
	free(out);
}

int main(void)
{
	test_compress();
	test_expand();
	test_is_ranks();
	test_ranks();
	test_verb();
	test_usage();
	test_defaults();
	test_run();
	return done_testing();
}
