/*
 * test_spool_read.c - the agent reads a spool request only if it is a
 * regular file of root or SlurmUser within the size cap: a FIFO is refused
 * without waiting for a writer, a symbolic link (to /dev/zero) is not
 * followed, another user's file and an oversized one are refused. And what
 * it read is a request only if spool_request_parse says so: one JSON object
 * with a known "op" and a host list in "nodes"; anything else is refused
 * with a message naming what is wrong (an "op" of null once crashed the
 * agent).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool.h"
#include "wire.h"
#include "tap.h"

/* wire_spool_decode on text: 0 and the op and node count, or -1 and a
 * message holding want */
static void parse_len(const char *text, size_t len, const char *want, const char *what)
{
	struct wire_spool r;
	burst_err_t err;
	int rc = wire_spool_decode(text, len, 100, &r, &err);

	if (!want) {
		ok(rc == 0 && r.nodes && r.names.n > 0, "%s: a request (%s of %zu nodes)", what,
		   rc == 0 ? wire_spool_op_name(r.op) : err.msg, rc == 0 ? r.names.n : 0);
		wire_spool_free(&r);
	} else
		ok(rc < 0 && strstr(err.msg, want) && !r.nodes && !r.njobs && !r.names.n, "%s: refused (%s)", what,
		   rc < 0 ? err.msg : "taken");
}

static void parse_case(const char *text, const char *want, const char *what)
{
	parse_len(text, strlen(text), want, what);
}

static void parse_cases(void)
{
	static const char nul[] = "{\"op\":\"resume\",\"nodes\":\"n1\"}\0{}";
	struct wire_spool r;
	burst_err_t err;
	const char *t = "{\"op\":\"resume\",\"nodes\":\"n[1-3]\",\"jobs\":[]}\n";

	ok(wire_spool_decode(t, strlen(t), 100, &r, &err) == 0 && r.op == WIRE_OP_RESUME && r.names.n == 3 &&
	   !strcmp(r.names.names[2], "n3"), "a resume of n[1-3], line end after it: op resume, nodes n1 n2 n3");
	wire_spool_free(&r);
	parse_case("{\"op\":\"suspend\",\"nodes\":\"n1\"}", NULL, "suspend");
	parse_case("{\"op\":\"resume-fail\",\"nodes\":\"n1,n2\"}", NULL, "resume-fail");
	parse_case("{\"op\":\"early\",\"nodes\":\"n1\",\"slurm_job_id\":\"7\"}", NULL, "early");
	parse_case("{\"op\":null,\"nodes\":\"n1\"}", "\"op\" is not a string", "op null");
	parse_case("{\"nodes\":\"n1\"}", "\"op\" is missing", "no op");
	parse_case("{\"op\":\"reboot\",\"nodes\":\"n1\"}", "\"op\" is \"reboot\": not resume", "op reboot");
	parse_case("{\"op\":\"resume\",\"nodes\":[\"n1\"]}", "\"nodes\" is not a string", "nodes an array");
	parse_case("{\"op\":\"resume\"}", "\"nodes\" is missing", "no nodes");
	parse_case("{\"op\":\"resume\",\"nodes\":\"n[1-101]\"}", "\"nodes\": ", "101 nodes, 100 allowed");
	parse_case("{\"op\":\"resume\",\"nodes\":\"n[1-\"}", "\"nodes\": ", "nodes n[1-");
	parse_case("[{\"op\":\"resume\",\"nodes\":\"n1\"}]", "not a JSON object but array", "an array");
	parse_case("{\"op\":\"resume\",\"nodes\":\"n1\"} x", "text after the JSON value, at byte 29",
		   "text after it");
	parse_case("{\"op\":\"resume\",", "not JSON: it ends early", "cut short");
	parse_len(nul, sizeof(nul) - 1, "a NUL byte at byte 28", "a NUL byte after it");
	parse_case("", "not JSON", "empty");
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

int main(void)
{
	char dir[] = "/var/tmp/test_spool_read.XXXXXX", path[512];
	burst_err_t err;
	char *t;
	size_t len = 0;
	uid_t me = geteuid(), owner = me;

	parse_cases();
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/a.json", dir);
	put(path, "{\"op\":\"resume\",\"nodes\":\"n1\"}");
	t = spool_read(dir, "a.json", owner, 1024, &len, &err);
	ok(t && !strcmp(t, "{\"op\":\"resume\",\"nodes\":\"n1\"}") && len == 28, "a regular request is read (%zu bytes)",
	   len);
	free(t);
	/* the buffer is the request's size, not the cap's (4 MiB for the agent,
	 * which took the whole cap for every request it read) */
	t = spool_read(dir, "a.json", owner, 4u << 20, &len, &err);
	ok(t && len == 28 && malloc_usable_size(t) < 4096, "a small request takes a small buffer (%zu bytes)",
	   t ? malloc_usable_size(t) : 0);
	free(t);

	/* a file larger than stat said (it grew meanwhile): /proc/self/status
	 * is a regular file of size 0 with a page of text */
	t = spool_read("/proc/self", "status", me, 1 << 20, &len, &err);
	ok(t && !strncmp(t, "Name:", 5) && strstr(t, "\nPid:") && len > 500 && strlen(t) == len,
	   "a file that grows after its stat is read whole (%zu bytes)", len);
	free(t);
	t = spool_read("/proc/self", "status", me, 100, &len, &err);
	ok(!t && strstr(err.msg, "more than a request may have (100 bytes)"),
	   "... and refused once it grows past the cap (%s)", t ? "read" : err.msg);
	free(t);

	snprintf(path, sizeof(path), "%s/fifo.json", dir);
	ok(mkfifo(path, 0600) == 0, "a FIFO named fifo.json");
	t = spool_read(dir, "fifo.json", owner, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "not a regular file"), "refused without waiting for a writer (%s)", err.msg);

	snprintf(path, sizeof(path), "%s/zero.json", dir);
	ok(symlink("/dev/zero", path) == 0, "a symbolic link zero.json -> /dev/zero");
	t = spool_read(dir, "zero.json", owner, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "symbolic link"), "not followed (%s)", err.msg);

	snprintf(path, sizeof(path), "%s/big.json", dir);
	put(path, "{\"op\":\"resume\",\"nodes\":\"n[1-1000]\",\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}");
	t = spool_read(dir, "big.json", owner, 32, NULL, &err);
	ok(!t && strstr(err.msg, "more than a request may have"), "a request over the cap is refused (%s)", err.msg);

	/* a file neither root's nor SlurmUser's: as root, give it to nobody;
	 * otherwise it is ours and SlurmUser is someone else */
	snprintf(path, sizeof(path), "%s/other.json", dir);
	put(path, "{}");
	if (me == 0)
		ok(chown(path, 65534, 65534) == 0, "other.json belongs to uid 65534");
	else {
		owner = me + 1;
		ok(1, "other.json belongs to uid %u, SlurmUser is uid %u", (unsigned)me, (unsigned)owner);
	}
	t = spool_read(dir, "other.json", me == 0 ? 64030 : owner, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "not root or SlurmUser"), "another user's file is refused (%s)", err.msg);
	t = spool_read(dir, "missing.json", me, 1024, NULL, &err);
	ok(!t && strstr(err.msg, "missing.json: cannot open"), "a missing file names itself (%s)", err.msg);

	/* the listing: the .json names in order, no dot files, nothing else */
	{
		char **names, sub[400];
		size_t i;

		snprintf(sub, sizeof(sub), "%s/list", dir);
		names = spool_list(sub, &err);
		ok(names && !names[0], "spool_list of a missing directory: an empty list");
		spool_list_free(names);
		if (mkdir(sub, 0700) == 0) {
			static const char *const files[] = { "c.json", "a.json", ".b.json", "d.txt", "b.json" };
			for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
				snprintf(path, sizeof(path), "%.400s/%.20s", sub, files[i]);
				put(path, "{}");
			}
		}
		names = spool_list(sub, &err);
		ok(names && names[0] && names[1] && names[2] && !names[3] && !strcmp(names[0], "a.json") &&
		   !strcmp(names[1], "b.json") && !strcmp(names[2], "c.json"),
		   "spool_list: a.json b.json c.json, in order, without .b.json and d.txt");
		spool_list_free(names);
	}

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path) != 0)
		return 1;
	return done_testing();
}
