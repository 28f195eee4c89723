/*
 * node_provenance.h - the `burst-node provenance` verb.
 */
#ifndef BURST_NODE_PROVENANCE_H
#define BURST_NODE_PROVENANCE_H

/* argv[0] is "provenance". Prints the record (or --id) on stdout; returns
 * the exit status: 0, 1 when the record cannot be made, 2 on usage errors. */
int node_provenance(int argc, char **argv);

#endif
