/*
 * bless_report.h - what a CI run's artifacts say may be blessed: the JUnit
 * reports (every node's required suites passed?) and the provenance records
 * (which kernel and driver versions the tested nodes ran), as
 * contrib/gitlab-ci's node-acceptance job leaves them in its artifacts
 * directory.
 */
#ifndef BURST_BLESS_REPORT_H
#define BURST_BLESS_REPORT_H

#include <stddef.h>

/* The suites a node must have passed a test case of, by default: the
 * JUnit testsuite names the CI job's two commands write (burst-node accept:
 * "acceptance", the node-local tests; burstctl accept: "mpi-acceptance",
 * the multi-node tests across the job's nodes). */
#define BLESS_DEFAULT_SUITES "acceptance,mpi-acceptance"

/* How much of a run is read at most (a 48 MB report took 1.1 GB). */
#define BLESS_DEFAULT_MAX_FILE_MIB 16     /* one artifact file */
#define BLESS_DEFAULT_MAX_FILES 1000      /* artifact files (*.xml, provenance-*.json) */
#define BLESS_DEFAULT_MAX_CASES 100000    /* test cases in all the reports */

struct bless_limits {
	size_t max_file_bytes;
	size_t max_files;
	size_t max_cases;
};

/* One provenance record of the run. */
struct bless_record {
	char *file;             /* provenance-NODE.json */
	char *node;             /* identity.node (else NODE of the file name) */
	char *provenance_id;    /* sha256 of its canonical form (provenance_id) */
	char *kernel;           /* RELEASE[:BUILDID] */
};

struct bless_report {
	size_t njunit;          /* JUnit files read */
	size_t ncases;          /* test cases in them */
	size_t npassed;         /* ... that passed (no failure, error or skipped) */
	size_t nskipped;        /* ... skipped */
	struct bless_record *records;   /* the provenance records read */
	size_t nrecords;
	char **kernels;         /* RELEASE[:BUILDID], distinct */
	size_t nkernels;
	char **drivers;         /* NAME=VERSION, distinct */
	size_t ndrivers;
};

/* The defaults above. */
void bless_limits_default(struct bless_limits *l);

/*
 * Read the artifacts in directory dir: every *.xml file whose root element
 * is <testsuites> or <testsuite> is a JUnit report; every provenance-*.json
 * a provenance record (burst-node provenance). A test case passed when it
 * has no <failure>, <error> or <skipped>; it belongs to the suite of its
 * nearest <testsuite name=...> and ran on the nodes after the last '@' of
 * its name (TEST@NODE, or TEST@HOSTLIST for a multi-node test).
 *
 * Succeeds (0, *out filled) only for a green run: no <failure> or <error>
 * in any report (nor a failures= or errors= count above 0), at least one
 * provenance record, each naming a kernel release and a node that passed a
 * test case of every suite in suites (a comma list; NULL or "": no suite
 * required, a passed case of any suite). Returns 1 for a red report
 * (failed or errored cases) and 2 for anything else wrong (a node that did
 * not pass a required suite, an artifact over the limits, one that is not
 * a regular file or cannot be parsed), after a message on stderr that
 * names the file and what to do; nothing is filled then. prog prefixes the
 * messages; limits NULL: the defaults.
 */
int bless_report_read(const char *prog, const char *dir, const char *suites,
		      const struct bless_limits *limits, struct bless_report *out);

void bless_report_free(struct bless_report *r);

#endif
