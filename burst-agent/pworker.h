/*
 * pworker.h - provider calls off the poll loop. Each configured provider
 * has one worker thread that owns its driver: every call to that driver
 * (launch, terminate, exists, list, console, ended) is a job queued to it
 * and run there, one at a time, in order, so a driver's own state (the aws
 * batch journal, its EC2 clients) is never touched by two threads. The
 * poll loop waits on pworker_fd() beside its sockets; pworker_collect()
 * hands each finished job back to the loop (its done function), where the
 * outcome is recorded. Only the job's run function runs on the worker, and
 * it touches nothing but the job and the driver. A job may run in steps
 * (pjob.again): between two of its steps the worker runs the jobs queued
 * before its next step, so that a long call (a listing of thousands of
 * instances) holds up a launch by one step, not by all of it.
 */
#ifndef BURST_PWORKER_H
#define BURST_PWORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"
#include "provider.h"

struct pworker;

struct pjob {
	struct pjob *next;
	struct pworker *w;
	/* on the worker: the call itself (ops and drv are the worker's driver) */
	void (*run)(struct pjob *j, const struct provider_ops *ops, struct provider *drv);
	/* on the loop: take the outcome (ran) or only let go (!ran: the worker
	 * stopped before running it); frees the job */
	void (*done)(struct pjob *j, bool ran);
	bool sync;               /* pworker_call: the caller waits, done is not called */
	bool again;              /* set by run: the job is not over; it is queued
				  * again at the tail, so that what was queued
				  * meanwhile runs before its next run (a long call
				  * made of steps, as a listing page by page). A job
				  * the worker stops before its end is let go:
				  * done(j, false). Cleared before each run. */
	bool finished;
	double queued;           /* mono() when queued */
};

/* Start a worker for a driver; NULL with err. */
struct pworker *pworker_start(const char *name, const struct provider_ops *ops, struct provider *drv,
			      burst_err_t *err);
/* Queue j (its run, w, done set by the caller; w is set here). */
void pworker_submit(struct pworker *w, struct pjob *j);
/* Run j on the worker and wait for it (after what is queued before it). */
void pworker_call(struct pworker *w, struct pjob *j);
/* Jobs queued or running, or finished but not yet collected. */
size_t pworker_pending(const struct pworker *w);
/*
 * Stop w: queued jobs are let go (done(j, false)). With wait, the running
 * job is waited for, the thread joined and w freed: 0. Without, a worker
 * in the middle of a call is left to the process's exit: -1 (its driver
 * must then not be freed); 0 when it was idle (and is freed).
 */
int pworker_stop(struct pworker *w, bool wait);

/* The descriptor the poll loop watches (readable: finished jobs); -1 before
 * the first worker starts. */
int pworker_fd(void);
/* On the loop: call done for every finished job. Returns how many. */
size_t pworker_collect(void);

#endif
