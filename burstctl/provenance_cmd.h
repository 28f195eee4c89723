/*
 * provenance_cmd.h - burstctl provenance: which hardware, kernel and software
 * a node (or every node of a job) had, what its acceptance tests said and
 * whether the agent admitted it, read from the agent's records (doc/design.md §8);
 * optionally as signed in-toto attestations.
 */
#ifndef BURST_PROVENANCE_CMD_H
#define BURST_PROVENANCE_CMD_H

/*
 * Runs burstctl provenance with argv, burstctl's command line without the
 * verb's words (burstctl's verb table finds them; verb is their first);
 * returns its exit code (0 ok, 1 the node has no record or Slurm does not
 * know the job, 2 usage or input error).
 */
int provenance_cmd_main(const char *verb, int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char provenance_cmd_usage[];

#endif
