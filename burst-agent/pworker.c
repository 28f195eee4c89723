/*
 * pworker.c - one thread per provider driver, its job queue, and the
 * finished jobs handed back to the poll loop through an eventfd.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "pworker.h"
#include "strutil.h"

struct pworker {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* a job queued, stop asked, a sync job finished */
	struct pjob *head, *tail;
	bool stop, running, exited;
	size_t pending;          /* the loop's count: submitted, not collected */
	const struct provider_ops *ops;
	struct provider *drv;
	char name[64];
};

/* finished jobs, from every worker, for the loop */
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pjob *done_head, *done_tail;
static int efd = -1;

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker_main(void *arg)
{
	struct pworker *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct pjob *j;
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		j = w->head;
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		j->next = NULL;
		w->running = true;
		pthread_mutex_unlock(&w->mu);
		j->again = false;
		j->run(j, w->ops, w->drv);
		pthread_mutex_lock(&w->mu);
		w->running = false;
		if (j->again && !w->stop) {
			/* its next step after what was queued meanwhile */
			if (w->tail)
				w->tail->next = j;
			else
				w->head = j;
			w->tail = j;
			continue;
		}
		if (j->sync) {
			j->finished = true;
			pthread_cond_broadcast(&w->cv);
			continue;
		}
		pthread_mutex_lock(&done_mu);
		if (done_tail)
			done_tail->next = j;
		else
			done_head = j;
		done_tail = j;
		pthread_mutex_unlock(&done_mu);
		{
			uint64_t one = 1;
			ssize_t r = write(efd, &one, sizeof(one));
			(void)r;   /* the counter cannot overflow here; a wake-up is all it is */
		}
	}
	w->exited = true;
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct pworker *pworker_start(const char *name, const struct provider_ops *ops, struct provider *drv,
			      burst_err_t *err)
{
	struct pworker *w;
	sigset_t all, old;
	int rc;

	if (efd < 0) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0) {
			burst_err_set(err, "provider %s: cannot make an eventfd: %s", name, strerror(errno));
			return NULL;
		}
	}
	w = xcalloc(1, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->ops = ops;
	w->drv = drv;
	snprintf(w->name, sizeof(w->name), "%s", name);
	/* signals are the loop's: the worker blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->th, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		burst_err_set(err, "provider %s: cannot start its worker thread: %s", name, strerror(rc));
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	{
		char tn[16];
		snprintf(tn, sizeof(tn), "prov-%.10s", name);
		pthread_setname_np(w->th, tn);
	}
	return w;
}

static void enqueue(struct pworker *w, struct pjob *j)
{
	j->w = w;
	j->next = NULL;
	j->finished = false;
	j->queued = mono_now();
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void pworker_submit(struct pworker *w, struct pjob *j)
{
	j->sync = false;
	w->pending++;
	enqueue(w, j);
}

void pworker_call(struct pworker *w, struct pjob *j)
{
	j->sync = true;
	enqueue(w, j);
	pthread_mutex_lock(&w->mu);
	while (!j->finished)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

size_t pworker_pending(const struct pworker *w)
{
	return w ? w->pending : 0;
}

int pworker_stop(struct pworker *w, bool wait)
{
	struct pjob *q;
	bool busy;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	q = w->head;
	w->head = w->tail = NULL;
	busy = w->running;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	while (q) {
		struct pjob *next = q->next;
		w->pending--;
		q->done(q, false);
		q = next;
	}
	if (busy && !wait)
		return -1;
	pthread_join(w->th, NULL);
	/* what it finished and the loop did not collect yet: let go */
	pthread_mutex_lock(&done_mu);
	{
		struct pjob **pp = &done_head, *mine = NULL, *last = NULL;
		while (*pp) {
			struct pjob *j = *pp;
			if (j->w == w) {
				*pp = j->next;
				j->next = mine;
				mine = j;
			} else {
				last = j;
				pp = &j->next;
			}
		}
		done_tail = last;
		pthread_mutex_unlock(&done_mu);
		while (mine) {
			struct pjob *next = mine->next;
			mine->done(mine, false);
			mine = next;
		}
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
	return 0;
}

int pworker_fd(void)
{
	return efd;
}

size_t pworker_collect(void)
{
	struct pjob *j;
	uint64_t v;
	size_t n = 0;

	if (efd < 0)
		return 0;
	if (read(efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&done_mu);
	j = done_head;
	done_head = done_tail = NULL;
	pthread_mutex_unlock(&done_mu);
	while (j) {
		struct pjob *next = j->next;
		j->w->pending--;
		j->next = NULL;
		/* a job in steps that the worker stopped before its end did not run */
		j->done(j, !j->again);
		j = next;
		n++;
	}
	return n;
}
