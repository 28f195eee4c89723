/*
 * bless_cmd.h - burstctl's bless verb: the kernels and driver versions the
 * admission policy admits, kept in StateDir/blessed-kernels and
 * StateDir/blessed-drivers beside BlessedKernels= and BlessedDrivers= of
 * burst.conf.
 */
#ifndef BURST_BLESS_CMD_H
#define BURST_BLESS_CMD_H

/*
 * If the verb of the burstctl command line argv is "bless", run it and
 * return its exit code (0 ok, 1 nothing to bless, 2 usage or input error);
 * otherwise return -1 and leave argv as it was. Called by burstctl's main
 * before it parses options, because bless has options of its own.
 */
int bless_cmd_main(int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char bless_cmd_usage[];

#endif
