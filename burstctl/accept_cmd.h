/*
 * accept_cmd.h - burstctl accept: the multi-node (MPI) acceptance tests of
 * acceptance.conf, run across burst nodes through srun --mpi=pmix.
 */
#ifndef BURST_ACCEPT_CMD_H
#define BURST_ACCEPT_CMD_H

/*
 * If the verb of the burstctl command line argv (the first argument that is
 * neither an option nor an option's value) is "accept", run it and return
 * its exit code (0 every test passed, 1 a test failed, 2 usage or
 * configuration error); otherwise return -1 and leave argv as it was.
 * Called by burstctl's main before it parses options (the verb has options
 * of its own).
 */
int accept_cmd_main(int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char accept_cmd_usage[];

#endif
