/*
 * conn.c - the agent's client connections, read without blocking (conn.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "strutil.h"

enum conn_status conn_pump(struct conn *c, size_t max)
{
	return conn_pump_until(c, max, "\n");
}

enum conn_status conn_pump_until(struct conn *c, size_t max, const char *end)
{
	size_t elen = strlen(end);

	for (;;) {
		ssize_t n;
		char *nl;
		size_t from;

		if (c->len >= max)
			return CONN_TOO_BIG;
		if (c->cap < c->len + 4096 + 1 && c->cap < max + 1) {
			size_t want = c->cap ? c->cap * 2 : 4096;
			if (want > max + 1)
				want = max + 1;
			c->buf = xrealloc(c->buf, want);
			if (c->held)
				*c->held += want - c->cap;
			c->cap = want;
		}
		n = recv(c->fd, c->buf + c->len, c->cap - 1 - c->len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return CONN_MORE;
			return CONN_ERROR;
		}
		if (n == 0) {
			if (c->buf)
				c->buf[c->len] = '\0';
			return c->len ? CONN_LINE : CONN_CLOSED;
		}
		/* the end may straddle what came before */
		from = c->len >= elen - 1 ? c->len - (elen - 1) : 0;
		c->len += (size_t)n;
		nl = memmem(c->buf + from, c->len - from, end, elen);
		c->buf[c->len] = '\0';
		if (nl) {
			*nl = '\0';
			c->len = (size_t)(nl - c->buf);
			return CONN_LINE;
		}
	}
}

size_t conn_victim(const struct conn_table *t, int kind)
{
	/* per source: how many and its oldest, in a small open-addressed table */
	struct slot {
		uint64_t src;
		size_t count, oldest;
		bool used;
	} *h;
	size_t cap = 16, i, best = SIZE_MAX, out;

	while (cap < 2 * t->n)
		cap <<= 1;
	h = xcalloc(cap, sizeof(*h));
	for (i = 0; i < t->n; i++) {
		const struct conn *c = &t->c[i];
		size_t k;
		if (c->kind != kind)
			continue;
		k = (size_t)((c->src * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
		while (h[k].used && h[k].src != c->src)
			k = (k + 1) & (cap - 1);
		if (!h[k].used) {
			h[k].used = true;
			h[k].src = c->src;
			h[k].oldest = i;
		} else if (c->born < t->c[h[k].oldest].born)
			h[k].oldest = i;
		h[k].count++;
	}
	for (i = 0; i < cap; i++)
		if (h[i].used && (best == SIZE_MAX || h[i].count > h[best].count ||
				  (h[i].count == h[best].count && t->c[h[i].oldest].born < t->c[h[best].oldest].born)))
			best = i;
	out = best == SIZE_MAX ? t->n : h[best].oldest;
	free(h);
	return out;
}

size_t conn_victim_bytes(const struct conn_table *t, int kind)
{
	/* per source: its bytes and its biggest, in a small open-addressed table */
	struct slot {
		uint64_t src;
		size_t bytes, biggest;
		bool used;
	} *h;
	size_t cap = 16, i, best = SIZE_MAX, out;

	while (cap < 2 * t->n)
		cap <<= 1;
	h = xcalloc(cap, sizeof(*h));
	for (i = 0; i < t->n; i++) {
		const struct conn *c = &t->c[i];
		size_t k;
		if (c->kind != kind || !c->cap)
			continue;
		k = (size_t)((c->src * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
		while (h[k].used && h[k].src != c->src)
			k = (k + 1) & (cap - 1);
		if (!h[k].used) {
			h[k].used = true;
			h[k].src = c->src;
			h[k].biggest = i;
		} else {
			const struct conn *b = &t->c[h[k].biggest];
			if (c->cap > b->cap || (c->cap == b->cap && c->born < b->born))
				h[k].biggest = i;
		}
		h[k].bytes += c->cap;
	}
	for (i = 0; i < cap; i++) {
		const struct conn *a, *b;
		if (!h[i].used)
			continue;
		if (best == SIZE_MAX || h[i].bytes > h[best].bytes) {
			best = i;
			continue;
		}
		a = &t->c[h[i].biggest];
		b = &t->c[h[best].biggest];
		if (h[i].bytes == h[best].bytes && (a->cap > b->cap || (a->cap == b->cap && a->born < b->born)))
			best = i;
	}
	out = best == SIZE_MAX ? t->n : h[best].biggest;
	free(h);
	return out;
}

size_t conn_shed(struct conn_table *t, int kind, size_t budget)
{
	size_t n = 0, v;

	while (t->held > budget && (v = conn_victim_bytes(t, kind)) < t->n) {
		conn_drop(t, v);
		n++;
	}
	return n;
}

uint64_t conn_source(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (uint64_t)1 << 32 | ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	if (sa->sa_family == AF_INET6) {
		/* a hash of the whole address (FNV-1a), apart from IPv4's keys */
		const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		uint64_t k = 1469598103934665603ULL;
		for (int i = 0; i < 16; i++)
			k = (k ^ a[i]) * 1099511628211ULL;
		return k | (uint64_t)1 << 63;
	}
	return 0;
}

uint64_t conn_source_uid(uint64_t src, uint32_t uid)
{
	/* the address's key, mixed with the uid (splitmix64's finaliser) */
	uint64_t k = src ^ ((uint64_t)uid + 1) * 0x9e3779b97f4a7c15ULL;

	k = (k ^ (k >> 30)) * 0xbf58476d1ce4e5b9ULL;
	k = (k ^ (k >> 27)) * 0x94d049bb133111ebULL;
	return (k ^ (k >> 31)) | 1;   /* never 0, the key of "not known" */
}

int conn_local_peer_uid(int fd, uint32_t *uid)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr h;
		char b[1024];
	} ans;
	struct sockaddr_nl kernel;
	ssize_t n;
	int nl, rc = -1;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 || getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    me.ss_family != peer.ss_family || (me.ss_family != AF_INET && me.ss_family != AF_INET6))
		return -1;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (uint8_t)me.ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0U;
	/* the peer's socket: its own address and port are the source, ours
	 * the destination (an exact lookup, not a dump) */
	if (me.ss_family == AF_INET) {
		const struct sockaddr_in *m = (const struct sockaddr_in *)&me, *p = (const struct sockaddr_in *)&peer;
		req.r.id.idiag_sport = p->sin_port;
		req.r.id.idiag_dport = m->sin_port;
		memcpy(req.r.id.idiag_src, &p->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &m->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *m = (const struct sockaddr_in6 *)&me, *p = (const struct sockaddr_in6 *)&peer;
		req.r.id.idiag_sport = p->sin6_port;
		req.r.id.idiag_dport = m->sin6_port;
		memcpy(req.r.id.idiag_src, &p->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &m->sin6_addr, 16);
	}
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	memset(&kernel, 0, sizeof(kernel));
	kernel.nl_family = AF_NETLINK;
	/* the kernel answers within the send: the answer is there to take */
	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) == (ssize_t)sizeof(req) &&
	    (n = recv(nl, &ans, sizeof(ans), MSG_DONTWAIT)) > 0 && NLMSG_OK(&ans.h, (size_t)n) &&
	    ans.h.nlmsg_type == SOCK_DIAG_BY_FAMILY &&
	    ans.h.nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
		const struct inet_diag_msg *m = NLMSG_DATA(&ans.h);
		*uid = m->idiag_uid;
		rc = 0;
	}
	close(nl);
	return rc;
}

/* Record that connection i is on its descriptor. */
static void index_fd(struct conn_table *t, size_t i)
{
	size_t fd = (size_t)t->c[i].fd;

	if (fd >= t->nbyfd) {
		size_t k, n = t->nbyfd ? t->nbyfd : 64;
		while (n <= fd)
			n *= 2;
		t->byfd = xrealloc(t->byfd, n * sizeof(*t->byfd));
		for (k = t->nbyfd; k < n; k++)
			t->byfd[k] = -1;
		t->nbyfd = n;
	}
	t->byfd[fd] = (int)i;
}

size_t conn_find(const struct conn_table *t, int fd)
{
	if (fd < 0 || (size_t)fd >= t->nbyfd || t->byfd[fd] < 0)
		return t->n;
	return (size_t)t->byfd[fd];
}

static uint32_t wanted(const struct conn *c)
{
	return c->out && c->outoff < c->outlen ? EPOLLOUT : EPOLLIN;
}

int conn_watch(struct conn_table *t, struct conn *c)
{
	struct epoll_event ev;

	if (!t->watched || c->events == wanted(c))
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.events = wanted(c);
	ev.data.u64 = (uint64_t)c->fd;
	if (epoll_ctl(t->ep, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev) < 0)
		return -1;
	c->events = ev.events;
	return 0;
}

int conn_table_watch(struct conn_table *t, int ep)
{
	size_t i;

	t->watched = true;
	t->ep = ep;
	for (i = 0; i < t->n; i++)
		if (conn_watch(t, &t->c[i]) < 0)
			return -1;
	return 0;
}

struct conn *conn_add(struct conn_table *t, int fd, int kind, uint64_t src, double now, double timeout,
		      size_t max, int *evicted)
{
	return conn_add_capped(t, fd, kind, src, now, timeout, max, 0, evicted);
}

/* The oldest connection of kind from src and how many there are (t->n: none). */
static size_t oldest_of(const struct conn_table *t, int kind, uint64_t src, size_t *count)
{
	size_t i, o = t->n;

	*count = 0;
	for (i = 0; i < t->n; i++)
		if (t->c[i].kind == kind && t->c[i].src == src) {
			++*count;
			if (o == t->n || t->c[i].born < t->c[o].born)
				o = i;
		}
	return o;
}

struct conn *conn_add_capped(struct conn_table *t, int fd, int kind, uint64_t src, double now, double timeout,
			     size_t max, size_t max_src, int *evicted)
{
	struct conn *c;

	*evicted = 0;
	if (max_src) {
		size_t k, o = oldest_of(t, kind, src, &k);
		if (k >= max_src) {
			*evicted = 1;
			conn_drop(t, o);
		}
	}
	if (max && conn_count(t, kind) >= max) {
		*evicted = 1;
		conn_drop(t, conn_victim(t, kind));
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->c = xrealloc(t->c, t->cap * sizeof(*t->c));
	}
	c = &t->c[t->n++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->kind = kind;
	c->src = src;
	c->born = now;
	c->deadline = now + timeout;
	c->held = &t->held;
	index_fd(t, t->n - 1);
	if (conn_watch(t, c) < 0) {
		int e = errno;
		conn_drop(t, t->n - 1);
		errno = e;
		return NULL;
	}
	return c;
}

enum conn_status conn_send(struct conn *c, char *out, size_t len)
{
	free(c->out);
	c->out = out;
	c->outlen = len;
	c->outoff = 0;
	return conn_flush(c);
}

enum conn_status conn_flush(struct conn *c)
{
	while (c->out && c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return CONN_MORE;
			return CONN_ERROR;
		}
		c->outoff += (size_t)n;
	}
	return CONN_SENT;
}

void conn_drop(struct conn_table *t, size_t i)
{
	if (i >= t->n)
		return;
	if (t->c[i].fd >= 0) {
		/* out of the epoll set first: a duplicate of the descriptor (a
		 * join answer kept for later) would keep it registered */
		if (t->watched && t->c[i].events)
			epoll_ctl(t->ep, EPOLL_CTL_DEL, t->c[i].fd, NULL);
		if ((size_t)t->c[i].fd < t->nbyfd)
			t->byfd[t->c[i].fd] = -1;
		close(t->c[i].fd);
	}
	if (t->c[i].held)
		*t->c[i].held -= t->c[i].cap;
	free(t->c[i].buf);
	free(t->c[i].out);
	free(t->c[i].data);
	t->c[i] = t->c[--t->n];
	if (i < t->n)
		index_fd(t, i);
}

size_t conn_count(const struct conn_table *t, int kind)
{
	size_t i, k = 0;

	for (i = 0; i < t->n; i++)
		k += t->c[i].kind == kind;
	return k;
}

void conn_table_free(struct conn_table *t)
{
	while (t->n)
		conn_drop(t, t->n - 1);
	free(t->c);
	t->c = NULL;
	t->cap = 0;
	free(t->byfd);
	t->byfd = NULL;
	t->nbyfd = 0;
}
