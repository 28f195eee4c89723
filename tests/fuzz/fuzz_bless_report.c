/*
 * fuzz_bless_report.c - libFuzzer target for what `burstctl bless --report`
 * reads from a CI run's artifacts (bless_report_read): a JUnit report and a
 * node's provenance record, written to a private temporary directory as
 * report.xml and provenance-burst-1.json. The input is the report, a NUL
 * byte, and the record; without a NUL byte it is the record, beside a green
 * report of one test case of suite "acceptance" run on burst-1 (the suite
 * required here). What a green run blesses must be well-formed
 * blessed-kernels and blessed-drivers entries, from records of a node that
 * passed a case, each with a provenance id.
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
		"  <testsuite name=\"acceptance\" tests=\"1\" failures=\"0\" errors=\"0\">\n"
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
	rc = bless_report_read("fuzz_bless_report", dir, "acceptance", NULL, &r);
	if (rc == 0) {
		if (!r.nkernels || !r.nrecords || !r.ncases || !r.npassed || r.npassed + r.nskipped > r.ncases)
			abort();   /* green: at least one tested kernel, a case passed */
		for (i = 0; i < r.nrecords; i++)
			if (!r.records[i].node || !r.records[i].kernel || !r.records[i].provenance_id ||
			    strlen(r.records[i].provenance_id) != 64)
				abort();
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
