/*
 * test_acceptance.c - acceptance.conf parsing (errors with file:line and a
 * suggestion, quoting, references), the sanity/performance logic (tolerances,
 * missing reference, which reference a node gets) and the writers.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acceptance.h"
#include "strutil.h"
#include "tap.h"

static struct acceptance_conf *parse(const char *text, burst_err_t *err)
{
	burst_err_clear(err);
	return acceptance_parse(text, "acc.conf", err);
}

/* The error for text; "" when it parsed. */
static const char *error_of(const char *text)
{
	static burst_err_t err;
	struct acceptance_conf *c = parse(text, &err);

	if (c) {
		acceptance_free(c);
		return "";
	}
	return err.msg;
}

static char *render(int which, const struct acceptance_result *r, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (which == 0)
		acceptance_write_tap(f, r, n);
	else if (which == 1)
		acceptance_write_junit(f, "acceptance", r, n);
	else
		acceptance_write_json(f, r, n);
	fclose(f);
	return buf;
}

static void test_parse_ok(void)
{
	burst_err_t err;
	struct acceptance_conf *c = parse(
		"# the suite\n"
		"Test=kernel-sane  Kind=hardware Command=\"uname -r\" Sanity=\"^[0-9]+\\.[0-9]+\" Timeout=10\n"
		"Test=container-hello Kind=container Image=busybox "
		"Command=\"/bin/sh -c 'echo hello from $(hostname)'\" Sanity=\"hello from\" Timeout=30  # comment\n"
		"\n"
		"test=mem-bw kind=Hardware Command=\"echo bw=\\\"1200\\\" MB/s \\# not a comment\" Sanity=bw "
		"Perf=\"bw=([0-9.]+)\\\" MB/s\" Reference=default:1000:-0.5:+1.0 "
		"Reference=g5.12xlarge:20000:-0.2:+0.5 Reference=A10G:bw:15000:-0.1:inf\n"
		"Test=mpi-pingpong Kind=mpi Command=\"osu_latency\" Sanity=\"^8 \" Nodes=2\n"
		"Runtime=podman Template=\"podman run --rm {image} {command}\" ImageDir=/srv/images\n",
		&err);
	const struct acceptance_test *t;

	if (!ok(c != NULL, "a valid file parses"))
		diag("%s", err.msg);
	if (!c)
		return;
	is_num(c->ntests, 4, "four tests");
	t = &c->tests[0];
	is_str(t->name, "kernel-sane", "test name");
	ok(t->kind == ACCEPTANCE_HARDWARE, "Kind=hardware");
	is_str(t->command, "uname -r", "quoted command keeps its blank");
	is_str(t->sanity, "^[0-9]+\\.[0-9]+", "backslashes in a regex are kept");
	is_num(t->timeout, 10, "Timeout=10");
	is_num(t->line, 2, "line number recorded");
	t = &c->tests[1];
	ok(t->kind == ACCEPTANCE_CONTAINER, "Kind=container");
	is_str(t->image, "busybox", "Image=");
	is_str(t->command, "/bin/sh -c 'echo hello from $(hostname)'",
	       "single quotes and $() inside double quotes are kept");
	is_num(t->timeout, 30, "a comment after the words is cut");
	t = &c->tests[2];
	is_str(t->name, "mem-bw", "keys are case-insensitive (test=, kind=)");
	is_str(t->command, "echo bw=\"1200\" MB/s # not a comment", "\\\" and \\# in a quoted value");
	is_num(t->timeout, ACCEPTANCE_DEFAULT_TIMEOUT, "default timeout");
	is_num(t->nperf, 1, "one Perf=");
	is_str(t->perf[0].name, "bw", "Perf name before '='");
	is_str(t->perf[0].pattern, "([0-9.]+)\" MB/s", "Perf regex after '='");
	is_num(t->nrefs, 3, "three references");
	is_str(t->refs[0].target, "default", "reference target");
	is_str(t->refs[0].var, "bw", "a reference without a variable is for the only Perf");
	is_num(t->refs[0].value, 1000, "reference value");
	is_num(t->refs[0].lower, -0.5, "lower tolerance");
	is_num(t->refs[0].upper, 1.0, "upper tolerance");
	is_str(t->refs[1].target, "g5.12xlarge", "an instance type with a dot as target");
	is_num(t->refs[1].value, 20000, "second reference value");
	is_str(t->refs[2].var, "bw", "TARGET:VAR:VALUE:LOWER:UPPER names the variable");
	ok(t->refs[2].upper > 1e300, "inf: no upper bound");
	t = &c->tests[3];
	ok(t->kind == ACCEPTANCE_MPI, "Kind=mpi");
	is_num(t->nodes, 2, "Nodes=2");
	is_num(c->nruntimes, 1, "one runtime");
	is_str(c->runtimes[0].template, "podman run --rm {image} {command}", "runtime template");
	{
		char *line = acceptance_command_line(c, &c->tests[1]);
		is_str(line, "podman run --rm '/srv/images/busybox' /bin/sh -c 'echo hello from $(hostname)'",
		       "container command line from the first Runtime= (image quoted)");
		free(line);
		line = acceptance_command_line(c, &c->tests[0]);
		is_str(line, "uname -r", "a hardware test runs its command as is");
		free(line);
	}
	acceptance_free(c);

	c = parse("Test=c Kind=container Image=/img/bb Command=true Sanity=.\n", &err);
	ok(c != NULL, "a container test without Runtime= lines parses");
	if (c) {
		char *line = acceptance_command_line(c, &c->tests[0]);
		is_str(line, "ch-run '/img/bb' -- true", "built-in Charliecloud template; absolute image path");
		free(line);
		acceptance_free(c);
	}
	c = parse("Runtime=charliecloud ImageDir=/x\nTest=c Kind=container Image=it Command=true Sanity=.\n",
		  &err);
	ok(c != NULL, "Runtime=charliecloud needs no Template=");
	if (c) {
		char *line = acceptance_command_line(c, &c->tests[0]);
		is_str(line, "ch-run '/x/it' -- true", "ImageDir= of the charliecloud runtime");
		free(line);
		acceptance_free(c);
	}
}

static void test_parse_errors(void)
{
	const char *e;

	e = error_of("# x\n\nTest=a Kind=hardware Command=true Sanit=ok\n");
	has_str(e, "acc.conf:3:", "error names file:line");
	has_str(e, "'Sanit'", "error names the word");
	has_str(e, "did you mean 'Sanity'?", "error suggests the nearest key");

	e = error_of("Test=a Kind=hardwre Command=true Sanity=ok\n");
	has_str(e, "acc.conf:1: Kind=hardwre", "bad kind named");
	has_str(e, "did you mean 'hardware'?", "kind suggested");
	ok(strstr(e, "has no Kind=") == NULL, "a bad Kind= is not also reported as missing");
	e = error_of("Test=a Command=true Sanity=ok\n");
	has_str(e, "acc.conf:1: Test=a has no Kind= (hardware, container or mpi)", "Kind= is required");

	e = error_of("Tset=a Kind=hardware Command=true Sanity=ok\n");
	has_str(e, "unknown key 'Tset'; did you mean 'Test'?", "misspelled object suggested");

	e = error_of("Test=a Kind=hardware Command=\"true Sanity=ok\n");
	has_str(e, "acc.conf:1: unterminated quote in the word starting at column 22", "unterminated quote, with the column of its word");

	e = error_of("Test=a Kind=hardware Command=true\n");
	has_str(e, "has no Sanity=", "Sanity= is required");

	e = error_of("Test=a Kind=container Command=true Sanity=x\n");
	has_str(e, "Kind=container but has no Image=", "container needs Image=");

	e = error_of("Test=a Kind=hardware Command=true Sanity=\"([a-\"\n");
	has_str(e, "Sanity=\"([a-\": not a valid POSIX extended regular expression", "bad regex reported");

	/* found by tests/fuzz/fuzz_acceptance: glibc's regcomp copies a repeated
	 * part per repetition, and repetitions of repetitions took gigabytes */
	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bw=([0-9.]+)\\\"++++++++++++++++++++++++++++++++\"\n");
	has_str(e, "repetitions of repetitions", "'x++++...' is refused before regcomp");
	has_str(e, "write the pattern without them", "... saying what to do");
	e = error_of("Test=a Kind=hardware Command=true Sanity=\"((((x{1,20}){1,20}){1,20}){1,20})\"\n");
	has_str(e, "Sanity=\"((((x{1,20}){1,20}){1,20}){1,20})\": repetitions of repetitions",
		"nested {m,n} multiplying to 160000 copies is refused, naming the key");
	e = error_of("Test=a Kind=hardware Command=true Sanity=\"(x{1,20}){1,20}|[[:digit:]]+ ok\"\n");
	is_str(e, "", "(x{1,20}){1,20} (400 copies) and a bracket class are fine");
	e = error_of("Test=a Kind=hardware Command=true Sanity=\"[*+]+ x{2}y* (a|b)+\"\n");
	is_str(e, "", "repetition characters inside brackets are not repetitions");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bw=([0-9]+) ([a-z]+)\"\n");
	has_str(e, "has 2 capture groups; it needs exactly one", "Perf needs one capture group");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"([0-9]+)\"\n");
	has_str(e, "write NAME=REGEX", "Perf needs a name");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bw=([0-9]+)\" "
		     "Reference=default:1000:-0.1\n");
	has_str(e, "Reference=default:1000:-0.1: write TARGET:VALUE:LOWER:UPPER", "short reference");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bw=([0-9]+)\" "
		     "Reference=default:1000:0.1:0.2\n");
	has_str(e, "lower tolerance '0.1' must be a number <= 0", "positive lower tolerance");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bw=([0-9]+)\" "
		     "Reference=default:fast:-0.1:0.2\n");
	has_str(e, "reference value 'fast' is not a number", "non-numeric reference");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bw=([0-9]+)\" "
		     "Perf=\"lat=([0-9]+)\" Reference=default:1:-0.1:0.2\n");
	has_str(e, "several Perf= variables; name one", "ambiguous reference");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Perf=\"bandwidth=([0-9]+)\" "
		     "Reference=default:bandwith:1:-0.1:0.2\n");
	has_str(e, "no Perf variable 'bandwith'; did you mean 'bandwidth'?", "reference variable suggested");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Reference=default:1:-0.1:0.2\n");
	has_str(e, "Reference= but no Perf=", "reference without Perf");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x Timeout=0\n");
	has_str(e, "Timeout=0: give seconds", "timeout range");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x\nTest=a Kind=hardware Command=true Sanity=x\n");
	has_str(e, "acc.conf:2: Test=a is already defined at acc.conf:1", "duplicate test names");

	e = error_of("Test=a Kind=container Image=i Runtime=podmn Command=true Sanity=x\n"
		     "Runtime=podman Template=\"podman run {image} {command}\"\n");
	has_str(e, "acc.conf:1: Test=a: Runtime=podmn is not defined by a Runtime= line; did you mean 'podman'?",
		"undefined runtime suggested");

	e = error_of("Runtime=podman Templat=x\n");
	has_str(e, "unknown Runtime key 'Templat'; did you mean 'Template'?", "runtime key suggested");

	e = error_of("Test=a Kind=hardware Command=true Sanity=x\nbogus\nTest=b Kind=hw Sanity=x\n");
	has_str(e, "acc.conf:2: expected Test=NAME", "a bare word");
	has_str(e, "acc.conf:3: Kind=hw", "errors on several lines are all reported");
	has_str(e, "acc.conf:3: Test=b has no Command=", "missing Command=");

	{
		burst_err_t err;
		ok(acceptance_load("/nonexistent/acceptance.conf", &err) == NULL &&
		   strstr(err.msg, "/nonexistent/acceptance.conf: cannot open") != NULL,
		   "a missing file names its path");
	}
}

static const char *perf_conf =
	"Test=bw Kind=hardware Command=x Sanity=\"bw=\" Perf=\"bw=bw=([0-9.]+) MB/s\" "
	"Reference=default:1000:-0.5:+1.0 Reference=g5.12xlarge:20000:-0.2:+0.5 "
	"Reference=A10G:15000:-0.1:+0.1\n"
	"Test=noref Kind=hardware Command=x Sanity=. Perf=\"bw=bw=([0-9.]+)\" "
	"Reference=p4d.24xlarge:1:-0.1:0.1\n";

/* Check output against test i for node; returns the result (caller frees). */
static struct acceptance_result check(struct acceptance_conf *c, size_t i, const char *output,
				      const char *itype, const char *accel)
{
	struct acceptance_node node = { "n1", itype, accel };
	struct acceptance_result r;

	acceptance_result_init(&r, &c->tests[i], &node);
	acceptance_check(&c->tests[i], output, &node, &r);
	return r;
}

static void test_perf(void)
{
	burst_err_t err;
	struct acceptance_conf *c = parse(perf_conf, &err);
	struct acceptance_result r;
	const struct acceptance_ref *ref;
	struct acceptance_node n;

	if (!ok(c != NULL, "perf conf parses"))
		diag("%s", err.msg);
	if (!c)
		return;

	/* reference choice: instance type > accelerator model > default */
	n = (struct acceptance_node){ "n", "g5.12xlarge", "A10G" };
	ref = acceptance_pick_reference(&c->tests[0], "bw", &n);
	is_str(ref ? ref->target : NULL, "g5.12xlarge", "instance type wins over accelerator model");
	n = (struct acceptance_node){ "n", "G5.12XLARGE", NULL };
	ref = acceptance_pick_reference(&c->tests[0], "bw", &n);
	is_str(ref ? ref->target : NULL, "g5.12xlarge", "targets compare case-insensitively");
	n = (struct acceptance_node){ "n", "g5.xlarge", "A10G" };
	ref = acceptance_pick_reference(&c->tests[0], "bw", &n);
	is_str(ref ? ref->target : NULL, "A10G", "accelerator model wins over default");
	n = (struct acceptance_node){ "n", "c7i.large", NULL };
	ref = acceptance_pick_reference(&c->tests[0], "bw", &n);
	is_str(ref ? ref->target : NULL, "default", "default when nothing else matches");
	n = (struct acceptance_node){ "n", NULL, NULL };
	ref = acceptance_pick_reference(&c->tests[1], "bw", &n);
	ok(ref == NULL, "no reference for a node that matches none and no default");

	/* tolerance: default 1000, -0.5/+1.0 -> 500..2000 */
	r = check(c, 0, "bw=1200 MB/s\n", "c7i.large", NULL);
	ok(r.status == ACCEPTANCE_PASS, "1200 within 500..2000 passes");
	is_num(r.nperf, 1, "one perf result");
	is_num(r.perf[0].value, 1200, "value extracted");
	is_num(r.perf[0].reference, 1000, "reference recorded");
	is_str(r.perf[0].target, "default", "reference target recorded");
	acceptance_result_free(&r);
	r = check(c, 0, "bw=500 MB/s\n", NULL, NULL);
	ok(r.status == ACCEPTANCE_PASS, "the lower bound itself passes");
	acceptance_result_free(&r);
	r = check(c, 0, "bw=499.9 MB/s\n", NULL, NULL);
	ok(r.status == ACCEPTANCE_FAIL, "499.9 below 500 fails");
	has_str(r.reason, "bw = 499.9 is below the reference 1000", "below: the reason says so");
	acceptance_result_free(&r);
	r = check(c, 0, "bw=2000.5 MB/s\n", NULL, NULL);
	ok(r.status == ACCEPTANCE_FAIL, "2000.5 above 2000 fails");
	has_str(r.reason, "above", "above: the reason says so");
	acceptance_result_free(&r);
	/* the same value judged by the instance type's reference: 16000..30000 */
	r = check(c, 0, "bw=1200 MB/s\n", "g5.12xlarge", "A10G");
	ok(r.status == ACCEPTANCE_FAIL, "1200 fails against g5.12xlarge's 20000 -20%%");
	has_str(r.reason, "g5.12xlarge", "the reason names the reference used");
	acceptance_result_free(&r);
	r = check(c, 0, "bw=21000 MB/s\n", "g5.12xlarge", "A10G");
	ok(r.status == ACCEPTANCE_PASS, "21000 passes on g5.12xlarge");
	acceptance_result_free(&r);
	r = check(c, 0, "bw=21000 MB/s\n", "g5.xlarge", "A10G");
	ok(r.status == ACCEPTANCE_FAIL, "21000 fails against A10G's 15000 +10%%");
	acceptance_result_free(&r);

	/* missing value, missing reference, sanity */
	r = check(c, 0, "bw= MB/s\n", NULL, NULL);
	ok(r.status == ACCEPTANCE_FAIL, "no number in the output fails");
	has_str(r.reason, "does not match", "the reason says the perf pattern did not match");
	acceptance_result_free(&r);
	r = check(c, 1, "bw=5\n", "c7i.large", "L4");
	ok(r.status == ACCEPTANCE_FAIL, "a perf test with no reference for the node fails");
	has_str(r.reason, "no reference for this node (instance type c7i.large, accelerator model L4)",
		"the reason says there is no reference");
	ok(r.perf[0].have_value && !r.perf[0].have_ref, "value kept, no reference");
	acceptance_result_free(&r);
	r = check(c, 1, "bw=1.05\n", "p4d.24xlarge", NULL);
	ok(r.status == ACCEPTANCE_PASS, "the same test passes on the type that has a reference");
	acceptance_result_free(&r);
	r = check(c, 0, "bandwidth 1200 MB/s\n", NULL, NULL);
	ok(r.status == ACCEPTANCE_FAIL, "sanity failure");
	has_str(r.reason, "sanity: the output does not match /bw=/", "sanity reason first");
	acceptance_result_free(&r);

	acceptance_free(c);
}

/* the directory holds only name (no temporary left beside it) */
static int only_file(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0, found = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			n++;
			found |= !strcmp(e->d_name, name);
		}
	if (d)
		closedir(d);
	return n == 1 && found;
}

/* acceptance_write_file: the report whole or not at all */
static void test_report_files(const struct acceptance_result *r, size_t n)
{
	char dir[] = "/tmp/test_acceptance.XXXXXX", path[256], err[512];
	struct rlimit lim, small;
	struct stat st;
	char *s, *want;
	mode_t mask;
	size_t len;

	if (!ok(mkdtemp(dir) != NULL, "a scratch directory"))
		return;
	snprintf(path, sizeof(path), "%s/report.xml", dir);
	mask = umask(022);
	ok(acceptance_write_file(path, "JUnit", "acceptance", r, n, err, sizeof(err)) == 0,
	   "a JUnit report file is written");
	umask(mask);
	s = tap_slurp(path, &len);
	want = render(1, r, n);
	ok(!strcmp(s, want), "the file holds what the writer renders");
	memset(&st, 0, sizeof(st));
	ok(stat(path, &st) == 0, "the report is there");
	ok((st.st_mode & 0777) == 0644, "mode 0644 under umask 022, like any file the user makes "
	   "(not mkstemp's 0600): %o", (unsigned)(st.st_mode & 0777));
	ok(only_file(dir, "report.xml"), "no temporary file is left beside it");
	free(s);

	/* a write that fails part way (a file size limit) leaves the old report whole */
	getrlimit(RLIMIT_FSIZE, &lim);
	small = lim;
	small.rlim_cur = 64;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &small);
	ok(acceptance_write_file(path, "JSON", NULL, r, n, err, sizeof(err)) == -1,
	   "a report that cannot be written whole fails");
	setrlimit(RLIMIT_FSIZE, &lim);
	signal(SIGXFSZ, SIG_DFL);
	has_str(err, "report.xml is unchanged", "the error says the old report is kept");
	s = tap_slurp(path, &len);
	ok(!strcmp(s, want), "the old report is whole");
	ok(only_file(dir, "report.xml"), "and the half-written one is gone");
	free(s);
	free(want);

	/* a path whose directory is missing: named, nothing made */
	snprintf(path, sizeof(path), "%s/no-such-dir/report.tap", dir);
	ok(acceptance_write_file(path, "TAP", NULL, r, n, err, sizeof(err)) == -1,
	   "a report in a missing directory fails");
	has_str(err, path, "the error names the file");
	has_str(err, "is its directory there and writable?", "and what to check");

	/* a device is written in place, not replaced */
	ok(acceptance_write_file("/dev/null", "TAP", NULL, r, n, err, sizeof(err)) == 0 &&
	   stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null is written, still a device");
	ok(acceptance_write_file("/dev/full", "TAP", NULL, r, n, err, sizeof(err)) == -1,
	   "a full device fails");
	has_str(err, "/dev/full", "naming it");

	snprintf(path, sizeof(path), "%s/report.xml", dir);
	unlink(path);
	rmdir(dir);
}

static void test_writers(void)
{
	burst_err_t err;
	struct acceptance_conf *c = parse(
		"Test=ok1 Kind=hardware Command=x Sanity=fine\n"
		"Test=bad Kind=container Image=i Command=x Sanity=fine\n"
		"Test=mpi Kind=mpi Command=x Sanity=fine\n"
		"Test=bw Kind=hardware Command=x Sanity=. Perf=\"bw=([0-9]+)\" Reference=default:10:-0.1:inf\n",
		&err);
	struct acceptance_node node = { "node-1", "g5.xlarge", NULL };
	struct acceptance_result r[4];
	char *s;

	if (!c) {
		ok(0, "writer conf parses");
		diag("%s", err.msg);
		return;
	}
	acceptance_result_init(&r[0], &c->tests[0], &node);
	acceptance_check(&c->tests[0], "all fine\n", &node, &r[0]);
	r[0].duration = 0.25;
	acceptance_result_init(&r[1], &c->tests[1], &node);
	acceptance_check(&c->tests[1], "<oops> & \"quotes\" \x01 \xff \xed\xa0\x80 \xe0\x80\xaf \xf4\x90\x80\x80 "
			 "caf\xc3\xa9\n", &node, &r[1]);
	acceptance_result_init(&r[2], &c->tests[2], &node);
	acceptance_result_fail(&r[2], ACCEPTANCE_NOT_RUN, "multi-node test");
	acceptance_result_init(&r[3], &c->tests[3], &node);
	acceptance_check(&c->tests[3], "12", &node, &r[3]);

	s = render(0, r, 4);
	has_str(s, "1..4\n", "TAP plan");
	has_str(s, "ok 1 - ok1@node-1\n", "TAP pass with check@node");
	has_str(s, "not ok 2 - bad@node-1\n", "TAP failure");
	has_str(s, "# reason: sanity: the output does not match /fine/", "TAP reason diagnostic");
	has_str(s, "ok 3 - mpi@node-1 # SKIP multi-node test", "TAP skip for a test not run");
	has_str(s, "# perf bw = 12 (reference 10 for default", "TAP perf diagnostic");
	free(s);

	s = render(1, r, 4);
	has_str(s, "<testsuite name=\"acceptance\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\"",
		"JUnit counts");
	has_str(s, "<testcase name=\"ok1@node-1\" classname=\"g5.xlarge\" time=\"0.250\">", "JUnit testcase");
	has_str(s, "<failure message=\"sanity: the output does not match /fine/\"", "JUnit failure message");
	has_str(s, "<system-out>&lt;oops&gt; &amp; &quot;quotes&quot; \\x01 ? ??? ??? ???? caf\xc3\xa9\n</system-out>",
		"JUnit output escaped, control bytes and invalid UTF-8 replaced (a surrogate, an overlong "
		"form, a code point above U+10FFFF too; valid UTF-8 kept)");
	has_str(s, "<skipped message=\"multi-node test\"/>", "JUnit skipped");
	free(s);

	s = render(2, r, 4);
	has_str(s, "{\"name\":\"ok1\",\"kind\":\"hardware\",\"node\":\"node-1\",\"passed\":true,\"run\":true,"
		"\"reason\":null,\"duration\":0.250,\"perf\":{}}", "JSON passing result");
	has_str(s, "\"passed\":false,\"run\":true,\"reason\":\"sanity: the output does not match /fine/\"",
		"JSON failure with reason");
	has_str(s, "\"perf\":{\"bw\":{\"value\":12,\"reference\":10,\"lower\":-0.10000000000000001,"
		"\"upper\":null,\"target\":\"default\",\"passed\":true}}", "JSON perf (inf upper is null)");
	free(s);

	test_report_files(r, 4);
	for (size_t i = 0; i < 4; i++)
		acceptance_result_free(&r[i]);
	acceptance_free(c);
}

/* The shipped example must stay valid. */
static void test_example(void)
{
	burst_err_t err;
	struct acceptance_conf *c = acceptance_load(BURST_ABS_SRCDIR "/etc/acceptance.conf.example", &err);

	if (!ok(c != NULL, "etc/acceptance.conf.example parses"))
		diag("%s", err.msg);
	if (c) {
		ok(c->ntests >= 3, "the example has tests");
		acceptance_free(c);
	}
	setenv("BURST_ACCEPTANCE_CONF", "/x/acc.conf", 1);
	is_str(acceptance_default_path(NULL), "/x/acc.conf", "$BURST_ACCEPTANCE_CONF");
	unsetenv("BURST_ACCEPTANCE_CONF");
	setenv("SLURM_CONF", "/etc/slurm-lab/slurm.conf", 1);
	is_str(acceptance_default_path(NULL), "/etc/slurm-lab/acceptance.conf", "beside $SLURM_CONF");
	is_str(acceptance_default_path("/a/b"), "/a/b", "explicit path wins");
	unsetenv("SLURM_CONF");
	is_str(acceptance_default_path(NULL), "/etc/slurm/acceptance.conf", "the fallback");
}

/* Open MPI 5.0.7's backtrace of a rank that segfaulted in MPI_Init under
 * srun --mpi=pmix (test_mpi_accept, Slurm 24.11), and other failures */
static void test_mpi_init_crash(void)
{
	const char *crash =
		"[burst-2:01234] *** Process received signal ***\n"
		"[burst-2:01234] Signal: Segmentation fault (11)\n"
		"[burst-2:01234] Failing at address: 0xe0\n"
		"[burst-2:01234] [ 4] /lib/x86_64-linux-gnu/libmpi.so.40(mca_pml_ob1_recv_frag_callback_match+0xaa) [0x7fe6b488973a]\n"
		"[burst-2:01234] [ 9] /lib/x86_64-linux-gnu/libopen-pal.so.80(opal_progress+0x84) [0x7fe6b3f96d74]\n"
		"[burst-2:01234] [10] /lib/x86_64-linux-gnu/libmpi.so.40(ompi_mpi_init+0x435) [0x7fe6b4693ad5]\n"
		"[burst-2:01234] [11] /lib/x86_64-linux-gnu/libmpi.so.40(MPI_Init+0x6f) [0x7fe6b46c449f]\n"
		"srun: error: burst-2: task 1: Segmentation fault\n";
	const char *later =   /* a crash after MPI_Init: the node's or the program's */
		"[burst-2:01234] *** Process received signal ***\n"
		"[burst-2:01234] [ 3] /lib/x86_64-linux-gnu/libmpi.so.40(MPI_Allreduce+0x1f) [0x7f]\n"
		"srun: error: burst-2: task 1: Segmentation fault\n";
	const char *note = acceptance_mpi_init_crash(crash);

	ok(note && strstr(note, "inside MPI_Init") && strstr(note, "open-mpi/ompi#12495"),
	   "a rank's signal in MPI_Init is named as Open MPI 5's known start-up failure");
	ok(acceptance_mpi_init_crash(later) == NULL, "a signal after MPI_Init is not");
	ok(acceptance_mpi_init_crash("srun: error: burst-2: task 1: Exited with exit code 1\n") == NULL,
	   "an exit status without a signal is not");
	ok(acceptance_mpi_init_crash("calls MPI_Init, then\n*** Process received signal ***\n") == NULL,
	   "MPI_Init outside a backtrace frame is not");
	ok(acceptance_mpi_init_crash(NULL) == NULL && acceptance_mpi_init_crash("") == NULL,
	   "no output: nothing");
}

int main(void)
{
	test_example();
	test_mpi_init_crash();
	test_parse_ok();
	test_parse_errors();
	test_perf();
	test_writers();
	return done_testing();
}
