/*
 * burst-agent: the active agent's lease. Two agents (one beside slurmctld's
 * primary, one beside its backup) may share a StateDir; the one holding
 * the lease (a row in the state database, lib/state/state.h) acts, the other
 * waits as a standby and takes the lease over when it is not renewed.
 *
 * - The active agent renews it every LeaseTimeout/5 s from a thread of its
 *   own (so that a slow provider call on the loop does not let it lapse).
 * - The standby watches the row: when neither its epoch nor its renewal
 *   count has changed for LeaseTimeout s of the standby's own clock (so the
 *   two hosts' clocks need not agree), or its holder released it (a clean
 *   stop), or its holder is a dead process on this very host, the standby
 *   takes it with epoch + 1.
 * - Every change the active agent makes to its state is fenced by that
 *   epoch in the writing transaction (state_lease_take), and before each
 *   external action (a provider call, a Slurm update, an answer to a node)
 *   the loop (and a provider worker, right before its call) checks that
 *   its lease is still good by its own clock: a
 *   renewal older than 80% of LeaseTimeout, or one that found the lease
 *   taken, makes it step down - it exits at once (status 3) and its
 *   service manager starts it again, as a standby. So does the first
 *   write the fence refuses (an agent frozen between two of its checks,
 *   let go on after a takeover): it steps down there, before it logs or
 *   does anything more.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_int.h"
#include "timer.h"
#include "strutil.h"

#define LEASE_POLL_S 0.25        /* the standby's look at the lease */
#define LEASE_VALID 0.8          /* of LeaseTimeout: how long a renewal lets the holder act */
#define EXIT_DEPOSED 3

static struct {
	char dbpath[PATH_MAX];
	char holder[256], ident[256];
	double ttl;
	long long epoch;
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	double valid_until;      /* boot clock; the holder acts only before it */
	bool deposed;            /* a renewal found the lease taken */
	bool stop;
	char why[512];           /* the renewal's last error */
} L = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Seconds on a clock that neither jumps nor stops while the host sleeps. */
static double boottime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* "BOOT_ID PIDNS PID": who holds the lease, precisely enough to tell that
 * it is a dead process of this kernel and this pid namespace. */
static void make_ident(char *buf, size_t len)
{
	char boot[64], ns[64];
	ssize_t n;

	read_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
	ns[n > 0 ? n : 0] = '\0';
	snprintf(buf, len, "%s %s %ld", boot[0] ? boot : "-", ns[0] ? ns : "-", (long)getpid());
}

/* The holder of l is a process of this host's kernel and pid namespace
 * that is gone: its lease need not run out. */
static bool holder_dead_here(const struct state_lease *l)
{
	char mine[256], boot[64], ns[64], hboot[64], hns[64];
	long pid, hpid;

	make_ident(mine, sizeof(mine));
	if (sscanf(mine, "%63s %63s %ld", boot, ns, &pid) != 3 ||
	    sscanf(l->ident, "%63s %63s %ld", hboot, hns, &hpid) != 3)
		return false;
	if (strcmp(boot, hboot) || strcmp(ns, hns) || !strcmp(boot, "-") || !strcmp(ns, "-") || hpid <= 0)
		return false;
	return kill((pid_t)hpid, 0) < 0 && errno == ESRCH;
}

static void *renewer(void *arg)
{
	struct state_db *db = arg;
	struct timespec gap;
	double period = L.ttl / 5;

	gap.tv_sec = (time_t)period;
	gap.tv_nsec = (long)((period - (double)gap.tv_sec) * 1e9);
	for (;;) {
		burst_err_t err;
		double t0;
		int rc;

		nanosleep(&gap, NULL);
		pthread_mutex_lock(&L.mu);
		if (L.stop || L.deposed) {
			pthread_mutex_unlock(&L.mu);
			break;
		}
		pthread_mutex_unlock(&L.mu);
		t0 = boottime();
		rc = state_lease_renew(db, L.epoch, L.ttl, &err);
		pthread_mutex_lock(&L.mu);
		if (rc == 1)
			L.valid_until = t0 + L.ttl * LEASE_VALID;
		else if (rc == 0)
			L.deposed = true;
		else
			snprintf(L.why, sizeof(L.why), "%.480s", err.msg);
		pthread_mutex_unlock(&L.mu);
	}
	state_close(db);
	return NULL;
}

/* A write of this agent's refused by the fence: another agent holds the
 * lease, whatever the renewer has seen so far (state_on_fenced). */
static void lease_fenced(void)
{
	ERR("lease lost: another agent took it over (epoch %lld was ours; a write to the state was refused): "
	    "stepping down now, doing nothing more", L.epoch);
	_exit(EXIT_DEPOSED);
}

int lease_acquire(const volatile sig_atomic_t *stopping)
{
	struct state_lease seen, cur;
	burst_err_t err;
	double seen_at = 0, said_err = -1e9;
	bool said = false;
	char host[128];

	snprintf(L.dbpath, sizeof(L.dbpath), "%s/agent.db", A.cfg->state_dir);
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(L.holder, sizeof(L.holder), "%s pid %ld", host, (long)getpid());
	make_ident(L.ident, sizeof(L.ident));
	L.ttl = A.cfg->lease_timeout;
	memset(&seen, 0, sizeof(seen));
	while (!*stopping) {
		int rc;
		const char *how = NULL;
		double t = boottime();

		log_reopen_if_asked();
		rc = state_lease_get(A.db, &cur, &err);

		if (rc < 0) {
			ERR("standby: %s", err.msg);
			return -1;
		}
		if (rc == 0)
			how = "nobody held it";
		else if (cur.expires == 0)
			how = "released by its holder";
		else if (holder_dead_here(&cur))
			how = "its holder's process is gone";
		else if (cur.epoch != seen.epoch || cur.seq != seen.seq || !seen_at) {
			seen = cur;
			seen_at = t;
		} else if (t - seen_at >= L.ttl)
			how = "not renewed within LeaseTimeout";
		if (how) {
			double waited = seen_at ? t - seen_at : 0;
			rc = state_lease_take(A.db, rc ? &cur : &seen, L.holder, L.ident, L.ttl, &L.epoch, &err);
			if (rc == -2) {
				/* a later release's agent (on the other host) migrated agent.db */
				ERR("lease: not taken: %s. This agent stops: upgrade this host's slurm-burst to the release "
				    "of the agent that migrated it (doc/admin-guide.md, \"Upgrading\": with a standby)", err.msg);
				return -1;
			}
			if (rc < 0) {
				/* typically "database is locked": its holder froze in a write
				 * (its lock goes with it, or with its host's fencing); tried
				 * again each turn, said now and then */
				if (t - said_err >= 30) {
					ERR("lease: cannot take it yet (tried again every %.2f s): %s", LEASE_POLL_S, err.msg);
					said_err = t;
				}
				usleep((useconds_t)(LEASE_POLL_S * 1e6));
				continue;
			}
			if (rc == 1) {
				if (cur.epoch)
					INFO("lease taken (epoch %lld) from %s: %s", L.epoch, cur.holder, how);
				else
					INFO("lease taken (epoch %lld): %s", L.epoch, how);
				if (cur.epoch && waited > 0)
					INFO("lease: its last renewal was seen %.1f s ago", waited);
				state_on_fenced(A.db, lease_fenced);
				break;
			}
			/* renewed meanwhile: its holder lives */
			seen_at = 0;
			continue;
		}
		if (!said) {
			INFO("standby: %s holds the lease (epoch %lld); taking it over if it is not renewed for %.0f s",
			     cur.holder, cur.epoch, L.ttl);
			if (A.db_older >= 0)
				INFO("standby: %s is at schema %d, this burst-agent's is %d: not migrated while %s holds "
				     "the lease (an agent of an older release may be using it); migrated when this agent "
				     "takes the lease over", L.dbpath, A.db_older, STATE_SCHEMA_VERSION, cur.holder);
			said = true;
		}
		usleep((useconds_t)(LEASE_POLL_S * 1e6));
	}
	if (*stopping)
		return 1;
	if (A.db_older >= 0) {
		/* the other agent's writes are fenced now: migrated under this lease */
		if (state_migrate(A.db, &err) < 0) {
			ERR("lease: %s; the lease is released, this agent stops", err.msg);
			if (state_lease_renew(A.db, L.epoch, 0, &err) < 0)
				ERR("lease: cannot release it: %s", err.msg);
			return -1;
		}
		INFO("lease: %s migrated from schema %d to %d under this agent's lease", L.dbpath, A.db_older,
		     STATE_SCHEMA_VERSION);
		A.db_older = -1;
	}
	{
		struct state_db *db = state_open(L.dbpath, &err);
		if (!db) {
			ERR("lease: cannot open a second connection to renew it: %s", err.msg);
			return -1;
		}
		L.valid_until = boottime() + L.ttl * LEASE_VALID;
		if (pthread_create(&L.thread, NULL, renewer, db) != 0) {
			ERR("lease: cannot start the thread that renews it");
			state_close(db);
			return -1;
		}
		L.running = true;
	}
	return 0;
}

/*
 * A renewal that is late (its thread waited behind this agent's own writes,
 * or the host was loaded) is not a loss: nobody acts here until it is done.
 * Only a renewal that finds the lease taken, or none for a whole
 * LeaseTimeout more, makes this agent step down. A standby takes the lease
 * only after LeaseTimeout without a renewal by its own clock, and a renewal
 * then finds it taken: so waiting never lets two agents act.
 */
void lease_check(void)
{
	bool deposed, lapsed;
	double t = boottime(), until, wait_until = 0;
	char why[512];

	if (!L.running)
		return;
	for (;;) {
		pthread_mutex_lock(&L.mu);
		deposed = L.deposed;
		until = L.valid_until;
		snprintf(why, sizeof(why), "%s", L.why);
		pthread_mutex_unlock(&L.mu);
		t = boottime();
		lapsed = t >= until;
		if (deposed || !lapsed)
			break;
		if (!wait_until)
			wait_until = t + L.ttl;
		else if (t >= wait_until)
			break;
		usleep(50 * 1000);
	}
	if (!deposed && !lapsed) {
		if (wait_until)
			INFO("lease: a renewal came %.1f s late; going on (no other agent took it)", t - (wait_until - L.ttl));
		return;
	}
	if (deposed)
		ERR("lease lost: another agent took it over (epoch %lld was ours): stepping down now, "
		    "doing nothing more", L.epoch);
	else
		ERR("lease lost: not renewed for %.1f s%s%s: stepping down now, doing nothing more (another agent may hold it)",
		    t - (until - L.ttl * LEASE_VALID), why[0] ? ": " : "", why);
	/* nothing more: no atexit, no cleanup that would touch the state or the sockets' paths */
	_exit(EXIT_DEPOSED);
}

int lease_fence(void)
{
	lease_check();
	return 0;
}

void lease_release(void)
{
	burst_err_t err;

	if (!L.running)
		return;
	pthread_mutex_lock(&L.mu);
	L.stop = true;
	pthread_mutex_unlock(&L.mu);
	pthread_join(L.thread, NULL);
	L.running = false;
	/* a clean stop hands over at once */
	switch (state_lease_renew(A.db, L.epoch, 0, &err)) {
	case 1:
		INFO("lease released (epoch %lld): a standby takes over at once", L.epoch);
		break;
	case 0:
		ERR("lease: another agent had taken it over (epoch %lld was ours)", L.epoch);
		break;
	default:
		ERR("lease: cannot release it: %s", err.msg);
	}
}

void lease_timers(void)
{
	timer_add(TP_FIRST, 0, lease_check, "lease");
	/* again before the reconciler acts on what it found */
	timer_add(TP_RECONCILE, 0, lease_check, "lease");
}
