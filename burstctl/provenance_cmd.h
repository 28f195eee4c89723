/*
 * provenance_cmd.h - burstctl provenance: which hardware, kernel and software
 * a node (or every node of a job) had, what its acceptance tests said and
 * whether the agent admitted it, read from the agent's records (doc/design.md §8);
 * optionally as signed in-toto attestations.
 */
#ifndef BURST_PROVENANCE_CMD_H
#define BURST_PROVENANCE_CMD_H

/*
 * If the verb of the burstctl command line argv (the first argument that is
 * neither an option nor an option's value) is "provenance", run it and
 * return its exit code (0 ok, 1 the node has no record or Slurm does not
 * know the job, 2 usage or input error); otherwise return -1 and leave argv
 * as it was. Called by burstctl's main before it parses options, because the
 * verb has options of its own.
 */
int provenance_cmd_main(int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char provenance_cmd_usage[];

#endif
