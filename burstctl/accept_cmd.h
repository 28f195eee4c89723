/*
 * accept_cmd.h - burstctl accept: the multi-node (MPI) acceptance tests of
 * acceptance.conf, run across burst nodes through srun --mpi=pmix.
 */
#ifndef BURST_ACCEPT_CMD_H
#define BURST_ACCEPT_CMD_H

/*
 * Runs burstctl accept with argv, burstctl's command line without the
 * verb's words (burstctl's verb table finds them; verb is their first);
 * returns its exit code (0 every test passed, 1 a test failed, 2 usage or
 * configuration error).
 */
int accept_cmd_main(const char *verb, int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char accept_cmd_usage[];

#endif
