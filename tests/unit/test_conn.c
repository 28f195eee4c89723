/*
 * test_conn.c - the agent's connections are read without waiting: a client
 * trickling bytes never holds the reader, each connection keeps its own
 * partial request, the size cap and the per-kind cap hold.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../burst-agent/conn.h"
#include "tap.h"

static int pair(int sv[2])
{
	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
}

int main(void)
{
	struct conn_table t = { NULL, 0, 0 };
	struct conn *a, *b;
	int sa[2], sb[2], sc[2], ev, i;
	enum conn_status st;
	char big[300];

	if (pair(sa) < 0 || pair(sb) < 0)
		return 1;
	a = conn_add(&t, sa[0], 1, 100.0, 5.0, 8, &ev);
	ok(a && ev == 0 && t.n == 1 && a->deadline == 105.0, "a connection is added with its deadline");
	/* nothing sent: the reader does not wait (the socket is blocking; recv must not be) */
	ok(conn_pump(a, 64) == CONN_MORE, "a silent connection: nothing to do, and no wait");
	ok(write(sa[1], "{\"op\":", 6) == 6, "a client sends part of a request");
	st = conn_pump(a, 64);
	ok(st == CONN_MORE && a->len == 6, "a partial request is kept (%zu bytes)", a->len);
	b = conn_add(&t, sb[0], 1, 101.0, 5.0, 8, &ev);
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
	a = conn_add(&t, sa[0], 1, 0, 5.0, 0, &ev);
	ok(write(sa[1], "abc", 3) == 3 && shutdown(sa[1], SHUT_WR) == 0, "a request without a newline, half-closed");
	ok(conn_pump(a, 64) == CONN_LINE && !strcmp(a->buf, "abc"), "read up to the end of file");
	b = conn_add(&t, sb[0], 1, 0, 5.0, 0, &ev);
	close(sb[1]);
	ok(conn_pump(b, 64) == CONN_CLOSED, "a peer that left without a byte");
	conn_table_free(&t);
	close(sa[1]);

	/* the size cap: max bytes without a newline */
	if (pair(sa) < 0)
		return 1;
	memset(big, 'x', sizeof(big));
	a = conn_add(&t, sa[0], 1, 0, 5.0, 0, &ev);
	ok(write(sa[1], big, sizeof(big)) == (ssize_t)sizeof(big), "a client sends 300 bytes, no newline");
	st = conn_pump(a, 100);
	ok(st == CONN_TOO_BIG && a->len == 100, "refused at the cap of 100 (read %zu)", a->len);
	conn_table_free(&t);
	close(sa[1]);

	/* an HTTP request ends at its blank line, which may come in pieces */
	if (pair(sa) < 0)
		return 1;
	a = conn_add(&t, sa[0], 3, 0, 5.0, 0, &ev);
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
	conn_add(&t, sc[0], 2, 0.5, 5.0, 1, &ev);
	for (i = 0; i < 3; i++) {
		int s[2];
		if (pair(s) < 0)
			return 1;
		conn_add(&t, s[0], 1, 1.0 + i, 5.0, 2, &ev);
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
	return done_testing();
}
