/*
 * accept.h - burst-node accept (accept.c): the node-local acceptance tests.
 */
#ifndef BURST_NODE_ACCEPT_H
#define BURST_NODE_ACCEPT_H

/* argv[0] is "accept"; returns the exit code (0 passed, 1 failed, 2 usage/config). */
int accept_main(int argc, char **argv);

#endif
