/*
 * proc.h - what a program started by slurmctld (power-save programs,
 * PrologSlurmctld) or by the agent must do first, and small process helpers.
 */
#ifndef BURST_PROC_H
#define BURST_PROC_H

#include <stddef.h>

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

#endif
