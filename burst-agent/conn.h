/*
 * conn.h - the agent's client connections, read without blocking.
 *
 * Every accepted connection (a node's join report, a request on the
 * control socket) gets its own buffer, a deadline for its whole request
 * and a size cap; the poll loop reads whatever each one has sent and never
 * waits for any. A table holds at most a fixed number of connections per
 * kind: a new one beyond that closes the oldest connection of the source
 * (peer address) that holds the most of that kind. One source that opens
 * many connections thus loses its own, never another source's; and where
 * every client comes from one address (nodes behind NAT) it is the oldest
 * of all that goes: a genuine request is complete within milliseconds of
 * its accept, so only clients that hold a connection open lose it.
 *
 * The bytes that the connections' buffers hold (their capacity, whatever
 * kind) are counted in the table; conn_shed keeps them under a budget by
 * closing, of the source that holds the most bytes, its biggest partial
 * request. A genuine report is small and whole within milliseconds, so it
 * is the connections that stall with most of a report that go.
 */
#ifndef BURST_CONN_H
#define BURST_CONN_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum conn_status {
	CONN_MORE,       /* nothing complete yet: poll again */
	CONN_LINE,       /* a request up to its newline (or the peer's half-close) */
	CONN_CLOSED,     /* the peer left without sending anything */
	CONN_TOO_BIG,    /* max bytes and no newline */
	CONN_ERROR,      /* read or write error (errno) */
	CONN_SENT        /* conn_flush: the whole answer is sent */
};

struct conn {
	int fd;
	int kind;        /* the caller's: which socket it came from */
	uint64_t src;    /* the caller's: the peer's address (0: not known) */
	char *buf;       /* NUL-terminated; the request once CONN_LINE */
	size_t len, cap;
	double born, deadline;
	char *out;       /* an answer being sent (conn_flush), NULL if none */
	size_t outlen, outoff;
	uint32_t events; /* what the table's epoll waits for on it (conn_watch) */
	size_t *held;    /* its table's count of buffered bytes (conn_add), or NULL */
	void *data;      /* the caller's (NULL), freed (free()) with the connection */
};

/*
 * The table may be watched by an epoll instance (conn_table_watch): every
 * connection is then registered as it is added (its descriptor as the
 * event's data.u64) and removed before it is closed, so that a wait costs
 * what is ready, not what is open: hundreds of clients that each send a
 * byte a second cost the loop a few microseconds a byte, not a pass over
 * every connection.
 */
struct conn_table {
	struct conn *c;
	size_t n, cap;
	int *byfd;       /* index in c of each descriptor, -1 if none */
	size_t nbyfd;
	bool watched;
	int ep;          /* the epoll descriptor when watched */
	size_t held;     /* bytes of the connections' request buffers (their capacity) */
};

/*
 * Read what fd has without waiting (recv MSG_DONTWAIT) into c's buffer,
 * up to max bytes. The request ends at the first newline (kept out of
 * c->buf) or at end of file after at least one byte.
 */
enum conn_status conn_pump(struct conn *c, size_t max);

/* The same, the request ending at the first end (an HTTP request's header:
 * "\r\n\r\n"), which is kept out of c->buf. */
enum conn_status conn_pump_until(struct conn *c, size_t max, const char *end);

/*
 * Send what fits of c's answer without waiting: the connection owns out
 * (malloc'ed, len bytes) from here on. CONN_MORE while some is left (poll
 * for POLLOUT, call conn_flush again), CONN_SENT once all is, CONN_ERROR.
 */
enum conn_status conn_send(struct conn *c, char *out, size_t len);
enum conn_status conn_flush(struct conn *c);

/*
 * Add fd of kind from source src, accepted at now, to expire at now +
 * timeout. When kind already has max connections (0: no cap), one of them
 * is closed first (conn_victim) and *evicted is 1 (else 0). NULL (fd
 * closed, errno set) when a watched table's epoll refuses it.
 */
struct conn *conn_add(struct conn_table *t, int fd, int kind, uint64_t src, double now, double timeout,
		      size_t max, int *evicted);

/* The same, and at most max_src of kind from source src (0: no such cap):
 * beyond it, src's own oldest of kind is closed first (*evicted is 1), so
 * that one client opening connection after connection cannot push out
 * another's, whatever the table's cap. */
struct conn *conn_add_capped(struct conn_table *t, int fd, int kind, uint64_t src, double now, double timeout,
			     size_t max, size_t max_src, int *evicted);

/* Which connection of kind goes when kind is full: the oldest of the source
 * that holds the most of kind (of two as many, the one with the older
 * oldest). t->n if there is none of kind. */
size_t conn_victim(const struct conn_table *t, int kind);

/* Which connection of kind goes when the table holds too many bytes: the
 * biggest buffer of the source whose buffers hold the most (of two as big,
 * the older). t->n if no connection of kind holds a byte. */
size_t conn_victim_bytes(const struct conn_table *t, int kind);

/* Close connections of kind (conn_victim_bytes) until the table holds at
 * most budget bytes, or none of kind is left holding any; how many. */
size_t conn_shed(struct conn_table *t, int kind, size_t budget);

/* A source key for a peer address (IPv4, IPv6; 0 for any other). */
struct sockaddr;
uint64_t conn_source(const struct sockaddr *sa);

/*
 * The owner of the other end of an accepted TCP connection fd, when that end
 * is a socket of this host (in this network namespace: a client on
 * loopback, or on one of this host's addresses): 0 with *uid, else -1 (a
 * remote peer, or the kernel's socket diagnostics unavailable). One
 * netlink query (sock_diag), answered at once.
 */
int conn_local_peer_uid(int fd, uint32_t *uid);

/* A source key for the peer address key src and the uid of a local peer:
 * two users of one host are two sources. */
uint64_t conn_source_uid(uint64_t src, uint32_t uid);

/* Watch the table's connections (those already in it and all added later)
 * with epoll instance ep: 0, or -1 with errno. */
int conn_table_watch(struct conn_table *t, int ep);

/* After c's answer changed (conn_send, conn_flush): what its epoll waits
 * for follows (POLLOUT while an answer is left to send, else POLLIN).
 * 0, or -1 with errno. */
int conn_watch(struct conn_table *t, struct conn *c);

/* The index of the connection on descriptor fd, t->n if none. */
size_t conn_find(const struct conn_table *t, int fd);

/* Close connection i and free its buffer and data (the last one moves into i). */
void conn_drop(struct conn_table *t, size_t i);

/* How many connections of kind. */
size_t conn_count(const struct conn_table *t, int kind);

/* Close every connection; the table is empty and reusable. */
void conn_table_free(struct conn_table *t);

#endif
