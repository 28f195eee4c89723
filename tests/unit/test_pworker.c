/*
 * test_pworker.c - the provider worker's queue (burst-agent/pworker.c):
 * jobs run one at a time in order; a job in steps (pjob.again) is queued
 * again at the tail after each step, so that a job queued meanwhile runs
 * between two of its steps (a launch between two pages of a listing);
 * each job's done comes back once, after its last step; and a job in
 * steps that the worker stops before its end is let go (done(j, false)).
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pworker.h"
#include "tap.h"

/* what ran, in order, on the worker; and the dones, on this thread */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static char trace[256];
static char dones[256];
static int ndone;
static bool gate_open, stepped_once;

struct tjob {
	struct pjob j;
	char name;
	int steps;               /* runs it takes (1: an ordinary job) */
	int ran;
	bool wait_gate;          /* its first step waits until the gate opens */
};

static void note(char *buf, size_t cap, char c)
{
	size_t n = strlen(buf);

	if (n + 1 < cap) {
		buf[n] = c;
		buf[n + 1] = '\0';
	}
}

static void t_run(struct pjob *j, const struct provider_ops *ops, struct provider *drv)
{
	struct tjob *t = (struct tjob *)j;

	(void)ops;
	(void)drv;
	pthread_mutex_lock(&mu);
	note(trace, sizeof(trace), t->name);
	if (t->wait_gate && t->ran == 0) {
		stepped_once = true;
		pthread_cond_broadcast(&cv);
		while (!gate_open)
			pthread_cond_wait(&cv, &mu);
	}
	pthread_mutex_unlock(&mu);
	t->ran++;
	j->again = t->ran < t->steps;
}

static void t_done(struct pjob *j, bool ran)
{
	struct tjob *t = (struct tjob *)j;

	pthread_mutex_lock(&mu);
	note(dones, sizeof(dones), ran ? t->name : (char)(t->name - 'A' + 'a'));
	ndone++;
	pthread_mutex_unlock(&mu);
}

static struct tjob *tjob(char name, int steps, bool wait_gate)
{
	struct tjob *t = calloc(1, sizeof(*t));

	t->name = name;
	t->steps = steps;
	t->wait_gate = wait_gate;
	t->j.run = t_run;
	t->j.done = t_done;
	return t;
}

static void wait_stepped(void)
{
	pthread_mutex_lock(&mu);
	while (!stepped_once)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void open_gate(void)
{
	pthread_mutex_lock(&mu);
	gate_open = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void reset(void)
{
	trace[0] = dones[0] = '\0';
	ndone = 0;
	gate_open = stepped_once = false;
}

/* collect until n dones came back (at most 10 s) */
static int collect_until(int n)
{
	struct pollfd pf = { .fd = pworker_fd(), .events = POLLIN };
	int i;

	for (i = 0; i < 1000; i++) {
		int got;
		pthread_mutex_lock(&mu);
		got = ndone;
		pthread_mutex_unlock(&mu);
		if (got >= n)
			return got;
		if (poll(&pf, 1, 10) > 0)
			pworker_collect();
	}
	return ndone;
}

static void *gate_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	open_gate();
	return NULL;
}

int main(void)
{
	static const struct provider_ops ops = { .type = "test" };
	struct tjob *a, *b, *c, *d, *e;
	struct pworker *w;
	burst_err_t err;
	pthread_t th;

	w = pworker_start("test", &ops, NULL, &err);
	ok(w != NULL, "a worker starts");
	if (!w)
		return done_testing();

	/* A runs in 3 steps; B and C are queued while its first step runs */
	reset();
	a = tjob('A', 3, true);
	b = tjob('B', 1, false);
	c = tjob('C', 1, false);
	pworker_submit(w, &a->j);
	wait_stepped();
	pworker_submit(w, &b->j);
	pworker_submit(w, &c->j);
	ok(pworker_pending(w) == 3, "three jobs pending while the first runs");
	open_gate();
	is_num(collect_until(3), 3, "each job's done comes back once");
	is_str(trace, "ABCAA", "the jobs queued during a step run before the next step (A, B, C, A, A)");
	is_str(dones, "BCA", "the job in steps is done after its last step, after the others");
	is_num(a->ran, 3, "each of its steps ran");
	is_num(pworker_pending(w), 0, "nothing pending after");
	free(a);
	free(b);
	free(c);

	/* a job queued after a step that is already requeued runs after that step */
	reset();
	d = tjob('D', 2, true);
	pworker_submit(w, &d->j);
	wait_stepped();
	open_gate();
	is_num(collect_until(1), 1, "a job in steps alone runs to its end");
	is_str(trace, "DD", "its steps follow each other when nothing else is queued");
	free(d);

	/* stopped between its steps: let go, not done */
	reset();
	e = tjob('E', 5, true);
	pworker_submit(w, &e->j);
	wait_stepped();
	pthread_create(&th, NULL, gate_later, NULL);
	ok(pworker_stop(w, true) == 0, "the worker stops (waiting for the running step)");
	pthread_join(th, NULL);
	is_str(dones, "e", "a job in steps stopped before its end is let go (done with ran false)");
	is_num(e->ran, 1, "no step of it runs after the stop");
	free(e);
	return done_testing();
}
