/*
 * port_holder.h - who holds a TCP port the agent wants to listen on: the
 * listening socket in the kernel's tables (/proc/net/tcp and tcp6: its
 * inode and owner), and the process that has it open (each /proc/PID/fd entry,
 * "socket:[INODE]"): its pid, uid and command line. For the log of an
 * agent whose join or metrics port another process took.
 */
#ifndef BURST_PORT_HOLDER_H
#define BURST_PORT_HOLDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct port_holder {
	unsigned long inode;     /* the listening socket's */
	uid_t sock_uid;          /* its owner, as the kernel's table says */
	pid_t pid;               /* a process that has it open, 0 if none found */
	uid_t uid;               /* that process's real uid */
	char cmd[256];           /* and its command line, control characters written out */
};

/*
 * In table (the text of /proc/net/tcp, or of tcp6 when v6), a socket
 * listening on port that keeps a bind to addr (IPv4, network order) from
 * succeeding: one on addr itself or on the wildcard address (0.0.0.0, ::,
 * ::ffff:addr); addr INADDR_ANY matches any address. 1 with its inode and
 * owner, 0 when there is none.
 */
int port_listener_find(const char *table, bool v6, uint32_t addr, int port, unsigned long *inode, uid_t *uid);

/*
 * The holder of addr:port (IPv4 text) on this host: 1 with h filled (pid 0
 * when no process of ours to see has the socket: another network
 * namespace's, or gone); 0 when no listening socket holds it; -1 when addr
 * is not an IPv4 address. With a known inode (from an earlier call) that
 * is still the listener, the processes are not searched again: the cost is
 * one read of the two tables.
 */
int port_holder_find(const char *addr, int port, struct port_holder *h);

/* "pid P (uid U, CMD)", or what is known without a process, into buf. */
void port_holder_describe(const struct port_holder *h, char *buf, size_t len);

#endif
