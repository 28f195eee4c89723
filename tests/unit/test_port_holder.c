/*
 * test_port_holder.c - who holds a TCP port (burst-agent/port_holder.c):
 * the kernel's tables of sockets as text (listeners on the address asked,
 * on the wildcard, v4-mapped; connections and other ports not), and a
 * socket this test listens on, found with its pid, uid and command line.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../burst-agent/port_holder.h"
#include "tap.h"

#define HEAD "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

static uint32_t a4(const char *s)
{
	struct in_addr in;
	inet_pton(AF_INET, s, &in);
	return in.s_addr;
}

/* a table line for addr:port in state st, owned by uid, of inode */
static void line4(char *out, size_t len, const char *addr, int port, int st, unsigned uid, unsigned long inode)
{
	uint32_t a = a4(addr);
	snprintf(out, len, "   0: %08X:%04X 00000000:0000 %02X 00000000:00000000 00:00000000 00000000 %5u        0 %lu 1 0000000000000000 100 0 0 10 0\n",
		 a, port, st, uid, inode);
}

static void test_tables(void)
{
	char t[4096], l[300];
	unsigned long inode = 0;
	uid_t uid = 0;

	snprintf(t, sizeof(t), HEAD);
	line4(l, sizeof(l), "10.211.30.1", 6830, 0x01, 0, 100);   /* a connection on the port: not a holder */
	strcat(t, l);
	line4(l, sizeof(l), "10.211.30.1", 6831, 0x0A, 0, 101);   /* another port */
	strcat(t, l);
	line4(l, sizeof(l), "10.211.31.1", 6830, 0x0A, 0, 102);   /* another address */
	strcat(t, l);
	ok(!port_listener_find(t, false, a4("10.211.30.1"), 6830, &inode, &uid),
	   "no listener: a connection on the port, a listener on another port or address");
	line4(l, sizeof(l), "10.211.30.1", 6830, 0x0A, 65534, 4242);
	strcat(t, l);
	ok(port_listener_find(t, false, a4("10.211.30.1"), 6830, &inode, &uid) && inode == 4242 && uid == 65534,
	   "the listener on the address and port: inode %lu, uid %u", inode, (unsigned)uid);
	ok(port_listener_find(t, false, INADDR_ANY, 6830, &inode, &uid) && inode == 102,
	   "a bind to every address is kept off by a listener on any (inode %lu)", inode);

	snprintf(t, sizeof(t), HEAD);
	line4(l, sizeof(l), "0.0.0.0", 9464, 0x0A, 1000, 77);
	strcat(t, l);
	ok(port_listener_find(t, false, a4("127.0.0.1"), 9464, &inode, &uid) && inode == 77 && uid == 1000,
	   "a listener on the wildcard holds the port of every address");

	snprintf(t, sizeof(t), "%s",
		 "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		 "   0: 00000000000000000000000000000000:24E8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 555 1 0000000000000000 100 0 0 10 0\n");
	ok(port_listener_find(t, true, a4("10.211.30.1"), 9448, &inode, &uid) && inode == 555 && uid == 1001,
	   "a listener on :: (v6, maybe v4 too) is named");
	{
		/* ::ffff:10.211.30.1 as the kernel prints it (each 32-bit word as in memory) */
		unsigned char m[4] = { 0, 0, 0xff, 0xff };
		uint32_t w, a = a4("10.211.30.1");
		memcpy(&w, m, 4);
		snprintf(t, sizeof(t), HEAD "   0: 0000000000000000%08X%08X:1AAE 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     7        0 666 1 0\n",
			 w, a);
		ok(port_listener_find(t, true, a, 6830, &inode, &uid) && inode == 666 && uid == 7,
		   "a v4-mapped listener on the address is named");
		ok(!port_listener_find(t, true, a4("10.211.31.1"), 6830, &inode, &uid),
		   "one on another v4-mapped address is not");
	}
	ok(!port_listener_find("garbage\n   0: zz\n", false, 0, 1, &inode, &uid), "a table that is not one names nothing");
	ok(!port_listener_find("", false, 0, 1, &inode, &uid), "nor does an empty one");
}

static void test_live(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct port_holder h;
	char desc[600];
	int fd = socket(AF_INET, SOCK_STREAM, 0), k;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		ok(0, "a socket to listen on");
		return;
	}
	memset(&h, 0, sizeof(h));
	k = port_holder_find("127.0.0.1", ntohs(sa.sin_port), &h);
	port_holder_describe(&h, desc, sizeof(desc));
	ok(k == 1 && h.pid == getpid() && h.uid == getuid() && strstr(h.cmd, "test_port_holder"),
	   "the port this test listens on is held by this test: %s", desc);
	k = port_holder_find("127.0.0.1", ntohs(sa.sin_port), &h);
	ok(k == 1 && h.pid == getpid(), "and found again (the same socket: the processes are not searched again)");
	close(fd);
	k = port_holder_find("127.0.0.1", ntohs(sa.sin_port), &h);
	ok(k == 0, "once closed, nothing holds it");
	ok(port_holder_find("not-an-address", 1, &h) == -1, "an address that is not IPv4 is said so");
	memset(&h, 0, sizeof(h));
	h.inode = 9;
	h.sock_uid = 65534;
	port_holder_describe(&h, desc, sizeof(desc));
	ok(strstr(desc, "uid 65534") && strstr(desc, "no process"), "a socket without a process found: %s", desc);
}

int main(void)
{
	test_tables();
	test_live();
	return done_testing();
}
