/*
 * test_warm.c - a warm pool's decisions (lib/admit/warm.c): a member's
 * provenance against the record it was admitted with (kernel, drivers and
 * hardware compared; identity and software not), whether an idle node joins
 * the pool (room, budget), and whether a member taken runs acceptance again.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "tap.h"
#include "warm.h"

static const char base[] =
	"{\"format\":\"burst-provenance-1\","
	"\"identity\":{\"node\":\"burst-1\",\"instance_id\":\"i-1\"},"
	"\"kernel\":{\"release\":\"6.1.0-18-amd64\",\"build_id\":\"ab12\",\"version\":\"#1 SMP\",\"taint\":null},"
	"\"drivers\":{\"nvidia\":{\"version\":\"550.54.15\",\"source\":\"modinfo\"}},"
	"\"firmware\":{\"bios_version\":\"1.0\"},"
	"\"cpu\":{\"model\":\"Xeon X\",\"threads\":4},"
	"\"memory\":{\"total_bytes\":8589934592,\"hugepages\":{\"total\":0}},"
	"\"accelerators\":{\"count\":1,\"models\":{\"T4\":1}},"
	"\"interconnect\":{\"infiniband\":[]},"
	"\"software\":{\"packages\":{\"slurm\":\"22.05\"}}}";

/* base with one edit: the text from to replaced by to (once) */
static json_object *edited(const char *from, const char *to)
{
	char buf[4096];
	const char *p = from ? strstr(base, from) : NULL;

	if (!from)
		return json_tokener_parse(base);
	if (!p) {
		diag("no '%s' in the base record", from);
		return NULL;
	}
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - base), base, to, p + strlen(from));
	return json_tokener_parse(buf);
}

static void diff_case(const char *from, const char *to, int want, const char *want_why, const char *name)
{
	json_object *a = json_tokener_parse(base), *b = edited(from, to);
	char why[512];
	int n = warm_provenance_diff(a, b, why, sizeof(why));

	ok(n == want, "%s: %d part(s) differ (%d: %s)", name, want, n, why);
	if (want_why)
		has_str(why, want_why, "... named: %s", why);
	json_object_put(a);
	json_object_put(b);
}

int main(void)
{
	char why[512];

	/* ---- provenance: what a stopped instance must still be ---- */
	diff_case(NULL, NULL, 0, NULL, "the same record");
	diff_case("\"node\":\"burst-1\",\"instance_id\":\"i-1\"", "\"node\":\"burst-7\",\"instance_id\":\"i-1\"", 0, NULL,
		  "another node name (a member serves the node asked for)");
	diff_case("\"slurm\":\"22.05\"", "\"slurm\":\"24.11\"", 0, NULL, "software versions are not compared");
	diff_case("\"hugepages\":{\"total\":0}", "\"hugepages\":{\"total\":8}", 0, NULL,
		  "memory other than its total is not compared");
	diff_case("6.1.0-18-amd64", "6.1.0-20-amd64", 1, "kernel.release 6.1.0-18-amd64 -> 6.1.0-20-amd64",
		  "a new kernel release");
	diff_case("\"build_id\":\"ab12\"", "\"build_id\":\"cd34\"", 1, "kernel.build_id ab12 -> cd34",
		  "the same release rebuilt");
	diff_case("\"build_id\":\"ab12\",", "", 1, "kernel.build_id ab12 -> (none)", "a build id gone");
	diff_case("550.54.15", "550.90.07", 1, "drivers", "a driver's version");
	diff_case("\"bios_version\":\"1.0\"", "\"bios_version\":\"1.1\"", 1, "firmware", "firmware");
	diff_case("\"threads\":4", "\"threads\":2", 1, "cpu", "fewer CPU threads");
	diff_case("8589934592", "4294967296", 1, "memory.total_bytes", "less memory");
	diff_case("\"T4\":1", "\"A10G\":1", 1, "accelerators", "another accelerator");
	diff_case("\"infiniband\":[]", "\"infiniband\":[{\"port\":1}]", 1, "interconnect", "an InfiniBand port");
	diff_case("6.1.0-18-amd64\",\"build_id\":\"ab12\"", "6.1.0-20-amd64\",\"build_id\":\"cd34\"", 2,
		  "kernel.release 6.1.0-18-amd64 -> 6.1.0-20-amd64; kernel.build_id ab12 -> cd34",
		  "two parts: both named");
	{
		json_object *a = json_tokener_parse(base), *s = json_object_new_string("x");
		ok(warm_provenance_diff(a, s, why, sizeof(why)) == -1, "a record that is no object: -1");
		has_str(why, "the new provenance record is no JSON object", "... saying which");
		ok(warm_provenance_diff(NULL, a, why, sizeof(why)) == -1, "no admitted record: -1");
		has_str(why, "the admitted provenance record", "... saying which");
		json_object_put(a);
		json_object_put(s);
	}

	/* ---- an idle node: into the pool? ---- */
	ok(warm_keep(0, NAN, 0, 0, 0.01, why, sizeof(why)) == WARM_NO_POOL, "WarmPool=0: no pool");
	ok(warm_keep(2, NAN, 0, 0, 0.01, why, sizeof(why)) == WARM_KEEP, "room, no budget: kept");
	ok(warm_keep(2, NAN, 1, 0.01, 0.01, why, sizeof(why)) == WARM_KEEP, "one of two: kept");
	ok(warm_keep(2, NAN, 2, 0.02, 0.01, why, sizeof(why)) == WARM_FULL, "two of two: full");
	has_str(why, "the warm pool is full (2 of WarmPool=2)", "... saying so");
	ok(warm_keep(3, 0.03, 2, 0.02, 0.01, why, sizeof(why)) == WARM_KEEP, "exactly at the budget: kept");
	ok(warm_keep(3, 0.025, 2, 0.02, 0.01, why, sizeof(why)) == WARM_OVER_BUDGET, "past the budget: refused");
	has_str(why, "would cost 0.0300 USD per hour with it (2 members at 0.0200, this one 0.0100), over WarmPoolBudget=0.0250",
		"... with the figures");
	ok(warm_keep(3, 0.005, 0, 0, 0.01, why, sizeof(why)) == WARM_OVER_BUDGET,
	   "a budget below one member's price: never a member");
	{
		/* ten members of 0.1 (not exact in binary) under a budget of 1.0 */
		double cost = 0;
		unsigned i;
		for (i = 0; i < 9; i++)
			cost += 0.1;
		ok(warm_keep(20, 1.0, 9, cost, 0.1, why, sizeof(why)) == WARM_KEEP,
		   "the tenth member of 0.1 under WarmPoolBudget=1.0 (the sum's rounding is no overrun)");
	}

	/* ---- a member taken: acceptance again? ---- */
	{
		struct warm_member m = { 1000.0, "b-7", "suite-3" };
		ok(warm_needs_acceptance(&m, 1000.0 + 3600, 86400, "b-7", "suite-3", why, sizeof(why)) == 0,
		   "an hour old, same blessings and suite: its admission stands");
		ok(warm_needs_acceptance(&m, 1000.0 + 3600, 86400, "b-8", "suite-3", why, sizeof(why)) == 1,
		   "new blessings: acceptance again");
		has_str(why, "the blessings changed (b-7 -> b-8)", "... saying so");
		ok(warm_needs_acceptance(&m, 1000.0 + 3600, 86400, "b-7", "suite-4", why, sizeof(why)) == 1,
		   "a new acceptance suite: acceptance again");
		has_str(why, "the acceptance suite changed (suite-3 -> suite-4)", "... saying so");
		ok(warm_needs_acceptance(&m, 1000.0 + 86401, 86400, "b-7", "suite-3", why, sizeof(why)) == 1,
		   "older than WarmPoolMaxAge: acceptance again");
		has_str(why, "admitted 86401 s ago, over WarmPoolMaxAge=86400 s", "... saying so");
		ok(warm_needs_acceptance(&m, 1000.0 + 86400, 86400, "b-7", "suite-3", why, sizeof(why)) == 0,
		   "exactly WarmPoolMaxAge old: not yet");
		ok(warm_needs_acceptance(&m, 1000.0 + 90000, 86400, "b-8", "suite-4", why, sizeof(why)) == 1 &&
		   strstr(why, "blessings") && strstr(why, "suite") && strstr(why, "WarmPoolMaxAge"),
		   "all three: all named (%s)", why);
		m.acceptance = "";
		ok(warm_needs_acceptance(&m, 1000.0 + 60, 86400, "b-7", "suite-3", why, sizeof(why)) == 1,
		   "admitted with no suite, one configured now: acceptance");
		has_str(why, "the acceptance suite changed (none -> suite-3)", "... saying so");
	}
	return done_testing();
}
