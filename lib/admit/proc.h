/*
 * proc.h - what a program started by slurmctld (power-save programs,
 * PrologSlurmctld) or by the agent must do first, and small process helpers.
 */
#ifndef BURST_PROC_H
#define BURST_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"

/* Reopen any of fds 0-2 that is closed on /dev/null (slurmctld closes them). */
void proc_reopen_stdio(void);

/* Unblock every signal and restore default dispositions (slurmctld's
 * power-save thread blocks most; a daemon started from there must not). */
void proc_reset_signals(void);

/*
 * The value of variable name in process pid's initial environment
 * (/proc/PID/environ), copied into buf. Returns buf, or NULL if absent or
 * unreadable.
 */
char *proc_environ_get(int pid, const char *name, char *buf, size_t len);

/*
 * Run argv[0] (a path) with argv, default signal mask, and wait for it. Its
 * standard output goes into out and its standard error into errbuf (each
 * truncated to its size, trimmed, always terminated). Returns the exit
 * status, or -1 if it could not run or died of a signal.
 */
int proc_run(char *const argv[], char *out, size_t outlen, char *errbuf, size_t errlen);
/* proc_run with env ("NAME=value" strings, NULL-terminated) added to the
 * child's environment only: for secrets that must not be on a command line. */
int proc_run_env(char *const argv[], char *const env[], char *out, size_t outlen, char *errbuf,
		 size_t errlen);

/* What proc_capture saw of a command. */
struct proc_capture {
	char *output;            /* stdout and stderr together, at most cap bytes kept, then a
				  * note of how much more there was (caller frees) */
	double duration;         /* seconds, wall clock */
	bool timed_out;          /* it was killed at its timeout */
	int status;              /* its wait status otherwise */
};

/*
 * Run argv (argv[0] looked up in PATH) in a process group of its own, with
 * stdin from /dev/null, the default signal mask, and stdout and stderr
 * captured together (at most cap bytes kept). At timeout_s the group gets
 * SIGTERM, and SIGKILL grace_s later; when the command exits, whatever it
 * left running in its group is killed too (and so lets the pipe close).
 * Returns 0 with r filled (free r->output), or -1 with err if it could not
 * be started.
 */
int proc_capture(char *const argv[], double timeout_s, double grace_s, size_t cap,
		 struct proc_capture *r, burst_err_t *err);

/*
 * Why the command failed, naming it as what ("timed out after N s",
 * "WHAT was killed by signal N (name)", "WHAT exited with status N"), written
 * into buf; NULL when it exited 0.
 */
const char *proc_capture_failure(const struct proc_capture *r, const char *what, double timeout_s,
				 char *buf, size_t len);

#endif
