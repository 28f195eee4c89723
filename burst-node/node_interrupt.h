/*
 * node_interrupt.h - burst-node's watch on the instance metadata's spot
 * interruption notice (interrupt.c), and the agent address both it and
 * the join use.
 */
#ifndef BURST_NODE_INTERRUPT_H
#define BURST_NODE_INTERRUPT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/types.h>

#define WATCH_INTERVAL_DEFAULT_S 5   /* EC2 gives two minutes' notice; it suggests polling every 5 s */
#define WATCH_INTERVAL_MAX_S 60

struct watch_opts {
	const char *imds;          /* the metadata service, e.g. http://169.254.169.254 */
	bool gce;                  /* imds is Compute Engine's metadata server: instance/preempted */
	bool azure;                /* imds is Azure's metadata service: Scheduled Events, for the VM named instance */
	unsigned interval_s;       /* between polls, 1..WATCH_INTERVAL_MAX_S */
	const char *agent;         /* ADDR:PORT, the agent's join port */
	const char *node, *instance, *munge_socket;
};

/* spec "ADDR:PORT" (IPv4) into *sa: 0, or -1 if it is not one. */
int agent_sockaddr(const char *spec, struct sockaddr_in *sa);

/*
 * Start the watch: a child process that polls o->imds for a notice every
 * o->interval_s seconds and reports one to the agent, and ends with its
 * parent (burst-node, then the slurmd it becomes). Its pid, or -1 (said).
 * Nothing it meets (a slow or hostile metadata service, an unreachable
 * agent) reaches the parent: each request is bounded, each problem is one
 * line on stderr, said again only when it changes or ten minutes on.
 */
pid_t interrupt_watch(const struct watch_opts *o);

#endif
