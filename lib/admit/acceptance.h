/*
 * acceptance.h - the node acceptance suite: acceptance.conf (tests, their
 * sanity and performance checks, container runtimes), the checks applied to
 * a test's output, and the result model with its TAP, JUnit XML and JSON
 * writers (shared by burst-node accept and burstctl accept).
 *
 * acceptance.conf follows slurm.conf conventions (see acceptance.conf(5)):
 *
 *   Test=mem-bw Kind=hardware Command="stream" Sanity="Solution Validates"
 *        Perf="bw=Triad: +([0-9.]+)" Reference=default:1000:-0.5:+1.0 Timeout=60
 *   Runtime=charliecloud Template="ch-run {image} -- {command}" ImageDir=/images
 */
#ifndef BURST_ACCEPTANCE_H
#define BURST_ACCEPTANCE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "burst_err.h"

#define ACCEPTANCE_DEFAULT_TIMEOUT 60        /* seconds */
#define ACCEPTANCE_DEFAULT_RUNTIME "charliecloud"
#define ACCEPTANCE_DEFAULT_TEMPLATE "ch-run {image} -- {command}"
#define ACCEPTANCE_DEFAULT_IMAGE_DIR "/var/lib/slurm-burst/images"

enum acceptance_kind {
	ACCEPTANCE_HARDWARE,     /* a command on the node itself */
	ACCEPTANCE_CONTAINER,    /* a command in a container image, through a runtime */
	ACCEPTANCE_MPI,          /* multi-node; run by burstctl accept, not on one node */
};

/* A performance reference: VALUE with relative tolerances LOWER (<= 0) and
 * UPPER (>= 0): the value passes when VALUE*(1+LOWER) <= v <= VALUE*(1+UPPER)
 * (bounds taken on |VALUE| for negative references). */
struct acceptance_ref {
	char *target;            /* instance type, accelerator model, or "default" */
	char *var;               /* the Perf variable it is for (never NULL once loaded) */
	double value, lower, upper;
	int line;
};

/* Perf=NAME=REGEX: REGEX (POSIX ERE) has one capture group, a number. */
struct acceptance_perf {
	char *name;
	char *pattern;
	regex_t re;
};

struct acceptance_runtime {
	char *name;              /* Runtime=NAME */
	char *template;          /* Template= with {image} and {command} */
	char *image_dir;         /* ImageDir= where Image=NAME is looked for */
};

struct acceptance_test {
	char *name;              /* Test=NAME */
	enum acceptance_kind kind;
	char *command;           /* Command= shell text (sh -c) */
	char *image;             /* Image= a name under the runtime's ImageDir, or a path */
	char *runtime;           /* Runtime= name; NULL: the first Runtime= line or the built-in */
	char *sanity;            /* Sanity= POSIX ERE that must match the output */
	regex_t sanity_re;
	struct acceptance_perf *perf;
	size_t nperf;
	struct acceptance_ref *refs;
	size_t nrefs;
	int timeout;             /* seconds */
	int nodes;               /* Nodes= (mpi tests; 0 when not given) */
	char *file;              /* where the test was defined */
	int line;
};

struct acceptance_conf {
	struct acceptance_test *tests;
	size_t ntests;
	struct acceptance_runtime *runtimes;  /* the Runtime= lines, in order */
	size_t nruntimes;
};

/*
 * Where acceptance.conf is: explicit if given, else $BURST_ACCEPTANCE_CONF,
 * else beside slurm.conf ($SLURM_CONF's directory), else
 * /etc/slurm/acceptance.conf. Returns a static buffer or the argument.
 */
const char *acceptance_default_path(const char *explicit_path);

/*
 * Read acceptance.conf. On error returns NULL with every problem in err, one
 * per line, each "file:line: ..." naming the word and the nearest key.
 * The result is the caller's: acceptance_free() it.
 */
struct acceptance_conf *acceptance_load(const char *path, burst_err_t *err);

/* The same from text in memory; name is used in messages as the file name. */
struct acceptance_conf *acceptance_parse(const char *text, const char *name, burst_err_t *err);

void acceptance_free(struct acceptance_conf *conf);

const char *acceptance_kind_name(enum acceptance_kind kind);
/* Parse "hardware"/"container"/"mpi" (case-insensitive); -1 if none. */
int acceptance_kind_parse(const char *s);

/* The runtime a test uses (its Runtime=, else the first Runtime= line, else
 * the built-in Charliecloud one). Points into conf or to static data. */
const struct acceptance_runtime *acceptance_runtime_of(const struct acceptance_conf *conf,
						       const struct acceptance_test *t);

/*
 * The shell command line that runs the test: the command itself for hardware
 * and mpi tests; for container tests the runtime's template with {image}
 * replaced by the image's path (shell-quoted) and {command} by the command.
 * Returns allocated memory (caller frees).
 */
char *acceptance_command_line(const struct acceptance_conf *conf, const struct acceptance_test *t);

/* What a node is, for choosing references and naming results. */
struct acceptance_node {
	const char *name;
	const char *instance_type;       /* may be NULL */
	const char *accelerator_model;   /* may be NULL */
};

/*
 * The reference for variable var on node: one whose target is the node's
 * instance type, else its accelerator model, else "default" (targets compare
 * case-insensitively). NULL when there is none. Points into t.
 */
const struct acceptance_ref *acceptance_pick_reference(const struct acceptance_test *t,
						       const char *var,
						       const struct acceptance_node *node);

enum acceptance_status { ACCEPTANCE_PASS, ACCEPTANCE_FAIL, ACCEPTANCE_NOT_RUN };

struct acceptance_perf_result {
	char *name;
	bool have_value;
	double value;
	bool have_ref;
	double reference, lower, upper;  /* the chosen reference and its tolerances */
	char *target;                    /* what the reference was for */
	bool passed;
};

/* The result of one test on one node. Every string is owned by the result. */
struct acceptance_result {
	char *test;
	char *node;
	char *classname;         /* JUnit classname: the instance type, else "unknown" */
	enum acceptance_kind kind;
	enum acceptance_status status;
	char *reason;            /* why it failed or was not run; NULL when passed */
	char *output;            /* captured (capped) output; may be NULL */
	double duration;         /* seconds */
	struct acceptance_perf_result *perf;
	size_t nperf;
};

/* Initialise res for test t on node (status PASS, no output). */
void acceptance_result_init(struct acceptance_result *res, const struct acceptance_test *t,
			    const struct acceptance_node *node);

/* Mark res failed (or not run) with a reason; the first reason given wins. */
void acceptance_result_fail(struct acceptance_result *res, enum acceptance_status status,
			    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Apply the sanity pattern and the performance checks of t to output (which
 * res keeps a copy of): a missing sanity match, a performance value that
 * cannot be found, a value out of tolerance, or no reference for the node
 * fails res with a reason. Returns true when res still passes.
 */
bool acceptance_check(const struct acceptance_test *t, const char *output,
		      const struct acceptance_node *node, struct acceptance_result *res);

void acceptance_result_free(struct acceptance_result *res);

/*
 * Does output (a failed MPI test's) show a rank killed by a signal inside
 * MPI_Init, in Open MPI's backtrace ("*** Process received signal ***", a
 * frame in MPI_Init or ompi_mpi_init)? Then a note for the failure reason
 * that names the known start-up failure of Open MPI 5 under srun
 * --mpi=pmix, else NULL. Static text.
 */
const char *acceptance_mpi_init_crash(const char *output);

/* Writers: n results. TAP version 13 with '#' diagnostics; JUnit XML with
 * one testsuite named suite; JSON array for the agent. Return 0, or -1 on a
 * write error (errno set). */
int acceptance_write_tap(FILE *f, const struct acceptance_result *r, size_t n);
int acceptance_write_junit(FILE *f, const char *suite, const struct acceptance_result *r, size_t n);
int acceptance_write_json(FILE *f, const struct acceptance_result *r, size_t n);

/*
 * A report file of n results in the format `what` ("TAP", "JUnit" with one
 * testsuite named suite, or "JSON"): written beside path and renamed over it,
 * so that a reader (a CI job, bless --from-report) never sees half a report
 * and a failed write leaves an older report whole; a path that exists and is
 * not a regular file (/dev/stdout, a pipe) is written in place. 0, or -1
 * with why (naming the file and what to do) in err.
 */
int acceptance_write_file(const char *path, const char *what, const char *suite,
			  const struct acceptance_result *r, size_t n, char *err, size_t errlen);

/* The reports a command was asked for: TAP to tap (stdout when NULL), JUnit
 * (testsuite suite) to junit and JSON to json when not NULL. Each failure is
 * said on stderr after "prog: ". 0, or -1 when any report was not written. */
int acceptance_write_reports(const char *prog, const char *tap, const char *junit,
			     const char *json, const char *suite,
			     const struct acceptance_result *r, size_t n);

#endif
