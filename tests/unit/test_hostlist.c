/*
 * test_hostlist.c - Slurm host list expressions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "slurm_compat.h"
#include "strutil.h"
#include "tap.h"

static char *expand(const char *expr, size_t max, burst_err_t *err)
{
	struct hostlist hl = { NULL, 0, 0 };
	struct strbuf sb;
	size_t i;

	if (hostlist_expand(expr, &hl, max, err) < 0) {
		hostlist_free(&hl);
		return NULL;
	}
	sb_init(&sb);
	for (i = 0; i < hl.n; i++)
		sb_addf(&sb, "%s%s", i ? " " : "", hl.names[i]);
	hostlist_free(&hl);
	return sb_take(&sb);
}

static const struct {
	const char *expr, *want;
} good[] = {
	{ "burst-[1-4,7]", "burst-1 burst-2 burst-3 burst-4 burst-7" },
	{ "gpu-[01-03]", "gpu-01 gpu-02 gpu-03" },
	{ "gpu-[08-10]", "gpu-08 gpu-09 gpu-10" },
	{ "r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2" },
	{ "head,burst-[1-2],gpu-3", "head burst-1 burst-2 gpu-3" },
	{ "n[5]", "n5" },
	{ "plain", "plain" },
	/* as Slurm's scontrol show hostnames has them (22.05 and 24.11) */
	{ "a,,b", "a b" },
	{ ",a,", "a" },
	{ "a b\tc", "a b c" },
	{ "[1-2]", "1 2" },
	{ "n[1,1]", "n1 n1" },
	{ "n[9-10]", "n9 n10" },
	{ "n[0001-2]", "n0001 n0002" },
	{ "n[1-2],n03", "n1 n2 n03" },
	{ "x[1-2]y[3]", "x1y3 x2y3" },
	{ "n[1,2]m[3,4] o", "n1m3 n1m4 n2m3 n2m4 o" },
	/* three brackets: the middle one varies slowest, the last fastest */
	{ "a[1-2]b[3-4]c[5-6]", "a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6" },
};

static const struct {
	const char *expr, *frag;
} bad[] = {
	{ "burst-[1-4", "missing ']' in host list 'burst-[1-4' at character 7" },
	{ "x[", "missing ']' in host list 'x[' at character 2" },
	{ "a,x[", "at character 4" },
	{ "burst-[4-1]", "range 4-1 goes backwards" },
	{ "burst-[a-b]", "expected a number in host range of 'burst-[a-b]' at character 8" },
	{ "a,x[1-2]y[q]", "expected a number in host range of 'a,x[1-2]y[q]' at character 11" },
	{ "burst-[1-]", "expected a number after '-' in host list 'burst-[1-]' at character 10" },
	{ "r[1-2]n[1-", "missing ']' in host list 'r[1-2]n[1-' at character 8" },
	{ "r[1-2]n[1-x],b", "expected a number after '-' in host list 'r[1-2]n[1-x],b' at character 11" },
	{ "n[1],m[2", "missing ']' in host list 'n[1],m[2' at character 7" },
	{ "burst-1]", "unbalanced ']'" },
	{ "", "empty host list" },
	{ ",", "host list ',' names no host" },
	{ "a[1[2]]", "'[' inside brackets in host list 'a[1[2]]' at character 4" },
	{ "a]b[1-2]", "unbalanced ']' in host list 'a]b[1-2]' at character 2" },
	{ "n[1-70000]", "range 1-70000 in host list 'n[1-70000]' names more than 65536 hosts, which Slurm refuses" },
	{ "n[1-100]", "more than 10 names" },
	{ "n[1-2;3]", "unexpected ';' in host range of 'n[1-2;3]' at character 6" },
	{ "burst-[]", "empty range '[]' in host list 'burst-[]' at character 7" },
	{ "a,r[1-2]n[]", "empty range '[]' in host list 'a,r[1-2]n[]' at character 10" },
	/* Slurm 22.05's scontrol show hostnames: "Invalid hostlist: n[1,]" */
	{ "n[1,]", "expected a number after ',' in host range of 'n[1,]' at character 5" },
	{ "n[1-2,]x", "expected a number after ',' in host range of 'n[1-2,]x' at character 7" },
	{ "n[1,,2]", "expected a number in host range of 'n[1,,2]' at character 5" },
};

int main(void)
{
	struct hostlist hl = { NULL, 0, 0 };
	burst_err_t err;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *got = expand(good[i].expr, 1000, &err);
		is_str(got, good[i].want, "%s", good[i].expr);
		free(got);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *got = expand(bad[i].expr, 10, &err);
		ok(got == NULL, "'%s' is refused", bad[i].expr);
		if (!got)
			has_str(err.msg, bad[i].frag, "'%s': %s", bad[i].expr, bad[i].frag);
		free(got);
	}
	ok(hostlist_expand("burst-[1-999999999]", &hl, 65536, &err) == -1,
	   "a huge range is refused before it is expanded");
	hostlist_free(&hl);
	ok(hostlist_expand("a-[1-3],b", &hl, 100, &err) == 0, "expand for find");
	ok(hostlist_find(&hl, "a-2") == 1, "find a-2 at 1");
	ok(hostlist_find(&hl, "b") == 3, "find b at 3");
	ok(hostlist_find(&hl, "a-4") == -1, "a-4 is not there");
	/* found by tests/fuzz/fuzz_resume: the names of the good items before a
	 * bad one were left in hl, and callers that skip a bad list leaked them */
	ok(hostlist_expand("c-[1-2],d-[1,x]", &hl, 100, &err) == -1, "a bad second item is refused");
	ok(hl.n == 4 && !strcmp(hl.names[3], "b"), "... and nothing of it is appended (%zu names)", hl.n);
	hostlist_free(&hl);
	ok(hostlist_expand("e-[1-3],f]", &hl, 100, &err) == -1 && hl.n == 0,
	   "a list refused at its end leaves an empty hl empty");
	hostlist_free(&hl);
	/* found by tests/fuzz/fuzz_resume: brackets of small ranges multiply;
	 * 2^30 names were made a million at a time before the limit said no */
	{
		char big[256] = "n";
		int k;
		for (k = 0; k < 30; k++)
			strcat(big, "[1-2]");
		ok(hostlist_expand(big, &hl, 1 << 20, &err) == -1 && hl.n == 0,
		   "2^30 names from 30 brackets are refused before they are made");
		has_str(err.msg, "host list 'n[1-2][1-2]", "... by the count of the list as written, not by running out at a name");
		has_str(err.msg, "expands to more than 1048576 names", "... saying so");
		hostlist_free(&hl);
	}
	/* the same fuzz target: half a million names of 400 bytes each was
	 * within the count and took seconds and 200 MB */
	{
		char longname[512];
		memset(longname, 'x', 400);
		strcpy(longname + 400, "[1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2][1-2]");
		ok(hostlist_expand(longname, &hl, 1 << 20, &err) == -1 && hl.n == 0,
		   "2^19 names of 400 bytes are refused before they are made");
		has_str(err.msg, "expands to more than 64 MiB of names", "... saying so");
		hostlist_free(&hl);
	}
	ok(hostlist_expand("node[000001-050000,050001-100000]", &hl, 1 << 20, &err) == 0 && hl.n == 100000,
	   "a hundred thousand short names are fine");
	hostlist_free(&hl);
	/* the same fuzz target: a number past ULONG_MAX saturated strtoul, and
	 * the range loop wrapped around, making a million names */
	ok(hostlist_expand("N[99999999999999999999999999]", &hl, 1 << 20, &err) == -1 && hl.n == 0,
	   "a range number of 26 digits is refused");
	has_str(err.msg, "number too long (over 18 digits)", "... saying so");
	hostlist_free(&hl);
	ok(hostlist_expand("N[1-99999999999999999999]", &hl, 1 << 20, &err) == -1 && hl.n == 0,
	   "a range end of 20 digits is refused");
	hostlist_free(&hl);
	ok(hostlist_expand("N[999999999999999998-999999999999999999]", &hl, 10, &err) == 0 && hl.n == 2 &&
	   !strcmp(hl.names[1], "N999999999999999999"), "18 digits are fine");
	hostlist_free(&hl);
	ok(hostlist_expand("a[1-3]b[1-2]", &hl, 6, &err) == 0 && hl.n == 6, "3 x 2 names within a limit of 6");
	hostlist_free(&hl);
	ok(hostlist_expand("x,a[1-3]b[1,2]", &hl, 6, &err) == -1 && hl.n == 0, "1 + 3 x 2 names over a limit of 6");
	hostlist_free(&hl);
	/* a suffix after the last bracket: Slurm 23.11 takes it, 22.05 does not */
	{
		char *got = expand("n[1-2]-y", 10, &err);
#if BURST_SLURM_AT_LEAST(23, 11)
		is_str(got, "n1-y n2-y", "a suffix after a bracket is taken, as Slurm %s does", BURST_SLURM_VERSION);
#else
		ok(got == NULL, "a suffix after a bracket is refused, as Slurm %s does", BURST_SLURM_VERSION);
		has_str(err.msg, "host list 'n[1-2]-y': text after the last ']' ('-y' at character 7), which Slurm",
			"... saying where");
#endif
		free(got);
		got = expand("n[1-2]-y[3]", 10, &err);
		is_str(got, "n1-y3 n2-y3", "text after a bracket that is not the last is taken on every release");
		free(got);
	}
	return done_testing();
}
