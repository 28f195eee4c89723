/*
 * test_conn.c - the agent's connections are read without waiting: a client
 * trickling bytes never holds the reader, each connection keeps its own
 * partial request, the size cap and the per-kind cap hold; when the join
 * table is full, the source with the most connections gives one up. A
 * table watched by epoll reports just the connection that sent something,
 * found by its descriptor whatever moved in the table, and nothing of one
 * it closed (even while a duplicate of its descriptor lives). The bytes
 * the buffers hold are counted, and kept within a budget by closing the
 * biggest partial of the source holding the most.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../burst-agent/conn.h"
#include "tap.h"

static int pair(int sv[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

/* A connection of kind 1 from src, born at t (a descriptor of its own). */
static struct conn *add_from(struct conn_table *t, uint64_t src, double born, size_t max, int *ev)
{
	int s[2];

	if (pair(s) < 0)
		return NULL;
	close(s[1]);
	return conn_add(t, s[0], 1, src, born, 5.0, max, ev);
}

static size_t count_from(const struct conn_table *t, uint64_t src)
{
	size_t i, k = 0;

	for (i = 0; i < t->n; i++)
		k += t->c[i].src == src;
	return k;
}

static int has_born(const struct conn_table *t, double born)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->c[i].born == born)
			return 1;
	return 0;
}

/*
 * Who loses a connection when the join table is full: the source that
 * holds the most, its oldest; never a fresh report because one address
 * floods, and behind NAT (one source for all) still the oldest of all.
 */
static void source_policy(void)
{
	struct conn_table t = { .c = NULL };
	const uint64_t flood = 1, node = 2, other = 3;
	struct sockaddr_in a4, b4;
	struct sockaddr_in6 a6;
	struct sockaddr_un un;
	int ev, i, all_ev = 1;

	/* a flood from one address fills the table; a node from another joins */
	for (i = 0; i < 8; i++)
		add_from(&t, flood, 10.0 + i, 8, &ev);
	ok(t.n == 8 && conn_count(&t, 1) == 8, "one source fills the table (8 of 8)");
	add_from(&t, node, 20.0, 8, &ev);
	ok(ev == 1 && count_from(&t, node) == 1 && count_from(&t, flood) == 7 && !has_born(&t, 10.0),
	   "full: a node's new connection closes the flooding source's oldest");
	/* the flood goes on: each of its new connections closes its own oldest, never the node's */
	for (i = 0; i < 20; i++) {
		add_from(&t, flood, 30.0 + i, 8, &ev);
		all_ev &= ev;
	}
	ok(all_ev && count_from(&t, node) == 1 && has_born(&t, 20.0),
	   "the flood's 20 more connections close only its own: the node's (older than them) stays");
	ok(count_from(&t, flood) == 7 && has_born(&t, 49.0) && !has_born(&t, 42.0),
	   "... the flood keeps its 7 newest");
	/* a second node while the flood holds 7 of 8 */
	add_from(&t, other, 60.0, 8, &ev);
	ok(ev == 1 && count_from(&t, other) == 1 && count_from(&t, node) == 1 && count_from(&t, flood) == 6,
	   "another node: the flood loses one more, both nodes stay");
	conn_table_free(&t);

	/* the most, not the oldest: an older connection of a smaller source stays */
	add_from(&t, node, 1.0, 4, &ev);
	add_from(&t, flood, 2.0, 4, &ev);
	add_from(&t, flood, 3.0, 4, &ev);
	add_from(&t, flood, 4.0, 4, &ev);
	ok(conn_victim(&t, 1) < t.n && t.c[conn_victim(&t, 1)].born == 2.0,
	   "the victim is the biggest source's oldest (2.0), not the oldest of all (1.0)");
	add_from(&t, other, 5.0, 4, &ev);
	ok(ev == 1 && has_born(&t, 1.0) && !has_born(&t, 2.0), "so it goes, and the lone older one stays");
	/* as many each: the one with the older oldest gives */
	conn_table_free(&t);
	add_from(&t, node, 2.0, 4, &ev);
	add_from(&t, flood, 1.0, 4, &ev);
	add_from(&t, node, 3.0, 4, &ev);
	add_from(&t, flood, 4.0, 4, &ev);
	ok(t.c[conn_victim(&t, 1)].born == 1.0, "two sources with as many: the oldest of both goes");
	conn_table_free(&t);

	/* behind NAT: every node and the flood from one address; nodes' reports
	 * are fresh (complete within milliseconds), so they are not the victims */
	for (i = 0; i < 8; i++)
		add_from(&t, flood, 10.0 + i, 8, &ev);
	for (i = 0; i < 5; i++) {
		/* a node connects, then the flood reconnects twice before the node's report is read */
		add_from(&t, flood, 100.0 + 3 * i, 8, &ev);
		add_from(&t, flood, 101.0 + 3 * i, 8, &ev);
		add_from(&t, flood, 102.0 + 3 * i, 8, &ev);
		ok(ev == 1 && has_born(&t, 100.0 + 3 * i), "NAT, node %d: its connection stays while two more come after it", i + 1);
	}
	ok(conn_count(&t, 1) == 8, "NAT: the table holds its cap, no connection is refused outright");
	{
		/* no refusal by address: 8 from one source fit as 8 from 8 would */
		struct conn_table u = { .c = NULL };
		for (i = 0; i < 8; i++)
			add_from(&u, flood, (double)i, 8, &ev);
		ok(conn_count(&u, 1) == 8 && !ev, "NAT: a whole table from one address is taken, none closed");
		conn_table_free(&u);
	}
	conn_table_free(&t);
	ok(conn_victim(&t, 1) == t.n, "an empty table: no victim");

	/* the source keys */
	memset(&a4, 0, sizeof(a4));
	memset(&b4, 0, sizeof(b4));
	memset(&a6, 0, sizeof(a6));
	memset(&un, 0, sizeof(un));
	a4.sin_family = b4.sin_family = AF_INET;
	inet_pton(AF_INET, "10.0.0.7", &a4.sin_addr);
	inet_pton(AF_INET, "10.0.0.8", &b4.sin_addr);
	a4.sin_port = htons(1000);
	b4.sin_port = htons(1000);
	a6.sin6_family = AF_INET6;
	inet_pton(AF_INET6, "fd00::7", &a6.sin6_addr);
	un.sun_family = AF_UNIX;
	ok(conn_source((struct sockaddr *)&a4) != conn_source((struct sockaddr *)&b4), "two IPv4 addresses: two sources");
	b4.sin_addr = a4.sin_addr;
	b4.sin_port = htons(2000);
	ok(conn_source((struct sockaddr *)&a4) == conn_source((struct sockaddr *)&b4),
	   "one address, two ports: one source (a NAT's or one client's)");
	ok(conn_source((struct sockaddr *)&a6) != 0 && conn_source((struct sockaddr *)&a6) != conn_source((struct sockaddr *)&a4),
	   "IPv6: a source of its own");
	ok(conn_source((struct sockaddr *)&un) == 0, "a UNIX socket: source 0");
}

/* A connection of kind 1 from src, born at t, that has sent n bytes (read). */
static struct conn *sent_from(struct conn_table *t, uint64_t src, double born, size_t n)
{
	int s[2];
	char *b = malloc(n);
	struct conn *c;
	ssize_t w;

	if (!b || pair(s) < 0)
		return NULL;
	memset(b, 'r', n);
	w = write(s[1], b, n);
	free(b);
	close(s[1]);
	c = conn_add(t, s[0], 1, src, born, 5.0, 0, &(int){ 0 });
	if (!c || w != (ssize_t)n || conn_pump(c, 1 << 20) != CONN_LINE || c->len != n)
		return NULL;
	return c;
}

static size_t caps(const struct conn_table *t)
{
	size_t i, k = 0;

	for (i = 0; i < t->n; i++)
		k += t->c[i].cap;
	return k;
}

static size_t bytes_from(const struct conn_table *t, uint64_t src)
{
	size_t i, k = 0;

	for (i = 0; i < t->n; i++)
		k += t->c[i].src == src ? t->c[i].cap : 0;
	return k;
}

/*
 * The byte budget of partial requests: what the buffers hold is counted as
 * they grow and given back as they close; over the budget, the source that
 * holds the most bytes loses its biggest partial, so a small report (a
 * node's) stays while those that stall with most of a megabyte go, whether
 * they come from another address or from the node's own (NAT).
 */
static void byte_budget(void)
{
	struct conn_table t = { .c = NULL };
	const uint64_t flood = 1, node = 2;
	bool all = true;
	size_t k, before;
	int i;

	all = sent_from(&t, node, 1.0, 5000) != NULL;
	ok(all && t.held == caps(&t) && t.held >= 5000, "a report's 5000 bytes are counted (%zu held)", t.held);
	for (i = 0; i < 4; i++)
		all &= sent_from(&t, flood, 10.0 + i, 100000) != NULL;
	ok(all && t.held == caps(&t) && t.held >= 405000, "four partials of 100000 bytes more: %zu held", t.held);
	before = t.held;
	k = conn_victim_bytes(&t, 1);
	ok(k < t.n && t.c[k].src == flood && t.c[k].born == 10.0, "the victim is the flood's biggest (of as big: its oldest)");
	ok(conn_shed(&t, 1, before) == 0 && t.n == 5, "within the budget: none closed");
	k = conn_shed(&t, 1, 300000);
	ok(k == 2 && t.held <= 300000 && t.held == caps(&t), "over a budget of 300000: %zu closed, %zu held", k, t.held);
	ok(count_from(&t, node) == 1 && count_from(&t, flood) == 2 && !has_born(&t, 10.0) && !has_born(&t, 11.0),
	   "... the flood's two oldest; the node's report stays");
	conn_table_free(&t);
	ok(t.held == 0, "an emptied table holds nothing");

	/* behind NAT: one source; the biggest go, the small report stays */
	all = sent_from(&t, flood, 1.0, 100000) && sent_from(&t, flood, 2.0, 5000) &&
	      sent_from(&t, flood, 3.0, 100000) && sent_from(&t, flood, 4.0, 100000);
	k = all ? conn_shed(&t, 1, 150000) : 0;
	ok(k == 2 && t.held <= 150000, "NAT: over 150000, %zu closed (%zu held)", k, t.held);
	ok(has_born(&t, 2.0) && t.n == 2, "... the small report is not one of them");
	conn_table_free(&t);

	/* the source that holds the most gives, not the biggest connection */
	all = sent_from(&t, node, 1.0, 100000) != NULL;
	for (i = 0; i < 10; i++)
		all &= sent_from(&t, flood, 10.0 + i, 20000) != NULL;
	before = bytes_from(&t, node);
	ok(all && bytes_from(&t, flood) > before, "ten partials of 20000 hold more than one of 100000");
	ok(conn_shed(&t, 1, t.held - 1) == 1 && bytes_from(&t, node) == before && !has_born(&t, 10.0),
	   "one over the budget: the many's oldest goes, the one big partial stays");
	/* a connection of another kind is never the victim */
	for (k = 0; k < t.n; k++)
		t.c[k].kind = 2;
	ok(conn_victim_bytes(&t, 1) == t.n && conn_shed(&t, 1, 0) == 0, "none of the kind: nothing closed");
	conn_drop(&t, 0);
	ok(t.held == caps(&t), "a drop gives its bytes back (%zu held)", t.held);
	conn_table_free(&t);
}

/*
 * Per-source caps: one source's connections beyond its cap close its own
 * oldest, whatever the table holds, and never another source's. A client
 * on this host is told apart by its user: the owner of a loopback peer's
 * socket is found (sock_diag), and two users are two sources.
 */
static void per_source(void)
{
	struct conn_table t = { .c = NULL };
	const uint64_t flood = 7, scraper = 8;
	int ev, i, s[2], all_ev = 1;

	for (i = 0; i < 4; i++) {
		if (pair(s) < 0)
			return;
		close(s[1]);
		conn_add_capped(&t, s[0], 1, flood, 1.0 + i, 5.0, 8, 4, &ev);
		all_ev &= !ev;
	}
	ok(all_ev && count_from(&t, flood) == 4, "4 of one source (its cap) fit: none closed");
	if (pair(s) < 0)
		return;
	close(s[1]);
	conn_add_capped(&t, s[0], 1, scraper, 10.0, 5.0, 8, 4, &ev);
	ok(!ev && count_from(&t, scraper) == 1, "another source's connection is added");
	all_ev = 1;
	for (i = 0; i < 50; i++) {
		if (pair(s) < 0)
			return;
		close(s[1]);
		conn_add_capped(&t, s[0], 1, flood, 20.0 + i, 5.0, 8, 4, &ev);
		all_ev &= ev;
	}
	ok(all_ev && count_from(&t, flood) == 4 && has_born(&t, 69.0) && !has_born(&t, 65.0),
	   "50 more of the first: each closes its own oldest (it keeps its 4 newest)");
	ok(count_from(&t, scraper) == 1 && has_born(&t, 10.0), "... and the other's connection (older than them) stays");
	conn_table_free(&t);

	{
		struct sockaddr_in a;
		socklen_t al = sizeof(a);
		int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0), fd;
		uint32_t uid = 12345;

		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4) < 0 ||
		    getsockname(l, (struct sockaddr *)&a, &al) < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (fd = accept(l, NULL, NULL)) < 0) {
			ok(0, "a loopback connection to look up");
			return;
		}
		i = conn_local_peer_uid(fd, &uid);
		ok(i == 0 && uid == (uint32_t)geteuid(), "a loopback peer's user is found: uid %u (this process: %u)", uid,
		   (unsigned)geteuid());
		close(fd);
		close(c);
		if (geteuid() == 0) {
			/* another user's client: uid 65534 connects from a child */
			pid_t pid = fork();
			int st = 0;
			if (pid == 0) {
				/* a socket is its maker's: made after the setuid */
				int k;
				char b;
				if (setgid(65534) < 0 || setuid(65534) < 0 || (k = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
				    connect(k, (struct sockaddr *)&a, sizeof(a)) < 0)
					_exit(1);
				_exit(read(k, &b, 1) == 0 ? 0 : 2);   /* held until the parent closes */
			}
			fd = accept(l, NULL, NULL);
			uid = 12345;
			i = fd >= 0 ? conn_local_peer_uid(fd, &uid) : -1;
			ok(pid > 0 && i == 0 && uid == 65534, "another user's loopback client: uid %u (not ours)", uid);
			close(fd);
			waitpid(pid, &st, 0);
		}
		close(l);
	}
	if (pair(s) == 0) {
		uint32_t uid;
		ok(conn_local_peer_uid(s[0], &uid) < 0, "a UNIX socket: no TCP peer to look up");
		close(s[0]);
		close(s[1]);
	}
	ok(conn_source_uid(5, 0) != conn_source_uid(5, 65534) && conn_source_uid(5, 0) == conn_source_uid(5, 0) &&
	   conn_source_uid(5, 0) != 5 && conn_source_uid(0, 0) != 0,
	   "one address, two users: two sources (never the key 0)");
}

/* Events on ep within ms: how many, the first's descriptor in *fd. */
static int ready(int ep, int ms, int *fd, uint32_t *events)
{
	struct epoll_event ev[64];
	int n = epoll_wait(ep, ev, 64, ms);

	if (n > 0) {
		*fd = (int)ev[0].data.u64;
		*events = ev[0].events;
	}
	return n;
}

static void watched(void)
{
	enum { N = 300 };
	struct conn_table t = { .c = NULL };
	int peer[N], fd[N], ep = epoll_create1(0), got = -1, ev, i, dup_fd;
	uint32_t events = 0;
	size_t k;
	bool all = true;

	ok(ep >= 0 && conn_table_watch(&t, ep) == 0, "a table watched by epoll");
	for (i = 0; i < N; i++) {
		int s[2];
		if (pair(s) < 0)
			return;
		fd[i] = s[0];
		peer[i] = s[1];
		if (!conn_add(&t, s[0], 1, 0, (double)i, 5.0, 0, &ev))
			all = false;
	}
	ok(all && t.n == N, "%d connections added and watched", N);
	ok(ready(ep, 0, &got, &events) == 0, "none has sent anything: no event");
	ok(write(peer[123], "x", 1) == 1, "one client sends a byte");
	ok(ready(ep, 1000, &got, &events) == 1 && got == fd[123] && (events & EPOLLIN),
	   "just that one is ready, by its descriptor");
	k = conn_find(&t, got);
	ok(k < t.n && t.c[k].born == 123.0 && conn_pump(&t.c[k], 64) == CONN_MORE && t.c[k].len == 1,
	   "found in the table and read");
	ok(ready(ep, 0, &got, &events) == 0, "read: no event left");
	/* a drop moves the last into its place: still found */
	conn_drop(&t, conn_find(&t, fd[0]));
	k = conn_find(&t, fd[N - 1]);
	ok(k < t.n && t.c[k].born == (double)(N - 1), "the moved connection is found by its descriptor");
	ok(conn_find(&t, fd[0]) == t.n, "the dropped one is not");
	ok(send(peer[0], "x", 1, MSG_NOSIGNAL) < 0 || ready(ep, 0, &got, &events) == 0, "the dropped one's peer: no event");
	/* a connection whose descriptor was duplicated (a join answer kept for
	 * later) is out of the set once dropped */
	k = conn_find(&t, fd[7]);
	dup_fd = dup(fd[7]);
	conn_drop(&t, k);
	ok(dup_fd >= 0 && write(peer[7], "late", 4) == 4, "a dropped connection kept by a duplicate gets bytes");
	ok(ready(ep, 50, &got, &events) == 0, "no event of it (%d)", got);
	close(dup_fd);
	/* an answer the peer does not take: waited for as POLLOUT, then POLLIN again */
	{
		size_t big_n = 4 << 20;
		char *ans = malloc(big_n), rb[65536];
		struct conn *c = &t.c[conn_find(&t, fd[50])];
		memset(ans, 'y', big_n);
		ok(conn_send(c, ans, big_n) == CONN_MORE && conn_watch(&t, c) == 0 && c->events == EPOLLOUT,
		   "an answer left to send: its connection waits to write");
		ok(ready(ep, 0, &got, &events) == 0, "the peer reads nothing: no event");
		while (recv(peer[50], rb, sizeof(rb), MSG_DONTWAIT) > 0)
			;
		ok(ready(ep, 1000, &got, &events) == 1 && got == fd[50] && (events & EPOLLOUT),
		   "the peer read: it may write again");
		while (conn_flush(c) == CONN_MORE)
			while (recv(peer[50], rb, sizeof(rb), MSG_DONTWAIT) > 0)
				;
		ok(conn_watch(&t, c) == 0 && c->events == EPOLLIN, "all sent: it waits to read again");
	}
	conn_table_free(&t);
	ok(t.n == 0 && t.byfd == NULL, "the table is emptied");
	for (i = 0; i < N; i++)
		close(peer[i]);
	close(ep);
}

int main(void)
{
	struct conn_table t = { .c = NULL };
	struct conn *a, *b;
	int sa[2], sb[2], sc[2], ev, i;
	enum conn_status st;
	char big[300];

	if (pair(sa) < 0 || pair(sb) < 0)
		return 1;
	a = conn_add(&t, sa[0], 1, 0, 100.0, 5.0, 8, &ev);
	ok(a && ev == 0 && t.n == 1 && a->deadline == 105.0, "a connection is added with its deadline");
	/* nothing sent: the reader does not wait (the socket is blocking; recv must not be) */
	ok(conn_pump(a, 64) == CONN_MORE, "a silent connection: nothing to do, and no wait");
	ok(write(sa[1], "{\"op\":", 6) == 6, "a client sends part of a request");
	st = conn_pump(a, 64);
	ok(st == CONN_MORE && a->len == 6, "a partial request is kept (%zu bytes)", a->len);
	b = conn_add(&t, sb[0], 1, 0, 101.0, 5.0, 8, &ev);
	a = &t.c[0];
	ok(write(sb[1], "{\"op\":\"poke\"}\n", 14) == 14, "another client sends a whole request");
	st = conn_pump(b, 64);
	ok(st == CONN_LINE && !strcmp(b->buf, "{\"op\":\"poke\"}"),
	   "the other's whole request is read while the first is incomplete (%s)", b->buf);
	ok(write(sa[1], "\"x\"}\nrest", 9) == 9, "the first client ends its request");
	st = conn_pump(a, 64);
	ok(st == CONN_LINE && !strcmp(a->buf, "{\"op\":\"x\"}"), "its bytes joined ([%s])", a->buf);
	conn_drop(&t, 1);
	conn_drop(&t, 0);
	ok(t.n == 0, "dropped connections leave the table");
	close(sa[1]);
	close(sb[1]);

	/* end of file after some bytes ends the request; before any, the peer left */
	if (pair(sa) < 0 || pair(sb) < 0)
		return 1;
	a = conn_add(&t, sa[0], 1, 0, 0, 5.0, 0, &ev);
	ok(write(sa[1], "abc", 3) == 3 && shutdown(sa[1], SHUT_WR) == 0, "a request without a newline, half-closed");
	ok(conn_pump(a, 64) == CONN_LINE && !strcmp(a->buf, "abc"), "read up to the end of file");
	b = conn_add(&t, sb[0], 1, 0, 0, 5.0, 0, &ev);
	close(sb[1]);
	ok(conn_pump(b, 64) == CONN_CLOSED, "a peer that left without a byte");
	conn_table_free(&t);
	close(sa[1]);

	/* the size cap: max bytes without a newline */
	if (pair(sa) < 0)
		return 1;
	memset(big, 'x', sizeof(big));
	a = conn_add(&t, sa[0], 1, 0, 0, 5.0, 0, &ev);
	ok(write(sa[1], big, sizeof(big)) == (ssize_t)sizeof(big), "a client sends 300 bytes, no newline");
	st = conn_pump(a, 100);
	ok(st == CONN_TOO_BIG && a->len == 100, "refused at the cap of 100 (read %zu)", a->len);
	conn_table_free(&t);
	close(sa[1]);

	/* an HTTP request ends at its blank line, which may come in pieces */
	if (pair(sa) < 0)
		return 1;
	a = conn_add(&t, sa[0], 3, 0, 0, 5.0, 0, &ev);
	ok(write(sa[1], "GET /metrics HTTP/1.1\r\nHost: x\r\n\r", 33) == 33, "a scraper sends its header but the last byte");
	ok(conn_pump_until(a, 8192, "\r\n\r\n") == CONN_MORE, "not whole without the blank line (a newline does not end it)");
	ok(write(sa[1], "\n", 1) == 1, "the last byte");
	st = conn_pump_until(a, 8192, "\r\n\r\n");
	ok(st == CONN_LINE && !strcmp(a->buf, "GET /metrics HTTP/1.1\r\nHost: x"), "the header, across the reads ([%s])", a->buf);
	{
		/* an answer larger than the socket takes is sent in turns, never waited for */
		size_t big_n = 4 << 20, got = 0;
		char *ans = malloc(big_n), rb[65536];
		int turns = 0;
		memset(ans, 'x', big_n);
		st = conn_send(a, ans, big_n);
		ok(st == CONN_MORE && a->outoff < big_n, "a reader that does not read: part sent (%zu of %zu), no wait",
		   a->outoff, big_n);
		while (st == CONN_MORE && turns < 100000) {
			ssize_t r = read(sa[1], rb, sizeof(rb));
			if (r > 0)
				got += (size_t)r;
			st = conn_flush(a);
			turns++;
		}
		for (;;) {
			ssize_t r = recv(sa[1], rb, sizeof(rb), MSG_DONTWAIT);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		ok(st == CONN_SENT && got == big_n, "sent whole as the reader reads (%zu bytes)", got);
	}
	close(sa[1]);
	ok(conn_flush(a) == CONN_SENT, "nothing left: sent");
	conn_table_free(&t);

	/* the per-kind cap: the oldest of that kind goes, other kinds stay */
	if (pair(sc) < 0)
		return 1;
	conn_add(&t, sc[0], 2, 0, 0.5, 5.0, 1, &ev);
	for (i = 0; i < 3; i++) {
		int s[2];
		if (pair(s) < 0)
			return 1;
		conn_add(&t, s[0], 1, 0, 1.0 + i, 5.0, 2, &ev);
		ok(ev == (i == 2), "kind 1, connection %d: %s", i + 1, i == 2 ? "the oldest closed" : "added");
		close(s[1]);
	}
	ok(conn_count(&t, 1) == 2 && conn_count(&t, 2) == 1, "two of kind 1, one of kind 2 left");
	{
		size_t k, oldest_left = 1;
		for (k = 0; k < t.n; k++)
			if (t.c[k].kind == 1 && t.c[k].born == 1.0)
				oldest_left = 0;
		ok(oldest_left, "the connection closed is the oldest of its kind");
	}
	/* the closed one's fd is really closed */
	conn_table_free(&t);
	ok(t.n == 0 && t.c == NULL, "the table is emptied");
	ok(fcntl(sc[0], F_GETFD) < 0, "its connections are closed");
	close(sc[1]);

	source_policy();
	byte_budget();
	per_source();
	watched();
	return done_testing();
}
