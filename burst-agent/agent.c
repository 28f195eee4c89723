/*
 * burst-agent - provisions the nodes of burst node sets.
 *
 * One thread, one poll loop (provider calls and calls to slurmctld run
 * on worker threads beside it). Requests come from the power-save programs'
 * durable spool (poked over the UNIX socket); each node's life (doc/design.md §7)
 * is in SQLite, every transition written before the action it leads to;
 * instances come from a provider driver (this slice: local, an instance is
 * a set of namespaces on this host); nodes report on the join port and
 * only admitted nodes start slurmd.
 *
 * This file: start-up, the poll loop and its sockets, control requests,
 * logging. The agent's other parts are listed in agent_int.h.
 *
 *   burst-agent [-c burst.conf] [-D] [-L logfile]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <slurm/slurm.h>

#include "agent_int.h"
#include "crash.h"
#include "node_life.h"
#include "port_holder.h"
#include "statedir.h"
#include "strutil.h"
#include "timer.h"
#include "units.h"

#define TICK_MS 250
#define MAX_REPORT (1 << 20)    /* a join report: record and credential */
#define JOIN_DEADLINE_S 5.0     /* a join report, whole, from its accept */
/*
 * Join connections open at once: beyond that, the oldest of the source that
 * holds the most goes (conn_victim). Sized so that a few hundred clients
 * that hold connections open (a job on a burst node trickling bytes) fit
 * and are closed only at their deadline: a full table makes each new
 * connection close another, which such a client opens again at once, a
 * churn of accept() and close() as fast as it can reconnect. Fewer when the
 * descriptors allowed (RLIMIT_NOFILE) are fewer.
 */
#define JOIN_MAX_CONNS 1024
#define FD_RESERVE 256          /* descriptors kept for everything else */
#define CTL_MAX_REQ 4096        /* a control request */
#define CTL_DEADLINE_S 2.0
#define CTL_MAX_CONNS 32
#define ACCEPT_BURST 64         /* connections taken per socket per turn of the loop */

struct agent A;
/* the server's own: its listening sockets and the connections being read */
static int usock;                /* the control socket */
static int *jsocks;              /* a join socket for each JoinListen= address */
static size_t njsocks;
static int msock;                /* MetricsListen=, -1 when off */
static struct conn_table conns;  /* join and control connections being read */
static unsigned long dropped_slow, dropped_full, dropped_budget; /* join connections, logged now and then */
static double dropped_said;
static volatile sig_atomic_t stopping, reloading, reopening;
static size_t join_max = JOIN_MAX_CONNS;
/* something happened that the loop's periodic work should see at once (a
 * spool poke, a worker's outcome, a join): else it runs once a tick, not
 * on every byte a client sends */
static bool kicked;

static void vlogmsg(const char *level, const char *fmt, va_list ap)
{
	struct timespec ts;
	struct tm tm;
	char t[32];
	FILE *f = A.log ? A.log : stderr;

	if (A.syslog) {
		vsyslog(level[0] == 'e' ? LOG_ERR : level[0] == 'w' ? LOG_WARNING : LOG_INFO, fmt, ap);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "[%s.%03ld] burst-agent: %s: ", t, ts.tv_nsec / 1000000, level);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

void logmsg(const char *level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogmsg(level, fmt, ap);
	va_end(ap);
}

/* every call site's limit that has been used (the main loop's only) */
static struct loglimit *loglimits;

void logmsg_limited(struct loglimit *l, const char *level, const char *fmt, ...)
{
	va_list ap;

	if (!l->init) {
		l->next = loglimits;
		loglimits = l;
	}
	if (!loglimit_take(l, mono()))
		return;
	va_start(ap, fmt);
	vlogmsg(level, fmt, ap);
	va_end(ap);
}

void loglimit_flush_all(bool force)
{
	double t = mono(), since;
	struct loglimit *l;
	unsigned long n;

	for (l = loglimits; l; l = l->next)
		if ((n = loglimit_flush(l, t, force, &since)))
			ERR("%s: %lu more like it in the last %.0f s, not logged (at most %d at once, then one every %.0f s)",
			    l->what, n, t - since, LOGLIMIT_BURST, LOGLIMIT_EVERY);
}

double now(void)
{
	return wall_seconds();
}

double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- control socket ---- */

/* Whether the peer of a control connection may talk to the agent: root and
 * SlurmUser only; anyone else is answered and closed before anything of
 * theirs is read. */
static bool control_peer_ok(int fd)
{
	static const char msg[] = "{\"ok\":false,\"error\":\"permission denied: only root and SlurmUser may talk to burst-agent\"}\n";
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	    (cred.uid == 0 || cred.uid == A.slurm_uid))
		return true;
	ERR_LIMITED("control: refused connections", "control: refused uid %u pid %d (only root and SlurmUser uid %u)",
	    (unsigned)cred.uid, (int)cred.pid, (unsigned)A.slurm_uid);
	if (send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return false;
	return false;
}

/* A request of an allowed peer, read whole by the poll loop. */
static void handle_control(int fd, const char *buf)
{
	if (strstr(buf, "\"poke\"")) {
		take_spool();
		kicked = true;
		if (write(fd, "{\"ok\":true}\n", 12) < 0)
			return;
	} else {
		if (write(fd, "{\"ok\":false,\"error\":\"unknown request\"}\n", 39) < 0)
			return;
	}
}

/* ---- start-up and the loop ---- */

/*
 * The control socket at path, mode 0666 (root and SlurmUser are told apart
 * by SO_PEERCRED). Its directory must not be writable by others than root
 * unless sticky (/run style): someone who can rename entries there could
 * swap the path for a link between our unlink and bind. The mode comes from
 * the umask at bind, not from a chmod that would follow a link; only a
 * socket is removed. -1 with why.
 */
static int listen_unix(const char *path, char *why, size_t len)
{
	struct sockaddr_un sa;
	struct stat st;
	char dir[PATH_MAX];
	char *slash;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path) || strlen(path) >= sizeof(dir)) {
		snprintf(why, len, "the path is longer than a socket's (%zu bytes)", sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (stat(slash ? dir : ".", &st) < 0) {
		snprintf(why, len, "its directory %s: %s", dir, strerror(errno));
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, len, "its directory %s (mode %04o) is writable by others and not sticky: "
			 "give SocketPath= in a directory only root can write (chmod go-w it)",
			 dir, (unsigned)(st.st_mode & 07777));
		errno = EPERM;
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(why, len, "%s exists and is not a socket (remove it if it is not needed)", path);
			errno = EEXIST;
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(why, len, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	old = umask(0111);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		snprintf(why, len, "%s", strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

static int listen_tcp(const char *addr, int port)
{
	struct sockaddr_in sa;
	int one = 1, fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 256) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

enum { CONN_CTL, CONN_JOIN, CONN_METRICS };

/* Take the connections waiting on a listening socket (a bounded number per
 * turn); control peers are checked before anything is read. */
static void accept_clients(int lsock, int kind)
{
	int i, fd, evicted;

	for (i = 0; i < ACCEPT_BURST; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		uint64_t src;

		fd = accept4(lsock, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
				ERR_LIMITED("accept failures", "%s: accept: %s", kind == CONN_JOIN ? "join" : "control",
					    strerror(errno));
			return;
		}
		if (kind == CONN_CTL && !control_peer_ok(fd)) {
			close(fd);
			continue;
		}
		src = conn_source((struct sockaddr *)&ss);
		if (kind == CONN_METRICS) {
			/* a scraper on this host is told apart by its user too: one
			 * user opening connection after connection on loopback loses
			 * its own, never root's Prometheus' */
			uint32_t uid;
			if (conn_local_peer_uid(fd, &uid) == 0)
				src = conn_source_uid(src, uid);
			if (!conn_add_capped(&conns, fd, kind, src, mono(), METRICS_DEADLINE_S, METRICS_MAX_CONNS,
					     METRICS_MAX_PER_SOURCE, &evicted))
				ERR("metrics: cannot wait for a connection (epoll): %s; closed", strerror(errno));
			if (evicted)
				metric_dropped("too_many");
			continue;
		}
		if (!conn_add(&conns, fd, kind, src, mono(), kind == CONN_JOIN ? JOIN_DEADLINE_S : CTL_DEADLINE_S,
			      kind == CONN_JOIN ? join_max : CTL_MAX_CONNS, &evicted))
			ERR("%s: cannot wait for a connection (epoll): %s; closed", kind == CONN_JOIN ? "join" : "control",
			    strerror(errno));
		if (evicted && kind == CONN_JOIN)
			dropped_full++;
		else if (evicted)
			ERR_LIMITED("control: connections evicted", "control: more than %d connections open: the oldest closed", CTL_MAX_CONNS);
	}
}

/*
 * What the loop waits on: the listening sockets and the workers' eventfd
 * by a tag above any descriptor, each connection by its descriptor
 * (conn.h). An epoll set, so a turn costs what is ready: with poll, every
 * byte a trickling client sent made the loop pass every open connection to
 * the kernel and back, hundreds of them, several hundred times a second.
 */
#define EV_TAG ((uint64_t)1 << 32)
enum { EV_CTL = 1, EV_WORKERS, EV_METRICS, EV_JOIN /* + i: jsocks[i] */ };
#define EV_MAX 256

static int loop_ep = -1;

static int watch_fd(int fd, uint64_t tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = EV_TAG | tag;
	return epoll_ctl(loop_ep, EPOLL_CTL_ADD, fd, &ev);
}

/* The epoll set of the loop, once its sockets are open: 0, or -1 logged. */
static int loop_watch(void)
{
	size_t i;

	loop_ep = epoll_create1(EPOLL_CLOEXEC);
	if (loop_ep < 0 || watch_fd(usock, EV_CTL) < 0 ||
	    (pworker_fd() >= 0 && watch_fd(pworker_fd(), EV_WORKERS) < 0) ||
	    (msock >= 0 && watch_fd(msock, EV_METRICS) < 0) ||
	    conn_table_watch(&conns, loop_ep) < 0) {
		ERR("cannot wait for the agent's sockets (epoll): %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < njsocks; i++)
		if (jsocks[i] >= 0 && watch_fd(jsocks[i], EV_JOIN + i) < 0) {
			ERR("cannot wait for node reports (epoll): %s", strerror(errno));
			return -1;
		}
	return 0;
}

/* A connection the loop found ready: read what it has, answer a whole
 * request, drop it when done with. */
static void serve_conn(size_t i, uint32_t events)
{
	struct conn *c = &conns.c[i];
	enum conn_status st;
	bool join = c->kind == CONN_JOIN;

	if (c->kind == CONN_METRICS) {
		short rev = (short)((events & EPOLLIN ? POLLIN : 0) | (events & EPOLLOUT ? POLLOUT : 0) |
				    (events & EPOLLERR ? POLLERR : 0) | (events & EPOLLHUP ? POLLHUP : 0));
		if (metrics_conn(c, rev) || conn_watch(&conns, c) < 0)
			conn_drop(&conns, i);
		return;
	}
	if (join && c->out && c->outoff < c->outlen) {
		/* the answer to its hello, not all sent at once */
		if (conn_flush(c) == CONN_ERROR || conn_watch(&conns, c) < 0)
			conn_drop(&conns, i);
		return;
	}
	st = conn_pump(c, join ? MAX_REPORT : CTL_MAX_REQ);
	if (st == CONN_MORE) {
		/* the partial reports of all join connections within their
		 * budget: a thousand connections that each stall with most of a
		 * report held a gigabyte; the biggest of the source holding the
		 * most go (this one, perhaps: c is not used after) */
		if (join && conns.held > A.cfg->join_report_memory)
			dropped_budget += conn_shed(&conns, CONN_JOIN, A.cfg->join_report_memory);
		return;
	}
	lease_check();   /* before answering anyone */
	if (st == CONN_LINE && join) {
		kicked = true;
		/* a hello: the connection waits for its answer, then for the report */
		if (join_line(c))
			return;
	}
	else if (st == CONN_LINE)
		handle_control(c->fd, c->buf);
	else if (st == CONN_TOO_BIG && join) {
		ERR_LIMITED("join: reports too large", "join: report of more than %d bytes refused", MAX_REPORT);
		join_too_big(c);
	} else if (st == CONN_TOO_BIG)
		ERR_LIMITED("control: requests too large", "control: request of more than %d bytes refused", CTL_MAX_REQ);
	conn_drop(&conns, i);
}

/* One turn of the loop's clients: wait up to a tick for a listening socket
 * or a connection to have something, read what each has without waiting,
 * answer whole requests, close the ones past their deadline or cap. */
static void serve_clients(void)
{
	struct epoll_event ev[EV_MAX];
	bool workers = false, ctl = false, metrics = false;
	bool *join = xcalloc(njsocks + 1, sizeof(*join));
	double now;
	size_t i;
	int n = epoll_wait(loop_ep, ev, EV_MAX, TICK_MS);

	for (int k = 0; k < n; k++) {
		uint64_t d = ev[k].data.u64;
		if (d & EV_TAG) {
			d &= ~EV_TAG;
			workers |= d == EV_WORKERS;
			ctl |= d == EV_CTL;
			metrics |= d == EV_METRICS;
			if (d >= EV_JOIN && d - EV_JOIN < njsocks)
				join[d - EV_JOIN] = true;
		}
	}
	if (workers) {
		/* before taking in what the workers finished: an agent frozen
		 * while a call was out (slurmctld slow to answer) and deposed
		 * meanwhile acts on none of it, nor even logs it */
		lease_check();
		if (pworker_collect())
			kicked = true;
	}
	/* the connections first; each found by its descriptor (an earlier one's
	 * drop moved another in the table; no descriptor of a dropped one is
	 * reused by a connection before the accepts below). An agent frozen
	 * and deposed meanwhile reads no client's request, not even to log it:
	 * the lease is checked first (a mutex and a clock read while it is
	 * valid) */
	if (n > 0)
		lease_check();
	for (int k = 0; k < n; k++)
		if (!(ev[k].data.u64 & EV_TAG)) {
			size_t ci = conn_find(&conns, (int)ev[k].data.u64);
			if (ci < conns.n)
				serve_conn(ci, ev[k].events);
		}
	if (ctl)
		accept_clients(usock, CONN_CTL);
	for (i = 0; i < njsocks; i++)
		if (join[i])
			accept_clients(jsocks[i], CONN_JOIN);
	if (metrics)
		accept_clients(msock, CONN_METRICS);
	free(join);
	now = mono();
	for (i = conns.n; i-- > 0;)
		if (conns.c[i].deadline <= now) {
			if (conns.c[i].kind == CONN_JOIN)
				dropped_slow++;
			else if (conns.c[i].kind == CONN_METRICS)
				metric_dropped("deadline");
			else
				ERR_LIMITED("control: requests too slow", "control: no whole request within %.0f s: closed",
					    CTL_DEADLINE_S);
			conn_drop(&conns, i);
		}
	/* what a flood of join connections did, once in a while rather than a line each */
	if ((dropped_slow || dropped_full || dropped_budget) && now - dropped_said >= 10) {
		char mem[32];
		units_format((double)A.cfg->join_report_memory, UNIT_SIZE, mem, sizeof(mem));
		ERR("join: closed %lu connection%s with no whole report within %.0f s, %lu beyond %zu open at once, "
		    "%lu holding the most of the partial reports beyond JoinReportMemory=%s",
		    dropped_slow, dropped_slow == 1 ? "" : "s", JOIN_DEADLINE_S, dropped_full, join_max,
		    dropped_budget, mem);
		dropped_slow = dropped_full = dropped_budget = 0;
		dropped_said = now;
	}
}

/* What a standby needs too: the configuration and the state. */
static int setup(void)
{
	burst_err_t err;
	char dbpath[PATH_MAX];

	metrics_init();
	msock = -1;
	if (load_conf() < 0)
		return -1;
	snprintf(A.spool, sizeof(A.spool), "%s/spool", A.cfg->state_dir);
	snprintf(A.nodes_dir, sizeof(A.nodes_dir), "%s/nodes", A.cfg->state_dir);
	snprintf(dbpath, sizeof(dbpath), "%s/agent.db", A.cfg->state_dir);
	/* a state others can change is not used (statedir.h): checked before
	 * StateDir is made (the directories above it), and again once made;
	 * the spool's owner once SlurmUser is known (setup_active) */
	if (statedir_check(A.cfg->state_dir, geteuid(), STATEDIR_ANY_OWNER, STATEDIR_AGENT, &err) < 0 ||
	    (mkdir(A.cfg->state_dir, 0755) == 0 &&
	     statedir_check(A.cfg->state_dir, geteuid(), STATEDIR_ANY_OWNER, STATEDIR_AGENT, &err) < 0)) {
		ERR("%s (the agent does not start on a state others could change)", err.msg);
		return -1;
	}
	mkdir(A.spool, 0700);
	mkdir(A.nodes_dir, 0755);
	/* an older schema is migrated once this agent holds the lease (lease_acquire) */
	A.db = state_open_standby(dbpath, &A.db_older, &err);
	if (!A.db) {
		ERR("%s", err.msg);
		return -1;
	}
	return 0;
}

/*
 * A listening socket whose port another process holds (EADDRINUSE): the
 * agent runs without it and tries again every tick; the log names the
 * holder (port_holder.h) at once and every LISTEN_SAY_S while it lasts. A
 * deposed agent on this host that has not noticed yet holds the join port
 * for a moment; any user can bind a port above 1023 while the agent is
 * stopped (doc/admin-guide.md, "The join port").
 */
#define LISTEN_SAY_S 5.0

struct listen_wait {
	bool waiting;
	double since, said;
	struct port_holder holder;
};

static struct listen_wait *join_wait, metrics_wait;

static void port_taken(struct listen_wait *w, const char *what, const char *addr, int port, const char *without)
{
	char who[600];
	double t = mono();
	int k = port_holder_find(addr, port, &w->holder);

	if (k > 0)
		port_holder_describe(&w->holder, who, sizeof(who));
	else
		snprintf(who, sizeof(who), "a socket not in this host's table of listeners (a connection closing?)");
	if (!w->waiting) {
		w->waiting = true;
		w->since = t;
		ERR("%s: %s port %d is in use by %s: not listening there yet; %s; trying again every %.2f s",
		    what, addr, port, who, without, TICK_MS / 1000.0);
	} else
		ERR("%s: %s port %d is still in use by %s (for %.0f s); trying again", what, addr, port, who, t - w->since);
	w->said = t;
}

static void port_free(struct listen_wait *w, const char *what, const char *addr, int port)
{
	INFO("%s: listening on %s port %d now (it was in use for %.0f s)", what, addr, port, mono() - w->since);
	memset(w, 0, sizeof(*w));
}

#define NO_JOIN_PORT "the agent goes on without it (resume requests, launches, the control socket and metrics are served; " \
	"nodes cannot report until it is free, and ask again for their join timeout)"
#define NO_METRICS_PORT "the agent goes on without metrics"

/* The listening sockets whose port was taken: tried again, said now and then. */
static void listen_retry(void)
{
	double t = mono();

	for (size_t i = 0; join_wait && i < njsocks; i++) {
		const struct cfg_listen *l = &A.cfg->join_listen[i];
		int fd;
		if (jsocks[i] >= 0 || !join_wait[i].waiting)
			continue;
		fd = listen_tcp(l->addr, l->port);
		if (fd < 0) {
			if (errno != EADDRINUSE)
				ERR_LIMITED("join: listening sockets", "node reports: cannot listen on %s port %d: %s; trying again",
					    l->addr, l->port, strerror(errno));
			else if (t - join_wait[i].said >= LISTEN_SAY_S)
				port_taken(&join_wait[i], "node reports", l->addr, l->port, NO_JOIN_PORT);
			continue;
		}
		if (watch_fd(fd, EV_JOIN + i) < 0) {
			ERR("node reports: cannot wait on %s port %d (epoll): %s; trying again", l->addr, l->port, strerror(errno));
			close(fd);
			continue;
		}
		jsocks[i] = fd;
		port_free(&join_wait[i], "node reports", l->addr, l->port);
	}
	if (metrics_wait.waiting) {
		int fd = metrics_listen();
		if (fd == -3) {
			if (t - metrics_wait.said >= LISTEN_SAY_S)
				port_taken(&metrics_wait, "metrics", A.cfg->metrics_addr, A.cfg->metrics_port, NO_METRICS_PORT);
		} else if (fd < 0) {
			/* said by metrics_listen */
			ERR("metrics: not served (MetricsListen=%s, above)", A.cfg->metrics_listen ? A.cfg->metrics_listen : "");
			memset(&metrics_wait, 0, sizeof(metrics_wait));
		} else if (watch_fd(fd, EV_METRICS) < 0) {
			ERR("metrics: cannot wait on MetricsListen=%s (epoll): %s; trying again", A.cfg->metrics_listen,
			    strerror(errno));
			close(fd);
		} else if (fd >= 0) {
			msock = fd;
			port_free(&metrics_wait, "metrics", A.cfg->metrics_addr, A.cfg->metrics_port);
		}
	}
}

/* As many descriptors as the system allows this process (the soft limit
 * raised to the hard one), and the join connections sized by them. */
static void fd_limits(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		if (want > rl.rlim_cur) {
			rl.rlim_cur = want;
			if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
				getrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < JOIN_MAX_CONNS + 2 * FD_RESERVE) {
		join_max = rl.rlim_cur > 2 * FD_RESERVE ? (size_t)rl.rlim_cur - FD_RESERVE : FD_RESERVE / 4;
		INFO("join connections: at most %zu open at once (RLIMIT_NOFILE %llu; raise LimitNOFILE= for more)",
		     join_max, (unsigned long long)rl.rlim_cur);
	}
}

/* A driver's own crash point (provider_crash). */
static void driver_crash(int point)
{
	crash_point((enum crash_point)point);
}

/* Once this agent holds the lease: its nodes, Slurm, its sockets. */
static int setup_active(void)
{
	/* what the drivers read from StateDir when this agent started, as a
	 * standby perhaps, is read again: the agent it takes over from may
	 * have written since (no call is in flight yet); and before a driver
	 * replaces a file there, it checks that this agent still holds the
	 * lease */
	provider_fence = lease_fence;
	provider_crash = driver_crash;
	for (size_t i = 0; i < A.nprovs; i++)
		if (A.provs[i].ops->activate)
			A.provs[i].ops->activate(A.provs[i].drv);
	ensure_nodes();
	fd_limits();
	slurm_init(NULL);
	slurm_settings();
	/* budgets by account: only where a user cannot escape them */
	if (budget_accounts_verdict(A.cfg) < 0)
		return -1;
	/* every later call to slurmctld: off the loop */
	if (slurm_worker_start() < 0)
		return -1;
	/* the power-save programs run as SlurmUser and write the spool: it is
	 * root's, ours or SlurmUser's (when slurmctld could not tell who that
	 * is, its owner is left unchecked, and only root's requests are read) */
	if (A.slurm_uid) {
		burst_err_t err;
		if (statedir_check_spool(A.spool, geteuid(), A.slurm_uid, &err) < 0) {
			ERR("%s (the agent does not start on a state others could change)", err.msg);
			return -1;
		}
	}
	if (A.slurm_uid && chown(A.spool, A.slurm_uid, (gid_t)-1) < 0)
		ERR("cannot give the spool %s to SlurmUser (uid %u): %s; burst-resume will fail to record requests",
		    A.spool, (unsigned)A.slurm_uid, strerror(errno));
	{
		char why[PATH_MAX + 200];
		usock = listen_unix(A.cfg->socket_path, why, sizeof(why));
		if (usock < 0) {
			ERR("cannot listen on SocketPath=%s: %s", A.cfg->socket_path, why);
			return -1;
		}
	}
	/* every answer the agent signs: made off the loop; and a join's
	 * commit made durable off it */
	if (join_signer_start() < 0 || node_life_start() < 0)
		return -1;
	/* node reports: on each JoinListen= address (the local provider's
	 * bridge address, or every address, when none is given); one whose
	 * port another process holds is opened once it is free */
	njsocks = A.cfg->njoin_listen;
	jsocks = xcalloc(njsocks, sizeof(*jsocks));
	join_wait = xcalloc(njsocks, sizeof(*join_wait));
	for (size_t i = 0; i < njsocks; i++) {
		const struct cfg_listen *l = &A.cfg->join_listen[i];
		jsocks[i] = listen_tcp(l->addr, l->port);
		if (jsocks[i] < 0 && errno == EADDRINUSE)
			port_taken(&join_wait[i], "node reports", l->addr, l->port, NO_JOIN_PORT);
		else if (jsocks[i] < 0) {
			ERR("cannot listen for node reports on %s port %d: %s (JoinListen=; is that address this host's?)",
			    l->addr, l->port, strerror(errno));
			return -1;
		}
	}
	/* metrics are optional: the agent serves without them while their port is taken */
	msock = metrics_listen();
	if (msock == -3) {
		msock = -1;
		port_taken(&metrics_wait, "metrics", A.cfg->metrics_addr, A.cfg->metrics_port, NO_METRICS_PORT);
	}
	if (msock == -2)
		return -1;
	return loop_watch();
}

/*
 * recover()'s listings: each provider's, made once, the first time a node
 * of it is checked, and its running (or pending) instances by id. One
 * listing (a page per 1,000 instances on EC2) in place of a call per node:
 * 10,000 booting nodes took the loop away from joins for ~154 s.
 */
struct recover_lists {
	struct prov_list *l;
	struct htab *up;         /* per provider: id -> its listing entry */
	signed char *state;      /* per provider: 0 not yet, 1 listed, -1 cannot */
};

/* 1: listed as pending or running; 0: not (ask the provider about it) */
static int recover_listed(struct recover_lists *rl, struct aprov *p, const char *instance)
{
	size_t i = (size_t)(p - A.provs);

	if (!rl->state[i]) {
		enum prov_class cls = PROV_OK;
		burst_err_t err;
		burst_err_clear(&err);
		if (prov_list_now(p, &rl->l[i], &cls, &err) < 0) {
			if (p->ops->list)
				INFO("recover: cannot list provider %s's instances (%s: %s); asking about each of its nodes' instances",
				     p->cfg->name, prov_class_name(cls), err.msg);
			prov_list_free(&rl->l[i]);
			rl->state[i] = -1;
		} else {
			for (size_t k = 0; k < rl->l[i].n; k++) {
				const struct prov_instance *in = &rl->l[i].v[k];
				if (!strcmp(in->state, "pending") || !strcmp(in->state, "running"))
					htab_put(&rl->up[i], in->id, (void *)in);
			}
			rl->state[i] = 1;
		}
	}
	return rl->state[i] > 0 && htab_has(&rl->up[i], instance, NULL);
}

/* After a restart: finish what was in flight. */
static void recover(void)
{
	static const enum node_state live[] = { NS_BOOTING, NS_ADMITTED };
	struct recover_lists rl;
	size_t nlisted = 0, nasked = 0;
	burst_err_t err;
	size_t s, i;

	rl.l = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*rl.l));
	rl.up = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*rl.up));
	rl.state = xcalloc(A.nprovs ? A.nprovs : 1, sizeof(*rl.state));

	/* launching: the intent was written; it is repeated now with the same
	 * attempt, which the driver makes idempotent */
	launch_retry();
	for (s = 0; s < sizeof(live) / sizeof(live[0]); s++) {
		char **names = state_nodes_in(A.db, live[s], &err);
		for (i = 0; names && names[i]; i++) {
			struct node_rec r;
			struct aprov *p;
			int exists;
			if (state_node_get(A.db, names[i], &r, &err) != 1 || r.state != live[s]) {
				state_node_clear(&r);
				continue;
			}
			p = prov_by_name(r.provider);
			/* listed: there; not listed (not tagged yet, not listed yet,
			 * stopped, gone, or no listing): the provider is asked */
			if (p && r.instance && recover_listed(&rl, p, r.instance)) {
				exists = 1;
				nlisted++;
			} else {
				exists = p && r.instance ? prov_exists(p, names[i], r.instance) : 0;
				nasked += p && r.instance;
			}
			if (exists == 0) {
				char why[300];
				snprintf(why, sizeof(why), "instance %s lost", r.instance ? r.instance : "?");
				node_life_apply(names[i], &r, LE_LOST_AT_RESTART, why);
			} else {
				INFO("%s: %s, instance %s %s", names[i], node_state_name(live[s]), r.instance,
				     exists > 0 ? "still there" : "not known yet (the reconciler will see)");
				{
					/* an admitted node's slurmd is waited for from this start:
					 * the node may have waited for an answer the last agent
					 * never sent (it asks again; answered then) */
					struct bnode *ni = node_find(names[i]);
					if (ni && live[s] == NS_ADMITTED)
						ni->answered_at = now();
				}
				/* its time counts from now: before, it was another process's */
				metric_instance_up(names[i], r.provider, r.instance_type, r.region);
				/* its cost record stays; one an older agent did not keep starts now */
				cost_adopted(&r);
			}
			state_node_clear(&r);
		}
		state_names_free(names);
	}
	if (nlisted + nasked)
		INFO("recover: %zu booting or admitted instance%s found in the providers' listings, %zu asked about one by one",
		     nlisted, nlisted == 1 ? "" : "s", nasked);
	for (i = 0; i < A.nprovs; i++) {
		htab_free(&rl.up[i]);
		prov_list_free(&rl.l[i]);
	}
	free(rl.l);
	free(rl.up);
	free(rl.state);
	/* lost before a crash: finish what rc_lost began */
	lost_nodes();
}

/* the log's held-back lines, once a turn */
static void flush_limited(void)
{
	loglimit_flush_all(false);
}

/* The loop's own periodic work; then each part's (timer.h), in an order
 * that keeps a turn's: a part's later phases wait for the earlier ones. */
static void register_timers(void)
{
	timer_add(TP_FIRST, 0, flush_limited, "held-back log lines");
	lease_timers();
	timer_add(TP_FIRST, 0, listen_retry, "listening sockets taken again");
	spool_timers();
	launch_timers();
	/* before the Slurm adapter's: the jobs of the nodes it finds lost go
	 * on in the same turn */
	reconcile_timers();
	slurm_timers();
	cost_timers();
	boot_timers();
	node_life_timers();
}

/*
 * Log to path ("syslog" for syslog). A file is opened again on SIGUSR1 (and
 * on SIGHUP's reload): logrotate renamed it, the lines go on in a new one.
 * The new file takes the old one's descriptor (dup3), so the FILE every
 * thread writes through is never closed: a line is in the old file or in
 * the new one, whole, never lost. -1 with errno, the log unchanged.
 */
static int open_log(const char *path)
{
	int fd;

	if (!strcmp(path, "syslog")) {
		A.log_path = path;
		if (!A.syslog)
			openlog("burst-agent", LOG_PID, LOG_DAEMON);
		A.syslog = true;
		return 0;
	}
	/* close-on-exec: the programs the agent starts (instances, providers'
	 * helpers) must not hold its log open (a rotated log's space would
	 * never be freed while an instance lives) */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
	if (fd < 0)
		return -1;
	if (A.log) {
		int e;
		fflush(A.log);
		if (dup3(fd, fileno(A.log), O_CLOEXEC) < 0) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		close(fd);
	} else {
		FILE *f = fdopen(fd, "a");
		if (!f) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		A.log = f;
	}
	A.log_path = path;
	return 0;
}

/* SIGUSR1 (logrotate's postrotate): the log file opened again, nothing else */
static void reopen_log(const char *why)
{
	if (!A.log_path || A.syslog)
		return;
	if (open_log(A.log_path) < 0)
		ERR("%s: cannot open the log %s again: %s; still writing to the file it was (fix the path, then send SIGUSR1 again)",
		    why, A.log_path, strerror(errno));
	else
		INFO("%s: log %s opened again", why, A.log_path);
}

/* the loop's, and a standby's while it waits for the lease */
void log_reopen_if_asked(void)
{
	if (reopening) {
		reopening = 0;
		reopen_log("SIGUSR1");
	}
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reloading = 1;
	else if (sig == SIGUSR1)
		reopening = 1;
	else
		stopping = 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		/* for tests (doc/crash_points.md) */
		{ "list-crash-points", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	sigset_t none;
	int ch;
	const char *logpath = NULL;
	double last_tick = 0;

	while ((ch = getopt_long(argc, argv, "c:L:Dh", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': A.conf_path = optarg; break;
		case 'L': logpath = optarg; break;
		case 'D': break;   /* foreground: the default; run it under systemd */
		case 'h':
			printf("usage: burst-agent [-c burst.conf] [-L logfile|syslog]\n");
			return 0;
		case 'P':
			crash_points_print(stdout);
			return 0;
		default: return 2;
		}
	}
	{
		/* a test's crash point (BURST_CRASH_POINT), armed before any thread */
		char why[512];
		if (crash_init(why, sizeof(why)) < 0) {
			fprintf(stderr, "burst-agent: %s\n", why);
			return 2;
		}
		if (crash_armed >= 0)
			fprintf(stderr, "burst-agent: BURST_CRASH_POINT=%s: this agent ends at that point (for tests only)\n",
				getenv("BURST_CRASH_POINT"));
		if (hold_init(why, sizeof(why)) < 0) {
			fprintf(stderr, "burst-agent: %s\n", why);
			return 2;
		}
		if (hold_armed)
			fprintf(stderr, "burst-agent: BURST_HOLD_POINT=%s: this agent waits at those points (for tests only)\n",
				getenv("BURST_HOLD_POINT"));
	}
	A.conf_path = config_default_path(A.conf_path);
	A.slurm_conf = getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
	A.libexec = getenv("BURST_LIBEXECDIR") ? getenv("BURST_LIBEXECDIR") : BURST_LIBEXECDIR;
	A.node_bin = getenv("BURST_NODE") ? getenv("BURST_NODE") : BURST_LIBEXECDIR "/burst-node";
	if (logpath && open_log(logpath) < 0) {
		fprintf(stderr, "burst-agent: cannot open the log %s: %s\n", logpath, strerror(errno));
		return 1;
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* before any thread: the providers' workers use libcurl */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "burst-agent: cannot initialise libcurl\n");
		return 1;
	}
	if (setup() < 0)
		return 1;
	if (!logpath && A.cfg->log_file && open_log(A.cfg->log_file) < 0) {
		fprintf(stderr, "burst-agent: cannot open the log %s: %s\n", A.cfg->log_file, strerror(errno));
		return 1;
	}
	/* a standby until this agent holds the lease: no spool, no joins, no reconciler */
	switch (lease_acquire(&stopping)) {
	case 0:
		break;
	case 1:
		INFO("stopping (was a standby)");
		state_close(A.db);
		agent_conf_free();
		return 0;
	default:
		return 1;
	}
	if (setup_active() < 0)
		return 1;
	register_timers();
	{
		char lis[512] = "";
		for (size_t i = 0; i < A.cfg->njoin_listen; i++) {
			size_t l = strlen(lis);
			snprintf(lis + l, sizeof(lis) - l, "%s%s:%d%s", i ? ", " : "", A.cfg->join_listen[i].addr,
				 A.cfg->join_listen[i].port, jsocks[i] < 0 ? " (once free)" : "");
		}
		INFO("started: %zu nodes in %zu node sets, state %s, socket %s, node reports on %s%s%s%s",
		     A.nnodes, A.cfg->nnodesets, A.cfg->state_dir, A.cfg->socket_path, lis,
		     A.cfg->metrics_listen ? ", metrics http://" : "", A.cfg->metrics_listen ? A.cfg->metrics_listen : "",
		     metrics_wait.waiting ? " (once free)" : "");
	}
	recover();
	while (!stopping) {
		lease_check();
		serve_clients();
		log_reopen_if_asked();
		/* a reload replaces the drivers: only when none is in a call */
		if (reloading && !prov_any_pending()) {
			reloading = 0;
			reopen_log("SIGHUP");
			if (load_conf() == 0) {
				ensure_nodes();
				INFO("SIGHUP: %s read again: %zu nodes in %zu node sets", A.conf_path, A.nnodes,
				     A.cfg->nnodesets);
			} else
				ERR("SIGHUP: %s has errors (above): the running configuration is kept", A.conf_path);
			kicked = true;
		}
		/* once a tick, or at once after an event: not for each byte a
		 * client trickles in */
		if (kicked || mono() - last_tick >= TICK_MS / 1000.0) {
			kicked = false;
			last_tick = mono();
			timer_run(last_tick);
		}
	}
	loglimit_flush_all(true);
	INFO("stopping (instances keep running; a restart takes them up again)");
	A.exiting = true;
	conn_table_free(&conns);
	if (loop_ep >= 0)
		close(loop_ep);
	close(usock);
	for (size_t i = 0; i < njsocks; i++)
		if (jsocks[i] >= 0)
			close(jsocks[i]);
	free(jsocks);
	free(join_wait);
	join_signer_stop();
	node_life_stop();
	if (msock >= 0)
		close(msock);
	metrics_fini();
	cost_fini();
	unlink(A.cfg->socket_path);
	lease_release();
	/* a call still held by slurmctld is left to the exit, libslurm with it */
	if (slurm_worker_stop())
		slurm_fini();
	slurm_adapter_free();
	state_close(A.db);
	agent_conf_free();
	pace_free();
	timer_reset();
	node_life_fini();
	boot_fini();
	curl_global_cleanup();
	return 0;
}

struct conn_table *agent_conns(void)
{
	return &conns;
}
