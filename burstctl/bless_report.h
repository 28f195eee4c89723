/*
 * bless_report.h - what a CI run's artifacts say may be blessed: the JUnit
 * reports (all green?) and the provenance records (which kernel and driver
 * versions the tested nodes ran), as contrib/gitlab-ci's node-acceptance job
 * leaves them in its artifacts directory.
 */
#ifndef BURST_BLESS_REPORT_H
#define BURST_BLESS_REPORT_H

#include <stddef.h>

struct bless_report {
	size_t njunit;          /* JUnit files read */
	size_t ncases;          /* test cases in them */
	size_t nrecords;        /* provenance records read */
	char **kernels;         /* RELEASE[:BUILDID], distinct */
	size_t nkernels;
	char **drivers;         /* NAME=VERSION, distinct */
	size_t ndrivers;
};

/*
 * Read the artifacts in directory dir: every *.xml file whose root element
 * is <testsuites> or <testsuite> is a JUnit report; every provenance-*.json
 * a provenance record (burst-node provenance). Succeeds (0, *out filled)
 * only for a green run: at least one JUnit report with at least one test
 * case, no <failure> or <error> in any (nor a failures= or errors= count
 * above 0), at least one provenance record, each naming a kernel release and
 * a node on which some test case ran (a name ending in @NODE). Returns 1
 * for a red report (failed cases) and 2 for anything else wrong, after a
 * message on stderr that names the file and what to do; nothing is filled
 * then. prog prefixes the messages.
 */
int bless_report_read(const char *prog, const char *dir, struct bless_report *out);

void bless_report_free(struct bless_report *r);

#endif
