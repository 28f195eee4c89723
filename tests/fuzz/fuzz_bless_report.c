/*
 * fuzz_bless_report.c - libFuzzer target for what `burstctl bless --report`
 * reads from a CI run's artifacts (bless_report_read): a JUnit report and a
 * node's provenance record, written to a private temporary directory as
 * report.xml and provenance-burst-1.json. The input is the report, a NUL
 * byte, and the record; without a NUL byte it is the record, beside a green
 * report of one test case run on burst-1. What a green run blesses must be
 * well-formed blessed-kernels and blessed-drivers entries.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../burstctl/bless_report.h"
#include "fuzz.h"
#include "policy.h"
#include "strutil.h"

FUZZ_TARGET(bless_report)
{
	static const char green[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites tests=\"1\" failures=\"0\" errors=\"0\">\n"
		"  <testsuite name=\"node-acceptance\" tests=\"1\" failures=\"0\" errors=\"0\">\n"
		"    <testcase classname=\"acceptance\" name=\"mpi-pingpong@burst-1\" time=\"2.5\"/>\n"
		"  </testsuite>\n</testsuites>\n";
	const uint8_t *nul = memchr(data, '\0', size);
	const uint8_t *rec = nul ? nul + 1 : data;
	size_t i, rlen = nul ? size - (size_t)(nul + 1 - data) : size;
	struct bless_report r;
	char *dir;
	int rc;

	if (nul)
		fuzz_file("report.xml", data, (size_t)(nul - data));
	else
		fuzz_file("report.xml", (const uint8_t *)green, sizeof(green) - 1);
	dir = xstrdup(fuzz_file("provenance-burst-1.json", rec, rlen));
	*strrchr(dir, '/') = '\0';
	rc = bless_report_read("fuzz_bless_report", dir, &r);
	if (rc == 0) {
		if (!r.nkernels || !r.nrecords || !r.ncases)
			abort();   /* green: at least one tested kernel */
		for (i = 0; i < r.nkernels; i++)
			if (!policy_valid_kernel(r.kernels[i]))
				abort();
		for (i = 0; i < r.ndrivers; i++)
			if (!policy_valid_driver(r.drivers[i]))
				abort();
		bless_report_free(&r);
	} else if (rc != 1 && rc != 2)
		abort();
	free(dir);
	return 0;
}
